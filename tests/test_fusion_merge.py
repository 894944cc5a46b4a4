"""The sweep's exact merges (:mod:`symidx.core.simplify.merge`) on whole computations: stacked
windows keep one range variable per dimension, shifted reads become one map."""

from __future__ import annotations

from conftest import DATA
from helpers import assert_same_function
from symidx.analysis import computation_maps
from symidx.core.syntax import parse_map
from symidx.fusion import sets
from symidx.hlo import parse_hlo


def _maps(name: str):
    module = parse_hlo((DATA / "merge" / name).read_text())
    (record,) = computation_maps(module.entry, "output_to_input")
    return record.groups


def test_stacked_reduce_windows_keep_one_variable_per_dimension():
    # six 3x3 windows: each output element reads a 13x13 square (offsets 0..12)
    (group,) = _maps("stacked_reduce_windows.hlo")[:1]
    (m,) = group.maps
    expected = parse_map("(d0, d1)[s0, s1] -> (d0 + s0, d1 + s1), domain: "
                         "d0 in [0, 51], d1 in [0, 51], s0 in [0, 12], s1 in [0, 12]")
    assert m == expected
    assert_same_function(m, expected)


def test_stacked_convolutions_keep_one_variable_per_spatial_dimension():
    groups = _maps("stacked_convolutions.hlo")
    (m,) = groups[0].maps
    assert m == parse_map(
        "(d0, d1, d2, d3)[s0, s1, s2] -> (0, d1 + s0, d2 + s1, s2), domain: d0 in [0, 0], "
        "d1 in [0, 19], d2 in [0, 19], d3 in [0, 3], s0 in [0, 12], s1 in [0, 12], "
        "s2 in [0, 3]")


def test_shifted_slices_stay_apart_below_the_bounding_box_limit():
    # out[i] = p0[i] + p0[i + 1] + ... + p0[i + 19]: 20 maps differing by a constant,
    # fewer than HULL_LIMIT: the sweep keeps them as they are
    (group,) = _maps("shifted_slices_sum.hlo")
    assert sorted(map(str, group.maps)) == sorted(
        str(parse_map(f"(d0) -> (d0 + {k}), domain: d0 in [0, 20]")) for k in range(20))
    assert group.opaque is None


def test_shifted_slices_become_one_exact_map_instead_of_a_bounding_box(monkeypatch):
    # past the limit the 20 maps would be a bounding box (labelled opaque); merged by
    # their offsets they are one exact map
    monkeypatch.setattr(sets, "HULL_LIMIT", 4)
    (group,) = _maps("shifted_slices_sum.hlo")
    expected = parse_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 20], s0 in [0, 19]")
    assert list(group.maps) == [expected]
    assert group.opaque is None
    union = [parse_map(f"(d0) -> (d0 + {k}), domain: d0 in [0, 20]") for k in range(20)]
    for d in range(21):
        assert expected.image((d,)) == set().union(*(m.image((d,)) for m in union))


def test_a_bounding_box_holds_maps_whose_domains_differ():
    """Maps a ``concatenate`` split into pieces of the domain (issue 35: the rotation of the
    reverse-and-rotate diamond) have different dims; past the limit they are boxed too,
    over the hull of their dims: every (index, element) pair of every map is in the box."""
    from symidx.core.interval import Interval
    from symidx.fusion.reached import Path
    from symidx.fusion.sets import Starts, Tally, bounded, with_dims
    from symidx.fusion.sweep import Memo

    pieces = [parse_map(f"(d0) -> ({(p * 5) % 32}), domain: d0 in [{p}, {p}]")
              for p in range(2, 32)]
    pieces.append(parse_map("(d0) -> (d0 + 1), domain: d0 in [0, 1]"))
    memo = Memo()
    starts = Starts([(Interval(0, 31),)])
    entries = {m: Tally(Path("x"), 1) for m in pieces}
    original = sets.HULL_LIMIT
    try:
        sets.HULL_LIMIT = 4
        found = bounded(entries, memo, starts)
    finally:
        sets.HULL_LIMIT = original
    (box,) = found
    assert "bounding box" in (found[box].opaque or "")
    box = with_dims(box, starts.dims[0])  # it reads the same for every index
    for m in pieces:
        for d in range(32):
            assert m.image((d,)) <= box.image((d,))


def test_the_deep_reverse_and_rotate_diamond_stays_small():
    """Issue 35: 200 levels of ``add(reverse(x), rotate(x))`` over f32[64]. The rotations
    split the domain into one piece per point, thousands of distinct maps per instruction
    that no bound held (the box needed equal dims): more than 280 s of CPU. Boxed over the
    hull of their dims, the sets stay near the limit: the analysis answers holding a few
    hundred maps (counted, not timed)."""
    from diamond import diamond

    from symidx.fusion import Analysis

    module = parse_hlo(diamond(200, size=64))
    analysis = Analysis(max_maps=3000)  # today's code held more than that by level 40
    (record,) = computation_maps(module.entry, "output_to_input", analysis=analysis)
    (group,) = record.groups
    assert "distinct maps replaced by their bounding box" in (group.opaque or "")
    assert any(m.image((5,)) == {(k,) for k in range(64)} for m in group.maps)
