"""Tuple shapes as flat lists of array leaves.

An instruction of tuple shape has one *output* per array leaf of its shape, numbered in
depth-first order: ``((f32[2], s32[]), f32[3])`` has outputs 0 (``f32[2]``), 1 (``s32[]``)
and 2 (``f32[3]``). For a flat tuple the leaf number is the element number; an array shape
is its own single leaf; the empty tuple ``()`` has none.

>>> from symidx.hlo import parse_shape
>>> shape = parse_shape("((f32[2], s32[]), f32[3])")
>>> [str(s) for s in leaves(shape)], element_leaves(shape, 1), leaf_index_path(shape, 1)
(['f32[2]', 's32[]', 'f32[3]'], range(2, 3), (0, 1))
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from symidx.hlo.moves import PASSES_WHOLE
from symidx.hlo.shape import Shape, ShapeLike, TupleShape

if TYPE_CHECKING:
    from symidx.hlo.ir import HloInstruction

__all__ = ["leaves", "leaf_count", "element_leaves", "leaf_index_path", "leaf_source"]


@lru_cache(maxsize=8192)
def leaves(shape: ShapeLike) -> tuple[Shape, ...]:
    """The array leaves of ``shape`` in depth-first order (iterative: no recursion limit)."""
    if isinstance(shape, Shape):
        return (shape,)
    found: list[Shape] = []
    stack: list[ShapeLike] = [shape]
    while stack:
        top = stack.pop()
        if isinstance(top, Shape):
            found.append(top)
        else:
            stack.extend(reversed(top.elements))
    return tuple(found)


def leaf_count(shape: ShapeLike) -> int:
    """How many array leaves ``shape`` has (1 for an array)."""
    return shape.leaf_count if isinstance(shape, TupleShape) else 1


def element_leaves(shape: ShapeLike, index: int) -> range:
    """The leaf numbers of top-level element ``index`` of a tuple shape. IndexError when
    ``shape`` is not a tuple or has no such element."""
    if not isinstance(shape, TupleShape) or not 0 <= index < len(shape.elements):
        raise IndexError(f"{shape} has no tuple element {index}")
    return range(shape.leaf_offsets[index], shape.leaf_offsets[index + 1])


def leaf_index_path(shape: ShapeLike, leaf: int) -> tuple[int, ...]:
    """The tuple indices leading to leaf ``leaf`` (XLA's ShapeIndex): ``()`` for an array."""
    path: list[int] = []
    while isinstance(shape, TupleShape):
        for i, element in enumerate(shape.elements):
            n = leaf_count(element)
            if leaf < n:
                path.append(i)
                shape = element
                break
            leaf -= n
        else:
            raise IndexError(f"{shape} has no leaf {leaf}")
    if leaf != 0:
        raise IndexError(f"{shape} has no leaf {leaf}")
    return tuple(path)


#: Ops whose output is their one operand, leaf for leaf.
_SAME_VALUE = PASSES_WHOLE


def leaf_source(instr: HloInstruction, leaf: int) -> tuple[HloInstruction, int] | None:
    """The operand (and its leaf) that leaf ``leaf`` of ``instr`` is, when ``instr`` only
    moves tuple leaves: a ``tuple``, a ``get-tuple-element``, a ``copy``, ``opt-barrier``
    or ``domain`` of one operand. None for any other instruction (or a leaf out of
    range)."""
    if instr.opcode == "tuple":
        for op in instr.operands:
            n = leaf_count(op.shape)
            if leaf < n:
                return op, leaf
            leaf -= n
        return None
    if instr.opcode == "get-tuple-element" and instr.operands:
        try:
            span = element_leaves(instr.operands[0].shape, instr.tuple_index or 0)
        except IndexError:
            return None
        return (instr.operands[0], span.start + leaf) if leaf < len(span) else None
    if instr.opcode in _SAME_VALUE and len(instr.operands) == 1:
        return instr.operands[0], leaf
    return None
