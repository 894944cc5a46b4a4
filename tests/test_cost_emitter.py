"""Triton's emitter constraints (XLA's ``TritonEmitterConstraints`` and
``VerifyTritonConstraints``): XLA's own test expectations, and twins that decide every
candidate tiling of small fusions from the constraints' definitions, worked out by hand
from the fusions' shapes (no symidx tile is consulted)."""

from __future__ import annotations

from itertools import product
from pathlib import Path

import pytest

from symidx.cost import emitter_check, fusion_tiles
from symidx.tiling.valid import candidates

DATA = Path(__file__).parent / "data" / "cost"
GRID_X = 2_147_483_647
MAX_ELEMENTS = 1_048_576


def p2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def is_pow2(n: int) -> bool:
    return n & (n - 1) == 0


def ft(name: str, fusion: str = "fusion", **kw):
    return fusion_tiles((DATA / name).read_text(), fusion, **kw)


# --------------------------------------------------------------------------- XLA's cases
@pytest.mark.parametrize("sizes, valid", [
    ([8, 128], True),            # biggest tile 8 x 65536 (the reduce's row) = 524288
    ([18, 50304], False),        # padded 32 x 65536 = 2097152
    ([1024, 1], False),          # the reduce reads 1024 rows of 65536
])
def test_too_big_tiles(sizes: list[int], valid: bool) -> None:
    assert emitter_check(ft("softmax_8192x50304.hlo"), [sizes]).valid is valid


def test_too_big_tiles_experimental() -> None:
    f = ft("softmax_8192x50304.hlo", tiler="experimental")
    assert emitter_check(f, [8, 128, 8192], flat=True).valid
    v = emitter_check(f, [1024, 1, 8192], flat=True)
    assert not v.valid and "padded tile size product that exceeds the maximum" in v.reason


def test_dot_operand_size() -> None:
    f = ft("dot_4x32768.hlo")
    assert emitter_check(f, [[4, 4, 4]]).valid
    v = emitter_check(f, [[512, 4, 4]])        # m = 512: lhs tile [512, 4]
    assert not v.valid and "exceeds the maximum MMA dimension size" in v.reason
    fx = ft("dot_4x32768.hlo", tiler="experimental")
    assert emitter_check(fx, [4, 4, 4], flat=True).valid
    assert not emitter_check(fx, [512, 4, 4], flat=True).valid


def test_multi_output_power_of_two() -> None:
    """The reduce's tile [1] gives the other root, abs f32[36], a tile of 12."""
    f = ft("multi_output_reshape.hlo")
    assert emitter_check(f, [[1]], emitter="none").valid
    assert not emitter_check(f, [[1]]).valid
    fx = ft("multi_output_reshape.hlo", tiler="experimental",
            xla_flags={"xla_gpu_unsupported_enable_triton_multi_output_fusion": "true"})
    v = emitter_check(fx, [1, 12, 12], flat=True)
    assert not v.valid and "neither a power of 2 nor equal" in v.reason


# --------------------------------------------------------------------------- twins
def reshape_twin(t0: int, t1: int, emitter: bool) -> bool:
    """f32[36] -> reshape f32[6,6] (after abs): the reshape reads one strided run when the
    tile is (1, any), (any, 6) or (any, 1); with Triton, the same must hold for the tile
    padded to powers of two, and each root tile size is a power of two or 6."""
    def run(a: int, b: int) -> bool:
        return a == 1 or b in (1, 6)
    if not run(t0, t1):
        return False
    if not emitter:
        return True
    if not run(p2(t0), p2(t1)):
        return False
    return all(is_pow2(t) or t == 6 for t in (t0, t1))


@pytest.mark.parametrize("emitter", ["none", "triton"])
def test_reshape_twin(emitter: str) -> None:
    f = ft("reshape.hlo")
    for t0, t1 in product(candidates(6), candidates(6)):
        got = emitter_check(f, [[t0, t1]], emitter=emitter).valid
        assert got is reshape_twin(t0, t1, emitter == "triton"), (t0, t1)


def test_reshape_xla_cases() -> None:
    f = ft("reshape.hlo")
    assert emitter_check(f, [[1, 3]], emitter="none").valid
    assert not emitter_check(f, [[1, 3]]).valid
    for ok in ([1, 6], [2, 1], [1, 8], [1, 4]):
        assert emitter_check(f, [ok]).valid, ok
    fx = ft("reshape.hlo", tiler="experimental")
    assert not emitter_check(fx, [1, 3], flat=True).valid
    for ok in ([1, 6], [2, 1], [1, 8], [1, 4]):
        assert emitter_check(fx, ok, flat=True).valid, ok


def softmax_twin(t0: int, t1: int) -> bool:
    """f32[8192,50304] softmax (subtract of the row's max): the tiles are the root's and
    param_0's [t0, t1] and the reduce's read of param_0 [t0, 50304]; padded to powers of two
    none may pass 2^20 elements; the grid is ceil(8192/t0) x ceil(50304/t1) < 2^31 - 1; the
    root tile is a power of two or whole along each dimension."""
    if p2(t0) * p2(50304) > MAX_ELEMENTS or p2(t0) * p2(t1) > MAX_ELEMENTS:
        return False
    if -(-8192 // t0) * -(-50304 // t1) >= GRID_X:
        return False
    return (is_pow2(t0) or t0 == 8192) and (is_pow2(t1) or t1 == 50304)


def test_softmax_twin() -> None:
    f = ft("softmax_8192x50304.hlo")
    for t0, t1 in product([1, 2, 16, 32, 8192], [1, 3, 1024, 32768, 50304]):
        assert emitter_check(f, [[t0, t1]]).valid is softmax_twin(t0, t1), (t0, t1)


def grid_twin(t0: int, t1: int) -> bool:
    return -(-65536 // t0) * -(-65536 // t1) < GRID_X


def test_grid_twin() -> None:
    text = """HloModule m
f {
  p = f32[65536,65536] parameter(0)
  ROOT l = f32[65536,65536] log(p)
}
ENTRY e {
  p = f32[65536,65536] parameter(0)
  ROOT fusion = f32[65536,65536] fusion(p), kind=kCustom, calls=f
}"""
    f = fusion_tiles(text, "fusion")
    fx = fusion_tiles(text, "fusion", tiler="experimental")
    for t0, t1 in [(1, 1), (1, 2), (2, 1), (128, 128), (1, 65536)]:
        assert emitter_check(f, [[t0, t1]]).valid is grid_twin(t0, t1)
        v = emitter_check(fx, [t0, t1], flat=True)
        assert v.valid is grid_twin(t0, t1)
        if not v.valid:
            assert "Number of blocks exceeds the device grid" in v.reason


def test_concatenate_divisibility() -> None:
    """f32[32,128] (exp) ++ f32[64,128] along dimension 0: the padded tile along it must
    divide 32 and 64."""
    f = ft("concatenate.hlo")
    for t0 in candidates(96):
        want = 32 % p2(t0) == 0 and 64 % p2(t0) == 0 and 32 % t0 == 0 and (
            is_pow2(t0) or t0 == 96)
        assert emitter_check(f, [[t0, 128]]).valid is want, t0
