"""The maps of instructions, fusions and whole computations of a module, as groups per
operand (or output): what ``symidx maps`` prints (:mod:`symidx.analysis.documents` and
:mod:`symidx.cli.render` render them).

* :func:`instruction_maps` — the per-op rules of :mod:`symidx.ops` for any instruction; for a
  ``fusion`` (or ``call``), the maps through its called computation (:mod:`symidx.fusion`:
  one sweep, a set of distinct maps per instruction); optionally between physical
  (layout-ordered) indices.
* :func:`module_fusion_maps` — the same for every fusion of a module (``symidx maps --all``).
* :func:`computation_maps` — a whole computation as one fusion (``--computation NAME``).

A group of maps whose operand or output cannot be reached by a supported op carries the
opcode in :attr:`symidx.fusion.Reached.unsupported` instead of maps.

Each takes ``cpu_limit`` (CPU seconds), ``timeout`` (seconds of the wall clock) and
``max_maps`` (distinct maps held): past one, it stops with
:class:`~symidx.errors.LimitReached` (see :class:`symidx.fusion.Limits`). An
argument of the wrong type raises :class:`~symidx.errors.ArgumentTypeError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from symidx._budget import TimeBudget
from symidx.analysis.records import ComputationMaps, FusionMaps, group_index
from symidx.core.indexing_map.direction import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, Direction
from symidx.errors import LimitReached, SymidxError, expect_type
from symidx.fusion import (
    Analysis,
    Limits,
    Origin,
    Path,
    Reached,
    parameter_leaves,
)
from symidx.fusion.steps import Step, backward_steps, forward_steps
from symidx.hlo import HloComputation, HloInstruction, HloModule, TupleShape
from symidx.hlo.facts import called_computation, num_outputs
from symidx.hlo.leaves import leaf_count, leaves

__all__ = [
    "semantics_name",
    "find_instruction",
    "find_computation",
    "computation_maps",
    "iter_computation_maps",
    "output_leaves",
    "Selection",
    "select_entries",
    "instruction_maps",
    "module_fusion_maps",
]


def semantics_name(assume_finite: bool) -> str:
    """The name of the semantics maps are given under: ``"reads"`` (the default: an output
    element reads an input element when some IEEE value of it, NaN and infinities
    included, changes the output element) or ``"finite"`` (``assume_finite=True``: when
    some finite value does, every input being finite)."""
    return "finite" if assume_finite else "reads"


def _analysis(analysis: Analysis | None, assume_finite: bool | None, timeout: float | None,
              max_maps: int | None, function: str, cpu_limit: float | None = None
              ) -> Analysis:
    """``analysis`` (given limits replace its own), or a new one under the semantics
    ``assume_finite`` asks for (default ``reads``) and the limits; a given analysis must be
    under the same semantics."""
    if analysis is None:
        return Analysis(assume_finite=bool(assume_finite), timeout=timeout, max_maps=max_maps,
                        cpu_limit=cpu_limit)
    expect_type(analysis, Analysis, "analysis", function)
    if assume_finite is not None and analysis.assume_finite != assume_finite:
        raise SymidxError(f"the analysis given is under the "
                          f"{semantics_name(analysis.assume_finite)!r} semantics, not "
                          f"{semantics_name(assume_finite)!r}")
    if timeout is not None or max_maps is not None or cpu_limit is not None:
        analysis.limits = Limits(timeout, max_maps, cpu_limit=cpu_limit)
    return analysis


def find_instruction(module: HloModule, name: str | None = None) -> HloInstruction:
    """The instruction called ``name`` (entry computation first, then the others); the
    entry computation's root when ``name`` is None."""
    expect_type(module, HloModule, "module", "find_instruction")
    expect_type(name, (str, type(None)), "name", "find_instruction")
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


def find_computation(module: HloModule, name: str) -> HloComputation:
    """The computation called ``name``; ``ENTRY`` is the entry computation."""
    expect_type(module, HloModule, "module", "find_computation")
    expect_type(name, str, "name", "find_computation")
    if name == "ENTRY":
        return module.entry
    try:
        return module.computation(name)
    except KeyError:
        known = ", ".join(list(module.computations)[:8])
        raise SymidxError(f"no computation named {name!r} in module {module.name!r} "
                          f"(it has {known}{', ...' if len(module.computations) > 8 else ''}"
                          f"; ENTRY names the entry computation)") from None


def instruction_maps(instr: HloInstruction, direction: Direction, *,
                     operand: int | None = None, output: int | None = None,
                     physical: bool = False, analysis: Analysis | None = None,
                     assume_finite: bool | None = None, timeout: float | None = None,
                     max_maps: int | None = None, cpu_limit: float | None = None
                     ) -> list[Reached]:
    """The map groups of ``instr`` in ``direction``.

    Output-to-input: one group per operand (per leaf read of a tuple-shaped operand; only
    operand ``operand`` if given) for output ``output`` (default 0). Input-to-output: for
    operand ``operand`` (default 0), one group per output (only output ``output`` if
    given). ``physical`` gives the maps between physical indices (dimensions in the
    layout's major-to-minor order). ``analysis`` keeps what was computed for the next
    query (see :class:`symidx.fusion.Analysis`). ``assume_finite``: the semantics of the
    maps (default ``reads``, see :func:`semantics_name`); it must agree with ``analysis``'s.
    """
    expect_type(instr, HloInstruction, "instr", "instruction_maps")
    analysis = _analysis(analysis, assume_finite, timeout, max_maps, "instruction_maps",
                         cpu_limit)
    if direction == OUTPUT_TO_INPUT:
        groups = _output_to_input_groups(instr, output or 0, analysis)
        if operand is not None:
            _check_index(operand, len(instr.operands), f"{instr.name} has", "operand")
            groups = [g for g in groups if g.index == operand]
    elif direction == INPUT_TO_OUTPUT:
        groups = _input_to_output_groups(instr, operand or 0, analysis)
        if output is not None:
            _check_index(output, num_outputs(instr), f"{instr.name} has", "output")
            groups = [g for g in groups if g.index == output]
    else:
        raise SymidxError(f"unknown direction {direction!r}")
    if direction == OUTPUT_TO_INPUT:
        groups = [replace(g, shape=str(leaves(instr.operands[group_index(g)].shape)[g.leaf or 0]))
                  for g in groups]
    else:
        groups = [replace(g, shape=str(leaves(instr.shape)[group_index(g)])) for g in groups]
    if physical:
        from symidx.analysis.physical import physical_group  # layouts load for --physical

        groups = [physical_group(instr, direction, g, operand or 0, output or 0)
                  for g in groups]
    return groups


def module_fusion_maps(module: HloModule, direction: Direction, *,
                       operand: int | None = None, output: int | None = None,
                       physical: bool = False, analysis: Analysis | None = None,
                       progress: Callable[[int, int, str], None] | None = None,
                       assume_finite: bool | None = None, timeout: float | None = None,
                       max_maps: int | None = None, cpu_limit: float | None = None
                       ) -> list[FusionMaps]:
    """:func:`instruction_maps` of every fusion of ``module``, computation by computation in
    text order. Output-to-input: one entry per output of each fusion (only ``output`` if
    given), its groups restricted to ``operand`` if given; input-to-output: one entry per
    operand (only ``operand`` if given), groups restricted to ``output``. A fused
    computation is analysed once however many fusions call it. ``progress(done, total,
    "fusion")`` is called after each fusion. ``assume_finite``: as for
    :func:`instruction_maps`."""
    expect_type(module, HloModule, "module", "module_fusion_maps")
    analysis = _analysis(analysis, assume_finite, timeout, max_maps, "module_fusion_maps",
                         cpu_limit)
    fusions = [(comp, instr) for comp in module.computations.values()
               for instr in comp.instructions if instr.opcode == "fusion"]
    found = []
    for done, (comp, instr) in enumerate(fusions, 1):
        if direction == OUTPUT_TO_INPUT:
            indices = [output] if output is not None else range(num_outputs(instr))
            found += [FusionMaps(instr, comp.name, k, tuple(instruction_maps(
                instr, direction, operand=operand, output=k, physical=physical,
                analysis=analysis))) for k in indices]
        else:
            indices = [operand] if operand is not None else range(len(instr.operands))
            found += [FusionMaps(instr, comp.name, k, tuple(instruction_maps(
                instr, direction, operand=k, output=output, physical=physical,
                analysis=analysis))) for k in indices]
        if progress is not None:
            progress(done, len(fusions), "fusion")
    return found


def computation_maps(comp: HloComputation, direction: Direction, *,
                     operand: int | None = None, output: int | None = None,
                     analysis: Analysis | None = None,
                     progress: Callable[[int, int, str], None] | None = None,
                     assume_finite: bool | None = None, timeout: float | None = None,
                     max_maps: int | None = None, jointly: bool = False,
                     cpu_limit: float | None = None
                     ) -> list[ComputationMaps]:
    """A whole computation analysed as one fusion, fused or not: from its root's outputs
    to its parameters, through calls, loops, conditionals, tuples and asynchronous ops.

    Output-to-input: one entry per output leaf of the root (only ``output`` if given),
    each with a group per parameter leaf (only parameter ``operand`` if given).
    Input-to-output: one entry per parameter leaf (only parameter ``operand``), each with
    a group per output leaf of the root (only ``output``). ``progress(done, total, what)``
    is called after each entry (``what``: ``"output"`` or ``"parameter leaf"``).
    ``assume_finite``: as for :func:`instruction_maps`. ``jointly``: see
    :func:`iter_computation_maps`, which gives the entries one at a time."""
    expect_type(comp, HloComputation, "comp", "computation_maps")
    return list(iter_computation_maps(
        comp, direction, operand=operand, outputs=None if output is None else [output],
        analysis=analysis, progress=progress, assume_finite=assume_finite, timeout=timeout,
        max_maps=max_maps, jointly=jointly, cpu_limit=cpu_limit))


def iter_computation_maps(comp: HloComputation, direction: Direction, *,
                          operand: int | None = None, outputs: Sequence[int] | None = None,
                          analysis: Analysis | None = None,
                          progress: Callable[[int, int, str], None] | None = None,
                          assume_finite: bool | None = None, timeout: float | None = None,
                          max_maps: int | None = None, jointly: bool = False,
                          cpu_limit: float | None = None
                          ) -> Iterator[ComputationMaps]:
    """The entries of :func:`computation_maps`, each as soon as it is computed, for the
    output leaves ``outputs`` (None: every one; input-to-output, the output groups kept).
    What the analysis keeps of ``comp`` itself is dropped after each entry, so that memory
    holds one entry's maps (and what the computations it calls share) at a time.

    ``jointly`` (output-to-input, several outputs): the outputs are swept together, once
    (:meth:`symidx.fusion.Analysis.parameters_of_outputs`): a training step's outputs
    read the parameters through one backward pass, which is then composed once, not once
    per output. The entries come when all are computed, and memory holds all their maps.
    Each has the maps a sweep of its output alone gives, with the same labels, but no
    origins. When the joint sweep stops (the budget of maps, an instruction XLA's verifier
    rejects, or half the time left when it started), the outputs are swept one at a time,
    each given as soon as it is computed, so that each gets its own answer and a stop
    loses only the outputs not finished; when the whole budget runs out,
    :class:`~symidx.errors.LimitReached` says how far it got."""
    expect_type(comp, HloComputation, "comp", "iter_computation_maps")
    analysis = _analysis(analysis, assume_finite, timeout, max_maps, "computation_maps",
                         cpu_limit)
    root = comp.root
    for k in outputs or ():
        _check_index(k, leaf_count(root.shape), f"the root of {comp.name} has", "output")
    if operand is not None:
        _check_index(operand, len(comp.parameters), f"{comp.name} has", "parameter")
    if direction == OUTPUT_TO_INPUT:
        chosen = list(outputs) if outputs is not None else list(range(leaf_count(root.shape)))
        joint = None
        if jointly and len(chosen) > 1:
            if progress is not None:  # none done yet: a long joint sweep shows how far it is
                progress(0, len(chosen), "output")
            joint = _joint(analysis, comp, chosen)
        leaf_fields = _parameter_fields(comp, operand)
        for done, k in enumerate(chosen, 1):
            held = analysis.limits.held
            found = joint[done - 1] if joint is not None else analysis.parameters_of(comp, k)
            groups = tuple(replace(found.get(key, _NOTHING), **fields)
                           for key, fields in leaf_fields)
            analysis.forget(comp)
            analysis.limits.held = held  # this entry's sets are gone: the next starts afresh
            yield ComputationMaps(comp, k, groups)
            if progress is not None:
                progress(done, len(chosen), "output")
    elif direction == INPUT_TO_OUTPUT:
        wanted = set(outputs) if outputs is not None else None
        params = [(n, lf) for n, lf in parameter_leaves(comp) if operand is None or n == operand]
        for done, (n, lf) in enumerate(params, 1):
            held = analysis.limits.held
            reached = analysis.outputs_of(comp, n, lf)
            groups = tuple(replace(_group(k, root.name, reached.get(k, Reached())),
                                   shape=str(leaves(root.shape)[k]))
                           for k in range(leaf_count(root.shape))
                           if wanted is None or k in wanted)
            tuple_param = isinstance(comp.parameters[n].shape, TupleShape)
            analysis.forget(comp)
            analysis.limits.held = held
            yield ComputationMaps(comp, n, groups, lf if tuple_param else None)
            if progress is not None:
                progress(done, len(params), "parameter leaf")
    else:
        raise SymidxError(f"unknown direction {direction!r}")


def _joint(analysis: Analysis, comp: HloComputation, outputs: list[int]
           ) -> list[dict[tuple[int, int], Reached]] | None:
    """The outputs of ``comp`` swept together, or None when that sweep stops with an
    error other than running out of the whole time budget (see
    :func:`iter_computation_maps`). The joint sweep gives its answers only at its end, so
    it may spend at most half the time left: past that the outputs are swept one at a
    time, each answered as it is done, and a stop loses only those not finished."""
    limits = analysis.limits
    held, whole = limits.held, limits.budget
    left = whole.remaining()
    if 0 < left < math.inf:
        limits.budget = TimeBudget(cpu=left / 2,
                                   wall=left / 2 if whole.wall is not None else None)
    try:
        return analysis.parameters_of_outputs(comp, outputs)
    except LimitReached as e:
        if not e.budget and whole.spent() is not None:
            raise
        return None  # the budget of maps, or the joint sweep's share of the time
    except SymidxError:
        return None
    finally:
        limits.budget, limits.held = whole, held


class Selection(NamedTuple):
    """What :func:`select_entries` chose: the output leaves and the parameter to analyse
    (None: every one), and whether the side the entries run over has any."""

    outputs: list[int] | None
    operand: int | None
    has_any: bool


def select_entries(comp: HloComputation, direction: Direction,
                   output: int | str | None = None, operand: int | str | None = None
                   ) -> Selection:
    """The entries ``symidx maps --computation`` (and ``symidx corpus --computation``)
    analyses of ``comp``, as :func:`iter_computation_maps` takes them. By default the first
    (0) of the side the entries run over (the root's outputs output-to-input, the
    parameters input-to-output), when it has any, and every one of the other side; ``"all"``
    for every one; ``output`` may also name leaves as :func:`output_leaves` reads them."""
    backward = direction == OUTPUT_TO_INPUT
    has_any = bool(leaf_count(comp.root.shape) if backward else comp.parameters)
    if isinstance(output, str):
        outputs: list[int] | None = output_leaves(comp, output)
    else:
        chosen = _chosen(output, first=backward and has_any)
        outputs = None if chosen is None else [chosen]
    return Selection(outputs, _chosen(operand, first=not backward and has_any), has_any)


def _chosen(value: int | str | None, first: bool) -> int | None:
    """None (every one) for 'all'; by default the first (0) when ``first``, else every one."""
    if value == "all" or (value is None and not first):
        return None
    return 0 if value is None else int(value)


def output_leaves(comp: HloComputation, spec: str) -> list[int]:
    """The root output leaves ``spec`` names: ``all``; a leaf number (``3``); a tuple path
    (``{2,1}`` or ``2.1``: element 1 of element 2 of the root tuple, every leaf under it);
    or the name of an instruction whose value the root returns (every leaf it fills)."""
    root = comp.root
    count = leaf_count(root.shape)
    text = spec.strip()
    if text == "all":
        return list(range(count))
    if text.lstrip("-").isdigit():
        k = int(text)
        _check_index(k, count, f"the root of {comp.name} has", "output")
        return [k]
    path = text[1:-1] if text.startswith("{") and text.endswith("}") else text
    parts = [p.strip() for p in path.replace(",", ".").split(".")]
    if len(parts) > 1 or text.startswith("{"):
        if not all(p.isdigit() for p in parts):
            raise SymidxError(f"--output {spec!r}: a tuple path is numbers, like {{2,1}}")
        return _path_leaves(comp, [int(p) for p in parts], spec)
    found = _named_leaves(root, text.lstrip("%"), 0)
    if not found:
        raise SymidxError(f"--output {spec!r}: the root of {comp.name} ({root.name}) returns "
                          f"no instruction of that name (give a leaf number, a tuple path "
                          f"like {{2,1}}, or 'all')")
    return found


def _path_leaves(comp: HloComputation, path: list[int], spec: str) -> list[int]:
    shape = comp.root.shape
    first = 0
    for depth, k in enumerate(path):
        if not isinstance(shape, TupleShape) or not 0 <= k < len(shape.elements):
            raise SymidxError(f"--output {spec!r}: the root of {comp.name} has no tuple "
                              f"element at {{{','.join(map(str, path[:depth + 1]))}}}")
        first += sum(leaf_count(e) for e in shape.elements[:k])
        shape = shape.elements[k]
    return list(range(first, first + leaf_count(shape)))


def _named_leaves(instr: HloInstruction, name: str, first: int) -> list[int]:
    """The leaves (from ``first``) of ``instr``'s value filled by the instruction ``name``,
    looking through the tuples that build it."""
    if instr.name == name:
        return list(range(first, first + leaf_count(instr.shape)))
    if instr.opcode != "tuple":
        return []
    found: list[int] = []
    for op in instr.operands:
        found += _named_leaves(op, name, first)
        first += leaf_count(op.shape)
    return found


_NOTHING = Reached()


def _parameter_fields(comp: HloComputation, operand: int | None
                      ) -> list[tuple[tuple[int, int], dict[str, Any]]]:
    """Per parameter leaf of ``comp`` (of parameter ``operand`` only, if given): its key
    in a sweep's answer and the fields its group takes (index, name, leaf and shape), worked
    out once for every output."""
    found = []
    for n, lf in parameter_leaves(comp):
        if operand is None or n == operand:
            param = comp.parameters[n]
            found.append(((n, lf), {
                "index": n, "name": param.name, "shape": str(leaves(param.shape)[lf]),
                "leaf": lf if isinstance(param.shape, TupleShape) else None}))
    return found


def _group(index: int, name: str, r: Reached, leaf: int | None = None) -> Reached:
    return replace(r, index=index, name=name, leaf=leaf)


def _check_index(index: int, count: int, owner: str, what: str) -> None:
    if not 0 <= index < count:
        raise SymidxError(f"{owner} {count} {what}(s); there is no {what} {index}")


def _output_to_input_groups(instr: HloInstruction, output: int, analysis: Analysis
                            ) -> list[Reached]:
    _check_index(output, num_outputs(instr), f"{instr.name} has", "output")
    comp = called_computation(instr)
    if comp is not None and instr.opcode != "async-start":
        found = analysis.parameters_of(comp, output)
        return [_group(n, instr.operands[n].name, found.get((n, lf), Reached()),
                       lf if isinstance(instr.operands[n].shape, TupleShape) else None)
                for n, lf in parameter_leaves(comp)]
    steps = backward_steps(instr, output, analysis, resolve=False)
    groups = []
    for j, op in enumerate(instr.operands):
        if not isinstance(op.shape, TupleShape):
            mine = [s for s in steps if s.position == j]
            groups.append(_step_group(j, op.name, mine, instr.name, op.name))
            continue
        read = sorted({s.leaf for s in steps if s.position == j})
        groups += [_step_group(j, op.name, [s for s in steps if (s.position, s.leaf) ==
                                            (j, lf)], instr.name, op.name, lf) for lf in read]
        if not read:  # a tuple read nowhere: one empty group
            groups.append(Reached(index=j, name=op.name))
    return groups


def _input_to_output_groups(instr: HloInstruction, operand: int, analysis: Analysis
                            ) -> list[Reached]:
    _check_index(operand, len(instr.operands), f"{instr.name} has", "operand")
    comp = called_computation(instr)
    if comp is not None and instr.opcode != "async-start":
        found = analysis.outputs_of(comp, operand, 0)
        return [_group(k, instr.name, found.get(k, Reached()))
                for k in range(num_outputs(instr))]
    steps = forward_steps(instr, operand, 0, analysis, resolve=False)
    source = instr.operands[operand].name
    return [_step_group(k, instr.name, [s for s in steps if s.output == k], source, instr.name)
            for k in range(num_outputs(instr))]


def _step_group(index: int, name: str, steps: list[Step], first: str, second: str,
                leaf: int | None = None) -> Reached:
    """One group from the steps of a single instruction."""
    unsupported = next((s.unsupported for s in steps if s.unsupported is not None), None)
    if unsupported is not None:
        return Reached(unsupported=unsupported, index=index, name=name, leaf=leaf)
    maps, origins = [], []
    for s in steps:
        for t in s.maps:
            if t.map in maps:
                continue
            maps.append(t.map)
            origins.append(Origin(t.via, t.count) if t.via is not None
                           else Origin(Path(second, Path(first))))
    opaque = next((s.opaque for s in steps if s.opaque is not None), None)
    return Reached(tuple(maps), tuple(origins), opaque=opaque, index=index, name=name, leaf=leaf)
