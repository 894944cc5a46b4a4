"""The integer values instructions hold before the program runs: the index tables a scatter
reads (``jnp.array([1, 3])``, ``jnp.arange(4)``, JAX's negative-index fix-up
``select(i < 0, i + n, i)`` on them), a loop's counter and what is computed from it.

:class:`Evaluator` computes the values of the instructions of one computation from
constants, iotas and the parameter leaves it is given (any other parameter leaf is
unknown), through

* integer and ``pred`` arithmetic: ``add``, ``subtract``, ``multiply``, ``divide``,
  ``remainder`` (C's truncating division, as HLO's), ``maximum``, ``minimum``, ``and``,
  ``or``, ``xor``, ``not``, ``negate``, ``abs``, ``sign``, ``convert``, ``compare``,
  ``select``, ``clamp``, the shifts (an amount of the type's width or more shifts every
  bit out, as HLO's);
* moves of small arrays: ``copy``, ``reshape``, ``bitcast`` (untiled layouts), ``broadcast``,
  ``transpose``, ``reverse``, ``slice``, ``concatenate``, ``pad``, ``dynamic-slice`` and
  ``dynamic-update-slice`` (starts clamped, as HLO clamps them);
* integer reductions whose reducer is one ``add``, ``multiply``, ``maximum``, ``minimum``,
  ``and``, ``or`` or ``xor`` of its two parameters: ``reduce`` and ``reduce-window`` of one
  input (a ``cumsum``), and ``scatter`` of one operand (also with a reducer that keeps the
  update, when no two updates land on one element: their order is undefined). The init
  value must be the op's identity, unless applying it again changes nothing (``maximum``,
  ``minimum``, ``and``, ``or``): XLA may apply it any number of times;
* floating-point values where nothing rounds them: constants, iotas, the moves above,
  ``select``, ``compare`` (not ``TOTALORDER``) and exact ``convert``\\ s (``jnp.triu`` of a
  constant, compared with zero, is a mask known before the run);
* tuples (``tuple``, ``get-tuple-element``, and ``copy``, ``opt-barrier``, ``domain`` of a
  tuple) and called computations (``fusion``, ``call``), run on their operands' values.

:func:`integer_values` is the simple entry point: the values of one array instruction with
every parameter unknown.

Every value is a numpy array of the instruction's own element type (``np.bool_`` for
``pred``), so arithmetic, done in ``int64``, wraps around at the element width when cast
back, as HLO's does. What depends on an unknown value, on floating-point arithmetic, on an
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
from symidx.hlo.same_value import REDUCERS
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
_FLOATS: dict[str, type[np.floating]] = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
_MOVES = PASSES_WHOLE  # the value, whatever its shape
_CALLS = frozenset({"fusion", "call"})
_SHIFTS = frozenset({"shift-left", "shift-right-logical", "shift-right-arithmetic"})
#: Reductions whose reducer is one of :data:`_BINARY` on its two parameters.
_REDUCTIONS = frozenset({"reduce", "reduce-window", "scatter"})
#: Ops whose value follows from their operands' (every other op is unknown, its operands
#: not even evaluated).
_FROM_OPERANDS = frozenset(
    {*_BINARY, *_UNARY, *_MOVES, *MOVES_ELEMENTS, *_CALLS, *_SHIFTS, *_REDUCTIONS, "tuple",
     "get-tuple-element", "divide", "remainder", "compare", "select", "clamp", "not",
     "convert", "concatenate", "pad", "dynamic-slice", "dynamic-update-slice"})
#: Ops evaluated on floating-point values: those that move or pick values, never round.
_ON_FLOATS = frozenset(
    {*_MOVES, *MOVES_ELEMENTS, *_CALLS, "tuple", "get-tuple-element", "parameter",
     "constant", "iota", "select", "convert", "concatenate", "pad", "dynamic-slice",
     "dynamic-update-slice"})
#: The combiners whose repeated application with the same value changes nothing.
_IDEMPOTENT = frozenset({"maximum", "minimum", "and", "or"})
_INT64_MIN = integer_bounds("s64")[0]  # type: ignore[index]


def integer_values(instr: HloInstruction) -> np.ndarray | None:
    """The values array instruction ``instr`` holds (an ``int64`` array of its dims; 0/1
    for ``pred``) when they follow from constants and iotas, in its computation or the
    computations it calls; None otherwise."""
    if not isinstance(instr.shape, Shape):
        return None
    return as_integers(Evaluator({}).value(instr))


def as_integers(value: Value | None) -> np.ndarray | None:
    """An integer or ``pred`` value as an ``int64`` array; None for a floating-point one
    (or None)."""
    return None if value is None or value.dtype.kind not in "biu" else value.astype(np.int64)


def _value_dtype(shape: object, op: str) -> np.dtype | None:
    """The numpy type of the values an ``op`` of ``shape`` is evaluated in: an integer or
    ``pred`` array's (:func:`integer_dtype`), or a floating-point array's for the ops that
    do not round (:data:`_ON_FLOATS`); None when it is not evaluated."""
    found = integer_dtype(shape)
    if found is not None or op not in _ON_FLOATS or not isinstance(shape, Shape):
        return found
    kind = _FLOATS.get(shape.element_type)
    if kind is None or any(shape.dynamic) \
            or int(np.prod(shape.dims, dtype=np.int64)) > LIMIT:
        return None
    return np.dtype(kind)


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
        if all(_value_dtype(s, op) is None for s in leaves(instr.shape)):
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
        dtype = _value_dtype(shape, op)
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
        and any(_value_dtype(s, instr.opcode) is not None for s in leaves(instr.shape))


def _array_op(instr: HloInstruction, shape: Shape, args: list[Value]) -> np.ndarray | None:
    """An array-shaped instruction's value from its operands' (not yet cast to its element
    type); None when the op is not one evaluated here. Integer operands are widened to
    ``int64`` (pred as 0/1), floating-point ones kept as they are."""
    op, dims = instr.opcode, shape.dims
    if op == "constant":
        return _constant(instr, shape)
    if op == "iota":
        axis = instr.attr_int("iota_dimension", 0)
        if axis is None or not 0 <= axis < len(dims):
            return None
        kind = _FLOATS.get(shape.element_type)
        if kind is not None and dims[axis] > 2 ** (np.finfo(kind).nmant + 1):
            return None  # past the integers the type holds exactly: rounded
        line = np.arange(dims[axis]).reshape([-1 if d == axis else 1 for d in range(len(dims))])
        return np.broadcast_to(line, dims)
    wide = [a.astype(np.int64) if a.dtype.kind in "biu" else a for a in args]
    n = len(args)
    if op == "concatenate" and instr.dimensions and n:
        return np.concatenate(wide, axis=instr.dimensions[0])
    if op in ("dynamic-slice", "dynamic-update-slice", "pad"):
        return _placed(instr, shape, wide)
    if op in _REDUCTIONS:
        return _reduction(instr, shape, wide)
    if n == 1:
        return _one_operand(instr, shape, args[0], wide[0])
    if any(a.dtype.kind == "f" for a in wide) and op not in ("compare", "select"):
        return None  # floating-point arithmetic rounds: not evaluated
    if op in _BINARY and n == 2:
        return _BINARY[op](wide[0], wide[1])
    if op in ("divide", "remainder") and n == 2:
        return _division(op, wide[0], wide[1])
    if op in _SHIFTS and n == 2:
        return _shift(op, shape.element_type, wide[0], wide[1])
    if op == "compare" and n == 2 and instr.comparison_direction in _COMPARE:
        if wide[0].dtype.kind == "f" and instr.attributes.get("type") == "TOTALORDER":
            return None  # orders -0 before +0 and NaNs by sign: not numpy's order
        return _COMPARE[instr.comparison_direction](wide[0], wide[1])
    if op == "select" and n == 3:
        return np.where(wide[0] != 0, wide[1], wide[2])
    if op == "clamp" and n == 3:
        return np.minimum(np.maximum(wide[1], wide[0]), wide[2])
    return None


def _constant(instr: HloInstruction, shape: Shape) -> np.ndarray | None:
    """A constant's values; a floating-point one only when the literal's values are held
    exactly by its type (no rounding of the text to decide)."""
    if instr.literal is None:
        return None
    if shape.element_type not in _FLOATS:
        return np.asarray(instr.literal, dtype=np.int64)
    wide = np.asarray(instr.literal, dtype=np.float64)
    narrow = wide.astype(_FLOATS[shape.element_type])
    same = (narrow.astype(np.float64) == wide) | (np.isnan(wide) & np.isnan(narrow))
    return narrow if same.all() else None


def _one_operand(instr: HloInstruction, shape: Shape, a: Value, wide: np.ndarray
                 ) -> np.ndarray | None:
    """The value of a one-operand op on ``a`` (``wide``: ``a`` as ``int64``, a
    floating-point ``a`` as it is)."""
    op = instr.opcode
    if op == "convert":
        return _convert(a, shape)
    if a.dtype.kind == "f" and op not in MOVES_ELEMENTS:
        return None  # floating-point arithmetic rounds: not evaluated
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


def _convert(a: Value, shape: Shape) -> np.ndarray | None:
    """A ``convert`` to ``shape``'s element type, when nothing is rounded or out of range:
    to ``pred`` (non-zero, NaN included, is true), between integer types (wrapping, as
    HLO's), or to or from a floating-point type when every value is held exactly."""
    target = shape.element_type
    if target == "pred":
        return a != 0
    if a.dtype.kind != "f" and target not in _FLOATS:
        return a.astype(np.int64)
    if target in _FLOATS:
        out = a.astype(_FLOATS[target])
        back = out.astype(a.dtype)
        same = (back == a) | (np.isnan(back) & np.isnan(out) if a.dtype.kind == "f"
                              else np.zeros(a.shape, dtype=bool))
        return out if same.all() else None
    bounds = integer_bounds(target)
    wide = a.astype(np.float64)  # compared with the bounds exactly, whatever the type
    if bounds is None or not np.isfinite(wide).all() or (wide != np.trunc(wide)).any() \
            or (wide < bounds[0]).any() or (wide > bounds[1]).any() \
            or (np.abs(wide) >= 2.0 ** 62).any():  # no s64 bound rounds up past int64
        return None
    return wide.astype(np.int64)


def _shift(op: str, element_type: str, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """HLO's shifts of ``a`` by ``b`` bits at ``element_type``'s width: an amount outside
    ``[0, width - 1]`` shifts every bit out (0; the sign's bits for an arithmetic right
    shift)."""
    if not element_type[1:].isdigit() or element_type[0] not in "su":
        return None
    bits = int(element_type[1:])
    if bits > 32:
        return None  # keep every intermediate inside int64
    a, b = np.broadcast_arrays(a, b)
    unsigned = np.mod(a, 1 << bits)
    signed = unsigned - ((unsigned >> (bits - 1)) << bits)
    out_of_range = (b < 0) | (b >= bits)
    amount = np.where(out_of_range, 0, b)
    if op == "shift-left":
        return np.where(out_of_range, 0, unsigned << amount)
    if op == "shift-right-logical":
        return np.where(out_of_range, 0, unsigned >> amount)
    return np.where(out_of_range, np.where(signed < 0, -1, 0), signed >> amount)


def _placed(instr: HloInstruction, shape: Shape, args: list[np.ndarray]) -> np.ndarray | None:
    """``dynamic-slice``, ``dynamic-update-slice`` (scalar starts clamped so the slice fits,
    as HLO clamps them) and ``pad`` (negative padding crops)."""
    op, a = instr.opcode, args[0]
    if op == "pad":
        if len(args) != 2 or instr.padding is None or len(instr.padding) != a.ndim \
                or args[1].ndim:
            return None
        return _padded(a, args[1], [(p.low, p.high, p.interior) for p in instr.padding])
    first = 2 if op == "dynamic-update-slice" else 1
    starts = args[first:]
    if len(starts) != a.ndim or any(s.ndim for s in starts):
        return None
    sizes = instr.dynamic_slice_sizes if op == "dynamic-slice" else args[1].shape
    if sizes is None or len(sizes) != a.ndim or any(k > n for k, n in zip(sizes, a.shape)):
        return None
    at = tuple(slice(c, c + k) for c, k in zip(
        (min(max(int(s), 0), n - k) for s, n, k in zip(starts, a.shape, sizes)), sizes))
    if op == "dynamic-slice":
        return a[at]
    if args[1].dtype.kind != a.dtype.kind:
        return None
    out = a.copy()
    out[at] = args[1]
    return out


def _padded(a: np.ndarray, value: np.ndarray, widths: Sequence[tuple[int, int, int]]
            ) -> np.ndarray | None:
    """``a`` with ``interior`` copies of ``value`` between its elements and ``low`` and
    ``high`` ones at the ends of each dimension (a negative count crops)."""
    if any(interior < 0 for _, _, interior in widths):
        return None
    spread = [(n - 1) * (interior + 1) + 1 if n else 0
              for n, (_, _, interior) in zip(a.shape, widths)]
    out = np.full(spread, value, dtype=np.result_type(a, value))
    out[tuple(slice(None, None, interior + 1) for _, _, interior in widths)] = a
    for axis, (low, high, _) in enumerate(widths):
        ends = []
        for count in (low, high):
            shape = list(out.shape)
            shape[axis] = max(count, 0)
            ends.append(np.full(shape, value, dtype=out.dtype))
        out = np.concatenate([ends[0], out, ends[1]], axis=axis)
        size = out.shape[axis]
        keep = slice(max(-low, 0), size - max(-high, 0))
        if keep.start > keep.stop:
            return None
        out = out[(slice(None),) * axis + (keep,)]
    return out


def _combiner(instr: HloInstruction) -> str | None:
    """The op of :data:`symidx.hlo.same_value.REDUCERS` (associative and commutative) a
    reducer computation (``to_apply``) applies to its two parameters, or ``"set"`` for one
    that returns the update (parameter 1); None otherwise."""
    called = instr.called_computations.get("to_apply", ())
    if len(called) != 1 or len(called[0].parameters) != 2:
        return None
    comp = called[0]
    first, second = comp.parameters
    root = comp.root
    if root is second:
        return "set"
    if root.opcode in REDUCERS and len(root.operands) == 2 \
            and {id(o) for o in root.operands} == {id(first), id(second)}:
        return root.opcode  # associative and commutative: any order gives the same
    return None


def _identity_ok(op: str, init: np.ndarray, dtype: np.dtype) -> bool:
    """May XLA apply ``init`` any number of times without changing the result: an
    idempotent op, or ``init`` is ``op``'s identity at ``dtype``?"""
    if op in _IDEMPOTENT:
        return True
    identity = {"add": 0, "or": 0, "xor": 0, "multiply": 1}.get(op)
    return identity is not None and bool((init == identity).all())


def _reduction(instr: HloInstruction, shape: Shape, args: list[np.ndarray]
               ) -> np.ndarray | None:
    """``reduce`` and ``reduce-window`` of one integer input, ``scatter`` of one integer
    operand, with a reducer of :func:`_combiner`."""
    op = _combiner(instr)
    if op is None or any(a.dtype.kind not in "biu" for a in args):
        return None
    dtype = integer_dtype(shape)
    if dtype is None or (dtype == np.bool_ and op in ("add", "multiply")):
        return None
    if instr.opcode == "scatter":
        return _scatter(instr, shape, args, op)
    if op == "set" or len(args) != 2 or args[1].ndim or not _identity_ok(op, args[1], dtype):
        return None
    fn, x, init = _BINARY[op], args[0], args[1]
    if instr.opcode == "reduce":
        if instr.dimensions is None or any(not 0 <= d < x.ndim for d in instr.dimensions):
            return None
        axes = tuple(instr.dimensions)
        if any(x.shape[d] == 0 for d in axes):
            return np.broadcast_to(init, shape.dims)
        ufunc = getattr(np, f"bitwise_{op}", None) or getattr(np, op)  # and, or, xor
        return fn(np.asarray(ufunc.reduce(x, axis=axes)), init)
    return _reduce_window(instr, x, init, fn)


def _reduce_window(instr: HloInstruction, x: np.ndarray, init: np.ndarray,
                   fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray | None:
    """A ``reduce-window``: ``x`` dilated and padded with ``init``, each window's elements
    combined, then ``init`` (an identity, or an idempotent op's)."""
    window = instr.window
    if window is None or len(window) != x.ndim:
        return None
    spread = _padded(x, init, [(w.padding_low, w.padding_high, w.base_dilation - 1)
                               for w in window])
    if spread is None:
        return None
    out = [(n - (w.size - 1) * w.window_dilation - 1) // w.stride + 1 if w.size else 0
           for n, w in zip(spread.shape, window)]
    positions = int(np.prod([w.size for w in window], dtype=np.int64))
    if any(k <= 0 for k in out) or positions * int(np.prod(out)) > 16 * LIMIT:
        return None
    result: np.ndarray | None = None
    for offset in np.ndindex(*(w.size for w in window)):
        part = spread[tuple(slice(o * w.window_dilation,
                                  o * w.window_dilation + (k - 1) * w.stride + 1, w.stride)
                            for o, w, k in zip(offset, window, out))]
        result = part if result is None else fn(result, part)
    return None if result is None else fn(result, init)


def _scatter(instr: HloInstruction, shape: Shape, args: list[np.ndarray], op: str
             ) -> np.ndarray | None:
    """A ``scatter`` of one operand: each update window whose start fits is combined into
    the operand (a window that does not fit is skipped, as HLO skips it); with ``"set"``,
    None where two updates land on one element (their order is undefined)."""
    numbers = instr.scatter_dimension_numbers
    if numbers is None or len(args) != 3:
        return None
    operand, indices, updates = args
    d = numbers
    vector_dim = d.index_vector_dim
    if vector_dim == indices.ndim:
        indices = indices[..., None]
    batch = [q for q in range(indices.ndim) if q != vector_dim]
    scatter_dims = [u for u in range(updates.ndim) if u not in d.update_window_dims]
    window = [j for j in range(operand.ndim)
              if j not in d.inserted_window_dims and j not in d.input_batching_dims]
    if len(scatter_dims) != len(batch) or len(window) != len(d.update_window_dims) \
            or indices.shape[vector_dim] != len(d.scatter_dims_to_operand_dims):
        return None
    sizes = [1] * operand.ndim
    for j, u in zip(window, d.update_window_dims):
        sizes[j] = updates.shape[u]
    out = operand.copy()
    written = np.zeros(operand.shape, dtype=bool)
    for u in np.ndindex(*updates.shape):
        position = {q: u[s] for q, s in zip(batch, scatter_dims)}
        start = [0] * operand.ndim
        for k, j in enumerate(d.scatter_dims_to_operand_dims):
            element = tuple(k if q == vector_dim else position[q] for q in range(indices.ndim))
            start[j] = int(indices[element])
        for j, q in zip(d.input_batching_dims, d.scatter_indices_batching_dims):
            start[j] = position[q]
        if not all(0 <= c <= n - k for c, n, k in zip(start, operand.shape, sizes)):
            continue  # the window does not fit: skipped
        target = list(start)
        for j, w in zip(window, d.update_window_dims):
            target[j] += u[w]
        at = tuple(target)
        if op == "set":
            if written[at]:
                return None
            out[at] = updates[u]
        else:
            out[at] = _BINARY[op](out[at], updates[u])
        written[at] = True
    return out
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
