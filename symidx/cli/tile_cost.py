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
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from symidx.cli.common import UsageError
from symidx.errors import SymidxError

SCHEMA = "symidx.cost/1"
EXIT_NOT_IMPLEMENTED = 98

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
    g.add_argument("--device", default="rtx-a6000",
                   help="the GPU (rtx-a6000, a100, h100, b200, mi300x; default rtx-a6000, "
                        "the device of XLA's tests)")
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
    g.add_argument("--model", choices=("tiled", "classic"), default="tiled",
                   help="with --cost: tiled (XLA's indexing model, default) or classic "
                        "(XLA's GpuPerformanceModel)")
    try:
        from symidx.cli import tile_classic  # type: ignore[attr-defined]
    except ImportError:
        return
    tile_classic.add_arguments(g)


def wanted(args: argparse.Namespace) -> bool:
    return any(getattr(args, f, None) for f in COST_FLAGS) or \
        getattr(args, "model", "tiled") != "tiled"


def emit(doc: dict[str, Any], fmt: str, text: str) -> None:
    if fmt == "json":
        import json

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
    from symidx.cost.devices import device

    if args.model == "classic":
        try:
            from symidx.cli import tile_classic  # type: ignore[attr-defined]
        except ImportError:
            print("symidx: error: --model classic is not implemented yet", file=sys.stderr)
            return EXIT_NOT_IMPLEMENTED
        return int(tile_classic.run(args, module))
    dev = device(args.device)
    if args.flops_per_element:
        return _flops(args, module, dev)
    from symidx.tiling.analysis import fusion_computation

    comp = fusion_computation(module, args.fusion)
    fusion = _fusion_instr(module, args.fusion)
    flags = _xla_flags(args.xla_flag)
    if args.tiler == "experimental" and args.space_sizes is not None:
        flat = _int_list(args.space_sizes, "--space-sizes")
        ts = _tile_set(args.tiler, comp, fusion, flags, flat)
    else:
        ts = _space_or_analysis(args.tiler, comp, fusion, flags)
    if args.best:
        return _best(args, ts, dev, comp, fusion)
    if args.emitter and not args.cost:
        return _emitter(args, ts, dev, fusion, comp)
    if args.cost:
        return _cost(args, ts, dev, fusion, comp)
    raise UsageError("symidx tile: --space-sizes is for --emitter")


def _xla_flags(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"symidx tile: --xla-flag takes name=value, not {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip().lower()
    return out


def _fusion_instr(module: Any, name: str | None) -> Any:
    if name is None:
        return None
    for c in [module.entry, *module.computations.values()]:
        for i in c.instructions:
            if i.name == name:
                return i
    return None


def _tile_set(tiler: str, comp: Any, fusion: Any, flags: dict[str, str],
              sizes: list[int] | None = None) -> Any:
    """The fusion's tiles: the legacy analysis, or the experimental tiling space (with
    ``sizes``: the space with those tile sizes assigned, as XLA propagates a concrete
    tiling)."""
    from symidx.tiling.concrete import from_analysis, from_space

    if tiler == "experimental":
        from symidx.tiling.space import build_space

        multi = comp.root.opcode == "tuple"
        allowed = flags.get("xla_gpu_unsupported_enable_triton_multi_output_fusion") == "true"
        if multi and not allowed:
            raise SymidxError("the experimental tiler takes a multi-output fusion only with "
                              "--xla-flag xla_gpu_unsupported_enable_triton_multi_output_"
                              "fusion=true (as XLA)")
        return from_space(build_space(comp, sizes))
    from symidx.tiling.analysis import analyze

    t = analyze(comp)
    t.fusion = fusion
    return from_analysis(t)


def _space_or_analysis(tiler: str, comp: Any, fusion: Any, flags: dict[str, str]) -> Any:
    """The tile set to tile from: legacy, the analysis; experimental, the symbolic space,
    or (when a tile cannot be propagated without concrete sizes) the space's dimensions
    alone, each tiling propagated on its own (:class:`PerTiling`)."""
    from symidx.tiling.space import SpaceRefusal

    try:
        return _tile_set(tiler, comp, fusion, flags)
    except SpaceRefusal:
        if tiler != "experimental":
            raise
        from symidx.tiling.space import build_space

        return PerTiling(build_space(comp), lambda flat: _tile_set(
            "experimental", comp, fusion, flags, flat))


class PerTiling:
    """An experimental tiling space whose tiles are propagated tiling by tiling."""

    variant = "experimental"

    def __init__(self, space: Any, make: Any):
        self.analysis = space
        self.make = make
        self.extents = tuple(d.size for d in space.dims)
        self.root_dims = [tuple(x) for x in space.root_shapes]


def _concrete(ts: Any, flat: list[int], args: argparse.Namespace, comp: Any, fusion: Any
              ) -> Any:
    """The experimental tile set with the tiling assigned (legacy: ``ts`` itself)."""
    if ts.variant != "experimental":
        return ts
    return _tile_set("experimental", comp, fusion, _xla_flags(args.xla_flag), flat)


def _flat_tiling(ts: Any, roots: list[list[int]], allow_contracting: bool = True
                 ) -> list[int]:
    """The flat tiling (the tile set's parameters) of output tiles per root: the real
    root's tile, a dot's contracting tile from the sizes (after the output dims) or from its
    backend config (XLA's ``TilingFromAnnotatedFusion``)."""
    from symidx.tiling.block_config import dot_block_k

    if ts.variant == "experimental":
        return _space_tiling(ts, roots)
    t = ts.analysis
    r = t.roots.index(t.real_root) if t.real_root in t.roots else 0
    tile = list(roots[r] if r < len(roots) else roots[0])
    real = t.real_root
    out_rank = len(ts.root_dims[r]) if r < len(ts.root_dims) else len(tile)
    flat: list[int] = []
    for p in t.parameters:
        instr = _named(t, p.instruction)
        if not p.hidden:
            nc = len(p.sizes) - out_rank
            out, k = tile[:out_rank], tile[out_rank:]
            if len(out) != out_rank:
                raise SymidxError(f"{len(tile)} tile sizes for the root {real.name}, which has "
                                  f"{out_rank} dimensions")
            if nc:
                if not k:
                    bk = dot_block_k(real)
                    if bk is None:
                        raise SymidxError(f"the dot {real.name} has no contracting tile: give "
                                          f"it after the output tile in --sizes, or set its "
                                          f"backend_config sizes")
                    k = [bk] * nc
                if len(k) != nc:
                    raise SymidxError(f"{len(k)} contracting tile sizes for {real.name}, "
                                      f"which contracts {nc} dimensions")
                flat.extend(k)
            elif k:
                raise SymidxError(f"{len(tile)} tile sizes for the root {real.name}, which has "
                                  f"{out_rank} dimensions")
            flat.extend(out)
        else:
            bk = dot_block_k(instr) if instr is not None else None
            if bk is None:
                raise SymidxError(f"the dot {p.instruction} has no contracting tile (its "
                                  f"backend_config sizes)")
            flat.extend([bk] * len(p.sizes))
    return flat


def _named(t: Any, name: str) -> Any:
    from symidx.tiling.concrete import _all_instrs

    return next((i for i in _all_instrs(t.computation) if i.name == name), None)


def _space_tiling(ts: Any, roots: list[list[int]]) -> list[int]:
    """The experimental tiling space's sizes for output tiles (XLA's
    ``GetTilingSpaceConcreteSizes``): the roots' dimensions their tile, a reduction's
    dimension its extent, a dot's contracting dimension its backend-config tile; every
    size padded to a power of two."""
    from symidx.tiling.block_config import dot_block_k
    from symidx.tiling.concrete import pow2_ceil

    space = ts.analysis
    sizes: list[int | None] = [None] * len(space.dims)
    for r, ids in enumerate(space.root_dims):
        tile = roots[r] if r < len(roots) else roots[0]
        if len(tile) != len(ids):
            raise SymidxError(f"{len(tile)} tile sizes for root {r}, which has {len(ids)} "
                              "dimensions")
        for i, s in zip(ids, tile):
            sizes[i] = s
    for (name, kind, _idx), d in space.seq.items():
        if kind == "reduce":
            sizes[d] = space.dims[d].size
        else:
            instr = space.comp.instruction(name)
            bk = dot_block_k(instr)
            if bk is None:
                raise SymidxError(f"the dot {name} has no contracting tile (its backend_config "
                                  "sizes)")
            sizes[d] = bk
    if any(s is None for s in sizes):
        raise SymidxError("the output tiles do not give every dimension of the tiling space")
    return [int(x) for x in pow2_ceil([int(s) for s in sizes if s is not None])]


def _cost(args: argparse.Namespace, ts: Any, dev: Any, fusion: Any, comp: Any) -> int:
    from symidx.cost.tiled import tiling_cost
    from symidx.tiling.block_config import block_level_parameters

    roots = root_sizes(args.sizes)
    cfg = block_level_parameters(fusion) if fusion is not None else None
    if roots is None:
        if cfg is None or not cfg.output_tile_sizes:
            raise SymidxError(f"{args.fusion or 'the fusion'} has no block_level_fusion_config"
                              "; give the tiling with --sizes")
        roots = [list(x) for x in cfg.output_tile_sizes]
    num_warps = args.num_warps
    num_stages = args.num_stages
    if args.sizes is None and cfg is not None:
        num_warps = num_warps if num_warps is not None else cfg.num_warps
        num_stages = num_stages if num_stages is not None else cfg.num_stages
    flat = _flat_tiling(ts, roots)
    c = tiling_cost(_concrete(ts, flat, args, comp, fusion), flat, dev, num_warps,
                    num_stages or 1)
    doc = c.to_json()
    emit(doc, args.format, c.text())
    return 0


def _best(args: argparse.Namespace, ts: Any, dev: Any, comp: Any, fusion: Any) -> int:
    from symidx.cost.search import best_tilings

    res = best_tilings(ts, dev, emitter=args.emitter or "triton", top=args.top,
                       smem=getattr(args, "smem", None), max_tilings=args.max_tilings,
                       cpu_seconds=args.cpu_seconds)
    if not res.best:
        raise SymidxError(f"no valid tiling of {args.fusion or 'the fusion'} among "
                          f"{res.considered} candidates" +
                          (f" ({res.stopped})" if res.stopped else ""))
    lines = [f"best of {res.valid} valid tilings ({res.considered} considered"
             f"{'' if res.complete else ', ' + res.stopped}):"]
    for i, c in enumerate(res.best):
        lines.append(f"#{i + 1}: " + c.text().replace("\n", "\n    "))
    emit(res.to_json(), args.format, "\n".join(lines))
    return 0 if res.complete else 3


def _emitter(args: argparse.Namespace, ts: Any, dev: Any, fusion: Any, comp: Any) -> int:
    from symidx.tiling.emitter import OK, TritonConstraints

    if args.space_sizes is not None:
        if ts.variant != "experimental":
            raise UsageError("symidx tile: --space-sizes is for --tiler experimental")
        flat = _int_list(args.space_sizes, "--space-sizes")
        if len(flat) != len(ts.extents):
            raise SymidxError(f"{len(flat)} tile sizes for the {len(ts.extents)} dimensions "
                              f"of the tiling space")
    else:
        roots = root_sizes(args.sizes)
        if roots is None:
            raise UsageError("symidx tile: --emitter needs --sizes (or --space-sizes)")
        flat = _emitter_flat(ts, roots, args.tiled_root)
        ts = _concrete(ts, flat, args, comp, fusion)
    vals = ts.one(flat)
    if args.emitter == "none":
        checker = TritonConstraints(ts, 1 << 62)
        ok = bool(checker.analysis_ok(vals)[0]) if ts.variant == "legacy" else True
        reason = "" if ok else "the tiling does not satisfy the tiling analysis' constraints"
    else:
        checker = TritonConstraints(ts, dev.block_dim_limit[0])
        code = int(checker.check(vals)[0])
        ok = code == OK
        reason = checker.reason(code, vals, 0)
    doc = {"valid": ok, "reason": reason, "tiling": flat, "emitter": args.emitter,
           "tiler": ts.variant}
    emit(doc, args.format, "valid" if ok else f"not valid: {reason}")
    return 0


def _emitter_flat(ts: Any, roots: list[list[int]], tiled_root: str | None) -> list[int]:
    """An emitter check's flat tiling: the tiled root's sizes (a dot root's contracting
    tile after its output dims)."""
    if ts.variant == "experimental":
        return _space_tiling(ts, roots)
    t = ts.analysis
    if tiled_root is not None and tiled_root != t.real_root.name:
        if tiled_root not in [r.name for r in t.roots]:
            raise SymidxError(f"--tiled-root {tiled_root} is not a root of the fusion")
    return _flat_tiling(ts, [roots[0]] * len(t.roots))


def _flops(args: argparse.Namespace, module: Any, dev: Any) -> int:
    from symidx.cost.flops import flops_per_element

    if not args.fusion:
        raise UsageError("symidx tile: --flops-per-element needs --fusion INSTR")
    instr = _fusion_instr(module, args.fusion)
    if instr is None:
        raise SymidxError(f"no instruction {args.fusion!r} in the module")
    n = flops_per_element(instr, dev)
    emit({"flops_per_element": n, "instruction": instr.name, "device": dev.key},
         args.format, f"{instr.name}: {n} flops per element on {dev.key}")
    return 0
