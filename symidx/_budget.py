"""Limits that count work, so that an answer does not depend on the machine's load.

Every long computation of symidx takes a :class:`TimeBudget`: **CPU seconds** -- of this
process (every thread) and of the worker processes it waits on (the isl worker, a corpus
worker: :class:`WorkerMeter`, from ``/proc``) -- and, only when a user asks for one,
**wall-clock seconds**. A busy machine gives a computation fewer CPU seconds per second,
so the same work gets the same answer there as on an idle machine; a wall-clock limit
would stop it sooner on the busy one. (The other limits are counted steps: distinct maps
held, rewrite steps, points enumerated.)

The clocks are this module's functions :func:`cpu_clock` and :func:`wall_clock`, looked up
at each reading, so that a test replaces them with a fake clock rather than timing
anything.

A command may put a budget around everything it runs (:func:`command_budget`, ``batch
--timeout`` and ``--cpu-limit``): every budget checked meanwhile honours it too, and the
CPU of a worker process counted in a budget counts in it as well.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Callable, Iterator

from symidx.errors import SymidxError

__all__ = ["TimeBudget", "WorkerMeter", "command_budget", "interrupting", "cpu_clock",
           "wall_clock", "process_cpu", "POLL"]

#: How long a wait for a worker process blocks before its CPU is read again (seconds of
#: the wall clock: how soon a spent budget is noticed, not how much work is done).
POLL = 0.05


def cpu_clock() -> float:
    """CPU seconds this process has used (user and system, every thread)."""
    return time.process_time()


def wall_clock() -> float:
    """Seconds of a monotonic wall clock."""
    return time.monotonic()


def process_cpu(pid: int) -> float | None:
    """CPU seconds (user and system) process ``pid`` has used, from ``/proc``; None where
    it cannot be read (no ``/proc``, the process reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        fields = stat[stat.rindex(b")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / _ticks()
    except (OSError, ValueError, IndexError):
        return None


def _ticks() -> int:
    try:
        return os.sysconf("SC_CLK_TCK")
    except (AttributeError, ValueError, OSError):
        return 100


class WorkerMeter:
    """The CPU seconds a worker process uses from now on (:func:`process_cpu`). Where its
    CPU cannot be read at all (no ``/proc``), the wall-clock time that passes stands for it,
    an upper bound; once it can no longer be read (the process ended), the last reading."""

    __slots__ = ("pid", "_start", "_last", "_wall_start")

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._start = process_cpu(pid)
        self._last = 0.0
        self._wall_start = wall_clock()

    @property
    def exact(self) -> bool:
        """Whether the CPU is read (not stood in for by the wall clock)."""
        return self._start is not None

    def used(self) -> float:
        if self._start is None:
            return wall_clock() - self._wall_start
        now = process_cpu(self.pid)
        if now is not None:
            self._last = max(self._last, now - self._start)
        return self._last


class TimeBudget:
    """At most ``cpu`` CPU seconds (this process's, and those of workers added with
    :meth:`add_worker_cpu`) and, if given, at most ``wall`` seconds of the wall clock,
    counted from construction (None, or infinity: no such limit). The budgets of the
    commands around it (:func:`command_budget`) are honoured too."""

    __slots__ = ("cpu", "wall", "_cpu_start", "_wall_start", "workers")

    def __init__(self, cpu: float | None = None, wall: float | None = None) -> None:
        self.cpu = _seconds(cpu, "a CPU limit")
        self.wall = _seconds(wall, "a timeout")
        self._cpu_start = cpu_clock()
        self._wall_start = wall_clock()
        #: CPU seconds of worker processes counted in this budget.
        self.workers = 0.0

    @property
    def seconds(self) -> float:
        """The tighter of the two limits, in seconds (infinity when there is none)."""
        return min(x for x in (self.cpu, self.wall, math.inf) if x is not None)

    def cpu_spent(self) -> float:
        return cpu_clock() - self._cpu_start + self.workers

    def wall_spent(self) -> float:
        return wall_clock() - self._wall_start

    def add_worker_cpu(self, seconds: float) -> None:
        """Count ``seconds`` of a worker process's CPU here (and in the commands' budgets)."""
        self.workers += seconds
        for outer, _ in _COMMANDS:
            if outer is not self:
                outer.workers += seconds

    def own_remaining(self) -> float:
        left = math.inf
        if self.cpu is not None:
            left = min(left, self.cpu - self.cpu_spent())
        if self.wall is not None:
            left = min(left, self.wall - self.wall_spent())
        return left

    def remaining(self) -> float:
        """Seconds left before a limit (its own or a command's) is reached: CPU seconds or
        wall-clock seconds, whichever runs out first; infinity without limits."""
        left = self.own_remaining()
        if _COMMANDS:
            left = min(left, _COMMANDS[-1][0].own_remaining())
        return left

    def spent(self) -> str | None:
        """What ran out, in words (``CPU time (600 s)``, ``wall-clock time (5 s)``, or the
        words of a command's budget), or None while there is time left."""
        if self.cpu is not None and self.cpu_spent() >= self.cpu:
            return f"CPU time ({self.cpu:g} s)"
        if self.wall is not None and self.wall_spent() >= self.wall:
            return f"wall-clock time ({self.wall:g} s)"
        if _COMMANDS:
            outer, what = _COMMANDS[-1]
            if outer is not self and outer.own_remaining() <= 0:
                return what
        return None

    def describe(self) -> str:
        """The limits, in words: ``CPU time (600 s)``, ``... or wall-clock time (5 s)``."""
        parts = ([f"CPU time ({self.cpu:g} s)"] if self.cpu is not None else []) \
            + ([f"wall-clock time ({self.wall:g} s)"] if self.wall is not None else [])
        return " or ".join(parts) or "no limit"

    def wait_slice(self) -> float | None:
        """How long a wait for a worker may block before the budget is looked at again:
        :data:`POLL` while a limit is set (None without any)."""
        left = self.remaining()
        if math.isinf(left):
            return None
        return max(0.0, min(POLL, left))


def _seconds(value: float | None, what: str) -> float | None:
    if value is None or value == math.inf:
        return None
    if not value > 0:
        raise SymidxError(f"{what} must be a positive number of seconds, not {value!r}")
    return float(value)


@contextlib.contextmanager
def interrupting(budget: TimeBudget, interrupt: Callable[[], None]) -> Iterator[None]:
    """While open, a thread calls ``interrupt()`` once ``budget`` is spent: for work in C
    that cannot look at the budget itself but can be told to stop (z3's ``interrupt``).
    Without any limit, nothing is started."""
    if math.isinf(budget.remaining()):
        yield
        return
    done = threading.Event()

    def watch() -> None:
        while not done.wait(POLL):
            if budget.spent() is not None:
                interrupt()
                return

    thread = threading.Thread(target=watch, name="symidx-budget-watch", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


#: The budgets of the commands running (innermost last), each with the words that say it.
_COMMANDS: list[tuple[TimeBudget, str]] = []


@contextlib.contextmanager
def command_budget(budget: TimeBudget, what: str) -> Iterator[TimeBudget]:
    """While open, every :class:`TimeBudget` checked is spent once ``budget`` is
    (:meth:`TimeBudget.spent` then says ``what``): a command's limit that every analysis,
    decision and enumeration inside it honours where it checks its own."""
    _COMMANDS.append((budget, what))
    try:
        yield budget
    finally:
        _COMMANDS.remove((budget, what))
