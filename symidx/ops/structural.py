"""Instructions that compute nothing from indices: constant, iota, parameter, the ids and
``rng-get-and-update-state`` (no operands), ``after-all`` (joins tokens: reads no array
element), tuple and get-tuple-element (pass an element through unchanged).

``get-tuple-element(t), index=k`` reads element ``k`` of its tuple operand at the same index;
``tuple(a, b, ...)`` output ``k`` reads operand ``k`` at the same index and no other operand.
"""

from __future__ import annotations

from symidx.core.indexing_map import IndexingMap
from symidx.errors import HloShapeError
from symidx.hlo import HloInstruction, TupleShape
from symidx.hlo.facts import array_dims, num_outputs, output_dims
from symidx.ops._common import attribute, require
from symidx.ops.basic import identity
from symidx.ops.registry import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, rule

#: Opcodes without operands.
NO_OPERAND_OPCODES = ("constant", "iota", "parameter", "partition-id", "replica-id",
                      "rng-get-and-update-state")


@rule(OUTPUT_TO_INPUT, *NO_OPERAND_OPCODES)
def _no_operands(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    return []


@rule(INPUT_TO_OUTPUT, *NO_OPERAND_OPCODES)
def _no_inputs(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    return []  # never called: the operand index is checked first


@rule(OUTPUT_TO_INPUT, "after-all")
def _after_all_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    return [[] for _ in instr.operands]  # tokens carry no elements


@rule(INPUT_TO_OUTPUT, "after-all")
def _after_all_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    return [[]]


def _element_dims(instr: HloInstruction) -> tuple[int, ...]:
    index: int = attribute(instr.tuple_index, instr, "index")
    shape = instr.operands[0].shape
    if not isinstance(shape, TupleShape) or not 0 <= index < len(shape.elements):
        raise HloShapeError(f"{instr.opcode} {instr.name}: index={index} does not name an "
                            f"element of {shape}")
    dims = array_dims(shape.elements[index], f"element {index} of {instr.operands[0].name}")
    require(dims == output_dims(instr), instr, "the element and the output differ in shape")
    return dims


@rule(OUTPUT_TO_INPUT, "get-tuple-element")
def _gte_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    return [[identity(_element_dims(instr))]]


@rule(INPUT_TO_OUTPUT, "get-tuple-element")
def _gte_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    return [[identity(_element_dims(instr))]]


def _check_tuple(instr: HloInstruction) -> None:
    require(num_outputs(instr) == len(instr.operands), instr,
            "expected one tuple element per operand")


@rule(OUTPUT_TO_INPUT, "tuple")
def _tuple_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    _check_tuple(instr)
    dims = output_dims(instr, output_index)
    return [[identity(dims)] if k == output_index else [] for k in range(len(instr.operands))]


@rule(INPUT_TO_OUTPUT, "tuple")
def _tuple_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    _check_tuple(instr)
    dims = output_dims(instr, operand_index)
    return [[identity(dims)] if k == operand_index else [] for k in range(num_outputs(instr))]
