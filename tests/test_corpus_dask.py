"""symidx corpus --engine dask, against a real local Dask cluster (one for this module):
the same records as the analysis run in this process, a cluster of the run's own, and
modules that hang or kill their worker recorded while the run goes on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from corpus_helpers import (
    EXAMPLES,
    EXIT,
    HANG,
    HOOK,
    by_place,
    corpus,
    examples_copy,
    misbehaving,
    records,
    validator,
)
from symidx.corpus import Options, Task, analyse

pytest.importorskip("distributed")

#: Seconds a module may take on the cluster (counted from submission).
TIMEOUT = "10"


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A local Dask cluster of two workers, set up as the engine sets up its own, shared by
    this module's tests; its scheduler's address."""
    from symidx.corpus.dask_engine import local_cluster

    cluster = local_cluster(2)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


def inline_records(folder: Path) -> dict:
    return by_place([analyse(Task(str(p), 0, 1, p.read_text()), Options())
                     for p in sorted(folder.glob("*.hlo"))])


def test_dask_gives_the_records_of_the_local_analysis(scheduler: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    code, _, err = corpus(str(EXAMPLES), "--out", str(out), "--engine", "dask", "--address",
                          scheduler)
    assert code == 0, err
    found = records(out)
    assert by_place(found) == inline_records(EXAMPLES) and len(found) == 12
    for record in found:
        validator().validate(record)


def test_dask_starts_a_cluster_of_its_own(tmp_path: Path) -> None:
    inputs = examples_copy(tmp_path / "in", ("mlp", "maxpool"))
    out = tmp_path / "r.jsonl"
    code, _, err = corpus(str(inputs), "--out", str(out), "--engine", "dask", "--jobs", "1")
    assert code == 0, err
    assert by_place(records(out)) == inline_records(inputs)


def test_dask_records_hanging_and_crashing_modules_and_goes_on(
        scheduler: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = examples_copy(tmp_path / "in", ("mlp", "maxpool"))
    misbehaving(inputs, HANG, "cumsum")
    misbehaving(inputs, EXIT, "embedding")
    monkeypatch.setenv("SYMIDX_CORPUS_TEST_HOOK", HOOK)
    out = tmp_path / "r.jsonl"
    code, _, err = corpus(str(inputs), "--out", str(out), "--engine", "dask", "--address",
                          scheduler, "--timeout", TIMEOUT)
    assert code == 1, err  # two modules failed
    found = {Path(r["file"]).stem: r for r in records(out)}
    assert found["hang"]["status"] == "timeout"
    assert found["hang"]["message"] == \
        f"no result after {TIMEOUT} s: the worker was stopped"
    assert (found["exit"]["status"], found["exit"]["message"]) == \
        ("error", "the worker process died")
    assert found["mlp"]["status"] == found["maxpool"]["status"] == "ok"
    assert "4 modules: 2 ok, 1 error, 1 timeout" in err
