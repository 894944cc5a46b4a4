"""Collectives, on the local (per-device) shapes.

``all-reduce`` and ``collective-permute`` keep the index: output ``k`` reads operand ``k``
(of every replica) at the same index. ``all-gather`` concatenates the replicas' operands
along ``dimensions={k}``: output index ``d`` along that dim reads local index
``d mod operand_size`` (of replica ``d floordiv operand_size``, which a map over one tensor
does not record); in the other direction local index ``d`` reaches
``d + s * operand_size`` for every replica position ``s``.
"""

from __future__ import annotations

from collections.abc import Sequence

from symidx.expr import Mod, dim
from symidx.hlo import HloInstruction
from symidx.indexing_map import IndexingMap
from symidx.ops import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, num_outputs, rule
from symidx.ops._common import (
    attribute,
    identity,
    operand_dims,
    output_dims,
    require,
    var_or_zero,
)


def _one_to_one(instr: HloInstruction) -> None:
    require(num_outputs(instr) == len(instr.operands), instr,
            "expected one output per operand")


@rule(OUTPUT_TO_INPUT, "all-reduce", "collective-permute")
def _same_index_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    _one_to_one(instr)
    dims = output_dims(instr, output_index)
    require(operand_dims(instr, output_index) == dims, instr, "operand and output differ")
    return [[identity(dims)] if k == output_index else [] for k in range(len(instr.operands))]


@rule(INPUT_TO_OUTPUT, "all-reduce", "collective-permute")
def _same_index_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    _one_to_one(instr)
    dims = operand_dims(instr, operand_index)
    require(output_dims(instr, operand_index) == dims, instr, "operand and output differ")
    return [[identity(dims)] if k == operand_index else [] for k in range(num_outputs(instr))]


def all_gather_operand_map(out: Sequence[int], operand: Sequence[int], axis: int
                           ) -> IndexingMap:
    """Output index -> local operand index."""
    return IndexingMap.create(out, [Mod(dim(i), operand[i]) if i == axis else dim(i)
                                    for i in range(len(out))])


def all_gather_output_map(out: Sequence[int], operand: Sequence[int], axis: int
                          ) -> IndexingMap:
    """Local operand index -> output index, one range variable over the replicas."""
    ranges: list[tuple[int, int]] = []
    replica = var_or_zero(out[axis] // operand[axis], ranges)
    return IndexingMap.create(operand, [dim(i) + replica * operand[i] if i == axis else dim(i)
                                        for i in range(len(out))], ranges)


def _gather_axis(instr: HloInstruction, k: int) -> int:
    dims = attribute(instr.dimensions, instr, "dimensions")
    out, operand = output_dims(instr, k), operand_dims(instr, k)
    require(len(dims) == 1, instr, "expected one dimension")
    axis: int = dims[0]
    require(len(out) == len(operand) and 0 <= axis < len(out)
            and all(a == b for i, (a, b) in enumerate(zip(out, operand, strict=True)) if i != axis)
            and operand[axis] > 0 and out[axis] % operand[axis] == 0,
            instr, "the output is not a concatenation of operands along dimensions=")
    return axis


@rule(OUTPUT_TO_INPUT, "all-gather")
def _all_gather_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    _one_to_one(instr)
    axis = _gather_axis(instr, output_index)
    m = all_gather_operand_map(output_dims(instr, output_index),
                               operand_dims(instr, output_index), axis)
    return [[m] if k == output_index else [] for k in range(len(instr.operands))]


@rule(INPUT_TO_OUTPUT, "all-gather")
def _all_gather_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    _one_to_one(instr)
    axis = _gather_axis(instr, operand_index)
    m = all_gather_output_map(output_dims(instr, operand_index),
                              operand_dims(instr, operand_index), axis)
    return [[m] if k == operand_index else [] for k in range(num_outputs(instr))]
