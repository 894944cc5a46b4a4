"""Map groups between physical indices (``symidx maps --physical``): the physical index
addresses the array a layout stores -- dims in major-to-minor order, each tile split into
(tile count, tile size) dims (``f32[3,5]{1,0:T(2,2)}`` is ``f32[2,3,2,2]``); padding slots
have no image (:func:`symidx.lowering.layouts.shapes.logical_index_map`).
"""

from __future__ import annotations

from dataclasses import replace

from symidx.analysis.records import group_index
from symidx.core.indexing_map import IndexingMap
from symidx.core.simplify import compose
from symidx.errors import SymidxError
from symidx.fusion import Reached
from symidx.hlo import HloInstruction, Shape, TupleShape
from symidx.lowering.layouts.shapes import logical_index_map, physical_index_map
from symidx.ops import OUTPUT_TO_INPUT, Direction, finish

__all__ = ["physical_group"]


def _array(shape: Shape | TupleShape, element: int, what: str) -> Shape:
    if isinstance(shape, TupleShape):
        shape = shape.elements[element]
    if not isinstance(shape, Shape):
        raise SymidxError(f"--physical: {what} has a nested tuple shape")
    return shape


def physical_group(instr: HloInstruction, direction: Direction, group: Reached,
                    operand: int, output: int) -> Reached:
    """``group`` of :func:`~symidx.analysis.groups.instruction_maps` (for ``operand`` and
    ``output`` of ``instr``) with each map between physical indices instead of logical."""
    if group.unsupported is not None:
        return group
    if direction == OUTPUT_TO_INPUT:
        op = instr.operands[group_index(group)]
        element = (instr.tuple_index or 0) if instr.opcode == "get-tuple-element" else 0
        source = _array(instr.shape, output, instr.name)
        target = _array(op.shape, element, op.name)
    else:
        op = instr.operands[operand]
        element = (instr.tuple_index or 0) if instr.opcode == "get-tuple-element" else 0
        source = _array(op.shape, element, op.name)
        target = _array(instr.shape, group_index(group), instr.name)
    maps = tuple(_between_physical(m, source, target) for m in group.maps)
    return replace(group, maps=maps)


def _between_physical(m: IndexingMap, source: Shape, target: Shape) -> IndexingMap:
    if m.is_known_empty or m.is_undefined:
        return m
    return finish(compose(compose(logical_index_map(source), m), physical_index_map(target)))
