"""The exact merges of :mod:`symidx.core.simplify.merge`, checked against brute force: the image
of every source index (the set of targets) is the same before and after."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from symidx.core.expr import FloorDiv, Mod, dim, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.simplify.merge import (
    merge_constant_offsets,
    merge_contiguous_sums,
    merge_offset_pieces,
)
from symidx.core.syntax import parse_map


def _images(m: IndexingMap) -> list[set[tuple[int, ...]]]:
    return [m.image((d,)) for d in range(m.dims[0].lo, m.dims[0].hi + 1)]


@st.composite
def window_maps(draw):
    """Maps of one dim whose range variables meet in sums (windows of stacked ops), with
    a coefficient picked so that some merges apply and some do not; some results divide
    or take a remainder of the sum, some constraints mention the variables."""
    nr = draw(st.integers(2, 3))
    ranges = [Interval(lo, lo + draw(st.integers(0, 3)))
              for lo in draw(st.lists(st.integers(-1, 1), min_size=nr, max_size=nr))]
    coeffs = draw(st.lists(st.sampled_from([1, 1, 2, 3, -1, -2, 4]), min_size=nr,
                           max_size=nr))
    scale = draw(st.sampled_from([1, 2, -1]))
    window = sum(scale * c * sym(i) for i, c in enumerate(coeffs))
    base = draw(st.sampled_from([1, 2])) * dim(0) + window
    results = [base]
    extra = draw(st.sampled_from(["none", "floordiv", "mod", "lone", "product"]))
    if extra == "floordiv":
        results.append(FloorDiv(base + 7, 2))
    elif extra == "mod":
        results.append(Mod(window, 3))
    elif extra == "lone":
        results.append(sym(nr - 1))
    elif extra == "product":
        results.append(sym(0) * sym(1))
    constraints = []
    kind = draw(st.sampled_from(["none", "sum", "one"]))
    if kind == "sum":
        constraints.append((window + dim(0), Interval(draw(st.integers(-2, 3)),
                                                      draw(st.integers(3, 9)))))
    elif kind == "one":
        constraints.append((sym(0) + dim(0), Interval(0, draw(st.integers(1, 4)))))
    return IndexingMap.create([Interval(0, 3)], results, ranges, (), constraints)


@given(window_maps(), st.booleans())
def test_merge_contiguous_sums_keeps_every_image(m, overlapping):
    merged, removed = merge_contiguous_sums(m, overlapping)
    assert merged.num_ranges == m.num_ranges - len(removed)
    assert _images(merged) == _images(m)


def test_overlapping_merges_leave_mixed_radix_numbers():
    flat = parse_map("(d0)[s0, s1] -> (d0 + s0 + s1 * 3), "
                     "domain: d0 in [0, 9], s0 in [0, 2], s1 in [0, 2]")
    assert merge_contiguous_sums(flat, overlapping=True) == (flat, [])
    assert merge_contiguous_sums(flat)[1] == [1]


def test_merge_contiguous_sums_on_windows():
    m = parse_map("(d0)[s0, s1, s2] -> (d0 + s0 + s1 + s2), "
                  "domain: d0 in [0, 9], s0 in [0, 2], s1 in [0, 2], s2 in [0, 2]")
    merged, removed = merge_contiguous_sums(m)
    assert merged == parse_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 9], s0 in [0, 6]")
    assert removed == [1, 2]
    # mixed radix: s0 + 3*s1 with s0 in [0, 2] is a bijection onto [0, 8]
    m = parse_map("(d0)[s0, s1] -> (d0 + s0 + s1 * 3), "
                  "domain: d0 in [0, 9], s0 in [0, 2], s1 in [0, 2]")
    assert merge_contiguous_sums(m)[0] == parse_map(
        "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 9], s0 in [0, 8]")


def test_merge_contiguous_sums_refuses_gaps_and_other_uses():
    # s0 + 4*s1 with s0 in [0, 2] skips 3, 7: not merged
    gap = parse_map("(d0)[s0, s1] -> (d0 + s0 + s1 * 4), "
                    "domain: d0 in [0, 9], s0 in [0, 2], s1 in [0, 2]")
    assert merge_contiguous_sums(gap) == (gap, [])
    # s0 alone in a constraint: the sum is not the only use
    alone = parse_map("(d0)[s0, s1] -> (d0 + s0 + s1), "
                      "domain: d0 in [0, 9], s0 in [0, 2], s1 in [0, 2], d0 + s0 in [0, 5]")
    assert merge_contiguous_sums(alone) == (alone, [])


@st.composite
def offset_groups(draw):
    """A few maps equal but for constants in their results."""
    nr = draw(st.integers(0, 1))
    base = [dim(0) * draw(st.sampled_from([1, 2])), dim(0) + (sym(0) if nr else 0)]
    offsets = draw(st.lists(st.tuples(st.integers(-2, 3), st.integers(0, 3)), min_size=1,
                            max_size=8, unique=True))
    return [IndexingMap.create([Interval(0, 3)], [base[0] + a, base[1] + b],
                               [Interval(0, 1)] * nr) for a, b in offsets]


@given(offset_groups())
def test_merge_constant_offsets_keeps_the_union(maps):
    groups = merge_constant_offsets(maps)
    assert sorted(i for _, members in groups for i in members) == list(range(len(maps)))
    for d in range(4):
        union = set().union(*(m.image((d,)) for m in maps))
        assert set().union(*(m.image((d,)) for m, _ in groups)) == union
        for m, members in groups:  # each merged map reaches exactly what its members do
            assert m.image((d,)) == set().union(*(maps[i].image((d,)) for i in members))


def test_merge_constant_offsets_on_a_window():
    maps = [parse_map(f"(d0) -> (d0 + {k}), domain: d0 in [0, 9]") for k in range(3)]
    [(merged, members)] = merge_constant_offsets(maps)
    assert merged == parse_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 9], s0 in [0, 2]")
    assert members == [0, 1, 2]
    grid = [parse_map(f"(d0) -> (d0 + {a}, {b}), domain: d0 in [0, 9]")
            for a in range(3) for b in (0, 2, 4)]
    [(merged, _)] = merge_constant_offsets(grid)
    assert merged.num_ranges == 2
    # offsets 0, 1, 5: the run 0, 1 merges, 5 stays apart
    apart = [parse_map(f"(d0) -> (d0 + {k}), domain: d0 in [0, 9]") for k in (0, 1, 5)]
    assert sorted(len(ms) for _, ms in merge_constant_offsets(apart)) == [1, 2]


@st.composite
def offset_pieces(draw):
    """Maps of two dims equal but for a constant in one result and for the intervals of
    their dims: some in a progression whose bounds move in step with the offset (one run or
    two interleaved), some anywhere."""
    nr = draw(st.integers(0, 1))
    extra = sym(0) if nr else 0
    rest = draw(st.sampled_from([dim(1) + extra, dim(0) + 2 * dim(1), extra, dim(0) * 0]))
    other = draw(st.sampled_from([dim(0), dim(1) + 1, 0]))
    constraints = draw(st.sampled_from([[], [(dim(0) + dim(1), Interval(1, 6))]]))
    pieces: list[tuple[int, tuple[Interval, Interval]]] = []
    for _ in range(draw(st.integers(1, 2))):  # progressions
        n = draw(st.integers(1, 5))
        g = draw(st.integers(1, 3))
        o0 = draw(st.integers(-3, 2))
        bounds = []
        for _ in range(2):
            lo, a = draw(st.integers(0, 2)), draw(st.integers(-1, 1))
            hi, b = lo + draw(st.integers(0, 3)), draw(st.integers(-1, 1))
            bounds.append((lo, a, hi, b))
        for t in range(n):
            dims = tuple(Interval(lo + a * t, hi + b * t) for lo, a, hi, b in bounds)
            pieces.append((o0 + g * t, dims))
    for _ in range(draw(st.integers(0, 3))):  # strays
        lo0, lo1 = draw(st.integers(-1, 3)), draw(st.integers(-1, 3))
        pieces.append((draw(st.integers(-3, 8)),
                       (Interval(lo0, lo0 + draw(st.integers(0, 3))),
                        Interval(lo1, lo1 + draw(st.integers(0, 3))))))
    maps = [IndexingMap.create(dims, [rest + offset, other], [Interval(0, 1)] * nr, (),
                               constraints) for offset, dims in pieces]
    return list(dict.fromkeys(m for m in maps if not m.is_known_empty))


@given(offset_pieces())
def test_merge_offset_pieces_keeps_the_union(maps):
    groups = merge_offset_pieces(maps)
    assert sorted(i for _, members in groups for i in members) == list(range(len(maps)))
    for d0 in range(-4, 9):
        for d1 in range(-4, 9):
            union = set().union(*(m.image((d0, d1)) for m in maps))
            assert set().union(*(m.image((d0, d1)) for m, _ in groups)) == union
            for m, members in groups:  # each merged map reaches exactly what its members do
                assert m.image((d0, d1)) == set().union(*(maps[i].image((d0, d1))
                                                          for i in members))


def test_merge_offset_pieces_on_a_scan():
    # a loop reading input row k for output rows k .. 9: one map, the row a variable
    # no later than the output row
    rows = [parse_map(f"(d0, d1) -> ({k}, d1), domain: d0 in [{k}, 9], d1 in [0, 3]")
            for k in range(10)]
    [(merged, members)] = merge_offset_pieces(rows)
    assert members == list(range(10))
    assert merged == parse_map("(d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 9], "
                               "d1 in [0, 3], s0 in [0, 9], d0 - s0 in [0, 9]")
    # its mirror (input-to-output): input rows 0 .. k reach output row k
    rows = [parse_map(f"(d0) -> ({k}), domain: d0 in [0, {k}]") for k in range(10)]
    [(merged, _)] = merge_offset_pieces(rows)
    assert merged == parse_map("(d0)[s0] -> (s0), domain: d0 in [0, 9], s0 in [0, 9], "
                               "d0 - s0 in [-9, 0]")
    # fixed intervals: what merge_constant_offsets does
    same = [parse_map(f"(d0) -> (d0 + {k}), domain: d0 in [0, 9]") for k in range(3)]
    assert [m for m, _ in merge_offset_pieces(same)] == \
        [m for m, _ in merge_constant_offsets(same)]
    # a piece out of step stays apart
    apart = rows[:3] + [parse_map("(d0) -> (3), domain: d0 in [0, 5]")]
    assert sorted(len(ms) for _, ms in merge_offset_pieces(apart)) == [1, 3]


def test_every_merge_rule_is_documented_in_the_merges_table():
    from pathlib import Path

    from symidx.core.simplify.merge import MERGE_RULES

    doc = (Path(__file__).resolve().parent.parent / "docs" / "simplifier.md").read_text()
    table = doc[doc.index("## Merges"):]
    for name, fn in MERGE_RULES.items():
        assert f"| `{name}`" in table and f"`{fn.__name__}`" in table, name


def test_has_window_sum_finds_windows_and_leaves_reshapes():
    from symidx.core.simplify.merge import has_window_sum

    window = parse_map("(d0)[s0, s1] -> (d0 * 2 + s0 + s1 - 1), "
                       "domain: d0 in [0, 9], s0 in [0, 2], s1 in [0, 2]")
    assert has_window_sum(window) and merge_contiguous_sums(window)[1] == [1]
    # a mixed-radix sum under a division: mergeable, but a reshape, not a window
    reshape = parse_map("(d0)[s0, s1] -> ((s0 + s1 * 4) floordiv 2, d0), "
                        "domain: d0 in [0, 9], s0 in [0, 3], s1 in [0, 2]")
    assert not has_window_sum(reshape) and merge_contiguous_sums(reshape)[1] == [1]
    one = parse_map("(d0)[s0, s1] -> (d0 + s0, s1), domain: d0 in [0, 9], s0 in [0, 2], "
                    "s1 in [0, 2]")
    assert not has_window_sum(one)
