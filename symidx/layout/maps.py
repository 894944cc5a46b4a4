"""Layouts as indexing maps.

* :func:`xla_offset_map` — logical index -> physical offset (in elements) of an XLA layout
  (``minor_to_major``, tiles with ``*``), simplified;
* :func:`xla_physical_index_map` — logical index -> index into the physical (tiled, padded,
  major-to-minor) array, and :func:`xla_logical_index_map`, its inverse (physical index ->
  logical index, empty on padding); :func:`xla_offset_to_logical_map` inverts the offset map
  the same way (offset -> logical index);
* :func:`cute_map` — a nested ``shape:stride`` layout: one dimension per top-level mode (an
  integer index into the mode, decomposed colexicographically inside it, as CuTe does) ->
  offset; :func:`cute_from_map` reads such a layout back from any map whose offset is a sum
  of per-dimension layout functions (an XLA tiled layout whose tiles divide the dims is one).

The integer functions in :mod:`symidx.lowering.layouts.xla` and :mod:`symidx.layout.cute`
compute the same values point by point; the tests hold the two to each other. The XLA maps
are those of the lowering floor, :mod:`symidx.lowering.layouts.maps` (a bitcast's op rule
reads them), given here beside CuTe's.
"""

from __future__ import annotations

from sympy import Add, Integer

from symidx.core.expr import Expr, FloorDiv, Mod, add, dim, scale
from symidx.core.indexing_map import IndexingMap
from symidx.core.simplify import simplify
from symidx.errors import MapError, TooLargeError
from symidx.layout import cute
from symidx.lowering.layouts.maps import (
    row_major_reshape_map,
    xla_logical_index_map,
    xla_offset_map,
    xla_offset_to_logical_map,
    xla_physical_index_map,
)

__all__ = [
    "CUTE_FROM_MAP_LIMIT",
    "cute_from_map",
    "cute_map",
    "row_major_reshape_map",
    "xla_logical_index_map",
    "xla_offset_map",
    "xla_offset_to_logical_map",
    "xla_physical_index_map",
]

CUTE_FROM_MAP_LIMIT = 1 << 20
"""Largest dimension :func:`cute_from_map` evaluates point by point."""


def _simplified(m: IndexingMap) -> IndexingMap:
    """``m`` simplified, a size-1 dimension keeping its variable (as the XLA maps do)."""
    return simplify(m, replace_point_dims=False)

# ---------------------------------------------------------------------------------------------
# CuTe layouts


def cute_map(layout: cute.Layout | cute.ComposedLayout | object) -> IndexingMap:
    """One dimension per top-level mode, ``[0, size(mode) - 1]``, -> the offset.

    ``layout`` may also be a pycute ``Layout`` or ``ComposedLayout`` (read by
    :func:`symidx.layout.foreign.as_layout`). A layout with basis strides (``E(i)``) maps to
    one result per coordinate mode.

    A composed layout ``outer o offset o inner`` gives ``outer(offset + inner(d))``: an outer
    swizzle exactly, bit by bit (:func:`symidx.layout.swizzle.swizzle_expr`: each swizzled
    bit is a sum of two bits mod 2, no piecewise cases); an outer ``shape:stride`` layout by
    its colexicographic digits, its last mode taking any overflow.
    """
    from symidx.layout.foreign import as_layout

    layout = as_layout(layout)
    if isinstance(layout, cute.Swizzle):
        raise MapError(f"{layout} is a swizzle, not a layout: compose it with one "
                       f"(ComposedLayout) to get a map")
    if isinstance(layout, cute.ComposedLayout):
        return _composed_map(layout)
    if layout.has_basis:
        return _basis_map(layout)
    return _simplified(IndexingMap.create(*_offset_of_modes(layout)))


def _basis_map(layout: cute.Layout) -> IndexingMap:
    """A layout with basis strides: one result per top-level coordinate mode it reaches
    (nested basis paths are not flattened: they raise)."""
    modes = list(layout.modes()) if cute.is_tuple(layout.shape) else [layout]
    results: dict[int, list[Expr]] = {}
    for i, mode in enumerate(modes):
        stride_so_far = 1
        for n, s in zip(cute.flatten(mode.shape), cute.flatten(mode.stride)):
            if n > 1 and isinstance(s, cute.ScaledBasis) and s.value != 0:
                if len(s.mode) != 1:
                    raise MapError(f"{layout}: basis strides into nested modes ({s}) have no "
                                   f"map form yet")
                coord = Mod(FloorDiv(dim(i), stride_so_far), n)
                results.setdefault(s.mode[0], []).append(scale(s.value, coord))
            stride_so_far *= n
    width = max(results, default=0) + 1
    sizes = [cute.size(m) for m in modes]
    return _simplified(IndexingMap.create(
        sizes, [add(results[k]) if k in results else Integer(0) for k in range(width)]))


def _offset_of_modes(layout: cute.Layout) -> tuple[list[int], list[Expr]]:
    """The sizes of the top-level modes and the offset expression over one dim each."""
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
    return sizes, [add(terms) if terms else Integer(0)]


def _composed_map(layout: cute.ComposedLayout) -> IndexingMap:
    sizes, (inner,) = _offset_of_modes(layout.inner)
    offset = add([inner, Integer(layout.offset)])
    if isinstance(layout.outer, cute.Swizzle):
        if any(d < 0 for d in cute.flatten(layout.inner.stride)) or layout.offset < 0:
            raise MapError(f"{layout}: a swizzle needs non-negative offsets")
        result = cute.swizzle_expr(layout.outer, offset)
    else:
        result = _layout_of_expr(layout.outer, offset)
    return _simplified(IndexingMap.create(sizes, [result]))


def _layout_of_expr(layout: cute.Layout, e: Expr) -> Expr:
    """``layout`` applied to the non-negative index ``e``: colex digits, the last mode
    taking the overflow."""
    modes = cute.flat_modes(layout)
    terms: list[Expr] = []
    block = 1
    for k, (n, d) in enumerate(modes):
        digit = FloorDiv(e, block) if block > 1 else e
        if k < len(modes) - 1:
            digit = Mod(digit, n)
        terms.append(scale(d, digit))
        block *= n
    return add(terms)


def cute_from_map(m: IndexingMap) -> cute.Layout:
    """The ``shape:stride`` layout that computes ``m``: one top-level mode per dimension.

    ``m`` must have one result, dimensions ``[0, n-1]``, no symbols or constraints, and a
    result that is a sum of terms each in at most one dimension, with value 0 at the origin.
    Each dimension's function is then read off point by point and split into the fewest
    ``(size, stride)`` sub-modes (coalesced, as :func:`symidx.layout.cute.coalesce` would);
    a one-dimensional map whose mode is a single ``size:stride`` gives just that.
    Raises :class:`MapError` when some dimension's function is not a layout.

    >>> from symidx.layout.maps import xla_offset_map
    >>> str(cute_from_map(xla_offset_map((8, 12), (1, 0), [(4, 4)])))
    '((4,2),(4,3)):((4,48),(1,16))'
    """
    if m.is_known_empty or m.is_undefined:
        raise MapError("a known-empty or undefined map is not a layout")
    if m.num_results != 1 or m.symbol_vars or m.constraints:
        raise MapError("only a map with one result and no symbols or constraints is a layout")
    if any(b.lo != 0 for b in m.dims) or not m.dims:
        raise MapError("a layout's dimensions start at 0; this map has " +
                       (", ".join(str(b) for b in m.dims) or "no dimensions"))
    (result,) = m.results
    for term in Add.make_args(result):
        if len(term.free_symbols) > 1:
            raise MapError(f"term {term} mixes dimensions: the offset is not a sum of "
                           f"per-dimension functions")
    modes = [cute.coalesce(_flat_modes([_at(m, i, x) for x in range(b.hi + 1)], i))
             for i, b in enumerate(m.dims)]
    if len(modes) == 1 and cute.is_int(modes[0].shape):
        return modes[0]
    return cute.make_layout(*modes)


def _at(m: IndexingMap, i: int, x: int) -> int:
    point = [0] * m.num_dims
    point[i] = x
    return m.evaluate(point)[0]


def _flat_modes(values: list[int], i: int) -> cute.Layout:
    """The layout ``(s0,s1,...):(t0,t1,...)`` whose values on ``[0, len(values))`` are
    ``values``, or :class:`MapError`.

    Greedy, then checked: at each step the next sub-mode's stride is the value at the first
    point it moves, and its size the longest run of equal steps that divides what is left.
    For a true layout a run ends exactly at a product of its mode sizes (it runs on only
    where two modes coalesce), so the greedy split is exact.
    """
    n = len(values)
    if n > CUTE_FROM_MAP_LIMIT:
        raise TooLargeError(f"dimension {i} has {n} points; the limit is {CUTE_FROM_MAP_LIMIT}")
    modes: list[tuple[int, int]] = []
    block = 1
    while block < n:
        remaining = n // block
        stride = values[block]
        run = 1
        while run < remaining and values[block * run] == run * stride:
            run += 1
        size = max(s for s in range(1, run + 1) if remaining % s == 0)
        if size == 1:
            break
        modes.append((size, stride))
        block *= size
    if not modes:
        layout = cute.Layout(1, 0)
    elif len(modes) == 1:
        layout = cute.Layout(*modes[0])
    else:
        layout = cute.Layout(tuple(s for s, _ in modes), tuple(t for _, t in modes))
    if block != n or [layout(x) for x in range(n)] != values:
        shown = ", ".join(str(v) for v in values[:8]) + (", ..." if n > 8 else "")
        raise MapError(f"dimension {i} is not a shape:stride layout: its offsets are {shown}")
    return layout
