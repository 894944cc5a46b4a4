"""What XLA's GPU cost model asks of a shape: bytes, elements, physical dimension order.

* ``shape_size``: ``HloCostAnalysis::DefaultShapeSize`` -- an array's element count
  times its element's byte width (a sub-byte element takes a byte unless the layout packs
  it, ``E(4)``), a tuple's pointer table (8 bytes per element), a token nothing.
* ``elements_recursive``: ``ShapeUtil::ElementsInRecursive`` -- the elements of every
  array leaf.
* ``minor_to_major``: the layout, the default (row-major) one when the text gives none, as
  XLA's parser assigns it to a verified module.
"""

from __future__ import annotations

from math import prod

from symidx.errors import SymidxError
from symidx.hlo import ELEMENT_BIT_WIDTHS, HloInstruction, Shape, ShapeLike, TupleShape
from symidx.hlo.leaves import leaves

__all__ = ["POINTER_SIZE", "bits", "element_bytes", "shape_size", "elements", "elements_recursive",
           "minor_to_major", "first_array", "is_array", "transpose_is_bitcast",
           "reshape_is_bitcast", "equal_ignoring_element_type", "most_minor_non_trivial"]

#: ``HloCostAnalysis``'s pointer size: what one element of a tuple's index table costs.
POINTER_SIZE = 8


def is_array(shape: ShapeLike) -> bool:
    return isinstance(shape, Shape)


def bits(shape: ShapeLike) -> int:
    """The element bit width of an array (``primitive_util::BitWidth``; ``pred`` 8)."""
    if isinstance(shape, TupleShape):
        raise SymidxError(f"expected an array shape, found the tuple {shape}")
    return ELEMENT_BIT_WIDTHS[shape.element_type]


def element_bytes(element_type: str) -> int:
    """``ShapeUtil::ByteSizeOfPrimitiveType``: whole bytes, at least one (``pred`` and the
    sub-byte types take a byte)."""
    bits = ELEMENT_BIT_WIDTHS[element_type]
    return max(1, (bits + 7) // 8) if bits else 0


def elements(shape: ShapeLike) -> int:
    """``ShapeUtil::ElementsIn`` of an array (a tuple has none: an error)."""
    if isinstance(shape, TupleShape):
        raise SymidxError(f"expected an array shape, found the tuple {shape}")
    return prod(shape.dims)


def elements_recursive(shape: ShapeLike) -> int:
    """The elements of every array leaf (``ShapeUtil::ElementsInRecursive``)."""
    return sum(elements(leaf) for leaf in leaves(shape))


def shape_size(shape: ShapeLike) -> int:
    """Bytes, as ``HloCostAnalysis::DefaultShapeSize`` counts them."""
    if isinstance(shape, TupleShape):
        return POINTER_SIZE * len(shape.elements)
    bits = ELEMENT_BIT_WIDTHS[shape.element_type]
    if bits == 0:
        return 0
    packed = shape.layout.element_size_in_bits if shape.layout is not None else 0
    if packed:
        return (elements(shape) * packed + 7) // 8
    return elements(shape) * element_bytes(shape.element_type)


def minor_to_major(shape: Shape) -> tuple[int, ...]:
    layout = shape.layout_or_default
    return layout.minor_to_major if layout.minor_to_major or not shape.dims \
        else tuple(range(shape.rank - 1, -1, -1))


def first_array(shape: ShapeLike) -> Shape:
    """The first array leaf (XLA's element shape of a multi-output fusion)."""
    while isinstance(shape, TupleShape):
        shape = shape.elements[0]
    return shape


def _physical(shape: Shape, names: tuple[int, ...]) -> list[int]:
    """The non-trivial dimensions, major to minor, each named by ``names[dim]``."""
    return [names[d] for d in reversed(minor_to_major(shape)) if shape.dims[d] != 1]


def transpose_is_bitcast(instr: HloInstruction) -> bool:
    """A transpose that moves no element in memory (``ShapeUtil::TransposeIsBitcast``): its
    output's non-trivial dimensions, in physical order, are the operand's."""
    operand = instr.operands[0].shape
    out = instr.shape
    if not (isinstance(operand, Shape) and isinstance(out, Shape)) or instr.dimensions is None:
        return False
    if operand.element_type != out.element_type:
        return False
    return _physical(out, tuple(instr.dimensions)) == _physical(operand, tuple(range(operand.rank)))


def reshape_is_bitcast(instr: HloInstruction) -> bool:
    """A reshape that moves no element in memory: both shapes lay their elements out in
    logical (row-major) order once the size-1 dimensions are dropped."""
    operand = instr.operands[0].shape
    out = instr.shape
    if not (isinstance(operand, Shape) and isinstance(out, Shape)):
        return False

    def row_major(shape: Shape) -> bool:
        order = [d for d in reversed(minor_to_major(shape)) if shape.dims[d] != 1]
        return order == sorted(order)

    return row_major(operand) and row_major(out)


def equal_ignoring_element_type(a: ShapeLike, b: ShapeLike) -> bool:
    """``ShapeUtil::EqualIgnoringElementType`` for arrays: same dimensions and layout."""
    if not (isinstance(a, Shape) and isinstance(b, Shape)):
        return False
    return a.dims == b.dims and minor_to_major(a) == minor_to_major(b)


def most_minor_non_trivial(shape: Shape) -> tuple[int, int]:
    """The most minor dimension of size above 1 and its position in ``minor_to_major``
    (-1 and the rank when there is none)."""
    for position, dim in enumerate(minor_to_major(shape)):
        if shape.dims[dim] > 1:
            return dim, position
    return -1, shape.rank
