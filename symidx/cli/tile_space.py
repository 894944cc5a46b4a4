"""``symidx tile FILE.hlo --space [--sizes ..] [--propagate ...]``: the experimental view."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from symidx.cli.common import UsageError
from symidx.cli.tile_emit import emit
from symidx.errors import SymidxError


def _parse_tile(text: str, space: Any) -> Any:
    from symidx.core.syntax import parse_expr
    from symidx.tiling.space import XTile, rtv, tid, ts

    if text.startswith("root:"):
        try:
            r = int(text[5:])
        except ValueError:
            raise UsageError(f"symidx tile: --input-tile root:R needs an integer, not "
                             f"{text!r}") from None
        if not 0 <= r < len(space.roots):
            raise UsageError(f"symidx tile: the space has {len(space.roots)} root tiles")
        return space.root_tile(r)
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise UsageError(f"symidx tile: --input-tile is neither root:R nor JSON ({e})") from None
    if not isinstance(doc, dict):
        raise UsageError("symidx tile: --input-tile JSON must be an object")
    names: dict[str, Any] = {}
    for i in range(64):
        names[f"tid_{i}"] = tid(i)
        names[f"ts_{i}"] = ts(i)
        names[f"rt_{i}"] = rtv(i)
    parts = []
    for key in ("offsets", "sizes", "strides", "upper_bounds"):
        vals = doc.get(key)
        if not isinstance(vals, list):
            raise UsageError(f"symidx tile: --input-tile needs a list {key!r}")
        parts.append(tuple(parse_expr(str(v), names) for v in vals))
    if len({len(p) for p in parts}) > 1:
        raise UsageError("symidx tile: --input-tile lists differ in length")
    replica = None
    if isinstance(doc.get("replica_ids"), dict):
        rep = doc["replica_ids"]
        got = [tuple(parse_expr(str(v), names) for v in rep.get(key) or [])
               for key in ("offsets", "sizes", "strides", "upper_bounds")]
        replica = XTile(got[0], got[1], got[2], got[3])
    return space.replica_ids_of(space.finish(XTile(parts[0], parts[1], parts[2], parts[3],
                                                   replica)))


def run(args: argparse.Namespace, module: Any, comp: Any, sizes: list[int] | None) -> int:
    from symidx.tiling.space import SpaceRefusal, build_space, tile_computation

    try:
        space = build_space(comp, sizes)
        doc: dict[str, Any] = space.to_json()
        tiles: list[dict[str, Any]] = []
        if args.propagate:
            if not args.instruction or args.input_tile is None:
                raise UsageError("symidx tile: --propagate needs --instruction and --input-tile")
            instr = comp.instruction(args.instruction)
            tile = _parse_tile(args.input_tile, space)
            if args.propagate == "input":
                for k, t in enumerate(space.to_input(instr, tile)):
                    tiles.append({"kind": "operand", "operand": k, **t.to_json()})
            else:
                for k, t in enumerate(space.to_output(instr, args.operand, tile)):
                    tiles.append({"kind": "output", "output": k, **t.to_json()})
        else:
            for r in range(len(space.roots)):
                tiles.append({"kind": "root", "root": r, **space.root_tile(r).to_json()})
            if sizes is not None:
                try:
                    for instr, k, t in tile_computation(space):
                        tiles.append({"kind": "instruction", "name": instr.name,
                                      "tile_id": k, "opcode": instr.opcode, **t.to_json()})
                except SpaceRefusal as e:
                    # the space and its tile sizes stand; the tiled computation does not
                    doc["tiling_refused"] = str(e)
                    print(f"symidx: the tiled computation is refused: {e}", file=sys.stderr)
    except SpaceRefusal as e:
        print(f"symidx: cannot tile: {e}", file=sys.stderr)
        return 2
    except SymidxError:
        raise
    doc["tiles"] = tiles
    lines = [f"dimension {d['id']}: {d['type']} size {d['size']} ({d['hlo']})"
             for d in doc["dimensions"]]
    lines += [f"rt_{r['id']} in {r['bounds']} ({r['hlo']})" for r in doc["rt_vars"]]
    for entry in tiles:
        label = entry.get("name") or \
            f"{entry['kind']} {entry.get('root', entry.get('operand', ''))}"
        lines.append(f"{label}: offsets {entry['offsets']} sizes {entry['sizes']} strides "
                     f"{entry['strides']} upper bounds {entry['upper_bounds']}")
    emit(doc, args.format, "\n".join(lines))
    return 0

