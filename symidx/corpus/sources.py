"""Where the modules of a corpus come from: files, folders and globs, split into modules.

A *file* holds one module, or several split by lines that start with ``// -----`` (XLA's
lit tests, read with ``-split-input-file``). Each part between such lines is a *section*,
numbered from 0 in the file; a section that holds only blank lines and ``//`` comment lines
is not a module (it keeps its number, so ``file#2`` is always the file's third section).
A module's text is its section exactly as it stands in the file (comment lines included:
the HLO lexer skips them), and its identity is the SHA-256 of that text in UTF-8.

Folders are searched recursively for the suffixes in :data:`SUFFIXES` (HLO text, and
StableHLO/MHLO text in ``*.mlir``, each also gzipped, and binary HLO, ``*.hlo.pb``, read
through jaxlib: :mod:`symidx.hlo.proto`); a file named on the command line is read whatever
its name (``.gz``: decompressed). Text that is not UTF-8 is decoded with replacement
characters, so the parser reports where it is.

Only regular files are read: a FIFO, a device (``/dev/zero`` behind a symlink), a socket is
passed over and counted (:func:`file_kind`), checked again on the open file, which is
opened without blocking. A file is read up to a limit of bytes, decompressed
(:data:`DEFAULT_MAX_BYTES`; :class:`TooLarge` past it), gzip streamed, so that a small
``.gz`` that inflates to gigabytes costs no more than the limit. A file with no module (an
empty one, comments only) is one section, its whole text, so that it gets a record too.

An XLA dump folder (``XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text``) holds, beside
its modules (``module_0004.jit_f.before_optimizations.txt``,
``module_0004.jit_f.cpu_after_optimizations.txt``, one per pass with
``--xla_dump_hlo_pass_re``), reports on each module that are not modules: buffer
assignments, live ranges, memory-usage reports, and more. In a folder, a file whose name is
one of those (:func:`dump_report_kind`) is skipped and counted by kind, not read.
"""

from __future__ import annotations

import math
import os
import stat
import zlib  # loaded for gzipped files only
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from symidx._text import lazy_pattern
from symidx.errors import SymidxError

__all__ = [
    "SUFFIXES",
    "DEFAULT_MAX_BYTES",
    "TooLarge",
    "NotRegular",
    "Outline",
    "file_kind",
    "outline",
    "read_sections",
    "Section",
    "ModuleRef",
    "Task",
    "UnreadableFile",
    "dump_report_kind",
    "find_files",
    "read_file",
    "split_sections",
    "scan",
    "refs_of",
    "file_sections",
    "TaskReader",
]

#: The file names a folder is searched for.
SUFFIXES = (".hlo", ".txt", ".mlir", ".hlo.gz", ".txt.gz", ".mlir.gz", ".hlo.pb", ".hlo.pb.gz")
_PROTO_SUFFIXES = (".hlo.pb", ".hlo.pb.gz")  # symidx.hlo.proto.PROTO_SUFFIXES (loads late)
#: The most bytes a file's text may have, decompressed, before it is too large to read.
DEFAULT_MAX_BYTES = 256 << 20

# The reports XLA writes beside a module in a dump folder ("module_0004.jit_f.
# cpu_after_optimizations-buffer-assignment.txt"), by the kind they are counted as.
_DUMP_REPORT_RE = lazy_pattern(
    r"^module_\d+\..*-(buffer-assignment-values|buffer-assignment|live-range|"
    r"memory-usage-report|memory-usage|thunk-sequence|schedule|autotune-results|"
    r"sharding-report|stats)\.txt(?:\.gz)?$")
# Other files of a dump folder that are not modules, whatever their suffix.
_DUMP_OTHER_RE = lazy_pattern(r"^module_\d+\..*\.(?:debug_options|ll|o|dot|pb|pbtxt|html|json)$")

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
    """A module sent to a worker: where it is, and its text -- or, without its text
    (None), the SHA-256 and size a scan found: the worker then reads the text itself."""

    file: str
    index: int
    line: int
    text: str | None = None
    digest: str | None = None
    size: int = 0

    @property
    def sha256(self) -> str:
        if self.text is None:
            return self.digest or ""
        return sha256_of(self.text)

    @property
    def bytes(self) -> int:
        return self.size if self.text is None else len(self.text.encode("utf-8"))

    @classmethod
    def of(cls, ref: ModuleRef) -> Task:
        """The task of ``ref``, without its text."""
        return cls(ref.file, ref.index, ref.line, None, ref.sha256, ref.size)


class UnreadableFile(SymidxError):
    """A file found that could not be read (its record says why: status ``error``)."""

    status = "error"


class TooLarge(UnreadableFile):
    """A file whose text, decompressed, has more bytes than the limit (status
    ``too-large``)."""

    status = "too-large"


class NotRegular(UnreadableFile):
    """Not a regular file: a FIFO, a device, a socket (passed over and counted, by
    ``kind``)."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(f"{path} is a {kind}, not a regular file")
        self.kind = kind


@dataclass(frozen=True)
class Outline:
    """What a worker found in a file (:func:`outline`): its sections' ``(index, line,
    sha256, size)``, or why it could not be read: ``failure`` is ``(status, message)``
    (``error``, ``too-large``; ``not-regular`` with the kind as message), and ``size`` its
    size on disk then."""

    file: str
    sections: tuple[tuple[int, int, str, int], ...] = ()
    failure: tuple[str, str] | None = None
    size: int = 0


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


def find_files(paths: Iterable[str], skipped: Counter[str] | None = None,
               passed: Counter[str] | None = None) -> list[str]:
    """The files ``paths`` name, in order, each once: a file as given, a folder's matching
    files (recursively, sorted), a glob's matches (``**`` recursive). In a folder, the
    reports of an XLA dump are not modules: each is counted in ``skipped`` by its kind
    (:func:`dump_report_kind`). With ``passed``, what is not a regular file (a FIFO, a
    device, a socket: :func:`file_kind`) is passed over and counted there by its kind, and
    so is binary HLO (``.hlo.pb``) where jaxlib is missing. A path that names nothing
    raises :class:`SymidxError`."""
    found: list[str] = []
    seen: set[str] = set()
    for path in paths:
        if os.path.isdir(path):
            matches = _folder_files(path, skipped)
            if not matches:
                raise SymidxError(f"no {', '.join('*' + s for s in SUFFIXES)} file under {path}")
        elif os.path.lexists(path):
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
            if key in seen:
                continue
            seen.add(key)
            if passed is not None:
                kind = file_kind(match)
                if kind is None and _is_proto(match) and not _has_jaxlib():
                    kind = "binary HLO (.hlo.pb: needs jaxlib)"
                if kind is not None:
                    passed[kind] += 1
                    continue
            found.append(match)
    return found


def _is_proto(path: str) -> bool:
    """Binary HLO, by its name (:mod:`symidx.hlo.proto`)."""
    return path.endswith(_PROTO_SUFFIXES)


def _has_jaxlib() -> bool:
    from symidx.hlo.proto import has_jaxlib

    return has_jaxlib()


def file_kind(path: str) -> str | None:
    """What ``path`` is when it is not a regular file (``FIFO``, ``character device``,
    ``block device``, ``socket``, ``folder``), following symlinks; None for a regular file,
    or one that cannot be looked at (its reading then says why)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return _kind(mode)


def _kind(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    for test, kind in ((stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISDIR, "folder")):
        if test(mode):
            return kind
    return "special file"


def _folder_files(folder: str, skipped: Counter[str] | None = None) -> list[str]:
    out = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            kind = dump_report_kind(name)
            if kind is not None:
                if skipped is not None:
                    skipped[kind] += 1
            elif name.endswith(SUFFIXES) and (_is_proto(name)
                                              or not _DUMP_OTHER_RE.match(name)):
                out.append(os.path.join(root, name))
    return out


def read_file(path: str, max_bytes: int | None = DEFAULT_MAX_BYTES) -> str:
    """A file's text: read only if it is a regular file (:class:`NotRegular`), gunzipped
    when its name ends in ``.gz``, turned into HLO text by jaxlib when it is binary HLO
    (``.hlo.pb``), and no more than ``max_bytes`` bytes of it (:class:`TooLarge`; None: no
    limit). Any other failure is an :class:`UnreadableFile` naming the file."""
    data = _read_bytes(path, max_bytes)
    if _is_proto(path):
        from symidx.hlo.proto import proto_to_hlo  # jaxlib, for binary HLO only

        try:
            text = proto_to_hlo(data, path)
        except SymidxError as e:
            raise UnreadableFile(str(e)) from None
        if max_bytes is not None and len(text) > max_bytes:
            raise TooLarge(f"{path} is too large: its text has more than {max_bytes:,} bytes "
                           f"(the limit, --max-bytes)")
        return text
    return data.decode("utf-8", errors="replace")


#: Opened without blocking (a FIFO with no writer) and never as a controlling terminal.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) \
    | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 20


def _read_bytes(path: str, max_bytes: int | None) -> bytes:
    kind = file_kind(path)
    if kind is not None:
        raise NotRegular(path, kind)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as e:
        raise UnreadableFile(f"cannot read {path}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "rb", buffering=0) as f:
            kind = _kind(os.fstat(f.fileno()).st_mode)  # it may have changed since
            if kind is not None:
                raise NotRegular(path, kind)
            limit = math.inf if max_bytes is None else max_bytes
            data = _gunzip(f, path, limit) if path.endswith(".gz") else _plain(f, path, limit)
    except OSError as e:
        raise UnreadableFile(f"cannot read {path}: {e.strerror or e}") from None
    return data


def _too_large(path: str, limit: float) -> TooLarge:
    return TooLarge(f"{path} is too large: it holds more than {int(limit):,} bytes"
                    f"{' decompressed' if path.endswith('.gz') else ''} (the limit, "
                    f"--max-bytes)")


def _plain(f: BinaryIO, path: str, limit: float) -> bytes:
    out = bytearray()
    while chunk := f.read(_CHUNK):
        out += chunk
        if len(out) > limit:
            raise _too_large(path, limit)
    return bytes(out)


def _gunzip(f: BinaryIO, path: str, limit: float) -> bytes:
    """The decompressed bytes of a gzip file (of one member or several), streamed: never
    more than ``limit`` bytes of output are made (:class:`TooLarge`)."""
    out = bytearray()
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    started = ended = False
    try:
        while chunk := f.read(_CHUNK):
            while chunk:
                if ended:  # after a member: another one, or padding of zero bytes
                    if not chunk.strip(b"\0"):
                        break
                    inflate, ended = zlib.decompressobj(16 + zlib.MAX_WBITS), False
                started = True
                room = _CHUNK if limit == math.inf else int(limit) + 1 - len(out)
                out += inflate.decompress(chunk, max(1, min(room, _CHUNK)))
                if len(out) > limit:
                    raise _too_large(path, limit)
                if inflate.eof:
                    ended, chunk = True, inflate.unused_data
                else:
                    chunk = inflate.unconsumed_tail
    except zlib.error as e:
        raise UnreadableFile(f"cannot read {path}: not a gzip file, or damaged ({e})"
                             ) from None
    if started and not ended:
        raise UnreadableFile(f"cannot read {path}: the compressed file ends before its "
                             f"end-of-stream marker")
    return bytes(out)


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


def file_sections(text: str) -> list[Section]:
    """The modules of a file's text (:func:`split_sections`), or, when it holds none (empty,
    blank, comments only), its whole text as section 0: every file gets a record."""
    return split_sections(text) or [Section(0, 1, text)]


def outline(path: str, max_bytes: int | None = DEFAULT_MAX_BYTES) -> Outline:
    """What is in the file ``path`` (the work a scan gives a worker process, so that no
    file can stop the run): each section's place, SHA-256 and size, or why it could not
    be read. Never raises for a file."""
    try:
        text = read_file(path, max_bytes)
    except NotRegular as e:
        return Outline(path, failure=("not-regular", e.kind))
    except UnreadableFile as e:
        return Outline(path, failure=(e.status, str(e)), size=_disk_size(path))
    except MemoryError:
        return Outline(path, failure=("error", f"cannot read {path}: out of memory"),
                       size=_disk_size(path))
    return Outline(path, tuple((s.index, s.line, sha256_of(s.text), len(s.text.encode("utf-8")))
                               for s in file_sections(text)))


def _disk_size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def read_sections(path: str, max_bytes: int | None = DEFAULT_MAX_BYTES) -> dict[int, Section]:
    """The sections of ``path`` by number (none when it can no longer be read), the last
    file read remembered, so that the modules of one file sent one after another are read
    once (a worker reads the text of the modules it is given)."""
    try:
        st = os.stat(path)
        key = (path, st.st_mtime_ns, st.st_size, st.st_ino, max_bytes)
    except OSError:
        return {}
    if _LAST[0] is not None and _LAST[0][0] == key:
        return _LAST[0][1]
    try:
        found = {s.index: s for s in file_sections(read_file(path, max_bytes))}
    except (UnreadableFile, MemoryError):
        found = {}
    _LAST[0] = (key, found)
    return found


_LAST: list[tuple[tuple[Any, ...], dict[int, Section]] | None] = [None]


def scan(files: Iterable[str], unreadable: list[str] | None = None,
         max_bytes: int | None = DEFAULT_MAX_BYTES) -> list[ModuleRef]:
    """The modules of ``files`` read here, one :class:`ModuleRef` per distinct text (in
    order of first appearance; later places of the same text are its ``duplicates``). A
    file that cannot be read is skipped, its message appended to ``unreadable``. (A corpus
    run reads its files in worker processes instead: :func:`symidx.corpus.run.run_corpus`.)"""
    outlines = []
    for path in files:
        found = outline(path, max_bytes)
        if found.failure is not None:
            if unreadable is not None:
                unreadable.append(found.failure[1] if found.failure[0] != "not-regular"
                                  else f"{path} is a {found.failure[1]}, not a regular file")
            continue
        outlines.append(found)
    return refs_of(outlines)


def refs_of(outlines: Iterable[Outline]) -> list[ModuleRef]:
    """One :class:`ModuleRef` per distinct text of the sections of ``outlines`` (in order;
    failures left out)."""
    refs: dict[str, ModuleRef] = {}
    for found in outlines:
        for index, line, digest, size in found.sections:
            first = refs.get(digest)
            if first is None:
                refs[digest] = ModuleRef(found.file, index, line, digest, size)
            else:
                refs[digest] = ModuleRef(first.file, first.index, first.line, digest, first.size,
                                         first.duplicates + ((found.file, index, line),))
    return list(refs.values())


class TaskReader:
    """Reads the text of modules again when they are sent out (through ``read``, by
    default :func:`read_sections` here; a corpus run reads in a worker process), keeping
    the sections of the files read last (up to ``budget`` characters) so that a file of
    many small modules is not read once per module."""

    def __init__(self, budget: int = 64 << 20,
                 read: Callable[[str], dict[int, Section]] | None = None) -> None:
        self.budget = budget
        self.read = read or read_sections
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
        found = self.read(path)
        size = sum(len(s.text) for s in found.values())
        while self._files and sum(self._sizes.values()) + size > self.budget:
            oldest = next(iter(self._files))
            del self._files[oldest], self._sizes[oldest]
        if size <= self.budget:
            self._files[path] = found
            self._sizes[path] = size
        return found
