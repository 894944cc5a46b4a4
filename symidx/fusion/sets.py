"""The set of maps a sweep keeps per instruction output, and how it is kept small.

A sweep (:mod:`symidx.fusion.sweep`) keeps, per instruction output, the distinct maps that
reach it, each with a frozen entry: in a sweep of one start, its :class:`Tally` (:data:`Entries`);
in a sweep of several outputs together, what :mod:`symidx.fusion.joint` builds on this
module. A set is a dict the sweep fills; its entries are values, never changed in place
(merging two gives a third). This module holds what is done to the set of one start:

* **bounds** (:meth:`Start.bounded`): past :data:`MERGE_LIMIT` maps, those differing only
  in which element holds a runtime value are merged (the same function, less provenance);
  past :data:`HULL_LIMIT`, maps differing by constant offsets along one result are merged
  exactly, and if still too many, replaced by their bounding box (labelled);
* **maps that depend on no index** (:func:`dim_free`, :func:`with_dims`): a map whose
  dims are its start's whole dims and occur nowhere in it is kept without them, so that
  sweeps from different starts share it (and what it composes into);
* **results** (:func:`reached`): a set as the :class:`Reached` of its start.

The pieces the joint sweep applies per group of outputs are public here: :func:`add_entry`,
:func:`forgotten`, :func:`offsets_merged`, :func:`box`, :func:`restored`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

from sympy import Integer

from symidx.core.expr import Expr, bounds, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.simplify.finish import finish
from symidx.core.simplify.merge import merge_constant_offsets, merge_contiguous_sums
from symidx.fusion.reached import Origin, Path, Reached, Traced
from symidx.fusion.runtime import forget_elements


class MapMemo(Protocol):
    """What the set operations remember, in an analysis's memo
    (:class:`symidx.fusion.sweep.Memo`): each map with its runtime-value elements
    forgotten, each map without its dims, and one object per distinct map."""

    forgotten: dict[IndexingMap, IndexingMap]
    dim_free: dict[IndexingMap, IndexingMap]

    def interned_map(self, m: IndexingMap) -> IndexingMap: ...

__all__ = ["MERGE_LIMIT", "HULL_LIMIT", "limits", "Entry", "Tally", "Entries", "Sets", "Start",
           "MapMemo", "dim_free", "with_dims", "add_entry", "forgotten", "offsets_merged",
           "box", "restored", "reached"]

#: Maps reaching one instruction output before those differing only in runtime-value
#: elements are merged.
MERGE_LIMIT = 16
#: Distinct maps reaching one instruction output before they are replaced by their
#: bounding box (a labelled over-approximation).
HULL_LIMIT = 256


def limits() -> tuple[int, int]:
    """:data:`MERGE_LIMIT` and :data:`HULL_LIMIT`, read when a set is bounded (so that a
    test may lower them)."""
    return MERGE_LIMIT, HULL_LIMIT


E = TypeVar("E", bound="Entry")


class Entry(Protocol):
    """What a sweep keeps with each map of a set: a value, which a step or a merge
    replaces by a new one."""

    @property
    def starts(self) -> int:
        """The starts the map is reached from (bit ``i``: the sweep's ``i``-th)."""

    def after(self: E, name: str, traced: Traced, opaque: str | None) -> E:
        """The entry of the map composed with ``traced``, a map of a step into ``name``
        (``opaque``: the step's label, None when it is exact)."""

    def plus(self: E, other: E) -> E:
        """This entry and ``other`` (of the same map) as one."""

    def plus_after(self: E, other: E, name: str, traced: Traced, opaque: str | None) -> E:
        """``self.plus(other.after(name, traced, opaque))``."""


@dataclass(frozen=True, slots=True)
class Tally:
    """A map's entry in a sweep of one start: the first path found, the number of paths,
    and the first over-approximation met on the way (None: exact)."""

    path: Path
    count: int
    opaque: str | None = None

    @property
    def starts(self) -> int:
        return 1

    def after(self, name: str, traced: Traced, opaque: str | None) -> Tally:
        return Tally(Path(name, self.path, traced.via), self.count * traced.count,
                     self.opaque or opaque)

    def plus(self, other: Tally) -> Tally:
        return Tally(self.path, self.count + other.count, self.opaque or other.opaque)

    def plus_after(self, other: Tally, name: str, traced: Traced, opaque: str | None
                   ) -> Tally:
        return Tally(self.path, self.count + other.count * traced.count,
                     self.opaque or other.opaque or opaque)


Entries = dict[IndexingMap, Tally]


class Sets(Protocol[E]):
    """What a sweep asks of its starts (:class:`Start`, one; several:
    :class:`symidx.fusion.joint.Starts`), whose sets hold entries of type ``E``."""

    @property
    def size(self) -> int:
        """How many starts."""

    def dim_free(self, m: IndexingMap, starts: int, memo: MapMemo) -> IndexingMap:
        """``m``, reached from ``starts``, without its dims where :func:`dim_free` may."""

    def frees(self, m: IndexingMap, starts: int) -> bool:
        """May ``m``, a map with dims reached from ``starts``, be swept without them (its
        dims are those of every start of ``starts``)?"""

    def bounded(self, entries: dict[IndexingMap, E], memo: MapMemo) -> dict[IndexingMap, E]:
        """``entries`` kept small (the module docstring)."""


def add_entry(target: dict[IndexingMap, E], m: IndexingMap, entry: E) -> None:
    """``entry`` added to the set ``target`` (merged with the entry ``m`` has there)."""
    found = target.get(m)
    target[m] = entry if found is None else found.plus(entry)


@dataclass(frozen=True, slots=True)
class Start:
    """A sweep of one start, whose identity map has ``dims``: what the sweep asks of its
    starts (:class:`symidx.fusion.joint.Starts` answers the same for several)."""

    dims: tuple[Interval, ...]

    @property
    def size(self) -> int:
        """How many starts: one."""
        return 1

    def dim_free(self, m: IndexingMap, starts: int, memo: MapMemo) -> IndexingMap:
        """:func:`dim_free` of ``m`` when its dims are the start's (``starts``: 1)."""
        return dim_free(m, memo) if self.frees(m, starts) else m

    def frees(self, m: IndexingMap, starts: int) -> bool:
        """Are ``m``'s dims the start's?"""
        return m.dims == self.dims

    def bounded(self, entries: Entries, memo: MapMemo) -> Entries:
        """``entries`` kept small (see the module docstring): maps differing only in
        runtime value elements merged past :data:`MERGE_LIMIT`, the bounding box past
        :data:`HULL_LIMIT`."""
        merge_limit, hull_limit = limits()
        if len(entries) <= merge_limit:
            return entries
        merged: Entries = {}
        for m, tally in entries.items():
            add_entry(merged, self.dim_free(forgotten(m, memo), 1, memo), tally)
        if len(merged) <= hull_limit:
            return merged
        hull = _bounding_box(list(merged), self.dims)
        if hull is None:
            return merged
        # where the box would be made, an exact merge first: maps differing by constant
        # offsets
        exact = offsets_merged(merged, memo)
        if len(exact) <= hull_limit:
            return exact
        first = next(iter(exact.values()))
        total = sum(t.count for t in exact.values())
        reason = f"{len(exact)} distinct maps replaced by their bounding box"
        return {hull: Tally(first.path, total, first.opaque or reason)}


def dim_free(m: IndexingMap, memo: MapMemo) -> IndexingMap:
    """``m``, a map whose dims are all of its starts' dims (no constraint narrowed them;
    the caller knows), without them when none occurs in it (its results, constraints,
    runtime variables' elements): it reads the same elements for every index of the
    start. Then sweeps from different starts (a training step's outputs, each one reading
    every parameter through the same backward pass) hold the same objects from there on,
    composed and simplified once (the analysis's ``memo.composed``). :func:`restored` gives
    the dims back. Known-empty and undefined maps keep theirs. Memoised in ``memo`` (the
    answer for a map whose dims are a start's does not depend on the sweep)."""
    if not m.dims or m.is_known_empty or m.is_undefined:
        return m
    found = memo.dim_free.get(m)
    if found is None:
        found = memo.dim_free[m] = memo.interned_map(_without_dims(m))
    return found


def _without_dims(m: IndexingMap) -> IndexingMap:
    dim_vars = frozenset(m.dim_vars)
    if any(v.map is not None for v in m.rts) \
            or any(not dim_vars.isdisjoint(e.free_symbols) for e in m.results) \
            or any(not dim_vars.isdisjoint(e.free_symbols) for e, _ in m.constraints):
        return m
    nd = len(m.dims)
    names = m.names[nd:] if m.names is not None and any(m.names[nd:]) else None
    return dataclasses.replace(m, dims=(), names=names)


def with_dims(m: IndexingMap, dims: tuple[Interval, ...]) -> IndexingMap:
    """A map made :func:`dim_free` (and what it composed into) given its sweep's ``dims``
    back: its runtime variables' elements too, which it may have gained since."""
    if m.dims or not dims:
        return m
    names = None if m.names is None else (None,) * len(dims) + m.names
    rts = tuple(v if v.map is None else dataclasses.replace(v, map=with_dims(v.map, dims))
                for v in m.rts)
    return dataclasses.replace(m, dims=dims, names=names, rts=rts)


def offsets_merged(entries: Mapping[IndexingMap, E], memo: MapMemo) -> dict[IndexingMap, E]:
    """``entries`` with maps equal but for constant offsets along one result merged into
    one map with a range variable (:func:`~symidx.core.simplify.merge.merge_constant_offsets`),
    and the window sums that makes merged
    (:func:`~symidx.core.simplify.merge.merge_contiguous_sums`):
    exact, the same union of targets."""
    maps = list(entries)
    groups = merge_constant_offsets(maps)
    if len(groups) == len(maps):
        return dict(entries)
    merged: dict[IndexingMap, E] = {}
    for m, members in groups:
        if len(members) > 1:
            m, removed = merge_contiguous_sums(m, overlapping=True)
            if removed:
                m = finish(m, fold_point_dims=True)
        m = memo.interned_map(m)
        for i in members:
            add_entry(merged, m, entries[maps[i]])
    return merged


def forgotten(m: IndexingMap, memo: MapMemo) -> IndexingMap:
    """:func:`forget_elements` of ``m``, interned and remembered in ``memo`` (``m`` itself
    when it has no runtime variable)."""
    if not m.rts:
        return m
    found = memo.forgotten.get(m)
    if found is None:
        found = memo.forgotten[m] = memo.interned_map(forget_elements(m))
    return found


def _bounding_box(maps: list[IndexingMap], dims: tuple[Interval, ...]) -> IndexingMap | None:
    """One map from the hull of the source dims of ``maps`` to the box spanned by every
    result of them (maps of a sweep that starts with ``dims``: those without dims have all
    of them, see :func:`dim_free`; the others have parts of them, a ``concatenate`` or a
    ``pad`` having split their domain); None if they differ in arity."""
    live = [m for m in maps if not m.is_known_empty and not m.is_undefined]
    if not live or any(m.num_results != live[0].num_results
                       or len(m.dims or dims) != len(dims) for m in live):
        return None
    common = _dims_hull([m.dims or dims for m in live])
    found = box(live, common)  # it reads the same for every index: without dims if it may
    return _without_dims(found) if common == dims else found


def _dims_hull(domains: list[tuple[Interval, ...]]) -> tuple[Interval, ...]:
    """The smallest box of dims holding each of ``domains``."""
    first = domains[0]
    if all(d == first for d in domains):
        return first
    return tuple(Interval(min(d[i].lo for d in domains), max(d[i].hi for d in domains))
                 for i in range(len(first)))


def box(live: list[IndexingMap], dims: tuple[Interval, ...]) -> IndexingMap:
    """The map from ``dims`` to the box spanned by every result of ``live`` (maps of one
    arity, none known-empty or undefined)."""
    hull: list[Interval] = []
    for i in range(live[0].num_results):
        spans = [bounds(m.results[i], m.variable_bounds()) for m in live]
        hull.append(Interval(min(s.lo for s in spans), max(s.hi for s in spans)))
    results: list[Expr] = []
    ranges: list[Interval] = []
    for h in hull:
        if h.is_point:
            results.append(Integer(h.lo))
        else:
            results.append(sym(len(ranges)))
            ranges.append(h)
    return IndexingMap.create(dims, results, ranges)


def reached(entries: Entries, memo: MapMemo, start: Start) -> Reached:
    """The distinct maps with their origins, each with the dims of the sweep's one start
    (see :func:`dim_free`); known-empty ones only when nothing else reaches (then one)."""
    share = restored(list(start.bounded(entries, memo).items()), start.dims)
    return Reached(tuple(m for m, _ in share), tuple(Origin(t.path, t.count) for _, t in share),
                   opaque=next((t.opaque for _, t in share if t.opaque is not None), None))


def restored(mine: list[tuple[IndexingMap, E]], dims: tuple[Interval, ...],
             made: dict[IndexingMap, IndexingMap] | None = None
             ) -> list[tuple[IndexingMap, E]]:
    """The maps of one start among ``mine`` with its ``dims`` back; known-empty ones only
    when nothing else reaches it (then one). ``made`` keeps each map given these ``dims``
    back, for the next start with them (the outputs of a joint sweep share maps)."""
    if made is None:
        made = {}
    nonempty = []
    for m, t in mine:
        if not m.is_known_empty:
            back = made.get(m)
            if back is None:
                back = made[m] = with_dims(m, dims)
            nonempty.append((back, t))
    if not nonempty and mine:
        m, entry = mine[0]
        nonempty = [(with_dims(m, dims).as_known_empty(), entry)]
    return nonempty
