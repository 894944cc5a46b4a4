"""The local engine: a pool of warm worker processes on this machine.

Each worker imports the analysis once (they are forked from a server process that has
imported :mod:`symidx.corpus.record`), then takes one module at a time over a pipe and
sends its record back. A worker that gives no answer within the time limit is killed and
replaced, and its module recorded as ``timeout``; one that dies (a crash, the kernel's
out-of-memory killer) is replaced and its module recorded as ``error``. At most one module
per worker is in flight, and records are handed on as they arrive, so memory stays bounded
whatever the size of the corpus.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import select
import signal
import threading
import time
from collections.abc import Iterable, Iterator
from multiprocessing.connection import Connection, wait
from typing import Any

from symidx.corpus.record import Options, analyse, timed_out, worker_died
from symidx.corpus.sources import Task
from symidx.errors import SymidxError

__all__ = ["run_local", "default_jobs"]

#: How long a worker that was asked to stop may take before it is killed.
_GRACE = 5.0
#: How long a new worker may take to say it is ready.
_START = 120.0
_READY = "ready"


def default_jobs() -> int:
    """The processors this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def run_local(tasks: Iterable[Task], options: Options, jobs: int | None,
              timeout: float | None, address: str | None = None) -> Iterator[dict[str, Any]]:
    """The records of ``tasks`` as they complete, from ``jobs`` worker processes; a module
    still running after ``timeout`` seconds (None: no limit) is stopped."""
    context = _context()
    workers = [_Worker(context, options) for _ in range(jobs or default_jobs())]
    pending = iter(tasks)
    try:
        while True:
            for worker in workers:
                if worker.task is None:
                    task = next(pending, None)
                    if task is None:
                        break
                    worker.give(task)
            busy = [w for w in workers if w.task is not None]
            if not busy:
                return
            wait([w.conn for w in busy] + [w.process.sentinel for w in busy],
                 None if timeout is None else max(0.0, min(w.started for w in busy)
                                                  + timeout - time.monotonic()))
            for worker in busy:
                record = worker.collect(timeout)
                if record is not None:
                    yield record
    finally:
        for worker in workers:
            worker.stop()


def _context() -> Any:
    """Worker processes forked from a server that has imported the analysis (warm and
    cheap to replace); spawned where there is no fork (Windows)."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["symidx.corpus.record"])
        return context
    return multiprocessing.get_context("spawn")


class _Worker:
    """One worker process, and the module it is working on (``task``, since ``started``)."""

    def __init__(self, context: Any, options: Options) -> None:
        self.context = context
        self.options = options
        self.task: Task | None = None
        self.started = 0.0
        self._start()

    def _start(self) -> None:
        """A new process, once it says it is ready (so that its start-up never counts in
        a module's time); an error if it dies first."""
        self.conn, child = self.context.Pipe()
        self.process = self.context.Process(target=_serve,
                                            args=(child, self.options, os.getpid()),
                                            name="symidx-corpus-worker", daemon=True)
        self.process.start()
        child.close()
        try:
            ready = self.conn.poll(_START) and self.conn.recv() == _READY
        except (EOFError, OSError):
            ready = False
        if not ready:
            self._kill()
            raise SymidxError(f"a worker process could not start "
                              f"({_how_it_ended(self.process.exitcode)}); a script that runs "
                              f"symidx.corpus must guard its main code with "
                              f"if __name__ == '__main__', as multiprocessing requires")

    def give(self, task: Task) -> None:
        self.task, self.started = task, time.monotonic()
        try:
            self.conn.send(task)
        except OSError:  # it died since its last module (killed from outside): a new one
            self._kill()
            self._start()
            self.conn.send(task)

    def collect(self, timeout: float | None) -> dict[str, Any] | None:
        """Its record if it has answered; a ``timeout`` or ``error`` record (and a new
        process) if it ran out of time or died; None while it is still working."""
        task = self.task
        assert task is not None
        if self.conn.poll():
            try:
                record: dict[str, Any] = self.conn.recv()
            except (EOFError, OSError):
                pass
            else:
                self.task = None
                return record
        if self.process.is_alive():
            if timeout is None or time.monotonic() - self.started < timeout:
                return None
            self._replace()
            return timed_out(task, self.options, timeout)
        self.process.join()
        self._replace()
        return worker_died(task, self.options)

    def _replace(self) -> None:
        self._kill()
        self.task = None
        self._start()

    def _kill(self) -> None:
        self.process.kill()
        self.process.join()
        self.conn.close()

    def stop(self) -> None:
        """Ask it to finish (killing it if it is busy, or slow to go)."""
        if self.task is None and self.process.is_alive():
            with contextlib.suppress(OSError):
                self.conn.send(None)
            self.process.join(_GRACE)
        if self.process.is_alive():
            self._kill()
        else:
            self.conn.close()


def _how_it_ended(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


def _serve(conn: Connection, options: Options, driver: int) -> None:
    """A worker's loop: a record for each task received, until told to stop (None) or the
    pipe closes. Interrupts are the driver's to handle: it stops the workers. A worker
    whose driver is gone (killed, however) ends at once, busy or not (:func:`_die_with`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with(driver)
    conn.send(_READY)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        conn.send(analyse(task, options))


def _die_with(driver: int) -> None:
    """End this process when process ``driver`` ends. A worker's parent is the fork
    server, not the driver, so the kernel's parent-death signal does not apply; a thread
    waits on the driver instead (a pidfd on Linux, else a check every second) and kills
    this process when it is gone, whatever the main thread is doing."""
    def watch() -> None:
        try:
            fd = os.pidfd_open(driver)
        except ProcessLookupError:  # gone already
            os.kill(os.getpid(), signal.SIGKILL)
        except (AttributeError, OSError):  # no pidfd here: poll
            while True:
                time.sleep(1.0)
                try:
                    os.kill(driver, 0)
                except ProcessLookupError:
                    os.kill(os.getpid(), signal.SIGKILL)
                except OSError:
                    pass
        else:
            select.select([fd], [], [])
            os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="symidx-driver-watch", daemon=True).start()
