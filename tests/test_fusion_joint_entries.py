"""The entries of a joint sweep (:mod:`symidx.fusion.joint`) are values: a step or a merge
gives a new one and leaves the old as it was; the outputs that have too many maps are
counted as a brute force over each output counts them."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symidx.core.syntax import parse_map
from symidx.fusion.joint import Shared, _crowded
from symidx.fusion.reached import Path, Traced
from symidx.fusion.sets import Tally, add_entry

M = parse_map("(d0) -> (d0), domain: d0 in [0, 3]")


@given(st.lists(st.integers(min_value=1, max_value=(1 << 70) - 1), max_size=40),
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
