"""The one reader of layout text, for Python (``cute.parse_layout``) and ``symidx layout``:
every spelling CuTe prints.

* a ``shape:stride`` layout: ``((4,2),(4,3)):((4,16),(1,32))``; CuTe C++'s static ints
  ``(_8,_64):(_64,_1)``; basis strides ``(4,2):(1@0,1@1)`` (``_1@0`` in C++);
* a swizzle composed with a layout: CuTe C++ prints ``Sw<3,4,3> o _0 o (_8,_64):(_64,_1)``,
  the CuTe DSL ``S<3,4,3> o 0 o (8,64):(64,1)``; the offset may be left out
  (``Sw<2,0,2> o (4,4):(4,1)``), and the outer function may be a layout
  (``LAYOUT o [OFFSET o] LAYOUT``);
* the CuTe DSL's MLIR types around one: ``!cute.layout<"(8,64):(64,1)">``,
  ``!cute.composed_layout<"S<3,4,3> o 0 o (8,64):(64,1)">``, ``!cute.memref<bf16, smem,
  align<1024>, "S<3,4,3> o 0 o ...">`` and the split form ``!cute.memref<bf16, smem,
  align<1024>, S<3,4,3>, "((128,16),1,4):...">`` (the swizzle outside the quotes);
  :func:`element_bits` reads a memref's element type.

A value the DSL knows only at run time prints as ``?``: such text is refused, located, as
is every other error (:class:`~symidx.errors.ParseError`, line and column).

>>> str(parse_layout("S<3,3,3> o 0 o (8,64):(64,1)"))
'Sw<3,3,3> o (8,64):(64,1)'
>>> parse_layout("Sw<2,0,2> o _0 o (_4,_4):(_4,_1)")(1, 0)
5
"""

from __future__ import annotations

import re

from symidx._text import lazy_pattern, too_long
from symidx.errors import MapError, ParseError
from symidx.layout.nested import Layout, _Parser
from symidx.layout.nested import parse_layout as parse_shape_stride
from symidx.layout.swizzle import ComposedLayout, Swizzle

__all__ = ["element_bits", "parse_layout", "parse_swizzle"]

_SWIZZLE = lazy_pattern(r"\s*(Sw|S)\s*<\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*>\s*")
_WRAPPER = lazy_pattern(r"\s*!cute\.(\w+)\s*<")
_QUOTED = lazy_pattern(r'"([^"]*)"')
#: Bits of the element types a CuTe DSL memref names.
_ELEMENT_BITS = {"bf16": 16, "f16": 16, "f32": 32, "tf32": 32, "f64": 64, "i1": 1, "i4": 4,
                 "i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32,
                 "f8E4M3FN": 8, "f8E5M2": 8, "f8E8M0FNU": 8, "f6E2M3FN": 6, "f6E3M2FN": 6,
                 "f4E2M1FN": 4}


def parse_layout(text: str) -> Layout | ComposedLayout:
    """A layout in any spelling of the module docstring: a :class:`Layout` for
    ``shape:stride`` text, a :class:`ComposedLayout` for a composed one."""
    wrapper = _WRAPPER.match(text)
    if wrapper is not None:
        return _wrapped(text, wrapper)
    return _composed(text, text, 0)


def parse_swizzle(text: str) -> Swizzle:
    """``Sw<B,M,S>`` (CuTe C++) or ``S<B,M,S>`` (the CuTe DSL)."""
    return _swizzle(text, text, 0)


def element_bits(text: str) -> int | None:
    """The element size of a CuTe DSL ``!cute.memref<TYPE, ...>``; None for other text
    (and for an element type it does not know)."""
    m = re.match(r"\s*!cute\.memref\s*<\s*([\w]+)", text)
    return None if m is None else _ELEMENT_BITS.get(m.group(1))


def _wrapped(text: str, wrapper: re.Match[str]) -> Layout | ComposedLayout:
    """``!cute.NAME<..., "LAYOUT">``: the quoted layout (the last quoted string), composed
    with a swizzle given outside the quotes (a memref's split form)."""
    if not text.rstrip().endswith(">"):
        raise ParseError(f"expected '>' closing !cute.{wrapper.group(1)}<", text,
                         len(text.rstrip()))
    quoted = list(_QUOTED.finditer(text, wrapper.end()))
    if not quoted:
        raise ParseError(f"expected a quoted layout inside !cute.{wrapper.group(1)}<...>",
                         text, wrapper.end())
    last = quoted[-1]
    inner = _composed(text, last.group(1), last.start(1))
    outside = text[wrapper.end(): last.start()]
    found = [m for m in re.finditer(r"\bS(w)?\s*<", outside)]
    if not found:
        return inner
    at = wrapper.end() + found[-1].start()
    close = text.find(">", at)
    sw = _swizzle(text, text[at: close + 1], at)
    if isinstance(inner, ComposedLayout):
        raise ParseError("a swizzle both outside and inside the quoted layout", text, at)
    return ComposedLayout(sw, 0, inner)


def _composed(text: str, piece: str, at: int) -> Layout | ComposedLayout:
    """``piece`` (at offset ``at`` of ``text``): ``LAYOUT`` or ``OUTER o [OFFSET o]
    INNER``."""
    parts = _split_o(piece)
    if len(parts) == 1:
        if _SWIZZLE.fullmatch(piece):
            raise ParseError("a swizzle alone is not a layout: compose it with one, "
                             "'S<B,M,S> o (shape):(stride)'", text, at)
        return _layout_part(text, piece, at)
    if len(parts) > 3:
        raise ParseError("a composed layout is OUTER o [OFFSET o] INNER", text,
                         at + parts[3][1])
    outer_text, outer_at = parts[0]
    outer: Swizzle | Layout
    if outer_text.lstrip().startswith("S"):
        outer = _swizzle(text, outer_text, at + outer_at)
    else:
        outer = _layout_part(text, outer_text, at + outer_at)
    offset = 0
    if len(parts) == 3:
        offset = _offset_part(text, parts[1][0], at + parts[1][1])
    inner_text, inner_at = parts[-1]
    if _SWIZZLE.fullmatch(inner_text):
        raise ParseError("the inner function of a composed layout is a shape:stride layout",
                         text, at + inner_at)
    return ComposedLayout(outer, offset, _layout_part(text, inner_text, at + inner_at))


def _swizzle(text: str, piece: str, at: int) -> Swizzle:
    match = _SWIZZLE.fullmatch(piece)
    if match is None:
        raise ParseError("expected a swizzle 'Sw<B,M,S>' or 'S<B,M,S>'", text, at)
    try:
        return Swizzle(*(int(g) for g in match.groups()[1:]))
    except (MapError, ValueError) as e:  # ValueError: past Python's digit limit
        indent = len(piece) - len(piece.lstrip())
        reason = next((r for g in match.groups()[1:] if (r := too_long(g))), None)
        raise ParseError(reason or str(e), text, at + indent) from None


def _split_o(text: str) -> list[tuple[str, int]]:
    """The pieces between the composition operators `` o `` (outside brackets), each with
    its start offset."""
    pieces: list[tuple[str, int]] = []
    level = 0
    start = 0
    for i, c in enumerate(text):
        level += c in "(<"
        level -= c in ")>"
        if (level == 0 and c == "o" and (i == 0 or text[i - 1].isspace())
                and (i + 1 == len(text) or text[i + 1].isspace())):
            pieces.append((text[start:i], start))
            start = i + 1
    pieces.append((text[start:], start))
    return pieces


def _layout_part(text: str, piece: str, at: int) -> Layout:
    try:
        return parse_shape_stride(piece)
    except ParseError as e:
        raise ParseError(e.message, text, at + e.offset) from None


def _offset_part(text: str, piece: str, at: int) -> int:
    parser = _Parser(piece)
    try:
        value = parser.integer()
        parser.expect_end()
    except ParseError as e:
        raise ParseError(f"expected an integer offset: {e.message}", text,
                         at + e.offset) from None
    return value
