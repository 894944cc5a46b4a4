"""The simplifier's ``min``/``max`` rules.

``min`` and ``max`` are binary (:class:`~symidx.core.expr.Min`, :class:`~symidx.core.expr.Max`);
``op`` stands for either and ``dual`` for the other. Two rules are decided by the range of
a difference (:func:`minmax_by_range`, :func:`minmax_rounding`); the others by the shape of
the arguments, from four facts of a total order: it is a distributive lattice
(``max(a, min(b, c)) = min(max(a, b), max(a, c))``), ``x -> x + t`` and ``x -> floor(x / c)``
(``c > 0``) keep the order, ``x -> -x`` and ``x -> floor(x / c)`` (``c < 0``) reverse it, and
``{min(a, b), max(a, b)} = {a, b}``. :func:`provably_le` (``a <= b`` everywhere, by the
ranges or by the nesting of ``min`` and ``max``) decides which argument of a nest is never
the one taken.

Each rule is ``rule(node, ctx) -> Expr | None`` (:mod:`symidx.core.simplify.context`), listed in
:data:`symidx.core.simplify.table.RULES`, with its derivation in its docstring; hypothesis
tests check each against brute force (``tests/test_simplify_tvm_rules.py``).
"""

from __future__ import annotations

from sympy import Add, Mul

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
    max_of,
    min_of,
    scale,
    terms,
)
from symidx.core.interval import Interval
from symidx.core.simplify.context import Context

__all__ = [
    "operations", "provably_le", "minmax_by_range", "minmax_rounding", "minmax_drop_bounded",
    "minmax_distribute", "minmax_common_terms", "minmax_negated", "minmax_of_quotients",
    "sum_min_plus_max", "sum_minmax_difference", "sum_into_minmax", "product_min_max",
]

#: How deep :func:`provably_le` looks into nested ``min``/``max``, and how many arguments
#: :func:`minmax_drop_bounded` collects from a nest (both bound the work on any input).
LE_DEPTH = 4
NEST_LIMIT = 8


MinOrMax = type[Min] | type[Max]


def _dual(kind: MinOrMax) -> MinOrMax:
    return Max if kind is Min else Min


def _build(kind: MinOrMax, *args: Expr) -> Expr:
    return min_of(*args) if kind is Min else max_of(*args)


def operations(e: Expr) -> int:
    """How many operations ``e`` writes: a sum of ``n`` terms ``n - 1`` additions, a product
    of ``n`` factors (a constant one too: ``-x`` and ``x * 4`` are one each) ``n - 1``,
    ``x**n`` ``n - 1``, and every ``floordiv``, ``ceildiv``, ``mod``, ``min``, ``max`` one.
    The rules that trade one form for another take the new one only when it has fewer."""
    if e.is_Atom:
        return 0
    inner = sum(operations(a) for a in e._args)
    if isinstance(e, Add | Mul):
        return len(e._args) - 1 + inner
    if e.is_Pow:
        return int(e._args[1]) - 1 + inner
    return 1 + inner


def _rounded(parts: Terms) -> Terms | None:
    """The sum ``parts`` with every rounded multiple written by its remainder:
    ``k*F(y, c) = m*(y - M(y, c))`` and ``k*C(y, c) = m*(y + M(-y, c))`` for ``k = m*c``,
    ``c > 0`` (``c*F(y, c) = y - M(y, c)``, ``c*C(y, c) = y + M(-y, c)``); None when it holds
    none. The remainders lie in ``[0, c - 1]``, so the sum's interval is often tighter."""
    out: Terms = []
    rounded = False
    for k, mono in parts:
        kind = type(mono)
        d = mono._args[1] if kind is FloorDiv or kind is CeilDiv else None
        c = int(d) if d is not None and d.is_Integer and int(d) > 0 else None
        if c is None or k % c:
            out.append((k, mono))
            continue
        rounded = True
        m = k // c
        y = mono._args[0]
        out += [(m * coeff, t) for coeff, t in terms(y)]
        out.append((-m, Mod(y, c)) if kind is FloorDiv else (m, Mod(scale(-1, y), c)))
    return out if rounded else None


def _difference(a: Expr, b: Expr, ctx: Context) -> Interval:
    """The interval of ``a - b``, the tighter of the plain one and the one with rounded
    multiples written by their remainders (:func:`_rounded`)."""
    parts = terms(add([a, scale(-1, b)]))
    plain = ctx.bounds(from_terms(parts))
    rounded = _rounded(parts)
    return plain if rounded is None else plain.intersect(ctx.bounds(from_terms(rounded)))


def provably_le(p: Expr, q: Expr, ctx: Context, depth: int = LE_DEPTH) -> bool:
    """Is ``p <= q`` at every point? By the range of ``q - p``, or through nested ``min``/
    ``max``: ``min(a, b) <= q`` when ``a <= q`` or ``b <= q``; ``max(a, b) <= q`` when both
    are; ``p <= max(a, b)`` when ``p <= a`` or ``p <= b``; ``p <= min(a, b)`` when ``p`` is
    below both. False means "not shown", not "false"."""
    if p == q:
        return True
    if depth > 0:
        kp, kq = type(p), type(q)
        if kp is Min and any(provably_le(a, q, ctx, depth - 1) for a in p._args):
            return True
        if kq is Max and any(provably_le(p, b, ctx, depth - 1) for b in q._args):
            return True
        if kp is Max and all(provably_le(a, q, ctx, depth - 1) for a in p._args):
            return True
        if kq is Min and all(provably_le(p, b, ctx, depth - 1) for b in q._args):
            return True
    diff = _difference(q, p, ctx)
    return not diff.is_empty and diff.lo >= 0


# --- one min / max ---------------------------------------------------------------------------
def minmax_by_range(node: Expr, ctx: Context) -> Expr | None:
    """``min(a, b) = a`` when ``a - b <= 0`` everywhere (``max(a, b) = a`` when
    ``a - b >= 0``): the difference's range decides, so ``max(d0, d0 - 1) = d0``."""
    a, b = node._args
    diff = ctx.bounds(add([a, scale(-1, b)]))
    if diff.is_empty:
        return None
    is_min = isinstance(node, Min)
    if diff.hi <= 0:
        return a if is_min else b
    if diff.lo >= 0:
        return b if is_min else a
    return None


def minmax_rounding(node: Expr, ctx: Context) -> Expr | None:
    """``min(a, b)`` / ``max(a, b)`` decided by the sign of ``a - b`` after writing each
    rounded multiple in it by its remainder: ``c*F(y, c) = y - M(y, c)`` and
    ``c*C(y, c) = y + M(-y, c)`` (``c > 0``), with ``M(., c)`` in ``[0, c - 1]``. So
    ``min(((x + 3) floordiv 4) * 4, x) = x`` (the difference is ``3 - M(x + 3, 4) >= 0``)
    and ``max((x floordiv 8) * 8, x) = x`` (it is ``-M(x, 8) <= 0``)."""
    a, b = node._args
    rounded = _rounded(terms(add([a, scale(-1, b)])))
    if rounded is None:
        return None
    diff = ctx.bounds(from_terms(rounded))
    if diff.is_empty:
        return None
    is_min = type(node) is Min
    if diff.hi <= 0:
        return a if is_min else b
    if diff.lo >= 0:
        return b if is_min else a
    return None


def _nest(node: Expr, kind: MinOrMax, out: list[Expr]) -> None:
    """The arguments of a nest of ``kind`` (``min(min(x, y), z)``: ``x, y, z``), at most
    :data:`NEST_LIMIT` (a deeper nest keeps its inner part whole)."""
    for a in node._args:
        if type(a) is kind and len(out) + len(a._args) <= NEST_LIMIT:
            _nest(a, kind, out)
        else:
            out.append(a)


def minmax_drop_bounded(node: Expr, ctx: Context) -> Expr | None:
    """``min(a_1, ..., a_n)`` (a nest of ``min``) without every ``a_i`` that some other
    ``a_j`` is at most everywhere (:func:`provably_le`): the minimum never takes ``a_i``
    (of two that are always equal the first stays). ``max`` likewise, with "at least".
    So ``min(max(x, y), x) = x``, ``min(min(x, y), x) = min(x, y)``,
    ``min(max(x, y), min(x, y)) = min(x, y)`` and ``min(min(x, 11), 10) = min(x, 10)``."""
    kind = type(node)
    args: list[Expr] = []
    _nest(node, kind, args)

    def below(a: Expr, b: Expr) -> bool:  # a never beats b: b is taken over a
        return provably_le(b, a, ctx) if kind is Min else provably_le(a, b, ctx)

    kept = [a for i, a in enumerate(args)
            if not any(j != i and below(a, b) and (j < i or not below(b, a))
                       for j, b in enumerate(args))]
    if len(kept) == len(args):
        return None
    return _build(kind, *kept)


def minmax_distribute(node: Expr, ctx: Context) -> Expr | None:
    """``min(max(a, b), max(a, c)) = max(a, min(b, c))`` and
    ``max(min(a, b), min(a, c)) = min(a, max(b, c))``: a total order is a distributive
    lattice (where ``a`` is the largest of the three, both sides are ``a``; elsewhere both
    are ``min(b, c)`` or the middle value). One operation fewer."""
    p, q = node._args
    inner = _dual(type(node))
    if type(p) is not inner or type(q) is not inner:
        return None
    for a in p._args:
        if a in q._args:
            b = p._args[1] if p._args[0] == a else p._args[0]
            c = q._args[1] if q._args[0] == a else q._args[0]
            return _build(inner, a, _build(type(node), b, c))
    return None


def minmax_common_terms(node: Expr, ctx: Context) -> Expr | None:
    """``op(a + t, b + t) = op(a, b) + t``: adding ``t`` keeps the order, so it commutes
    with ``min`` and ``max``. ``t`` is every term the two arguments share with the same
    coefficient (a constant only when both have it), when that writes fewer operations:
    ``min(x + y, x + z) = min(y, z) + x``, ``min(x + 10, y + 10) = min(x, y) + 10``, but
    ``min(x + 10, 10)`` stays."""
    a, b = node._args
    ta, tb = terms(a), terms(b)
    other = {m: k for k, m in tb}
    common = [(k, m) for k, m in ta if other.get(m) == k]
    if not common:
        return None
    shared = {m for _, m in common}
    rest_a = from_terms([(k, m) for k, m in ta if m not in shared])
    rest_b = from_terms([(k, m) for k, m in tb if m not in shared])
    new = add([type(node)(rest_a, rest_b), from_terms(common)])
    return new if operations(new) < operations(node) else None


def _negative(e: Expr) -> bool:
    """Does ``e`` hold a variable part, with every non-constant term's coefficient below 0?"""
    parts = [(k, m) for k, m in terms(e) if m is not ONE]
    return bool(parts) and all(k < 0 for k, _ in parts)


def minmax_negated(node: Expr, ctx: Context) -> Expr | None:
    """``min(-a, -b) = -max(a, b)`` (and ``max(-a, -b) = -min(a, b)``): negation reverses
    the order. Taken when every non-constant term of both arguments is negated, so the
    negations leave the arguments: ``min(-y, -z) = -max(y, z)``."""
    a, b = node._args
    if not (_negative(a) and _negative(b)):
        return None
    return scale(-1, _dual(type(node))(scale(-1, a), scale(-1, b)))


def minmax_of_quotients(node: Expr, ctx: Context) -> Expr | None:
    """``min(F(a, c), F(b, c)) = F(min(a, b), c)`` for a constant ``c > 0`` and
    ``F(max(a, b), c)`` for ``c < 0`` (``max`` likewise, ``ceildiv`` too): ``x -> floor(x/c)``
    keeps the order for ``c > 0`` and reverses it for ``c < 0``, so it takes the smaller
    value at the smaller (or the larger) argument. One division fewer."""
    p, q = node._args
    kind = type(p)
    if kind is not type(q) or kind not in (FloorDiv, CeilDiv):
        return None
    c = p._args[1]
    if c != q._args[1] or not c.is_Integer:
        return None
    inner = type(node) if int(c) > 0 else _dual(type(node))
    return kind(inner(p._args[0], q._args[0]), c)


# --- sums and products ------------------------------------------------------------------------
def _minmax_terms(parts: Terms) -> list[tuple[int, Expr]]:
    return [(k, m) for k, m in parts if type(m) is Min or type(m) is Max]


def _has_minmax(node: Expr) -> bool:
    """Does the sum hold a ``min``/``max`` term (``k*op(a, b)`` or ``op(a, b)``)? Read off
    its shape, before the rules split it into terms."""
    for t in node._args:
        if type(t) is Mul and len(t._args) == 2 and t._args[0].is_Integer:
            t = t._args[1]
        if type(t) is Min or type(t) is Max:
            return True
    return False


def sum_min_plus_max(node: Expr, ctx: Context) -> Expr | None:
    """``k*min(a, b) + k*max(a, b) = k*a + k*b``: one of them is ``a``, the other ``b``."""
    if not _has_minmax(node):
        return None
    parts = terms(node)
    found = _minmax_terms(parts)
    for k, m in found:
        if type(m) is not Min:
            continue
        partner = Max(*m._args)
        if (k, partner) in found:
            rest = [(kk, t) for kk, t in parts if t is not m and t != partner]
            return add([from_terms(rest), scale(k, m._args[0]), scale(k, m._args[1])])
    return None


def _constant_difference(a: Expr, b: Expr) -> int | None:
    d = add([a, scale(-1, b)])
    return int(d) if d.is_Integer else None


def sum_minmax_difference(node: Expr, ctx: Context) -> Expr | None:
    """``k*op(a + d, b + d) - k*op(a, b) = k*d`` for a constant ``d``: adding ``d`` commutes
    with ``min`` and ``max`` (``min(x + 10, y + 1) - min(x, y - 9) = 10``). The arguments
    are paired either way round."""
    if not _has_minmax(node):
        return None
    parts = terms(node)
    found = _minmax_terms(parts)
    for k, m in found:
        for k2, m2 in found:
            if k2 != -k or type(m2) is not type(m) or m2 is m:
                continue
            (a1, b1), (a2, b2) = m._args, m2._args
            for x, y in ((a2, b2), (b2, a2)):
                d = _constant_difference(a1, x)
                if d is not None and d == _constant_difference(b1, y):
                    rest = [(kk, t) for kk, t in parts if t is not m and t is not m2]
                    return from_terms([*rest, (k * d, ONE)])
    return None


def sum_into_minmax(node: Expr, ctx: Context) -> Expr | None:
    """``op(a, b) + r = op(a + r, b + r)`` and ``-op(a, b) + r = dual(r - a, r - b)``
    (adding ``r`` commutes with ``min``/``max``, negation swaps them), taken when the sum
    then writes fewer operations (:func:`operations`), as a term of ``r`` cancels inside:
    ``min(x, y - z) + z = min(x + z, y)``, ``max(0, 1 - x * 4) + x * 4 = max(x * 4, 1)``,
    ``x - max(x + y, 0) = min(-y, x)``."""
    if not _has_minmax(node):
        return None
    parts = terms(node)
    before = -1
    for k, m in _minmax_terms(parts):
        if k not in (1, -1):
            continue
        inside = {t for a in m._args for _, t in terms(a)}
        if not any(t in inside for _, t in parts if t is not m):
            continue  # nothing of the rest can cancel inside
        if before < 0:
            before = operations(node)
        rest = from_terms([(kk, t) for kk, t in parts if t is not m])
        kind = type(m) if k == 1 else _dual(type(m))
        new = kind(add([scale(k, m._args[0]), rest]), add([scale(k, m._args[1]), rest]))
        if operations(new) < before:
            return new
    return None


def product_min_max(node: Expr, ctx: Context) -> Expr | None:
    """``min(a, b) * max(a, b) = a * b``: one factor is ``a``, the other ``b``."""
    factors = node._args
    for f in factors:
        if type(f) is Min:
            partner = Max(*f._args)
            if partner in factors:
                rest = [g for g in factors if g is not f and g != partner]
                return Mul(*rest, f._args[0], f._args[1])
    return None
