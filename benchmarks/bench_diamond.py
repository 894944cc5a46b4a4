"""Depth against cost: the reverse-and-rotate diamond of issue 35, as deep as asked.

    python benchmarks/bench_diamond.py [--depths 10,20,50,100,200,400] [--size 64]
        [--png diamond.png]

Each level of the module is ``x{k+1} = add(reverse(x{k}), concatenate(slice(x{k},
[1:N]), slice(x{k}, [0:1])))`` (``tests/diamond.py``): the number of paths from the root to
the parameter doubles at every level, and the rotation splits the domain of the maps it
reads through into pieces (one per point, after a few levels). For each depth, the CPU
seconds of this process (:func:`time.process_time`) that ``symidx maps FILE --computation
ENTRY`` spends on the analysis (parsing apart), the most distinct maps held at once (what
memory grows with) and whether the answer is exact or a labelled bounding box; then the
CPU seconds per level, which stays flat when the cost grows linearly with the depth.

Before the bounding box held maps with different domains, 200 levels of ``f32[64]`` ran
for more than 280 s of CPU without an answer (thousands of point pieces per instruction);
the sets now stay near the bound (:data:`symidx.fusion.sets.HULL_LIMIT`). Figures, never
assertions; the plot (log-log, CPU seconds against depth) needs matplotlib.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from diamond import diamond  # noqa: E402

from symidx.analysis import computation_maps  # noqa: E402
from symidx.fusion import Analysis, Limits  # noqa: E402
from symidx.hlo import parse_hlo  # noqa: E402


class _Peak(Limits):
    """Limits (none) that remember the most distinct maps held at once."""

    __slots__ = ("peak",)

    def __init__(self) -> None:
        super().__init__()
        self.peak = 0

    def charge(self, added: int | bool = 0, work: int = 1) -> None:
        super().charge(added, work)
        self.peak = max(self.peak, self.held)


def measure(depth: int, size: int) -> tuple[float, int, str]:
    """(CPU seconds of the analysis, most maps held at once, exact or boxed)."""
    module = parse_hlo(diamond(depth, size))
    analysis = Analysis()
    analysis.limits = peak = _Peak()
    start = time.process_time()
    (record,) = computation_maps(module.entry, "output_to_input", analysis=analysis)
    seconds = time.process_time() - start
    opaque = record.groups[0].opaque
    return seconds, peak.peak, "exact" if opaque is None else "boxed"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depths", default="10,20,50,100,200,400",
                    help="levels of the diamond, comma-separated")
    ap.add_argument("--size", type=int, default=64, help="elements of each value (f32[N])")
    ap.add_argument("--png", help="write the scaling curve there (needs matplotlib)")
    args = ap.parse_args(argv)
    depths = [int(d) for d in args.depths.split(",")]
    print(f"reverse-and-rotate diamond, f32[{args.size}]: CPU seconds of the analysis")
    print(f"{'depth':>6} {'cpu s':>8} {'ms/level':>9} {'peak maps':>10}  answer")
    rows = []
    for depth in depths:
        seconds, peak, answer = measure(depth, args.size)
        rows.append((depth, seconds))
        print(f"{depth:>6} {seconds:>8.2f} {1000 * seconds / depth:>9.1f} {peak:>10}  {answer}",
              flush=True)
    if args.png:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(6, 4), dpi=100)
        ax = fig.subplots()
        ax.plot([d for d, _ in rows], [s for _, s in rows], "o-", label="symidx")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("levels of the diamond")
        ax.set_ylabel("CPU seconds of the analysis")
        ax.set_title(f"Reverse-and-rotate diamond, f32[{args.size}]")
        ax.grid(True, which="major", alpha=0.3)
        fig.tight_layout()
        fig.savefig(args.png)
        print(f"plot written to {args.png}")


if __name__ == "__main__":
    main()
