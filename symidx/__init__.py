"""symidx: symbolic tensor indexing maps for XLA HLO programs and memory layouts.

Indexing maps are sympy expressions over dimension (``d``), range (``s``) and runtime
(``rt``) variables with interval domains and constraints. Start with
:func:`parse_map` / :class:`IndexingMap`, :func:`compose`, :func:`simplify` and
:func:`equal`; the command line is ``symidx`` (see ``symidx --help``).
"""

from symidx.errors import MapError, ParseError, SymidxError, TooLargeError, UnsupportedOpError
from symidx.expr import CeilDiv, FloorDiv, Mod, dim, rt, sym
from symidx.indexing_map import IndexingMap, RuntimeVar, compose
from symidx.interval import Interval
from symidx.simplify import remove_unused_symbols, simplify
from symidx.syntax import parse_expr, parse_map, print_expr, print_map
from symidx.verify import Verdict, equal

__version__ = "0.1.0"

__all__ = [
    "IndexingMap", "Interval", "RuntimeVar", "compose", "simplify", "remove_unused_symbols",
    "parse_map", "parse_expr", "print_map", "print_expr", "equal", "Verdict",
    "FloorDiv", "Mod", "CeilDiv", "dim", "sym", "rt",
    "SymidxError", "ParseError", "MapError", "UnsupportedOpError", "TooLargeError",
    "__version__",
]
