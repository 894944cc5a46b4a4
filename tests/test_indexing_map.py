"""IndexingMap: construction, composition, evaluation, images and equality."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sympy import Integer

from symidx.core import verify
from symidx.core.expr import FloorDiv, Max, Mod, dim, rt, sym
from symidx.core.indexing_map import IndexingMap, MapKind, RuntimeVar, ValueSource
from symidx.core.interval import Interval
from symidx.core.simplify import compose
from symidx.core.syntax import parse_map, print_map
from symidx.errors import MapError
from symidx.strategies import expressions, indexing_maps

d0, d1, d2, s0, s1 = dim(0), dim(1), dim(2), sym(0), sym(1)


def test_create_canonicalises():
    m = IndexingMap.create([10, (2, 5)], [d0 + d1], constraints=[(d0, (0, 4)), (d1 + d0, (0, 7)),
                                                                  (d0 + d1, (1, 9))])
    assert m.dims == (Interval(0, 4), Interval(2, 5))  # a bare-variable constraint narrows
    assert m.constraints == ((d0 + d1, Interval(1, 7)),)  # same expression: intersected
    assert IndexingMap.create([3], [d0], constraints=[(Integer(4), (0, 3))]).is_known_empty
    with pytest.raises(MapError, match="does not declare"):
        IndexingMap.create([3], [s0])


def test_frozen_and_hashable():
    m = IndexingMap.identity([4, 8])
    with pytest.raises(AttributeError):
        m.results = ()  # type: ignore[misc]
    assert len({m, IndexingMap.identity([4, 8]), IndexingMap.identity([4, 9])}) == 2


@given(indexing_maps(), indexing_maps())
def test_equality_of_fresh_maps_is_equality_of_their_canonical_forms(a, b):
    """Two maps not hashed yet are told apart by their results and dims before their
    hashes are computed: the answer is still that of their canonical forms, hashed or
    not, either way round."""
    def fresh(m: IndexingMap) -> IndexingMap:
        return dataclasses.replace(m)  # the same fields, nothing remembered

    for x, y in ((a, b), (a, a), (b, b)):
        expected = x.key == y.key
        assert (fresh(x) == fresh(y)) is expected
        assert (fresh(y) == fresh(x)) is expected
        hashed = fresh(x)
        hash(hashed)
        assert (hashed == fresh(y)) is expected
        assert (fresh(y) == hashed) is expected
    again = fresh(a)
    assert again == a and hash(again) == hash(a)


def test_maps_differing_in_a_result_or_a_dim_are_unequal():
    m = IndexingMap.create([4, 8], [d0 * 8 + d1, d1])
    assert m == IndexingMap.create([4, 8], [d0 * 8 + d1, d1])
    assert m != IndexingMap.create([4, 8], [d0 * 8 + d1, d0])
    assert m != IndexingMap.create([4, 9], [d0 * 8 + d1, d1])
    assert m != IndexingMap.create([4, 8], [d0 * 8 + d1, d1], constraints=[(d0 + d1, (0, 9))])


def test_evaluate_ignores_domain():  # XLA's EvaluateIgnoresDomainRanges
    m = parse_map("(d0, d1)[s0, s1] -> (d1, d0, s1, s0), domain: d0 in [0, 3], d1 in [0, 3], "
                  "s0 in [0, 1], s1 in [0, 1]")
    assert m.evaluate([1, 2], [3, 4]) == (2, 1, 4, 3)
    assert m.constraints_hold([1, 2], [0, 1])
    assert not m.constraints_hold([1, 2], [3, 4])


def test_image_enumerates_symbols_under_constraints():
    m = parse_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 9], s0 in [0, 3], "
                  "(d0 + s0) mod 2 in [0, 0]")
    assert m.image((3,)) == {(4,), (6,)}
    assert m.image((11,)) == set()  # outside the domain


def test_compose_symbol_order_follows_xla():
    # ComposeIndexingMaps(first=consumer, second=producer)
    consumer = parse_map("(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 3]")
    producer = parse_map("(d0, d1)[s0, s1] -> (d1, d0, s1, s0), domain: d0 in [0, 3], "
                         "d1 in [0, 3], s0 in [0, 1], s1 in [0, 1]")
    composed = compose(consumer, producer)
    assert composed == parse_map("(d0)[s0, s1, s2] -> (s2, d0, s1, s0), domain: d0 in [0, 3], "
                                 "s0 in [0, 1], s1 in [0, 1], s2 in [0, 3]")


def test_compose_adds_the_range_requirement():
    first = parse_map("(d0) -> (d0 + 2), domain: d0 in [0, 9]")
    second = parse_map("(d0) -> (d0 * 3), domain: d0 in [0, 7]")
    composed = compose(first, second)
    assert composed.constraints == ((d0 + 2, Interval(0, 7)),)
    assert composed.image((5,)) == {(21,)}
    assert composed.image((6,)) == set()


def test_compose_keeps_runtime_variables_and_custom_names():
    producer = IndexingMap.create([25, 16], [d0 + rt(0) * 4, d1], rts=[(0, 2)],
                                  names=[None, None, "ps_0"])
    consumer = IndexingMap.create([25, 16], [d0 + rt(0) * 2, d1], rts=[(0, 25)],
                                  names=[None, None, "cs_0"])
    composed = compose(consumer, producer)
    assert composed.num_rts == 2
    assert print_map(composed, "xla").startswith("(d0, d1){ps_0, cs_0} -> (")


def test_known_empty_and_undefined_compose():
    empty = parse_map("(d0) -> (d0), domain: d0 in [0, -1]")
    m = parse_map("(d0) -> (d0), domain: d0 in [0, 49]")
    assert compose(m, empty).is_known_empty and compose(empty, m).is_known_empty
    assert compose(m, IndexingMap.undefined(1, 1)).is_undefined
    with pytest.raises(MapError, match="cannot compose"):
        compose(m, IndexingMap.identity([2, 2]))


def test_runtime_provenance_is_composed():
    held = RuntimeVar(Interval(0, 3), ValueSource("parameter(1)"), IndexingMap.create([4], []))
    ds = IndexingMap.create([4], [d0 + rt(0)], rts=[held])
    shift = parse_map("(d0) -> (d0 floordiv 2), domain: d0 in [0, 7]")
    composed = compose(shift, ds)
    assert composed.rts[0].map == IndexingMap.create([8], [])
    assert str(composed.rts[0].source) == "parameter(1)"


@st.composite
def composable(draw):
    """A random map ``first`` and a map ``second`` of its results, with 0 to 2 range
    variables of its own."""
    first = draw(indexing_maps(max_dims=2, max_ranges=1, max_rts=1, max_results=2,
                               max_constraints=1))
    nr = draw(st.integers(0, 2))
    second_dims = [Interval(-10, 40) for _ in range(first.num_results)]
    second_vars = [dim(i) for i in range(first.num_results)] + [sym(i) for i in range(nr)]
    results = draw(st.lists(expressions(second_vars, max_depth=2), max_size=2))
    ranges = [draw(st.sampled_from([Interval(0, 1), Interval(-1, 2)])) for _ in range(nr)]
    second = IndexingMap.create(second_dims, results, ranges)
    return first, second


@given(composable())
def test_composition_is_function_composition(pair):
    first, second = pair
    composed = compose(first, second)
    if first.is_known_empty:
        assert composed.is_known_empty
        return
    for point in itertools.islice(itertools.product(*(range(b.lo, b.hi + 1)
                                                      for b in first.dims)), 40):
        expected = set()
        for mid in first.image(point):
            if all(v in b for v, b in zip(mid, second.dims)):
                expected |= second.image(mid)
        assert composed.image(point) == expected, (point, print_map(composed, "xla"))


@st.composite
def composable_with_constraints(draw):
    """As :func:`composable`, but ``second`` has narrow dimension intervals and
    constraints of its own, some written on the same expressions as ``first``'s (so that
    the composition intersects them, sometimes to nothing)."""
    first = draw(indexing_maps(max_dims=2, max_ranges=1, max_rts=0, max_results=2,
                               max_constraints=2))
    n = first.num_results
    second_vars = [dim(i) for i in range(n)]
    second_dims = [draw(st.sampled_from([Interval(-2, 6), Interval(0, 3), Interval(1, 9)]))
                   for _ in range(n)]
    shared = [c for c, _ in first.constraints if not c.free_symbols - set(first.dim_vars[:n])]
    exprs = expressions(second_vars, max_depth=2) if n else st.nothing()
    pool = st.sampled_from(shared) | exprs if shared and n else exprs
    results = draw(st.lists(exprs, max_size=2)) if n else []
    constraints = draw(st.lists(st.tuples(pool, st.sampled_from(
        [(0, 3), (-5, 1), (2, 20), (4, 4)])), max_size=2)) if n else []
    return first, IndexingMap.create(second_dims, results, constraints=constraints)


@given(composable_with_constraints())
def test_composition_with_constraints_is_function_composition(pair):
    first, second = pair
    composed = compose(first, second)
    if first.is_known_empty or second.is_known_empty:
        assert composed.is_known_empty
        return
    points = list(itertools.islice(itertools.product(*(range(b.lo, b.hi + 1)
                                                       for b in first.dims)), 40))
    for point in points:
        expected = set()
        for mid in first.image(point):
            if all(v in b for v, b in zip(mid, second.dims)):
                expected |= second.image(mid)
        got = set() if composed.is_known_empty else composed.image(point)
        assert got == expected, (point, print_map(composed, "xla"))


def test_compose_intersects_constraints_written_alike():
    first = parse_map("(d0) -> (d0), domain: d0 in [0, 9], d0 mod 4 in [0, 2]")
    second = parse_map("(d0) -> (d0 * 2), domain: d0 in [0, 9], d0 mod 4 in [1, 3]")
    composed = compose(first, second)
    assert composed.constraints == ((Mod(d0, 4), Interval(1, 2)),)
    assert [p for p in range(10) if composed.image((p,))] == [1, 2, 5, 6, 9]
    disjoint = parse_map("(d0) -> (d0), domain: d0 in [0, 9], d0 mod 4 in [3, 3]")
    assert compose(first, disjoint).is_known_empty
    # a constraint the substitution turns into a constant is checked, not kept
    five = parse_map("(d0) -> (5), domain: d0 in [0, 3]")
    assert compose(five, first).constraints == ()
    assert compose(five, first).image((0,)) == {(5,)}
    assert compose(parse_map("(d0) -> (7), domain: d0 in [0, 3]"), first).is_known_empty
    # a constraint on a bare variable narrows its interval
    pick = parse_map("(d0)[s0] -> (s0), domain: d0 in [0, 3], s0 in [0, 9]")
    narrowed = compose(pick, parse_map("(d0) -> (d0), domain: d0 in [2, 5]"))
    assert narrowed.ranges == (Interval(2, 5),) and narrowed.constraints == ()


def test_equal_exhaustive_and_counterexample():
    a = parse_map("(d0, d1) -> (d0 * 16 + d1), domain: d0 in [0, 3], d1 in [0, 15]")
    b = parse_map("(d0, d1) -> (d1 + 16 * d0), domain: d0 in [0, 3], d1 in [0, 15]")
    assert verify.decide(a, b).describe() == "equal (identical)"
    c = parse_map("(d0, d1) -> ((d0 * 16 + d1) mod 64), domain: d0 in [0, 3], d1 in [0, 15]")
    assert verify.decide(a, c).describe() == "equal (exhaustive)"
    wrong = parse_map("(d0, d1) -> ((d0 * 16 + d1) mod 32), domain: d0 in [0, 3], "
                      "d1 in [0, 15]")
    verdict = verify.decide(a, wrong)
    assert not verdict and verdict.describe() == "different at (2, 0): (32) vs (0)"
    smaller = parse_map("(d0, d1) -> (d0 * 16 + d1), domain: d0 in [0, 2], d1 in [0, 15]")
    assert verify.decide(a, smaller).describe() == "different at (3, 0): (48) vs outside the domain"


def test_equal_with_symbols_compares_images():
    a = parse_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1]")
    b = parse_map("(d0)[s0] -> (d0 + 1 - s0), domain: d0 in [0, 3], s0 in [0, 1]")
    assert verify.decide(a, b).equal
    c = parse_map("(d0)[s0] -> (d0 + 2 * s0), domain: d0 in [0, 3], s0 in [0, 1]")
    assert verify.decide(a, c).describe() == "different at (0): {(0), (1)} vs {(0), (2)}"


def test_vectorised_evaluation_matches_scalar():
    import numpy as np

    m = parse_map("(d0, d1)[s0] -> (d0 floordiv 3 + s0, (d1 - d0) mod 4), domain: "
                  "d0 in [0, 9], d1 in [0, 9], s0 in [0, 2], d0 + s0 in [0, 9]")
    grid = [g.reshape(-1) for g in np.meshgrid(np.arange(10), np.arange(10), np.arange(3),
                                               indexing="ij")]
    results, mask = m.evaluate_arrays(grid)
    for k in range(0, 300, 7):
        point = [int(g[k]) for g in grid]
        assert tuple(int(r[k]) for r in results) == m.evaluate(point[:2], point[2:])
        assert bool(mask[k]) == m.constraints_hold(point[:2], point[2:])


def test_floordiv_and_mod_results_print():
    m = IndexingMap.create([32], [FloorDiv(d0, 8), Mod(d0, 8)])
    assert print_map(m, "xla") == "(d0) -> (d0 / 8, d0 mod 8), domain: d0 in [0, 31]"


# --- a map is a value ------------------------------------------------------------------------
def test_a_map_made_by_dataclasses_replace_answers_with_its_own_results():
    import dataclasses

    m = parse_map("(d0, d1) -> (d0 + d1), domain: d0 in [0, 9], d1 in [0, 9]")
    assert m.evaluate([2, 3]) == (5,) and hash(m)  # fill the cache: compiled results, hash
    n = dataclasses.replace(m, results=(d0 * 10 + d1,))
    assert n.evaluate([2, 3]) == (23,)
    assert n.image((2, 3)) == {(23,)}
    assert n != m and n.key != m.key
    assert n == IndexingMap.create(m.dims, [d0 * 10 + d1])
    assert hash(n) == hash(IndexingMap.create(m.dims, [d0 * 10 + d1]))
    assert m.evaluate([2, 3]) == (5,)  # the source keeps its own answers
    with pytest.raises(ValueError, match="init=False"):
        dataclasses.replace(m, _cache={})  # the cache is not a field one can pass


# --- division by variables -------------------------------------------------------------------
def test_a_divisor_that_can_be_zero_is_accepted_and_its_zeros_are_outside_the_map():
    m = IndexingMap.create([], [FloorDiv(s0, s1)], [(0, 9), (0, 3)])
    assert [(str(d), span) for _, d, span in m.zero_divisors()] == [("s1", Interval(0, 3))]
    with pytest.raises(MapError, match=r"division by zero at \(7, 0\): a divisor is 0"):
        m.evaluate([], [7, 0])
    assert m.evaluate([], [7, 2]) == (3,)
    assert not m.constraints_hold([], [7, 0]) and m.constraints_hold([], [7, 2])
    assert m.image(()) == {(v // k,) for v in range(10) for k in (1, 2, 3)}
    results, mask = m.evaluate_arrays([np.arange(10)[:, None], np.arange(4)[None, :]])
    assert not mask[:, 0].any() and mask[:, 1:].all()
    # said as constraints, the same map: the interval of a bare divisor narrows
    assert m.with_divisors_nonzero() == IndexingMap.create([], [FloorDiv(s0, s1)],
                                                           [(0, 9), (1, 3)])
    both_sides = IndexingMap.create([4], [d0], [(0, 9), (-2, 2)],
                                    constraints=[(Mod(s0, s1), (0, 0))])
    guarded = both_sides.with_divisors_nonzero()
    assert dict(guarded.constraints)[Max(s1, -s1)] == Interval(1, 2)
    for point in itertools.product(range(4), range(10), range(-2, 3)):
        assert both_sides.constraints_hold(point[:1], point[1:]) == \
            guarded.constraints_hold(point[:1], point[1:]) == \
            (point[2] != 0 and point[1] % point[2] == 0)
    ok = IndexingMap.create([], [FloorDiv(s0, s1), Mod(s0, s1)], [(0, 9), (1, 3)])
    assert ok.evaluate([], [7, 2]) == (3, 1)
    # a constraint can keep the divisor away from 0
    kept = IndexingMap.create([], [FloorDiv(s0, s1 - 2)], [(0, 9), (0, 4)],
                              constraints=[(s1 - 2, (1, 2))])
    assert kept.image(()) == {(v // k,) for v in range(10) for k in (1, 2)}
    assert not kept.constraints_hold([], [5, 2])  # divisor 0: outside the domain
    with pytest.raises(MapError, match="division by zero"):
        kept.evaluate([], [5, 2])  # evaluate ignores the domain, but 5 / 0 has no value
    results, mask = kept.evaluate_arrays([np.arange(10)[:, None], np.arange(5)[None, :]])
    assert mask.sum() == 20 and set(results[0][mask].tolist()) == {v // k for v in range(10)
                                                                    for k in (1, 2)}


@given(st.integers(-9, 9), st.integers(1, 4), st.integers(0, 3))
def test_division_by_a_variable_evaluates_with_floor_semantics(a, lo, span):
    m = IndexingMap.create([(-9, 9)], [FloorDiv(d0, s0), Mod(d0, s0), FloorDiv(d0, -s0)],
                           [(lo, lo + span)])
    for b in range(lo, lo + span + 1):
        assert m.evaluate([a], [b]) == (a // b, a % b, a // -b)


def test_dataclasses_replace_never_answers_from_the_source_cache():
    m = parse_map("(d0)[s0] -> (d0 * 2 + s0), domain: d0 in [0, 7], s0 in [0, 1], "
                  "d0 + s0 in [0, 7]")
    # fill every cached answer of the source
    assert m.evaluate([3], [1]) == (7,)
    assert m.constraints_hold([7], [0]) and not m.constraints_hold([7], [1])
    assert m.image([1]) == {(2,), (3,)}
    hash(m)
    other = dataclasses.replace(m, dims=(Interval(0, 3),), results=(dim(0) * 3 + sym(0),),
                                constraints=())
    assert other.evaluate([3], [1]) == (10,)
    assert other.constraints_hold([3], [1]) and not other.constraints_hold([7], [0])
    assert other.image([1]) == {(3,), (4,)}
    assert other.all_bounds == (Interval(0, 3), Interval(0, 1))
    assert other != m and hash(other) != hash(m)
    assert other == parse_map("(d0)[s0] -> (d0 * 3 + s0), domain: d0 in [0, 3], s0 in [0, 1]")
    assert str(other) == print_map(parse_map(str(other)))
    renamed = dataclasses.replace(m, ranges=(Interval(0, 2),), names=("x", "y"))
    assert renamed.variable_bounds()[sym(0)] == Interval(0, 2)
    assert renamed.display_names() == ["x", "y"] and m.display_names() == ["d0", "s0"]
    empty = dataclasses.replace(m, kind=MapKind.KNOWN_EMPTY)
    assert empty.is_known_empty and empty != m and empty == IndexingMap.known_empty()
    assert str(empty) == "KNOWN EMPTY"


def test_map_kinds_have_named_constructors():
    empty = IndexingMap.known_empty([Interval(0, 3)], [dim(0)])
    assert empty.kind is MapKind.KNOWN_EMPTY and empty.is_known_empty
    assert empty.num_dims == 1 and empty.num_results == 1  # the arity is kept...
    assert empty == IndexingMap.known_empty() == parse_map("KNOWN EMPTY")  # ...not compared
    assert empty.image([0]) == set()
    undefined = IndexingMap.undefined(2, 1)
    assert undefined.kind is MapKind.UNDEFINED and undefined.is_undefined
    assert undefined == parse_map("UNDEFINED") and undefined != empty
    with pytest.raises(MapError, match="UNDEFINED"):
        undefined.evaluate([0, 0])
    normal = IndexingMap.identity([4])
    assert normal.kind is MapKind.NORMAL and normal.as_known_empty() == empty
    assert IndexingMap.create([(0, -1)], [dim(0)]).kind is MapKind.KNOWN_EMPTY


def test_points_beyond_int64_are_exact_python_integers():
    # Values at and past 2**63 do not fit in int64: they come as Python integers, and the
    # map's results over them stay exact (no wrap-around).
    top = 2**63
    m = parse_map(f"(d0)[s0] -> (d0 * 3 + s0), domain: d0 in [{top - 1}, {top + 1}], "
                  "s0 in [0, 1]")
    chunks = list(m.points())
    flat = [tuple(int(v) for v in p) for c in chunks for p in zip(*c)]
    assert sorted(flat) == [(d, s) for d in (top - 1, top, top + 1) for s in (0, 1)]
    results, mask = m.evaluate_arrays(chunks[0])
    assert mask.all()
    got = sorted(int(v) for v in results[0])
    assert got == sorted(d * 3 + s for d in (top - 1, top, top + 1) for s in (0, 1))


@st.composite
def _composable(draw):
    """Two small maps to compose: the first's results are dims, range and runtime
    variables, constants and sums (a result that is a variable or a constant outside the
    second's dims narrows the composition or empties it), the second's dims are any
    intervals, its results sums of its dims and a range variable."""
    nd, nr, nt = draw(st.integers(1, 2)), draw(st.integers(0, 2)), draw(st.integers(0, 1))
    variables = [dim(i) for i in range(nd)] + [sym(i) for i in range(nr)] \
        + [rt(i) for i in range(nt)]
    small = st.integers(-1, 4)
    results = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["variable", "constant", "sum"]))
        if kind == "variable":
            results.append(draw(st.sampled_from(variables)))
        elif kind == "constant":
            results.append(Integer(draw(small)))
        else:
            results.append(draw(st.sampled_from(variables)) + draw(st.sampled_from(variables))
                           + draw(small))
    constraints = [(variables[0] + variables[-1], Interval(0, draw(st.integers(0, 5))))] \
        if draw(st.booleans()) else []
    first = IndexingMap.create([Interval(0, draw(st.integers(0, 3))) for _ in range(nd)],
                               results, [Interval(0, draw(st.integers(0, 2))) for _ in range(nr)],
                               [Interval(draw(st.integers(-1, 0)), draw(st.integers(0, 3)))
                                for _ in range(nt)], constraints)
    dims = []
    for _ in results:
        lo = draw(small)
        dims.append(Interval(lo, lo + draw(st.integers(0, 4))))
    ranges = [Interval(0, 1)] if draw(st.booleans()) else []
    terms = [dim(i) for i in range(len(dims))] + [sym(0)] * len(ranges)
    second = IndexingMap.create(dims, [draw(st.sampled_from(terms)) + draw(st.sampled_from(terms))
                                       for _ in range(draw(st.integers(1, 2)))], ranges)
    return first, second


@given(_composable())
def test_a_composition_reads_what_its_two_maps_read(pair):
    """``compose`` (unsimplified) against its meaning, point by point: the composed map
    reads at each index of the first map's dims every element the second map reads at
    an element the first reads there."""
    from symidx.core.indexing_map.composition import compose_with
    from tests.helpers import image

    first, second = pair
    composed = compose_with(first, second, lambda m: m)
    for point in itertools.product(*(range(b.lo, b.hi + 1) for b in first.dims)):
        expected: set = set()
        for y in image(first, point):
            expected |= image(second, y)
        assert image(composed, point) == expected, point
