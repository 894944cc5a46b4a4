"""symidx: symbolic tensor indexing maps for XLA HLO programs and memory layouts.

Indexing maps are sympy expressions over dimension (``d``), range (``s``) and runtime
(``rt``) variables with interval domains and constraints. Start with
:func:`parse_map` / :class:`IndexingMap`, :func:`compose`, :func:`simplify` and
:func:`equal`; the command line is ``symidx`` (see ``symidx --help``).

Every name below loads its module on first use (sympy, networkx and numpy are not imported
by ``import symidx`` alone), so the command line starts at once.
"""

from typing import TYPE_CHECKING

from symidx.errors import (
    ArgumentTypeError,
    HloShapeError,
    HloValidationError,
    LimitReached,
    MapError,
    ParseError,
    SymidxError,
    TooLargeError,
    Undecided,
    UnsupportedOpError,
)

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from symidx.core.expr import CeilDiv, FloorDiv, Mod, dim, rt, sym
    from symidx.core.indexing_map import IndexingMap, RuntimeVar, ValueSource
    from symidx.core.interval import Interval
    from symidx.core.simplify import compose, remove_unused_symbols, result_ranges, simplify
    from symidx.core.syntax import parse_expr, parse_map, print_expr, print_map
    from symidx.core.verify import Verdict, decide, equal
    from symidx.hlo import parse_hlo, parse_module
    from symidx.jax_support import capture, from_jax
    from symidx.ops import input_to_output, output_to_input
    from symidx.pallas import pallas_report

__version__ = "0.1.0"

#: Public name -> the module that defines it, imported on first use.
_LAZY = {
    **dict.fromkeys(("CeilDiv", "FloorDiv", "Mod", "dim", "rt", "sym"), "symidx.core.expr"),
    **dict.fromkeys(("IndexingMap", "RuntimeVar", "ValueSource"), "symidx.core.indexing_map"),
    "Interval": "symidx.core.interval",
    **dict.fromkeys(("compose", "remove_unused_symbols", "result_ranges", "simplify"),
                    "symidx.core.simplify"),
    **dict.fromkeys(("parse_expr", "parse_map", "print_expr", "print_map"),
                    "symidx.core.syntax"),
    **dict.fromkeys(("Verdict", "decide", "equal"), "symidx.core.verify"),
    **dict.fromkeys(("parse_hlo", "parse_module"), "symidx.hlo"),
    **dict.fromkeys(("output_to_input", "input_to_output"), "symidx.ops"),
    **dict.fromkeys(("from_jax", "capture"), "symidx.jax_support"),
    "pallas_report": "symidx.pallas",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'symidx' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "IndexingMap", "Interval", "RuntimeVar", "ValueSource", "compose", "simplify",
    "remove_unused_symbols", "result_ranges",
    "parse_map", "parse_expr", "print_map", "print_expr", "equal", "decide", "Verdict",
    "FloorDiv", "Mod", "CeilDiv", "dim", "sym", "rt",
    "parse_hlo", "parse_module", "output_to_input", "input_to_output", "from_jax",
    "capture", "pallas_report",
    "SymidxError", "ParseError", "MapError", "UnsupportedOpError", "TooLargeError", "Undecided",
    "HloShapeError", "HloValidationError", "LimitReached", "ArgumentTypeError",
    "__version__",
]
