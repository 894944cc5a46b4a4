"""Equality decisions, in process: the pairs users bring (a digit extraction over 10^12
points, a tile decomposition and its rewrite, identical maps over 4·10^8 points) and reshape
round trips ``[k,k,k] -> [k*k/2, 2k] -> [k,k,k]`` against the identity at 10^3 .. 10^12
points, equal and with a wrong way back. Prints each verdict with its median and worst time
over a few runs, then the median over all pairs. The target: every pair under 1 s, the
median under 10 ms.

    python benchmarks/bench_verify.py [--runs N] [--method auto|enumerate|smt|isl]
"""

from __future__ import annotations

import argparse
import statistics
import time

from symidx import IndexingMap, parse_map
from symidx.bench import round_trip_pair
from symidx.core.verify import Undecided, decide

BOX3 = "domain: d0 in [0, 999999], d1 in [0, 999], d2 in [0, 999]"
TILES = "domain: d0 in [0, 999999], d1 in [0, 127]"
TILE = "(d0, d1) -> ((d0 * 128 + d1) floordiv 96, {middle}, d1 mod 32), " + TILES


def pairs() -> dict[str, tuple[IndexingMap, IndexingMap]]:
    """The pairs, by name (``=`` equal, ``!=`` different)."""
    digits = parse_map("(d0, d1, d2) -> (((d0 * 1000000 + d1 * 1000 + d2) floordiv 1000) "
                       f"mod 1000), {BOX3}")
    tile = parse_map(TILE.format(middle="((d0 * 128 + d1) mod 96) floordiv 32"))
    big = "(d0, d1) -> (d0 * 20000 + d1), domain: d0 in [0, 19999], d1 in [0, 19999]"
    found = {
        "digits =": (digits, parse_map(f"(d0, d1, d2) -> (d1), {BOX3}")),
        "digits !=": (digits, parse_map(f"(d0, d1, d2) -> (d2), {BOX3}")),
        "tiles =": (tile, parse_map(TILE.format(middle="(d0 * 4 + d1 floordiv 32) mod 3"))),
        "tiles !=": (tile, parse_map(TILE.format(middle="(d0 * 4 + d1 floordiv 32) mod 4"))),
        "identical 4e8": (parse_map(big), parse_map(big)),
    }
    for k in (10, 100, 1000, 10000):
        found[f"round trip 1e{len(str(k**3)) - 1} ="] = tuple(round_trip_pair(k))
        found[f"round trip 1e{len(str(k**3)) - 1} !="] = tuple(round_trip_pair(k, wrong=True))
    return found  # type: ignore[return-value]


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--method", default="auto")
    args = ap.parse_args(argv)
    medians = {}
    for name, (a, b) in pairs().items():
        times, answer = [], ""
        for _ in range(args.runs):
            start = time.perf_counter()
            try:
                answer = decide(a, b, method=args.method).describe()
            except Undecided as e:
                answer = str(e)
            times.append(time.perf_counter() - start)
        medians[name] = statistics.median(times)
        print(f"{name:22s} {statistics.median(times) * 1e3:8.2f} ms (worst "
              f"{max(times) * 1e3:7.2f} ms)  {answer[:70]}")
    overall = statistics.median(medians.values())
    print(f"median over {len(medians)} pairs: {overall * 1e3:.2f} ms; slowest "
          f"{max(medians.values()) * 1e3:.2f} ms")
    return {"median_ms": overall * 1e3, "slowest_ms": max(medians.values()) * 1e3}


if __name__ == "__main__":
    main()
