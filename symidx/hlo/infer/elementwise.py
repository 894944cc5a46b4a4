"""Shape rules of elementwise ops (unary, binary, select, clamp, conversions) and of
the ops whose shape must be written (iota, reshape, convert)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from symidx.hlo.infer.common import (
    _COMPLEX,
    _COMPLEX_OF,
    _COMPONENT,
    _FLOATING,
    _INTEGRAL,
    _SIGNED_INTEGRAL,
    _array,
    _fail,
    _infers,
    _operand_shape,
    _plain,
    _strip,
    _wider,
    _with_type,
    compatible,
    operand_array,
    same_dims,
    same_element_type,
    shape_text,
)
from symidx.hlo.shape import ELEMENT_BIT_WIDTHS, Shape, ShapeLike

if TYPE_CHECKING:
    from symidx.hlo.ir import HloInstruction


# --------------------------------------------------------------------------- elementwise

_FLOAT_OR_COMPLEX_UNARY = frozenset({
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "cosh", "cosine", "erf",
    "exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "rsqrt", "sine",
    "sinh", "sqrt", "tan", "tanh",
})
_FLOAT_UNARY = frozenset({"ceil", "floor", "round-nearest-afz", "round-nearest-even",
                          "reduce-precision"})
_INTEGRAL_UNARY = frozenset({"count-leading-zeros", "popcnt"})


@_infers(*_FLOAT_OR_COMPLEX_UNARY, *_FLOAT_UNARY, *_INTEGRAL_UNARY, "abs", "negate", "not",
         "sign", "real", "imag", "is-finite")
def _unary(instr: HloInstruction) -> ShapeLike:
    shape = _strip(operand_array(instr, 0))
    t, op = shape.element_type, instr.opcode
    wanted = None
    if op in _FLOAT_OR_COMPLEX_UNARY and t not in _FLOATING | _COMPLEX:
        wanted = "a floating-point or complex"
    elif op in _FLOAT_UNARY and t not in _FLOATING:
        wanted = "a floating-point"
    elif op in _INTEGRAL_UNARY and t not in _INTEGRAL:
        wanted = "an integral"
    elif op == "not" and t not in _INTEGRAL | {"pred"}:
        wanted = "a pred or integral"
    elif op in ("abs", "sign") and t not in _SIGNED_INTEGRAL | _FLOATING | _COMPLEX:
        wanted = "a signed or complex"
    elif op == "negate" and t not in _INTEGRAL | _FLOATING | _COMPLEX:
        wanted = "an integral, floating-point or complex"
    elif op in ("real", "imag") and t not in _FLOATING | _COMPLEX:
        wanted = "a floating-point or complex"
    elif op == "is-finite" and t not in _FLOATING:
        wanted = "a floating-point"
    if wanted is not None:
        raise _fail(instr, f"needs {wanted} operand, but the operand is {shape_text(shape)}")
    if op in ("abs", "real", "imag") and t in _COMPLEX:
        return _with_type(shape, _COMPONENT[t])
    if op == "is-finite":
        return _with_type(shape, "pred")
    return shape


@_infers("copy", "domain", "opt-barrier")
def _same_as_operand(instr: HloInstruction) -> ShapeLike:
    return _plain(_operand_shape(instr, 0))


_ARITHMETIC_BINARY = frozenset({"subtract", "divide", "remainder", "power", "atan2",
                                "shift-left", "shift-right-arithmetic", "shift-right-logical"})
_LOGICAL_BINARY = frozenset({"and", "or", "xor"})


@_infers("add", "multiply", "maximum", "minimum", "compare", "complex",
         *_ARITHMETIC_BINARY, *_LOGICAL_BINARY)
def _binary(instr: HloInstruction) -> ShapeLike:
    lhs, rhs = operand_array(instr, 0), operand_array(instr, 1)
    op = instr.opcode
    if not same_element_type(lhs.element_type, rhs.element_type):
        raise _fail(instr, f"operands must have the same element type, but are "
                           f"{shape_text(lhs)} and {shape_text(rhs)}")
    if not same_dims(lhs.dims, rhs.dims):
        raise _fail(instr, f"operands must have the same dimensions (HLO does not broadcast "
                           f"implicitly), but are {shape_text(lhs)} and {shape_text(rhs)}")
    t = lhs.element_type
    if op in _ARITHMETIC_BINARY and t == "pred":
        raise _fail(instr, f"needs arithmetic operands, but they are {shape_text(lhs)}")
    if op in _LOGICAL_BINARY and t not in _INTEGRAL | {"pred"}:
        raise _fail(instr, f"needs pred or integral operands, but they are {shape_text(lhs)}")
    if op == "complex" and (t not in ("f32", "f64") or rhs.element_type != t):
        raise _fail(instr, f"needs two f32 or two f64 operands, but they are "
                           f"{shape_text(lhs)} and {shape_text(rhs)}")
    element_type = "pred" if op == "compare" else _COMPLEX_OF.get(t, t) if op == "complex" \
        else _wider(t, rhs.element_type)
    if lhs.dynamic == rhs.dynamic and lhs.dims == rhs.dims:
        return _with_type(lhs, element_type)
    dynamic = tuple(a or b for a, b in zip(lhs.dynamic, rhs.dynamic, strict=True))
    return _array(element_type, lhs.dims, dynamic)


@_infers("select")
def _select(instr: HloInstruction) -> ShapeLike:
    pred = operand_array(instr, 0, "the predicate")
    on_true, on_false = operand_array(instr, 1), operand_array(instr, 2)
    if not compatible(on_true, on_false):
        raise _fail(instr, f"on_true and on_false must have the same shape, but are "
                           f"{shape_text(on_true)} and {shape_text(on_false)}")
    if pred.element_type != "pred":
        raise _fail(instr, f"the predicate must have element type pred, but is "
                           f"{shape_text(pred)}")
    if pred.rank != 0 and not same_dims(pred.dims, on_true.dims):
        raise _fail(instr, f"the predicate {shape_text(pred)} must be a scalar or have the "
                           f"dimensions of {shape_text(on_true)}")
    return _array(_wider(on_true.element_type, on_false.element_type), on_true.dims,
                  on_true.dynamic)


@_infers("clamp")
def _clamp(instr: HloInstruction) -> ShapeLike:
    low, operand, high = (operand_array(instr, k) for k in range(3))
    for bound, role in ((low, "min"), (high, "max")):
        if not same_element_type(bound.element_type, operand.element_type) or not (
                bound.rank == 0 or same_dims(bound.dims, operand.dims)):
            raise _fail(instr, f"{role} {shape_text(bound)} must be a scalar or have the "
                               f"shape of the operand {shape_text(operand)}")
    return _plain(operand)


# --------------------------------------------------------------------------- conversions

def bitcast_convert_shape(operand: Shape, element_type: str) -> Shape | str:
    """The shape ``bitcast-convert`` gives ``operand`` converted to ``element_type``, or a
    message saying why it cannot: a narrower type appends a minor dimension of the width
    ratio, a wider one consumes a minor dimension of that size."""
    old, new = operand.element_type, element_type
    if (old in _COMPLEX) != (new in _COMPLEX):
        return f"cannot bitcast between complex and real types ({old} to {new})"
    old_bits, new_bits = ELEMENT_BIT_WIDTHS[old], ELEMENT_BIT_WIDTHS[new]
    if min(old_bits, new_bits) == 0 or max(old_bits, new_bits) % min(old_bits, new_bits):
        return f"cannot bitcast {old} to {new}: the bit widths do not divide"
    if old_bits > new_bits:
        return _array(new, (*operand.dims, old_bits // new_bits), (*operand.dynamic, False))
    if old_bits < new_bits:
        ratio = new_bits // old_bits
        if operand.rank < 1 or operand.dims[-1] != ratio:
            return (f"bitcasting {shape_text(operand)} to the {ratio}x wider {new} needs a "
                    f"last dimension of size {ratio}")
        return _array(new, operand.dims[:-1], operand.dynamic[:-1])
    return _with_type(operand, new)
@_infers("iota")
def _iota(instr: HloInstruction) -> ShapeLike:
    raise _fail(instr, "the output shape of iota cannot be inferred; write it")


@_infers("reshape")
def _reshape(instr: HloInstruction) -> ShapeLike:
    raise _fail(instr, "the output shape of reshape cannot be inferred (only its element "
                       "count is known); write it")


@_infers("convert", "bitcast-convert", "stochastic-convert")
def _convert(instr: HloInstruction) -> ShapeLike:
    raise _fail(instr, f"the output element type of {instr.opcode} cannot be inferred; "
                       f"write the shape")


