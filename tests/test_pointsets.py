"""Exact sets of points: images of maps, unions, boxes, intersections and differences,
emptiness and counts, by isl and by explicit enumeration, against brute force."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symidx import parse_map
from symidx.core.pointsets import box, image, images
from symidx.core.verify import has_isl
from symidx.errors import MapError, TooLargeError
from symidx.strategies import indexing_maps

BACKENDS = ["explicit", pytest.param("isl", marks=pytest.mark.skipif(
    not has_isl(), reason="islpy not installed"))]

STRIDED = "(d0) -> (d0 * 3 + 1), domain: d0 in [0, 9]"          # reads 1, 4, ..., 28
WINDOW = "(d0)[s0] -> (d0 + s0), domain: d0 in [10, 14], s0 in [0, 2]"  # reads 10..16


def brute_image(m) -> set:
    out = set()
    for p in itertools.product(*(range(b.lo, b.hi + 1) for b in m.dims)):
        out |= m.image(p)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_elements_never_read(backend):
    operand = box([32], backend)
    read = images([parse_map(STRIDED), parse_map(WINDOW)], backend)
    unread = operand - read
    expected = set(range(32)) - {3 * i + 1 for i in range(10)} - set(range(10, 17))
    assert unread.count() == len(expected)
    assert unread.points() == sorted((v,) for v in expected)
    assert not unread.contains((4,)) and unread.contains((0,))
    assert (read & unread).is_empty() and not read.is_empty()
    assert (read | unread).count() == 32
    assert unread.sample() in {(v,) for v in expected}


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_and_zero_rank_sets(backend):
    empty = image(parse_map("(d0) -> (d0), domain: d0 in [0, 9], d0 in [20, 30]"), backend)
    assert empty.is_empty() and empty.count() == 0 and empty.sample() is None
    scalar = image(parse_map("(d0) -> (), domain: d0 in [0, 3]"), backend)
    assert scalar.count() == 1 and scalar.points() == [()]


def test_isl_counts_huge_sets_exactly_and_refuses_what_it_cannot_bound():
    if not has_isl():
        pytest.skip("islpy not installed")
    big = image(parse_map("(d0, d1) -> (d0, d1 * 2), domain: d0 in [0, 999], "
                          "d1 in [0, 999999]"))
    assert big.count() == 1000 * 1000000
    assert (box([1000, 2000000]) - big).count() == 1000 * 1000000
    with pytest.raises(TooLargeError, match="outer points"):
        big.count(limit=10)
    with pytest.raises(MapError, match="do not mix"):
        big.union(box([3, 3], "explicit"))


@pytest.mark.parametrize("backend", BACKENDS)
@given(st.lists(indexing_maps(max_dims=2, max_ranges=1, max_rts=1, max_results=2,
                              negative_divisors=True), min_size=2, max_size=3))
def test_set_algebra_agrees_with_brute_force(backend, maps):
    rank = maps[0].num_results
    maps = [m for m in maps if m.num_results == rank]
    if len(maps) < 2:
        return
    first, rest = image(maps[0], backend), images(maps[1:], backend)
    want_first = brute_image(maps[0])
    want_rest = set().union(*(brute_image(m) for m in maps[1:]))
    assert sorted(want_first - want_rest) == (first - rest).points()
    assert len(want_first & want_rest) == (first & rest).count()
    assert sorted(want_first | want_rest) == (first | rest).points()
    assert (first - rest).is_empty() == (not (want_first - want_rest))
