"""The maps of one instruction of a module, as ``symidx maps`` prints them.

* :func:`instruction_maps` — the per-op rules of :mod:`symidx.ops` for any instruction; for a
  ``fusion`` (or ``call``), the maps through its called computation; optionally between
  physical (layout-ordered) indices.
* :func:`computation_output_to_input` — the composition over a computation (SPEC §5): one
  reverse-topological sweep that keeps, per instruction output, the *set* of distinct maps
  reaching it from the root, so the work grows with the number of instructions and distinct
  maps, never with the number of paths. Every composed map is simplified and has its unused
  symbols removed. A parameter any of whose paths crosses an op without a rule has unknown
  indexing (its other maps would be silently incomplete).
  :func:`computation_input_to_output` is the same sweep forwards, from one parameter.

A group of maps whose operand or output cannot be reached by a supported op carries the
opcode in :attr:`MapGroup.unsupported` instead of maps.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from symidx.errors import SymidxError, UnsupportedOpError
from symidx.expr import dim
from symidx.hlo import HloComputation, HloInstruction, HloModule, Shape, TupleShape
from symidx.hlo.graph import topological_order
from symidx.indexing_map import IndexingMap, compose
from symidx.ops import (
    INPUT_TO_OUTPUT,
    OUTPUT_TO_INPUT,
    Direction,
    finish,
    input_to_output,
    num_outputs,
    output_to_input,
)
from symidx.ops._common import output_dims
from symidx.syntax import print_map

__all__ = [
    "MapGroup",
    "find_instruction",
    "instruction_maps",
    "fusion_output_to_input",
    "called_computation",
    "computation_output_to_input",
    "computation_input_to_output",
    "physical_to_logical",
    "logical_to_physical",
    "group_texts",
    "render_maps",
]


@dataclass(frozen=True)
class MapGroup:
    """The maps of one operand (output-to-input) or one output (input-to-output).

    ``index`` is the operand or output number, ``name`` the operand's instruction (for an
    output: the instruction itself). ``unsupported`` names the opcode without a rule that
    made the maps unknown; then ``maps`` is empty.
    """

    index: int
    name: str
    maps: tuple[IndexingMap, ...] = ()
    unsupported: str | None = None


def find_instruction(module: HloModule, name: str | None = None) -> HloInstruction:
    """The instruction called ``name`` (entry computation first, then the others); the
    entry computation's root when ``name`` is None."""
    if name is None:
        return module.entry.root
    computations = [module.entry] + [c for c in module.computations.values()
                                     if c is not module.entry]
    for comp in computations:
        try:
            return comp.instruction(name)
        except KeyError:
            continue
    raise SymidxError(f"no instruction named {name!r} in module {module.name!r}")


def instruction_maps(instr: HloInstruction, direction: Direction, *,
                     operand: int | None = None, output: int | None = None,
                     physical: bool = False) -> list[MapGroup]:
    """The map groups of ``instr`` in ``direction``.

    Output-to-input: one group per operand (only operand ``operand`` if given) for output
    ``output`` (default 0). Input-to-output: for operand ``operand`` (default 0), one group
    per output (only output ``output`` if given). ``physical`` gives the maps between
    physical indices (dimensions in the layout's major-to-minor order).
    """
    if direction == OUTPUT_TO_INPUT:
        groups = _output_to_input_groups(instr, output or 0)
        if operand is not None:
            _check_index(operand, len(groups), f"{instr.name} has", "operand")
            groups = [groups[operand]]
    elif direction == INPUT_TO_OUTPUT:
        groups = _input_to_output_groups(instr, operand or 0)
        if output is not None:
            _check_index(output, len(groups), f"{instr.name} has", "output")
            groups = [groups[output]]
    else:
        raise SymidxError(f"unknown direction {direction!r}")
    if physical:
        groups = [_physical_group(instr, direction, g, operand or 0, output or 0)
                  for g in groups]
    return groups


def _check_index(index: int, count: int, owner: str, what: str) -> None:
    if not 0 <= index < count:
        raise SymidxError(f"{owner} {count} {what}(s); there is no {what} {index}")


def _output_to_input_groups(instr: HloInstruction, output: int) -> list[MapGroup]:
    _check_index(output, num_outputs(instr), f"{instr.name} has", "output")
    names = [op.name for op in instr.operands]
    comp = called_computation(instr)
    if comp is not None:
        found = computation_output_to_input(comp, output)
        return [MapGroup(k, names[k], *found[k]) for k in range(len(names))]
    try:
        per_operand = output_to_input(instr, output)
    except UnsupportedOpError as e:
        return [MapGroup(k, name, (), e.opcode) for k, name in enumerate(names)]
    return [MapGroup(k, name, tuple(maps))
            for k, (name, maps) in enumerate(zip(names, per_operand, strict=True))]


def _input_to_output_groups(instr: HloInstruction, operand: int) -> list[MapGroup]:
    _check_index(operand, len(instr.operands), f"{instr.name} has", "operand")
    comp = called_computation(instr)
    if comp is not None:
        found = computation_input_to_output(comp, operand)
        return [MapGroup(k, instr.name, *found[k]) for k in range(num_outputs(instr))]
    try:
        per_output = input_to_output(instr, operand)
    except UnsupportedOpError as e:
        return [MapGroup(k, instr.name, (), e.opcode) for k in range(num_outputs(instr))]
    return [MapGroup(k, instr.name, tuple(maps)) for k, maps in enumerate(per_output)]


# --- composition through a called computation ----------------------------------------------

Key = tuple[str, int]  # (instruction name, output index)
Found = tuple[tuple[IndexingMap, ...], str | None]  # (maps, opcode that made them unknown)


def called_computation(instr: HloInstruction) -> HloComputation | None:
    """The computation a ``fusion`` (``calls=``) or ``call`` (``to_apply=``) runs, whose
    parameters are the instruction's operands; None for other instructions."""
    key = {"fusion": "calls", "call": "to_apply"}.get(instr.opcode)
    if key is None:
        return None
    called = instr.called_computations.get(key, ())
    if len(called) != 1 or len(called[0].parameters) != len(instr.operands):
        raise SymidxError(f"{instr.opcode} {instr.name} does not call one computation with "
                          f"one parameter per operand")
    return called[0]


def fusion_output_to_input(instr: HloInstruction, output: int = 0) -> list[Found]:
    """For each operand of the fusion (or call) ``instr``: the distinct maps from output
    ``output`` to that operand, or (no maps, opcode) when a path to it crosses an op
    without a rule."""
    comp = called_computation(instr)
    if comp is None:
        raise SymidxError(f"{instr.name} is not a fusion or call")
    return computation_output_to_input(comp, output)


def computation_output_to_input(comp: HloComputation, output: int = 0) -> list[Found]:
    """Per parameter of ``comp`` (by number): the distinct maps from output ``output`` of
    its root, or (no maps, opcode) when a path crosses an op without a rule. One sweep in
    reverse topological order; each instruction output keeps the set of maps reaching it."""
    root = comp.root
    _check_index(output, num_outputs(root), f"the root of {comp.name} has", "output")
    reaching: dict[Key, dict[IndexingMap, None]] = {
        (root.name, output): {IndexingMap.identity(output_dims(root, output)): None}}
    tainted: dict[str, str] = {}
    for instr in reversed(topological_order(comp)):
        if instr.opcode == "parameter":
            continue
        if instr.name in tainted:
            for op in instr.operands:
                tainted.setdefault(op.name, tainted[instr.name])
            continue
        for k in range(num_outputs(instr)):
            maps = reaching.get((instr.name, k))
            if not maps:
                continue
            try:
                per_operand = output_to_input(instr, k)
            except UnsupportedOpError as e:
                for op in instr.operands:
                    tainted.setdefault(op.name, e.opcode)
                break
            for op, op_maps in zip(instr.operands, per_operand, strict=True):
                if not op_maps:
                    continue
                target = reaching.setdefault(_operand_key(instr, op), {})
                for first in maps:
                    for second in op_maps:
                        target.setdefault(_composed(first, second), None)
    return [((), tainted[p.name]) if p.name in tainted
            else (_without_empty(reaching.get((p.name, 0), {})), None)
            for p in comp.parameters]


def computation_input_to_output(comp: HloComputation, parameter: int) -> list[Found]:
    """Per output of the root of ``comp``: the distinct maps from parameter ``parameter``
    to it, or (no maps, opcode) when a path crosses an op without a rule. One sweep in
    topological order, the mirror image of :func:`computation_output_to_input`."""
    source = comp.parameters[parameter]
    reaching: dict[Key, dict[IndexingMap, None]] = {
        (source.name, 0): {IndexingMap.identity(output_dims(source)): None}}
    tainted: dict[Key, str] = {}
    for instr in topological_order(comp):
        for j, op in enumerate(instr.operands):
            key = _operand_key(instr, op)
            outputs = _outputs_fed(instr, j)
            if key in tainted:
                for k in outputs:
                    tainted.setdefault((instr.name, k), tainted[key])
                continue
            maps = reaching.get(key)
            if not maps or not outputs:
                continue
            try:
                per_output = input_to_output(instr, j)
            except UnsupportedOpError as e:
                for k in outputs:
                    tainted.setdefault((instr.name, k), e.opcode)
                continue
            for k, op_maps in enumerate(per_output):
                if not op_maps:
                    continue
                target = reaching.setdefault((instr.name, k), {})
                for first in maps:
                    for second in op_maps:
                        target.setdefault(_composed(first, second), None)
    root = comp.root
    return [((), tainted[(root.name, k)]) if (root.name, k) in tainted
            else (_without_empty(reaching.get((root.name, k), {})), None)
            for k in range(num_outputs(root))]


def _operand_key(user: HloInstruction, operand: HloInstruction) -> Key:
    """Which output of ``operand`` the user reads: the element a get-tuple-element picks."""
    if user.opcode == "get-tuple-element" and user.tuple_index is not None:
        return operand.name, user.tuple_index
    return operand.name, 0


def _outputs_fed(user: HloInstruction, j: int) -> list[int]:
    """The outputs of ``user`` that operand ``j`` can reach: the matching element of a tuple,
    every output otherwise."""
    if user.opcode == "tuple":
        return [j]
    return list(range(num_outputs(user)))


def _composed(first: IndexingMap, second: IndexingMap) -> IndexingMap:
    if first.is_known_empty or second.is_known_empty:
        return IndexingMap(first.dims, second.results, special="known_empty")
    return finish(compose(first, second), fold_point_dims=True)


def _without_empty(maps: dict[IndexingMap, None]) -> tuple[IndexingMap, ...]:
    """The distinct maps; known-empty ones only when nothing else reaches (then one)."""
    found = tuple(maps)
    nonempty = tuple(m for m in found if not m.is_known_empty)
    if nonempty or not found:
        return nonempty
    return (found[0].as_known_empty(),)


# --- physical layouts -------------------------------------------------------------------------


def _major_to_minor(shape: Shape) -> tuple[int, ...]:
    layout = shape.layout_or_default
    if layout.tiles:
        raise SymidxError(f"--physical: tiled layout {layout} is not supported")
    return tuple(reversed(layout.minor_to_major))


def physical_to_logical(shape: Shape) -> IndexingMap:
    """Physical index (dims in major-to-minor order) -> logical index."""
    order = _major_to_minor(shape)
    position = {k: p for p, k in enumerate(order)}
    return IndexingMap.create([shape.dims[k] for k in order],
                              [dim(position[k]) for k in range(len(shape.dims))])


def logical_to_physical(shape: Shape) -> IndexingMap:
    """Logical index -> physical index (dims in major-to-minor order)."""
    return IndexingMap.create(shape.dims, [dim(k) for k in _major_to_minor(shape)])


def _array(shape: Shape | TupleShape, element: int, what: str) -> Shape:
    if isinstance(shape, TupleShape):
        shape = shape.elements[element]
    if not isinstance(shape, Shape):
        raise SymidxError(f"--physical: {what} has a nested tuple shape")
    return shape


def _physical_group(instr: HloInstruction, direction: Direction, group: MapGroup,
                    operand: int, output: int) -> MapGroup:
    if group.unsupported is not None:
        return group
    if direction == OUTPUT_TO_INPUT:
        op = instr.operands[group.index]
        element = (instr.tuple_index or 0) if instr.opcode == "get-tuple-element" else 0
        source = _array(instr.shape, output, instr.name)
        target = _array(op.shape, element, op.name)
    else:
        op = instr.operands[operand]
        element = (instr.tuple_index or 0) if instr.opcode == "get-tuple-element" else 0
        source = _array(op.shape, element, op.name)
        target = _array(instr.shape, group.index, instr.name)
    maps = tuple(_between_physical(m, source, target) for m in group.maps)
    return MapGroup(group.index, group.name, maps)


def _between_physical(m: IndexingMap, source: Shape, target: Shape) -> IndexingMap:
    if m.is_known_empty or m.is_undefined:
        return m
    return finish(compose(compose(physical_to_logical(source), m), logical_to_physical(target)))


# --- output ---------------------------------------------------------------------------------


def group_texts(group: MapGroup, style: str = "doc") -> list[str]:
    """The group's maps as text, or the single entry naming the unsupported op."""
    if group.unsupported is not None:
        return [f"unknown indexing (unsupported op: {group.unsupported})"]
    return [print_map(m, style) for m in group.maps]


def render_maps(instr: HloInstruction, direction: Direction, groups: Sequence[MapGroup],
                fmt: str = "text", style: str = "doc") -> str:
    """What ``symidx maps`` prints. ``fmt`` is ``text`` (each group headed ``operand K``, or
    ``output K`` for input-to-output, maps separated by a blank line), ``json``
    (``{"instruction", "direction", "operands": [{"operand", "name", "maps"}]}``) or
    ``mlir`` (text, maps as ``affine_map<...>``)."""
    style = "mlir" if fmt == "mlir" else style
    texts = [group_texts(g, style) for g in groups]
    if fmt == "json":
        return json.dumps({
            "instruction": instr.name, "direction": direction.replace("_", "-"),
            "operands": [{"operand": g.index, "name": g.name, "maps": t}
                         for g, t in zip(groups, texts, strict=True)]}, indent=2)
    label = "operand" if direction == OUTPUT_TO_INPUT else "output"
    return "\n\n".join("\n".join([f"{label} {g.index}", "\n\n".join(t)]) if t
                        else f"{label} {g.index}" for g, t in zip(groups, texts, strict=True))
