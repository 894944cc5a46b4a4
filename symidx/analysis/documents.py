"""The JSON documents of ``symidx maps`` and ``symidx corpus``, versioned schema
``symidx.maps/1`` (``docs/json.md``; the JSON Schema is ``symidx/schemas/maps-1.json``).

Whatever ``--style``, every map is an object: ``text`` (XLA's one-line form),
``dims``/``symbols``/``runtime`` (name, interval; a runtime variable's ``source``:
``instruction`` and the provenance ``map`` text), ``results``, ``constraints`` (``expr``,
``lo``, ``hi``; expressions as XLA prints them, ``/`` being floor division) and ``special``
(``null``, ``"known-empty"`` or ``"undefined"``). Each group has ``operand`` (``output``
input-to-output), ``name``, ``shape``, ``leaf``, ``maps``, ``unsupported`` and ``opaque``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from symidx.analysis.records import ComputationMaps, FusionMaps, MapGroup
from symidx.fusion import Origin, Path
from symidx.hlo import HloInstruction, HloModule
from symidx.hlo.facts import called_computation
from symidx.indexing_map import IndexingMap, MapKind
from symidx.ops import OUTPUT_TO_INPUT, Direction
from symidx.syntax import print_expr, print_map

__all__ = [
    "SCHEMA",
    "map_json",
    "group_json",
    "origin_json",
    "instruction_document",
    "fusions_document",
    "computations_document",
    "computation_json",
    "dumps",
    "dumps_line",
]

#: The name and version of the JSON ``symidx maps`` prints.
SCHEMA = "symidx.maps/1"


# --- JSON ---------------------------------------------------------------------------------------


def map_json(m: IndexingMap) -> dict[str, Any]:
    """One map as a JSON object (see the module docstring)."""
    names = m.display_names()
    env = dict(zip(m.all_vars, names))
    nd, nr = m.num_dims, m.num_ranges
    special = {MapKind.KNOWN_EMPTY: "known-empty", MapKind.UNDEFINED: "undefined"}.get(m.kind)
    return {
        "text": print_map(m, "xla"),
        "dims": [_var(names[i], b) for i, b in enumerate(m.dims)],
        "symbols": [_var(names[nd + i], b) for i, b in enumerate(m.ranges)],
        "runtime": [{**_var(names[nd + nr + i], v.bounds),
                     "source": {"instruction": v.hlo or None,
                                "map": None if v.map is None else print_map(v.map, "xla")}}
                    for i, v in enumerate(m.rts)],
        "results": [print_expr(r, env, "xla") for r in m.results] if special is None else [],
        "constraints": [{"expr": print_expr(e, env, "xla"), "lo": iv.lo, "hi": iv.hi}
                        for e, iv in m.constraints],
        "special": special,
    }


def _var(name: str, bounds: Any) -> dict[str, Any]:
    return {"name": name, "lo": bounds.lo, "hi": bounds.hi}


def group_json(g: MapGroup, direction: Direction, explain: bool = False) -> dict[str, Any]:
    """One group as a JSON object (see the module docstring)."""
    entry: dict[str, Any] = {
        "operand" if direction == OUTPUT_TO_INPUT else "output": g.index,
        "name": g.name, "shape": g.shape, "leaf": g.leaf,
        "maps": [map_json(m) for m in g.maps],
        "unsupported": g.unsupported, "opaque": g.opaque,
    }
    if explain:
        entry["origins"] = [origin_json(o) for o in g.origins]
    return entry


def origin_json(origin: Origin) -> dict[str, Any]:
    """``{"path": [...], "paths": N}``: the path's instruction names from the start, where
    a step taken through a fusion or call is ``{"name": NAME, "via": [inner path]}``; and
    how many paths give the same map."""
    return {"path": _path_json(origin.path), "paths": origin.count}


def _path_json(path: Path) -> list[Any]:
    return [step.name if step.via is None else {"name": step.name, "via": _path_json(step.via)}
            for step in path.steps()]


def _document(module: HloModule, direction: Direction, **fields: Any) -> dict[str, Any]:
    return {"schema": SCHEMA, "module": module.name,
            "direction": direction.replace("_", "-"), **fields}


def dumps(document: dict[str, Any] | list[dict[str, Any]]) -> str:
    """A document (or a list of them, one per file) as the JSON ``symidx maps`` prints."""
    return json.dumps(document, indent=2)


def dumps_line(document: dict[str, Any]) -> str:
    """A document on one line (``--format jsonl``)."""
    return json.dumps(document, separators=(",", ":"))


def instruction_document(module: HloModule, instr: HloInstruction, direction: Direction,
                         groups: Sequence[MapGroup], index: int, explain: bool = False
                         ) -> dict[str, Any]:
    """The JSON document of one instruction's groups for its output ``index``
    (output-to-input) or input ``index`` (input-to-output): ``{"schema", "module",
    "direction", "instruction", "opcode", "output"|"input", "operands": [groups]}``."""
    selector = "output" if direction == OUTPUT_TO_INPUT else "input"
    return _document(module, direction, instruction=instr.name, opcode=instr.opcode,
                     **{selector: index},
                     operands=[group_json(g, direction, explain) for g in groups])


def fusions_document(module: HloModule, direction: Direction, found: Sequence[FusionMaps],
                     explain: bool = False) -> dict[str, Any]:
    """The JSON document of every fusion's groups (``symidx maps --all``):
    ``{..., "fusions": [{"instruction", "computation", "calls", "kind", "output"|"input",
    "operands"}]}``."""
    selector = "output" if direction == OUTPUT_TO_INPUT else "input"
    fusions = [{"instruction": f.instr.name, "computation": f.computation,
                "calls": _called_name(f.instr), "kind": f.instr.fusion_kind,
                selector: f.index,
                "operands": [group_json(g, direction, explain) for g in f.groups]}
               for f in found]
    return _document(module, direction, fusions=fusions)


def computations_document(module: HloModule, direction: Direction,
                          found: Sequence[ComputationMaps], explain: bool = False
                          ) -> dict[str, Any]:
    """The JSON document of a whole computation's groups (``symidx maps
    --computation``): ``{..., "computations": [{"computation", "output"|"input", "leaf",
    "operands"}]}``."""
    records = [computation_json(c, direction, explain) for c in found]
    return _document(module, direction, computations=records)


def computation_json(c: ComputationMaps, direction: Direction, explain: bool = False
                     ) -> dict[str, Any]:
    """One entry of :func:`computations_document`: ``{"computation", "output"|"input",
    "leaf", "operands"}``."""
    selector = "output" if direction == OUTPUT_TO_INPUT else "input"
    return {"computation": c.computation.name, selector: c.index, "leaf": c.leaf,
            "operands": [group_json(g, direction, explain) for g in c.groups]}


def _called_name(instr: HloInstruction) -> str | None:
    comp = called_computation(instr)
    return None if comp is None else comp.name

