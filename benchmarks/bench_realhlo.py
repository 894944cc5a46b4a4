"""Real modules, whole: parse speed and whole-module analysis time, and how both grow.

    python benchmarks/bench_realhlo.py [DIR] [--largest N] [--all-outputs] [--png FILE]

DIR defaults to ``../shared/realhlo`` beside the project (real modules XLA ships, up to
4 MB: Llama, Mixtral, Gemma, DeepSeek and MaxText train steps, ResNet, MobileNet, ...).
For the ``N`` largest single-module files (default 12) it prints, per module, its size, its
instruction count, the parse time (best of 3, and MB/s), the validation's share of it, the
time to analyse the entry computation whole (``symidx maps --computation ENTRY``: output 0,
or every output with ``--all-outputs``) and every fusion (``--all``), each in a fresh
:class:`symidx.fusion.Analysis` with cold composition caches. Then a growth line: a
least-squares slope of log(time) against log(instructions) over those modules (1 means
linear). ``--png`` plots both times against module size (needs matplotlib).

Figures are ratios and curves from one run on one machine, never a pass/fail threshold.
"""

from __future__ import annotations

import argparse
import math
import re
import time
from pathlib import Path

from symidx._gc import gc_paused
from symidx.analysis import computation_maps, module_fusion_maps
from symidx.fusion import Analysis
from symidx.hlo import parse_hlo
from symidx.hlo.validate import validate_module

DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "realhlo"


def single_modules(folder: Path) -> list[Path]:
    """Files holding one module (no ``// -----`` splits), largest first."""
    found = []
    for path in folder.glob("*.hlo"):
        text = path.read_text(errors="replace")
        if re.search(r"^// -----", text, re.M) is None:
            found.append(path)
    return sorted(found, key=lambda p: -p.stat().st_size)


def best_of(fn, repeats: int = 3) -> float:  # noqa: ANN001
    best = math.inf
    for _ in range(repeats):
        with gc_paused():
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
    return best


def measure(path: Path, all_outputs: bool) -> dict[str, float | int | str]:
    text = path.read_text()
    module = parse_hlo(text, source=path.name)
    parse = best_of(lambda: parse_hlo(text, validate=False))
    validate = best_of(lambda: validate_module(module))
    instructions = sum(len(c.instructions) for c in module.computations.values())
    start = time.perf_counter()
    computation_maps(module.entry, "output_to_input", output=None if all_outputs else 0,
                     analysis=Analysis())
    entry = time.perf_counter() - start
    start = time.perf_counter()
    fusions = module_fusion_maps(module, "output_to_input", analysis=Analysis())
    every_fusion = time.perf_counter() - start
    return {"module": path.name, "kib": len(text) // 1024, "instructions": instructions,
            "parse": parse, "mb_s": len(text) / 1e6 / parse, "validate": validate,
            "entry": entry, "fusions": len(fusions), "all": every_fusion}


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log y against log x."""
    lx, ly = [math.log(x) for x in xs], [math.log(max(y, 1e-6)) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    var = sum((x - mx) ** 2 for x in lx)
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly)) / var if var else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--largest", type=int, default=12)
    ap.add_argument("--all-outputs", action="store_true")
    ap.add_argument("--png")
    args = ap.parse_args()
    if not args.folder.is_dir():
        raise SystemExit(f"no folder {args.folder} (give the realhlo folder as an argument)")
    rows = [measure(p, args.all_outputs) for p in single_modules(args.folder)[:args.largest]]
    header = (f"{'module':58} {'KiB':>6} {'instrs':>7} {'parse s':>8} {'MB/s':>6} "
              f"{'valid %':>7} {'entry s':>8} {'fusions':>7} {'--all s':>8}")
    print(header)
    for r in rows:
        print(f"{str(r['module'])[:58]:58} {r['kib']:>6} {r['instructions']:>7} "
              f"{r['parse']:>8.2f} {r['mb_s']:>6.1f} "
              f"{100 * float(r['validate']) / float(r['parse']):>7.0f} {r['entry']:>8.2f} "
              f"{r['fusions']:>7} {r['all']:>8.2f}")
    sizes = [float(r["instructions"]) for r in rows]
    print(f"growth (log-log slope against instructions): parse "
          f"{slope(sizes, [float(r['parse']) for r in rows]):.2f}, whole entry "
          f"{slope(sizes, [float(r['entry']) for r in rows]):.2f}")
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        ax.loglog(sizes, [r["parse"] for r in rows], "o", label="parse")
        ax.loglog(sizes, [r["entry"] for r in rows], "s", label="whole entry")
        ax.set_xlabel("instructions")
        ax.set_ylabel("seconds")
        ax.set_title("real modules: parse and whole-module analysis")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.png, dpi=120)
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
