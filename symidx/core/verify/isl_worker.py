"""The process in which isl decides when a decision has a deadline.

isl runs in C and cannot be interrupted from Python (XLA's
``SymbolicMapSimplification_ExtractFromMod`` pair keeps it busy for more than 22
minutes), so :mod:`symidx.core.verify.isl` sends each question to this process and kills it
when the time is up. It runs as a script (``python .../isl_worker.py``), so it imports
islpy and nothing of symidx: it starts in a fraction of a second, once, and answers every
later question with a pipe's round trip.

The protocol, on stdin and stdout: each message is an 8-byte little-endian length and a
pickle. A question is ``(isl text of A, isl text of B)``; the answer is ``(True, None)``
when the relations are equal, ``(True, [coordinates])`` for a (source, target) pair in
one and not the other, or ``(False, "what went wrong")``. The process leaves when its
stdin closes, and (on Linux) dies with the process that started it.
"""

from __future__ import annotations

import pickle
import struct
import sys
from typing import Any, BinaryIO

HEADER = struct.Struct("<Q")


def difference(isl: Any, ta: str, tb: str) -> list[int] | None:
    """None if the two isl maps are equal, else the coordinates (source then target) of a
    pair in one and not the other (isl's sample of the difference)."""
    ia, ib = isl.Map(ta), isl.Map(tb)
    if ia.is_equal(ib):
        return None
    extra = ia.subtract(ib) if not ia.is_subset(ib) else ib.subtract(ia)
    first = extra.wrap().sample_point()
    return [first.get_coordinate_val(isl.dim_type.set, i).to_python()
            for i in range(first.get_space().dim(isl.dim_type.set))]


def read_message(stream: BinaryIO) -> Any:
    """One message, or None at the end of the stream."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    return pickle.loads(stream.read(size))


def message(value: Any) -> bytes:
    data = pickle.dumps(value)
    return HEADER.pack(len(data)) + data


def _die_with_parent(parent: int | None = None) -> None:
    """Ask Linux to kill this process when its parent dies (no orphan left computing). A
    parent that died before the request (a busy machine starts this process slowly) is
    not there to die again: ``parent``, the pid of the process that started this one, no
    longer being the parent, this process ends at once."""
    import os

    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the closed stdin ends it when idle
        pass
    if parent is not None and os.getppid() != parent:
        os._exit(0)


def main() -> None:
    _die_with_parent(int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else None)
    import islpy as isl

    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while True:
        question = read_message(source)
        if question is None:
            return
        try:
            answer: tuple[bool, Any] = (True, difference(isl, *question))
        except Exception as e:  # noqa: BLE001 -- every failure is an answer, said in words
            answer = (False, f"{type(e).__name__}: {e}")
        sink.write(message(answer))
        sink.flush()


if __name__ == "__main__":
    main()
