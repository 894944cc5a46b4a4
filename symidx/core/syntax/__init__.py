"""Indexing-map text: the parser (:mod:`symidx.core.syntax.parser`) and, from the floor below,
the printers (:mod:`symidx.core.indexing_map.text` and :func:`symidx.core.indexing_map.print_map`),
under one name; and other compilers' syntaxes, read (:mod:`symidx.core.syntax.foreign`: MLIR,
Inductor, TVM, isl) and printed (:mod:`symidx.core.syntax.styles`: isl, Inductor).

Printing is canonical: terms of a sum in a fixed order, constraints sorted by their text,
so equal maps print equal text whatever order they were built in; what is printed parses
back to an equal map (in the same syntax as the style).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from symidx.core.indexing_map.map import print_map as _print_core
from symidx.core.indexing_map.text import STYLES, Style, print_expr
from symidx.core.syntax.styles import FOREIGN_STYLES, print_foreign

if TYPE_CHECKING:
    from symidx.core.indexing_map import IndexingMap
    from symidx.core.syntax.foreign import SYNTAXES, detect_syntax
    from symidx.core.syntax.parser import MAX_DEPTH, parse_expr

__all__ = ["parse_map", "parse_expr", "print_map", "print_expr", "STYLES", "Style",
           "FOREIGN_STYLES", "SYNTAXES", "MAX_DEPTH", "detect_syntax"]


def parse_map(text: str, source: str = "", *, syntax: str = "xla",
              allow_empty: bool = True) -> IndexingMap:
    """Parse one indexing map. ``syntax``: ``xla`` (symidx's and XLA's text, the
    default), ``mlir``, ``inductor``, ``tvm``, ``isl``, or ``auto`` to tell from the text
    (:func:`detect_syntax`); see :mod:`symidx.core.syntax.foreign`. ``allow_empty``: an
    interval written empty (``d0 in [5, 3]``) makes the map KNOWN EMPTY, as XLA's parser
    reads it; with False it is a :class:`~symidx.errors.ParseError` at the interval, as
    the command line reads the maps a user writes."""
    if syntax == "xla":
        from symidx.core.syntax.parser import parse_map as parse_xla

        return parse_xla(text, source, allow_empty=allow_empty)
    from symidx.core.syntax.foreign import parse_foreign

    return parse_foreign(text, syntax, source, allow_empty=allow_empty)


def __getattr__(name: str) -> Any:
    """``SYNTAXES`` and ``detect_syntax``, from :mod:`symidx.core.syntax.foreign`, and
    ``parse_expr`` and ``MAX_DEPTH``, from :mod:`symidx.core.syntax.parser`, imported when first
    used: printing maps needs neither reader (start-up)."""
    if name in ("SYNTAXES", "detect_syntax"):
        from symidx.core.syntax import foreign

        return getattr(foreign, name)
    if name in ("parse_expr", "MAX_DEPTH"):
        from symidx.core.syntax import parser

        return getattr(parser, name)
    raise AttributeError(f"module 'symidx.core.syntax' has no attribute {name!r}")


def print_map(m: IndexingMap, style: str = "doc") -> str:
    """The map as text in one of :data:`STYLES`, ``doc``, ``xla``, ``mlir``
    (:func:`symidx.core.indexing_map.print_map`: symidx's own text, read back by
    :func:`parse_map`), or of :data:`FOREIGN_STYLES`, ``isl`` or ``inductor``
    (:mod:`symidx.core.syntax.styles`: read back with ``syntax=style``)."""
    if style in FOREIGN_STYLES:
        return print_foreign(m, style)
    return _print_core(m, style)
