"""One dimension of a window (reduce-window, convolution), in both directions.

Along one dimension, output index ``o`` and window position ``w`` touch the position
``o * stride + w * window_dilation`` of the operand after base dilation (``interior``
padding of ``base_dilation - 1``) and ``padding_low``; that is operand element
``(o * stride + w * window_dilation - padding_low) / base_dilation`` when the division is
exact and the element exists, padding otherwise.
"""

from __future__ import annotations

from sympy import Integer

from symidx.core.expr import Expr, FloorDiv, Mod, add, scale
from symidx.core.interval import Interval
from symidx.hlo import WindowDim

Constraint = tuple[Expr, Interval]


def operand_term(out: Expr, position: Expr, w: WindowDim, operand_size: int
                 ) -> tuple[Expr, list[Constraint]]:
    """The operand index that window position ``position`` of output index ``out`` reads,
    with the constraints saying it is an operand element (not padding or a dilation hole)."""
    # built as sympy builds ``out * stride + position * window_dilation - padding_low``
    x = add([scale(w.stride, out), scale(w.window_dilation, position),
             Integer(-w.padding_low)])
    b = w.base_dilation
    if b == 1:
        return x, [(x, Interval(0, operand_size - 1))]
    return FloorDiv(x, b), [(Mod(x, b), Interval(0, 0)),
                            (x, Interval(0, (operand_size - 1) * b))]


def output_term(operand: Expr, position: Expr, w: WindowDim, out_size: int
                ) -> tuple[Expr, list[Constraint]]:
    """The output index whose window position ``position`` lands on operand index
    ``operand``, with the constraints saying that output exists."""
    p = add([scale(w.base_dilation, operand), Integer(w.padding_low),
             scale(-w.window_dilation, position)])
    s = w.stride
    if s == 1:
        return p, [(p, Interval(0, out_size - 1))]
    return FloorDiv(p, s), [(Mod(p, s), Interval(0, 0)), (p, Interval(0, (out_size - 1) * s))]
