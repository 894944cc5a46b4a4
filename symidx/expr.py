"""Index expressions: sympy expressions over positional integer variables.

Results and constraints of an :class:`~symidx.indexing_map.IndexingMap` are sympy
expressions built from integers, the variables below, ``+`` and ``*``, and our own
integer-valued functions :class:`FloorDiv`, :class:`Mod` and :class:`CeilDiv` (floor
semantics; the sign of ``Mod`` follows the divisor, as in Python), and binary
:class:`Min` and :class:`Max`. We do not use sympy's ``floor``/``Mod``: they are slow and
have open wrong-answer bugs on exactly these expressions. ``eval`` of our functions folds
only what holds for *all* integer inputs; range-dependent rewrites live in
:mod:`symidx.simplify`.

Variables are positional: dimension ``i`` of any map is the symbol ``d{i}``, range variable
``j`` is ``s{j}``, runtime variable ``k`` is ``rt{k}``. Display names are kept apart, on the
map, so two maps that differ only in names are equal.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any

import sympy
from sympy import Add, Expr, Integer, Mul, Pow, Symbol

from symidx._arith import ceil_div
from symidx.errors import MapError
from symidx.interval import Interval

__all__ = [
    "Expr", "FloorDiv", "Mod", "CeilDiv", "Min", "Max", "IndexVar", "dim", "sym", "rt",
    "var_kind",
    "var_index", "as_expr", "bounds", "constrained_bounds", "variable_divisions", "scan",
    "free_vars", "terms", "from_terms", "ONE", "Terms", "compile_expr", "depth",
    "evaluate_exact", "INT64_SAFE",
]


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
        return sympy.Expr.__new__(cls, a, b)

    @classmethod
    def eval(cls, a: Expr, b: Expr) -> Expr | None:
        raise NotImplementedError


class _IntegerDivision(_IntegerOp):
    """Common base of FloorDiv, Mod and CeilDiv."""

    __slots__ = ()

    @property
    def dividend(self) -> Expr:
        return self.args[0]

    @property
    def divisor(self) -> Expr:
        return self.args[1]


class FloorDiv(_IntegerDivision):
    """``floor(a / b)``. Prints as ``a floordiv b`` (``a / b`` in XLA style)."""

    __slots__ = ()

    @classmethod
    def eval(cls, a: Expr, b: Expr) -> Expr | None:
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

    __slots__ = ()

    @classmethod
    def eval(cls, a: Expr, b: Expr) -> Expr | None:
        if b.is_Integer:
            if b == 0:
                raise MapError("ceildiv by zero")
            if a.is_Integer:
                return Integer(ceil_div(int(a), int(b)))
            if b == 1:
                return a
        if a.is_Integer and a == 0:
            return Integer(0)
        return None


class Mod(_IntegerDivision):
    """``a - b * floor(a / b)``: the sign of the result follows the divisor."""

    __slots__ = ()

    @classmethod
    def eval(cls, a: Expr, b: Expr) -> Expr | None:
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


class _MinMax(_IntegerOp):
    """Binary min/max of integers. Arguments are kept in sympy's canonical order, so
    ``Min(a, b) == Min(b, a)``; ``eval`` folds two integers and ``Min(a, a)``. (sympy's own
    Min/Max compare symbolically and can leave unevaluated integer pairs behind.)"""

    __slots__ = ()
    _pick: Any = None

    @classmethod
    def eval(cls, a: Expr, b: Expr) -> Expr | None:
        if a.is_Integer and b.is_Integer:
            return Integer(cls._pick(int(a), int(b)))
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


# --- printing for sympy's code printers -----------------------------------------------------
# Floor semantics everywhere: Python's // and %, numpy's floor_divide and mod; C's / and %
# truncate, so the C forms correct them where the signs differ.
_C_FORMS = {
    "FloorDiv": "(({a}) / ({b}) - ((({a}) % ({b}) != 0) && ((({a}) < 0) != (({b}) < 0))))",
    "Mod": "(({a}) % ({b}) + ((({a}) % ({b}) != 0) && (((({a}) % ({b})) < 0) != (({b}) < 0))"
           " ? ({b}) : 0))",
    "CeilDiv": "(({a}) / ({b}) + ((({a}) % ({b}) != 0) && ((({a}) < 0) == (({b}) < 0))))",
    "Min": "(({a}) < ({b}) ? ({a}) : ({b}))",
    "Max": "(({a}) > ({b}) ? ({a}) : ({b}))",
}
_PYTHON_FORMS = {"FloorDiv": "(({a}) // ({b}))", "Mod": "(({a}) % ({b}))",
                 "CeilDiv": "(-((-({a})) // ({b})))", "Min": "min({a}, {b})",
                 "Max": "max({a}, {b})"}
_NUMPY_FUNCTIONS = {"FloorDiv": "floor_divide", "Mod": "mod", "Min": "minimum",
                    "Max": "maximum"}
_LATEX_FORMS = {"FloorDiv": r"\left\lfloor \frac{{{a}}}{{{b}}} \right\rfloor",
                "CeilDiv": r"\left\lceil \frac{{{a}}}{{{b}}} \right\rceil",
                "Mod": r"\left({a} \bmod {b}\right)",
                "Min": r"\min\left({a}, {b}\right)", "Max": r"\max\left({a}, {b}\right)"}


def _code(e: _IntegerOp, printer: Any, kind: str) -> str:
    name = type(e).__name__
    a, b = (printer._print(x) for x in e.args)
    if kind == "numpy":
        module = getattr(printer, "_module", "numpy")
        if name == "CeilDiv":
            function = printer._module_format(f"{module}.floor_divide")
            return f"(-{function}(-({a}), {b}))"
        return f"{printer._module_format(f'{module}.{_NUMPY_FUNCTIONS[name]}')}({a}, {b})"
    forms = {"python": _PYTHON_FORMS, "c": _C_FORMS, "latex": _LATEX_FORMS}[kind]
    return forms[name].format(a=a, b=b)


# --- variables ----------------------------------------------------------------------------
class IndexVar(_FloorModOperators, Symbol):
    """A symidx variable (``d0``, ``s0``, ``rt0``): a sympy ``Symbol`` on which ``//`` and
    ``%`` build :class:`FloorDiv` and :class:`Mod` (a plain sympy symbol would build
    ``floor(x/4)`` and sympy's ``Mod``, which maps do not take)."""

    __slots__ = ()

    def __reduce_ex__(self, protocol: Any) -> Any:
        # by kind and index: the class's name is not where pickle would look (see below)
        kind, index = _VAR_INFO[self]
        return _variable, (kind, index)


# sympy orders the terms of sums and products by class name (Basic.compare, class_key): a
# variable must sort exactly as a Symbol, or canonical forms (and so the simplifier's
# matches) would change with the class.
IndexVar.__name__ = IndexVar.__qualname__ = "Symbol"


@cache
def _variable(kind: str, index: int) -> Symbol:
    symbol = IndexVar(f"{kind}{index}", integer=True)
    _VAR_INFO[symbol] = (kind, index)
    return symbol


_VAR_INFO: dict[Symbol, tuple[str, int]] = {}


def clear_caches() -> None:
    """Forget every memoised result (sympy's cache and symidx's own), e.g. so that a
    benchmark measures work on fresh expressions."""
    from sympy.core.cache import clear_cache

    clear_cache()
    _TERMS.clear()


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


def as_expr(value: Expr | int) -> Expr:
    """An int or a sympy expression, as a sympy expression."""
    if isinstance(value, int):
        return Integer(value)
    if isinstance(value, sympy.Expr):
        return value
    raise MapError(f"not an index expression: {value!r}")


_SORT_KEY = sympy.core.add._args_sortkey  # the order sympy's Add keeps its terms in
_ORDERED: dict[tuple[Expr, ...], list[Expr]] = {}
_ORDERED_LIMIT = 1 << 16


def _canonical_order(terms: list[Expr]) -> list[Expr]:
    """``terms`` in the order sympy's Add keeps them. Sorting compares terms with
    ``Basic.compare``, a slow structural walk; the same sums come back again and again while
    maps compose, so each order is remembered (the cache is cleared when it fills)."""
    key = tuple(terms)
    found = _ORDERED.get(key)
    if found is None:
        if len(_ORDERED) >= _ORDERED_LIMIT:
            _ORDERED.clear()
        found = _ORDERED[key] = sorted(terms, key=_SORT_KEY)
    return list(found)


def scale(c: int, x: Expr) -> Expr:
    """``c * x`` in sympy's canonical form, built directly when that form is plain."""
    if c == 1:
        return x
    if c == 0:
        return Integer(0)
    if x.is_Integer:
        return Integer(c * int(x))
    if isinstance(x, (_IntegerOp, Symbol)):
        return Mul._from_args((Integer(c), x), True)  # our expressions commute
    if isinstance(x, Mul) and len(x.args) == 2 and x.args[0].is_Integer \
            and isinstance(x.args[1], (_IntegerOp, Symbol)):
        return scale(c * int(x.args[0]), x.args[1])
    if isinstance(x, Add):
        return add([scale(c, t) for t in x.args])
    return Mul(Integer(c), x)


def rebuild(e: Expr, args: Sequence[Expr]) -> Expr:
    """``e.func(*args)``, with sums and integer multiples built the fast way."""
    if isinstance(e, Add):
        return add(args)
    if isinstance(e, Mul) and len(args) == 2 and args[0].is_Integer:
        return scale(int(args[0]), args[1])
    return e.func(*args)


def add(terms: Sequence[Expr]) -> Expr:
    """``Add(*terms)``, identical to what sympy builds, but without ``Add.flatten``'s
    assumption queries when the terms are plain (integers, variables, our operations and
    integer multiples of them). Falls back to sympy for anything else."""
    coeffs: dict[Expr, int] = {}
    original: dict[Expr, Expr | None] = {}  # the term as given, while it is met once
    const = 0
    for a in terms:
        for t in (a.args if isinstance(a, Add) else (a,)):
            if t.is_Integer:
                const += int(t)
                continue
            if isinstance(t, Mul):
                if len(t.args) != 2 or not t.args[0].is_Integer:
                    return Add(*terms)
                c, m = int(t.args[0]), t.args[1]
            else:
                c, m = 1, t
            if not isinstance(m, (_IntegerOp, Symbol)):
                return Add(*terms)
            if m in coeffs:
                coeffs[m] += c
                original[m] = None
            else:
                coeffs[m] = c
                original[m] = t
    out = [original[m] or scale(c, m) for m, c in coeffs.items() if c]
    if not out:
        return Integer(const)
    if len(out) == 1 and not const:
        return out[0]
    out = _canonical_order(out)
    if const:
        out.insert(0, Integer(const))
    return Add._from_args(out, True)


def substitute(exprs: Sequence[Expr], mapping: Mapping[Symbol, Expr]) -> list[Expr]:
    """``[e.xreplace(mapping) for e in exprs]``, with shared sub-expressions rebuilt once
    (results of one map share most of their structure)."""
    memo: dict[Expr, Expr] = dict(mapping)

    def walk(e: Expr) -> Expr:
        got = memo.get(e)
        if got is not None:
            return got
        if not e.args:
            return e
        args = tuple(walk(a) for a in e.args)
        new = e if args == e.args else rebuild(e, args)
        memo[e] = new
        return new

    return [walk(e) for e in exprs]


# --- linear forms -------------------------------------------------------------------------
ONE = Integer(1)
Terms = list[tuple[int, Expr]]
_TERMS: dict[int, tuple[Expr, tuple[tuple[int, Expr], ...]]] = {}
_TERMS_LIMIT = 1 << 14


def terms(e: Expr) -> Terms:
    """``e`` as ``[(coefficient, monomial)]``; the constant has monomial ``1`` (:data:`ONE`).

    Remembered by identity (the entry keeps ``e`` alive, so its id is not reused): finding
    an *equal* expression in a cache would compare trees, which costs more than splitting
    the sum again."""
    got = _TERMS.get(id(e))
    if got is not None and got[0] is e:
        return list(got[1])
    found = _split_terms(e)
    if len(_TERMS) >= _TERMS_LIMIT:
        _TERMS.clear()
    _TERMS[id(e)] = (e, found)
    return list(found)


def _split_terms(e: Expr) -> tuple[tuple[int, Expr], ...]:
    parts = e.args if isinstance(e, Add) else (e,)
    out = []
    for t in parts:
        if t.is_Integer:
            out.append((int(t), ONE))
        elif isinstance(t, Mul) and t.args[0].is_Integer:
            coeff = t.args[0]
            rest = t.args[1] if len(t.args) == 2 else Mul._from_args(t.args[1:])
            out.append((int(coeff), rest))
        else:
            out.append((1, t))
    return tuple(out)


def from_terms(parts: Terms) -> Expr:
    """The sum of ``[(coefficient, monomial)]`` (the inverse of :func:`terms`)."""
    return add([Integer(c) if m is ONE else scale(c, m) for c, m in parts if c])


def free_vars(e: Expr) -> set[Symbol]:
    """The variables ``e`` uses (as sympy's ``free_symbols``, by a cheaper walk)."""
    return scan([e])[0]


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
def bounds(expr: Expr, env: Mapping[Symbol, Interval],
           memo: dict[Expr, Interval] | None = None) -> Interval:
    """An interval containing every value of ``expr`` when each variable ranges over its
    interval in ``env``. Exact for a single occurrence of each variable in an affine sum;
    sound (never too small) always. ``memo`` (for one ``env``) keeps the interval of every
    sub-expression met, for the next call."""
    if expr.is_Integer:
        return Interval.point(int(expr))
    if expr.is_Symbol:
        try:
            return env[expr]
        except KeyError:
            raise MapError(f"variable {expr} has no interval") from None
    if memo is None:
        memo = {}
    got = memo.get(expr)
    if got is None:
        got = memo[expr] = _node_bounds(expr, env, memo)
    return got


def _node_bounds(expr: Expr, env: Mapping[Symbol, Interval],
                 memo: dict[Expr, Interval]) -> Interval:
    """The interval of a compound expression from its arguments' (memoised)."""
    args = expr.args
    kind = type(expr)
    if kind is Add:  # the hot cases first: sums and integer multiples
        lo = hi = 0
        for a in args:
            if a.is_Integer:
                v = int(a)
                lo += v
                hi += v
                continue
            if isinstance(a, Mul) and len(a.args) == 2 and a.args[0].is_Integer:
                k, b = int(a.args[0]), _sub_bounds(a.args[1], env, memo)
                if k >= 0:
                    lo, hi = lo + k * b.lo, hi + k * b.hi
                else:
                    lo, hi = lo + k * b.hi, hi + k * b.lo
            else:
                b = _sub_bounds(a, env, memo)
                lo, hi = lo + b.lo, hi + b.hi
            if b.lo > b.hi:
                return Interval.EMPTY
        return Interval(lo, hi)
    if kind is Mul:
        if len(args) == 2 and args[0].is_Integer:
            b = _sub_bounds(args[1], env, memo)
            k = int(args[0])
            if b.lo > b.hi:
                return b
            return Interval(k * b.lo, k * b.hi) if k >= 0 else Interval(k * b.hi, k * b.lo)
        product = Interval(1, 1)
        for a in args:
            product = product * _sub_bounds(a, env, memo)
        return product
    if kind is FloorDiv:
        return _sub_bounds(args[0], env, memo).floordiv(_sub_bounds(args[1], env, memo))
    if kind is Mod:
        return _mod_bounds(args[0], args[1], env, memo)
    if kind is CeilDiv:
        return _sub_bounds(args[0], env, memo).ceildiv(_sub_bounds(args[1], env, memo))
    if kind is Min or kind is Max:
        a, b = (_sub_bounds(x, env, memo) for x in args)
        return a.min(b) if kind is Min else a.max(b)
    if isinstance(expr, Pow):
        return _power(_sub_bounds(args[0], env, memo), args[1])
    raise MapError(f"unsupported expression {expr}")


def _sub_bounds(e: Expr, env: Mapping[Symbol, Interval],
                memo: dict[Expr, Interval]) -> Interval:
    if e.is_Symbol:
        got = env.get(e)
        if got is None:
            raise MapError(f"variable {e} has no interval")
        return got
    if e.is_Integer:
        return Interval.point(int(e))
    got = memo.get(e)
    if got is None:
        got = memo[e] = _node_bounds(e, env, memo)
    return got


def _power(base: Interval, exponent: Expr) -> Interval:
    """``base ** n`` for a positive integer ``n`` (a product of variables, ``s0 * s0``)."""
    if not (exponent.is_Integer and int(exponent) > 0):
        raise MapError(f"unsupported power with exponent {exponent}")
    n = int(exponent)
    if base.is_empty:
        return base
    ends = (base.lo ** n, base.hi ** n)
    if n % 2 == 0 and base.lo <= 0 <= base.hi:
        return Interval(0, max(ends))
    return Interval(min(ends), max(ends))


def _mod_bounds(a: Expr, b: Expr, env: Mapping[Symbol, Interval],
                memo: dict[Expr, Interval] | None = None) -> Interval:
    rb = bounds(b, env, memo)
    if not (rb.is_point and rb.lo > 0 and isinstance(a, Add)):
        return bounds(a, env, memo).mod(rb)
    # (c * x + y) mod m with m | c: only y matters. Bound each term once.
    m = rb.lo
    total, rest = Interval(0, 0), Interval(0, 0)
    for t in a.args:
        tb = bounds(t, env, memo)
        total = total + tb
        if not _multiple_of(t, m):
            rest = rest + tb
    return total.mod(rb).intersect(rest.mod(rb))


def _multiple_of(term: Expr, m: int) -> bool:
    """Is the term an integer multiple of ``m``? (All our expressions are integer-valued,
    so an integer coefficient divisible by ``m`` decides it.)"""
    if term.is_Integer:
        return int(term) % m == 0
    if isinstance(term, Mul):
        coeff = term.args[0]
        return coeff.is_Integer and int(coeff) % m == 0
    return False


def constrained_bounds(expr: Expr, env: Mapping[Symbol, Interval],
                       known: Mapping[Expr, Interval]) -> Interval:
    """As :func:`bounds`, on the points where every ``known`` fact ``e in interval`` holds
    (a map's constraints): each sub-expression that is a known expression is intersected
    with its interval, and a sum that holds a known sum among its terms is bounded as that
    sum plus the rest. So ``(d0 * 86 + d1) floordiv 64`` with ``d0 * 86 + d1 in [0, 1023]``
    lies in ``[0, 15]``, where the variables' box alone gives ``[0, 16]``. Sound: every
    value the expression takes where the facts hold lies in the interval."""
    if not known:
        return bounds(expr, env)
    sums = [(dict(_linear(e)), iv) for e, iv in known.items() if isinstance(e, Add)]
    memo: dict[Expr, Interval] = {}

    def walk(e: Expr) -> Interval:
        got = memo.get(e)
        if got is not None:
            return got
        if e.is_Integer or e.is_Symbol:
            result = bounds(e, env)
        else:
            result = _combine(e, [walk(a) for a in e.args])
            if isinstance(e, Add) and sums:
                result = result.intersect(_bounds_by_known_sum(e, sums, walk))
        fact = known.get(e)
        if fact is not None:
            result = result.intersect(fact)
        memo[e] = result
        return result

    return walk(expr)


def _combine(e: Expr, parts: list[Interval]) -> Interval:
    """The interval of ``e`` from the intervals of its arguments."""
    if isinstance(e, Add):
        total = Interval(0, 0)
        for p in parts:
            total = total + p
        return total
    if isinstance(e, Mul):
        product = Interval(1, 1)
        for p in parts:
            product = product * p
        return product
    if isinstance(e, Pow):
        return _power(parts[0], e.args[1])
    if isinstance(e, FloorDiv):
        return parts[0].floordiv(parts[1])
    if isinstance(e, CeilDiv):
        return parts[0].ceildiv(parts[1])
    if isinstance(e, Mod):
        return parts[0].mod(parts[1])
    if isinstance(e, Min):
        return parts[0].min(parts[1])
    if isinstance(e, Max):
        return parts[0].max(parts[1])
    raise MapError(f"unsupported expression {e}")


def _linear(e: Expr) -> list[tuple[Expr, int]]:
    """A sum as ``[(monomial, coefficient)]``; the constant has monomial ``1``."""
    out = []
    for t in e.args if isinstance(e, Add) else (e,):
        if t.is_Integer:
            out.append((Integer(1), int(t)))
            continue
        coeff, rest = t.as_coeff_Mul()
        out.append((rest, int(coeff)) if coeff.is_Integer else (t, 1))
    return out


def _bounds_by_known_sum(e: Expr, sums: list[tuple[dict[Expr, int], Interval]],
                         walk: Callable[[Expr], Interval]) -> Interval:
    """The tightest of ``k + bounds(rest)`` over known sums ``s in k`` whose terms all
    occur in ``e`` with the same coefficients (``e = s + rest``)."""
    terms = dict(_linear(e))
    best = Interval(-(1 << 62), 1 << 62)
    for known_terms, iv in sums:
        if len(known_terms) > len(terms) or any(terms.get(m) != c
                                                for m, c in known_terms.items()):
            continue
        rest = Interval(0, 0)
        for m, c in terms.items():
            if m not in known_terms:
                rest = rest + (Interval.point(c) if m == 1 else walk(m) * c)
        best = best.intersect(iv + rest)
    return best


def variable_divisions(expr: Expr) -> list[Expr]:
    """The ``floordiv``, ``ceildiv`` and ``mod`` sub-expressions of ``expr`` whose divisor
    is not a constant (``s0 floordiv s1``), innermost first."""
    found: list[Expr] = []
    seen: set[int] = set()  # by identity: a shared sub-expression is walked once
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        e, done = stack.pop()
        if done:
            if isinstance(e, _IntegerDivision) and not e.args[1].is_Integer:
                found.append(e)
            continue
        if id(e) in seen or not e.args:
            continue
        seen.add(id(e))
        stack.append((e, True))
        stack.extend((a, False) for a in e.args)
    return found


def scan(exprs: Sequence[Expr]) -> tuple[set[Symbol], bool]:
    """The variables the expressions use, and whether one divides by a non-constant (one
    cheap walk: what a new map checks)."""
    symbols: set[Symbol] = set()
    divides = False
    seen: set[int] = set()
    stack = list(exprs)
    while stack:
        e = stack.pop()
        if e.is_Symbol:
            symbols.add(e)
            continue
        if not e.args or id(e) in seen:
            if e.is_Rational and not e.is_Integer:
                raise MapError(f"{e} is not an integer: index expressions take integer "
                               f"coefficients; for division write FloorDiv(a, b)")
            continue
        seen.add(id(e))
        if isinstance(e, _IntegerDivision) and not e.args[1].is_Integer:
            divides = True
        elif not isinstance(e, (Add, Mul, Pow, _IntegerOp)):
            raise MapError(_foreign_advice(e))
        stack.extend(e.args)
    return symbols, divides


def _foreign_advice(e: Expr) -> str:
    """Why a sympy function cannot be in a map, and what to write instead."""
    name = type(e).__name__
    instead = {"floor": "symidx.FloorDiv(a, b) (a // b on symidx's variables builds it)",
               "ceiling": "symidx.CeilDiv(a, b)",
               "Mod": "symidx.Mod(a, b) (a % b on symidx's variables builds it)",
               "Min": "symidx.expr.Min(a, b)", "Max": "symidx.expr.Max(a, b)"}.get(name)
    advice = f": write {instead}" if instead else ""
    return (f"{e} uses sympy's {name}, which index expressions do not take (they have "
            f"symidx's own FloorDiv, Mod, CeilDiv, Min and Max){advice}")


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


def _floordiv(a: Any, b: Any) -> Any:
    if isinstance(b, int):  # ints raise ZeroDivisionError; a constant divisor is never 0
        return a // b
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):  # 0 only outside the domain
        return a // b


def _mod(a: Any, b: Any) -> Any:
    if isinstance(b, int):
        return a % b
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        return a % b


def _ceildiv(a: Any, b: Any) -> Any:
    return -_floordiv(-a, b)


def compile_expr(expr: Expr, variables: Sequence[Symbol]) -> Callable[[Sequence[Any]], Any]:
    """A function of the variables' values (ints, or numpy integer arrays that broadcast)
    computing ``expr`` with floor division and Python-style mod. No sympy in the loop.

    A divisor that is not a constant is nonzero on a map's domain (maps are checked when
    made), but may be zero elsewhere: with ints that raises ``ZeroDivisionError``; with
    arrays the value there is meaningless and the caller masks it out."""
    position = {v: i for i, v in enumerate(variables)}

    def build(node: Expr) -> Callable[[Sequence[Any]], Any]:
        if node.is_Integer:
            value = int(node)
            return lambda env: value
        if node.is_Symbol:
            if node not in position:
                raise MapError(f"variable {node} is not bound")
            i = position[node]
            return lambda env: env[i]
        parts = [build(a) for a in node.args]
        if isinstance(node, Add):
            return lambda env: _fold(operator.add, [p(env) for p in parts])
        if isinstance(node, Mul):
            return lambda env: _fold(operator.mul, [p(env) for p in parts])
        if isinstance(node, Pow) and node.args[1].is_Integer and int(node.args[1]) > 0:
            base, n = parts[0], int(node.args[1])
            return lambda env: base(env) ** n
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
    FloorDiv: _floordiv,
    Mod: _mod,
    CeilDiv: _ceildiv,
    Min: _minimum,
    Max: _maximum,
}


# --- exact evaluation over arrays ---------------------------------------------------------
INT64_SAFE = 1 << 62
"""Values below this in magnitude are computed in numpy's int64 (with room to spare)."""


def evaluate_exact(exprs: Sequence[Expr], variables: Sequence[Symbol],
                   values: Sequence[Any]) -> tuple[list[Any], Any]:
    """The expressions evaluated over numpy arrays of the variables' values (one
    broadcastable integer array per variable, int64 or of Python ints), *exactly*: a node
    is computed in int64 only when a bound on the magnitude of it and of every value
    computed on the way to it (partial sums and products) is below :data:`INT64_SAFE`;
    otherwise in Python integers (numpy object arrays), so nothing wraps. A value that
    fits in int64 is handed on as int64 even when it was computed in Python integers.

    Returns (values of ``exprs``, ``defined``): ``defined`` is a boolean array, False
    where some divisor that is not a constant is 0 (there the expression has no value:
    the values returned at those points are meaningless), or None when no divisor is 0
    anywhere."""
    import numpy as np

    arrays = [np.asarray(v) for v in values]
    position = {v: i for i, v in enumerate(variables)}
    magnitude: dict[Expr, int] = {}
    for v, a in zip(variables, arrays):
        magnitude[v] = max(abs(int(a.min())), abs(int(a.max()))) if a.size else 0
    memo: dict[Expr, Any] = {}
    undefined: list[Any] = []
    shared = _shared_nodes(exprs)  # only these are kept: the others die once used

    def walk(e: Expr) -> Any:
        got = memo.get(e)
        if got is not None:
            return got
        if e.is_Integer:
            value = int(e)
            magnitude[e] = abs(value)
            got = np.int64(value) if abs(value) < INT64_SAFE else value
        elif e.is_Symbol:
            if e not in position:
                raise MapError(f"variable {e} is not bound")
            got = arrays[position[e]]
        else:
            args = [walk(a) for a in e.args]
            sizes = [magnitude[a] for a in e.args]
            size = _magnitude_of(e, sizes)
            magnitude[e] = size
            if size >= INT64_SAFE or any(s >= INT64_SAFE for s in sizes):
                args = [_as_python(x) for x in args]
            got = _apply(e, args, undefined)
            if size < INT64_SAFE:
                got = _as_int64(got)
            if e in shared:
                memo[e] = got
        return got

    results = [walk(e) for e in exprs]
    defined = None
    for zero in undefined:
        defined = ~zero if defined is None else defined & ~zero
    return results, defined


def _shared_nodes(exprs: Sequence[Expr]) -> set[Expr]:
    """The compound sub-expressions used more than once (by two parents, or twice at the
    top): the values worth keeping while the others are computed."""
    uses: dict[Expr, int] = {}
    stack = list(exprs)
    while stack:
        e = stack.pop()
        if not e.args:
            continue
        uses[e] = uses.get(e, 0) + 1
        if uses[e] == 1:  # its own arguments counted once, however often it is used
            stack.extend(e.args)
    return {e for e, n in uses.items() if n > 1}


def _magnitude_of(e: Expr, sizes: list[int]) -> int:
    """A bound on ``|e|`` and on every value computed on the way to it, from the bounds of
    its arguments."""
    if isinstance(e, Add):
        return sum(sizes)
    if isinstance(e, Mul):
        product = 1
        for s in sizes:
            product *= s
        return product
    if isinstance(e, Pow):
        return sizes[0] ** abs(int(e.args[1]))
    # floordiv, ceildiv (through -a), mod (|a mod b| < |b|), min, max: no larger than an
    # argument
    return max(sizes)


def _apply(e: Expr, args: list[Any], undefined: list[Any]) -> Any:
    """One node over its arguments' values; a divisor that is not a constant has its
    zeros replaced by 1 and recorded in ``undefined``."""
    import numpy as np

    if isinstance(e, Add):
        return _fold(operator.add, args)
    if isinstance(e, Mul):
        return _fold(operator.mul, args)
    if isinstance(e, Pow):
        if not (e.args[1].is_Integer and int(e.args[1]) > 0):
            raise MapError(f"unsupported power {e}")
        return args[0] ** int(e.args[1])
    if isinstance(e, _IntegerDivision):
        a, b = args
        if not e.args[1].is_Integer:
            zero = np.asarray(b == 0)
            if zero.any():
                undefined.append(zero)
                b = np.where(zero, 1, b)
        if isinstance(e, FloorDiv):
            return a // b
        if isinstance(e, Mod):
            return a % b
        return -((-a) // b)
    if isinstance(e, Min):
        return np.minimum(*args)
    if isinstance(e, Max):
        return np.maximum(*args)
    raise MapError(f"unsupported expression {e}")


def _as_python(x: Any) -> Any:
    """An int64 array (or scalar) as an array of Python integers."""
    import numpy as np

    if isinstance(x, int):
        return x
    a = np.asarray(x)
    return a if a.dtype == object else a.astype(object)


def _as_int64(x: Any) -> Any:
    """A value known to fit in int64, as int64."""
    import numpy as np

    if isinstance(x, int):
        return np.int64(x)
    a = np.asarray(x)
    return a if a.dtype == np.int64 else a.astype(np.int64)
