"""Shape inference for HLO instructions: the output shape XLA gives an instruction from its
operands' shapes, its attributes and the computations it calls.

>>> from symidx.hlo import parse_hlo
>>> module = parse_hlo('''
... ENTRY e {
...   p = f32[2,3] parameter(0)
...   ROOT t = f32[3,2] transpose(p), dimensions={1,0}
... }''')
>>> from symidx.hlo.infer import infer_shape
>>> str(infer_shape(module.entry.root))
'f32[3,2]'

The rules restate the facts of XLA's shape inference (``xla/service/shape_inference.cc``) and
of its HLO verifier (``xla/service/hlo_verifier.cc``) for HLO, where operands are never
broadcast implicitly. Where XLA's versions differ, the rule takes the one that accepts more
(clamp and select take scalar bounds and predicates; ``cbrt`` takes complex numbers).

Some outputs are not determined by the operands: ``iota``, ``reshape``, ``convert``,
``bitcast-convert``, ``rng``, ``custom-call``, ``parameter``, ``constant``, ``infeed`` and
unknown opcodes, a ``broadcast`` of a non-scalar, an ``all-gather`` or ``reduce-scatter``
without ``replica_groups``. For those :func:`infer_shape` raises :class:`InferenceError`
saying that the shape must be written. ``dot`` and ``convolution`` get the element type XLA
infers without a ``preferred_element_type`` (the wider of the operands' types).

The parser calls :func:`infer_shape` for instructions written without a shape, and
:mod:`symidx.hlo.validate` compares it with the shapes that are written.

Every error is an :class:`InferenceError` (an :class:`~symidx.errors.HloShapeError`) whose
message names the opcode and the instruction (``transpose %t: ...``), says what is wrong and
gives the expected and actual shapes or values; :attr:`InferenceError.attribute` names the
attribute at fault, if one is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from symidx._arith import ceil_div
from symidx.errors import HloShapeError
from symidx.hlo.shape import ELEMENT_BIT_WIDTHS, UNBOUNDED_SIZE, Shape, ShapeLike, TupleShape

if TYPE_CHECKING:
    from symidx.hlo.ir import HloComputation, HloInstruction

__all__ = [
    "ARITY",
    "InferenceError",
    "all_gather_shape",
    "bitcast_convert_shape",
    "braced",
    "check_arity",
    "compatible",
    "has_rule",
    "infer_shape",
    "instruction_error",
    "operand_array",
    "reduce_scatter_shape",
    "same_dims",
    "same_element_type",
    "shape_text",
    "shard_count",
    "window_output_size",
]


class InferenceError(HloShapeError):
    """An instruction whose operands or attributes do not fit its opcode, or whose shape
    cannot be inferred. ``attribute`` names the attribute at fault (or is None)."""

    def __init__(self, message: str, attribute: str | None = None):
        super().__init__(message)
        self.attribute = attribute


# --------------------------------------------------------------------------- element types

_FLOATING = frozenset(t for t in ELEMENT_BIT_WIDTHS if t.startswith(("f", "bf")))
_COMPLEX = frozenset({"c64", "c128"})
_SIGNED_INTEGRAL = frozenset(t for t in ELEMENT_BIT_WIDTHS if re.fullmatch(r"s\d+", t))
_INTEGRAL = _SIGNED_INTEGRAL | frozenset(t for t in ELEMENT_BIT_WIDTHS if re.fullmatch(r"u\d+", t))
_COMPONENT = {"c64": "f32", "c128": "f64"}
_COMPLEX_OF = {"f32": "c64", "f64": "c128"}


def same_element_type(a: str, b: str) -> bool:
    """Equal element types, or two floating-point types: XLA lets floating-point precision
    differ where it allows mixed precision (``SameElementTypeIgnoringFpPrecision``)."""
    return a == b or (a in _FLOATING and b in _FLOATING)


def _wider(a: str, b: str) -> str:
    """The higher-precision of two element types that agree up to floating-point precision
    (the first one when they are equally wide)."""
    return b if ELEMENT_BIT_WIDTHS[b] > ELEMENT_BIT_WIDTHS[a] else a


# --------------------------------------------------------------------------- shapes

def shape_text(shape: ShapeLike | None) -> str:
    """``shape`` as HLO text without its layout: ``f32[2,<=3]``, ``(f32[], s32[4])``."""
    if shape is None:
        return "(no shape)"
    if isinstance(shape, TupleShape):
        return "(" + ", ".join(shape_text(e) for e in shape.elements) + ")"
    dims = ",".join(("?" if size == UNBOUNDED_SIZE else f"<={size}") if dynamic else str(size)
                    for size, dynamic in zip(shape.dims, shape.dynamic, strict=True))
    return f"{shape.element_type}[{dims}]"


def same_dims(a: Sequence[int], b: Sequence[int]) -> bool:
    """Same rank and sizes; an unbounded dimension (``?``) matches any size."""
    if a == b:
        return True
    return len(a) == len(b) and all(x == y or UNBOUNDED_SIZE in (x, y)
                                    for x, y in zip(a, b, strict=True))


def _array(element_type: str, dims: Sequence[int], dynamic: Sequence[bool] = ()) -> Shape:
    return Shape(element_type, tuple(dims), tuple(dynamic) or (False,) * len(dims))


# The two helpers below see the same few shapes again and again (a module shares its shape
# objects): caching them keeps validation of a large module cheap.

@lru_cache(maxsize=4096)
def _with_type(shape: Shape, element_type: str) -> Shape:
    """``shape`` with another element type and no layout."""
    return Shape(element_type, shape.dims, shape.dynamic)


@lru_cache(maxsize=4096)
def _strip(shape: Shape) -> Shape:
    """An array shape without its layout (inferred shapes carry none)."""
    return shape if shape.layout is None else Shape(shape.element_type, shape.dims, shape.dynamic)


def _plain(shape: ShapeLike) -> ShapeLike:
    """``shape`` without layouts, in every tuple element too."""
    if isinstance(shape, TupleShape):
        return TupleShape(tuple(_plain(e) for e in shape.elements))
    return _strip(shape)


def _is_pred_scalar(shape: ShapeLike) -> bool:
    return isinstance(shape, Shape) and shape.element_type == "pred" and shape.rank == 0


def _tuple_or_single(shapes: Sequence[ShapeLike]) -> ShapeLike:
    """One shape as itself, several as a tuple (how variadic ops shape their output)."""
    return shapes[0] if len(shapes) == 1 else TupleShape(tuple(shapes))


def _scalar(element_type: str) -> Shape:
    return Shape(element_type)


_TOKEN = Shape("token")


# --------------------------------------------------------------------------- arity

#: Operand counts of the opcodes with a fixed arity, as XLA's opcode table gives them
#: (``xla/hlo/ir/hlo_opcode.h``); variadic opcodes are absent. A sparse ``dot`` (with
#: ``sparsity=``) takes its metadata as extra operands and is exempt.
ARITY: dict[str, int] = {
    **dict.fromkeys((
        "abs", "acos", "acosh", "all-gather-done", "all-reduce-done", "asin", "asinh",
        "async-done", "atan", "atanh", "bitcast", "bitcast-convert", "broadcast", "cbrt",
        "ceil", "cholesky", "collective-permute-done", "convert", "copy", "copy-done",
        "copy-start", "cosh", "cosine", "count-leading-zeros", "domain", "erf",
        "exponential", "exponential-minus-one", "fft", "floor", "get-dimension-size",
        "get-tuple-element", "imag", "infeed", "is-finite", "log", "log-plus-one",
        "logistic", "negate", "not", "opt-barrier", "popcnt", "real", "recv", "recv-done",
        "reduce-precision", "reshape", "reverse", "rng-bit-generator", "round-nearest-afz",
        "round-nearest-even", "rsqrt", "send-done", "sign", "sine", "sinh", "slice", "sqrt",
        "tan", "tanh", "topk", "transpose", "while",
    ), 1),
    **dict.fromkeys((
        "add", "add-dependency", "and", "atan2", "compare", "complex", "divide", "gather",
        "maximum", "minimum", "multiply", "or", "outfeed", "pad", "power", "remainder", "send",
        "set-dimension-size", "shift-left", "shift-right-arithmetic", "shift-right-logical",
        "stochastic-convert", "subtract", "triangular-solve", "xor",
    ), 2),
    **dict.fromkeys(("clamp", "select", "select-and-scatter", "ragged-dot"), 3),
    "dot": 2,
    "batch-norm-training": 3,
    "batch-norm-inference": 5,
    "batch-norm-grad": 5,
    "ragged-all-to-all": 6,
    **dict.fromkeys(("iota", "partition-id", "replica-id", "rng-get-and-update-state"), 0),
}


# --------------------------------------------------------------------------- helpers

def instruction_error(instr: HloInstruction, message: str,
                      attribute: str | None = None) -> InferenceError:
    """An :class:`InferenceError` whose message names ``instr``: ``add %x: <message>``."""
    return InferenceError(f"{instr.opcode} %{instr.name}: {message}", attribute)


_fail = instruction_error


def _operand_shape(instr: HloInstruction, k: int) -> ShapeLike:
    if k >= len(instr.operands):
        raise _fail(instr, f"needs operand {k}, but has {_count(len(instr.operands), 'operand')}")
    shape = instr.operands[k].shape
    if shape is None:
        raise _fail(instr, f"operand %{instr.operands[k].name} has no shape")
    return shape


def operand_array(instr: HloInstruction, k: int, role: str = "") -> Shape:
    """The shape of operand ``k``, which must be an array (not a tuple or token); ``role``
    names the operand in the error."""
    shape = _operand_shape(instr, k)
    if not isinstance(shape, Shape) or shape.element_type == "token":
        what = role or f"operand {k}"
        raise _fail(instr, f"{what} (%{instr.operands[k].name}) must be an array, "
                           f"but is {shape_text(shape)}")
    return shape


def _arrays(instr: HloInstruction) -> list[Shape]:
    return [operand_array(instr, k) for k in range(len(instr.operands))]


def _list(instr: HloInstruction, key: str) -> tuple[int, ...]:
    """A required integer-list attribute."""
    value = instr.attr_int_list(key)
    if value is None:
        raise _fail(instr, f"is missing attribute {key}=")
    return value


def _int(instr: HloInstruction, key: str, default: int | None = None) -> int:
    value = instr.attr_int(key, default)
    if value is None:
        raise _fail(instr, f"is missing attribute {key}=")
    return value


def _single_dimension(instr: HloInstruction) -> int:
    """The one entry of ``dimensions={d}`` (concatenate, sort, collectives)."""
    dims = _list(instr, "dimensions")
    if len(dims) != 1:
        raise _fail(instr, f"dimensions= must hold one dimension, but holds {len(dims)}",
                    "dimensions")
    return dims[0]


def _in_range(instr: HloInstruction, key: str, values: Sequence[int], rank: int,
              of: Shape | str) -> None:
    """Every dimension in ``key=`` is below ``rank``, the rank of ``of`` (a shape, or words
    naming one)."""
    for value in values:
        if not 0 <= value < rank:
            what = shape_text(of) if isinstance(of, Shape) else of
            raise _fail(instr, f"{key}={braced(values)} names dimension {value}, but {what} "
                               f"has rank {rank}", key)


def _unique(instr: HloInstruction, key: str, values: Sequence[int]) -> None:
    if len(set(values)) != len(values):
        raise _fail(instr, f"{key}={braced(values)} repeats a dimension", key)


def _sorted(instr: HloInstruction, key: str, values: Sequence[int]) -> None:
    if list(values) != sorted(values):
        raise _fail(instr, f"{key}={braced(values)} must be sorted", key)


def braced(values: Sequence[int]) -> str:
    """``{1,0}``: integers as HLO writes a list attribute."""
    return "{" + ",".join(str(v) for v in values) + "}"


def _count(n: int, noun: str) -> str:
    """``1 operand``, ``2 operands``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _called(instr: HloInstruction, key: str) -> HloComputation:
    comps = instr.called_computations.get(key, ())
    if len(comps) != 1:
        raise _fail(instr, f"{key}= must name one computation, but names {len(comps)}", key)
    return comps[0]


def _root_shape(comp: HloComputation) -> ShapeLike:
    return comp.root.shape


def _param_shapes(comp: HloComputation) -> list[ShapeLike]:
    return [p.shape for p in comp.parameters]


def compatible(a: ShapeLike, b: ShapeLike, *, ignore_element_type: bool = False) -> bool:
    """Shapes equal up to layout, dynamic-dimension flags and floating-point precision (XLA's
    ``CompatibleIgnoringFpPrecision``); with ``ignore_element_type`` also up to element type."""
    if a is b:
        return True
    if isinstance(a, TupleShape) or isinstance(b, TupleShape):
        return (isinstance(a, TupleShape) and isinstance(b, TupleShape)
                and len(a.elements) == len(b.elements)
                and all(compatible(x, y, ignore_element_type=ignore_element_type)
                        for x, y in zip(a.elements, b.elements, strict=True)))
    return (same_dims(a.dims, b.dims)
            and (ignore_element_type or same_element_type(a.element_type, b.element_type)))


def _expect_scalar(instr: HloInstruction, k: int, role: str) -> Shape:
    shape = operand_array(instr, k, role)
    if shape.rank != 0:
        raise _fail(instr, f"{role} (%{instr.operands[k].name}) must be a scalar, but is "
                           f"{shape_text(shape)}")
    return shape


def _expect_token(instr: HloInstruction, k: int) -> None:
    shape = _operand_shape(instr, k)
    if not (isinstance(shape, Shape) and shape.element_type == "token"):
        raise _fail(instr, f"operand {k} (%{instr.operands[k].name}) must be token[], but is "
                           f"{shape_text(shape)}")


# --------------------------------------------------------------------------- registry

_Rule = Callable[["HloInstruction"], ShapeLike]
_RULES: dict[str, _Rule] = {}


def _infers(*opcodes: str) -> Callable[[_Rule], _Rule]:
    def register(fn: _Rule) -> _Rule:
        for opcode in opcodes:
            _RULES[opcode] = fn
        return fn
    return register


def has_rule(opcode: str) -> bool:
    """True if :func:`infer_shape` has a rule for ``opcode``."""
    return opcode in _RULES


def check_arity(instr: HloInstruction) -> None:
    """Raise :class:`InferenceError` if ``instr`` has the wrong number of operands for an
    opcode of fixed arity (:data:`ARITY`)."""
    expected = ARITY.get(instr.opcode)
    if expected is not None and len(instr.operands) != expected:
        if instr.opcode == "dot" and "sparsity" in instr.attributes:
            return
        raise _fail(instr, f"takes {_count(expected, 'operand')}, but has "
                           f"{len(instr.operands)}")


def infer_shape(instr: HloInstruction) -> ShapeLike:
    """The output shape XLA's shape inference gives ``instr`` (no layout).

    Raises :class:`InferenceError` (an :class:`~symidx.errors.HloShapeError`) when the operands
    or attributes do not fit the opcode, or when the shape cannot be inferred (see the module
    docstring)."""
    check_arity(instr)
    rule = _RULES.get(instr.opcode)
    if rule is None:
        raise _fail(instr, f"the output shape of {instr.opcode} cannot be inferred from its "
                           f"operands and attributes; write it")
    return rule(instr)


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


# --------------------------------------------------------------------------- dot, convolution

@_infers("dot")
def _dot(instr: HloInstruction) -> ShapeLike:
    if "sparsity" in instr.attributes:
        raise _fail(instr, "the shape of a sparse dot cannot be inferred; write it")
    lhs, rhs = operand_array(instr, 0, "lhs"), operand_array(instr, 1, "rhs")
    dn = instr.dot_dimension_numbers
    assert dn is not None
    for key, dims, shape in (("lhs_batch_dims", dn.lhs_batch_dims, lhs),
                             ("lhs_contracting_dims", dn.lhs_contracting_dims, lhs),
                             ("rhs_batch_dims", dn.rhs_batch_dims, rhs),
                             ("rhs_contracting_dims", dn.rhs_contracting_dims, rhs)):
        _in_range(instr, key, dims, shape.rank, shape)
    for key, dims in (("lhs", dn.lhs_batch_dims + dn.lhs_contracting_dims),
                      ("rhs", dn.rhs_batch_dims + dn.rhs_contracting_dims)):
        if len(set(dims)) != len(dims):
            raise _fail(instr, f"the {key} batch and contracting dimensions repeat a dimension")
    for kind, lhs_dims, rhs_dims in (("contracting", dn.lhs_contracting_dims,
                                      dn.rhs_contracting_dims),
                                     ("batch", dn.lhs_batch_dims, dn.rhs_batch_dims)):
        if len(lhs_dims) != len(rhs_dims):
            raise _fail(instr, f"lhs has {len(lhs_dims)} {kind} dimensions, rhs "
                               f"{len(rhs_dims)}", f"lhs_{kind}_dims")
        lhs_sizes = [lhs.dims[d] for d in lhs_dims]
        rhs_sizes = [rhs.dims[d] for d in rhs_dims]
        if not same_dims(lhs_sizes, rhs_sizes):
            raise _fail(instr, f"the {kind} dimensions of lhs {shape_text(lhs)} (sizes "
                               f"{lhs_sizes}) and rhs {shape_text(rhs)} (sizes {rhs_sizes}) "
                               f"differ", f"lhs_{kind}_dims")
    lhs_kept = [*dn.lhs_batch_dims, *(d for d in range(lhs.rank) if d not in
                                      dn.lhs_batch_dims + dn.lhs_contracting_dims)]
    rhs_kept = [d for d in range(rhs.rank) if d not in dn.rhs_batch_dims + dn.rhs_contracting_dims]
    sizes = [lhs.dims[d] for d in lhs_kept] + [rhs.dims[d] for d in rhs_kept]
    dynamic = [lhs.dynamic[d] for d in lhs_kept] + [rhs.dynamic[d] for d in rhs_kept]
    return _array(_wider(lhs.element_type, rhs.element_type), sizes, dynamic)


def _dilated(size: int, dilation: int) -> int:
    return 0 if size == 0 else (size - 1) * dilation + 1


def window_output_size(size: int, window: int, stride: int = 1, padding_low: int = 0,
                       padding_high: int = 0, base_dilation: int = 1,
                       window_dilation: int = 1) -> int:
    """How many positions a window of ``window`` elements (dilated by ``window_dilation``)
    takes with ``stride`` over a dimension of ``size`` elements dilated by ``base_dilation``
    and padded by ``padding_low``/``padding_high`` (XLA's ``StridedBound``). Raises
    ValueError if the padded dimension is negative."""
    bound = padding_low + _dilated(size, base_dilation) + padding_high
    if bound < 0:
        raise ValueError(f"the padded dimension has negative size {bound}")
    span = _dilated(window, window_dilation)
    return 0 if bound == 0 or span > bound else (bound - span) // stride + 1


def _window_shape(instr: HloInstruction, base: Sequence[int], element_type: str,
                  dynamic: Sequence[bool], of: Shape | str) -> Shape:
    """The shape a window (``window=``, or none) gives over dimensions ``base`` (those of
    ``of``, a shape or words naming one)."""
    window = instr.window or ()
    if len(window) != len(base):
        what = shape_text(of) if isinstance(of, Shape) else of
        raise _fail(instr, f"window= has {len(window)} dimensions, but {what} has "
                           f"{len(base)}", "window")
    sizes = []
    for d, (w, size) in enumerate(zip(window, base, strict=True)):
        if w.size <= 0 or w.stride <= 0 or w.base_dilation < 1 or w.window_dilation < 1:
            raise _fail(instr, f"window dimension {d} needs a positive size and stride and "
                               f"dilations of at least 1", "window")
        if size == UNBOUNDED_SIZE:
            sizes.append(UNBOUNDED_SIZE)
            continue
        try:
            sizes.append(window_output_size(size, w.size, w.stride, w.padding_low,
                                            w.padding_high, w.base_dilation, w.window_dilation))
        except ValueError as e:
            raise _fail(instr, f"window dimension {d}: {e}", "window") from None
    return _array(element_type, sizes, dynamic)


@_infers("convolution")
def _convolution(instr: HloInstruction) -> ShapeLike:
    lhs, rhs = operand_array(instr, 0, "lhs"), operand_array(instr, 1, "rhs")
    dn = instr.dim_labels
    if dn is None:
        raise _fail(instr, "is missing attribute dim_labels=")
    fgc, bgc = instr.feature_group_count, instr.batch_group_count
    if fgc <= 0 or bgc <= 0 or (fgc > 1 and bgc > 1):
        raise _fail(instr, f"feature_group_count={fgc} and batch_group_count={bgc} must be "
                           f"positive, and not both above 1")
    rank = len(dn.input_spatial_dimensions) + 2
    for role, shape in (("lhs", lhs), ("rhs", rhs)):
        if shape.rank != rank:
            raise _fail(instr, f"dim_labels= needs operands of rank {rank}, but {role} is "
                               f"{shape_text(shape)}", "dim_labels")
    batch, features = lhs.dims[dn.input_batch_dimension], lhs.dims[dn.input_feature_dimension]
    kernel_in = rhs.dims[dn.kernel_input_feature_dimension]
    kernel_out = rhs.dims[dn.kernel_output_feature_dimension]
    if features % fgc or features // fgc != kernel_in:
        raise _fail(instr, f"the input features ({features}) divided by feature_group_count "
                           f"({fgc}) must equal the kernel input features ({kernel_in})")
    if kernel_out % fgc or kernel_out % bgc:
        raise _fail(instr, f"the kernel output features ({kernel_out}) must be a multiple of "
                           f"feature_group_count ({fgc}) and batch_group_count ({bgc})")
    if batch % bgc:
        raise _fail(instr, f"the input batch ({batch}) must be a multiple of batch_group_count "
                           f"({bgc})")
    kernel_spatial = [rhs.dims[d] for d in dn.kernel_spatial_dimensions]
    window_sizes = [w.size for w in instr.window or ()]
    if kernel_spatial != window_sizes:
        raise _fail(instr, f"the window sizes {window_sizes} must equal the kernel's spatial "
                           f"dimensions {kernel_spatial}", "window")
    spatial = _window_shape(instr, [lhs.dims[d] for d in dn.input_spatial_dimensions],
                            lhs.element_type, (), "the input's spatial part")
    dims = [0] * rank
    dims[dn.output_batch_dimension] = batch // bgc
    dims[dn.output_feature_dimension] = kernel_out
    dynamic = [False] * rank
    dynamic[dn.output_batch_dimension] = lhs.dynamic[dn.input_batch_dimension]
    for k, d in enumerate(dn.output_spatial_dimensions):
        dims[d] = spatial.dims[k]
        dynamic[d] = lhs.dynamic[dn.input_spatial_dimensions[k]] or \
            rhs.dynamic[dn.kernel_spatial_dimensions[k]]
    return _array(_wider(lhs.element_type, rhs.element_type), dims, dynamic)


# --------------------------------------------------------------------------- reductions

def _check_reducer(instr: HloInstruction, key: str, init_types: Sequence[str],
                   input_types: Sequence[str]) -> tuple[list[str], bool]:
    """Check that ``key=`` names a reducer for ``len(input_types)`` inputs: parameters
    (accumulators..., elements...), scalar (or tuple of scalars) result compatible with the
    init values and inputs. Returns the result's element types, and whether the result is a
    tuple (a reduction then gives a tuple, even of one element)."""
    comp = _called(instr, key)
    n = len(input_types)
    params = _param_shapes(comp)
    name = f"{key}=%{comp.name}"
    if len(params) != 2 * n:
        raise _fail(instr, f"{name} takes {_count(len(params), 'parameter')}, but needs {2 * n} "
                           f"(an accumulator and an element per input)", key)
    root = _root_shape(comp)
    results = root.elements if isinstance(root, TupleShape) else (root,)
    if len(results) != n or not all(isinstance(r, Shape) and r.rank == 0 for r in results):
        wanted = "a scalar" if n == 1 else f"a tuple of {n} scalars"
        raise _fail(instr, f"{name} must return {wanted}, but returns {shape_text(root)}", key)
    types = []
    for i, result in enumerate(results):
        assert isinstance(result, Shape)
        t = result.element_type
        for shape, role in ((params[i], f"parameter {i}"), (params[n + i], f"parameter {n + i}")):
            if not isinstance(shape, Shape) or shape.rank != 0 or \
                    not same_element_type(shape.element_type, t):
                raise _fail(instr, f"{name}: {role} is {shape_text(shape)}, but the result "
                                   f"is {t}[]", key)
        for actual, role in ((init_types[i], "init value"), (input_types[i], "input")):
            if not same_element_type(actual, t):
                raise _fail(instr, f"{name} reduces {t}, but {role} {i} has element type "
                                   f"{actual}", key)
        types.append(t)
    return types, isinstance(root, TupleShape)


def _inputs_and_inits(instr: HloInstruction) -> tuple[list[Shape], list[Shape]]:
    shapes = _arrays(instr)
    if not shapes or len(shapes) % 2:
        raise _fail(instr, f"needs an even number of operands (inputs, then init values), but "
                           f"has {len(shapes)}")
    n = len(shapes) // 2
    inputs, inits = shapes[:n], shapes[n:]
    for shape in inputs[1:]:
        if not same_dims(shape.dims, inputs[0].dims):
            raise _fail(instr, f"inputs {shape_text(inputs[0])} and {shape_text(shape)} must "
                               f"have the same dimensions")
    for k, shape in enumerate(inits):
        if shape.rank != 0:
            raise _fail(instr, f"init value {k} must be a scalar, but is {shape_text(shape)}")
    return inputs, inits


@_infers("reduce")
def _reduce(instr: HloInstruction) -> ShapeLike:
    inputs, inits = _inputs_and_inits(instr)
    dims = _list(instr, "dimensions")
    first = inputs[0]
    _in_range(instr, "dimensions", dims, first.rank, first)
    _unique(instr, "dimensions", dims)
    types, as_tuple = _check_reducer(instr, "to_apply", [s.element_type for s in inits],
                                     [s.element_type for s in inputs])
    kept = [d for d in range(first.rank) if d not in dims]
    sizes, dynamic = [first.dims[d] for d in kept], [first.dynamic[d] for d in kept]
    outputs = tuple(_array(t, sizes, dynamic) for t in types)
    return TupleShape(outputs) if as_tuple else outputs[0]


@_infers("reduce-window")
def _reduce_window(instr: HloInstruction) -> ShapeLike:
    inputs, inits = _inputs_and_inits(instr)
    _, as_tuple = _check_reducer(instr, "to_apply", [s.element_type for s in inits],
                                 [s.element_type for s in inputs])
    outputs = tuple(_window_shape(instr, shape.dims, init.element_type, shape.dynamic, shape)
                    for shape, init in zip(inputs, inits, strict=True))
    return TupleShape(outputs) if as_tuple else outputs[0]


@_infers("select-and-scatter")
def _select_and_scatter(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    source = operand_array(instr, 1, "the source")
    init = _expect_scalar(instr, 2, "the init value")
    select = _called(instr, "select")
    params, root = _param_shapes(select), _root_shape(select)
    if len(params) != 2 or not _is_pred_scalar(root):
        raise _fail(instr, f"select=%{select.name} must take 2 parameters and return pred[], "
                           f"but takes {len(params)} and returns {shape_text(root)}", "select")
    for k, param in enumerate(params):
        if not compatible(param, _scalar(operand.element_type)):
            raise _fail(instr, f"select=%{select.name}: parameter {k} is {shape_text(param)}, "
                               f"but the operand's elements are {operand.element_type}[]",
                        "select")
    _check_reducer(instr, "scatter", [init.element_type], [source.element_type])
    windows = _window_shape(instr, operand.dims, operand.element_type, operand.dynamic,
                            operand)
    if not same_dims(source.dims, windows.dims):
        raise _fail(instr, f"the source {shape_text(source)} must have one element per window "
                           f"position: {shape_text(_with_type(windows, source.element_type))}")
    return _plain(operand)


# --------------------------------------------------------------------------- slicing

def _start_indices(instr: HloInstruction, first: int, rank: int) -> None:
    """Check the start indices from operand ``first`` on: ``rank`` integral scalars, or (an
    older form) one integral vector of ``rank`` elements."""
    shapes = [operand_array(instr, k) for k in range(first, len(instr.operands))]
    if len(shapes) == 1 and shapes[0].rank == 1:
        if shapes[0].dims[0] != rank or shapes[0].element_type not in _INTEGRAL:
            raise _fail(instr, f"the start indices {shape_text(shapes[0])} must be {rank} "
                               f"integers")
        return
    if len(shapes) != rank:
        raise _fail(instr, f"needs {rank} start indices (one per operand dimension), but has "
                           f"{len(shapes)}")
    for shape in shapes:
        if shape.rank != 0 or shape.element_type not in _INTEGRAL \
                or shape.element_type != shapes[0].element_type:
            raise _fail(instr, f"start indices must be integral scalars of one type, but are "
                               f"{', '.join(shape_text(s) for s in shapes)}")


@_infers("dynamic-slice")
def _dynamic_slice(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    _start_indices(instr, 1, operand.rank)
    sizes = _list(instr, "dynamic_slice_sizes")
    if len(sizes) != operand.rank:
        raise _fail(instr, f"dynamic_slice_sizes={braced(sizes)} must have one size per "
                           f"dimension of {shape_text(operand)}", "dynamic_slice_sizes")
    for size, bound in zip(sizes, operand.dims, strict=True):
        if size < 0 or (bound != UNBOUNDED_SIZE and size > bound):
            raise _fail(instr, f"dynamic_slice_sizes={braced(sizes)} does not fit in "
                               f"{shape_text(operand)}", "dynamic_slice_sizes")
    return _array(operand.element_type, sizes)


@_infers("dynamic-update-slice")
def _dynamic_update_slice(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    update = operand_array(instr, 1, "the update")
    _start_indices(instr, 2, operand.rank)
    if update.rank != operand.rank or not same_element_type(update.element_type,
                                                            operand.element_type) or any(
            u > o for u, o in zip(update.dims, operand.dims, strict=True)
            if UNBOUNDED_SIZE not in (u, o)):
        raise _fail(instr, f"the update {shape_text(update)} does not fit in the operand "
                           f"{shape_text(operand)}")
    dynamic = [o or (u and us == os) for o, u, us, os in
               zip(operand.dynamic, update.dynamic, update.dims, operand.dims, strict=True)]
    return _array(operand.element_type, operand.dims, dynamic)


def _expanded_indices(instr: HloInstruction, indices: Shape, index_vector_dim: int
                      ) -> list[int]:
    """The indices' dimensions, with a trailing 1 when ``index_vector_dim`` is the rank."""
    if indices.element_type not in _INTEGRAL:
        raise _fail(instr, f"the indices {shape_text(indices)} must be integral")
    if not 0 <= index_vector_dim <= indices.rank:
        raise _fail(instr, f"index_vector_dim={index_vector_dim} must be in [0, "
                           f"{indices.rank}] for indices {shape_text(indices)}",
                    "index_vector_dim")
    dims = list(indices.dims)
    if index_vector_dim == indices.rank:
        dims.append(1)
    return dims


@_infers("gather")
def _gather(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    indices = operand_array(instr, 1, "the indices")
    g = instr.gather_dimension_numbers
    assert g is not None
    expanded = _expanded_indices(instr, indices, g.index_vector_dim)
    out_rank = len(g.offset_dims) + len(expanded) - 1
    _sorted(instr, "offset_dims", g.offset_dims)
    _unique(instr, "offset_dims", g.offset_dims)
    _in_range(instr, "offset_dims", g.offset_dims, out_rank, "the output")
    if len(g.start_index_map) != expanded[g.index_vector_dim]:
        raise _fail(instr, f"start_index_map={braced(g.start_index_map)} has "
                           f"{len(g.start_index_map)} entries, but the index vectors of "
                           f"{shape_text(indices)} have {expanded[g.index_vector_dim]}",
                    "start_index_map")
    for key, dims in (("start_index_map", g.start_index_map),
                      ("collapsed_slice_dims", g.collapsed_slice_dims),
                      ("operand_batching_dims", g.operand_batching_dims)):
        _in_range(instr, key, dims, operand.rank, operand)
        _unique(instr, key, dims)
    _sorted(instr, "collapsed_slice_dims", g.collapsed_slice_dims)
    sizes = _list(instr, "slice_sizes")
    skipped = set(g.collapsed_slice_dims) | set(g.operand_batching_dims)
    if len(sizes) != operand.rank or \
            len(g.offset_dims) + len(g.collapsed_slice_dims) + len(g.operand_batching_dims) \
            != operand.rank:
        raise _fail(instr, f"slice_sizes={braced(sizes)} must have one size per operand "
                           f"dimension ({operand.rank}), each an offset, collapsed or batching "
                           f"dimension", "slice_sizes")
    for d, (size, bound) in enumerate(zip(sizes, operand.dims, strict=True)):
        if size < 0 or (bound != UNBOUNDED_SIZE and size > bound) or \
                (d in skipped and size > 1):
            raise _fail(instr, f"slice_sizes={braced(sizes)}: size {size} of dimension {d} "
                               f"does not fit {shape_text(operand)}"
                               + (" (a collapsed or batching dimension takes at most 1)"
                                  if d in skipped else ""), "slice_sizes")
    # Output dimension i is the next offset (window) or the next batch (index) dimension.
    window = iter([(sizes[d], operand.dynamic[d] and sizes[d] == operand.dims[d])
                   for d in range(operand.rank) if d not in skipped])
    batch = iter([(n, indices.dynamic[d] if d < indices.rank else False)
                  for d, n in enumerate(expanded) if d != g.index_vector_dim])
    out = [next(window) if i in g.offset_dims else next(batch) for i in range(out_rank)]
    return _array(operand.element_type, [n for n, _ in out], [dyn for _, dyn in out])


@_infers("scatter")
def _scatter(instr: HloInstruction) -> ShapeLike:
    count = len(instr.operands)
    if count % 2 == 0:
        raise _fail(instr, f"needs 2N+1 operands (N operands, the indices, N updates), but has "
                           f"{count}")
    n = count // 2
    operands = [operand_array(instr, k) for k in range(n)]
    indices = operand_array(instr, n, "the indices")
    updates = [operand_array(instr, k) for k in range(n + 1, count)]
    s = instr.scatter_dimension_numbers
    assert s is not None
    expanded = _expanded_indices(instr, indices, s.index_vector_dim)
    scatter_sizes = [size for d, size in enumerate(expanded) if d != s.index_vector_dim]
    for operand, update in zip(operands, updates, strict=True):
        rank = len(expanded) - 1 + len(s.update_window_dims)
        if update.rank != rank:
            raise _fail(instr, f"updates {shape_text(update)} must have rank {rank}")
        _sorted(instr, "update_window_dims", s.update_window_dims)
        _unique(instr, "update_window_dims", s.update_window_dims)
        _in_range(instr, "update_window_dims", s.update_window_dims, update.rank, update)
        for key, dims in (("inserted_window_dims", s.inserted_window_dims),
                          ("input_batching_dims", s.input_batching_dims),
                          ("scatter_dims_to_operand_dims", s.scatter_dims_to_operand_dims)):
            _in_range(instr, key, dims, operand.rank, operand)
            _unique(instr, key, dims)
        _sorted(instr, "inserted_window_dims", s.inserted_window_dims)
        if len(s.update_window_dims) + len(s.inserted_window_dims) + \
                len(s.input_batching_dims) != operand.rank:
            raise _fail(instr, f"update_window_dims, inserted_window_dims and "
                               f"input_batching_dims must cover the {operand.rank} dimensions "
                               f"of {shape_text(operand)}", "update_window_dims")
        if len(s.scatter_dims_to_operand_dims) != expanded[s.index_vector_dim]:
            raise _fail(instr, f"scatter_dims_to_operand_dims has "
                               f"{len(s.scatter_dims_to_operand_dims)} entries, but the index "
                               f"vectors of {shape_text(indices)} have "
                               f"{expanded[s.index_vector_dim]}", "scatter_dims_to_operand_dims")
        skipped = set(s.inserted_window_dims) | set(s.input_batching_dims)
        window_bounds = [operand.dims[d] for d in range(operand.rank) if d not in skipped]
        for k, d in enumerate(s.update_window_dims):
            if UNBOUNDED_SIZE not in (update.dims[d], window_bounds[k]) and \
                    update.dims[d] > window_bounds[k]:
                raise _fail(instr, f"update window dimension {d} of {shape_text(update)} "
                                   f"exceeds the operand's {window_bounds[k]}")
        update_scatter = [update.dims[d] for d in range(update.rank)
                          if d not in s.update_window_dims]
        if not same_dims(update_scatter, scatter_sizes):
            raise _fail(instr, f"the scatter dimensions of the updates {shape_text(update)} "
                               f"({update_scatter}) must equal those of the indices "
                               f"{shape_text(indices)} ({scatter_sizes})")
    _check_reducer(instr, "to_apply", [o.element_type for o in operands],
                   [u.element_type for u in updates])
    return _tuple_or_single([_plain(o) for o in operands])


# --------------------------------------------------------------------------- other ops

@_infers("sort")
def _sort(instr: HloInstruction) -> ShapeLike:
    shapes = _arrays(instr)
    if not shapes:
        raise _fail(instr, "needs at least one operand")
    for shape in shapes[1:]:
        if not same_dims(shape.dims, shapes[0].dims):
            raise _fail(instr, f"keys {shape_text(shapes[0])} and values {shape_text(shape)} "
                               f"must have the same dimensions")
    axis = _single_dimension(instr)
    if axis >= shapes[0].rank:
        raise _fail(instr, f"dimensions={{{axis}}} is out of range for rank {shapes[0].rank}",
                    "dimensions")
    comparator = _called(instr, "to_apply")
    params, root = _param_shapes(comparator), _root_shape(comparator)
    if not _is_pred_scalar(root):
        raise _fail(instr, f"to_apply=%{comparator.name} must return pred[], but returns "
                           f"{shape_text(root)}", "to_apply")
    if len(params) != 2 * len(shapes):
        raise _fail(instr, f"to_apply=%{comparator.name} takes "
                           f"{_count(len(params), 'parameter')}, but "
                           f"needs {2 * len(shapes)} (two per operand)", "to_apply")
    for k, param in enumerate(params):
        if not compatible(param, _scalar(shapes[k // 2].element_type)):
            raise _fail(instr, f"to_apply=%{comparator.name}: parameter {k} is "
                               f"{shape_text(param)}, but operand {k // 2} has elements "
                               f"{shapes[k // 2].element_type}[]", "to_apply")
    return _tuple_or_single([_plain(s) for s in shapes])


@_infers("map")
def _map(instr: HloInstruction) -> ShapeLike:
    shapes = _arrays(instr)
    if not shapes:
        raise _fail(instr, "needs at least one operand")
    full = max(shapes, key=lambda s: s.rank)
    for shape in shapes:
        if not same_dims(shape.dims, full.dims) and shape.rank != 0:
            raise _fail(instr, f"operands {shape_text(full)} and {shape_text(shape)} must have "
                               f"the same dimensions")
    comp = _called(instr, "to_apply")
    params, root = _param_shapes(comp), _root_shape(comp)
    if len(params) != len(shapes):
        raise _fail(instr, f"to_apply=%{comp.name} takes {_count(len(params), 'parameter')}, "
                           f"but map has {_count(len(shapes), 'operand')}", "to_apply")
    if not isinstance(root, Shape) or root.rank != 0:
        raise _fail(instr, f"to_apply=%{comp.name} must return a scalar, but returns "
                           f"{shape_text(root)}", "to_apply")
    for k, (param, shape) in enumerate(zip(params, shapes, strict=True)):
        if not compatible(param, _scalar(shape.element_type)):
            raise _fail(instr, f"to_apply=%{comp.name}: parameter {k} is {shape_text(param)}, "
                               f"but operand {k} has elements {shape.element_type}[]",
                        "to_apply")
    return _array(root.element_type, full.dims, full.dynamic)


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


# --------------------------------------------------------------------------- collectives

_IOTA_GROUPS_RE = re.compile(r"\[\s*(\d+)\s*,\s*(\d+)\s*\]\s*<=")
_GROUP_RE = re.compile(r"\{([^{}]*)\}")


def _replica_group_size(instr: HloInstruction) -> int | None:
    """The size of the first group in ``replica_groups`` (``{{0,1},{2,3}}`` or the iota form
    ``[2,2]<=[4]``), or None when the attribute is absent or empty (all replicas, a number
    the instruction does not hold)."""
    raw = instr.attributes.get("replica_groups")
    if raw is None:
        return None
    iota = _IOTA_GROUPS_RE.match(raw.strip())
    if iota:
        return int(iota.group(2))
    inner = raw.strip()[1:-1] if raw.strip().startswith("{") else ""
    first = _GROUP_RE.search(inner)
    if first is None:
        return None
    return len([v for v in first.group(1).split(",") if v.strip()])


def _collective_axis(instr: HloInstruction, shapes: Sequence[Shape]) -> int:
    axis = _single_dimension(instr)
    for shape in shapes:
        if not 0 <= axis < shape.rank:
            raise _fail(instr, f"dimensions={{{axis}}} is out of range for operand "
                               f"{shape_text(shape)}", "dimensions")
    return axis


def all_gather_shape(instr: HloInstruction, shard_count: int) -> ShapeLike:
    """The output of ``all-gather``: each operand with its ``dimensions={k}`` multiplied by
    ``shard_count``."""
    shapes = _arrays(instr)
    axis = _collective_axis(instr, shapes)
    out = []
    for shape in shapes:
        dims = list(shape.dims)
        dims[axis] *= shard_count
        out.append(_array(shape.element_type, dims, shape.dynamic))
    return _tuple_or_single(out)


def reduce_scatter_shape(instr: HloInstruction, shard_count: int) -> ShapeLike:
    """The output of ``reduce-scatter``: each operand with ``dimensions={k}`` divided by
    ``shard_count`` (which must divide it)."""
    shapes = _arrays(instr)
    axis = _collective_axis(instr, shapes)
    out = []
    for shape in shapes:
        dims = list(shape.dims)
        if dims[axis] % shard_count:
            raise _fail(instr, f"dimension {axis} of {shape_text(shape)} is not divisible by "
                               f"the {shard_count} shards")
        dims[axis] //= shard_count
        out.append(_array(shape.element_type, dims, shape.dynamic))
    return _tuple_or_single(out)


def shard_count(instr: HloInstruction) -> int | None:
    """How many shards an ``all-gather`` or ``reduce-scatter`` gathers or scatters, when the
    instruction says: the size of its replica groups, unless it has a ``channel_id`` without
    ``use_global_device_ids=true`` (XLA's cross-replica-and-partition mode, where the count
    is also multiplied by the module's number of partitions). None otherwise."""
    size = _replica_group_size(instr)
    if size is None or ("channel_id" in instr.attributes
                        and instr.attributes.get("use_global_device_ids") != "true"):
        return None
    return size


def _known_shard_count(instr: HloInstruction) -> int:
    count = shard_count(instr)
    if count is None:
        raise _fail(instr, "the shard count depends on the module's replica or partition "
                           "count (replica_groups= does not give it); write the shape")
    return count


@_infers("all-gather")
def _all_gather(instr: HloInstruction) -> ShapeLike:
    return all_gather_shape(instr, _known_shard_count(instr))


@_infers("reduce-scatter")
def _reduce_scatter(instr: HloInstruction) -> ShapeLike:
    return reduce_scatter_shape(instr, _known_shard_count(instr))


@_infers("all-reduce", "collective-broadcast")
def _all_reduce(instr: HloInstruction) -> ShapeLike:
    shapes = _arrays(instr)
    if not shapes:
        raise _fail(instr, "needs at least one operand")
    return _tuple_or_single([_plain(s) for s in shapes])


@_infers("all-to-all")
def _all_to_all(instr: HloInstruction) -> ShapeLike:
    shapes = _arrays(instr)
    if not shapes:
        raise _fail(instr, "needs at least one operand")
    if "dimensions" in instr.attributes:
        if len(shapes) != 1:
            raise _fail(instr, f"with dimensions= takes 1 operand, but has {len(shapes)}")
        _collective_axis(instr, shapes)
        return _plain(shapes[0])
    for shape in shapes[1:]:
        if not compatible(shape, shapes[0]):
            raise _fail(instr, f"operands {shape_text(shapes[0])} and {shape_text(shape)} "
                               f"must have the same shape")
    return TupleShape(tuple(_plain(s) for s in shapes))


@_infers("collective-permute")
def _collective_permute(instr: HloInstruction) -> ShapeLike:
    if len(instr.operands) == 4:  # in-place form: input, output buffer, offsets
        return _plain(_operand_shape(instr, 1))
    if len(instr.operands) != 1:
        raise _fail(instr, "the shape of a combined collective-permute cannot be inferred; "
                           "write it")
    return _plain(operand_array(instr, 0))


# --------------------------------------------------------------------------- linear algebra

@_infers("cholesky")
def _cholesky(instr: HloInstruction) -> ShapeLike:
    a = operand_array(instr, 0)
    if a.element_type not in _FLOATING | _COMPLEX or a.rank < 2 or a.dims[-1] != a.dims[-2]:
        raise _fail(instr, f"needs a floating-point or complex operand of rank >= 2 with "
                           f"square minor dimensions, but has {shape_text(a)}")
    return _plain(a)


@_infers("triangular-solve")
def _triangular_solve(instr: HloInstruction) -> ShapeLike:
    a, b = operand_array(instr, 0, "a"), operand_array(instr, 1, "b")
    left = (instr.attr_str("left_side") or "false") == "true"
    shared = b.dims[-2 if left else -1] if b.rank >= 2 else None
    if a.element_type not in _FLOATING | _COMPLEX or a.element_type != b.element_type \
            or a.rank < 2 or b.rank != a.rank or a.dims[-1] != a.dims[-2] \
            or a.dims[-1] != shared or a.dims[:-2] != b.dims[:-2]:
        raise _fail(instr, f"needs a square a and b of one floating-point or complex type, "
                           f"equal batch dimensions and a shared dimension, but has a="
                           f"{shape_text(a)} and b={shape_text(b)} (left_side="
                           f"{str(left).lower()})")
    return _plain(b)


@_infers("fft")
def _fft(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    kind = instr.attr_str("fft_type")
    lengths = _list(instr, "fft_length")
    t, n = operand.element_type, len(lengths)
    if kind not in ("FFT", "IFFT", "RFFT", "IRFFT"):
        raise _fail(instr, f"fft_type={kind} is not FFT, IFFT, RFFT or IRFFT", "fft_type")
    if not 1 <= n <= 3 or operand.rank < n:
        raise _fail(instr, f"fft_length={braced(lengths)} needs 1 to 3 lengths and an "
                           f"operand of at least that rank, but the operand is "
                           f"{shape_text(operand)}", "fft_length")
    inner = list(operand.dims[-n:])
    if kind in ("FFT", "IFFT"):
        if t not in _COMPLEX:
            raise _fail(instr, f"{kind} needs a complex operand, but has {shape_text(operand)}")
        return _plain(operand)
    dims = list(operand.dims)
    if kind == "RFFT":
        if t not in ("f32", "f64") or inner != list(lengths):
            raise _fail(instr, f"RFFT needs an f32 or f64 operand whose minor dimensions are "
                               f"fft_length={braced(lengths)}, but has {shape_text(operand)}")
        if lengths[-1]:
            dims[-1] = lengths[-1] // 2 + 1
        return _array("c64" if t == "f32" else "c128", dims, operand.dynamic)
    expected_last = lengths[-1] // 2 + 1
    if t not in _COMPLEX or inner[:-1] != list(lengths[:-1]) or (
            (inner[-1] or lengths[-1]) and inner[-1] != expected_last):
        raise _fail(instr, f"IRFFT needs a complex operand whose minor dimensions are "
                           f"{list(lengths[:-1]) + [expected_last]}, but has "
                           f"{shape_text(operand)}")
    dims[-1] = lengths[-1]
    return _array(_COMPONENT[t], dims, operand.dynamic)


def _feature_index(instr: HloInstruction, operand: Shape) -> int:
    index = _int(instr, "feature_index")
    if not 0 <= index < operand.rank:
        raise _fail(instr, f"feature_index={index} is out of range for {shape_text(operand)}",
                    "feature_index")
    return index


def _batch_norm_features(instr: HloInstruction, roles: Sequence[str]) -> tuple[Shape, Shape]:
    """The operand and the per-feature shape, after checking the per-feature operands
    (``roles``: operands 1.. in order) against the feature dimension."""
    operand = operand_array(instr, 0)
    if operand.element_type not in _FLOATING:
        raise _fail(instr, f"the operand must be floating-point, but is {shape_text(operand)}")
    count = operand.dims[_feature_index(instr, operand)]
    feature = _array(operand.element_type, [count])
    for k, role in enumerate(roles, start=1):
        shape = operand_array(instr, k, role)
        if not compatible(shape, feature):
            raise _fail(instr, f"{role} must be {shape_text(feature)} (one per feature), but "
                               f"is {shape_text(shape)}")
    return _strip(operand), feature


@_infers("batch-norm-training")
def _batch_norm_training(instr: HloInstruction) -> ShapeLike:
    operand, feature = _batch_norm_features(instr, ("scale", "offset"))
    return TupleShape((operand, feature, feature))


@_infers("batch-norm-inference")
def _batch_norm_inference(instr: HloInstruction) -> ShapeLike:
    operand, _ = _batch_norm_features(instr, ("scale", "offset", "mean", "variance"))
    return operand


@_infers("batch-norm-grad")
def _batch_norm_grad(instr: HloInstruction) -> ShapeLike:
    operand, feature = _batch_norm_features(instr, ("scale", "mean", "variance"))
    grad = operand_array(instr, 4, "the output gradient")
    if not compatible(grad, operand):
        raise _fail(instr, f"the output gradient {shape_text(grad)} must have the shape of "
                           f"the operand {shape_text(operand)}")
    return TupleShape((operand, feature, feature))


@_infers("topk")
def _topk(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    k = _int(instr, "k")
    if operand.rank < 1 or k < 0 or (operand.dims[-1] != UNBOUNDED_SIZE and k > operand.dims[-1]):
        raise _fail(instr, f"k={k} must be at most the last dimension of "
                           f"{shape_text(operand)}", "k")
    dims = (*operand.dims[:-1], k)
    dynamic = (*operand.dynamic[:-1], False)
    return TupleShape((_array(operand.element_type, dims, dynamic), _array("s32", dims, dynamic)))


# --------------------------------------------------------------------------- control flow

def _check_parameters(instr: HloInstruction, key: str, comp: HloComputation,
                      args: Sequence[ShapeLike]) -> None:
    """``comp`` (named by ``key=``) takes exactly ``args``."""
    params = _param_shapes(comp)
    if len(params) != len(args):
        raise _fail(instr, f"{key}=%{comp.name} takes {_count(len(params), 'parameter')}, but "
                           f"is given {len(args)}", key)
    for k, (param, arg) in enumerate(zip(params, args, strict=True)):
        if not compatible(param, arg):
            raise _fail(instr, f"{key}=%{comp.name}: parameter {k} is {shape_text(param)}, "
                               f"but is given {shape_text(arg)}", key)


@_infers("call")
def _call(instr: HloInstruction) -> ShapeLike:
    comp = _called(instr, "to_apply")
    _check_parameters(instr, "to_apply", comp, [o.shape for o in instr.operands])
    return _plain(_root_shape(comp))


@_infers("fusion")
def _fusion(instr: HloInstruction) -> ShapeLike:
    comp = _called(instr, "calls")
    params = _param_shapes(comp)
    if len(params) > len(instr.operands):
        raise _fail(instr, f"calls=%{comp.name} takes {_count(len(params), 'parameter')}, but "
                           f"the fusion has {_count(len(instr.operands), 'operand')}", "calls")
    for k, param in enumerate(params):
        arg = _operand_shape(instr, k)
        if not compatible(param, arg):
            raise _fail(instr, f"calls=%{comp.name}: parameter {k} is {shape_text(param)}, but "
                               f"operand {k} is {shape_text(arg)}", "calls")
    return _plain(_root_shape(comp))


@_infers("while")
def _while(instr: HloInstruction) -> ShapeLike:
    init = _operand_shape(instr, 0)
    condition, body = _called(instr, "condition"), _called(instr, "body")
    _check_parameters(instr, "condition", condition, [init])
    _check_parameters(instr, "body", body, [init])
    result = _root_shape(condition)
    if not _is_pred_scalar(result):
        raise _fail(instr, f"condition=%{condition.name} must return pred[], but returns "
                           f"{shape_text(result)}", "condition")
    if not compatible(_root_shape(body), init):
        raise _fail(instr, f"body=%{body.name} returns {shape_text(_root_shape(body))}, but the "
                           f"loop state is {shape_text(init)}", "body")
    return _plain(init)


@_infers("scan")
def _scan(instr: HloInstruction) -> ShapeLike:
    """XLA's ``kScan``: ``scan(inputs.., inits..), dimensions={a}, num_carries=C,
    to_apply=body``. The body takes one slice of each input (dimension ``a`` removed) and
    the carries (shaped as the inits), and returns one slice of each output and the next
    carries; the result is the outputs (dimension ``a``, the inputs' length, put back) and
    the final carries. A single result may be written as an array or a 1-tuple."""
    dims = instr.dimensions
    if dims is None or len(dims) != 1:
        raise _fail(instr, f"dimensions={braced(dims or ())} must name one dimension",
                    "dimensions" if dims is not None else None)
    axis = dims[0]
    carries = instr.attr_int("num_carries")
    if carries is None:
        raise _fail(instr, "is missing attribute num_carries=")
    if not 0 <= carries <= len(instr.operands):
        raise _fail(instr, f"num_carries={carries} must be between 0 and the "
                           f"{_count(len(instr.operands), 'operand')}", "num_carries")
    for flag in ("is_reverse", "is_associative"):
        value = instr.attr_str(flag)
        if value is not None and value.lower() not in ("true", "false"):
            raise _fail(instr, f"{flag}={value} must be true or false", flag)
    body = _called(instr, "to_apply")
    n_in = len(instr.operands) - carries
    inputs = [operand_array(instr, k) for k in range(n_in)]
    inits = [_operand_shape(instr, k) for k in range(n_in, len(instr.operands))]
    for k, x in enumerate(inputs):
        if not 0 <= axis < x.rank:
            raise _fail(instr, f"dimensions={{{axis}}} is not a dimension of input {k} "
                               f"{shape_text(x)}", "dimensions")
    lengths = sorted({x.dims[axis] for x in inputs})
    if len(lengths) > 1:
        raise _fail(instr, f"the inputs disagree on the length of dimension {axis}: "
                           f"{', '.join(map(str, lengths))}", "dimensions")
    slices = [Shape(x.element_type, x.dims[:axis] + x.dims[axis + 1:]) for x in inputs]
    _check_parameters(instr, "to_apply", body, [*slices, *inits])
    root = _root_shape(body)
    results = list(root.elements) if isinstance(root, TupleShape) else [root]
    if len(results) < carries:
        raise _fail(instr, f"to_apply=%{body.name} returns {_count(len(results), 'result')}, "
                           f"fewer than num_carries={carries}", "to_apply")
    n_out = len(results) - carries
    for k, (final, init) in enumerate(zip(results[n_out:], inits, strict=True)):
        if not compatible(final, init):
            raise _fail(instr, f"to_apply=%{body.name} returns carry {k} as "
                               f"{shape_text(final)}, but its init is {shape_text(init)}",
                        "to_apply")
    outputs = []
    for k, y in enumerate(results[:n_out]):
        if not isinstance(y, Shape) or not 0 <= axis <= y.rank:
            raise _fail(instr, f"to_apply=%{body.name} returns output {k} as "
                               f"{shape_text(y)}, which cannot take dimension {axis}",
                        "to_apply")
        length = lengths[0] if lengths else _declared_length(instr, k, axis)
        outputs.append(Shape(y.element_type, y.dims[:axis] + (length,) + y.dims[axis:]))
    shapes = [*outputs, *(_plain(s) for s in results[n_out:])]
    if len(shapes) == 1 and not isinstance(instr.shape, TupleShape):
        return shapes[0]
    return TupleShape(tuple(shapes))


def _declared_length(instr: HloInstruction, k: int, axis: int) -> int:
    """A scan without inputs: the length of output ``k``'s scanned dimension, as written
    (nothing else says how many steps it takes)."""
    declared = instr.shape
    shapes = declared.elements if isinstance(declared, TupleShape) else (declared,)
    output = shapes[k] if k < len(shapes) else None
    if isinstance(output, Shape) and axis < output.rank:
        return output.dims[axis]
    raise _fail(instr, "the length of the scanned dimension cannot be inferred without "
                       "inputs; write the shape")


def _branches(instr: HloInstruction) -> list[tuple[str, HloComputation]]:
    """The branch computations of a conditional, each with the attribute naming it."""
    calls = instr.called_computations
    if "branch_computations" in calls:
        return [("branch_computations", comp) for comp in calls["branch_computations"]]
    if "true_computation" in calls and "false_computation" in calls:
        return [(key, _called(instr, key)) for key in ("true_computation", "false_computation")]
    raise _fail(instr, "is missing branch_computations= (or true_computation= and "
                       "false_computation=)")


@_infers("conditional")
def _conditional(instr: HloInstruction) -> ShapeLike:
    branches = _branches(instr)
    selector = _expect_scalar(instr, 0, "the branch selector")
    if selector.element_type == "pred" and len(branches) != 2:
        raise _fail(instr, f"a pred selector needs 2 branches, but there are {len(branches)}",
                    branches[0][0] if branches else None)
    if selector.element_type not in ("pred", "s32"):
        raise _fail(instr, f"the branch selector must be pred[] or s32[], but is "
                           f"{shape_text(selector)}")
    if not branches or len(instr.operands) != len(branches) + 1:
        raise _fail(instr, f"takes {len(branches) + 1} operands (the selector and one per "
                           f"branch), but has {len(instr.operands)}")
    first = _root_shape(branches[0][1])
    for j, (key, branch) in enumerate(branches):
        _check_parameters(instr, key, branch, [instr.operands[j + 1].shape])
        if not compatible(_root_shape(branch), first):
            raise _fail(instr, f"branch {j} (%{branch.name}) returns "
                               f"{shape_text(_root_shape(branch))}, but branch 0 returns "
                               f"{shape_text(first)}", key)
    return _plain(first)


# --------------------------------------------------------------------------- tokens, ids

@_infers("after-all", "outfeed", "send-done")
def _token(instr: HloInstruction) -> ShapeLike:
    if instr.opcode == "outfeed":
        _expect_token(instr, 1)
    return _TOKEN


@_infers("add-dependency")
def _add_dependency(instr: HloInstruction) -> ShapeLike:
    _expect_token(instr, 1)
    return _plain(_operand_shape(instr, 0))


@_infers("partition-id", "replica-id")
def _device_id(instr: HloInstruction) -> ShapeLike:
    return _scalar("u32")


@_infers("rng-get-and-update-state")
def _rng_state(instr: HloInstruction) -> ShapeLike:
    return _array("u64", [2])


@_infers("get-dimension-size")
def _get_dimension_size(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    _in_range(instr, "dimensions", (_single_dimension(instr),), operand.rank, operand)
    return _scalar("s32")


@_infers("set-dimension-size")
def _set_dimension_size(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    axis = _single_dimension(instr)
    _in_range(instr, "dimensions", (axis,), operand.rank, operand)
    size = _expect_scalar(instr, 1, "the size")
    if size.element_type != "s32":
        raise _fail(instr, f"the size must be s32[], but is {shape_text(size)}")
    return _array(operand.element_type, operand.dims,
                  [d == axis or dyn for d, dyn in enumerate(operand.dynamic)])
