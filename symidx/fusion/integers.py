"""The values of small integer computations, known before the program runs: a loop's
counter and what is computed from it.

:class:`Evaluator` computes the value of an instruction of one computation from constants,
iotas and the parameter leaves it is given (any other parameter leaf is unknown), through
integer and ``pred`` arithmetic, comparisons, ``select``, ``clamp``, shape changes of small
arrays, tuples and called computations (``fusion``, ``call``). Every value is a numpy array
of the instruction's own element type, so arithmetic wraps around as HLO's does. What
depends on an unknown value, on a floating-point value, on an array larger than
:data:`ELEMENT_LIMIT` elements or on an op not listed here is unknown (None): never a
guess. Division or remainder by zero is unknown too (XLA defines it, but no counter
needs it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from symidx.hlo import HloInstruction, Shape
from symidx.hlo.facts import called_computation
from symidx.hlo.leaves import element_leaves, leaf_count, leaves

__all__ = ["ELEMENT_LIMIT", "Value", "Evaluator", "integer_dtype"]

#: The most elements an evaluated array may have.
ELEMENT_LIMIT = 1024
_DEPTH_LIMIT = 200  # nested instructions followed for one value

Value = np.ndarray
#: Per leaf of an instruction's shape: its value, or None when unknown.
Leaves = tuple["Value | None", ...]

_DTYPES = {"pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32,
           "s64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32}


def integer_dtype(shape: object) -> np.dtype | None:
    """The numpy type of an integer or ``pred`` array shape of at most
    :data:`ELEMENT_LIMIT` elements; None for any other shape (u64 values do not all fit an
    int64, so they are left out)."""
    if not isinstance(shape, Shape) or shape.element_type not in _DTYPES \
            or any(shape.dynamic) or int(np.prod(shape.dims, dtype=np.int64)) > ELEMENT_LIMIT:
        return None
    return np.dtype(_DTYPES[shape.element_type])


def _wrap(values: np.ndarray, shape: object) -> Value | None:
    """``values`` (int64 or bool) cast to ``shape``'s element type, wrapping around."""
    dtype = integer_dtype(shape)
    if dtype is None:
        return None
    assert isinstance(shape, Shape)
    return np.asarray(values).astype(dtype).reshape(shape.dims)


def _wide(value: Value) -> np.ndarray:
    return value.astype(np.int64) if value.dtype != np.bool_ else value


_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply,
    "maximum": np.maximum, "minimum": np.minimum,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
}
_COMPARE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
    "GT": np.greater, "GE": np.greater_equal,
}
_MOVES = frozenset({"copy", "opt-barrier", "domain"})


class Evaluator:
    """Values of the instructions of one computation given ``arguments``: per parameter
    number, the value of each of its leaves (None: unknown; a missing parameter is
    unknown)."""

    def __init__(self, arguments: Mapping[int, Sequence[Value | None]]) -> None:
        self.arguments = arguments
        self._memo: dict[HloInstruction, Leaves] = {}

    def value(self, instr: HloInstruction, leaf: int = 0) -> Value | None:
        """The value of leaf ``leaf`` of ``instr`` (an instruction of the computation)."""
        found = self._leaves(instr, 0)
        return found[leaf] if leaf < len(found) else None

    def _leaves(self, instr: HloInstruction, depth: int) -> Leaves:
        found = self._memo.get(instr)
        if found is None:
            if depth > _DEPTH_LIMIT:
                return (None,) * leaf_count(instr.shape)
            found = self._memo[instr] = self._compute(instr, depth + 1)
        return found

    def _array(self, instr: HloInstruction, depth: int) -> Value | None:
        found = self._leaves(instr, depth)
        return found[0] if len(found) == 1 else None

    def _compute(self, instr: HloInstruction, depth: int) -> Leaves:
        op = instr.opcode
        unknown: Leaves = (None,) * leaf_count(instr.shape)
        if all(integer_dtype(s) is None for s in leaves(instr.shape)):
            return unknown
        if op == "parameter":
            given = self.arguments.get(instr.parameter_number or 0)
            if given is None or len(given) != len(unknown):
                return unknown
            return tuple(given)
        if op == "tuple":
            return tuple(v for o in instr.operands for v in self._leaves(o, depth))
        if op == "get-tuple-element":
            held = self._leaves(instr.operands[0], depth)
            try:
                span = element_leaves(instr.operands[0].shape, instr.tuple_index or 0)
            except IndexError:
                return unknown
            return tuple(held[lf] for lf in span)
        if op in _MOVES and len(instr.operands) == 1:
            return self._leaves(instr.operands[0], depth)
        if op in ("fusion", "call"):
            return self._called(instr, depth, unknown)
        if len(unknown) != 1 or integer_dtype(instr.shape) is None:
            return unknown
        return (self._element_op(instr, depth),)

    def _called(self, instr: HloInstruction, depth: int, unknown: Leaves) -> Leaves:
        try:
            comp = called_computation(instr)
        except Exception:  # a malformed call: its value is unknown
            return unknown
        if comp is None:
            return unknown
        inner = Evaluator({n: self._leaves(o, depth) for n, o in enumerate(instr.operands)})
        found = inner._leaves(comp.root, depth)
        return found if len(found) == len(unknown) else unknown

    def _element_op(self, instr: HloInstruction, depth: int) -> Value | None:
        """The value of an array-shaped integer instruction (None: unknown)."""
        op, shape = instr.opcode, instr.shape
        assert isinstance(shape, Shape)
        if op == "constant":
            return _constant(instr)
        if op == "iota":
            axis = instr.attr_int("iota_dimension", 0)
            if axis is None or not 0 <= axis < len(shape.dims):
                return None
            index = np.indices(shape.dims, dtype=np.int64)[axis] if shape.dims \
                else np.zeros((), np.int64)
            return _wrap(index, shape)
        args = [self._array(o, depth) for o in instr.operands]
        if any(a is None for a in args):
            return None
        values = [a for a in args if a is not None]
        return _apply(instr, values)


def _constant(instr: HloInstruction) -> Value | None:
    if instr.literal is None:
        return None
    try:
        value = np.asarray(instr.literal, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        return None
    shape = instr.shape
    assert isinstance(shape, Shape)
    if value.shape != shape.dims:
        return None
    return _wrap(value, shape)


def _apply(instr: HloInstruction, args: list[Value]) -> Value | None:
    """An op on known operand values; None when the op is not one evaluated here."""
    op, shape = instr.opcode, instr.shape
    assert isinstance(shape, Shape)
    if any(integer_dtype(o.shape) is None for o in instr.operands):
        return None
    if op in _BINARY and len(args) == 2:
        return _wrap(_BINARY[op](_wide(args[0]), _wide(args[1])), shape)
    if op in ("divide", "remainder") and len(args) == 2:
        return _division(op, args[0], args[1], shape)
    if op == "compare" and len(args) == 2:
        compare = _COMPARE.get(instr.comparison_direction or "")
        return None if compare is None else _wrap(compare(_wide(args[0]), _wide(args[1])),
                                                  shape)
    if op == "select" and len(args) == 3:
        return _wrap(np.where(args[0], _wide(args[1]), _wide(args[2])), shape)
    if op == "clamp" and len(args) == 3:
        return _wrap(np.minimum(np.maximum(_wide(args[1]), _wide(args[0])), _wide(args[2])),
                     shape)
    if op in ("negate", "abs", "not", "sign", "convert") and len(args) == 1:
        return _unary(op, args[0], shape)
    if op in ("reshape", "bitcast") and len(args) == 1:
        same = args[0].size == 1 or args[0].shape == shape.dims
        return _wrap(args[0], shape) if same and args[0].dtype == integer_dtype(shape) \
            else None
    if op == "broadcast" and len(args) == 1:
        return _broadcast(args[0], instr.dimensions or (), shape)
    if op == "slice" and len(args) == 1 and instr.slice is not None:
        cut = tuple(slice(s.start, s.limit, s.stride) for s in instr.slice)
        return _wrap(args[0][cut], shape) if len(cut) == args[0].ndim else None
    return None


def _division(op: str, a: Value, b: Value, shape: Shape) -> Value | None:
    """C's truncating division and its remainder (the sign of the dividend), as HLO's."""
    wa, wb = _wide(a).astype(np.int64), _wide(b).astype(np.int64)
    if (wb == 0).any():
        return None
    quotient = np.sign(wa) * np.sign(wb) * (np.abs(wa) // np.abs(wb))
    return _wrap(quotient if op == "divide" else wa - quotient * wb, shape)


def _unary(op: str, a: Value, shape: Shape) -> Value | None:
    if op == "convert":
        return _wrap(a != 0 if shape.element_type == "pred" else _wide(a), shape)
    if op == "not":
        return _wrap(~a if a.dtype != np.bool_ else np.logical_not(a), shape)
    if a.dtype == np.bool_:
        return None
    wide = _wide(a)
    return _wrap({"negate": np.negative, "abs": np.abs, "sign": np.sign}[op](wide), shape)


def _broadcast(a: Value, dimensions: Sequence[int], shape: Shape) -> Value | None:
    if len(dimensions) != a.ndim or any(not 0 <= d < len(shape.dims) for d in dimensions):
        return None
    order = sorted(range(len(dimensions)), key=lambda k: dimensions[k])
    expanded = np.transpose(a, order) if a.ndim else a
    view = [1] * len(shape.dims)
    for k, d in enumerate(sorted(dimensions)):
        view[d] = expanded.shape[k]
    try:
        return _wrap(np.broadcast_to(expanded.reshape(view), shape.dims), shape)
    except ValueError:
        return None

