"""Several outputs swept together: a layer over the sets of one start
(:mod:`symidx.fusion.sets`).

A sweep of several outputs of a computation (:meth:`symidx.fusion.Analysis.backward_outputs`,
``symidx maps --output all``) keeps one set per instruction output for all of them, so that
a map reached from many outputs (the same parameter read through the same backward pass of
a training step) is composed once. Each map's entry is a :class:`Shared`: the outputs it is
reached from and those for which it over-approximates, as bit sets (bit ``i``: the
sweep's ``i``-th output), held in a frozen value that a step or a merge replaces. Origins
are not tracked.

Each output gets what its own sweep gets: the sets are bounded per output
(:meth:`Starts.bounded`), by the operations of the sets of one start applied to the maps of
the outputs that have too many (:func:`~symidx.fusion.sets.forgotten`,
:func:`~symidx.fusion.sets.offsets_merged`, :func:`~symidx.fusion.sets.box`), and each
output's share is read out with its own dims and label (:func:`reached_each`).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.fusion.reached import Reached, Traced
from symidx.fusion.sets import (
    MapMemo,
    add_entry,
    box,
    dim_free,
    forgotten,
    limits,
    offsets_merged,
    restored,
)

__all__ = ["Shared", "SharedEntries", "Starts", "reached_each"]


@dataclass(frozen=True, slots=True)
class Shared:
    """A map's entry in a sweep of several outputs: the outputs it is reached from
    (``starts``), those for which it is an over-approximation (``marked``: each output's
    own sweep labels its maps), and the first label met by any (``opaque``)."""

    starts: int
    marked: int = 0
    opaque: str | None = None

    def label(self, bit: int) -> str | None:
        """The label of output ``bit``'s map (None: exact for it)."""
        return self.opaque if self.marked >> bit & 1 else None

    def only(self, starts: int) -> Shared:
        """This entry for the outputs ``starts`` only."""
        if starts == self.starts:
            return self
        marked = self.marked & starts
        return Shared(starts, marked, self.opaque if marked else None)

    def after(self, name: str, traced: Traced, opaque: str | None) -> Shared:
        if opaque is None:  # an exact step: the same entry (a value, shared)
            return self
        return Shared(self.starts, self.starts if opaque else self.marked,
                      self.opaque or opaque)

    def plus(self, other: Shared) -> Shared:
        if not (other.starts & ~self.starts or other.marked & ~self.marked
                or self.opaque is None and other.opaque is not None):
            return self  # nothing new
        return Shared(self.starts | other.starts, self.marked | other.marked,
                      self.opaque or other.opaque)

    def plus_after(self, other: Shared, name: str, traced: Traced, opaque: str | None
                   ) -> Shared:
        return self.plus(other.after(name, traced, opaque))


SharedEntries = dict[IndexingMap, Shared]


@dataclass(slots=True)
class _Kept:
    """What bounding makes of ``m`` (:meth:`Starts._kept`): its runtime-value elements
    forgotten (``forgotten``), the outputs whose dims that map has (``mask``; all of them,
    -1, when it has none) and that map without its dims (``free``, made when first
    asked). ``m`` is held so that its identity, the key, is not reused."""

    m: IndexingMap
    forgotten: IndexingMap
    mask: int
    free: IndexingMap | None = None


@dataclass(frozen=True, slots=True)
class Starts:
    """The outputs of a joint sweep: the dims of each one's identity map, and per dims the
    outputs that have them (bit set)."""

    dims: tuple[tuple[Interval, ...], ...]
    masks: Mapping[tuple[Interval, ...], int] = field(init=False, repr=False, compare=False)
    # per map looked up in ``masks``, the outputs with its dims (see :meth:`dim_free`)
    _mask_of: dict[IndexingMap, int] = field(default_factory=dict, init=False, repr=False,
                                             compare=False)
    # per map (by identity, the map held), what bounding makes of it: see :meth:`_kept`
    _kept_of: dict[int, _Kept] = field(default_factory=dict, init=False, repr=False,
                                       compare=False)

    def __post_init__(self) -> None:
        masks: dict[tuple[Interval, ...], int] = {}
        for bit, d in enumerate(self.dims):
            masks[d] = masks.get(d, 0) | 1 << bit
        object.__setattr__(self, "masks", masks)

    @property
    def size(self) -> int:
        """How many outputs."""
        return len(self.dims)

    def dim_free(self, m: IndexingMap, starts: int, memo: MapMemo) -> IndexingMap:
        """:func:`~symidx.fusion.sets.dim_free` of ``m`` when its dims are those of every
        output of ``starts``."""
        return dim_free(m, memo) if m.dims and self.frees(m, starts) else m

    def frees(self, m: IndexingMap, starts: int) -> bool:
        """Are ``m``'s dims those of every output of ``starts``?"""
        mask = self._mask_of.get(m)  # a map's hash is kept, a dims tuple's is not
        if mask is None:
            mask = self._mask_of[m] = self.masks.get(m.dims, 0)
        return not starts & ~mask

    def _kept(self, m: IndexingMap, crowded: int, memo: MapMemo) -> IndexingMap:
        """``dim_free(forgotten(m), crowded)``: what bounding keeps of ``m`` for the
        outputs ``crowded``. A set of a training step holds the same interned maps at
        instruction after instruction, so the parts that do not depend on ``crowded`` are
        kept per map object (its hash and two memos' lookups, once)."""
        kept = self._kept_of.get(id(m))
        if kept is None:
            f = forgotten(m, memo)
            mask = self.masks.get(f.dims, 0) if f.dims else -1
            kept = self._kept_of[id(m)] = _Kept(m, f, mask)
        if crowded & ~kept.mask:  # not every output's dims: the map keeps its dims
            return kept.forgotten
        if kept.free is None:
            kept.free = dim_free(kept.forgotten, memo)
        return kept.free

    def bounded(self, entries: SharedEntries, memo: MapMemo) -> SharedEntries:
        """``entries`` bounded per output, as each output's own sweep bounds its set: an
        output that has more than :data:`~symidx.fusion.sets.MERGE_LIMIT` of the maps gets
        them with their runtime-value elements forgotten, the others keep them as they
        are. Past :data:`~symidx.fusion.sets.HULL_LIMIT`, the maps of the outputs that have
        more than that many are merged exactly where they differ by constant offsets
        (among maps of the same outputs: the merged map reads their union), and the
        outputs that still have more get one bounding box (labelled) of all their maps
        (:meth:`_boxed`). The other outputs keep their maps."""
        merge_limit, hull_limit = limits()
        if len(entries) <= merge_limit:
            return entries
        over = _crowded(entries.values(), merge_limit)
        if not over:
            return entries
        found: SharedEntries | None = None  # made at the first entry that changes
        for i, (m, e) in enumerate(entries.items()):
            crowded = e.starts & over
            kept = self._kept(m, crowded, memo) if crowded and (m.rts or m.dims) else m
            if kept is m and (not crowded or e.opaque is None or e.marked and e.opaque):
                # the entry as it was (when crowded, the two parts below merged again)
                if found is not None:
                    add_entry(found, m, e)
                continue
            if found is None:  # the entries before this one are unchanged and distinct
                found = dict(itertools.islice(entries.items(), i))
            if e.starts & ~over:
                add_entry(found, m, e.only(e.starts & ~over))
            add_entry(found, kept, e.only(crowded))
        if found is None:  # most sets of a training step: every map kept as it was
            found = entries
        if len(found) <= hull_limit:
            return found
        crowded = _crowded(found.values(), hull_limit)
        return self._boxed(found, crowded, memo) if crowded else found

    def _boxed(self, entries: SharedEntries, crowded: int, memo: MapMemo) -> SharedEntries:
        """``entries`` where the outputs ``crowded`` have too many maps: theirs merged
        exactly where they may be, then boxed for those that still have too many."""
        _, hull_limit = limits()
        kept: SharedEntries = {}
        by_starts: dict[int, SharedEntries] = {}
        for m, e in entries.items():
            if e.starts & ~crowded:
                add_entry(kept, m, e.only(e.starts & ~crowded))
            if e.starts & crowded:
                part = e.only(e.starts & crowded)
                by_starts.setdefault(part.starts, {})[m] = part
        exact: SharedEntries = {}
        for part_entries in by_starts.values():
            for m, e in offsets_merged(part_entries, memo).items():
                add_entry(exact, m, e)
        boxed = _crowded(exact.values(), hull_limit) if len(exact) > hull_limit else 0
        inside = [m for m, e in exact.items() if e.starts & boxed
                  and not m.is_known_empty and not m.is_undefined]
        if not boxed or any(m.num_results != inside[0].num_results for m in inside):
            boxed = 0
        else:
            first = next(e for e in exact.values() if e.starts & boxed)
            reason = f"{len(inside)} distinct maps replaced by their bounding box"
            add_entry(kept, memo.interned_map(box(inside, ())),
                      Shared(boxed, boxed, first.opaque or reason))
        for m, e in exact.items():
            if e.starts & ~boxed:
                add_entry(kept, m, e.only(e.starts & ~boxed))
        return kept


def _crowded(entries: Iterable[Shared], limit: int) -> int:
    """The outputs (bit set) that more than ``limit`` of ``entries`` come from. Every
    output's count is kept bit-sliced (``counts[i]``: bit ``i`` of each output's count),
    so that counting is a carry through a few integers, however many outputs an entry
    comes from. The entries of a set share few distinct bit sets: each is added once,
    times the number of entries that have it (at the bit-slices of that number); then
    each count is compared with ``limit``, most significant bit first."""
    counts: list[int] = []  # this call's own counters
    for starts, times in Counter([e.starts for e in entries]).items():
        level = 0
        while times:
            if times & 1:  # add ``starts`` << level, carrying
                carry, i = starts, level
                while carry:
                    if i >= len(counts):
                        counts.extend([0] * (i - len(counts)))
                        counts.append(carry)
                        break
                    c = counts[i]
                    counts[i], carry = c ^ carry, c & carry
                    i += 1
            times >>= 1
            level += 1
    over, equal = 0, -1  # the outputs whose count is above / equal to limit so far
    for i in reversed(range(max(len(counts), limit.bit_length()))):
        c = counts[i] if i < len(counts) else 0
        if limit >> i & 1:
            equal &= c
        else:
            over |= equal & c
            equal &= ~c
    return over


def reached_each(entries: SharedEntries, memo: MapMemo, starts: Starts
                 ) -> list[Reached | None]:
    """Per output of a joint sweep: the distinct maps it reaches (None: none do), with
    its dims back (see :func:`~symidx.fusion.sets.dim_free`), known-empty ones only when
    nothing else reaches (then one), and its label; no origins."""
    entries = starts.bounded(entries, memo)
    found: list[Reached | None] = []
    made: dict[tuple[Interval, ...], dict[IndexingMap, IndexingMap]] = {}
    mine: list[list[tuple[IndexingMap, Shared]]] = [[] for _ in starts.dims]
    labels: list[str | None] = [None] * starts.size  # the first label of a map read
    for m, e in entries.items():  # each entry to the outputs it is reached from
        for bit in _bits(e.starts):
            mine[bit].append((m, e))
        if e.opaque is not None and not m.is_known_empty:
            for bit in _bits(e.marked):
                if labels[bit] is None:
                    labels[bit] = e.opaque
    for bit, dims in enumerate(starts.dims):
        share = restored(mine[bit], dims, made.setdefault(dims, {}))
        label = labels[bit]
        if share and share[0][0].is_known_empty:  # nothing but known-empty maps
            label = share[0][1].label(bit)
        found.append(Reached(tuple([m for m, _ in share]), opaque=label) if share else None)
    return found


def _bits(mask: int) -> Iterator[int]:
    """The positions of the bits set in ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low
