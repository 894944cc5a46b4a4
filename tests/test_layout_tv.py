"""Thread-value layouts of the SM80 atoms, held to their published definitions: the PTX ISA's
fragment tables for ``mma.m16n8k16`` (f16 A/B, f32 C/D) and ``ldmatrix .m8n8 .b16``, written
out below as formulas (the twin: no symidx code), and the Tensor view."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from symidx.errors import MapError
from symidx.layout import cute
from symidx.layout.cute import Layout, Swizzle
from symidx.layout.swizzle import ComposedLayout
from symidx.layout.tensor import Tensor, make_tensor
from symidx.layout.tv import TVLayout, atom, ldmatrix, ldmatrix_source, mma_sm80_16x8x16

# ---------------------------------------------------------------------------------------------
# PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type": lane = thread id in
# the warp, groupID = lane >> 2, threadID_in_group = lane % 4; register element i of a thread.


def ptx_a(lane: int, i: int) -> tuple[int, int]:
    """A (16x16, .f16, a0..a7) -> (row m, col k)."""
    group, tig = lane >> 2, lane % 4
    row = group if (i < 2 or 4 <= i < 6) else group + 8
    col = tig * 2 + (i & 1) + (8 if i >= 4 else 0)
    return row, col


def ptx_b(lane: int, i: int) -> tuple[int, int]:
    """B (16x8, .f16, b0..b3) -> (row k, col n)."""
    group, tig = lane >> 2, lane % 4
    return tig * 2 + (i & 1) + (8 if i >= 2 else 0), group


def ptx_c(lane: int, i: int) -> tuple[int, int]:
    """C/D (16x8, .f32, c0..c3) -> (row m, col n)."""
    group, tig = lane >> 2, lane % 4
    return group + (8 if i >= 2 else 0), tig * 2 + (i & 1)


# PTX ISA, ldmatrix: threads 8j..8j+7 supply the addresses of the 8 rows of matrix j; in the
# destination, each thread's j-th register holds, of matrix j, row lane/4, the two 16-bit
# elements at columns 2*(lane%4) and 2*(lane%4)+1. (Tile row 8j + r is row r of matrix j.)


def ptx_ldmatrix(lane: int, matrix: int, half: int) -> tuple[int, int]:
    return 8 * matrix + lane // 4, 2 * (lane % 4) + half


def ptx_ldmatrix_address_row(lane: int, n: int) -> int | None:
    """The tile row whose address ``lane`` supplies; None when ``.x{n}`` ignores it."""
    return lane if lane < 8 * n else None


@pytest.mark.parametrize(("operand", "reference", "values"), [
    ("A", ptx_a, 8), ("B", ptx_b, 4), ("C", ptx_c, 4)])
def test_mma_16x8x16_matches_ptx(operand: str, reference: object, values: int) -> None:
    tv = mma_sm80_16x8x16(operand)  # type: ignore[arg-type]
    assert (tv.threads, tv.values) == (32, values)
    for lane, i in itertools.product(range(32), range(values)):
        want = reference(lane, i)  # type: ignore[operator]
        got = tv.coord(lane, i)
        if operand == "B":  # CuTe numbers B as (N, K); PTX draws it K x N
            got = (got[1], got[0])
        assert got == want, (operand, lane, i)
    assert tv.check().bijective


@pytest.mark.parametrize("n", [1, 2, 4])
def test_ldmatrix_matches_ptx(n: int) -> None:
    tv = ldmatrix(n)
    assert (tv.threads, tv.values, tv.tile) == (32, 2 * n, (8 * n, 8))
    for lane, matrix, half in itertools.product(range(32), range(n), range(2)):
        assert tv.coord(lane, half + 2 * matrix) == ptx_ldmatrix(lane, matrix, half)
    assert tv.check().bijective
    src = ldmatrix_source(n)
    for lane in range(32):
        row = ptx_ldmatrix_address_row(lane, n)
        if row is not None:
            assert src(lane) == row
        else:  # ignored lanes repeat an address of the tile
            assert 0 <= src(lane) < 8 * n


def test_atoms_by_cute_name() -> None:
    assert atom("SM75_U32x4_LDSM_N") == ldmatrix(4)
    assert atom("SM80_16x8x16_F32F16F16F32_TN.C") == mma_sm80_16x8x16("C")
    with pytest.raises(MapError, match="unknown atom"):
        atom("SM90_nope")
    with pytest.raises(MapError, match="1, 2 or 4"):
        ldmatrix(3)


@pytest.mark.parametrize("tv", [mma_sm80_16x8x16("A"), mma_sm80_16x8x16("B"),
                                mma_sm80_16x8x16("C"), ldmatrix(1), ldmatrix(4)],
                         ids=lambda t: t.name)
def test_maps_agree_with_the_layout_and_invert_it(tv: TVLayout) -> None:
    forward, backward = tv.map(), tv.inverse_map()
    table = tv.table()
    owner = tv.owner()
    for t, v in itertools.product(range(tv.threads), range(tv.values)):
        rc = forward.evaluate((t, v))
        assert rc == tv.coord(t, v) == tuple(table[t, v])
        assert backward.evaluate(rc) == (t, v)
        assert tuple(owner[rc]) == (t, v)


def test_check_finds_clashes_and_holes() -> None:
    # offsets t + v: thread 0 value 1 and thread 1 value 0 both land on index 1
    clash = TVLayout(Layout((32, 2), (1, 1)), (8, 8), "row")
    report = clash.check()
    assert not report.injective and report.clash is not None
    (t0, v0), (t1, v1), at = report.clash
    assert clash.coord(t0, v0) == clash.coord(t1, v1) == at
    with pytest.raises(MapError, match="both hold"):
        clash.owner()
    holes = TVLayout(Layout((16, 2), (2, 1)), (8, 8), "row")
    assert holes.check().injective and holes.check().hole == (4, 0)
    with pytest.raises(MapError, match="no inverse"):
        holes.inverse_map()
    with pytest.raises(MapError, match="outside the 4x4 tile"):
        TVLayout(Layout((32, 2), (2, 1)), (4, 4))


def test_compose_with_memory_gives_offsets() -> None:
    """A thread's registers of the C fragment, stored row-major (16x8) and through a swizzle."""
    tv = mma_sm80_16x8x16("C")
    row_major = Layout((16, 8), (8, 1))
    offsets = tv.compose(row_major)
    sw = ComposedLayout(Swizzle(1, 1, 3), 0, row_major)
    sw_offsets = tv.compose(sw)
    for t, v in itertools.product(range(32), range(4)):
        r, c = ptx_c(t, v)
        assert offsets(t, v) == 8 * r + c  # type: ignore[operator]
        plain = 8 * r + c
        assert sw_offsets(t, v) == plain ^ (((plain >> 4) & 1) << 1)  # type: ignore[operator]
    ldm = ldmatrix(4)
    stored = ldm.compose(Layout((32, 8), (8, 1)))
    assert all(stored(t, v) == 8 * (8 * (v // 2) + t // 4) + 2 * (t % 4) + v % 2  # type: ignore[operator]
               for t in range(32) for v in range(8))


# ---------------------------------------------------------------------------------------------
# Tensor


def test_tensor_reads_its_engine_through_the_layout() -> None:
    engine = np.arange(100, 132)
    t = make_tensor(engine, Layout((4, 8), (8, 1)))
    for r, c in itertools.product(range(4), range(8)):
        assert t[r, c] == 100 + 8 * r + c
    row = t[2, None]
    assert isinstance(row, Tensor) and [row[i] for i in range(8)] == list(range(116, 124))
    col = t[None, 5]
    assert isinstance(col, Tensor) and col.values().tolist() == [105, 113, 121, 129]
    assert Tensor(Layout((4, 8), (1, 4)))[3, 1] == 7  # counting tensor: the offsets


def test_tensor_prints_as_a_grid() -> None:
    text = str(make_tensor([10, 11, 12, 13, 14, 15], Layout((2, 3), (3, 1))))
    lines = text.splitlines()
    assert lines[0] == "tensor of int64 o 0 o (2,3):(3,1)"
    assert "| 10 | 11 | 12 |" in text and "| 13 | 14 | 15 |" in text


def test_tensor_partition_by_a_tv_layout() -> None:
    tile = np.arange(128) * 10
    c = make_tensor(tile, Layout((16, 8), (8, 1)))
    tv = mma_sm80_16x8x16("C")
    for thread in (0, 5, 31):
        mine = c.partition(tv, thread)
        want = [10 * (8 * r + col) for r, col in (ptx_c(thread, i) for i in range(4))]
        assert mine.values().tolist() == want


def test_tensor_rejects_what_it_cannot_read() -> None:
    with pytest.raises(MapError, match="outside the engine"):
        make_tensor([1, 2, 3], Layout(4, 1))
    with pytest.raises(MapError, match="basis strides"):
        Tensor(cute.make_identity_layout((2, 2)))
    with pytest.raises(MapError, match="not the 16x8 tile"):
        Tensor(Layout((8, 8))).partition(mma_sm80_16x8x16("C"), 0)
