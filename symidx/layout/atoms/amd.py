"""AMD matrix instructions: which element of A, B and the accumulator each lane of a wave holds
in each register element, for CDNA's MFMA (wave64: MI100 to MI300, ``v_mfma_*``) and RDNA3's
WMMA (wave32, ``v_wmma_*``).

As AMD's matrix instruction calculator states them (``--detail-instruction``: "matrix element
to register mapping"), for a single-block ``M x N x K`` MFMA with ``kpl = M K / 64`` values of
K per lane:

* ``A[i][k]``: lane ``i + M floor(k / kpl)``, element ``k mod kpl`` of the lane's registers
  (packed low to high: two 16-bit or four 8-bit values a register); ``B[k][j]`` the same with
  ``j``;
* ``D[i][j]`` (32-bit): lane ``j + N floor(i / 4) mod 64``, register ``4 floor(i / 8) + i mod 4``
  for ``32 x 32``, ``i mod 4`` for ``16 x 16``.

RDNA3's ``v_wmma_*_16x16x16_*`` (wave32): ``A[i][k]`` is in lane ``i`` *and* lane ``i + 16``
(the two half-waves hold copies), element ``k``; ``B[k][j]`` likewise in lanes ``j``, ``j +
16``; a 32-bit ``D[i][j]`` is in lane ``j + 16 (i mod 2)``, register ``floor(i / 2)``.

The layouts are CuTe-style :class:`~symidx.layout.tv.TVLayout` s (``thread`` = lane, ``value``
= register element) over tiles numbered column-major: A as ``M x K``, B as ``N x K`` (CuTe's
convention for B), the accumulator as ``M x N``. WMMA's A and B are held twice, so their
layouts are not injective (``check()`` says which lanes share an element).
"""

from __future__ import annotations

from typing import Literal

from symidx.errors import MapError
from symidx.layout.nested import Layout
from symidx.layout.tv import TVLayout

__all__ = ["MFMA", "WMMA", "mfma", "wmma"]

Operand = Literal["A", "B", "C"]

MFMA: dict[str, tuple[int, int, int, int]] = {
    "v_mfma_f32_32x32x2_f32": (32, 32, 2, 32),
    "v_mfma_f32_16x16x4_f32": (16, 16, 4, 32),
    "v_mfma_f32_32x32x8_f16": (32, 32, 8, 16),
    "v_mfma_f32_16x16x16_f16": (16, 16, 16, 16),
    "v_mfma_f32_32x32x8_bf16": (32, 32, 8, 16),
    "v_mfma_f32_16x16x16_bf16": (16, 16, 16, 16),
    "v_mfma_i32_32x32x16_i8": (32, 32, 16, 8),
    "v_mfma_i32_16x16x32_i8": (16, 16, 32, 8),
    "v_mfma_f32_32x32x16_fp8_fp8": (32, 32, 16, 8),
    "v_mfma_f32_16x16x32_fp8_fp8": (16, 16, 32, 8),
}
"""Single-block CDNA3 (MI300) MFMA instructions with 32-bit accumulators: ``(M, N, K, bits of
an A/B element)``. (CDNA1/2 spell the 16-bit ones ``v_mfma_f32_32x32x8f16``, ...)"""

WMMA: dict[str, tuple[int, int, int, int]] = {
    "v_wmma_f32_16x16x16_f16": (16, 16, 16, 16),
    "v_wmma_f32_16x16x16_bf16": (16, 16, 16, 16),
    "v_wmma_i32_16x16x16_iu8": (16, 16, 16, 8),
}
"""RDNA3 (gfx11) WMMA instructions with 32-bit accumulators, wave32."""


def mfma(name: str, operand: Operand) -> TVLayout:
    """The TV layout of ``operand`` (``"A"``, ``"B"``, ``"C"``) of the MFMA instruction
    ``name`` (see :data:`MFMA`), over 64 lanes."""
    if name not in MFMA:
        raise MapError(f"unknown MFMA instruction {name!r}; known: {', '.join(MFMA)}")
    m, n, k, bits = MFMA[name]
    del bits  # the elements' width packs them into registers; the order is by element
    kpl = m * k // 64
    groups = 64 // m
    label = f"{name} {operand}"
    if operand in ("A", "B"):
        rows = m if operand == "A" else n
        # lane = row + rows * group, element e: k = kpl * group + e; index row + rows * k
        lanes = Layout((rows, groups), (1, rows * kpl))
        values = Layout(kpl, rows)
        tile = (rows, k)
        what = "(M,K)" if operand == "A" else "(N,K)"
    elif operand == "C":
        # lane = j + n * g: g = floor(i / 4) mod (64 / n); register v: i = 4 g + v mod 4 +
        # 8 floor(v / 4) for 32x32 (16x16: v < 4)
        lanes = Layout((n, groups), (m, 4))
        values = Layout((4, m * n // 64 // 4), (1, 4 * groups))
        tile = (m, n)
        what = "(M,N)"
    else:
        raise MapError(f"an MFMA operand is 'A', 'B' or 'C', not {operand!r}")
    return TVLayout(_pair(lanes, values), tile, "col", f"{label} {what}")


def wmma(name: str, operand: Operand) -> TVLayout:
    """The TV layout of ``operand`` of the RDNA3 WMMA instruction ``name`` (see
    :data:`WMMA`), over the 32 lanes of a wave32."""
    if name not in WMMA:
        raise MapError(f"unknown WMMA instruction {name!r}; known: {', '.join(WMMA)}")
    m, n, k, _ = WMMA[name]
    if operand in ("A", "B"):
        rows = m if operand == "A" else n
        layout = Layout(((rows, 2), k), ((1, 0), rows))
        tile, what = (rows, k), "(M,K)" if operand == "A" else "(N,K)"
    elif operand == "C":
        layout = Layout(((n, 2), m // 2), ((m, 1), 2))
        tile, what = (m, n), "(M,N)"
    else:
        raise MapError(f"a WMMA operand is 'A', 'B' or 'C', not {operand!r}")
    return TVLayout(layout, tile, "col", f"{name} {operand} {what}")


def _pair(threads: Layout, values: Layout) -> Layout:
    return Layout((threads.shape, values.shape), (threads.stride, values.stride))
