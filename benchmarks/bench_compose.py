"""One composition step: a 3-result reshape map composed into another, on fresh expressions.

The maps are built anew for every sample and sympy's and symidx's caches are cleared, so no
work is reused between samples. Reports the median, ± half the interquartile range, in
microseconds. The step itself is :func:`symidx.bench.compose_step_maps`; ``symidx bench``
times it beside islpy and MLIR.

    python benchmarks/bench_compose.py [--samples N]
"""

from __future__ import annotations

import argparse

from symidx.bench import SymidxBackend, compose_pair, compose_step_maps, measure_row


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=300)
    args = ap.parse_args(argv)
    row = measure_row("compose step", 3, "results", [SymidxBackend()], compose_step_maps,
                      compose_pair, args.samples, warmup=20)
    assert not row.errors, row.errors
    t = row.times["symidx"]
    q1, median, q3 = (t.median - t.spread) * 1e6, t.median * 1e6, (t.median + t.spread) * 1e6
    print(f"compose one step (3-result reshape into reshape), {args.samples} fresh samples:")
    print(f"  median {median:.1f} us   (± half the IQR: {q1:.1f} .. {q3:.1f} us; "
          f"target <= 70 us)")
    return {"median_us": median, "q1_us": q1, "q3_us": q3}


if __name__ == "__main__":
    main()
