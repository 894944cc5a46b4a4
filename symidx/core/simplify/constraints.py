"""Constraint rules: fold ``lo <= e op c <= hi`` into bounds on ``e``, tighten variables.

Each function takes one constraint ``(expr, interval)`` and returns an equivalent one (the
same set of points satisfies it), or ``None`` when it does not apply.
"""

from __future__ import annotations

from collections.abc import Callable
from math import gcd

from sympy import Add, Integer

from symidx._arith import ceil_div
from symidx.core.expr import ONE, Expr, FloorDiv, Mod, from_terms, terms
from symidx.core.interval import Interval
from symidx.core.simplify.context import Context
from symidx.core.simplify.rules import positive_divisor

Constraint = tuple[Expr, Interval]
ConstraintRule = Callable[[Expr, Interval, Context], "Constraint | None"]


def _floor(a: int, b: int) -> int:
    return a // b


def fold_out_of_range(e: Expr, iv: Interval, ctx: Context) -> Constraint | None:
    """``e in [lo, hi]``  <=>  ``e in []`` (never) when ``range(e)`` and ``[lo, hi]`` are
    disjoint: every value ``e`` takes lies in its range, none in ``[lo, hi]``. The range
    comes from the variables' intervals, so ``d0 mod 8 + 5 in [50, 54]`` (its range is
    ``[5, 12]``) is unsatisfiable and the map is known empty."""
    if iv.is_empty:
        return None
    if ctx.bounds(e).intersect(iv).is_empty:
        return e, Interval.EMPTY
    return None


def fold_constant_term(e: Expr, iv: Interval, ctx: Context) -> Constraint | None:
    """``x + k in [lo, hi]``  <=>  ``x in [lo - k, hi - k]``."""
    if not isinstance(e, Add):
        return None
    parts = terms(e)
    k = sum(c for c, m in parts if m is ONE)
    if not k:
        return None
    return from_terms([(c, m) for c, m in parts if m is not ONE]), Interval(iv.lo - k, iv.hi - k)


def fold_common_factor(e: Expr, iv: Interval, ctx: Context) -> Constraint | None:
    """``g*x in [lo, hi]``  <=>  ``x in [ceil(lo/g), floor(hi/g)]`` (bounds swap for
    ``g < 0``); ``g`` is the gcd of all coefficients, with the sign of the first."""
    parts = terms(e)
    if any(m is ONE for _, m in parts):
        return None
    g = 0
    for c, _ in parts:
        g = gcd(g, c)
    if parts and parts[0][0] < 0:
        g = -g
    if g in (0, 1):
        return None  # nothing to divide out (g == -1 still normalises the sign)
    x = from_terms([(c // g, m) for c, m in parts])
    if g > 0:
        return x, Interval(ceil_div(iv.lo, g), _floor(iv.hi, g))
    return x, Interval(ceil_div(iv.hi, g), _floor(iv.lo, g))


def fold_floordiv(e: Expr, iv: Interval, ctx: Context) -> Constraint | None:
    """``F(x, c) in [lo, hi]``  <=>  ``x in [lo*c, hi*c + c - 1]`` for ``c > 0``, and
    ``x in [c*(hi + 1) + 1, c*lo]`` for ``c < 0`` (floor semantics)."""
    if not isinstance(e, FloorDiv) or not e.args[1].is_Integer:
        return None
    c = int(e.args[1])
    x = e.args[0]
    if c > 0:
        return x, Interval(iv.lo * c, iv.hi * c + c - 1)
    return x, Interval(c * (iv.hi + 1) + 1, c * iv.lo)


def fold_small_remainder(e: Expr, iv: Interval, ctx: Context) -> Constraint | None:
    """``g*x + r in [g*a, g*b + g - 1]`` with ``0 <= r < g``  <=>  ``x in [a, b]``: the
    constraint is about ``F(g*x + r, g) = x`` alone."""
    if not isinstance(e, Add):
        return None
    parts = terms(e)
    for g in sorted({abs(c) for c, m in parts if m is not ONE} - {0, 1}, reverse=True):
        if iv.lo % g or (iv.hi + 1) % g:
            continue
        big = [(c, m) for c, m in parts if c % g == 0 and m is not ONE]
        small = [(c, m) for c, m in parts if (c, m) not in big]
        if not big or not small:
            continue
        b = ctx.bounds(from_terms(small))
        if b.is_empty or b.lo < 0 or b.hi >= g:
            continue
        return from_terms([(c // g, m) for c, m in big]), Interval(iv.lo // g, iv.hi // g)
    return None


CONSTRAINT_RULES: tuple[ConstraintRule, ...] = (
    fold_out_of_range, fold_constant_term, fold_common_factor, fold_floordiv, fold_small_remainder,
)


def residue(e: Expr, iv: Interval) -> tuple[Expr, int, int] | None:
    """``(x, c, r)`` when the constraint says ``x mod c == r`` for a variable ``x``."""
    if isinstance(e, Mod) and e.args[0].is_Symbol and iv.is_point:
        c = positive_divisor(e)
        if c is not None and 0 <= iv.lo < c:
            return e.args[0], c, iv.lo
    return None


def tighten_to_residue(b: Interval, c: int, r: int) -> Interval:
    """The smallest interval inside ``b`` holding every value ``= r (mod c)`` of ``b``."""
    lo = b.lo + (r - b.lo) % c
    hi = b.hi - (b.hi - r) % c
    return Interval(lo, hi)


def residue_range(e: Expr, iv: Interval) -> tuple[Expr, int, int, int] | None:
    """``(x, c, a, b)`` when the constraint says ``x mod c in [a, b]`` for a variable ``x``
    and a constant ``c > 0``, with ``0 <= a <= b < c`` (the interval cut to ``[0, c - 1]``,
    the values ``x mod c`` takes) and not every residue allowed."""
    if isinstance(e, Mod) and e.args[0].is_Symbol:
        c = positive_divisor(e)
        if c is not None:
            a, b = max(iv.lo, 0), min(iv.hi, c - 1)
            if a <= b and (a, b) != (0, c - 1):
                return e.args[0], c, a, b
    return None


def tighten_by_mod_range(bounds: Interval, c: int, a: int, b: int) -> Interval:
    """``x in [lo, hi]`` and ``x mod c in [a, b]`` (``0 <= a <= b < c``): the smallest
    interval inside ``[lo, hi]`` holding every value whose residue lies in ``[a, b]``:
    ``lo`` moves up to the next such value, ``hi`` down to the previous one. So
    ``x in [0, 19]`` and ``x mod 5 in [0, 1]`` give ``x in [0, 16]`` (17, 18, 19 have
    residues 2, 3, 4), and ``x in [3, 20]`` with ``x mod 5 in [1, 2]`` gives ``[6, 17]``.
    Every value the two constraints allow stays; the mod constraint itself is kept."""
    if bounds.is_empty:
        return bounds
    r = bounds.lo % c
    lo = bounds.lo if a <= r <= b else bounds.lo + (a - r if r < a else c - r + a)
    r = bounds.hi % c
    hi = bounds.hi if a <= r <= b else bounds.hi - (r - b if r > b else r + c - b)
    return Interval(lo, hi)


VARIABLE_RULES = (tighten_by_mod_range,)
"""Rules that narrow a variable's interval by a constraint (run in the
``tighten_to_residues`` pass; each needs a row in the rule table too)."""


def merge_residues(c1: int, r1: int, c2: int, r2: int) -> tuple[int, int] | None:
    """Chinese remainder: ``x = r1 (mod c1)`` and ``x = r2 (mod c2)`` as one congruence
    ``x = r (mod lcm)``, or None when they are incompatible."""
    g = gcd(c1, c2)
    if (r2 - r1) % g:
        return None
    lcm = c1 // g * c2
    # solve r1 + c1*t = r2 (mod c2)
    t = ((r2 - r1) // g * pow(c1 // g, -1, c2 // g)) % (c2 // g) if c2 // g > 1 else 0
    return lcm, (r1 + c1 * t) % lcm


def as_mod(x: Expr, c: int) -> Expr:
    return Mod(x, Integer(c))
