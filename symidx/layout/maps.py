"""Layouts as indexing maps.

* :func:`xla_offset_map` — logical index -> physical offset (in elements) of an XLA layout
  (``minor_to_major``, tiles with ``*``), simplified;
* :func:`xla_physical_index_map` — logical index -> index into the physical (tiled, padded,
  major-to-minor) array, and :func:`xla_logical_index_map`, its inverse (physical index ->
  logical index, empty on padding);
* :func:`cute_map` — a nested ``shape:stride`` layout: one dimension per top-level mode (an
  integer index into the mode, decomposed colexicographically inside it, as CuTe does) ->
  offset.

The integer functions in :mod:`symidx.layout.xla` and :mod:`symidx.layout.cute` compute the
same values point by point; the tests hold the two to each other.
"""

from __future__ import annotations

from collections.abc import Sequence

from sympy import Integer

from symidx.expr import Expr, FloorDiv, Mod, add, dim, scale
from symidx.indexing_map import IndexingMap
from symidx.layout import cute, xla
from symidx.simplify import simplify

__all__ = ["xla_offset_map", "xla_physical_index_map", "xla_logical_index_map", "cute_map"]


def _linearise(shape: Sequence[int], index: Sequence[Expr]) -> Expr:
    """Row-major offset of ``index`` in ``shape``."""
    offset: Expr = Integer(0)
    for e, n in zip(index, shape):
        offset = add([scale(n, offset), e])
    return offset


def _delinearise(shape: Sequence[int], offset: Expr) -> list[Expr]:
    """Row-major index of ``offset`` in ``shape`` (floordiv/mod by each stride)."""
    out: list[Expr] = []
    stride = 1
    for n in reversed(shape):
        out.append(Mod(FloorDiv(offset, stride), n) if n > 1 else Integer(0))
        stride *= n
    out.reverse()
    if shape and shape[0] > 1:  # the most major position needs no mod when offset is in range
        out[0] = FloorDiv(offset, stride // shape[0])
    return out


def _physical_index(dims: Sequence[int], minor_to_major: Sequence[int],
                    tiles: Sequence[Sequence[int]]) -> tuple[list[Expr], tuple[int, ...]]:
    shape, m2m, steps = xla._checked_plan(dims, minor_to_major, tiles)
    order = xla.major_to_minor(m2m)
    index: list[Expr] = [dim(i) for i in order]
    for step in steps:
        combined = _delinearise(step.combined, _linearise(step.in_shape, index))
        lead = len(combined) - len(step.tile)
        outer = [FloorDiv(e, t) for e, t in zip(combined[lead:], step.tile)]
        inner = [Mod(e, t) for e, t in zip(combined[lead:], step.tile)]
        index = combined[:lead] + outer + inner
    final = steps[-1].out_shape if steps else tuple(shape[i] for i in order)
    return index, final


def xla_physical_index_map(dims: Sequence[int], minor_to_major: Sequence[int] | None = None,
                           tiles: Sequence[Sequence[int]] = ()) -> IndexingMap:
    """Logical index -> index into the physical array (major to minor, tiles expanded)."""
    m2m = xla.default_minor_to_major(len(dims)) if minor_to_major is None else minor_to_major
    index, _ = _physical_index(dims, m2m, tiles)
    return simplify(IndexingMap.create(dims, index))


def xla_offset_map(dims: Sequence[int], minor_to_major: Sequence[int] | None = None,
                   tiles: Sequence[Sequence[int]] = ()) -> IndexingMap:
    """Logical index -> physical offset in elements (padding included in the offsets)."""
    m2m = xla.default_minor_to_major(len(dims)) if minor_to_major is None else minor_to_major
    index, final = _physical_index(dims, m2m, tiles)
    return simplify(IndexingMap.create(dims, [_linearise(final, index)]))


def xla_logical_index_map(dims: Sequence[int], minor_to_major: Sequence[int] | None = None,
                          tiles: Sequence[Sequence[int]] = ()) -> IndexingMap:
    """Physical index -> logical index; physical slots that are padding have no image."""
    m2m = xla.default_minor_to_major(len(dims)) if minor_to_major is None else minor_to_major
    shape, m2m_t, steps = xla._checked_plan(dims, m2m, tiles)
    order = xla.major_to_minor(m2m_t)
    final = steps[-1].out_shape if steps else tuple(shape[i] for i in order)
    index: list[Expr] = [dim(i) for i in range(len(final))]
    constraints = []
    for step in reversed(steps):
        k = len(step.tile)
        lead = len(step.combined) - k
        outer, inner = index[lead: lead + k], index[lead + k:]
        combined = index[:lead] + [add([scale(t, q), r])
                                   for q, t, r in zip(outer, step.tile, inner)]
        constraints += [(c, (0, n - 1)) for c, n in zip(combined, step.combined)
                        if not c.is_Symbol]
        index = _delinearise(step.in_shape, _linearise(step.combined, combined))
    logical = [index[order.index(i)] for i in range(len(dims))]
    return simplify(IndexingMap.create(final, logical, constraints=constraints))


def cute_map(layout: cute.Layout) -> IndexingMap:
    """One dimension per top-level mode, ``[0, size(mode) - 1]``, -> the offset."""
    modes = list(layout.modes()) if cute.is_tuple(layout.shape) else [layout]
    terms: list[Expr] = []
    for i, mode in enumerate(modes):
        flat_shape = cute.flatten(mode.shape)
        flat_stride = cute.flatten(mode.stride)
        stride_so_far = 1
        for n, s in zip(flat_shape, flat_stride):
            if n > 1 and s != 0:
                coord = Mod(FloorDiv(dim(i), stride_so_far), n)
                terms.append(scale(s, coord))
            stride_so_far *= n
    sizes = [cute.size(m) for m in modes]
    return simplify(IndexingMap.create(sizes, [add(terms) if terms else Integer(0)]))
