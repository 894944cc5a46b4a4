"""symidx's integer-valued operations on index expressions: :class:`FloorDiv`,
:class:`Mod`, :class:`CeilDiv` (floor semantics; the sign of ``Mod`` follows the divisor),
binary :class:`Min` and :class:`Max`, and :func:`as_expr`. ``eval`` of each folds only
what holds for *all* integer inputs."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import sympy
from sympy import Expr, Integer

from symidx._arith import ceil_div
from symidx.core.expr.printing import _code
from symidx.errors import MapError

_new_expr = sympy.Expr.__new__


class _FloorModOperators:
    """``//`` and ``%`` build symidx's :class:`FloorDiv` and :class:`Mod` (sympy's would
    build ``floor`` and its own ``Mod``), for symidx's operations and variables alike."""

    __slots__ = ()
    #: Above sympy's 10, so that ``expr // x`` and ``expr % x`` reach ``x``'s methods.
    _op_priority = 11.0

    def __floordiv__(self, other: Any) -> Expr:
        return FloorDiv(self, other)

    def __rfloordiv__(self, other: Any) -> Expr:
        return FloorDiv(other, self)

    def __mod__(self, other: Any) -> Expr:
        return Mod(self, other)

    def __rmod__(self, other: Any) -> Expr:
        return Mod(other, self)


class _IntegerOp(_FloorModOperators, sympy.Expr):
    """An integer-valued operation on two integer expressions.

    A plain ``sympy.Expr`` subclass rather than a ``sympy.Function``: construction skips
    Function's argument checking and caching (about 4x cheaper), which matters because
    composition builds these by the thousand. ``eval`` returns a folded value or None.
    """

    __slots__ = ()
    is_integer = True
    is_real = True
    is_finite = True
    is_commutative = True

    # sympy's printers: lambdify (numpy, math), pycode, ccode, latex.
    def _pythoncode(self, printer: Any) -> str:
        return _code(self, printer, "python")

    def _numpycode(self, printer: Any) -> str:
        return _code(self, printer, "numpy")

    def _ccode(self, printer: Any) -> str:
        return _code(self, printer, "c")

    def _latex(self, printer: Any) -> str:
        return _code(self, printer, "latex")

    def __new__(cls, a: Expr | int, b: Expr | int, evaluate: bool = True) -> Expr:
        a, b = as_expr(a), as_expr(b)
        if evaluate:
            folded = cls.eval(a, b)
            if folded is not None:
                return folded
        return _new_expr(cls, a, b)

    @classmethod
    def of(cls, a: Expr, b: Expr) -> Expr:
        """``cls(a, b)`` for two sympy expressions (no conversion of ints)."""
        folded = cls.eval(a, b)
        return folded if folded is not None else _new_expr(cls, a, b)

    @classmethod
    def eval(cls, a: Expr, b: Expr) -> Expr | None:
        raise NotImplementedError


class _IntegerDivision(_IntegerOp):
    """Common base of FloorDiv, Mod and CeilDiv. ``eval`` folds two integers (``_fold``),
    refuses a zero divisor, rewrites a unit divisor (``_by_unit``) and a zero dividend."""

    __slots__ = ()
    _word = ""  # the operation's name in an error
    _fold: Any = None  # the operation on two ints

    @classmethod
    def eval(cls, a: Expr, b: Expr) -> Expr | None:
        if b.is_Integer:
            divisor = b.p
            if divisor == 0:
                raise MapError(f"{cls._word} by zero")
            if a.is_Integer:
                return integer(cls._fold(a.p, divisor))
            unit = cls._by_unit(a, b)
            if unit is not None:
                return unit
        if a.is_Integer and a.p == 0:
            return ZERO
        return None

    @classmethod
    def _by_unit(cls, a: Expr, b: Expr) -> Expr | None:
        """``a`` divided by the integer ``b`` when that needs no division, else None: ``a``
        for ``b = 1`` (Mod: 0 for ``b = 1`` or ``-1``)."""
        return a if b.p == 1 else None

    @property
    def dividend(self) -> Expr:
        return self.args[0]

    @property
    def divisor(self) -> Expr:
        return self.args[1]


class FloorDiv(_IntegerDivision):
    """``floor(a / b)``. Prints as ``a floordiv b`` (``a / b`` in XLA style)."""

    __slots__ = ()
    _word = "floordiv"
    _fold = staticmethod(operator.floordiv)


class CeilDiv(_IntegerDivision):
    """``ceil(a / b)``. Prints as ``a ceildiv b``."""

    __slots__ = ()
    _word = "ceildiv"
    _fold = staticmethod(ceil_div)


class Mod(_IntegerDivision):
    """``a - b * floor(a / b)``: the sign of the result follows the divisor."""

    __slots__ = ()
    _word = "mod"
    _fold = staticmethod(operator.mod)

    @classmethod
    def _by_unit(cls, a: Expr, b: Expr) -> Expr | None:
        return ZERO if b.p == 1 or b.p == -1 else None


class _MinMax(_IntegerOp):
    """Binary min/max of integers. Arguments are kept in sympy's canonical order, so
    ``Min(a, b) == Min(b, a)``; ``eval`` folds two integers and ``Min(a, a)``. (sympy's own
    Min/Max compare symbolically and can leave unevaluated integer pairs behind.)"""

    __slots__ = ()
    _pick: Any = None

    @classmethod
    def eval(cls, a: Expr, b: Expr) -> Expr | None:
        if a.is_Integer and b.is_Integer:
            return integer(cls._pick(a.p, b.p))
        if a == b:
            return a
        if a.compare(b) > 0:
            return cls(b, a, evaluate=False)
        return None


class Min(_MinMax):
    """``min(a, b)``."""

    __slots__ = ()
    _pick = staticmethod(min)


class Max(_MinMax):
    """``max(a, b)``."""

    __slots__ = ()
    _pick = staticmethod(max)


def min_of(*args: Expr | int) -> Expr:
    """``min`` of any number of arguments, as nested binary :class:`Min`."""
    return _nested(Min, args)


def max_of(*args: Expr | int) -> Expr:
    """``max`` of any number of arguments, as nested binary :class:`Max`."""
    return _nested(Max, args)


def _nested(op: type[_MinMax], args: Sequence[Expr | int]) -> Expr:
    result = as_expr(args[0])
    for a in args[1:]:
        result = op(result, a)
    return result


_INTEGERS: dict[int, Expr] = {}
_INTEGERS_LIMIT = 1 << 12


def integer(n: int) -> Expr:
    """``Integer(n)``, remembered (sympy's own cache is a slower path to the same
    object)."""
    got = _INTEGERS.get(n)
    if got is None:
        if len(_INTEGERS) >= _INTEGERS_LIMIT:
            _INTEGERS.clear()
        got = _INTEGERS[n] = Integer(n)
    return got


ZERO = Integer(0)


def as_expr(value: Expr | int) -> Expr:
    """An int or a sympy expression, as a sympy expression."""
    if isinstance(value, int):
        return integer(value)
    if isinstance(value, sympy.Expr):
        return value
    raise MapError(f"not an index expression: {value!r}")
