"""Per-op indexing rules (SPEC §2), one registry keyed by opcode.

For one HLO instruction:

* :func:`output_to_input` gives, for one output (``output_index``; only tuple-shaped
  instructions have more than one), a list of maps per operand: each map sends an index of
  that output to the operand elements it reads;
* :func:`input_to_output` gives, for one operand, a list of maps per output: each map sends
  an index of that operand to the output elements that read it.

Rules live in modules by family (:mod:`~symidx.ops.elementwise`,
:mod:`~symidx.ops.shape_ops`, :mod:`~symidx.ops.slicing`, :mod:`~symidx.ops.reduction`,
:mod:`~symidx.ops.convolution`, :mod:`~symidx.ops.collectives`,
:mod:`~symidx.ops.structural`, :mod:`~symidx.ops.scatter`, :mod:`~symidx.ops.linalg`,
:mod:`~symidx.ops.rng`, :mod:`~symidx.ops.custom_call`, :mod:`~symidx.ops.scan`,
:mod:`~symidx.ops.opaque`). Each
is a small function of the instruction's shapes and attributes, registered for one
direction and one or more opcodes with the one decorator :func:`rule`. An opcode without a
rule raises :class:`~symidx.errors.UnsupportedOpError`; no map is ever guessed.

Rules are exact, or a sound over-approximation that :func:`opaque_reason` names (a
custom-call target, an op whose reads depend on values a map cannot hold); the families'
docstrings say which.

Every map returned is simplified (:func:`symidx.simplify.simplify`) and has its unused
symbols removed. Dimensions with a single value stay symbolic (``d0 + rt0`` with
``d0 in [0, 0]``), as XLA prints single-op maps, except in rules registered with
``fold_point_dims=True``: the window ops, whose XLA maps are compositions that XLA
simplifies (``(0, d1 + s0, ...)``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from symidx.errors import SymidxError, UnsupportedOpError
from symidx.hlo import HloInstruction
from symidx.hlo.leaves import leaf_count
from symidx.indexing_map import IndexingMap
from symidx.simplify import remove_unused_symbols, simplify

__all__ = [
    "Direction",
    "OUTPUT_TO_INPUT",
    "INPUT_TO_OUTPUT",
    "rule",
    "output_to_input",
    "input_to_output",
    "finish",
    "supported_opcodes",
    "opacity",
    "opaque_reason",
    "HANDLED_BY_FUSION",
]

Direction = Literal["output_to_input", "input_to_output"]
OUTPUT_TO_INPUT: Direction = "output_to_input"
INPUT_TO_OUTPUT: Direction = "input_to_output"

#: Opcodes without a per-op rule by design: they call computations (while, conditional,
#: call, fusion, async-*), split an op into a start and a done (``*-start``/``*-done``
#: collectives, copy-start/-done, send/recv and their done), or move tuples and tokens
#: between computations and the outside (opt-barrier, domain, add-dependency, infeed,
#: outfeed). :mod:`symidx.fusion` follows their data through the computations involved.
HANDLED_BY_FUSION = frozenset({
    "while", "conditional", "call", "fusion", "async-start", "async-update", "async-done",
    "all-gather-start", "all-gather-done", "all-reduce-start", "all-reduce-done",
    "collective-permute-start", "collective-permute-done", "copy-start", "copy-done",
    "send", "send-done", "recv", "recv-done", "opt-barrier", "domain", "add-dependency",
    "infeed", "outfeed",
})

#: A rule: (instruction, output index or operand index) -> a list of maps per operand
#: (output-to-input) or per output (input-to-output).
Rule = Callable[[HloInstruction, int], list[list[IndexingMap]]]


@dataclass(frozen=True, slots=True)
class _Entry:
    fn: Rule
    fold_point_dims: bool


_RULES: dict[tuple[Direction, str], _Entry] = {}


def rule(direction: Direction, *opcodes: str, fold_point_dims: bool = False
         ) -> Callable[[Rule], Rule]:
    """Register ``fn`` as the ``direction`` rule of every opcode in ``opcodes``.

    The rule receives the instruction and the output index (output-to-input) or the operand
    index (input-to-output); indices are checked before it is called. It returns raw maps;
    :func:`finish` simplifies them.
    """
    if direction not in (OUTPUT_TO_INPUT, INPUT_TO_OUTPUT):
        raise ValueError(f"unknown direction {direction!r}")

    def register(fn: Rule) -> Rule:
        for opcode in opcodes:
            if (direction, opcode) in _RULES:
                raise ValueError(f"two {direction} rules for {opcode!r}")
            _RULES[(direction, opcode)] = _Entry(fn, fold_point_dims)
        return fn

    return register


#: Per opcode: a function telling why an instruction's maps over-approximate what it reads.
Opacity = Callable[[HloInstruction], "str | None"]
_OPACITY: dict[str, Opacity] = {}


def opacity(*opcodes: str) -> Callable[[Opacity], Opacity]:
    """Register ``fn(instr) -> reason | None`` for ``opcodes``: the rules of an instruction
    for which it returns a reason (``"custom-call TopK"``) give a sound over-approximation
    of what it reads (every element of an operand, say), not the exact maps; None means the
    rules are exact for that instruction."""

    def register(fn: Opacity) -> Opacity:
        for opcode in opcodes:
            if opcode in _OPACITY:
                raise ValueError(f"two opacity functions for {opcode!r}")
            _OPACITY[opcode] = fn
        return fn

    return register


def opaque_reason(instr: HloInstruction) -> str | None:
    """Why the maps of ``instr`` are a labelled over-approximation, or None when exact."""
    fn = _OPACITY.get(instr.opcode)
    return None if fn is None else fn(instr)


def supported_opcodes(direction: Direction = OUTPUT_TO_INPUT) -> frozenset[str]:
    """The opcodes with a rule in ``direction``."""
    return frozenset(op for d, op in _RULES if d == direction)


def finish(m: IndexingMap, fold_point_dims: bool = False) -> IndexingMap:
    """The map simplified, without unused range or runtime variables."""
    m = simplify(m, replace_point_dims=fold_point_dims)
    if m.is_known_empty or m.is_undefined:
        return m
    return remove_unused_symbols(m)[0]


def _lookup(direction: Direction, instr: HloInstruction) -> _Entry:
    entry = _RULES.get((direction, instr.opcode))
    if entry is None:
        raise UnsupportedOpError(instr.opcode)
    return entry


def num_outputs(instr: HloInstruction) -> int:
    """How many outputs the instruction has: one per array leaf of its shape (see
    :mod:`symidx.hlo.leaves`; a flat tuple has one per element)."""
    return leaf_count(instr.shape)


def output_to_input(instr: HloInstruction, output_index: int = 0) -> list[list[IndexingMap]]:
    """For output ``output_index`` of ``instr``: per operand, the maps from an output index
    to the operand elements it reads. Raises :class:`UnsupportedOpError` for an op without a
    rule, :class:`SymidxError` for a bad index."""
    entry = _lookup(OUTPUT_TO_INPUT, instr)
    count = num_outputs(instr)
    if not 0 <= output_index < count:
        raise SymidxError(f"{instr.name} has {count} output(s); there is no output "
                          f"{output_index}")
    groups = entry.fn(instr, output_index)
    return [[finish(m, entry.fold_point_dims) for m in group] for group in groups]


def input_to_output(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    """For operand ``operand_index`` of ``instr``: per output, the maps from an operand index
    to the output elements that read it. Raises :class:`UnsupportedOpError` for an op
    without a rule, :class:`SymidxError` for a bad index."""
    entry = _lookup(INPUT_TO_OUTPUT, instr)
    if not 0 <= operand_index < len(instr.operands):
        raise SymidxError(f"{instr.name} has {len(instr.operands)} operand(s); there is no "
                          f"operand {operand_index}")
    groups = entry.fn(instr, operand_index)
    return [[finish(m, entry.fold_point_dims) for m in group] for group in groups]


# Importing the families registers their rules.
from symidx.ops import (  # noqa: E402,F401
    collectives,
    convolution,
    custom_call,
    elementwise,
    linalg,
    opaque,
    reduction,
    rng,
    scan,
    scatter,
    shape_ops,
    slicing,
    structural,
)
