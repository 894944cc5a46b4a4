"""The simplifier's driver: rounds of passes over a map until nothing changes."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from dataclasses import replace as replace_field
from typing import Literal, overload

from sympy import Symbol

from symidx._budget import TimeBudget
from symidx.core.expr import Expr
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.simplify.passes import PASSES, KnownEmpty, Work, results_only_round
from symidx.core.simplify.ranges import linear_bounds
from symidx.core.simplify.rewriter import Rewriter, Step
from symidx.core.simplify.stats import DEFAULT_BUDGET, Budget, SimplifyStats
from symidx.errors import MapError, expect_type

__all__ = ["simplify", "simplify_expr", "SimplifyResult", "Step", "result_ranges", "MAX_ROUNDS",
           "Budget", "SimplifyStats"]

MAX_ROUNDS = DEFAULT_BUDGET.rounds


@dataclass(frozen=True)
class SimplifyResult:
    """What :func:`simplify` returns with ``trace=True``: the map, whether it changed, every
    rewrite step, and the counters (:class:`SimplifyStats`: rules and passes tried and
    fired, and which budget ran out, if one did)."""

    map: IndexingMap
    changed: bool
    trace: list[Step] = field(default_factory=list)
    stats: SimplifyStats = field(default_factory=SimplifyStats)

    @property
    def complete(self) -> bool:
        """Did the simplifier finish within its budget? When not, the map is still
        correct (the same function on the same domain), only less simple."""
        return self.stats.complete


@overload
def simplify(m: IndexingMap, *, trace: Literal[False] = False,
             replace_point_dims: bool = True, budget: Budget = DEFAULT_BUDGET,
             deadline: float | TimeBudget | None = None) -> IndexingMap: ...


@overload
def simplify(m: IndexingMap, *, trace: Literal[True],
             replace_point_dims: bool = True, budget: Budget = DEFAULT_BUDGET,
             deadline: float | TimeBudget | None = None) -> SimplifyResult: ...


def simplify(m: IndexingMap, *, trace: bool = False, replace_point_dims: bool = True,
             budget: Budget = DEFAULT_BUDGET, deadline: float | TimeBudget | None = None
             ) -> IndexingMap | SimplifyResult:
    """The simplified map (same meaning). With ``trace=True``, a :class:`SimplifyResult`
    holding the map, whether it changed, every rewrite step, and the counters.

    Rounds of the passes (:data:`~symidx.core.simplify.passes.PASSES`) run until a round leaves
    the intervals as they were, within ``budget`` (:class:`Budget`); a budget that runs
    out leaves a correct map, less simple, and says so in the counters. ``deadline`` (a
    :class:`symidx._budget.TimeBudget`, or a :func:`time.monotonic` instant) is looked at
    before each round: once it is spent, the map of the rounds done is returned (correct,
    less simple) and the counters say that time ran out."""
    expect_type(m, IndexingMap, "m", "simplify")
    result = m.with_divisors_nonzero()  # no rule may assume a divisor that can be 0 is not
    if not trace:  # a map without constraints: one round, without the round's state
        quick = results_only_round(result, budget, replace_point_dims)
        if quick is not None:
            return quick
    steps: list[Step] | None = [] if trace else None
    stats = SimplifyStats() if trace else None
    if not (result.is_known_empty or result.is_undefined):
        for _ in range(budget.rounds):
            spent = _spent(deadline)
            if spent is not None:
                if stats is not None:
                    stats.ran_out(spent)
                break
            new, eliminated = _round(result, budget, steps, stats, replace_point_dims)
            settled = new is result or new.is_known_empty or (
                new.all_bounds == result.all_bounds and not eliminated) or new == result
            result = new
            if settled:  # same intervals: another round would find the same expressions
                break
        else:
            if stats is not None:
                stats.ran_out(f"rounds ({budget.rounds})")
    if result == m:
        result = m  # keep the caller's names and identity when nothing changed
    if trace:
        assert stats is not None
        return SimplifyResult(result, result != m, steps or [], stats)
    return result


def _spent(deadline: float | TimeBudget | None) -> str | None:
    """What ran out of ``deadline`` (``time ...``), or None."""
    if deadline is None:
        return None
    if isinstance(deadline, TimeBudget):
        spent = deadline.spent()
        return None if spent is None else f"time: {spent}"
    return "time (the deadline passed)" if time.monotonic() >= deadline else None


def result_ranges(m: IndexingMap) -> list[Interval]:
    """An interval for each result of ``m`` holding every value it takes on the map's
    domain: the variables' intervals *and* the constraints (XLA's ``ComputeResultRanges``).
    A sub-expression that a constraint bounds takes the constraint's interval, so
    ``((d0 * 86 + d1) floordiv 64, (d0 * 86 + d1) mod 64)`` with ``d0 in [0, 11]``,
    ``d1 in [0, 85]`` and ``d0 * 86 + d1 in [0, 1023]`` gives ``[0, 15]`` and ``[0, 63]``
    (the intervals alone give ``[0, 16]``); a sum is also bounded through a constraint on
    another linear combination (:func:`~symidx.core.simplify.ranges.linear_bounds`). Sound,
    not always tight. A known-empty map
    has empty ranges; an undefined one has none (:class:`~symidx.errors.MapError`)."""
    if m.is_undefined:
        raise MapError("an UNDEFINED map has no result ranges")
    if m.is_known_empty:
        return [Interval.EMPTY] * m.num_results
    env = m.variable_bounds()
    known = dict(m.constraints)
    return [linear_bounds(r, env, known) for r in m.results]


def simplify_expr(expr: Expr, env: dict[Symbol, Interval]) -> Expr:
    """One expression simplified under the given variable intervals."""
    return Rewriter(env).simplify(expr)


def _round(m: IndexingMap, budget: Budget, steps: list[Step] | None,
           stats: SimplifyStats | None, replace_point_dims: bool) -> tuple[IndexingMap, bool]:
    """One round: every pass in order. Also says whether equalities were eliminated (their
    replacement constraints are folded in the next round)."""
    work = Work(m, budget, steps, stats, replace_point_dims)
    try:
        if stats is None:
            for pass_ in PASSES:
                pass_(work)
        else:
            _counted_passes(work, stats)
    except KnownEmpty:
        return m.as_known_empty(), False
    bounds, results, kept = work.bounds, work.results, work.constraints
    if _unchanged(m, bounds, results, kept):
        return m, work.reshaped
    nd, nr = m.num_dims, m.num_ranges
    rts = tuple(v if v.bounds == b else replace_field(v, bounds=b)
                for v, b in zip(m.rts, bounds[nd + nr:]))
    # no new variables: the checks of a freshly made map are not needed
    return IndexingMap.create(bounds[:nd], results, bounds[nd:nd + nr], rts, kept,
                              m.names, check=False), work.reshaped


def _counted_passes(work: Work, stats: SimplifyStats) -> None:
    """Every pass in order, as :func:`_round` runs them, counting runs and changes and
    telling when a rewriter runs out of steps."""
    stats.rounds += 1
    starved: Rewriter | None = None  # the rewriter whose running out is already told
    for pass_ in PASSES:
        try:
            changes = pass_(work)
        except KnownEmpty:
            stats.ran(pass_.__name__, 1)
            raise
        stats.ran(pass_.__name__, changes)
        if work.rw.exhausted and work.rw is not starved:
            starved = work.rw
            stats.ran_out(f"rewrite steps ({work.budget.steps} per pass) in {pass_.__name__}")


def _unchanged(m: IndexingMap, bounds: list[Interval], results: list[Expr],
               constraints: dict[Expr, Interval]) -> bool:
    """Did the round leave the map as it was (the same objects: the rewriter returns an
    expression it cannot simplify as it is)?"""
    return (all(a is b for a, b in zip(results, m.results))
            and len(constraints) == len(m.constraints)
            and all(constraints.get(e) == iv for e, iv in m.constraints)
            and all(a == b for a, b in zip(bounds, m.all_bounds)))
