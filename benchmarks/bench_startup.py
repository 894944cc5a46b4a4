"""Start-up: how long whole ``symidx`` commands take, as ratios to ``import sympy``.

    python benchmarks/bench_startup.py [--runs N]

Each command runs as a fresh process, interleaved with the reference ``python -c "import
sympy"`` (A B A B ...), after one warm-up of each; the table gives each one's median wall
time and the median of the per-pair ratios, which holds when the machine's speed drifts.
Python's bytecode cache is on, as on a user's machine (the benchmark compiles the package
first and clears ``PYTHONDONTWRITEBYTECODE`` for the runs): without it every import
recompiles the source, which is not what users pay.

Targets: ``symidx --help`` at most 0.5x (issue 14), ``symidx maps`` on layernorm.hlo at
most 1.3x the reference (issue 25). Figures, never assertions. ``farm-bench`` gives the same
paired ratio from outside: ``farm-bench -n 11 --vs "python -c 'import sympy'" -- python -m
symidx maps symidx/examples/layernorm.hlo``.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "symidx" / "examples" / "layernorm.hlo"
COMMANDS = {
    "symidx --help": ["-m", "symidx", "--help"],
    "symidx --version": ["-m", "symidx", "--version"],
    "symidx maps layernorm.hlo": ["-m", "symidx", "maps", str(SAMPLE)],
    "symidx maps --all --format json": ["-m", "symidx", "maps", str(SAMPLE), "--all",
                                        "--format", "json"],
    "symidx simplify (seed example)": [
        "-m", "symidx", "simplify",
        "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]"],
}
REFERENCE = ["-c", "import sympy"]


def wall(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    compileall.compile_dir(str(ROOT / "symidx"), quiet=1)
    print(f"{'command':34} {'median s':>9} {'import sympy s':>15} {'ratio':>7}")
    for label, command in COMMANDS.items():
        wall(command, env), wall(REFERENCE, env)  # warm-up
        mine, reference, ratios = [], [], []
        for _ in range(args.runs):
            a, b = wall(command, env), wall(REFERENCE, env)
            mine.append(a)
            reference.append(b)
            ratios.append(a / b)
        print(f"{label:34} {statistics.median(mine):>9.3f} "
              f"{statistics.median(reference):>15.3f} {statistics.median(ratios):>7.2f}")


if __name__ == "__main__":
    main()
