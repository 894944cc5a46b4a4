"""Pallas block specs, checked without running the kernel: :func:`pallas_report`.

A ``BlockSpec``'s ``index_map`` is an indexing map from grid indices to block indices.
``symidx.pallas_report(f, *example_args)`` traces ``f`` (``jax.make_jaxpr``: nothing runs),
reads the grid and every block spec of each ``pallas_call`` it binds
(:mod:`symidx.pallas.trace`), turns each index map into an
:class:`~symidx.core.indexing_map.IndexingMap` and checks, at every grid point, what the blocks
do (:mod:`symidx.pallas.checks`: out of bounds, partial edge blocks, output blocks written
twice, by racing cores or never, the footprint read)::

    report = symidx.pallas_report(f, x)
    report.ok, report.problems      # located messages
    report                          # a table in a notebook

JAX is optional (``pip install 'symidx[jax]'``) and imported only when a report is made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from symidx.pallas.checks import KernelReport, OperandReport, PallasReport, check_call
from symidx.pallas.trace import GRID_LIMIT, pallas_calls

__all__ = ["GRID_LIMIT", "KernelReport", "OperandReport", "PallasReport", "pallas_report"]


def pallas_report(fn: Callable[..., Any], *example_args: Any, limit: int = GRID_LIMIT,
                  **example_kwargs: Any) -> PallasReport:
    """Check the block specs of every ``pallas_call`` that ``fn(*example_args,
    **example_kwargs)`` binds (arrays, or ``jax.ShapeDtypeStruct`` for shapes only; the
    values of scalar-prefetch operands are used when given), at every point of each grid
    (at most ``limit`` points)."""
    return PallasReport([check_call(c) for c in pallas_calls(fn, example_args,
                                                             example_kwargs, limit)])
