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

Each rule is ``rule(node, ctx) -> Expr | None`` (:mod:`symidx.simplify.context`), listed in
:data:`symidx.simplify.rules.RULES`; hypothesis tests check each against brute force
(``tests/test_simplify_tvm_rules.py``).
"""

from __future__ import annotations

from sympy import Integer, Symbol

from symidx.expr import ONE, Expr, FloorDiv, Mod, Terms, add, from_terms, scale, terms
from symidx.simplify.context import Context
from symidx.simplify.lattice import operations

__all__ = [
    "floordiv_split_coefficients", "floordiv_of_mod_of_floordiv", "floordiv_rounded_down",
    "divmod_two_values", "mod_reduce_coefficients", "sum_floordiv_difference",
    "sum_join_floordiv", "sum_parity_quotient", "sum_to_mod_partial",
    "sum_recombine_congruent",
]


def _divisor(node: Expr) -> int | None:
    """The divisor of a ``floordiv``/``mod`` when it is a positive constant."""
    d = node.args[1]
    return int(d) if d.is_Integer and int(d) > 0 else None


def _span(parts: Terms, ctx: Context) -> tuple[int, int] | None:
    b = ctx.bounds(from_terms(parts))
    return None if b.is_empty else (b.lo, b.hi)


# --- floordiv ---------------------------------------------------------------------------
def floordiv_split_coefficients(node: Expr, ctx: Context) -> Expr | None:
    """``F(a_1*x_1 + ... + b, c) = q_1*x_1 + ... + k`` where ``a_i = q_i*c + r_i`` and
    ``F(r_1*x_1 + ... + b, c)`` has the single value ``k`` on the intervals: by
    ``F(c*q + y, c) = q + F(y, c)``. The remainders ``r_i`` are taken in ``[0, c)``, or
    nearest 0. So ``F(x * 360 + y, 16) = x * 22`` for ``x`` in ``[0, 1]``, ``y`` in
    ``[0, 6]`` (``8*x + y`` stays below 16)."""
    c = _divisor(node)
    if c is None:
        return None
    parts = terms(node.args[0])
    for nearest in (False, True):
        quotient: Terms = []
        rest: Terms = []
        for coeff, mono in parts:
            if mono is ONE:
                rest.append((coeff, ONE))
                continue
            q, r = divmod(coeff, c)
            if nearest and 2 * r > c:
                q, r = q + 1, r - c
            if q:
                quotient.append((q, mono))
            if r:
                rest.append((r, mono))
        if not quotient:
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
    c = _divisor(node)
    inner = node.args[0]
    if c is None or type(inner) is not Mod:
        return None
    b = _divisor(inner)
    x = inner.args[0]
    if b is None or type(x) is not FloorDiv:
        return None
    a = _divisor(x)
    if a is None:
        return None
    return FloorDiv(Mod(x.args[0], a * b), a * c)


def floordiv_rounded_down(node: Expr, ctx: Context) -> Expr | None:
    """``F(j*M(x, d) - j*x + y, c) = (-j*d/c)*F(x, d) + F(y, c)`` when ``c`` divides ``d``:
    ``x - M(x, d) = d*F(x, d)`` is a multiple of ``c``, and multiples leave the division.
    So ``F(x - M(x, 21), 21) = F(x, 21)``. (The sum holds ``-j`` times every variable term
    of ``x``; ``x``'s constant moves into ``y``.)"""
    c = _divisor(node)
    if c is None:
        return None
    parts = terms(node.args[0])
    have = {m: k for k, m in parts}
    for j, mono in parts:
        if type(mono) is not Mod:
            continue
        d = _divisor(mono)
        if d is None or d % c:
            continue
        x_parts = terms(mono.args[0])
        wanted = [(k, m) for k, m in x_parts if m is not ONE]
        if not wanted or any(have.get(m) != -j * k for k, m in wanted):
            continue
        drop = {m for _, m in wanted} | {mono}
        rest = [(k, m) for k, m in parts if m not in drop]
        rest += [(j * k, ONE) for k, m in x_parts if m is ONE]
        return add([scale(-j * d // c, FloorDiv(mono.args[0], d)),
                    FloorDiv(from_terms(rest), c)])
    return None


def divmod_two_values(node: Expr, ctx: Context) -> Expr | None:
    """``op(a*t + b, c) = v_0 + (v_1 - v_0)*(t - p)`` (``op`` a ``floordiv`` or ``mod``) when
    the term ``t`` (an operation, not a variable) takes only the values ``p`` and ``p + 1``,
    with ``v_0 = op(a*p + b, c)`` and ``v_1 = op(a*(p + 1) + b, c)``: a function of a
    two-valued ``t`` is the line through its two points. So
    ``F(M(x, 2) + 1, 2) = M(x, 2)``."""
    c = _divisor(node)
    if c is None:
        return None
    parts = terms(node.args[0])
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
    c = _divisor(node)
    if c is None:
        return None
    parts = terms(node.args[0])
    if len(parts) != 1 or parts[0][1] is ONE or abs(parts[0][0]) <= c:
        return None
    k, m = parts[0]
    r = abs(k) % c
    return Mod(scale(r if k > 0 else -r, m), c)


# --- sums -------------------------------------------------------------------------------
def _quotients(parts: Terms) -> list[tuple[int, Expr, Expr, int]]:
    """The sum's ``k*F(x + e, c)`` terms (``c > 0``): ``(k, monomial, x, e)`` with ``x`` the
    numerator's variable part and ``e`` its constant."""
    out = []
    for k, m in parts:
        if type(m) is FloorDiv and _divisor(m) is not None:
            num = terms(m.args[0])
            e = sum(kk for kk, t in num if t is ONE)
            out.append((k, m, from_terms([(kk, t) for kk, t in num if t is not ONE]), e))
    return out


def sum_floordiv_difference(node: Expr, ctx: Context) -> Expr | None:
    """``k*F(x + a, c) - k*F(x + b, c) = k*F(M(x + b, c) + a - b, c)``: with
    ``x + b = c*F(x + b, c) + M(x + b, c)``, ``F(x + a, c) = F(x + b, c) +
    F(M(x + b, c) + a - b, c)``. Two quotients become one (which often folds further:
    ``F(x + 5, 2) - F(x - 3, 2) = 4``, ``F(x + 1, 2) - F(x, 2) = M(x, 2)``)."""
    parts = terms(node)
    found = _quotients(parts)
    for k, m, x, a in found:
        for k2, m2, x2, b in found:
            if k <= 0 or k2 != -k or m2 is m or x2 != x or m2.args[1] != m.args[1]:
                continue
            c = m.args[1]
            rest = [(kk, t) for kk, t in parts if t is not m and t is not m2]
            inner = FloorDiv(add([Mod(m2.args[0], c), Integer(a - b)]), c)
            return add([from_terms(rest), scale(k, inner)])
    return None


def sum_join_floordiv(node: Expr, ctx: Context) -> Expr | None:
    """``k*F(x, c) + k*F(M(x, c) + y, c) = k*F(x + y, c)``: ``x + y = c*F(x, c) +
    (M(x, c) + y)``, and the multiple of ``c`` leaves the division. So
    ``F(M(x, 2) + 7, 2) + F(x, 2) = F(x + 7, 2)``."""
    parts = terms(node)
    index = {m: k for k, m in parts}
    for k, m in parts:
        if type(m) is not FloorDiv or _divisor(m) is None:
            continue
        c = m.args[1]
        for j, t in terms(m.args[0]):
            if j != 1 or type(t) is not Mod or t.args[1] != c:
                continue
            partner = FloorDiv(t.args[0], c)
            if partner != m and index.get(partner) == k:
                y = from_terms([(jj, tt) for jj, tt in terms(m.args[0]) if tt is not t])
                rest = [(kk, u) for kk, u in parts if u is not m and u != partner]
                return add([from_terms(rest), scale(k, FloorDiv(add([t.args[0], y]), c))])
    return None


def sum_parity_quotient(node: Expr, ctx: Context) -> Expr | None:
    """``k*F(y, 2) + k*M(y, 2) = k*F(y + 1, 2)`` and ``k*F(y + 1, 2) - k*M(y, 2) =
    k*F(y, 2)``: ``F(y + 1, 2) = F(y, 2) + F(M(y, 2) + 1, 2)``, and ``F(M(y, 2) + 1, 2)``
    is ``M(y, 2)`` (both are 1 exactly when ``y`` is odd)."""
    parts = terms(node)
    index = {m: k for k, m in parts}
    for k, m, x, e in _quotients(parts):
        if m.args[1] != 2:
            continue
        for shift, sign in ((0, 1), (1, -1)):  # F(y, 2) + M(y, 2); F(y + 1, 2) - M(y, 2)
            partner = Mod(add([x, Integer(e - shift)]), 2)
            if index.get(partner) == sign * k:
                rest = [(kk, t) for kk, t in parts if t is not m and t != partner]
                quotient = FloorDiv(add([x, Integer(e + sign)]), 2)
                return add([from_terms(rest), scale(k, quotient)])
    return None


def sum_to_mod_partial(node: Expr, ctx: Context) -> Expr | None:
    """``-m*c*F(x, c) + r = m*M(x, c) + r - m*x`` (``M(x, c) = x - c*F(x, c)``), taken when
    ``r`` holds some of ``m*x``'s terms (not all: then ``sum_to_mod`` applies) and the sum
    then writes fewer operations (:func:`~symidx.simplify.lattice.operations`):
    ``y - F(y + z, 5) * 5 = M(y + z, 5) - z``."""
    parts = terms(node)
    index = {m: k for k, m in parts}
    before = operations(node)
    for k, mono, _, _ in _quotients(parts):
        c = _divisor(mono)
        assert c is not None
        if k % c:
            continue
        m = -k // c
        x = mono.args[0]
        wanted = [t for coeff, t in terms(x) if t is not ONE]
        if not any(t in index for t in wanted) or all(t in index for t in wanted):
            continue
        rest = from_terms([(kk, t) for kk, t in parts if t is not mono])
        new = add([scale(m, Mod(x, c)), rest, scale(-m, x)])
        if operations(new) < before:
            return new
    return None


def sum_recombine_congruent(node: Expr, ctx: Context) -> Expr | None:
    """``k*c*F(y, c) + k*M(x, c) = k*y`` when ``x - y`` is a multiple of ``c`` (``M(x - y, c)``
    simplifies to 0): then ``M(x, c) = M(y, c)`` and Euclid recombines. So, for
    ``i1`` in ``[0, 2]``, ``((i0 mod 4) * 3 + i1) floordiv 4 * 4 + (i0 * 3 + i1) mod 4 =
    (i0 mod 4) * 3 + i1``."""
    parts = terms(node)
    quotients = _quotients(parts)
    for k, mono in parts:
        if type(mono) is not Mod:
            continue
        c = _divisor(mono)
        if c is None:
            continue
        x = mono.args[0]
        for k2, q, _, _ in quotients:
            y = q.args[0]
            if k2 != k * c or q.args[1] != c or y == x:
                continue
            if ctx.probe(Mod(add([x, scale(-1, y)]), c)) != 0:
                continue
            rest = [(kk, t) for kk, t in parts if t is not mono and t is not q]
            return add([from_terms(rest), scale(k, y)])
    return None
