"""The entries of a joint sweep (:mod:`symidx.fusion.joint`) are values: a step or a merge
gives a new one and leaves the old as it was; the outputs that have too many maps are
counted as a brute force over each output counts them."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symidx.core.interval import Interval
from symidx.core.syntax import parse_map
from symidx.fusion import sets
from symidx.fusion.joint import Shared, Starts, _crowded, reached_each
from symidx.fusion.reached import Path, Traced
from symidx.fusion.sets import Tally, add_entry
from symidx.fusion.sweep import Memo

M = parse_map("(d0) -> (d0), domain: d0 in [0, 3]")


@given(st.lists(st.one_of(st.integers(min_value=1, max_value=(1 << 70) - 1),
                          st.sampled_from([1, 0b110, 0b1011, (1 << 70) - 1])), max_size=70),
       st.integers(min_value=0, max_value=45))
def test_crowded_outputs_are_those_more_than_limit_entries_come_from(
        starts: list[int], limit: int) -> None:
    entries = [Shared(s) for s in starts]
    expected = 0
    for bit in range(70):
        if sum(s >> bit & 1 for s in starts) > limit:
            expected |= 1 << bit
    assert _crowded(entries, limit) == expected


def test_a_step_and_a_merge_leave_the_entries_they_read_as_they_were() -> None:
    exact = Shared(0b011)
    labelled = exact.after("n", Traced(M), "custom-call TopK")
    assert exact == Shared(0b011) and labelled == Shared(0b011, 0b011, "custom-call TopK")
    other = Shared(0b100)
    target = {M: exact}
    add_entry(target, M, other)
    assert target[M] == Shared(0b111) and exact == Shared(0b011) and other == Shared(0b100)
    assert target[M].plus(labelled).label(0) == "custom-call TopK"
    assert target[M].plus(labelled).label(2) is None  # output 2's own sweep is exact
    assert labelled.only(0b010) == Shared(0b010, 0b010, "custom-call TopK")
    assert labelled.only(0b100) == Shared(0b100)
    with pytest.raises(dataclasses.FrozenInstanceError):
        exact.starts = 0  # type: ignore[misc]


def test_a_tally_counts_paths_and_keeps_the_first() -> None:
    first = Tally(Path("a"), 2)
    stepped = first.after("b", Traced(M, count=3), None)
    assert stepped == Tally(Path("b", Path("a")), 6)
    merged = first.plus_after(first, "b", Traced(M, count=3), "reduce-window")
    assert merged == Tally(Path("a"), 8, "reduce-window") and first == Tally(Path("a"), 2)


@contextlib.contextmanager
def _limits(merge: int, hull: int) -> Iterator[None]:
    before = sets.MERGE_LIMIT, sets.HULL_LIMIT
    sets.MERGE_LIMIT, sets.HULL_LIMIT = merge, hull
    try:
        yield
    finally:
        sets.MERGE_LIMIT, sets.HULL_LIMIT = before


_MAPS = [parse_map(t) for t in (
    "(d0) -> (d0), domain: d0 in [0, 3]",
    "(d0) -> (3 - d0), domain: d0 in [0, 3]",
    "(d0) -> (0), domain: d0 in [0, 3]",
    "() -> (2)",
    "(d0){rt0} -> (rt0), domain: d0 in [0, 3], rt0 in [0, 3]",
)]


@st.composite
def _entries(draw):
    size = draw(st.integers(2, 3))
    entries = {}
    for m in draw(st.lists(st.sampled_from(_MAPS), min_size=1, unique=True)):
        starts = draw(st.integers(1, (1 << size) - 1))
        marked = draw(st.integers(0, (1 << size) - 1)) & starts
        opaque = draw(st.sampled_from([None, "", "custom-call TopK"]))
        entries[m] = Shared(starts, marked, opaque)
    return size, entries


@given(_entries(), st.integers(0, 3))
def test_bounding_a_set_gives_each_crowded_output_its_maps_forgotten(case, limit):
    """:meth:`Starts.bounded` (before the bounding box) against its plain definition:
    each entry split into the outputs that are crowded and the others, the crowded part's
    map forgotten and made dims-free, both parts added back."""
    size, entries = case
    starts = Starts(tuple((Interval(0, 3),) for _ in range(size)))
    memo = Memo()
    with _limits(limit, 1000):
        got = starts.bounded(dict(entries), memo)
    over = _crowded(entries.values(), limit)
    expected: dict = {}
    if len(entries) <= limit or not over:
        expected = entries
    else:
        for m, e in entries.items():
            if e.starts & ~over:
                add_entry(expected, m, e.only(e.starts & ~over))
            if e.starts & over:
                add_entry(expected, starts.dim_free(sets.forgotten(m, memo), e.starts & over,
                                                    memo), e.only(e.starts & over))
    assert list(got.items()) == list(expected.items())  # the order too: it is the output's


@given(_entries())
def test_each_output_gets_its_maps_and_its_first_label(case):
    """:func:`reached_each` against its definition, output by output: the maps the output
    is reached from (known-empty ones only when nothing else reaches it), and the label of
    the first of them that is labelled for it."""
    size, entries = case
    entries = {**entries, _MAPS[0].as_known_empty(): Shared(1, 1, "while (loop-carried)")}
    starts = Starts(tuple((Interval(0, 3),) for _ in range(size)))
    with _limits(1000, 1000):
        got = reached_each(dict(entries), Memo(), starts)
    for bit in range(size):
        mine = [(m, e) for m, e in entries.items() if e.starts >> bit & 1]
        live = [(sets.with_dims(m, (Interval(0, 3),)), e) for m, e in mine
                if not m.is_known_empty]
        if not live and mine:
            live = [(sets.with_dims(mine[0][0], (Interval(0, 3),)).as_known_empty(),
                     mine[0][1])]
        if not live:
            assert got[bit] is None
            continue
        assert got[bit].maps == tuple(m for m, _ in live)
        labels = [e.opaque for _, e in live if e.marked >> bit & 1 and e.opaque is not None]
        assert got[bit].opaque == (labels[0] if labels else None)
