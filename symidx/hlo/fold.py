"""The integer values instructions hold before the program runs: the index tables a scatter
reads (``jnp.array([1, 3])``, ``jnp.arange(4)``, JAX's negative-index fix-up
``select(i < 0, i + n, i)`` on them), a loop's counter and what is computed from it.

:class:`Evaluator` computes the values of the instructions of one computation from
constants, iotas and the parameter leaves it is given (any other parameter leaf is
unknown), through

* integer and ``pred`` arithmetic: ``add``, ``subtract``, ``multiply``, ``divide``,
  ``remainder`` (C's truncating division, as HLO's), ``maximum``, ``minimum``, ``and``,
  ``or``, ``xor``, ``not``, ``negate``, ``abs``, ``sign``, ``convert``, ``compare``,
  ``select``, ``clamp``;
* moves of small arrays: ``copy``, ``reshape``, ``bitcast`` (untiled layouts), ``broadcast``,
  ``transpose``, ``reverse``, ``slice``, ``concatenate``;
* tuples (``tuple``, ``get-tuple-element``, and ``copy``, ``opt-barrier``, ``domain`` of a
  tuple) and called computations (``fusion``, ``call``), run on their operands' values.

:func:`integer_values` is the simple entry point: the values of one array instruction with
every parameter unknown.

Every value is a numpy array of the instruction's own element type (``np.bool_`` for
``pred``), so arithmetic, done in ``int64``, wraps around at the element width when cast
back, as HLO's does. What depends on an unknown value, on a floating-point value, on an
array of more than :data:`LIMIT` elements or on an op not listed here is unknown (None):
never a guess. So are ``u64`` values (not all fit an ``int64``) and a division or remainder
by zero (XLA defines it, but no index or counter needs it).

:data:`LIMIT` is ``2^14`` elements: a numpy operation on such an array (128 KiB as
``int64``) takes microseconds, so even a loop evaluated state after state over a body of
such arrays stays cheap, while index tables of the sizes programs write as literals or
small ``arange``\\ s fit; an array beyond it is unknown, which costs precision, never
soundness.

>>> from symidx.hlo import parse_hlo
>>> root = parse_hlo('''
... HloModule m
... ENTRY e {
...   i = s32[3] iota(), iota_dimension=0
...   c0 = s32[] constant(-1)
...   c = s32[3] broadcast(c0), dimensions={}
...   j = s32[3] multiply(i, c)
...   c1 = s32[] constant(0)
...   z = s32[3] broadcast(c1), dimensions={}
...   neg = pred[3] compare(j, z), direction=LT
...   c2 = s32[] constant(6)
...   n = s32[3] broadcast(c2), dimensions={}
...   wrapped = s32[3] add(j, n)
...   s = s32[3] select(neg, wrapped, j)
...   ROOT r = s32[3,1] reshape(s)
... }''').entry.root
>>> integer_values(root).tolist()
[[0], [5], [4]]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from symidx.hlo.facts import called_computation
from symidx.hlo.ir import HloInstruction
from symidx.hlo.leaves import element_leaves, leaf_count, leaves
from symidx.hlo.moves import MOVES_ELEMENTS, PASSES_WHOLE
from symidx.hlo.shape import Shape, integer_bounds

__all__ = ["LIMIT", "Value", "Evaluator", "integer_dtype", "integer_values"]

#: The most elements an evaluated array may have (see the module docstring).
LIMIT = 1 << 14

Value = np.ndarray
#: Per leaf of an instruction's shape: its value, or None when unknown.
Leaves = tuple["Value | None", ...]

_DTYPES = {"pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32,
           "s64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32}
_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply,
    "maximum": np.maximum, "minimum": np.minimum,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
}
_COMPARE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
    "GT": np.greater, "GE": np.greater_equal,
}
_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "negate": np.negative, "abs": np.abs, "sign": np.sign}
_MOVES = PASSES_WHOLE  # the value, whatever its shape
_CALLS = frozenset({"fusion", "call"})
#: Ops whose value follows from their operands' (every other op is unknown, its operands
#: not even evaluated).
_FROM_OPERANDS = frozenset(
    {*_BINARY, *_UNARY, *_MOVES, *MOVES_ELEMENTS, *_CALLS, "tuple", "get-tuple-element",
     "divide", "remainder", "compare", "select", "clamp", "not", "convert", "concatenate"})
_INT64_MIN = integer_bounds("s64")[0]  # type: ignore[index]


def integer_values(instr: HloInstruction) -> np.ndarray | None:
    """The values array instruction ``instr`` holds (an ``int64`` array of its dims; 0/1
    for ``pred``) when they follow from constants and iotas, in its computation or the
    computations it calls; None otherwise."""
    if not isinstance(instr.shape, Shape):
        return None
    value = Evaluator({}).value(instr)
    return None if value is None else value.astype(np.int64)


def integer_dtype(shape: object) -> np.dtype | None:
    """The numpy type of an integer or ``pred`` array shape of at most :data:`LIMIT`
    elements; None for any other shape."""
    if not isinstance(shape, Shape) or shape.element_type not in _DTYPES \
            or any(shape.dynamic) or int(np.prod(shape.dims, dtype=np.int64)) > LIMIT:
        return None
    return np.dtype(_DTYPES[shape.element_type])


class Evaluator:
    """Values of the instructions of one computation given ``arguments``: per parameter
    number, the value of each of its leaves (None: unknown; a missing parameter is
    unknown). Values are computed once, operands first, without recursion (a long chain of
    instructions costs no stack); only a call recurses, into a new evaluator (calls do not
    cycle: the parser rejects a module whose computations do)."""

    def __init__(self, arguments: Mapping[int, Sequence[Value | None]]) -> None:
        self.arguments = arguments
        self._memo: dict[HloInstruction, Leaves] = {}

    def value(self, instr: HloInstruction, leaf: int = 0) -> Value | None:
        """The value of leaf ``leaf`` of ``instr`` (an instruction of the computation)."""
        found = self.leaves(instr)
        return found[leaf] if 0 <= leaf < len(found) else None

    def leaves(self, instr: HloInstruction) -> Leaves:
        """The value of each leaf of ``instr``'s shape (None: unknown)."""
        if instr not in self._memo:
            self._evaluate(instr)
        return self._memo[instr]

    def _evaluate(self, target: HloInstruction) -> None:
        """Memoise ``target``'s value and those of the operands it needs, operands first."""
        entered: set[HloInstruction] = set()
        stack = [target]
        while stack:
            instr = stack[-1]
            if instr in self._memo:
                stack.pop()
                continue
            if instr not in entered and _needs_operands(instr):
                entered.add(instr)  # its operands first, then itself again
                # (an operand already entered would close a cycle: the parser rejects
                # those; here it would stay unknown)
                stack.extend(o for o in instr.operands if o not in entered)
                continue
            stack.pop()
            self._memo[instr] = self._compute(instr)

    def _operand(self, instr: HloInstruction) -> Leaves:
        found = self._memo.get(instr)
        return found if found is not None else (None,) * leaf_count(instr.shape)

    def _compute(self, instr: HloInstruction) -> Leaves:
        """``instr``'s value from its operands' (memoised, or unknown)."""
        op = instr.opcode
        unknown: Leaves = (None,) * leaf_count(instr.shape)
        if all(integer_dtype(s) is None for s in leaves(instr.shape)):
            return unknown
        if op == "parameter":
            given = self.arguments.get(instr.parameter_number or 0)
            return tuple(given) if given is not None and len(given) == len(unknown) \
                else unknown
        if op == "tuple":
            return tuple(v for o in instr.operands for v in self._operand(o))
        if op == "get-tuple-element":
            held = self._operand(instr.operands[0])
            try:
                span = element_leaves(instr.operands[0].shape, instr.tuple_index or 0)
            except IndexError:
                return unknown
            return tuple(held[lf] for lf in span)
        if op in _MOVES and len(instr.operands) == 1:
            return self._operand(instr.operands[0])
        if op in _CALLS:
            return self._called(instr, unknown)
        shape = instr.shape
        dtype = integer_dtype(shape)
        if dtype is None or not isinstance(shape, Shape):
            return unknown
        args = [self._operand(o) for o in instr.operands]
        if any(len(a) != 1 or a[0] is None for a in args):
            return unknown
        try:
            found = _array_op(instr, shape, [a[0] for a in args if a[0] is not None])
        except (ValueError, IndexError, TypeError, OverflowError):  # attributes that do not fit
            return unknown
        if found is None:
            return unknown
        value = np.asarray(found).astype(dtype)
        return (value,) if value.shape == shape.dims else unknown

    def _called(self, instr: HloInstruction, unknown: Leaves) -> Leaves:
        """The value of a ``fusion`` or ``call``: its computation run on the operands'."""
        try:
            comp = called_computation(instr)
        except Exception:  # a malformed call: its value is unknown
            return unknown
        if comp is None:
            return unknown
        inner = Evaluator({n: self._operand(o) for n, o in enumerate(instr.operands)})
        found = inner.leaves(comp.root)
        return found if len(found) == len(unknown) else unknown


def _needs_operands(instr: HloInstruction) -> bool:
    """Does ``instr``'s value follow from its operands' (so they are evaluated first)?"""
    return instr.opcode in _FROM_OPERANDS \
        and any(integer_dtype(s) is not None for s in leaves(instr.shape))


def _array_op(instr: HloInstruction, shape: Shape, args: list[Value]) -> np.ndarray | None:
    """An array-shaped integer instruction's value from its operands' (not yet cast to its
    element type); None when the op is not one evaluated here."""
    op, dims = instr.opcode, shape.dims
    if op == "constant":
        return None if instr.literal is None else np.asarray(instr.literal, dtype=np.int64)
    if op == "iota":
        axis = instr.attr_int("iota_dimension", 0)
        if axis is None or not 0 <= axis < len(dims):
            return None
        line = np.arange(dims[axis]).reshape([-1 if d == axis else 1 for d in range(len(dims))])
        return np.broadcast_to(line, dims)
    wide = [a.astype(np.int64) for a in args]  # pred as 0/1
    n = len(args)
    if op == "concatenate" and instr.dimensions and n:
        return np.concatenate(wide, axis=instr.dimensions[0])
    if n == 1:
        return _one_operand(instr, shape, args[0], wide[0])
    if op in _BINARY and n == 2:
        return _BINARY[op](wide[0], wide[1])
    if op in ("divide", "remainder") and n == 2:
        return _division(op, wide[0], wide[1])
    if op == "compare" and n == 2 and instr.comparison_direction in _COMPARE:
        return _COMPARE[instr.comparison_direction](wide[0], wide[1])
    if op == "select" and n == 3:
        return np.where(wide[0] != 0, wide[1], wide[2])
    if op == "clamp" and n == 3:
        return np.minimum(np.maximum(wide[1], wide[0]), wide[2])
    return None


def _one_operand(instr: HloInstruction, shape: Shape, a: Value, wide: np.ndarray
                 ) -> np.ndarray | None:
    """The value of a one-operand op on ``a`` (``wide``: ``a`` as ``int64``)."""
    op = instr.opcode
    if op == "convert":
        return a != 0 if shape.element_type == "pred" else wide
    if op == "not":
        return np.logical_not(a) if a.dtype == np.bool_ else np.invert(wide)
    if op in _UNARY:
        return None if a.dtype == np.bool_ else _UNARY[op](wide)
    if op == "reshape":
        return a.reshape(shape.dims)
    if op == "bitcast":
        return _bitcast(a, instr.operands[0].shape, shape)
    if op == "broadcast" and instr.dimensions is not None:
        return _broadcast(a, instr.dimensions, shape.dims)
    if op == "transpose" and instr.dimensions is not None:
        return a.transpose(instr.dimensions)
    if op == "reverse" and instr.dimensions is not None:
        return np.flip(a, tuple(instr.dimensions))
    if op == "slice" and instr.slice is not None and len(instr.slice) == a.ndim:
        return a[tuple(slice(s.start, s.limit, s.stride) for s in instr.slice)]
    return None


def _division(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """C's truncating division and its remainder (the sign of the dividend), as HLO's;
    None for a division by zero, or of ``s64``'s least value by -1 (it overflows ``int64``)."""
    a, b = np.broadcast_arrays(a, b)
    if (b == 0).any() or ((a == _INT64_MIN) & (b == -1)).any():
        return None
    floor = a // b
    quotient = floor + ((a - floor * b != 0) & ((a < 0) != (b < 0)))
    return quotient if op == "divide" else a - quotient * b


def _bitcast(a: Value, source: object, shape: Shape) -> np.ndarray | None:
    """A ``bitcast`` that keeps the element type and tiles neither layout: the elements in
    memory order, read back in the result's memory order."""
    if not isinstance(source, Shape) or source.element_type != shape.element_type:
        return None
    source_order, order = _major_to_minor(source), _major_to_minor(shape)
    if source_order is None or order is None:
        return None
    memory = a.transpose(source_order).reshape([shape.dims[d] for d in order])
    return memory.transpose(np.argsort(order))


def _major_to_minor(shape: Shape) -> tuple[int, ...] | None:
    """The dimensions of ``shape`` from the slowest-varying in memory; None when its layout
    tiles or packs elements."""
    layout = shape.layout_or_default
    if layout.tiles or layout.element_size_in_bits:
        return None
    return tuple(reversed(layout.minor_to_major))


def _broadcast(a: Value, dimensions: Sequence[int], dims: tuple[int, ...]
               ) -> np.ndarray | None:
    """``a`` placed along ``dimensions`` of ``dims`` and repeated along the others."""
    if len(dimensions) != a.ndim or any(not 0 <= d < len(dims) for d in dimensions):
        return None
    order = sorted(range(len(dimensions)), key=lambda k: dimensions[k])
    view = [1] * len(dims)
    for k, d in enumerate(sorted(dimensions)):
        view[d] = a.shape[order[k]]
    return np.broadcast_to(a.transpose(order).reshape(view), dims)
