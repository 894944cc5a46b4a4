"""HLO shapes and layouts: what the text means, printing it back, and bad shapes."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symidx.errors import HloShapeError, ParseError
from symidx.hlo import (
    COMBINE_DIMENSION,
    ELEMENT_BIT_WIDTHS,
    UNBOUNDED_SIZE,
    HloLayout,
    Shape,
    ShapeLike,
    Tile,
    TupleShape,
    parse_shape,
)
from symidx.hlo.shape import MAX_NESTING, can_start_shape


@pytest.mark.parametrize(
    ("element_type", "bits"),
    [("pred", 8), ("s2", 2), ("u2", 2), ("s4", 4), ("u4", 4), ("s8", 8), ("u16", 16),
     ("s32", 32), ("u64", 64), ("f16", 16), ("bf16", 16), ("f32", 32), ("f64", 64),
     ("c64", 64), ("c128", 128), ("f8e5m2", 8), ("f8e4m3fn", 8), ("f8e4m3b11fnuz", 8),
     ("f8e5m2fnuz", 8), ("f8e4m3fnuz", 8), ("f8e4m3", 8), ("f8e3m4", 8), ("f8e8m0fnu", 8),
     ("f4e2m1fn", 4), ("token", 0), ("opaque", 0)],
)
def test_element_types_and_bit_widths(element_type: str, bits: int) -> None:
    shape = parse_shape(f"{element_type}[]")
    assert isinstance(shape, Shape)
    assert shape.element_type == element_type
    assert shape.bit_width == bits == ELEMENT_BIT_WIDTHS[element_type]


def test_scalar() -> None:
    shape = parse_shape("f32[]")
    assert shape == Shape("f32", (), (), None)
    assert isinstance(shape, Shape) and shape.rank == 0 and shape.num_elements == 1
    assert str(shape) == "f32[]"


def test_seed_layout_with_tiles_and_memory_space() -> None:
    # The shapes-and-layout seed's example.
    shape = parse_shape("bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)S(1)}")
    assert isinstance(shape, Shape)
    assert shape.dims == (8, 1, 1280, 16384)
    assert shape.layout == HloLayout((3, 2, 0, 1), (Tile((8, 128)), Tile((2, 1))), memory_space=1)
    assert str(shape) == "bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)S(1)}"


def test_tile_star_is_combine_dimension() -> None:
    # The tiled-layout seed: F32[2,7,8,11,10] combined to [112,110], then tiled (2,3).
    shape = parse_shape("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}")
    assert isinstance(shape, Shape) and shape.layout is not None
    assert shape.layout.tiles == (Tile((COMBINE_DIMENSION, COMBINE_DIMENSION, 2, -1, 3)),)
    assert str(shape) == "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}"


def test_tail_padding_element_size_and_defaults() -> None:
    layout = parse_shape("s4[128]{0:T(1024)L(2048)E(4)}").layout  # type: ignore[union-attr]
    assert layout == HloLayout((0,), (Tile((1024,)),), element_size_in_bits=4,
                            tail_padding_alignment_in_elements=2048)
    plain = parse_shape("f32[3,5]{1,0}").layout  # type: ignore[union-attr]
    assert (plain.tiles, plain.element_size_in_bits, plain.memory_space,
            plain.tail_padding_alignment_in_elements, plain.extra) == ((), 0, 0, 1, ())


def test_other_layout_fields_are_kept_raw_and_printed_in_xla_order() -> None:
    text = "f32[4,8]{1,0:D(D,C)T(8,128)L(4)#(s32)*(u64)E(32)S(2)SC(0:2)P(f32[4,8]{0,1})M(8)}"
    shape = parse_shape(text)
    assert isinstance(shape, Shape) and shape.layout is not None
    assert shape.layout.extra == ("D(D,C)", "#(s32)", "*(u64)", "SC(0:2)", "P(f32[4,8]{0,1})",
                                  "M(8)")
    assert (shape.layout.memory_space, shape.layout.element_size_in_bits) == (2, 32)
    assert str(shape) == text
    # Written out of order, it prints in XLA's order.
    assert str(parse_shape("f32[4]{0:S(1)#(s32)T(128)}")) == "f32[4]{0:T(128)#(s32)S(1)}"


def test_default_layout() -> None:
    assert HloLayout.default(3).minor_to_major == (2, 1, 0)
    assert HloLayout.default(0).minor_to_major == ()
    assert parse_shape("f32[2,3]").layout is None  # type: ignore[union-attr]
    assert parse_shape("f32[2,3]").layout_or_default == HloLayout((1, 0))  # type: ignore[union-attr]


def test_dynamic_dimensions() -> None:
    shape = parse_shape("f32[<=10,?,3]{2,1,0}")
    assert isinstance(shape, Shape)
    assert shape.dims == (10, UNBOUNDED_SIZE, 3)
    assert shape.dynamic == (True, True, False)
    assert str(shape) == "f32[<=10,?,3]{2,1,0}"
    with pytest.raises(HloShapeError, match="unbounded"):
        _ = shape.num_elements


def test_nested_and_empty_tuples() -> None:
    shape = parse_shape("((f32[2]{0}, s32[]), pred[3], ())")
    assert shape == TupleShape((
        TupleShape((Shape("f32", (2,), layout=HloLayout((0,))), Shape("s32"))),
        Shape("pred", (3,)),
        TupleShape(()),
    ))
    assert str(shape) == "((f32[2]{0}, s32[]), pred[3], ())"


def test_whitespace_is_accepted_and_printing_is_canonical() -> None:
    # As XLA's tests write them: spaces after commas, and between dims and layout.
    assert str(parse_shape(" f32[1000, 1000]{0, 1} ")) == "f32[1000,1000]{0,1}"
    assert str(parse_shape("f32[51, 16] {0, 1}")) == "f32[51,16]{0,1}"


def test_comments_and_blanks_between_any_tokens() -> None:
    spaced = "f32 /*t*/ [ 2 , /*d*/ 3 ] { 0 , 1 : T (2,*) /*x*/ (1,1) S ( 1 ) #(s32) }"
    assert str(parse_shape(spaced)) == "f32[2,3]{0,1:T(2,*)(1,1)#(s32)S(1)}"
    tuple_ = "(f32[], s32[], // the second\n /*index=2*/ pred[2])"
    assert parse_shape(tuple_) == parse_shape("(f32[], s32[], pred[2])")


def test_a_brace_after_blanks_opens_a_layout_only_before_a_number_or_colon() -> None:
    # XLA's rule, so that `-> f32[2] {` opens a computation body.
    assert parse_shape("f32[2] {0}") == parse_shape("f32[2]{0}")
    assert parse_shape("f32[2] { :S(1)}").layout == HloLayout((), memory_space=1)  # type: ignore[union-attr]
    with pytest.raises(ParseError, match="unexpected '{' after the shape"):
        parse_shape("f32[2] {}")
    assert parse_shape("f32[2,3]{}").layout == HloLayout(())  # type: ignore[union-attr]
    assert parse_shape("f32[] {}").layout == HloLayout(())  # type: ignore[union-attr]


def test_buffer_shapes() -> None:
    shape = parse_shape("b(f32[8,16]{1,0})")
    assert shape == Shape("f32", (8, 16), layout=HloLayout((1, 0)), is_buffer=True)
    assert str(shape) == "b(f32[8,16]{1,0})" and shape != parse_shape("f32[8,16]{1,0}")
    assert parse_shape("(b (s32[]), f32[2])") == TupleShape(
        (Shape("s32", is_buffer=True), Shape("f32", (2,))))
    with pytest.raises(ParseError, match=re.escape("expected a shape, found ')'")):
        parse_shape("b()")
    with pytest.raises(ParseError,
                       match=re.escape("expected ')' to close the buffer shape, found ','")):
        parse_shape("b(s32[], f32[])")


@pytest.mark.parametrize(("text", "starts"), [
    ("f32[2]", True), ("(f32[])", True), ("b(f32[])", True), ("b (f32[])", True),
    ("f32 [2]", True), ("f33[2]", True), ("add(x)", False), ("b", False), ("%f32[2]", False),
    ("f32", False), ("", False),
])
def test_can_start_shape(text: str, starts: bool) -> None:
    assert can_start_shape(text, 0) is starts


def test_constructor_validates() -> None:
    with pytest.raises(HloShapeError, match="element type"):
        Shape("f33", (2,))
    with pytest.raises(HloShapeError, match="negative"):
        Shape("f32", (-2,))
    with pytest.raises(HloShapeError, match="permutation"):
        Shape("f32", (2, 3), layout=HloLayout((0, 0)))
    assert Shape("f32", (2,)).dynamic == (False,)


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("f33[2]", 1, "unknown element type 'f33'"),
        ("f32[2", 6, "expected ',' or ']' in dimensions, found end of input"),
        ("f32[2,x]", 7, "expected a dimension size, found 'x'"),
        ("f32[-1]", 5, "negative dimension size -1"),
        ("f32[2,3]{0}", 9, "layout {0} is not a permutation of the 2 dimensions"),
        ("f32[2]{0:T(2}", 13, "expected ',' or ')' in tile, found '}'"),
        ("f32[2]{0:Q}", 10, "expected a layout field such as T(8,128), found 'Q'"),
        ("f32[2]{0:S(x)}", 12, "expected an integer in S(..), found 'x'"),
        ("(f32[2] s32[])", 9, "expected ',' or ')' in tuple shape, found 's32'"),
        ("f32[2] junk", 8, "unexpected 'junk' after the shape"),
        ("f32[2]{0 /* never closed", 10, "unterminated comment"),
        ("[2]", 1, "expected a shape, found '['"),
        ("", 1, "expected a shape, found end of input"),
    ],
)
def test_bad_shapes(text: str, column: int, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_shape(text)
    assert info.value.line == 1
    assert info.value.column == column
    assert message in info.value.message


def test_deep_tuple_nesting_is_a_parse_error_not_a_crash() -> None:
    with pytest.raises(ParseError, match="tuple shapes nested deeper than 64") as info:
        parse_shape("(" * 100_000 + "f32[]" + ")" * 100_000)
    assert info.value.column == 65
    deepest = "(" * MAX_NESTING + "f32[]" + ")" * MAX_NESTING
    shape = parse_shape(deepest)
    assert str(shape) == deepest and shape == parse_shape(deepest) and hash(shape) == hash(shape)


_element_types = st.sampled_from(sorted(ELEMENT_BIT_WIDTHS))


@st.composite
def _arrays(draw: st.DrawFn) -> Shape:
    rank = draw(st.integers(0, 4))
    dims = tuple(draw(st.lists(st.integers(0, 5000), min_size=rank, max_size=rank)))
    dynamic = tuple(draw(st.lists(st.booleans(), min_size=rank, max_size=rank)))
    dims = tuple(UNBOUNDED_SIZE if dyn and draw(st.booleans()) else d
                 for d, dyn in zip(dims, dynamic, strict=True))
    layout = None
    if draw(st.booleans()):
        tiles = tuple(Tile(tuple(draw(st.lists(st.sampled_from([-1, 1, 2, 8, 128]),
                                                 max_size=3))))
                      for _ in range(draw(st.integers(0, 2))))
        layout = HloLayout(
            tuple(draw(st.permutations(range(rank)))), tiles,
            element_size_in_bits=draw(st.sampled_from([0, 4, 8])),
            memory_space=draw(st.sampled_from([0, 1, 5])),
            tail_padding_alignment_in_elements=draw(st.sampled_from([1, 2, 1024])),
            extra=tuple(draw(st.lists(st.sampled_from(["#(s32)", "M(8)", "SC(0:2)"]),
                                      max_size=1))),
        )
    return Shape(draw(_element_types), dims, dynamic, layout, is_buffer=draw(st.booleans()))


_shapes: st.SearchStrategy[ShapeLike] = st.recursive(
    _arrays(), lambda inner: st.lists(inner, max_size=3).map(lambda xs: TupleShape(tuple(xs))),
    max_leaves=6,
)


@settings(max_examples=300)
@given(_shapes)
def test_print_parse_round_trip(shape: ShapeLike) -> None:
    assert parse_shape(str(shape)) == shape


def test_tuple_shape_keeps_leaf_offsets_and_survives_pickling_across_processes() -> None:
    """A tuple's cached hash and leaf offsets agree with its elements, and a pickled tuple
    is rebuilt (its hash recomputed) in a process with another hash seed."""
    import os
    import pickle
    import subprocess
    import sys

    from symidx.hlo.leaves import element_leaves, leaf_count, leaves

    shape = parse_shape("((f32[2], s32[]), (), f32[3], ((pred[]), u8[4]))")
    assert leaf_count(shape) == len(leaves(shape)) == 5
    assert [element_leaves(shape, i) for i in range(4)] == [
        range(0, 2), range(2, 2), range(2, 3), range(3, 5)]
    assert hash(shape) == hash(parse_shape(str(shape)))
    code = ("import pickle, sys; from symidx.hlo import parse_shape; "
            "s = pickle.loads(sys.stdin.buffer.read()); "
            "print(s == parse_shape(str(s)) and {s: 1}.get(parse_shape(str(s))) == 1)")
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(shape),
                             capture_output=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        assert out.strip() == b"True"


def test_public_records_raise_symidx_errors() -> None:
    """Building a bad shape or asking a module for a missing name raises symidx's own
    errors (still a ValueError and a KeyError, for callers that catch those)."""
    from symidx.errors import HloShapeError, NotFoundError, SymidxError
    from symidx.hlo import Shape, parse_hlo

    for bad in (lambda: Shape("f33", (2,)), lambda: Shape("f32", (-2,)),
                lambda: Shape("f32", (2, 3), (False,))):
        with pytest.raises(HloShapeError):
            bad()
    module = parse_hlo("ENTRY e {\n  ROOT p = f32[2] parameter(0)\n}")
    for lookup, name in ((module.computation, "nope"), (module.entry.instruction, "%q")):
        with pytest.raises(NotFoundError) as caught:
            lookup(name)
        assert isinstance(caught.value, (SymidxError, KeyError))
        assert str(caught.value).startswith("no ")
