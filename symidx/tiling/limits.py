"""The work a tiling decision may do: counted, not timed by the wall clock.

``--check`` and ``--valid-tilings`` are bounded by a budget of enumerated points (the same
verdict on every machine) and by a :class:`~symidx._budget.TimeBudget`: CPU seconds of this
process (a busy machine does not slow it down), a wall-clock limit only when one is asked
for, and the budget of the command around them. Hitting a limit raises
:class:`LimitStop`, naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from symidx._budget import TimeBudget
from symidx.errors import SymidxError

__all__ = ["Limits", "LimitStop", "BUDGET"]

BUDGET = 20_000_000         # most points a decision enumerates in all (default)


class LimitStop(SymidxError):
    """A limit of a tiling decision was hit; the message says which."""


@dataclass
class Limits:
    """The work a check may do: ``budget`` points enumerated in all, ``cpu`` seconds of
    this process's CPU time, and, only when given, ``wall`` seconds of wall-clock time."""

    budget: int = BUDGET
    cpu: float = 60.0
    wall: float | None = None
    spent: int = 0
    _time: TimeBudget | None = field(default=None, repr=False)

    def start(self) -> Limits:
        self._time = TimeBudget(self.cpu, self.wall)
        return self

    def spend(self, points: int) -> None:
        self.spent += points
        if self.spent > self.budget:
            raise LimitStop(f"budget of {self.budget} points")
        out = self._time.spent() if self._time is not None else None
        if out is not None:
            raise LimitStop(f"ran out of {out}")
