"""SM90 (Hopper) warpgroup MMA, ``wgmma.mma_async``: the register fragments of A and of the
accumulator, the shared-memory swizzle modes, and the layouts a shared-memory matrix
descriptor describes.

**Register fragments.** A warpgroup is 128 threads, four warps; warp ``w`` holds rows
``16 w .. 16 w + 15`` of the 64-row tile, each as the warp-level ``mma.m16n8k*`` fragments
hold theirs (:func:`wgmma_fragment`; CuTe's ``GMMA::ALayout_64x*`` and
``GMMA::CLayout_64xN``, ``include/cute/atom/mma_traits_sm90_gmma.hpp``). The tiles are
numbered column-major, ``m + 64 k`` (A, ``64 x K``) and ``m + 64 n`` (C/D, ``64 x N``),
as CuTe numbers them. B is always read from shared memory (as A may be): its threads hold
nothing of it, so it has no thread-value layout; its layout in memory is the descriptor's.

**Swizzle modes.** The PTX ISA's 32-, 64- and 128-byte swizzles XOR the byte address bits
``[4, 4+b)`` with the bits ``[7, 7+b)``, ``b`` = 1, 2, 3 (CuTe's ``Swizzle<b,4,3>`` on byte
addresses); "interleave" is none. :func:`swizzle` gives the mode in elements of a width.

**Shared-memory layouts.** :func:`smem_atom` is CuTe's ``GMMA::Layout_{K,MN}_{INTER,SW32,
SW64,SW128}_Atom<T>``: 8 rows of ``16 W`` bytes (``W`` = 1, 2, 4, 8 for the four modes),
K-major (the rows are along M or N, each row a run of K) or MN-major (each row a run of M
or N, the 8 rows along K). A :class:`SmemDescriptor` is the 64-bit matrix descriptor
(start address, leading- and stride-dimension byte offsets, base offset, swizzle mode);
:meth:`SmemDescriptor.layout` is the canonical layout it describes for one MMA's operand,
``(MN, K) -> element address`` in shared memory, swizzle included, as PTX and CuTe
(``make_gmma_desc``) define it, in units of ``T`` elements per 16 bytes:

=============  ==========================================================
K-major        ``((8,m),(T,2)):((T,SBO),(1,LBO))`` (interleave);
               ``((8,m),(T,2)):((W T,SBO),(1,T))`` (32/64/128 B, ``W`` = 2, 4, 8)
MN-major       ``((T,1,m),(8,k)):((1,T,SBO),(T,LBO))`` (interleave);
               ``((T,W,m),(8,k)):((1,T,LBO),(W T,SBO))`` (32/64/128 B)
=============  ==========================================================

The descriptor's swizzle acts on absolute shared-memory addresses (the start address
included); the base offset says where the pattern starts when the start address is not on
its boundary -- only a zero base offset (the pattern aligned) is modelled, and a nonzero
one is refused. The tests hold every layout to the PTX definitions, written out as
formulas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from symidx.errors import MapError
from symidx.layout.nested import Layout
from symidx.layout.swizzle import ComposedLayout, Swizzle
from symidx.layout.tv import TVLayout

__all__ = [
    "MODES",
    "WARPGROUP",
    "SmemDescriptor",
    "smem_atom",
    "smem_layout",
    "swizzle",
    "wgmma_fragment",
]

WARPGROUP = 128
"""Threads of a warpgroup."""

Mode = Literal["interleave", "32B", "64B", "128B"]
Major = Literal["K", "MN"]

MODES: dict[str, int] = {"interleave": 1, "32B": 2, "64B": 4, "128B": 8}
"""Each swizzle mode's row width ``W``, in 16-byte chunks (its swizzle has ``log2 W``
bits)."""

#: The descriptor's 2-bit swizzle field on SM90 (PTX "Matrix Descriptor Format") and the
#: 3-bit field of SM100's shared-memory descriptor (``tcgen05``); SM100's "128-byte with
#: 32-byte atomic swizzling" (1) is not modelled.
_SM90_CODES = {"interleave": 0, "128B": 1, "64B": 2, "32B": 3}
_SM100_CODES = {"interleave": 0, "128B": 2, "64B": 4, "32B": 6}


def _log2(n: int) -> int:
    return n.bit_length() - 1


def _elements_per_chunk(element_bits: int) -> int:
    """``T``: elements in 16 bytes."""
    if element_bits not in (4, 8, 16, 32, 64):
        raise MapError(f"wgmma operands have 4-, 8-, 16-, 32- or 64-bit elements, not "
                       f"{element_bits}")
    return 128 // element_bits


def _mode(mode: str) -> int:
    if mode not in MODES:
        raise MapError(f"a swizzle mode is one of {', '.join(MODES)}, not {mode!r}")
    return MODES[mode]


def swizzle(mode: Mode, element_bits: int = 16) -> Swizzle:
    """The swizzle of ``mode`` on offsets in ``element_bits``-bit elements: the byte
    swizzle ``Sw<log2 W,4,3>`` with its base lowered by ``log2(element bytes)``
    (``Sw<3,3,3>`` for 128 B of 16-bit elements)."""
    w = _mode(mode)
    t = _elements_per_chunk(element_bits)
    return Swizzle(_log2(w), _log2(t), 3)


def smem_atom(major: Major, mode: Mode, element_bits: int = 16) -> ComposedLayout:
    """CuTe's ``GMMA::Layout_{major}_{mode}_Atom<T>``: ``(MN, K) -> offset`` in elements.
    K-major: ``Sw o (8, W T):(W T, 1)``; MN-major: ``Sw o (W T, 8):(1, W T)``."""
    w = _mode(mode)
    t = _elements_per_chunk(element_bits)
    if major == "K":
        inner = Layout((8, w * t), (w * t, 1))
    elif major == "MN":
        inner = Layout((w * t, 8), (1, w * t))
    else:
        raise MapError(f"a wgmma operand is 'K'- or 'MN'-major, not {major!r}")
    return ComposedLayout(swizzle(mode, element_bits), 0, inner)


def smem_layout(major: Major, mode: Mode, element_bits: int, mn: int, k: int
                ) -> ComposedLayout:
    """The ``mn x k`` tile made of :func:`smem_atom` s, the atoms stacked along MN first,
    then along K (CuTe's ``tile_to_shape(atom, (mn, k))``)."""
    w = _mode(mode)
    t = _elements_per_chunk(element_bits)
    atom = smem_atom(major, mode, element_bits)
    a_mn, a_k = (8, w * t) if major == "K" else (w * t, 8)
    s_mn, s_k = (w * t, 1) if major == "K" else (1, w * t)
    if mn % a_mn or k % a_k or mn < 1 or k < 1:
        raise MapError(f"a {mn}x{k} tile is not made of {a_mn}x{a_k} {major}-major "
                       f"{mode} atoms")
    block = a_mn * a_k
    reps_mn, reps_k = mn // a_mn, k // a_k
    inner = Layout(((a_mn, reps_mn), (a_k, reps_k)),
                   ((s_mn, block), (s_k, block * reps_mn)))
    return ComposedLayout(atom.outer, 0, inner)


def wgmma_fragment(operand: Literal["A", "C"], n: int = 8, element_bits: int = 16
                   ) -> TVLayout:
    """The ``(thread, value)`` layout of a warpgroup's register fragment of
    ``wgmma.mma_async.m64nNk*``: ``"A"`` (A from registers, ``64 x K`` with ``K`` =
    ``256 / element_bits``: 16 for f16/bf16, 8 for tf32, 32 for 8-bit types) or ``"C"`` (the
    accumulator, ``64 x n``, ``n`` a multiple of 8 up to 256; 32-bit elements, or 16-bit ones
    packed two to a register in the same order)."""
    if operand == "A":
        vec = {8: 4, 16: 2, 32: 1}.get(element_bits)
        if vec is None:
            raise MapError(f"wgmma's A in registers has 8-, 16- or 32-bit elements, not "
                           f"{element_bits}")
        k = 8 * vec
        # thread (tig, group, warp): k = vec * tig, m = group, m += 16 warp
        threads = ((4, 8, 4), (64 * vec, 1, 16))
        # values: the elements of a register (k + 1), rows + 8, k + 4 vec
        vshape: tuple[int, ...] = (vec, 2, 2)
        vstride: tuple[int, ...] = (64, 8, 256 * vec)
        if vec == 1:
            vshape, vstride = (2, 2), (8, 256)
        return TVLayout(Layout((threads[0], vshape), (threads[1], vstride)), (64, k), "col",
                        f"SM90_64xNx{k}_{element_bits}b_RS A (M,K)")
    if operand == "C":
        if n < 8 or n > 256 or n % 8:
            raise MapError(f"wgmma's N is a multiple of 8 from 8 to 256, not {n}")
        return TVLayout(Layout(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512))),
                        (64, n), "col", f"SM90_64x{n} C (M,N)")
    raise MapError(f"a wgmma register fragment is 'A' or 'C' (B is read from shared memory), "
                   f"not {operand!r}")


@dataclass(frozen=True, slots=True)
class SmemDescriptor:
    """A shared-memory matrix descriptor: ``start`` (the matrix's byte address in shared
    memory), ``lbo`` and ``sbo`` (the leading- and stride-dimension byte offsets), the
    swizzle ``mode`` and ``base_offset``. Byte values are multiples of 16 below 2^18, as the
    14-bit fields hold them (``encode(x) = (x & 0x3FFFF) >> 4``)."""

    start: int
    lbo: int
    sbo: int
    mode: Mode = "128B"
    base_offset: int = 0

    def __post_init__(self) -> None:
        _mode(self.mode)
        for name in ("start", "lbo", "sbo"):
            value = getattr(self, name)
            if not (0 <= value < 1 << 18) or value % 16:
                raise MapError(f"a descriptor's {name} is a multiple of 16 in [0, 2^18), "
                               f"got {value}")
        if not 0 <= self.base_offset < 8:
            raise MapError(f"the base offset has 3 bits, got {self.base_offset}")

    def encode(self, arch: Literal["sm90", "sm100"] = "sm90") -> int:
        """The 64-bit descriptor: bits 0-13 the start address, 16-29 LBO, 32-45 SBO (each
        ``>> 4``), 49-51 the base offset, and the swizzle mode in bits 62-63 (SM90, PTX
        "Matrix Descriptor Format") or 61-63 (SM100 ``tcgen05``, which also sets bits 46-48
        to ``0b001``; bit 52, the leading dimension's mode, is 0: a relative offset)."""
        word = ((self.start >> 4) | (self.lbo >> 4) << 16 | (self.sbo >> 4) << 32
                | self.base_offset << 49)
        if arch == "sm90":
            return word | _SM90_CODES[self.mode] << 62
        if arch == "sm100":
            return word | 1 << 46 | _SM100_CODES[self.mode] << 61
        raise MapError(f"arch is 'sm90' or 'sm100', not {arch!r}")

    @staticmethod
    def decode(word: int, arch: Literal["sm90", "sm100"] = "sm90") -> SmemDescriptor:
        """The descriptor a 64-bit word holds (raises on a swizzle code the arch does not
        define, and on SM100's 32-byte-atomic or absolute-address forms, not modelled)."""
        if not 0 <= word < 1 << 64:
            raise MapError(f"a descriptor is a 64-bit word, got {word}")

        def field(lo: int) -> int:
            return (word >> lo & 0x3FFF) << 4

        if arch == "sm90":
            codes, code = _SM90_CODES, word >> 62 & 3
        elif arch == "sm100":
            codes, code = _SM100_CODES, word >> 61 & 7
            if word >> 52 & 1:
                raise MapError("an SM100 descriptor with an absolute leading-dimension "
                               "address (bit 52) is not modelled")
        else:
            raise MapError(f"arch is 'sm90' or 'sm100', not {arch!r}")
        modes = {v: k for k, v in codes.items()}
        if code not in modes:
            raise MapError(f"swizzle code {code} is not a {arch} swizzle mode modelled here")
        return SmemDescriptor(field(0), field(16), field(32), modes[code],  # type: ignore[arg-type]
                              word >> 49 & 7)

    def layout(self, major: Major, element_bits: int, mn: int) -> ComposedLayout:
        """The canonical layout the descriptor describes for one MMA's ``mn x K`` operand
        (``K`` = ``256 / element_bits``: 32 bytes), ``(mn, k) -> element address`` in shared
        memory (swizzle included; see the module docstring)."""
        if self.base_offset:
            raise MapError("a nonzero base offset (a swizzle pattern that does not start on "
                           "its boundary) is not modelled")
        t = _elements_per_chunk(element_bits)
        w = MODES[self.mode]
        bytes_per = element_bits // 8 if element_bits >= 8 else None
        if bytes_per is None:
            raise MapError("a descriptor's layout is modelled for 8-bit and wider elements")
        for name, value in (("start", self.start), ("lbo", self.lbo), ("sbo", self.sbo)):
            if value % bytes_per:
                raise MapError(f"{name} {value} is not a whole number of {element_bits}-bit "
                               f"elements")
        lbo, sbo = self.lbo // bytes_per, self.sbo // bytes_per
        if major == "K":
            if mn % 8 or mn < 8:
                raise MapError(f"a K-major operand has a multiple of 8 rows, not {mn}")
            m = mn // 8
            inner = (Layout(((8, m), (t, 2)), ((t, sbo), (1, lbo))) if w == 1 else
                     Layout(((8, m), (t, 2)), ((w * t, sbo), (1, t))))
        elif major == "MN":
            if mn % (w * t) or mn < w * t:
                raise MapError(f"an MN-major {self.mode} operand of {element_bits}-bit "
                               f"elements has a multiple of {w * t} rows along MN, not {mn}")
            m, k = mn // (w * t), 2 * t // 8
            inner = (Layout(((t, 1, m), (8, k)), ((1, t, sbo), (t, lbo))) if w == 1 else
                     Layout(((t, w, m), (8, k)), ((1, t, lbo), (w * t, sbo))))
        else:
            raise MapError(f"a wgmma operand is 'K'- or 'MN'-major, not {major!r}")
        return ComposedLayout(swizzle(self.mode, element_bits), self.start // bytes_per, inner)
