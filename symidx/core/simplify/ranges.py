"""Result ranges under constraints on linear combinations (XLA's ``ComputeResultRanges``).

:func:`linear_bounds` bounds an expression on the points where a map's constraints hold.
Beyond :func:`~symidx.core.expr.constrained_bounds` (a sub-expression that *is* a constrained
expression, or a sum that holds one, takes the constraint's interval), each sum ``e`` is
bounded through every linear constraint ``s in [L, U]`` as ``e = t*s + (e - t*s)`` for the
multipliers ``t`` that cancel a term of ``s`` in ``e`` (rational ``t``): then
``e in t*[L, U] + range(e - t*s)``, and ``e`` being an integer the ends round inwards.
Every such interval holds every value ``e`` takes where the constraints hold, so their
intersection does too. So ``d0 * 2 + d1 * 2 + 1`` with ``d0 + d1 in [0, 5]`` lies in
``[1, 11]`` and ``d0 * 2 + d1`` (both in ``[0, 9]``) in ``[0, 10]``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from math import ceil, floor

from sympy import Add, Symbol

from symidx.core.expr import ONE, Expr, _combine, bounds, constrained_bounds, scaled_sum, terms
from symidx.core.interval import Interval

__all__ = ["linear_bounds"]

Linear = dict[Expr, int]  # monomial -> coefficient; the constant under ONE


def _linear(e: Expr) -> Linear:
    out: Linear = {}
    for c, m in terms(e):
        out[m] = out.get(m, 0) + c
    return out


def linear_bounds(expr: Expr, env: Mapping[Symbol, Interval],
                  known: Mapping[Expr, Interval]) -> Interval:
    """An interval holding every value of ``expr`` where each variable lies in its
    interval in ``env`` and every ``known`` fact ``e in interval`` holds (a map's
    constraints). Sound; tighter than :func:`~symidx.core.expr.constrained_bounds` where a
    sum is bounded through a constraint on another linear combination."""
    if not known:
        return bounds(expr, env)
    sums = [(_linear(e), iv) for e, iv in known.items() if isinstance(e, Add)]
    memo: dict[Expr, Interval] = {}

    def walk(e: Expr) -> Interval:
        got = memo.get(e)
        if got is not None:
            return got
        if e.is_Integer:
            result = bounds(e, env)
        elif e.is_Symbol:
            result = bounds(e, env)
            memo[e] = result  # the sums below bound the other variables by this one
            if sums:
                result = result.intersect(_through_sums({e: 1}, sums, walk))
        else:
            # a sum below may hold ``e`` as a term: while ``e`` is being bounded, it is
            # bounded plainly there (no cycle)
            memo[e] = bounds(e, env)
            result = _combine(e, [walk(a) for a in e.args])
            if isinstance(e, Add) and sums:
                result = result.intersect(_through_sums(_linear(e), sums, walk))
        fact = known.get(e)
        if fact is not None:
            result = result.intersect(fact)
        memo[e] = result
        return result

    return walk(expr).intersect(constrained_bounds(expr, env, known))


def _through_sums(e: Linear, sums: list[tuple[Linear, Interval]],
                  walk: Callable[[Expr], Interval]) -> Interval:
    """The intersection of ``t*[L, U] + range(e - t*s)`` over the known sums ``s in
    [L, U]`` and the multipliers ``t`` that cancel a term of ``s`` in ``e``."""
    best = Interval(-(1 << 62), 1 << 62)
    for s, iv in sums:
        if iv.is_empty:
            continue
        for m, b in s.items():
            a = e.get(m)
            if m is ONE or not a or not b:
                continue
            t = Fraction(a, b)
            rest: dict[Expr, Fraction] = {k: Fraction(v) for k, v in e.items()}
            for k, v in s.items():
                rest[k] = rest.get(k, Fraction(0)) - t * v
            lo, hi = (t * iv.lo, t * iv.hi) if t > 0 else (t * iv.hi, t * iv.lo)
            span = scaled_sum(rest, walk, lo, hi)
            if isinstance(span, Interval):  # a term's interval is empty
                return span
            best = best.intersect(Interval(ceil(span[0]), floor(span[1])))
    return best
