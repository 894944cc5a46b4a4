"""Sets of integer points, exactly: the image of a map (every target index it can reach),
the union of several maps' images, boxes, and their intersections and differences, each
tested for emptiness and counted exactly.

This is what "which elements of this operand are never read" needs (the operand's box
minus the union of the read maps' images), and exact pad-value and dynamic-update-slice
maps. Two procedures:

* **isl** (islpy installed, the ``isl`` extra): sets in Presburger arithmetic, of any size;
  counting enumerates all but the innermost dimension (so the product of the outer extents
  is bounded by ``limit``);
* **explicit** (always there): the points themselves, enumerated with numpy from the maps'
  domain boxes (at most ``limit`` points per map), exactly: as ``int64`` rows when every
  coordinate fits, as rows of Python integers when one does not (``2**63``, ``-2**64``).

``backend="auto"`` takes isl when it is installed and the maps are Presburger. Sets of
different backends do not mix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symidx._arith import fits_int64, int_array, python_ints
from symidx.core.expr import dim
from symidx.core.indexing_map import IndexingMap
from symidx.core.indexing_map.text import int_text
from symidx.core.interval import Interval
from symidx.core.verify.common import non_presburger_reason
from symidx.core.verify.enumeration import EXHAUSTIVE_LIMIT, relation
from symidx.core.verify.isl import has_isl, isl_module, isl_text
from symidx.errors import MapError, TooLargeError, Undecided

__all__ = ["PointSet", "image", "images", "box", "COUNT_LIMIT"]

COUNT_LIMIT = 10_000_000
"""isl counting enumerates the outer dimensions: at most this many outer points."""

Point = tuple[int, ...]


class PointSet:
    """A set of points of ``Z^rank``. Build one with :func:`image`, :func:`images` or
    :func:`box`; combine with ``&``/:meth:`intersect`, ``|``/:meth:`union`,
    ``-``/:meth:`subtract`."""

    __slots__ = ("rank", "backend", "_isl", "_rows")

    def __init__(self, rank: int, backend: str, isl_set: Any = None,
                 rows: np.ndarray | None = None):
        self.rank = rank
        self.backend = backend
        self._isl = isl_set
        self._rows = rows

    # --- combining -------------------------------------------------------------------------
    def _check(self, other: PointSet) -> None:
        if other.rank != self.rank:
            raise MapError(f"sets of {self.rank}-tuples and {other.rank}-tuples do not mix")
        if other.backend != self.backend:
            raise MapError(f"a {self.backend} set and a {other.backend} set do not mix: "
                           f"build both with the same backend")

    def intersect(self, other: PointSet) -> PointSet:
        self._check(other)
        if self.backend == "isl":
            return PointSet(self.rank, "isl", self._isl.intersect(other._isl))
        if self._wide(other):
            return self._from_tuples(self._tuples() & other._tuples())
        return self._explicit(np.intersect1d(self._keys(), other._keys()))

    def union(self, other: PointSet) -> PointSet:
        self._check(other)
        if self.backend == "isl":
            return PointSet(self.rank, "isl", self._isl.union(other._isl).coalesce())
        if self._wide(other):
            return self._from_tuples(self._tuples() | other._tuples())
        return self._explicit(np.union1d(self._keys(), other._keys()))

    def subtract(self, other: PointSet) -> PointSet:
        self._check(other)
        if self.backend == "isl":
            return PointSet(self.rank, "isl", self._isl.subtract(other._isl).coalesce())
        if self._wide(other):
            return self._from_tuples(self._tuples() - other._tuples())
        return self._explicit(np.setdiff1d(self._keys(), other._keys()))

    __and__ = intersect
    __or__ = union
    __sub__ = subtract

    # --- questions ---------------------------------------------------------------------------
    def is_empty(self) -> bool:
        if self.backend == "isl":
            return bool(self._isl.is_empty())
        return not len(self._rows_or_empty())

    def count(self, limit: int = COUNT_LIMIT) -> int:
        """How many points, exactly. isl enumerates the outer dimensions: if their extents
        multiply past ``limit``, :class:`TooLargeError`."""
        if self.backend != "isl":
            return len(self._rows_or_empty())
        if self._isl.is_empty():
            return 0
        outer = 1
        for i in range(self.rank - 1):
            lo, hi = self._isl.dim_min_val(i), self._isl.dim_max_val(i)
            if not (lo.is_int() and hi.is_int()):
                raise TooLargeError("the set is unbounded: it has no finite count")
            outer *= hi.to_python() - lo.to_python() + 1
        if outer > limit:
            raise TooLargeError(f"counting would enumerate {outer} outer points, more than "
                                f"{limit}")
        value = self._isl.count_val()
        if not value.is_int():
            raise TooLargeError("the set is unbounded: it has no finite count")
        return int(value.to_python())

    def contains(self, point: Sequence[int]) -> bool:
        if len(point) != self.rank:
            raise MapError(f"a {len(point)}-tuple is not in a set of {self.rank}-tuples")
        if self.backend == "isl":
            isl = isl_module()
            text = ", ".join(int_text(int(v)) for v in point)
            return bool(isl.Set(f"{{ [{text}] }}").is_subset(self._isl))
        rows = self._rows_or_empty()
        wanted = tuple(int(v) for v in point)
        if rows.dtype == object:
            return wanted in self._tuples()
        if not fits_int64(min(wanted, default=0), max(wanted, default=0)):
            return False  # every row is int64: a coordinate past it is in none
        return bool(np.any(np.all(rows == int_array(list(wanted)), axis=1)))

    def sample(self) -> Point | None:
        """One point of the set, or None if it is empty."""
        if self.is_empty():
            return None
        if self.backend == "isl":
            isl = isl_module()
            p = self._isl.sample_point()
            return tuple(p.get_coordinate_val(isl.dim_type.set, i).to_python()
                         for i in range(self.rank))
        return tuple(int(v) for v in self._rows_or_empty()[0])

    def points(self, limit: int = EXHAUSTIVE_LIMIT) -> list[Point]:
        """Every point, sorted; :class:`TooLargeError` beyond ``limit``."""
        n = self.count(limit)
        if n > limit:
            raise TooLargeError(f"the set has {n} points, more than {limit} to list")
        if self.backend == "isl":
            isl = isl_module()
            found: list[Point] = []
            self._isl.foreach_point(lambda p: found.append(tuple(
                p.get_coordinate_val(isl.dim_type.set, i).to_python()
                for i in range(self.rank))))
            return sorted(found)
        return sorted(tuple(int(v) for v in row) for row in self._rows_or_empty())

    def __repr__(self) -> str:
        return f"PointSet(rank={self.rank}, backend={self.backend!r})"

    # --- the explicit backend -------------------------------------------------------------
    def _rows_or_empty(self) -> np.ndarray:
        return self._rows if self._rows is not None else np.zeros((0, self.rank), np.int64)

    def _wide(self, other: PointSet) -> bool:
        """Does either set hold a coordinate past int64 (rows of Python integers)?"""
        return self._rows_or_empty().dtype == object or other._rows_or_empty().dtype == object

    def _tuples(self) -> set[Point]:
        return {tuple(int(v) for v in row) for row in self._rows_or_empty().tolist()}

    def _from_tuples(self, points: set[Point]) -> PointSet:
        """The set of these points, sorted, as int64 rows when every coordinate fits."""
        ordered = sorted(points)
        rows = int_array(ordered) if ordered else np.zeros((0, self.rank), np.int64)
        return PointSet(self.rank, "explicit", rows=rows.reshape(len(ordered), self.rank))

    def _keys(self) -> np.ndarray:
        """Each row (int64) as one structured value (numpy's set operations compare them
        whole); a set of 0-tuples is [0] when it holds the empty tuple."""
        rows = np.ascontiguousarray(self._rows_or_empty())
        if not self.rank:
            return np.zeros(min(len(rows), 1), dtype=np.int64)
        return rows.view([(f"c{i}", np.int64) for i in range(self.rank)]).reshape(-1)

    def _explicit(self, keys: np.ndarray) -> PointSet:
        if not self.rank:
            return PointSet(0, "explicit", rows=np.zeros((min(len(keys), 1), 0), np.int64))
        rows = np.ascontiguousarray(keys).view(np.int64).reshape(-1, self.rank)
        return PointSet(self.rank, "explicit", rows=rows)


def _backend(choice: str, maps: Sequence[IndexingMap]) -> str:
    if choice not in ("auto", "isl", "explicit"):
        raise MapError(f"unknown backend {choice!r}: choose auto, isl or explicit")
    if choice != "auto":
        return choice
    return "isl" if has_isl() and non_presburger_reason(*maps) is None else "explicit"


def image(m: IndexingMap, backend: str = "auto", limit: int = EXHAUSTIVE_LIMIT) -> PointSet:
    """Every target index ``m`` can reach (from every source index, every value of its
    range and runtime variables)."""
    return images([m], backend, limit)


def images(maps: Sequence[IndexingMap], backend: str = "auto",
           limit: int = EXHAUSTIVE_LIMIT) -> PointSet:
    """The union of the maps' images (the maps have the same number of results)."""
    if not maps:
        raise MapError("images of no maps: give at least one (their rank is needed)")
    ranks = {m.num_results for m in maps}
    if len(ranks) > 1:
        raise MapError(f"maps with {sorted(ranks)} results have no common image space")
    if any(m.is_undefined for m in maps):
        raise MapError("an UNDEFINED map has no image")
    rank = ranks.pop()
    chosen = _backend(backend, maps)
    if chosen == "isl":
        isl = isl_module()
        found = isl.Set(f"{{ [{', '.join(f'o{i}' for i in range(rank))}] : false }}")
        for m in maps:
            try:
                found = found.union(isl.Map(isl_text(m)).range())
            except Undecided as e:
                raise MapError(f"isl cannot hold this map's image: {e.reason}") from None
        return PointSet(rank, "isl", found.coalesce())
    tables = [relation(m, limit)[:, m.num_dims:] for m in maps if not m.is_known_empty]
    if any(t.dtype == object for t in tables):  # a coordinate past int64: Python integers
        found = PointSet(rank, "explicit", rows=python_ints(np.concatenate(
            [python_ints(t) for t in tables])))
        return found._from_tuples(found._tuples())
    rows = np.concatenate(tables) if tables else np.zeros((0, rank), np.int64)
    keys = PointSet(rank, "explicit", rows=np.ascontiguousarray(rows))._keys()  # int64 rows
    return PointSet(rank, "explicit")._explicit(np.unique(keys))


def box(bounds: Sequence[Interval | int], backend: str = "auto",
        limit: int = EXHAUSTIVE_LIMIT) -> PointSet:
    """Every index of a box: an int ``n`` stands for ``[0, n - 1]``."""
    intervals = [b if isinstance(b, Interval) else Interval(0, b - 1) for b in bounds]
    identity = IndexingMap.create(intervals, [dim(i) for i in range(len(intervals))])
    return image(identity, backend, limit)
