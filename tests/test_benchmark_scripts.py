"""Every script in benchmarks/ loads: its imports name things symidx still has (a renamed
or moved function breaks a benchmark nobody runs in the suite). An optional extra that is
not installed skips the script; any other import error fails."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
OPTIONAL = {"islpy", "jax", "jaxlib", "matplotlib", "ray", "dask", "distributed", "z3", "tqdm"}


@pytest.mark.parametrize("script", sorted(p.name for p in BENCHMARKS.glob("bench_*.py")))
def test_the_benchmark_script_loads(script: str) -> None:
    spec = importlib.util.spec_from_file_location(f"bench_script_{Path(script).stem}",
                                                  BENCHMARKS / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] in OPTIONAL:
            pytest.skip(f"{script} needs {e.name}")
        raise
    assert callable(getattr(module, "main", None)), f"{script} has no main()"


def _script(name: str) -> object:
    spec = importlib.util.spec_from_file_location(f"bench_script_{name}", BENCHMARKS / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_whole_entry_benchmark_measures_a_module_and_a_small_dense_stack(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A smoke run of benchmarks/bench_whole_entry.py (no timing is asserted): one module
    from tests/data and a two-block dense stack lowered by jax, each a row with both
    figures, or the XLA column empty and the stack left out without jax."""
    bench = _script("bench_whole_entry.py")
    data = Path(__file__).resolve().parent / "data" / "hlo"
    bench.main([str(data), "--modules", "conv2d.lowered", "--densenet", "1,1",  # type: ignore[attr-defined]
                "--gru", "3", "--timeout", "120"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines()
            if line.startswith(("conv2d", "densenet", "gru"))]
    try:
        import jax  # noqa: F401
    except ImportError:
        assert [r.split()[0] for r in rows] == ["conv2d.lowered"]
        assert "jax not installed" in rows[0]
        return
    assert [r.split()[0] for r in rows] == ["conv2d.lowered", "densenet(1,", "gru3"]
    for row in rows:
        ours, xla, ratio = row.split(")")[-1].split()[:3] if row.startswith(("densenet", "gru")) \
            else row.split()[1:4]
        assert float(ours) >= 0 and float(xla) > 0 and float(ratio) >= 0


def test_the_diamond_benchmark_prints_a_row_per_depth(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    """A smoke run of benchmarks/bench_diamond.py (figures, no timing asserted): a row per
    depth, the deeper one boxed past the bound of distinct maps."""
    bench = _script("bench_diamond.py")
    bench.main(["--depths", "3,30", "--size", "64"])  # type: ignore[attr-defined]
    rows = [line.split() for line in capsys.readouterr().out.splitlines()
            if line.split() and line.split()[0].isdigit()]
    assert [(r[0], r[-1]) for r in rows] == [("3", "exact"), ("30", "boxed")]
