"""Composition of indexing maps, as XLA's ``ComposeIndexingMaps`` (not simplified)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sympy import Expr

from symidx.core.expr import shifted
from symidx.core.indexing_map.map import (
    _NORMAL,
    Constraint,
    IndexingMap,
    RuntimeVar,
    _narrow,
    _variables,
)
from symidx.core.indexing_map.order import sorted_constraints as _sorted_constraints
from symidx.core.interval import Interval
from symidx.errors import MapError

__all__ = ["compose_with"]


def compose_with(first: IndexingMap, second: IndexingMap,
                 tidy: Callable[[IndexingMap], IndexingMap]) -> IndexingMap:
    """``second ∘ first``: ``first`` applied first, its results fed to ``second``'s dims.

    As XLA's ``ComposeIndexingMaps``: the result has ``first``'s dims; its range variables
    are ``second``'s then ``first``'s (runtime variables likewise); its constraints are both
    maps' plus "each of ``first``'s results lies in ``second``'s dimension interval" (except
    where that result is a dimension or constant already inside it). Not simplified.

    A runtime variable of ``second`` that says where its value comes from (a source map
    taking ``second``'s dims) gets the source map composed with ``first``, passed through
    ``tidy``. The public :func:`symidx.compose` (:mod:`symidx.core.simplify.compose`) passes the
    simplifier, which lives on a higher floor than this module.
    """
    if len(first.results) != len(second.dims):
        raise MapError(f"cannot compose: the first map has {first.num_results} results but "
                       f"the second has {second.num_dims} dims")
    if first.kind is not _NORMAL or second.kind is not _NORMAL:
        if first.is_undefined or second.is_undefined:
            return IndexingMap.undefined(first.num_dims, second.num_results)
        return IndexingMap.known_empty(first.dims, second.results)
    # where a divisor is 0 a map is not defined; said as constraints before composing, so
    # that a division the substitution folds away (0 floordiv s0 = 0) takes its "defined
    # only where s0 != 0" with it into the composed map
    first, second = first.with_divisors_nonzero(), second.with_divisors_nonzero()
    if first.kind is not _NORMAL or second.kind is not _NORMAL:  # known empty
        return IndexingMap.known_empty(first.dims, second.results)
    m_s, m_r = len(second.ranges), len(second.rts)
    f_results, f_constraints = first.results, first.constraints
    if (m_s and first.ranges) or (m_r and first.rts):  # first's variables move on
        moved = shifted(list(f_results) + [c for c, _ in f_constraints], m_s, m_r)
        n = len(f_results)
        f_results = tuple(moved[:n])
        f_constraints = tuple(zip(moved[n:], (iv for _, iv in f_constraints)))
    plug = dict(zip(second.dim_vars, f_results))
    g_results, g_constraints = second.substitute(plug)
    constraints = list(g_constraints)
    constraints += f_constraints
    positions = None
    for r, interval in zip(f_results, second.dims):
        if r.is_Integer:
            if r.p in interval:
                continue
        elif r.is_Symbol:
            if positions is None:
                positions = _variables(len(first.dims), len(first.ranges), len(first.rts))
            i = positions.get(r, len(first.dims))
            if i < len(first.dims):  # one of first's dimensions
                b = first.dims[i]
                if interval.lo <= b.lo and b.hi <= interval.hi:
                    continue  # the common case, checked without work; the simplifier does the rest
        constraints.append((r, interval))
    rts = tuple([_compose_provenance(v, first, tidy) for v in second.rts]) + first.rts \
        if m_r else first.rts
    names = _composed_names(first, second) if first.names or second.names else None
    ranges = second.ranges + first.ranges
    parts = _merged(constraints, len(first.dims), len(ranges), len(rts))
    narrowed = None if parts is None else _narrowed(first.dims, ranges, rts, parts[1])
    if parts is None or narrowed is None:  # something empty, or an unusual constraint:
        # ``create`` says so
        composed = IndexingMap.create(first.dims, g_results, ranges, rts, constraints, names,
                                      check=False)
    else:  # every part canonical already: what ``create`` would build, without its checks
        if names is not None and all(n is None for n in names):
            names = None
        composed = IndexingMap(narrowed[0], g_results, narrowed[1], narrowed[2], parts[0],
                               names)
    if first.divides_by_constants and second.divides_by_constants:
        # substitution leaves constant divisors constant: nothing to walk for zero divisors
        composed._cache["constant_divisors"] = True
        composed._cache["zeros"] = ()
    return composed


def _narrowed(dims: tuple[Interval, ...], ranges: tuple[Interval, ...],
              rts: tuple[RuntimeVar, ...], narrow: dict[int, Interval]
              ) -> tuple[tuple[Interval, ...], tuple[Interval, ...], tuple[RuntimeVar, ...]] | None:
    """The variables' intervals intersected with ``narrow`` (by position among all
    variables), as :meth:`IndexingMap.create` narrows them; None when one is empty."""
    if not narrow:
        return dims, ranges, rts
    found = _narrow(dims, ranges, rts, narrow)
    nd, nr = len(dims), len(ranges)
    for i in narrow:
        b = found[0][i] if i < nd else found[1][i - nd] if i < nd + nr else \
            found[2][i - nd - nr].bounds
        if b.lo > b.hi:
            return None
    return found


def _merged(constraints: list[Constraint], nd: int, nr: int, nt: int
            ) -> tuple[tuple[Constraint, ...], dict[int, Interval]] | None:
    """The constraints as :meth:`IndexingMap.create` keeps them (one per expression, their
    intervals intersected, in its order), and the intervals that constraints on bare
    variables give them (by position among the ``nd`` dims, ``nr`` range variables and
    ``nt`` runtime variables, to intersect with theirs); None where ``create`` has more to
    say: a constant outside its interval, an empty intersection, an atom that is neither.
    The parts of two normal maps have nonempty variable intervals and constraints
    already."""
    merged: dict[Expr, Interval] = {}
    narrow: dict[int, Interval] = {}
    variables = None
    for expr, interval in constraints:
        if expr.is_Integer:
            if expr.p not in interval:
                return None
            continue
        if expr.is_Symbol:
            if variables is None:
                variables = _variables(nd, nr, nt)
            i = variables.get(expr)
            if i is None:
                return None
            got = narrow.get(i)
            interval = interval if got is None else got.intersect(interval)
            if interval.lo > interval.hi:
                return None
            narrow[i] = interval
            continue
        if expr.is_Atom:
            return None
        got = merged.get(expr)
        if got is not None:
            interval = got.intersect(interval)
            if interval.lo > interval.hi:
                return None
        merged[expr] = interval
    return _sorted_constraints(merged), narrow


def _compose_provenance(var: RuntimeVar, first: IndexingMap,
                        tidy: Callable[[IndexingMap], IndexingMap]) -> RuntimeVar:
    """The runtime variable of ``second``, its source map now taking ``first``'s dims."""
    if var.map is None:
        return var
    return replace(var, map=tidy(compose_with(_without_provenance(first), var.map, tidy)))


def _without_provenance(m: IndexingMap) -> IndexingMap:
    if not any(v.map for v in m.rts):
        return m
    return replace(m, rts=tuple(replace(v, map=None) for v in m.rts))


def _composed_names(first: IndexingMap, second: IndexingMap) -> tuple[str | None, ...] | None:
    if not first.names and not second.names:
        return None
    f = first.names or (None,) * len(first.all_vars)
    g = second.names or (None,) * len(second.all_vars)
    fd, fr, ft = first.num_dims, first.num_ranges, first.num_rts
    gd, gr = second.num_dims, second.num_ranges
    return (tuple(f[:fd]) + tuple(g[gd:gd + gr]) + tuple(f[fd:fd + fr])
            + tuple(g[gd + gr:]) + tuple(f[fd + fr:fd + fr + ft]))
