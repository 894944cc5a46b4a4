"""The set of maps a sweep keeps per instruction output, and how it is kept small.

A sweep (:mod:`symidx.fusion.sweep`) keeps, per instruction output, the distinct maps that
reach it (:data:`Entries`: each map with its :class:`Tally`). This module holds what is
done to such a set:

* **bounds** (:func:`bounded`): past :data:`MERGE_LIMIT` maps, those differing only in
  which element holds a runtime value are merged (the same function, less provenance);
  past :data:`HULL_LIMIT`, maps differing by constant offsets along one result are merged
  exactly, and if still too many, replaced by their bounding box (labelled);
* **maps that depend on no index** (:func:`dim_free`, :func:`with_dims`): a map whose
  dims are its start's whole dims and occur nowhere in it is kept without them, so that
  sweeps from different starts share it (and what it composes into);
* **several starts at once** (:class:`Starts`; a tally's ``tags``): a sweep of several
  outputs together (:meth:`symidx.fusion.Analysis.backward_outputs`) keeps one set per
  instruction output for all of them, each map tagged with the outputs it is reached
  from; the bounds are applied per output, as each output's own sweep applies them;
* **results** (:func:`reached`, :func:`reached_each`): a set as the :class:`Reached` of
  one start, or of each.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Protocol

from sympy import Integer

from symidx.core.expr import Expr, bounds, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.simplify.finish import finish
from symidx.core.simplify.merge import merge_constant_offsets, merge_contiguous_sums
from symidx.fusion.reached import Origin, Path, Reached
from symidx.fusion.runtime import forget_elements


class MapMemo(Protocol):
    """What the set operations remember, in an analysis's memo
    (:class:`symidx.fusion.sweep.Memo`): each map with its runtime-value elements
    forgotten, each map without its dims, and one object per distinct map."""

    forgotten: dict[IndexingMap, IndexingMap]
    dim_free: dict[IndexingMap, IndexingMap]

    def interned_map(self, m: IndexingMap) -> IndexingMap: ...

__all__ = ["MERGE_LIMIT", "HULL_LIMIT", "Tally", "Entries", "Starts", "MapMemo", "dim_free",
           "with_dims", "bounded", "add_entry", "reached", "reached_each"]

#: Maps reaching one instruction output before those differing only in runtime-value
#: elements are merged.
MERGE_LIMIT = 16
#: Distinct maps reaching one instruction output before they are replaced by their
#: bounding box (a labelled over-approximation).
HULL_LIMIT = 256


@dataclass(slots=True)
class Tally:
    """A map's entry in a sweep: the first path found, the number of paths so far, the
    first over-approximation met on the way (None: exact), the starts it comes from
    (``tags``: bit ``i`` for the sweep's ``i``-th start, see :class:`Starts`) and those
    for which it is an over-approximation (``marked``: each start's own sweep labels its
    maps, ``opaque`` being the first label met by any)."""

    path: Path
    count: int
    opaque: str | None = None
    tags: int = 1
    marked: int = 0

    def __post_init__(self) -> None:
        if self.opaque is not None and not self.marked:
            self.marked = self.tags

    def label(self, bit: int) -> str | None:
        """The label of start ``bit``'s map (None: exact for it)."""
        return self.opaque if self.marked >> bit & 1 else None

    def share(self, tags: int) -> Tally:
        """This entry for the starts ``tags`` only."""
        marked = self.marked & tags
        return Tally(self.path, self.count, self.opaque if marked else None, tags, marked)


Entries = dict[IndexingMap, Tally]


class Starts:
    """Where a sweep starts: the dims of each start's identity map (one start, or several
    outputs of a computation swept together), and per dims the bit set of the starts that
    have them."""

    __slots__ = ("dims", "masks")

    def __init__(self, dims: list[tuple[Interval, ...]]) -> None:
        self.dims = dims
        self.masks: dict[tuple[Interval, ...], int] = {}
        for bit, d in enumerate(dims):
            self.masks[d] = self.masks.get(d, 0) | 1 << bit

    @property
    def joint(self) -> bool:
        """Several starts swept together (their sets bounded per start)."""
        return len(self.dims) > 1


def dim_free(m: IndexingMap, tags: int, starts: Starts, memo: MapMemo) -> IndexingMap:
    """``m``, a map of the starts ``tags`` of a sweep, without its dims when they are all of
    those starts' dims (no constraint narrowed them) and none occurs in it (its results,
    constraints, runtime variables' elements): it reads the same elements for every index
    of the start. Then sweeps from different starts (a training step's outputs, each one
    reading every parameter through the same backward pass) hold the same objects from
    there on, composed and simplified once (the analysis's ``memo.composed``).
    :func:`reached` gives the dims back. Known-empty and undefined maps keep theirs.
    Memoised in ``memo`` (the answer for a map whose dims are a start's does not depend on
    the sweep)."""
    if not m.dims or m.is_known_empty or m.is_undefined \
            or tags & ~starts.masks.get(m.dims, 0):
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


def bounded(entries: Entries, memo: MapMemo, starts: Starts) -> Entries:
    """``entries`` kept small (see the module docstring): maps differing only in runtime
    value elements merged past :data:`MERGE_LIMIT`, the bounding box past
    :data:`HULL_LIMIT`."""
    if len(entries) <= MERGE_LIMIT:
        return entries
    return _merged(entries, memo, starts)


def _merged(entries: Entries, memo: MapMemo, starts: Starts) -> Entries:
    if starts.joint:
        return _merged_jointly(entries, memo, starts)
    merged: Entries = {}
    for m, tally in entries.items():
        add_entry(merged, dim_free(_forgotten(m, memo), tally.tags, starts, memo), tally)
    if len(merged) <= HULL_LIMIT:
        return merged
    box = _bounding_box(list(merged), starts.dims[0])
    if box is None:
        return merged
    # where the box would be made, an exact merge first: maps differing by constant offsets
    exact = _offsets_merged(merged, memo)
    if len(exact) <= HULL_LIMIT:
        return exact
    merged = exact
    first = next(iter(merged.values()))
    total = sum(t.count for t in merged.values())
    reason = f"{len(merged)} distinct maps replaced by their bounding box"
    return {box: Tally(first.path, total, first.opaque or reason)}


def _offsets_merged(entries: Entries, memo: MapMemo) -> Entries:
    """``entries`` with maps equal but for constant offsets along one result merged into
    one map with a range variable (:func:`~symidx.core.simplify.merge.merge_constant_offsets`),
    and the window sums that makes merged
    (:func:`~symidx.core.simplify.merge.merge_contiguous_sums`):
    exact, the same union of targets."""
    maps = list(entries)
    groups = merge_constant_offsets(maps)
    if len(groups) == len(maps):
        return entries
    merged: Entries = {}
    for m, members in groups:
        if len(members) > 1:
            m, removed = merge_contiguous_sums(m, overlapping=True)
            if removed:
                m = finish(m, fold_point_dims=True)
        m = memo.interned_map(m)
        for i in members:
            add_entry(merged, m, entries[maps[i]])
    return merged


def _forgotten(m: IndexingMap, memo: MapMemo) -> IndexingMap:
    """:func:`forget_elements` of ``m``, interned and remembered in ``memo``."""
    found = memo.forgotten.get(m)
    if found is None:
        found = memo.forgotten[m] = memo.interned_map(forget_elements(m))
    return found


def _merged_jointly(entries: Entries, memo: MapMemo, starts: Starts) -> Entries:
    """:func:`_merged` in a sweep of several starts, with each start's own counts: a start
    that has more than :data:`MERGE_LIMIT` of the maps gets them with their runtime-value
    elements forgotten, the others keep them as they are (each start's own sweep does the
    same). Past :data:`HULL_LIMIT`, the maps of the starts that have more than that many
    are merged exactly where they differ by constant offsets (among maps of the same
    starts: the merged map reads their union), and the starts that still have more get one
    bounding box (labelled) of all their maps: a start's own sweep would box its maps
    alone, so the box may hold more, but only where a box is made anyway. The other starts
    keep their maps."""
    over = _crowded(list(entries.values()), starts, MERGE_LIMIT)
    if not over:
        return entries
    found: Entries = {}
    for m, tally in entries.items():
        kept, forgetting = tally.tags & ~over, tally.tags & over
        if kept:
            add_entry(found, m, tally.share(kept))
        if forgetting:
            add_entry(found, dim_free(_forgotten(m, memo), forgetting, starts, memo),
                      tally.share(forgetting))
    if len(found) <= HULL_LIMIT:
        return found
    crowded = _crowded(list(found.values()), starts, HULL_LIMIT)
    if not crowded:
        return found
    kept_maps: Entries = {}
    by_tags: dict[int, Entries] = {}
    for m, tally in found.items():
        if tally.tags & ~crowded:
            add_entry(kept_maps, m, tally.share(tally.tags & ~crowded))
        if tally.tags & crowded:
            part = tally.share(tally.tags & crowded)
            by_tags.setdefault(part.tags, {})[m] = part
    exact: Entries = {}
    for part_entries in by_tags.values():
        for m, tally in _offsets_merged(part_entries, memo).items():
            add_entry(exact, m, tally)
    boxed = _crowded(list(exact.values()), starts, HULL_LIMIT) if len(exact) > HULL_LIMIT \
        else 0
    inside = [m for m, tally in exact.items() if tally.tags & boxed
              and not m.is_known_empty and not m.is_undefined]
    if not boxed or any(m.num_results != inside[0].num_results for m in inside):
        boxed = 0
    else:
        box = memo.interned_map(_box(inside, ()))
        first = next(t for t in exact.values() if t.tags & boxed)
        reason = f"{len(inside)} distinct maps replaced by their bounding box"
        add_entry(kept_maps, box, Tally(first.path, 1, first.opaque or reason, boxed, boxed))
    for m, tally in exact.items():
        if tally.tags & ~boxed:
            add_entry(kept_maps, m, tally.share(tally.tags & ~boxed))
    return kept_maps


def _tag_bits(tallies: list[Tally], starts: Starts) -> Any:
    """The starts of each of ``tallies`` as a boolean matrix (tally by start)."""
    import numpy as np

    count = len(starts.dims)
    width = (count + 7) // 8
    rows = np.frombuffer(b"".join(t.tags.to_bytes(width, "little") for t in tallies),
                         dtype=np.uint8).reshape(len(tallies), width)
    return np.unpackbits(rows, axis=1, bitorder="little")[:, :count].astype(bool)


def _crowded(tallies: list[Tally], starts: Starts, limit: int) -> int:
    """The starts (bit set) that more than ``limit`` of ``tallies`` come from."""
    import numpy as np

    over = _tag_bits(tallies, starts).sum(axis=0) > limit
    return int.from_bytes(np.packbits(over, bitorder="little").tobytes(), "little")


def add_entry(target: Entries, m: IndexingMap, tally: Tally) -> None:
    entry = target.get(m)
    if entry is None:
        target[m] = tally.share(tally.tags)
    else:
        entry.count += tally.count
        entry.opaque = entry.opaque or tally.opaque
        entry.marked |= tally.marked
        entry.tags |= tally.tags


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
    box = _box(live, common)  # it reads the same for every index: without dims if it may
    return _without_dims(box) if common == dims else box


def _dims_hull(domains: list[tuple[Interval, ...]]) -> tuple[Interval, ...]:
    """The smallest box of dims holding each of ``domains``."""
    first = domains[0]
    if all(d == first for d in domains):
        return first
    return tuple(Interval(min(d[i].lo for d in domains), max(d[i].hi for d in domains))
                 for i in range(len(first)))


def _box(live: list[IndexingMap], dims: tuple[Interval, ...]) -> IndexingMap:
    """The map from ``dims`` to the box spanned by every result of ``live``."""
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


def reached(entries: Entries, memo: MapMemo, starts: Starts) -> Reached:
    """The distinct maps with their origins, each with the dims of the sweep's one start
    (see :func:`dim_free`); known-empty ones only when nothing else reaches (then one)."""
    share = _share(list(bounded(entries, memo, starts).items()), 0, starts.dims[0])
    return Reached(tuple(m for m, _ in share), tuple(Origin(t.path, t.count) for _, t in share),
                   opaque=next((t.label(0) for _, t in share if t.label(0) is not None), None))


def reached_each(entries: Entries, memo: MapMemo, starts: Starts) -> list[Reached | None]:
    """Per start of a joint sweep (:meth:`Analysis.backward_outputs`): what :func:`reached`
    gives for the maps it reaches (None: none do), without origins."""
    entries = bounded(entries, memo, starts)
    found: list[Reached | None] = []
    for bit, dims in enumerate(starts.dims):
        share = _share([(m, t) for m, t in entries.items() if t.tags >> bit & 1], bit, dims)
        found.append(None if not share else Reached(
            tuple(m for m, _ in share),
            opaque=next((t.label(bit) for _, t in share if t.label(bit) is not None), None)))
    return found


def _share(mine: list[tuple[IndexingMap, Tally]], bit: int, dims: tuple[Interval, ...]
           ) -> list[tuple[IndexingMap, Tally]]:
    """The maps of start ``bit`` among ``mine`` with its ``dims`` back; known-empty ones
    only when nothing else reaches it (then one)."""
    nonempty = [(with_dims(m, dims), t) for m, t in mine if not m.is_known_empty]
    if not nonempty and mine:
        m, tally = mine[0]
        nonempty = [(with_dims(m, dims).as_known_empty(), tally)]
    return nonempty
