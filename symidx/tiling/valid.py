"""Valid tilings without the Cartesian blow-up.

The candidates per parameter are XLA's (powers of two below the size, and the size). The
constraints are a conjunction of DNFs in groups over disjoint sets of parameters
(:class:`~symidx.tiling.constraints.Constraints`), so the valid tilings are a product:
each group's valid sub-tilings (its DNFs evaluated together over the grid of that group's
parameters only, vectorised, never multiplied out) times the candidates of the
parameters no constraint mentions. Counting multiplies; streaming walks
the product lazily.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import product
from math import prod
from typing import TYPE_CHECKING

from symidx.core.expr import dim, var_index
from symidx.errors import TooLargeError
from symidx.tiling.limits import Limits

if TYPE_CHECKING:
    from symidx.tiling.analysis import FusionTiling
    from symidx.tiling.constraints import Constraints

__all__ = ["candidates", "valid_tilings", "count_valid", "group_solutions"]


def candidates(n: int) -> list[int]:
    """Powers of two below ``n``, then ``n``."""
    out, p = [], 1
    while p < n:
        out.append(p)
        p *= 2
    return out + [n]


GROUP_LIMIT = 20_000_000     # most candidate points one group may span


def group_solutions(cons: Constraints, cands: Sequence[Sequence[int]],
                    limits: Limits | None = None
                    ) -> tuple[list[list[int]], list[list[tuple[int, ...]]]]:
    """Per group: its parameters and their valid value tuples, found by evaluating the
    group's DNFs (never multiplied out) over the grid of its parameters' candidates at
    once, with numpy. ``limits`` counts the candidate points evaluated (and the CPU
    seconds spent): :class:`~symidx.tiling.limits.LimitStop` past them."""
    import numpy as np

    params_of, sols = [], []
    for g, variables in zip(cons.groups, cons.group_variables()):
        ps = [var_index(v) for v in variables]
        grid_size = prod(len(cands[p]) for p in ps)
        if grid_size > GROUP_LIMIT:
            raise TooLargeError(f"a constraint group over {len(ps)} parameters spans "
                                f"{grid_size} candidate tilings (limit {GROUP_LIMIT})")
        if limits is not None:
            limits.spend(grid_size)
        ev = type(cons)((g,)).evaluator([dim(p) for p in ps])
        axes = np.meshgrid(*[np.asarray(cands[p], dtype=np.int64) for p in ps],
                           indexing="ij")
        flat_axes = [a.reshape(-1) for a in axes]
        mask = ev(flat_axes) if flat_axes else np.ones(1, dtype=bool)
        good = np.stack(flat_axes, axis=1)[np.asarray(mask, dtype=bool)] if flat_axes \
            else np.zeros((1, 0), dtype=np.int64)
        params_of.append(ps)
        sols.append([tuple(int(x) for x in row) for row in good])
    return params_of, sols


def _parts(t: FusionTiling, cands: Sequence[Sequence[int]] | None = None,
           limits: Limits | None = None
           ) -> tuple[list[int], Sequence[Sequence[int]], list[list[int]],
                      list[list[tuple[int, ...]]], list[int]]:
    flat = t.flat_sizes
    cands = cands or [candidates(n) for n in flat]
    params_of, sols = group_solutions(t.constraints, cands, limits)
    constrained = {p for ps in params_of for p in ps}
    free = [p for p in range(len(flat)) if p not in constrained]
    return flat, cands, params_of, sols, free


def count_valid(t: FusionTiling, cands: Sequence[Sequence[int]] | None = None,
                limits: Limits | None = None) -> tuple[int, int]:
    """(valid tilings, candidate tilings), by multiplying per group."""
    flat, cands, params_of, sols, free = _parts(t, cands, limits)
    n = prod(len(s) for s in sols) * prod(len(cands[p]) for p in free)
    return n, prod(len(c) for c in cands)


def valid_tilings(t: FusionTiling, cands: Sequence[Sequence[int]] | None = None,
                  limits: Limits | None = None) -> Iterator[tuple[int, ...]]:
    """Every valid tiling, in lexicographic order of the candidates, lazily (each one
    listed counts a point of ``limits``)."""
    flat, cands, params_of, sols, free = _parts(t, cands, limits)
    for picked in product(*sols):
        value = [0] * len(flat)
        for ps, vals in zip(params_of, picked):
            for p, v in zip(ps, vals):
                value[p] = v
        for rest in product(*[cands[p] for p in free]):
            for p, v in zip(free, rest):
                value[p] = v
            if limits is not None:
                limits.spend(1)
            yield tuple(value)
