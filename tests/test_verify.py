"""Equality on the domain: exhaustive enumeration and z3 proofs agree; counterexamples."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from helpers import SEED_SIMPLIFICATIONS
from symidx.strategies import indexing_maps
from symidx.syntax import parse_map
from symidx.verify import equal

z3 = pytest.importorskip("z3")

BIG = "d0 in [0, 999999], d1 in [0, 999999]"  # 10^12 points


def test_proves_an_equality_over_a_trillion_points():
    a = parse_map(f"(d0, d1) -> ((d0 * 1000000 + d1) floordiv 1000000, "
                  f"(d0 * 1000000 + d1) mod 1000000), domain: {BIG}")
    b = parse_map(f"(d0, d1) -> (d0, d1), domain: {BIG}")
    assert equal(a, b).describe() == "equal (z3 proof)"


def test_finds_a_counterexample_on_a_large_domain():
    a = parse_map(f"(d0, d1) -> (d0 * 2 + d1 floordiv 500000), domain: {BIG}")
    b = parse_map(f"(d0, d1) -> ((d0 * 1000000 + d1) floordiv 500000), domain: {BIG}")
    assert equal(a, b).equal
    wrong = parse_map(f"(d0, d1) -> ((d0 * 1000000 + d1) floordiv 500001), domain: {BIG}")
    verdict = equal(a, wrong)
    assert not verdict.equal and verdict.method == "z3"
    point = verdict.point
    assert a.evaluate(point) != wrong.evaluate(point)


def test_domain_differences_and_symbols():
    a = parse_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 99999999], s0 in [0, 1]")
    b = parse_map("(d0)[s0] -> (d0 + 1 - s0), domain: d0 in [0, 99999999], s0 in [0, 1]")
    assert equal(a, b, method="z3").equal
    c = parse_map("(d0)[s0] -> (d0 + 1 - s0), domain: d0 in [0, 99999998], s0 in [0, 1]")
    verdict = equal(a, c, method="z3")
    assert verdict.describe() == "different at (99999999): {(99999999), (100000000)} vs " \
                                 "outside the domain"


def test_negative_divisors_follow_floor_semantics():
    a = parse_map("(d0) -> (d0 floordiv -3, d0 mod -3), domain: d0 in [-50, 50]")
    b = parse_map("(d0) -> (-((-d0) ceildiv -3) , d0 - (d0 floordiv -3) * -3), "
                  "domain: d0 in [-50, 50]")
    assert equal(a, b, method="z3").equal == equal(a, b, method="exhaustive").equal is True


@settings(max_examples=150)
@given(indexing_maps(max_dims=2, max_ranges=1, max_rts=0, negative_divisors=True),
       indexing_maps(max_dims=2, max_ranges=1, max_rts=0, negative_divisors=True))
def test_z3_agrees_with_enumeration(a, b):
    if (a.num_dims, a.num_results) != (b.num_dims, b.num_results):
        if a.is_known_empty:
            return
        b = a.replace(dims=[d.intersect(type(d)(d.lo, d.hi - 1)) for d in a.dims])  # near miss
    by_enumeration = equal(a, b, method="exhaustive")
    by_z3 = equal(a, b, method="z3")
    assert by_z3.equal == by_enumeration.equal
    if not by_z3.equal and by_z3.point is not None:
        assert a.image(by_z3.point) != b.image(by_z3.point)


@pytest.mark.parametrize("a, b", SEED_SIMPLIFICATIONS)
def test_the_seed_equalities_hold_by_enumeration_and_by_proof(a, b):
    for method in ("exhaustive", "z3"):
        assert equal(parse_map(a), parse_map(b), method=method).equal, method
