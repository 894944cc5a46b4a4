"""Layouts as indexing maps agree with the integer functions, point by point."""

from __future__ import annotations

import itertools
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from symidx.layout import cute, xla
from symidx.layout.maps import (
    cute_map,
    xla_logical_index_map,
    xla_offset_map,
    xla_physical_index_map,
)
from symidx.syntax import print_map


def test_seed_tiled_example_as_a_map():
    m = xla_offset_map((3, 5), (1, 0), [(2, 2)])
    assert m.evaluate((2, 3)) == (17,)  # seed 000, figure 1
    assert print_map(m, "xla") == (
        "(d0, d1) -> ((d0 mod 2) * 2 + (d0 / 2) * 12 + (d1 / 2) * 4 + d1 mod 2), "
        "domain: d0 in [0, 2], d1 in [0, 4]")


def test_untiled_layouts_are_permutations():
    m = xla_physical_index_map((2, 3, 4), (0, 1, 2))
    assert print_map(m, "xla") == ("(d0, d1, d2) -> (d2, d1, d0), domain: d0 in [0, 1], "
                                   "d1 in [0, 2], d2 in [0, 3]")
    assert xla_offset_map((2, 3), (0, 1)).evaluate((1, 0)) == (1,)


@st.composite
def layouts(draw):
    rank = draw(st.integers(1, 3))
    dims = tuple(draw(st.integers(1, 6)) for _ in range(rank))
    m2m = tuple(draw(st.permutations(range(rank))))
    tiles = []
    for _ in range(draw(st.integers(0, 2))):
        k = draw(st.integers(1, 3))
        # -1 is `*`: combine with the next more-minor dimension (never the last entry)
        tile = [draw(st.sampled_from([1, 2, 3, 4, xla.COMBINE])) for _ in range(k - 1)]
        tiles.append(tuple(tile) + (draw(st.sampled_from([1, 2, 3, 4])),))
    return dims, m2m, tuple(tiles)


@settings(max_examples=120)
@given(layouts())
def test_xla_maps_match_the_integer_functions(layout):
    dims, m2m, tiles = layout
    offsets = xla_offset_map(dims, m2m, tiles)
    physical = xla_physical_index_map(dims, m2m, tiles)
    back = xla_logical_index_map(dims, m2m, tiles)
    final = xla.tiled_shape(dims, m2m, tiles)
    seen = set()
    for index in itertools.product(*(range(n) for n in dims)):
        offset = xla.physical_offset(dims, m2m, tiles, index)
        assert offsets.evaluate(index) == (offset,)
        p = physical.evaluate(index)
        assert xla._row_major_offset(final, p) == offset
        assert back.image(p) == {index}
        seen.add(offset)
    assert len(seen) == math.prod(dims)  # injective
    for p in itertools.product(*(range(n) for n in final)):
        logical = xla.logical_index(dims, m2m, tiles, xla._row_major_offset(final, p))
        assert back.image(p) == (set() if logical is None else {logical})


def test_cute_map_matches_crd2offset():
    layout = cute.parse_layout("((4,2),(4,3)):((4,16),(1,32))")
    m = cute_map(layout)
    assert m.evaluate((1, 5)) == (37,)  # the TLA seed's crd2offset example
    for i, j in itertools.product(range(8), range(12)):
        assert m.evaluate((i, j)) == (layout(i, j),)
