"""Maps through computations (SPEC §5): fusions, calls, loops, whole modules.

A computation is an indexing graph (:mod:`symidx.fusion.graph`: a networkx graph with the
instructions as nodes and the maps of each step on its edges); one sweep over it composes,
deduplicates and simplifies the maps from a start to everything it reads, or to everything
that reads it (:mod:`symidx.fusion.sweep`). A step is an op's rule, or tuple plumbing, or a
called computation -- a fusion, a ``call``, conditional branches, asynchronous wrappers --
found in one table (:data:`symidx.fusion.steps.STEPS`); a ``while`` loop is whole in
:mod:`symidx.fusion.loops`, ``scan`` in :mod:`symidx.fusion.scan`. The runtime variables a
sweep meets are followed to the instruction holding their value
(:mod:`symidx.fusion.runtime`), which asks :mod:`symidx.lowering.values` what it holds.

Outputs and operands of tuple shape are counted in array leaves (:mod:`symidx.hlo.leaves`).

**The result.** Every query returns, per instruction output it reaches, one
:class:`Reached`: the distinct maps, where each comes from (:class:`Origin`, a
:class:`Path`), and whether they are unknown (``unsupported``) or a labelled
over-approximation (``opaque``). :mod:`symidx.analysis` returns the same type placed at
an operand or output of an instruction (``index``, ``name``, ``leaf``, ``shape``: what
``symidx maps`` prints).

* :func:`grouped_output_to_input` -- from one instruction output to every producer it
  reads, directly or not (XLA's grouped indexing); :func:`parameter_maps` picks a
  computation's parameters from it (the operand maps of a fusion or ``call``, or a whole
  computation analysed as one fusion); :func:`maps_between` asks the graph for the maps
  from one instruction to one producer.
* :func:`grouped_input_to_output` -- the same sweep forwards, from one instruction to every
  user; :func:`output_maps` picks the root's outputs, :func:`epilogue_input_to_output`
  the root of an epilogue chain.
* :func:`scan_output_to_input`, :func:`scan_input_to_output` -- the maps of a ``scan``.

Every function takes an optional :class:`Analysis`, which keeps what it has computed (the
graphs, and the maps of each called computation) for the next query; without one, each call
starts afresh.
"""

from __future__ import annotations

from collections.abc import Collection

from symidx.core.indexing_map import IndexingMap
from symidx.fusion.graph import IndexingGraph
from symidx.fusion.reached import Origin, Path, Reached
from symidx.fusion.sweep import (
    Analysis,
    Key,
    Limits,
    clear_memo,
    instruction_of,
    parameter_leaves,
    reached_by_parameter,
)
from symidx.hlo import HloComputation, HloInstruction
from symidx.hlo.facts import called_computation, check_index
from symidx.hlo.leaves import leaf_count

__all__ = [
    "Analysis",
    "IndexingGraph",
    "Key",
    "Limits",
    "Path",
    "Origin",
    "Reached",
    "called_computation",
    "clear_memo",
    "grouped_output_to_input",
    "grouped_input_to_output",
    "maps_between",
    "parameter_leaves",
    "parameter_maps",
    "output_maps",
    "epilogue_input_to_output",
    "scan_output_to_input",
    "scan_input_to_output",
]

def grouped_output_to_input(comp: HloComputation, target: HloInstruction | str | None = None,
                            output: int = 0, *, within: Collection[str] | None = None,
                            analysis: Analysis | None = None) -> dict[Key, Reached]:
    """From output ``output`` of ``target`` (default: the root) to every instruction output
    of ``comp`` it reads: the distinct maps per :data:`Key`, the target itself included
    (identity). ``within`` (instruction names) limits the sweep to those instructions, as
    XLA's fusion adaptors do: the others are reached but not looked through."""
    return (analysis or Analysis()).backward(comp, instruction_of(comp, target), output,
                                             within)


def grouped_input_to_output(comp: HloComputation, source: HloInstruction | str,
                            output: int = 0, *, analysis: Analysis | None = None
                            ) -> dict[Key, Reached]:
    """From output ``output`` of ``source`` to every instruction output of ``comp`` that
    reads it, directly or not: the distinct maps per :data:`Key`, the source itself
    included (identity)."""
    return (analysis or Analysis()).forward(comp, instruction_of(comp, source), output)


def maps_between(comp: HloComputation, source: HloInstruction | str,
                 target: HloInstruction | str, output: int = 0, *,
                 analysis: Analysis | None = None) -> dict[int, Reached]:
    """From output ``output`` of ``source`` to each output leaf of ``target``, one of the
    instructions it reads: a graph query (the sweep covers only the instructions on some
    path between the two). Empty when ``source`` does not read ``target``."""
    analysis = analysis or Analysis()
    graph = analysis.graph(comp)
    first, last = instruction_of(comp, source), instruction_of(comp, target)
    within = graph.between(first.name, last.name)
    if not within:
        return {}
    grouped = analysis.backward(comp, first, output, within - {last.name})
    return {lf: grouped[(last.name, lf)] for lf in range(leaf_count(last.shape))
            if (last.name, lf) in grouped}


def parameter_maps(comp: HloComputation, output: int = 0, *,
                   analysis: Analysis | None = None) -> list[Reached]:
    """Per parameter leaf of ``comp`` (:func:`parameter_leaves`: one per parameter when
    none is a tuple): the maps from output leaf ``output`` of its root."""
    analysis = analysis or Analysis()
    return reached_by_parameter(comp, analysis.parameters_of(comp, output))


def output_maps(comp: HloComputation, parameter: int, leaf: int = 0, *,
                analysis: Analysis | None = None) -> list[Reached]:
    """Per output leaf of the root of ``comp``: the maps from leaf ``leaf`` of parameter
    number ``parameter``."""
    found = (analysis or Analysis()).outputs_of(comp, parameter, leaf)
    return [found.get(k, Reached()) for k in range(leaf_count(comp.root.shape))]


def epilogue_input_to_output(comp: HloComputation, parent: HloInstruction | str,
                             root: HloInstruction | str | None = None, output: int = 0
                             ) -> Reached:
    """From the output of ``parent`` to output ``output`` of ``root`` (default: the
    computation's root) along every use chain between them (XLA's epilogue indexing)."""
    root_instr = instruction_of(comp, root)
    check_index(output, leaf_count(root_instr.shape), root_instr.name, "output")
    grouped = Analysis().forward(comp, instruction_of(comp, parent), 0)
    return grouped.get((root_instr.name, output), Reached())


def scan_output_to_input(instr: HloInstruction, output: int = 0, *,
                         analysis: Analysis | None = None
                         ) -> tuple[list[list[IndexingMap]], str | None]:
    """For output ``output`` of the ``scan`` instruction ``instr``: per operand, the maps
    from an output index to the operand elements it reads (its body analysed and walked
    through the carries, :mod:`symidx.fusion.scan`); and why they over-approximate (every
    element), or None when they are exact."""
    from symidx.fusion.scan import scan_output_to_input as of_scan

    analysis = analysis or Analysis()
    return of_scan(instr, output, analysis.parameters_of)


def scan_input_to_output(instr: HloInstruction, operand: int, *,
                         analysis: Analysis | None = None
                         ) -> tuple[list[list[IndexingMap]], str | None]:
    """For operand ``operand`` of the ``scan`` instruction ``instr``: per output, the maps
    from an operand index to the output elements that read it; and why they
    over-approximate, or None when they are exact."""
    from symidx.fusion.scan import scan_input_to_output as of_scan

    analysis = analysis or Analysis()
    return of_scan(instr, operand, analysis.parameters_of)
