"""The work a tiling decision may do: counted, not timed by the wall clock.

``--check`` and ``--valid-tilings`` are bounded by a budget of enumerated points (the same
verdict on every machine) and by the CPU seconds of this process
(:func:`time.process_time`: a busy machine does not slow it down); a wall-clock limit only
when one is asked for. Hitting a limit raises :class:`LimitStop`, naming it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from symidx.errors import SymidxError

__all__ = ["Limits", "LimitStop", "BUDGET"]

BUDGET = 20_000_000         # most points a decision enumerates in all (default)


class LimitStop(SymidxError):
    """A limit of the check was hit: ``reason`` says which."""


@dataclass
class Limits:
    """The work a check may do: ``budget`` points enumerated in all, ``cpu`` seconds of
    this process (:func:`time.process_time`), and, only when given, ``wall`` seconds of
    wall-clock time."""

    budget: int = BUDGET
    cpu: float = 60.0
    wall: float | None = None
    spent: int = 0
    _cpu_start: float = field(default=0.0, repr=False)
    _wall_start: float = field(default=0.0, repr=False)

    def start(self) -> Limits:
        self._cpu_start = time.process_time()
        if self.wall is not None:
            self._wall_start = time.monotonic()
        return self

    def spend(self, points: int) -> None:
        self.spent += points
        if self.spent > self.budget:
            raise LimitStop(f"budget of {self.budget} points")
        if time.process_time() - self._cpu_start > self.cpu:
            raise LimitStop(f"CPU deadline of {self.cpu:g} s")
        if self.wall is not None and time.monotonic() - self._wall_start > self.wall:
            raise LimitStop(f"wall-clock deadline of {self.wall:g} s")
