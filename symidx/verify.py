"""Are two maps the same function on the same domain?

Two maps are equal when they relate the same pairs (source index, target index): the same
domain, and at every source index the same image. :func:`equal` decides it by exhaustive
enumeration with numpy when the domain box is small enough, and otherwise with the z3 SMT
solver (division and modulus by constants are linear integer arithmetic): a proof, or a
concrete counterexample. z3 is optional (``pip install 'symidx[proofs]'``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from symidx.errors import MapError, SymidxError, TooLargeError
from symidx.expr import CeilDiv, Expr, FloorDiv, Max, Min, Mod, bounds
from symidx.indexing_map import IndexingMap

__all__ = ["Verdict", "equal", "prove", "relation", "check_step", "EXHAUSTIVE_LIMIT"]

EXHAUSTIVE_LIMIT = 2_000_000  # points of the (dims x symbols) box enumerated; z3 beyond
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
    if image is None:
        return "(an image too large to list)"
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
        rows.append(np.stack([c[keep] for c in cols], axis=1) if cols
                    else np.zeros((int(keep.sum()), 0), np.int64))
    table = np.concatenate(rows) if rows else np.zeros((0, width), np.int64)
    if width == 0:
        return table[:1]
    return _unique_rows(table.astype(np.int64))


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


def _check_magnitudes(m: IndexingMap) -> None:
    env = m.variable_bounds()
    for e in list(m.results) + [c for c, _ in m.constraints]:
        b = bounds(e, env)
        if not b.is_empty and (abs(b.lo) >= _SAFE or abs(b.hi) >= _SAFE):
            raise TooLargeError(f"values of {e} exceed 64-bit integers; cannot enumerate")


def equal(a: IndexingMap, b: IndexingMap, limit: int = EXHAUSTIVE_LIMIT,
          method: str = "auto") -> Verdict:
    """Decide whether ``a`` and ``b`` are the same function on the same domain.

    ``method``: ``"exhaustive"`` (numpy enumeration of the domain box, up to ``limit``
    points), ``"z3"`` (a proof or a counterexample from the SMT solver), or ``"auto"``
    (exhaustive when the box is small enough, z3 otherwise)."""
    if method not in ("auto", "exhaustive", "z3"):
        raise MapError(f"unknown method {method!r}: choose auto, exhaustive or z3")
    if method == "z3" or (method == "auto" and not (a.is_undefined or b.is_undefined)
                          and max(a.domain_size(), b.domain_size()) > limit):
        return prove(a, b)
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
    if a.dims == b.dims and not (a.ranges or a.rts or b.ranges or b.rts):
        return _equal_functions(a, b, limit)
    ra, rb = relation(a, limit), relation(b, limit)
    only_a, only_b = _difference(ra, rb), _difference(rb, ra)
    if not len(only_a) and not len(only_b):
        return Verdict(True, "exhaustive")
    row = only_a[0] if len(only_a) else only_b[0]
    point = tuple(int(v) for v in row[: a.num_dims])
    return Verdict(False, "exhaustive", point, _image_at(ra, point), _image_at(rb, point))


def _equal_functions(a: IndexingMap, b: IndexingMap, limit: int) -> Verdict:
    """Maps without symbols over the same box: compare domains and values point by point
    (no sets needed)."""
    if a.domain_size() > limit:
        raise TooLargeError(f"the domain box has {a.domain_size()} points, more than {limit} "
                            f"to enumerate")
    _check_magnitudes(a)
    _check_magnitudes(b)
    for coords in a.points(limit):
        ra, ma = a.evaluate_arrays(list(coords))
        rb, mb = b.evaluate_arrays(list(coords))
        n = coords[0].size if coords else 1
        ma, mb = np.broadcast_to(ma, (n,)), np.broadcast_to(mb, (n,))
        bad = ma != mb
        for x, y in zip(ra, rb):
            bad |= ma & (np.broadcast_to(x, (n,)) != np.broadcast_to(y, (n,)))
        hits = np.flatnonzero(bad)
        if hits.size:
            point = tuple(int(c[hits[0]]) for c in coords)
            return Verdict(False, "exhaustive", point, frozenset(a.image(point)),
                           frozenset(b.image(point)))
    return Verdict(True, "exhaustive")


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


def _image_at(rel: np.ndarray, point: tuple[int, ...]) -> frozenset[tuple[int, ...]]:
    n = len(point)
    hit = np.all(rel[:, :n] == np.asarray(point, dtype=np.int64), axis=1) if n else \
        np.ones(len(rel), dtype=bool)
    return frozenset(tuple(int(v) for v in row[n:]) for row in rel[hit])


def check_step(step: Any, limit: int = EXHAUSTIVE_LIMIT) -> Verdict:
    """Does a simplifier step (:class:`symidx.simplify.Step`) hold: are ``before`` and
    ``after`` equal for every value of the variables in the step's intervals?"""
    from symidx.expr import dim, substitute

    variables = [v for v, _ in step.env]
    rename = {v: dim(i) for i, v in enumerate(variables)}
    before, after = substitute([step.before, step.after], rename)
    intervals = [b for _, b in step.env]
    if step.before_interval is not None:  # a constraint: the same points satisfy both
        return equal(IndexingMap.create(intervals, [], constraints=[(before,
                                                                     step.before_interval)]),
                     IndexingMap.create(intervals, [], constraints=[(after,
                                                                     step.after_interval)]),
                     limit)
    return equal(IndexingMap.create(intervals, [before], check=False),
                 IndexingMap.create(intervals, [after], check=False), limit)


# --------------------------------------------------------------------------- z3 proofs
def _z3() -> Any:
    try:
        import z3
    except ImportError:
        raise SymidxError("the domain is too large to enumerate and z3 is not installed: "
                          "pip install 'symidx[proofs]'") from None
    return z3


class _Encoder:
    """Index expressions as z3 integer terms. ``x floordiv c`` becomes a fresh ``q`` with
    ``c*q <= x <= c*q + c - 1`` (``c > 0``; mirrored for ``c < 0``), so everything stays
    in linear integer arithmetic; ``mod`` is ``x - c*q``."""

    def __init__(self, z3: Any, env: dict[Any, Any], tag: str):
        self.z3 = z3
        self.env = env
        self.tag = tag
        self.aux: list[Any] = []
        self.defs: list[Any] = []
        self.memo: dict[Expr, Any] = {}

    def __call__(self, e: Expr) -> Any:
        got = self.memo.get(e)
        if got is None:
            got = self.memo[e] = self._encode(e)
        return got

    def _encode(self, e: Expr) -> Any:
        z3 = self.z3
        if e.is_Integer:
            return z3.IntVal(int(e))
        if e.is_Symbol:
            return self.env[e]
        args = [self(a) for a in e.args]
        if e.is_Add:
            return z3.Sum(*args)
        if e.is_Mul:
            result = args[0]
            for a in args[1:]:
                result = result * a
            return result
        if e.is_Pow and e.args[1].is_Integer and int(e.args[1]) > 0:
            result = args[0]
            for _ in range(int(e.args[1]) - 1):
                result = result * args[0]
            return result
        if isinstance(e, (FloorDiv, Mod, CeilDiv)):
            if not e.args[1].is_Integer:
                raise SymidxError(f"cannot prove with a non-constant divisor: {e}")
            c = int(e.args[1])
            x = args[0] if not isinstance(e, CeilDiv) else -args[0]
            q = z3.Int(f"{self.tag}q{len(self.aux)}")
            self.aux.append(q)
            if c > 0:
                self.defs.append(z3.And(c * q <= x, x <= c * q + c - 1))
            else:
                self.defs.append(z3.And(c * q >= x, x >= c * q + c + 1))
            if isinstance(e, FloorDiv):
                return q
            if isinstance(e, CeilDiv):
                return -q
            return x - c * q
        if isinstance(e, (Min, Max)):
            a, b = args
            return z3.If(a <= b, a, b) if isinstance(e, Min) else z3.If(a >= b, a, b)
        raise SymidxError(f"cannot encode {e} for z3")


def _membership(z3: Any, m: IndexingMap, enc: _Encoder, values: list[Any]) -> Any:
    """The formula "these values of m's variables are in its domain"."""
    parts = [z3.And(b.lo <= v, v <= b.hi) for v, b in zip(values, m.all_bounds)]
    parts += [z3.And(iv.lo <= enc(c), enc(c) <= iv.hi) for c, iv in m.constraints]
    return z3.And(*parts) if parts else z3.BoolVal(True)


def _image_not_covered(z3: Any, a: IndexingMap, b: IndexingMap, dims: list[Any]) -> Any:
    """A formula over ``dims`` (and fresh variables) that holds when some target of ``a``
    at ``dims`` is not a target of ``b`` there."""
    sa = [z3.Int(f"a_s{i}") for i in range(a.num_ranges + a.num_rts)]
    enc_a = _Encoder(z3, dict(zip(a.all_vars, dims + sa)), "a_")
    in_a = _membership(z3, a, enc_a, dims + sa)
    ra = [enc_a(r) for r in a.results]
    sb = [z3.Int(f"b_s{i}") for i in range(b.num_ranges + b.num_rts)]
    enc_b = _Encoder(z3, dict(zip(b.all_vars, dims + sb)), "b_")
    in_b = _membership(z3, b, enc_b, dims + sb)
    hit = z3.And(in_b, *[x == y for x, y in zip(ra, (enc_b(r) for r in b.results))])
    hit = z3.And(*enc_b.defs, hit) if enc_b.defs else hit
    bound = sb + enc_b.aux
    missed = z3.ForAll(bound, z3.Not(hit)) if bound else z3.Not(hit)
    return z3.And(*enc_a.defs, in_a, missed) if enc_a.defs else z3.And(in_a, missed)


def prove(a: IndexingMap, b: IndexingMap, timeout_ms: int = 60_000) -> Verdict:
    """Decide equality with z3: a proof (``equal (z3 proof)``) or a counterexample."""
    if a.is_undefined or b.is_undefined:
        return equal(a, b, method="exhaustive")
    if a.is_known_empty and b.is_known_empty:
        return Verdict(True, "z3 proof")
    if not (a.is_known_empty or b.is_known_empty) and \
            (a.num_dims, a.num_results) != (b.num_dims, b.num_results):
        return Verdict(False, "shape", reason=f"{a.num_dims} dims -> {a.num_results} "
                       f"results vs {b.num_dims} dims -> {b.num_results} results")
    z3 = _z3()
    n = b.num_dims if a.is_known_empty else a.num_dims
    dims = [z3.Int(f"d{i}") for i in range(n)]
    for first, second in ((a, b), (b, a)):
        if first.is_known_empty:
            continue
        solver = z3.Solver()
        solver.set("timeout", timeout_ms)
        if second.is_known_empty:
            sa = [z3.Int(f"a_s{i}") for i in range(first.num_ranges + first.num_rts)]
            enc = _Encoder(z3, dict(zip(first.all_vars, dims + sa)), "a_")
            solver.add(_membership(z3, first, enc, dims + sa), *enc.defs)
        else:
            solver.add(_image_not_covered(z3, first, second, dims))
        answer = solver.check()
        if answer == z3.unknown:
            raise TooLargeError(f"z3 could not decide ({solver.reason_unknown()})")
        if answer == z3.sat:
            model = solver.model()
            point = tuple(model.eval(d, model_completion=True).as_long() for d in dims)
            return Verdict(False, "z3", point, _z3_image(a, point), _z3_image(b, point))
    return Verdict(True, "z3 proof")


def _z3_image(m: IndexingMap, point: tuple[int, ...]) -> frozenset[tuple[int, ...]] | None:
    """The image at one point, for the counterexample message (enumerated if small)."""
    if m.is_known_empty:
        return frozenset()
    symbols = 1
    for b in m.all_bounds[m.num_dims:]:
        symbols *= b.size
    return frozenset(m.image(point)) if symbols <= 1_000_000 else None
