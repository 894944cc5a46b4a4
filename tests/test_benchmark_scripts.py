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
