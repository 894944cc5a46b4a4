"""``custom-call``: exact maps for targets whose meaning is public and fixed, a labelled
over-approximation for every other target.

Exact targets (checked against XLA's sources):

* pass-through annotations, output = operand: ``Sharding`` (a sharding annotation, removed
  by SPMD partitioning), ``xla.sdy.FuncResultSharding`` (Shardy's annotation of a function
  result), ``annotate_device_placement`` (a memory placement annotation, turned into
  ``MoveToHost``/``MoveToDevice``), ``MoveToHost`` and ``MoveToDevice`` (host offloading:
  the call is removed and its operand used in its place), ``LayoutConstraint`` (pins a
  layout; the logical index is unchanged). Output index ``d`` reads operand index ``d``.
* ``TopK`` (``(values, indices)`` of the last dimension, as the ``topk`` op): an output
  element reads its whole last-dimension row.

Any other target (``SPMDFullToShardShape`` and ``SPMDShardToFullShape`` included: their
maps depend on the device's tile, which the instruction does not give per participant), and
an exact target whose shapes do not fit its pattern, gets the sound over-approximation:
every output element reads every element of every operand. :func:`symidx.ops.opaque_reason`
then returns ``"custom-call <target>"``. A tuple-shaped operand cannot be named by a map to
one array: the rules raise :class:`~symidx.errors.UnsupportedOpError` for it.
"""

from __future__ import annotations

from symidx.hlo import HloInstruction, Shape
from symidx.hlo.facts import num_outputs
from symidx.indexing_map import IndexingMap
from symidx.ops.basic import array_operand_dims, identity, reaches_everything, reads_everything
from symidx.ops.linalg import topk_in, topk_out
from symidx.ops.registry import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, opacity, rule

#: Targets whose output is their one operand, unchanged.
PASS_THROUGH_TARGETS = frozenset({
    "Sharding", "xla.sdy.FuncResultSharding", "annotate_device_placement", "MoveToHost",
    "MoveToDevice", "LayoutConstraint",
})
TOPK_TARGET = "TopK"


def target(instr: HloInstruction) -> str:
    return instr.attr_str("custom_call_target") or ""


def _pass_through(instr: HloInstruction) -> bool:
    if target(instr) not in PASS_THROUGH_TARGETS or len(instr.operands) != 1:
        return False
    operand, out = instr.operands[0].shape, instr.shape
    return isinstance(operand, Shape) and isinstance(out, Shape) and operand.dims == out.dims


def _topk(instr: HloInstruction) -> bool:
    if target(instr) != TOPK_TARGET or len(instr.operands) != 1:
        return False
    operand = instr.operands[0].shape
    if not isinstance(operand, Shape) or not operand.dims:
        return False
    outs = instr.shape.elements if not isinstance(instr.shape, Shape) else (instr.shape,)
    return all(isinstance(o, Shape) and o.dims[:-1] == operand.dims[:-1] and o.dims
               and 0 <= o.dims[-1] <= operand.dims[-1] for o in outs) \
        and len({o.dims for o in outs if isinstance(o, Shape)}) == 1


@rule(OUTPUT_TO_INPUT, "custom-call")
def _custom_call_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    if _pass_through(instr):
        return [[identity(array_operand_dims(instr, 0))]]
    if _topk(instr):
        return topk_out(instr, output_index)
    return reads_everything(instr, output_index)


@rule(INPUT_TO_OUTPUT, "custom-call")
def _custom_call_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    if _pass_through(instr):
        return [[identity(array_operand_dims(instr, 0))]]
    if _topk(instr):
        return topk_in(instr, operand_index)
    return reaches_everything(instr, operand_index)


@opacity("custom-call")
def _custom_call_opacity(instr: HloInstruction) -> str | None:
    if _pass_through(instr) or _topk(instr) or not instr.operands or not num_outputs(instr):
        return None
    return f"custom-call {target(instr)}"
