"""The integer values an instruction holds whatever the run, folded from the constants and
iotas of its own computation: the index tables of a scatter written as ``jnp.array([1, 3])``
or ``jnp.arange(4)`` reach it through broadcasts, reshapes, concatenates and JAX's
negative-index fix-up (``select(i < 0, i + n, i)``), all of which fold here.

Integer and ``pred`` arrays of at most :data:`LIMIT` elements only. Arithmetic wraps as in
XLA (two's complement at the element type's width); anything else (a parameter, a float,
a division, a called computation) is not known.

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

import re
from collections.abc import Callable

import numpy as np

from symidx.hlo.ir import HloInstruction
from symidx.hlo.shape import Shape

__all__ = ["LIMIT", "integer_values"]

#: Elements an array may have to be folded.
LIMIT = 1 << 14
_DEPTH = 64  # instructions followed back from the one asked about
_TYPE = re.compile(r"([su])(8|16|32|64)|pred")

_COMPARE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
    "GT": np.greater, "GE": np.greater_equal}
_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply,
    "maximum": np.maximum, "minimum": np.minimum, "and": np.bitwise_and,
    "or": np.bitwise_or, "xor": np.bitwise_xor}


def integer_values(instr: HloInstruction) -> np.ndarray | None:
    """The values ``instr`` holds (an ``int64`` array of its dims; 0/1 for ``pred``), when
    they follow from constants and iotas alone; None otherwise."""
    return _values(instr, _DEPTH, {})


def _element_type(instr: HloInstruction) -> str | None:
    shape = instr.shape
    if not isinstance(shape, Shape) or not _TYPE.fullmatch(shape.element_type) \
            or shape.element_type == "u64" or int(np.prod(shape.dims)) > LIMIT:
        return None
    return shape.element_type


def _wrap(values: np.ndarray, element_type: str) -> np.ndarray:
    """``values`` as the element type holds them (two's complement wrap-around)."""
    if element_type == "pred":
        return (values != 0).astype(np.int64)
    bits = int(element_type[1:])
    if bits == 64:
        return values.astype(np.int64)
    span = 1 << bits
    low = -(span >> 1) if element_type[0] == "s" else 0
    return (values - low) % span + low


def _values(instr: HloInstruction, depth: int, memo: dict[int, np.ndarray | None]
            ) -> np.ndarray | None:
    if id(instr) not in memo:
        element_type = _element_type(instr)
        result = None
        if element_type is not None and depth > 0:
            try:
                result = _fold(instr, element_type, depth, memo)
            except (ValueError, IndexError, TypeError):  # attributes that do not fit
                result = None
        if result is not None and element_type is not None:
            dims = tuple(instr.shape.dims)  # type: ignore[union-attr]
            result = _wrap(result.astype(np.int64), element_type) \
                if result.shape == dims else None
        memo[id(instr)] = result
    return memo[id(instr)]


def _fold(instr: HloInstruction, element_type: str, depth: int,
          memo: dict[int, np.ndarray | None]) -> np.ndarray | None:
    """One instruction's values from its operands' (None: not known)."""
    op = instr.opcode
    dims = tuple(instr.shape.dims)  # type: ignore[union-attr]
    if op == "constant":
        return None if instr.literal is None else np.array(instr.literal, dtype=np.int64)
    if op == "iota":
        axis = instr.attr_int("iota_dimension", 0)
        if axis is None or not 0 <= axis < len(dims):
            return None
        line = np.arange(dims[axis]).reshape([-1 if d == axis else 1 for d in range(len(dims))])
        return np.broadcast_to(line, dims)
    args = [_values(x, depth - 1, memo) for x in instr.operands]
    if not args or any(a is None for a in args):
        return None
    a: list[np.ndarray] = args  # type: ignore[assignment]
    if op in ("copy", "convert") and len(a) == 1:
        return a[0]
    if op == "reshape":
        return a[0].reshape(dims)
    if op == "broadcast" and instr.dimensions is not None:
        placed = a[0].reshape([dims[d] if d in instr.dimensions else 1
                               for d in range(len(dims))]) if a[0].ndim else a[0]
        return np.broadcast_to(placed, dims)
    if op == "transpose" and instr.dimensions is not None:
        return a[0].transpose(instr.dimensions)
    if op == "reverse" and instr.dimensions is not None:
        return np.flip(a[0], instr.dimensions)
    if op == "slice" and instr.slice is not None:
        return a[0][tuple(slice(s.start, s.limit, s.stride) for s in instr.slice)]
    if op == "concatenate" and instr.dimensions:
        return np.concatenate(a, axis=instr.dimensions[0])
    if op == "negate":
        return -a[0]
    if op == "not":
        return 1 - a[0] if element_type == "pred" else ~a[0]
    if op in _BINARY and len(a) == 2:
        return _BINARY[op](a[0], a[1])
    if op == "compare" and instr.comparison_direction in _COMPARE:
        return _COMPARE[instr.comparison_direction](a[0], a[1])
    if op == "select" and len(a) == 3:
        return np.where(a[0] != 0, a[1], a[2])
    if op == "clamp" and len(a) == 3:
        return np.minimum(np.maximum(a[1], a[0]), a[2])
    return None
