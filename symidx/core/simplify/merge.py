"""Exact merges that make a map, or a set of maps, smaller without changing what it reaches.

A map means the *set* of targets of each source index (SPEC §1), so how many ways a target
is reached does not matter. Two merges follow from that:

* :func:`merge_contiguous_sums` (rule ``merge_contiguous_sum``): two range variables that
  occur only in one sum ``u + c*w`` become one variable over the values of that sum, when
  those values are contiguous (stacked convolution and reduce-window windows);
* :func:`merge_constant_offsets` (rule ``merge_constant_offsets``): maps equal but for a
  constant added to one result become one map with a new range variable;
* :func:`merge_offset_pieces` (rule ``merge_offset_pieces``): the same where the intervals
  of the dimensions move in step with the offset (a loop reading row ``k`` of its input
  for output rows ``k`` and after): the new variable is tied to the dimensions by
  constraints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sympy import Integer, Symbol

from symidx.core.expr import ONE, Expr, add, dim, from_terms, scale, sym, terms
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.simplify.boxes import box_groups
from symidx.core.simplify.memo import variables_of
from symidx.core.simplify.transforms import _drop

__all__ = ["merge_contiguous_sums", "merge_constant_offsets", "merge_offset_pieces",
           "MERGE_ROUNDS", "MERGE_RULES", "has_window_sum"]

#: Most merges of one map (each removes a variable, so this only bounds the work).
MERGE_ROUNDS = 64


def merge_contiguous_sums(m: IndexingMap, overlapping: bool = False
                          ) -> tuple[IndexingMap, list[int]]:
    """Rule ``merge_contiguous_sum``: range variables ``u`` and ``w`` that every result and
    constraint uses only through ``u + c*w`` (``c`` a nonzero integer), with
    ``|c| <= size(u)``, become one variable ``u' = u + c*w - lo`` over ``[0, hi - lo]``,
    where ``[lo, hi]`` is ``[lo_u + min(c*lo_w, c*hi_w), hi_u + max(c*lo_w, c*hi_w)]``.
    Returns the map and the indices of the removed range variables (as
    :func:`~symidx.core.simplify.transforms.remove_unused_symbols` does).

    Derivation: for each ``y`` in ``w``'s interval, ``u + c*y`` runs over the ``size(u)``
    consecutive integers from ``lo_u + c*y``; consecutive ``y`` shift that run by ``|c|``,
    so when ``|c| <= size(u)`` the runs overlap or touch and their union is all of
    ``[lo, hi]``. An expression ``e(u, w)`` rewritten with ``u := u' + lo - c*w`` that no
    longer mentions ``w`` is a function of ``u + c*w - lo`` (it equals ``e`` at every
    point), so the set of targets over the box and the constraints is the set over
    ``u'`` in ``[0, hi - lo]``: the same targets, each perhaps reached fewer times (a map
    is a set, SPEC §1). ``w`` is then unused and goes; starting ``u'`` at 0 makes maps
    reached along different paths spell one window alike. ``s0 + s1`` with both in
    ``[0, 2]`` is ``s0`` in ``[0, 4]``; ``s0 + 3*s1`` with ``s0`` in ``[0, 2]`` is ``s0``
    in ``[0, 8]`` (a mixed-radix number, a bijection); ``s0 - s1`` with both in ``[0, 2]``
    is ``s0 - 2`` with ``s0`` in ``[0, 4]``. A map whose runtime variables have source maps
    (which may read range variables by position) is left as it is.

    With ``overlapping``, only sums whose runs overlap (``|c| < size(u)``: a target is
    reached in several ways, as in stacked windows) are merged, not mixed-radix numbers
    (``|c| == size(u)``: a flattened index, which a reshape later splits again)."""
    if (m.num_ranges < 2 or m.is_known_empty or m.is_undefined
            or any(v.map is not None for v in m.rts)):
        return m, []
    original = list(range(m.num_ranges))  # original index of each current range variable
    removed: list[int] = []
    for _ in range(MERGE_ROUNDS):
        found = _merge_once(m, overlapping)
        if found is None:
            break
        m, gone = found
        removed.append(original.pop(gone))
    return m, sorted(removed)


def _merge_once(m: IndexingMap, overlapping: bool = False
                ) -> tuple[IndexingMap, int] | None:
    """One merge of two range variables of ``m`` (the new map and the position of the
    removed one), or None."""
    exprs = list(m.results) + [e for e, _ in m.constraints]
    ranges = set(m.range_vars)
    env = m.variable_bounds()
    used = [variables_of(e) for e in exprs]
    tried: set[tuple[Symbol, Symbol, int]] = set()
    for u, w, c in _candidates(exprs, ranges):
        if (u, w, c) in tried or abs(c) > env[u].size - overlapping:
            continue
        tried.add((u, w, c))
        if any((u in vs) != (w in vs) for vs in used):
            continue  # one of them is used apart from the other: no substitution can merge
        bu, bw = env[u], env[w]
        lo, hi = sorted((c * bw.lo, c * bw.hi))
        lo, hi = bu.lo + lo, bu.hi + hi
        # u' = u + c*w - lo runs over [0, hi - lo]: maps reached along different paths
        # then spell the same window alike
        results, constraints = m.substitute({u: add([u, scale(-c, w), Integer(lo)])})
        if any(w in variables_of(e) for e in (*results, *(e for e, _ in constraints))):
            continue
        i = m.range_vars.index(u)
        new_ranges = list(m.ranges)
        new_ranges[i] = Interval(0, hi - lo)
        merged = IndexingMap.create(m.dims, results, new_ranges, m.rts, constraints, m.names,
                                    check=False)
        if merged.is_known_empty:
            return None  # cannot happen (the substitution is onto); keep the map as it was
        j = m.range_vars.index(w)
        keep = [k for k in range(m.num_ranges) if k != j]
        frees = [variables_of(e) for e, _ in merged.constraints]
        return _drop(merged, list(range(m.num_dims)), keep, list(range(m.num_rts)), {w},
                     frees), j
    return None


def has_window_sum(m: IndexingMap) -> bool:
    """Does one of ``m``'s results hold, as terms of its own sum, two or more range
    variables (``d1 * 2 + s0 + s4 - 1``: stacked convolution and reduce-window windows)?
    The sweep's test before :func:`merge_contiguous_sums`: most maps have no such sum, and
    a mixed-radix sum under a division or remainder (``(s0 + s1 * 128) floordiv 128``, a
    reshape) is not a window and is left as it is."""
    if m.num_ranges < 2:
        return False
    ranges = set(m.range_vars)
    for r in m.results:
        if r.is_Add and len(variables_of(r) & ranges) >= 2 \
                and sum(1 for _, x in terms(r) if x in ranges) >= 2:
            return True
    return False


def _candidates(exprs: Sequence[Expr], ranges: set[Symbol]
                ) -> list[tuple[Symbol, Symbol, int]]:
    """``(u, w, c)`` for every sum holding ``k*u`` and ``k*c*w`` (range variables)."""
    out: list[tuple[Symbol, Symbol, int]] = []
    seen: set[Expr] = set()
    stack = list(exprs)
    while stack:
        e = stack.pop()
        if e in seen or not e.args:
            continue
        seen.add(e)
        stack.extend(e.args)
        if not e.is_Add:
            continue
        linear = [(c, x) for c, x in terms(e) if x in ranges]
        for a, x in linear:
            for b, y in linear:
                if x is not y and b % a == 0:
                    out.append((x, y, b // a))
    return out


def merge_constant_offsets(maps: Sequence[IndexingMap]
                           ) -> list[tuple[IndexingMap, list[int]]]:
    """Rule ``merge_constant_offsets``: maps that are equal but for a constant ``o_k`` added
    to one result ``r``, with the offsets ``o_1 < ... < o_n`` in arithmetic progression
    ``o_1 + g*t`` (``t`` in ``[0, n - 1]``), become one map whose result is
    ``r + o_1 + g*s`` with a new range variable ``s`` in ``[0, n - 1]``. Offsets not in one
    progression are merged in runs of consecutive integers. Returns every map of the
    outcome with the positions in ``maps`` it stands for.

    Derivation: the union over ``k`` of ``{(..., r(d, s) + o_k, ...)}`` is
    ``{(..., r(d, s) + o_1 + g*t, ...) : t in [0, n - 1]}`` since ``t`` takes exactly the
    ``n`` values with ``o_1 + g*t = o_k``; a set of maps means the union of what each
    reaches. The rule runs again over the outcome (another result may then line up) until
    nothing merges. Known-empty and undefined maps, and maps whose runtime variables have
    source maps, are kept as they are."""
    return _until_stable(maps, _merge_along)


_Groups = list[tuple[IndexingMap, list[int]]]  # maps, each with the positions it stands for


def _until_stable(maps: Sequence[IndexingMap],
                  along: Callable[[_Groups, int], tuple[_Groups, bool]]) -> _Groups:
    """``along`` (one merge along result ``r``) over every result, again until nothing
    merges (at most :data:`MERGE_ROUNDS` rounds)."""
    groups: _Groups = [(m, [i]) for i, m in enumerate(maps)]
    for _ in range(MERGE_ROUNDS):
        changed = False
        width = max((m.num_results for m, _ in groups), default=0)
        for r in range(width):
            groups, merged = along(groups, r)
            changed |= merged
        if not changed:
            break
    return groups


def _with_new_range_name(m: IndexingMap) -> list[str | None] | None:
    """``m``'s names with one for a range variable added after the others (no name)."""
    if not m.names:
        return None
    nd, nr = m.num_dims, m.num_ranges
    return list(m.names[:nd + nr]) + [None] + list(m.names[nd + nr:])


_Piece = tuple[int, IndexingMap, list[int]]  # offset, map, positions it stands for


def _by_rest(groups: _Groups, r: int, dims_key: Callable[[IndexingMap], object]
             ) -> tuple[dict[tuple[object, ...], list[_Piece]], _Groups]:
    """The maps of ``groups`` that could merge along result ``r``, keyed by all but that
    result's constant offset (and the dims as ``dims_key`` says), each with its offset; and
    the maps that cannot (kept as they are)."""
    by_rest: dict[tuple[object, ...], list[_Piece]] = {}
    kept: list[tuple[IndexingMap, list[int]]] = []
    for m, members in groups:
        if (m.is_known_empty or m.is_undefined or r >= m.num_results
                or any(v.map is not None for v in m.rts)):
            kept.append((m, members))
            continue
        parts = terms(m.results[r])
        offset = sum(c for c, x in parts if x is ONE)
        rest = from_terms([(c, x) for c, x in parts if x is not ONE])
        key = (dims_key(m), m.results[:r], rest, m.results[r + 1:], m.ranges, m.rts,
               m.constraints, m.names)
        by_rest.setdefault(key, []).append((int(offset), m, members))
    return by_rest, kept


def _merge_along(groups: list[tuple[IndexingMap, list[int]]], r: int
                 ) -> tuple[list[tuple[IndexingMap, list[int]]], bool]:
    by_rest, kept = _by_rest(groups, r, lambda m: m.dims)
    return _joined(by_rest, kept, lambda item: item[0], _runs,
                   lambda run: _with_offsets(run, r))


def _joined(by_rest: dict[tuple[object, ...], list[_Piece]], kept: _Groups,
            order: Callable[[_Piece], Any], runs: Callable[[list[_Piece]], list[list[_Piece]]],
            join: Callable[[list[_Piece]], IndexingMap]) -> tuple[_Groups, bool]:
    """``kept`` with every run of two or more maps of ``by_rest`` (each list sorted by
    ``order``, cut into ``runs``) joined into one map by ``join``, standing for all its
    members' positions; and whether any was."""
    merged_any = False
    for same in by_rest.values():
        same.sort(key=order)
        for run in runs(same):
            if len(run) < 2:
                kept.append((run[0][1], run[0][2]))
                continue
            merged_any = True
            kept.append((join(run), [i for _, _, ms in run for i in ms]))
    return kept, merged_any


def _runs(same: list[tuple[int, IndexingMap, list[int]]]
          ) -> list[list[tuple[int, IndexingMap, list[int]]]]:
    """``same`` (sorted by distinct offsets) as one arithmetic progression, or as runs of
    consecutive offsets."""
    steps = {b[0] - a[0] for a, b in zip(same, same[1:])}
    if len(steps) == 1:
        return [same]
    runs = [[same[0]]]
    for item in same[1:]:
        if item[0] == runs[-1][-1][0] + 1:
            runs[-1].append(item)
        else:
            runs.append([item])
    return runs


def _with_offsets(run: list[tuple[int, IndexingMap, list[int]]], r: int) -> IndexingMap:
    m = run[0][1]
    first = run[0][0]
    step = run[1][0] - first
    new = sym(m.num_ranges)  # after the existing range variables: nothing is renamed
    parts = [(c, x) for c, x in terms(m.results[r]) if x is not ONE]
    result = from_terms(parts + [(first, ONE), (step, new)])
    results = list(m.results)
    results[r] = result
    names = _with_new_range_name(m)
    return IndexingMap.create(m.dims, results, list(m.ranges) + [Interval(0, len(run) - 1)],
                              m.rts, m.constraints, names)


def merge_offset_pieces(maps: Sequence[IndexingMap]
                        ) -> list[tuple[IndexingMap, list[int]]]:
    """Rule ``merge_offset_pieces``: maps equal but for a constant ``o_t`` added to one
    result ``r`` and for the intervals ``[lo_j(t), hi_j(t)]`` of their dimensions, where,
    along the maps in order of offset (``t`` in ``[0, n - 1]``), the offset and every
    bound move by a constant step (``o_t = o_0 + g*t`` with ``g > 0``, ``lo_j(t) = lo_j(0) +
    a_j*t``, ``hi_j(t) = hi_j(0) + b_j*t``), become one map over the hull of the intervals
    whose result is ``r + o_0 + g*s`` with a new range variable ``s`` in ``[0, n - 1]`` and,
    per dimension whose bounds move, the constraints ``d_j - a_j*s >= lo_j(0)`` and ``d_j -
    b_j*s <= hi_j(0)`` (one constraint ``d_j - a_j*s in [lo_j(0), hi_j(0)]`` when ``a_j ==
    b_j``; a constraint's other bound is the one the hull and ``s`` imply). With every
    bound fixed this is :func:`merge_constant_offsets`. Returns every map of the outcome
    with the positions in ``maps`` it stands for.

    Derivation: a set of maps reaches at ``d`` the union of what each reaches, and map
    ``t`` reaches nothing outside its intervals; ``d`` lies in map ``t``'s intervals
    exactly when it lies in the hull and the constraints hold at ``s = t``, and at ``s =
    t`` the new map is map ``t``. So the new map reaches at every ``d`` exactly the union.
    A loop that reads row ``k`` of its input at iteration ``k`` for output rows ``k ..
    N - 1`` gives maps ``(d0 in [k, N - 1]) -> (k, ...)``: one map ``(d0)[s] -> (s, ...)``
    with ``d0 - s >= 0``.

    Maps of one group (equal but for the offset and the intervals) are taken in order of
    offset and dimension intervals; each joins the first run it continues (a run of two
    or more predicts its next member), else the last run of one it can follow, else it
    starts a run. The rule runs again over the outcome until nothing merges. Known-empty
    and undefined maps, and maps whose runtime variables have source maps, are kept as
    they are."""
    return _until_stable(maps, _pieces_along)


def _pieces_along(groups: list[tuple[IndexingMap, list[int]]], r: int
                  ) -> tuple[list[tuple[IndexingMap, list[int]]], bool]:
    by_rest, kept = _by_rest(groups, r, lambda m: m.num_dims)
    return _joined(by_rest, kept,
                   lambda item: (item[0], [(d.lo, d.hi) for d in item[1].dims]),
                   _piece_runs, lambda run: _with_moving_offsets(run, r))


def _bounds(piece: _Piece) -> tuple[int, ...]:
    """The offset and every dimension bound of ``piece``, in one tuple."""
    return (piece[0], *(b for d in piece[1].dims for b in (d.lo, d.hi)))


def _piece_runs(same: list[_Piece]) -> list[list[_Piece]]:
    """``same`` (sorted) cut into runs along which the offset grows and every bound moves
    by a constant step."""
    runs: list[list[_Piece]] = []
    for piece in same:
        here = _bounds(piece)
        for run in runs:  # a run of two or more that this piece continues
            if len(run) >= 2:
                last, before = _bounds(run[-1]), _bounds(run[-2])
                if all(h == 2 * a - b for h, a, b in zip(here, last, before)):
                    run.append(piece)
                    break
        else:
            for run in reversed(runs):  # else a lone piece it can follow
                if len(run) == 1 and run[0][0] < piece[0]:
                    run.append(piece)
                    break
            else:
                runs.append([piece])
    return runs


def _with_moving_offsets(run: list[_Piece], r: int) -> IndexingMap:
    m = run[0][1]
    n = len(run)
    first, second = _bounds(run[0]), _bounds(run[1])
    step = [b - a for a, b in zip(first, second)]
    new = sym(m.num_ranges)  # after the existing range variables: nothing is renamed
    parts = [(c, x) for c, x in terms(m.results[r]) if x is not ONE]
    results = list(m.results)
    results[r] = from_terms(parts + [(first[0], ONE), (step[0], new)])
    hull = [Interval(min(p[1].dims[j].lo for p in run), max(p[1].dims[j].hi for p in run))
            for j in range(m.num_dims)]
    constraints = list(m.constraints)
    for j, h in enumerate(hull):
        a, b = step[1 + 2 * j], step[2 + 2 * j]
        lo, hi = first[1 + 2 * j], first[2 + 2 * j]
        if a == b != 0:
            constraints.append((dim(j) - a * new, Interval(lo, hi)))
            continue
        if a:  # d_j - a*s >= lo; its upper bound is what the hull and s allow
            constraints.append((dim(j) - a * new, Interval(lo, h.hi - min(0, a * (n - 1)))))
        if b:
            constraints.append((dim(j) - b * new, Interval(h.lo - max(0, b * (n - 1)), hi)))
    names = _with_new_range_name(m)
    return IndexingMap.create(hull, results, list(m.ranges) + [Interval(0, n - 1)], m.rts,
                              constraints, names)


#: The merges by rule name (as :data:`symidx.core.simplify.table.RULES` names the expression
#: rules): each is documented in the merges table of ``docs/simplifier.md`` and checked
#: against brute force in ``tests/test_simplify_merge.py`` (the groups' rules in
#: ``tests/test_simplify_boxes.py``).
MERGE_RULES = {
    "merge_contiguous_sum": merge_contiguous_sums,
    "merge_constant_offsets": merge_constant_offsets,
    "merge_offset_pieces": merge_offset_pieces,
    # the groups of range variables, decided by enumeration (symidx/core/simplify/boxes.py)
    "box_free_group": box_groups,
    "window_of_dims": box_groups,
    "decide_existential_group": box_groups,
}
