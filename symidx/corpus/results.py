"""The results file: one JSON record per line, appended and flushed as each arrives, so a
run that is killed loses only the modules in flight; ``--resume`` reads back which modules
are done and carries on after them.

Records are made exactly once, for one question:

* the file is locked while a run writes it (``flock``; the lock goes with the process,
  however it ends), so a second run on the same file is refused at once rather than
  recording every module twice;
* ``--resume`` refuses a file whose records answer another question (another
  ``--direction``, ``--computation``, ``--maps`` or semantics, ``--assume-finite``): one
  file never mixes them;
* a module is done when its *place* (file, section) is recorded; a module whose text is
  recorded at another place gets a copy of that record (``duplicate_of``) without being
  analysed again, so a run stopped between a record and its copies, or a file added
  later, still records every module.

A last line that was being written when the run stopped (no newline at its end) is cut
off, to be written again. Any other line that is not a record of this schema means the
file is not a corpus results file: it is reported, never overwritten. A write that fails
(a full disk, a file size limit) stops the run with an error naming the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from symidx.analysis import semantics_name
from symidx.corpus.record import SCHEMA
from symidx.errors import SymidxError

if TYPE_CHECKING:
    from symidx.corpus.record import Options

__all__ = ["ResultsFile", "read_records"]


def read_records(path: str) -> Iterator[dict[str, Any]]:
    """The complete records of a results file, in order (a partial last line is skipped)."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below, after the generator's last record
    except OSError as e:
        raise SymidxError(f"cannot read {path}: {e.strerror or e}") from None
    with f:
        for number, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                return
            yield _record(raw, path, number)


def _record(raw: bytes, path: str, number: int) -> dict[str, Any]:
    try:
        record = json.loads(raw)
    except ValueError:
        record = None
    if not isinstance(record, dict) or record.get("schema") != SCHEMA \
            or not isinstance(record.get("sha256"), str) \
            or not isinstance(record.get("file"), str) \
            or not isinstance(record.get("module"), int):
        raise SymidxError(f"{path}:{number}: not a {SCHEMA} record: is this a symidx corpus "
                          f"results file?")
    return record


def question(record: dict[str, Any]) -> tuple[Any, Any, Any]:
    """What a record answers: (direction, computation, semantics)."""
    return record.get("direction"), record.get("computation"), record.get("semantics")


class ResultsFile:
    """Appends records to ``path``, holding its lock (see the module docstring). With
    ``resume``, :attr:`done` has the SHA-256 of every module text recorded and
    :attr:`places` every (file, section) recorded; without, ``path`` must not hold records
    yet (so that a forgotten ``--resume`` never throws a long run away). ``options``, when
    given, must be those the records were made with."""

    def __init__(self, path: str, resume: bool, options: Options | None = None) -> None:
        self.path = path
        #: SHA-256 -> the byte offset of the first record of that text.
        self.done: dict[str, int] = {}
        self.places: set[tuple[str, int]] = set()
        self.cut = 0
        self.written = 0
        try:
            self._file: IO[str] = open(path, "a", encoding="utf-8", newline="\n")  # noqa: SIM115
        except OSError as e:
            raise SymidxError(f"cannot write {path}: {e.strerror or e}") from None
        try:
            self._lock()
            size = os.fstat(self._file.fileno()).st_size
            if size and not resume:
                raise SymidxError(f"{path} already holds results: --resume carries on from "
                                  f"them; remove the file to start afresh")
            if size:
                complete = self._read_done(options)
                if complete < size:
                    self.cut = size - complete
                    self._file.truncate(complete)
            self._end = complete if size else 0
        except BaseException:
            self._file.close()
            raise

    def _lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # not on a POSIX system: no lock
            return
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SymidxError(f"another run is writing {self.path} (two runs on one results "
                              f"file would record every module twice): wait for it to end, "
                              f"or give this run another --out") from None
        except OSError:  # a file system without locks: carry on unlocked
            return

    def _read_done(self, options: Options | None) -> int:
        """Read what is recorded; return the length of the file's complete lines."""
        complete = 0
        asked = None if options is None else (options.direction, options.computation,
                                              semantics_name(options.assume_finite))
        with open(self.path, "rb") as f:
            for number, raw in enumerate(f, 1):
                if not raw.endswith(b"\n"):
                    break
                record = _record(raw, self.path, number)
                if asked is not None:
                    _check_question(record, asked, options, self.path, number)
                self.done.setdefault(record["sha256"], complete)
                self.places.add((record["file"], record["module"]))
                complete += len(raw)
        return complete

    def record_of(self, sha256: str) -> dict[str, Any]:
        """The first record of the module text ``sha256`` (which must be :attr:`done`)."""
        with open(self.path, "rb") as f:
            f.seek(self.done[sha256])
            return _record(f.readline(), self.path, 0)

    def write(self, record: dict[str, Any]) -> None:
        """Append one record and flush it to the operating system."""
        line = json.dumps(record) + "\n"
        try:
            self._file.write(line)
            self._file.flush()
        except OSError as e:
            raise SymidxError(f"cannot write {self.path}: {e.strerror or e} ({self.written} "
                              f"records written by this run)") from None
        self.done.setdefault(record["sha256"], self._end)
        self._end += len(line.encode("utf-8"))
        self.places.add((record["file"], record["module"]))
        self.written += 1

    def close(self) -> None:
        try:
            self._file.close()
        except OSError as e:
            raise SymidxError(f"cannot write {self.path}: {e.strerror or e}") from None

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_question(record: dict[str, Any], asked: tuple[Any, Any, Any], options: Any, path: str,
                    number: int) -> None:
    """Refuse to resume a file whose record ``number`` answers another question."""
    found = question(record)
    if found != asked:
        raise SymidxError(
            f"{path}:{number}: the records answer {_describe(*found)}, this run asks "
            f"{_describe(*asked)}: resume with the same options, or give another --out")
    if record.get("status") == "ok" and record.get("duplicate_of") is None \
            and (record.get("maps") is not None) != bool(options.maps):
        had, has = ("with", "without") if record.get("maps") is not None else ("without",
                                                                                "with")
        raise SymidxError(f"{path}:{number}: the records were made {had} --maps, this run "
                          f"is {has}: resume with the same options, or give another --out")


def _describe(direction: Any, computation: Any, semantics: Any) -> str:
    what = "every fusion" if computation is None else f"--computation {computation}"
    under = "no semantics recorded" if semantics is None else f"semantics {semantics}"
    return f"{what} {direction} ({under})"
