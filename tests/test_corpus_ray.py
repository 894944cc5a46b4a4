"""symidx corpus --engine ray, against a real local Ray cluster (one for this module): the
same records as the analysis run in this process, a cluster joined by --address, and
modules that hang or kill their worker recorded while the run goes on."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from corpus_helpers import (
    EXAMPLES,
    EXIT,
    HANG,
    HOOK,
    ROOT,
    by_place,
    corpus,
    examples_copy,
    misbehaving,
    records,
    validator,
)
from symidx.corpus import Options, Task, analyse

ray = pytest.importorskip("ray")

#: Seconds a module may take on the cluster: counted from submission, so it includes a
#: fresh worker's start (a replaced one imports symidx again) and the time Ray takes to
#: notice that a worker died; on a loaded machine (two cores shared with other work) 10 s
#: was once not enough for the module whose worker exits to be recorded as such.
TIMEOUT = "30"


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Ray cluster of two processors, shared by this module's tests; its address."""
    from symidx.corpus.ray_engine import start_local

    with pytest.MonkeyPatch.context() as env:
        # the workers (started by the cluster, with its environment) import the test hook,
        # corpus_faults, by its name from this folder
        env.setenv("PYTHONPATH", os.pathsep.join([str(ROOT / "tests"),
                                                  os.environ.get("PYTHONPATH", "")]))
        start_local(2)
    # Warm both workers (each imports symidx once) so that a loaded machine's cold start
    # does not count against the first test's per-module timeout.
    warm = ray.remote(num_cpus=1)(analyse)
    example = next(EXAMPLES.glob("*.hlo"))
    ray.get([warm.remote(Task(str(example), 0, 1, example.read_text()), Options())
             for _ in range(2)])
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def inline_records(folder: Path) -> dict:
    return by_place([analyse(Task(str(p), 0, 1, p.read_text()), Options())
                     for p in sorted(folder.glob("*.hlo"))])


def test_ray_gives_the_records_of_the_local_analysis(cluster: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    code, _, err = corpus(str(EXAMPLES), "--out", str(out), "--engine", "ray")
    assert code == 0, err
    found = records(out)
    assert by_place(found) == inline_records(EXAMPLES) and len(found) == 12
    for record in found:
        validator().validate(record)


def test_ray_joins_a_running_cluster_by_address(cluster: str, tmp_path: Path) -> None:
    inputs = examples_copy(tmp_path / "in", ("mlp", "maxpool", "rearrange"))
    out = tmp_path / "r.jsonl"
    run = subprocess.run([sys.executable, "-m", "symidx", "corpus", str(inputs), "--out",
                          str(out), "--engine", "ray", "--address", cluster],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    assert by_place(records(out)) == inline_records(inputs)
    assert ray.is_initialized()  # the cluster it joined is still up


def test_ray_records_hanging_and_crashing_modules_and_goes_on(
        cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = examples_copy(tmp_path / "in", ("mlp", "maxpool"))
    misbehaving(inputs, HANG, "cumsum")
    misbehaving(inputs, EXIT, "embedding")
    monkeypatch.setenv("SYMIDX_CORPUS_TEST_HOOK", HOOK)
    out = tmp_path / "r.jsonl"
    code, _, err = corpus(str(inputs), "--out", str(out), "--engine", "ray",
                          "--timeout", TIMEOUT)
    assert code == 1, err  # two modules failed
    found = {Path(r["file"]).stem: r for r in records(out)}
    assert found["hang"]["status"] == "timeout"
    assert found["hang"]["message"] == f"no result after {TIMEOUT} s: the worker was stopped"
    assert (found["exit"]["status"], found["exit"]["message"]) == \
        ("error", "the worker process died")
    assert found["mlp"]["status"] == found["maxpool"]["status"] == "ok"
    assert "4 modules: 2 ok, 1 error, 1 timeout" in err
