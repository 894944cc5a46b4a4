"""Equality on the domain: every method decides the pairs users bring (the issue's, reshape
round trips up to 10^12 points), agrees with brute force on random pairs, and says why
when it cannot decide."""

from __future__ import annotations

import itertools

import pytest

from helpers import SEED_SIMPLIFICATIONS
from symidx import IndexingMap, Undecided, compose, equal, parse_map
from symidx.core.verify import check_trace, decide, has_isl, has_z3, non_presburger_reason
from symidx.errors import SymidxError

PROOFS = [pytest.param("isl", marks=pytest.mark.skipif(not has_isl(),
                                                       reason="islpy not installed")),
          pytest.param("smt", marks=pytest.mark.skipif(not has_z3(), reason="z3 not installed"))]
"""The methods that prove: each test using them runs once per installed one."""

BIG = "d0 in [0, 999999], d1 in [0, 999999]"  # 10^12 points
DIGITS = ("(d0, d1, d2) -> (((d0 * 1000000 + d1 * 1000 + d2) floordiv 1000) mod 1000), "
          "domain: d0 in [0, 999999], d1 in [0, 999], d2 in [0, 999]")
TILES = "d0 in [0, 999999], d1 in [0, 127]"


def brute_images(m: IndexingMap, box: list[range]) -> dict[tuple[int, ...], frozenset]:
    """Every source point of ``box`` with its image, from the map's own point-by-point
    evaluation (no verify code involved)."""
    return {p: frozenset(m.image(p)) for p in itertools.product(*box)}


def assert_counterexample(verdict, a: IndexingMap, b: IndexingMap) -> None:
    """The verdict says different, at a point where the maps' own images differ, and
    quotes those images."""
    assert not verdict.equal and verdict.point is not None, verdict
    left, right = a.image(verdict.point), b.image(verdict.point)
    assert left != right
    assert verdict.left == left and verdict.right == right, verdict.describe()


#: The deadline the decisions below must meet: past it a decision is "undecided", which the
#: tests reject (a bound on the work, not a timed assertion).
DEADLINE = 60.0


# --- the pairs of the issue ------------------------------------------------------------------


@pytest.mark.parametrize("method", ["auto", *PROOFS])
def test_the_digit_extraction_is_proven_over_a_billion_billion_points(method):
    a = parse_map(DIGITS)
    b = parse_map("(d0, d1, d2) -> (d1), domain: d0 in [0, 999999], d1 in [0, 999], "
                  "d2 in [0, 999]")
    verdict = decide(a, b, method=method, timeout=DEADLINE)
    assert verdict.equal, verdict.describe()
    wrong = parse_map("(d0, d1, d2) -> (d2), domain: d0 in [0, 999999], d1 in [0, 999], "
                      "d2 in [0, 999]")
    assert_counterexample(decide(a, wrong, method=method), a, wrong)


@pytest.mark.parametrize("method", ["auto", *PROOFS])
def test_the_tile_decomposition_and_its_rewrite(method):
    a = parse_map("(d0, d1) -> ((d0 * 128 + d1) floordiv 96, ((d0 * 128 + d1) mod 96) "
                  f"floordiv 32, d1 mod 32), domain: {TILES}")
    b = parse_map("(d0, d1) -> ((d0 * 128 + d1) floordiv 96, (d0 * 4 + d1 floordiv 32) "
                  f"mod 3, d1 mod 32), domain: {TILES}")
    assert equal(a, b, method=method)
    c = parse_map("(d0, d1) -> ((d0 * 128 + d1) floordiv 96, (d0 * 4 + d1 floordiv 32) "
                  f"mod 4, d1 mod 32), domain: {TILES}")
    assert_counterexample(decide(a, c, method=method), a, c)


def test_identical_maps_answer_at_once_whatever_their_size():
    text = "(d0, d1) -> (d0 * 20000 + d1), domain: d0 in [0, 19999], d1 in [0, 19999]"
    verdict = decide(parse_map(text), parse_map(text), timeout=DEADLINE)
    assert verdict.describe() == "equal (identical)"  # no enumeration of 4*10^8 points


def test_the_trace_of_the_digit_map_is_decided_step_by_step_and_whole():
    checked = check_trace(parse_map(DIGITS))
    assert len(checked.steps) >= 2
    assert checked.holds and not checked.refuted
    assert checked.whole.verdict is not None and checked.whole.verdict.equal


# --- reshape round trips, 10^3 .. 10^12 points -------------------------------------------------


def reshape(out_shape: list[int], in_shape: list[int]) -> IndexingMap:
    """Output-to-input map of a reshape (row-major linearise, then delinearise), written
    out as text so the test does not depend on symidx's reshape rule."""
    names = [f"d{i}" for i in range(len(out_shape))]
    linear, stride = "0", 1
    for name, n in zip(reversed(names), reversed(out_shape)):
        linear = f"{linear} + {name} * {stride}"
        stride *= n
    results, stride = [], 1
    for n in reversed(in_shape):
        results.append(f"(({linear}) floordiv {stride}) mod {n}")
        stride *= n
    domain = ", ".join(f"{name} in [0, {n - 1}]" for name, n in zip(names, out_shape))
    return parse_map(f"({', '.join(names)}) -> ({', '.join(reversed(results))}), "
                     f"domain: {domain}")


@pytest.mark.parametrize("k", [10, 100, 1000, 10000])
@pytest.mark.parametrize("method", ["auto", *PROOFS])
def test_reshape_round_trips_are_decided_at_every_size(k, method):
    cube, flat = [k, k, k], [k * k // 2, 2 * k]
    cube_to_flat, flat_to_cube = reshape(cube, flat), reshape(flat, cube)
    round_trip = compose(cube_to_flat, flat_to_cube)
    identity = IndexingMap.identity(cube)
    verdict = decide(round_trip, identity, method=method, timeout=DEADLINE)
    assert verdict.equal, verdict.describe()
    # a wrong way there: the flat shape's rows taken as 2k + 1 long
    wrong = compose(reshape(cube, [k * k // 2, 2 * k + 1]), flat_to_cube)
    verdict = decide(wrong, identity, method=method, timeout=DEADLINE)
    assert_counterexample(verdict, wrong, identity)


# --- agreement with brute force -----------------------------------------------------------------


@pytest.mark.parametrize("method", ["enumerate", *PROOFS])
@pytest.mark.parametrize("a, b", SEED_SIMPLIFICATIONS)
def test_the_seed_equalities_hold_by_every_method(a, b, method):
    assert equal(parse_map(a), parse_map(b), method=method)


@pytest.mark.parametrize("method", ["enumerate", *PROOFS])
def test_set_valued_maps_compare_images(method):
    a = parse_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 99999999], s0 in [0, 1]")
    b = parse_map("(d0)[s0] -> (d0 + 1 - s0), domain: d0 in [0, 99999999], s0 in [0, 1]")
    c = parse_map("(d0)[s0] -> (d0 + 1 - s0), domain: d0 in [0, 99999998], s0 in [0, 1]")
    if method == "enumerate":
        a, b, c = (m.replace(dims=[(0, 999)]) for m in (a, b, c))
        c = c.replace(dims=[(0, 998)])
    assert equal(a, b, method=method)
    verdict = decide(a, c, method=method)
    last = a.dims[0].hi
    assert verdict.describe() == (f"different at ({last}): {{({last}), ({last + 1})}} vs "
                                  f"outside the domain")


@pytest.mark.parametrize("method", ["enumerate", *PROOFS])
def test_a_wide_range_variable_is_a_set_not_a_function(method):
    a = parse_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 999], s0 in [0, 1000]")
    b = parse_map("(d0)[s0] -> (d0 + 1000 - s0), domain: d0 in [0, 999], s0 in [0, 1000]")
    assert equal(a, b, method=method)
    c = parse_map("(d0)[s0] -> (d0 + 999 - s0), domain: d0 in [0, 999], s0 in [0, 1000]")
    verdict = decide(a, c, method=method)
    assert_counterexample(verdict, a, c)


@pytest.mark.parametrize("method", ["enumerate", *PROOFS])
def test_runtime_variables_range_over_their_feasible_values(method):
    a = parse_map("(d0){rt0} -> (d0 + rt0), domain: d0 in [0, 9], rt0 in [0, 3]")
    flipped = parse_map("(d0){rt0} -> (d0 + 3 - rt0), domain: d0 in [0, 9], rt0 in [0, 3]")
    assert equal(a, flipped, method=method)  # the same set of possible targets
    unused = parse_map("(d0){rt0} -> (d0), domain: d0 in [0, 9], rt0 in [0, 3]")
    assert equal(unused, IndexingMap.identity([10]), method=method)
    narrower = parse_map("(d0){rt0} -> (d0 + rt0), domain: d0 in [0, 9], rt0 in [0, 2]")
    verdict = decide(a, narrower, method=method)
    assert_counterexample(verdict, a, narrower)
    d = verdict.point[0]
    assert verdict.describe() == (f"different at ({d}): {{({d}), ({d + 1}), ({d + 2}), "
                                  f"({d + 3})}} vs {{({d}), ({d + 1}), ({d + 2})}}")


@pytest.mark.parametrize("method", ["enumerate", *PROOFS])
def test_negative_divisors_and_ceildiv_follow_floor_semantics(method):
    a = parse_map("(d0) -> (d0 floordiv -3, d0 mod -3, d0 ceildiv 4), domain: d0 in [-50, 50]")
    b = parse_map("(d0) -> (-((-d0) ceildiv -3), d0 - (d0 floordiv -3) * -3, "
                  "(d0 + 3) floordiv 4), domain: d0 in [-50, 50]")
    assert equal(a, b, method=method)
    c = parse_map("(d0) -> (d0 floordiv -3, d0 mod 3, d0 ceildiv 4), domain: d0 in [-50, 50]")
    verdict = decide(a, c, method=method)
    assert_counterexample(verdict, a, c)
    assert verdict.point[0] % 3 != 0


@pytest.mark.parametrize("method", ["enumerate", *PROOFS])
@pytest.mark.parametrize("divisor", [2, -1])
def test_a_division_in_the_smaller_domain_does_not_hide_the_larger_one(method, divisor):
    # The quotient's bounds over one map's domain hold only inside that domain: used as
    # facts at every point, they once made a proof overlook the other map's extra points.
    small = parse_map(f"(d0) -> (d0 floordiv {divisor}), domain: d0 in [0, 1]")
    large = parse_map(f"(d0) -> (d0 floordiv {divisor}), domain: d0 in [0, 3]")
    for a, b in ((small, large), (large, small)):
        verdict = decide(a, b, method=method)
        assert_counterexample(verdict, a, b)
        assert verdict.point[0] in (2, 3)


@pytest.mark.parametrize("method", ["enumerate", *PROOFS])
def test_min_max_and_constraints(method):
    a = parse_map("(d0, d1) -> (min(d0, d1), max(d0, d1)), domain: d0 in [0, 20], "
                  "d1 in [0, 20], d0 + d1 in [0, 25], d1 mod 2 in [0, 0]")
    b = parse_map("(d0, d1) -> (min(d1, d0), max(d1, d0)), domain: d0 in [0, 20], "
                  "d1 in [0, 20], d0 + d1 in [0, 25], d1 mod 2 in [0, 0]")
    assert equal(a, b, method=method)
    c = parse_map("(d0, d1) -> (min(d0, d1), max(d0, d1)), domain: d0 in [0, 20], "
                  "d1 in [0, 20], d0 + d1 in [0, 24], d1 mod 2 in [0, 0]")
    verdict = decide(a, c, method=method)
    assert_counterexample(verdict, a, c)
    assert sum(verdict.point) == 25 and verdict.right == frozenset()


@pytest.mark.parametrize("method", ["enumerate", *PROOFS])
def test_known_empty_maps(method):
    empty = parse_map("(d0) -> (d0), domain: d0 in [0, 9], d0 in [20, 30]")
    also_empty = parse_map("(d0) -> (d0), domain: d0 in [0, 9], d0 mod 16 in [12, 14]")
    assert empty.is_known_empty
    assert equal(empty, also_empty, method=method)
    verdict = decide(also_empty, IndexingMap.identity([10]), method=method)
    assert_counterexample(verdict, also_empty, IndexingMap.identity([10]))


# --- what cannot be decided ---------------------------------------------------------------------


def test_non_presburger_maps_are_enumerated_when_small_and_undecided_when_large():
    a = parse_map("(d0, d1) -> (d0 * d1), domain: d0 in [0, 99], d1 in [0, 99]")
    b = parse_map("(d0, d1) -> (d1 * d0 + (d0 * d1) floordiv 10000), "
                  "domain: d0 in [0, 99], d1 in [0, 99]")
    assert non_presburger_reason(a) == "d0 * d1 is not Presburger arithmetic (a product of " \
                                       "variables)"
    assert decide(a, b).describe() == "equal (exhaustive)"
    big_a, big_b = (m.replace(dims=[(0, 99999), (0, 99999)]) for m in (a, b))
    verdict = decide(big_a, big_b)  # a difference is still found by evaluating at points
    assert_counterexample(verdict, big_a, big_b)
    assert verdict.point[0] * verdict.point[1] >= 10000
    same = parse_map("(d0, d1) -> ((d0 + 1) * d1 - d1), domain: d0 in [0, 99999], "
                     "d1 in [0, 99999]")
    with pytest.raises(Undecided, match=r"d0 \* d1 is not Presburger arithmetic .* more than"):
        decide(big_a, same)
    if has_isl():
        with pytest.raises(Undecided, match="isl works in Presburger arithmetic"):
            decide(big_a, same, method="isl")


def test_enumeration_stops_at_its_limit_and_at_the_timeout():
    a = parse_map(f"(d0, d1) -> (d0, d1), domain: {BIG}")
    b = parse_map(f"(d0, d1) -> (d1, d0), domain: {BIG}")
    with pytest.raises(Undecided, match="10{12} points, more than 2000000 to enumerate"):
        decide(a, b, method="enumerate")
    small_a, small_b = (m.replace(dims=[(0, 999), (0, 1999)]) for m in (a, b))
    with pytest.raises(Undecided, match=r"out of wall-clock time \(1e-06 s\)"):
        decide(small_a, small_b, method="enumerate", timeout=1e-6)
    with pytest.raises(Undecided, match=r"out of CPU time \(1e-06 s\)"):
        decide(small_a, small_b, method="enumerate", cpu_limit=1e-6)


def test_undecided_is_a_symidx_error_and_unknown_methods_are_rejected():
    assert issubclass(Undecided, SymidxError)
    m = IndexingMap.identity([4])
    with pytest.raises(SymidxError, match="unknown method 'z4'"):
        decide(m, m, method="z4")


def test_without_isl_auto_proves_with_z3_and_without_either_it_says_what_to_install(
        monkeypatch):
    pytest.importorskip("z3")
    import symidx.core.verify.equality as equality

    a = parse_map(DIGITS)
    b = parse_map("(d0, d1, d2) -> (d1), domain: d0 in [0, 999999], d1 in [0, 999], "
                  "d2 in [0, 999]")
    monkeypatch.setattr(equality, "has_isl", lambda: False)
    assert decide(a, b).describe() == "equal (z3 proof)"
    monkeypatch.setattr(equality, "has_z3", lambda: False)
    with pytest.raises(Undecided, match=r"neither islpy nor z3 is installed"):
        decide(a, b)
    small = [m.replace(dims=[(0, 9), (0, 999), (0, 99)]) for m in (a, b)]
    assert decide(*small).describe() == "equal (exhaustive)"
