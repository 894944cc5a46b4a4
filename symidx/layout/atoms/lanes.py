"""Which element each lane's ``ldmatrix`` address points at, when ``ldmatrix`` (with or
without ``.trans``) fills an MMA operand's fragment register for register -- what CuTe's
``make_tiled_copy_A`` / ``_B`` with one ``SM75_U32x4_LDSM_N`` / ``SM75_U16x8_LDSM_T`` atom
makes of it.

By the PTX ISA, lanes ``8j .. 8j+7`` give the addresses of the 8 rows (16 bytes each) of
matrix ``j``, and the ``j``-th register of every thread receives its part of matrix ``j``
(transposed with ``.trans``). For thread ``t``'s value ``v`` to land where the MMA wants
element ``C(t, v)`` of the operand tile, the row that lane ``L`` addresses must hold, at
column ``c``, the element ``C(t, v)`` of the ``(t, v)`` that ldmatrix hands row ``L``'s
column ``c`` to. :func:`ldmatrix_lanes` works that out from the two TV layouts and returns it
as a lane pattern for :func:`symidx.layout.banks.bank_conflicts` (basis strides: lane ->
the tile coordinate where its 16-byte row starts).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symidx.errors import MapError
from symidx.layout.int_tuple import ScaledBasis
from symidx.layout.nested import Layout
from symidx.layout.tv import TVLayout, ldmatrix

__all__ = ["ldmatrix_lanes"]

_LANES = 32
_ROW = 8  # 16-bit elements in a 16-byte row


def ldmatrix_lanes(operand: TVLayout, trans: bool = False) -> Layout:
    """Lane -> the ``(row, col)`` of ``operand``'s tile where the 16-byte row that lane's
    ``ldmatrix.x{n}[.trans]`` address points at starts (``n`` = the operand's 16-bit values
    per thread / 2), as a layout with basis strides. Raises when a row's 8 elements are not
    consecutive along one dimension of the tile (ldmatrix cannot load that fragment), or when
    the lanes' starts are not a basis layout of the lane bits."""
    if operand.threads != _LANES or operand.values % 2 or operand.values // 2 not in (1, 2, 4):
        raise MapError(f"{operand.name or operand.layout}: ldmatrix fills 2, 4 or 8 16-bit "
                       f"values in each of 32 threads")
    n = operand.values // 2
    copy = ldmatrix(n, trans)
    src, dst = copy.table(), operand.table()
    rows = np.full((8 * n, _ROW, 2), -1, dtype=np.int64)
    for t in range(_LANES):
        for v in range(operand.values):
            rows[src[t, v, 0], src[t, v, 1]] = dst[t, v]
    starts = rows[:, 0, :]
    for lane, row in enumerate(rows):
        step = row[1] - row[0]
        if sorted(np.abs(step).tolist()) != [0, 1] or (step < 0).any() or not (
                row == row[0] + np.arange(_ROW)[:, None] * step).all():
            raise MapError(f"the row lane {lane} addresses would hold {row.tolist()} of "
                           f"{operand.name or 'the operand'}: not 8 consecutive elements "
                           f"along one dimension, which one 16-byte row is")
    return _basis_layout(starts, 8 * n)


def _basis_layout(starts: np.ndarray, count: int) -> Layout:
    """The layout ``lane -> starts[lane]`` over ``count`` lanes, one basis stride per lane
    bit (lanes past ``count`` repeat the first ones, as ldmatrix ignores their addresses)."""
    bits = (count - 1).bit_length()
    strides: list[ScaledBasis | int] = []
    for b in range(bits):
        delta = starts[1 << b] - starts[0]
        moved = np.nonzero(delta)[0]
        if len(moved) != 1 or delta[moved[0]] < 0:
            raise MapError(f"lane bit {b} moves the row start by {delta.tolist()}: not one "
                           f"dimension forward")
        strides.append(ScaledBasis(int(delta[moved[0]]), (int(moved[0]),)))
    if (starts[0] != 0).any():
        raise MapError(f"lane 0's row starts at {starts[0].tolist()}, not at the origin")
    shape = (2,) * bits + ((_LANES // count,) if count < _LANES else ())
    stride: Any = tuple(strides) + ((0,) if count < _LANES else ())
    layout = Layout(shape, stride)
    for lane in range(count):
        value = layout(lane)
        got = (tuple(value) if isinstance(value, tuple) else (value,)) + (0, 0)
        if tuple(int(x) for x in got[:2]) != tuple(int(x) for x in starts[lane]):
            raise MapError(f"lane {lane}'s row start {starts[lane].tolist()} is not the sum "
                           f"of its bits' moves")
    return layout
