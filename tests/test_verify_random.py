"""Random pairs: a random map, a rewrite that keeps its meaning (identities written here, or
the simplifier's), then maybe a perturbation that may or may not change it. Every method
must decide as brute force does (the maps' own point-by-point images over the union of
their domain boxes), and a counterexample must be a real one."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sympy import Integer

from symidx import IndexingMap, simplify
from symidx.core.expr import Expr, FloorDiv, Max, Min, Mod, dim
from symidx.core.interval import Interval
from symidx.core.verify import Undecided, decide, has_isl, has_z3
from symidx.strategies import indexing_maps

METHODS = ["auto", "enumerate"] + (["isl"] if has_isl() else []) + (["smt"] if has_z3() else [])


def truth(a: IndexingMap, b: IndexingMap) -> bool:
    """Brute force: the same image at every point of the union of the dims boxes."""
    present = [m for m in (a, b) if not m.is_known_empty]
    if not present:
        return True
    boxes = present[0].dims if len(present) == 1 else \
        [x.union(y) for x, y in zip(a.dims, b.dims)]
    for point in itertools.product(*(range(x.lo, x.hi + 1) for x in boxes)):
        if image(a, point) != image(b, point):
            return False
    return True


def image(m: IndexingMap, point: tuple[int, ...]) -> set[tuple[int, ...]]:
    return set() if m.is_known_empty else m.image(point)


# --- rewrites that keep the meaning (each an identity over the integers) -------------------------


def split_div_mod(r: Expr, c: int, _: Any) -> Expr:
    """r = (r floordiv c) * c + r mod c."""
    return FloorDiv(r, c) * c + Mod(r, c)


def round_trip(r: Expr, c: int, m: IndexingMap) -> Expr:
    """r = (r * c + y) floordiv c for any y in [0, c - 1], here y = (first dim) mod c."""
    y = Mod(dim(0), c) if m.num_dims else Integer(c - 1)
    return FloorDiv(r * c + y, c)


def min_max(r: Expr, c: int, _: Any) -> Expr:
    """r = max(min(r, r + c), r - c) for c >= 1."""
    return Max(Min(r, r + c), r - c)


def mod_of_sum(r: Expr, c: int, m: IndexingMap) -> Expr:
    """r = r floordiv c * c + (r + c * x) mod c for any integer x (here the first dim)."""
    x = dim(0) if m.num_dims else Integer(3)
    return FloorDiv(r, c) * c + Mod(r + c * x, c)


REWRITES = [split_div_mod, round_trip, min_max, mod_of_sum]


def rewritten(m: IndexingMap, draw: Any) -> IndexingMap:
    """m with one result rewritten by an identity, or simplified, or with a constraint
    that always holds added."""
    kind = draw(st.integers(0, 2))
    if m.is_known_empty:
        return m
    if kind == 0 and m.results:
        i = draw(st.integers(0, m.num_results - 1))
        rule = draw(st.sampled_from(REWRITES))
        c = draw(st.integers(1, 7))
        results = list(m.results)
        results[i] = rule(results[i], c, m)
        return m.replace(results=results)
    if kind == 1 and m.num_dims:
        d = m.dims[0]  # always holds: 2 * d0 + 1 lies in [2 lo + 1, 2 hi + 1]
        return m.with_constraint(2 * dim(0) + 1, Interval(2 * d.lo + 1, 2 * d.hi + 1))
    return simplify(m)


def perturbed(m: IndexingMap, draw: Any) -> IndexingMap:
    """m changed in a way that may or may not change its meaning."""
    if m.is_known_empty:
        return m
    kind = draw(st.integers(0, 3))
    if kind == 0 and m.results:
        i = draw(st.integers(0, m.num_results - 1))
        k = draw(st.integers(0, 9))
        bump = FloorDiv(dim(0), k + 1) if m.num_dims else Integer(k % 2)
        results = list(m.results)
        results[i] = results[i] + Mod(bump, 2)
        return m.replace(results=results)
    if kind == 1 and m.num_dims and m.dims[0].size > 1:
        d = m.dims[0]
        return m.replace(dims=[Interval(d.lo, d.hi - 1), *m.dims[1:]])
    if kind == 2 and m.num_dims:
        c = draw(st.integers(2, 5))
        return m.with_constraint(Mod(dim(0), c), Interval(0, c - 2))
    if m.ranges:
        r = m.ranges[0]
        return m.replace(ranges=[Interval(r.lo, r.hi + 1), *m.ranges[1:]])
    return m


@st.composite
def pairs(draw: Any) -> tuple[IndexingMap, IndexingMap]:
    m = draw(indexing_maps(max_dims=2, max_ranges=1, max_rts=1, max_results=2,
                           negative_divisors=True))
    other = rewritten(m, draw)
    if draw(st.booleans()):
        other = perturbed(other, draw)
    return (m, other) if draw(st.booleans()) else (other, m)


@pytest.mark.parametrize("method", METHODS)
@given(pairs())
def test_every_method_decides_as_brute_force(method, pair):
    a, b = pair
    if (a.num_dims, a.num_results) != (b.num_dims, b.num_results):
        return  # a known-empty simplification carries no arity to compare
    expected = truth(a, b)
    try:
        verdict = decide(a, b, method=method, timeout=30)
    except Undecided as e:  # only z3's quantifiers may give up; never on these small maps
        pytest.fail(f"{method} undecided: {e}")
    assert verdict.equal == expected, (str(a), str(b), verdict.describe())
    if not verdict.equal and verdict.point is not None:
        left, right = image(a, verdict.point), image(b, verdict.point)
        assert left != right
        assert verdict.left in (None, left) and verdict.right in (None, right)
