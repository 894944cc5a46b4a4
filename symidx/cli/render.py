"""What ``symidx maps`` prints: text a person reads, or JSON of the versioned schema
``symidx.maps/1`` (``docs/json.md``; the JSON Schema is ``symidx/schemas/maps-1.json``).

**Text.** Each group is headed by what it is, ``operand 0 (%b.1: f32[96])`` (``output K``
input-to-output; ``operand K, leaf L`` for a leaf of a tuple), then, as the case may be,
``over-approximation (REASON)``, ``unknown indexing (unsupported op: NAME)`` or
``(not read by output K)`` / ``(not reached from input K)``, then its maps in the chosen
``--style``, separated by blank lines (``--explain`` adds a ``path:`` line under each).

**JSON.** Whatever ``--style``, every map is an object: ``text`` (XLA's one-line form),
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

from symidx.analysis import ComputationMaps, FusionMaps, MapGroup
from symidx.fusion import Origin, Path, called_computation
from symidx.hlo import HloInstruction, HloModule
from symidx.indexing_map import IndexingMap, MapKind
from symidx.ops import OUTPUT_TO_INPUT, Direction, num_outputs
from symidx.syntax import print_expr, print_map

__all__ = [
    "SCHEMA",
    "map_json",
    "group_json",
    "origin_json",
    "render_maps",
    "render_fusions",
    "render_computations",
    "instruction_document",
    "fusions_document",
    "computations_document",
    "dumps",
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


# --- text ---------------------------------------------------------------------------------------


def _group_text(g: MapGroup, direction: Direction, index: int, style: str,
                explain: bool) -> str:
    """A group headed by what it is (``index``: the output, or input, the record is for)."""
    label = "operand" if direction == OUTPUT_TO_INPUT else "output"
    leaf = "" if g.leaf is None else f", leaf {g.leaf}"
    lines = [f"{label} {g.index}{leaf} (%{g.name}: {g.shape})" if g.shape
             else f"{label} {g.index}{leaf}"]
    if g.unsupported is not None:
        lines.append(f"unknown indexing (unsupported op: {g.unsupported})")
        return "\n".join(lines)
    if g.opaque is not None:
        lines.append(f"over-approximation ({g.opaque})")
    if not g.maps:
        lines.append(f"(not read by output {index})" if direction == OUTPUT_TO_INPUT
                     else f"(not reached from input {index})")
        return "\n".join(lines)
    texts = [print_map(m, style) for m in g.maps]
    if explain:
        texts = [f"{text}\npath: {_describe(o)}" for text, o in zip(texts, g.origins,
                                                                     strict=True)]
    return "\n".join(lines + ["\n\n".join(texts)])


def _describe(origin: Origin) -> str:
    paths = f" (one of {origin.count} paths)" if origin.count > 1 else ""
    return f"{origin.path}{paths}"


def _groups_text(groups: Sequence[MapGroup], direction: Direction, index: int, style: str,
                 explain: bool) -> str:
    return "\n\n".join(_group_text(g, direction, index, style, explain) for g in groups)


# --- the three outputs ------------------------------------------------------------------------


def render_maps(module: HloModule, instr: HloInstruction, direction: Direction,
                groups: Sequence[MapGroup], index: int, fmt: str = "text", style: str = "doc",
                explain: bool = False) -> str:
    """One instruction's groups for its output ``index`` (output-to-input) or input
    ``index`` (input-to-output). JSON: ``{"schema", "module", "direction", "instruction",
    "opcode", "output"|"input", "operands": [groups]}``."""
    if fmt == "json":
        return dumps(instruction_document(module, instr, direction, groups, index, explain))
    return _groups_text(groups, direction, index, style, explain)


def instruction_document(module: HloModule, instr: HloInstruction, direction: Direction,
                         groups: Sequence[MapGroup], index: int, explain: bool = False
                         ) -> dict[str, Any]:
    """The JSON document of :func:`render_maps`."""
    selector = "output" if direction == OUTPUT_TO_INPUT else "input"
    return _document(module, direction, instruction=instr.name, opcode=instr.opcode,
                     **{selector: index},
                     operands=[group_json(g, direction, explain) for g in groups])


def render_fusions(module: HloModule, direction: Direction, found: Sequence[FusionMaps],
                   fmt: str = "text", style: str = "doc", explain: bool = False) -> str:
    """Every fusion's groups (``symidx maps --all``): text blocks headed ``fusion NAME``
    (``fusion NAME output K`` for an output of a multi-output fusion, ``fusion NAME input
    K`` input-to-output); JSON ``{..., "fusions": [{"instruction", "computation",
    "calls", "kind", "output"|"input", "operands"}]}``."""
    selector = "output" if direction == OUTPUT_TO_INPUT else "input"
    if fmt == "json":
        return dumps(fusions_document(module, direction, found, explain))
    blocks = []
    for f in found:
        several = (num_outputs(f.instr) if direction == OUTPUT_TO_INPUT
                   else len(f.instr.operands)) > 1
        header = f"fusion {f.instr.name}" + (f" {selector} {f.index}" if several else "")
        body = _groups_text(f.groups, direction, f.index, style, explain)
        blocks.append(f"{header}\n{body}" if body else header)
    return "\n\n".join(blocks)


def fusions_document(module: HloModule, direction: Direction, found: Sequence[FusionMaps],
                     explain: bool = False) -> dict[str, Any]:
    """The JSON document of :func:`render_fusions`."""
    selector = "output" if direction == OUTPUT_TO_INPUT else "input"
    fusions = [{"instruction": f.instr.name, "computation": f.computation,
                "calls": _called_name(f.instr), "kind": f.instr.fusion_kind,
                selector: f.index,
                "operands": [group_json(g, direction, explain) for g in f.groups]}
               for f in found]
    return _document(module, direction, fusions=fusions)


def render_computations(module: HloModule, direction: Direction,
                        found: Sequence[ComputationMaps], fmt: str = "text",
                        style: str = "doc", explain: bool = False) -> str:
    """A whole computation's groups (``symidx maps --computation``): text blocks headed
    ``computation NAME output K`` (``input K[, leaf L]`` input-to-output); JSON ``{...,
    "computations": [{"computation", "output"|"input", "leaf", "operands"}]}``."""
    selector = "output" if direction == OUTPUT_TO_INPUT else "input"
    if fmt == "json":
        return dumps(computations_document(module, direction, found, explain))
    blocks = []
    for c in found:
        header = f"computation {c.computation.name} {selector} {c.index}" + (
            "" if c.leaf is None else f", leaf {c.leaf}")
        body = _groups_text(c.groups, direction, c.index, style, explain)
        blocks.append(f"{header}\n{body}" if body else header)
    return "\n\n".join(blocks)


def computations_document(module: HloModule, direction: Direction,
                          found: Sequence[ComputationMaps], explain: bool = False
                          ) -> dict[str, Any]:
    """The JSON document of :func:`render_computations`."""
    selector = "output" if direction == OUTPUT_TO_INPUT else "input"
    records = [{"computation": c.computation.name, selector: c.index, "leaf": c.leaf,
                "operands": [group_json(g, direction, explain) for g in c.groups]}
               for c in found]
    return _document(module, direction, computations=records)


def _called_name(instr: HloInstruction) -> str | None:
    comp = called_computation(instr)
    return None if comp is None else comp.name

