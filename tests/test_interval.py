"""Interval arithmetic: every result contains every value the operation can produce."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symidx.core.interval import EMPTY, Interval
from symidx.strategies import intervals

small = intervals(-9, 9, 7)


def values(i: Interval) -> range:
    return range(i.lo, i.hi + 1)


def test_basics():
    assert Interval(0, 9).size == 10
    assert Interval(3, 2).is_empty and Interval(3, 2) == EMPTY
    assert 5 in Interval(0, 9) and 10 not in Interval(0, 9)
    assert Interval(2, 3) in Interval(0, 9)
    assert Interval(0, 4).intersect(Interval(3, 9)) == Interval(3, 4)
    assert Interval(0, 1).union(Interval(5, 6)) == Interval(0, 6)
    assert str(Interval(-1, 4)) == "[-1, 4]"
    with pytest.raises(AttributeError):
        Interval(0, 1).lo = 3  # type: ignore[misc]


def test_division_examples():
    assert Interval(-99, 99).floordiv(3) == Interval(-33, 33)
    assert Interval(53, 71).mod(42) == Interval(11, 29)  # one period: exact
    assert Interval(40, 50).mod(42) == Interval(0, 41)
    assert Interval(0, 14).mod(16) == Interval(0, 14)
    assert Interval(-4, 0).mod(5) == Interval(0, 4)
    assert Interval(0, 7).floordiv(-3) == Interval(-3, 0)


@given(small, small)
def test_add_sub_mul_min_max_are_exact_hulls(a, b):
    for op, name in [(lambda x, y: x + y, "__add__"), (lambda x, y: x - y, "__sub__"),
                     (lambda x, y: x * y, "__mul__"), (min, "min"), (max, "max")]:
        got = getattr(a, name)(b)
        produced = [op(x, y) for x, y in itertools.product(values(a), values(b))]
        assert got == Interval(min(produced), max(produced)), name


@given(small, small)
def test_division_contains_every_value(a, b):
    divisors = [y for y in values(b) if y != 0]
    if not divisors:
        return
    for name, op in [("floordiv", lambda x, y: x // y), ("mod", lambda x, y: x % y),
                     ("ceildiv", lambda x, y: -((-x) // y))]:
        got = getattr(a, name)(b)
        for x, y in itertools.product(values(a), divisors):
            assert op(x, y) in got, (name, x, y, got)


@given(small, st.integers(1, 12))
def test_constant_division_is_tight(a, c):
    quotients = [x // c for x in values(a)]
    assert a.floordiv(c) == Interval(min(quotients), max(quotients))
    remainders = [x % c for x in values(a)]
    got = a.mod(c)
    assert min(remainders) >= got.lo and max(remainders) <= got.hi
    if a.lo // c == a.hi // c:
        assert got == Interval(min(remainders), max(remainders))


def test_empty_propagates():
    assert (EMPTY + Interval(0, 1)).is_empty
    assert (Interval(0, 1) * EMPTY).is_empty
    assert EMPTY.mod(3).is_empty


def test_big_integers_do_not_saturate():
    big = 10**30
    assert (Interval(0, big) + Interval(0, big)).hi == 2 * big
