"""Start-up: how long whole ``symidx`` commands take, as ratios to ``import sympy``.

    python benchmarks/bench_startup.py [--runs N]

Each command runs as a fresh process, interleaved with the reference ``python -c "import
sympy"`` (A B A B ...), after one warm-up of each; the table gives each one's median CPU
time (user + system of the finished child, ``resource.getrusage(RUSAGE_CHILDREN)``; never
wall time) and the median of the per-pair ratios, which holds when the machine's speed
drifts.
Python's bytecode cache is on, as on a user's machine (the benchmark compiles the package
first and clears ``PYTHONDONTWRITEBYTECODE`` for the runs): without it every import
recompiles the source, which is not what users pay. Each run is the whole process, its exit
included: a ``symidx`` process freezes its garbage collector before exiting (``main_entry``),
so that the interpreter's last collections do not traverse sympy's objects and its own,
while ``python -c "import sympy"`` pays them (about a fifth of its time).

Targets: ``symidx --help`` at most 0.5x (issue 14), ``symidx maps`` on layernorm.hlo at
most 1.3x the reference (issues 25 and 36). Figures, never assertions. The same paired
ratio can be taken from outside with public tools: ``/usr/bin/time -f "%U %S"`` on each
command of the pair, in turn.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
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


def cpu(args: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one run of ``python ARGS`` and of what it waited
    for: the operating system's accounting of the finished child, not wall time (other
    processes on the machine do not count)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, *args], env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    compileall.compile_dir(str(ROOT / "symidx"), quiet=1)
    print(f"{'command':34} {'median CPU s':>12} {'import sympy s':>15} {'ratio':>7}")
    for label, command in COMMANDS.items():
        cpu(command, env), cpu(REFERENCE, env)  # warm-up
        mine, reference, ratios = [], [], []
        for _ in range(args.runs):
            a, b = cpu(command, env), cpu(REFERENCE, env)
            mine.append(a)
            reference.append(b)
            ratios.append(a / b)
        print(f"{label:34} {statistics.median(mine):>12.3f} "
              f"{statistics.median(reference):>15.3f} {statistics.median(ratios):>7.2f}")


if __name__ == "__main__":
    main()
