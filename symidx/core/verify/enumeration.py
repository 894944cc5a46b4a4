"""Equality by exhaustive enumeration with numpy: every point of the variable box.

Works for every map, Presburger or not, while the box is small enough (``limit`` points).
The arithmetic is exact: int64 where every value on the way provably fits, Python integers
where one might not (:func:`symidx.core.expr.evaluate_exact`), so nothing wraps. Points where a
divisor is 0 are outside a map's definition, like points where a constraint fails. Maps
without range variables are compared point by point; maps with range variables as sets of
(source, target) rows.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from symidx._arith import fits_int64, int_array, narrowest, python_ints
from symidx.core.indexing_map import IndexingMap
from symidx.core.indexing_map.points import box_points
from symidx.core.interval import Interval
from symidx.core.verify.common import Deadline, box_size
from symidx.core.verify.verdict import Image, Point, Verdict
from symidx.errors import MapError, TooLargeError, Undecided

__all__ = ["relation", "decide_by_enumeration", "probe", "image_at", "box_points",
           "EXHAUSTIVE_LIMIT"]

EXHAUSTIVE_LIMIT = 2_000_000
"""Points of the variable box (dims, range and runtime variables) enumerated at most."""

_CHUNK = 1 << 18


def relation(m: IndexingMap, limit: int = EXHAUSTIVE_LIMIT,
             deadline: Deadline | None = None) -> np.ndarray:
    """Every (source index, target index) pair of the map, as unique rows of an int array
    with ``num_dims + num_results`` columns (range and runtime variables range over their
    intervals)."""
    if m.is_undefined:
        raise MapError("an UNDEFINED map has no relation to enumerate")
    nd = m.num_dims
    width = nd + m.num_results
    if m.is_known_empty:
        return np.zeros((0, width), dtype=np.int64)
    _check_size(m.all_bounds, limit)
    rows = []
    for coords in box_points(m.all_bounds, _CHUNK):
        if deadline is not None:
            deadline.check("enumerating the domain")
        results, mask = m.evaluate_arrays(list(coords))
        if not coords:  # no variables at all: one point
            cols = [int_array(r).reshape(-1) for r in results]
            rows.append(np.stack(cols, axis=1) if cols else np.zeros((1, 0), np.int64))
            continue
        keep = np.broadcast_to(mask, coords[0].shape)
        cols = list(coords[:nd]) + [np.broadcast_to(r, coords[0].shape) for r in results]
        rows.append(_stack([c[keep] for c in cols]) if cols
                    else np.zeros((int(keep.sum()), 0), np.int64))
    table = narrowest(_concatenate(rows)) if rows else np.zeros((0, width), np.int64)
    if width == 0:
        return table[:1]
    return _unique_rows(table)


def decide_by_enumeration(a: IndexingMap, b: IndexingMap, limit: int = EXHAUSTIVE_LIMIT,
                          deadline: Deadline | None = None) -> Verdict:
    """Equality of two defined maps of the same arity (either may be known empty) by
    enumerating their variable boxes; the first difference in enumeration order is the
    counterexample. Raises :class:`Undecided` when a box holds more than ``limit`` points
    or the deadline passes."""
    try:
        if not (a.is_known_empty or b.is_known_empty or a.symbol_vars or b.symbol_vars):
            return _equal_functions(a, b, limit, deadline)
        ra = relation(a, limit, deadline)
        rb = relation(b, limit, deadline)
    except TooLargeError as e:
        raise Undecided(str(e)) from None
    only_a, only_b = _difference(ra, rb), _difference(rb, ra)
    if not len(only_a) and not len(only_b):
        return Verdict(True, "exhaustive")
    row = only_a[0] if len(only_a) else only_b[0]
    n = a.num_dims if not a.is_known_empty else b.num_dims
    point = tuple(int(v) for v in row[:n])
    return Verdict(False, "exhaustive", point, _image_at(ra, point), _image_at(rb, point))


def _equal_functions(a: IndexingMap, b: IndexingMap, limit: int,
                     deadline: Deadline | None) -> Verdict:
    """Maps without range or runtime variables: compare domains and values point by point
    over the smallest box holding both boxes (no sets needed)."""
    hull = tuple(x.union(y) for x, y in zip(a.all_bounds, b.all_bounds))
    _check_size(hull, limit)
    for coords in box_points(hull, _CHUNK):
        if deadline is not None:
            deadline.check("enumerating the domain")
        ra, ma = a.evaluate_arrays(list(coords))
        rb, mb = b.evaluate_arrays(list(coords))
        size = coords[0].size if coords else 1
        ma, mb = np.broadcast_to(ma, (size,)), np.broadcast_to(mb, (size,))
        bad = ma != mb
        for x, y in zip(ra, rb):
            bad |= ma & (np.broadcast_to(x, (size,)) != np.broadcast_to(y, (size,)))
        hits = np.flatnonzero(bad)
        if hits.size:
            point = tuple(int(c[hits[0]]) for c in coords)
            return Verdict(False, "exhaustive", point,
                           _function_image(a, ma[hits[0]], point),
                           _function_image(b, mb[hits[0]], point))
    return Verdict(True, "exhaustive")


def probe(a: IndexingMap, b: IndexingMap, samples: int = 256) -> Verdict | None:
    """A quick look for a difference before a proof: maps without range or runtime
    variables evaluated at the corners of the union of their boxes and at ``samples``
    pseudo-random points (a fixed seed: the same answer every run), exactly. A difference
    found is a counterexample like any other; None when none was found (which proves
    nothing)."""
    if a.is_known_empty or b.is_known_empty or a.symbol_vars or b.symbol_vars:
        return None
    hull = [x.union(y) for x, y in zip(a.dims, b.dims)]
    if not hull:
        return None
    corners = list(itertools.islice(itertools.product(*((x.lo, x.hi) for x in hull)), 64))
    fractions = _fractions(len(hull), samples)
    coords = [int_array([c[i] for c in corners]
                         + [x.lo + x.size * int(f * 2**53) // 2**53  # in integers:
                            for f in fractions[i].tolist()])       # sizes of any length
              for i, x in enumerate(hull)]
    values_a, inside_a = a.evaluate_arrays(coords)
    values_b, inside_b = b.evaluate_arrays(coords)
    bad = inside_a != inside_b
    for x, y in zip(values_a, values_b):
        bad |= inside_a & (x != y)
    hits = np.flatnonzero(bad)
    if not hits.size:
        return None
    point = tuple(int(c[hits[0]]) for c in coords)
    return Verdict(False, "sampling", point, _function_image(a, inside_a[hits[0]], point),
                   _function_image(b, inside_b[hits[0]], point))


@functools.cache
def _fractions(count: int, samples: int) -> np.ndarray:
    """Fixed pseudo-random numbers in [0, 1): ``count`` rows of ``samples``."""
    return np.random.default_rng(0).random((count, samples))


def _stack(columns: list[np.ndarray]) -> np.ndarray:
    """Columns side by side (of Python integers if any column holds them: numpy would
    make a column of int64 beside one of uint64 a float64)."""
    if any(c.dtype != np.int64 for c in columns):
        columns = [python_ints(c) for c in columns]
    return np.stack(columns, axis=1)


def _concatenate(tables: list[np.ndarray]) -> np.ndarray:
    """Tables one under the other, exactly (of Python integers if any table holds them)."""
    if any(t.dtype != np.int64 for t in tables):
        tables = [python_ints(t) for t in tables]
    return np.concatenate(tables)


def _function_image(m: IndexingMap, inside: Any, key: Point) -> Image:
    if not inside:
        return frozenset()
    return frozenset([m.evaluate(key)])


def image_at(m: IndexingMap, point: Point, limit: int = 1_000_000,
             deadline: Deadline | None = None) -> Image | None:
    """The image of one source index, enumerated over the range and runtime variables
    with numpy (exactly); None when more than ``limit`` points would be needed or the
    ``deadline`` passes first."""
    if m.is_known_empty:
        return frozenset()
    if len(point) != m.num_dims:
        raise MapError(f"the map has {m.num_dims} dims, the point has {len(point)}")
    box = (*(Interval.point(v) for v in point), *m.all_bounds[m.num_dims:])
    try:
        _check_size(box, limit)
    except TooLargeError:
        return None
    found: set[Point] = set()
    for coords in box_points(box, _CHUNK):
        if deadline is not None and deadline.remaining() <= 0:
            return None
        results, mask = m.evaluate_arrays(list(coords))
        if not coords:
            return frozenset([tuple(int(r) for r in results)]) if mask else frozenset()
        keep = np.broadcast_to(mask, coords[0].shape)
        if not results:
            if keep.any():
                return frozenset([()])
            continue
        table = _stack([np.broadcast_to(r, coords[0].shape)[keep] for r in results])
        found.update(tuple(int(v) for v in row) for row in _unique_rows(narrowest(table)))
    return frozenset(found)


def _check_size(box: Sequence[Interval], limit: int) -> None:
    size = box_size(tuple(box))
    if size > limit:
        raise TooLargeError(f"the domain box has {size} points, more than {limit} to "
                            f"enumerate")


def _row_keys(rows: np.ndarray, lows: list[int], spans: list[int]) -> np.ndarray:
    """Each row as one int64 (mixed radix over the columns' spans; :func:`_key_box` made
    sure the keys fit)."""
    keys = np.zeros(len(rows), dtype=np.int64)
    for k in range(rows.shape[1]):
        column = rows[:, k]
        if not fits_int64(lows[k], lows[k]):  # another table's low, past int64
            column = python_ints(column)
        keys = keys * spans[k] + int_array(column - lows[k])  # in [0, spans[k]): int64
    return keys


def _key_box(*tables: np.ndarray) -> tuple[list[int], list[int]] | None:
    """(lows, spans) covering every table's columns, or None when the keys would not fit
    in 62 bits. Computed in Python integers: a column's span may not fit in int64."""
    present = [t for t in tables if len(t)]
    if not present:
        return None
    width = present[0].shape[1]
    lows = [min(int(t[:, k].min()) for t in present) for k in range(width)]
    highs = [max(int(t[:, k].max()) for t in present) for k in range(width)]
    spans = [hi - lo + 1 for lo, hi in zip(lows, highs)]
    total = 1
    for sp in spans:
        total *= sp
    return (lows, spans) if total < 2**62 else None


def _unique_rows(table: np.ndarray) -> np.ndarray:
    """np.unique(table, axis=0) in first-seen order, through int64 keys when they fit
    (much faster)."""
    box = _key_box(table)
    if box is None:
        if not len(table):
            return table
        if table.dtype == object:  # Python integers: numpy cannot sort rows of them
            seen = dict.fromkeys(tuple(row) for row in table.tolist())
            return np.array(list(seen), dtype=object).reshape(len(seen), table.shape[1])
        return np.unique(table, axis=0)
    keys = _row_keys(table, *box)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    first = np.ones(len(keys), dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    return table[np.sort(order[first])]


def _difference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Rows of x that are not rows of y (both unique)."""
    if not len(y) or not len(x):
        return x
    box = _key_box(x, y)
    if box is not None:
        kx, ky = _row_keys(x, *box), np.sort(_row_keys(y, *box))
        at = np.minimum(np.searchsorted(ky, kx), len(ky) - 1)
        return x[ky[at] != kx]
    if x.dtype == object or y.dtype == object:
        other = {tuple(int(v) for v in row) for row in y.tolist()}
        keep = [tuple(int(v) for v in row) not in other for row in x.tolist()]
        return x[np.asarray(keep, dtype=bool)]
    both = np.concatenate([y, x])
    _, first, counts = np.unique(both, axis=0, return_index=True, return_counts=True)
    single = first[(counts == 1) & (first >= len(y))]
    return both[np.sort(single)]


def _image_at(rel: np.ndarray, key: Point) -> Image:
    n = len(key)
    hit = np.all(rel[:, :n] == int_array(list(key)), axis=1) if n else \
        np.ones(len(rel), dtype=bool)
    return frozenset(tuple(int(v) for v in row[n:]) for row in rel[hit])
