"""The sweep's exact merges (:mod:`symidx.simplify.merge`) on whole computations: stacked
windows keep one range variable per dimension, shifted reads become one map."""

from __future__ import annotations

from conftest import DATA
from helpers import assert_same_function
from symidx.analysis import computation_maps
from symidx.fusion import sets
from symidx.hlo import parse_hlo
from symidx.syntax import parse_map


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
