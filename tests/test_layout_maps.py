"""Layouts as indexing maps agree with the integer functions, point by point."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_layout_cute import layouts as cute_layouts

from symidx.core.indexing_map import IndexingMap
from symidx.core.simplify import compose, simplify
from symidx.core.syntax import parse_map, print_map
from symidx.core.verify import equal
from symidx.errors import MapError
from symidx.layout import cute
from symidx.layout.maps import (
    cute_from_map,
    cute_map,
    row_major_reshape_map,
    xla_logical_index_map,
    xla_offset_map,
    xla_offset_to_logical_map,
    xla_physical_index_map,
)
from symidx.lowering.layouts import xla
from symidx.ops.shape_ops import transpose_operand_map


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


# ---------------------------------------------------------------------------------------------
# CuTe layouts from maps, and composing the two kinds of layout with each other and with ops

ZN = cute.parse_layout("((4,2),(4,3)):((4,16),(1,32))")


def test_xla_4x4_tiles_are_the_ascend_zz_and_nn_formats() -> None:
    zz = cute.fractal_layout("zZ", 8, 12, elems_per_c0=4, c0_per_fractal=4)
    nn = cute.fractal_layout("nN", 8, 12, elems_per_c0=4, c0_per_fractal=4)
    assert cute_from_map(xla_offset_map((8, 12), (1, 0), [(4, 4)])) == zz
    assert cute_from_map(xla_offset_map((8, 12), (0, 1), [(4, 4)])) == nn
    assert equal(xla_offset_map((8, 12), (1, 0), [(4, 4)]), cute_map(zz))


def test_cute_from_map_reads_back_the_seed_zn_layout() -> None:
    # rows 0..7 step by 4 across the two fractals: mode 0 coalesces to 8:4
    assert cute_from_map(cute_map(ZN)) == cute.coalesce(ZN, (1, 1))
    assert str(cute_from_map(cute_map(ZN))) == "(8,(4,3)):(4,(1,32))"
    assert str(cute_from_map(xla_offset_map((6,)))) == "6:1"


@settings(max_examples=100, deadline=None)
@given(cute_layouts())
def test_cute_from_map_computes_the_same_offsets(layout: cute.Layout) -> None:
    m = cute_map(layout)
    back = cute_from_map(m)
    assert cute_map(back).dims == m.dims
    for point in itertools.product(*(range(b.hi + 1) for b in m.dims)):
        assert cute_map(back).evaluate(point) == m.evaluate(point)


@pytest.mark.parametrize(("text", "message"), [
    ("(d0, d1) -> (d0 * d1), domain: d0 in [0, 3], d1 in [0, 3]", "mixes dimensions"),
    ("(d0) -> (d0 + 1), domain: d0 in [0, 3]", "not a shape:stride layout"),
    ("(d0) -> (d0 mod 3), domain: d0 in [0, 3]", "not a shape:stride layout"),
    ("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1]", "no symbols"),
    ("(d0) -> (d0, d0), domain: d0 in [0, 3]", "one result"),
    ("(d0) -> (d0), domain: d0 in [1, 3]", "start at 0"),
])
def test_cute_from_map_rejects_maps_that_are_not_layouts(text: str, message: str) -> None:
    with pytest.raises(MapError, match=message):
        cute_from_map(parse_map(text))


def test_transpose_composed_with_the_zn_layout_of_its_operand() -> None:
    """Output index of a transpose -> offset in its operand's zN buffer."""
    op = transpose_operand_map((12, 8), (1, 0))  # f32[12,8] = transpose(f32[8,12])
    m = simplify(compose(op, cute_map(ZN)))
    for j, i in itertools.product(range(12), range(8)):
        assert m.evaluate((j, i)) == (ZN(i, j),)
    assert str(cute_from_map(m)) == "((4,3),8):((1,32),4)"


def test_copy_from_an_xla_tiled_buffer_into_a_zn_buffer() -> None:
    """XLA offset -> zN offset of the same element: the inverse XLA layout, then CuTe's."""
    m = simplify(compose(xla_offset_to_logical_map((8, 12), (1, 0), [(2, 8)]), cute_map(ZN)))
    for p in range(math.prod(xla.tiled_shape((8, 12), (1, 0), [(2, 8)]))):
        logical = xla.logical_index((8, 12), (1, 0), [(2, 8)], p)
        assert m.image((p,)) == (set() if logical is None else {(ZN(*logical),)})


def test_row_major_reshape_map() -> None:
    assert print_map(row_major_reshape_map((2, 6), (3, 4)), "xla") == (
        "(d0, d1) -> ((d0 * 6 + d1) / 4, (d0 * 6 + d1) mod 4), domain: d0 in [0, 1], "
        "d1 in [0, 5]")
    assert row_major_reshape_map((2, 3), (2, 3)) == IndexingMap.identity((2, 3))
    shorter = row_major_reshape_map((8,), (2, 3))
    assert shorter.image((5,)) == {(1, 2)} and shorter.image((6,)) == set()
