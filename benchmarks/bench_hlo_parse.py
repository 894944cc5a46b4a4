"""HLO parse speed: symidx's reader against XLA's parser on the same text, in one process.

    python benchmarks/bench_hlo_parse.py [DIR] [--largest 17] [--repeats 3] [--synthetic]

For each of the ``--largest`` biggest ``.hlo`` files in DIR (default ``../shared/realhlo``
next to the repository), the text is read into memory once; then, ``--repeats`` times,
symidx's ``parse_hlo(text, validate=False)`` and XLA's ``hlo_module_from_text(text)``
(jaxlib's ``jaxlib._hlo``) run one after the other (interleaved, equal work: both parse the
same string from memory into a module). Neither verifies: XLA's binding calls
``ParseAndReturnUnverifiedModule``, and ``validate=False`` skips symidx's verifier (symidx
still checks operand counts, as XLA's parser does). symidx compiles its one-match patterns
on the first text of 50k characters or more (about 15 ms, once a process): the best of the
repeats leaves that out, as it leaves out XLA's loading. The best time of each is kept; the table
gives MB/s (10^6 characters per CPU second), the ratio symidx / XLA speed and the ratio of
their times. ``--validate`` times symidx's ``parse_hlo(text)`` with its verifier (what
``symidx maps`` runs; issue 36's target: at most 1.5x XLA's parser time on the six largest
modules, ``--largest 6 --validate``).
Without jaxlib the XLA columns are left empty. ``--synthetic`` adds the older table of
synthetic modules of growing size (time per instruction should stay flat). Figures, never
assertions.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from symidx.hlo import parse_hlo

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = ROOT.parent / "shared" / "realhlo"
SIZES = (1_000, 2_000, 5_000, 10_000)


def synthetic_module(n_instructions: int) -> str:
    """A module whose entry computation has ``n_instructions`` instructions in the style of a
    compiled JAX dump (layouts, metadata on every line): a chain cycling through elementwise
    ops, broadcasts, a slice and a reduce, binary ops also reading the parameter. Plus a
    3-instruction reducer computation."""
    lines = [
        "HloModule synthetic, entry_computation_layout={(f32[64,128]{1,0})->f32[64,128]{1,0}}",
        "",
        "%add (a: f32[], b: f32[]) -> f32[] {",
        "  %a = f32[] parameter(0)",
        "  %b = f32[] parameter(1)",
        "  ROOT %s = f32[] add(%a, %b)",
        "}",
        "",
        "ENTRY %main (p: f32[64,128]) -> f32[64,128] {",
        '  %v0 = f32[64,128]{1,0} parameter(0), metadata={op_name="p"}',
        "  %zero = f32[] constant(0)",
    ]
    matrix, vector = "f32[64,128]{1,0}", "f32[64]{0}"
    steps = (
        (matrix, "add({prev}, %v0)"),
        (matrix, "multiply({prev}, %v0)"),
        (matrix, "broadcast(%zero), dimensions={{}}"),
        (matrix, "slice({prev}), slice={{[0:64:1], [0:128:1]}}"),
        (vector, "reduce({prev}, %zero), dimensions={{1}}, to_apply=%add"),
        (matrix, "broadcast({prev}), dimensions={{0}}"),
        (matrix, "exponential({prev})"),
        (matrix, "subtract({prev}, %v0)"),
    )
    for i in range(1, n_instructions - 2):
        shape, op = steps[(i - 1) % len(steps)]
        meta = f'metadata={{op_name="jit(f)/op{i}" source_file="f.py" source_line={i}}}'
        lines.append(f"  %v{i} = {shape} {op.format(prev=f'%v{i - 1}')}, {meta}")
    lines.append(f"  ROOT %out = {matrix} negate(%v{n_instructions - 3})")
    lines.append("}")
    return "\n".join(lines) + "\n"


def timed(parse: Callable[[str], Any], text: str) -> float:
    """CPU seconds of this process for one parse (freeing the result is not timed). CPU time,
    not wall time: other processes on the machine do not count (both parsers run on this
    thread)."""
    gc.collect()
    start = time.process_time()
    module = parse(text)
    seconds = time.process_time() - start
    del module
    return seconds


def xla_parser() -> Callable[[str], Any] | None:
    """jaxlib's ``hlo_module_from_text`` (XLA's parser, unverified), or None without jaxlib."""
    try:
        from jaxlib import _hlo  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _hlo.hlo_module_from_text  # type: ignore[no-any-return]


def mine(text: str) -> object:
    return parse_hlo(text, validate=False)


def mine_validated(text: str) -> object:
    return parse_hlo(text)


def real_table(directory: Path, largest: int, repeats: int, validate: bool = False) -> None:
    files = sorted(directory.glob("*.hlo"), key=lambda p: p.stat().st_size, reverse=True)
    xla = xla_parser()
    print(f"XLA parser: {'jaxlib._hlo.hlo_module_from_text' if xla else 'not installed'}; "
          f"best of {repeats}, interleaved; symidx {'with' if validate else 'without'} "
          f"its verifier")
    ours_parse = mine_validated if validate else mine
    print(f"{'module':<64} {'MB':>6} {'symidx MB/s':>11} {'XLA MB/s':>9} {'ratio':>6} "
          f"{'time x':>6}")
    ratios = []
    for path in files[:largest]:
        text = path.read_text()
        mb = len(text) / 1e6
        ours, theirs = [], []
        for _ in range(repeats):
            ours.append(timed(ours_parse, text))
            if xla is not None:
                theirs.append(timed(xla, text))
        name = path.stem[-64:]
        speed = mb / min(ours)
        if xla is None:
            print(f"{name:<64} {mb:>6.2f} {speed:>11.2f}")
            continue
        xla_speed = mb / min(theirs)
        ratios.append(speed / xla_speed)
        print(f"{name:<64} {mb:>6.2f} {speed:>11.2f} {xla_speed:>9.2f} {ratios[-1]:>6.2f} "
              f"{1 / ratios[-1]:>6.2f}")
    if ratios:
        times = [1 / r for r in ratios]
        print(f"ratio symidx/XLA speed: min {min(ratios):.2f}, "
              f"median {statistics.median(ratios):.2f}, max {max(ratios):.2f} (target >= 0.5); "
              f"time symidx/XLA: median {statistics.median(times):.2f}, max {max(times):.2f}")


def synthetic_table() -> None:
    print(f"{'input':<24} {'instructions':>12} {'KiB':>8} {'ms':>9} {'us/instr':>9}")
    for n in SIZES:
        text = synthetic_module(n)
        seconds = min(timed(parse_hlo, text) for _ in range(3))
        print(f"{f'synthetic {n}':<24} {n:>12} {len(text) / 1024:>8.1f} {seconds * 1e3:>9.2f} "
              f"{seconds * 1e6 / n:>9.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory", nargs="?", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--largest", type=int, default=17)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--validate", action="store_true",
                    help="time symidx's parse with its verifier (as symidx maps runs it)")
    args = ap.parse_args()
    if args.directory.is_dir():
        real_table(args.directory, args.largest, args.repeats, args.validate)
    else:
        print(f"{args.directory}: no such directory; skipping the real modules")
    if args.synthetic:
        synthetic_table()


if __name__ == "__main__":
    main()
