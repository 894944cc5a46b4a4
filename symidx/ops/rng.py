"""Random number generators: ``rng`` and ``rng-bit-generator``.

``rng(a, b), distribution=...`` fills its output from two scalar parameters (the bounds,
or the mean and deviation): every output element reads each of them.

``rng-bit-generator(state)`` returns ``(new state, random bits)`` (older HLO: the bits
alone), both deterministic functions of the whole initial state: every element of every
output reads every element of the state.
"""

from __future__ import annotations

from symidx.core.indexing_map import IndexingMap
from symidx.hlo import HloInstruction
from symidx.hlo.facts import operand_dims
from symidx.ops._common import require
from symidx.ops.basic import reaches_everything, reads_everything
from symidx.ops.registry import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, rule


def _check_rng(instr: HloInstruction) -> None:
    require(len(instr.operands) == 2 and not operand_dims(instr, 0)
            and not operand_dims(instr, 1), instr, "expected two scalar parameters")


def _check_state(instr: HloInstruction) -> None:
    require(len(instr.operands) == 1, instr, "expected one state operand")


#: What each generator requires of its operands; both then read everything.
_CHECKS = {"rng": _check_rng, "rng-bit-generator": _check_state}


@rule(OUTPUT_TO_INPUT, "rng", "rng-bit-generator")
def _rng_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    _CHECKS[instr.opcode](instr)
    return reads_everything(instr, output_index)


@rule(INPUT_TO_OUTPUT, "rng", "rng-bit-generator")
def _rng_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    _CHECKS[instr.opcode](instr)
    return reaches_everything(instr, operand_index)
