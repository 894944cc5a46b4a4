"""A cursor over HLO text: where the reader is, and the tokens every part of the module
reader takes -- names, integers, shapes, punctuation -- each failing with a located
:class:`~symidx.errors.ParseError`.
"""

from __future__ import annotations

import re

from symidx._text import lazy_pattern, too_long
from symidx.errors import ParseError
from symidx.hlo.ir import SourceText
from symidx.hlo.lexer import BLANK_START, INT_RE, NAME_RE, WORD_RE, describe, skip
from symidx.hlo.shape import (
    MAX_NESTING,
    ShapeLike,
    can_start_shape,
    parse_shape_at,
    plain_shape,
)

__all__ = ["PLAIN_SHAPE", "Cursor", "name_end"]

# (Each run of a character class here is followed by a character outside it: taken whole,
# possessively, it is what a backtracking run would end with, found with less work.)
_ARRAY = r"[a-z][a-z0-9]*+\[[0-9,]*+\]"
# A layout without comments or quotes inside (tiles nest parentheses in it), or a tuple of
# such, which may hold tuples one level deep and ``/*...*/`` comments (``/*index=5*/``).
_LAYOUT = r"\{[^{}/\"']*+\}"
_FLAT = r"(?:[^()/\"']++|/\*[^*]*\*/)"  # a run of plain characters at a time
_TUPLE = r"\((?:" + _FLAT + r"|\((?:" + _FLAT + r"|\(" + _FLAT + r"*\))*\))*\)"
#: The text of a shape in its common spellings: an array with plain dims and an optional
#: layout, or a tuple of such. Only the text: the shape reader decides what it is.
PLAIN_SHAPE = _ARRAY + r"(?:" + _LAYOUT + r")?|" + _TUPLE
# A shape's text where the full shape reader stops too whatever follows (after a layout's '}'
# or a tuple's ')', or after ']' before a name, ',', ')', '->' or a '{' that opens a body, not a
# layout), so that its result can be reused wherever the same text occurs.
_PLAIN_SHAPE_RE = lazy_pattern(
    _ARRAY + r"(?:" + _LAYOUT + r"|(?=[ \t]*(?:[%A-Za-z_,)]|->|\{[ \t\r\n]*[%A-Za-z_])))|"
    + _TUPLE)


class Cursor:
    """A position in ``text`` (from ``source``) and the token readers."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.pos = 0
        self.document = SourceText(text, source)
        self._line_offset = 0
        self._line = 1
        self._plain_shapes: dict[str, ShapeLike] = {}
        #: How deep inline instructions and inline computations are nested right now.
        self.depth = 0

    def error(self, message: str, offset: int) -> ParseError:
        return ParseError(message, self.text, offset, source=self.source)

    def line_of(self, offset: int) -> int:
        """1-based line of ``offset``; amortised O(1) for increasing offsets."""
        if offset < self._line_offset:
            return self.text.count("\n", 0, offset) + 1
        self._line += self.text.count("\n", self._line_offset, offset)
        self._line_offset = offset
        return self._line

    def skip(self) -> int:
        """Skip whitespace and comments; return the new position."""
        pos = self.pos
        if self.text[pos: pos + 1] in BLANK_START:  # else a token is right here: nothing to do
            self.pos = pos = skip(self.text, pos, self.source)
        return pos

    def peek(self) -> str:
        """The next significant character, or '' at the end."""
        self.skip()
        return self.text[self.pos: self.pos + 1]

    def expect(self, token: str, context: str) -> None:
        self.skip()
        if not self.text.startswith(token, self.pos):
            raise self.error(
                f"expected {token!r} {context}, found {describe(self.text, self.pos)}", self.pos
            )
        self.pos += len(token)

    def word_here(self) -> str:
        """The bare word at the current position ('' if none), without consuming it."""
        match = WORD_RE.match(self.text, self.skip())
        return match.group() if match else ""

    def name(self, what: str, *, colon: bool = True) -> tuple[str, int]:
        """Read a name (leading '%' dropped); return it and its offset. As in XLA's lexer, a
        bare name may end with ':' (``HloModule m:``, ``p0: f32[]``) when ``colon``."""
        start = self.skip()
        match = NAME_RE.match(self.text, start)
        if match is None:
            raise self.error(f"expected {what}, found {describe(self.text, start)}", start)
        self.pos = name_end(self.text, match) if colon else match.end()
        return match.group(1), start

    def integer(self, what: str) -> int:
        start = self.skip()
        match = INT_RE.match(self.text, start)
        if match is None:
            raise self.error(f"expected {what}, found {describe(self.text, start)}", start)
        reason = too_long(match.group())
        if reason is not None:
            raise self.error(f"{what}: {reason}", start)
        self.pos = match.end()
        return int(match.group())

    def shape(self) -> ShapeLike | None:
        """Read a shape if one starts here, else None. Shapes repeat a lot: the text of one
        read in full that ends where :data:`PLAIN_SHAPE` ends is remembered, and the same
        text later gives the same (shared) shape without reading it again."""
        start = self.skip()
        plain = _PLAIN_SHAPE_RE.match(self.text, start)
        if plain is not None:
            known = self._plain_shapes.get(plain.group())
            if known is None:
                known = plain_shape(plain.group(), self._plain_shapes)
                if known is not None:
                    self._plain_shapes[plain.group()] = known
            if known is not None:
                self.pos = plain.end()
                return known
        if not can_start_shape(self.text, start, self.source):
            return None
        shape, self.pos = parse_shape_at(self.text, start, self.source)
        if plain is not None and self.pos == plain.end():
            self._plain_shapes[plain.group()] = shape
        return shape

    def required_shape(self, what: str) -> ShapeLike:
        """Read a shape; ParseError if none starts here."""
        shape = self.shape()
        if shape is None:
            raise self.error(f"expected {what}, found {describe(self.text, self.pos)}", self.pos)
        return shape

    def nest(self, offset: int) -> None:
        """Enter an inline instruction or computation (ParseError when too deep)."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(f"instructions or computations nested deeper than {MAX_NESTING}",
                             offset)


def name_end(text: str, match: re.Match[str]) -> int:
    """Where the name ``match`` ends, taking a ':' right after a bare name with it (XLA's
    lexer reads ``p0:`` as the name ``p0``)."""
    end = match.end()
    return end + 1 if text.startswith(":", end) and text[match.start()] != "%" else end
