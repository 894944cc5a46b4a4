"""One composition step: a 3-result reshape map composed into another, on fresh expressions.

The maps are built anew for every sample and sympy's and symidx's caches are cleared, so no work is
reused between samples. Reports the median and the quartiles, in microseconds. The step itself is
:func:`symidx.bench.compose_step_maps`; ``symidx bench`` times it beside islpy and MLIR.

    python benchmarks/bench_compose.py [--samples N]
"""

from __future__ import annotations

import argparse
import statistics

from symidx.bench import SymidxBackend, compose_pair, compose_step_maps, sample_times


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=300)
    args = ap.parse_args(argv)
    times = sample_times(SymidxBackend(), compose_step_maps, compose_pair, args.samples + 20)
    assert times is not None
    q1, median, q3 = statistics.quantiles(sorted(t * 1e6 for t in times[20:]), n=4)
    print(f"compose one step (3-result reshape into reshape), {args.samples} fresh samples:")
    print(f"  median {median:.1f} us   (quartiles {q1:.1f} .. {q3:.1f} us; target <= 70 us)")
    return {"median_us": median, "q1_us": q1, "q3_us": q3}


if __name__ == "__main__":
    main()
