"""Basic maps shared by the rule families and the sweep: identity, to and from a scalar,
and the sound over-approximation of an op whose reads are not modelled (every element
reads every element).
"""

from __future__ import annotations

from collections.abc import Sequence

from symidx.core.expr import dim, sym
from symidx.core.indexing_map import IndexingMap
from symidx.errors import UnsupportedOpError
from symidx.hlo.facts import Dims, output_dims
from symidx.hlo.ir import HloInstruction
from symidx.hlo.leaves import leaves
from symidx.hlo.shape import Shape

__all__ = [
    "array_operand_dims",
    "every_element",
    "from_scalar",
    "identity",
    "reaches_everything",
    "reads_everything",
    "to_scalar",
]


def identity(dims: Sequence[int]) -> IndexingMap:
    """``(d0, ..., dn) -> (d0, ..., dn)``."""
    return IndexingMap.create(dims, [dim(i) for i in range(len(dims))])


def to_scalar(dims: Sequence[int]) -> IndexingMap:
    """``(d0, ..., dn) -> ()``: every index reads the one element of a scalar."""
    return IndexingMap.create(dims, [])


def from_scalar(dims: Sequence[int]) -> IndexingMap:
    """``()[s0, ..., sn] -> (s0, ..., sn)``: a scalar is read by every index of ``dims``."""
    return IndexingMap.create([], [sym(i) for i in range(len(dims))],
                              [(0, n - 1) for n in dims])


def every_element(source: Sequence[int], target: Sequence[int]) -> IndexingMap:
    """``(d0, ..)[s0, ..] -> (s0, ..)``: every index of ``source`` reads (or reaches) every
    element of ``target`` -- the sound over-approximation of an op whose reads are unknown."""
    return IndexingMap.create(source, [sym(i) for i in range(len(target))],
                              [(0, n - 1) for n in target])


def array_operand_dims(instr: HloInstruction, k: int) -> Dims:
    """The dims of array operand ``k``; :class:`UnsupportedOpError` for a tuple operand, whose
    elements a map to one array cannot name."""
    shape = instr.operands[k].shape
    if not isinstance(shape, Shape):
        raise UnsupportedOpError(instr.opcode, f"operand {k} of {instr.name} is a tuple "
                                               f"{shape}; maps need array operands")
    return shape.dims


def reads_everything(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    """Output-to-input groups of the sound over-approximation of an op whose reads are not
    modelled: every output element reads every element of every operand."""
    out = output_dims(instr, output_index)
    return [[every_element(out, array_operand_dims(instr, k))]
            for k in range(len(instr.operands))]


def reaches_everything(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    """Input-to-output groups of the same over-approximation: every operand element reaches
    every element of every output."""
    source = array_operand_dims(instr, operand_index)
    return [[every_element(source, out.dims)] for out in leaves(instr.shape)]
