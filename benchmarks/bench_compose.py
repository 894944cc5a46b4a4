"""One composition step: a 3-result reshape map composed into another, on fresh expressions.

The maps are built anew for every sample and sympy's and symidx's caches are cleared, so no work is
reused between samples. Reports the median and the quartiles, in microseconds.

    python benchmarks/bench_compose.py [--samples N]
"""

from __future__ import annotations

import argparse
import statistics
import time

from symidx.expr import FloorDiv, Mod, clear_caches, dim
from symidx.indexing_map import IndexingMap, compose


def reshape_map(out_shape: list[int], in_shape: list[int]) -> IndexingMap:
    """Output-to-input map of reshape out_shape <- in_shape (linearise, delinearise)."""
    linear = 0
    for i, n in enumerate(out_shape):
        linear = linear * n + dim(i)
    results, stride = [], 1
    for n in reversed(in_shape):
        results.append(Mod(FloorDiv(linear, stride), n))
        stride *= n
    return IndexingMap.create(out_shape, list(reversed(results)))


def one_step() -> float:
    clear_caches()
    first = reshape_map([10, 10, 10], [50, 20])    # [10,10,10] index -> [50,20] index
    second = reshape_map([50, 20], [10, 10, 10])   # [50,20] index -> [10,10,10] index
    start = time.perf_counter()
    compose(first, second)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=300)
    args = ap.parse_args(argv)
    for _ in range(20):  # warm up imports and code paths
        one_step()
    times = sorted(one_step() * 1e6 for _ in range(args.samples))
    q1, median, q3 = statistics.quantiles(times, n=4)
    print(f"compose one step (3-result reshape into reshape), {args.samples} fresh samples:")
    print(f"  median {median:.1f} us   (quartiles {q1:.1f} .. {q3:.1f} us; target <= 70 us)")
    return {"median_us": median, "q1_us": q1, "q3_us": q3}


if __name__ == "__main__":
    main()
