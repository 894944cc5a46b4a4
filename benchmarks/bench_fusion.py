"""Fusion analysis cost (SPEC §5): one sweep, a set of distinct maps per instruction.

1. **diamond ladder** -- N diamonds ``x -> (transpose(transpose(x)), negate(x)) -> add``:
   2^N paths from the root to the parameter, one distinct map per instruction. The sweep's
   time must grow linearly in N; N = 40 must take under a second.
2. **elementwise chain** -- N unary elementwise ops in a row.
3. **attention sample** -- the operand maps of every fusion (every output) of the compiled
   JAX attention sample (``tests/data/hlo/attention.compiled.hlo``), in total.

Each figure is the median of ``--runs`` runs, each on a freshly parsed module with every
cache cleared (:func:`symidx.core.expr.clear_caches`), so no work is reused. Prints a table and
writes a plot of time against size (``benchmarks/fusion_scaling.png``, copied to
``docs/fusion_scaling.png``; needs matplotlib).

    python benchmarks/bench_fusion.py [--runs N] [--no-plot]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from symidx.analysis import instruction_maps
from symidx.core.expr import clear_caches
from symidx.hlo import HloModule, fusion_instructions, parse_hlo
from symidx.ops import num_outputs

ROOT = Path(__file__).resolve().parent.parent
ATTENTION = ROOT / "tests" / "data" / "hlo" / "attention.compiled.hlo"
PLOT = ROOT / "benchmarks" / "fusion_scaling.png"
DOCS_PLOT = ROOT / "docs" / "fusion_scaling.png"
LADDER_SIZES = (5, 10, 20, 40, 80, 160)
CHAIN_SIZES = (25, 50, 100, 200, 400)
UNARY = ("negate", "exponential", "tanh", "abs")


def fusion_module(body: list[str], shape: str = "f32[16,32]") -> str:
    """A module whose entry root fuses ``body`` (its last line becomes the root)."""
    body = body[:-1] + ["  ROOT " + body[-1].strip()]
    return "\n".join(["HloModule bench", "", "fused {", f"  x0 = {shape} parameter(0)", *body,
                      "}", "", "ENTRY e {", f"  p = {shape} parameter(0)",
                      f"  ROOT fusion = {shape} fusion(p), kind=kLoop, calls=fused", "}", ""])


def ladder(diamonds: int) -> str:
    """``diamonds`` diamonds: two branches that compose to the same map, so every level
    keeps one map while the number of paths doubles."""
    body = []
    for i in range(diamonds):
        body += [f"  t{i} = f32[32,16] transpose(x{i}), dimensions={{1,0}}",
                 f"  a{i} = f32[16,32] transpose(t{i}), dimensions={{1,0}}",
                 f"  b{i} = f32[16,32] negate(x{i})",
                 f"  x{i + 1} = f32[16,32] add(a{i}, b{i})"]
    return fusion_module(body)


def chain(length: int) -> str:
    return fusion_module([f"  x{i + 1} = f32[16,32] {UNARY[i % len(UNARY)]}(x{i})"
                          for i in range(length)])


def all_fusion_maps(module: HloModule) -> int:
    """The operand maps of every fusion of the module (every output); how many maps."""
    count = 0
    for fusion in fusion_instructions(module):
        for output in range(num_outputs(fusion)):
            count += sum(len(g.maps) for g in instruction_maps(fusion, "output_to_input",
                                                               output=output))
    return count


def root_maps(module: HloModule) -> int:
    return sum(len(g.maps) for g in instruction_maps(module.entry.root, "output_to_input"))


def median_time(text: str, work: Callable[[HloModule], int], runs: int) -> tuple[float, int]:
    """Median seconds of ``work`` on a fresh parse of ``text`` with cold caches, and what
    it returned."""
    times, result = [], 0
    for _ in range(runs):
        module = parse_hlo(text)
        clear_caches()
        start = time.perf_counter()
        result = work(module)
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)

    ladder_rows = [(n, *median_time(ladder(n), root_maps, args.runs)) for n in LADDER_SIZES]
    chain_rows = [(n, *median_time(chain(n), root_maps, args.runs)) for n in CHAIN_SIZES]
    attention, attention_maps = median_time(ATTENTION.read_text(), all_fusion_maps, args.runs)
    fusions = len(fusion_instructions(parse_hlo(ATTENTION.read_text())))

    print(f"{'case':<22}{'size':>6}{'maps':>6}{'time (ms)':>12}{'ms per unit':>13}")
    for case, rows in (("diamond ladder", ladder_rows), ("elementwise chain", chain_rows)):
        for n, seconds, maps in rows:
            print(f"{case:<22}{n:>6}{maps:>6}{seconds * 1e3:>12.2f}{seconds * 1e3 / n:>13.3f}")
    print(f"{'attention fusions':<22}{fusions:>6}{attention_maps:>6}{attention * 1e3:>12.2f}")
    per_diamond = [seconds / n for n, seconds, _ in ladder_rows]
    print(f"ladder: {2 ** 40} paths at N = 40 in "
          f"{dict((n, s) for n, s, _ in ladder_rows)[40]:.3f} s; time per diamond from "
          f"{min(per_diamond) * 1e3:.2f} to {max(per_diamond) * 1e3:.2f} ms (linear in N)")
    if not args.no_plot:
        plot(ladder_rows, chain_rows, attention, fusions)
        print(f"plot: {PLOT.relative_to(ROOT)} (and {DOCS_PLOT.relative_to(ROOT)})")
    return {"ladder": ladder_rows, "chain": chain_rows, "attention_s": attention}


def plot(ladder_rows: list[tuple[int, float, int]], chain_rows: list[tuple[int, float, int]],
         attention: float, fusions: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for label, rows, style in (("diamond ladder (N diamonds, 2^N paths)", ladder_rows, "o-"),
                               ("elementwise chain (N ops)", chain_rows, "s-")):
        ax.plot([n for n, _, _ in rows], [s for _, s, _ in rows], style, label=label)
    ax.axhline(attention, color="gray", linestyle=":",
               label=f"attention sample: all {fusions} fusions")
    ax.set_xlabel("N")
    ax.set_ylabel("seconds (median, cold caches)")
    ax.set_title("symidx fusion sweep: time against size")
    ax.grid(True, alpha=0.3)
    top = max(s for rows in (ladder_rows, chain_rows) for _, s, _ in rows)
    ax.set_ylim(0, 1.45 * top)  # room for the legend above the data
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(PLOT, dpi=110)
    plt.close(fig)
    shutil.copyfile(PLOT, DOCS_PLOT)


if __name__ == "__main__":
    main()
