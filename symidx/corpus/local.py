"""The local engine: a pool of warm worker processes on this machine.

Each worker imports the analysis once (they are forked from a server process that has
imported :mod:`symidx.corpus.record`), then takes one piece of work at a time over a pipe --
a file to read (:func:`symidx.corpus.sources.outline`), a module to analyse
(:func:`symidx.corpus.record.analyse`, which reads the module's text from its file itself) --
and sends its result back. So no file is read by the driver: whatever a file does to the
process that reads it (a gzip bomb, a device, a crash in a library), it does to a worker,
which is replaced, and the file gets its record.

A worker that gives no answer is stopped (killed and replaced) past its CPU budget (its CPU
time read from ``/proc``: the same on a busy machine as on an idle one), past the wall-clock
limit when one is asked for, or when it has used no CPU at all for
:data:`~symidx.corpus.engines.STUCK` seconds (it waits for something that will not come).
One that dies (a crash, the kernel's out-of-memory killer) is replaced. At most one piece of
work per worker is in flight, and results are handed on as they arrive, so memory stays
bounded whatever the size of the corpus.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import select
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from symidx._budget import WorkerMeter, wall_clock
from symidx.corpus.engines import Stops
from symidx.corpus.record import Options, analyse, timed_out, worker_died
from symidx.corpus.sources import Task
from symidx.errors import SymidxError

__all__ = ["Died", "Pool", "Stopped", "run_local", "default_jobs"]

#: How long a worker that was asked to stop may take before it is killed.
_GRACE = 5.0
#: How long a new worker may take to say it is ready.
_START = 120.0
#: How long the driver waits for an answer before it looks at the busy workers' CPU.
_LOOK = 0.25
_READY = "ready"


def default_jobs() -> int:
    """The processors this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Died:
    """The worker died under the work (a crash, an out-of-memory kill)."""


@dataclass(frozen=True)
class Stopped:
    """The worker was stopped, for the reason given (:meth:`Stops.why`)."""

    why: str


def run_local(tasks: Iterable[Task], options: Options, jobs: int | None, stops: Stops,
              address: str | None = None, pool: Pool | None = None
              ) -> Iterator[dict[str, Any]]:
    """The records of ``tasks`` as they complete, from ``jobs`` worker processes (or those
    of ``pool``); a module whose worker is stopped (see :class:`Stops`) or dies gets a
    ``timeout`` or ``error`` record."""
    own = pool is None
    pool = pool or Pool(jobs)
    try:
        for task, outcome in pool.map(analyse, ((t, options) for t in tasks), stops):
            if isinstance(outcome, Died):
                yield worker_died(task[0], options)
            elif isinstance(outcome, Stopped):
                yield timed_out(task[0], options, outcome.why)
            else:
                yield outcome
    finally:
        if own:
            pool.close()


class Pool:
    """``jobs`` worker processes (default: the processors here), started on first use,
    each running one function call at a time (:meth:`map`, :meth:`call`)."""

    def __init__(self, jobs: int | None = None) -> None:
        self.jobs = jobs or default_jobs()
        self.context = _context()
        self.workers: list[_Worker] = []

    def map(self, work: Callable[..., Any], arguments: Iterable[tuple[Any, ...]],
            stops: Stops) -> Iterator[tuple[tuple[Any, ...], Any]]:
        """``(args, work(*args))`` for each of ``arguments``, as they complete; instead of
        the result, :class:`Died` or :class:`Stopped` when the worker did not give one."""
        while len(self.workers) < self.jobs:
            self.workers.append(_Worker(self.context))
        pending = iter(arguments)
        workers = self.workers
        while True:
            for worker in workers:
                if worker.job is None:
                    args = next(pending, None)
                    if args is None:
                        break
                    worker.give(work, args)
            busy = [w for w in workers if w.job is not None]
            if not busy:
                return
            look = _LOOK if stops.active else None
            wait([w.conn for w in busy] + [w.process.sentinel for w in busy], look)
            for worker in busy:
                found = worker.collect(stops)
                if found is not None:
                    yield found

    def call(self, work: Callable[..., Any], *args: Any, stops: Stops | None = None) -> Any:
        """``work(*args)`` in a worker (:class:`Died` or :class:`Stopped` if it gave
        nothing)."""
        for _, outcome in self.map(work, [args], stops or Stops()):
            return outcome
        raise SymidxError("no worker answered")  # not reached: map yields once per call

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.workers = []

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _context() -> Any:
    """Worker processes forked from a server that has imported the analysis (warm and
    cheap to replace); spawned where there is no fork (Windows)."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["symidx.corpus.record"])
        return context
    return multiprocessing.get_context("spawn")


class _Worker:
    """One worker process, and the call it is working on (``job``, since ``started``)."""

    def __init__(self, context: Any) -> None:
        self.context = context
        self.job: tuple[Any, ...] | None = None
        self.started = 0.0
        self.meter: WorkerMeter | None = None
        self.busy_cpu = 0.0  # the worker's CPU when it was last seen to use some
        self.busy_since = 0.0  # and when that was
        self._start()

    def _start(self) -> None:
        """A new process, once it says it is ready (so that its start-up never counts in
        a module's time); an error if it dies first."""
        self.conn, child = self.context.Pipe()
        self.process = self.context.Process(target=_serve, args=(child, os.getpid()),
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

    def give(self, work: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.job, self.started = args, wall_clock()
        try:
            self.conn.send((work, args))
        except OSError:  # it died since its last job (killed from outside): a new one
            self._kill()
            self._start()
            self.conn.send((work, args))
        self.meter = WorkerMeter(self.process.pid)
        self.busy_cpu, self.busy_since = 0.0, self.started

    def collect(self, stops: Stops) -> tuple[tuple[Any, ...], Any] | None:
        """(args, result) if it has answered; (args, :class:`Stopped`) and a new process
        when a stop applies; (args, :class:`Died`) and a new process if it died; None
        while it is still working."""
        job = self.job
        assert job is not None
        if self.conn.poll():
            try:
                result = self.conn.recv()
            except (EOFError, OSError):
                pass
            else:
                self.job = None
                return job, result
        if self.process.is_alive():
            why = self._stop_reason(stops)
            if why is None:
                return None
            self._replace()
            return job, Stopped(stops.why(why))
        self.process.join()
        self._replace()
        return job, Died()

    def _stop_reason(self, stops: Stops) -> str | None:
        """Which stop applies to the work under way (``cpu``, ``wall``, ``stuck``)."""
        now = wall_clock()
        wall, cpu = stops.wall_stop(), stops.cpu_stop()
        if wall is not None and now - self.started >= wall:
            return "wall"
        if self.meter is None or (cpu is None and stops.stuck is None):
            return None
        used = self.meter.used()
        if cpu is not None and used >= cpu:
            return "cpu"
        if used > self.busy_cpu:
            self.busy_cpu, self.busy_since = used, now
        elif stops.stuck is not None and self.meter.exact and now - self.busy_since >= stops.stuck:
            return "stuck"
        return None

    def _replace(self) -> None:
        self._kill()
        self.job = None
        self._start()

    def _kill(self) -> None:
        self.process.kill()
        self.process.join()
        self.conn.close()

    def stop(self) -> None:
        """Ask it to finish (killing it if it is busy, or slow to go)."""
        if self.job is None and self.process.is_alive():
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


def _serve(conn: Connection, driver: int) -> None:
    """A worker's loop: the result of each call received, until told to stop (None) or
    the pipe closes. Interrupts are the driver's to handle: it stops the workers. A worker
    whose driver is gone (killed, however) ends at once, busy or not (:func:`_die_with`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with(driver)
    conn.send(_READY)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        work, args = message
        conn.send(work(*args))


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
