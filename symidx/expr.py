"""Index expressions: sympy expressions over positional integer variables.

Results and constraints of an :class:`~symidx.indexing_map.IndexingMap` are sympy
expressions built from integers, the variables below, ``+`` and ``*``, and our own
integer-valued functions :class:`FloorDiv`, :class:`Mod` and :class:`CeilDiv` (floor
semantics; the sign of ``Mod`` follows the divisor, as in Python), and binary
:class:`Min` and :class:`Max`. We do not use sympy's ``floor``/``Mod``: they are slow and have open wrong-answer
bugs on exactly these expressions. ``eval`` of our functions folds only what holds for
*all* integer inputs; range-dependent rewrites live in :mod:`symidx.simplify`.

Variables are positional: dimension ``i`` of any map is the symbol ``d{i}``, range variable
``j`` is ``s{j}``, runtime variable ``k`` is ``rt{k}``. Display names are kept apart, on the
map, so two maps that differ only in names are equal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import sympy
from sympy import Add, Integer, Mul, Symbol

from symidx.errors import MapError
from symidx.interval import EMPTY, Interval

Expr = sympy.Expr

__all__ = [
    "Expr", "FloorDiv", "Mod", "CeilDiv", "Min", "Max", "dim", "sym", "rt", "var_kind",
    "var_index", "as_expr", "bounds", "compile_expr", "free_vars", "depth",
]


class _IntegerDivision(sympy.Function):
    """Common base of FloorDiv, Mod and CeilDiv: two integer arguments, integer result."""

    nargs = 2
    is_integer = True
    is_real = True
    is_finite = True
    is_commutative = True

    @property
    def dividend(self) -> Expr:
        return self.args[0]

    @property
    def divisor(self) -> Expr:
        return self.args[1]


class FloorDiv(_IntegerDivision):
    """``floor(a / b)``. Prints as ``a floordiv b`` (``a / b`` in XLA style)."""

    @classmethod
    def eval(cls, a: Expr, b: Expr) -> Expr | None:  # type: ignore[override]
        if b.is_Integer:
            if b == 0:
                raise MapError("floordiv by zero")
            if a.is_Integer:
                return Integer(int(a) // int(b))
            if b == 1:
                return a
        if a.is_Integer and a == 0:
            return Integer(0)
        return None


class CeilDiv(_IntegerDivision):
    """``ceil(a / b)``. Prints as ``a ceildiv b``."""

    @classmethod
    def eval(cls, a: Expr, b: Expr) -> Expr | None:  # type: ignore[override]
        if b.is_Integer:
            if b == 0:
                raise MapError("ceildiv by zero")
            if a.is_Integer:
                return Integer(-(-int(a) // int(b)))
            if b == 1:
                return a
        if a.is_Integer and a == 0:
            return Integer(0)
        return None


class Mod(_IntegerDivision):
    """``a - b * floor(a / b)``: the sign of the result follows the divisor."""

    @classmethod
    def eval(cls, a: Expr, b: Expr) -> Expr | None:  # type: ignore[override]
        if b.is_Integer:
            if b == 0:
                raise MapError("mod by zero")
            if a.is_Integer:
                return Integer(int(a) % int(b))
            if b == 1 or b == -1:
                return Integer(0)
        if a.is_Integer and a == 0:
            return Integer(0)
        return None


class _MinMax(sympy.Function):
    """Binary min/max of integers. Arguments are kept in sympy's canonical order, so
    ``Min(a, b) == Min(b, a)``; ``eval`` folds two integers and ``Min(a, a)``. (sympy's own
    Min/Max compare symbolically and can leave unevaluated integer pairs behind.)"""

    nargs = 2
    is_integer = True
    is_real = True
    is_finite = True
    is_commutative = True
    _pick: Any = None

    @classmethod
    def eval(cls, a: Expr, b: Expr) -> Expr | None:  # type: ignore[override]
        if a.is_Integer and b.is_Integer:
            return Integer(cls._pick(int(a), int(b)))
        if a == b:
            return a
        if a.compare(b) > 0:
            return cls(b, a, evaluate=False)
        return None


class Min(_MinMax):
    """``min(a, b)``."""

    _pick = staticmethod(min)


class Max(_MinMax):
    """``max(a, b)``."""

    _pick = staticmethod(max)


def min_of(*args: Expr | int) -> Expr:
    """``min`` of any number of arguments, as nested binary :class:`Min`."""
    exprs = [as_expr(a) for a in args]
    result = exprs[0]
    for e in exprs[1:]:
        result = Min(result, e)
    return result


def max_of(*args: Expr | int) -> Expr:
    """``max`` of any number of arguments, as nested binary :class:`Max`."""
    exprs = [as_expr(a) for a in args]
    result = exprs[0]
    for e in exprs[1:]:
        result = Max(result, e)
    return result


# --- variables ----------------------------------------------------------------------------
_KIND_PREFIX = {"d": "d", "s": "s", "rt": "rt"}


@lru_cache(maxsize=None)
def _variable(kind: str, index: int) -> Symbol:
    symbol = Symbol(f"{kind}{index}", integer=True)
    _VAR_INFO[symbol] = (kind, index)
    return symbol


_VAR_INFO: dict[Symbol, tuple[str, int]] = {}


def dim(i: int) -> Symbol:
    """The symbol of dimension variable ``i``."""
    return _variable("d", i)


def sym(i: int) -> Symbol:
    """The symbol of range variable ``i``."""
    return _variable("s", i)


def rt(i: int) -> Symbol:
    """The symbol of runtime variable ``i``."""
    return _variable("rt", i)


def var_kind(symbol: Symbol) -> str:
    """``"d"``, ``"s"`` or ``"rt"`` for one of our variables."""
    try:
        return _VAR_INFO[symbol][0]
    except KeyError:
        raise MapError(f"{symbol} is not a symidx variable") from None


def var_index(symbol: Symbol) -> int:
    try:
        return _VAR_INFO[symbol][1]
    except KeyError:
        raise MapError(f"{symbol} is not a symidx variable") from None


def is_var(expr: Any) -> bool:
    return expr in _VAR_INFO


def as_expr(value: Expr | int) -> Expr:
    """An int or a sympy expression, as a sympy expression."""
    if isinstance(value, int):
        return Integer(value)
    if isinstance(value, sympy.Expr):
        return value
    raise MapError(f"not an index expression: {value!r}")


def free_vars(expr: Expr) -> set[Symbol]:
    return expr.free_symbols  # type: ignore[return-value]


def depth(expr: Expr) -> int:
    """Height of the expression tree (an atom has depth 1)."""
    best = 0
    stack = [(expr, 1)]
    while stack:
        node, d = stack.pop()
        best = max(best, d)
        stack.extend((a, d + 1) for a in node.args)
    return best


# --- ranges -------------------------------------------------------------------------------
def bounds(expr: Expr, env: Mapping[Symbol, Interval]) -> Interval:
    """An interval containing every value of ``expr`` when each variable ranges over its
    interval in ``env``. Exact for a single occurrence of each variable in an affine sum;
    sound (never too small) always."""
    if expr.is_Integer:
        return Interval.point(int(expr))
    if expr.is_Symbol:
        try:
            return env[expr]  # type: ignore[index]
        except KeyError:
            raise MapError(f"variable {expr} has no interval") from None
    args = expr.args
    if isinstance(expr, Add):
        total = Interval(0, 0)
        for a in args:
            total = total + bounds(a, env)
        return total
    if isinstance(expr, Mul):
        product = Interval(1, 1)
        for a in args:
            product = product * bounds(a, env)
        return product
    if isinstance(expr, FloorDiv):
        return bounds(args[0], env).floordiv(bounds(args[1], env))
    if isinstance(expr, Mod):
        return _mod_bounds(args[0], args[1], env)
    if isinstance(expr, CeilDiv):
        return bounds(args[0], env).ceildiv(bounds(args[1], env))
    if isinstance(expr, Min):
        result = bounds(args[0], env)
        for a in args[1:]:
            result = result.min(bounds(a, env))
        return result
    if isinstance(expr, Max):
        result = bounds(args[0], env)
        for a in args[1:]:
            result = result.max(bounds(a, env))
        return result
    raise MapError(f"unsupported expression {expr}")


def _mod_bounds(a: Expr, b: Expr, env: Mapping[Symbol, Interval]) -> Interval:
    ra, rb = bounds(a, env), bounds(b, env)
    if ra.is_empty or rb.is_empty:
        return EMPTY
    result = ra.mod(rb)
    if rb.is_point and rb.lo > 0 and not ra.is_point and isinstance(a, Add):
        # (c * x + y) mod m with m | c: only y matters.
        m = rb.lo
        rest = [t for t in a.args if not _multiple_of(t, m)]
        if len(rest) < len(a.args):
            result = result.intersect(bounds(Add(*rest), env).mod(rb))
    return result


def _multiple_of(term: Expr, m: int) -> bool:
    coeff, _ = term.as_coeff_Mul()
    return coeff.is_Integer and int(coeff) % m == 0 and term.is_integer is True


# --- evaluation ---------------------------------------------------------------------------
def _minimum(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    import numpy as np

    return np.minimum(a, b)


def _maximum(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    import numpy as np

    return np.maximum(a, b)


def _ceildiv(a: Any, b: Any) -> Any:
    return -((-a) // b)


def _sum(values: list[Any]) -> Any:
    total = values[0]
    for v in values[1:]:
        total = total + v
    return total


def _product(values: list[Any]) -> Any:
    total = values[0]
    for v in values[1:]:
        total = total * v
    return total


def compile_expr(expr: Expr, variables: Sequence[Symbol]) -> Callable[[Sequence[Any]], Any]:
    """A function of the variables' values (ints, or numpy integer arrays that broadcast)
    computing ``expr`` with floor division and Python-style mod. No sympy in the loop."""
    position = {v: i for i, v in enumerate(variables)}

    def build(node: Expr) -> Callable[[Sequence[Any]], Any]:
        if node.is_Integer:
            value = int(node)
            return lambda env: value
        if node.is_Symbol:
            if node not in position:
                raise MapError(f"variable {node} is not bound")
            i = position[node]  # type: ignore[index]
            return lambda env: env[i]
        parts = [build(a) for a in node.args]
        if isinstance(node, Add):
            return lambda env: _sum([p(env) for p in parts])
        if isinstance(node, Mul):
            return lambda env: _product([p(env) for p in parts])
        if isinstance(node, (FloorDiv, Mod, CeilDiv, Min, Max)):
            op = _BINARY[type(node)]
            if len(parts) == 2:
                a, b = parts
                return lambda env: op(a(env), b(env))
            return lambda env: _fold(op, [p(env) for p in parts])
        raise MapError(f"unsupported expression {node}")

    return build(expr)


def _fold(op: Callable[[Any, Any], Any], values: list[Any]) -> Any:
    result = values[0]
    for v in values[1:]:
        result = op(result, v)
    return result


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    FloorDiv: lambda a, b: a // b,
    Mod: lambda a, b: a % b,
    CeilDiv: _ceildiv,
    Min: _minimum,
    Max: _maximum,
}
