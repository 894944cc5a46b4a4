"""The results file: one JSON record per line, appended and flushed as each arrives, so a
run that is killed loses only the modules in flight; ``--resume`` reads back which modules
are done (by SHA-256) and carries on after them.

A last line that was being written when the run stopped (no newline at its end) is cut
off, to be written again. Any other line that is not a record of this schema means the
file is not a corpus results file: it is reported, never overwritten.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import IO, Any

from symidx.corpus.record import SCHEMA
from symidx.errors import SymidxError

__all__ = ["ResultsFile", "read_records"]


def read_records(path: str) -> Iterator[dict[str, Any]]:
    """The complete records of a results file, in order (a partial last line is skipped)."""
    with open(path, "rb") as f:
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
            or not isinstance(record.get("sha256"), str):
        raise SymidxError(f"{path}:{number}: not a {SCHEMA} record: is this a symidx corpus "
                          f"results file?")
    return record


class ResultsFile:
    """Appends records to ``path``. With ``resume``, the SHA-256 of every module already
    recorded is in :attr:`done`; without, ``path`` must not hold records yet (so that a
    forgotten ``--resume`` never throws a long run away)."""

    def __init__(self, path: str, resume: bool) -> None:
        self.path = path
        self.done: set[str] = set()
        self.cut = 0
        size = os.path.getsize(path) if os.path.isfile(path) else 0
        if size and not resume:
            raise SymidxError(f"{path} already holds results: --resume carries on from them; "
                              f"remove the file to start afresh")
        if size:
            self.done, complete = self._read_done()
            if complete < size:
                self.cut = size - complete
                with open(path, "r+b") as f:
                    f.truncate(complete)
        self.written = 0
        try:
            self._file: IO[str] = open(path, "a", encoding="utf-8", newline="\n")  # noqa: SIM115
        except OSError as e:
            raise SymidxError(f"cannot write {path}: {e.strerror or e}") from None

    def _read_done(self) -> tuple[set[str], int]:
        """The hashes recorded, and the length of the file's complete lines."""
        done: set[str] = set()
        complete = 0
        with open(self.path, "rb") as f:
            for number, raw in enumerate(f, 1):
                if not raw.endswith(b"\n"):
                    break
                done.add(_record(raw, self.path, number)["sha256"])
                complete += len(raw)
        return done, complete

    def write(self, record: dict[str, Any]) -> None:
        """Append one record and flush it to the operating system."""
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()
        self.done.add(record["sha256"])
        self.written += 1

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
