"""Are a tile's reads coalesced? XLA's judgement (:mod:`symidx.analysis.coalescing`) applied
to the first warp reading the first tile of a tiled instruction.

The thread mapping is the loop emitter's (thread ``t`` reads the ``t``-th element), but over
the *tile* rather than the whole output: thread ``t`` of program id 0 reads element ``t`` of
the tile, the tile's elements numbered in the operand's physical order (major to minor as
its layout says). Along dimension ``j`` element ``k`` of the tile is at
``offset_j(pid) + stride_j * k``. The map ``(thread, pid) -> operand logical index`` is
composed with the operand's layout (logical index -> linear offset,
:func:`symidx.lowering.layouts.shapes.offset_map`) and judged by
:func:`symidx.analysis.coalescing.is_indexing_coalesced` (threads 0..31, other dims at 0,
runtime variables at their midpoint, XLA's transaction estimate at 128 bytes).

A tile of the first program id that runs past its operand's end (a tile larger than the
dimension, masked by the emitter) is counted only over its in-bounds part: along a dimension
with a constant offset at program id 0, the tile's extent is cut at the dimension's end.
The figures are a model of a tiled emitter's loads, not of a particular Triton layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

from sympy import Integer

from symidx.analysis.coalescing import WARP, is_indexing_coalesced
from symidx.core.expr import Expr, FloorDiv, Mod, add, as_expr, dim, scale
from symidx.core.indexing_map import IndexingMap, print_map
from symidx.core.interval import Interval
from symidx.core.simplify import compose, simplify
from symidx.lowering.layouts import shapes, xla

__all__ = ["tile_read_map", "tile_coalescing"]


def _in_bounds_sizes(offsets_map: IndexingMap, sizes: Sequence[int], strides: Sequence[int],
                     extents: Sequence[int]) -> list[int]:
    """The tile sizes cut at the operand's end for program id 0 (where the offset at program
    id 0 is a constant and the stride positive)."""
    at0, _ = offsets_map.substitute({dim(0): Integer(0)})
    out = []
    for off, size, stride, extent in zip(at0, sizes, strides, extents):
        off = as_expr(off)
        if off.is_Integer and stride > 0:
            room = max(0, -(-(extent - int(off)) // stride))
            out.append(min(size, room))
        else:
            out.append(size)
    return out


def tile_read_map(offsets_map: IndexingMap, sizes: Sequence[int], strides: Sequence[int],
                  shape: Any) -> IndexingMap:
    """``(thread, pid) -> linear offset`` in ``shape``'s buffer of the element thread
    ``thread`` reads in the tile of program id ``pid`` (see the module docstring)."""
    extents = list(shape.dims)
    sizes = _in_bounds_sizes(offsets_map, sizes, strides, extents)
    order = xla.major_to_minor(shape.layout_or_default.minor_to_major)
    thread = dim(0)
    digits: dict[int, Expr] = {}
    block = 1
    for d in reversed(order):            # minor-most first
        q = FloorDiv(thread, block) if block > 1 else thread
        digits[d] = Mod(q, sizes[d]) if sizes[d] > 1 else Integer(0)
        block *= sizes[d]
    pid_results, pid_cons = offsets_map.substitute({dim(0): dim(1)})
    results = [add([as_expr(o), scale(strides[j], digits[j])])
               for j, o in enumerate(pid_results)]
    elements = prod(sizes)
    constraints = list(pid_cons)
    if elements < WARP:
        constraints.append((thread, Interval(0, max(elements, 1) - 1)))
    m = IndexingMap.create([WARP, offsets_map.dims[0]], results, offsets_map.ranges,
                           offsets_map.rts, constraints)
    return simplify(compose(simplify(m), shapes.offset_map(shape)))


def tile_coalescing(offsets_map: IndexingMap, sizes: Sequence[int], strides: Sequence[int],
                    shape: Any) -> dict[str, Any]:
    """XLA's verdict on the first warp's read of the first tile: ``coalesced``, the
    ``reason`` when not, and the ``map`` judged (thread -> linear offset)."""
    if not sizes:
        return {"coalesced": True, "reason": "a scalar", "map": ""}
    m = tile_read_map(offsets_map, sizes, strides, shape)
    ok, why, sample = is_indexing_coalesced(m, shapes.element_size_in_bits(shape))
    out: dict[str, Any] = {"coalesced": ok}
    if why:
        out["reason"] = why
    out["map"] = print_map(sample, "xla").split("\n")[0]
    return out
