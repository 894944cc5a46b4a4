"""A simplifier trace verified: every recorded rewrite step, and the whole chain (the map
before against the map after), each decided by :func:`symidx.core.verify.decide`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from symidx.core.indexing_map import IndexingMap
from symidx.core.verify.common import Deadline, Progress
from symidx.core.verify.equality import DEFAULT_TIMEOUT, check_step, decide
from symidx.core.verify.verdict import Verdict
from symidx.errors import Undecided

__all__ = ["StepCheck", "TraceCheck", "check_trace"]


@dataclass(frozen=True)
class StepCheck:
    """One checked step: the step, and its verdict or why it is undecided."""

    step: object
    verdict: Verdict | None
    undecided: str = ""

    def describe(self) -> str:
        return self.verdict.describe() if self.verdict is not None \
            else f"undecided ({self.undecided})"


@dataclass(frozen=True)
class TraceCheck:
    """Every step of a simplification checked, and the whole chain."""

    before: IndexingMap
    after: IndexingMap
    steps: tuple[StepCheck, ...]
    whole: StepCheck
    stopped: tuple[str, ...] = ()
    """Which of the simplifier's budgets ran out (time included), if any."""

    @property
    def holds(self) -> bool:
        """Every step and the whole chain proven equal."""
        return all(c.verdict is not None and c.verdict.equal for c in (*self.steps, self.whole))

    @property
    def refuted(self) -> bool:
        """Some step, or the whole chain, found different."""
        return any(c.verdict is not None and not c.verdict.equal
                   for c in (*self.steps, self.whole))


def check_trace(m: IndexingMap, timeout: float | None = None, method: str = "auto",
                on_step: Callable[[int, StepCheck], None] | None = None,
                progress: Progress | None = None, *,
                cpu_limit: float | None = None) -> TraceCheck:
    """Simplify ``m`` with a trace; decide every step and ``m`` against the result, all
    within one budget: ``cpu_limit`` CPU seconds in total (default
    :data:`~symidx.core.verify.equality.DEFAULT_TIMEOUT`) and ``timeout`` seconds of the wall
    clock when given: the simplifier stops its rounds when the budget is spent, each
    decision gets what is left, and a decision with nothing left is undecided, saying so.
    ``on_step(k, check)`` is told of each step (k from 1) as it is decided, and of the
    whole chain last (k = 0); ``progress`` of what is next."""
    from symidx.core.simplify import simplify

    deadline = Deadline(DEFAULT_TIMEOUT if cpu_limit is None else cpu_limit, timeout)
    tell = progress or (lambda _: None)
    tell("simplifying with a trace")
    result = simplify(m, trace=True, deadline=deadline)
    checks = []
    for k, step in enumerate(result.trace, 1):
        tell(f"checking step {k} of {len(result.trace)}")
        checked = _checked(partial(check_step, step, method=method, budget=deadline), step,
                           deadline)
        checks.append(checked)
        if on_step is not None:
            on_step(k, checked)
    tell("checking the whole chain")
    whole = _checked(lambda: decide(m, result.map, method=method, budget=deadline), None,
                     deadline)
    if on_step is not None:
        on_step(0, whole)
    return TraceCheck(m, result.map, tuple(checks), whole, tuple(result.stats.exhausted))


def _checked(run: Callable[[], Verdict], step: object, deadline: Deadline) -> StepCheck:
    spent = deadline.spent()
    if spent is not None:
        return StepCheck(step, None, f"out of {spent} for the whole trace")
    try:
        return StepCheck(step, run())
    except Undecided as e:
        return StepCheck(step, None, e.reason)
