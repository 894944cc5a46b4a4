"""A watcher that ends, with the driver, the processes a run started through a library
that may leave some behind when the driver is killed (Ray's local cluster: its agents
outlive a raylet whose driver got SIGKILL).

:func:`start` launches a small separate process (``python -m symidx.corpus.reaper PID``)
that, every half second, notes the descendants of the driver ``PID`` (from ``/proc``, with
their start times so that a reused PID is never touched); once the driver is gone it kills
those still running, and ends. Where there is no ``/proc`` it does nothing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

__all__ = ["start"]

_PERIOD = 0.5


def start() -> subprocess.Popen[bytes] | None:
    """Start the watcher of this process (None where there is no ``/proc``). It ends
    itself once this process has ended and its descendants are killed; :func:`stop` ends
    it sooner."""
    if not os.path.isdir("/proc/self"):
        return None
    return subprocess.Popen([sys.executable, "-m", "symidx.corpus.reaper", str(os.getpid())],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def stop(watcher: subprocess.Popen[bytes] | None) -> None:
    """End the watcher (the run ended normally and stopped what it started)."""
    if watcher is not None and watcher.poll() is None:
        watcher.kill()
        watcher.wait()


def _table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, start time) of every live process."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if fields[0] != "Z":
                found[int(entry)] = (int(fields[1]), fields[19])
    return found


def _descendants(root: int, table: dict[int, tuple[int, str]]) -> dict[int, str]:
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, todo = {}, list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        if pid not in found and pid != os.getpid():
            found[pid] = table[pid][1]
            todo += children.get(pid, ())
    return found


def watch(driver: int) -> None:
    """Note the descendants of ``driver`` until it ends, then kill them."""
    known: dict[int, str] = {}
    while True:
        table = _table()
        if driver not in table:
            break
        known.update(_descendants(driver, table))
        time.sleep(_PERIOD)
    for _ in range(3):  # some may be starting others as they go
        table = _table()
        for pid, started in known.items():
            if pid in table and table[pid][1] == started:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        time.sleep(_PERIOD)


if __name__ == "__main__":
    watch(int(sys.argv[1]))
