"""Are two maps the same function on the same domain?

Two maps are equal when they relate the same pairs (source index, target index): the same
domain, and at every source index the same image. :func:`equal` decides it by exhaustive
enumeration with numpy when the domain box is small enough; otherwise it says it cannot
decide (a z3 proof for large domains is planned).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symidx.errors import MapError, TooLargeError
from symidx.expr import bounds
from symidx.indexing_map import IndexingMap

__all__ = ["Verdict", "equal", "relation", "EXHAUSTIVE_LIMIT"]

EXHAUSTIVE_LIMIT = 20_000_000  # points of the (dims x symbols) box enumerated at most
_SAFE = 2**62


@dataclass(frozen=True)
class Verdict:
    """The answer of :func:`equal`: ``equal``, the ``method`` that decided, and for
    different maps a ``point`` (a source index) with each map's image there."""

    equal: bool
    method: str
    point: tuple[int, ...] | None = None
    left: frozenset[tuple[int, ...]] | None = None
    right: frozenset[tuple[int, ...]] | None = None
    reason: str = ""

    def __bool__(self) -> bool:
        return self.equal

    def describe(self) -> str:
        if self.equal:
            return f"equal ({self.method})"
        if self.point is None:
            return f"different: {self.reason}"
        return (f"different at {_tuple_text(self.point)}: {_image_text(self.left)} vs "
                f"{_image_text(self.right)}")


def _tuple_text(t: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(v) for v in t) + ")"


def _image_text(image: frozenset[tuple[int, ...]] | None) -> str:
    if not image:
        return "outside the domain"
    items = sorted(image)
    if len(items) == 1:
        return _tuple_text(items[0])
    shown = ", ".join(_tuple_text(t) for t in items[:4])
    return "{" + shown + (", ..." if len(items) > 4 else "") + "}"


def relation(m: IndexingMap, limit: int = EXHAUSTIVE_LIMIT) -> np.ndarray:
    """Every (source index, target index) pair of the map, as unique rows of an int array
    with ``num_dims + num_results`` columns."""
    if m.is_undefined:
        raise MapError("an UNDEFINED map has no relation to enumerate")
    width = m.num_dims + m.num_results
    if m.is_known_empty:
        return np.zeros((0, width), dtype=np.int64)
    size = m.domain_size()
    if size > limit:
        raise TooLargeError(f"the domain box has {size} points, more than {limit} to enumerate")
    _check_magnitudes(m)
    rows = []
    for coords in m.points(limit):
        results, mask = m.evaluate_arrays(list(coords))
        if not len(coords):  # no variables at all: one point
            cols = [np.asarray([r]).reshape(-1) for r in results]
            rows.append(np.stack(cols, axis=1) if cols else np.zeros((1, 0), np.int64))
            continue
        keep = np.broadcast_to(mask, coords[0].shape)
        cols = list(coords[: m.num_dims]) + [np.broadcast_to(r, coords[0].shape)
                                             for r in results]
        chunk = (np.stack([c[keep] for c in cols], axis=1) if cols
                 else np.zeros((int(keep.sum()), 0), np.int64))
        rows.append(np.unique(chunk, axis=0) if len(chunk) else chunk)
    table = np.concatenate(rows) if rows else np.zeros((0, width), np.int64)
    if width == 0:
        return table[:1]
    return np.unique(table.astype(np.int64), axis=0)


def _check_magnitudes(m: IndexingMap) -> None:
    env = m.variable_bounds()
    for e in list(m.results) + [c for c, _ in m.constraints]:
        b = bounds(e, env)
        if not b.is_empty and (abs(b.lo) >= _SAFE or abs(b.hi) >= _SAFE):
            raise TooLargeError(f"values of {e} exceed 64-bit integers; cannot enumerate")


def equal(a: IndexingMap, b: IndexingMap, limit: int = EXHAUSTIVE_LIMIT) -> Verdict:
    """Decide whether ``a`` and ``b`` are the same function on the same domain."""
    if a.is_known_empty or b.is_known_empty:  # "KNOWN EMPTY" text carries no arity
        other = b if a.is_known_empty else a
        rows = relation(other, limit)
        if not len(rows):
            return Verdict(True, "exhaustive")
        point = tuple(int(v) for v in rows[0][: other.num_dims])
        image = _image_at(rows, point)
        empty: frozenset[tuple[int, ...]] = frozenset()
        return Verdict(False, "exhaustive", point, *((empty, image) if a.is_known_empty
                                                     else (image, empty)))
    if a.num_dims != b.num_dims or a.num_results != b.num_results:
        return Verdict(False, "shape", reason=f"{a.num_dims} dims -> {a.num_results} results "
                       f"vs {b.num_dims} dims -> {b.num_results} results")
    if a.is_undefined or b.is_undefined:
        same = a.is_undefined and b.is_undefined
        return Verdict(same, "undefined", reason="" if same else "one map is UNDEFINED")
    if a == b:
        return Verdict(True, "identical")
    ra, rb = relation(a, limit), relation(b, limit)
    only_a, only_b = _difference(ra, rb), _difference(rb, ra)
    if not len(only_a) and not len(only_b):
        return Verdict(True, "exhaustive")
    row = only_a[0] if len(only_a) else only_b[0]
    point = tuple(int(v) for v in row[: a.num_dims])
    return Verdict(False, "exhaustive", point, _image_at(ra, point), _image_at(rb, point))


def _difference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Rows of x that are not rows of y (both unique)."""
    if not len(y):
        return x
    both = np.concatenate([y, x])
    _, first, counts = np.unique(both, axis=0, return_index=True, return_counts=True)
    single = first[(counts == 1) & (first >= len(y))]
    return both[np.sort(single)]


def _image_at(rel: np.ndarray, point: tuple[int, ...]) -> frozenset[tuple[int, ...]]:
    n = len(point)
    hit = np.all(rel[:, :n] == np.asarray(point, dtype=np.int64), axis=1) if n else \
        np.ones(len(rel), dtype=bool)
    return frozenset(tuple(int(v) for v in row[n:]) for row in rel[hit])
