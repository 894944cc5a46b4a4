"""What every command shares: the argument parser class, ``--style``, reading input."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from symidx.errors import SymidxError

if TYPE_CHECKING:
    from symidx.core.indexing_map import IndexingMap

#: The printing styles of maps (see :data:`symidx.core.syntax.STYLES`, which loads sympy).
STYLES = ("doc", "xla", "mlir", "isl", "inductor")
#: The syntaxes map text is read in (see :data:`symidx.core.syntax.SYNTAXES`).
SYNTAXES = ("auto", "xla", "mlir", "inductor", "tvm", "isl")


class UsageError(SymidxError):
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


#: The limits of an analysis unless told otherwise (``--cpu-limit``, ``--max-maps``): budgets
#: of work, so that an answer does not depend on the machine's load (``--timeout``, the wall
#: clock, only when asked for).
DEFAULT_CPU_LIMIT = 600.0
DEFAULT_MAX_MAPS = 1_000_000


def add_limits(p: argparse.ArgumentParser, cpu_limit: float = DEFAULT_CPU_LIMIT) -> None:
    """``--cpu-limit S``, ``--timeout S`` and ``--max-maps N``: the limits of an analysis
    (0: none)."""
    add_time_limits(p, cpu_limit, "the analysis of a module",
                    "it stops with exit code 3, saying how far it got")
    p.add_argument("--max-maps", type=count, default=DEFAULT_MAX_MAPS, metavar="N",
                   help=f"distinct maps an analysis may hold (what its memory grows with) "
                        f"before it stops with exit code 3 (default {DEFAULT_MAX_MAPS:,}; 0: "
                        f"no limit)")


def add_time_limits(p: argparse.ArgumentParser, cpu_limit: float, what: str, past: str,
                    unset: str = "no limit") -> None:
    """``--cpu-limit S`` (CPU seconds ``what`` may use before ``past``; default
    ``cpu_limit``, 0 meaning ``unset``) and ``--timeout S`` (seconds of the wall clock
    besides, only when given): limits that count work (:mod:`symidx._budget`)."""
    p.add_argument("--cpu-limit", type=seconds, default=cpu_limit, metavar="S",
                   help=f"CPU seconds {what} may use before {past}: a budget of work, the "
                        f"same on a busy machine as on an idle one (default "
                        f"{cpu_limit:g}; 0: {unset})")
    p.add_argument("--timeout", type=seconds, default=0.0, metavar="S",
                   help=f"seconds of the wall clock {what} may take besides (default: no "
                        f"such limit; on a busy machine it stops sooner in work done)")


def seconds(text: str) -> float:
    """A command-line number of seconds, 0 or more (0: no limit)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds (0: no limit), found {text!r}")
    return value


def count(text: str) -> int:
    """A command-line count, 0 or more (0: no limit)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a count (0: no limit), found {text!r}")
    return value


def read_map(arg: str, label: str, syntax: str = "xla") -> IndexingMap:
    """A map from a command-line argument, or from stdin for ``-``, in ``syntax``. An
    interval the user wrote empty (``d0 in [5, 3]``) is refused where it is written: a map
    that reads nothing is written ``KNOWN EMPTY``."""
    from symidx.core.syntax import parse_map

    text = sys.stdin.read() if arg == "-" else arg
    return parse_map(text, source=label, syntax=syntax, allow_empty=False)


def read_text_file(path: str) -> tuple[str, str]:
    """(text, source label) of a file, or of stdin for ``-``."""
    if path == "-":
        data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else None
        if data is None:
            return sys.stdin.read(), "<stdin>"
        return decode(data, "<stdin>"), "<stdin>"
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise SymidxError(f"cannot read {path}: {e.strerror or e}") from None
    return decode(data, path), path


def decode(data: bytes, source: str) -> str:
    """``data`` as UTF-8; else a :class:`~symidx.errors.ParseError` at the line and column
    of the first byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        from symidx.errors import ParseError

        before = data[:e.start].decode("utf-8", errors="replace")
        text = before + data[e.start:].decode("utf-8", errors="replace")
        raise ParseError(f"not UTF-8: byte 0x{data[e.start]:02x} (byte offset {e.start}) "
                         f"cannot be decoded", text, len(before), source=source) from None


def check_writable(path: str) -> None:
    """Stop at once, naming ``path``, when a file cannot be written there (a read-only
    file or folder, a missing folder): before a long run, not after it. A file that did
    not exist is not left behind."""
    import os

    existed = os.path.lexists(path)
    try:
        with open(path, "ab"):
            pass
    except OSError as e:
        raise SymidxError(f"cannot write {path}: {e.strerror or e}") from None
    if not existed:
        os.remove(path)


def need(module: str, extra: str, what: str) -> None:
    """Stop at once (before any work) when an optional package is missing, naming the
    extra that brings it: ``need("matplotlib", "plot", "--png")``."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise SymidxError(f"{what} needs {module}, which is not installed: "
                          f"pip install 'symidx[{extra}]'")
