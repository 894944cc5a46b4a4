"""``symidx tile FILE.hlo ...``: a fusion's tiling (see :mod:`symidx.cli.tile`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from symidx.cli.common import UsageError
from symidx.cli.tile_emit import emit
from symidx.errors import SymidxError


def _sizes(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip() != ""]
    except ValueError:
        raise UsageError(f"symidx tile: --sizes takes integers separated by commas, "
                         f"not {text!r}") from None


SIZES_FLAGS = (("check", "--check"), ("smem", "--smem"),
               ("assume_satisfied", "--assume-satisfied"), ("schedule", "--schedule"))


def run(args: argparse.Namespace) -> int:
    from symidx.cli import tile_cost
    from symidx.cli.inputs import load_module
    from symidx.tiling.analysis import AnalysisRefusal, analyze, fusion_computation

    if tile_cost.wanted(args):
        return tile_cost.run(args, load_module(args.input))
    sizes = _sizes(args.sizes)
    if sizes is None and not args.space:
        for attr, flag in SIZES_FLAGS:
            if getattr(args, attr, None) not in (None, False):
                raise SymidxError(f"tile {args.input}: {flag} needs --sizes (the tiling "
                                  f"to {'prove' if attr == 'check' else 'apply it to'})")
    module = load_module(args.input)
    comp = fusion_computation(module, args.fusion)
    if args.space or args.propagate:
        from symidx.cli import tile_space

        return tile_space.run(args, module, comp, sizes)
    try:
        tiling = analyze(comp)
        if args.fusion:
            tiling.fusion = next(i for c in [module.entry, *module.computations.values()]
                                 for i in c.instructions if i.name == args.fusion)
        if args.valid_tilings:
            return _valid(args, tiling)
        if sizes is not None:
            return _tiled(args, tiling, sizes)
    except AnalysisRefusal as e:
        print(f"symidx: no tiling: {e}", file=sys.stderr)
        root = module.entry.root
        if not args.fusion and root.opcode == "fusion":
            print(f"symidx: note: without --fusion the entry computation is tiled as one "
                  f"fusion, and its root is a fusion: --fusion {root.name} tiles that fusion",
                  file=sys.stderr)
        return 2
    return _analysis(args, tiling)


def _analysis(args: argparse.Namespace, t: Any) -> int:
    from symidx.core.indexing_map import print_map

    names = t.names()
    instrs = []
    for ti in t.tiled:
        entry = {"name": ti.name, "path": ti.path, "tile": ti.tile.to_json(),
                 "indexing_map": print_map(ti.map, "xla").split("\nruntime")[0]}
        if ti.masks:
            entry["masks"] = list(ti.masks)
        instrs.append(entry)
    doc = {"parameters": [{"instruction": p.instruction, "sizes": list(p.sizes),
                           "hidden": p.hidden} for p in t.parameters],
           "constraints": _flat_text(t.constraints, names),
           "constraint_groups": t.constraints.factored_text(names),
           "roots": [r.name for r in t.roots],
           "unread": [{"name": n, "path": p} for n, p in t.unread],
           "instructions": instrs}
    lines = ["parameters: " + ", ".join(f"{p.instruction} {list(p.sizes)}"
                                        for p in t.parameters),
             "constraints: " + doc["constraints"]]
    for ti in t.tiled:
        lines.append(f"{ti.name} ({ti.path})")
        lines.extend("  " + x for x in ti.tile.to_text().splitlines())
        if ti.masks:
            lines.append("  masks (the tile is the box around the reads without them): " +
                         "; ".join(ti.masks))
    emit(doc, args.format, "\n".join(lines))
    return 0


def _flat_text(cons: Any, names: Any) -> str:
    """The constraints as one DNF text (the contract's form), unless multiplying the DNFs
    out passes the limit: then says so (the factored form is in ``constraint_groups``)."""
    from symidx.errors import TooLargeError

    try:
        return str(cons.text(names))
    except TooLargeError as e:
        return f"too large to print as one DNF ({e}); see constraint_groups"


def _tiled(args: argparse.Namespace, t: Any, sizes: list[int]) -> int:
    from symidx.core.indexing_map import print_map
    from symidx.tiling.tiled import tiled_computation

    schedule = args.schedule or "major-to-minor"
    _note_large_sizes(t, sizes)
    results = tiled_computation(t, sizes, args.assume_satisfied, schedule)
    tiled = []
    for r in results:
        entry: dict[str, Any] = {"name": r.name, "path": r.path, "tile_sizes": r.tile_sizes,
                 "tile_strides": r.tile_strides,
                 "tile_offsets_indexing": print_map(r.offsets_map, "xla")
                 .split("\nruntime")[0],
                 "runtime_variables": r.runtime_variables,
                 "runtime_sources": r.runtime_sources(), "rows": r.rows()}
        if r.masks:
            entry["masks"] = r.masks
        tiled.append(entry)
    doc: dict[str, Any] = {"sizes": sizes, "schedule": schedule, "tiled": tiled,
                           "roots": [x.name for x in t.roots]}
    if args.check:
        from symidx.tiling.check import check_tiling

        doc["check"] = check_tiling(t, sizes, deadline=args.deadline, smem=args.smem,
                                    schedule=schedule, budget=args.budget,
                                    wall_deadline=args.wall_deadline)
    lines = []
    for x in tiled:
        line = (f"{x['name']} ({x['path']}): sizes {x['tile_sizes']} strides "
                f"{x['tile_strides']} offsets {x['tile_offsets_indexing']}")
        rows = [f"s{r['range_variable']}" for r in x["rows"] if r["parameter"] is not None]
        if rows:
            line += f"; one tile per row {', '.join(rows)}"
        for k, src in enumerate(x["runtime_sources"]):
            if src["element"] is not None:
                line += f"; rt{k} = {src['holder']} at {src['element'].split(', domain')[0]}"
        if x.get("masks"):
            line += f"; masked: {'; '.join(x['masks'])}"
        lines.append(line)
    if args.check:
        from symidx.tiling.check import check_text

        lines += check_text(doc["check"])
    emit(doc, args.format, "\n".join(lines))
    if args.check and not doc["check"].get("ok", False):
        return 3 if doc["check"].get("undecided") else 1
    return 0


def _note_large_sizes(t: Any, sizes: list[int]) -> None:
    """A tile size above its parameter's extent is kept, as XLA keeps it (a Triton tile is
    a power of two): one tile along that parameter, masked past its end. Said on stderr."""
    flat = t.flat_sizes
    for i, (s, n) in enumerate(zip(sizes, flat)):
        if s > n:
            print(f"symidx: note: tile size {s} of parameter d{i} exceeds its extent {n}: "
                  f"one tile along it, masked past {n}", file=sys.stderr)


def _valid(args: argparse.Namespace, t: Any) -> int:
    from symidx.errors import TooLargeError
    from symidx.tiling.limits import BUDGET, Limits, LimitStop

    limits = Limits(args.budget or BUDGET, args.deadline, args.wall_deadline).start()
    try:
        return _valid_within_limits(args, t, limits)
    except (TooLargeError, LimitStop) as e:
        print(f"symidx: valid tilings undecided: {e}", file=sys.stderr)
        return 3


def _valid_within_limits(args: argparse.Namespace, t: Any, limits: Any) -> int:
    from symidx.tiling.valid import count_valid, valid_tilings

    if getattr(args, "device", None) and not args.count:
        return _ranked(args, t)
    if args.count:
        n, total = count_valid(t, limits=limits)
        emit({"count": n, "candidates": total}, args.format, f"{n} of {total} candidates")
        return 0
    tilings: list[list[int]] = []
    for k, tiling in enumerate(valid_tilings(t, limits=limits)):
        if k >= args.limit:
            print(f"symidx: stopped at --limit {args.limit} tilings", file=sys.stderr)
            emit({"tilings": tilings, "truncated": True}, args.format,
                 "\n".join(",".join(map(str, x)) for x in tilings))
            return 3
        tilings.append(list(tiling))
    emit({"tilings": tilings}, args.format, "\n".join(",".join(map(str, x)) for x in tilings))
    return 0


def _ranked(args: argparse.Namespace, t: Any) -> int:
    """``--valid-tilings --device D``: every valid tiling with its cost on D, cheapest
    first (:func:`symidx.cost.search.rank_tilings`)."""
    from symidx.cost.devices import device
    from symidx.cost.search import rank_tilings
    from symidx.tiling.concrete import from_analysis

    r = rank_tilings(from_analysis(t), device(args.device), limit=args.limit,
                     objective=getattr(args, "objective", "xla"))
    emit(r.to_json(), args.format, r.text())
    if r.count > len(r.rows):
        print(f"symidx: the {args.limit} cheapest of {r.count} valid tilings (--limit)",
              file=sys.stderr)
    if not r.complete:
        print(f"symidx: {r.stopped}", file=sys.stderr)
        return 3
    return 0
