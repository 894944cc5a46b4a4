"""Map transforms XLA has: remove unused variables, rescale symbols, symbols to dims."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from sympy import Symbol

from symidx._arith import ceil_div, int_array
from symidx.core.expr import Expr, bounds, dim, evaluate_exact, renamed, rt, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.indexing_map.points import box_points
from symidx.core.interval import Interval
from symidx.core.simplify.constraints import residue
from symidx.core.simplify.integer_search import Rows, division_rows, linear_rows, solve
from symidx.core.simplify.memo import variables_of

FEASIBILITY_LIMIT = 1_000_000
_MEMO_LIMIT = 4096  # answers a feasibility memo keeps (then it starts afresh)

#: A box and the constraints on it (linear ones by their numbers, others by their
#: expressions), and whether some point satisfies them all (see :func:`_satisfiable`).
FeasibilityMemo = dict[tuple[Any, ...], "bool | None"]
_MEMO: ContextVar[FeasibilityMemo | None] = ContextVar("feasibility_memo", default=None)
#: The constraints of removed variables as a map holds them (expressions and intervals) and
#: the intervals of their variables, and :func:`_feasible`'s answer (see
#: :func:`feasibility_memo`).
_GROUPS: ContextVar[FeasibilityMemo | None] = ContextVar("feasible_groups", default=None)


@contextmanager
def feasibility_memo(memo: FeasibilityMemo, groups: FeasibilityMemo | None = None
                     ) -> Iterator[None]:
    """While open, the feasibility answers of :func:`remove_unused_vars` (and of what
    calls it) are remembered in ``memo``: composed maps meet the same window constraints
    again and again. The caller owns ``memo`` (a :class:`~symidx.fusion.Analysis` keeps
    one); outside this block nothing is remembered, so no state outlives its owner.

    ``groups``, if given, remembers besides the whole answer for the constraints of the
    removed variables as they are spelled, with their variables' intervals: the maps a
    sweep composes with one step carry the same constraints, and asking again skips the
    bounds, the rows and their key. The answer is a function of that key alone, so it is
    the same as when computed."""
    token = _MEMO.set(memo)
    groups_token = _GROUPS.set(groups)
    try:
        yield
    finally:
        _GROUPS.reset(groups_token)
        _MEMO.reset(token)


def _used_closure(used: set[Symbol], frees: Sequence[frozenset[Symbol]]) -> set[Symbol]:
    """Variables used by the results, plus every variable sharing a constraint with one
    (``frees``: the variables of each constraint)."""
    used = set(used)
    changed = True
    while changed:
        changed = False
        for free in frees:
            if free & used and not free <= used:
                used |= free
                changed = True
    return used


def _feasible(m: IndexingMap, removed: set[Symbol], frees: Sequence[frozenset[Symbol]]
              ) -> bool | None:
    """Can the constraints that mention only ``removed`` variables all hold? None when the
    box is too large to check by enumeration.

    Constraints that share no variable are independent: each connected group is decided on
    its own box (a product of small boxes, not one large one), and its answer remembered
    in the memo a caller opened (see :func:`feasibility_memo`)."""
    group = [(e, iv, free) for (e, iv), free in zip(m.constraints, frees)
             if free and free <= removed]
    if not group:
        return True
    env = m.variable_bounds()
    memo = _GROUPS.get()
    if memo is None:
        return _group_feasible(group, env)
    key = (tuple([(e, iv) for e, iv, _ in group]),
           frozenset([(v, env[v]) for _, _, free in group for v in free]))
    if key in memo:
        return memo[key]
    answer = _group_feasible(group, env)
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = answer
    return answer


def _group_feasible(group: list[tuple[Expr, Interval, frozenset[Symbol]]],
                    env: dict[Symbol, Interval]) -> bool | None:
    """:func:`_feasible` of the constraints ``group`` (each with its variables), the
    variables in the intervals of ``env``: a function of the constraints and of their
    variables' intervals alone."""
    spans = [(bounds(e, env), iv) for e, iv, _ in group]
    if any(span.intersect(iv).is_empty for span, iv in spans):
        return False  # one constraint can never hold
    group = [item for item, (span, iv) in zip(group, spans) if span not in iv]
    answer: bool | None = True
    for component in _components(group):
        order = tuple(sorted({v for _, _, free in component for v in free}, key=_name))
        found = _satisfiable(tuple((e, iv) for e, iv, _ in component),
                             tuple((v, env[v]) for v in order))
        if found is False:
            return False
        if found is None:
            answer = None
    return answer


def _name(v: Symbol) -> str:
    """How ``v`` prints (its name): the order of a box's variables."""
    return v.name


def _components(group: list[tuple[Expr, Interval, frozenset[Symbol]]]
                ) -> list[list[tuple[Expr, Interval, frozenset[Symbol]]]]:
    """``group`` split into sets of constraints linked by shared variables."""
    components: list[tuple[set[Symbol], list[tuple[Expr, Interval, frozenset[Symbol]]]]] = []
    for item in group:
        free, members = set(item[2]), [item]
        for other in [c for c in components if c[0] & free]:
            components.remove(other)
            free |= other[0]
            members = other[1] + members
        components.append((free, members))
    return [members for _, members in components]


def _satisfiable(constraints: tuple[tuple[Expr, Interval], ...],
                 box: tuple[tuple[Symbol, Interval], ...]) -> bool | None:
    """Does some point of ``box`` satisfy every constraint? None when the box holds more
    than :data:`FEASIBILITY_LIMIT` points and no easy witness is found. Remembered in the
    open :func:`feasibility_memo`, if any, by numbers where the constraints are linear or
    divisions of linear sums by constants (the rows of
    :mod:`~symidx.core.simplify.integer_search` and the variables' intervals, whatever the
    variables are called: composed maps meet one window's constraints under ever new
    names), the others by their expressions with the variables named by their place."""
    rows = linear_rows(constraints, [v for v, _ in box])
    divisions = None
    if rows is not None:  # sorted: the search (whose steps follow the rows' order) then
        # answers as a function of the key alone
        rows = tuple(sorted(rows))
        key: Any = (rows, tuple([x for _, iv in box for x in (iv.lo, iv.hi)]))
    else:
        found = division_rows(constraints, box)
        if found is not None:  # the quotients numbered alike, whatever the names
            divisions = (tuple(sorted(found[0])), found[1], found[2])
            key = divisions[0], tuple(found[1]), tuple(found[2])
    memo = _MEMO.get()
    if memo is None:
        return _decided(constraints, box, rows, divisions)
    if rows is None and divisions is None:
        key = (_spelled_by_place(constraints, box),
               tuple([x for _, iv in box for x in (iv.lo, iv.hi)]))
    if key in memo:
        return memo[key]
    answer = _decided(constraints, box, rows, divisions)
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = answer
    return answer


def _spelled_by_place(constraints: tuple[tuple[Expr, Interval], ...],
                     box: tuple[tuple[Symbol, Interval], ...]
                     ) -> tuple[tuple[Expr, Interval], ...]:
    """``constraints`` with the box's variables (all they mention) renamed by their place
    in it (``s0``, ``s1``, ...): the same constraints met under other names -- a window's,
    composed again and again -- are remembered once."""
    places = {v: sym(i) for i, (v, _) in enumerate(box)}
    exprs = renamed([e for e, _ in constraints], places)
    return tuple(zip(exprs, (iv for _, iv in constraints)))


def _decided(constraints: tuple[tuple[Expr, Interval], ...],
             box: tuple[tuple[Symbol, Interval], ...], rows: Rows | None = None,
             divisions: tuple[Rows, list[int], list[int]] | None = None) -> bool | None:
    """:func:`_satisfiable` without the memo; ``rows``: the constraints as linear rows
    (:func:`~symidx.core.simplify.integer_search.linear_rows`), if they are linear;
    ``divisions``: as rows with quotient variables
    (:func:`~symidx.core.simplify.integer_search.division_rows`), if they are divisions
    of linear sums."""
    # Linear constraints: a witness among a few points (each variable at its low end,
    # middle or high end, all alike) settles the common case at once, else the exact
    # search. Divisions of linear sums by constants: the search over the box and the
    # quotients. Otherwise (or when the search gives up) those few points, then every
    # point of the box if it is small.
    los = [iv.lo for _, iv in box]
    his = [iv.hi for _, iv in box]
    candidates = [los, his, [(a + b) // 2 for a, b in zip(los, his)],
                  [(a + b + 1) // 2 for a, b in zip(los, his)]]
    if rows is not None:
        if any(_holds_at(rows, point) for point in candidates):
            return True
        found = solve(rows, los, his)
        if found is not None:
            return found
    elif divisions is not None and (found := solve(*divisions)) is not None:
        return found
    elif _holds(constraints, box, [int_array(list(c)) for c in zip(*candidates)]):
        return True
    size = 1
    for _, iv in box:
        size *= iv.size
    if size > FEASIBILITY_LIMIT:
        return None
    (grids,) = box_points([iv for _, iv in box], chunk=size)
    return _holds(constraints, box, list(grids))


def _holds(constraints: tuple[tuple[Expr, Interval], ...],
           box: tuple[tuple[Symbol, Interval], ...], grids: list[Any]) -> bool:
    """Does one of the points (``grids``: one array of values per variable of ``box``)
    satisfy every constraint? Computed exactly (:func:`symidx.core.expr.evaluate_exact`: a
    product past int64 does not wrap); where a divisor is 0 a constraint has no value and
    does not hold."""
    import numpy as np

    values, defined = evaluate_exact([e for e, _ in constraints], [v for v, _ in box], grids)
    mask = np.ones(grids[0].shape, dtype=bool) if defined is None else defined
    for value, (_, iv) in zip(values, constraints):
        mask = mask & (value >= iv.lo) & (value <= iv.hi)
    return bool(mask.any())


def _holds_at(rows: Rows, point: Sequence[int]) -> bool:
    """Does ``point`` satisfy every row?"""
    for coeffs, const, lo, hi in rows:
        value = const + sum(c * x for c, x in zip(coeffs, point))
        if not lo <= value <= hi:
            return False
    return True


def _linear_search(constraints: tuple[tuple[Expr, Interval], ...],
                   box: tuple[tuple[Symbol, Interval], ...]) -> bool | None:
    """Does a point of ``box`` satisfy every constraint, when each is linear or a sum of
    divisions of linear sums by constants (:func:`~symidx.core.simplify.integer_search.
    division_rows`)? Exact; None when a constraint is neither or the search gives up
    (:data:`~symidx.core.simplify.integer_search.SEARCH_LIMIT` nodes)."""
    found = division_rows(constraints, box)
    return None if found is None else solve(*found)


def _drop(m: IndexingMap, keep_dims: list[int], keep_ranges: list[int], keep_rts: list[int],
          removed: set[Symbol], frees: Sequence[frozenset[Symbol]]) -> IndexingMap:
    rename: dict[Symbol, Symbol] = {}
    for kind, keep in ((dim, keep_dims), (sym, keep_ranges), (rt, keep_rts)):
        for new, old in enumerate(keep):
            if new != old:  # variables before the first removed one keep their name
                rename[kind(old)] = kind(new)
    kept = [c for c, free in zip(m.constraints, frees) if not (free & removed)]
    results: Sequence[Expr] = m.results
    constraints: Sequence[tuple[Expr, Interval]] = kept
    if rename:  # only what is kept is renamed
        done = renamed(list(results) + [e for e, _ in kept], rename)
        results = done[:len(results)]
        constraints = list(zip(done[len(results):], (iv for _, iv in kept)))
    names = None
    if m.names:
        nd, nr = m.num_dims, m.num_ranges
        names = ([m.names[i] for i in keep_dims] + [m.names[nd + i] for i in keep_ranges]
                 + [m.names[nd + nr + i] for i in keep_rts])
    rts = []
    for i in keep_rts:
        v = m.rts[i]
        if v.map is not None and len(keep_dims) != m.num_dims:
            v = replace(v, map=None)  # its map took the removed dims
        rts.append(v)
    # variables renamed in order, constraints on removed ones dropped: nothing to check
    return IndexingMap.create([m.dims[i] for i in keep_dims], results,
                              [m.ranges[i] for i in keep_ranges], rts, constraints, names,
                              check=False)


def remove_unused_symbols(m: IndexingMap) -> tuple[IndexingMap, list[int]]:
    """Drop range and runtime variables the results do not use (with the constraints that
    mention only them, when those can be shown satisfiable). Returns the map and the
    indices of the removed range variables (runtime variables count after them)."""
    return _remove(m, include_dims=False)


def remove_unused_vars(m: IndexingMap) -> tuple[IndexingMap, list[int]]:
    """As :func:`remove_unused_symbols`, and unused dimensions too (the map then takes
    fewer dims). Returns the map and the removed variables' positions in ``all_vars``."""
    return _remove(m, include_dims=True)


def _remove(m: IndexingMap, include_dims: bool) -> tuple[IndexingMap, list[int]]:
    if m.is_known_empty or m.is_undefined or not (include_dims or m.num_ranges or m.num_rts):
        return m, []
    used: set[Symbol] = set()
    for r in m.results:
        used.update(variables_of(r))
    for v in m.rts:  # a runtime variable's source map may read this map's range variables
        if v.map is not None:
            used.update(sym(j) for j in range(min(v.map.num_ranges, m.num_ranges)))
    everything = m.all_vars
    if all(v in used for v in (everything if include_dims else everything[m.num_dims:])):
        return m, []  # (the dims are kept when not included)
    if not include_dims:
        used.update(m.dim_vars)
    frees = [variables_of(e) for e, _ in m.constraints]
    used = _used_closure(used, frees)
    removed = {v for v in m.all_vars if v not in used}
    if not removed:
        return m, []
    feasible = _feasible(m, removed, frees)
    if feasible is False:
        return m.as_known_empty(), []
    if feasible is None:  # cannot tell: keep the variables their constraints mention
        for free in frees:
            removed -= free
    if not removed:
        return m, []
    keep_dims = [i for i, v in enumerate(m.dim_vars) if v not in removed]
    keep_ranges = [i for i, v in enumerate(m.range_vars) if v not in removed]
    keep_rts = [i for i, v in enumerate(m.rt_vars) if v not in removed]
    gone = [i for i, v in enumerate(m.all_vars) if v in removed]
    if not include_dims:
        gone = [i - m.num_dims for i in gone]
    return _drop(m, keep_dims, keep_ranges, keep_rts, removed, frees), gone


def convert_range_vars_to_dims(m: IndexingMap, indices: Sequence[int] | None = None
                               ) -> IndexingMap:
    """Range variables (all, or those at ``indices``) become dimensions, appended after the
    existing dims in order; the rest keep their relative order."""
    chosen = list(range(m.num_ranges)) if indices is None else list(indices)
    keep = [i for i in range(m.num_ranges) if i not in chosen]
    rename: dict[Symbol, Expr] = {}
    for k, i in enumerate(chosen):
        rename[sym(i)] = dim(m.num_dims + k)
    for k, i in enumerate(keep):
        rename[sym(i)] = sym(k)
    results, constraints = m.substitute(rename)
    names = None
    if m.names:
        nd = m.num_dims
        names = (list(m.names[:nd]) + [m.names[nd + i] for i in chosen]
                 + [m.names[nd + i] for i in keep] + list(m.names[nd + m.num_ranges:]))
    return IndexingMap.create(list(m.dims) + [m.ranges[i] for i in chosen], results,
                              [m.ranges[i] for i in keep], m.rts, constraints, names)


def rescale_symbols(m: IndexingMap) -> IndexingMap:
    """A range variable ``s`` with a constraint ``s mod c == r`` becomes ``c*s' + r`` with
    ``s'`` over the matching smaller interval, and the constraint goes."""
    rename: dict[Symbol, Expr] = {}
    ranges = list(m.ranges)
    dropped = set()
    for e, iv in m.constraints:
        found = residue(e, iv)
        if found is None:
            continue
        x, c, r = found
        if x in rename or x not in m.range_vars:
            continue
        i = m.range_vars.index(x)
        b = ranges[i]
        ranges[i] = Interval(ceil_div(b.lo - r, c), (b.hi - r) // c)
        rename[x] = c * x + r
        dropped.add(e)
    if not rename:
        return m
    results, constraints = m.substitute(rename)
    kept = [(e, iv) for (e, iv), (orig, _) in zip(constraints, m.constraints)
            if orig not in dropped]
    return IndexingMap.create(m.dims, results, ranges, m.rts, kept, m.names)
