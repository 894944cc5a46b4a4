"""Reading map text: symidx's ``parse_map`` against islpy's reader of the same map.

    python benchmarks/bench_parse_map.py [--samples N]

For each of the seed's four simplifier examples, in one process and interleaved (the
engines alternate sample by sample, so both see the same machine load), CPU time of this
process (``time.process_time``), the garbage collector paused while a sample is timed:

* **parse_map**: symidx's caches cleared (:func:`symidx.core.expr.clear_caches`, untimed), then
  ``parse_map(text)`` on the example's text (results and domain).
* **isl pwma**: ``isl.PwMultiAff(text)`` on the same map written in isl's syntax with its
  domain (``print_map(m, "isl")``, made untimed): isl's parse-with-domain of an explicit
  (single-valued) map.
* **isl map**: ``isl.Map(text)`` on the same text (isl's relation reader).

Prints per example the median of each column in microseconds and the median of the
per-sample ratios parse_map / isl (target: at most 1). Figures, never assertions. Needs
islpy (``pip install islpy``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # imported, not run, it is not there
from bench_seed_gist import timed  # noqa: E402  this folder: CPU seconds, collector paused

from symidx.bench import SEED_EXAMPLES
from symidx.core.expr import clear_caches
from symidx.core.syntax import parse_map, print_map


def main(argv: list[str] | None = None) -> None:
    import islpy as isl

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=400)
    args = ap.parse_args(argv)
    print(f"{'example':8} {'parse_map us':>12} {'isl pwma us':>12} {'isl map us':>11} "
          f"{'/pwma':>6} {'/map':>6}")
    for k, text in enumerate(SEED_EXAMPLES, 1):
        theirs = print_map(parse_map(text), "isl")
        ours: list[float] = []
        pwma: list[float] = []
        rel: list[float] = []
        for _ in range(args.samples):
            clear_caches()
            ours.append(timed(partial(parse_map, text)))
            pwma.append(timed(partial(isl.PwMultiAff, theirs)))
            rel.append(timed(partial(isl.Map, theirs)))

        def us(xs: list[float]) -> float:
            return statistics.median(xs) * 1e6

        to_pwma = statistics.median(o / t for o, t in zip(ours, pwma) if t)
        to_map = statistics.median(o / t for o, t in zip(ours, rel) if t)
        print(f"seed {k:<3} {us(ours):>12.0f} {us(pwma):>12.0f} {us(rel):>11.0f} "
              f"{to_pwma:>6.2f} {to_map:>6.2f}")


if __name__ == "__main__":
    main()
