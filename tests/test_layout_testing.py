"""assert_swizzle_roundtrip catches what ROCm/rocm-libraries#10845's review found its CPU
suite let through: on the gfx942 fp16 D128 V^T tile (rows = head dim, 128 columns of keys,
stored at ``dim * 128 + (key ^ ((dim & 31) << 2))``), a store/read mask mismatch and the
swizzle deleted outright -- and passes the correct kernel."""

from __future__ import annotations

import numpy as np
import pytest

from symidx.layout.banks import AMD_LDS_CDNA3
from symidx.layout.cute import ComposedLayout, Layout, Swizzle
from symidx.layout.linear import from_cute
from symidx.layout.testing import assert_swizzle_roundtrip

D, ROW = 128, 128


def swizzled(mask: int = 31):
    def offset(dim: np.ndarray, key: np.ndarray) -> np.ndarray:
        return dim * ROW + (key ^ ((dim & mask) << 2))
    return offset


def plain(dim: np.ndarray, key: np.ndarray) -> np.ndarray:
    return dim * ROW + key


def read_lanes(lane: int) -> tuple[int, int]:
    """ds_read_b64 of V^T: lane l reads 4 fp16 keys of head dim l."""
    return (lane, 0)


CHECK = dict(element_bits=16, reads=read_lanes, vector=4, machine=AMD_LDS_CDNA3,
             max_conflict=1)


def test_the_correct_swizzle_passes() -> None:
    report = assert_swizzle_roundtrip(swizzled(), swizzled(), (D, ROW), **CHECK)
    assert report is not None and report.wavefronts == report.ideal == 4


def test_mutation_store_read_mask_mismatch_is_caught() -> None:
    with pytest.raises(AssertionError, match=r"element \(16, 0\) is stored at offset 2112 but "
                                             r"read from offset 2048"):
        assert_swizzle_roundtrip(swizzled(31), swizzled(15), (D, ROW), **CHECK)


def test_mutation_swizzle_deleted_is_caught() -> None:
    # store and read agree (both plain): the data round-trips, the conflicts come back
    with pytest.raises(AssertionError, match="16-way bank conflict on cdna3"):
        assert_swizzle_roundtrip(plain, plain, (D, ROW), **CHECK)


def test_a_store_that_is_not_a_permutation_is_caught() -> None:
    def ored(dim: np.ndarray, key: np.ndarray) -> np.ndarray:
        return dim * ROW + (key | ((dim & 31) << 2))  # OR for XOR: store and read agree

    with pytest.raises(AssertionError, match=r"elements \(1, 0\) and \(1, 4\) both at offset "
                                             r"132"):
        assert_swizzle_roundtrip(ored, ored, (D, ROW))
    with pytest.raises(AssertionError, match="outside the buffer"):
        assert_swizzle_roundtrip(lambda d, k: d * ROW + (k ^ ((d & 31) << 3)),
                                 lambda d, k: d * ROW + (k ^ ((d & 31) << 3)), (D, ROW))


def test_cute_and_triton_layouts_are_accepted() -> None:
    sw = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))
    assert_swizzle_roundtrip(sw, sw, (8, 64))
    with pytest.raises(AssertionError, match="does not undo"):
        assert_swizzle_roundtrip(sw, ComposedLayout(Swizzle(2, 3, 3), 0, Layout((8, 64),
                                                                              (64, 1))), (8, 64))
    ll = from_cute(ComposedLayout(Swizzle(3, 3, 3), 0, Layout(512, 1)), shape=[8, 64],
                   order="row").invert()           # (row, col) -> offset
    assert_swizzle_roundtrip(sw, ll, (8, 64))


def test_conflict_bound_needs_the_lane_pattern() -> None:
    with pytest.raises(AssertionError, match="needs the read's lane pattern"):
        assert_swizzle_roundtrip(plain, plain, (D, ROW), max_conflict=1)
