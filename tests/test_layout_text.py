"""The one layout reader (``symidx.layout.text.parse_layout``, also ``cute.parse_layout`` and
``symidx layout``): every spelling CuTe C++ and the CuTe DSL print, read to the value built
by hand, each checked against the swizzle's definition at every coordinate; errors located."""

from __future__ import annotations

import contextlib
import io

import pytest

from symidx.cli import main
from symidx.errors import ParseError
from symidx.layout import cute
from symidx.layout.cute import E, Layout
from symidx.layout.swizzle import ComposedLayout, Swizzle
from symidx.layout.text import element_bits, parse_layout, parse_swizzle

ROW_MAJOR_8x64 = Layout((8, 64), (64, 1))


def xor_swizzle(bits: int, base: int, shift: int, offset: int) -> int:
    """The twin: CuTe's definition, bit by bit -- bit ``base + k`` takes the XOR of itself
    and bit ``base + shift + k`` (shift >= 0)."""
    out = offset
    for k in range(bits):
        out ^= ((offset >> (base + shift + k)) & 1) << (base + k)
    return out


SPELLINGS = [
    # the CuTe DSL (printed by a layout's __str__ and inside its MLIR types)
    ("S<3,3,3> o 0 o (8,64):(64,1)", ComposedLayout(Swizzle(3, 3, 3), 0, ROW_MAJOR_8x64)),
    ("!cute.composed_layout<\"S<3,3,3> o 0 o (8,64):(64,1)\">",
     ComposedLayout(Swizzle(3, 3, 3), 0, ROW_MAJOR_8x64)),
    ("!cute.memref<bf16, smem, align<1024>, S<3,3,3>, \"(8,64):(64,1)\">",
     ComposedLayout(Swizzle(3, 3, 3), 0, ROW_MAJOR_8x64)),
    ("!cute.memref<bf16, smem, align<1024>, \"S<3,3,3> o 0 o (8,64):(64,1)\">",
     ComposedLayout(Swizzle(3, 3, 3), 0, ROW_MAJOR_8x64)),
    ("!cute.layout<\"(8,64):(64,1)\">", ROW_MAJOR_8x64),
    # CuTe C++ (cute::print): static ints with '_', the offset printed
    ("Sw<3,3,3> o _0 o (_8,_64):(_64,_1)", ComposedLayout(Swizzle(3, 3, 3), 0, ROW_MAJOR_8x64)),
    ("(_8,_64):(_64,_1)", ROW_MAJOR_8x64),
    ("Sw<2,0,2> o (4,4):(4,1)", ComposedLayout(Swizzle(2, 0, 2), 0, Layout((4, 4), (4, 1)))),
    ("Sw<2,0,2> o 4 o (4,4):(4,1)", ComposedLayout(Swizzle(2, 0, 2), 4, Layout((4, 4), (4, 1)))),
    ("(_4,_2):(_1@0,_1@1)", Layout((4, 2), (E(0), E(1)))),
    ("(4,2):(1@0,2@1@0)", Layout((4, 2), (E(0), 2 * E(0, 1)))),
    ("(2,4):(1,2) o 0 o 8:1", ComposedLayout(Layout((2, 4), (1, 2)), 0, Layout(8, 1))),
]


@pytest.mark.parametrize(("text", "expected"), SPELLINGS, ids=[s for s, _ in SPELLINGS])
def test_every_spelling_reads_to_the_value_built_by_hand(text, expected) -> None:
    found = parse_layout(text)
    assert found == expected
    assert cute.parse_layout(text) == expected == cute.parse_any_layout(text)


@pytest.mark.parametrize("text", ["S<3,3,3> o 0 o (8,64):(64,1)",
                                  "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)"])
def test_a_read_swizzle_is_the_xor_of_its_definition_everywhere(text) -> None:
    layout = parse_layout(text)
    for r in range(8):
        for c in range(64):
            assert layout(r, c) == xor_swizzle(3, 3, 3, 64 * r + c)


def test_swizzles_read_alone_and_the_memrefs_element_size() -> None:
    assert parse_swizzle("S<3,4,3>") == Swizzle(3, 4, 3) == parse_swizzle(" Sw< 3, 4, 3 > ")
    assert element_bits("!cute.memref<bf16, smem, align<1024>, \"8:1\">") == 16
    assert element_bits("!cute.memref<f32, smem, \"8:1\">") == 32
    assert element_bits("(8,64):(64,1)") is None


@pytest.mark.parametrize(("text", "message", "column"), [
    ("S<3,3,3>", "a swizzle alone is not a layout", 1),
    ("S<3,3,3> o 0 o (?,64):(64,1)", "dynamic value ('?'", 17),
    ("S<3,3> o (8,64):(64,1)", "expected a swizzle", 1),
    ("Sw<1,2,0> o 4:1", "|shift| must be at least bits", 1),
    ("S<3,3,3> o x o 8:1", "expected an integer offset", 12),
    ("S<3,3,3> o 0 o (8,64):(64,1", "expected ',' or ')'", 28),
    ("(8,64):(64,1) o S<3,3,3>", "inner function", 16),
    ("!cute.layout<\"(8,64):(64,1)\"", "expected '>'", 29),
    ("!cute.layout<(8,64):(64,1)>", "expected a quoted layout", 14),
    ("(4,2):(1@0,1@-1)", "non-negative", 14),
    ("(1@0,2):(1,1)", "not basis strides", 1),
])
def test_errors_are_located(text, message, column) -> None:
    with pytest.raises(ParseError) as found:
        parse_layout(text)
    assert message in found.value.message
    assert (found.value.line, found.value.column) == (1, column)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["layout", *argv])
    return code, out.getvalue(), err.getvalue()


def test_the_command_line_reads_the_dsls_spelling() -> None:
    code, out, _ = run("S<3,3,3> o 0 o (8,64):(64,1)", "--index", "1,0")
    assert (code, out) == (0, f"{xor_swizzle(3, 3, 3, 64)}\n")
    code, out, _ = run("Sw<3,3,3> o _0 o (_8,_64):(_64,_1)")
    assert code == 0 and out.startswith("rank 2, depth 1, size 512, cosize 512; swizzled by "
                                        "Sw<3,3,3>")
    code, out, err = run("S<3,3,3> o 0 o (?,64):(64,1)")
    assert code == 2 and out == "" and "column 17" in err and "dynamic value" in err


def test_objects_that_print_as_cute_are_read_by_their_text() -> None:
    """A CuTe DSL ComposedLayout or Swizzle has no pycute attributes; it prints as CuTe
    does, and ``as_layout`` (and so ``cute_map``) reads that."""
    from symidx.errors import MapError
    from symidx.layout.cute import as_layout

    class Printed:
        def __init__(self, text: str) -> None:
            self.text = text

        def __str__(self) -> str:
            return self.text

    assert as_layout(Printed("S<3,3,3> o 0 o (8,64):(64,1)")) == ComposedLayout(
        Swizzle(3, 3, 3), 0, ROW_MAJOR_8x64)
    assert as_layout(Printed("S<3,4,3>")) == Swizzle(3, 4, 3)
    with pytest.raises(MapError, match="dynamic value"):
        as_layout(Printed("(?,64):(64,1)"))
    with pytest.raises(MapError, match="prints as CuTe prints one"):
        as_layout(Printed("hello"))
