"""Simplifier benchmarks.

1. A chain of 64 reshapes alternating collapse [8,16,4] -> [512] and expand [512] ->
   [8,16,4], composed one at a time and simplified after every step; it must end at the
   identity. Median of several runs, and the same chain in islpy and MLIR (where installed)
   interleaved in the same run, as ratios.
2. Each of the seed's four simplifier examples (median per call).
3. The same 64-map chain composed first and simplified once: the size of the raw
   composition (distinct sub-expressions, and the tree it unfolds to) and of the result.

The maps and timing come from :mod:`symidx.bench` (``symidx bench`` runs the whole suite).

    python benchmarks/bench_simplify.py [--runs N]
"""

from __future__ import annotations

import argparse
import time

from sympy import Expr

from symidx.bench import (
    SEED_EXAMPLES,
    SHAPE,
    SymidxBackend,
    available_backends,
    chain_maps,
    compose_chain,
    measure_row,
    simplify_one,
)
from symidx.core.indexing_map import IndexingMap
from symidx.core.simplify import compose, simplify
from symidx.core.syntax import parse_map

CHAIN = 64


def chain() -> list[IndexingMap]:
    """The identity, then the chain's maps from its last reshape back to its first input."""
    return [IndexingMap.identity(SHAPE), *reversed(chain_maps(CHAIN))]


def dag_and_tree_size(exprs: list[Expr]) -> tuple[int, int]:
    """(distinct sub-expressions, nodes of the tree they unfold to)."""
    size: dict[Expr, int] = {}
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

    result = compose_chain(SymidxBackend(), chain())
    assert result == IndexingMap.identity(SHAPE), result
    row = measure_row("chain", CHAIN, "reshapes", available_backends(), chain, compose_chain,
                      args.runs)
    assert not row.errors, row.errors
    times = {name: timing.median for name, timing in row.times.items()}
    t = times.pop("symidx")
    figures["chain_ms"] = t * 1e3
    print(f"1. {CHAIN}-reshape chain, simplified after every step: median {t * 1e3:.1f} ms "
          f"(ends at the identity)")
    for name, other in times.items():
        figures[f"{name}_chain_ms"] = other * 1e3
        print(f"   {name}, same chain: median {other * 1e3:.1f} ms; "
              f"symidx / {name} = {t / other:.2f}")
    if not times:
        print("   islpy and jaxlib not installed (pip install 'symidx[bench]'): no comparison")

    print("2. seed simplifier examples (median per call, fresh sympy cache):")
    for k, text in enumerate(SEED_EXAMPLES, 1):
        seed = measure_row("seed", 0, "", [SymidxBackend()],
                           lambda text=text: [parse_map(text)], simplify_one,
                           max(args.runs * 10, 50))
        assert not seed.errors, seed.errors
        ts = seed.times["symidx"].median
        figures[f"seed{k}_us"] = ts * 1e6
        print(f"   example {k}: {ts * 1e6:.0f} us  -> {simplify(parse_map(text))!s}"
              .replace("\n", " "))

    raw, *maps = chain()
    start = time.perf_counter()
    for m in maps:
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
