"""The seed's four simplifier examples: symidx's ``simplify`` against islpy's ``gist``.

    python benchmarks/bench_seed_gist.py [--samples N]

Equal work, both sides parsed outside the timing, CPU time of this process. Each sample,
for each example, in one process and interleaved (the two engines alternate, so both see
the same machine load):

* **symidx** column: caches cleared (:func:`symidx.core.expr.clear_caches`) and the map parsed
  from its text (both untimed); the time of ``simplify(m)`` alone.
* **isl gist** column: the same map's text (results and domain, as ``isl_text`` writes it)
  read into an ``isl.Map`` and its domain box into an ``isl.Set``, fresh objects each
  sample (both untimed); the time of ``map.gist_domain(box)`` alone.

Neither column includes parsing: isl's reader is not timed, just as symidx's is not.
Prints, per example, the median of each column in microseconds and the median of the
per-sample ratios symidx / isl (at most 1: symidx takes no more time than isl). The
garbage collector is paused while a sample is timed, on both sides. Needs islpy
(``pip install islpy``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial

from symidx._gc import gc_paused
from symidx.bench import SEED_EXAMPLES
from symidx.core.expr import clear_caches
from symidx.core.simplify import simplify
from symidx.core.syntax import parse_map
from symidx.core.verify import isl_text


def timed(fn: Callable[[], object]) -> float:
    """CPU seconds of this process ``fn()`` takes (not wall time: other processes on the
    machine do not count), the garbage collector paused."""
    with gc_paused():
        start = time.process_time()
        fn()
        return time.process_time() - start


def main(argv: list[str] | None = None) -> None:
    import islpy as isl

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=400)
    args = ap.parse_args(argv)
    print("symidx = simplify(m), m parsed untimed; isl gist = Map.gist_domain(box), the "
          "same map and its box read untimed")
    print(f"{'example':8} {'symidx us':>10} {'isl gist us':>12} {'ratio':>6}")
    for k, text in enumerate(SEED_EXAMPLES, 1):
        m = parse_map(text)
        names = ", ".join(f"d{i}" for i in range(m.num_dims))
        limits = " and ".join(f"{b.lo} <= d{i} <= {b.hi}" for i, b in enumerate(m.dims))
        box = f"{{ [{names}] : {limits} }}"
        same_map = isl_text(m)
        ours: list[float] = []
        gist: list[float] = []
        for _ in range(args.samples):
            clear_caches()
            fresh = parse_map(text)  # parsed, untimed
            ours.append(timed(partial(simplify, fresh)))
            relation, domain = isl.Map(same_map), isl.Set(box)  # parsed, untimed
            gist.append(timed(partial(relation.gist_domain, domain)))

        def us(xs: list[float]) -> float:
            return statistics.median(xs) * 1e6

        ratio = statistics.median(o / g for o, g in zip(ours, gist))
        print(f"seed {k:<3} {us(ours):>10.0f} {us(gist):>12.0f} {ratio:>6.2f}")


if __name__ == "__main__":
    main()
