"""Equality by exhaustive enumeration with numpy: every point of the variable box.

Works for every map, Presburger or not, while the box is small enough (``limit`` points)
and the values fit in 64-bit integers. Maps without range variables are compared point by
point; maps with range variables as sets of (source, target) rows.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from symidx.errors import MapError, TooLargeError, Undecided
from symidx.expr import CeilDiv, Expr, FloorDiv, Max, Min, Mod, bounds
from symidx.indexing_map import IndexingMap
from symidx.interval import Interval
from symidx.verify.common import Deadline, box_size
from symidx.verify.verdict import Image, Point, Verdict

__all__ = ["relation", "decide_by_enumeration", "probe", "image_at", "box_points",
           "EXHAUSTIVE_LIMIT"]

EXHAUSTIVE_LIMIT = 2_000_000
"""Points of the variable box (dims, range and runtime variables) enumerated at most."""

_SAFE = 2**62
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
    check_magnitudes(m)
    rows = []
    for coords in box_points(m.all_bounds):
        if deadline is not None:
            deadline.check("enumerating the domain")
        results, mask = m.evaluate_arrays(list(coords))
        if not coords:  # no variables at all: one point
            cols = [np.asarray([r]).reshape(-1) for r in results]
            rows.append(np.stack(cols, axis=1) if cols else np.zeros((1, 0), np.int64))
            continue
        keep = np.broadcast_to(mask, coords[0].shape)
        cols = list(coords[:nd]) + [np.broadcast_to(r, coords[0].shape) for r in results]
        rows.append(np.stack([c[keep] for c in cols], axis=1) if cols
                    else np.zeros((int(keep.sum()), 0), np.int64))
    table = np.concatenate(rows) if rows else np.zeros((0, width), np.int64)
    if width == 0:
        return table[:1]
    return _unique_rows(table.astype(np.int64))


def decide_by_enumeration(a: IndexingMap, b: IndexingMap, limit: int = EXHAUSTIVE_LIMIT,
                          deadline: Deadline | None = None) -> Verdict:
    """Equality of two defined maps of the same arity (either may be known empty) by
    enumerating their variable boxes; the first difference in enumeration order is the
    counterexample. Raises :class:`Undecided` when a box holds more than ``limit`` points
    or the values leave 64-bit integers."""
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
    check_magnitudes(a)
    check_magnitudes(b)
    for coords in box_points(hull):
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
    pseudo-random points (a fixed seed: the same answer every run). A difference found is
    a counterexample like any other; None when none was found (which proves nothing), or
    when values might leave 64-bit integers."""
    if a.is_known_empty or b.is_known_empty or a.symbol_vars or b.symbol_vars:
        return None
    hull = [x.union(y) for x, y in zip(a.dims, b.dims)]
    if not hull:
        return None
    corners = np.array(list(itertools.islice(itertools.product(*((x.lo, x.hi) for x in hull)),
                                             64)), dtype=np.int64).reshape(-1, len(hull))
    fractions = _fractions(len(hull), samples)
    coords = [np.concatenate([corners[:, i], x.lo + (fractions[i] * x.size).astype(np.int64)])
              for i, x in enumerate(hull)]
    inside_a, values_a = _evaluate_function(a, coords)
    inside_b, values_b = _evaluate_function(b, coords)
    if inside_a is None or inside_b is None:
        return None
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


def _evaluate_function(m: IndexingMap, coords: list[np.ndarray]
                       ) -> tuple[Any, list[np.ndarray]]:
    """(inside the domain, results) of a map without symbols at the given points, each
    shared sub-expression computed once; (None, []) if a value might leave 64 bits."""
    env = {v: Interval(int(c.min()), int(c.max())) for v, c in zip(m.dim_vars, coords)}
    sizes: dict[Expr, int] = {}
    exprs = [*m.results, *(c for c, _ in m.constraints)]
    if any(_magnitude(e, env, sizes) >= _SAFE for e in exprs):
        return None, []
    values: dict[Expr, Any] = dict(zip(m.dim_vars, coords))
    n = coords[0].size
    inside = np.ones(n, dtype=bool)
    for c, b in zip(coords, m.dims):
        inside &= (c >= b.lo) & (c <= b.hi)
    for e, iv in m.constraints:
        v = _value(e, values)
        inside &= (v >= iv.lo) & (v <= iv.hi)
    return inside, [np.broadcast_to(_value(e, values), (n,)) for e in m.results]


def _magnitude(e: Expr, env: dict[Any, Interval], memo: dict[Expr, int]) -> int:
    """A bound on ``|e|`` and on every value computed on the way to it."""
    got = memo.get(e)
    if got is not None:
        return got
    if e.is_Integer:
        got = abs(int(e))
    elif e.is_Symbol:
        got = max(abs(env[e].lo), abs(env[e].hi))
    else:
        parts = [_magnitude(x, env, memo) for x in e.args]
        if e.is_Add:
            got = sum(parts)
        elif e.is_Mul:
            got = 1
            for p in parts:
                got *= p
        elif e.is_Pow and e.args[1].is_Integer:
            got = parts[0] ** abs(int(e.args[1]))
        else:  # floordiv, ceildiv, mod, min, max: no larger than their arguments
            got = max(parts)
    memo[e] = got
    return got


def _value(e: Expr, values: dict[Expr, Any]) -> Any:
    """``e`` evaluated over numpy arrays, shared sub-expressions once (``values`` holds the
    variables and is the memo)."""
    got = values.get(e)
    if got is not None:
        return got
    if e.is_Integer:
        got = np.int64(int(e))
    else:
        args = [_value(x, values) for x in e.args]
        if e.is_Add:
            got = args[0]
            for x in args[1:]:
                got = got + x
        elif e.is_Mul:
            got = args[0]
            for x in args[1:]:
                got = got * x
        elif e.is_Pow:
            got = args[0] ** int(e.args[1])
        else:
            got = _NUMPY[type(e)](*args)
    values[e] = got
    return got


_NUMPY: dict[type, Any] = {
    FloorDiv: lambda a, b: a // b,
    Mod: lambda a, b: a % b,
    CeilDiv: lambda a, b: -((-a) // b),
    Min: np.minimum,
    Max: np.maximum,
}


def _function_image(m: IndexingMap, inside: Any, key: Point) -> Image:
    if not inside:
        return frozenset()
    return frozenset([m.evaluate(key)])


def image_at(m: IndexingMap, point: Point, limit: int = 1_000_000) -> Image | None:
    """The image of one source index, enumerated over the range and runtime variables
    with numpy; None when more than ``limit`` points would be needed or the values leave
    64-bit integers."""
    if m.is_known_empty:
        return frozenset()
    if len(point) != m.num_dims:
        raise MapError(f"the map has {m.num_dims} dims, the point has {len(point)}")
    box = (*(Interval.point(v) for v in point), *m.all_bounds[m.num_dims:])
    try:
        _check_size(box, limit)
        check_magnitudes(m)
    except TooLargeError:
        return None
    found: set[Point] = set()
    for coords in box_points(box):
        results, mask = m.evaluate_arrays(list(coords))
        if not coords:
            return frozenset([tuple(int(r) for r in results)]) if mask else frozenset()
        keep = np.broadcast_to(mask, coords[0].shape)
        if not results:
            if keep.any():
                return frozenset([()])
            continue
        table = np.stack([np.broadcast_to(r, coords[0].shape)[keep] for r in results], axis=1)
        found.update(map(tuple, _unique_rows(table.astype(np.int64)).tolist()))
    return frozenset(found)


def box_points(box: Sequence[Interval], chunk: int = _CHUNK) -> Iterator[tuple[Any, ...]]:
    """The box's points as flat numpy coordinate arrays, about ``chunk`` points at a time
    (the first variable is split)."""
    if not box:
        yield ()
        return
    rest = [np.arange(b.lo, b.hi + 1, dtype=np.int64) for b in box[1:]]
    per_value = box_size(tuple(box[1:]))
    step = max(1, chunk // max(1, per_value))
    first = box[0]
    for start in range(first.lo, first.hi + 1, step):
        head = np.arange(start, min(first.hi, start + step - 1) + 1, dtype=np.int64)
        grids = np.meshgrid(head, *rest, indexing="ij")
        yield tuple(g.reshape(-1) for g in grids)


def _check_size(box: Sequence[Interval], limit: int) -> None:
    size = box_size(tuple(box))
    if size > limit:
        raise TooLargeError(f"the domain box has {size} points, more than {limit} to "
                            f"enumerate")


def check_magnitudes(m: IndexingMap) -> None:
    """Raise :class:`TooLargeError` if a result or constraint may leave 64-bit integers."""
    env = m.variable_bounds()
    for e in list(m.results) + [c for c, _ in m.constraints]:
        b = bounds(e, env)
        if not b.is_empty and (abs(b.lo) >= _SAFE or abs(b.hi) >= _SAFE):
            raise TooLargeError(f"values of {e} exceed 64-bit integers; cannot enumerate")


def _row_keys(rows: np.ndarray, lows: np.ndarray, spans: np.ndarray) -> np.ndarray:
    """Each row as one int64 (mixed radix over the columns' spans)."""
    keys = np.zeros(len(rows), dtype=np.int64)
    for k in range(rows.shape[1]):
        keys = keys * spans[k] + (rows[:, k] - lows[k])
    return keys


def _key_box(*tables: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(lows, spans) covering every table's columns, or None when the keys would not fit
    in 63 bits."""
    present = [t for t in tables if len(t)]
    if not present:
        return None
    lows = np.min([t.min(axis=0) for t in present], axis=0)
    highs = np.max([t.max(axis=0) for t in present], axis=0)
    spans = highs - lows + 1
    total = 1
    for sp in spans.tolist():
        total *= int(sp)
    return (lows, spans) if total < 2**62 else None


def _unique_rows(table: np.ndarray) -> np.ndarray:
    """np.unique(table, axis=0), through int64 keys when they fit (much faster)."""
    box = _key_box(table)
    if box is None:
        return np.unique(table, axis=0) if len(table) else table
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
    both = np.concatenate([y, x])
    _, first, counts = np.unique(both, axis=0, return_index=True, return_counts=True)
    single = first[(counts == 1) & (first >= len(y))]
    return both[np.sort(single)]


def _image_at(rel: np.ndarray, key: Point) -> Image:
    n = len(key)
    hit = np.all(rel[:, :n] == np.asarray(key, dtype=np.int64), axis=1) if n else \
        np.ones(len(rel), dtype=bool)
    return frozenset(tuple(int(v) for v in row[n:]) for row in rel[hit])
