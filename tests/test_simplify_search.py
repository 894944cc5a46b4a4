"""The exact feasibility search of :mod:`symidx.core.simplify.transforms` (``_linear_search``:
does a point of a box satisfy constraints that are linear, or divisions of linear sums by
constants?) against brute force, and the fold memo of :mod:`symidx.core.simplify.passes`
against simplifying afresh."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symidx.core.expr import CeilDiv, FloorDiv, Mod, dim, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.simplify import feasibility_memo, integer_search, simplify
from symidx.core.simplify.integer_search import division_rows, solve
from symidx.core.simplify.transforms import _linear_search, _satisfiable, remove_unused_symbols
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


@st.composite
def division_problems(draw):
    """A box of 1-4 variables and 1-4 constraints, each a sum of a linear part and
    multiples of divisions (floordiv, mod, ceildiv by 1-5) of linear sums, nested once at
    most: the constraints of composed strided windows."""
    n = draw(st.integers(1, 4))
    box = tuple((sym(i), Interval(lo, lo + draw(st.integers(0, 5))))
                for i, lo in enumerate(draw(st.lists(st.integers(-3, 3), min_size=n,
                                                     max_size=n))))

    def linear():
        coeffs = draw(st.lists(st.integers(-3, 4), min_size=n, max_size=n))
        return sum((c * v for c, (v, _) in zip(coeffs, box)), draw(st.integers(-4, 4)))

    def division(depth):
        inner = linear()
        if depth and draw(st.booleans()):
            inner = inner + draw(st.integers(-2, 2)) * division(depth - 1)
        op = draw(st.sampled_from([FloorDiv, Mod, CeilDiv]))
        return op(inner, draw(st.integers(1, 5)))

    constraints = []
    for _ in range(draw(st.integers(1, 4))):
        e = linear()
        for _ in range(draw(st.integers(1, 2))):
            e = e + draw(st.integers(-3, 3)) * division(1)
        if e.is_Integer:
            continue
        lo = draw(st.integers(-8, 8))
        constraints.append((e, Interval(lo, lo + draw(st.integers(0, 5)))))
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


@given(division_problems())
def test_the_search_over_divisions_answers_as_brute_force(problem):
    # each division a quotient variable with its defining row: nothing gained, nothing lost
    constraints, box = problem
    expected = brute_force(constraints, box)
    assert _linear_search(constraints, box) == expected
    assert _satisfiable(constraints, box) == expected
    memo: dict = {}
    with feasibility_memo(memo):  # remembered by the numbers of its rows
        assert _satisfiable(constraints, box) == expected
        assert _satisfiable(constraints, box) == expected
    assert list(memo.values()) == [expected]


@given(division_problems())
def test_a_division_rows_point_is_a_point_of_the_constraints(problem):
    # every point of the box, extended by its quotients (each defining row, inner ones
    # first, fixes one), satisfies the rows exactly when it satisfies the constraints
    constraints, box = problem
    rows, los, his = division_rows(constraints, box)
    variables = [v for v, _ in box]
    defining = rows[len(constraints):]
    assert len(los) == len(his) == len(box) + len(defining)
    for point in itertools.product(*[range(iv.lo, iv.hi + 1) for _, iv in box]):
        held = all(int(e.subs(dict(zip(variables, point)))) in iv for e, iv in constraints)
        x = list(point)
        for j, (coeffs, const, lo, hi) in enumerate(defining):
            q = len(box) + j
            assert coeffs[q] == -(hi + 1) and lo == 0 and not any(coeffs[q + 1:])
            x.append((const + sum(c * v for c, v in zip(coeffs, x))) // (hi + 1))
            assert los[q] <= x[q] <= his[q]
        assert solve(rows, x, x) == held


def test_the_search_takes_a_box_without_rows():
    # no constraint: any point will do, the box's variables still split
    assert solve((), [0, 3], [2, 5]) is True
    assert solve((((1, 0), 0, 9, 9),), [0, 0], [2, 5]) is False


#: A window of a MobileNetV2 training step's gradient, as rows over 22 variables (offsets in
#: [0, 2], running sums and quotients): a running sum per row, each bounded on both sides.
_RUNNING_SUMS = (
    ({13: 1, 18: -2}, 0, 0),
    ({13: 1, 18: -2}, 0, 1),
    ({12: 1, 18: 1}, 2, 17),
    ({10: 1, 12: 1, 18: 1, 19: -2}, 0, 0),
    ({10: 1, 12: 1, 18: 1, 19: -2}, 0, 1),
    ({10: 1, 12: 1, 18: 1}, 4, 18),
    ({10: 2, 12: 2, 13: 1, 20: -4}, 0, 3),
    ({10: 2, 12: 2, 13: 1}, 8, 39),
    ({9: 1, 20: 1}, 3, 10),
    ({8: 1, 9: 1, 20: 1}, 4, 11),
    ({7: 1, 8: 1, 9: 1, 20: 1, 21: -2}, 0, 0),
    ({7: 1, 8: 1, 9: 1, 20: 1, 21: -2}, 0, 1),
    ({7: 1, 8: 1, 9: 1, 20: 1}, 6, 12),
    ({7: 4, 8: 4, 9: 4, 10: 2, 12: 2, 13: 1, 17: -8}, 0, 7),
    ({7: 4, 8: 4, 9: 4, 10: 2, 12: 2, 13: 1}, 24, 55),
    ({6: 1, 17: 1}, 4, 7),
    ({5: 1, 6: 1, 17: 1}, 5, 8),
    ({4: 1, 5: 1, 6: 1, 17: 1}, 6, 9),
    ({3: 1, 4: 1, 5: 1, 6: 1, 17: 1}, 7, 10),
    ({2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 17: 1}, 8, 11),
    ({1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 17: 1}, 9, 12),
    ({1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 16: 1, 17: 1}, 10, 13),
    ({1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 15: 1, 16: 1, 17: 1}, 11, 14),
    ({1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 14: 1, 15: 1, 16: 1, 17: 1}, 12, 15),
    ({1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 11: 1, 14: 1, 15: 1, 16: 1, 17: 1}, 13, 16),
    ({0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 11: 1, 14: 1, 15: 1, 16: 1, 17: 1}, 14, 17),
)
_RUNNING_LOS = [0] * 13 + [2, 0, 0, 0, 0, 1, 0, 0, 0]
_RUNNING_HIS = [2] * 13 + [32, 2, 2, 2, 8, 16, 10, 10, 8]


def test_running_sums_are_decided_in_a_tenth_of_the_search_limit(monkeypatch):
    # the offsets at their low ends fail only deep in the search: trying the values from
    # the lowest up gave up after 200,000 narrowings; middle values first find a point
    rows = tuple((tuple(terms.get(k, 0) for k in range(22)), 0, lo, hi)
                 for terms, lo, hi in _RUNNING_SUMS)
    monkeypatch.setattr(integer_search, "SEARCH_LIMIT", 20_000)
    assert solve(rows, _RUNNING_LOS, _RUNNING_HIS) is True
    z3 = pytest.importorskip("z3")  # an independent witness
    x = [z3.Int(f"x{k}") for k in range(22)]
    solver = z3.Solver()
    for k in range(22):
        solver.add(_RUNNING_LOS[k] <= x[k], x[k] <= _RUNNING_HIS[k])
    for terms, lo, hi in _RUNNING_SUMS:
        total = z3.Sum([c * x[k] for k, c in terms.items()])
        solver.add(lo <= total, total <= hi)
    assert solver.check() == z3.sat


def test_the_search_gives_up_on_a_cycle_over_wide_intervals():
    # x - y = 1 and y - x = 1 have no point, but narrowing shaves one value a pass: the
    # search stops after its limit of nodes and says it does not know
    x, y = sym(0), sym(1)
    box = ((x, Interval(0, 1 << 62)), (y, Interval(0, 1 << 62)))
    assert _linear_search(((x - y, Interval(1, 1)), (y - x, Interval(1, 1))), box) is None
    assert integer_search.SEARCH_LIMIT < 1 << 20


def test_a_strided_window_is_decided_by_the_search_not_by_its_points():
    # eleven variables, 3^10 * 15 points: past what enumeration takes; the window of
    # stacked stride-2 convolutions (from a MobileNetV2 training step) has a point, and
    # one residue more has none
    s = [sym(i) for i in range(11)]
    box = tuple((v, Interval(0, 2)) for v in s[:10]) + ((s[10], Interval(2, 16)),)
    inner = FloorDiv(2 * s[7] + 2 * s[8] + 2 * s[9] + s[10] - 6, 4)
    window = ((Mod(s[10], 2), Interval(0, 0)),
              (s[8] + s[9] + FloorDiv(s[10], 2), Interval(5, 11)),
              (Mod(s[7] + s[8] + s[9] + FloorDiv(s[10], 2) - 3, 2), Interval(0, 0)),
              (sum(s[1:7]) + inner, Interval(7, 10)),
              (Mod(sum(s[:7]) + inner - 7, 2), Interval(0, 0)))
    assert _linear_search(window, box) is True
    odd = window + ((Mod(s[10], 2), Interval(1, 1)),)
    assert _linear_search(odd, box) is False


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


def _unused_window(constraints, box) -> IndexingMap:
    """``(d0) -> (d0)`` with the box's variables as range variables no result uses, held
    by ``constraints``: :func:`remove_unused_symbols` asks whether they can hold."""
    return IndexingMap.create([4], [dim(0)], [iv for _, iv in box], constraints=constraints)


@given(division_problems(), st.lists(st.integers(0, 5), min_size=4, max_size=4))
def test_feasible_groups_are_remembered_with_their_intervals(problem, widths):
    # the memo of whole groups (feasibility_memo's ``groups``) answers as brute force, for
    # the same constraints over other intervals too: its key holds the intervals
    constraints, box = problem
    narrower = tuple((v, Interval(iv.lo, min(iv.hi, iv.lo + w)))
                     for (v, iv), w in zip(box, widths))
    groups: dict = {}
    with feasibility_memo({}, groups):
        for _ in range(2):
            for which in (box, narrower):
                m = _unused_window(constraints, which)
                if m.is_known_empty:
                    continue
                got = remove_unused_symbols(m)[0]
                assert got.is_known_empty != brute_force(constraints, which)
    assert len(groups) <= 2
