"""Nested shape:stride layouts (symidx.layout.cute): seed 003 golden tests, CuTe's worked
examples, and property tests that check meaning the way CuTe's own tests do (every point of
the domain), plus a numpy twin for the Ascend fractal formats.
"""

from __future__ import annotations

import layout_props as props
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from symidx.errors import MapError, ParseError, SymidxError
from symidx.layout import cute
from symidx.layout.cute import (
    FRACTAL_FORMATS,
    IntTuple,
    Layout,
    coalesce,
    column_major,
    compact_col_major,
    compact_row_major,
    complement,
    composition,
    cosize,
    crd2idx,
    crd2offset,
    depth,
    flatten,
    fractal_layout,
    idx2crd,
    left_inverse,
    logical_divide,
    logical_product,
    make_layout,
    make_layout_tile,
    offset2crd,
    parse_layout,
    prefix_product,
    rank,
    right_inverse,
    row_major,
    size,
    to_grid,
    unflatten,
)


def words(text: str) -> list[str]:
    """Text with runs of whitespace collapsed (the seed's copy lost its alignment)."""
    return text.split()


def offsets(layout: Layout) -> list[int]:
    return [layout(i) for i in range(size(layout))]


# ---------------------------------------------------------------------------------------------
# Seed 003: CATLASS TLA layouts

SEED003_ROW_MAJOR = """
(2,3):(3,1)
0 1 2
+---+---+---+
0 | 0 | 1 | 2 |
+---+---+---+
1 | 3 | 4 | 5 |
+---+---+---+
"""

SEED003_COLUMN_MAJOR = """
(2,3):(1,2)
0 1 2
+---+---+---+
0 | 0 | 2 | 4 |
+---+---+---+
1 | 1 | 3 | 5 |
+---+---+---+
"""

SEED003_ZN = """
((4,2),(4,3)):((4,16),(1,32))
0 1 2 3 4 5 6 7 8 9 10 11
+----+----+----+----+----+----+----+----+----+----+----+----+
0 | 0 | 1 | 2 | 3 | 32 | 33 | 34 | 35 | 64 | 65 | 66 | 67 |
+----+----+----+----+----+----+----+----+----+----+----+----+
1 | 4 | 5 | 6 | 7 | 36 | 37 | 38 | 39 | 68 | 69 | 70 | 71 |
+----+----+----+----+----+----+----+----+----+----+----+----+
2 | 8 | 9 | 10 | 11 | 40 | 41 | 42 | 43 | 72 | 73 | 74 | 75 |
+----+----+----+----+----+----+----+----+----+----+----+----+
3 | 12 | 13 | 14 | 15 | 44 | 45 | 46 | 47 | 76 | 77 | 78 | 79 |
+----+----+----+----+----+----+----+----+----+----+----+----+
4 | 16 | 17 | 18 | 19 | 48 | 49 | 50 | 51 | 80 | 81 | 82 | 83 |
+----+----+----+----+----+----+----+----+----+----+----+----+
5 | 20 | 21 | 22 | 23 | 52 | 53 | 54 | 55 | 84 | 85 | 86 | 87 |
+----+----+----+----+----+----+----+----+----+----+----+----+
6 | 24 | 25 | 26 | 27 | 56 | 57 | 58 | 59 | 88 | 89 | 90 | 91 |
+----+----+----+----+----+----+----+----+----+----+----+----+
7 | 28 | 29 | 30 | 31 | 60 | 61 | 62 | 63 | 92 | 93 | 94 | 95 |
+----+----+----+----+----+----+----+----+----+----+----+----+
"""

ZN = Layout(((4, 2), (4, 3)), ((4, 16), (1, 32)))


def seed_table(grid: str) -> list[list[int]]:
    """The numbers of a seed grid: one list per row, row label dropped."""
    rows = [line for line in grid.strip().splitlines() if "|" in line]
    return [[int(v) for v in line.replace("|", " ").split()[1:]] for line in rows]


def test_seed003_zn_crd2offset_1_5_is_37() -> None:
    shape, stride = ((4, 2), (4, 3)), ((4, 16), (1, 32))
    assert crd2offset((1, 5), shape, stride) == 37
    assert ZN(1, 5) == 37


def test_seed003_zn_whole_table() -> None:
    table = seed_table(SEED003_ZN)
    assert len(table) == 8 and all(len(row) == 12 for row in table)
    assert [[ZN(m, n) for n in range(12)] for m in range(8)] == table


def test_seed003_zn_grid_is_drawn_as_the_seed_draws_it() -> None:
    assert words(to_grid(ZN)) == words(SEED003_ZN)


def test_seed003_zn_parse_and_print() -> None:
    assert parse_layout("((4,2),(4,3)):((4,16),(1,32))") == ZN
    assert str(ZN) == "((4,2),(4,3)):((4,16),(1,32))"
    assert (rank(ZN), depth(ZN), size(ZN), cosize(ZN)) == (2, 2, 96, 96)


def test_seed003_zn_is_the_fractal_format_with_4x4_fractals() -> None:
    assert fractal_layout("zN", 8, 12, elems_per_c0=4, c0_per_fractal=4) == ZN


def test_seed003_make_layout_tile() -> None:
    assert str(make_layout_tile(ZN, (4, 4))) == "((4,1),(4,1)):((4,16),(1,32))"


def test_seed003_make_layout_tile_of_flat_layouts_keeps_strides() -> None:
    assert make_layout_tile(row_major(8, 12), (4, 4)) == Layout((4, 4), (12, 1))
    assert make_layout_tile(ZN, (5, 9)) == Layout(((4, 2), (4, 3)), ((4, 16), (1, 32)))


def test_seed003_row_and_column_major_grids() -> None:
    assert row_major(2, 3) == parse_layout("(2,3):(3,1)")
    assert column_major(2, 3) == parse_layout("(2,3):(1,2)")
    assert words(to_grid(row_major(2, 3))) == words(SEED003_ROW_MAJOR)
    assert words(to_grid(column_major(2, 3))) == words(SEED003_COLUMN_MAJOR)


def test_seed003_static_ints_and_w2xh4() -> None:
    w2xh4 = parse_layout("(_2,4):(_12,_1)")
    assert w2xh4 == Layout((2, 4), (12, 1))
    assert str(w2xh4) == "(2,4):(12,1)"


def test_seed003_w32xh48_is_the_half_precision_zn_of_32x48() -> None:
    w32xh48 = parse_layout("((16,2),(16,3)):((16,256),(1,512))")
    assert fractal_layout("zN", 32, 48, element_bits=16) == w32xh48
    assert sorted(offsets(w32xh48)) == list(range(32 * 48))


def test_grid_exact_text_matches_cute_print_layout() -> None:
    assert to_grid(row_major(2, 3)) == (
        "(2,3):(3,1)\n"
        "      0   1   2\n"
        "    +---+---+---+\n"
        " 0  | 0 | 1 | 2 |\n"
        "    +---+---+---+\n"
        " 1  | 3 | 4 | 5 |\n"
        "    +---+---+---+"
    )


def test_grid_of_rank1_layout_is_one_row() -> None:
    assert seed_table(to_grid(Layout(4, 2))) == [[0, 2, 4, 6]]
    with pytest.raises(MapError, match="rank 3"):
        to_grid(Layout((2, 2, 2), (1, 2, 4)))


# ---------------------------------------------------------------------------------------------
# CuTe's worked examples (layout algebra documentation)


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        ("20:2", "(5,4):(4,1)", "(5,4):(8,2)"),
        ("(10,2):(16,4)", "(5,4):(1,5)", "(5,(2,2)):(16,(80,4))"),
        ("(6,2):(8,2)", "(4,3):(3,1)", "((2,2),3):((24,2),8)"),
    ],
)
def test_cute_composition_examples(a: str, b: str, want: str) -> None:
    la, lb = parse_layout(a), parse_layout(b)
    result = composition(la, lb)
    assert str(result) == want
    assert offsets(result) == [la(lb(i)) for i in range(size(lb))]


@pytest.mark.parametrize(
    ("layout", "cotarget", "want"),
    [
        ("4:1", 24, "6:4"),
        ("6:4", 24, "4:1"),
        ("(4,6):(1,4)", 24, "1:0"),
        ("4:2", 24, "(2,3):(1,8)"),
        ("(2,4):(1,6)", 24, "3:2"),
        ("(2,2):(1,6)", 24, "(3,2):(2,12)"),
    ],
)
def test_cute_complement_examples(layout: str, cotarget: int, want: str) -> None:
    assert str(complement(parse_layout(layout), cotarget)) == want


def test_cute_logical_divide_example() -> None:
    a, b = parse_layout("(4,2,3):(2,1,8)"), parse_layout("4:2")
    assert str(logical_divide(a, b)) == "((2,2),(2,3)):((4,1),(2,8))"


def test_cute_logical_product_example() -> None:
    a, b = parse_layout("(2,2):(4,1)"), parse_layout("6:1")
    assert str(logical_product(a, b)) == "((2,2),(2,3)):((4,1),(2,8))"


def test_by_mode_divide_of_a_matrix() -> None:
    a = row_major(8, 12)
    tiled = logical_divide(a, (Layout(4, 1), Layout(4, 1)))
    assert str(tiled) == "((4,2),(4,3)):((12,48),(1,4))"
    assert all(tiled((r % 4, r // 4), (c % 4, c // 4)) == a(r, c)
               for r in range(8) for c in range(12))


# ---------------------------------------------------------------------------------------------
# IntTuple helpers


def test_int_tuple_helpers() -> None:
    t: IntTuple = ((4, 2), (4, 3))
    assert flatten(t) == (4, 2, 4, 3)
    assert unflatten((1, 2, 3, 4), t) == ((1, 2), (3, 4))
    assert prefix_product(t) == ((1, 4), (8, 32))
    assert (rank(5), depth(5), size(5)) == (1, 0, 5)
    assert (rank(t), depth(t), size(t)) == (2, 2, 96)
    assert idx2crd(37, t) == ((1, 1), (0, 1))  # 37 = 1 + 4*1 + 8*0 + 32*1
    assert crd2idx(((1, 1), (0, 1)), t) == 37
    assert compact_row_major((2, (3, 4))) == Layout((2, (3, 4)), (12, (4, 1)))
    assert compact_col_major((2, (3, 4))) == Layout((2, (3, 4)), (1, (2, 6)))


def test_int_coordinates_split_colexicographically_and_overflow_last_mode() -> None:
    a = Layout((2, (3, 2)), (1, (10, 100)))
    assert a(1, 4) == a((1, (1, 1))) == 1 + 10 + 100
    assert a(0, 7) == 1 * 10 + 2 * 100  # 7 = 1 + 3*2: the last sub-mode takes the overflow
    assert a(5) == a((1, (2, 0)))


def test_layout_is_frozen_and_hashable() -> None:
    assert len({ZN, parse_layout(str(ZN)), row_major(2, 3)}) == 2
    with pytest.raises(AttributeError):
        ZN.shape = 3  # type: ignore[misc]


def test_module_exports_what_it_documents() -> None:
    assert set(cute.__all__) <= set(dir(cute))


# ---------------------------------------------------------------------------------------------
# Invalid input


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("(4,2)", "expected ':'", 6),
        ("(4,2):(1)", "not congruent", 7),
        ("(4,0):(1,4)", "positive", 4),
        ("(4,2:(1,4)", "expected ',' or '\\)'", 5),
        ("():()", "empty tuple", 2),
        ("(4,2):(1,4) x", "unexpected text", 13),
        ("(4,x):(1,4)", "expected an integer", 4),
    ],
)
def test_parse_errors(text: str, message: str, column: int) -> None:
    with pytest.raises(ParseError, match=message) as err:
        parse_layout(text)
    assert err.value.column == column
    assert err.value.excerpt().splitlines()[1].index("^") == column - 1


def test_negative_strides_parse() -> None:
    assert parse_layout("(2,3):(-1,2)") == Layout((2, 3), (-1, 2))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: Layout((2, 3), 1), "not congruent"),
        (lambda: Layout((2, 0), (1, 2)), "positive"),
        (lambda: Layout((2, "3"), (1, 2)), "must be an int"),  # type: ignore[arg-type]
        (lambda: ZN(1, 2, 3), "rank 3"),
        (lambda: ZN(), "needs a coordinate"),
        (lambda: idx2crd(96, ZN.shape), "outside"),
        (lambda: composition(Layout((2, 3), (1, 10)), Layout(3, 1)), "do not divide"),
        (lambda: composition(Layout((4, 3), (1, 10)), Layout(3, 3)), "neither divides"),
        (lambda: composition(Layout((3, 2, 2), (3, 1, 12)), Layout((3, 3), (1, 1))),
         "carry into each other"),
        (lambda: complement(Layout((2, 2), (1, 1))), "overlap"),
        (lambda: left_inverse(Layout((2, 2), (1, 0))), "not injective"),
        (lambda: offset2crd(Layout((2, 2), (1, 1)), 1), "not injective"),
        (lambda: fractal_layout("zX", 2, 2), "unknown fractal"),  # type: ignore[arg-type]
        (lambda: fractal_layout("zN", 2, 2, element_bits=3), "32-byte"),
        (lambda: make_layout_tile(ZN, (4,)), "rank-2"),
        (lambda: make_layout_tile(row_major(2, 3), (4, 4, 4)), "one or two"),
    ],
)
def test_invalid_arguments_raise_map_error(call: object, message: str) -> None:
    with pytest.raises(MapError, match=message) as err:
        call()  # type: ignore[operator]
    assert isinstance(err.value, SymidxError)


# ---------------------------------------------------------------------------------------------
# Strategies


@st.composite
def layouts(draw: st.DrawFn, max_stride: int = 16, max_size: int = 256) -> Layout:
    """Random layouts: nesting depth <= 2, modes of size 1..4, strides 0..max_stride."""

    def node(levels: int) -> tuple[IntTuple, IntTuple]:
        if levels == 0 or draw(st.booleans()):
            return draw(st.integers(1, 4)), draw(st.integers(0, max_stride))
        children = [node(levels - 1) for _ in range(draw(st.integers(1, 3)))]
        return tuple(c[0] for c in children), tuple(c[1] for c in children)

    shape, stride = node(2)
    assume(size(shape) <= max_size)
    return Layout(shape, stride)


@st.composite
def injective_layouts(draw: st.DrawFn, gaps: bool = True) -> Layout:
    """Injective layouts with a complement: modes stacked in a random order, with gaps."""
    shapes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    order = draw(st.permutations(range(len(shapes))))
    strides = [0] * len(shapes)
    reach = 1
    for k in order:
        strides[k] = reach * (draw(st.integers(1, 3)) if gaps else 1)
        reach = strides[k] * shapes[k]
    profile = draw(st.sampled_from(["flat", "nested"]))
    if profile == "nested" and len(shapes) > 1:
        cut = draw(st.integers(1, len(shapes) - 1))
        return Layout((tuple(shapes[:cut]), tuple(shapes[cut:])),
                      (tuple(strides[:cut]), tuple(strides[cut:])))
    return Layout(tuple(shapes), tuple(strides))


PROPERTY = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.filter_too_much])


# ---------------------------------------------------------------------------------------------
# Properties (CuTe's tests check every point of the domain)


@PROPERTY
@given(layouts(max_stride=30))
def test_parse_print_round_trip(layout: Layout) -> None:
    assert parse_layout(str(layout)) == layout


@PROPERTY
@given(layouts())
def test_int_index_and_coordinate_agree(layout: Layout) -> None:
    for i in range(size(layout)):
        crd = idx2crd(i, layout.shape)
        assert layout(crd) == layout(i)
        assert crd2idx(crd, layout.shape) == i


@PROPERTY
@given(layouts())
def test_coalesce_preserves_the_function(layout: Layout) -> None:
    result = coalesce(layout)
    assert size(result) == size(layout)
    assert depth(result) <= 1
    assert offsets(result) == offsets(layout)
    assert rank(result) <= rank(Layout(flatten(layout.shape), flatten(layout.stride)))


@PROPERTY
@given(layouts())
def test_coalesce_by_mode_keeps_the_modes(layout: Layout) -> None:
    profile = tuple(1 for _ in range(rank(layout)))
    result = coalesce(layout, profile)
    assert rank(result) == rank(layout)
    for i in range(rank(layout)):
        assert offsets(result[i]) == offsets(layout[i])


@PROPERTY
@given(layouts(), layouts(max_stride=8))
def test_composition_is_function_composition(a: Layout, b: Layout) -> None:
    try:
        result = composition(a, b)
    except MapError:
        assume(False)  # the pair does not meet composition's divisibility conditions
        raise
    assert size(result) == size(b)
    if isinstance(b.shape, tuple):  # the result keeps b's modes (each may be refined)
        assert [size(m) for m in result.modes()] == [size(m) for m in b.modes()]
    for i in range(size(b)):
        assert result(i) == a(b(i))


@PROPERTY
@given(layouts(), st.integers(1, 6), st.integers(0, 8))
def test_composition_with_one_mode(a: Layout, shape: int, stride: int) -> None:
    try:
        result = composition(a, Layout(shape, stride))
    except MapError:
        assume(False)
        raise
    assert [result(i) for i in range(shape)] == [a(i * stride) for i in range(shape)]


@PROPERTY
@given(layouts(), injective_layouts())
def test_composition_with_injective_right_side(a: Layout, b: Layout) -> None:
    try:
        result = composition(a, b)
    except MapError:
        assume(False)
        raise
    assert [result(i) for i in range(size(b))] == [a(b(i)) for i in range(size(b))]


@PROPERTY
@given(injective_layouts(), st.integers(1, 300))
def test_complement_fills_the_gaps(layout: Layout, cotarget: int) -> None:
    comp = complement(layout, cotarget)
    both = make_layout(layout, comp)
    # disjoint: only offset 0 is shared
    mine, theirs = set(offsets(layout)), set(offsets(comp))
    assert mine & theirs == {0}
    # together a bijection onto [0, n) with n >= cotarget, as CuTe defines
    assert sorted(offsets(both)) == list(range(size(both)))
    assert size(both) >= cotarget


@PROPERTY
@given(layouts())
def test_complement_is_disjoint_when_it_exists(layout: Layout) -> None:
    try:
        comp = complement(layout)
    except MapError:
        assume(False)
        raise
    for a in offsets(layout):
        for b in offsets(comp):
            assert a != b or a == b == 0


@PROPERTY
@given(layouts(), injective_layouts())
def test_logical_divide_is_composition_with_tile_and_complement(a: Layout, b: Layout) -> None:
    """CuTe's definition, checked point by point with the twin evaluator of layout_props:
    the result is ``(tile, rest)``, the tile reads ``a`` at ``b``'s offsets, and the whole
    reads ``a`` at the offsets of ``(b, c)``, where ``c`` meets the defining property of
    ``complement(b, size(a))`` (ordered, disjoint from ``b``, ``(b, c)`` a bijection onto
    ``[0, n)`` with ``n >= size(a)``)."""
    try:
        divided = logical_divide(a, b)
    except MapError:
        assume(False)
        raise
    assert rank(divided) == 2
    tile = divided[0]
    assert size(tile) == size(b)
    assert [props.at(tile, j) for j in range(size(b))] == \
        [props.at(a, props.at(b, j)) for j in range(size(b))]
    assert props.logical_divide_ok(a, b, divided, complement) is None


@PROPERTY
@given(injective_layouts(gaps=False), injective_layouts())
def test_logical_product_repeats_a(a: Layout, b: Layout) -> None:
    product = logical_product(a, b)
    comp = complement(a, size(a) * cosize(b))
    assert product[0] == a
    assert [product[1](i) for i in range(size(b))] == [comp(b(i)) for i in range(size(b))]
    # a compact `a` repeated by an injective `b` never overlaps itself
    assert len(set(offsets(product))) == size(product)


@PROPERTY
@given(injective_layouts())
def test_left_inverse_and_offset2crd_invert(layout: Layout) -> None:
    inverse = left_inverse(layout)
    for i in range(size(layout)):
        assert inverse(layout(i)) == i
        assert offset2crd(layout, layout(i)) == idx2crd(i, layout.shape)
    image = set(offsets(layout))
    for off in range(cosize(layout) + 3):
        if off not in image:
            assert offset2crd(layout, off) is None


@PROPERTY
@given(layouts())
def test_right_inverse(layout: Layout) -> None:
    inverse = right_inverse(layout)
    for i in range(size(inverse)):
        assert layout(inverse(i)) == i


def test_offset2crd_searches_when_there_is_no_left_inverse() -> None:
    layout = Layout((2, 3), (4, 1))  # injective, but 4 is not a multiple of 3
    for i in range(size(layout)):
        assert offset2crd(layout, layout(i)) == idx2crd(i, layout.shape)
    assert offset2crd(layout, 3) is None


# ---------------------------------------------------------------------------------------------
# Fractal formats against a numpy twin


def naive_fractal(fmt: str, rows: int, cols: int, fr: int, fc: int) -> np.ndarray:
    """Offsets of a rows x cols matrix: pad to fr x fc fractals, order the elements inside a
    fractal (z: row-major, n: column-major) and the fractals (Z / N), then number them."""
    fractal_rows, fractal_cols = -(-rows // fr), -(-cols // fc)
    ids = np.arange(fractal_rows * fr * fractal_cols * fc).reshape(
        fractal_rows, fr, fractal_cols, fc)
    inner = (1, 3) if fmt[0] == "z" else (3, 1)
    outer = (0, 2) if fmt[1] == "Z" else (2, 0)
    order = ids.transpose(outer + inner).reshape(-1)
    position = np.empty_like(order)
    position[order] = np.arange(order.size)
    return position.reshape(fractal_rows * fr, fractal_cols * fc)[:rows, :cols]


@PROPERTY
@given(st.sampled_from(FRACTAL_FORMATS), st.integers(1, 40), st.integers(1, 70),
       st.sampled_from([8, 16, 32]))
def test_fractal_formats_match_the_twin(fmt: str, rows: int, cols: int, bits: int) -> None:
    layout = fractal_layout(fmt, rows, cols, element_bits=bits)  # type: ignore[arg-type]
    c0 = 256 // bits
    fr, fc = (16, c0) if fmt[0] == "z" else (c0, 16)
    want = naive_fractal(fmt, rows, cols, fr, fc)
    got = np.array([[layout(r, c) for c in range(cols)] for r in range(rows)])
    assert (got == want).all()
    padded = -(-rows // fr) * fr * -(-cols // fc) * fc
    assert sorted(offsets(layout)) == list(range(padded))


def test_fractal_formats_of_fp16_16x32() -> None:
    assert str(fractal_layout("zN", 16, 32)) == "((16,1),(16,2)):((16,256),(1,256))"
    assert str(fractal_layout("zZ", 16, 32)) == "((16,1),(16,2)):((16,512),(1,256))"
    assert str(fractal_layout("nZ", 16, 32)) == "((16,1),(16,2)):((1,512),(16,256))"
    assert str(fractal_layout("nN", 16, 32)) == "((16,1),(16,2)):((1,256),(16,256))"
