"""Literal values: the text inside ``constant(...)``, read for a given shape as XLA reads it
(``ParseLiteral`` / ``ParseDenseLiteral`` in ``xla/hlo/parser/hlo_parser.cc``)::

    f32[] 1.5           s32[3] {1, 2, -3}        f32[2,2] {{1, 2}, {3, 4}}
    pred[2] {true, 0}   c64[2] {(1, 2), (-inf, nan)}                 (real, imaginary)
    f32[1000] {...}     elided values (``...`` at the first level)
    (f32[2], s32[]) ( {1, 2}, 3 )                                    a tuple of literals
    bf16[17,22] 1       a single value for an array: XLA sets the first element to it and
                        leaves the others zero

Numbers are decimal integers and decimals (with an exponent or not), ``inf``, ``-inf``,
``nan``, ``-nan`` and ``nan(0x7f)`` (a NaN payload). Commas between elements are optional,
comments may appear between tokens, and every array must have exactly as many elements as
its shape says. An integer must fit its type (``s4[] 8`` is an error; a ``u64`` takes any
64-bit pattern, ``-1`` included, as XLA does); ``f16``, ``bf16``, ``f32``, ``f64`` and the
IEEE-like 8-bit types reject values that would round to infinity. ``pred`` takes
``true``/``false`` and integers (non-zero is true).
"""

from __future__ import annotations

import math
import re
from typing import TypeAlias

from symidx._text import lazy_pattern, too_long
from symidx.errors import ParseError
from symidx.hlo.lexer import describe, skip
from symidx.hlo.shape import MAX_NESTING, Shape, ShapeLike, TupleShape, integer_bounds

__all__ = ["LiteralValue", "parse_literal"]

LiteralValue: TypeAlias = "bool | int | float | complex | tuple[LiteralValue, ...]"

# One token (group 'tok') after any whitespace and comments; 'end' when only those remain.
_TOKEN_RE = lazy_pattern(
    r"(?:\s+|/\*.*?\*/|//[^\n\r]*)*"
    r"(?:(?P<tok>[{}(),]|\.\.\.|-?nan(?:\(0x[0-9a-fA-F]+\))?|-?inf|true|false"
    r"|-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)|(?P<end>\Z))", re.S)
_INT_TOKEN_RE = lazy_pattern(r"-?\d+")
# A vector of integers after its '{', written plainly (group: the values with their commas).
_INT_VECTOR_RE = lazy_pattern(r"[ \t]*(-?\d{1,19}(?:[ \t]*,[ \t]*-?\d{1,19})*)[ \t]*\}")
_NAN_RE = lazy_pattern(r"-?nan(?:\(0x([0-9a-fA-F]+)\))?")
_UINT64 = 1 << 64
# Floating types whose overflow XLA rejects: (mantissa bits, largest exponent). A value at or
# beyond max + ulp/2 = 2**emax * (2 - 2**-(m+1)) rounds to infinity.
_IEEE_LIKE = {"f16": (10, 15), "bf16": (7, 127), "f32": (23, 127), "f8e5m2": (2, 15),
              "f8e4m3": (3, 7), "f8e3m4": (4, 3)}
# Bits of NaN payload each type can hold (the others have no payloads).
_NAN_PAYLOAD_BITS = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52, "f8e5m2": 2, "f8e4m3": 3,
                     "f8e3m4": 4, "c64": 23, "c128": 52}
_F32_MAX = 3.4028234663852886e38
_NOT_NUMBERS = frozenset({"", "{", "}", "(", ")", ",", "...", "true", "false"})


def parse_literal(text: str, pos: int, shape: ShapeLike,
                  source: str = "") -> tuple[LiteralValue | None, int]:
    """Read the literal for ``shape`` at ``pos``; return its value and the offset past it.

    The value is a bool, int, float or complex for a scalar, nested tuples (outermost
    dimension first) for an array, and None for an elided array (``{...}``), for an array
    given a single value, and for a tuple-shaped literal (whose elements are checked all the
    same). Raises :class:`ParseError` at the offending token.
    """
    return _Reader(text, source).literal(pos, shape, 0)


class _Reader:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source

    def error(self, message: str, offset: int) -> ParseError:
        return ParseError(message, self.text, offset, source=self.source)

    def token(self, pos: int) -> tuple[str, int, int]:
        """The token after ``pos`` ('' at the end of the text), its offset and its end."""
        match = _TOKEN_RE.match(self.text, pos)
        if match is None:
            at = skip(self.text, pos, self.source)
            raise self.error(f"unexpected {describe(self.text, at)} in a literal", at)
        if match.group("end") is not None:
            return "", match.end(), match.end()
        return match.group("tok"), match.start("tok"), match.end()

    def literal(self, pos: int, shape: ShapeLike, depth: int) -> tuple[LiteralValue | None, int]:
        if isinstance(shape, TupleShape):
            return self.tuple_literal(pos, shape, depth)
        tok, at, end = self.token(pos)
        if tok == "{":
            if not shape.dims:
                raise self.error(f"{shape} is a scalar: its literal takes no braces", at)
            if len(shape.dims) == 1 and shape.element_type[0] in "su":
                vector = self.integer_vector(end, shape)
                if vector is not None:
                    return vector
            return self.dense(end, shape)
        if tok == ",":  # XLA reads no value then: the array keeps its zeros
            return None, end
        if tok in ("}", ")", "..."):
            raise self.error(f"unexpected {tok!r} in a literal", at)
        value, end = self.scalar(tok, at, end, shape)
        # A single value for an array: XLA makes it the first element, the others zero.
        return (None if shape.dims else value), end

    def tuple_literal(self, pos: int, shape: TupleShape, depth: int) -> tuple[None, int]:
        if depth >= MAX_NESTING:
            raise self.error(f"literal nested deeper than {MAX_NESTING}", pos)
        tok, at, pos = self.token(pos)
        if tok != "(":
            raise self.error(f"expected '(' to open a tuple literal, found "
                             f"{describe(self.text, at)}", at)
        for i, element in enumerate(shape.elements):
            if i:
                tok, at, end = self.token(pos)
                pos = end if tok == "," else pos  # XLA lets the comma go missing
            _, pos = self.literal(pos, element, depth + 1)
        tok, at, pos = self.token(pos)
        if tok != ")":
            raise self.error(f"expected ')' after the {len(shape.elements)} elements of a tuple "
                             f"literal, found {describe(self.text, at)}", at)
        return None, pos

    def dense(self, pos: int, shape: Shape) -> tuple[LiteralValue | None, int]:
        """The rest of a braced array literal of rank >= 1 after its first ``{`` (at
        ``pos``): nested braces, one level per dimension."""
        dims, rank = shape.dims, len(shape.dims)
        seen = [0] * rank  # elements (or sub-arrays) seen at each open level
        stack: list[list[LiteralValue]] = [[]]
        elided = False
        while True:
            tok, at, pos = self.token(pos)
            level = len(stack)
            if tok == "{":
                if level == rank:
                    raise self.error(f"{shape} literal nested deeper than its rank {rank}", at)
                if level:
                    self.count(seen, level - 1, dims, at, shape)
                seen[level] = 0
                stack.append([])
            elif tok == "}":
                if not level:
                    raise self.error("unexpected '}' in a literal", at)
                if seen[level - 1] != dims[level - 1]:
                    raise self.error(
                        f"{shape} literal: expected {dims[level - 1]} elements at depth "
                        f"{level}, found {seen[level - 1]}", at)
                done = tuple(stack.pop())
                if not stack:
                    return (None if elided else done), pos
                stack[-1].append(done)
            elif tok == ",":
                if not level:
                    raise self.error("unexpected ',' in a literal", at)
            elif tok == "...":
                if level != 1:
                    raise self.error("'...' may only stand for the elements of the outermost "
                                     "dimension of a literal", at)
                seen[0] = dims[0]
                elided = True
            elif tok and tok != ")":
                if level != rank:
                    raise self.error(f"{shape} literal: a value at depth {level}, expected "
                                     f"nested braces {rank} deep", at)
                self.count(seen, rank - 1, dims, at, shape)
                value, pos = self.scalar(tok, at, pos, shape)
                stack[-1].append(value)
            else:
                raise self.error(f"unexpected {describe(self.text, at)} in a literal", at)

    def integer_vector(self, pos: int, shape: Shape) -> tuple[LiteralValue, int] | None:
        """The rest of a vector of integers after its ``{`` (at ``pos``) read with one match,
        when it is written plainly (``1, 2, -3}``: commas, blanks, no comment) and every value
        fits the element type; None otherwise (:meth:`dense` reads it and says what is
        wrong)."""
        match = _INT_VECTOR_RE.match(self.text, pos)
        if match is None:
            return None
        values = [int(v) for v in match.group(1).split(",")]
        bits = int(shape.element_type[1:])
        if shape.element_type[0] == "u":
            lo, hi = 0, (1 << bits) - 1
        else:
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        if len(values) != shape.dims[0] or min(values) < lo or max(values) > hi:
            return None
        return tuple(values), match.end()

    def count(self, seen: list[int], level: int, dims: tuple[int, ...], at: int,
              shape: Shape) -> None:
        seen[level] += 1
        if seen[level] > dims[level]:
            raise self.error(f"{shape} literal: more than {dims[level]} elements at depth "
                             f"{level + 1}", at)

    def scalar(self, tok: str, at: int, end: int, shape: Shape) -> tuple[LiteralValue, int]:
        """The value of the element whose first token is ``tok`` (at ``at``, ending at
        ``end``); a complex element ``(re, im)`` reads on past ``end``."""
        kind = shape.element_type
        if kind in ("c64", "c128"):
            if tok != "(":
                raise self.error(f"expected a complex value (real, imaginary) for {kind}, "
                                 f"found {describe(self.text, at)}", at)
            real_tok, real_at, pos = self.token(end)
            real = self.floating(real_tok, real_at, kind)
            tok, comma_at, pos = self.token(pos)
            if tok != ",":
                raise self.error("expected ',' after the real part of a complex value", comma_at)
            imag_tok, imag_at, pos = self.token(pos)
            imag = self.floating(imag_tok, imag_at, kind)
            tok, close_at, pos = self.token(pos)
            if tok != ")":
                raise self.error("expected ')' after a complex value", close_at)
            return complex(real, imag), pos
        if kind == "pred":
            if tok in ("true", "false"):
                return tok == "true", end
            return self.integer(tok, at, kind) != 0, end
        if tok in ("true", "false"):
            raise self.error(f"{tok} is not a value of element type {kind}", at)
        if kind[0] in "su":
            return self.integer(tok, at, kind), end
        if kind in ("token", "opaque"):
            raise self.error(f"element type {kind} has no literal values", at)
        return self.floating(tok, at, kind), end

    def integer(self, tok: str, at: int, kind: str) -> int:
        """An integer token, range-checked for ``kind`` as XLA does."""
        if not _INT_TOKEN_RE.fullmatch(tok):
            raise self.error(f"expected an integer for element type {kind}, found {tok!r}", at)
        if too_long(tok) is not None:
            raise self.error(f"integer of {len(tok)} characters does not fit in 64 bits", at)
        value = int(tok)
        if not -(1 << 63) <= value < _UINT64:
            raise self.error(f"integer {tok} does not fit in 64 bits", at)
        if value >= 1 << 63:
            value -= _UINT64  # XLA reads the 64-bit pattern as a signed integer
        if kind == "pred":
            return value
        bounds = integer_bounds(kind)
        if bounds is None:
            raise self.error(f"element type {kind} has no integer values", at)
        lo, hi = bounds
        if kind[0] == "u":
            if kind == "u64":
                return value % _UINT64
            unsigned = value % _UINT64
            if unsigned > hi:
                raise self.error(f"value {tok} is out of range for {kind}: [{lo}, {hi}]", at)
            return unsigned
        if not lo <= value <= hi:
            raise self.error(f"value {tok} is out of range for {kind}: [{lo}, {hi}]", at)
        return value

    def floating(self, tok: str, at: int, kind: str) -> float:
        """A floating-point token (integers too), checked for overflow and NaN payloads."""
        if tok in _NOT_NUMBERS:
            raise self.error(f"expected a number for element type {kind}, found "
                             f"{describe(self.text, at)}", at)
        nan = _NAN_RE.fullmatch(tok)
        if nan is not None:
            if nan.group(1) is not None:
                payload = int(nan.group(1), 16)
                bits = _NAN_PAYLOAD_BITS.get(kind, 0)
                if not 0 < payload < (1 << bits):
                    raise self.error(f"NaN payload 0x{nan.group(1)} does not fit element type "
                                     f"{kind}", at)
            return math.nan
        value = float(tok)
        if math.isinf(value):
            if "inf" not in tok:
                raise self.error(f"{tok} is out of range for a double", at)
            return value
        if kind in _IEEE_LIKE:
            mantissa, emax = _IEEE_LIKE[kind]
            if abs(value) >= 2.0 ** emax * (2 - 2.0 ** -(mantissa + 1)):
                raise self.error(f"value {tok} is out of range for {kind}", at)
        elif kind == "c64" and abs(value) > _F32_MAX:
            raise self.error(f"value {tok} is out of range for the parts of a c64", at)
        return value

