"""The simplifier's expression rules.

Each rule is a small function ``rule(node, ctx) -> Expr | None``: the rewritten node, or
``None`` when it does not apply. ``ctx`` gives the interval of any expression
(``ctx.bounds``) and can simplify a sub-expression (``ctx.simplify``, or ``ctx.probe`` to
look ahead without recording steps). Every rule states its rewrite and why it holds;
hypothesis tests check each against brute-force evaluation.

Notation: ``F(x, c)`` is ``x floordiv c``, ``C(x, c)`` is ``x ceildiv c``, ``M(x, c)`` is
``x mod c``; ``c > 0`` is an integer constant unless a rule says otherwise; ``x``, ``y`` are
integer-valued expressions. A divisor that is not a constant (``s0 floordiv s1``) is nonzero
on the map's domain (maps are checked when made); rules that need its sign read it from its
interval.
"""

from __future__ import annotations

from math import gcd

from sympy import Add, Integer, Mul, Pow, Symbol

from symidx._arith import ceil_div
from symidx.core.expr import (
    ONE,
    CeilDiv,
    Expr,
    FloorDiv,
    Max,
    Min,
    Mod,
    Terms,
    add,
    from_terms,
    scale,
    terms,
)
from symidx.core.interval import Interval
from symidx.core.simplify.context import Context


def positive_divisor(node: Expr) -> int | None:
    """The divisor of a FloorDiv/Mod/CeilDiv when it is a positive constant."""
    d = node.args[1]
    if d.is_Integer and int(d) > 0:
        return int(d)
    return None


def _is_positive(e: Expr, ctx: Context) -> bool:
    """Is ``e`` at least 1 everywhere (a positive constant, or by its interval)?"""
    if e.is_Integer:
        return int(e) > 0
    b = ctx.bounds(e)
    return not b.is_empty and b.lo >= 1


def _split_divisor(c: Expr) -> tuple[int, dict[Expr, int]]:
    """A divisor as its integer coefficient and the multiset of its other factors:
    ``4 * s0`` is ``(4, {s0: 1})``, ``8`` is ``(8, {})``."""
    if c.is_Integer:
        return int(c), {}
    coeff = 1
    factors: dict[Expr, int] = {}
    for f in c.args if isinstance(c, Mul) else (c,):
        if f.is_Integer:
            coeff *= int(f)
        elif isinstance(f, Pow) and f.args[1].is_Integer and int(f.args[1]) > 0:
            factors[f.args[0]] = factors.get(f.args[0], 0) + int(f.args[1])
        else:
            factors[f] = factors.get(f, 0) + 1
    return coeff, factors


def _product(factors: dict[Expr, int]) -> Expr:
    """The monomial of a factor multiset (``1`` when empty)."""
    parts = [b if n == 1 else Pow(b, n) for b, n in factors.items() if n]
    if not parts:
        return ONE
    return parts[0] if len(parts) == 1 else Mul(*parts)


def _multiple(coeff: int, mono: Expr, divisor: tuple[int, dict[Expr, int]]
              ) -> tuple[int, Expr] | None:
    """``coeff * mono / divisor`` as a term, when the term is a multiple of the divisor."""
    k, factors = divisor
    if coeff % k:
        return None
    if not factors:
        return coeff // k, mono
    if mono is ONE:
        return None
    _, have = _split_divisor(mono)
    rest = dict(have)
    for f, n in factors.items():
        if rest.get(f, 0) < n:
            return None
        rest[f] -= n
    return coeff // k, _product(rest)


def _split_op(mono: Expr) -> tuple[Expr, Expr | None]:
    """A monomial as ``(extra, op)`` with ``mono = extra * op`` and ``op`` its single
    division (``FloorDiv``/``Mod``/``CeilDiv``), or ``(mono, None)``."""
    if isinstance(mono, (FloorDiv, Mod, CeilDiv)):
        return ONE, mono
    if not isinstance(mono, Mul):
        return mono, None
    ops = [f for f in mono.args if isinstance(f, (FloorDiv, Mod, CeilDiv))]
    if len(ops) != 1:
        return mono, None
    rest = [f for f in mono.args if f is not ops[0]]
    return (rest[0] if len(rest) == 1 else Mul._from_args(rest)), ops[0]


def _times(*factors: Expr) -> Expr:
    """The product of monomials, ``1`` factors dropped."""
    kept = [f for f in factors if f is not ONE]
    if not kept:
        return ONE
    return kept[0] if len(kept) == 1 else Mul(*kept)


def sum_of_terms(parts: Terms) -> Expr:
    """:func:`~symidx.core.expr.from_terms`: the sum of ``[(coefficient, monomial)]``."""
    return from_terms(parts)


def is_plain(e: Expr) -> bool:
    """Is ``e`` a sum or product of integers and variables (``d0 * 4 + d1 - 3``), where no
    rule applies?"""
    kind = type(e)
    if kind is not Add and kind is not Mul:
        return False
    for a in e._args:
        if a.is_Atom:
            continue
        if type(a) is Mul:
            for f in a._args:
                if not f.is_Atom:
                    return False
            continue
        return False
    return True


def has_operation_term(e: Expr) -> bool:
    """Does the sum hold a term that is a division, a ``min`` or a ``max``, or a multiple
    of one (what the sum rules look for)?"""
    for a in e._args:
        kind = type(a)
        if kind in _OPERATIONS:
            return True
        if kind is Mul:
            for f in a._args:
                if type(f) in _OPERATIONS:
                    return True
    return False


def operation_terms(e: Expr) -> int:
    """How many terms of the sum are a division, a ``min`` or a ``max``, or a multiple of
    one (:func:`has_operation_term`'s terms), counted up to 2: the rules that pair two
    such terms need not look at a sum with fewer."""
    count = 0
    for a in e._args:
        kind = type(a)
        if kind in _OPERATIONS:
            count += 1
        elif kind is Mul:
            for f in a._args:
                if type(f) in _OPERATIONS:
                    count += 1
                    break
        if count == 2:
            break
    return count


_OPERATIONS = frozenset({FloorDiv, Mod, CeilDiv, Min, Max})


# --- any operation ---------------------------------------------------------------------------
def constant_by_range(node: Expr, ctx: Context) -> Expr | None:
    """``F(x, c) = k`` when every value of ``x`` lies in ``[k*c, k*c + c - 1]``; in general,
    an operation whose range is a single value is that value (``ceildiv`` likewise)."""
    d = node._args[1]
    if d.is_Integer and type(node) is not Mod:  # F or C by a constant: from x's interval
        c = int(d)
        if c > 0:
            span = _terms_span(terms(node._args[0]), ctx)
            if span is None:
                return None
            lo, hi = (span[0] // c, span[1] // c) if type(node) is FloorDiv else (
                ceil_div(span[0], c), ceil_div(span[1], c))
            return Integer(lo) if lo == hi else None
    b = ctx.bounds(node)
    return Integer(b.lo) if b.is_point else None


# --- FloorDiv -------------------------------------------------------------------------------
def _extract_terms(node: Expr, symbolic: bool) -> tuple[Terms, Terms] | None:
    """``(q, y)`` as term lists with ``node.args[0] = c*q + y``, the terms that are
    multiples of the divisor ``c`` moved into ``q``; for a constant divisor unless
    ``symbolic``. None when no term is a multiple."""
    c = node._args[1]
    if c.is_Integer == symbolic:
        return None
    out: Terms = []
    kept: Terms = []
    if not symbolic:  # the multiples of a constant, by their coefficients
        k = int(c)
        for coeff, mono in terms(node._args[0]):
            if coeff % k:
                kept.append((coeff, mono))
            else:
                out.append((coeff // k, mono))
        return (out, kept) if out else None
    divisor = _split_divisor(c)
    for coeff, mono in terms(node._args[0]):
        q = _multiple(coeff, mono, divisor)
        if q is None:
            kept.append((coeff, mono))
        else:
            out.append(q)
    if not out:
        return None
    return out, kept


def _extract(node: Expr, symbolic: bool) -> tuple[Expr, Expr] | None:
    """As :func:`_extract_terms`, the two parts as expressions."""
    split = _extract_terms(node, symbolic)
    return None if split is None else (sum_of_terms(split[0]), sum_of_terms(split[1]))


def _terms_bounds(parts: Terms, ctx: Context) -> Interval:
    """The interval of a sum given as terms, without building it."""
    span = _terms_span(parts, ctx)
    return Interval.EMPTY if span is None else Interval(*span)


def _terms_span(parts: Terms, ctx: Context) -> tuple[int, int] | None:
    """The least and greatest value of a sum given as terms (None when empty), without
    building the sum or its interval."""
    lo = hi = 0
    bounds, env = ctx.bounds, ctx.env
    for coeff, mono in parts:
        if mono is ONE:
            lo += coeff
            hi += coeff
            continue
        b = env[mono] if type(mono) is Symbol else bounds(mono)
        if b.lo > b.hi:
            return None
        if coeff >= 0:
            lo, hi = lo + coeff * b.lo, hi + coeff * b.hi
        else:
            lo, hi = lo + coeff * b.hi, hi + coeff * b.lo
    return lo, hi


def floordiv_extract_multiples(node: Expr, ctx: Context) -> Expr | None:
    """``F(c*q + y, c) = q + F(y, c)`` for any nonzero constant ``c`` (negative too):
    ``floor((c*q + y)/c) = floor(q + y/c) = q + floor(y/c)`` as ``q`` is an integer.
    Terms whose coefficient is a multiple of ``c`` (and such a constant) leave the
    division: ``(d0 * 6) floordiv -3 = d0 * -2``. When ``F(y, c)`` has the single value
    ``k`` on the intervals, the result is ``q + k`` at once
    (``(d0 * 100 + d1 * 10 + d2) floordiv 100 = d0`` for ``d1, d2`` in ``[0, 9]``)."""
    split = _quotient_of_rest(node, ctx)
    if split is None:
        return None
    out, kept, c, k = split
    if k is not None:
        return sum_of_terms([*out, (k, ONE)])
    return sum_of_terms([*out, (1, FloorDiv(sum_of_terms(kept), c))])


def _quotient_of_rest(node: Expr, ctx: Context
                      ) -> tuple[Terms, Terms, int, int | None] | None:
    """``F(c*q + y, c)`` or ``M(c*q + y, c)`` split by :func:`_extract_terms`:
    ``(q's terms, y's terms, c, k)``, ``k`` the single value of ``F(y, c)`` on the
    intervals when it has one (None otherwise); None when nothing splits."""
    split = _extract_terms(node, symbolic=False)
    if split is None:
        return None
    out, kept = split
    c = int(node._args[1])
    span = _terms_span(kept, ctx)
    single = span is not None and span[0] // c == span[1] // c
    return out, kept, c, (span[0] // c if span is not None and single else None)
def floordiv_cancel_divisor(node: Expr, ctx: Context) -> Expr | None:
    """``F(c*q + y, c) = q + F(y, c)`` for a divisor ``c`` that is not a constant (nonzero
    on the domain): the same derivation as :func:`floordiv_extract_multiples`, with the
    multiples found by their factors, so ``(s0 * d0) floordiv s0 = d0`` and
    ``(d1 * s0 * 8 + d0) floordiv (s0 * 4) = d1 * 2 + d0 floordiv (s0 * 4)``."""
    split = _extract(node, symbolic=True)
    if split is None:
        return None
    q, y = split
    return add([q, FloorDiv(y, node.args[1])])


def floordiv_drop_remainder(node: Expr, ctx: Context) -> Expr | None:
    """``F(g*x + r, c) = F(x, c/g)`` when ``g`` divides ``c`` and ``0 <= r < g``:
    with ``c = g*k``, ``F(g*x + r, g*k) = F(x + r/g, k) = F(x, k)`` as ``0 <= r/g < 1``.
    Also ``F(g*x, c) = F(x, c/g)`` (the case ``r = 0``)."""
    found = _factored(node, ctx)
    if found is None:
        return None
    c, g, reduced, _ = found
    return FloorDiv(reduced, c // g)


def _factored(node: Expr, ctx: Context) -> tuple[int, int, Expr, Terms] | None:
    """For ``F(g*x + r, c)`` or ``M(g*x + r, c)`` with ``g`` dividing ``c`` and
    ``0 <= r < g`` (:func:`_split_remainder`): ``(c, g, x, r's terms)``; None otherwise."""
    c = positive_divisor(node)
    if c is None:
        return None
    split = _split_remainder(terms(node.args[0]), c, ctx)
    if split is None:
        return None
    g, big, small = split
    return c, g, sum_of_terms([(coeff // g, mono) for coeff, mono in big]), small


def _split_remainder(parts: Terms, c: int, ctx: Context, ceil: bool = False
                     ) -> tuple[int, Terms, Terms] | None:
    """Find ``g > 1`` dividing ``c`` and split the sum into ``big`` (coefficients divisible
    by ``g``; the constant's multiple of ``g`` goes here) and ``small`` (the rest, which
    must sum into ``[0, g)``, or into ``(-g, 0]`` when ``ceil``). Prefers the largest
    ``g``."""
    candidates = sorted({gcd(coeff, c) for coeff, m in parts if coeff and m is not ONE} - {1},
                        reverse=True)
    const = sum(coeff for coeff, m in parts if m is ONE)
    for g in candidates:
        big = [(coeff, m) for coeff, m in parts if m is not ONE and coeff % g == 0]
        small = [(coeff, m) for coeff, m in parts if m is not ONE and coeff % g != 0]
        whole = ceil_div(const, g) * g if ceil else const // g * g
        if whole:
            big.append((whole, ONE))
        if const - whole:
            small.append((const - whole, ONE))
        if small:  # the rest's interval, from its terms (distinct monomials: nothing merges)
            span = _terms_span(small, ctx)
            if span is None or (span[1] > 0 or span[0] <= -g if ceil
                                else span[0] < 0 or span[1] >= g):
                continue
        return g, big, small
    return None


def floordiv_nested(node: Expr, ctx: Context) -> Expr | None:
    """``F(y + F(x, a), b) = F(a*y + x, a*b)`` for ``a, b > 0`` (constants, or expressions
    at least 1 on the domain) and integer ``y``:
    ``floor((y + floor(x/a)) / b) = floor(floor((a*y + x)/a) / b) = floor((a*y + x)/(a*b))``.
    Nested divisions become one, so equal quotients get equal spellings."""
    b = node.args[1]
    if not _is_positive(b, ctx):
        return None
    parts = terms(node.args[0])
    inner = [(k, m) for k, m in parts
             if isinstance(m, FloorDiv) and _is_positive(m.args[1], ctx)]
    if len(inner) != 1 or inner[0][0] != 1:
        return None
    _, div = inner[0]
    a = div.args[1]
    if a.is_Integer:
        rest = [(k * int(a), m) for k, m in parts if m is not div]
    else:
        rest = [(k, _times(a, m)) for k, m in parts if m is not div]
    return FloorDiv(add([sum_of_terms(rest), div.args[0]]), _times(a, b) if not (
        a.is_Integer and b.is_Integer) else Integer(int(a) * int(b)))


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


def floordiv_negative_divisor(node: Expr, ctx: Context) -> Expr | None:
    """``F(x, -c) = F(-x, c)`` (``floor(x / -c) = floor(-x / c)``), taken when ``F(-x, c)``
    then simplifies further (``d0 floordiv -1 = -d0``); otherwise the division stays as
    written, as in XLA, where ``(s0 floordiv 2) floordiv -7`` is left alone."""
    c = node.args[1]
    if not (c.is_Integer and int(c) < 0):
        return None
    flipped = FloorDiv(scale(-1, node.args[0]), Integer(-int(c)), evaluate=False)
    folded = ctx.probe(flipped)
    return folded if folded != flipped else None


# --- CeilDiv ------------------------------------------------------------------------------------
def ceildiv_extract_multiples(node: Expr, ctx: Context) -> Expr | None:
    """``C(c*q + y, c) = q + C(y, c)`` for any nonzero constant ``c`` (and, for a divisor
    that is not a constant, its multiples by factors): ``ceil(q + y/c) = q + ceil(y/c)``
    as ``q`` is an integer. ``(d0 * 8) ceildiv 4 = d0 * 2``, ``(d0 * 8 + 3) ceildiv 4 =
    d0 * 2 + 1``, ``(d0 * 64) ceildiv 64 = d0``."""
    split = _extract_terms(node, symbolic=False) or _extract_terms(node, symbolic=True)
    if split is None:
        return None
    out, kept = split
    c = node.args[1]
    if c.is_Integer:
        b = _terms_bounds(kept, ctx)
        k = int(c)
        if not b.is_empty and ceil_div(b.lo, k) == ceil_div(b.hi, k):  # C(y, c) is one value
            return sum_of_terms([*out, (ceil_div(b.lo, k), ONE)])
    return sum_of_terms([*out, (1, CeilDiv(sum_of_terms(kept), c))])


def ceildiv_drop_remainder(node: Expr, ctx: Context) -> Expr | None:
    """``C(g*x - r, c) = C(x, c/g)`` when ``g`` divides ``c`` and ``0 <= r < g``: with
    ``c = g*k``, ``C(g*x - r, g*k) = -F(-g*x + r, g*k) = -F(-x, k) = C(x, k)`` by
    :func:`floordiv_drop_remainder`. So ``(d0 * 6) ceildiv 4 = (d0 * 3) ceildiv 2``."""
    c = positive_divisor(node)
    if c is None:
        return None
    split = _split_remainder(terms(node.args[0]), c, ctx, ceil=True)
    if split is None:
        return None
    g, big, _ = split
    return CeilDiv(sum_of_terms([(coeff // g, mono) for coeff, mono in big]), c // g)


def ceildiv_negative_divisor(node: Expr, ctx: Context) -> Expr | None:
    """``C(x, -c) = -F(x, c)``: ``ceil(x / -c) = -floor(x / c)``. A ceiling division by a
    negative constant is a negated floor division (as XLA canonicalises it), so
    ``d0 ceildiv -1 = -d0`` and ``d0 ceildiv -2 = -(d0 floordiv 2)``."""
    c = node.args[1]
    if not (c.is_Integer and int(c) < 0):
        return None
    return scale(-1, FloorDiv(node.args[0], -int(c)))


# --- Mod -------------------------------------------------------------------------------------
def mod_single_period(node: Expr, ctx: Context) -> Expr | None:
    """``M(x, c) = x - k*c`` when every value of ``x`` lies in ``[k*c, k*c + c - 1]`` (in
    particular ``M(x, c) = x`` for ``0 <= x < c``). For a divisor that is not a constant,
    ``M(x, c) = x - k*c`` when ``F(x, c)`` has the single value ``k`` (``d0 mod s0 = d0``
    for ``d0`` in ``[0, 9]`` and ``s0`` in ``[10, 12]``)."""
    x, d = node.args
    if not d.is_Integer:
        q = ctx.bounds(FloorDiv(x, d))
        if not q.is_point:
            return None
        return add([x, scale(-q.lo, d)])
    c = int(d)
    if c <= 0:
        return None
    span = _terms_span(terms(x), ctx)  # x's interval, its terms kept for the next rules
    if span is None or span[0] // c != span[1] // c:
        return None
    k = span[0] // c
    return x if k == 0 else add([x, Integer(-k * c)])


def mod_drop_multiples(node: Expr, ctx: Context) -> Expr | None:
    """``M(c*q + y, c) = M(y, c)`` for any nonzero constant ``c``: terms that are multiples
    of ``c`` (a constant too) do not change the remainder, as ``M(x, c) = x - c*F(x, c)``
    and ``F(c*q + y, c) = q + F(y, c)``. Other constants stay as written
    (``(d0 + 3) mod 2``), as XLA's. When ``F(y, c)`` has the single value ``k``, the
    result is ``y - k*c`` at once (:func:`mod_single_period` on the rest)."""
    split = _quotient_of_rest(node, ctx)
    if split is None:
        return None
    _, kept, c, k = split
    if k is not None:
        return sum_of_terms([*kept, (-k * c, ONE)])
    return Mod(sum_of_terms(kept), c)


def mod_drop_divisor_multiples(node: Expr, ctx: Context) -> Expr | None:
    """``M(c*q + y, c) = M(y, c)`` for a divisor ``c`` that is not a constant: as
    :func:`mod_drop_multiples`, the multiples found by their factors
    (``(d0 + d1 * s0) mod s0 = d0 mod s0``)."""
    split = _extract(node, symbolic=True)
    if split is None:
        return None
    return Mod(split[1], node.args[1])


def mod_factor_gcd(node: Expr, ctx: Context) -> Expr | None:
    """``M(g*x + r, c) = g*M(x, c/g) + r`` when ``g`` divides ``c`` and ``0 <= r < g``:
    with ``c = g*k``, ``g*x + r = c*F(x, k) + g*M(x, k) + r`` and the last two terms lie in
    ``[0, c)``. Applied when the remainder ``r`` is a range-bounded expression (it then
    leaves the mod), not for a bare constant, which would only grow the expression."""
    found = _factored(node, ctx)
    if found is None:
        return None
    c, g, reduced, small = found
    if small and all(m is ONE for _, m in small):
        return None
    return add([scale(g, Mod(reduced, c // g)), sum_of_terms(small)])


def mod_nested(node: Expr, ctx: Context) -> Expr | None:
    """``M(y + k*M(x, a), b) = M(y + k*x, b)`` when ``b`` divides ``k*a`` (``b > 0``, ``a``
    any nonzero constant): ``k*M(x, a) = k*x - k*a*F(x, a)`` and the multiple of ``b`` does
    not change the remainder. In particular ``M(M(x, a), b) = M(x, b)`` when ``b`` divides
    ``a``, and ``M(M(x, 784) + 1, 28) = M(x + 1, 28)``."""
    b = positive_divisor(node)
    if b is None:
        return None
    parts = terms(node.args[0])
    for i, (k, mono) in enumerate(parts):
        if isinstance(mono, Mod):
            a = mono.args[1]
            if a.is_Integer and int(a) and (k * int(a)) % b == 0:
                rest = parts[:i] + parts[i + 1:]
                return Mod(add([sum_of_terms(rest), scale(k, mono.args[0])]), b)
    return None


def mod_negative_divisor(node: Expr, ctx: Context) -> Expr | None:
    """``M(x, -c) = -M(-x, c)`` (``x - (-c)*F(x, -c) = -(-x - c*F(-x, c))``), taken when
    ``M(-x, c)`` then simplifies further (``(d0 * 6) mod -3 = 0``); otherwise the mod
    stays as written."""
    c = node.args[1]
    if not (c.is_Integer and int(c) < 0):
        return None
    flipped = Mod(scale(-1, node.args[0]), Integer(-int(c)), evaluate=False)
    folded = ctx.probe(flipped)
    return scale(-1, folded) if folded != flipped else None


def mod_nested_divisor(node: Expr, ctx: Context) -> Expr | None:
    """``M(y + k*M(x, c), c) = M(y + k*x, c)`` for a divisor ``c`` that is not a constant
    (nonzero on the domain), the same expression inside and out: ``k*M(x, c) = k*x -
    k*c*F(x, c)`` and the multiple of ``c`` does not change the remainder. So
    ``(x - x mod y) mod y = M(x - x, y) = 0`` (``x - M(x, y)`` is ``y*F(x, y)``). Taken
    only when ``c``'s interval excludes 0, so the result is defined wherever the input is
    and nowhere else (``M(0, c) = 0`` would hide a division by 0)."""
    c = node._args[1]
    if c.is_Integer:
        return None
    b = ctx.bounds(c)
    if b.is_empty or b.lo <= 0 <= b.hi:
        return None
    parts = terms(node._args[0])
    for i, (k, mono) in enumerate(parts):
        if type(mono) is Mod and mono._args[1] == c:
            rest = parts[:i] + parts[i + 1:]
            return Mod(add([sum_of_terms(rest), scale(k, mono._args[0])]), c)
    return None


def _factors(coeff: int, mono: Expr) -> tuple[int, dict[Expr, int]]:
    """A term ``coeff * mono`` as its integer coefficient and the multiset of its other
    factors (a constant term has none)."""
    if mono is ONE:
        return coeff, {}
    k, factors = _split_divisor(mono)
    return coeff * k, factors


def _common_factor(node: Expr, ctx: Context) -> tuple[int, dict[Expr, int]] | None:
    """The greatest common factor ``g`` (its integer part and its other factors) of the
    dividend's terms and the divisor, when it is more than 1 and its symbolic part is
    provably at least 1 (so ``g`` is positive wherever the map is defined)."""
    c = node._args[1]
    if c.is_Integer:
        return None  # constant divisors: floordiv_drop_remainder and mod_factor_gcd
    g, common = _split_divisor(c)
    g = abs(g)
    for coeff, mono in terms(node._args[0]):
        k, factors = _factors(coeff, mono)
        g = gcd(g, k)
        common = {f: min(n, factors.get(f, 0)) for f, n in common.items()}
        common = {f: n for f, n in common.items() if n}
        if g == 1 and not common:
            return None
    if g == 1 and not common:
        return None
    if common and not _is_positive(_product(common), ctx):
        return None
    return g, common


def _divide_out(e: Expr, g: int, common: dict[Expr, int]) -> Expr:
    """``e / (g * common)`` for a sum every term of which that divides."""
    out = []
    for coeff, mono in terms(e):
        k, factors = _factors(coeff, mono)
        rest = dict(factors)
        for f, n in common.items():
            rest[f] -= n
        out.append((k // g, _product(rest)))
    return add([Integer(k) if m is ONE else scale(k, m) for k, m in out if k])


def floordiv_cancel_factor(node: Expr, ctx: Context) -> Expr | None:
    """``F(g*x, g*y) = F(x, y)`` for ``g >= 1`` (an integer, or a product of factors whose
    interval is at least 1), ``y`` not a constant: ``floor(g*x / (g*y)) = floor(x / y)``.
    ``g`` is the greatest common factor of every term of the dividend and the divisor; its
    being positive keeps ``g*y`` and ``y`` zero at the same points, so the map is defined
    where it was. ``(s0 * d0) floordiv (s0 * s1) = d0 floordiv s1`` for ``s0 >= 1``.
    (``ceildiv`` likewise: ``ceil(g*x / (g*y)) = ceil(x / y)``.)"""
    found = _common_factor(node, ctx)
    if found is None:
        return None
    g, common = found
    return type(node)(_divide_out(node._args[0], g, common),
                      _divide_out(node._args[1], g, common))


def mod_cancel_factor(node: Expr, ctx: Context) -> Expr | None:
    """``M(g*x, g*y) = g*M(x, y)`` for ``g >= 1`` as in :func:`floordiv_cancel_factor`:
    ``g*x - g*y*F(g*x, g*y) = g*(x - y*F(x, y))``. ``(s0 * d0) mod (s0 * s1) =
    s0 * (d0 mod s1)`` for ``s0 >= 1``."""
    found = _common_factor(node, ctx)
    if found is None:
        return None
    g, common = found
    inner = Mod(_divide_out(node._args[0], g, common), _divide_out(node._args[1], g, common))
    return scale(g, _times(_product(common), inner))


def divide_below_divisor(node: Expr, ctx: Context) -> Expr | None:
    """``F(x, y) = 0`` and ``M(x, y) = x`` when ``0 <= x < y`` on the map's domain, for a
    divisor ``y`` that is not a constant: then ``0 <= x/y < 1``. The facts come from the
    intervals *and the constraints* (a result is only ever evaluated where they hold), so
    ``d0 mod (s0 * s0 * 32) = d0`` where a constraint gives ``d0 - s0 * s0 * 32 <= -1``
    and ``d0 >= 0``."""
    x, y = node._args
    if y.is_Integer:
        return None
    known = ctx.known_bounds
    if known(x).lo < 0:
        return None
    gap = known(add([x, scale(-1, y)]))
    if gap.is_empty or gap.hi > -1:
        gap = -known(add([y, scale(-1, x)]))
        if gap.is_empty or gap.hi > -1:
            return None
    return Integer(0) if type(node) is FloorDiv else x


# --- sums --------------------------------------------------------------------------------------
def sum_recombine_div_mod(node: Expr, ctx: Context) -> Expr | None:
    """``k*c*F(x, c) + k*M(x, c) = k*x`` (Euclid: ``x = c*F(x, c) + M(x, c)``, for any
    nonzero ``c``, a constant or not). The quotient is found in its simplified spelling,
    and the pair may share a factor (``s0 * (d0 floordiv 4) * 4 + s0 * (d0 mod 4)``)."""
    parts = terms(node)
    index = {m: k for k, m in parts}
    for k, mono in parts:
        extra, op = _split_op(mono)
        if not isinstance(op, Mod):
            continue
        c_int, c_factors = _split_divisor(op.args[1])
        quotient = ctx.probe(FloorDiv(op.args[0], op.args[1]))
        partner = _times(extra, _product(c_factors), quotient)
        if partner is not mono and index.get(partner) == k * c_int:
            rest = [(kk, m) for kk, m in parts if m is not mono and m != partner]
            return add([sum_of_terms(rest), scale(k, _times(extra, op.args[0]))])
    return None


def recombine_as_written(node: Expr) -> Expr | None:
    """:func:`sum_recombine_div_mod` for a pair whose quotient is written as it is found,
    before anything in the sum is simplified: ``k*c*F(x, c) + k*M(x, c) = k*x`` for a
    nonzero constant ``c`` and the same ``x`` in both (Euclid, for every integer ``x``).
    What composing a linearisation with a delinearisation writes (``(x floordiv 20) * 20
    + x mod 20``); found by a look at the sum's terms, without simplifying ``F(x, c)``
    and ``M(x, c)`` first, which would cost more than the whole sum then does."""
    parts = terms(node)
    quotients = {mono._args: k for k, mono in parts
                 if type(mono) is FloorDiv and mono._args[1].is_Integer}
    if not quotients:
        return None
    for k, mono in parts:
        if type(mono) is not Mod:
            continue
        args = mono._args
        if not args[1].is_Integer or quotients.get(args) != k * args[1].p:
            continue
        rest = [(kk, m) for kk, m in parts
                if m is not mono and not (type(m) is FloorDiv and m._args == args)]
        return add([sum_of_terms(rest), scale(k, args[0])])
    return None


def sum_to_mod(node: Expr, ctx: Context) -> Expr | None:
    """``m*x - m*c*F(x, c) = m*M(x, c)`` (``M(x, c) = x - c*F(x, c)`` by definition, for
    any nonzero ``c``, a constant or not): when a sum holds ``-m*c*F(x, c)`` and every
    non-constant term of ``x``, ``m*x`` is taken from those terms (their coefficients and
    the constant are adjusted) and joins the quotient as ``m*M(x, c)``.
    ``d0 - (d0 floordiv s0) * s0 = d0 mod s0``;
    ``d0 - (s0 floordiv 3) * 12 + s0 * 7 = (s0 mod 3) * 4 + s0 * 3 + d0``."""
    parts = terms(node)
    index = {m: k for k, m in parts}
    for k, mono in parts:
        extra, op = _split_op(mono)
        if not isinstance(op, FloorDiv):
            continue
        c_int, c_factors = _split_divisor(op.args[1])
        if k % c_int != 0 or extra != _product(c_factors):
            continue
        m = -k // c_int
        wanted = [(coeff * m, t) for coeff, t in terms(op.args[0])]
        if not all(t is ONE or t in index for _, t in wanted):
            continue
        if all(t is ONE for _, t in wanted):
            continue
        remaining = dict(index)
        del remaining[mono]
        for coeff, t in wanted:
            remaining[t] = remaining.get(t, 0) - coeff
        rest = [(coeff, t) for t, coeff in remaining.items() if coeff]
        return add([sum_of_terms(rest), scale(m, Mod(op.args[0], op.args[1]))])
    return None


def sum_join_mod_digits(node: Expr, ctx: Context) -> Expr | None:
    """``k*M(y, c) + k*c*M(F(y, c), m) = k*M(y, c*m)`` for ``c, m > 0`` (constants, or
    expressions at least 1 on the domain): with ``q = F(y, c)``,
    ``y = c*m*F(q, m) + c*M(q, m) + M(y, c)`` and the last two terms lie in ``[0, c*m)``,
    so they are ``M(y, c*m)``. Two digits of a mixed-radix number join into one:
    ``d0 mod 32 + ((d0 floordiv 32) mod 4) * 32 = d0 mod 128``. The partner's
    ``F(y, c)`` is found in its simplified spelling."""
    parts = terms(node)
    split = [(k, mono, *_split_op(mono)) for k, mono in parts]
    mods = [(k, mono, extra, op) for k, mono, extra, op in split
            if isinstance(op, Mod) and _is_positive(op.args[1], ctx)]
    if len(mods) < 2:
        return None
    for k, mono, extra, op in mods:
        c = op.args[1]
        c_int, c_factors = _split_divisor(c)
        quotient = ctx.probe(FloorDiv(op.args[0], c))
        wanted_extra = _times(extra, _product(c_factors))
        for k2, mono2, extra2, op2 in mods:
            if mono2 is mono or op2.args[0] != quotient or k2 != k * c_int \
                    or extra2 != wanted_extra:
                continue
            m = op2.args[1]
            cm = Integer(int(c) * int(m)) if c.is_Integer and m.is_Integer else _times(c, m)
            rest = [(kk, t) for kk, t in parts if t is not mono and t is not mono2]
            return add([sum_of_terms(rest), scale(k, _times(extra, Mod(op.args[0], cm)))])
    return None


def sum_complementary_mods(node: Expr, ctx: Context) -> Expr | None:
    """``k*M(x + a_1, c) + ... + k*M(x + a_c, c) = k*c*(c - 1)/2`` when ``a_1, ..., a_c``
    are a complete set of residues mod ``c`` (``c > 0`` a constant, ``x`` any integer
    expression): ``x + a_i`` then take every residue once, so their remainders are
    ``0, 1, ..., c - 1`` in some order. ``x mod 2 + (x + 1) mod 2 = 1``;
    ``(x + 1) mod 3 + (x + 2) mod 3 + (x + 3) mod 3 = 3``."""
    groups: dict[tuple[int, int, Expr], dict[int, Expr]] = {}
    for k, mono in terms(node):
        if type(mono) is not Mod:
            continue
        c = positive_divisor(mono)
        if c is None or c > 64:
            continue
        parts = terms(mono._args[0])
        shift = sum(coeff for coeff, m in parts if m is ONE)
        base = sum_of_terms([(coeff, m) for coeff, m in parts if m is not ONE])
        groups.setdefault((k, c, base), {}).setdefault(shift % c, mono)
    for (k, c, _), by_residue in groups.items():
        if len(by_residue) == c:
            used = set(by_residue.values())
            rest = [(kk, m) for kk, m in terms(node) if not (kk == k and m in used)]
            return sum_of_terms([*rest, (k * c * (c - 1) // 2, ONE)])
    return None
