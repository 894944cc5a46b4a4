"""Helpers private to the rule families: checks that name the instruction, new range
variables, start indices known from constants and iotas."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sympy import Integer, Symbol

from symidx.core.expr import Expr, bounds, sym
from symidx.core.interval import Interval
from symidx.hlo.facts import attribute as attribute  # the families check attributes with it
from symidx.hlo.facts import require as require
from symidx.hlo.ir import HloInstruction
from symidx.lowering.values import held_at


def var_or_zero(size: int, new_range: list[tuple[int, int]]) -> Expr:
    """A new range variable over ``[0, size - 1]`` (appended to ``new_range``), or ``0``
    when the size is 1 (a variable with one value is no variable)."""
    if size == 1:
        return Integer(0)
    new_range.append((0, size - 1))
    return sym(len(new_range) - 1)


def clamp(value: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, value))


def known_start(instr: HloInstruction, element: Sequence[Expr], feasible: Interval,
                env: Mapping[Symbol, Interval]) -> Expr | None:
    """The start index held by ``instr`` at ``element``, when a map can hold it exactly
    (:func:`symidx.lowering.values.held_at`):

    * an integer constant at a constant element: its value clamped to ``feasible``, as HLO
      clamps start indices;
    * an ``iota``: the element's index along ``iota_dimension``, if it stays in ``feasible``
      for every value of the variables (``env`` gives their intervals).

    None otherwise (the value stays a runtime variable)."""
    value = held_at(instr, element)
    if value is None:
        return None
    if instr.opcode == "constant":
        return Integer(clamp(int(value), feasible.lo, feasible.hi))
    return value if bounds(value, env) in feasible else None
