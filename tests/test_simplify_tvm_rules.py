"""The min/max rules (``symidx/core/simplify/lattice.py``), the quotient and remainder rules
(``symidx/core/simplify/quotients.py``) and the residue bounds of a remainder, each against
brute force: random expressions of the shapes the rules rewrite, and of shapes next to
them that they must leave alone, on random intervals that include negative values."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import Integer
from test_simplify import (
    assert_rules_preserve_value,
    assert_simplified_once_for_all,
)

from symidx.core.expr import CeilDiv, FloorDiv, Max, Min, Mod, bounds, compile_expr, dim
from symidx.core.interval import Interval
from symidx.core.simplify.lattice import operations, provably_le
from symidx.core.simplify.rewriter import Rewriter
from symidx.strategies import intervals

RULE_FAMILY = settings(max_examples=300)
X, Y, Z = dim(0), dim(1), dim(2)
# wide intervals often, so that a difference's range rarely decides a min/max alone
WIDE = st.sampled_from([Interval(-10, 10), Interval(-7, 9), Interval(0, 12), Interval(-12, 3)])
ENV = st.tuples(WIDE | intervals(-10, 10, 12), WIDE | intervals(-8, 8, 10),
                WIDE | intervals(-6, 6, 6))


@st.composite
def linear(draw, variables=(X, Y, Z), big=False):
    e = Integer(draw(st.integers(-3, 3)))
    coeffs = [1, -1, 2, -3, 5, 12, 37, -40] if big else [1, 1, -1, -1, 2]
    for v in draw(st.lists(st.sampled_from(variables), min_size=1, max_size=2)):
        e += draw(st.sampled_from(coeffs)) * v
    return e


@st.composite
def minmax_shapes(draw, kinds=tuple(range(9))):
    """Nests of min/max, lattice identities, shared terms, negations, quotients, sums."""
    op = draw(st.sampled_from([Min, Max]))
    dual = Max if op is Min else Min
    a, b, c = draw(linear()), draw(linear()), draw(linear())
    kind = draw(st.sampled_from(kinds))
    if kind == 0:  # nests, with repeated and dominated arguments
        leaves = [a, b, c, op(a, b), Integer(draw(st.integers(-5, 5)))]
        e = leaves[draw(st.integers(0, 4))]
        for _ in range(draw(st.integers(1, 4))):
            e = draw(st.sampled_from([op, op, dual]))(e, leaves[draw(st.integers(0, 4))])
        return e
    if kind == 1:  # distributivity, and near misses (no shared argument)
        return op(dual(a, b), dual(draw(st.sampled_from([a, a, c])), c))
    if kind == 2:  # shared terms, constants too
        t = draw(st.sampled_from([X, -Y, X + 2 * Z, Integer(3)]))
        return op(a + t, draw(st.sampled_from([b + t, b, Integer(3) + t])))
    if kind == 3:  # negated arguments
        return op(-a, draw(st.sampled_from([-b, b, -b + 4])))
    if kind == 4:  # quotients by the same constant, either sign
        div = draw(st.sampled_from([FloorDiv, CeilDiv]))
        d = draw(st.sampled_from([2, 3, 5, -2, -4]))
        return op(div(a, d), div(b, draw(st.sampled_from([d, d, 3]))))
    if kind == 5:  # a min/max in a sum whose rest may cancel inside
        k = draw(st.sampled_from([1, -1, 1, 2]))
        r = draw(st.sampled_from([-a, a - b, c, -b + 3, Integer(4), -k * a]))
        return k * op(a, b) + r
    if kind == 6:  # min + max, and shifted differences
        d = draw(st.integers(-4, 4))
        if draw(st.booleans()):
            return op(a, b) + dual(draw(st.sampled_from([a, a, c])), b)
        return op(a + d, b + d) - op(draw(st.sampled_from([a, a, b])), b) + c
    if kind == 7:  # products
        return op(a, b) * dual(b, draw(st.sampled_from([a, a, c]))) * draw(
            st.sampled_from([1, -2]))
    # rounded multiples bounded by a max
    q = draw(st.integers(2, 5))
    return op(FloorDiv(a + q - 1, q) * q, dual(a, Integer(draw(st.integers(-2, q)))))


@st.composite
def quotient_shapes(draw, kinds=tuple(range(11))):
    """Quotients and remainders the new rules take apart or put together."""
    c = draw(st.integers(2, 6))
    x, y = draw(linear()), draw(linear())
    k = draw(st.sampled_from([1, -1, 2, -3]))
    kind = draw(st.sampled_from(kinds))
    if kind == 0:  # large coefficients: split into quotient and a single-valued rest
        return FloorDiv(draw(linear(big=True)), draw(st.sampled_from([c, 16, 25])))
    if kind == 1:  # digits of digits
        a, b = draw(st.integers(2, 4)), draw(st.sampled_from([8, 6, 9, 4]))
        return FloorDiv(Mod(FloorDiv(X + Y, a), b), draw(st.sampled_from([3, 5, c])))
    if kind == 2:  # a value less its remainder, and near misses
        j = draw(st.sampled_from([1, -1, 2]))
        d = c * draw(st.integers(1, 3))
        return FloorDiv(j * Mod(x, d) - draw(st.sampled_from([j, j, -j])) * x + y, c)
    if kind == 3:  # a term with two values
        t = draw(st.sampled_from([Mod(x, 2), FloorDiv(Mod(x, 4), 2), Min(Mod(x, 2), 1)]))
        op = draw(st.sampled_from([FloorDiv, Mod]))
        return op(draw(st.integers(-5, 5)) * t + draw(st.integers(-9, 9)), c)
    if kind == 4:  # one term's large coefficient in a remainder (not in a sum's)
        big = draw(st.sampled_from([7, 12, -9, 40]))
        return Mod(big * draw(st.sampled_from([X, Y, Mod(Z, 5)])), c) + Mod(big * X + y, c)
    if kind == 5:  # shifted quotients of one value
        a, b = draw(st.integers(-7, 7)), draw(st.integers(-7, 7))
        return k * FloorDiv(x + a, c) - k * FloorDiv(x + b, c) + y
    if kind == 6:  # a quotient and the quotient of its remainder
        return k * FloorDiv(x, c) + draw(st.sampled_from([k, k, -k])) * FloorDiv(
            Mod(x, c) + y, c)
    if kind == 7:  # quotient and remainder by 2: F(y, 2) + M(y, 2), F(y + 1, 2) - M(y, 2)
        shift, sign = draw(st.sampled_from([(0, 1), (1, -1), (1, 1), (0, -1), (2, 1)]))
        return k * FloorDiv(x + shift, 2) + sign * k * Mod(x, 2) + draw(st.sampled_from([0, Z]))
    if kind == 8:  # part of a value and a rounded multiple of it
        m = draw(st.sampled_from([1, -1, -1, 2]))
        shift = draw(st.integers(-3, 3))
        return -m * c * FloorDiv(X + Y + shift, c) + m * draw(st.sampled_from([X, Y, X + Y, Z]))
    if kind == 9:  # a remainder congruent to a quotient's numerator: c | a*c
        a = draw(st.integers(1, 3))
        q = FloorDiv(a * Mod(X, c) + Y, c)
        return k * c * q + draw(st.sampled_from([k, k, -k])) * Mod(a * X + Y, c)
    # a remainder by a negative divisor inside a remainder
    return Mod(y + k * Mod(x, -c * draw(st.integers(1, 2))), c)


def _check_rules_and_simplify(e, bounds_):
    env = dict(zip([X, Y, Z], bounds_))
    assert_rules_preserve_value(e, env)
    assert_simplified_once_for_all(e, env)


@RULE_FAMILY
@given(minmax_shapes(), ENV)
def test_every_rule_on_min_max_shapes_preserves_value(e, bounds_):
    _check_rules_and_simplify(e, bounds_)


@RULE_FAMILY
@given(quotient_shapes(), ENV)
def test_every_rule_on_quotient_shapes_preserves_value(e, bounds_):
    _check_rules_and_simplify(e, bounds_)


# the sum and product shapes once more on their own: their rules pair two terms, which the
# random arguments above match less often
@settings(max_examples=150)
@given(minmax_shapes(kinds=(5, 6, 7)), ENV)
def test_every_rule_on_min_max_sums_and_products_preserves_value(e, bounds_):
    _check_rules_and_simplify(e, bounds_)


@settings(max_examples=150)
@given(quotient_shapes(kinds=(5, 6, 7, 8, 9)), ENV)
def test_every_rule_on_sums_of_quotients_preserves_value(e, bounds_):
    _check_rules_and_simplify(e, bounds_)


@settings(max_examples=150)
@given(st.tuples(linear(), linear()).flatmap(
    lambda ab: st.sampled_from([Min(*ab), Max(*ab), ab[0], Min(Max(ab[0], 2), ab[1])])),
    st.tuples(linear(), linear()).flatmap(
        lambda ab: st.sampled_from([Min(*ab), Max(*ab), ab[1], Max(Min(ab[0], 1), ab[1])])),
    ENV)
def test_provably_le_is_never_wrong(p, q, bounds_):
    env = dict(zip([X, Y, Z], bounds_))
    if provably_le(p, q, Rewriter(env)):
        variables = [X, Y, Z]
        axes = [np.arange(env[v].lo, env[v].hi + 1) for v in variables]
        grid = [g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")]
        n = grid[0].size
        vp = np.broadcast_to(np.asarray(compile_expr(p, variables)(grid)), (n,))
        vq = np.broadcast_to(np.asarray(compile_expr(q, variables)(grid)), (n,))
        assert (vp <= vq).all(), (p, q)


@RULE_FAMILY
@given(st.lists(st.sampled_from([1, 2, 3, 4, 6, 8, 16, 64, 320, -48]), min_size=1,
                max_size=3),
       st.integers(-300, 300), st.sampled_from([4, 8, 12, 64, 256]), ENV)
def test_remainder_bounds_by_residues_hold_every_value(coeffs, const, m, bounds_):
    """``(a_1*x_1 + ... + b) mod m`` lies in ``[r, m - g + r]`` (``g`` the gcd of ``m`` and
    the coefficients, ``r = b mod g``): every value brute force finds is inside."""
    env = dict(zip([X, Y, Z], bounds_))
    e = Mod(sum((a * v for a, v in zip(coeffs, [X, Y, Z])), Integer(const)), m)
    b = bounds(e, env)
    axes = np.meshgrid(*(np.arange(iv.lo, iv.hi + 1) for iv in bounds_), indexing="ij")
    values = (sum(a * g for a, g in zip(coeffs, axes)) + const) % m
    assert values.min() >= b.lo and values.max() <= b.hi, (e, b, values.min(), values.max())


def test_remainder_bounds_use_the_residues():
    n = dim(0)
    wide = {n: Interval(-(2**40), 2**40)}
    assert bounds(Mod(n * 320 + 255, 256), wide) == Interval(63, 255)
    assert bounds(Mod(n * 64 + 3, 256), wide) == Interval(3, 195)
    assert bounds(Mod(n * 16, 7168), wide) == Interval(0, 7152)
    assert bounds(Mod(n * 3 + 1, 256), wide) == Interval(0, 255)  # gcd 1: nothing known


def test_operations_count_what_is_written():
    assert operations(X) == 0
    assert operations(X + Y + 3) == 2
    assert operations(-X) == 1
    assert operations(4 * FloorDiv(X + 1, 2)) == 3
    assert operations(Min(X, Y) + Max(X - Y, 0)) == 5  # min, max, +, and x - y: +, -


def test_the_rules_fire_on_their_families():
    env = {X: Interval(-30, 30), Y: Interval(-20, 20), Z: Interval(-20, 20)}
    rw = Rewriter(env)
    assert rw.simplify(Min(Max(X, Y), Min(X, Y))) == Min(X, Y)
    assert rw.simplify(Max(Min(X, Y), Min(X, Z))) == Min(X, Max(Y, Z))
    assert rw.simplify(Min(X + Y, X + Z)) == Min(Y, Z) + X
    assert rw.simplify(Min(X - Y, X - Z)) == X - Max(Y, Z)
    assert rw.simplify(Max(FloorDiv(X, -10), FloorDiv(Y, -10))) == FloorDiv(Min(X, Y), -10)
    assert rw.simplify(Max(0, 1 - 4 * X) + 4 * X) == Max(4 * X, 1)
    assert rw.simplify(Min(X, Y) - Min(X + 10, Y + 10)) == -10
    assert rw.simplify(FloorDiv(X + 5, 2) - FloorDiv(X - 3, 2)) == 4
    assert rw.simplify(FloorDiv(X + 1, 2) - FloorDiv(X, 2)) == Mod(X, 2)
    assert rw.simplify(FloorDiv(Mod(X, 4) + 7, 4) + FloorDiv(X, 4)) == FloorDiv(X + 7, 4)
    assert rw.simplify(Mod(X * 3, 2)) == Mod(X, 2)
    # the ones that must not fire: a sum's coefficients stay as written (XLA's form), a
    # constant shared with a bare constant stays inside, distinct divisors stay apart
    assert rw.simplify(Mod(X * 121 + Y, 28)) == Mod(X * 121 + Y, 28)
    assert rw.simplify(Min(X + 10, 10)) == Min(X + 10, 10)
    assert rw.simplify(Min(FloorDiv(X, 2), FloorDiv(Y, 3))) == Min(FloorDiv(X, 2),
                                                                    FloorDiv(Y, 3))
