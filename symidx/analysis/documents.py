"""The JSON documents of ``symidx maps`` and ``symidx corpus``, versioned schema
``symidx.maps/1`` (``docs/json.md``; the JSON Schema is ``symidx/schemas/maps-1.json``).

Whatever ``--style``, every map is an object: ``text`` (XLA's one-line form),
``dims``/``symbols``/``runtime`` (name, interval; a runtime variable's ``source``:
``instruction`` and the provenance ``map`` text), ``results``, ``constraints`` (``expr``,
``lo``, ``hi``; expressions as XLA prints them, ``/`` being floor division) and ``special``
(``null``, ``"known-empty"`` or ``"undefined"``). Every document says under which semantics
its maps were computed: ``"semantics": "reads"`` (the default) or ``"finite"``
(``assume_finite=True``; see :class:`symidx.fusion.Analysis`). Each group has ``operand``
(``output`` input-to-output), ``name``, ``shape``, ``leaf``, ``maps``, ``unsupported``
and ``opaque``, and ``source`` (``op_name``, ``file``, ``line``) when the instruction it
names has metadata; with ``explain``, each origin lists the ``sources`` of the instructions
along its path. An instruction or fusion analysed carries its ``source`` too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symidx.analysis.records import ComputationMaps, FusionMaps
from symidx.analysis.sources import SourceFinder
from symidx.core.indexing_map import IndexingMap
from symidx.core.indexing_map.direction import OUTPUT_TO_INPUT, Direction
from symidx.errors import SymidxError
from symidx.fusion import Origin, Path, Reached
from symidx.hlo import HloComputation, HloInstruction, HloModule
from symidx.hlo.facts import called_computation

__all__ = [
    "SCHEMA",
    "map_json",
    "Context",
    "group_json",
    "instruction_context",
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


#: Maps already written, by what their JSON shows (:func:`_shown_as`): the outputs of a
#: training step read the same few hundred maps over and over (the llama 3.1 8B step: 810
#: distinct maps in 143,343 of 60 outputs), each printed once. Emptied when it grows past
#: :data:`_WRITTEN_KEPT`.
_WRITTEN: dict[tuple[Any, ...], dict[str, Any]] = {}
_WRITTEN_KEPT = 4096


def map_json(m: IndexingMap) -> dict[str, Any]:
    """One map as a JSON object (see the module docstring): ``m.to_dict()``, printed once
    for all the maps that show alike (a fresh dict each time; its lists are shared)."""
    key = _shown_as(m)
    found = _WRITTEN.get(key)
    if found is None:
        if len(_WRITTEN) >= _WRITTEN_KEPT:
            _WRITTEN.clear()
        found = _WRITTEN[key] = m.to_dict()
    return dict(found)


def _shown_as(m: IndexingMap) -> tuple[Any, ...]:
    """What a map's JSON depends on: the map (equality leaves the names out; a known-empty
    or undefined map, equal to any other of its kind, by its variables), its names and
    those of the source maps of its runtime variables, all the way down."""
    shape = m if not (m.is_known_empty or m.is_undefined) else (
        m.kind, m.dims, m.ranges, len(m.results), len(m.rts))  # equal whatever their arity
    return (shape, m.names,
            tuple(None if v.map is None else _shown_as(v.map) for v in m.rts))


class Context:
    """Where a document's groups are, to find the source locations of what they name:
    ``outer``, the computation holding the operands (or outputs) the groups name;
    ``inner``, the computation the paths start in."""

    def __init__(self, finder: SourceFinder, outer: HloComputation | None,
                 inner: HloComputation | None) -> None:
        self.finder = finder
        self.outer = outer
        self.inner = inner


def group_json(g: Reached, direction: Direction, explain: bool = False,
               context: Context | None = None) -> dict[str, Any]:
    """One group as a JSON object (see the module docstring)."""
    entry: dict[str, Any] = {
        "operand" if direction == OUTPUT_TO_INPUT else "output": g.index,
        "name": g.name, "shape": g.shape, "leaf": g.leaf,
        "maps": [map_json(m) for m in g.maps],
        "unsupported": g.unsupported, "opaque": g.opaque,
    }
    if context is not None:
        source = context.finder.group_json(g.name, context.outer)
        if source is not None:
            entry["source"] = source
    if explain:
        entry["origins"] = [origin_json(o, context) for o in g.origins]
    return entry


def origin_json(origin: Origin, context: Context | None = None) -> dict[str, Any]:
    """``{"path": [...], "paths": N}``: the path's instruction names from the start, where
    a step taken through a fusion or call is ``{"name": NAME, "via": [inner path]}``; and
    how many paths give the same map; with a ``context``, ``"sources"``: the distinct
    source locations along the path (``{"instruction", "op_name", "file", "line"}``), when
    there are any."""
    entry: dict[str, Any] = {"path": _path_json(origin.path), "paths": origin.count}
    if context is not None:
        found = context.finder.along(origin.path, context.inner)
        if found:
            entry["sources"] = [{"instruction": name, **loc.to_dict()} for name, loc in found]
    return entry


def instruction_context(finder: SourceFinder, instr: HloInstruction,
                        outer: HloComputation | None = None) -> Context:
    """The context of an instruction's groups: its computation (``outer``; found when not
    given), and for an instruction that calls a computation on its operands (a fusion),
    that one for the paths."""
    if outer is None:
        outer = _holder(finder.module, instr)
    try:
        inner = called_computation(instr)
    except SymidxError:
        inner = None
    return Context(finder, outer, inner or outer)


def _holder(module: HloModule, instr: HloInstruction) -> HloComputation | None:
    for comp in module.computations.values():
        if any(i is instr for i in comp.instructions):
            return comp
    return None


def _with_source(entry: dict[str, Any], module: HloModule, instr: HloInstruction
                 ) -> dict[str, Any]:
    from symidx.hlo.locations import source_of  # start-up: text output has no use for it

    found = source_of(instr, module)
    if found is not None:
        entry["source"] = found.to_dict()
    return entry


def _path_json(path: Path) -> list[Any]:
    return [step.name if step.via is None else {"name": step.name, "via": _path_json(step.via)}
            for step in path.steps()]


def _document(module: HloModule, direction: Direction, assume_finite: bool,
              **fields: Any) -> dict[str, Any]:
    return {"schema": SCHEMA, "module": module.name,
            "direction": Direction(direction).text,
            "semantics": "finite" if assume_finite else "reads", **fields}


def dumps(document: dict[str, Any] | list[dict[str, Any]]) -> str:
    """A document (or a list of them, one per file) as the JSON ``symidx maps`` prints."""
    import json  # here, not at start-up: text output has no use for it

    return json.dumps(document, indent=2)


def dumps_line(document: dict[str, Any]) -> str:
    """A document on one line (``--format jsonl``)."""
    import json

    return json.dumps(document, separators=(",", ":"))


def instruction_document(module: HloModule, instr: HloInstruction, direction: Direction,
                         groups: Sequence[Reached], index: int, explain: bool = False,
                         assume_finite: bool = False) -> dict[str, Any]:
    """The JSON document of one instruction's groups for its output ``index``
    (output-to-input) or input ``index`` (input-to-output): ``{"schema", "module",
    "direction", "instruction", "opcode", "output"|"input", "operands": [groups]}``."""
    selector = "output" if direction == OUTPUT_TO_INPUT else "input"
    from symidx.hlo.locations import source_of

    context = instruction_context(SourceFinder(module), instr)
    found = source_of(instr, module)
    return _document(module, direction, assume_finite, instruction=instr.name,
                     opcode=instr.opcode,
                     **({} if found is None else {"source": found.to_dict()}),
                     **{selector: index},
                     operands=[group_json(g, direction, explain, context) for g in groups])


def fusions_document(module: HloModule, direction: Direction, found: Sequence[FusionMaps],
                     explain: bool = False, assume_finite: bool = False) -> dict[str, Any]:
    """The JSON document of every fusion's groups (``symidx maps --all``):
    ``{..., "fusions": [{"instruction", "computation", "calls", "kind", "output"|"input",
    "operands"}]}``."""
    selector = "output" if direction == OUTPUT_TO_INPUT else "input"
    fusions = []
    finder = SourceFinder(module)
    for f in found:
        context = instruction_context(finder, f.instr, module.computations.get(f.computation))
        fusions.append(_with_source(
            {"instruction": f.instr.name, "computation": f.computation,
             "calls": _called_name(f.instr), "kind": f.instr.fusion_kind, selector: f.index,
             "operands": [group_json(g, direction, explain, context) for g in f.groups]},
            module, f.instr))
    return _document(module, direction, assume_finite, fusions=fusions)


def computations_document(module: HloModule, direction: Direction,
                          found: Sequence[ComputationMaps], explain: bool = False,
                          assume_finite: bool = False) -> dict[str, Any]:
    """The JSON document of a whole computation's groups (``symidx maps
    --computation``): ``{..., "computations": [{"computation", "output"|"input", "leaf",
    "operands"}]}``."""
    finder = SourceFinder(module)
    records = [computation_json(c, direction, explain, finder) for c in found]
    return _document(module, direction, assume_finite, computations=records)


def computation_json(c: ComputationMaps, direction: Direction, explain: bool = False,
                     finder: SourceFinder | None = None) -> dict[str, Any]:
    """One entry of :func:`computations_document`: ``{"computation", "output"|"input",
    "leaf", "operands"}`` (the groups' sources looked up with ``finder``, when given)."""
    selector = "output" if direction == OUTPUT_TO_INPUT else "input"
    context = None if finder is None else Context(finder, c.computation, c.computation)
    return {"computation": c.computation.name, selector: c.index, "leaf": c.leaf,
            "operands": [group_json(g, direction, explain, context) for g in c.groups]}


def _called_name(instr: HloInstruction) -> str | None:
    comp = called_computation(instr)
    return None if comp is None else comp.name

