"""IntTuples: an int, or a (possibly nested) tuple of IntTuples -- the shapes, strides and
coordinates of nested layouts (CuTe ``int_tuple.hpp``; NVIDIA cutlass ``python/pycute``).

The helpers keep CuTe's names and meanings: ``product``, ``flatten``, ``prefix_product``,
``inner_product``, ``elem_scale``, ``shape_div``, ``ceil_div``, ``crd2idx``, ``idx2crd``,
``crd2crd``, ``slice_`` / ``dice`` (``None`` plays CuTe's ``_``), ``congruent`` and
``compatible``. Arguments that break an operation's precondition raise
:class:`~symidx.errors.MapError` (pycute uses bare ``assert``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeAlias

from symidx import _arith
from symidx.errors import MapError

IntTuple: TypeAlias = int | tuple["IntTuple", ...]
"""An int or a (possibly nested) tuple of ints."""

Coord: TypeAlias = int | None | tuple["Coord", ...]
"""A coordinate; ``None`` (CuTe's ``_``) keeps a mode when slicing."""

__all__ = [
    "Coord",
    "E",
    "IntTuple",
    "Integer",
    "ScaledBasis",
    "ceil_div",
    "check_int_tuple",
    "compatible",
    "congruent",
    "crd2crd",
    "crd2idx",
    "depth",
    "dice",
    "elem_scale",
    "flatten",
    "format_int_tuple",
    "has_none",
    "idx2crd",
    "inner_product",
    "is_int",
    "is_tuple",
    "prefix_product",
    "product",
    "product_each",
    "rank",
    "shape_div",
    "signum",
    "slice_",
    "suffix_product",
    "tuple_max",
    "unflatten",
]


def is_int(x: object) -> bool:
    """True for a plain int (bool excluded)."""
    return isinstance(x, int) and not isinstance(x, bool)


class _IntegerMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return is_int(obj)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, int) and not issubclass(sub, bool)


class Integer(metaclass=_IntegerMeta):
    """The type of an IntTuple's leaves, for ``isinstance`` / ``issubclass`` (pycute's
    ``Integer``): ``int`` and its subclasses except ``bool``.

    >>> isinstance(3, Integer), isinstance(True, Integer), issubclass(int, Integer)
    (True, False, True)
    """


@dataclass(frozen=True, slots=True)
class ScaledBasis:
    """CuTe's basis stride ``value@mode`` (``E<i>`` scaled): a stride that adds ``value``
    to coordinate ``mode`` of a multi-dimensional result instead of to an offset. ``mode``
    is a path: ``(1,)`` is mode 1, ``(1, 0)`` mode 0 of mode 1.

    A layout whose strides are basis elements maps a coordinate to a coordinate (CuTe's
    identity layouts): ``Layout((4, 2), (E(0), E(1)))(3, 1) == (3, 1)``.
    """

    value: int
    mode: tuple[int, ...]

    def __post_init__(self) -> None:
        if not is_int(self.value) or not self.mode or not all(
                is_int(m) and m >= 0 for m in self.mode):
            raise MapError(f"a basis stride is an int value and a path of non-negative modes, "
                           f"got {self.value!r}@{self.mode!r}")

    def __mul__(self, k: object) -> ScaledBasis:
        if not isinstance(k, int) or isinstance(k, bool):
            return NotImplemented
        return ScaledBasis(self.value * k, self.mode)

    __rmul__ = __mul__

    def __add__(self, other: object) -> ArithTuple:
        return ArithTuple.of(self) + other

    __radd__ = __add__

    def __str__(self) -> str:
        return f"{self.value}@" + "@".join(str(m) for m in reversed(self.mode))


def E(*mode: int) -> ScaledBasis:  # noqa: N802  (CuTe's name)
    """The unit basis stride of mode ``mode`` (CuTe's ``E<i>``; ``E(1, 0)`` is ``E<1,0>``)."""
    return ScaledBasis(1, tuple(mode))


class ArithTuple(tuple[Any, ...]):
    """A coordinate that adds element by element (CuTe's ``ArithmeticTuple``): the value of
    a layout with basis strides. Shorter tuples are padded with zeros; an int 0 is the
    neutral element; nested modes are nested ArithTuples."""

    @staticmethod
    def of(b: ScaledBasis) -> Any:
        value: object = b.value
        for m in reversed(b.mode):
            value = ArithTuple((0,) * m + (value,))
        return value

    def __add__(self, other: object) -> ArithTuple:
        if isinstance(other, ScaledBasis):
            other = ArithTuple.of(other)
        if is_int(other):
            if other == 0:
                return self
            raise MapError(f"cannot add the int {other} to the coordinate {self}: a layout "
                           f"mixes basis and int strides")
        if not isinstance(other, tuple):
            return NotImplemented
        n = max(len(self), len(other))
        a = tuple(self) + (0,) * (n - len(self))
        b = tuple(other) + (0,) * (n - len(other))
        return ArithTuple(_add_leaf(x, y) for x, y in zip(a, b))

    __radd__ = __add__

    def __repr__(self) -> str:
        return tuple.__repr__(self)


def _add_leaf(x: object, y: object) -> object:
    if isinstance(x, tuple) or isinstance(y, tuple):
        left = x if isinstance(x, ArithTuple) else ArithTuple(x if isinstance(x, tuple) else ())
        if is_int(x) and x != 0 or is_int(y) and y != 0:
            raise MapError(f"cannot add {x} and {y}: a mode is both an int and a tuple")
        return left + (y if isinstance(y, tuple) else 0)
    return x + y  # type: ignore[operator]


def is_tuple(x: object) -> bool:
    """True for a tuple (an IntTuple with modes)."""
    return isinstance(x, tuple)


def check_int_tuple(x: object, what: str) -> None:
    """Raise :class:`MapError` unless ``x`` is an int or a non-empty nested tuple of them."""
    if isinstance(x, tuple):
        if not x:
            raise MapError(f"{what} contains an empty tuple")
        for child in x:
            check_int_tuple(child, what)
    elif not is_int(x):
        raise MapError(f"{what} must be an int or a tuple of them, got {x!r}")


def format_int_tuple(t: object) -> str:
    """CuTe's text: ``4``, ``(4,2)``, ``((4,2),(4,3))``; a 1-tuple prints as ``(4)``;
    ``None`` (CuTe's ``_``) as ``_``; a basis stride as ``1@0``."""
    if isinstance(t, tuple):
        return "(" + ",".join(format_int_tuple(child) for child in t) + ")"
    return "_" if t is None else str(t)


def rank(t: IntTuple) -> int:
    """Number of top-level modes (1 for an int)."""
    return len(t) if isinstance(t, tuple) else 1


def depth(t: IntTuple) -> int:
    """Nesting depth: 0 for an int, 1 for a flat tuple, ..."""
    if isinstance(t, tuple):
        return 1 + max((depth(child) for child in t), default=0)
    return 0


def product(t: IntTuple) -> int:
    """Product of all the ints in ``t``."""
    if isinstance(t, tuple):
        return math.prod(product(child) for child in t)
    return t


def product_each(t: IntTuple) -> IntTuple:
    """The product of each top-level mode: ``((2,3),4) -> (6,4)``; an int is itself."""
    return tuple(product(child) for child in t) if isinstance(t, tuple) else t


def tuple_max(t: IntTuple) -> int:
    """The largest int in ``t``."""
    return max(flatten(t))


def signum(a: int) -> int:
    """-1, 0 or 1, the sign of ``a``."""
    return (a > 0) - (a < 0)


def flatten(t: IntTuple) -> tuple[int, ...]:
    """The ints of ``t`` in order, nesting removed."""
    if isinstance(t, tuple):
        return tuple(v for child in t for v in flatten(child))
    return (t,)


def unflatten(flat: tuple[int, ...], profile: IntTuple) -> IntTuple:
    """Rebuild ``profile``'s nesting from the ints of ``flat`` (inverse of :func:`flatten`)."""
    if len(flat) != len(flatten(profile)):
        raise MapError(f"{len(flat)} values cannot fill the profile {format_int_tuple(profile)}")
    values = iter(flat)

    def build(p: IntTuple) -> IntTuple:
        if isinstance(p, tuple):
            return tuple(build(child) for child in p)
        return next(values)

    return build(profile)


def congruent(a: object, b: object) -> bool:
    """True when ``a`` and ``b`` have the same nesting."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return not isinstance(a, tuple) and not isinstance(b, tuple)


def compatible(a: IntTuple, b: IntTuple) -> bool:
    """CuTe's ``compatible(a, b)``: every coordinate of ``a`` is one of ``b`` -- the sizes
    agree and ``b`` refines ``a`` (where ``a`` has an int, ``b`` may have a tuple)."""
    if isinstance(a, tuple):
        return (isinstance(b, tuple) and len(a) == len(b)
                and all(compatible(x, y) for x, y in zip(a, b)))
    return a == product(b)


def prefix_product(t: IntTuple, init: IntTuple = 1) -> IntTuple:
    """Exclusive prefix product of ``t``, congruent to it: the compact column-major strides.
    A tuple ``init`` gives each mode its own starting value."""
    if isinstance(t, tuple):
        if isinstance(init, tuple):
            if len(init) != len(t):
                raise MapError(f"prefix_product: init {format_int_tuple(init)} does not match "
                               f"{format_int_tuple(t)}")
            return tuple(prefix_product(x, i) for x, i in zip(t, init))
        out = []
        running = init
        for child in t:
            out.append(prefix_product(child, running))
            running *= product(child)
        return tuple(out)
    if isinstance(init, tuple):
        raise MapError(f"prefix_product: a tuple init {format_int_tuple(init)} for an int")
    return init


def suffix_product(t: IntTuple, init: int = 1) -> IntTuple:
    """Exclusive suffix product of ``t``: the compact row-major strides."""
    flat = flatten(t)
    strides = []
    running = init
    for s in reversed(flat):
        strides.append(running)
        running *= s
    return unflatten(tuple(reversed(strides)), t)


def inner_product(a: IntTuple, b: IntTuple) -> int:
    """Sum of products of corresponding ints of two congruent IntTuples."""
    if not congruent(a, b):
        raise MapError(f"{format_int_tuple(a)} and {format_int_tuple(b)} are not congruent")
    return sum(x * y for x, y in zip(flatten(a), flatten(b)))


def elem_scale(a: IntTuple, b: IntTuple) -> IntTuple:
    """``a`` scaled element by element by ``b``; an int ``a`` is scaled by ``product(b)``."""
    if isinstance(a, tuple):
        if not isinstance(b, tuple) or len(a) != len(b):
            raise MapError(f"elem_scale: {format_int_tuple(b)} does not match "
                           f"{format_int_tuple(a)}")
        return tuple(elem_scale(x, y) for x, y in zip(a, b))
    return a * product(b)


def shape_div(a: IntTuple, b: IntTuple) -> IntTuple:
    """CuTe's ``shape_div``: ``a`` divided by ``b`` from the first mode on. For ints one must
    divide the other; the result is ``ceil(a / b)`` (so ``shape_div(3, 6) == 1``). An int
    ``b`` is divided out of ``a``'s modes in turn: ``shape_div((3,4), 6) == (1,2)``."""
    return _divide_modes(a, b, _same_rank, _shape_div_ints)


def ceil_div(a: IntTuple, b: IntTuple) -> IntTuple:
    """CuTe's ``ceil_div``: like :func:`shape_div` without its divisibility condition."""
    return _divide_modes(a, b, _padded_rank, _ceil_div_ints)


def _divide_modes(a: IntTuple, b: IntTuple,
                  pair: Callable[[tuple[IntTuple, ...], tuple[IntTuple, ...]],
                                 Iterable[tuple[IntTuple, IntTuple]]],
                  ints: Callable[[int, int], int]) -> IntTuple:
    """``a`` divided by ``b`` from the first mode on, the way :func:`shape_div` and
    :func:`ceil_div` share: two tuples mode by mode (``pair`` matches their modes), an int
    ``b`` divided out of ``a``'s modes in turn, a tuple ``b`` dividing an int as its
    product; two ints by ``ints``."""
    if isinstance(a, tuple):
        if isinstance(b, tuple):
            return tuple(_divide_modes(x, y, pair, ints) for x, y in pair(a, b))
        out = []
        for child in a:
            out.append(_divide_modes(child, b, pair, ints))
            b = _divide_modes(b, product(child), pair, ints)
        return tuple(out)
    if isinstance(b, tuple):
        return _divide_modes(a, product(b), pair, ints)
    return ints(a, b)


def _same_rank(a: tuple[IntTuple, ...], b: tuple[IntTuple, ...]
               ) -> Iterable[tuple[IntTuple, IntTuple]]:
    if len(a) != len(b):
        raise MapError(f"shape_div: {format_int_tuple(a)} and {format_int_tuple(b)} "
                       f"have different ranks")
    return zip(a, b)


def _padded_rank(a: tuple[IntTuple, ...], b: tuple[IntTuple, ...]
                 ) -> Iterable[tuple[IntTuple, IntTuple]]:
    if len(a) < len(b):
        raise MapError(f"ceil_div: {format_int_tuple(b)} has more modes than "
                       f"{format_int_tuple(a)}")
    return zip(a, b + (1,) * (len(a) - len(b)))


def _shape_div_ints(a: int, b: int) -> int:
    if b == 0 or (a % b != 0 and b % a != 0):
        raise MapError(f"shape_div: neither of {a} and {b} divides the other")
    return _arith.ceil_div(a, b)


def _ceil_div_ints(a: int, b: int) -> int:
    if b <= 0:
        raise MapError(f"ceil_div by {b}")
    return _arith.ceil_div(a, b)


def crd2idx(crd: Coord, shape: IntTuple, stride: IntTuple | None = None) -> int:
    """Offset of coordinate ``crd`` in ``shape:stride`` (stride defaults to column-major).

    A tuple coordinate indexes mode by mode; an int coordinate is split colexicographically
    across the modes of the (sub-)shape it meets, the last mode taking any overflow.
    ``None`` counts as 0.
    """
    if stride is None:
        stride = prefix_product(shape)
    if crd is None:
        return 0
    if isinstance(crd, tuple):
        if not isinstance(shape, tuple) or not isinstance(stride, tuple):
            raise MapError(f"coordinate {format_int_tuple(crd)} has more modes than "
                           f"shape {format_int_tuple(shape)}")
        if len(crd) != len(shape):
            raise MapError(f"coordinate {format_int_tuple(crd)} has rank {len(crd)}, "
                           f"shape {format_int_tuple(shape)} has rank {len(shape)}")
        return sum(crd2idx(c, s, d) for c, s, d in zip(crd, shape, stride))
    if not is_int(crd) or crd < 0:
        raise MapError(f"coordinates must be non-negative ints, got {crd!r}")
    if isinstance(shape, tuple) and isinstance(stride, tuple):
        total = 0
        for s, d in zip(shape[:-1], stride[:-1]):
            crd, rest = divmod(crd, product(s))
            total += crd2idx(rest, s, d)
        return total + crd2idx(crd, shape[-1], stride[-1])
    if isinstance(stride, tuple) or isinstance(shape, tuple):
        raise MapError(f"shape {format_int_tuple(shape)} and stride "
                       f"{format_int_tuple(stride)} are not congruent")
    return crd * stride


def idx2crd(idx: IntTuple, shape: IntTuple, stride: IntTuple | None = None) -> IntTuple:
    """The coordinate, congruent to ``shape``, of the ``idx``-th point in colex order.

    Without ``stride``, ``idx`` must lie in ``[0, size)``. With ``stride`` (pycute's form),
    each leaf is ``(idx // stride) % shape``. A tuple ``idx`` is split mode by mode.
    """
    if stride is None:
        if is_int(idx) and not 0 <= idx < product(shape):  # type: ignore[operator]
            raise MapError(f"index {idx!r} is outside [0, {product(shape)}) for shape "
                           f"{format_int_tuple(shape)}")
        stride = prefix_product(shape)
    return _idx2crd(idx, shape, stride)


def _idx2crd(idx: IntTuple, shape: IntTuple, stride: IntTuple) -> IntTuple:
    if isinstance(idx, tuple):
        if not isinstance(shape, tuple) or not isinstance(stride, tuple) or \
                len(idx) != len(shape):
            raise MapError(f"index {format_int_tuple(idx)} does not match shape "
                           f"{format_int_tuple(shape)}")
        return tuple(_idx2crd(i, s, d) for i, s, d in zip(idx, shape, stride))
    if isinstance(shape, tuple):
        if not isinstance(stride, tuple) or len(stride) != len(shape):
            raise MapError(f"stride {format_int_tuple(stride)} does not match shape "
                           f"{format_int_tuple(shape)}")
        return tuple(_idx2crd(idx, s, d) for s, d in zip(shape, stride))
    if isinstance(stride, tuple):
        raise MapError("stride is nested deeper than shape")
    return (idx // stride) % shape


def crd2crd(crd: IntTuple, dst_shape: IntTuple, src_shape: IntTuple | None = None) -> IntTuple:
    """Re-express ``crd`` in ``dst_shape``: an int is split into a tuple, a tuple meeting an
    int is linearised (colex, in ``src_shape``)."""
    if isinstance(crd, tuple):
        if isinstance(dst_shape, tuple):
            if len(crd) != len(dst_shape):
                raise MapError(f"crd2crd: {format_int_tuple(crd)} does not match "
                               f"{format_int_tuple(dst_shape)}")
            srcs = src_shape if isinstance(src_shape, tuple) else (None,) * len(crd)
            return tuple(crd2crd(c, d, s) for c, d, s in zip(crd, dst_shape, srcs))
        if src_shape is None:
            raise MapError("crd2crd: a tuple coordinate into an int shape needs src_shape")
        return crd2idx(crd, src_shape)
    if isinstance(dst_shape, tuple):
        return idx2crd(crd, dst_shape)
    if not 0 <= crd < dst_shape:
        raise MapError(f"crd2crd: {crd} is outside [0, {dst_shape})")
    return crd


def has_none(a: object) -> bool:
    """True when the coordinate has a ``None`` (CuTe's ``_``) anywhere."""
    if isinstance(a, tuple):
        return any(has_none(v) for v in a)
    return a is None


def slice_(crd: Coord, trg: IntTuple) -> tuple[IntTuple, ...]:
    """The parts of ``trg`` where ``crd`` has ``None``, concatenated (CuTe's ``slice``)."""
    return _select(crd, trg, "slice", where_none=True)


def dice(crd: Coord, trg: IntTuple) -> tuple[IntTuple, ...]:
    """The parts of ``trg`` where ``crd`` has an int, concatenated (CuTe's ``dice``)."""
    return _select(crd, trg, "dice", where_none=False)


def _select(crd: Coord, trg: IntTuple, name: str, where_none: bool
            ) -> tuple[IntTuple, ...]:
    """The parts of ``trg`` where ``crd`` has ``None`` (``where_none``) or an int, walking
    both alike; ``name`` is the operation's, for the error."""
    if isinstance(crd, tuple):
        if not isinstance(trg, tuple) or len(crd) != len(trg):
            raise MapError(f"{name}: coordinate {format_int_tuple(crd)} does not match "
                           f"{format_int_tuple(trg)}")
        return tuple(v for c, t in zip(crd, trg) for v in _select(c, t, name, where_none))
    return (trg,) if (crd is None) == where_none else ()
