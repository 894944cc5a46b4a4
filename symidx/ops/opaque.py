"""Ops whose reads symidx does not model: ``shuffle`` (a new op whose attributes the parser
does not read).

It gets the sound over-approximation -- every output element reads every element of every
operand -- labelled by :func:`symidx.ops.opaque_reason`, rather than no map at all.
"""

from __future__ import annotations

from symidx.hlo import HloInstruction
from symidx.ops.basic import reaches_everything, reads_everything
from symidx.ops.registry import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, opacity, rule

#: Opcode -> why its maps over-approximate.
NOT_MODELLED = {
    "shuffle": "shuffle: its modes are not modelled",
}

rule(OUTPUT_TO_INPUT, *NOT_MODELLED)(reads_everything)
rule(INPUT_TO_OUTPUT, *NOT_MODELLED)(reaches_everything)


@opacity(*NOT_MODELLED)
def _not_modelled(instr: HloInstruction) -> str | None:
    return NOT_MODELLED[instr.opcode]
