"""``symidx tile``: the symbolic tile of a map, or the tiling of a fusion.

    symidx tile "<map>" [--format json|text]
    symidx tile FILE.hlo [--fusion NAME] [--sizes A,B,..] [--assume-satisfied]
                [--schedule major-to-minor|transposed-dot]
                [--valid-tilings [--count] [--limit N]] [--space] [--check] [--smem BYTES]
                [--propagate input|output --instruction NAME --operand K --input-tile T]
    symidx tile FILE.hlo --fusion NAME --cost|--best|--emitter|--flops-per-element ...
                (XLA's tiled GPU cost model: see symidx.cli.tile_cost)

The contract the tiling scoreboard runs is ../shared/conformance/TILING.md; the JSON
documents follow ``symidx/schemas/tiles-1.json``. A refusal (no tile, a tiling that
violates the constraints) exits 2 with the reason on stderr; a limit hit exits 3.
"""

from __future__ import annotations

import argparse
import os
import sys

from symidx.cli import tile_classic, tile_cost
from symidx.cli.common import UsageError, read_map
from symidx.cli.tile_emit import emit


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("tile", help="the symbolic tile of a map, or the tiling of a fusion",
                       description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("input", help="a map in XLA's text, or an HLO file (- for stdin)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text (default) or json (the symidx.tiles/1 document)")
    p.add_argument("--fusion", help="the fusion instruction of the entry computation to tile "
                                    "(default: the entry computation is the fusion)")
    p.add_argument("--sizes", help="a tiling: comma-separated tile sizes in parameter order")
    p.add_argument("--schedule", choices=("major-to-minor", "transposed-dot"),
                   help="with --sizes: how program ids walk the tiles (default major-to-minor; "
                        "transposed-dot: a dot root's m dimension fastest)")
    p.add_argument("--assume-satisfied", action="store_true",
                   help="with --sizes: do not check the tile-size constraints (XLA's "
                        "constraints_are_known_satisfied); a concatenate whose operands are "
                        "not whole tiles along the cut is still refused, as XLA refuses it")
    p.add_argument("--valid-tilings", action="store_true",
                   help="the tilings (powers of two and the full size per parameter) that "
                        "satisfy the constraints; with --device: each with its cost on that "
                        "device, cheapest first (ties in XLA's order)")
    p.add_argument("--count", action="store_true", help="with --valid-tilings: count only")
    p.add_argument("--limit", type=int, default=100_000,
                   help="with --valid-tilings: most tilings listed (default 100000; with "
                        "--device the cheapest)")
    p.add_argument("--space", action="store_true", help="the experimental tiling-space view")
    p.add_argument("--propagate", choices=("input", "output"),
                   help="the tiling-space view (--space) of one step: carry --input-tile "
                        "through --instruction, from its output to its operands (input) or "
                        "from operand --operand to its outputs (output)")
    p.add_argument("--instruction", metavar="NAME",
                   help="with --propagate: the instruction of the fused computation to "
                        "propagate through")
    p.add_argument("--operand", type=int, default=0, metavar="K",
                   help="with --propagate output: the operand the tile is of (default 0)")
    p.add_argument("--input-tile", metavar="TILE",
                   help="with --propagate: the tile, root:R (the space's tile of root R) or a "
                        "JSON object of offsets, sizes, strides and upper_bounds over tid_i, "
                        "ts_i and rt_i")
    p.add_argument("--check", action="store_true",
                   help="with --sizes: prove that the tiles cover what each operand map reads")
    p.add_argument("--smem", type=int,
                   help="a shared-memory budget in bytes: what one block keeps live at once, "
                        "the tiles of the fusion's parameters it loads (with --sizes --check: "
                        "whether the tiling fits; with --best: a hard limit)")
    p.add_argument("--deadline", type=float, default=60.0,
                   help="CPU seconds of this process for --check and --valid-tilings "
                        "(default 60): work, not wall time, so a busy machine gives the "
                        "same verdict")
    p.add_argument("--budget", type=int,
                   help="points --check and --valid-tilings may enumerate (counted work: the "
                        "verdict is the same on every machine; default 20000000)")
    p.add_argument("--wall-deadline", type=float,
                   help="also stop after this many seconds of wall-clock time (only when "
                        "asked: the verdict then depends on the machine's load)")
    tile_cost.add_arguments(p)
    tile_classic.add_arguments(p)  # last: it adds --cost/--device only if still missing
    p.set_defaults(run=run)


def _is_file_argument(text: str) -> bool:
    if text == "-" or os.path.exists(text):
        return True
    return "->" not in text and text.endswith((".hlo", ".txt"))


def run(args: argparse.Namespace) -> int:
    if tile_classic.wants_classic(args):
        return tile_classic.run(args)
    if not _is_file_argument(args.input):
        return _run_map(args)
    from symidx.cli import tile_fusion

    return tile_fusion.run(args)


def _run_map(args: argparse.Namespace) -> int:
    from symidx.tiling import TileRefusal, symbolic_tile

    for flag in ("sizes", "fusion", "propagate", *tile_cost.COST_FLAGS):
        if getattr(args, flag):
            raise UsageError(f"symidx tile: --{flag.replace('_', '-')} is for an HLO file")
    m = read_map(args.input, "<map>")
    try:
        tile = symbolic_tile(m)
    except TileRefusal as e:
        if args.format == "json":
            emit({"tile": None, "reason": str(e)}, "json", "")
        print(f"symidx: no symbolic tile: {e}", file=sys.stderr)
        return 2
    emit({"tile": tile.to_json()}, args.format, tile.to_text())
    return 0
