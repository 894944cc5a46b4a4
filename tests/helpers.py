"""Shared test helpers: compare maps as functions, by evaluation."""

from __future__ import annotations

import itertools
import random

from symidx.core.indexing_map import IndexingMap
from symidx.core.verify import decide

# The seed's four simplifier examples: (before, after), as the seed writes them.
SEED_SIMPLIFICATIONS = [
    ("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]",
     "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]"),
    ("(d0, d1, d2) -> ((100d0 + 10d1 + d2) floorDiv 100, ((100d0 + 10d1 + d2) mod 100) "
     "floordiv 10, d2 mod 10), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
     "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"),
    ("(d0, d1, d2) -> ((16d0 + 4d1 + d2) floordiv 8, (16d0 + 4d1 + d2) mod 8), "
     "domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
     "(d0, d1, d2) -> (2d0 + (4d1 + d2) floordiv 8, (4d1 + d2) mod 8), "
     "domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"),
    ("(d0, d1) -> (-((-11d0 - d1 + 109) floordiv 11) + 9), domain: d0 in [0, 9], d1 in [0, 10]",
     "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 10]"),
]


def sample_points(m: IndexingMap, count: int = 150, seed: int = 0) -> list[tuple[int, ...]]:
    box = [range(b.lo, b.hi + 1) for b in m.dims]
    size = 1
    for r in box:
        size *= len(r)
    if size <= count:
        return list(itertools.product(*box))
    rng = random.Random(seed)
    corners = list(itertools.islice(itertools.product(*((r[0], r[-1]) for r in box)), 32))
    return corners + [tuple(rng.choice(r) for r in box) for _ in range(count)]


def assert_same_function(a: IndexingMap, b: IndexingMap) -> None:
    """a and b relate the same (source, target) pairs: exhaustively when small, else on
    sampled source points (the symbol boxes are enumerated in full)."""
    assert a.is_undefined == b.is_undefined
    if a.is_undefined:
        return
    if a.is_known_empty or b.is_known_empty:
        verdict = decide(a, b)
        assert verdict.equal, verdict.describe()
        return
    assert (a.num_dims, a.num_results) == (b.num_dims, b.num_results)
    if max(a.domain_size(), b.domain_size()) <= 200_000:
        verdict = decide(a, b, method="enumerate")
        assert verdict.equal, verdict.describe()
        return
    assert a.dims == b.dims
    if a.all_bounds == b.all_bounds:
        _same_at_random_points(a, b)
        return
    symbols = max(a.domain_size() // max(1, _box(a.dims)), b.domain_size() // max(1, _box(b.dims)))
    count = 150 if symbols <= 1_000 else 12
    for point in sample_points(a, count):
        assert image(a, point) == image(b, point), point


def _box(intervals) -> int:
    size = 1
    for b in intervals:
        size *= b.size
    return size


def image(m: IndexingMap, point: tuple[int, ...]) -> set[tuple[int, ...]]:
    """m.image(point), vectorised over the symbol box with numpy."""
    import numpy as np

    if m.is_known_empty or not all(v in b for v, b in zip(point, m.dims)):
        return set()
    axes = [np.arange(b.lo, b.hi + 1, dtype=np.int64) for b in m.all_bounds[m.num_dims:]]
    grids = [g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")] if axes else []
    n = grids[0].size if grids else 1
    values = [np.full(n, v, dtype=np.int64) for v in point] + grids
    results, mask = m.evaluate_arrays(values)
    mask = np.broadcast_to(mask, (n,))
    rows = np.stack([np.broadcast_to(r, (n,))[mask] for r in results], axis=1) if results \
        else np.zeros((int(mask.sum()), 0), np.int64)
    return {tuple(int(v) for v in row) for row in np.unique(rows, axis=0)}


def _same_at_random_points(a: IndexingMap, b: IndexingMap, count: int = 20_000) -> None:
    """Same variables and intervals: results and constraint truth agree at random points."""
    import numpy as np

    rng = np.random.default_rng(0)
    values = [rng.integers(v.lo, v.hi + 1, size=count, dtype=np.int64) for v in a.all_bounds]
    ra, ma = a.evaluate_arrays(values)
    rb, mb = b.evaluate_arrays(values)
    ma, mb = np.broadcast_to(ma, (count,)), np.broadcast_to(mb, (count,))
    assert np.array_equal(ma, mb)
    for x, y in zip(ra, rb):
        assert np.array_equal(np.broadcast_to(x, (count,))[ma], np.broadcast_to(y, (count,))[ma])


def mlir_affine(m: IndexingMap) -> bool:
    """Could MLIR read ``m``'s results as an ``affine_map`` (written here from MLIR's rules,
    apart from symidx's own check): products with at most one factor holding a dimension,
    floordiv/ceildiv/mod by a divisor free of dimensions that is at least 1 at every point
    of the variables' box (checked at its corners and, for a symbolic divisor, everywhere
    in a small box), no min or max, 64-bit constants."""
    from sympy import Max, Min, preorder_traversal

    from symidx.core.expr import CeilDiv, FloorDiv, Mod

    if m.is_known_empty or m.is_undefined:
        return True  # printed as the words KNOWN EMPTY, UNDEFINED
    dims = set(m.all_vars[:m.num_dims])
    box = dict(zip(m.all_vars, m.all_bounds))
    for r in m.results:
        for node in preorder_traversal(r):
            if node.is_Integer and not -(2**63) <= int(node) < 2**63:
                return False
            if node.is_Mul and len([a for a in node.args if a.free_symbols & dims]) > 1:
                return False
            if node.is_Pow and node.args[0].free_symbols & dims:
                return False
            if isinstance(node, (Min, Max)) or type(node).__name__ in ("Min", "Max"):
                return False
            if isinstance(node, (FloorDiv, CeilDiv, Mod)):
                divisor = node.args[1]
                if divisor.free_symbols & dims:
                    return False
                names = sorted(divisor.free_symbols, key=str)
                ranges = [range(box[v].lo, box[v].hi + 1) for v in names]
                if any(int(divisor.subs(dict(zip(names, p)))) < 1
                       for p in itertools.product(*ranges)):
                    return False
    return True
