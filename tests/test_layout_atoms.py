"""The newer atoms held to their published definitions, written out below as formulas (the
twins: no symidx code): ``ldmatrix .trans`` and ``wgmma``'s fragments (PTX ISA fragment
tables), the wgmma swizzle modes and matrix descriptor (PTX "Shared Memory Matrix Layout" /
"Matrix Descriptor Format"), ``tcgen05.ld``/``.st`` (PTX's figures for the five data-movement
shapes), AMD MFMA and WMMA (AMD's matrix instruction calculator's formulas). Each is compared
with the layout at every (thread, value) or offset."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from symidx.errors import MapError
from symidx.layout import banks, views
from symidx.layout.atoms import (
    ATOMS,
    SmemDescriptor,
    atom,
    ldmatrix_lanes,
    mfma,
    smem_atom,
    smem_layout,
    tmem_fragment,
    wgmma_fragment,
    wmma,
)
from symidx.layout.atoms.amd import MFMA, WMMA
from symidx.layout.atoms.sm90 import swizzle
from symidx.layout.cute import E, Layout, parse_any_layout
from symidx.layout.swizzle import composed_values
from symidx.layout.tv import TVLayout, ldmatrix, mma_sm80_16x8x16

# ---------------------------------------------------------------------------------------------
# ldmatrix .trans -- PTX: lanes 8j..8j+7 give the row addresses of matrix j; with .trans,
# register j of thread t holds, of matrix j, the elements at row 2 (t % 4) + h and column
# t / 4 (h = 0, 1 the halves), i.e. the matrix transposed.


def ptx_ldmatrix_trans(lane: int, matrix: int, half: int) -> tuple[int, int]:
    """(tile row = address row, column) of register ``matrix``'s half ``half``."""
    return 8 * matrix + 2 * (lane % 4) + half, lane // 4


@pytest.mark.parametrize("n", [1, 2, 4])
def test_ldmatrix_trans_matches_ptx(n: int) -> None:
    tv = ldmatrix(n, trans=True)
    assert (tv.threads, tv.values, tv.tile) == (32, 2 * n, (8 * n, 8))
    for lane, matrix, half in itertools.product(range(32), range(n), range(2)):
        assert tv.coord(lane, half + 2 * matrix) == ptx_ldmatrix_trans(lane, matrix, half)
    assert tv.check().bijective
    assert atom(f"SM75_U16x{2 * n}_LDSM_T") == tv
    assert tv != ldmatrix(n)


# ---------------------------------------------------------------------------------------------
# wgmma -- PTX "Register Fragments" for wgmma.mma_async.m64nNk*: warp w = thread / 32 holds
# rows 16 w ..; in its warp, groupID = lane >> 2, threadID_in_group = lane % 4.


def ptx_wgmma_a(thread: int, i: int, bits: int) -> tuple[int, int]:
    warp, lane = divmod(thread, 32)
    g, tig = lane >> 2, lane % 4
    if bits == 16:  # a0..a7
        return 16 * warp + g + 8 * ((i >> 1) & 1), 2 * tig + (i & 1) + 8 * (i >> 2)
    if bits == 32:  # tf32 a0..a3
        return 16 * warp + g + 8 * (i & 1), tig + 4 * (i >> 1)
    # 8-bit a0..a15
    return 16 * warp + g + 8 * ((i >> 2) & 1), 4 * tig + (i & 3) + 16 * (i >> 3)


def ptx_wgmma_d(thread: int, i: int) -> tuple[int, int]:
    warp, lane = divmod(thread, 32)
    g, tig = lane >> 2, lane % 4
    return 16 * warp + g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * tig + (i & 1)


@pytest.mark.parametrize(("bits", "k", "values"), [(16, 16, 8), (32, 8, 4), (8, 32, 16)])
def test_wgmma_a_matches_ptx(bits: int, k: int, values: int) -> None:
    tv = wgmma_fragment("A", element_bits=bits)
    assert (tv.threads, tv.values, tv.tile) == (128, values, (64, k))
    for t, i in itertools.product(range(128), range(values)):
        assert tv.coord(t, i) == ptx_wgmma_a(t, i, bits), (t, i)
    assert tv.check().bijective


@pytest.mark.parametrize("n", [8, 16, 24, 64, 256])
def test_wgmma_accumulator_matches_ptx(n: int) -> None:
    tv = wgmma_fragment("C", n)
    assert (tv.threads, tv.values, tv.tile) == (128, n // 2, (64, n))
    for t, i in itertools.product(range(128), range(n // 2)):
        assert tv.coord(t, i) == ptx_wgmma_d(t, i)
    assert tv.check().bijective


def test_wgmma_refusals() -> None:
    with pytest.raises(MapError, match="multiple of 8"):
        wgmma_fragment("C", 12)
    with pytest.raises(MapError, match="B is read from shared memory"):
        wgmma_fragment("B")  # type: ignore[arg-type]
    with pytest.raises(MapError, match="8-, 16- or 32-bit"):
        wgmma_fragment("A", element_bits=64)


# ---------------------------------------------------------------------------------------------
# Swizzle modes -- PTX: the 128-, 64- and 32-byte swizzles XOR byte-address bits [4,7), [4,6),
# [4,5) with bits [7,10), [7,9), [7,8); the repeating pattern is 1024, 512, 256 bytes.


def ptx_swizzled_byte(address: int, mode: str) -> int:
    bits = {"interleave": 0, "32B": 1, "64B": 2, "128B": 3}[mode]
    mask = (1 << bits) - 1
    return address ^ (((address >> 7) & mask) << 4)


@pytest.mark.parametrize("mode", ["interleave", "32B", "64B", "128B"])
@pytest.mark.parametrize("bits", [8, 16, 32])
def test_swizzle_modes_match_ptx(mode: str, bits: int) -> None:
    sw = swizzle(mode, bits)  # type: ignore[arg-type]
    size = bits // 8
    offsets = np.arange(4096 // size, dtype=np.int64)
    got = sw.apply(offsets) * size
    want = np.array([ptx_swizzled_byte(int(o) * size, mode) for o in offsets])
    assert (got == want).all()


def test_named_swizzles_are_cutes() -> None:
    assert str(swizzle("128B", 16)) == "Sw<3,3,3>"
    assert str(swizzle("128B", 8)) == "Sw<3,4,3>"
    assert str(swizzle("64B", 32)) == "Sw<2,2,3>"
    assert str(smem_atom("K", "128B", 16)) == "Sw<3,3,3> o (8,64):(64,1)"
    assert str(smem_atom("MN", "32B", 16)) == "Sw<1,3,3> o (16,8):(1,16)"
    with pytest.raises(MapError, match="swizzle mode"):
        swizzle("16B")  # type: ignore[arg-type]


def ptx_canonical(major: str, mode: str, bits: int, start: int, lbo: int, sbo: int,
                  r: int, c: int) -> int:
    """The byte address of element (r along M/N, c along K) of a canonical layout: core
    matrices of 8 rows x 16 bytes; for a swizzled mode W 16-byte chunks make one row of the
    swizzle atom. K-major: rows along M/N (8 per core matrix, the next 8 at SBO); K runs
    along the row (interleave: the next 16 bytes of K at LBO). MN-major: M/N runs along the
    row (W chunks; the next atom along M/N at LBO, interleave: the next 16 bytes at SBO), K
    along the 8 rows (the next 8 at SBO, interleave: at LBO)."""
    w = {"interleave": 1, "32B": 2, "64B": 4, "128B": 8}[mode]
    eb = bits // 8
    per = 16 // eb  # elements in 16 bytes
    if major == "K":
        chunk, within = divmod(c, per)
        if w == 1:
            address = start + (r % 8) * 16 + (r // 8) * sbo + chunk * lbo + within * eb
        else:
            address = start + (r % 8) * 16 * w + (r // 8) * sbo + c * eb
    else:
        if w == 1:
            chunk, within = divmod(r, per)
            address = start + within * eb + chunk * sbo + (c % 8) * 16 + (c // 8) * lbo
        else:
            atom_, within = divmod(r, w * per)
            address = start + within * eb + atom_ * lbo + (c % 8) * 16 * w + (c // 8) * sbo
    return ptx_swizzled_byte(address, mode)


@pytest.mark.parametrize(("major", "mode", "bits", "mn", "lbo", "sbo"), [
    ("K", "interleave", 16, 64, 128, 256),
    ("K", "32B", 16, 64, 16, 256),
    ("K", "64B", 16, 64, 16, 512),
    ("K", "128B", 16, 64, 16, 1024),
    ("K", "128B", 8, 128, 16, 1024),
    ("K", "128B", 32, 64, 16, 1024),
    ("MN", "interleave", 16, 64, 256, 128),
    ("MN", "32B", 16, 64, 512, 256),
    ("MN", "64B", 16, 64, 1024, 512),
    ("MN", "128B", 16, 128, 2048, 1024),
    ("MN", "128B", 32, 64, 2048, 1024),
])
def test_descriptor_layouts_match_ptx(major: str, mode: str, bits: int, mn: int, lbo: int,
                                      sbo: int) -> None:
    start = 3 * 2048  # on every pattern's boundary
    desc = SmemDescriptor(start, lbo, sbo, mode)  # type: ignore[arg-type]
    layout = desc.layout(major, bits, mn)  # type: ignore[arg-type]
    k = 256 // bits
    eb = bits // 8
    for r, c in itertools.product(range(mn), range(k)):
        assert layout(r, c) * eb == ptx_canonical(major, mode, bits, start, lbo, sbo, r, c), (
            r, c)
    # the word round-trips on both architectures, fields where PTX puts them
    for arch in ("sm90", "sm100"):
        word = desc.encode(arch)  # type: ignore[arg-type]
        assert SmemDescriptor.decode(word, arch) == desc  # type: ignore[arg-type]
        assert word & 0x3FFF == start >> 4
        assert (word >> 16) & 0x3FFF == lbo >> 4 and (word >> 32) & 0x3FFF == sbo >> 4


def test_descriptor_fields() -> None:
    desc = SmemDescriptor(1024, 16, 1024, "128B")
    assert desc.encode("sm90") >> 62 == 1
    assert (desc.encode("sm100") >> 61) == 2 and (desc.encode("sm100") >> 46) & 7 == 1
    assert SmemDescriptor(0, 16, 512, "64B").encode("sm90") >> 62 == 2
    assert SmemDescriptor(0, 16, 256, "32B").encode("sm100") >> 61 == 6
    with pytest.raises(MapError, match="multiple of 16"):
        SmemDescriptor(8, 16, 16)
    with pytest.raises(MapError, match="base offset"):
        SmemDescriptor(0, 16, 1024, "128B", 1).layout("K", 16, 64)
    with pytest.raises(MapError, match="not a sm100 swizzle mode"):
        SmemDescriptor.decode(3 << 61, "sm100")


@pytest.mark.parametrize("mode", ["interleave", "32B", "64B", "128B"])
@pytest.mark.parametrize("major", ["K", "MN"])
def test_tiled_atoms_are_what_a_dense_descriptor_describes(mode: str, major: str) -> None:
    """CuTe: ``tile_to_shape(Layout_*_Atom<T>, ...)`` is a canonical layout; the descriptor
    of each MMA's K-step of the dense tile (start advanced 32 bytes a step along a K-major
    swizzle row) has as SBO and LBO the distances between the tile's atoms."""
    bits, mn, k = 16, 64, 16
    w = {"interleave": 1, "32B": 2, "64B": 4, "128B": 8}[mode]
    atom_bytes = 8 * 16 * w
    atom_k = 8 * w if major == "K" else 8
    tile_k = max(k, atom_k)
    tile = smem_layout(major, mode, bits, mn, tile_k)  # type: ignore[arg-type]
    for step in range(tile_k // k):
        if major == "K" and w == 1:  # 16-byte K chunks: next along M at 128 B, along K past M
            lbo, sbo = atom_bytes * (mn // 8), atom_bytes
        elif major == "K":
            lbo, sbo = 16, atom_bytes
        elif w == 1:
            lbo, sbo = atom_bytes * (mn // 8), atom_bytes
        else:
            lbo, sbo = atom_bytes, atom_bytes * (mn // (8 * w))
        desc = SmemDescriptor(32 * step, lbo, sbo, mode)  # type: ignore[arg-type]
        layout = desc.layout(major, bits, mn)  # type: ignore[arg-type]
        for r, c in itertools.product(range(mn), range(k)):
            assert tile(r, k * step + c) == layout(r, c), (step, r, c)


# ---------------------------------------------------------------------------------------------
# tcgen05.ld / .st -- PTX's figures for the data-movement shapes ("Matrix fragments for shape
# .32x32b", ...): (TMEM lane, 32-bit column) of thread t's register r.


def ptx_tmem(shape: str, t: int, r: int, split: int) -> tuple[int, int]:
    if shape == "32x32b":  # each thread one lane, its registers along the columns
        return t, r
    if shape == "16x64b":  # pairs of threads per lane: T0,T2 lane 0; T1,T3 lane 8; ...
        return t // 4 + 8 * (t % 2), (t // 2) % 2 + 2 * r
    if shape == "16x128b":  # four threads per lane; r0 in lanes 0-7, r1 in lanes 8-15
        return t // 4 + 8 * (r % 2), t % 4 + 4 * (r // 2)
    if shape == "16x256b":  # as mma's accumulator: r0 r1 in lanes 0-7, r2 r3 in 8-15
        return t // 4 + 8 * ((r // 2) % 2), 2 * (t % 4) + r % 2 + 8 * (r // 4)
    # 16x32bx2: threads 0-15 the first half, 16-31 the second, split columns later
    return t % 16, r + split * (t // 16)


@pytest.mark.parametrize(("shape", "per"), [("32x32b", 1), ("16x64b", 1), ("16x128b", 2),
                                             ("16x256b", 4), ("16x32bx2", 1)])
@pytest.mark.parametrize("num", [1, 2, 8])
def test_tmem_fragments_match_ptx(shape: str, per: int, num: int) -> None:
    tv = tmem_fragment(shape, num)
    assert (tv.threads, tv.values) == (32, per * num)
    for t, r in itertools.product(range(32), range(per * num)):
        assert tv.coord(t, r) == ptx_tmem(shape, t, r, num), (t, r)
    assert tv.check().bijective


def test_tmem_split_and_warpgroup() -> None:
    tv = tmem_fragment("16x32bx2", 2, split=8)
    assert tv.tile == (16, 10) and tv.check().injective and not tv.check().covers
    for t, r in itertools.product(range(32), range(2)):
        assert tv.coord(t, r) == ptx_tmem("16x32bx2", t, r, 8)
    wg = tmem_fragment("16x256b", 1, warps=4)
    assert wg.tile == (128, 8) and wg.threads == 128
    for t, r in itertools.product(range(128), range(4)):
        lane, col = ptx_tmem("16x256b", t % 32, r, 1)
        assert wg.coord(t, r) == (32 * (t // 32) + lane, col)
    assert wg.check().hole == (16, 0)  # lanes 16-31 of each sub-partition unused
    with pytest.raises(MapError, match="at most 32"):
        tmem_fragment("16x256b", 64)
    with pytest.raises(MapError, match="overlap"):
        tmem_fragment("16x32bx2", 4, split=2)
    assert atom("SM100_TMEM_LOAD_16dp256b1x") == tmem_fragment("16x256b")
    assert atom("SM100_TMEM_STORE_32dp32b128x") == tmem_fragment("32x32b", 128)


# ---------------------------------------------------------------------------------------------
# AMD -- the matrix instruction calculator's "register to matrix element mapping with no
# modifiers" for gfx9 (CDNA) single-block MFMA: A i = lane % M, A k = kpl * floor(lane / M) +
# (element within the lane's registers); D i = (8 floor(GPR / 4) % 32) + 4 floor(lane / M) +
# GPR % 4 (the first term only for M > 16), D j = lane % M. RDNA3 (gfx11) WMMA: A/B in lanes i
# and i + 16 with element k; D i = 2 GPR + floor(lane / 16) (rows_per_reg_slot = 32 / 16),
# D j = lane % 16.


def calculator_mfma(m: int, k: int, operand: str, lane: int, element: int) -> tuple[int, int]:
    kpl = m * k // 64
    if operand in ("A", "B"):  # (i or j, k)
        return lane % m, kpl * (lane // m) + element
    i = (8 * (element // 4) % 32 if m > 16 else 0) + 4 * (lane // m) + element % 4
    return i, lane % m


@pytest.mark.parametrize("name", sorted(MFMA))
def test_mfma_matches_the_calculator(name: str) -> None:
    m, n, k, _ = MFMA[name]
    for operand in ("A", "B", "C"):
        tv = mfma(name, operand)  # type: ignore[arg-type]
        assert tv.threads == 64
        assert tv.values == (m * k // 64 if operand != "C" else m * n // 64)
        for lane, e in itertools.product(range(64), range(tv.values)):
            assert tv.coord(lane, e) == calculator_mfma(m, k, operand, lane, e), (
                operand, lane, e)
        assert tv.check().bijective
        assert atom(f"{name}.{operand}") == tv


@pytest.mark.parametrize("name", sorted(WMMA))
def test_wmma_matches_the_calculator(name: str) -> None:
    for lane, e in itertools.product(range(32), range(16)):
        assert wmma(name, "A").coord(lane, e) == (lane % 16, e)
        assert wmma(name, "B").coord(lane, e) == (lane % 16, e)
    c = wmma(name, "C")
    for lane, gpr in itertools.product(range(32), range(8)):
        assert c.coord(lane, gpr) == (2 * gpr + lane // 16, lane % 16)
    assert c.check().bijective
    report = wmma(name, "A").check()
    assert report.covers and report.clash is not None
    (t0, _), (t1, _), _ = report.clash
    assert t1 - t0 == 16  # the half-waves hold copies


def test_every_named_atom_builds_and_unknown_names_are_refused() -> None:
    for name in ATOMS:
        assert atom(name).threads in (32, 64, 128)
    with pytest.raises(MapError, match="did you mean"):
        atom("16dp256b1")
    with pytest.raises(MapError, match="unknown MFMA"):
        mfma("v_mfma_f32_4x4x4_f16", "A")


# ---------------------------------------------------------------------------------------------
# ldmatrix filling an MMA operand, and NVIDIA/cutlass#3172


def test_ldmatrix_lanes_for_the_mma_a_operand() -> None:
    """PTX: the A fragment's registers a0a1, a2a3, a4a5, a6a7 are the 8x8 blocks (rows 0-7,
    k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15); ldmatrix's register
    j is matrix j, addressed by lanes 8j..8j+7 (row r of the block for lane 8j + r)."""
    a = mma_sm80_16x8x16("A")
    blocks = [(0, 0), (8, 0), (0, 8), (8, 8)]
    plain = ldmatrix_lanes(a)  # K-major A: each lane's row is 8 k of one m
    trans = ldmatrix_lanes(a, trans=True)  # M-major A: each lane's row is 8 m of one k
    for lane in range(32):
        (m0, k0), r = blocks[lane // 8], lane % 8
        assert tuple(plain(lane)) == (m0 + r, k0)
        assert tuple(trans(lane)) + (0,) * (2 - len(tuple(trans(lane)))) == (m0, k0 + r)
    # the 16x8 accumulator is ldmatrix.x2's layout (rows g and g + 8): lane L, row L
    c = ldmatrix_lanes(mma_sm80_16x8x16("C"))
    assert [tuple(c(lane)) + (0,) * (2 - len(tuple(c(lane)))) for lane in range(16)] == [
        (lane, 0) for lane in range(16)]
    assert c(16) == c(0)  # .x2 ignores lanes 16-31
    row_per_thread = TVLayout(Layout((32, 8), (8, 1)), (32, 8), "row")
    with pytest.raises(MapError, match="consecutive"):
        ldmatrix_lanes(row_per_thread)


def test_cutlass_3172_swizzle_334_ldmatrix_trans_is_conflict_free_per_phase() -> None:
    """NVIDIA/cutlass#3172: an M-major (128, 8) half atom under ``Swizzle<3,3,4>``, tiled to
    bM=128 x bK=32, read by ``ldmatrix.x4.trans`` for the A operand of m16n8k16. Under the
    bank model (a phase = the 8 lanes of one matrix, 16 bytes each), both the default lane
    map and the lane map CuTe's tiled copy gives (from the PTX definitions) take one
    wavefront per matrix; without the swizzle, 8."""
    swizzled = views.view(parse_any_layout("Sw<3,3,4> o (128,(8,4)):(1,(128,1024))"), 16)
    plain = views.view(parse_any_layout("(128,(8,4)):(1,(128,1024))"), 16)
    lanes = ldmatrix_lanes(mma_sm80_16x8x16("A"), trans=True)
    assert lanes == Layout((2, 2, 2, 2, 2), (E(1), 2 * E(1), 4 * E(1), 8 * E(0), 8 * E(1)))
    for view in (swizzled, plain):
        for warp in (None, lanes):
            report = banks.bank_conflicts(view, warp, access="ldmatrix", matrices=4)
            assert report.ideal == 4
            assert report.wavefronts == (4 if view is swizzled else 32), (view.title, warp)
    # every block of the tile an MMA reads (16 rows of M, 16 of K) is conflict-free too
    offsets = composed_values(parse_any_layout("Sw<3,3,4> o (128,(8,4)):(1,(128,1024))"))
    for m0, k0 in itertools.product(range(0, 128, 16), range(0, 32, 16)):
        for j in range(4):
            rows = [(m0 + 8 * (j % 2), k0 + 8 * (j // 2) + r) for r in range(8)]
            chunks = {(int(offsets[m + 128 * k]) * 2 // 16) % 8 for m, k in rows}
            assert len(chunks) == 8, (m0, k0, j)
