"""The tokens of the map syntaxes, and what both readers (:mod:`symidx.core.syntax.parser`,
:mod:`symidx.core.syntax.foreign`) ask of the next ones."""

from __future__ import annotations

from typing import NamedTuple

from symidx.errors import ParseError

MAX_DIGITS = 100_000
"""Integers in map text have at most this many digits (past Python's own limit of 4,300,
they are converted in pieces: printing converts them back the same way)."""


class Token(NamedTuple):
    """One token (a tuple: the readers make one per token of the text)."""

    kind: str  # "int", "ident", "punct", "eof" (and "bad": a character no token starts with)
    value: str
    offset: int


def describe(tok: Token) -> str:
    """A token as an error names it."""
    return "end of text" if tok.kind == "eof" else repr(tok.value)


class TokenCursor:
    """``at``, ``accept``, ``expect`` and ``signed_int`` over a reader's tokens; the reader
    gives ``peek``, ``next`` and ``error`` (and may read integers its own way:
    ``int_value``)."""

    def peek(self, k: int = 0) -> Token:
        raise NotImplementedError

    def next(self) -> Token:
        raise NotImplementedError

    def error(self, message: str, offset: int) -> ParseError:
        raise NotImplementedError

    def at(self, value: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok.kind in ("punct", "ident") and tok.value == value

    def accept(self, value: str) -> bool:
        if self.at(value):
            self.next()
            return True
        return False

    def expect(self, value: str, what: str = "") -> Token:
        tok = self.peek()
        if not self.at(value):
            raise self.error(f"expected {what or repr(value)}, found {describe(tok)}",
                             tok.offset)
        return self.next()

    def int_value(self, tok: Token) -> int:
        """The value of an integer token, or a located error when it has more than
        :data:`MAX_DIGITS` digits."""
        from symidx.core.indexing_map.text import int_of_digits

        if len(tok.value) > MAX_DIGITS:
            raise self.error(f"an integer of {len(tok.value)} digits: at most {MAX_DIGITS} "
                             f"are read", tok.offset)
        return int_of_digits(tok.value)

    def signed_int(self) -> int:
        """An integer after any number of signs."""
        sign = 1
        while self.peek().kind == "punct" and self.peek().value in "+-":
            if self.next().value == "-":
                sign = -sign
        tok = self.next()
        if tok.kind != "int":
            raise self.error(f"expected an integer, found {describe(tok)}", tok.offset)
        return sign * self.int_value(tok)
