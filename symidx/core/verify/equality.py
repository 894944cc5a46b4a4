"""Deciding whether two maps are equal: the checks every method shares, and the choice of
method.

**What equal means.** Two maps are equal when they relate the same pairs (source index,
target index): for every source index ``d``, the same image ``{results(d, s, rt) : s and
rt in their intervals, every constraint holds}`` -- in particular the same domain (the
source indices with a non-empty image). Range variables and runtime variables are both
quantified inside the image, as the map's meaning says: a map with them is compared as a
set of targets per source index, and a runtime variable stands for every value in its
feasible interval (its source instruction does not take part). A simplifier *step* is
stricter: :func:`check_step` compares the two expressions as functions of every variable,
runtime ones included.

**How.** Identical maps answer at once. Otherwise ``method="auto"`` enumerates a small
box (numpy); beyond it, it first evaluates both maps at a few hundred points (a difference
found there is a counterexample: "sampling"), then proves Presburger maps (``+``, ``*`` by
constants, ``floordiv``/``mod``/``ceildiv`` by constants, ``min``/``max``) with isl when
islpy is installed and else with z3, and enumerates other maps when their box is small
enough; otherwise the answer is :class:`~symidx.errors.Undecided`, with the reason.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from symidx.core.indexing_map import IndexingMap, MapKind, print_expr
from symidx.core.verify.common import Deadline, Progress, non_presburger_reason
from symidx.core.verify.enumeration import EXHAUSTIVE_LIMIT, decide_by_enumeration, probe
from symidx.core.verify.isl import decide_by_isl, has_isl
from symidx.core.verify.smt import decide_by_smt, has_z3
from symidx.core.verify.verdict import Verdict
from symidx.errors import MapError, Undecided

__all__ = ["decide", "equal", "METHODS", "DEFAULT_TIMEOUT", "SMALL_BOX"]

METHODS = ("auto", "enumerate", "smt", "isl")
"""How :func:`decide` may decide: ``auto`` chooses among the other three."""

DEFAULT_TIMEOUT = 60.0
"""CPU seconds allowed when no ``cpu_limit`` is given (a budget of work: the same answer
on a busy machine as on an idle one)."""

SMALL_BOX = 4_096
"""``auto`` enumerates variable boxes up to this many points (faster than a proof)."""


def equal(a: IndexingMap, b: IndexingMap, timeout: float | None = None,
          method: str = "auto", *, cpu_limit: float | None = None) -> bool:
    """Are ``a`` and ``b`` the same function on the same domain? True or False, decided
    exactly; raises :class:`~symidx.errors.Undecided` when it cannot be decided (see
    :func:`decide`, which also returns the counterexample)."""
    return decide(a, b, timeout, method, cpu_limit=cpu_limit).equal


def decide(a: IndexingMap, b: IndexingMap, timeout: float | None = None,
           method: str = "auto", limit: int = EXHAUSTIVE_LIMIT,
           progress: Progress | None = None, *, cpu_limit: float | None = None,
           budget: Deadline | None = None) -> Verdict:
    """Decide whether ``a`` and ``b`` are equal (see the module docstring for what that
    means): a :class:`Verdict` that says which method decided and, for different maps, a
    point where they differ with both images.

    ``cpu_limit``: CPU seconds, of this process and of the isl worker (default
    :data:`DEFAULT_TIMEOUT`); ``timeout``: seconds of the wall clock besides, when given
    (on a busy machine it stops sooner in work done). ``float("inf")`` is no limit;
    ``cpu_limit=float("inf")`` without a ``timeout`` also spares isl its child process.
    ``budget``: a :class:`~symidx.core.verify.common.Deadline` to share (a trace's), instead
    of both. ``method``: one of :data:`METHODS`. ``limit``: the most points enumeration
    visits. ``progress`` is told what the procedure is about to do. Raises
    :class:`~symidx.errors.Undecided` (with the reason) when the method cannot decide
    within the budget."""
    if method not in METHODS:
        raise MapError(f"unknown method {method!r}: choose {', '.join(METHODS)}")
    a, b = _same_arity(a, b)
    deadline = budget if budget is not None else \
        Deadline(DEFAULT_TIMEOUT if cpu_limit is None else cpu_limit, timeout)
    verdict = _decide(a, b, deadline, method, limit, progress)
    note = zero_divisor_note(a, b)
    return replace(verdict, note=note) if note else verdict


def zero_divisor_note(*maps: IndexingMap) -> str:
    """What a verdict takes as given when a divisor can be 0: those points are outside
    the map's definition (empty when no divisor can be 0)."""
    found: dict[str, None] = {}
    for m in maps:
        names = dict(zip(m.all_vars, m.display_names()))
        for node, divisor, _ in m.zero_divisors():
            found[f"{print_expr(divisor, names, 'xla')} in {print_expr(node, names, 'xla')}"] \
                = None
    if not found:
        return ""
    return (f"a divisor can be 0 ({', '.join(found)}): where it is, the map has no value "
            f"and the point is outside its definition")


def _same_arity(a: IndexingMap, b: IndexingMap) -> tuple[IndexingMap, IndexingMap]:
    """A known-empty map given the other map's arity: ``KNOWN EMPTY`` text carries none,
    and every method (isl above all, whose relations have spaces) compares maps of one
    arity. Equal exactly when the other map's domain is empty."""
    if a.is_known_empty and b.kind is MapKind.NORMAL:
        return b.as_known_empty(), b
    if b.is_known_empty and a.kind is MapKind.NORMAL:
        return a, a.as_known_empty()
    return a, b


def _decide(a: IndexingMap, b: IndexingMap, deadline: Deadline, method: str, limit: int,
            progress: Progress | None) -> Verdict:
    quick = _without_proof(a, b)
    if quick is not None:
        return quick
    tell = progress or (lambda _: None)
    reason = non_presburger_reason(a, b)
    if method == "auto":
        if max(_box(a), _box(b)) > SMALL_BOX:
            found = probe(a, b)
            if found is not None:
                return found
        method = _choose(a, b, reason, limit)
    if method == "enumerate":
        tell(f"enumerating {max(_box(a), _box(b))} points")
        return decide_by_enumeration(a, b, limit, deadline)
    if method == "isl":
        tell("deciding with isl")
        return decide_by_isl(a, b, checked=reason is None, deadline=deadline)
    tell("proving with z3")
    return decide_by_smt(a, b, deadline, nonlinear=reason is not None)


def _without_proof(a: IndexingMap, b: IndexingMap) -> Verdict | None:
    """The verdict when no method is needed: undefined maps, different arities, identical
    maps, two known-empty maps."""
    if a.is_undefined or b.is_undefined:
        same = a.is_undefined and b.is_undefined
        return Verdict(same, "undefined", reason="" if same else "one map is UNDEFINED")
    if a == b:
        return Verdict(True, "identical")
    if a.is_known_empty and b.is_known_empty:
        return Verdict(True, "identical")
    if a.is_known_empty or b.is_known_empty:  # "KNOWN EMPTY" text carries no arity
        return None
    if a.num_dims != b.num_dims or a.num_results != b.num_results:
        return Verdict(False, "shape", reason=f"{a.num_dims} dims -> {a.num_results} results "
                       f"vs {b.num_dims} dims -> {b.num_results} results")
    return None


def _choose(a: IndexingMap, b: IndexingMap, reason: str | None, limit: int) -> str:
    size = max(_box(a), _box(b))
    if size <= SMALL_BOX:
        return "enumerate"
    if reason is None and has_isl():
        return "isl"
    if reason is None and has_z3():
        return "smt"
    if size <= limit:
        return "enumerate"
    if reason is not None:
        raise Undecided(f"{reason}, and the domain box has {size} points, more than {limit} "
                        f"to enumerate (--method smt lets z3 try nonlinear arithmetic)")
    raise Undecided(f"the domain box has {size} points, more than {limit} to enumerate, and "
                    f"neither islpy nor z3 is installed to prove it "
                    f"(pip install 'symidx[isl]')")


def _box(m: IndexingMap) -> int:
    return 0 if m.is_known_empty else m.domain_size()


def check_step(step: Any, timeout: float | None = None, method: str = "auto", *,
               cpu_limit: float | None = None, budget: Deadline | None = None) -> Verdict:
    """Does a simplifier step (:class:`symidx.core.simplify.Step`) hold: are ``before`` and
    ``after`` equal for every value of the variables in the step's intervals where
    ``before`` has a value (a divisor of it may be 0; for a step on a constraint: do the
    same points satisfy both)? The limits are :func:`decide`'s."""
    from symidx.core.expr import dim, substitute

    variables = [v for v, _ in step.env]
    rename = {v: dim(i) for i, v in enumerate(variables)}
    before, after = substitute([step.before, step.after], rename)
    intervals = [b for _, b in step.env]
    # where a divisor of ``before`` is 0 it has no value, and the map it came from is not
    # defined there (the simplifier starts from :meth:`IndexingMap.with_divisors_nonzero`):
    # the step is asked to hold where ``before`` is defined
    guard = IndexingMap.create(intervals, [before], check=False).with_divisors_nonzero()
    extra = list(guard.constraints) if not guard.is_known_empty else [(0, (1, 1))]
    # a result's rewrite may rely on the map's constraints: both sides assume them
    facts = [*zip(substitute([e for e, _ in getattr(step, "facts", ())], rename),
                  [iv for _, iv in getattr(step, "facts", ())]), *extra]
    if step.before_interval is not None:
        return decide(IndexingMap.create(intervals, [], constraints=[
                          (before, step.before_interval), *facts]),
                      IndexingMap.create(intervals, [], constraints=[
                          (after, step.after_interval), *facts]), timeout, method,
                      cpu_limit=cpu_limit, budget=budget)
    return decide(IndexingMap.create(intervals, [before], constraints=facts, check=False),
                  IndexingMap.create(intervals, [after], constraints=facts, check=False),
                  timeout, method, cpu_limit=cpu_limit, budget=budget)
