"""``symidx tile FILE.hlo --fusion F --cost | --best | --emitter | --flops-per-element``:
XLA's tiled GPU cost model, the best tiling, Triton's emitter constraints (the contract:
``../shared/conformance/COST.md``).

    symidx tile F.hlo --fusion NAME --cost [--sizes A,B;C,D] [--num-warps N]
                [--num-stages N] [--device D] [--tiler legacy|experimental]
    symidx tile F.hlo --fusion NAME --best [--top K] [--smem BYTES] [--device D]
                [--emitter triton|none] [--max-tilings N] [--cpu-seconds S]
    symidx tile F.hlo --fusion NAME --emitter triton|none (--sizes A,B | --space-sizes A,B,C)
                [--tiled-root INSTR] [--xla-flag name=value]
    symidx tile F.hlo --fusion INSTR --flops-per-element [--device D]

Without ``--sizes``, ``--cost`` takes the fusion's ``block_level_fusion_config``. JSON
documents carry the schema ``symidx.cost/1`` (``symidx/schemas/cost-1.json``).

``--model classic`` (XLA's ``GpuPerformanceModel``) is :mod:`symidx.cli.tile_classic`'s,
which adds its options after these.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from symidx.cli.common import UsageError
from symidx.errors import SymidxError

SCHEMA = "symidx.cost/1"

#: The flags that route ``symidx tile`` here.
COST_FLAGS = ("cost", "best", "emitter", "flops_per_element", "space_sizes")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The cost model's options of ``symidx tile``."""
    g = p.add_argument_group("cost model (XLA's tiled GPU cost model; COST.md)")
    g.add_argument("--cost", action="store_true",
                   help="the tiled cost of a tiling (--sizes, or the fusion's "
                        "block_level_fusion_config) on --device")
    g.add_argument("--best", action="store_true",
                   help="the cheapest valid tiling on --device, as XLA's search picks it")
    g.add_argument("--top", type=int, default=1, metavar="K",
                   help="with --best: list the K cheapest tilings (default 1)")
    g.add_argument("--device", default=None,
                   help="the GPU (rtx-a6000, a100, h100, b200, mi300x; default rtx-a6000, "
                        "the device of XLA's tests); with --valid-tilings: rank them by "
                        "their cost on it")
    g.add_argument("--tiler", choices=("legacy", "experimental"), default="legacy",
                   help="legacy: XLA's SymbolicTileAnalysis (default); experimental: its "
                        "TilingSpace tiler")
    g.add_argument("--num-warps", type=int, help="with --cost: warps per block")
    g.add_argument("--num-stages", type=int, help="with --cost: pipeline stages")
    g.add_argument("--emitter", choices=("triton", "none"),
                   help="check a tiling against the Triton emitter's constraints (none: the "
                        "analysis' own only); with --best: the constraints the search obeys")
    g.add_argument("--tiled-root", metavar="INSTR",
                   help="with --emitter: the root the --sizes tile (default: the real root)")
    g.add_argument("--space-sizes", metavar="A,B,C",
                   help="with --emitter and --tiler experimental: the tile size of every "
                        "dimension of the tiling space")
    g.add_argument("--xla-flag", action="append", default=[], metavar="NAME=VALUE",
                   help="an XLA debug option (xla_gpu_unsupported_enable_triton_multi_output"
                        "_fusion=true lets the experimental tiler take multi-output fusions)")
    g.add_argument("--flops-per-element", action="store_true",
                   help="the flops per output element of the instruction --fusion names")
    g.add_argument("--max-tilings", type=int, default=50_000_000,
                   help="with --best: most tilings considered (default 50000000)")
    g.add_argument("--cpu-seconds", type=float, default=120.0,
                   help="with --best: most CPU seconds spent (default 120)")
    g.add_argument("--objective", choices=("xla", "symidx"), default="xla",
                   help="with --cost/--best/--valid-tilings: xla (default): XLA's model "
                        "exactly; symidx: each read of an operand timed at its own tile's "
                        "coalescing rate (XLA times them all at the worst), contiguous runs "
                        "counted in either direction, and the shared-memory time of tiles a "
                        "transpose stages, with their bank conflicts; --best then says where "
                        "its pick departs from XLA's (xla_compatible: false, with both costs)")


def wanted(args: argparse.Namespace) -> bool:
    return any(getattr(args, f, None) for f in COST_FLAGS)


def emit(doc: dict[str, Any], fmt: str, text: str) -> None:
    if fmt == "json":
        print(json.dumps({"schema": SCHEMA, **doc}, indent=2))
    else:
        print(text)


def _int_list(text: str, flag: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip() != ""]
    except ValueError:
        raise UsageError(f"symidx tile: {flag} takes integers separated by commas, "
                         f"not {text!r}") from None
    if any(x < 1 for x in out):
        raise UsageError(f"symidx tile: {flag}: tile sizes must be at least 1")
    return out


def root_sizes(text: str | None) -> list[list[int]] | None:
    """``--sizes A,B;C,D``: one list of tile sizes per root."""
    if text is None:
        return None
    return [_int_list(part, "--sizes") for part in text.split(";")]


def run(args: argparse.Namespace, module: Any) -> int:
    from symidx.cost.api import fusion_tiles
    from symidx.cost.devices import DEFAULT_DEVICE, device

    dev = device(args.device or DEFAULT_DEVICE)
    if args.flops_per_element:
        return _flops(args, module, dev)
    if args.space_sizes is not None and not args.emitter:
        raise UsageError("symidx tile: --space-sizes is for --emitter")
    if args.space_sizes is not None and args.tiler != "experimental":
        raise UsageError("symidx tile: --space-sizes is for --tiler experimental")
    ft = fusion_tiles(module, args.fusion, tiler=args.tiler,
                      xla_flags=_xla_flags(args.xla_flag))
    if args.best:
        return _best(args, ft, dev)
    if args.emitter and not args.cost:
        return _emitter(args, ft, dev)
    return _cost(args, ft, dev)


def _xla_flags(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"symidx tile: --xla-flag takes name=value, not {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip().lower()
    return out


def _cost(args: argparse.Namespace, ft: Any, dev: Any) -> int:
    from symidx.cost.api import cost

    roots = root_sizes(args.sizes)
    c = cost(ft, roots, dev, num_warps=args.num_warps, num_stages=args.num_stages,
             objective=args.objective)
    emit(c.to_json(), args.format, c.text())
    return 0


def _best(args: argparse.Namespace, ft: Any, dev: Any) -> int:
    from symidx.cost.api import best

    res = best(ft, dev, emitter=args.emitter or "triton", top=args.top,
               smem=getattr(args, "smem", None), max_tilings=args.max_tilings,
               cpu_seconds=args.cpu_seconds, objective=args.objective)
    if not res.best:
        raise SymidxError(f"no valid tiling of {args.fusion or 'the fusion'} among "
                          f"{res.considered} candidates" +
                          (f" ({res.stopped})" if res.stopped else ""))
    lines = [res.text(), *departure_lines(res.best[0])]
    emit(res.to_json(), args.format, "\n".join(lines))
    return 0 if res.complete else 3


def departure_lines(pick: Any) -> list[str]:
    """Under a non-XLA objective: whether the pick is XLA's, and if not XLA's pick with
    both costs."""
    if pick.objective == "xla" or pick.xla_compatible is None:
        return []
    if pick.xla_compatible:
        return [f"objective {pick.objective}: the same pick as XLA's"]
    x = pick.xla_pick or {}

    def us(v: Any) -> str:
        return "-" if v is None else f"{v:.4g} us"

    return [f"objective {pick.objective}: departs from XLA's pick "
            f"{x.get('output_tile_sizes')}, which costs {us(x.get('exec_time_us'))} in "
            f"XLA's model and {us(x.get(f'exec_time_us_{pick.objective}'))} in "
            f"{pick.objective}'s; this pick costs "
            f"{us(x.get('this_pick_exec_time_us_xla'))} in XLA's model and "
            f"{us(pick.exec_time_us)} in {pick.objective}'s"]


def _emitter(args: argparse.Namespace, ft: Any, dev: Any) -> int:
    from symidx.cost.api import emitter_check

    if args.space_sizes is not None:
        v = emitter_check(ft, _int_list(args.space_sizes, "--space-sizes"), dev,
                          emitter=args.emitter, flat=True)
    else:
        roots = root_sizes(args.sizes)
        if roots is None:
            raise UsageError("symidx tile: --emitter needs --sizes (or --space-sizes)")
        if args.tiled_root is not None and ft.tiler == "legacy":
            names = [r.name for r in ft.space.roots]
            if args.tiled_root not in names:
                raise SymidxError(f"--tiled-root {args.tiled_root} is not a root of the fusion "
                                  f"(roots: {', '.join(names)})")
        v = emitter_check(ft, roots, dev, emitter=args.emitter)
    doc = {"valid": v.valid, "reason": v.reason, "tiling": list(v.tiling),
           "emitter": args.emitter, "tiler": ft.tiler}
    emit(doc, args.format, "valid" if v.valid else f"not valid: {v.reason}")
    return 0


def _flops(args: argparse.Namespace, module: Any, dev: Any) -> int:
    from symidx.cost.flops import flops_per_element

    if not args.fusion:
        raise UsageError("symidx tile: --flops-per-element needs --fusion INSTR")
    instr = next((i for c in [module.entry, *module.computations.values()]
                  for i in c.instructions if i.name == args.fusion), None)
    if instr is None:
        raise SymidxError(f"no instruction {args.fusion!r} in the module")
    n = flops_per_element(instr, dev)
    emit({"flops_per_element": n, "instruction": instr.name, "device": dev.key},
         args.format, f"{instr.name}: {n} flops per element on {dev.key}")
    return 0
