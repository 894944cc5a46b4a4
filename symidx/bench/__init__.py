"""The benchmark suite behind ``symidx bench`` and the scripts in ``benchmarks/``.

Each case builds its maps (untimed), then times one operation on them with symidx and,
where they can express it, with islpy and with MLIR's affine maps as jaxlib bundles them;
both are optional (a missing one leaves its column empty). The engines get the same work
(:mod:`symidx.bench.backends`), are interleaved per repetition, and keep the garbage
collector on; every figure is CPU time; each row has every engine's median and spread, or
its error (:mod:`symidx.bench.harness`). The cases are in :mod:`symidx.bench.cases`;
:func:`document` gives the rows as the JSON ``symidx bench --json`` writes
(``symidx/schemas/bench-1.json``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from symidx.bench.backends import (
    Backend,
    IslBackend,
    MlirBackend,
    NotExpressible,
    SymidxBackend,
    available_backends,
)
from symidx.bench.cases import (
    CASES,
    SEED_EXAMPLES,
    SHAPE,
    bitcast_maps,
    bundled_samples,
    chain_maps,
    compare_equal,
    compare_equal_text,
    compare_unequal,
    compare_unequal_text,
    compose_chain,
    compose_pair,
    compose_step_maps,
    cute_maps,
    ladder_hlo,
    reshape_map,
    round_trip_pair,
    simplify_one,
)
from symidx.bench.harness import (
    Row,
    Timing,
    cpu_seconds,
    format_table,
    measure_row,
    measure_symidx,
    plot,
    row_dict,
)
from symidx.core.verify import has_isl, has_z3
from symidx.errors import SymidxError

__all__ = [
    "run", "document", "format_table", "plot", "NOTES", "Row", "Timing", "CASES",
    "measure_row", "cpu_seconds",
    "measure_symidx", "Backend", "SymidxBackend", "IslBackend", "MlirBackend",
    "NotExpressible", "available_backends", "has_z3", "has_isl", "SHAPE", "SEED_EXAMPLES",
    "reshape_map", "compose_step_maps", "chain_maps", "ladder_hlo", "bundled_samples",
    "round_trip_pair", "bitcast_maps", "cute_maps", "compose_pair", "compose_chain",
    "simplify_one", "compare_equal", "compare_unequal", "compare_equal_text",
    "compare_unequal_text",
]


def run(quick: bool = False, cases: Sequence[str] | None = None,
        backends: Sequence[Backend] | None = None,
        progress: Callable[[int, int, str], None] | None = None) -> list[Row]:
    """Run the named cases (default: all) and return their rows. A case that fails as a
    whole (e.g. while building its inputs) gives one row holding its error.
    ``progress(done, total, "case")`` is called after each case."""
    chosen = list(CASES) if cases is None else list(cases)
    unknown = [c for c in chosen if c not in CASES]
    if unknown:
        raise SymidxError(f"unknown benchmark case(s) {', '.join(unknown)}: choose from "
                          f"{', '.join(CASES)}")
    found = list(backends) if backends is not None else available_backends()
    rows: list[Row] = []
    for done, name in enumerate(chosen, 1):
        try:
            rows += CASES[name](found, quick)
        except Exception as e:  # the table goes on
            rows.append(Row(name, 0, "", errors={"symidx": f"{type(e).__name__}: {e}"[:160]}))
        if progress is not None:
            progress(done, len(chosen), "case")
    return rows


NOTES = (
    "every figure is CPU time (user + system) of this process and of the processes it "
    "waited for, never wall time; each is the median over repetitions that interleave the "
    "engines, ± half the interquartile range; the garbage collector is on; /islpy and "
    "/MLIR are ratios of medians (above 1: symidx slower)",
    "compose, simplify and the chains: every engine's inputs are parsed outside the timing "
    "(symidx's maps from text or built, isl's objects read from the same maps' text): the "
    "figures time the operation alone",
    "equal and unequal round trips: from text on both sides -- each engine reads the pair "
    "from its own text (symidx's, isl's), timed, then decides",
    "islpy simplify = explicit form + gist by its domain + coalesce; compose = pullback of "
    "explicit forms (made untimed) (apply_range for set-valued maps); equal = is_equal",
    "symidx's equal (method auto) evaluates the pair at a few hundred points, then proves "
    "with isl (in this process, no deadline) where islpy is installed, else z3; the (z3) "
    "and enumerate rows are symidx's own procedures",
    "MLIR affine maps have no domain: simplify_affine_expr cannot use ranges, and it cannot "
    "decide equality on a domain",
)
"""What the table's columns mean, printed under it."""


def document(rows: Sequence[Row], quick: bool, backends: Sequence[Backend]) -> dict[str, Any]:
    """The rows as the JSON document ``symidx bench --json`` writes (schema
    ``symidx.bench/1``, ``symidx/schemas/bench-1.json``): what ran (symidx's version, the
    engines found, Python's, the processors), the clock (CPU seconds), the rows and the
    notes."""
    import os
    import platform

    from symidx import __version__

    return {
        "schema": "symidx.bench/1",
        "symidx": __version__,
        "quick": quick,
        "clock": "cpu",
        "engines": [b.name for b in backends],
        "python": platform.python_version(),
        "processors": os.cpu_count(),
        "rows": [row_dict(r) for r in rows],
        "notes": list(NOTES),
    }
