"""Elementwise ops: every output element reads the element at the same index of each operand.

Scalar (rank-0) operands of an op with a non-scalar output — the predicate of ``select``,
the bounds of ``clamp`` — are read by every output element: ``(d0, ..) -> ()``, and in the
other direction ``()[s0, ..] -> (s0, ..)``.

``bitcast-convert`` between element types of different bit widths adds or removes a minor
dimension: from 32 to 8 bits, ``f32[4]`` becomes ``u8[4,4]`` and output ``(d0, d1)`` reads
input ``(d0)``; from 8 to 32 bits, output ``(d0)`` reads input ``(d0, s0)``, ``s0`` over the
four bytes.
"""

from __future__ import annotations

from symidx.core.expr import dim, sym
from symidx.core.indexing_map import IndexingMap
from symidx.errors import UnsupportedOpError
from symidx.hlo import HloInstruction, Shape
from symidx.hlo.facts import operand_dims, output_dims, output_shape
from symidx.ops._common import require
from symidx.ops.basic import from_scalar, identity, to_scalar
from symidx.ops.registry import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, rule

#: Opcodes XLA treats as elementwise (``HloInstruction::IsOpElementwise``), spelled as in
#: ``hlo_opcode.h``, plus ``map`` (a computation applied elementwise).
ELEMENTWISE_OPCODES = (
    # unary
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "ceil", "convert",
    "copy", "cosh", "cosine", "count-leading-zeros", "erf", "exponential",
    "exponential-minus-one", "floor", "imag", "is-finite", "log", "log-plus-one", "logistic",
    "negate", "not", "popcnt", "real", "reduce-precision", "round-nearest-afz",
    "round-nearest-even", "rsqrt", "sign", "sine", "sinh", "sqrt", "tan", "tanh",
    # binary
    "add", "and", "atan2", "complex", "compare", "divide", "maximum", "minimum", "mulhi",
    "multiply", "or", "power", "remainder", "shift-left", "shift-right-arithmetic",
    "shift-right-logical", "stochastic-convert", "subtract", "xor",
    # ternary
    "clamp", "select",
    # a computation applied elementwise
    "map",
)


def elementwise_operand_map(out: tuple[int, ...], operand: tuple[int, ...]) -> IndexingMap:
    """Output index -> operand index: identity, or ``(d..) -> ()`` for a scalar operand."""
    if not operand and out:
        return to_scalar(out)
    return identity(out)


def elementwise_output_map(out: tuple[int, ...], operand: tuple[int, ...]) -> IndexingMap:
    """Operand index -> output index: identity, or every output index for a scalar operand."""
    if not operand and out:
        return from_scalar(out)
    return identity(out)


def _check_operand(instr: HloInstruction, k: int) -> tuple[int, ...]:
    dims = operand_dims(instr, k)
    require(dims == output_dims(instr) or not dims, instr,
            f"operand {k} has dims {list(dims)}, the output {list(output_dims(instr))}")
    return dims


@rule(OUTPUT_TO_INPUT, *ELEMENTWISE_OPCODES)
def _elementwise_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    out = output_dims(instr)
    return [[elementwise_operand_map(out, _check_operand(instr, k))]
            for k in range(len(instr.operands))]


@rule(INPUT_TO_OUTPUT, *ELEMENTWISE_OPCODES)
def _elementwise_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    return [[elementwise_output_map(output_dims(instr), _check_operand(instr, operand_index))]]


# --- bitcast-convert -----------------------------------------------------------------------
def bitcast_convert_map(src: tuple[int, ...], src_bits: int, dst: tuple[int, ...],
                        dst_bits: int) -> IndexingMap | None:
    """Index of ``dst`` -> index of ``src`` for a bitcast-convert from ``src`` to ``dst``
    (either direction of the op); None when the shapes do not fit the bit widths."""
    if src_bits == dst_bits:
        return identity(dst) if src == dst else None
    if src_bits > dst_bits:  # dst has an extra minor dim of src_bits / dst_bits
        if src_bits % dst_bits or dst != src + (src_bits // dst_bits,):
            return None
        return IndexingMap.create(dst, [dim(i) for i in range(len(src))])
    if dst_bits % src_bits or src != dst + (dst_bits // src_bits,):
        return None
    return IndexingMap.create(dst, [dim(i) for i in range(len(dst))] + [sym(0)],
                              [(0, dst_bits // src_bits - 1)])


def _bitcast_convert(instr: HloInstruction, forward: bool) -> IndexingMap:
    operand, out = instr.operands[0].shape, output_shape(instr)
    if not isinstance(operand, Shape):
        raise UnsupportedOpError(instr.opcode, "bitcast-convert of a tuple")
    if forward:  # operand index -> output index
        m = bitcast_convert_map(out.dims, out.bit_width, operand.dims, operand.bit_width)
    else:
        m = bitcast_convert_map(operand.dims, operand.bit_width, out.dims, out.bit_width)
    if m is None:
        raise UnsupportedOpError(instr.opcode, f"{operand} to {out}")
    return m


@rule(OUTPUT_TO_INPUT, "bitcast-convert")
def _bitcast_convert_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    return [[_bitcast_convert(instr, forward=False)]]


@rule(INPUT_TO_OUTPUT, "bitcast-convert")
def _bitcast_convert_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    return [[_bitcast_convert(instr, forward=True)]]
