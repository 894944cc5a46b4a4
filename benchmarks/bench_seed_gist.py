"""The seed's four simplifier examples: symidx's ``simplify`` against islpy's ``gist``.

    python benchmarks/bench_seed_gist.py [--samples N]

Each sample, for each example, in one process and interleaved so that both see the same
machine load:

* symidx: caches cleared (:func:`symidx.expr.clear_caches`) and the map parsed afresh
  (untimed), then ``simplify`` (timed);
* islpy, fresh objects read from text (untimed), then ``gist_domain`` against the box of
  the dimension intervals (timed), in two forms: (a) the map of the results alone (what
  symidx's simplify starts from: expressions to simplify under the intervals); (b) the map
  as read with its own domain (isl has then already normalised the relation while reading
  it, so its gist has less left to do).

Prints the medians and the median of the per-sample ratios symidx / islpy (below 1: symidx
faster). Needs islpy (``pip install islpy``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial

from symidx._gc import gc_paused
from symidx.bench import SEED_EXAMPLES
from symidx.expr import clear_caches
from symidx.indexing_map import IndexingMap
from symidx.simplify import simplify
from symidx.syntax import parse_map
from symidx.verify import isl_text


def timed(fn: Callable[[], object]) -> float:
    with gc_paused():
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    import islpy as isl

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=400)
    args = ap.parse_args(argv)
    print(f"{'example':8} {'symidx us':>10} {'gist (a) us':>12} {'ratio':>6} "
          f"{'gist (b) us':>12} {'ratio':>6}")
    for k, text in enumerate(SEED_EXAMPLES, 1):
        m = parse_map(text)
        names = ", ".join(f"d{i}" for i in range(m.num_dims))
        limits = " and ".join(f"{b.lo} <= d{i} <= {b.hi}" for i, b in enumerate(m.dims))
        box = f"{{ [{names}] : {limits} }}"
        results_only = isl_text(IndexingMap.create([(-10**9, 10**9)] * m.num_dims, m.results))
        with_domain = isl_text(m)
        ours: list[float] = []
        gist_a: list[float] = []
        gist_b: list[float] = []
        for _ in range(args.samples):
            clear_caches()
            fresh = parse_map(text)
            ours.append(timed(partial(simplify, fresh)))
            gist_a.append(timed(partial(isl.Map(results_only).gist_domain, isl.Set(box))))
            gist_b.append(timed(partial(isl.Map(with_domain).gist_domain, isl.Set(box))))

        def us(xs: list[float]) -> float:
            return statistics.median(xs) * 1e6

        ratio_a = statistics.median(o / g for o, g in zip(ours, gist_a))
        ratio_b = statistics.median(o / g for o, g in zip(ours, gist_b))
        print(f"seed {k:<3} {us(ours):>10.0f} {us(gist_a):>12.0f} {ratio_a:>6.2f} "
              f"{us(gist_b):>12.0f} {ratio_b:>6.2f}")


if __name__ == "__main__":
    main()
