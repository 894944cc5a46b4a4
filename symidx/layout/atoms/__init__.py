"""Copy and MMA atoms as thread-value layouts, by family, and every atom by name.

* :mod:`symidx.layout.tv` -- the SM75/SM80 atoms: ``ldmatrix`` (``.trans`` too) and
  ``mma.m16n8k16``;
* :mod:`symidx.layout.atoms.sm90` -- Hopper's ``wgmma``: the A and accumulator register
  fragments, the 32/64/128-byte swizzle modes, the shared-memory layouts (CuTe's
  ``GMMA::Layout_*_Atom``) and the matrix descriptor's canonical layouts;
* :mod:`symidx.layout.atoms.sm100` -- Blackwell's tensor memory: ``tcgen05.ld``/``.st`` of
  shapes ``.32x32b``, ``.16x64b``, ``.16x128b``, ``.16x256b``, ``.16x32bx2``;
* :mod:`symidx.layout.atoms.amd` -- AMD's MFMA (CDNA3) and WMMA (RDNA3) operands;
* :mod:`symidx.layout.atoms.lanes` -- the lane -> row map of ``ldmatrix`` filling an MMA
  operand, for the bank-conflict models.

:data:`ATOMS` names them all (CuTe's names for NVIDIA's, an operand after a dot; AMD's
instruction mnemonics); :func:`atom` builds one by name. Each is held by the tests to its
published definition (PTX's fragment tables and figures, AMD's matrix instruction
calculator), written out there as formulas.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from symidx.errors import MapError
from symidx.layout import tv
from symidx.layout.atoms.amd import MFMA, WMMA, Operand, mfma, wmma
from symidx.layout.atoms.lanes import ldmatrix_lanes
from symidx.layout.atoms.sm90 import SmemDescriptor, smem_atom, smem_layout, wgmma_fragment
from symidx.layout.atoms.sm100 import SHAPES, tmem_fragment
from symidx.layout.tv import TVLayout

__all__ = [
    "ATOMS",
    "SmemDescriptor",
    "atom",
    "ldmatrix_lanes",
    "mfma",
    "smem_atom",
    "smem_layout",
    "tmem_fragment",
    "wgmma_fragment",
    "wmma",
]


_OPERANDS: tuple[Operand, ...] = ("A", "B", "C")


def _all() -> dict[str, Callable[[], TVLayout]]:
    found: dict[str, Callable[[], TVLayout]] = dict(tv.ATOMS)
    for bits, k in ((16, 16), (32, 8), (8, 32)):
        found[f"SM90_64xNx{k}_{bits}b_RS.A"] = partial(wgmma_fragment, "A", 8, bits)
    for n in (8, 16, 32, 64, 96, 128, 192, 256):
        found[f"SM90_64x{n}.C"] = partial(wgmma_fragment, "C", n)
    for shape, (cute_name, per) in SHAPES.items():
        num = 1
        while num * per <= 128:
            for op in ("LOAD", "STORE"):
                found[f"SM100_TMEM_{op}_{cute_name}{num}x"] = partial(tmem_fragment, shape,
                                                                      num)
            num *= 2
    for name in MFMA:
        for operand in _OPERANDS:
            found[f"{name}.{operand}"] = partial(mfma, name, operand)
    for name in WMMA:
        for operand in _OPERANDS:
            found[f"{name}.{operand}"] = partial(wmma, name, operand)
    return found


ATOMS: dict[str, Callable[[], TVLayout]] = _all()
"""Every atom by name: :data:`symidx.layout.tv.ATOMS`, SM90's ``SM90_64xNx{K}_{bits}b_RS.A``
and ``SM90_64x{N}.C``, SM100's ``SM100_TMEM_{LOAD,STORE}_{shape}{num}x``, and AMD's
``{mnemonic}.{A,B,C}``."""


def atom(name: str) -> TVLayout:
    """The TV layout of an atom by name (see :data:`ATOMS`)."""
    try:
        make = ATOMS[name]
    except KeyError:
        close = [n for n in ATOMS if name.lower() in n.lower()][:8]
        hint = f"; did you mean {', '.join(close)}?" if close else (
            f"; {len(ATOMS)} are known (symidx.layout.atoms.ATOMS)")
        raise MapError(f"unknown atom {name!r}{hint}") from None
    return make()
