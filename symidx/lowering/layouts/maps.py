"""XLA layouts of HLO arrays as indexing maps (re-exported by :mod:`symidx.layout.maps`,
where the CuTe layouts' maps are).

* :func:`xla_offset_map` — logical index -> physical offset (in elements) of an XLA layout
  (``minor_to_major``, tiles with ``*``), simplified;
* :func:`xla_physical_index_map` — logical index -> index into the physical (tiled, padded,
  major-to-minor) array, and :func:`xla_logical_index_map`, its inverse (physical index ->
  logical index, empty on padding); :func:`xla_offset_to_logical_map` inverts the offset map
  the same way (offset -> logical index);
* :func:`row_major_reshape_map` — one row-major shape read as another (a bitcast's middle
  step), on :func:`linearise` and :func:`delinearise`.

The integer functions in :mod:`symidx.lowering.layouts.xla` compute the same values point by
point; the tests hold the two to each other.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sympy import Integer

from symidx.core.expr import Expr, FloorDiv, Mod, add, dim, scale
from symidx.core.indexing_map import IndexingMap
from symidx.core.simplify import simplify
from symidx.lowering.layouts import xla

__all__ = [
    "delinearise",
    "linearise",
    "row_major_reshape_map",
    "xla_logical_index_map",
    "xla_offset_map",
    "xla_offset_to_logical_map",
    "xla_physical_index_map",
]

Constraints = list[tuple[Expr, tuple[int, int]]]


def _simplified(m: IndexingMap) -> IndexingMap:
    """``m`` simplified; a size-1 dimension keeps its variable (as XLA's layout maps do)."""
    return simplify(m, replace_point_dims=False)


def linearise(shape: Sequence[int], index: Sequence[Expr]) -> Expr:
    """Row-major offset of ``index`` in ``shape``."""
    offset: Expr = Integer(0)
    for e, n in zip(index, shape):
        offset = add([scale(n, offset), e])
    return offset


def delinearise(shape: Sequence[int], offset: Expr) -> list[Expr]:
    """Row-major index of ``offset`` in ``shape`` (floordiv/mod by each stride); the most
    major entry has no ``mod``, so ``offset`` must lie in ``[0, prod(shape))``."""
    out: list[Expr] = []
    stride = 1
    for n in reversed(shape):
        out.append(Mod(FloorDiv(offset, stride), n) if n > 1 else Integer(0))
        stride *= n
    out.reverse()
    if shape and shape[0] > 1:
        out[0] = FloorDiv(offset, stride // shape[0])
    return out


def _groups(step: xla.TilingStep) -> list[tuple[int, int]]:
    """For each dim of ``step.combined``: the slice ``[start, stop)`` of ``step.in_shape``
    it merges."""
    out = []
    start = 0
    for count in step.merged:
        out.append((start, start + count))
        start += count
    return out


def _order(dims: Sequence[int], minor_to_major: Sequence[int] | None) -> Sequence[int]:
    return xla.default_minor_to_major(len(dims)) if minor_to_major is None else minor_to_major


def _physical_index(dims: Sequence[int], minor_to_major: Sequence[int],
                    tiles: Sequence[Sequence[int]]) -> tuple[list[Expr], tuple[int, ...]]:
    """The physical index of the logical index ``(d0, d1, ...)``, and the physical shape."""
    shape, m2m, steps = xla.tiling_plan(dims, minor_to_major, tiles)
    order = xla.major_to_minor(m2m)
    index: list[Expr] = [dim(i) for i in order]
    for step in steps:
        combined = [linearise(step.in_shape[a:b], index[a:b]) for a, b in _groups(step)]
        lead = len(combined) - len(step.tile)
        outer = [FloorDiv(e, t) for e, t in zip(combined[lead:], step.tile)]
        inner = [Mod(e, t) for e, t in zip(combined[lead:], step.tile)]
        index = combined[:lead] + outer + inner
    final = steps[-1].out_shape if steps else tuple(shape[i] for i in order)
    return index, final


def _logical_index(dims: Sequence[int], minor_to_major: Sequence[int],
                   tiles: Sequence[Sequence[int]], physical: list[Expr]
                   ) -> tuple[list[Expr], Constraints]:
    """The logical index of the physical index ``physical``, and the constraints that keep
    it off the padding."""
    _, m2m, steps = xla.tiling_plan(dims, minor_to_major, tiles)
    order = xla.major_to_minor(m2m)
    index = physical
    constraints: Constraints = []
    for step in reversed(steps):
        k = len(step.tile)
        lead = len(step.combined) - k
        outer, inner = index[lead: lead + k], index[lead + k:]
        combined = index[:lead] + [add([scale(t, q), r])
                                   for q, t, r in zip(outer, step.tile, inner)]
        constraints += [(c, (0, n - 1)) for c, n in zip(combined, step.combined)]
        index = [e for (a, b), c in zip(_groups(step), combined)
                 for e in delinearise(step.in_shape[a:b], c)]
    return [index[order.index(i)] for i in range(len(dims))], constraints


def xla_physical_index_map(dims: Sequence[int], minor_to_major: Sequence[int] | None = None,
                           tiles: Sequence[Sequence[int]] = ()) -> IndexingMap:
    """Logical index -> index into the physical array (major to minor, tiles expanded)."""
    index, _ = _physical_index(dims, _order(dims, minor_to_major), tiles)
    return _simplified(IndexingMap.create(dims, index))


def xla_offset_map(dims: Sequence[int], minor_to_major: Sequence[int] | None = None,
                   tiles: Sequence[Sequence[int]] = ()) -> IndexingMap:
    """Logical index -> physical offset in elements (padding included in the offsets)."""
    index, final = _physical_index(dims, _order(dims, minor_to_major), tiles)
    return _simplified(IndexingMap.create(dims, [linearise(final, index)]))


def xla_logical_index_map(dims: Sequence[int], minor_to_major: Sequence[int] | None = None,
                          tiles: Sequence[Sequence[int]] = ()) -> IndexingMap:
    """Physical index -> logical index; physical slots that are padding have no image."""
    m2m = _order(dims, minor_to_major)
    final = xla.tiled_shape(dims, m2m, tiles)
    logical, constraints = _logical_index(dims, m2m, tiles, [dim(i) for i in range(len(final))])
    return _simplified(IndexingMap.create(final, logical, constraints=constraints))


def xla_offset_to_logical_map(dims: Sequence[int], minor_to_major: Sequence[int] | None = None,
                              tiles: Sequence[Sequence[int]] = ()) -> IndexingMap:
    """Physical offset ``d0`` in ``[0, tiled size)`` -> logical index; padding has no image."""
    m2m = _order(dims, minor_to_major)
    final = xla.tiled_shape(dims, m2m, tiles)
    logical, constraints = _logical_index(dims, m2m, tiles, delinearise(final, dim(0)))
    return _simplified(IndexingMap.create([math.prod(final)], logical, constraints=constraints))


def row_major_reshape_map(src: Sequence[int], dst: Sequence[int]) -> IndexingMap:
    """Index into ``src`` -> the index into ``dst`` at the same row-major position; indices
    past the end of ``dst`` have no image (the shapes may differ in size)."""
    if list(src) == list(dst):
        return IndexingMap.identity(src)
    offset = linearise(src, [dim(i) for i in range(len(src))])
    return _simplified(IndexingMap.create(src, delinearise(dst, offset),
                                       constraints=[(offset, (0, math.prod(dst) - 1))]))
