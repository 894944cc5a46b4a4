"""The modules a command's FILE arguments name, as users have them: a file of HLO or
StableHLO/MHLO text, gzipped or not, holding one module or several split by ``// -----``,
or of binary HLO (``.hlo.pb``, read through jaxlib); an XLA dump folder (its reports skipped
and counted, and what in it is not a regular file -- a FIFO, a device -- passed over and
counted); ``-`` for stdin. A file named on the command line is read as it is, a pipe too
(``<(zcat m.hlo.gz)``).

Each module is a :class:`ModuleSource`, loaded only when asked, so that a command can go on
past one that fails.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from symidx._text import terminal_safe
from symidx.cli.common import read_text_file
from symidx.errors import ParseError, SymidxError

if TYPE_CHECKING:
    from symidx.hlo import HloModule

__all__ = ["ModuleSource", "load_module", "module_sources", "report_failure"]


@dataclass(frozen=True)
class ModuleSource:
    """One module: its label (``PATH``, or ``PATH#K`` for section K of a file split by
    ``// -----``) and how to load it."""

    label: str
    loader: Callable[[], HloModule]

    def load(self) -> HloModule:
        return self.loader()


def module_sources(files: Sequence[str]) -> list[ModuleSource]:
    """The modules of ``files`` in order (see the module docstring). A file that cannot be
    read is a source whose loading fails, so that it is reported in its turn; the dump
    reports skipped in folders are noted on stderr."""
    sources: list[ModuleSource] = []
    skipped: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    for path in files:
        if path == "-" or not (os.path.exists(path) or set("*?[") & set(path)) or (
                os.path.exists(path) and not os.path.isdir(path) and (
                    not os.path.isfile(path)  # a pipe named (<(zcat m.hlo.gz)): read as it is
                    or not path.endswith((".gz", ".pb")) and not _may_hold_sections(path))):
            sources.append(ModuleSource(path, _whole_file(path)))
            continue
        from symidx.corpus.sources import find_files  # folders, globs, gzipped or split files

        try:
            found = find_files([path], skipped, passed if os.path.isdir(path) else None)
        except SymidxError as e:  # names nothing: reported in its turn
            sources.append(ModuleSource(path, _raise(e)))
            continue
        for file in found:
            sources += _file_sources(file)
    if skipped:
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(skipped.items()))
        print(f"symidx: note: skipped {sum(skipped.values())} XLA dump reports, not modules "
              f"({kinds})", file=sys.stderr)
    if passed:
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(passed.items()))
        print(f"symidx: note: passed over {sum(passed.values())} files that are not regular "
              f"files or cannot be read here ({kinds})", file=sys.stderr)
    return sources


def report_failure(error: SymidxError) -> None:
    """One module's failure, on stderr, as the command line reports bad input."""
    print(f"symidx: error: {terminal_safe(str(error))}", file=sys.stderr)
    if isinstance(error, ParseError):
        print(error.excerpt(), file=sys.stderr)


def _whole_file(path: str) -> Callable[[], HloModule]:
    return lambda: load_module(path)


def load_module(path: str) -> HloModule:
    """The module of a file (``-``: stdin), as XLA's parser accepts it: the verifier's
    checks apply to what the analysis goes through. Remembered while the file's contents
    are unchanged (batch mode asks for the same file many times; a file rewritten within
    the same clock tick, at the same size, is still read again)."""
    from symidx.hlo import parse_module

    text, source = read_text_file(path)
    if path == "-":
        return parse_module(text, source=source, validate=False)
    key = (path, text)  # the text itself: no digest library to load at every start
    if key in _MODULES:
        return _MODULES[key]
    module = parse_module(text, source=source, validate=False)
    if len(_MODULES) >= 8:
        _MODULES.pop(next(iter(_MODULES)))
    _MODULES[key] = module
    return module


_MODULES: dict[tuple[str, str], HloModule] = {}


def _may_hold_sections(path: str) -> bool:
    """Whether a file has a ``// -----`` line (read in blocks, not whole)."""
    try:
        with open(path, "rb") as f:
            tail = b""
            while block := f.read(1 << 20):
                if b"// -----" in tail + block:
                    return True
                tail = block[-16:]
    except OSError:
        return False  # reported when it is loaded
    return False


def _file_sources(path: str) -> list[ModuleSource]:
    from symidx.corpus.sources import UnreadableFile, read_file, split_sections

    try:
        sections = split_sections(read_file(path))
    except UnreadableFile as e:
        return [ModuleSource(path, _raise(SymidxError(str(e))))]
    if not sections:
        return [ModuleSource(path, _raise(SymidxError(f"{path}: no module in the file")))]
    several = len(sections) > 1
    return [ModuleSource(f"{path}#{s.index}" if several else path,
                         _section(path, "\n" * (s.line - 1) + s.text))
            for s in sections]


def _section(path: str, text: str) -> Callable[[], HloModule]:
    def load() -> HloModule:
        from symidx.hlo import parse_module

        return parse_module(text, source=path, validate=False)

    return load


def _raise(error: SymidxError) -> Callable[[], HloModule]:
    def load() -> HloModule:
        raise error

    return load
