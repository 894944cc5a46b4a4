"""What ``symidx maps`` prints: text a person reads, or JSON of the versioned schema
``symidx.maps/1`` (``docs/json.md``; the JSON Schema is ``symidx/schemas/maps-1.json``).

**Text.** Each group is headed by what it is, ``operand 0 (%b.1: f32[96])`` (``output K``
input-to-output; ``operand K, leaf L`` for a leaf of a tuple), then, as the case may be,
``over-approximation (REASON)``, ``unknown indexing (unsupported op: NAME)`` or
``(not read by output K)`` / ``(not reached from input K)``, then its maps in the chosen
``--style``, separated by blank lines (``--explain`` adds a ``path:`` line under each, and
where the module has metadata, a ``source:`` line under the group's header with the
``op_name`` and file:line of the instruction it names, and an ``at:`` line under the path
for each distinct source location along it).

**JSON.** The documents of :mod:`symidx.analysis.documents` (``symidx corpus`` writes the
same ones).
"""

from __future__ import annotations

from collections.abc import Sequence

from symidx._text import terminal_safe
from symidx.analysis.documents import (
    Context,
    instruction_context,
)
from symidx.analysis.records import ComputationMaps, FusionMaps, group_index
from symidx.analysis.sources import SourceFinder
from symidx.core.indexing_map.direction import OUTPUT_TO_INPUT, Direction
from symidx.core.syntax import print_map
from symidx.fusion import Origin, Reached
from symidx.hlo import HloInstruction, HloModule
from symidx.hlo.facts import num_outputs

__all__ = ["render_computations", "render_computation_text", "render_fusions", "render_maps"]


# --- text ---------------------------------------------------------------------------------------


def _group_text(g: Reached, direction: Direction, index: int, style: str,
                explain: bool, context: Context | None = None) -> str:
    """A group headed by what it is (``index``: the output, or input, the record is for).
    What the module wrote (source locations, a custom call's target in a reason) is made
    safe to show: a module's metadata never sends escape sequences to a terminal."""
    label = "operand" if direction == OUTPUT_TO_INPUT else "output"
    leaf = "" if g.leaf is None else f", leaf {g.leaf}"
    lines = [f"{label} {g.index}{leaf} (%{g.name}: {g.shape})" if g.shape
             else f"{label} {g.index}{leaf}"]
    if explain and context is not None:
        source = context.finder.location(g.name, context.outer)
        if source is not None:
            lines.append(f"source: {terminal_safe(str(source))}")
    if g.unsupported is not None:
        lines.append(f"unknown indexing (unsupported op: {terminal_safe(str(g.unsupported))})")
        return "\n".join(lines)
    if g.opaque is not None:
        lines.append(f"over-approximation ({terminal_safe(str(g.opaque))})")
    if not g.maps:
        lines.append(f"(not read by output {index})" if direction == OUTPUT_TO_INPUT
                     else f"(not reached from input {index})")
        return "\n".join(lines)
    texts = [print_map(m, style) for m in g.maps]
    if explain:
        texts = [f"{text}\npath: {_describe(o)}" + _along(o, context)
                 for text, o in zip(texts, g.origins, strict=True)]
    return "\n".join(lines + ["\n\n".join(texts)])


def _along(origin: Origin, context: Context | None) -> str:
    """``at:`` lines: the source locations along a map's path."""
    if context is None:
        return ""
    return "".join(f"\nat: {terminal_safe(str(loc))}"
                   for _, loc in context.finder.along(origin.path, context.inner))


def _describe(origin: Origin) -> str:
    paths = f" (one of {origin.count} paths)" if origin.count > 1 else ""
    return f"{origin.path}{paths}"


def _groups_text(groups: Sequence[Reached], direction: Direction, index: int, style: str,
                 explain: bool, context: Context | None = None) -> str:
    return "\n\n".join(_group_text(g, direction, index, style, explain, context)
                       for g in groups)


# --- the three outputs ------------------------------------------------------------------------


def render_maps(module: HloModule, instr: HloInstruction, direction: Direction,
                groups: Sequence[Reached], index: int, style: str = "doc",
                explain: bool = False) -> str:
    """One instruction's groups for its output ``index`` (output-to-input) or input
    ``index`` (input-to-output), as text (the JSON document is
    :func:`symidx.analysis.documents.instruction_document`)."""
    context = instruction_context(SourceFinder(module), instr) if explain else None
    return _groups_text(groups, direction, index, style, explain, context)


def render_fusions(module: HloModule, direction: Direction, found: Sequence[FusionMaps],
                   style: str = "doc", explain: bool = False) -> str:
    """Every fusion's groups (``symidx maps --all``): text blocks headed ``fusion NAME``
    (``fusion NAME output K`` for an output of a multi-output fusion, ``fusion NAME input
    K`` input-to-output); the JSON document is
    :func:`symidx.analysis.documents.fusions_document`."""
    selector = "output" if direction == OUTPUT_TO_INPUT else "input"
    blocks = []
    finder = SourceFinder(module)
    for f in found:
        several = (num_outputs(f.instr) if direction == OUTPUT_TO_INPUT
                   else len(f.instr.operands)) > 1
        header = f"fusion {f.instr.name}" + (f" {selector} {f.index}" if several else "")
        context = instruction_context(finder, f.instr, module.computations.get(f.computation)) \
            if explain else None
        body = _groups_text(f.groups, direction, f.index, style, explain, context)
        blocks.append(f"{header}\n{body}" if body else header)
    return "\n\n".join(blocks)


def render_computations(module: HloModule, direction: Direction,
                        found: Sequence[ComputationMaps], style: str = "doc",
                        explain: bool = False) -> str:
    """A whole computation's groups (``symidx maps --computation``): text blocks headed
    ``computation NAME output K`` (``input K[, leaf L]`` input-to-output); the JSON
    document is :func:`symidx.analysis.documents.computations_document`."""
    finder = SourceFinder(module) if explain else None
    return "\n\n".join(render_computation_text(c, direction, style, explain, finder)
                       for c in found)


def render_computation_text(c: ComputationMaps, direction: Direction, style: str = "doc",
                            explain: bool = False, finder: SourceFinder | None = None) -> str:
    """One entry of :func:`render_computations` as text. The groups an entry does not
    read (or reach), when there are several, are one line at the end, ``not read by output
    K: parameters 1-976, 978 (977 of 979)``, instead of an empty block each."""
    selector = "output" if direction == OUTPUT_TO_INPUT else "input"
    header = f"computation {c.computation.name} {selector} {c.index}" + (
        "" if c.leaf is None else f", leaf {c.leaf}")
    unread = [g for g in c.groups if not g.maps and g.unsupported is None and g.opaque is None]
    shown = [g for g in c.groups if g not in unread] if len(unread) > 1 else list(c.groups)
    parts = [header]
    context = None if finder is None else Context(finder, c.computation, c.computation)
    body = _groups_text(shown, direction, c.index, style, explain, context)
    if body:
        parts.append(body)
    if len(unread) > 1:
        what = "parameters" if direction == OUTPUT_TO_INPUT else "outputs"
        verb = f"not read by output {c.index}" if direction == OUTPUT_TO_INPUT \
            else f"not reached from input {c.index}"
        names = _ranges([(group_index(g), g.leaf) for g in unread])
        parts.append(f"{verb}: {what} {names} ({len(unread)} of {len(c.groups)})")
    return "\n".join(parts[:1] + ["\n\n".join(parts[1:])]) if len(parts) > 1 else header


def _ranges(items: Sequence[tuple[int, int | None]]) -> str:
    """``0-5, 7, 9 leaf 2``: runs of consecutive indices (a tuple's leaves by name)."""
    out: list[str] = []
    run: list[int] = []

    def flush() -> None:
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
            run.clear()

    for index, leaf in items:
        if leaf is not None:
            flush()
            out.append(f"{index} leaf {leaf}")
        elif run and index == run[-1] + 1:
            run.append(index)
        else:
            flush()
            run.append(index)
    flush()
    return ", ".join(out)
