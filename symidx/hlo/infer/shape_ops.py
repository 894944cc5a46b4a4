"""Shape rules of ops that move elements: broadcast, transpose, reverse, slice, pad,
concatenate, tuple and get-tuple-element."""

from __future__ import annotations

from typing import TYPE_CHECKING

from symidx._arith import ceil_div
from symidx.hlo.infer.common import (
    _array,
    _arrays,
    _expect_scalar,
    _fail,
    _in_range,
    _infers,
    _list,
    _operand_shape,
    _plain,
    _single_dimension,
    _unique,
    _wider,
    braced,
    operand_array,
    same_element_type,
    shape_text,
)
from symidx.hlo.shape import UNBOUNDED_SIZE, ShapeLike, TupleShape

if TYPE_CHECKING:
    from symidx.hlo.ir import HloInstruction


# --------------------------------------------------------------------------- shape ops

@_infers("broadcast")
def _broadcast(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    dims = instr.attr_int_list("dimensions") or ()
    if operand.rank == 0 and not dims:
        return _plain(operand)
    raise _fail(instr, "the output shape cannot be inferred (the sizes of the added "
                       "dimensions are not in the instruction); write it")


@_infers("transpose")
def _transpose(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    perm = _list(instr, "dimensions")
    if sorted(perm) != list(range(operand.rank)):
        raise _fail(instr, f"dimensions={braced(perm)} is not a permutation of the "
                           f"{operand.rank} dimensions of {shape_text(operand)}", "dimensions")
    return _array(operand.element_type, [operand.dims[p] for p in perm],
                  [operand.dynamic[p] for p in perm])


@_infers("reverse")
def _reverse(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    dims = _list(instr, "dimensions")
    _unique(instr, "dimensions", dims)
    _in_range(instr, "dimensions", dims, operand.rank, operand)
    return _plain(operand)


@_infers("slice")
def _slice(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    if instr.slice is None:
        raise _fail(instr, "is missing attribute slice=")
    if len(instr.slice) != operand.rank:
        raise _fail(instr, f"slice= has {len(instr.slice)} dimensions, but the operand "
                           f"{shape_text(operand)} has rank {operand.rank}", "slice")
    sizes, dynamic = [], []
    for d, (s, size, dyn) in enumerate(zip(instr.slice, operand.dims, operand.dynamic,
                                           strict=True)):
        if s.start < 0 or s.start > s.limit or s.stride <= 0 or (
                size != UNBOUNDED_SIZE and s.limit > size):
            raise _fail(instr, f"slice [{s.start}:{s.limit}:{s.stride}] of dimension {d} is "
                               f"out of bounds: it needs 0 <= start <= limit <= {size} and "
                               f"stride > 0", "slice")
        n = ceil_div(s.limit - s.start, s.stride)
        sizes.append(n)
        dynamic.append(dyn and n != 1)
    return _array(operand.element_type, sizes, dynamic)


@_infers("pad")
def _pad(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    value = _expect_scalar(instr, 1, "the padding value")
    if not same_element_type(operand.element_type, value.element_type):
        raise _fail(instr, f"the padding value {shape_text(value)} must have the element type "
                           f"of the operand {shape_text(operand)}")
    padding = instr.padding
    if padding is None:
        raise _fail(instr, "is missing attribute padding=")
    if len(padding) != operand.rank:
        raise _fail(instr, f"padding= has {len(padding)} dimensions, but the operand "
                           f"{shape_text(operand)} has rank {operand.rank}", "padding")
    sizes = []
    for d, (p, size) in enumerate(zip(padding, operand.dims, strict=True)):
        if p.interior < 0:
            raise _fail(instr, f"interior padding {p.interior} of dimension {d} is negative",
                        "padding")
        n = size + p.low + p.high + max(size - 1, 0) * p.interior
        if n < 0:
            raise _fail(instr, f"padding {p.low}_{p.high}_{p.interior} makes dimension {d} "
                               f"(size {size}) negative: {n}", "padding")
        sizes.append(n)
    return _array(_wider(operand.element_type, value.element_type), sizes, operand.dynamic)


@_infers("concatenate")
def _concatenate(instr: HloInstruction) -> ShapeLike:
    shapes = _arrays(instr)
    if not shapes:
        raise _fail(instr, "needs at least one operand")
    axis = _single_dimension(instr)
    first = shapes[0]
    if not 0 <= axis < first.rank:
        raise _fail(instr, f"dimensions={{{axis}}} is out of range for rank {first.rank}",
                    "dimensions")
    element_type, total = first.element_type, 0
    for shape in shapes:
        if shape.rank != first.rank or not same_element_type(shape.element_type, element_type) \
                or not all(a == b or d == axis or UNBOUNDED_SIZE in (a, b)
                           for d, (a, b) in enumerate(zip(shape.dims, first.dims, strict=True))):
            raise _fail(instr, f"operands {shape_text(first)} and {shape_text(shape)} differ "
                               f"in more than dimension {axis}")
        element_type = _wider(element_type, shape.element_type)
        total = UNBOUNDED_SIZE if UNBOUNDED_SIZE in (total, shape.dims[axis]) \
            else total + shape.dims[axis]
    dims = list(first.dims)
    dims[axis] = total
    dynamic = [any(s.dynamic[d] for s in shapes) for d in range(first.rank)]
    return _array(element_type, dims, dynamic)


@_infers("tuple")
def _tuple(instr: HloInstruction) -> ShapeLike:
    return TupleShape(tuple(_plain(_operand_shape(instr, k))
                            for k in range(len(instr.operands))))


@_infers("get-tuple-element")
def _get_tuple_element(instr: HloInstruction) -> ShapeLike:
    shape = _operand_shape(instr, 0)
    index = instr.tuple_index
    if index is None:
        raise _fail(instr, "is missing attribute index=")
    if not isinstance(shape, TupleShape):
        raise _fail(instr, f"the operand must be a tuple, but is {shape_text(shape)}")
    if not 0 <= index < len(shape.elements):
        raise _fail(instr, f"index={index} is out of range for the {len(shape.elements)}-tuple "
                           f"{shape_text(shape)}", "index")
    return _plain(shape.elements[index])
