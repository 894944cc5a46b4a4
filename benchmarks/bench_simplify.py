"""Simplifier benchmarks.

1. A chain of 64 reshapes alternating collapse [8,16,4] -> [512] and expand [512] ->
   [8,16,4], composed one at a time and simplified after every step; it must end at the
   identity. Median of several runs, and the same chain in islpy (if installed: the
   ``bench`` extra) in the same run, as a ratio.
2. Each of the seed's four simplifier examples (median per call).
3. The same 64-map chain composed first and simplified once: the size of the raw
   composition (distinct sub-expressions, and the tree it unfolds to) and of the result.

    python benchmarks/bench_simplify.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from sympy import Integer

from symidx.expr import FloorDiv, Mod, clear_caches, dim
from symidx.indexing_map import IndexingMap, compose
from symidx.simplify import simplify
from symidx.syntax import parse_map

SHAPE = [8, 16, 4]
CHAIN = 64

SEED_EXAMPLES = [
    "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]",
    "(d0, d1, d2) -> ((100d0 + 10d1 + d2) floorDiv 100, ((100d0 + 10d1 + d2) mod 100) "
    "floordiv 10, d2 mod 10), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
    "(d0, d1, d2) -> ((16d0 + 4d1 + d2) floordiv 8, (16d0 + 4d1 + d2) mod 8), "
    "domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
    "(d0, d1) -> (-((-11d0 - d1 + 109) floordiv 11) + 9), domain: d0 in [0, 9], d1 in [0, 10]",
]


def reshape_map(out_shape: list[int], in_shape: list[int]) -> IndexingMap:
    """Output-to-input map of a reshape from in_shape to out_shape."""
    linear = Integer(0)
    for i, n in enumerate(out_shape):
        linear = linear * n + dim(i)
    results, stride = [], 1
    for n in reversed(in_shape):
        results.append(Mod(FloorDiv(linear, stride), n))
        stride *= n
    return IndexingMap.create(out_shape, list(reversed(results)))


def chain_maps() -> list[IndexingMap]:
    """Output-to-input maps from the chain's last reshape back to its first input."""
    flat = [SHAPE[0] * SHAPE[1] * SHAPE[2]]
    maps = []
    for k in range(CHAIN):
        out_shape, in_shape = (flat, SHAPE) if k % 2 == 0 else (SHAPE, flat)
        maps.append(reshape_map(out_shape, in_shape))
    return maps


def run_chain_stepwise() -> IndexingMap:
    maps = chain_maps()
    acc = IndexingMap.identity(SHAPE)
    for m in reversed(maps):
        acc = simplify(compose(acc, m))
    return acc


def isl_chain() -> Callable[[], object] | None:
    try:
        import islpy as isl
    except ImportError:
        return None
    a, b, c = SHAPE
    n = a * b * c
    collapse = isl.Map(f"{{ [j] -> [x, y, z] : 0 <= j < {n} and j = {b * c}x + {c}y + z "
                       f"and 0 <= y < {b} and 0 <= z < {c} }}")
    expand = isl.Map(f"{{ [x, y, z] -> [j] : 0 <= x < {a} and 0 <= y < {b} and 0 <= z < {c} "
                     f"and j = {b * c}x + {c}y + z }}")

    def run() -> object:
        acc = isl.Map(f"{{ [x, y, z] -> [x, y, z] : 0 <= x < {a} and 0 <= y < {b} "
                      f"and 0 <= z < {c} }}")
        for k in reversed(range(CHAIN)):
            acc = acc.apply_range(collapse if k % 2 == 0 else expand).coalesce()
        return acc

    return run


def median_time(fn: Callable[[], object], runs: int, fresh: bool = True) -> float:
    times = []
    for _ in range(runs):
        if fresh:
            clear_caches()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def dag_and_tree_size(exprs: list) -> tuple[int, int]:
    """(distinct sub-expressions, nodes of the tree they unfold to)."""
    size: dict = {}
    for root in exprs:
        stack = [(root, False)]
        while stack:
            e, ready = stack.pop()
            if e in size:
                continue
            if ready:
                size[e] = 1 + sum(size[a] for a in e.args)
                continue
            stack.append((e, True))
            stack.extend((a, False) for a in e.args if a not in size)
    return len(size), sum(size[e] for e in exprs)


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args(argv)
    figures: dict[str, float] = {}

    result = run_chain_stepwise()
    assert result == IndexingMap.identity(SHAPE), result
    t = median_time(run_chain_stepwise, args.runs)
    figures["chain_ms"] = t * 1e3
    print(f"1. {CHAIN}-reshape chain, simplified after every step: median {t * 1e3:.1f} ms "
          f"(ends at the identity)")
    isl_run = isl_chain()
    if isl_run is None:
        print("   islpy not installed (pip install 'symidx[bench]'): no comparison")
    else:
        ti = median_time(isl_run, args.runs, fresh=False)
        figures["isl_chain_ms"] = ti * 1e3
        print(f"   islpy, same chain (apply_range + coalesce): median {ti * 1e3:.1f} ms; "
              f"symidx / islpy = {t / ti:.2f}")

    print("2. seed simplifier examples (median per call, fresh sympy cache):")
    for k, text in enumerate(SEED_EXAMPLES, 1):
        m = parse_map(text)
        ts = median_time(lambda m=m: simplify(m), max(args.runs * 10, 50))
        figures[f"seed{k}_us"] = ts * 1e6
        print(f"   example {k}: {ts * 1e6:.0f} us  -> {simplify(m)!s}".replace("\n", " "))

    maps = chain_maps()
    raw = IndexingMap.identity(SHAPE)
    start = time.perf_counter()
    for m in reversed(maps):
        raw = compose(raw, m)
    composed_s = time.perf_counter() - start
    dag, tree = dag_and_tree_size(list(raw.results) + [c for c, _ in raw.constraints])
    start = time.perf_counter()
    once = simplify(raw)
    once_s = time.perf_counter() - start
    figures.update(raw_dag=dag, raw_tree=tree, compose_all_ms=composed_s * 1e3,
                   simplify_once_ms=once_s * 1e3)
    print(f"3. chain composed first ({composed_s * 1e3:.1f} ms): {dag} distinct "
          f"sub-expressions ({tree} tree nodes, {len(raw.constraints)} constraints); "
          f"simplified once in {once_s * 1e3:.1f} ms -> "
          f"{'identity' if once == IndexingMap.identity(SHAPE) else once}")
    return figures


if __name__ == "__main__":
    main()
