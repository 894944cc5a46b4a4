"""The simplifier's expression rules.

Each rule is a small function ``rule(node, ctx) -> Expr | None``: the rewritten node, or
``None`` when it does not apply. ``ctx`` gives the interval of any expression
(``ctx.bounds``) and can simplify a sub-expression (``ctx.simplify``). Every rule states
its rewrite and why it holds; hypothesis tests check each against brute-force evaluation.

Notation: ``F(x, c)`` is ``x floordiv c``, ``M(x, c)`` is ``x mod c``; ``c > 0`` is an
integer constant; ``x``, ``y`` are integer-valued expressions.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from math import gcd
from typing import Protocol

from sympy import Add, Integer, Mul

from symidx.expr import CeilDiv, Expr, FloorDiv, Max, Min, Mod, add, scale
from symidx.interval import Interval


class Context(Protocol):
    def bounds(self, e: Expr) -> Interval: ...

    def simplify(self, e: Expr) -> Expr: ...

    def probe(self, e: Expr) -> Expr: ...


Rule = Callable[[Expr, Context], "Expr | None"]


# --- linear-form helpers -------------------------------------------------------------------
def clear_rule_caches() -> None:
    _terms.cache_clear()


def terms(e: Expr) -> list[tuple[int, Expr]]:
    """``e`` as ``[(coefficient, monomial)]``; the constant has monomial ``1``."""
    return list(_terms(e))


@lru_cache(maxsize=8192)
def _terms(e: Expr) -> tuple[tuple[int, Expr], ...]:
    parts = e.args if isinstance(e, Add) else (e,)
    out = []
    for t in parts:
        if t.is_Integer:
            out.append((int(t), Integer(1)))
        else:
            coeff, rest = t.as_coeff_Mul()
            if coeff.is_Integer:
                out.append((int(coeff), rest))
            else:  # pragma: no cover - our expressions have integer coefficients
                out.append((1, t))
    return tuple(out)


def from_terms(parts: list[tuple[int, Expr]]) -> Expr:
    return add([Integer(c) if m == 1 else scale(c, m) for c, m in parts if c])


def positive_divisor(node: Expr) -> int | None:
    """The divisor of a FloorDiv/Mod/CeilDiv when it is a positive constant."""
    d = node.args[1]
    if d.is_Integer and int(d) > 0:
        return int(d)
    return None


# --- any operation ---------------------------------------------------------------------------
def constant_by_range(node: Expr, ctx: Context) -> Expr | None:
    """``F(x, c) = k`` when every value of ``x`` lies in ``[k*c, k*c + c - 1]``; in general,
    an operation whose range is a single value is that value (``ceildiv`` likewise)."""
    b = ctx.bounds(node)
    return Integer(b.lo) if b.is_point else None


# --- FloorDiv -------------------------------------------------------------------------------
def floordiv_extract_multiples(node: Expr, ctx: Context) -> Expr | None:
    """``F(c*q + y, c) = q + F(y, c)``: terms whose coefficient is a multiple of ``c``
    (and a constant that is a multiple of ``c``) leave the division exactly."""
    c = positive_divisor(node)
    if c is None:
        return None
    out: list[tuple[int, Expr]] = []
    kept: list[tuple[int, Expr]] = []
    for coeff, mono in terms(node.args[0]):
        (out if coeff % c == 0 else kept).append((coeff, mono))
    if not out:
        return None
    quotient = from_terms([(coeff // c, mono) for coeff, mono in out])
    return add([quotient, FloorDiv(from_terms(kept), c)])


def floordiv_drop_remainder(node: Expr, ctx: Context) -> Expr | None:
    """``F(g*x + r, c) = F(x, c/g)`` when ``g`` divides ``c`` and ``0 <= r < g``:
    with ``c = g*k``, ``F(g*x + r, g*k) = F(x + r/g, k) = F(x, k)`` as ``0 <= r/g < 1``.
    Also ``F(g*x, c) = F(x, c/g)`` (the case ``r = 0``)."""
    c = positive_divisor(node)
    if c is None:
        return None
    parts = terms(node.args[0])
    split = _split_remainder(parts, c, ctx)
    if split is None:
        return None
    g, big, _ = split
    reduced = from_terms([(coeff // g, mono) for coeff, mono in big])
    return FloorDiv(reduced, c // g)


def _split_remainder(parts: list[tuple[int, Expr]], c: int, ctx: Context
                     ) -> tuple[int, list[tuple[int, Expr]], list[tuple[int, Expr]]] | None:
    """Find ``g > 1`` dividing ``c`` and split the sum into ``big`` (coefficients divisible
    by ``g``; the constant's multiple of ``g`` goes here) and ``small`` (the rest, which
    must sum into ``[0, g)``). Prefers the largest ``g``."""
    candidates = sorted({gcd(coeff, c) for coeff, m in parts if coeff and m != 1} - {1},
                        reverse=True)
    for g in candidates:
        big = [(coeff, m) for coeff, m in parts if m != 1 and coeff % g == 0]
        small = [(coeff, m) for coeff, m in parts if m != 1 and coeff % g != 0]
        const = sum(coeff for coeff, m in parts if m == 1)
        if const // g:
            big.append((const // g * g, Integer(1)))
        if const % g:
            small.append((const % g, Integer(1)))
        if small:
            b = ctx.bounds(from_terms(small))
            if b.is_empty or b.lo < 0 or b.hi >= g:
                continue
        return g, big, small
    return None


def floordiv_nested(node: Expr, ctx: Context) -> Expr | None:
    """``F(y + F(x, a), b) = F(a*y + x, a*b)`` for ``a, b > 0`` and integer ``y``:
    ``floor((y + floor(x/a)) / b) = floor(floor((a*y + x)/a) / b) = floor((a*y + x)/(a*b))``.
    Nested divisions become one, so equal quotients get equal spellings."""
    b = positive_divisor(node)
    if b is None:
        return None
    parts = terms(node.args[0])
    inner = [(k, m) for k, m in parts if isinstance(m, FloorDiv) and positive_divisor(m)]
    if len(inner) != 1 or inner[0][0] != 1:
        return None
    _, div = inner[0]
    a = int(div.args[1])
    rest = [(k * a, m) for k, m in parts if m is not div]
    return FloorDiv(add([from_terms(rest), div.args[0]]), a * b)


def floordiv_of_mod(node: Expr, ctx: Context) -> Expr | None:
    """``F(M(x, a*b), a) = M(F(x, a), b)`` for ``a, b > 0``: the digits of ``x`` in base
    ``a`` above the lowest, modulo ``b``."""
    a = positive_divisor(node)
    inner = node.args[0]
    if a is None or not isinstance(inner, Mod):
        return None
    ab = positive_divisor(inner)
    if ab is None or ab % a != 0:
        return None
    return Mod(FloorDiv(inner.args[0], a), ab // a)


# --- Mod -------------------------------------------------------------------------------------
def mod_single_period(node: Expr, ctx: Context) -> Expr | None:
    """``M(x, c) = x - k*c`` when every value of ``x`` lies in ``[k*c, k*c + c - 1]`` (in
    particular ``M(x, c) = x`` for ``0 <= x < c``)."""
    c = positive_divisor(node)
    if c is None:
        return None
    x = node.args[0]
    b = ctx.bounds(x)
    if b.is_empty or b.lo // c != b.hi // c:
        return None
    return add([x, Integer(-(b.lo // c) * c)])


def mod_drop_multiples(node: Expr, ctx: Context) -> Expr | None:
    """``M(c*q + y, c) = M(y, c)``: terms that are multiples of ``c`` (a constant too) do not
    change the remainder. Other constants stay as written (``(d0 + 3) mod 2``), as XLA's."""
    c = positive_divisor(node)
    if c is None:
        return None
    parts = terms(node.args[0])
    kept = []
    changed = False
    for coeff, mono in parts:
        if coeff % c == 0:
            changed = True
            continue
        kept.append((coeff, mono))
    if not changed:
        return None
    return Mod(from_terms(kept), c)


def mod_factor_gcd(node: Expr, ctx: Context) -> Expr | None:
    """``M(g*x + r, c) = g*M(x, c/g) + r`` when ``g`` divides ``c`` and ``0 <= r < g``:
    with ``c = g*k``, ``g*x + r = c*F(x, k) + g*M(x, k) + r`` and the last two terms lie in
    ``[0, c)``. Applied when the remainder ``r`` is a range-bounded expression (it then
    leaves the mod), not for a bare constant, which would only grow the expression."""
    c = positive_divisor(node)
    if c is None:
        return None
    parts = terms(node.args[0])
    split = _split_remainder(parts, c, ctx)
    if split is None:
        return None
    g, big, small = split
    if small and all(m == 1 for _, m in small):
        return None
    reduced = from_terms([(coeff // g, mono) for coeff, mono in big])
    return add([scale(g, Mod(reduced, c // g)), from_terms(small)])


def mod_nested(node: Expr, ctx: Context) -> Expr | None:
    """``M(M(x, a), b) = M(x, b)`` when ``b`` divides ``a`` (both positive)."""
    b = positive_divisor(node)
    inner = node.args[0]
    if b is None or not isinstance(inner, Mod):
        return None
    a = positive_divisor(inner)
    if a is None or a % b != 0:
        return None
    return Mod(inner.args[0], b)


# --- sums --------------------------------------------------------------------------------------
def sum_recombine_div_mod(node: Expr, ctx: Context) -> Expr | None:
    """``k*c*F(x, c) + k*M(x, c) = k*x`` (Euclid: ``x = c*F(x, c) + M(x, c)``). The
    quotient is found in its simplified spelling."""
    parts = terms(node)
    index = {m: k for k, m in parts}
    for k, mono in parts:
        c = positive_divisor(mono) if isinstance(mono, Mod) else None
        if c is None:
            continue
        quotient = ctx.probe(FloorDiv(mono.args[0], c))
        if index.get(quotient) == k * c:
            rest = [(kk, m) for kk, m in parts if m is not mono and m != quotient]
            return add([from_terms(rest), scale(k, mono.args[0])])
    return None


def sum_to_mod(node: Expr, ctx: Context) -> Expr | None:
    """``m*x - m*c*F(x, c) = m*M(x, c)``: when a sum holds ``-m*c*F(x, c)`` and every
    non-constant term of ``m*x``, they become ``m*M(x, c)`` (the constant is adjusted)."""
    parts = terms(node)
    index = {m: k for k, m in parts}
    for k, mono in parts:
        c = positive_divisor(mono) if isinstance(mono, FloorDiv) else None
        if c is None or k % c != 0:
            continue
        m = -k // c
        wanted = [(coeff * m, t) for coeff, t in terms(mono.args[0])]
        if not all(t == 1 or index.get(t) == coeff for coeff, t in wanted):
            continue
        if all(t == 1 for _, t in wanted):
            continue
        remaining = dict(index)
        del remaining[mono]
        for coeff, t in wanted:
            remaining[t] = remaining.get(t, 0) - coeff
        rest = [(coeff, t) for t, coeff in remaining.items() if coeff]
        return add([from_terms(rest), scale(m, Mod(mono.args[0], c))])
    return None


# --- min / max -------------------------------------------------------------------
def minmax_by_range(node: Expr, ctx: Context) -> Expr | None:
    """``min(a, b) = a`` when ``a - b <= 0`` everywhere (``max(a, b) = a`` when
    ``a - b >= 0``): the difference's range decides, so ``max(d0, d0 - 1) = d0``."""
    a, b = node.args
    diff = ctx.bounds(add([a, scale(-1, b)]))
    if diff.is_empty:
        return None
    is_min = isinstance(node, Min)
    if diff.hi <= 0:
        return a if is_min else b
    if diff.lo >= 0:
        return b if is_min else a
    return None


# --- the rule table ------------------------------------------------------------------------------
RULES: dict[type, tuple[Rule, ...]] = {
    FloorDiv: (constant_by_range, floordiv_extract_multiples, floordiv_drop_remainder,
               floordiv_nested, floordiv_of_mod),
    Mod: (mod_single_period, mod_drop_multiples, mod_factor_gcd, mod_nested),
    Add: (sum_recombine_div_mod, sum_to_mod),
    Min: (minmax_by_range,),
    Max: (minmax_by_range,),
    CeilDiv: (constant_by_range,),
    Mul: (),
}
