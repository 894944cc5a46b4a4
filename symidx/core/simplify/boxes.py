"""Three exact rules on the groups of range variables of a map, decided by enumeration.

The range variables of a map fall into groups: two variables are in one group when a
result or a constraint uses both. The groups share no variable, so the targets of a source
index are the product of what each group reaches there. A group that no dimension joins
reaches the same targets at every source index; when they are every point of a box, the
group is that box (``box_free_group``). A group that dimensions join and that feeds one
result reaches, at each point of those dimensions, a run of consecutive targets; when the
runs move with the dimensions as one window does, the group is that window
(``window_of_dims``). A group that feeds no result only decides which points of its
dimensions reach anything; when those are a box, the group is that box's intervals
(``decide_existential_group``).

A training step's gradients are made of such groups: a weight gradient reads each
activation through every layer above it, 25 variables of stacked strided windows with
their padding and dilation constraints, whose targets are every row of the activation;
an input pixel reaches the outputs of a stack of strided windows in a run that moves by
one every 16 pixels. The rules look at the targets themselves, by enumerating each group's
points (its dimensions' too), so only groups of at most :data:`BOX_POINTS` points are
looked at; a sweep that applies them after each composition
(:func:`symidx.fusion.sweep._finished`) keeps each group down to what one step adds.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any, Literal, cast

from sympy import Integer, Symbol

from symidx.core.expr import Expr, add, evaluate_exact, renamed, scale, sym, terms
from symidx.core.indexing_map import IndexingMap
from symidx.core.indexing_map.points import box_points
from symidx.core.interval import Interval
from symidx.core.simplify.memo import variables_of

__all__ = ["BOX_POINTS", "box_groups"]

#: Most points of one group's variables enumerated to find its targets.
BOX_POINTS = 1 << 14

#: A group (:func:`_groups`): the positions of its dims, of its range variables (in
#: order), of the results and of the constraints that use them.
Group = tuple[list[int], list[int], list[int], list[int]]
#: A boxed group's ``(lo, step, n)`` per result it feeds (:func:`_box_of`).
Axes = list[tuple[int, int, int]]
#: The intervals a decided existential group gives its dims (:func:`_let_through`).
Narrowed = list[tuple[int, Interval]]


def box_groups(m: IndexingMap, limit: int = BOX_POINTS) -> IndexingMap:
    """The three rules on the groups of range variables (see the module's docstring)
    that no runtime variable joins, each group looked at when the box of its variables
    (and dimensions) holds at most ``limit`` points; the map reaches the same targets from
    every source index (exact):

    * ``box_free_group``: a group no dimension joins, that feeds a result and has a
      constraint or two variables or more, whose targets are every point of a box of
      arithmetic progressions ``{lo_j + step_j * t : 0 <= t < n_j}``, becomes one new range
      variable per result it feeds (none where ``n_j`` is 1: the result is the constant
      ``lo_j``);
    * ``window_of_dims``: a group of two variables or more that some dimensions join and
      that feeds one result, whose targets at each point of those dimensions are
      consecutive integers, becomes one variable ``t`` (its constraints gone) when those
      runs are one window of the dimensions, clipped to ``[c_lo, c_hi]``: where the result
      holds the dimensions as terms ``b_i * d_i`` only, the run
      ``[sum(b_i * d_i) + lo, sum(b_i * d_i) + hi]``, with ``t`` in ``[lo, hi]``, the
      result ``sum(b_i * d_i) + t`` and, where the clip cuts, the constraint
      ``sum(b_i * d_i) + t in [c_lo, c_hi]``; with one dimension ``d``, the run
      ``ceil((a*d + lo) / c)`` to ``floor((a*d + hi) / c)`` (``a`` is 1 or -1, ``c`` a
      divisor tried, see :data:`QUOTIENT_DIVISORS`), with ``t`` in ``[c_lo, c_hi]``, the
      result ``t`` and the constraint ``c*t - a*d in [lo, hi]``; where the runs are the
      same at every point, the result ``t`` over them, free of the dimensions;
    * ``decide_existential_group``: a group that feeds no result (its variables only
      constrain the dimensions it holds) becomes, when the dimension points it lets through
      are every point of a box, the intervals of that box (nothing where it is the
      dimensions' whole box; the map is known empty where it lets none through).

    A map whose runtime variables have source maps (which may read range variables by
    position) is left as it is, and so is a group of the first kind none of whose points
    satisfies its constraints (:func:`~symidx.core.simplify.transforms.remove_unused_symbols`
    finds the map empty)."""
    if m.is_known_empty or m.is_undefined or any(v.map is not None for v in m.rts) \
            or not _may_group(m):
        return m
    # per group decided: the group and what replaces it (the (lo, step, n) of each result
    # it feeds, its result's window, or the intervals of the dims it lets through)
    decided: list[tuple[Group, Axes | Window | Narrowed]] = []
    for group in _groups(m):
        dims, variables, results, constraints = group
        found: Axes | Window | Narrowed | Literal[False] | None = None
        if results and dims:
            if len(results) == 1 and len(variables) > 1:
                found = _window_of(m, dims, variables, results[0], constraints, limit)
        elif results:
            if len(variables) > 1 or constraints:
                found = _box_of(m, variables, results, constraints, limit)
        else:
            found = _let_through(m, dims, variables, constraints, limit)
        if found is False:
            return m.as_known_empty()
        if found is not None:
            decided.append((group, found))
    return _replaced(m, decided) if decided else m


def _may_group(m: IndexingMap) -> bool:
    """Can a rule apply: does a constraint use a range variable, or a result two? (Else
    every group is one variable that results alone use: nothing to replace.)"""
    ranges = m.range_vars
    for e, _ in m.constraints:
        if not variables_of(e).isdisjoint(ranges):
            return True
    for r in m.results:
        used = variables_of(r)
        if len(used) > 1 and sum(1 for v in ranges if v in used) > 1:
            return True
    return False


def _groups(m: IndexingMap) -> list[Group]:
    """The groups of range variables no runtime variable joins: (positions of their
    dimensions, of their range variables, of the results and of the constraints that use
    them), the range variables in order."""
    from networkx.utils import UnionFind

    nd, nr = m.num_dims, m.num_ranges
    place = {v: i for i, v in enumerate(m.all_vars)}
    root = UnionFind(range(len(place)))
    exprs = [*m.results, *(e for e, _ in m.constraints)]
    used = [[place[v] for v in variables_of(e)] for e in exprs]
    for vs in used:
        root.union(*vs)
    tied = {root[i] for i in range(nd + nr, len(place))}  # runtime variables
    found: dict[int, Group] = {}
    for i in range(nd, nd + nr):
        r = root[i]
        if r not in tied:
            found.setdefault(r, ([], [], [], []))[1].append(i - nd)
    for i in range(nd):
        if (r := root[i]) in found:
            found[r][0].append(i)
    n = len(m.results)
    for k, vs in enumerate(used):  # what uses a range variable of the group
        if any(nd <= v < nd + nr for v in vs) and (r := root[vs[0]]) in found:
            found[r][2 if k < n else 3].append(k if k < n else k - n)
    return list(found.values())


def _enumerated(m: IndexingMap, dims: list[int], variables: list[int],
                exprs: list[Expr], constraints: list[int], limit: int
                ) -> tuple[list[Any], list[Any], Any] | None:
    """Every point of the box of ``dims`` and range ``variables`` (dims first, so that
    the points of one dims point are consecutive): the grids (one flat array per
    variable), the values of ``exprs`` and the mask of the points where the
    ``constraints`` (positions in ``m.constraints``) hold and every divisor is nonzero.
    None where the box holds more than ``limit`` points or values past int64."""
    import numpy as np

    box = [m.dims[i] for i in dims] + [m.ranges[i] for i in variables]
    size = prod(iv.size for iv in box)
    if size > limit:
        return None
    (grids,) = box_points(box, chunk=size)
    if not all(g.dtype == np.int64 for g in grids):
        return None
    held = [m.constraints[i] for i in constraints]
    got, defined = evaluate_exact([*exprs, *(e for e, _ in held)],
                                  [m.dim_vars[i] for i in dims] + [sym(i) for i in variables],
                                  list(grids))
    mask = np.ones(size, dtype=bool) if defined is None \
        else np.broadcast_to(defined, (size,)).copy()
    for value, (_, interval) in zip(got[len(exprs):], held):
        mask &= (value >= interval.lo) & (value <= interval.hi)
    values = [np.broadcast_to(np.asarray(v), (size,)) for v in got[:len(exprs)]]
    if not all(v.dtype == np.int64 for v in values):
        return None
    return list(grids), values, mask


def _let_through(m: IndexingMap, dims: list[int], variables: list[int],
                 constraints: list[int], limit: int) -> Narrowed | Literal[False] | None:
    """The dimension points an existential group lets through (those for which some point
    of its variables satisfies its constraints), when they are a box: per dimension that
    box narrows, its interval (an empty list: the whole box); False when it lets none
    through; None when they are not a box, or the group is larger than ``limit``."""
    import numpy as np

    found = _enumerated(m, dims, variables, [], constraints, limit)
    if found is None:
        return None
    grids, _, mask = found
    per_point = mask.reshape(prod(m.dims[i].size for i in dims), -1).any(axis=1)
    if not per_point.any():
        return False
    if not dims:
        return []
    points = np.stack([g.reshape(per_point.size, -1)[:, 0] for g in grids[:len(dims)]],
                      axis=1)[per_point]
    narrowed = []
    count = 1
    for j, i in enumerate(dims):
        lo, hi = int(points[:, j].min()), int(points[:, j].max())
        count *= hi - lo + 1
        if (lo, hi) != (m.dims[i].lo, m.dims[i].hi):
            narrowed.append((i, Interval(lo, hi)))
    return narrowed if count == len(points) else None


@dataclass(frozen=True)
class Window:
    """A group's result as one variable ``t`` in ``t_interval`` (:func:`_window_of`).
    With ``divisor`` 0, the result is ``sum(coeffs[i] * d_i) + t``, and ``clip`` (None
    where it never cuts) its interval. With ``divisor`` ``c`` > 0 (one dim ``d``), the
    result is ``t`` and ``clip`` the interval of ``c * t - coeffs[0] * d``: the window of
    a strided op read forwards, ``t`` from ``ceil((a*d + lo) / c)`` to
    ``floor((a*d + hi) / c)``."""

    coeffs: list[int]
    t_interval: Interval
    clip: Interval | None
    divisor: int = 0


#: The divisors :func:`_window_of` tries for a quotient window besides those near the
#: slope of the targets (strides and their products: 2, 4, 8 ... after stacked strided
#: ops), and the dim coefficients.
QUOTIENT_DIVISORS = (1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64, 128, 256)
QUOTIENT_COEFFICIENTS = (1, -1)


def _window_of(m: IndexingMap, dims: list[int], variables: list[int], result: int,
               constraints: list[int], limit: int) -> Window | Literal[False] | None:
    """The window of a group's one result (see :func:`box_groups`, rule
    ``window_of_dims``); False where it reaches nothing at any point of the dimensions;
    None where the targets are not such a window, or the group is larger than ``limit``."""
    import numpy as np

    r = m.results[result]
    dim_vars = [m.dim_vars[i] for i in dims]
    coeffs = dict.fromkeys(dim_vars, 0)
    linear = True  # the dimensions as terms b_i * d_i only
    for c, x in terms(r):
        if x in coeffs:
            coeffs[x] = int(c)
        elif variables_of(x) & coeffs.keys():
            linear = False  # a dimension under a division, a remainder or a product
            break
    if not linear and len(dims) != 1:
        return None
    enumerated = _enumerated(m, dims, variables, [r], constraints, limit)
    if enumerated is None:
        return None
    grids, (values,), mask = enumerated
    if not mask.any():
        return False
    rows = prod(m.dims[i].size for i in dims)
    targets = values.reshape(rows, -1)
    mask = mask.reshape(rows, -1)
    spans: list[tuple[int, int] | None] = []
    for k in range(rows):
        reached = np.unique(targets[k][mask[k]])
        if not len(reached):
            spans.append(None)
        elif int(reached[-1] - reached[0]) + 1 != len(reached):
            return None  # a gap
        else:
            spans.append((int(reached[0]), int(reached[-1])))
    found = [s for s in spans if s is not None]
    if len(found) == rows and len(set(found)) == 1:  # the same targets everywhere
        return Window([0] * len(dims), Interval(*found[0]), None)
    points = [[int(v) for v in g.reshape(rows, -1)[:, 0]] for g in grids[:len(dims)]]
    clip_lo, clip_hi = min(s[0] for s in found), max(s[1] for s in found)
    if linear:
        shift = [sum(coeffs[v] * p[k] for v, p in zip(dim_vars, points)) for k in range(rows)]
        lo = min(s[0] - b for s, b in zip(spans, shift) if s is not None)
        hi = max(s[1] - b for s, b in zip(spans, shift) if s is not None)
        if all(s == _clipped(b + lo, b + hi, clip_lo, clip_hi) for s, b in zip(spans, shift)):
            cuts = clip_lo > min(shift) + lo or clip_hi < max(shift) + hi
            return Window([coeffs[v] for v in dim_vars], Interval(lo, hi),
                          Interval(clip_lo, clip_hi) if cuts else None)
    if len(dims) != 1:
        return None
    # one dim under a division: t from ceil((a*d + lo) / c) to floor((a*d + hi) / c)
    rise = [(d, sp) for d, sp in zip(points[0], spans) if sp is not None]
    near: set[int] = set()
    if len(rise) > 1 and rise[-1][1][0] != rise[0][1][0]:
        slope = abs(rise[-1][0] - rise[0][0]) / abs(rise[-1][1][0] - rise[0][1][0])
        near = {max(1, int(slope) + k) for k in (-1, 0, 1, 2)}
    for c in sorted(near.union(QUOTIENT_DIVISORS)):
        for a in QUOTIENT_COEFFICIENTS:
            shift = [a * d for d in points[0]]
            lo = min(c * s[0] - b for s, b in zip(spans, shift) if s is not None)
            hi = max(c * s[1] - b for s, b in zip(spans, shift) if s is not None)
            if all(s == _clipped(-((-b - lo) // c), (b + hi) // c, clip_lo, clip_hi)
                   for s, b in zip(spans, shift)):
                return Window([a], Interval(clip_lo, clip_hi), Interval(lo, hi), c)
    return None


def _clipped(lo: int, hi: int, clip_lo: int, clip_hi: int) -> tuple[int, int] | None:
    """``[lo, hi]`` cut to ``[clip_lo, clip_hi]``, None where that is empty."""
    lo, hi = max(lo, clip_lo), min(hi, clip_hi)
    return (lo, hi) if lo <= hi else None


def _box_of(m: IndexingMap, variables: list[int], results: list[int], constraints: list[int],
            limit: int) -> Axes | None:
    """Per result of the group, ``(lo, step, n)`` when the group's targets are the box of
    those progressions; None otherwise, or when the group is larger than ``limit``."""
    import numpy as np

    found = _enumerated(m, [], variables, [m.results[i] for i in results], constraints, limit)
    if found is None:
        return None
    _, values, mask = found
    if not mask.any():
        return None
    columns = [v[mask] for v in values]
    axes = []
    for column in columns:
        distinct = np.unique(column)
        step = int(distinct[1] - distinct[0]) if len(distinct) > 1 else 1
        if len(distinct) > 2 and not bool((np.diff(distinct) == step).all()):
            return None
        axes.append((int(distinct[0]), step, len(distinct)))
    count = prod(n for _, _, n in axes)
    if count > int(mask.sum()):
        return None  # fewer points than the box holds
    if len(columns) > 1 and len(np.unique(np.stack(columns, axis=1), axis=0)) != count:
        return None  # not every combination is reached
    return axes


def _replaced(m: IndexingMap, decided: list[tuple[Group, Axes | Window | Narrowed]]
              ) -> IndexingMap:
    """``m`` with each decided group replaced, in place of its first range variable: a
    box by its variables, a window by its one variable, an existential group by the
    intervals of the dims it lets through."""
    at = {group[1][0]: (group, found) for group, found in decided}
    gone = {i for group, _ in decided for i in group[1]}  # range variables replaced
    dropped = {k for group, _ in decided for k in group[3]}  # and their constraints
    new_results: dict[int, Expr] = {}
    narrowed: list[tuple[Expr, Interval]] = []
    nd = m.num_dims
    ranges: list[Interval] = []
    old_names = m.names or ()
    names: list[str | None] | None = list(old_names[:nd]) if old_names else None
    rename: dict[Symbol, Symbol] = {}

    def new_variable(interval: Interval) -> Symbol:
        ranges.append(interval)
        if names is not None:
            names.append(None)
        return sym(len(ranges) - 1)

    for i, interval in enumerate(m.ranges):
        if i in at:
            (dims, _, feeds, _), found = at[i]
            if isinstance(found, Window):
                t = new_variable(found.t_interval)
                moved = [scale(c, m.dim_vars[d]) for c, d in zip(found.coeffs, dims)]
                if found.divisor:  # t, with c*t - a*d in the clip
                    new_results[feeds[0]] = t
                    assert found.clip is not None
                    narrowed.append((add([scale(found.divisor, t), scale(-1, moved[0])]),
                                     found.clip))
                else:
                    new_results[feeds[0]] = add([*moved, t])
                    if found.clip is not None:
                        narrowed.append((new_results[feeds[0]], found.clip))
            elif feeds:  # a box: (lo, step, n) per result
                for result, (lo, step, n) in zip(feeds, cast(Axes, found)):
                    if n == 1:
                        new_results[result] = Integer(lo)
                    elif step == 1:
                        new_results[result] = new_variable(Interval(lo, lo + n - 1))
                    else:
                        new_results[result] = step * new_variable(Interval(0, n - 1)) + lo
            else:  # an existential group: the intervals of its dims
                narrowed += [(m.dim_vars[d], iv) for d, iv in cast(Narrowed, found)]
        elif i not in gone:
            if i != len(ranges):
                rename[sym(i)] = sym(len(ranges))
            ranges.append(interval)
            if names is not None:
                names.append(old_names[nd + i])
    if names is not None:
        names += list(old_names[nd + m.num_ranges:])
    left = [c for k, c in enumerate(m.constraints) if k not in dropped]
    others = [k for k in range(len(m.results)) if k not in new_results]
    exprs = [m.results[k] for k in others] + [e for e, _ in left]
    done = renamed(exprs, rename) if rename else exprs
    results: list[Any] = list(m.results)
    for k, e in zip(others, done):
        results[k] = e
    for k, e in new_results.items():
        results[k] = e
    constraints = list(zip(done[len(others):], (iv for _, iv in left))) + narrowed
    return IndexingMap.create(m.dims, results, ranges, m.rts, constraints, names, check=False)
