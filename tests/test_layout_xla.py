"""XLA layouts (symidx.lowering.layouts.xla): the seeds' worked examples, then a brute-force twin.

Golden tests are named after the seed they mirror (000 tiled layout, 001 shapes and layout,
004 the older padded layout). The twin (:func:`naive_buffer`) builds the physical buffer
literally with numpy -- transpose, reshape, pad, reshape, transpose -- and every property
test compares the integer functions with it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from symidx.errors import MapError, ParseError, SymidxError
from symidx.lowering.layouts import xla
from symidx.lowering.layouts.xla import (
    COMBINE,
    XLA_COMBINE_DIMENSION,
    default_minor_to_major,
    format_tiles,
    linear_index,
    logical_index,
    multi_index,
    parse_tiles,
    physical_buffer,
    physical_offset,
    physical_size_bytes,
    physical_size_elements,
    tiled_shape,
)

# ---------------------------------------------------------------------------------------------
# The brute-force twin


def naive_buffer(
    dims: tuple[int, ...],
    minor_to_major: tuple[int, ...],
    tiles: tuple[tuple[int, ...], ...],
    alignment: int = 1,
) -> np.ndarray:
    """The physical buffer as an array of logical row-major element ids, -1 for padding."""
    arr = np.arange(math.prod(dims), dtype=np.int64).reshape(dims)
    arr = arr.transpose(list(reversed(minor_to_major)))  # physical order, major first
    for tile in tiles:
        while arr.ndim < len(tile):
            arr = arr[np.newaxis]
        lead = arr.ndim - len(tile)
        merged, kept, carry = list(arr.shape[:lead]), [], 1
        for d, t in zip(arr.shape[lead:], tile, strict=True):
            if t == COMBINE:
                carry *= d
            else:
                merged.append(carry * d)
                kept.append(t)
                carry = 1
        arr = arr.reshape(merged)
        pads = [(0, 0)] * lead + [(0, -d % t) for d, t in zip(arr.shape[lead:], kept, strict=True)]
        arr = np.pad(arr, pads, constant_values=-1)
        split: list[int] = list(arr.shape[:lead])
        for d, t in zip(arr.shape[lead:], kept, strict=True):
            split += [d // t, t]
        arr = arr.reshape(split)
        outer = [lead + 2 * i for i in range(len(kept))]
        inner = [lead + 2 * i + 1 for i in range(len(kept))]
        arr = arr.transpose(list(range(lead)) + outer + inner)
    flat = arr.reshape(-1)
    return np.concatenate([flat, np.full(-flat.size % alignment, -1, dtype=np.int64)])


def logical_ids(dims: tuple[int, ...]) -> list[tuple[int, ...]]:
    """All logical indices, in row-major order (the ids naive_buffer stores)."""
    return [tuple(int(v) for v in np.unravel_index(i, dims)) for i in range(math.prod(dims))]


# ---------------------------------------------------------------------------------------------
# Seed 000: tiled layout


def test_seed000_figure1_f32_3x5_t2x2_element_2_3_at_17() -> None:
    assert physical_offset((3, 5), (1, 0), [(2, 2)], (2, 3)) == 17


def test_seed000_figure1_tile_index_and_bounds() -> None:
    # tile index (1,1), index in tile (0,1); bounds (2,3) of tiles, (2,2) in a tile
    shape = tiled_shape((3, 5), (1, 0), [(2, 2)])
    assert shape == (2, 3, 2, 2)
    assert np.unravel_index(17, shape) == (1, 1, 0, 1)
    assert physical_size_elements((3, 5), (1, 0), [(2, 2)]) == 24


def test_seed000_figure1_padding_slots_are_none() -> None:
    found = [logical_index((3, 5), (1, 0), [(2, 2)], p) for p in range(24)]
    assert sum(x is None for x in found) == 24 - 15
    assert found[17] == (2, 3)
    # the first tile holds (0,0) (0,1) (1,0) (1,1); the last column's tiles are half padding
    assert found[:4] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert found[8:12] == [(0, 4), None, (1, 4), None]


# Figure 2: a 4x8 array tiled (2,4)(2,1); each number is the element's offset in memory.
SEED000_FIGURE2 = [
    [0, 2, 4, 6, 8, 10, 12, 14],
    [1, 3, 5, 7, 9, 11, 13, 15],
    [16, 18, 20, 22, 24, 26, 28, 30],
    [17, 19, 21, 23, 25, 27, 29, 31],
]


def test_seed000_figure2_4x8_tiles_2x4_2x1() -> None:
    got = [[physical_offset((4, 8), (1, 0), [(2, 4), (2, 1)], (i, j)) for j in range(8)]
           for i in range(4)]
    assert got == SEED000_FIGURE2
    # the second tile re-tiles the (2,4) tile dims: (ceil(4/2), ceil(8/4), 2/2, 4/1, 2, 1)
    assert tiled_shape((4, 8), (1, 0), [(2, 4), (2, 1)]) == (2, 2, 1, 4, 2, 1)


def test_seed000_figure2_each_2x1_tile_is_two_consecutive_slots() -> None:
    for i in (0, 2):
        for j in range(8):
            a = physical_offset((4, 8), (1, 0), [(2, 4), (2, 1)], (i, j))
            assert physical_offset((4, 8), (1, 0), [(2, 4), (2, 1)], (i + 1, j)) == a + 1


COMBINE_DIMS = (2, 7, 8, 11, 10)
COMBINE_TILE = ((COMBINE, COMBINE, 2, COMBINE, 3),)


def test_seed000_combine_f32_2x7x8x11x10_into_112x110_then_2x3() -> None:
    m2m = (4, 3, 2, 1, 0)
    assert tiled_shape(COMBINE_DIMS, m2m, COMBINE_TILE) == tiled_shape((112, 110), (1, 0),
                                                                       [(2, 3)])
    assert tiled_shape(COMBINE_DIMS, m2m, COMBINE_TILE) == (56, 37, 2, 3)
    assert physical_size_elements(COMBINE_DIMS, m2m, COMBINE_TILE) == 112 * 111


def test_seed000_combine_every_element_lands_where_the_112x110_array_puts_it() -> None:
    m2m = (4, 3, 2, 1, 0)
    for e in logical_ids(COMBINE_DIMS):
        row = (e[0] * 7 + e[1]) * 8 + e[2]
        col = e[3] * 10 + e[4]
        want = physical_offset((112, 110), (1, 0), [(2, 3)], (row, col))
        assert physical_offset(COMBINE_DIMS, m2m, COMBINE_TILE, e) == want


def test_seed000_combine_tile_text() -> None:
    assert parse_tiles("T(*,*,2,*,3)") == COMBINE_TILE
    assert format_tiles(COMBINE_TILE) == "T(*,*,2,*,3)"


def test_xla_combine_dimension_value_is_accepted_as_star() -> None:
    tile = ((XLA_COMBINE_DIMENSION, 4),)
    assert tiled_shape((3, 5), (1, 0), tile) == tiled_shape((3, 5), (1, 0), ((COMBINE, 4),))


# ---------------------------------------------------------------------------------------------
# Seed 001: shapes and layout; bf16 T(8,128)(2,1)

BF16_DIMS = (8, 1, 1280, 16384)
BF16_M2M = (3, 2, 0, 1)
BF16_TILES = ((8, 128), (2, 1))


def bf16_expected(e: tuple[int, ...]) -> int:
    """Offset derived by hand: physical order dims (1, 0, 2, 3); 8x128 tiles row-major; in a
    tile, pairs of rows interleaved so two 16-bit values share 32 bits."""
    d0, d1, d2, d3 = e
    tile = 8 * 128
    tiles_per_row = 16384 // 128
    in_tile = (d2 % 8) // 2 * 256 + (d3 % 128) * 2 + d2 % 2
    return (d1 * 8 + d0) * 1280 * 16384 + (d2 // 8 * tiles_per_row + d3 // 128) * tile + in_tile


@pytest.mark.parametrize(
    ("index", "offset"),
    [
        ((0, 0, 0, 0), 0),
        ((0, 0, 1, 0), 1),  # the row below shares a 32-bit word
        ((0, 0, 0, 1), 2),
        ((0, 0, 2, 0), 256),  # next pair of rows: 128 pairs further
        ((0, 0, 0, 128), 1024),  # next 8x128 tile along the row
        ((0, 0, 8, 0), 128 * 1024),  # next row of tiles: 16384 / 128 tiles further
        ((1, 0, 0, 0), 1280 * 16384),  # dim 0 is the most major physical dim but one
        ((7, 0, 1279, 16383), 8 * 1280 * 16384 - 1),
    ],
)
def test_seed001_bf16_8x1x1280x16384_t8x128_2x1(index: tuple[int, ...], offset: int) -> None:
    assert physical_offset(BF16_DIMS, BF16_M2M, BF16_TILES, index) == offset
    assert logical_index(BF16_DIMS, BF16_M2M, BF16_TILES, offset) == index


def test_seed001_bf16_formula_on_a_sample_of_points() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        e = tuple(int(rng.integers(0, d)) for d in BF16_DIMS)
        assert physical_offset(BF16_DIMS, BF16_M2M, BF16_TILES, e) == bf16_expected(e)


def test_seed001_bf16_shape_text_and_sizes() -> None:
    assert parse_tiles("T(8,128)(2,1)") == BF16_TILES
    assert tiled_shape(BF16_DIMS, BF16_M2M, BF16_TILES) == (1, 8, 160, 128, 4, 128, 2, 1)
    assert physical_size_bytes(BF16_DIMS, BF16_M2M, BF16_TILES, 16) == 8 * 1280 * 16384 * 2
    # the fusion example: bf16[32,32,4096]{2,1,0:T(8,128)(2,1)} needs no padding either
    assert physical_size_bytes((32, 32, 4096), (2, 1, 0), BF16_TILES, 16) == 32 * 32 * 4096 * 2


def test_seed001_minor_to_major_2x3() -> None:
    assert physical_buffer("abcdef", (2, 3), (0, 1)) == list("adbecf")
    assert physical_buffer("abcdef", (2, 3), (1, 0)) == list("abcdef")
    assert linear_index((2, 3), (0, 1), (0, 1)) == 2
    assert multi_index((2, 3), (0, 1), 2) == (0, 1)
    assert default_minor_to_major(3) == (2, 1, 0)


def test_seed001_tail_padding_alignment() -> None:
    # tiling first (3x5 -> 24 slots), then padding to a multiple of the alignment
    assert physical_size_elements((3, 5), (1, 0), [(2, 2)],
                                  tail_padding_alignment_in_elements=16) == 32
    assert logical_index((3, 5), (1, 0), [(2, 2)], 30,
                         tail_padding_alignment_in_elements=16) is None
    buffer = physical_buffer(range(15), (3, 5), (1, 0), [(2, 2)],
                             tail_padding_alignment_in_elements=16)
    assert len(buffer) == 32 and buffer[17] == 13 and buffer[24:] == [None] * 8


# ---------------------------------------------------------------------------------------------
# Seed 004: padded_dimensions / padding_value


def test_seed004_padded_dimensions_3x5_column_major() -> None:
    buffer = physical_buffer("abcdef", (2, 3), (0, 1), padded_dimensions=(3, 5),
                             padding_value="0")
    assert " ".join(str(v) for v in buffer) == "a d 0 b e 0 c f 0 0 0 0 0 0 0"


def test_seed004_same_as_the_3x5_array_with_zeros() -> None:
    padded = "abc00" "def00" "00000"
    assert physical_buffer(padded, (3, 5), (0, 1)) == physical_buffer(
        "abcdef", (2, 3), (0, 1), padded_dimensions=(3, 5), padding_value="0")


def test_seed004_padded_offsets_and_inverse() -> None:
    padded = (3, 5)
    assert physical_offset((2, 3), (0, 1), (), (1, 2), padded_dimensions=padded) == 7
    assert logical_index((2, 3), (0, 1), (), 7, padded_dimensions=padded) == (1, 2)
    assert logical_index((2, 3), (0, 1), (), 2, padded_dimensions=padded) is None
    assert physical_size_elements((2, 3), (0, 1), padded_dimensions=padded) == 15


# ---------------------------------------------------------------------------------------------
# Sizes, sub-byte types, shapes shorter than their tile


def test_sub_byte_elements_are_packed() -> None:
    assert physical_size_bytes((3,), (0,), (), 4) == 2
    assert physical_size_bytes((5, 3), (1, 0), (), 4) == 8  # 15 nibbles
    assert physical_size_bytes((5, 3), (1, 0), [(2, 4)], 4) == 12  # 6 x 4 slots
    assert physical_size_bytes((7,), (0,), (), 2) == 2
    assert physical_size_bytes((3,), (0,), (), 8) == 3


def test_tile_longer_than_shape_gets_leading_size_one_dims() -> None:
    # f32[5] T(2,4): treated as [1,5], padded to [2,8] (as XLA's ShapeUtil::ArraySize does)
    assert tiled_shape((5,), (0,), [(2, 4)]) == (1, 2, 2, 4)
    assert physical_size_elements((5,), (0,), [(2, 4)]) == 16
    assert [physical_offset((5,), (0,), [(2, 4)], (i,)) for i in range(5)] == [0, 1, 2, 3, 8]


def test_tile_shorter_than_shape_keeps_major_dims() -> None:
    assert tiled_shape((3, 4, 5), (2, 1, 0), [(4,)]) == (3, 4, 2, 4)
    assert tiled_shape((3, 4, 5), (0, 1, 2), [(4,)]) == (5, 4, 1, 4)


def test_untiled_offset_is_linear_index() -> None:
    for e in logical_ids((2, 3, 4)):
        assert physical_offset((2, 3, 4), (0, 2, 1), (), e) == linear_index((2, 3, 4),
                                                                               (0, 2, 1), e)


def test_zero_sized_dimension() -> None:
    assert physical_size_elements((0, 5), (1, 0), [(2, 2)]) == 0
    assert tiled_shape((0, 5), (1, 0), [(2, 2)]) == (0, 3, 2, 2)


def test_module_exports_what_it_documents() -> None:
    assert set(xla.__all__) <= set(dir(xla))


# ---------------------------------------------------------------------------------------------
# Invalid input


def test_parse_tiles_errors_point_at_the_spot() -> None:
    with pytest.raises(ParseError, match="expected a tile size") as err:
        parse_tiles("T(8,x)")
    assert err.value.column == 5
    with pytest.raises(ParseError, match=r"needs a more-minor dimension") as err:
        parse_tiles("T(8,128)(2,*)")
    assert err.value.column == 9
    with pytest.raises(ParseError, match="positive"):
        parse_tiles("(0,1)")
    with pytest.raises(ParseError, match="expected '\\('"):
        parse_tiles("T(2,2)x")
    with pytest.raises(ParseError, match="at least one tile"):
        parse_tiles("T")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: linear_index((2, 3), (0, 0), (0, 0)), "not a permutation"),
        (lambda: linear_index((2, 3), (1, 0), (2, 0)), "out of bounds"),
        (lambda: linear_index((2, 3), (1, 0), (0,)), "rank"),
        (lambda: multi_index((2, 3), (1, 0), 6), "out of bounds"),
        (lambda: physical_offset((4,), (0,), [(2, COMBINE)], (0,)), "more-minor"),
        (lambda: physical_offset((4,), (0,), [(0,)], (0,)), "positive"),
        (lambda: physical_offset((4,), (0,), [()], (0,)), "at least one"),
        (lambda: logical_index((3, 5), (1, 0), [(2, 2)], 24), "outside the buffer"),
        (lambda: physical_offset((2, 3), (1, 0), (), (0, 0), padded_dimensions=(1, 3)),
         "smaller"),
        (lambda: physical_size_elements((2,), (0,), tail_padding_alignment_in_elements=0),
         ">= 1"),
        (lambda: physical_size_bytes((2,), (0,), (), 0), ">= 1"),
        (lambda: physical_buffer("abc", (2, 2), (1, 0)), "3 values"),
    ],
)
def test_invalid_arguments_raise_map_error(call: object, message: str) -> None:
    with pytest.raises(MapError, match=message) as err:
        call()  # type: ignore[operator]
    assert isinstance(err.value, SymidxError)


# ---------------------------------------------------------------------------------------------
# Properties against the twin


@st.composite
def tiled_layouts(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], tuple, int]:
    rank = draw(st.integers(1, 4))
    dims = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    m2m = tuple(draw(st.permutations(range(rank))))
    tiles = []
    for _ in range(draw(st.integers(0, 2))):
        length = draw(st.integers(1, rank + 1))
        tile = [draw(st.one_of(st.integers(1, 4), st.just(COMBINE))) for _ in range(length)]
        tile[-1] = draw(st.integers(1, 4))
        tiles.append(tuple(tile))
    alignment = draw(st.sampled_from([1, 1, 2, 3, 8]))
    return dims, m2m, tuple(tiles), alignment


@settings(max_examples=200, deadline=None)
@given(tiled_layouts())
def test_offsets_match_the_numpy_twin(case: tuple) -> None:
    dims, m2m, tiles, alignment = case
    buffer = naive_buffer(dims, m2m, tiles, alignment)
    size = physical_size_elements(dims, m2m, tiles,
                                  tail_padding_alignment_in_elements=alignment)
    assert size == buffer.size
    assert size == math.prod(tiled_shape(dims, m2m, tiles)) + (-math.prod(
        tiled_shape(dims, m2m, tiles)) % alignment)
    for element_id, e in enumerate(logical_ids(dims)):
        assert buffer[physical_offset(dims, m2m, tiles, e)] == element_id
    for p in range(size):
        found = logical_index(dims, m2m, tiles, p, tail_padding_alignment_in_elements=alignment)
        want = None if buffer[p] < 0 else tuple(int(v) for v in np.unravel_index(buffer[p], dims))
        assert found == want


@settings(max_examples=200, deadline=None)
@given(tiled_layouts())
def test_offsets_are_injective_in_bounds_and_inverted(case: tuple) -> None:
    dims, m2m, tiles, _ = case
    size = physical_size_elements(dims, m2m, tiles)
    offsets = [physical_offset(dims, m2m, tiles, e) for e in logical_ids(dims)]
    assert len(set(offsets)) == len(offsets)
    assert all(0 <= p < size for p in offsets)
    for e, p in zip(logical_ids(dims), offsets, strict=True):
        assert logical_index(dims, m2m, tiles, p) == e
    assert sum(logical_index(dims, m2m, tiles, p) is None for p in range(size)) == (
        size - math.prod(dims))


@settings(max_examples=200, deadline=None)
@given(tiled_layouts())
def test_linear_and_multi_index_are_inverse(case: tuple) -> None:
    dims, m2m, _, _ = case
    seen = set()
    for e in logical_ids(dims):
        p = linear_index(dims, m2m, e)
        assert multi_index(dims, m2m, p) == e
        seen.add(p)
    assert seen == set(range(math.prod(dims)))


@settings(max_examples=100, deadline=None)
@given(tiled_layouts())
def test_one_tile_size_matches_xla_array_size(case: tuple) -> None:
    """XLA's ShapeUtil::ArraySize: round each tiled physical dim up to its tile size."""
    dims, m2m, tiles, _ = case
    tile = tiles[0] if tiles else (1,)
    assume(COMBINE not in tile)  # ArraySize knows no '*'
    physical = [dims[d] for d in reversed(m2m)]
    physical = [1] * max(0, len(tile) - len(physical)) + physical
    lead = len(physical) - len(tile)
    want = math.prod(physical[:lead]) * math.prod(
        -(-d // t) * t for d, t in zip(physical[lead:], tile, strict=True))
    assert physical_size_elements(dims, m2m, [tile]) == want


@settings(max_examples=100, deadline=None)
@given(tiled_layouts())
def test_tile_text_round_trips(case: tuple) -> None:
    _, _, tiles, _ = case
    if tiles:
        assert parse_tiles(format_tiles(tiles)) == tiles
