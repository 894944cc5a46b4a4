"""Ops that move elements without reading more than one: broadcast, transpose, reverse,
reshape, bitcast.

Reshape splits both shapes into the smallest groups of consecutive dimensions with equal
element counts; inside a group the index is linearised (row-major) in one shape and
delinearised in the other. A group of one dimension on each side is the identity, so
collapse (``(d0) -> (d0 floordiv 8, d0 mod 8)``) and expand (``(d0, d1) -> (d0 * 8 + d1)``)
come out directly and the general case is simplified from the linearised form. Size-1
dimensions read index 0; where both shapes have a size-1 dimension at a group boundary the
two are paired (``f32[1,250] -> f32[1,250]`` is the identity).

Bitcast reinterprets the buffer: the output's logical index goes to its physical offset
(its layout as a map: ``minor_to_major``, tiles, padding), and the offset goes back to the
input's logical index through the inverse of the input's layout — simplified, this is a pure
transpose when the physical shapes agree, a reshape when both layouts are the default,
transpose–reshape–transpose otherwise, and floordiv/mod by the tile sizes for tiled layouts.
Output elements that land on the input's padding read nothing. Changes of element size and
buffers of different sizes are unsupported.

Dynamic shapes: ``get-dimension-size`` reads no element; ``set-dimension-size`` passes its
operand through (and every element reads the scalar size). ``dynamic-reshape`` is the
reshape of the bounds when only the most major dimension of either shape is dynamic: the
row-major position of an element then does not depend on the run-time sizes. Otherwise the
maps are the labelled over-approximation (every element), since the position depends on
run-time sizes. Every output element reads every size operand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sympy import Integer

from symidx.core.expr import Expr, FloorDiv, Mod, dim, sym
from symidx.core.indexing_map import IndexingMap
from symidx.errors import HloShapeError, MapError, UnsupportedOpError
from symidx.hlo import HloInstruction, Shape
from symidx.hlo.facts import operand_dims, output_dims, output_shape
from symidx.ops._common import attribute, require
from symidx.ops.basic import every_element, from_scalar, identity, to_scalar
from symidx.ops.registry import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, opacity, rule

# --- broadcast --------------------------------------------------------------------------------


def broadcast_operand_map(out: Sequence[int], dimensions: Sequence[int]) -> IndexingMap:
    """Output index -> operand index: operand dim ``i`` is output dim ``dimensions[i]``."""
    return IndexingMap.create(out, [dim(j) for j in dimensions])


def broadcast_output_map(out: Sequence[int], operand: Sequence[int],
                         dimensions: Sequence[int]) -> IndexingMap:
    """Operand index -> output index: the added output dims become range variables."""
    results: list[Expr] = []
    ranges: list[tuple[int, int]] = []
    position = {j: i for i, j in enumerate(dimensions)}
    for j, size in enumerate(out):
        if j in position:
            results.append(dim(position[j]))
        else:
            ranges.append((0, size - 1))
            results.append(sym(len(ranges) - 1))
    return IndexingMap.create(operand, results, ranges)


def _broadcast_dimensions(instr: HloInstruction) -> tuple[int, ...]:
    dimensions: tuple[int, ...] = attribute(instr.dimensions, instr,
                                            "dimensions")
    out, operand = output_dims(instr), operand_dims(instr, 0)
    require(len(dimensions) == len(operand)
            and all(0 <= j < len(out) and out[j] == n
                    for j, n in zip(dimensions, operand, strict=True)),
            instr, f"dimensions={list(dimensions)} do not fit {list(operand)} -> {list(out)}")
    return dimensions


@rule(OUTPUT_TO_INPUT, "broadcast")
def _broadcast_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    return [[broadcast_operand_map(output_dims(instr), _broadcast_dimensions(instr))]]


@rule(INPUT_TO_OUTPUT, "broadcast")
def _broadcast_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    return [[broadcast_output_map(output_dims(instr), operand_dims(instr, 0),
                                  _broadcast_dimensions(instr))]]


# --- transpose ------------------------------------------------------------------------------


def transpose_operand_map(out: Sequence[int], permutation: Sequence[int]) -> IndexingMap:
    """Output index -> operand index: output dim ``i`` is operand dim ``permutation[i]``."""
    inverse = [0] * len(permutation)
    for i, p in enumerate(permutation):
        inverse[p] = i
    return IndexingMap.create(out, [dim(i) for i in inverse])


def transpose_output_map(operand: Sequence[int], permutation: Sequence[int]) -> IndexingMap:
    """Operand index -> output index."""
    return IndexingMap.create(operand, [dim(p) for p in permutation])


def _permutation(instr: HloInstruction) -> tuple[int, ...]:
    perm: tuple[int, ...] = attribute(instr.dimensions, instr,
                                      "dimensions")
    out, operand = output_dims(instr), operand_dims(instr, 0)
    require(sorted(perm) == list(range(len(operand))) and len(out) == len(operand)
            and all(out[i] == operand[p] for i, p in enumerate(perm)),
            instr, f"dimensions={list(perm)} do not fit {list(operand)} -> {list(out)}")
    return perm


@rule(OUTPUT_TO_INPUT, "transpose")
def _transpose_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    return [[transpose_operand_map(output_dims(instr), _permutation(instr))]]


@rule(INPUT_TO_OUTPUT, "transpose")
def _transpose_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    return [[transpose_output_map(operand_dims(instr, 0), _permutation(instr))]]


# --- reverse --------------------------------------------------------------------------------


def reverse_map(dims: Sequence[int], reversed_dims: Sequence[int]) -> IndexingMap:
    """``size - 1 - d`` on the reversed dims (its own inverse)."""
    flipped = set(reversed_dims)
    return IndexingMap.create(dims, [Integer(n - 1) - dim(i) if i in flipped else dim(i)
                                     for i, n in enumerate(dims)])


def _reverse(instr: HloInstruction) -> list[list[IndexingMap]]:
    dims = output_dims(instr)
    reversed_dims: tuple[int, ...] = attribute(instr.dimensions, instr,
                                               "dimensions")
    require(operand_dims(instr, 0) == dims and all(0 <= i < len(dims) for i in reversed_dims),
            instr, "operand and output shapes differ or dimensions= is out of range")
    return [[reverse_map(dims, reversed_dims)]]


@rule(OUTPUT_TO_INPUT, "reverse")
def _reverse_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    return _reverse(instr)


@rule(INPUT_TO_OUTPUT, "reverse")
def _reverse_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    return _reverse(instr)


# --- reshape --------------------------------------------------------------------------------


def reshape_groups(src: Sequence[int], dst: Sequence[int]
                   ) -> list[tuple[list[int], list[int]]]:
    """The smallest runs of consecutive dims of ``src`` and ``dst`` with equal element
    counts, as (src dims, dst dims) index lists. A size-1 dim outside a group is a group of
    its own with nothing on the other side, unless both shapes have one there (then they
    pair up)."""
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(src) or j < len(dst):
        src_one = i < len(src) and src[i] == 1
        dst_one = j < len(dst) and dst[j] == 1
        if src_one and dst_one:
            groups.append(([i], [j]))
            i, j = i + 1, j + 1
        elif src_one or j == len(dst):
            groups.append(([i], []))
            i += 1
        elif dst_one or i == len(src):
            groups.append(([], [j]))
            j += 1
        else:
            gi, gj = [i], [j]
            ps, pd = src[i], dst[j]
            i, j = i + 1, j + 1
            while ps != pd:
                if ps < pd:
                    gi.append(i)
                    ps *= src[i]
                    i += 1
                else:
                    gj.append(j)
                    pd *= dst[j]
                    j += 1
            groups.append((gi, gj))
    return groups


def reshape_results(src: Sequence[int], dst: Sequence[int],
                    dst_vars: Sequence[Expr] | None = None) -> list[Expr]:
    """For each dim of ``src``, its index as an expression of the ``dst`` index
    (``dst_vars``, default ``d0, d1, ...``), when ``dst`` is a reshape of ``src``."""
    if math.prod(src) != math.prod(dst):
        raise HloShapeError(f"cannot reshape {list(src)} into {list(dst)}: element counts "
                            f"differ")
    variables = list(dst_vars) if dst_vars is not None else [dim(j) for j in range(len(dst))]
    if math.prod(src) == 0:  # no elements: the map is known empty anyway
        return [Integer(0)] * len(src)
    results: list[Expr] = [Integer(0)] * len(src)
    for gi, gj in reshape_groups(src, dst):
        if not gi:
            continue
        linear: Expr = Integer(0)
        for j in gj:
            linear = linear * dst[j] + variables[j]
        stride = math.prod([src[i] for i in gi])
        for position, i in enumerate(gi):
            stride //= src[i]
            part = FloorDiv(linear, stride) if stride > 1 else linear
            results[i] = Mod(part, src[i]) if position > 0 else part
    return results


def reshape_map(src: Sequence[int], dst: Sequence[int]) -> IndexingMap:
    """Index of ``dst`` -> index of ``src`` for a reshape between them (either direction)."""
    return IndexingMap.create(dst, reshape_results(src, dst))


@rule(OUTPUT_TO_INPUT, "reshape")
def _reshape_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    return [[reshape_map(operand_dims(instr, 0), output_dims(instr))]]


@rule(INPUT_TO_OUTPUT, "reshape")
def _reshape_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    return [[reshape_map(output_dims(instr), operand_dims(instr, 0))]]


# --- bitcast --------------------------------------------------------------------------------


def bitcast_map(src: Shape, dst: Shape) -> IndexingMap:
    """Logical index of ``dst`` -> logical index of ``src`` when ``dst`` is a bitcast of
    ``src`` (the same buffer); :class:`MapError` when the element or buffer sizes differ.
    See :func:`symidx.lowering.layouts.shapes.reinterpret_map`."""
    from symidx.lowering.layouts.shapes import reinterpret_map  # layouts load for bitcasts only

    return reinterpret_map(src, dst)


def _bitcast(instr: HloInstruction, forward: bool) -> IndexingMap:
    operand, out = instr.operands[0].shape, output_shape(instr)
    if not isinstance(operand, Shape):
        raise UnsupportedOpError(instr.opcode, "bitcast of a tuple")
    try:
        return bitcast_map(out, operand) if forward else bitcast_map(operand, out)
    except MapError as e:
        raise UnsupportedOpError(instr.opcode, str(e)) from None


@rule(OUTPUT_TO_INPUT, "bitcast")
def _bitcast_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    return [[_bitcast(instr, forward=False)]]


@rule(INPUT_TO_OUTPUT, "bitcast")
def _bitcast_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    return [[_bitcast(instr, forward=True)]]


# --- dynamic shapes: get-dimension-size, set-dimension-size, dynamic-reshape ---------------


@rule(OUTPUT_TO_INPUT, "get-dimension-size")
def _get_dimension_size_out(instr: HloInstruction, output_index: int
                            ) -> list[list[IndexingMap]]:
    return [[]]  # the size of a dimension, no element


@rule(INPUT_TO_OUTPUT, "get-dimension-size")
def _get_dimension_size_in(instr: HloInstruction, operand_index: int
                           ) -> list[list[IndexingMap]]:
    return [[]]


def _set_dimension_size_dims(instr: HloInstruction) -> tuple[int, ...]:
    out = output_dims(instr)
    require(len(instr.operands) == 2 and operand_dims(instr, 0) == out
            and not operand_dims(instr, 1), instr,
            "expected an operand of the output's bounds and a scalar size")
    return out


@rule(OUTPUT_TO_INPUT, "set-dimension-size")
def _set_dimension_size_out(instr: HloInstruction, output_index: int
                            ) -> list[list[IndexingMap]]:
    out = _set_dimension_size_dims(instr)
    return [[identity(out)], [to_scalar(out)]]


@rule(INPUT_TO_OUTPUT, "set-dimension-size")
def _set_dimension_size_in(instr: HloInstruction, operand_index: int
                           ) -> list[list[IndexingMap]]:
    out = _set_dimension_size_dims(instr)
    return [[identity(out) if operand_index == 0 else from_scalar(out)]]


def _fixed_strides(shape: Shape) -> bool:
    """Is the row-major position of every element independent of the run-time sizes?
    True when no dimension but the most major one is dynamic."""
    return not any(shape.dynamic[1:])


def _dynamic_reshape_is_static(instr: HloInstruction) -> bool:
    operand, out = instr.operands[0].shape, output_shape(instr)
    return (isinstance(operand, Shape) and _fixed_strides(operand) and _fixed_strides(out)
            and math.prod(operand.dims) == math.prod(out.dims))


def _dynamic_reshape_sizes(instr: HloInstruction) -> None:
    out = output_dims(instr)
    require(len(instr.operands) == len(out) + 1
            and all(not operand_dims(instr, k) for k in range(1, len(instr.operands))),
            instr, "expected an operand and one scalar size per output dimension")


@rule(OUTPUT_TO_INPUT, "dynamic-reshape")
def _dynamic_reshape_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    _dynamic_reshape_sizes(instr)
    out = output_dims(instr)
    if _dynamic_reshape_is_static(instr):
        data = reshape_map(operand_dims(instr, 0), out)
    else:
        data = every_element(out, operand_dims(instr, 0))
    return [[data]] + [[to_scalar(out)] for _ in instr.operands[1:]]


@rule(INPUT_TO_OUTPUT, "dynamic-reshape")
def _dynamic_reshape_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    _dynamic_reshape_sizes(instr)
    out = output_dims(instr)
    if operand_index > 0:
        return [[from_scalar(out)]]
    if _dynamic_reshape_is_static(instr):
        return [[reshape_map(out, operand_dims(instr, 0))]]
    return [[every_element(operand_dims(instr, 0), out)]]


@opacity("dynamic-reshape")
def _dynamic_reshape_opacity(instr: HloInstruction) -> str | None:
    if _dynamic_reshape_is_static(instr):
        return None
    return "dynamic-reshape: where an element goes depends on run-time sizes"
