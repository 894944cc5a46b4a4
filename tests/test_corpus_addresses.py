"""Where the Ray and Dask engines run: the cluster named by RAY_ADDRESS or
DASK_SCHEDULER_ADDRESS when --address is not given (joined without asking for resources), a
new local cluster otherwise, even when an earlier `ray start` left a cluster recorded on the
machine that is gone."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from corpus_helpers import ROOT, by_place, examples_copy, records
from symidx.corpus import Options, Task, analyse


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def corpus_run(inputs: Path, out: Path, env: dict[str, str], *argv: str
               ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symidx", "corpus", str(inputs), "--out",
                           str(out), *argv], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=300)


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RAY_ADDRESS", "DASK_SCHEDULER_ADDRESS")}
    return {**env, **extra}


def inline(folder: Path) -> dict:
    return by_place([analyse(Task(str(p), 0, 1, p.read_text()), Options())
                     for p in sorted(folder.glob("*.hlo"))])


@pytest.mark.parametrize("engine, variable, needs", [
    ("ray", "RAY_ADDRESS", "ray"), ("dask", "DASK_SCHEDULER_ADDRESS", "distributed")])
def test_the_environments_address_is_the_cluster_used(engine, variable, needs, tmp_path):
    pytest.importorskip(needs)
    inputs = examples_copy(tmp_path / "in", ("mlp",))
    address = f"{'tcp://' if engine == 'dask' else ''}127.0.0.1:{closed_port()}"
    run = corpus_run(inputs, tmp_path / "r.jsonl", clean_env(**{variable: address}),
                     "--engine", engine, "--jobs", "2")
    # nothing listens there: the run says so (it did not start a cluster of its own)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr and address in run.stderr


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[str]:
    """A local Ray cluster of one processor, started here; its address."""
    ray = pytest.importorskip("ray")
    from symidx.corpus.ray_engine import start_local

    start_local(1)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def test_ray_joins_the_cluster_of_ray_address_without_asking_for_resources(ray_cluster,
                                                                            tmp_path):
    import ray

    inputs = examples_copy(tmp_path / "in", ("mlp", "rearrange"))
    out = tmp_path / "r.jsonl"
    # --jobs 2 used to reach ray.init as num_cpus, which Ray refuses when joining
    run = corpus_run(inputs, out, clean_env(RAY_ADDRESS=ray_cluster), "--engine", "ray",
                     "--jobs", "2")
    assert run.returncode == 0, run.stderr
    assert by_place(records(out)) == inline(inputs)
    assert ray.is_initialized()  # the cluster it joined is still up


def test_ray_starts_its_own_cluster_past_a_stale_recorded_one(tmp_path):
    pytest.importorskip("ray")
    # a short folder: Ray's socket paths must fit in 107 characters
    ray_tmp = Path(tempfile.mkdtemp(prefix="sx", dir="/tmp"))
    try:
        (ray_tmp / "ray").mkdir()
        (ray_tmp / "ray" / "ray_current_cluster").write_text(f"127.0.0.1:{closed_port()}\n")
        inputs = examples_copy(tmp_path / "in", ("mlp",))
        out = tmp_path / "r.jsonl"
        run = corpus_run(inputs, out, clean_env(RAY_TMPDIR=str(ray_tmp)), "--engine", "ray",
                         "--jobs", "1")
        assert run.returncode == 0, run.stderr
        assert by_place(records(out)) == inline(inputs)
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
