"""The tokens of the map syntaxes, and what both readers (:mod:`symidx.core.syntax.parser`,
:mod:`symidx.core.syntax.foreign`) ask of the next ones."""

from __future__ import annotations

from typing import Generic, NamedTuple, TypeVar

from symidx.core.indexing_map.text import int_of_digits
from symidx.errors import ParseError

MAX_DIGITS = 100_000
"""Integers in map text have at most this many digits (past Python's own limit of 4,300,
they are converted in pieces: printing converts them back the same way)."""


class Token(NamedTuple):
    """One token (a tuple: the readers make one per token of the text)."""

    kind: str  # "int", "ident", "punct", "eof" (and "bad": a character no token starts with)
    value: str
    offset: int


PlainToken = tuple[str, str, int]
"""A token as a plain tuple ``(kind, value, offset)``, as :class:`Token` (whose fields
these are): the reader of map text makes one per token, and a plain tuple is made
faster."""

_T = TypeVar("_T", bound=PlainToken)


def describe(tok: PlainToken) -> str:
    """A token as an error names it."""
    return "end of text" if tok[0] == "eof" else repr(tok[1])


class TokenCursor(Generic[_T]):
    """``at``, ``accept``, ``expect`` and ``signed_int`` over a reader's tokens (a
    :class:`Token` or a :data:`PlainToken`: read by position); the reader gives ``peek``,
    ``next`` and ``error`` (and may read integers its own way: ``int_value``)."""

    def peek(self, k: int = 0) -> _T:
        raise NotImplementedError

    def next(self) -> _T:
        raise NotImplementedError

    def error(self, message: str, offset: int) -> ParseError:
        raise NotImplementedError

    def at(self, value: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok[1] == value and tok[0] in ("punct", "ident")

    def accept(self, value: str) -> bool:
        if self.at(value):
            self.next()
            return True
        return False

    def expect(self, value: str, what: str = "") -> _T:
        tok = self.peek()
        if not (tok[1] == value and tok[0] in ("punct", "ident")):
            raise self.error(f"expected {what or repr(value)}, found {describe(tok)}",
                             tok[2])
        return self.next()

    def int_value(self, tok: PlainToken) -> int:
        """The value of an integer token, or a located error when it has more than
        :data:`MAX_DIGITS` digits."""
        if len(tok[1]) > MAX_DIGITS:
            raise self.error(f"an integer of {len(tok[1])} digits: at most {MAX_DIGITS} "
                             f"are read", tok[2])
        return int_of_digits(tok[1])

    def signed_int(self) -> int:
        """An integer after any number of signs."""
        sign = 1
        while self.peek()[0] == "punct" and self.peek()[1] in "+-":
            if self.next()[1] == "-":
                sign = -sign
        tok = self.next()
        if tok[0] != "int":
            raise self.error(f"expected an integer, found {describe(tok)}", tok[2])
        return sign * self.int_value(tok)
