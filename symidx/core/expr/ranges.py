"""Intervals of index expressions: :func:`bounds` over the variables' intervals, and
:func:`constrained_bounds` under known facts (a map's constraints). Sound always."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from math import gcd
from typing import Any

from sympy import Add, Expr, Integer, Mul, Pow, Symbol

from symidx.core.expr.nodes import CeilDiv, FloorDiv, Max, Min, Mod
from symidx.core.expr.sums import ONE
from symidx.core.interval import Interval
from symidx.errors import MapError


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


def scaled_sum(coefficients: Mapping[Expr, Any], interval_of: Callable[[Expr], Interval],
               lo: Any = 0, hi: Any = 0) -> tuple[Any, Any] | Interval:
    """The ends of ``lo..hi`` plus the sum of ``c * t`` over ``coefficients`` (``t`` to
    its coefficient ``c``; the constant under :data:`~symidx.core.expr.ONE`), each term
    ranging over ``interval_of(t)`` on its own: each interval scaled by its coefficient
    and added, as :func:`bounds` adds a sum's. The coefficients may be integers or
    fractions. The empty interval of a term, as given, when one is empty."""
    for t, c in coefficients.items():
        if not c:
            continue
        if t is ONE:
            lo, hi = lo + c, hi + c
            continue
        b = interval_of(t)
        if b.lo > b.hi:
            return b
        lo, hi = (lo + c * b.lo, hi + c * b.hi) if c > 0 else (lo + c * b.hi, hi + c * b.lo)
    return lo, hi


def _node_bounds(expr: Expr, env: Mapping[Symbol, Interval],
                 memo: dict[Expr, Interval]) -> Interval:
    """The interval of a compound expression from its arguments' (memoised)."""
    args = expr._args  # as ``expr.args``, without the property's call
    kind = type(expr)
    if kind is Add:  # the hot cases first: sums and integer multiples
        lo = hi = 0
        for a in args:
            if a.is_Integer:
                v = a.p
                lo += v
                hi += v
                continue
            margs = a._args
            if isinstance(a, Mul) and len(margs) == 2 and margs[0].is_Integer:
                k, b = margs[0].p, _sub_bounds(margs[1], env, memo)
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
            k = args[0].p
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
    if not (rb.is_point and rb.lo > 0):
        return bounds(a, env, memo).mod(rb)
    m = rb.lo
    if not isinstance(a, Add):
        return bounds(a, env, memo).mod(rb).intersect(_residues(a, m))
    if memo is None:
        memo = {}
    # (c * x + y) mod m with m | c: only y matters. Bound each term once; in the same walk,
    # the residues (:func:`_residues`): g the gcd of m and the variable terms' coefficients
    # (0 once a term has none, or the gcd is 1: then no residue is known).
    lo = hi = rest_lo = rest_hi = 0  # the sum's interval, and that of its other terms
    g, const = m, 0
    for t in a._args:
        if t.is_Integer:
            v = t.p
            lo += v
            hi += v
            if v % m:
                rest_lo += v
                rest_hi += v
            const += v
            continue
        tb = _sub_bounds(t, env, memo)
        if tb.lo > tb.hi:
            return Interval.EMPTY
        lo += tb.lo
        hi += tb.hi
        coeff = t._args[0] if isinstance(t, Mul) else None
        if coeff is None or not coeff.is_Integer:
            g = 0
            rest_lo += tb.lo
            rest_hi += tb.hi
            continue
        k = coeff.p
        if k % m:
            rest_lo += tb.lo
            rest_hi += tb.hi
        if g:
            g = gcd(g, k)
            if g == 1:
                g = 0
    found = _one_period(lo, hi, m)
    rest = _one_period(rest_lo, rest_hi, m)
    r = const % g if g else 0
    return Interval(max(found[0], rest[0], r), min(found[1], rest[1], m - g + r if g else m - 1))


def _one_period(lo: int, hi: int, m: int) -> tuple[int, int]:
    """``[lo, hi] mod m`` for ``m > 0`` as :meth:`Interval.mod` gives it, as a pair."""
    return (lo % m, hi % m) if lo // m == hi // m else (0, m - 1)


def _residues(a: Expr, m: int) -> Interval:
    """The values ``a mod m`` can take by ``a``'s residues: with ``g`` the gcd of ``m`` and
    every variable term's coefficient and ``r`` the constant term modulo ``g``, ``a`` is
    ``r`` modulo ``g``, and so is ``a mod m`` (``g`` divides ``m``): it lies in
    ``[r, m - g + r]``. So ``(n * 320 + 255) mod 256`` lies in ``[63, 255]``."""
    g, const = m, 0
    for t in a.args if isinstance(a, Add) else (a,):
        if t.is_Integer:
            const += int(t)
        elif isinstance(t, Mul) and t.args[0].is_Integer:
            g = gcd(g, int(t.args[0]))
        else:
            return Interval(0, m - 1)
        if g == 1:
            return Interval(0, m - 1)
    r = const % g
    return Interval(r, m - g + r)


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

    # never looser than the box alone: the rules of :func:`bounds` for a division see
    # more than the intervals of its arguments (``3*d0 mod 9`` takes multiples of 3)
    return walk(expr).intersect(bounds(expr, env))


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
