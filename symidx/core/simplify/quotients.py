"""More ``floordiv``/``mod`` rules: quotients and remainders that other simplifiers (TVM's
``rewrite_simplify`` and ``canonical_simplify``) take apart or put together.

``F(x, c)`` is ``x floordiv c``, ``M(x, c)`` is ``x mod c``; ``c > 0`` is an integer
constant. Everything follows from Euclid's ``x = c*F(x, c) + M(x, c)`` with
``0 <= M(x, c) < c``, and from ``F(c*q + y, c) = q + F(y, c)`` for an integer ``q``:

* a coefficient that is not a multiple of ``c`` still splits into one that is and a rest
  (:func:`floordiv_split_coefficients`, :func:`mod_reduce_coefficients`);
* two quotients of the same value shifted by constants differ by a quotient of a
  remainder (:func:`sum_floordiv_difference`), and join back
  (:func:`sum_join_floordiv`); for ``c = 2`` a quotient and a remainder make the next
  quotient (:func:`sum_parity_quotient`);
* a value whose remainder is subtracted is a multiple (:func:`floordiv_rounded_down`), a
  remainder that some of a sum's terms make is that remainder less the others
  (:func:`sum_to_mod_partial`), and a remainder of a value congruent to a quotient's
  numerator recombines with it (:func:`sum_recombine_congruent`);
* nested digits (:func:`floordiv_of_mod_of_floordiv`), and a division of a term that takes
  two values, which is linear in it (:func:`divmod_two_values`).

Each rule is ``rule(node, ctx) -> Expr | None`` (:mod:`symidx.core.simplify.context`), listed in
:data:`symidx.core.simplify.table.RULES`; hypothesis tests check each against brute force
(``tests/test_simplify_tvm_rules.py``).
"""

from __future__ import annotations

from typing import Any

from sympy import Add, Integer, Mul, Symbol

from symidx.core.expr import ONE, Expr, FloorDiv, Mod, Terms, add, from_terms, scale, terms
from symidx.core.simplify.context import Context
from symidx.core.simplify.lattice import operations

__all__ = [
    "floordiv_split_coefficients", "floordiv_of_mod_of_floordiv", "floordiv_rounded_down",
    "divmod_two_values", "mod_reduce_coefficients", "sum_floordiv_difference",
    "sum_join_floordiv", "sum_parity_quotient", "sum_to_mod_partial",
    "sum_recombine_congruent",
]


def _divisor(node: Expr) -> int | None:
    """The divisor of a ``floordiv``/``mod`` when it is a positive constant."""
    d = node._args[1]
    if not d.is_Integer:
        return None
    c = int(d)
    return c if c > 0 else None


def _monomial(term: Expr) -> tuple[int, Expr]:
    """A term of a sum as ``(coefficient, monomial)``, read off its shape (``k*m`` or
    ``m``), without :func:`~symidx.core.expr.terms`."""
    if type(term) is Mul and len(term._args) == 2 and term._args[0].is_Integer:
        return int(term._args[0]), term._args[1]
    if term.is_Integer:
        return int(term), ONE
    return 1, term


def _summands(e: Expr) -> tuple[Expr, ...]:
    """The terms of a sum as written (``e`` itself when it is not a sum)."""
    return e._args if type(e) is Add else (e,)


def _holds(e: Expr, kind: type) -> bool:
    """Is one of the terms of ``e`` (a sum, or a single term) a ``kind``, or a multiple of
    one? A cheap test before a rule splits ``e`` into its terms."""
    return any(type(_monomial(t)[1]) is kind for t in _summands(e))


def _divisions(node: Expr) -> list[tuple[int, Expr]]:
    """The terms ``k*F(x, c)`` and ``k*M(x, c)`` of a sum, read off its shape. The rules of
    a node are tried one after another, so the last node's answer is kept."""
    if _LAST[0] is node:
        known: list[tuple[int, Expr]] = _LAST[1]
        return known
    found = [(k, m) for k, m in map(_monomial, node._args) if type(m) is FloorDiv or
             type(m) is Mod]
    _LAST[0], _LAST[1] = node, found
    return found


_LAST: list[Any] = [None, []]  # the last sum :func:`_divisions` read, and its division terms


def _span(parts: Terms, ctx: Context) -> tuple[int, int] | None:
    """The least and greatest value of a sum given as terms, without building it (None
    when a term has no value)."""
    lo = hi = 0
    for k, m in parts:
        if m is ONE:
            lo, hi = lo + k, hi + k
            continue
        b = ctx.env[m] if type(m) is Symbol else ctx.bounds(m)
        if b.is_empty:
            return None
        lo, hi = (lo + k * b.lo, hi + k * b.hi) if k >= 0 else (lo + k * b.hi, hi + k * b.lo)
    return lo, hi


# --- floordiv ---------------------------------------------------------------------------
def floordiv_split_coefficients(node: Expr, ctx: Context) -> Expr | None:
    """``F(a_1*x_1 + ... + b, c) = q_1*x_1 + ... + k`` where ``a_i = q_i*c + r_i`` and
    ``F(r_1*x_1 + ... + b, c)`` has the single value ``k`` on the intervals: by
    ``F(c*q + y, c) = q + F(y, c)``. The remainders ``r_i`` are taken in ``[0, c)``, or
    nearest 0. So ``F(x * 360 + y, 16) = x * 22`` for ``x`` in ``[0, 1]``, ``y`` in
    ``[0, 6]`` (``8*x + y`` stays below 16)."""
    c = _divisor(node)
    x = node._args[0]
    if c is None or all(-c < k < c for k, _ in map(_monomial, _summands(x))):
        return None  # no coefficient splits (multiples: floordiv_extract_multiples)
    parts = terms(x)
    for nearest in (False, True):
        quotient: Terms = []
        rest: Terms = []
        moved = False
        for coeff, mono in parts:
            if mono is ONE:
                rest.append((coeff, ONE))
                continue
            q, r = divmod(coeff, c)
            if nearest and 2 * r > c:
                q, r = q + 1, r - c
                moved = True
            if q:
                quotient.append((q, mono))
            if r:
                rest.append((r, mono))
        if not quotient or (nearest and not moved):
            return None
        span = _span(rest, ctx)
        if span is not None and span[0] // c == span[1] // c:
            return from_terms([*quotient, (span[0] // c, ONE)])
    return None


def floordiv_of_mod_of_floordiv(node: Expr, ctx: Context) -> Expr | None:
    """``F(M(F(x, a), b), c) = F(M(x, a*b), a*c)`` for ``a, b, c > 0``: the digits of ``x``
    above its lowest in base ``a``, modulo ``b``, are ``M(F(x, a), b) = F(M(x, a*b), a)``,
    and ``F(F(y, a), c) = F(y, a*c)``. One division fewer:
    ``((x floordiv 2) mod 8) floordiv 3 = (x mod 16) floordiv 6``."""
    inner = node._args[0]
    if type(inner) is not Mod:
        return None
    c = _divisor(node)
    b = _divisor(inner)
    if c is None:
        return None
    x = inner._args[0]
    if b is None or type(x) is not FloorDiv:
        return None
    a = _divisor(x)
    if a is None:
        return None
    return FloorDiv(Mod(x._args[0], a * b), a * c)


def floordiv_rounded_down(node: Expr, ctx: Context) -> Expr | None:
    """``F(j*M(x, d) - j*x + y, c) = (-j*d/c)*F(x, d) + F(y, c)`` when ``c`` divides ``d``:
    ``x - M(x, d) = d*F(x, d)`` is a multiple of ``c``, and multiples leave the division.
    So ``F(x - M(x, 21), 21) = F(x, 21)``. (The sum holds ``-j`` times every variable term
    of ``x``; ``x``'s constant moves into ``y``.)"""
    c = _divisor(node)
    if c is None or not _holds(node._args[0], Mod):
        return None
    parts = terms(node._args[0])
    have = {m: k for k, m in parts}
    for j, mono in parts:
        if type(mono) is not Mod:
            continue
        d = _divisor(mono)
        if d is None or d % c:
            continue
        x_parts = terms(mono._args[0])
        wanted = [(k, m) for k, m in x_parts if m is not ONE]
        if not wanted or any(have.get(m) != -j * k for k, m in wanted):
            continue
        drop = {m for _, m in wanted} | {mono}
        rest = [(k, m) for k, m in parts if m not in drop]
        rest += [(j * k, ONE) for k, m in x_parts if m is ONE]
        return add([scale(-j * d // c, FloorDiv(mono._args[0], d)),
                    FloorDiv(from_terms(rest), c)])
    return None


def divmod_two_values(node: Expr, ctx: Context) -> Expr | None:
    """``op(a*t + b, c) = v_0 + (v_1 - v_0)*(t - p)`` (``op`` a ``floordiv`` or ``mod``) when
    the term ``t`` (an operation, not a variable) takes only the values ``p`` and ``p + 1``,
    with ``v_0 = op(a*p + b, c)`` and ``v_1 = op(a*(p + 1) + b, c)``: a function of a
    two-valued ``t`` is the line through its two points. So
    ``F(M(x, 2) + 1, 2) = M(x, 2)``."""
    x = node._args[0]
    if type(x) is Add and (len(x._args) != 2 or not x._args[0].is_Integer):
        return None  # more than one term that varies
    if _monomial(x._args[1] if type(x) is Add else x)[1].is_Symbol:
        return None
    c = _divisor(node)
    if c is None:
        return None
    parts = terms(x)
    varying = [(k, m) for k, m in parts if m is not ONE]
    if len(varying) != 1 or isinstance(varying[0][1], Symbol):
        return None
    a, t = varying[0]
    span = ctx.bounds(t)
    if span.is_empty or span.hi != span.lo + 1:
        return None
    b = sum(k for k, m in parts if m is ONE)
    p = span.lo
    if type(node) is FloorDiv:
        v0, v1 = (a * p + b) // c, (a * (p + 1) + b) // c
    else:
        v0, v1 = (a * p + b) % c, (a * (p + 1) + b) % c
    return from_terms([(v0 - (v1 - v0) * p, ONE), (v1 - v0, t)])


# --- mod --------------------------------------------------------------------------------
def mod_reduce_coefficients(node: Expr, ctx: Context) -> Expr | None:
    """``M(a*x, c) = M(r*x, c)`` with ``a = q*c + r``, ``r`` the remainder of ``a`` toward 0
    (``|r| < c``, the sign of ``a``): ``q*c*x`` is a multiple of ``c``. For a remainder of
    one term with ``|a| > c``; so ``M(x * 3, 2) = M(x, 2)``, ``M(x * 9600, 6400) =
    M(x * 3200, 6400)``. (A sum's coefficients stay as written, as XLA's do:
    ``M(d0 * 121 + d1, 28)``.)"""
    x = node._args[0]
    if type(x) is not Mul:
        return None
    c = _divisor(node)
    if c is None:
        return None
    k, m = _monomial(x)
    if m is x or abs(k) <= c:
        return None
    r = abs(k) % c
    return Mod(scale(r if k > 0 else -r, m), c)


# --- sums -------------------------------------------------------------------------------
def _quotients(parts: Terms) -> list[tuple[int, Expr, frozenset[tuple[int, Expr]], int]]:
    """The sum's ``k*F(x + e, c)`` terms (``c > 0``): ``(k, monomial, x, e)`` with ``x`` the
    numerator's variable terms (a set, compared without building the sum) and ``e`` its
    constant."""
    out = []
    for k, m in parts:
        if type(m) is FloorDiv and _divisor(m) is not None:
            num = terms(m._args[0])
            e = sum(kk for kk, t in num if t is ONE)
            out.append((k, m, frozenset((kk, t) for kk, t in num if t is not ONE), e))
    return out


def sum_floordiv_difference(node: Expr, ctx: Context) -> Expr | None:
    """``k*F(x + a, c) - k*F(x + b, c) = k*F(M(x + b, c) + a - b, c)``: with
    ``x + b = c*F(x + b, c) + M(x + b, c)``, ``F(x + a, c) = F(x + b, c) +
    F(M(x + b, c) + a - b, c)``. Two quotients become one (which often folds further:
    ``F(x + 5, 2) - F(x - 3, 2) = 4``, ``F(x + 1, 2) - F(x, 2) = M(x, 2)``)."""
    signed = {(k, m._args[1]) for k, m in _divisions(node) if type(m) is FloorDiv}
    if not any((-k, c) in signed for k, c in signed if k > 0):
        return None
    parts = terms(node)
    found = _quotients(parts)
    for k, m, x, a in found:
        for k2, m2, x2, b in found:
            if k <= 0 or k2 != -k or m2 is m or x2 != x or m2._args[1] != m._args[1]:
                continue
            c = m._args[1]
            rest = [(kk, t) for kk, t in parts if t is not m and t is not m2]
            inner = FloorDiv(add([Mod(m2._args[0], c), Integer(a - b)]), c)
            return add([from_terms(rest), scale(k, inner)])
    return None


def sum_join_floordiv(node: Expr, ctx: Context) -> Expr | None:
    """``k*F(x, c) + k*F(M(x, c) + y, c) = k*F(x + y, c)``: ``x + y = c*F(x, c) +
    (M(x, c) + y)``, and the multiple of ``c`` leaves the division. So
    ``F(M(x, 2) + 7, 2) + F(x, 2) = F(x + 7, 2)``."""
    if not any(type(m) is FloorDiv and _holds(m._args[0], Mod) for _, m in _divisions(node)):
        return None
    parts = terms(node)
    index = {m: k for k, m in parts}
    for k, m in parts:
        if type(m) is not FloorDiv or _divisor(m) is None or not _holds(m._args[0], Mod):
            continue
        c = m._args[1]
        for j, t in terms(m._args[0]):
            if j != 1 or type(t) is not Mod or t._args[1] != c:
                continue
            partner = FloorDiv(t._args[0], c)
            if partner != m and index.get(partner) == k:
                y = from_terms([(jj, tt) for jj, tt in terms(m._args[0]) if tt is not t])
                rest = [(kk, u) for kk, u in parts if u is not m and u != partner]
                return add([from_terms(rest), scale(k, FloorDiv(add([t._args[0], y]), c))])
    return None


def sum_parity_quotient(node: Expr, ctx: Context) -> Expr | None:
    """``k*F(y, 2) + k*M(y, 2) = k*F(y + 1, 2)`` and ``k*F(y + 1, 2) - k*M(y, 2) =
    k*F(y, 2)``: ``F(y + 1, 2) = F(y, 2) + F(M(y, 2) + 1, 2)``, and ``F(M(y, 2) + 1, 2)``
    is ``M(y, 2)`` (both are 1 exactly when ``y`` is odd)."""
    two = [m for _, m in _divisions(node) if m._args[1] == 2]
    if not any(type(m) is Mod for m in two) or not any(type(m) is FloorDiv for m in two):
        return None
    parts = terms(node)
    mods = {m._args[0]: (k, m) for k, m in parts if type(m) is Mod and m._args[1] == 2}
    for k, m, _, _ in _quotients(parts):
        if m._args[1] != 2:
            continue
        y = m._args[0]
        for shift, sign in ((0, 1), (1, -1)):  # F(y, 2) + M(y, 2); F(y + 1, 2) - M(y, 2)
            found = mods.get(add([y, Integer(-shift)]) if shift else y)
            if found is not None and found[0] == sign * k:
                rest = [(kk, t) for kk, t in parts if t is not m and t is not found[1]]
                quotient = FloorDiv(add([y, Integer(1 - shift if sign > 0 else -1)]), 2)
                return add([from_terms(rest), scale(k, quotient)])
    return None


def sum_to_mod_partial(node: Expr, ctx: Context) -> Expr | None:
    """``-m*c*F(x, c) + r = m*M(x, c) + r - m*x`` (``M(x, c) = x - c*F(x, c)``), taken when
    ``r`` holds some of ``m*x``'s terms (not all: then ``sum_to_mod`` applies) and the sum
    then writes fewer operations (:func:`~symidx.core.simplify.lattice.operations`):
    ``y - F(y + z, 5) * 5 = M(y + z, 5) - z``."""
    if not any(type(m) is FloorDiv and _divisor(m) and not k % int(m._args[1])
               for k, m in _divisions(node)):
        return None
    parts = terms(node)
    index = {m: k for k, m in parts}
    before = -1
    for k, mono, _, _ in _quotients(parts):
        c = _divisor(mono)
        assert c is not None
        if k % c:
            continue
        m = -k // c
        x = mono._args[0]
        wanted = [t for coeff, t in terms(x) if t is not ONE]
        if not any(t in index for t in wanted) or all(t in index for t in wanted):
            continue
        rest = from_terms([(kk, t) for kk, t in parts if t is not mono])
        new = add([scale(m, Mod(x, c)), rest, scale(-m, x)])
        if before < 0:
            before = operations(node)
        if operations(new) < before:
            return new
    return None


def sum_recombine_congruent(node: Expr, ctx: Context) -> Expr | None:
    """``k*c*F(y, c) + k*M(x, c) = k*y`` when ``x - y`` is a multiple of ``c`` (``M(x - y, c)``
    simplifies to 0): then ``M(x, c) = M(y, c)`` and Euclid recombines. So, for
    ``i1`` in ``[0, 2]``, ``((i0 mod 4) * 3 + i1) floordiv 4 * 4 + (i0 * 3 + i1) mod 4 =
    (i0 mod 4) * 3 + i1``."""
    found = _divisions(node)
    if not any(type(m) is Mod for _, m in found) or not any(type(m) is FloorDiv
                                                              for _, m in found):
        return None
    parts = terms(node)
    quotients = {(k, m._args[1]): m for k, m in parts if type(m) is FloorDiv}
    for k, mono in parts:
        if type(mono) is not Mod:
            continue
        c = _divisor(mono)
        if c is None:
            continue
        x = mono._args[0]
        q = quotients.get((k * c, mono._args[1]))
        if q is not None:
            y = q._args[0]
            if y == x:
                continue
            if ctx.probe(Mod(add([x, scale(-1, y)]), c)) != 0:
                continue
            rest = [(kk, t) for kk, t in parts if t is not mono and t is not q]
            return add([from_terms(rest), scale(k, y)])
    return None
