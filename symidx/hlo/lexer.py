"""The token-level pieces of HLO text shared by the shape, literal, attribute and module
readers: what may separate tokens, names, quoted strings and balanced brackets.

As in XLA's lexer (``xla/hlo/parser/hlo_lexer.cc``), tokens may be separated by whitespace
and by comments -- ``/* ... */`` and ``//`` to the end of the line (``\\n`` or ``\\r``) --
anywhere, but not inside a quoted string. Strings are double- or single-quoted, with
backslash escapes. Every function here is iterative and linear in the text it reads.
"""

from __future__ import annotations

import re

from symidx._text import lazy_pattern
from symidx.errors import ParseError

__all__ = [
    "BLANK_START",
    "INT_RE",
    "NAME_RE",
    "WORD_RE",
    "describe",
    "end_of_string",
    "scan_balanced",
    "skip",
    "strip_comments",
    "unquote",
]

# Whitespace and complete comments; an unterminated '/*' stops the match (see skip()).
_SKIP_RE = lazy_pattern(r"(?:[ \t\n\r\f\v]+|/\*.*?\*/|//[^\n\r]*)*", re.S)
_WS_RE = lazy_pattern(r"[ \t\n\r\f\v]*")
#: The characters that can start what skip() skips ('' -- the end of the text -- is not one).
BLANK_START = frozenset(" \t\n\r\f\v/")
#: A name: ``%`` (optional) then ``[A-Za-z_][A-Za-z0-9_.-]*``; group 1 is the name.
NAME_RE = lazy_pattern(r"%?([A-Za-z_][A-Za-z0-9_.\-]*)")
#: A bare word (keywords, opcodes, enumeration values).
WORD_RE = lazy_pattern(r"[A-Za-z_][A-Za-z0-9_.\-]*")
#: A decimal integer, optionally negative.
INT_RE = lazy_pattern(r"-?\d+")
_TOKEN_RE = lazy_pattern(r"[^\s(){}\[\],:=]{1,30}")
_STRING_RES = {'"': lazy_pattern(r'"(?:[^"\\]|\\.)*"', re.S),
               "'": lazy_pattern(r"'(?:[^'\\]|\\.)*'", re.S)}
# Inside brackets: a run of characters that are neither brackets, quotes nor a '/'.
_BALANCED_CHUNK_RE = lazy_pattern(r"[^(){}\[\]\"'/]+")
# A quoted string or a comment, for strip_comments().
_STRING_OR_COMMENT_RE = lazy_pattern(
    r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|/\*.*?\*/|//[^\n\r]*', re.S)
_GLUE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_CLOSERS = {"(": ")", "{": "}", "[": "]"}
# A group with no bracket, comment or escape inside except in double-quoted strings (metadata,
# layouts, lists): where scan_balanced() would end it, found with one match.
_FLAT_GROUP_RES = {
    opener: lazy_pattern(re.escape(opener) + r"""(?:[^(){}\[\]"'/\\]|"[^"\\]*")*"""
                         + re.escape(closer))
    for opener, closer in _CLOSERS.items()
}
_ESCAPE_RE = lazy_pattern(r"\\(.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'"}


def skip(text: str, pos: int, source: str = "") -> int:
    """The offset just past the whitespace and comments at ``pos``.

    Raises :class:`ParseError` at the comment's start for a ``/*`` that is never closed.
    """
    if text[pos: pos + 1] not in BLANK_START:
        return pos  # the common case: a token right here
    end = _WS_RE.match(text, pos).end()  # type: ignore[union-attr]  # \s* always matches
    if not text.startswith("/", end):
        return end
    end = _SKIP_RE.match(text, end).end()  # type: ignore[union-attr]  # always matches
    if text.startswith("/*", end):
        raise ParseError("unterminated comment: '/*' is never closed", text, end, source=source)
    return end


def describe(text: str, pos: int) -> str:
    """The token at ``pos`` quoted for an error message, or ``end of input``."""
    if pos >= len(text):
        return "end of input"
    match = _TOKEN_RE.match(text, pos)
    return repr(match.group() if match else text[pos])


def end_of_string(text: str, pos: int, source: str = "") -> int:
    """Given a quote (``"`` or ``'``) at ``text[pos]``, the offset just past the closing one."""
    match = _STRING_RES[text[pos]].match(text, pos)
    if match is None:
        raise ParseError("unterminated string", text, pos, source=source)
    return match.end()


def scan_balanced(text: str, pos: int, source: str = "") -> int:
    """Given ``text[pos]`` in ``({[``, return the offset just past its matching closer.

    Quoted strings and comments are skipped (a bracket inside one does not count). Raises
    :class:`ParseError` for a mismatched closer or a bracket that is never closed. Iterative;
    any depth.
    """
    flat = _FLAT_GROUP_RES[text[pos]].match(text, pos)
    if flat is not None:
        return flat.end()
    stack = [pos]
    i = pos + 1
    n = len(text)
    while stack:
        match = _BALANCED_CHUNK_RE.match(text, i)
        i = match.end() if match else i
        if i >= n:
            opener = stack[-1]
            raise ParseError(f"{text[opener]!r} is never closed", text, opener, source=source)
        ch = text[i]
        if ch in "\"'":
            i = end_of_string(text, i, source)
        elif ch == "/":
            after = skip(text, i, source)
            i = after if after > i else i + 1  # a lone '/' is just a character here
        elif ch in _CLOSERS:
            stack.append(i)
            i += 1
        else:  # a closer
            opener = stack.pop()
            if _CLOSERS[text[opener]] != ch:
                raise ParseError(
                    f"unbalanced {ch!r}: {text[opener]!r} at line "
                    f"{text.count(chr(10), 0, opener) + 1} expects {_CLOSERS[text[opener]]!r}",
                    text, i, source=source,
                )
            i += 1
    return i


def strip_comments(raw: str) -> str:
    """``raw`` without its comments (those outside quoted strings).

    A comment between two characters that would otherwise run together into one token
    (``1/*c*/2``) leaves a single space, so the tokens stay apart; any other comment leaves
    nothing. Text without ``/*`` and ``//`` (a path in a string) is returned as is.
    """
    if "/*" not in raw and "//" not in raw:
        return raw
    pieces: list[str] = []
    last = 0
    written = ""  # the last character kept so far
    for match in _STRING_OR_COMMENT_RE.finditer(raw):
        if match.group()[0] in "\"'":
            continue  # a string: kept, as part of the next piece
        kept = raw[last: match.start()]
        if kept:
            pieces.append(kept)
            written = kept[-1]
        last = match.end()
        if written in _GLUE and raw[last: last + 1] in _GLUE:
            pieces.append(" ")
            written = " "
    pieces.append(raw[last:])
    return "".join(pieces)


def unquote(body: str) -> str:
    """Undo the backslash escapes of a quoted string's body (``\\"``, ``\\\\``, ``\\n``, ...)."""
    if "\\" not in body:
        return body
    return _ESCAPE_RE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), body)
