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
:mod:`~symidx.ops.rng`, :mod:`~symidx.ops.custom_call`,
:mod:`~symidx.ops.opaque`). Each
is a small function of the instruction's shapes and attributes, registered for one
direction and one or more opcodes with the one decorator :func:`rule`. The registry imports
a family on first use of one of its opcodes (the table :data:`symidx.ops.families.FAMILY`),
not with this package: a command loads only the families its module's ops need. An opcode
without a rule raises :class:`~symidx.errors.UnsupportedOpError`; no map is ever guessed.

Rules are exact, or a sound over-approximation that :func:`opaque_reason` names (a
custom-call target, an op whose reads depend on values a map cannot hold); the families'
docstrings say which.

Every map returned is simplified (:func:`symidx.core.simplify.simplify`) and has its unused
symbols removed. Dimensions with a single value stay symbolic (``d0 + rt0`` with
``d0 in [0, 0]``), as XLA prints single-op maps, except in rules registered with
``fold_point_dims=True``: the window ops, whose XLA maps are compositions that XLA
simplifies (``(0, d1 + s0, ...)``).
"""

from symidx.hlo import HloComputation, HloInstruction
from symidx.hlo.facts import num_outputs
from symidx.ops.registry import (
    HANDLED_BY_FUSION,
    INPUT_TO_OUTPUT,
    OUTPUT_TO_INPUT,
    Direction,
    finish,
    input_to_output,
    opacity,
    opaque_reason,
    output_opacity,
    output_to_input,
    rule,
    supported_opcodes,
)

__all__ = [
    "Direction",
    "OUTPUT_TO_INPUT",
    "INPUT_TO_OUTPUT",
    "rule",
    "output_to_input",
    "input_to_output",
    "finish",
    "num_outputs",
    "supported_opcodes",
    "opacity",
    "output_opacity",
    "opaque_reason",
    "library_computation",
    "HANDLED_BY_FUSION",
]


def library_computation(instr: HloInstruction) -> HloComputation | None:
    """The computation an ``xla_builder.*`` custom-call carries and computes, or None
    (:func:`symidx.ops.custom_call.library_computation`; the custom-call family is imported
    only for a custom-call)."""
    if instr.opcode != "custom-call":
        return None
    from symidx.ops.custom_call import library_computation as of_custom_call

    return of_custom_call(instr)
