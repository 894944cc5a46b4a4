"""Where the modules of a corpus come from: files, folders and globs, split into modules.

A *file* holds one module, or several split by lines that start with ``// -----`` (XLA's
lit tests, read with ``-split-input-file``). Each part between such lines is a *section*,
numbered from 0 in the file; a section that holds only blank lines and ``//`` comment lines
is not a module (it keeps its number, so ``file#2`` is always the file's third section).
A module's text is its section exactly as it stands in the file (comment lines included:
the HLO lexer skips them), and its identity is the SHA-256 of that text in UTF-8.

Folders are searched recursively for the suffixes in :data:`SUFFIXES` (HLO text, and
StableHLO/MHLO text in ``*.mlir``, each also gzipped); a file named on the command line is
read whatever its name (``.gz``: decompressed). Text that is not UTF-8 is decoded with
replacement characters, so the parser reports where it is.

An XLA dump folder (``XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text``) holds, beside
its modules (``module_0004.jit_f.before_optimizations.txt``,
``module_0004.jit_f.cpu_after_optimizations.txt``, one per pass with
``--xla_dump_hlo_pass_re``), reports on each module that are not modules: buffer
assignments, live ranges, memory-usage reports, and more. In a folder, a file whose name is
one of those (:func:`dump_report_kind`) is skipped and counted by kind, not read.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from symidx.errors import SymidxError

__all__ = [
    "SUFFIXES",
    "Section",
    "ModuleRef",
    "Task",
    "UnreadableFile",
    "dump_report_kind",
    "find_files",
    "read_file",
    "split_sections",
    "scan",
    "TaskReader",
]

#: The file names a folder is searched for.
SUFFIXES = (".hlo", ".txt", ".mlir", ".hlo.gz", ".txt.gz", ".mlir.gz")

# The reports XLA writes beside a module in a dump folder ("module_0004.jit_f.
# cpu_after_optimizations-buffer-assignment.txt"), by the kind they are counted as.
_DUMP_REPORT_RE = re.compile(
    r"^module_\d+\..*-(buffer-assignment-values|buffer-assignment|live-range|"
    r"memory-usage-report|memory-usage|thunk-sequence|schedule|autotune-results|"
    r"sharding-report|stats)\.txt(?:\.gz)?$")
# Other files of a dump folder that are not modules, whatever their suffix.
_DUMP_OTHER_RE = re.compile(r"^module_\d+\..*\.(?:debug_options|ll|o|dot|pb|pbtxt|html|json)$")

_SEPARATOR = "// -----"
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class Section:
    """One module of a file: its section number, its first line (1-based) and its text."""

    index: int
    line: int
    text: str


@dataclass(frozen=True)
class ModuleRef:
    """What the driver keeps of a module until it is analysed: where it is, its hash and
    size, never its text. ``duplicates`` are the other places (``(file, index, line)``)
    where the same text stands; they are recorded with it."""

    file: str
    index: int
    line: int
    sha256: str
    size: int
    duplicates: tuple[tuple[str, int, int], ...] = ()


@dataclass(frozen=True)
class Task:
    """A module sent to a worker: where it is, and its text."""

    file: str
    index: int
    line: int
    text: str

    @property
    def sha256(self) -> str:
        return sha256_of(self.text)


class UnreadableFile(SymidxError):
    """A file found that could not be read (it is reported and skipped)."""


def sha256_of(text: str) -> str:
    import hashlib  # loaded when a corpus needs digests: not at every start of the CLI

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def dump_report_kind(name: str) -> str | None:
    """The kind of report an XLA dump file named ``name`` (its base name) is
    (``buffer-assignment``, ``live-range``, ``memory-usage-report``, ...), or None when it
    may hold a module."""
    found = _DUMP_REPORT_RE.match(name)
    if found is not None:
        return found.group(1)
    return None


def find_files(paths: Iterable[str], skipped: Counter[str] | None = None) -> list[str]:
    """The files ``paths`` name, in order, each once: a file as given, a folder's matching
    files (recursively, sorted), a glob's matches (``**`` recursive). In a folder, the
    reports of an XLA dump are not modules: each is counted in ``skipped`` by its kind
    (:func:`dump_report_kind`). A path that names nothing raises :class:`SymidxError`."""
    found: list[str] = []
    seen: set[str] = set()
    for path in paths:
        if os.path.isdir(path):
            matches = _folder_files(path, skipped)
            if not matches:
                raise SymidxError(f"no {', '.join('*' + s for s in SUFFIXES)} file under {path}")
        elif os.path.exists(path):
            matches = [path]
        elif _GLOB_CHARS & set(path):
            matches = []
            import glob  # loaded for patterns only

            for match in sorted(glob.glob(path, recursive=True)):
                matches += _folder_files(match, skipped) if os.path.isdir(match) else [match]
            if not matches:
                raise SymidxError(f"no file matches {path}")
        else:
            raise SymidxError(f"no such file or folder: {path}")
        for match in matches:
            key = os.path.realpath(match)
            if key not in seen:
                seen.add(key)
                found.append(match)
    return found


def _folder_files(folder: str, skipped: Counter[str] | None = None) -> list[str]:
    out = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            kind = dump_report_kind(name)
            if kind is not None:
                if skipped is not None:
                    skipped[kind] += 1
            elif name.endswith(SUFFIXES) and not _DUMP_OTHER_RE.match(name):
                out.append(os.path.join(root, name))
    return out


def read_file(path: str) -> str:
    """A file's text (gunzipped when its name ends in ``.gz``)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        if path.endswith(".gz"):
            import gzip  # loaded for gzipped files only

            data = gzip.decompress(data)
    except (OSError, EOFError) as e:  # gzip.BadGzipFile is an OSError
        raise UnreadableFile(f"cannot read {path}: {getattr(e, 'strerror', None) or e}"
                             ) from None
    return data.decode("utf-8", errors="replace")


def split_sections(text: str) -> list[Section]:
    """The modules of a file's text (see the module docstring)."""
    sections: list[Section] = []
    current: list[str] = []
    index, start = 0, 1
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        if line.lstrip(" \t").startswith(_SEPARATOR):
            sections.append(Section(index, start, "".join(current)))
            current, index, start = [], index + 1, number + 1
        else:
            current.append(line)
    sections.append(Section(index, start, "".join(current)))
    return [s for s in sections if _holds_code(s.text)]


def _holds_code(text: str) -> bool:
    return any(line.strip() and not line.lstrip().startswith("//")
               for line in text.splitlines())


def scan(files: Iterable[str], unreadable: list[str] | None = None) -> list[ModuleRef]:
    """The modules of ``files``, one :class:`ModuleRef` per distinct text (in order of
    first appearance; later places of the same text are its ``duplicates``). A file that
    cannot be read is skipped, its message appended to ``unreadable``."""
    refs: dict[str, ModuleRef] = {}
    for path in files:
        try:
            sections = split_sections(read_file(path))
        except UnreadableFile as e:
            if unreadable is not None:
                unreadable.append(str(e))
            continue
        for s in sections:
            digest = sha256_of(s.text)
            first = refs.get(digest)
            if first is None:
                refs[digest] = ModuleRef(path, s.index, s.line, digest,
                                         len(s.text.encode("utf-8")))
            else:
                refs[digest] = ModuleRef(first.file, first.index, first.line, digest, first.size,
                                         first.duplicates + ((path, s.index, s.line),))
    return list(refs.values())


class TaskReader:
    """Reads the text of modules again when they are sent out, keeping the sections of the
    files read last (up to ``budget`` characters) so that a file of many small modules is
    not read once per module."""

    def __init__(self, budget: int = 64 << 20) -> None:
        self.budget = budget
        self._files: dict[str, dict[int, Section]] = {}
        self._sizes: dict[str, int] = {}

    def tasks(self, refs: Iterable[ModuleRef]) -> Iterator[Task]:
        """A task per ref; a ref whose file can no longer be read, or whose section is gone,
        is read as an empty text (its record then says so: it does not parse)."""
        for ref in refs:
            section = self._sections(ref.file).get(ref.index)
            text = "" if section is None else section.text
            yield Task(ref.file, ref.index, ref.line, text)

    def _sections(self, path: str) -> dict[int, Section]:
        found = self._files.get(path)
        if found is not None:
            return found
        try:
            text = read_file(path)
        except UnreadableFile:
            return {}
        found = {s.index: s for s in split_sections(text)}
        while self._files and sum(self._sizes.values()) + len(text) > self.budget:
            oldest = next(iter(self._files))
            del self._files[oldest], self._sizes[oldest]
        if len(text) <= self.budget:
            self._files[path] = found
            self._sizes[path] = len(text)
        return found
