"""The simplifier's fast paths against the slow paths they replace, on random inputs:
the interval of a remainder of a sum (:func:`symidx.core.expr.ranges._mod_bounds`, bounded
with integers in one walk), the remainder split of the division rules (the rest's
interval from its terms, the sum not built), and the memo of simplified results (keyed by
every variable's interval): each must give exactly what the slow path gives."""

from __future__ import annotations

from dataclasses import replace
from math import gcd

from hypothesis import given
from hypothesis import strategies as st
from sympy import Add, Integer, Mul

from symidx import IndexingMap, simplify
from symidx.core.expr import (
    ONE,
    CeilDiv,
    FloorDiv,
    Max,
    Min,
    Mod,
    bounds,
    clear_caches,
    dim,
    sym,
    terms,
)
from symidx.core.expr.ranges import _mod_bounds, _residues
from symidx.core.interval import Interval
from symidx.core.simplify import passes
from symidx.core.simplify.rewriter import Rewriter
from symidx.core.simplify.rules import _split_remainder, sum_of_terms
from symidx.strategies import expressions, indexing_maps, intervals

d0, d1, s0 = dim(0), dim(1), sym(0)
VARS = [d0, d1, s0]


def _mod_bounds_slow(a, b, env):
    """The interval of ``a mod b`` as it was found before the one-walk fast path: interval
    arithmetic term by term, then the residues of the sum by a walk of their own
    (:func:`~symidx.core.expr.ranges._residues`, which the fast path does in its walk)."""
    rb = bounds(b, env)
    if not (rb.is_point and rb.lo > 0):
        return bounds(a, env).mod(rb)
    m = rb.lo
    if not isinstance(a, Add):
        return bounds(a, env).mod(rb).intersect(_residues(a, m))
    total, rest = Interval(0, 0), Interval(0, 0)
    for t in a.args:
        tb = bounds(t, env)
        total = total + tb
        multiple = (int(t) % m == 0 if t.is_Integer else
                    isinstance(t, Mul) and t.args[0].is_Integer and int(t.args[0]) % m == 0)
        if not multiple:
            rest = rest + tb
    return total.mod(rb).intersect(rest.mod(rb)).intersect(_residues(a, m))


sums = st.lists(st.tuples(st.integers(-24, 24), st.sampled_from(
    [1, d0, d1, s0, FloorDiv(d0, 3), Mod(d1 + s0, 4), d0 * s0])), min_size=1, max_size=5)


@given(sums, st.integers(1, 12), intervals(-6, 9, 7), intervals(0, 9, 7), intervals(-3, 4, 4))
def test_mod_bounds_in_one_walk_is_the_term_by_term_interval(parts, m, i0, i1, i2):
    a = sum((c * t for c, t in parts), Integer(0))
    env = dict(zip(VARS, (i0, i1, i2)))
    assert _mod_bounds(a, Integer(m), env, {}) == _mod_bounds_slow(a, Integer(m), env)
    assert _mod_bounds(a, Integer(m), env) == _mod_bounds_slow(a, Integer(m), env)


@given(expressions(VARS), st.integers(-3, 12), intervals(-6, 9, 7), intervals(0, 9, 7),
       intervals(-3, 4, 4))
def test_mod_bounds_of_any_expression_is_the_slow_one(a, m, i0, i1, i2):
    env = dict(zip(VARS, (i0, i1, i2)))
    b = s0 + 5 if m == 0 else Integer(m)  # s0 + 5 >= 2: a divisor that is not a constant
    assert _mod_bounds(a, b, env) == _mod_bounds_slow(a, b, env)


@given(sums, st.integers(2, 16), st.booleans(), intervals(-6, 9, 7), intervals(0, 9, 7),
       intervals(-3, 4, 4))
def test_split_remainder_bounds_the_rest_as_the_built_sum(parts, c, ceil, i0, i1, i2):
    env = dict(zip(VARS, (i0, i1, i2)))
    rw = Rewriter(env)
    split = terms(sum((k * t for k, t in parts), Integer(0)))
    got = _split_remainder(split, c, rw, ceil)
    # the slow path: every candidate g, the rest built as a sum and bounded
    want = None
    candidates = sorted({gcd(k, c) for k, t in split if k and t is not ONE} - {1},
                        reverse=True)
    const = sum(k for k, t in split if t is ONE)
    for g in candidates:
        small = [(k, t) for k, t in split if t is not ONE and k % g != 0]
        whole = -((-const) // g) * g if ceil else const // g * g
        if const - whole:
            small.append((const - whole, ONE))
        if small:
            b = bounds(sum_of_terms(small), env)
            if b.is_empty or (b.hi > 0 or b.lo <= -g if ceil else b.lo < 0 or b.hi >= g):
                continue
        want = g
        break
    assert (got and got[0]) == want


@given(indexing_maps(max_dims=2, max_ranges=1, max_rts=0))
def test_a_remembered_simplification_is_the_fresh_one(m):
    """Simplified once (remembered), simplified again from an equal map (found in the
    memo), and simplified with the memo emptied: the same map each time."""
    clear_caches()
    first = simplify(m)
    again = simplify(replace(m))  # the same expressions: found by identity
    # equal expressions, other objects (where the rebuilt node is the same value)
    copies = tuple(r.func(*r.args) if r.args else r for r in m.results)
    other = simplify(replace(m, results=copies)) if copies == m.results else first
    clear_caches()
    fresh = simplify(m)
    assert first == again == other == fresh


def test_the_memo_tells_apart_variables_of_other_kinds_with_the_same_intervals():
    """The memo of simplified results is keyed by every variable's name and interval: two
    maps whose intervals are the same list of numbers, one with two dims and a range
    variable, one with one dim and two range variables, give ``s0`` another interval."""
    clear_caches()
    e = Mod(s0, 5)
    two_dims = IndexingMap.create([Interval(0, 9), Interval(0, 4)], [e], [Interval(0, 7)])
    one_dim = IndexingMap.create([Interval(0, 9)], [e], [Interval(0, 4), Interval(0, 7)])
    assert simplify(one_dim).results == (s0,)  # s0 in [0, 4]
    assert simplify(two_dims).results == (e,)  # s0 in [0, 7]: it stays
    assert len(passes._SIMPLIFIED) == 2


operations = st.sampled_from([FloorDiv, Mod, CeilDiv, Min, Max])


@given(expressions(VARS, max_depth=2), expressions(VARS, max_depth=2), operations,
       st.integers(-6, 6).filter(bool), st.lists(st.tuples(st.integers(-9, 9),
                                                           st.sampled_from([1, d0, d1, s0])),
                                                 max_size=4),
       intervals(-6, 9, 7), intervals(0, 9, 7), intervals(1, 4, 4))
def test_the_pair_rules_leave_a_sum_with_one_operation_term(a, b, op, k, plain, i0, i1, i2):
    """A sum with a single division, ``min`` or ``max`` term: every rule of
    :data:`~symidx.core.simplify.table.PAIR_RULES` leaves it (so the rewriter need not try
    them), and :func:`operation_terms` counts 1."""
    from hypothesis import assume

    from symidx.core.expr import add, scale
    from symidx.core.simplify.rules import has_operation_term, operation_terms
    from symidx.core.simplify.table import ONE_OPERATION_SUM_RULES, PAIR_RULES, RULES

    if op in (FloorDiv, Mod, CeilDiv):
        b = b if not b.is_Integer else Integer(int(b) or 3)
        if not b.is_Integer:
            b = add([b * b, Integer(1)])  # at least 1: a divisor that is never 0
    node = add([scale(k, op(a, b)), *[scale(c, t if t != 1 else Integer(1)) for c, t in plain]])
    assume(isinstance(node, Add))
    slow = sum(1 for t in node.args if any(isinstance(n, (FloorDiv, Mod, CeilDiv, Min, Max))
                                           for n in (t, *(t.args if isinstance(t, Mul) else ()))))
    assert operation_terms(node) == min(slow, 2)
    assert has_operation_term(node) == (slow > 0)
    assume(slow == 1)
    env = dict(zip(VARS, (i0, i1, i2)))
    for rule in PAIR_RULES:
        assert rule(node, Rewriter(env)) is None, (rule.__name__, node)
    assert [r for r in RULES[Add] if r not in PAIR_RULES] == list(ONE_OPERATION_SUM_RULES)


def test_the_round_without_constraints_folds_only_the_point_dims_a_result_uses():
    """``results_only_round`` (the round of a map without constraints) folds a dimension
    with one value into a constant in the results that use it, leaves the others as the
    same objects, and gives back the map itself when no result uses one."""
    from symidx.core.simplify.stats import DEFAULT_BUDGET

    clear_caches()
    dims = [Interval(0, 0), Interval(0, 9), Interval(3, 3)]
    r1 = Mod(d1 + 4 * s0, 16)
    unused = IndexingMap.create(dims, [d1, r1], [Interval(0, 7)])
    assert passes.results_only_round(unused, DEFAULT_BUDGET, True) is unused
    used = IndexingMap.create(dims, [d0 + d1, r1, dim(2) * 2], [Interval(0, 7)])
    got = passes.results_only_round(used, DEFAULT_BUDGET, True)
    assert got is not None and got.results[0] == d1 and got.results[2] == Integer(6)
    assert got.results[1] is r1
    kept = passes.results_only_round(used, DEFAULT_BUDGET, False)
    assert kept is not None and kept.results[2] == dim(2) * 2
    assert got == simplify(used, trace=True).map
