"""Rule ``box_free_group`` (:mod:`symidx.core.simplify.boxes`), checked against brute force:
the image of every source index (the set of targets) is the same before and after."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from symidx.core.expr import FloorDiv, Mod, dim, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.simplify.boxes import box_groups
from symidx.core.syntax import parse_map


def _images(m: IndexingMap, over: IndexingMap | None = None) -> list[set[tuple[int, ...]]]:
    """The targets of each point of ``over``'s dim (``m``'s own by default): a rule may
    narrow the dim's interval, and points outside it reach nothing."""
    d = (over or m).dims[0]
    return [m.image((p,)) for p in range(d.lo, d.hi + 1)]


@st.composite
def grouped_maps(draw):
    """Maps of one dim with two or three groups of range variables: windows stacked with
    padding, strides and dilations (sums, divisions, remainders, a product), some groups
    tied to the dim by a result or a constraint, some feeding two results, some none (their
    constraints only filter the dim), some with constraints that leave gaps or nothing."""
    results = []
    constraints = []
    ranges: list[Interval] = []
    for _ in range(draw(st.integers(1, 3))):
        first = len(ranges)
        n = draw(st.integers(1, 3))
        for _ in range(n):
            lo = draw(st.integers(-1, 2))
            ranges.append(Interval(lo, lo + draw(st.integers(0, 4))))
        coeffs = draw(st.lists(st.sampled_from([1, 1, 2, 3, -1, 4]), min_size=n, max_size=n))
        total = sum(c * sym(first + i) for i, c in enumerate(coeffs))
        tied = draw(st.sampled_from(["free", "free", "result", "constraint"]))
        shape = draw(st.sampled_from(["sum", "floordiv", "mod", "two", "product", "twice",
                                      "hidden"]))
        base = total + draw(st.sampled_from([1, 2, -1])) * dim(0) if tied == "result" \
            else total
        if shape == "sum":
            results.append(base)
        elif shape == "floordiv":
            results.append(FloorDiv(base + 5, draw(st.sampled_from([2, 3]))))
        elif shape == "mod":
            results.append(Mod(base, 3))
        elif shape == "two":  # one group, two results
            results += [base, sym(first)]
        elif shape == "product":
            results.append(sym(first) * sym(first + n - 1))
        elif shape == "twice":  # the same value twice: a diagonal, not a box
            results += [base, base]
        # "hidden": the group feeds no result, its constraints only filter
        kind = draw(st.sampled_from(["none", "pad", "parity", "empty"]))
        if kind == "pad":  # on the window, the window with the dim, or its first part
            padded = draw(st.sampled_from([total, base, sym(first) + dim(0)]))
            constraints.append((padded, Interval(draw(st.integers(-2, 2)),
                                                 draw(st.integers(2, 8)))))
        elif kind == "parity":
            constraints.append((Mod(total, 2), Interval(0, 0)))
        elif kind == "empty":
            constraints.append((total, Interval(100, 101)))
        if tied == "constraint":
            constraints.append((total + dim(0), Interval(0, draw(st.integers(2, 9)))))
    return IndexingMap.create([Interval(0, 3)], results or [dim(0)], ranges, (), constraints)


@given(grouped_maps(), st.sampled_from([4, 64, 1 << 14]))
def test_box_groups_keeps_every_image(m, limit):
    boxed = box_groups(m, limit)
    assert _images(boxed, m) == _images(m)
    assert boxed.num_ranges <= m.num_ranges + len(m.results)


def test_stacked_padded_windows_become_the_rows_they_read():
    # two 3-wide windows with padding 1 each, over rows [0, 7]: every row, with no variable
    # of the windows left (merge_contiguous_sums cannot merge them: s1 is used alone)
    m = parse_map("()[s0, s1, s2] -> (s0 + s1 + s2 - 2), domain: s0 in [0, 7], s1 in [0, 2], "
                  "s2 in [0, 2], s0 + s1 - 1 in [0, 7], s0 + s1 + s2 - 2 in [0, 7]")
    assert box_groups(m) == parse_map("()[s0] -> (s0), domain: s0 in [0, 7]")


def test_a_stride_becomes_a_step_and_a_single_value_a_constant():
    m = parse_map("(d0)[s0, s1] -> (d0, s0 + s1, s1 * 0 + 5), domain: d0 in [0, 3], "
                  "s0 in [0, 6], s1 in [0, 1], (s0 + s1) mod 2 in [0, 0]")
    assert box_groups(m) == parse_map(
        "(d0)[s0] -> (d0, s0 * 2, 5), domain: d0 in [0, 3], s0 in [0, 3]")
    one = parse_map("()[s0, s1] -> (s0 - s1), domain: s0 in [0, 3], s1 in [0, 3], "
                    "s0 - s1 in [2, 2]")
    assert box_groups(one) == parse_map("() -> (2)")


def test_two_results_of_one_group_must_reach_every_pair():
    product = parse_map("()[s0, s1] -> ((s0 + s1 * 3) floordiv 4, (s0 + s1 * 3) mod 4), "
                        "domain: s0 in [0, 2], s1 in [0, 3]")
    assert box_groups(product) == parse_map(
        "()[s0, s1] -> (s0, s1), domain: s0 in [0, 2], s1 in [0, 3]")
    # one variable and no constraint: already as small as a box, left as it is
    alone = parse_map("()[s0] -> (s0 floordiv 4, s0 mod 4), domain: s0 in [0, 11]")
    assert box_groups(alone) is alone
    diagonal = parse_map("()[s0, s1] -> (s0 + s1, s0 + s1), domain: s0 in [0, 2], "
                         "s1 in [0, 2]")
    assert box_groups(diagonal) is diagonal
    # 27 points, 7 * 3 pairs in the box, 15 of them reached
    band = parse_map("()[s0, s1, s2] -> (s0 + s1 + s2, s0), domain: s0 in [0, 2], "
                     "s1 in [0, 2], s2 in [0, 2]")
    assert box_groups(band) is band


def test_windows_that_vary_in_length_gaps_and_large_groups_stay():
    # the window's length alternates with d0's parity: no window of d0 says that
    parity = parse_map("(d0)[s0, s1] -> (s0 + s1), domain: d0 in [0, 3], "
                       "s0 in [0, 2], s1 in [0, 2], d0 mod 2 + s0 in [0, 1]")
    assert box_groups(parity) is parity
    gap = parse_map("()[s0, s1] -> (s0 * s1), domain: s0 in [0, 2], s1 in [0, 2]")
    assert box_groups(gap) is gap
    large = parse_map("()[s0, s1] -> (s0 + s1), domain: s0 in [0, 99], s1 in [0, 99]")
    assert box_groups(large, limit=1000) is large
    assert box_groups(large) == parse_map("()[s0] -> (s0), domain: s0 in [0, 198]")
    empty = parse_map("()[s0, s1] -> (s0 + s1), domain: s0 in [0, 2], s1 in [0, 2], "
                      "s0 + s1 in [7, 9]")
    assert box_groups(empty) is empty


def test_an_existential_group_becomes_the_dims_it_lets_through():
    # padding: kernel row d0 reads some row of the padded input for every output row s0
    every = parse_map("(d0)[s0, s1] -> (d0), domain: d0 in [0, 2], s0 in [0, 7], "
                      "s1 in [0, 2], d0 + s0 + s1 - 2 in [0, 7], s0 + s1 - 1 in [0, 7]")
    assert box_groups(every) == parse_map("(d0) -> (d0), domain: d0 in [0, 2]")
    some = parse_map("(d0)[s0] -> (d0), domain: d0 in [0, 9], s0 in [0, 2], "
                     "d0 + s0 in [3, 5]")
    assert box_groups(some) == parse_map("(d0) -> (d0), domain: d0 in [1, 5]")
    none = parse_map("(d0)[s0] -> (d0), domain: d0 in [0, 9], s0 in [0, 2], "
                     "d0 * 3 + s0 in [40, 50]")
    assert box_groups(none).is_known_empty
    # the points let through are the even ones: not a box, left as it is
    even = parse_map("(d0)[s0] -> (d0), domain: d0 in [0, 9], s0 in [0, 4], "
                     "d0 - s0 * 2 in [0, 0]")
    assert box_groups(even) is even


def test_a_window_over_dims_keeps_one_variable_and_its_clip():
    # a kernel row d0 of a stride-2 conv, then a 3-wide padded window: rows 2*s0 + d0 - 1
    # + s1 - 1 of [0, 15], for output rows s0 in [0, 7]
    m = parse_map("(d0)[s0, s1] -> (s0 * 2 + d0 + s1 - 2), domain: d0 in [0, 2], "
                  "s0 in [0, 7], s1 in [0, 2], s0 * 2 + d0 - 1 in [0, 15], "
                  "s0 * 2 + d0 + s1 - 2 in [0, 15]")
    assert box_groups(m) == parse_map(
        "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 2], s0 in [-2, 14], d0 + s0 in [0, 15]")
    tied = parse_map("(d0)[s0, s1] -> (d0 + s0 + s1), domain: d0 in [0, 3], s0 in [0, 2], "
                     "s1 in [0, 2], s0 + s1 in [0, 3]")
    assert box_groups(tied) == parse_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], "
                                         "s0 in [0, 3]")
    # every kernel row reads every row: the dims drop out of the result
    full = parse_map("(d0)[s0, s1] -> (d0 + s0 + s1), domain: d0 in [0, 2], s0 in [0, 9], "
                     "s1 in [0, 2], d0 + s0 + s1 in [2, 6]")
    assert box_groups(full) == parse_map("(d0)[s0] -> (s0), domain: d0 in [0, 2], "
                                         "s0 in [2, 6]")
    # rows with gaps: left as they are
    gaps = parse_map("(d0)[s0, s1] -> (d0 + s0 * 4 + s1), domain: d0 in [0, 2], "
                     "s0 in [0, 3], s1 in [0, 1]")
    assert box_groups(gaps) is gaps


def test_a_window_read_forwards_becomes_a_variable_and_one_linear_constraint():
    # input row d0 of two stacked stride-2 3-wide windows (padding 1), read forwards: the
    # output rows o with 2*o + k - 1 = d0 for a tap k, then again; each is the range
    # ceil((d0 - lo) / c) .. floor((d0 + hi) / c), clipped
    m = parse_map("(d0)[s0, s1] -> (((d0 - s0 + 1) floordiv 2 - s1 + 1) floordiv 2), "
                  "domain: d0 in [0, 15], s0 in [0, 2], s1 in [0, 2], "
                  "(d0 - s0 + 1) mod 2 in [0, 0], d0 - s0 + 1 in [0, 15], "
                  "((d0 - s0 + 1) floordiv 2 - s1 + 1) mod 2 in [0, 0], "
                  "(d0 - s0 + 1) floordiv 2 - s1 + 1 in [0, 7]")
    boxed = box_groups(m)
    assert boxed == parse_map("(d0)[s0] -> (s0), domain: d0 in [0, 15], s0 in [0, 3], "
                              "s0 * 4 - d0 in [-3, 3]")
    assert _images(boxed, m) == _images(m)
    # a dim under a division whose targets are a window of it
    divided = parse_map("(d0)[s0, s1] -> ((d0 + s0) floordiv 2 + s1), domain: d0 in [0, 2], "
                        "s0 in [0, 3], s1 in [0, 2]")
    assert box_groups(divided) == parse_map(
        "(d0)[s0] -> (s0), domain: d0 in [0, 2], s0 in [0, 4], s0 - d0 in [-1, 3]")
