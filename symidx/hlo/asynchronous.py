"""Asynchronous collectives: the collective an ``X-start`` runs, as XLA models it.

XLA runs a collective asynchronously as a pair: ``X-start`` begins it, ``X-done`` waits for
its result. all-gather, all-reduce and collective-permute have start and done opcodes of
their own; any other collective is an ``async-start``/``async-done`` wrapping it, which
XLA's text prints as ``X-start``/``X-done`` too (all-to-all, reduce-scatter,
collective-broadcast, ragged-all-to-all). Either way the start holds the collective ``X``
(XLA keeps it as the instruction of the wrapped computation): its operands and attributes
are the start's; its result is the start's value, or, when the start returns ``(operands,
result, context...)``, its tuple element 1 (:func:`keeps_operands`).

>>> from symidx.hlo import parse_hlo
>>> start = parse_hlo('''
... HloModule m
... ENTRY e {
...   p = f32[4] parameter(0)
...   s = ((f32[4]), f32[8]) all-gather-start(p), replica_groups={{0,1}}, dimensions={0}
...   ROOT d = f32[8] all-gather-done(s)
... }''').entry.instructions[1]
>>> keeps_operands(start)
True
>>> inner = wrapped_collective(start)
>>> inner.opcode, str(inner.shape), inner.name
('all-gather', 'f32[8]', 's')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from symidx.hlo.ir import HloInstruction
from symidx.hlo.leaves import leaves
from symidx.hlo.shape import TupleShape

__all__ = ["ASYNC_COLLECTIVES", "ASYNC_COLLECTIVE_DONE", "keeps_operands",
           "wrapped_collective"]

#: Per ``X-start`` opcode: the collective ``X`` it runs.
ASYNC_COLLECTIVES: Mapping[str, str] = {f"{op}-start": op for op in (
    "all-gather", "all-reduce", "collective-permute", "all-to-all", "reduce-scatter",
    "collective-broadcast", "ragged-all-to-all")}
#: The ``X-done`` opcodes that wait for them.
ASYNC_COLLECTIVE_DONE = frozenset(f"{op}-done" for op in ASYNC_COLLECTIVES.values())


def keeps_operands(start: HloInstruction) -> bool:
    """Does an ``X-start`` return ``(operands, result, ...)`` rather than the result?"""
    shape = start.shape
    if not isinstance(shape, TupleShape) or len(shape.elements) < 2:
        return False
    kept = shape.elements[0]
    operand_leaves = [s.dims for op in start.operands for s in leaves(op.shape)]
    return [s.dims for s in leaves(kept)] == operand_leaves


def wrapped_collective(start: HloInstruction) -> HloInstruction:
    """The collective ``X`` that ``X-start`` ``start`` runs (see the module docstring),
    named as the start is, so that what is said of it names the instruction of the
    module."""
    shape = start.shape
    if keeps_operands(start):
        assert isinstance(shape, TupleShape)
        shape = shape.elements[1]
    return replace(start, opcode=ASYNC_COLLECTIVES[start.opcode], shape=shape)
