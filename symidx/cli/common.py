"""What every command shares: the argument parser class, ``--style``, reading input."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from symidx.errors import SymidxError

if TYPE_CHECKING:
    from symidx.indexing_map import IndexingMap

#: The printing styles of maps (see :data:`symidx.syntax.STYLES`, which loads sympy).
STYLES = ("doc", "xla", "mlir", "isl", "inductor")
#: The syntaxes map text is read in (see :data:`symidx.syntax.SYNTAXES`).
SYNTAXES = ("auto", "xla", "mlir", "inductor", "tvm", "isl")


class UsageError(Exception):
    """Bad command-line usage (exit code 2). ``usage`` is the usage line of the
    (sub)command that was misused, when known."""

    def __init__(self, message: str, usage: str | None = None) -> None:
        super().__init__(message)
        self.usage = usage


class Parser(argparse.ArgumentParser):
    """argparse, reporting usage errors by exception so ``main`` returns instead of
    exiting the interpreter; the error carries the misused subcommand's own usage."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}", self.format_usage())


def add_style(p: argparse.ArgumentParser) -> None:
    p.add_argument("--style", choices=STYLES, default="doc",
                   help="doc: the seeds' multi-line form (default); xla: one line as current "
                        "XLA prints; mlir: affine_map<...>; isl: an isl map; inductor: "
                        "PyTorch Inductor's index expressions")


def add_syntax(p: argparse.ArgumentParser) -> None:
    p.add_argument("--syntax", choices=SYNTAXES, default="auto",
                   help="the syntax of the map text: xla (symidx's and XLA's), mlir "
                        "(affine_map, #map = affine_map<...>), inductor (//, %%, FloorDiv, "
                        "ModularIndexing, ...), tvm (floordiv, floormod), isl ({ [i] -> [o] "
                        ": ... }); auto (default): told by the text. An expression's domain "
                        "follows it: ', domain: x in [0, 15]'")


def read_map(arg: str, label: str, syntax: str = "xla") -> IndexingMap:
    """A map from a command-line argument, or from stdin for ``-``, in ``syntax``."""
    from symidx.syntax import parse_map

    text = sys.stdin.read() if arg == "-" else arg
    return parse_map(text, source=label, syntax=syntax)


def read_text_file(path: str) -> tuple[str, str]:
    """(text, source label) of a file, or of stdin for ``-``."""
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except (OSError, UnicodeDecodeError) as e:
        raise SymidxError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None


def need(module: str, extra: str, what: str) -> None:
    """Stop at once (before any work) when an optional package is missing, naming the
    extra that brings it: ``need("matplotlib", "plot", "--png")``."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise SymidxError(f"{what} needs {module}, which is not installed: "
                          f"pip install 'symidx[{extra}]'")
