"""The best-tiling search (``symidx tile --best``) on rank-12 contractions, in CPU time,
against its peer in the same run: the same tilings costed one at a time.

* ``rank12_contraction``: a dot with ten batch dimensions (output rank 12), 2,286,144
  candidate tilings, no constraint between them;
* ``tensor_network_rank12``: openxla/xla#41173's tensor-network contraction (two operands
  bitcast to rank 12, six contracting dimensions), extent 2 and 4: few valid tilings among
  many candidates, found per constraint group.

For each: the CPU seconds of the search, the tilings considered and valid, the pick, and
the peer's CPU seconds per tiling (a sample costed one by one with ``symidx.cost.cost``),
as the ratio of the peer's projected time to the search's.

    python benchmarks/bench_cost_search.py [--sample 300]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from symidx.cost import best, cost, fusion_tiles

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))


def cases() -> list[tuple[str, str, str]]:
    from bench_tiling import tensor_network_hlo

    data = ROOT / "tests" / "data" / "cost"
    return [("rank12_contraction", (data / "rank12_contraction.hlo").read_text(),
             "contraction"),
            ("tensor_network_rank12 (extent 2)", tensor_network_hlo(12, 2), "fusion"),
            ("tensor_network_rank12 (extent 4)", tensor_network_hlo(12, 4), "fusion")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=300)
    args = ap.parse_args(argv)
    print(f"{'fusion':36} {'considered':>11} {'valid':>9} {'search s':>9} "
          f"{'peer s/tiling':>14} {'ratio':>7}  pick")
    for name, text, fusion in cases():
        t0 = time.process_time()
        ft = fusion_tiles(text, fusion)
        res = best(ft)
        search = time.process_time() - t0
        rng = random.Random(0)
        tilings = [c.tiling for c in best(ft, top=min(args.sample, max(1, res.valid))).best]
        rng.shuffle(tilings)
        t1 = time.process_time()
        for tiling in tilings:
            cost(ft, tiling, flat=True)
        peer = (time.process_time() - t1) / max(1, len(tilings))
        ratio = peer * res.considered / max(search, 1e-9)
        print(f"{name:36} {res.considered:>11} {res.valid:>9} {search:>9.2f} "
              f"{peer:>14.5f} {ratio:>7.0f}  {res.best[0].output_tile_sizes}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
