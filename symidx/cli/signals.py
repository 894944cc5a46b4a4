"""Signals that end a command cleanly: SIGTERM and SIGHUP (what ``timeout(1)``, CI and a
closed terminal send), and SIGINT (Ctrl-C).

:func:`stopped_by_signals` turns each into :class:`Signalled` (a ``KeyboardInterrupt``, as
Ctrl-C is) raised where the command is, so that it unwinds and stops what it started, and
notes it in :data:`RECEIVED`. Commands nest (``symidx batch`` runs ``corpus`` in its own
process): an inner command that catches the interrupt and returns its exit code does not
hide it from the outer one, which sees the signal in :data:`RECEIVED` and stops too.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["RECEIVED", "Signalled", "exit_code", "how", "stopped_by_signals"]

#: The signals received while a :func:`stopped_by_signals` block is open (the outermost
#: block empties it when it opens).
RECEIVED: list[int] = []


class Signalled(KeyboardInterrupt):
    """A signal received: the command stops as for Ctrl-C (what it started is stopped on
    the way out)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_DEPTH = [0]


@contextlib.contextmanager
def stopped_by_signals(*signums: int) -> Iterator[list[int]]:
    """While open, each of ``signums`` (default SIGTERM and SIGHUP) raises
    :class:`Signalled` and is noted in :data:`RECEIVED`, which it yields. (Off the main
    thread, where Python cannot handle signals, it changes nothing.) SIGKILL cannot be
    caught: the processes a command starts watch it and end with it."""
    if threading.current_thread() is not threading.main_thread():
        yield RECEIVED
        return

    def stop(signum: int, frame: object) -> None:
        RECEIVED.append(signum)
        raise Signalled(signum)

    if not _DEPTH[0]:
        RECEIVED.clear()
    chosen = signums or (signal.SIGTERM, signal.SIGHUP)
    saved = {sig: signal.signal(sig, stop) for sig in chosen}
    _DEPTH[0] += 1
    try:
        yield RECEIVED
    finally:
        _DEPTH[0] -= 1
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def exit_code(error: KeyboardInterrupt) -> int:
    """The shell's exit code for the signal that raised ``error`` (130 for Ctrl-C)."""
    return 128 + _signum(error)


def how(error: KeyboardInterrupt) -> str:
    """``interrupted`` (Ctrl-C) or ``stopped by SIGTERM``."""
    signum = _signum(error)
    return "interrupted" if signum == signal.SIGINT else \
        f"stopped by {signal.Signals(signum).name}"


def _signum(error: KeyboardInterrupt) -> int:
    # a library may re-raise the interrupt as a plain KeyboardInterrupt: the last noted
    if isinstance(error, Signalled):
        return error.signum
    return RECEIVED[-1] if RECEIVED else signal.SIGINT
