"""Maps through a computation: composition over its graph, one sweep (SPEC §5).

The output-to-input maps of a fusion's root to a parameter are the union, over every path
of the fused computation, of the per-op maps composed along the path. Paths can be
exponentially many (a ladder of 40 diamonds has 2^40), so nothing here walks paths: one
sweep in reverse topological order keeps, per instruction output, the **set of distinct
maps** reaching it from the start. Each composed map is simplified and has its unused
symbols removed before it enters a set, so two paths giving the same function meet in one
entry. The work grows with the number of instructions and of distinct maps.

* :func:`grouped_output_to_input` -- from one instruction output to every producer it
  reads, directly or not (XLA's grouped indexing); :func:`parameter_maps` picks a
  computation's parameters from it (the operand maps of a fusion or ``call``).
* :func:`grouped_input_to_output` -- the same sweep forwards, from one instruction to every
  user; :func:`output_maps` picks the root's outputs, :func:`epilogue_input_to_output`
  the root of an epilogue chain.

Fusions and ``call``\\ s met inside a computation are composed through their own
computation (memoised per sweep), so nested fusions work at any depth.

**Provenance.** Every map carries an :class:`Origin`: one :class:`Path` of instructions
that produces it (the first the sweep found) and how many paths of the graph produce it.

**Runtime variables.** An op map's runtime variable names the operand holding its value
(a dynamic-slice offset, a gather index). When the map enters the sweep, the value is
followed through ops that move integers without changing them (bitcast, broadcast, copy,
reshape, reverse, slice, transpose, widening converts) to the instruction that holds it.
If that is an ``iota`` or a constant read at a fixed element, the value is known and
replaces the variable, clamped as HLO clamps start indices (``min(d0, 32)`` for an iota
reaching past the last feasible start), so the map stays exact. A constant table read at
varying elements narrows the variable's interval to the (clamped) values it holds, and
replaces it when that is one value. Otherwise the variable stays, its provenance pointing
at that instruction (a fused computation's ``parameter(N)``, which an enclosing sweep
follows into its own computation). Across a fusion boundary the variable's interval may
already be narrowed to where the map reads anything, so the op's clamping interval is not
known there: a value replaces the variable only where it lies inside the interval, and
otherwise only narrows it to the hull of the values clamped into it (which is sound).

Every map is also kept inside the shape it points into (a dynamic-update-slice's update
index ``d - rt`` falls outside the update for some ``rt``: nothing is read there).

**Unsupported ops.** An instruction with no indexing rule makes everything it reads, and
everything those read, *unknown* (:attr:`Reached.unsupported` names the op): their other
maps would silently miss what the unsupported op reads.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, replace

import numpy as np
from sympy import Integer

from symidx.errors import SymidxError, UnsupportedOpError
from symidx.expr import Expr, bounds, max_of, min_of, rt
from symidx.hlo import HloComputation, HloInstruction, Shape, ShapeLike
from symidx.hlo.graph import topological_order
from symidx.indexing_map import IndexingMap, RuntimeVar, compose
from symidx.interval import Interval
from symidx.ops import (
    INPUT_TO_OUTPUT,
    OUTPUT_TO_INPUT,
    Direction,
    finish,
    input_to_output,
    num_outputs,
    output_to_input,
)
from symidx.ops._common import constant_value, hlo_reference, output_dims

__all__ = [
    "Key",
    "Found",
    "Path",
    "Origin",
    "Reached",
    "called_computation",
    "grouped_output_to_input",
    "grouped_input_to_output",
    "parameter_maps",
    "output_maps",
    "epilogue_input_to_output",
    "computation_output_to_input",
    "computation_input_to_output",
    "fusion_output_to_input",
]

#: An instruction output: (instruction name, output index); the index is the tuple element
#: of a tuple-shaped instruction, 0 for an array.
Key = tuple[str, int]
#: (maps, opcode that made them unknown or None): what the older API returns per group.
Found = tuple[tuple[IndexingMap, ...], str | None]


# --- provenance -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Path:
    """A path of instructions from the start of a sweep to a producer (or user), stored as a
    linked list from its last step back: ``name`` is the last instruction, ``previous`` the
    path before it. ``via`` is set when the last step was taken through a fusion or ``call``
    (``previous`` ends with it): the path inside its computation, from its root to the
    parameter (or from the parameter to the root, forwards)."""

    name: str
    previous: Path | None = None
    via: Path | None = None

    def steps(self) -> list[Path]:
        """Every step from the first to this one."""
        out: list[Path] = []
        step: Path | None = self
        while step is not None:
            out.append(step)
            step = step.previous
        return out[::-1]

    def names(self) -> list[str]:
        """The instruction names from the start, without the paths inside calls."""
        return [step.name for step in self.steps()]

    def __str__(self) -> str:
        """``a0 -> fusion.1 [root.2 -> param_0] -> p0``: a step's inner path follows the
        fusion or call it went through, in brackets."""
        parts: list[str] = []
        for step in self.steps():
            if step.via is not None and parts:
                parts[-1] += f" [{step.via}]"
            parts.append(step.name)
        return " -> ".join(parts)


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a map comes from: one path that produces it, and how many do."""

    path: Path
    count: int = 1


@dataclass(frozen=True, slots=True)
class Reached:
    """What a sweep found for one instruction output: its distinct maps, each with its
    :class:`Origin` (``origins[i]`` belongs to ``maps[i]``), or, when ``unsupported`` names
    an op without a rule on the way, no maps (unknown indexing).

    A producer that is never read on any path has no maps. Known-empty maps (the producer
    is read on no index along some path) appear only when nothing else reaches it: then
    there is exactly one."""

    maps: tuple[IndexingMap, ...] = ()
    origins: tuple[Origin, ...] = ()
    unsupported: str | None = None

    @property
    def found(self) -> Found:
        """``(maps, unsupported)``."""
        return self.maps, self.unsupported


# --- the sweeps ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Tally:
    """A map's entry in a sweep: the first path found, and the number of paths so far."""

    path: Path
    count: int


@dataclass(frozen=True, slots=True)
class _Edge:
    """The maps of one step of a sweep (an op from one output to one operand, or from one
    operand to one output): each with the path inside a called computation (None for a
    plain op) and how many paths give it; or the op without a rule."""

    maps: tuple[tuple[IndexingMap, Path | None, int], ...] = ()
    unsupported: str | None = None


Entries = dict[IndexingMap, _Tally]
_Memo = dict[tuple[HloComputation, Direction, int], list[Reached]]  # per sweep


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


def grouped_output_to_input(comp: HloComputation, target: HloInstruction | str | None = None,
                            output: int = 0, *, within: Collection[str] | None = None
                            ) -> dict[Key, Reached]:
    """From output ``output`` of ``target`` (default: the root) to every instruction output
    of ``comp`` it reads: the distinct maps per :data:`Key`, the target itself included
    (identity). ``within`` (instruction names) limits the sweep to those instructions, as
    XLA's fusion adaptors do: the others are reached but not looked through."""
    return _backward(comp, _instruction(comp, target), output, within, {})


def grouped_input_to_output(comp: HloComputation, source: HloInstruction | str,
                            output: int = 0) -> dict[Key, Reached]:
    """From output ``output`` of ``source`` to every instruction output of ``comp`` that
    reads it, directly or not: the distinct maps per :data:`Key`, the source itself
    included (identity)."""
    return _forward(comp, _instruction(comp, source), output, {})


def parameter_maps(comp: HloComputation, output: int = 0) -> list[Reached]:
    """Per parameter of ``comp`` (by number): the maps from output ``output`` of its root."""
    return _parameter_maps(comp, output, {})


def output_maps(comp: HloComputation, parameter: int) -> list[Reached]:
    """Per output of the root of ``comp``: the maps from parameter number ``parameter``."""
    return _output_maps(comp, parameter, {})


def epilogue_input_to_output(comp: HloComputation, parent: HloInstruction | str,
                             root: HloInstruction | str | None = None, output: int = 0
                             ) -> Reached:
    """From the output of ``parent`` to output ``output`` of ``root`` (default: the
    computation's root) along every use chain between them (XLA's epilogue indexing)."""
    root_instr = _instruction(comp, root)
    _check_index(output, num_outputs(root_instr), f"{root_instr.name} has", "output")
    grouped = _forward(comp, _instruction(comp, parent), 0, {})
    return grouped.get((root_instr.name, output), Reached())


def computation_output_to_input(comp: HloComputation, output: int = 0) -> list[Found]:
    """:func:`parameter_maps` as ``(maps, unsupported)`` pairs."""
    return [r.found for r in parameter_maps(comp, output)]


def computation_input_to_output(comp: HloComputation, parameter: int) -> list[Found]:
    """:func:`output_maps` as ``(maps, unsupported)`` pairs."""
    return [r.found for r in output_maps(comp, parameter)]


def fusion_output_to_input(instr: HloInstruction, output: int = 0) -> list[Found]:
    """For each operand of the fusion (or call) ``instr``: the distinct maps from output
    ``output`` to that operand, or (no maps, opcode) when a path to it crosses an op
    without a rule."""
    comp = called_computation(instr)
    if comp is None:
        raise SymidxError(f"{instr.name} is not a fusion or call")
    return computation_output_to_input(comp, output)


def _instruction(comp: HloComputation, which: HloInstruction | str | None) -> HloInstruction:
    if which is None:
        return comp.root
    if isinstance(which, HloInstruction):
        return which
    try:
        return comp.instruction(which)
    except KeyError:
        raise SymidxError(f"no instruction named {which!r} in computation {comp.name!r}"
                          ) from None


def _check_index(index: int, count: int, owner: str, what: str) -> None:
    if not 0 <= index < count:
        raise SymidxError(f"{owner} {count} {what}(s); there is no {what} {index}")


def _parameter_maps(comp: HloComputation, output: int, memo: _Memo) -> list[Reached]:
    grouped = _backward(comp, comp.root, output, None, memo)
    return [grouped.get((p.name, 0), Reached()) for p in comp.parameters]


def _output_maps(comp: HloComputation, parameter: int, memo: _Memo) -> list[Reached]:
    _check_index(parameter, len(comp.parameters), f"{comp.name} has", "parameter")
    grouped = _forward(comp, comp.parameters[parameter], 0, memo)
    return [grouped.get((comp.root.name, k), Reached()) for k in range(num_outputs(comp.root))]


def _start(instr: HloInstruction, output: int) -> dict[Key, Entries]:
    _check_index(output, num_outputs(instr), f"{instr.name} has", "output")
    identity = IndexingMap.identity(output_dims(instr, output))
    return {(instr.name, output): {identity: _Tally(Path(instr.name), 1)}}


def _backward(comp: HloComputation, target: HloInstruction, output: int,
              within: Collection[str] | None, memo: _Memo) -> dict[Key, Reached]:
    """The output-to-input sweep: users before operands, so a set is complete before it
    is composed further."""
    reaching = _start(target, output)
    unknown: dict[str, str] = {}  # instruction name -> the op without a rule above it
    for instr in reversed(topological_order(comp)):
        if not instr.operands or (within is not None and instr.name not in within):
            continue
        if instr.name in unknown:
            for op in instr.operands:
                unknown.setdefault(op.name, unknown[instr.name])
            continue
        for k in range(num_outputs(instr)):
            here = reaching.get((instr.name, k))
            if not here:
                continue
            for op, edge in zip(instr.operands, _edges(instr, OUTPUT_TO_INPUT, k, memo)):
                if edge.unsupported is not None:
                    unknown.setdefault(op.name, edge.unsupported)
                elif edge.maps:
                    _extend(reaching.setdefault(_operand_key(instr, op), {}), here, edge,
                            op.name)
    found = {key: Reached(unsupported=unknown[key[0]]) if key[0] in unknown
             else _reached(entries) for key, entries in reaching.items()}
    named = {name for name, _ in found}
    found.update({(name, 0): Reached(unsupported=opcode) for name, opcode in unknown.items()
                  if name not in named})
    return found


def _forward(comp: HloComputation, source: HloInstruction, output: int, memo: _Memo
             ) -> dict[Key, Reached]:
    """The input-to-output sweep: operands before users."""
    reaching = _start(source, output)
    unknown: dict[Key, str] = {}
    for instr in topological_order(comp):
        for j, op in enumerate(instr.operands):
            key = _operand_key(instr, op)
            outputs = _outputs_fed(instr, j)
            if key in unknown:
                for k in outputs:
                    unknown.setdefault((instr.name, k), unknown[key])
                continue
            here = reaching.get(key)
            if not here or not outputs:
                continue
            for k, edge in enumerate(_edges(instr, INPUT_TO_OUTPUT, j, memo)):
                if edge.unsupported is not None:
                    unknown.setdefault((instr.name, k), edge.unsupported)
                elif edge.maps:
                    _extend(reaching.setdefault((instr.name, k), {}), here, edge, instr.name)
    found = {key: _reached(entries) for key, entries in reaching.items() if key not in unknown}
    found.update({key: Reached(unsupported=opcode) for key, opcode in unknown.items()})
    return found


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


def _extend(target: Entries, here: Entries, edge: _Edge, name: str) -> None:
    """Add to ``target`` every map of ``here`` composed with every map of ``edge``."""
    for first, tally in here.items():
        for second, via, count in edge.maps:
            m = _composed(first, second)
            entry = target.get(m)
            if entry is None:
                target[m] = _Tally(Path(name, tally.path, via), tally.count * count)
            else:
                entry.count += tally.count * count


def _composed(first: IndexingMap, second: IndexingMap) -> IndexingMap:
    if first.is_known_empty or second.is_known_empty:
        return IndexingMap(first.dims, second.results, special="known_empty")
    return finish(compose(first, second), fold_point_dims=True)


def _reached(entries: Entries) -> Reached:
    """The distinct maps with their origins; known-empty ones only when nothing else
    reaches (then one)."""
    nonempty = [(m, t) for m, t in entries.items() if not m.is_known_empty]
    if not nonempty and entries:
        m, tally = next(iter(entries.items()))
        nonempty = [(m.as_known_empty(), tally)]
    return Reached(tuple(m for m, _ in nonempty),
                   tuple(Origin(t.path, t.count) for _, t in nonempty))


# --- one step: an op's rule, or a called computation --------------------------------------------


def _edges(instr: HloInstruction, direction: Direction, index: int, memo: _Memo
           ) -> list[_Edge]:
    """The maps of ``instr`` from output ``index`` to each operand (output-to-input) or from
    operand ``index`` to each output, with their runtime variables resolved."""
    comp = called_computation(instr)
    if comp is not None:
        edges = [_Edge(tuple((m, o.path, o.count) for m, o in zip(r.maps, r.origins)),
                       r.unsupported) for r in _called(comp, direction, index, memo)]
        nested = True
    else:
        rule = output_to_input if direction == OUTPUT_TO_INPUT else input_to_output
        count = len(instr.operands) if direction == OUTPUT_TO_INPUT else num_outputs(instr)
        try:
            groups = rule(instr, index)
        except UnsupportedOpError as e:
            return [_Edge(unsupported=e.opcode)] * count
        edges = [_Edge(tuple((m, None, 1) for m in group)) for group in groups]
        nested = False
    sources = _runtime_sources(instr, nested)
    return [_Edge(tuple((_inside(_resolve_runtime_vars(m, sources, clamp=not nested), dims),
                         via, count) for m, via, count in e.maps), e.unsupported)
            for e, dims in zip(edges, _target_dims(instr, direction))]


def _target_dims(instr: HloInstruction, direction: Direction) -> list[tuple[int, ...] | None]:
    """The shape each group of ``instr``'s maps points into: its operands (the element a
    get-tuple-element picks), or its outputs; None for a whole tuple."""
    if direction == INPUT_TO_OUTPUT:
        return [output_dims(instr, k) for k in range(num_outputs(instr))]
    return [output_dims(op, key[1]) if instr.opcode == "get-tuple-element"
            or isinstance(op.shape, Shape) else None
            for op, key in ((op, _operand_key(instr, op)) for op in instr.operands)]


def _inside(m: IndexingMap, dims: tuple[int, ...] | None) -> IndexingMap:
    """``m`` restricted to the indices whose results lie in ``dims``: outside, nothing is
    read (a dynamic-update-slice's update index ``d - rt`` for some ``rt``)."""
    if dims is None or m.is_known_empty or m.is_undefined or len(dims) != m.num_results:
        return m
    env = m.variable_bounds()
    if all(bounds(r, env) in Interval(0, n - 1) for r, n in zip(m.results, dims)):
        return m
    return finish(compose(m, IndexingMap.identity(dims)), fold_point_dims=True)


def _called(comp: HloComputation, direction: Direction, index: int, memo: _Memo
            ) -> list[Reached]:
    key = (comp, direction, index)
    if key not in memo:
        memo[key] = (_parameter_maps(comp, index, memo) if direction == OUTPUT_TO_INPUT
                     else _output_maps(comp, index, memo))
    return memo[key]


# --- runtime variables --------------------------------------------------------------------------

#: Ops whose output element is one element of operand 0 (a convert: see
#: :func:`_preserves_values`).
_VALUE_PRESERVING = frozenset({"bitcast", "broadcast", "convert", "copy", "reshape",
                               "reverse", "slice", "transpose"})
_INTEGER_TYPE = re.compile(r"([su])([0-9]+)")
_TABLE_LIMIT = 1 << 16  # elements of a constant index table read to bound its values


def _runtime_sources(instr: HloInstruction, nested: bool) -> dict[str, HloInstruction]:
    """The operands of ``instr`` by the name the runtime variables of its maps give them:
    ``parameter(N)`` of a called computation is operand N; a plain op's variables name the
    operand itself (see :func:`symidx.ops._common.hlo_reference`)."""
    if nested:
        return {f"parameter({n})": op for n, op in enumerate(instr.operands)}
    return {hlo_reference(op): op for op in reversed(instr.operands)}


def _resolve_runtime_vars(m: IndexingMap, sources: dict[str, HloInstruction],
                         clamp: bool) -> IndexingMap:
    """``m`` with each runtime variable whose ``hlo`` is a key of ``sources`` followed to the
    instruction holding its value: replaced by the value when that is known (a constant or
    an iota), otherwise re-pointed at that instruction.

    ``clamp``: the variable's interval is still the op's clamping interval (a map fresh
    from its rule), so a known value reaching outside it is replaced by the clamped value.
    Without ``clamp`` a value replaces the variable only where it lies inside the interval.
    """
    i = 0
    while i < m.num_rts:
        var = m.rts[i]
        origin = sources.get(var.hlo)
        if origin is None or var.map is None:
            i += 1
            continue
        holder = _trace_value(origin, var.map)
        folded = _fold(m, i, holder, clamp)
        if folded is not None:
            m = folded  # replaced (the next variable now has index i) or narrowed
            continue
        if hlo_reference(holder.instr) != var.hlo or holder.element != var.map:
            m = _repoint(m, i, holder.instr, holder.element)
        i += 1
    return m


@dataclass(frozen=True, slots=True)
class _Holder:
    """The instruction holding a runtime value and the map from the map's dims to the
    element holding it."""

    instr: HloInstruction
    element: IndexingMap


def _integer_range(shape: ShapeLike) -> Interval | None:
    """The values of an integer array type; None for other types."""
    match = _INTEGER_TYPE.fullmatch(shape.element_type) if isinstance(shape, Shape) else None
    if match is None:
        return None
    bits = int(match.group(2))
    if match.group(1) == "u":
        return Interval(0, (1 << bits) - 1)
    return Interval(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


def _preserves_values(instr: HloInstruction) -> bool:
    """Does every output element hold an operand element's integer unchanged? A convert
    must widen (or keep) the integer type; the others only move elements."""
    if instr.opcode not in _VALUE_PRESERVING or len(instr.operands) != 1:
        return False
    before, after = _integer_range(instr.operands[0].shape), _integer_range(instr.shape)
    return before is not None and after is not None and before in after


def _trace_value(instr: HloInstruction, element: IndexingMap) -> _Holder:
    """Follow a value back through value-preserving ops to the instruction holding it."""
    element = finish(element, fold_point_dims=True)  # a dim of size 1 is its one value
    while _preserves_values(instr):
        try:
            (maps,) = output_to_input(instr, 0)
        except SymidxError:
            break
        if len(maps) != 1 or maps[0].num_ranges or maps[0].num_rts:
            break
        element = finish(compose(element, maps[0]), fold_point_dims=True)
        instr = instr.operands[0]
    return _Holder(instr, element)


def _value_expression(holder: _Holder) -> Expr | None:
    """The value as an expression over the map's dims: a constant's element when the
    element is fixed (or the constant a scalar), an iota's index along its dimension."""
    instr, element = holder.instr, holder.element
    if instr.opcode == "constant" and all(r.is_Integer for r in element.results):
        value = constant_value(instr, [int(r) for r in element.results])
        return None if value is None else Integer(value)
    if instr.opcode == "iota":
        axis = instr.attr_int("iota_dimension", 0)
        if axis is None or not 0 <= axis < element.num_results:
            return None
        value = element.results[axis]
        return value if value.free_symbols <= set(element.dim_vars + element.range_vars) \
            else None
    return None


def _table_span(holder: _Holder) -> Interval | None:
    """The smallest and largest values a constant array holds at the elements the element
    map reaches (None when not a small integer constant, or nothing is reached)."""
    instr, element = holder.instr, holder.element
    if instr.opcode != "constant" or instr.literal is None \
            or element.domain_size() > _TABLE_LIMIT:
        return None
    table = np.asarray(instr.literal)
    if table.dtype.kind not in "iu" or not table.ndim \
            or not isinstance(instr.shape, Shape) or table.shape != instr.shape.dims:
        return None
    lo = hi = None
    for point in element.points(limit=_TABLE_LIMIT):
        results, mask = element.evaluate_arrays(point)
        if len(results) != table.ndim or not all(
                ((r[mask] >= 0) & (r[mask] < n)).all() for r, n in zip(results, table.shape)):
            return None
        values = table[tuple(r[mask] for r in results)]
        if values.size:
            lo = int(values.min()) if lo is None else min(lo, int(values.min()))
            hi = int(values.max()) if hi is None else max(hi, int(values.max()))
    return None if lo is None or hi is None else Interval(lo, hi)


def _fold(m: IndexingMap, i: int, holder: _Holder, clamp: bool) -> IndexingMap | None:
    """``m`` with runtime variable ``i`` replaced by its value where that is known, or its
    interval narrowed to the values it can take (a point: replaced by it); None when
    nothing is known.

    A value ``v`` reaching outside the variable's interval ``[lo, hi]`` is, with ``clamp``,
    replaced by ``min(max(v, lo), hi)``. Otherwise the variable takes ``clamp(v, [lo, hi])``
    or no value at all (its interval may have been narrowed to where the map reads
    something, and we do not know the op's own clamping interval), so only the interval is
    narrowed to the hull of those values."""
    element = holder.element
    if element.is_known_empty or element.is_undefined:
        return None
    var = m.rts[i]
    value = _value_expression(holder)
    if value is not None and not _shares_range_vars(value, element, m, clamp):
        value = None
    if value is None:
        span = _table_span(holder)
        if span is None:
            return None
    else:
        span = bounds(value, m.variable_bounds())
        representable = _integer_range(holder.instr.shape)
        if representable is None or span not in representable:
            return None  # e.g. an s8 iota longer than 128 wraps
        if span in var.bounds:
            return _substitute(m, i, value)
        if clamp:
            return _substitute(m, i, min_of(max_of(value, var.bounds.lo), var.bounds.hi))
    lo, hi = var.bounds.lo, var.bounds.hi
    narrowed = Interval(max(lo, min(hi, span.lo)), max(lo, min(hi, span.hi)))
    if narrowed.is_point:
        return _substitute(m, i, Integer(narrowed.lo))
    if narrowed == var.bounds:
        return None
    rts = list(m.rts)
    rts[i] = replace(var, bounds=narrowed)
    return finish(m.replace(rts=rts), fold_point_dims=True)


def _shares_range_vars(value: Expr, element: IndexingMap, m: IndexingMap, fresh: bool
                       ) -> bool:
    """Can ``value``, over the element map's variables, stand in ``m``? Its dims are
    ``m``'s; its range variables are ``m``'s first ones only in a map fresh from its rule
    (the rules' convention, which composition does not keep)."""
    if not value.free_symbols & set(element.range_vars):
        return True
    return fresh and element.ranges == m.ranges[:element.num_ranges]


def _substitute(m: IndexingMap, i: int, value: Expr) -> IndexingMap:
    results, constraints = m.substitute({rt(i): value})
    return finish(IndexingMap.create(m.dims, results, m.ranges, m.rts, constraints, m.names),
                  fold_point_dims=True)


def _repoint(m: IndexingMap, i: int, instr: HloInstruction, element: IndexingMap
             ) -> IndexingMap:
    rts = list(m.rts)
    rts[i] = RuntimeVar(rts[i].bounds, hlo_reference(instr), element)
    return m.replace(rts=rts)

