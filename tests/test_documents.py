"""The JSON of maps (``symidx.analysis.documents``): a map written again is written as it
was, though each is printed once for all those that show alike."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from symidx.analysis.documents import map_json
from symidx.strategies import indexing_maps


@given(indexing_maps(max_rts=2), st.lists(st.sampled_from(["i", "j", None]), max_size=6))
def test_a_map_written_again_is_written_as_it_was(m, names):
    """What ``map_json`` gives is what ``to_dict`` gives, the first time and the next, and
    a map equal but for its names (which equality leaves out) shows its own names."""
    assert map_json(m) == m.to_dict()
    assert map_json(m) == m.to_dict()
    n = m.num_dims + m.num_ranges + m.num_rts
    if m.is_known_empty or m.is_undefined or not n:
        return
    chosen = (names + [None] * n)[:n]
    named = m.replace(names=tuple(f"{k}{i}" if k else None for i, k in enumerate(chosen)))
    assert named == m
    assert map_json(named) == named.to_dict()
    assert map_json(m) == m.to_dict()
    if any(chosen):
        assert map_json(named) != map_json(m)
