"""What every shape rule shares: the error type, element-type and shape helpers, the
operand counts of fixed-arity opcodes, and the registry from opcode to rule (one rule per
opcode: registering a second is an error)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from symidx.errors import HloShapeError
from symidx.hlo.shape import ELEMENT_BIT_WIDTHS, UNBOUNDED_SIZE, Shape, ShapeLike, TupleShape

if TYPE_CHECKING:
    from symidx.hlo.ir import HloComputation, HloInstruction

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
    """Register the decorated function as the shape rule of ``opcodes``. An opcode has one
    rule: a second registration raises, instead of silently replacing the first."""
    def register(fn: _Rule) -> _Rule:
        for opcode in opcodes:
            if opcode in _RULES:
                raise RuntimeError(f"two shape rules for {opcode}: {_RULES[opcode].__name__} "
                                   f"and {fn.__name__}")
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


