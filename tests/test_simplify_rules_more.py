"""The simplifier rules of complementary mods, rounded multiples in min/max, symbolic
divisors (common factors, remainders of rounded-down values, divisions below a divisor the
constraints bound), residue ranges narrowing a variable, and result ranges through linear
constraints: each against brute force, on random intervals that include negative values."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import Integer, preorder_traversal
from test_simplify import (
    assert_equal_on,
    assert_rules_preserve_value,
    assert_simplified_once_for_all,
)

from helpers import assert_same_function
from symidx import result_ranges
from symidx.core.expr import CeilDiv, FloorDiv, Max, Min, Mod, dim, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.simplify import simplify
from symidx.core.simplify.constraints import tighten_by_mod_range
from symidx.core.simplify.rewriter import Rewriter
from symidx.core.simplify.rules import mod_nested_divisor
from symidx.strategies import indexing_maps, intervals

RULE_FAMILY = settings(max_examples=300)
X, Y, N, M = dim(0), dim(1), sym(0), sym(1)


@st.composite
def linear(draw, variables=(X, Y)):
    e = Integer(draw(st.integers(-5, 5)))
    for v in draw(st.lists(st.sampled_from(variables), min_size=1, max_size=2)):
        e += draw(st.sampled_from([1, -1, 2, 3])) * v
    return e


@st.composite
def new_rule_shapes(draw):
    """Expressions the new rules rewrite, among ones they must leave alone."""
    x = draw(linear())
    c = draw(st.integers(2, 5))
    k = draw(st.sampled_from([1, -2, 3]))
    kind = draw(st.integers(0, 6))
    if kind == 0:  # complementary mods: a complete (or, sometimes, incomplete) residue set
        shifts = draw(st.lists(st.integers(-9, 9), min_size=c - 1, max_size=c + 1))
        if draw(st.booleans()):
            shifts = [draw(st.integers(-20, 20)) * c + r for r in range(c)]
        return sum((k * Mod(x + a, c) for a in shifts), Integer(0)) + draw(linear())
    if kind == 1:  # rounded multiples inside min / max
        op = draw(st.sampled_from([Min, Max]))
        div = draw(st.sampled_from([FloorDiv, CeilDiv]))
        a = draw(st.integers(-c, c))
        return op(div(x + a, c) * c * draw(st.sampled_from([1, 2])), x + draw(st.integers(-2, 2)))
    if kind == 2:  # (x - x mod y) mod y, and a shifted partner
        return Mod(k * (x - Mod(x, N)) + draw(linear()), N)
    if kind == 3:  # common factors of a symbolic quotient
        op = draw(st.sampled_from([FloorDiv, Mod, CeilDiv]))
        g = draw(st.sampled_from([M, 2 * M, Integer(2), M * M]))
        return op(g * x + g * draw(st.sampled_from([0, 1, -3])), g * N)
    if kind == 4:
        return FloorDiv(x, N) + Mod(x, N * M)
    if kind == 5:
        return Mod(x + c, c) + Mod(x + 2 * c + 1, c)
    return Min(FloorDiv(x, c) * c, x) + Max(CeilDiv(x, c) * c, x)


# N may be negative or positive, never 0; M is positive (a common factor must be)
envs = st.tuples(intervals(-9, 12, 8), intervals(-6, 9, 6),
                 st.one_of(intervals(1, 6, 3), intervals(-6, -1, 3)), intervals(1, 4, 3))


@RULE_FAMILY
@given(new_rule_shapes(), envs)
def test_every_rule_on_the_new_shapes_preserves_value(e, bounds):
    env = dict(zip([X, Y, N, M], bounds))
    assert_rules_preserve_value(e, env)
    assert_simplified_once_for_all(e, env)


def test_the_new_rules_fire_on_their_families():
    env = {X: Interval(-30, 30), Y: Interval(-5, 5), N: Interval(1, 6), M: Interval(1, 4)}
    rw = Rewriter(env)
    assert rw.simplify(Mod(X, 2) + Mod(X + 1, 2)) == 1
    assert rw.simplify(Mod(X + Y + 4, 3) + Mod(X + Y - 4, 3) + Mod(X + Y, 3)) == 3
    assert rw.simplify(Min(FloorDiv(X + 3, 4) * 4, X)) == X
    assert rw.simplify(Max(FloorDiv(X, 8) * 8, X)) == X
    assert rw.simplify(Mod(X - Mod(X, N), N)) == 0
    assert rw.simplify(FloorDiv(M * X, M * N)) == FloorDiv(X, N)
    assert rw.simplify(Mod(M * X, M * N)) == M * Mod(X, N)
    # a divisor whose interval holds 0 (XLA accepts it; undefined there): no rewrite hides it
    zero = Rewriter({**env, N: Interval(-3, 3)})
    assert mod_nested_divisor(Mod(X - Mod(X, N), N), zero) is None
    # N's interval holds negative values too: the common factor must be positive
    neg = Rewriter({**env, N: Interval(-6, -1)})
    assert neg.simplify(FloorDiv(N * X, N * M)) == FloorDiv(N * X, N * M)


@st.composite
def maps_below_a_symbolic_divisor(draw):
    """``x mod (n*n*k)`` and ``x floordiv (n*n*k)`` with a constraint ``x - n*n*k`` below
    some bound: when the bound is below 0 and ``x >= 0``, the division folds."""
    k = draw(st.sampled_from([1, 2, 4]))
    divisor = N * N * k
    x = X + draw(st.sampled_from([0, Y]))
    top = draw(st.integers(-3, 2))
    constraints = [(x - divisor, (-200, top))]
    if draw(st.booleans()):
        constraints.append((x, (draw(st.integers(-2, 1)), 200)))
    results = [Mod(x, divisor), FloorDiv(x, divisor), Mod(x + 1, divisor)]
    return IndexingMap.create([draw(intervals(-4, 40, 30)), draw(intervals(0, 3, 3))], results,
                              [draw(intervals(1, 4, 3))], constraints=constraints)


@RULE_FAMILY
@given(maps_below_a_symbolic_divisor())
def test_divisions_below_a_constrained_divisor_preserve_meaning(m):
    from symidx.core.verify import check_step

    result = simplify(m, trace=True)
    assert_same_function(result.map, m)
    assert simplify(result.map) == result.map
    for step in result.trace:
        assert check_step(step).equal, step.rule


def test_a_constrained_divisor_folds():
    m = IndexingMap.create([(0, 1000)], [Mod(X, N * N * 32), FloorDiv(X, N * N * 32)],
                           [(1, 8)], constraints=[(X - N * N * 32, (-3000, -1))])
    assert simplify(m).results == (X, Integer(0))
    loose = m.replace(constraints=[(X - N * N * 32, (-3000, 0))])  # x = n*n*32 allowed
    assert simplify(loose).results == loose.results


@RULE_FAMILY
@given(intervals(-40, 40, 40), st.integers(1, 9), st.data())
def test_tighten_by_mod_range_keeps_exactly_the_allowed_values(b, c, data):
    a = data.draw(st.integers(0, c - 1))
    top = data.draw(st.integers(a, c - 1))
    got = tighten_by_mod_range(b, c, a, top)
    allowed = [v for v in range(b.lo, b.hi + 1) if a <= v % c <= top]
    if not allowed:
        assert got.is_empty or all(not (a <= v % c <= top) for v in range(got.lo, got.hi + 1))
    else:
        assert (got.lo, got.hi) == (min(allowed), max(allowed))


@RULE_FAMILY
@given(intervals(-12, 30, 30), intervals(-8, 8, 12), st.integers(2, 6), st.data())
def test_a_mod_range_narrows_the_variable_and_keeps_the_map(b0, b1, c, data):
    a = data.draw(st.integers(0, c - 1))
    top = data.draw(st.integers(a, c - 1))
    m = IndexingMap.create([b0, b1], [X + Y], constraints=[(Mod(X, c), (a, top)),
                                                            (Mod(Y, c), (top, c + 3))])
    got = simplify(m)
    assert_same_function(got, m)
    if not got.is_known_empty:
        values = [v for v in range(b0.lo, b0.hi + 1) if a <= v % c <= top]
        assert got.dims[0] == Interval(min(values), max(values))


@st.composite
def maps_with_linear_constraints(draw):
    coeff = st.sampled_from([1, 2, -1, 3])
    constraints = []
    for _ in range(draw(st.integers(1, 2))):
        s = draw(coeff) * X + draw(coeff) * Y + draw(st.integers(-3, 3))
        lo = draw(st.integers(-15, 20))
        constraints.append((s, (lo, lo + draw(st.integers(0, 12)))))
    results = [draw(coeff) * X + draw(coeff) * Y + draw(st.integers(-3, 3)), X, Y,
               FloorDiv(draw(coeff) * X + Y, 2)]
    return IndexingMap.create([draw(intervals(-6, 12, 12)), draw(intervals(-6, 12, 12))],
                              results, constraints=constraints)


@RULE_FAMILY
@given(maps_with_linear_constraints())
def test_result_ranges_through_linear_constraints_hold_every_value(m):
    if m.is_known_empty:
        return
    ranges = result_ranges(m)
    grid = np.array([p for p in np.ndindex(*(b.size for b in m.dims))]) + [b.lo for b in m.dims]
    for point in grid:
        image = m.image(tuple(int(v) for v in point))
        for values in image:
            for v, iv in zip(values, ranges):
                assert iv.lo <= v <= iv.hi, (m, values, ranges)


def test_result_ranges_use_linear_combinations():
    m = IndexingMap.create([(0, 9), (0, 9)], [X + Y + 3, 2 * X + 2 * Y + 1, 2 * X + Y, X,
                                              X - Y], constraints=[(X + Y, (0, 5))])
    assert result_ranges(m) == [Interval(3, 8), Interval(1, 11), Interval(0, 10),
                                Interval(0, 5), Interval(-5, 5)]


@RULE_FAMILY
@given(intervals(-20, 20, 10), intervals(-6, 12, 6), st.integers(2, 8), st.integers(-10, 10))
def test_a_shifted_remainder_that_never_or_always_wraps_leaves_no_mod(bq, by, c, k):
    """``(x + k) mod c`` is ``x mod c + k - j*c`` when the ranges put every ``x mod c + k``
    in one period (``j = 0``: it never wraps; ``j = 1``: it always does); existing rules
    give that form, with no remainder left."""
    env = {X: bq, Y: by}
    e = Mod(c * X + Y + k, c)
    got = Rewriter(env).simplify(e)
    assert_equal_on(e, got, env)
    if (by.lo + k) // c == (by.hi + k) // c:
        assert not any(isinstance(n, Mod) for n in preorder_traversal(got)), got


@RULE_FAMILY
@given(indexing_maps(negative_divisors=True, max_constraints=0))
def test_the_round_without_constraints_gives_what_the_full_rounds_give(m):
    """``results_only_round`` (taken without ``trace``) is a shortcut of the passes: the
    same map as the full rounds (which ``trace=True`` runs)."""
    assert simplify(m) == simplify(m, trace=True).map


@RULE_FAMILY
@given(indexing_maps(negative_divisors=True, max_constraints=2))
def test_the_round_with_constraints_that_always_hold_gives_what_the_full_rounds_give(m):
    """``results_only_round`` also takes a map whose constraints all hold on the variables'
    intervals (it drops them, as :func:`fold_constraints` does): the same map as the full
    rounds, here on maps with constraints, with one that always holds added (what a
    composition adds), and on the map as composed with the identity."""
    from symidx import compose
    from symidx.core.expr import bounds

    assert simplify(m) == simplify(m, trace=True).map
    if m.is_known_empty or m.is_undefined or not m.results:
        return
    env = m.variable_bounds()
    spans = [bounds(r, env) for r in m.results]
    if any(b.lo > b.hi for b in spans):
        return
    holds = m.with_constraint(m.results[0], spans[0])
    assert simplify(holds) == simplify(holds, trace=True).map
    identity = IndexingMap.create(spans, [dim(i) for i in range(len(spans))])
    composed = compose(m, identity)  # each result in its interval: holds on the box
    assert simplify(composed) == simplify(composed, trace=True).map
