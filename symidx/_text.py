"""Text that came from outside (file names, module text) made safe to show: on a terminal
(:func:`terminal_safe`) and in Markdown (:func:`markdown_safe`)."""

from __future__ import annotations

import re
import sys
from typing import Any, cast

__all__ = ["terminal_safe", "markdown_safe", "lazy_pattern"]

_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if c != 0x09}
# the characters that reorder or hide what follows (bidirectional overrides and isolates,
# zero-width characters, line and paragraph separators, the byte-order mark)
_CONTROLS.update({c: f"\\u{c:04x}" for c in (0x061C, *range(0x200B, 0x2010),
                                             *range(0x2028, 0x202F), *range(0x2060, 0x206A),
                                             0xFEFF)})


def terminal_safe(text: str) -> str:
    """``text`` with the characters a terminal acts on (escape sequences, carriage returns,
    newlines, other C0 and C1 controls) shown as ``\\xNN``, and those that reorder or hide
    the text after them (bidirectional overrides, zero-width characters) as ``\\uNNNN``:
    printed, never obeyed."""
    return text.translate(_CONTROLS)


_MARKDOWN = {ord(c): f"\\{c}" for c in "\\`*_{}[]()#+-.!|~"}


def markdown_safe(text: str) -> str:
    """``text`` as literal text in a Markdown table cell or heading: HTML escaped (no tag
    or entity of the text is rendered), Markdown's punctuation backslash-escaped (no link,
    image, emphasis or column break), line breaks and other controls shown as ``\\xNN``
    (no row is split)."""
    import html  # here: most commands never write Markdown

    return html.escape(terminal_safe(text), quote=True).translate(_MARKDOWN)


# Python accepts no limit on digits below 640 (``sys.int_info.str_digits_check_threshold``):
# an integer of at most this many characters is always read.
_ALWAYS_READ = 640


def too_long(digits: str) -> str | None:
    """Why the integer text ``digits`` cannot be read (Python refuses to read an integer of
    more than ``sys.get_int_max_str_digits()`` digits, a guard against quadratic time), or
    None when it can."""
    if len(digits) <= _ALWAYS_READ:
        return None  # the common case: no limit is that low
    limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    count = len(digits.lstrip("+-_"))
    if limit and count > limit:
        return f"an integer of {count} digits is too large (at most {limit})"
    return None


class _LazyPattern:
    """A regular expression compiled when first used: each attribute (``match``, ``sub``,
    ``pattern``...) is the compiled pattern's, looked up once and then kept on the instance,
    so that later uses cost what the compiled pattern's do."""

    def __init__(self, pattern: str, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # only for names not yet kept
        if name.startswith("__") or name == "_source":  # copy, pickle: not a pattern's
            raise AttributeError(name)
        value = getattr(re.compile(*self._source), name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"lazy_pattern({self._source[0]!r}, {self._source[1]})"


def lazy_pattern(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, done when the pattern is first used instead of when
    its module is imported: a module of many patterns, most of which a command never needs,
    starts quicker. It answers everything a compiled pattern does, except ``isinstance``."""
    return cast("re.Pattern[str]", _LazyPattern(pattern, flags))
