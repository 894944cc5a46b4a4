"""Exact rewrites of the variables a map's results do not use: they only say that *some*
value of them satisfies the constraints (SPEC §1: a map's targets are its results over
every value of its range and runtime variables that satisfies the constraints).

A chain of causal-attention hops composes to maps like ``(d0)[s0, s1] -> (s1)`` with
``s1 - s0 <= 0``, ``s0 - d0 <= 0``, each hop's row ``s0`` only tying the next hop's to the
output's; each hop adds one such variable, and (once the elements holding the run-time
sequence bounds are forgotten) a copy of the bounds' runtime variables. Three rules give
such maps back their one-hop form, each the same set of targets:

* :func:`project_existentials` (rule ``project_existential``): a range variable the results
  do not use, which every constraint holds with coefficient ``+1`` or ``-1``, is eliminated
  (Fourier-Motzkin elimination, exact over the integers for unit coefficients);
* :func:`merge_equal_existentials` (rule ``merge_equal_existentials``): a group of unused
  variables whose constraints repeat another group's, variable for variable, is dropped;
* :func:`order_range_vars` (rule ``order_range_vars``): range variables renamed in the
  order the results use them, so that maps equal but for the names of their range
  variables are one map.

:func:`has_existential` is the sweep's cheap test before the first two.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from sympy import Integer, Symbol

from symidx.core.expr import (
    ONE,
    Expr,
    add,
    bounds,
    from_terms,
    renamed,
    scale,
    scaled_sum,
    sym,
    terms,
)
from symidx.core.indexing_map import IndexingMap, RuntimeVar
from symidx.core.interval import Interval
from symidx.core.simplify.finish import finish
from symidx.core.simplify.memo import variables_of
from symidx.core.simplify.transforms import _drop

__all__ = ["project_existentials", "merge_equal_existentials", "order_range_vars",
           "drop_implied_constraints", "tidy_existentials", "has_existential", "oriented",
           "PROJECTION_PAIRS", "EXISTENTIAL_RULES"]

#: Most new constraints one elimination may make (Fourier-Motzkin pairs every lower bound
#: of a variable with every upper bound; a variable with more is kept).
PROJECTION_PAIRS = 16
#: Most renamings tried when matching one group of variables against another.
_MATCH_TRIES = 120


def _result_vars(m: IndexingMap) -> set[Symbol]:
    used: set[Symbol] = set()
    for r in m.results:
        used |= variables_of(r)
    return used


def _positional_rts(m: IndexingMap) -> bool:
    """Does a runtime variable's source map read this map's range variables by position
    (then no range variable may be renamed or removed)?"""
    return any(v.map is not None and v.map.num_ranges for v in m.rts)


def has_existential(m: IndexingMap) -> bool:
    """Does a constraint of ``m`` hold a range or runtime variable its results do not use?
    (After :func:`~symidx.core.simplify.finish.finish`, such a variable is tied by constraints
    to a variable that is used: the rules of this module may apply.)"""
    if not m.constraints or not (m.num_ranges or m.num_rts) or m.is_known_empty \
            or m.is_undefined:
        return False
    used = _result_vars(m)
    unused = {v for v in (*m.range_vars, *m.rt_vars) if v not in used}
    if not unused:
        return False
    return any(not unused.isdisjoint(variables_of(e)) for e, _ in m.constraints)


# --- project_existential ------------------------------------------------------------------

_Bound = tuple[Expr, int]  # a bound of a variable: its symbolic part and its constant


def _split(e: Expr) -> _Bound:
    """``e`` as its symbolic part and its constant term."""
    parts = terms(e)
    constant = sum(c for c, x in parts if x is ONE)
    return from_terms([(c, x) for c, x in parts if x is not ONE]), int(constant)


def _bounds_of(s: Symbol, interval: Interval, constraints: Sequence[tuple[Expr, Interval]]
               ) -> tuple[list[_Bound], list[_Bound]] | None:
    """The lower and upper bounds the constraints mentioning ``s`` put on it, when each
    holds ``s`` as one term of its sum with coefficient ``+1`` or ``-1`` (``s`` in
    ``[lo, hi]`` first); None otherwise."""
    lowers: list[_Bound] = [(Integer(0), interval.lo)]
    uppers: list[_Bound] = [(Integer(0), interval.hi)]
    for e, iv in constraints:
        parts = terms(e)
        mine = [c for c, x in parts if x is s]
        if len(mine) != 1 or mine[0] not in (1, -1):
            return None
        rest = from_terms([(c, x) for c, x in parts if x is not s])
        if s in variables_of(rest):
            return None  # s also under a division, a remainder, a product
        r, k = _split(rest)
        if mine[0] == 1:  # lo <= s + r + k <= hi
            lowers.append((scale(-1, r), iv.lo - k))
            uppers.append((scale(-1, r), iv.hi - k))
        else:  # lo <= -s + r + k <= hi
            lowers.append((r, k - iv.hi))
            uppers.append((r, k - iv.lo))
    return lowers, uppers


def _pairs(lowers: list[_Bound], uppers: list[_Bound], env: dict[Symbol, Interval]
           ) -> list[tuple[Expr, Interval]] | None:
    """The constraints ``L <= U`` for every lower bound ``L`` and upper bound ``U`` (those
    the intervals decide left out), each spelled by :func:`oriented`; None when one can
    never hold."""
    found: dict[Expr, Interval] = {}
    for (le, lc), (ue, uc) in itertools.product(lowers, uppers):
        diff = add([ue, scale(-1, le)])  # ue + uc >= le + lc: ue - le >= lc - uc
        need = lc - uc
        if diff.is_Integer:
            if int(diff) < need:
                return None
            continue
        span = bounds(diff, env)
        if span.lo >= need:
            continue
        if span.hi < need:
            return None
        e, iv = oriented(diff, Interval(need, span.hi))
        found[e] = found[e].intersect(iv) if e in found else iv
    return list(found.items())


_KIND_RANK = {"d": 0, "s": 1, "r": 2}


def _first_var(e: Expr) -> Symbol | None:
    """The first variable of ``e``: dims before range variables before runtime variables,
    each by number."""
    free = variables_of(e)
    if not free:
        return None
    return min(free, key=lambda v: (_KIND_RANK.get(v.name[0], 3), len(v.name), v.name))


def oriented(e: Expr, iv: Interval) -> tuple[Expr, Interval]:
    """The constraint ``e in iv`` spelled with a positive coefficient on its first
    variable (see :func:`_first_var`) where that variable is a term of the sum:
    ``-s1 - rt0 + rt1 in [1, 9]`` is ``s1 + rt0 - rt1 in [-9, -1]``."""
    v = _first_var(e)
    if v is None:
        return e, iv
    if any(x is v and c < 0 for c, x in terms(e)):
        return scale(-1, e), Interval(-iv.hi, -iv.lo)
    return e, iv


def _dominated(found: list[_Bound], env: dict[Symbol, Interval], lower: bool
               ) -> list[_Bound]:
    """``found`` without the bounds another one implies: a lower bound never above another
    (an upper bound never below another) asks nothing more of the other variables."""
    kept: list[_Bound] = []
    memo: dict[Expr, Interval] = {}
    for k, (e, c) in enumerate(found):
        for j, (f, d) in enumerate(found):
            if j == k:
                continue
            gap = _difference_bounds(f, e, env, memo)  # other - this, constants apart
            # a lower bound: this <= other everywhere; an upper one: this >= other
            beaten = gap.lo + d - c >= 0 if lower else gap.hi + d - c <= 0
            # of two bounds equal everywhere, the later one goes
            if beaten and (j < k or not (gap.lo + d - c == 0 == gap.hi + d - c)):
                break
        else:
            kept.append((e, c))
    return kept


def _difference_bounds(f: Expr, e: Expr, env: dict[Symbol, Interval],
                       memo: dict[Expr, Interval]) -> Interval:
    """``bounds(f - e, env)`` without building ``f - e``: the two sums' terms, like ones
    cancelled (as :func:`~symidx.core.expr.add` cancels them), each term's interval
    scaled by its coefficient and summed, as :func:`~symidx.core.expr.bounds` sums a
    sum's. ``memo`` keeps each term's interval (for one ``env``)."""
    coefficients: dict[Expr, int] = {}
    for c, t in terms(f):
        coefficients[t] = coefficients.get(t, 0) + c
    for c, t in terms(e):
        coefficients[t] = coefficients.get(t, 0) - c
    span = scaled_sum(coefficients, lambda t: bounds(t, env, memo))
    return Interval.EMPTY if isinstance(span, Interval) else Interval(*span)


def project_existentials(m: IndexingMap, limit: int = PROJECTION_PAIRS
                         ) -> tuple[IndexingMap, list[int]]:
    """Rule ``project_existential``: a range variable ``s`` that no result uses and that
    every constraint mentioning it holds as a term ``+s`` or ``-s`` of its sum (nowhere
    else: not under a division, remainder or product) is eliminated. Each such constraint
    bounds ``s`` below or above by an expression of the other variables, as ``s``'s
    interval does by constants; ``s`` goes, and so do its constraints, and for every lower
    bound ``L`` and upper bound ``U`` the constraint ``U - L >= 0`` comes in (those that
    the variables' intervals already decide are left out). Returns the map and the indices
    of the removed range variables.

    Derivation: the bounds ``L_i`` and ``U_j`` are integers wherever the other variables
    are (sums of integer multiples of integer terms), so an integer ``s`` with every
    ``L_i <= s <= U_j`` exists exactly when ``max L_i <= min U_j``, i.e. when every
    ``L_i <= U_j``: the set of values of the other variables for which some ``s``
    satisfies the constraints is unchanged, and with it the set of targets (``s`` is in
    no result). ``s1 <= s0, s0 <= d0, s0 in [0, 9]`` becomes ``s1 <= d0``.

    A variable whose elimination would make more than ``limit`` new constraints is kept
    (the pairs grow as a product); the variables are taken fewest pairs first, until none
    is left that can go. A map whose runtime variables have source maps reading its range
    variables (by position) is left as it is."""
    if m.num_ranges == 0 or not m.constraints or m.is_known_empty or m.is_undefined \
            or _positional_rts(m):
        return m, []
    original = list(range(m.num_ranges))
    removed: list[int] = []
    while m.num_ranges:
        found = _eliminate_one(m, limit)
        if found is None:
            break
        m, gone = found
        if m.is_known_empty:
            return m, []
        removed.append(original.pop(gone))
    return m, sorted(removed)


def _eliminate_one(m: IndexingMap, limit: int) -> tuple[IndexingMap, int] | None:
    """One range variable of ``m`` eliminated (the new map and the variable's position),
    or None when none can be."""
    used = _result_vars(m)
    frees = [variables_of(e) for e, _ in m.constraints]
    env = m.variable_bounds()
    best: tuple[int, int, list[tuple[Expr, Interval]] | None] | None = None
    for i, s in enumerate(m.range_vars):
        if s in used:
            continue
        mine = [c for c, free in zip(m.constraints, frees) if s in free]
        if not mine:
            continue
        found = _bounds_of(s, m.ranges[i], mine)
        if found is None:
            continue
        lowers, uppers = found
        lowers, uppers = _dominated(lowers, env, True), _dominated(uppers, env, False)
        cost = len(lowers) * len(uppers)
        if cost > limit or (best is not None and cost >= best[0]):
            continue
        best = (cost, i, _pairs(lowers, uppers, env))
    if best is None:
        return None
    _, i, added = best
    if added is None:
        return m.as_known_empty(), i
    s = m.range_vars[i]
    kept = [(e, iv) for (e, iv), free in zip(m.constraints, frees) if s not in free]
    with_pairs = IndexingMap.create(m.dims, m.results, m.ranges, m.rts, kept + added,
                                    m.names, check=False)
    if with_pairs.is_known_empty:
        return with_pairs, i
    keep = [k for k in range(m.num_ranges) if k != i]
    return _drop(with_pairs, list(range(m.num_dims)), keep, list(range(m.num_rts)), {s},
                 [variables_of(e) for e, _ in with_pairs.constraints]), i


# --- merge_equal_existentials -------------------------------------------------------------

def merge_equal_existentials(m: IndexingMap) -> tuple[IndexingMap, list[int]]:
    """Rule ``merge_equal_existentials``: the range and runtime variables no result uses
    fall into groups, two variables being in one group when a constraint mentions both; a
    group whose constraints are, after renaming its variables one for one to another
    group's (each to one of the same interval, a runtime variable to one of the same
    interval, source and source map), exactly that group's constraints is dropped with
    its constraints. Returns the map and the indices of the removed range variables
    (runtime variables counted after them, as
    :func:`~symidx.core.simplify.transforms.remove_unused_symbols` does).

    Derivation: the targets are the results over the values that satisfy the
    constraints. Let ``p`` be the variables the results use (and any other group's); the
    constraints of the two groups are ``B(p, X)`` and ``B(p, Y)``, and ``X``, ``Y``
    occur nowhere else. ``exists X: B(p, X)`` and ``exists Y: B(p, Y)`` say the same of
    ``p``, so asking both is asking one: the same values of ``p`` remain, and the same
    targets. Two hops of causal attention over sequences whose bounds are runtime values
    (``d0 + rt0 - rt1 <= -1`` and ``d0 + rt2 - rt3 <= -1``, from the same holders) ask
    the same of ``d0`` twice."""
    if not m.constraints or not (m.num_ranges or m.num_rts) or m.is_known_empty \
            or m.is_undefined or _positional_rts(m):
        return m, []
    used = _result_vars(m)
    unused = [v for v in (*m.range_vars, *m.rt_vars) if v not in used]
    if len(unused) < 2:
        return m, []
    frees = [variables_of(e) for e, _ in m.constraints]
    groups = _groups(set(unused), frees)
    if len(groups) < 2:
        return m, []
    classes = _var_classes(m)
    env = m.variable_bounds()
    kept: list[_Group] = []
    removed: set[Symbol] = set()
    for variables, members in groups:
        mine = [m.constraints[k] for k in members]
        group = _Group(variables, _canonical(mine, env))
        if any(group.signatures == other.signatures
               and _same_group(group, mine, other, classes, env) for other in kept):
            removed |= set(variables)
        else:
            kept.append(group)
    if not removed:
        return m, []
    keep_ranges = [i for i, v in enumerate(m.range_vars) if v not in removed]
    keep_rts = [i for i, v in enumerate(m.rt_vars) if v not in removed]
    gone = [i for i, v in enumerate((*m.range_vars, *m.rt_vars)) if v in removed]
    return _drop(m, list(range(m.num_dims)), keep_ranges, keep_rts, removed, frees), gone


def _groups(unused: set[Symbol], frees: list[frozenset[Symbol]]
            ) -> list[tuple[list[Symbol], list[int]]]:
    """The unused variables in groups linked by constraints: each group's variables (in
    order of name) and the positions of the constraints that mention them, the groups in
    the order of their first variable's name (whatever order sets iterate in)."""
    from networkx.utils import UnionFind

    root = UnionFind(unused)
    mentions = [[v for v in free if v in unused] for free in frees]
    for mine in mentions:
        root.union(*mine)
    members: dict[Symbol, list[int]] = {}
    for k, mine in enumerate(mentions):
        if mine:
            members.setdefault(root[mine[0]], []).append(k)
    variables: dict[Symbol, list[Symbol]] = {}
    for v in sorted(unused, key=lambda v: v.name):
        variables.setdefault(root[v], []).append(v)
    return sorted(((variables[r], members[r]) for r in members),
                  key=lambda group: group[0][0].name)


def _var_classes(m: IndexingMap) -> dict[Symbol, Interval | RuntimeVar]:
    """What a variable may only be renamed to one alike in: a range variable's interval,
    a runtime variable itself (interval, source and source map)."""
    found: dict[Symbol, Interval | RuntimeVar] = dict(zip(m.range_vars, m.ranges))
    found.update(zip(m.rt_vars, m.rts))
    return found


def _canonical(constraints: Sequence[tuple[Expr, Interval]], env: dict[Symbol, Interval]
               ) -> frozenset[tuple[Expr, Interval]]:
    """``constraints`` spelled alike when they say the same: each :func:`oriented`, its
    interval cut to the values its expression takes over the variables' intervals."""
    found = []
    for e, iv in constraints:
        e, iv = oriented(e, iv)
        found.append((e, iv.intersect(bounds(e, env))))
    return frozenset(found)


class _Group:
    """A group of :func:`merge_equal_existentials`: its variables, its constraints spelled
    canonically (:func:`_canonical`), their signatures (:func:`_signature`) and each
    variable's part in them (:func:`_roles`) -- what a renaming keeps, read once."""

    __slots__ = ("variables", "canonical", "signatures", "roles")

    def __init__(self, variables: list[Symbol],
                 canonical: frozenset[tuple[Expr, Interval]]) -> None:
        self.variables = variables
        self.canonical = canonical
        self.signatures = {_signature(c) for c in canonical}
        self.roles = _roles(canonical)


def _same_group(group: _Group, mine: list[tuple[Expr, Interval]], other: _Group,
                classes: dict[Symbol, Interval | RuntimeVar], env: dict[Symbol, Interval]
                ) -> bool:
    """Is there a renaming of ``group``'s variables to ``other``'s, each to one alike,
    that makes the constraints ``mine`` (``group``'s) say exactly what ``other``'s say?

    Alike is the same kind (range or runtime variable), the same class (interval, or
    runtime variable) and the same part in the constraints (:func:`_roles`): a renaming
    that makes the constraints alike keeps every variable's part, so only those renamings
    are tried."""
    if len(group.variables) != len(other.variables) or len(mine) != len(other.canonical):
        return False
    wanted: dict[object, list[Symbol]] = {}
    for v in other.variables:
        wanted.setdefault((v.name[0], classes[v], other.roles.get(v)), []).append(v)
    have: dict[object, list[Symbol]] = {}
    for v in group.variables:
        have.setdefault((v.name[0], classes[v], group.roles.get(v)), []).append(v)
    if {k: len(vs) for k, vs in wanted.items()} != {k: len(vs) for k, vs in have.items()}:
        return False
    exprs = [e for e, _ in mine]
    intervals = [iv for _, iv in mine]
    pairs = [(have[k], wanted[k]) for k in have]
    for rename in itertools.islice(_renamings(pairs), _MATCH_TRIES):
        if _canonical(list(zip(renamed(exprs, rename), intervals)), env) == other.canonical:
            return True
    return False


def _roles(canonical: frozenset[tuple[Expr, Interval]]) -> dict[Symbol, tuple[object, ...]]:
    """Per variable of the constraints: its part in them, which a renaming keeps -- per
    constraint that holds it, the constraint's :func:`_signature` and the variable's
    coefficient there, read the way the signature reads the constraint (as spelled or
    negated; its size when both readings are the same; None for a variable inside a
    division, a product, ...), sorted."""
    found: dict[Symbol, list[tuple[object, ...]]] = {}
    for constraint in canonical:
        e, _ = constraint
        up, down = _readings(constraint)
        sign = 0 if up == down else 1 if up < down else -1
        signature = repr(min(up, down))
        direct: dict[Symbol, int] = {}
        for c, t in terms(e):
            if isinstance(t, Symbol):
                direct[t] = direct.get(t, 0) + c
        for v in variables_of(e):
            k = direct.get(v)
            part = None if k is None else k * sign if sign else abs(k)
            found.setdefault(v, []).append((signature, repr(part)))
    return {v: tuple(sorted(parts)) for v, parts in found.items()}


def _readings(constraint: tuple[Expr, Interval]
              ) -> tuple[tuple[object, ...], tuple[object, ...]]:
    """``constraint`` read as spelled and negated: its terms' coefficients with their
    kinds, its constant and its interval (the parts of :func:`_signature`)."""
    e, iv = constraint
    coefficients, const = [], 0
    for c, t in terms(e):
        if t is ONE:
            const += c
        else:
            coefficients.append((c, type(t).__name__))
    up = (tuple(sorted(coefficients)), const, iv.lo, iv.hi)
    down = (tuple(sorted((-c, k) for c, k in coefficients)), -const, -iv.hi, -iv.lo)
    return up, down


def _signature(constraint: tuple[Expr, Interval]) -> tuple[object, ...]:
    """What a renaming of variables (each to one of the same interval) leaves of a
    constraint :func:`_canonical` spelled, whichever way it is oriented: its terms'
    coefficients with their kinds (a variable, a division, ...), its constant and its
    interval. Two constraints one renaming makes alike have the same signature."""
    return min(_readings(constraint))


def _renamings(pairs: list[tuple[list[Symbol], list[Symbol]]]
               ) -> Iterator[dict[Symbol, Symbol]]:
    """Each renaming of the variables of every pair ``(have, wanted)`` to a permutation of
    its ``wanted``, in the order of :func:`itertools.product` over
    :func:`itertools.permutations` (the last pair's permutation changing fastest), made one
    at a time: a class of n variables has n! permutations, too many to list past ten or
    so, of which only the first :data:`_MATCH_TRIES` are ever tried."""
    if not pairs:
        yield {}
        return
    (have, wanted), rest = pairs[0], pairs[1:]
    for picked in itertools.permutations(wanted):
        for others in _renamings(rest):
            yield {**dict(zip(have, picked)), **others}


# --- drop_implied_constraint -------------------------------------------------------------

def drop_implied_constraints(m: IndexingMap) -> tuple[IndexingMap, int]:
    """Rule ``drop_implied_constraint``: of two constraints ``e1 in [lo1, hi1]`` and ``e2
    in [lo2, hi2]`` that both hold a variable no result uses, the first goes when the
    second implies it: ``e1 = e2 + r`` with ``lo2 + min r >= lo1`` and ``hi2 + max r <=
    hi1`` (``r``'s range over the variables' intervals). Returns the map and the number
    of constraints dropped.

    Derivation: wherever the second holds, ``e1 = e2 + r`` lies in ``[lo2 + min r, hi2 +
    max r]``, inside ``[lo1, hi1]``: the first holds too, and asking it changes nothing.
    Eliminating one hop's row leaves ``rt1 - rt0 >= 1`` beside ``rt1 - rt0 - s1 >= 1``
    with ``s1 >= 0``: the first goes."""
    if len(m.constraints) < 2 or m.is_known_empty or m.is_undefined:
        return m, 0
    used = _result_vars(m)
    frees = [variables_of(e) for e, _ in m.constraints]
    mine = [k for k, free in enumerate(frees) if not free <= used]
    if len(mine) < 2:
        return m, 0
    env = m.variable_bounds()
    gone: set[int] = set()
    for k in mine:
        e1, iv1 = m.constraints[k]
        for j in mine:
            if j == k or j in gone or frees[j].isdisjoint(frees[k] - used):
                continue
            e2, iv2 = m.constraints[j]
            span = bounds(add([e1, scale(-1, e2)]), env)
            if iv2.lo + span.lo >= iv1.lo and iv2.hi + span.hi <= iv1.hi:
                gone.add(k)
                break
    if not gone:
        return m, 0
    kept = [c for k, c in enumerate(m.constraints) if k not in gone]
    return IndexingMap.create(m.dims, m.results, m.ranges, m.rts, kept, m.names,
                              check=False), len(gone)


def tidy_existentials(m: IndexingMap, fold_point_dims: bool = False,
                      rounds: int = 4) -> IndexingMap:
    """``m`` (simplified, without unused variables, as
    :func:`~symidx.core.simplify.finish.finish` leaves it) with the rules of this module
    applied in turn (:func:`project_existentials`, :func:`drop_implied_constraints`,
    :func:`merge_equal_existentials`) and the map simplified again after each round that
    changed it, for at most ``rounds`` rounds; unchanged unless :func:`has_existential`."""
    for _ in range(rounds):
        if not has_existential(m):
            break
        found, projected = project_existentials(m)
        found, dropped = drop_implied_constraints(found)
        found, merged = merge_equal_existentials(found)
        if not (projected or dropped or merged):
            break
        m = finish(found, fold_point_dims=fold_point_dims)
        if m.is_known_empty:
            break
    return m


# --- order_range_vars ---------------------------------------------------------------------

def order_range_vars(m: IndexingMap) -> IndexingMap:
    """Rule ``order_range_vars``: the range variables renamed in the order of the first
    result that uses each (those no result uses after them, in their order). A renaming
    of range variables changes no target: ``(d0)[s0, s1] -> (s1, s0)`` over ``s0 in [0,
    3], s1 in [0, 7]`` is ``(d0)[s0, s1] -> (s0, s1)`` over ``s0 in [0, 7], s1 in [0,
    3]``. Two maps that differ in this order only become one."""
    if m.num_ranges < 2 or m.is_known_empty or m.is_undefined or _positional_rts(m):
        return m
    first: dict[Symbol, int] = {}
    for k, r in enumerate(m.results):
        for v in variables_of(r):
            first.setdefault(v, k)
    big = len(m.results)
    order = sorted(range(m.num_ranges), key=lambda i: (first.get(sym(i), big), i))
    if order == list(range(m.num_ranges)):
        return m
    rename = {sym(old): sym(new) for new, old in enumerate(order) if new != old}
    exprs = renamed(list(m.results) + [e for e, _ in m.constraints], rename)
    n = len(m.results)
    names = None
    if m.names:
        nd = m.num_dims
        names = (list(m.names[:nd]) + [m.names[nd + i] for i in order]
                 + list(m.names[nd + m.num_ranges:]))
    return IndexingMap.create(m.dims, exprs[:n], [m.ranges[i] for i in order], m.rts,
                              list(zip(exprs[n:], (iv for _, iv in m.constraints))), names,
                              check=False)


#: The rules by name (as :data:`symidx.core.simplify.merge.MERGE_RULES` names its merges):
#: each in the merges table of ``docs/simplifier.md`` and checked against brute force in
#: ``tests/test_simplify_existential.py``.
EXISTENTIAL_RULES = {
    "project_existential": project_existentials,
    "drop_implied_constraint": drop_implied_constraints,
    "merge_equal_existentials": merge_equal_existentials,
    "order_range_vars": order_range_vars,
}
