"""The passes of one simplifier round, in order (:data:`PASSES`).

A round works on a :class:`Work`: the map's variable intervals, constraints and results as
they are being simplified. Each pass is a function ``pass_(work) -> int`` that updates the
work and returns how many things it changed (constraints, intervals, variables or results);
a pass that finds the domain empty raises :class:`KnownEmpty`. The driver
(:mod:`symidx.core.simplify.driver`) runs the passes in order, round after round.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from operator import is_, is_not
from typing import Any, TypeVar, cast

from sympy import Integer, Symbol

from symidx.core.expr import (
    ONE,
    Expr,
    add,
    dim,
    from_terms,
    on_clear_caches,
    scale,
    substitute,
    sym,
    terms,
)
from symidx.core.indexing_map import IndexingMap, MapKind
from symidx.core.interval import Interval
from symidx.core.simplify.constraints import (
    CONSTRAINT_RULES,
    as_mod,
    merge_residues,
    residue,
    residue_range,
    tighten_by_mod_range,
    tighten_to_residue,
)
from symidx.core.simplify.memo import variables_of
from symidx.core.simplify.rewriter import Rewriter, Step
from symidx.core.simplify.stats import Budget, SimplifyStats
from symidx.errors import SymidxError

__all__ = ["Work", "KnownEmpty", "PASSES", "Pass", "results_only_round"]


NORMAL = MapKind.NORMAL


class KnownEmpty(SymidxError):
    """Raised by a pass that shows no point satisfies the map's domain (the driver catches
    it: the map is known empty)."""


class Work:
    """One round's state: what the passes read and update. (A plain class with slots: one
    is made per round, and rounds are the simplifier's unit of work.)"""

    __slots__ = ("m", "budget", "trace", "stats", "replace_point_dims", "variables", "bounds",
                 "rw", "constraints", "residues", "fixed", "results", "reshaped")

    def __init__(self, m: IndexingMap, budget: Budget, trace: list[Step] | None,
                 stats: SimplifyStats | None, replace_point_dims: bool):
        self.m = m
        self.budget = budget
        self.trace = trace
        self.stats = stats
        self.replace_point_dims = replace_point_dims
        self.variables: tuple[Symbol, ...] = m.all_vars
        self.bounds: list[Interval] = list(m.all_bounds)
        #: constraints still to keep (expression -> interval)
        self.constraints: dict[Expr, Interval] = {}
        #: ``x mod c == r`` facts on variables: x -> (c, r)
        self.residues: dict[Symbol, tuple[int, int]] = {}
        #: range variables with a known value (in terms of the others)
        self.fixed: dict[Symbol, Expr] = {}
        self.results: list[Expr] = list(m.results)
        #: equalities were eliminated: their replacement constraints are folded next round
        self.reshaped = False
        self.rw = self.rewriter()

    def rewriter(self) -> Rewriter:
        """A rewriter under the current variable intervals."""
        return Rewriter(dict(zip(self.variables, self.bounds)), self.trace, self.budget.steps,
                        self.stats)


Pass = Callable[[Work], int]


def fold_constraints(w: Work) -> int:
    """Drop each constraint that holds wherever the variables lie in their intervals (its
    expression's interval lies inside the constraint's: what a composition adds for a
    result that stays inside the next map's dimension); simplify each other one and fold
    it by the constraint rules (:data:`~symidx.core.simplify.constraints.CONSTRAINT_RULES`)
    until none applies; then a constant constraint is checked and dropped, one on a bare
    variable narrows that variable's interval, ``x mod c == r`` is set aside as a
    residue, and the rest are kept. Counts the constraints that did not stay as they
    were."""
    rw = w.rw
    changes = 0
    memo = w.trace is None and w.stats is None  # a traced or counted fold is done afresh
    for expr0, iv0 in w.m.constraints:
        if memo:
            expr, iv = _remembered(_FOLDED, _FOLDED_BY_VALUE, rw, expr0, (iv0.lo, iv0.hi),
                                   partial(_fold_unless_held, w, expr0, iv0))
        else:
            expr, iv = _fold_unless_held(w, expr0, iv0)
        if expr is None:
            changes += 1  # it always holds: nothing to fold, nothing to keep
            continue
        if iv.is_empty:
            raise KnownEmpty
        if expr.is_Integer:  # a constant: it holds (and goes) or the domain is empty
            if int(expr) not in iv:
                raise KnownEmpty
            changes += 1
            continue
        if expr.is_Symbol:  # on one variable: it narrows the variable's interval
            i = w.variables.index(expr)
            w.bounds[i] = w.bounds[i].intersect(iv)
            changes += 1
            continue
        changes += expr is not expr0 or iv != iv0
        found = residue(expr, iv)
        if found is not None:
            x, c, r = found
            if x in w.residues:
                merged = merge_residues(*w.residues[x], c, r)
                if merged is None:
                    raise KnownEmpty
                w.residues[x] = merged
            else:
                w.residues[x] = (c, r)
            continue
        w.constraints[expr] = w.constraints[expr].intersect(iv) if expr in w.constraints \
            else iv
    return changes


#: Folded constraints, per expression (by identity: the entry keeps the expression alive,
#: so its id is not reused): the expression, its variables in a fixed order, and per
#: ``(interval, the intervals of those variables)`` what :func:`_fold_unless_held` made of
#: it (None for the expression: the constraint always holds).
#: Composed maps meet the same window and bound constraints again and again (a
#: convolution's ``d0 + s0 in [0, 55]`` in every layer, the same object once renumbered by
#: :func:`~symidx.core.expr.shifted`), and a fold depends on nothing else: the rules see the
#: intervals of the expression's own variables (in :func:`fold_constraints` the rewriter
#: assumes no facts).
_FOLDED: dict[int, tuple[Expr, tuple[Symbol, ...],
                         dict[tuple[int, ...], tuple[Expr | None, Interval]]]] = {}
#: The same answers by the expression's value (with its variables' order), for an equal
#: expression that is another object.
_FOLDED_BY_VALUE: dict[tuple[Expr, tuple[Symbol, ...], tuple[int, ...]],
                       tuple[Expr | None, Interval]] = {}
#: Expressions (answers, by value) :data:`_FOLDED` (:data:`_FOLDED_BY_VALUE`) holds before
#: it starts afresh.
FOLDED_LIMIT = 100_000
on_clear_caches(_FOLDED.clear)
on_clear_caches(_FOLDED_BY_VALUE.clear)


def _fold_unless_held(w: Work, expr0: Expr, iv0: Interval) -> tuple[Expr | None, Interval]:
    """``(None, iv0)`` when ``expr0 in iv0`` holds wherever the variables lie in their
    intervals, else the constraint simplified and folded (:func:`_folded`)."""
    rw = w.rw
    span = rw.bounds(expr0)
    if span.lo <= span.hi and iv0.lo <= span.lo and span.hi <= iv0.hi:
        return None, iv0
    return _folded(w, rw.simplify(expr0), iv0)


_Answer = TypeVar("_Answer")


def _remembered(table: dict[int, tuple[Expr, tuple[Symbol, ...], dict[tuple[int, ...], Any]]],
                by_value: dict[tuple[Expr, tuple[Symbol, ...], tuple[int, ...]], Any],
                rw: Rewriter, expr0: Expr, head: tuple[int, ...],
                compute: Callable[[], _Answer]) -> _Answer:
    """``compute()``, an answer about ``expr0`` that depends only on ``head`` and the
    intervals of ``expr0``'s own variables under ``rw``, remembered in ``table`` (by the
    expression's identity) and ``by_value`` (by its value). Not remembered when the
    rewriter runs out of steps meanwhile."""
    env = rw.env
    entry = table.get(id(expr0))
    if entry is None or entry[0] is not expr0:
        if len(table) >= FOLDED_LIMIT:
            table.clear()
        entry = table[id(expr0)] = (expr0, tuple(variables_of(expr0)), {})
    key = list(head)
    for v in entry[1]:
        b = env[v]
        key += (b.lo, b.hi)
    answers, signature = entry[2], tuple(key)
    found = answers.get(signature)
    if found is not None:
        return cast(_Answer, found)
    value_key = (expr0, entry[1], signature)  # an equal expression, another object
    found = by_value.get(value_key)
    if found is not None:
        answers[signature] = found
        return cast(_Answer, found)
    starved = rw.exhausted
    done = compute()
    if not starved and not rw.exhausted:
        if len(by_value) >= FOLDED_LIMIT:
            by_value.clear()
        answers[signature] = by_value[value_key] = done
    return done


def _folded(w: Work, expr: Expr, iv: Interval) -> tuple[Expr, Interval]:
    """One constraint folded by the constraint rules, at most ``budget.folds`` times."""
    rw, stats = w.rw, w.stats
    for _ in range(w.budget.folds):
        for rule in CONSTRAINT_RULES:
            folded = rule(expr, iv, rw)
            if stats is not None:
                stats.rule(rule.__name__).tried += 1
            if folded is not None:
                new_expr, new_iv = rw.simplify(folded[0]), folded[1]
                if stats is not None:
                    stats.rule(rule.__name__).fired += 1
                if w.trace is not None:
                    w.trace.append(Step(rule.__name__, expr, new_expr, tuple(rw.env.items()),
                                        iv, new_iv))
                expr, iv = new_expr, new_iv
                break
        else:
            return expr, iv
        if iv.is_empty:
            return expr, iv
    if stats is not None:
        stats.ran_out(f"constraint folds ({w.budget.folds} per constraint) in fold_constraints")
    return expr, iv


def tighten_to_residues(w: Work) -> int:
    """``x mod c == r``: the interval of ``x`` shrinks to the values ``= r (mod c)`` at its
    ends; the constraint stays unless ``x`` is then a single value. Counts the narrowed
    intervals."""
    changes = 0
    for x, (c, r) in w.residues.items():
        i = w.variables.index(x)
        tightened = tighten_to_residue(w.bounds[i], c, r)
        changes += tightened != w.bounds[i]
        w.bounds[i] = tightened
        if tightened.is_empty:
            raise KnownEmpty
        if tightened.is_point:
            continue
        w.constraints[as_mod(x, c)] = Interval(r, r)
    changes += _tighten_by_mod_ranges(w)
    if any(b.is_empty for b in w.bounds):
        raise KnownEmpty
    return changes


def _tighten_by_mod_ranges(w: Work) -> int:
    """``x mod c in [a, b]`` (not a single residue): the ends of ``x``'s interval move to
    the nearest values whose residue lies in ``[a, b]`` (:func:`tighten_by_mod_range`);
    the constraint stays. Counts the narrowed intervals."""
    changes = 0
    for expr, iv in w.constraints.items():
        found = residue_range(expr, iv)
        if found is None:
            continue
        x, c, a, b = found
        i = w.variables.index(x)
        before = w.bounds[i]
        tightened = tighten_by_mod_range(before, c, a, b)
        if w.stats is not None:
            count = w.stats.rule(tighten_by_mod_range.__name__)
            count.tried += 1
            count.fired += tightened != before
        if tightened == before:
            continue
        if w.trace is not None:  # x in before <=> x in tightened, where x mod c in [a, b]
            w.trace.append(Step(tighten_by_mod_range.__name__, x, x,
                                tuple(zip(w.variables, w.bounds)), before, tightened,
                                facts=((expr, iv),)))
        w.bounds[i] = tightened
        changes += 1
    return changes


def eliminate_range_vars(w: Work) -> int:
    """Range variables whose value is determined (a single-value interval, or an equality
    ``x + s = k`` with coefficient +-1) are replaced by that value in the constraints (and,
    by :func:`substitute_values`, in the results). Counts the variables eliminated."""
    before = dict(w.constraints)
    w.fixed = _fixed_range_vars(w.m, w.bounds, w.constraints)
    w.reshaped = False  # nothing fixed: the constraints are as they were
    if w.fixed:
        w.constraints = _substituted(w.constraints, w.fixed)
        w.reshaped = w.constraints != before  # new constraints: fold them next round
    return len(w.fixed)


def drop_redundant_constraints(w: Work) -> int:
    """Under the narrowed intervals: simplify each constraint again and drop the ones that
    always hold (their expression's range lies inside their interval). Counts the dropped
    constraints."""
    if w.bounds != list(w.m.all_bounds):
        w.rw = w.rewriter()
    rw = w.rw
    memo = w.trace is None and w.stats is None  # a traced or counted pass is done afresh
    kept: dict[Expr, Interval] = {}
    for expr, iv in w.constraints.items():
        if memo:
            expr, span = _remembered(_SPANNED, _SPANNED_BY_VALUE, rw, expr, (),
                                     partial(_spanned, rw, expr))
        else:
            expr, span = _spanned(rw, expr)
        if expr.is_Integer:
            if int(expr) not in iv:
                raise KnownEmpty
            continue
        if span in iv:
            continue
        kept[expr] = kept[expr].intersect(iv) if expr in kept else iv
    dropped = len(w.constraints) - len(kept)
    w.constraints = kept
    return dropped


#: What :func:`drop_redundant_constraints` makes of a constraint's expression (simplified,
#: and its interval), per expression and the intervals of its variables, as
#: :data:`_FOLDED`: the constraints a round keeps are met again in the next map composed.
_SPANNED: dict[int, tuple[Expr, tuple[Symbol, ...], dict[tuple[int, ...], Any]]] = {}
_SPANNED_BY_VALUE: dict[tuple[Expr, tuple[Symbol, ...], tuple[int, ...]], Any] = {}
on_clear_caches(_SPANNED.clear)
on_clear_caches(_SPANNED_BY_VALUE.clear)


def _spanned(rw: Rewriter, expr: Expr) -> tuple[Expr, Interval]:
    """``expr`` simplified, and its interval."""
    expr = rw.simplify(expr)
    return expr, rw.bounds(expr)


def substitute_values(w: Work) -> int:
    """Dimensions with a single value (unless the caller keeps them) and the eliminated
    range variables are replaced by their values in the results. Counts the variables
    replaced."""
    point_dims: dict[Symbol, Expr] = {}
    if w.replace_point_dims:
        point_dims = {dim(i): Integer(b.lo) for i, b in enumerate(w.bounds[: w.m.num_dims])
                      if b.is_point}
    replace = {**point_dims, **w.fixed}
    if replace:
        w.results = substitute(w.results, replace)
    return len(replace)


def simplify_results(w: Work) -> int:
    """Every result rewritten by the expression rules, which may assume the constraints
    (a result is only evaluated where they hold; the constraints themselves are never
    rewritten under their own assumption). Counts the results changed."""
    if w.constraints:  # a result is only evaluated where the constraints hold
        w.rw.assume(w.constraints)
        simplify = w.rw.simplify_result
    elif w.trace is None and w.stats is None:  # a traced or counted one is done afresh
        simplify = partial(_simplified_memo, w.rw)
    else:
        simplify = w.rw.simplify_result
    w.results = [simplify(r) for r in w.results]
    return sum(map(is_not, w.results, w.m.results))


#: Simplified results, by the expression and the rewriter's variable intervals
#: (:attr:`Rewriter.signature`): what the rewriter made of it, assuming no constraint. A
#: chain of compositions meets the same expressions again (a map composed in at every
#: other step brings its own results), and their simplification depends on nothing else.
#: Keyed by every variable's interval, not only by those the expression uses: finding an
#: expression's variables costs a walk of it, which is more than a fresh expression's
#: simplification then saves (the same expression under the same map's variables is what
#: a chain meets). An expression met again as the same object is found at once (the
#: dictionary compares by identity first). Holds :data:`SIMPLIFIED_LIMIT` expressions
#: before it starts afresh.
_SIMPLIFIED: dict[tuple[Expr, tuple[str | int, ...]], Expr] = {}
#: Expressions :data:`_SIMPLIFIED` holds before it starts afresh.
SIMPLIFIED_LIMIT = 1 << 14
#: What the memos hold for an expression the rules leave as it is (no expression).
_UNCHANGED: Any = object()
on_clear_caches(_SIMPLIFIED.clear)


def _simplified_memo(rw: Rewriter, e: Expr) -> Expr:
    """``rw.simplify_result(e)`` for a rewriter that assumes no constraint, remembered in
    :data:`_SIMPLIFIED`. One during which the rewriter ran out of steps is not
    remembered (it depends on what the rewriter did before); a remembered one is then at
    least as simple. An expression the rules leave as it is comes back as itself (the
    object given: the caller tells an unchanged map by its results' identity)."""
    if e.is_Atom:
        return e
    key = (e, rw.signature)
    found = _SIMPLIFIED.get(key)
    if found is None:
        starved = rw.exhausted
        done = rw.simplify_result(e)
        found = _UNCHANGED if done is e else done
        if not starved and not rw.exhausted:
            if len(_SIMPLIFIED) >= SIMPLIFIED_LIMIT:
                _SIMPLIFIED.clear()
            _SIMPLIFIED[key] = found
    return e if found is _UNCHANGED else found


def results_only_round(m: IndexingMap, budget: Budget, replace_point_dims: bool
                       ) -> IndexingMap | None:
    """What the rounds give a map whose range variables all span more than one value and
    whose constraints all hold wherever the variables lie in their intervals (none, or
    those a composition adds for results that stay inside the next map's dimensions), or
    None for any other map. On such a map :func:`fold_constraints` drops every constraint,
    the other constraint passes have nothing to do and no interval can narrow, so one
    round settles it: dimensions with a single value become constants and the results are
    rewritten (:func:`substitute_values`, :func:`simplify_results`), without building the
    round's state. The map itself when nothing changes."""
    if m.kind is not NORMAL or budget.rounds < 1:
        return None
    for b in m.ranges:
        if b.lo == b.hi:
            return None
    env = m.variable_bounds()  # the variables in order, with the map's cached tables
    rw = Rewriter(env, None, budget.steps)
    for expr, iv in m.constraints:  # as fold_constraints looks first: does it always hold?
        span = rw.bounds(expr)
        if not (span.lo <= span.hi and iv.lo <= span.lo and span.hi <= iv.hi):
            return None  # the full rounds have work to do
    results = m.results
    if replace_point_dims:
        point_dims = {v: Integer(b.lo) for v, b in zip(m.dim_vars, m.dims) if b.lo == b.hi}
        # substituted only where a result uses one (a composed map keeps its first map's
        # point dims, which its results no longer mention): the walk would give back the
        # same objects
        if point_dims and any(not point_dims.keys().isdisjoint(variables_of(r))
                              for r in results):
            results = tuple(substitute(results, point_dims))
    simplify = partial(_simplified_memo, rw)
    new = [simplify(r) for r in results]
    if all(map(is_, new, m.results)) and not m.constraints:
        return m
    return IndexingMap(m.dims, tuple(new), m.ranges, m.rts, (), m.names)


PASSES: tuple[Pass, ...] = (
    fold_constraints, tighten_to_residues, eliminate_range_vars, drop_redundant_constraints,
    substitute_values, simplify_results,
)


def _fixed_range_vars(m: IndexingMap, bounds: list[Interval],
                      constraints: dict[Expr, Interval]) -> dict[Symbol, Expr]:
    """Range variables whose value is determined: a single-value interval (``s in [k, k]``
    gives ``s = k``), or a linear equality constraint with coefficient +-1
    (``d0 - s0 in [0, 0]`` gives ``s0 = d0``). The equality is consumed and replaced by
    "the value lies in the variable's interval"; ``constraints`` is updated in place."""
    fixed: dict[Symbol, Expr] = {}
    offset = m.num_dims
    # a runtime variable's source map may take this map's range variables: keep those
    shared = {sym(j) for v in m.rts if v.map is not None for j in range(v.map.num_ranges)}
    range_vars = set(m.range_vars) - shared
    for j, v in enumerate(m.range_vars):
        b = bounds[offset + j]
        if b.is_point and v in range_vars:
            fixed[v] = Integer(b.lo)
    for key, iv in list(constraints.items()):
        if not iv.is_point:
            continue
        expr = substitute([key], fixed)[0] if fixed else key
        parts = terms(expr)
        if not all(t is ONE or t.is_Symbol for _, t in parts):
            continue
        for c, t in parts:
            if t in range_vars and t not in fixed and abs(c) == 1:
                rest = from_terms([(k, u) for k, u in parts if u != t])
                value = scale(c, add([Integer(iv.lo), scale(-1, rest)]))  # c*t + rest = k
                index = offset + m.range_vars.index(t)
                del constraints[key]
                constraints[value] = constraints.get(value, bounds[index]).intersect(
                    bounds[index])
                # earlier values may mention t: express every value without it
                fixed = {k: substitute([v], {t: value})[0] for k, v in fixed.items()}
                fixed[t] = value
                break
    return fixed


def _substituted(constraints: dict[Expr, Interval], fixed: dict[Symbol, Expr]
                 ) -> dict[Expr, Interval]:
    out: dict[Expr, Interval] = {}
    for expr, iv in constraints.items():
        new = substitute([expr], fixed)[0]
        out[new] = out[new].intersect(iv) if new in out else iv
    return out
