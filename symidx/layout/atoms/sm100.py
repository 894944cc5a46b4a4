"""SM100 (Blackwell) tensor memory: which TMEM lane and column each thread of a warp holds in
each register of a ``tcgen05.ld`` / ``tcgen05.st``.

Tensor memory is 128 lanes (rows) of 512 columns of 32 bits. A warp reaches the 32 lanes of
its sub-partition (warp ``w`` of a warpgroup: lanes ``32 (w % 4) ..``); a data-movement
shape ``lanes x bits`` moves ``bits`` of each of ``lanes`` lanes per repetition, and
``.num`` (``x1``, ``x2``, ... ``x128``) repeats it along the columns. The PTX ISA draws the
five shapes of ``.ld``/``.st`` ("Matrix fragments for shape .32x32b", ...); CuTe writes
them as ``SM100_TMEM_LOAD_{32dp32b,16dp64b,16dp128b,16dp256b,16dp32b}{num}x``
(``include/cute/atom/copy_traits_sm100.hpp``). With ``t`` the lane of the thread in its warp
and ``r`` its register:

===============  =====================================  ===========================
shape            TMEM lane                              column (32-bit)
===============  =====================================  ===========================
``.32x32b``      ``t``                                  ``r``
``.16x64b``      ``t / 4 + 8 (t % 2)``                  ``(t / 2) % 2 + 2 r``
``.16x128b``     ``t / 4 + 8 (r % 2)``                  ``t % 4 + 4 (r / 2)``
``.16x256b``     ``t / 4 + 8 ((r / 2) % 2)``            ``2 (t % 4) + r % 2 + 8 (r / 4)``
``.16x32bx2``    ``t % 16``                             ``r + split (t / 16)``
===============  =====================================  ===========================

(``.16x32bx2`` moves two ``16x32b`` halves, the second ``split`` columns after the first:
the instruction's immediate half-split offset, ``num`` by default, as CuTe lays it out.)

:func:`tmem_fragment` gives these as :class:`~symidx.layout.tv.TVLayout` s over the
``(lanes, columns)`` tile, numbered column-major (``lane + lanes * column``); with
``warps=4`` the threads of a warpgroup, warp ``w`` on lanes ``32 w ..`` of a 128-lane tile
(the 16-lane shapes leave lanes 16-31 of each sub-partition unused: holes).
"""

from __future__ import annotations

from typing import Any

from symidx.errors import MapError
from symidx.layout.nested import Layout
from symidx.layout.tv import TVLayout

__all__ = ["SHAPES", "tmem_fragment"]

SHAPES: dict[str, tuple[str, int]] = {
    "32x32b": ("32dp32b", 1),
    "16x64b": ("16dp64b", 1),
    "16x128b": ("16dp128b", 2),
    "16x256b": ("16dp256b", 4),
    "16x32bx2": ("16dp32b", 1),
}
"""PTX's shapes: CuTe's name for each and the registers per thread per repetition."""

_MAX_REGISTERS = 128


def tmem_fragment(shape: str, num: int = 1, *, split: int | None = None, warps: int = 1
                  ) -> TVLayout:
    """The TV layout of ``tcgen05.ld``/``.st`` of ``shape`` (``"32x32b"``, ``"16x64b"``,
    ``"16x128b"``, ``"16x256b"``, ``"16x32bx2"``) repeated ``num`` times (a power of 2, at
    most 128 registers a thread), for one warp or a warpgroup (``warps=4``); ``split`` is
    ``.16x32bx2``'s half-split offset in columns (default ``num``)."""
    if shape not in SHAPES:
        raise MapError(f"a tcgen05.ld/st shape is one of {', '.join(SHAPES)}, not {shape!r}")
    cute_name, per = SHAPES[shape]
    if num < 1 or num & (num - 1) or num * per > _MAX_REGISTERS:
        raise MapError(f".{shape} repeats a power of 2 times, at most "
                       f"{_MAX_REGISTERS // per} (x{num} given)")
    if warps not in (1, 4):
        raise MapError(f"one warp or a warpgroup of 4, not {warps}")
    if split is not None and shape != "16x32bx2":
        raise MapError("only .16x32bx2 has a half-split offset")
    lanes = 32 if shape == "32x32b" else 16
    rows = lanes if warps == 1 else 128
    threads: tuple[Any, Any]
    values: tuple[Any, Any]
    if shape == "32x32b":
        threads, values, cols = (32, 1), (num, rows), num
    elif shape == "16x64b":
        threads, values, cols = ((2, 2, 8), (8, rows, 1)), (num, 2 * rows), 2 * num
    elif shape == "16x128b":
        threads, values, cols = ((4, 8), (rows, 1)), ((2, num), (8, 4 * rows)), 4 * num
    elif shape == "16x256b":
        threads = ((4, 8), (2 * rows, 1))
        values = ((2, 2, num), (rows, 8, 8 * rows))
        cols = 8 * num
    else:
        half = num if split is None else split
        if half < num:
            raise MapError(f"the halves of .16x32bx2.x{num} overlap: a split of {half} "
                           f"columns is below {num}")
        threads, values, cols = ((16, 2), (1, half * rows)), (num, rows), half + num
    if warps == 4:
        threads = ((threads[0], 4), (threads[1], 32))
    name = f"SM100_TMEM_LOAD_{cute_name}{num}x" + (f" (split {split})" if split else "") + (
        " (warpgroup)" if warps == 4 else "")
    return TVLayout(Layout((threads[0], values[0]), (threads[1], values[1])), (rows, cols),
                    "col", name)
