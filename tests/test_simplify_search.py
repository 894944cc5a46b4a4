"""The exact feasibility search of :mod:`symidx.core.simplify.transforms` (``_linear_search``:
does a point of a box satisfy linear constraints?) against brute force, and the fold memo
of :mod:`symidx.core.simplify.passes` against simplifying afresh."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from symidx.core.expr import sym
from symidx.core.interval import Interval
from symidx.core.simplify import feasibility_memo, simplify
from symidx.core.simplify.transforms import _linear_search, _satisfiable
from symidx.core.syntax import parse_map
from symidx.strategies import indexing_maps


@st.composite
def linear_problems(draw):
    """A box of 1-4 variables and 1-4 linear constraints with small coefficients (padded
    window constraints look like these: sums of window variables in an interval)."""
    n = draw(st.integers(1, 4))
    box = tuple((sym(i), Interval(lo, lo + draw(st.integers(0, 4))))
                for i, lo in enumerate(draw(st.lists(st.integers(-2, 2), min_size=n,
                                                     max_size=n))))
    constraints = []
    for _ in range(draw(st.integers(1, 4))):
        coeffs = draw(st.lists(st.integers(-3, 4), min_size=n, max_size=n))
        const = draw(st.integers(-3, 3))
        e = sum((c * v for c, (v, _) in zip(coeffs, box)), const)
        if e.is_Integer:
            continue
        lo = draw(st.integers(-10, 10))
        constraints.append((e, Interval(lo, lo + draw(st.integers(0, 6)))))
    return tuple(constraints), box


def brute_force(constraints, box) -> bool:
    """Does a point of ``box`` satisfy every constraint? (Every point tried, by sympy.)"""
    variables = [v for v, _ in box]
    points = itertools.product(*[range(iv.lo, iv.hi + 1) for _, iv in box])
    return any(all(int(e.subs(dict(zip(variables, p)))) in iv for e, iv in constraints)
               for p in points)


@given(linear_problems())
def test_linear_search_answers_as_brute_force(problem):
    constraints, box = problem
    assert _linear_search(constraints, box) == brute_force(constraints, box)


@given(linear_problems())
def test_feasibility_of_linear_constraints_is_decided_as_brute_force(problem):
    # candidates, search and enumeration in turn, by the rows of the constraints; the
    # answer remembered under those numbers is the same
    constraints, box = problem
    expected = brute_force(constraints, box)
    memo: dict = {}
    with feasibility_memo(memo):
        assert _satisfiable(constraints, box) == expected
        assert _satisfiable(constraints, box) == expected
    assert list(memo.values()) == [expected]


def test_linear_feasibility_is_remembered_whatever_the_variables_are_called():
    s0, s1, s2, s3 = (sym(i) for i in range(4))
    memo: dict = {}
    with feasibility_memo(memo):
        # s0 + 4*s1 in [3, 3] has no point with s0 in [0, 2], s1 in [0, 6]; renamed alike
        assert _satisfiable(((s0 + 4 * s1, Interval(3, 3)),),
                            ((s0, Interval(0, 2)), (s1, Interval(0, 6)))) is False
        assert _satisfiable(((s2 + 4 * s3, Interval(3, 3)),),
                            ((s2, Interval(0, 2)), (s3, Interval(0, 6)))) is False
        assert len(memo) == 1
        assert _satisfiable(((s2 + 4 * s3, Interval(5, 5)),),
                            ((s2, Interval(0, 2)), (s3, Interval(0, 6)))) is True
    assert sorted(memo.values()) == [False, True]


def test_linear_search_refuses_what_is_not_linear():
    s0, s1 = sym(0), sym(1)
    box = ((s0, Interval(0, 3)), (s1, Interval(0, 3)))
    assert _linear_search(((s0 * s1, Interval(5, 5)),), box) is None


def test_a_remembered_fold_gives_the_map_a_fresh_simplifier_gives():
    # the same constraint folded in two maps (the second from the memo) and traced (never
    # from the memo) alike
    text = ("(d0)[s0, s1] -> (d0 + s0 + s1), domain: d0 in [0, 9], s0 in [0, 2], "
            "s1 in [0, 2], (d0 * 4 + s0 * 4) mod 8 in [0, 3]")
    first = simplify(parse_map(text))
    again = simplify(parse_map(text))
    traced = simplify(parse_map(text), trace=True).map
    assert first == again == traced


@given(indexing_maps(), indexing_maps())
def test_remembered_folds_give_the_maps_a_fresh_simplifier_gives(a, b):
    # the fold memo (by identity, then by value) answers for each map's own intervals:
    # simplifying maps one after another gives what the traced simplifier (which never
    # reads the memo) gives for each
    for m in (a, b, a):
        assert simplify(m) == simplify(m, trace=True).map
