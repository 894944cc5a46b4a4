"""XLA layouts of HLO shapes (symidx.lowering.layouts.shapes): the seeds' numbers from shape
text, sizes and memory spaces, and for random shapes, layouts and tiles the indexing maps, the
integer functions and the numpy twin of test_layout_xla (brute force) agree point by point. Also the
layers built on them: bitcasts between tiled layouts and ``--physical`` maps of tiled shapes.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_layout_xla import SEED000_FIGURE2, naive_buffer

from symidx.analysis import instruction_maps
from symidx.core.syntax import print_map
from symidx.errors import MapError, ParseError, UnsupportedOpError
from symidx.hlo import Shape, parse_hlo, parse_shape
from symidx.lowering.layouts import shapes, xla
from symidx.lowering.layouts.shapes import (
    block_offset_map,
    element_size_in_bits,
    logical_index,
    logical_index_map,
    memory_space_name,
    offset_map,
    offset_to_logical_map,
    physical_index_map,
    physical_offset,
    physical_shape,
    reinterpret_map,
    size_in_bytes,
    size_in_elements,
)
from symidx.ops import output_to_input


def shape_text(dims, m2m, tiles=(), alignment=1, dtype="f32") -> str:
    fields = xla.format_tiles(tiles) + (f"L({alignment})" if alignment != 1 else "")
    body = ",".join(map(str, m2m)) + (":" + fields if fields else "")
    return f"{dtype}[{','.join(map(str, dims))}]{{{body}}}"


def box(dims):
    return itertools.product(*(range(n) for n in dims))


# ---------------------------------------------------------------------------------------------
# The seeds, from shape text


def test_seed000_figure1_from_shape_text() -> None:
    text = "f32[3,5]{1,0:T(2,2)}"
    assert physical_offset(text, (2, 3)) == 17
    assert offset_map(text).evaluate((2, 3)) == (17,)
    assert physical_shape(text) == (2, 3, 2, 2)
    assert (size_in_elements(text), size_in_bytes(text)) == (24, 96)
    assert logical_index(text, 17) == (2, 3) and logical_index(text, 9) is None


def test_seed000_figure2_from_shape_text() -> None:
    m = offset_map("f32[4,8]{1,0:T(2,4)(2,1)}")
    assert [[m.evaluate((i, j))[0] for j in range(8)] for i in range(4)] == SEED000_FIGURE2


def test_seed000_combined_dims_are_the_112x110_array_tiled_2x3() -> None:
    combined = "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}"
    flat = "f32[112,110]{1,0:T(2,3)}"
    assert physical_shape(combined) == physical_shape(flat) == (56, 37, 2, 3)
    assert size_in_elements(combined) == size_in_elements(flat) == 112 * 111
    m = offset_map(combined)
    for e in [(0, 0, 0, 0, 0), (1, 6, 7, 10, 9), (0, 3, 5, 2, 7), (1, 0, 1, 10, 0)]:
        row, col = (e[0] * 7 + e[1]) * 8 + e[2], e[3] * 10 + e[4]
        assert physical_offset(combined, e) == physical_offset(flat, (row, col))
        assert m.evaluate(e) == (physical_offset(flat, (row, col)),)


def test_seed001_bf16_tiles_8x128_2x1_in_vmem() -> None:
    text = "bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)S(1)}"
    assert physical_shape(text) == (1, 8, 160, 128, 4, 128, 2, 1)
    assert size_in_bytes(text) == 8 * 1280 * 16384 * 2
    assert physical_offset(text, (0, 0, 1, 0)) == 1  # two 16-bit rows share 32 bits
    assert physical_offset(text, (0, 0, 0, 1)) == 2
    assert offset_map(text).evaluate((7, 0, 1279, 16383)) == (8 * 1280 * 16384 - 1,)
    shape = parse_shape(text)
    assert isinstance(shape, Shape) and shape.layout is not None
    assert memory_space_name(shape.layout.memory_space) == "VMEM"


def test_seed001_memory_spaces() -> None:
    assert memory_space_name(0) == "device HBM"
    assert memory_space_name(1) == "VMEM"
    assert memory_space_name(5) == "host memory"
    assert memory_space_name(2) == "device-specific memory space 2"
    with pytest.raises(MapError, match="non-negative"):
        memory_space_name(-1)


def test_seed001_minor_to_major_and_tail_padding() -> None:
    assert [physical_offset("f32[2,3]{0,1}", e) for e in box((2, 3))] == [0, 2, 4, 1, 3, 5]
    assert size_in_elements("f32[3,5]{1,0:T(2,2)L(16)}") == 32
    assert logical_index("f32[3,5]{1,0:T(2,2)L(16)}", 30) is None


def test_element_sizes_and_sub_byte_packing() -> None:
    assert element_size_in_bits("s4[3]") == 8  # unpacked: one byte each, as XLA
    assert (size_in_bytes("s4[3]"), size_in_bytes("s4[3]{0:E(4)}")) == (3, 2)
    assert size_in_bytes("pred[5]") == 5
    assert size_in_bytes("u2[8,3]{1,0:T(4)E(2)}") == 8  # 8 x 4 slots of 2 bits
    assert size_in_bytes("f32[]") == 4
    assert size_in_bytes("token[]") == 0


def test_bounded_dynamic_dims_are_laid_out_at_their_bound() -> None:
    assert physical_offset("f32[<=4,3]{0,1}", (3, 2)) == 11
    assert size_in_elements("f32[<=4,3]") == 12


@pytest.mark.parametrize(("text", "message"), [
    ("(f32[2], s32[2])", "not the tuple"),
    ("f32[?,3]", "unbounded dynamic dimension"),
    ("f32[2,3]{}", "does not order its 2 dimensions"),
])
def test_shapes_without_a_layout_size_are_errors(text: str, message: str) -> None:
    with pytest.raises(MapError, match=message):
        size_in_elements(text)


def test_shape_text_errors_carry_the_position() -> None:
    with pytest.raises(ParseError) as err:
        offset_map("f32[3,5]{1,0:T(2,x)}")
    assert err.value.column == 18


def test_block_offset_map_is_the_offset_map_on_a_block() -> None:
    m = block_offset_map("f32[4,8]{1,0:T(2,4)}", (2, 6))
    assert print_map(m, "xla") == (
        "(d0, d1) -> ((d1 / 4) * 8 + d0 * 4 + d1 mod 4), domain: d0 in [0, 1], d1 in [0, 5]")
    with pytest.raises(MapError, match="one size per dim"):
        block_offset_map("f32[4,8]", (5, 1))


# ---------------------------------------------------------------------------------------------
# Random shapes, layouts and tiles: map == integer function == brute force


@st.composite
def tiled_shapes(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], tuple, int]:
    rank = draw(st.integers(1, 3))
    dims = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    m2m = tuple(draw(st.permutations(range(rank))))
    tiles = []
    for _ in range(draw(st.integers(0, 2))):
        length = draw(st.integers(1, rank + 1))
        tile = [draw(st.one_of(st.integers(1, 4), st.just(xla.COMBINE))) for _ in range(length)]
        tile[-1] = draw(st.integers(1, 4))
        tiles.append(tuple(tile))
    return dims, m2m, tuple(tiles), draw(st.sampled_from([1, 1, 4, 7]))


@settings(max_examples=60, deadline=None)
@given(tiled_shapes())
def test_offset_map_integer_function_and_brute_force_agree(case: tuple) -> None:
    dims, m2m, tiles, alignment = case
    text = shape_text(dims, m2m, tiles, alignment)
    buffer = naive_buffer(dims, m2m, tiles, alignment)
    assert size_in_elements(text) == buffer.size
    m = offset_map(text)
    seen = set()
    for element_id, e in enumerate(box(dims)):
        offset = physical_offset(text, e)
        assert m.evaluate(e) == (offset,)
        assert buffer[offset] == element_id
        seen.add(offset)
    assert len(seen) == math.prod(dims)  # injective on the logical domain


@settings(max_examples=60, deadline=None)
@given(tiled_shapes())
def test_inverse_maps_leave_out_exactly_the_padding(case: tuple) -> None:
    dims, m2m, tiles, alignment = case
    text = shape_text(dims, m2m, tiles, alignment)
    forward, back = physical_index_map(text), logical_index_map(text)
    from_offset = offset_to_logical_map(text)
    final = physical_shape(text)
    for p, physical in enumerate(box(final)):
        want = logical_index(text, p)
        assert back.image(physical) == (set() if want is None else {want})
        assert from_offset.image((p,)) == (set() if want is None else {want})
        if want is not None:
            assert forward.evaluate(want) == physical


# ---------------------------------------------------------------------------------------------
# Bitcasts: one buffer, two layouts


@st.composite
def bitcast_pairs(draw: st.DrawFn) -> tuple[str, str]:
    """A tiled source and a destination with the same number of slots: the flat buffer, the
    physical array, or another (tiled) layout of a reshape of it."""
    dims, m2m, tiles, _ = draw(tiled_shapes())
    src = shape_text(dims, m2m, tiles)
    final = xla.tiled_shape(dims, m2m, tiles)
    kind = draw(st.sampled_from(["flat", "physical", "other"]))
    if kind == "flat":
        return src, shape_text((math.prod(final),), (0,))
    if kind == "physical":
        return src, shape_text(final, xla.default_minor_to_major(len(final)))
    perm = tuple(draw(st.permutations(range(len(dims)))))
    return src, shape_text(dims, perm, tiles)


def expected_bitcast(src: str, dst: str, index: tuple[int, ...]) -> set[tuple[int, ...]]:
    """Brute force: the src element stored where dst stores ``index``."""
    found = logical_index(src, physical_offset(dst, index))
    return set() if found is None else {found}


@settings(max_examples=60, deadline=None)
@given(bitcast_pairs())
def test_bitcast_maps_agree_with_the_buffers(pair: tuple[str, str]) -> None:
    src, dst = pair
    if size_in_bytes(src) != size_in_bytes(dst):
        with pytest.raises(MapError, match="not the same buffer"):
            reinterpret_map(src, dst)
        return
    m = reinterpret_map(src, dst)
    dst_shape = parse_shape(dst)
    assert isinstance(dst_shape, Shape)
    for index in box(dst_shape.dims):
        assert m.image(index) == expected_bitcast(src, dst, index)


def test_bitcast_of_a_tiled_layout_to_its_physical_array() -> None:
    m = reinterpret_map("f32[4,8]{1,0:T(2,4)}", "f32[2,2,2,4]")
    assert print_map(m, "xla") == (
        "(d0, d1, d2, d3) -> (d0 * 2 + d2, d1 * 4 + d3), domain: d0 in [0, 1], d1 in [0, 1], "
        "d2 in [0, 1], d3 in [0, 3]")


def test_bitcast_onto_padding_reads_nothing() -> None:
    m = reinterpret_map("f32[3,5]{1,0:T(2,2)}", "f32[24]")
    assert m.image((17,)) == {(2, 3)}
    assert m.image((9,)) == set()


def test_bitcast_needs_equal_element_and_buffer_sizes() -> None:
    with pytest.raises(MapError, match="different sizes"):
        reinterpret_map("f32[4]", "bf16[8]")
    with pytest.raises(MapError, match="not the same buffer"):
        reinterpret_map("f32[3,5]{1,0:T(2,2)}", "f32[15]")


def test_bitcast_rule_uses_the_tiles() -> None:
    module = parse_hlo("HloModule m\nENTRY e {\n"
                       "  p0 = bf16[16,256]{1,0:T(8,128)(2,1)} parameter(0)\n"
                       "  ROOT b = bf16[2,2,4,128,2]{4,3,2,1,0} bitcast(p0)\n}")
    ((m,),) = output_to_input(module.entry.root)
    assert print_map(m, "xla") == (
        "(d0, d1, d2, d3, d4) -> (d0 * 8 + d2 * 2 + d4, d1 * 128 + d3), domain: d0 in [0, 1], "
        "d1 in [0, 1], d2 in [0, 3], d3 in [0, 127], d4 in [0, 1]")
    module = parse_hlo("HloModule m\nENTRY e {\n  p0 = f32[3,5]{1,0:T(2,2)} parameter(0)\n"
                       "  ROOT b = f32[15]{0} bitcast(p0)\n}")
    with pytest.raises(UnsupportedOpError, match="not the same buffer"):
        output_to_input(module.entry.root)


# ---------------------------------------------------------------------------------------------
# --physical with tiled layouts

TRANSPOSE = """HloModule m
ENTRY e {{
  p0 = f32[3,5]{src} parameter(0)
  ROOT t = f32[5,3]{dst} transpose(p0), dimensions={{1,0}}
}}"""


@pytest.mark.parametrize(("src", "dst"), [
    ("{1,0:T(2,2)}", "{1,0}"),
    ("{0,1}", "{1,0:T(2,4)}"),
    ("{1,0:T(2,4)(2,1)}", "{0,1:T(4,2)}"),
])
def test_physical_maps_of_tiled_layouts_match_brute_force(src: str, dst: str) -> None:
    instr = parse_hlo(TRANSPOSE.format(src=src, dst=dst)).entry.root
    in_shape, out_shape = instr.operands[0].shape, instr.shape
    (group,) = instruction_maps(instr, "output_to_input", physical=True)
    (out_to_in,) = group.maps
    (group,) = instruction_maps(instr, "input_to_output", physical=True)
    (in_to_out,) = group.maps
    for physical in box(physical_shape(out_shape)):
        logical = logical_index_map(out_shape).image(physical)
        want = {physical_index_map(in_shape).evaluate((j, i)) for i, j in logical}
        assert out_to_in.image(physical) == want
    for physical in box(physical_shape(in_shape)):
        logical = logical_index_map(in_shape).image(physical)
        want = {physical_index_map(out_shape).evaluate((j, i)) for i, j in logical}
        assert in_to_out.image(physical) == want


def test_physical_to_logical_of_a_tiled_shape() -> None:
    shape = parse_shape("f32[3,5]{1,0:T(2,2)}")
    assert isinstance(shape, Shape)
    assert print_map(logical_index_map(shape), "xla") == (
        "(d0, d1, d2, d3) -> (d0 * 2 + d2, d1 * 2 + d3), domain: d0 in [0, 1], d1 in [0, 2], "
        "d2 in [0, 1], d3 in [0, 1], d0 * 2 + d2 in [0, 2], d1 * 2 + d3 in [0, 4]")
    assert print_map(physical_index_map(shape), "xla") == (
        "(d0, d1) -> (d0 / 2, d1 / 2, d0 mod 2, d1 mod 2), domain: d0 in [0, 2], d1 in [0, 4]")


def test_untiled_physical_maps_are_permutations_as_in_xla() -> None:
    shape = parse_shape("f32[10,20,30]{1,0,2}")
    assert isinstance(shape, Shape)
    assert print_map(logical_index_map(shape), "xla") == (
        "(d0, d1, d2) -> (d1, d2, d0), domain: d0 in [0, 29], d1 in [0, 9], d2 in [0, 19]")


def test_module_exports_what_it_documents() -> None:
    for name in shapes.__all__:
        assert hasattr(shapes, name)
    assert np.array_equal(naive_buffer((2, 2), (1, 0), ()), np.arange(4))
