"""XLA's tiled cost model, formula by formula, against hand computation from XLA's
definitions (``gpu_indexing_performance_model.cc``, ``gpu_performance_model_base.cc``,
``coalescing_analysis.cc``, ``gpu_hlo_cost_analysis.cc``): every expected value below is
worked out here from the device's constants and the fusion's shapes, not read from
symidx's code. Times are compared within a few quarter-nanosecond ticks or a relative
1e-6 (XLA computes some of them in single precision)."""

from __future__ import annotations

from pathlib import Path

import hlo_text
import pytest

from symidx.cost import cost, fusion_tiles
from symidx.cost.devices import device
from symidx.cost.flops import flops_per_element, next_pow2
from symidx.cost.tiled import coalescing_rate, num_warps_for
from symidx.cost.timing import (
    TICKS_PER_US,
    combine,
    compute_time,
    read_time,
    write_time,
)
from symidx.hlo import parse_module

DATA = Path(__file__).parent / "data" / "cost"
A6000 = device("rtx-a6000")
BW = 768_096_000_000                 # bytes/s (TestGpuDeviceInfo::RTXA6000DeviceInfo)
CLOCK = 1.41e9
SMS, FPUS = 84, 128


def tiles(name: str, fusion: str, tiler: str = "legacy"):
    return fusion_tiles((DATA / name).read_text(), fusion, tiler=tiler)


def near(got_us: float, want_s: float, rel: float = 1e-6) -> bool:
    return abs(got_us - want_s * 1e6) <= max(rel * want_s * 1e6, 2 / TICKS_PER_US)


# --------------------------------------------------------------------------- flops
def _instr(text: str, name: str):
    m = parse_module(text)
    return next(i for c in [m.entry, *m.computations.values()] for i in c.instructions
                if i.name == name)


ADD = hlo_text.ADD


@pytest.mark.parametrize("body, name, dev, want", [
    # elementwise: the sm_86 profile's clock cycles (exponential/f32: 86, divide/s8: 370)
    ("ENTRY e {\n p = f32[8] parameter(0)\n ROOT x = f32[8] exponential(p)\n}", "x",
     "rtx-a6000", 86),
    ("ENTRY e {\n p = s8[8] parameter(0)\n ROOT x = s8[8] divide(p, p)\n}", "x",
     "rtx-a6000", 370),
    # not in the profile: kDefaultFlopsPerElement = 3; H100's sm_90 profile lists add/f32 7
    ("ENTRY e {\n p = f32[8] parameter(0)\n ROOT x = f32[8] add(p, p)\n}", "x",
     "rtx-a6000", 3),
    ("ENTRY e {\n p = f32[8] parameter(0)\n ROOT x = f32[8] add(p, p)\n}", "x", "h100", 7),
    # data movement
    ("ENTRY e {\n p = f32[8,4] parameter(0)\n ROOT x = f32[4,8] transpose(p), "
     "dimensions={1,0}\n}", "x", "rtx-a6000", 0),
    # concatenate: 6, or 400 along a dimension > 0 whose first operand is not a multiple of 32
    ("ENTRY e {\n p = f32[32,64] parameter(0)\n ROOT x = f32[32,128] concatenate(p, p), "
     "dimensions={1}\n}", "x", "rtx-a6000", 6),
    ("ENTRY e {\n p = f32[32,31] parameter(0)\n q = f32[32,33] parameter(1)\n"
     " ROOT x = f32[32,64] concatenate(p, q), dimensions={1}\n}", "x", "rtx-a6000", 400),
    ("ENTRY e {\n p = f32[31,4] parameter(0)\n ROOT x = f32[62,4] concatenate(p, p), "
     "dimensions={0}\n}", "x", "rtx-a6000", 6),
    # reduce over 15 x 9, padded 16 x 16: (256 - 1) * 3 (FlopsPerElementTest)
    (ADD + "ENTRY e {\n p = f32[10,15,9] parameter(0)\n c = f32[] constant(0)\n"
     " ROOT x = f32[10] reduce(p, c), dimensions={1,2}, to_apply=add\n}", "x",
     "rtx-a6000", 765),
    # reduce-window: (7 - 1) * 3
    ((DATA / "reduce_window.hlo").read_text(), "reduce-window", "rtx-a6000", 18),
    # dot: 2 * K
    ("ENTRY e {\n p = f32[128,257] parameter(0)\n q = f32[257,64] parameter(1)\n"
     " ROOT x = f32[128,64] dot(p, q), lhs_contracting_dims={1}, "
     "rhs_contracting_dims={0}\n}", "x", "rtx-a6000", 514),
])
def test_flops_per_element(body: str, name: str, dev: str, want: int) -> None:
    assert flops_per_element(_instr(body, name), device(dev)) == want


def test_next_pow2() -> None:
    assert [next_pow2(n) for n in (1, 2, 3, 4, 5, 911, 1024, 1025)] == \
        [1, 2, 4, 4, 8, 1024, 1024, 2048]


# --------------------------------------------------------------------------- time formulas
def test_read_time_first_touch_from_dram() -> None:
    # 1 MiB read once, coalesced, many blocks: bytes / bandwidth
    t = read_time(A6000, 10_000, 1 << 20, 1 << 20, 1.0)
    assert near(float(t) / TICKS_PER_US, (1 << 20) / BW)


def test_read_time_rereads_boosted_by_l2_and_l1() -> None:
    # 1 MiB first touch, 2 MiB of re-reads: under L2 (6 MiB) at 2.5x
    t = read_time(A6000, 10_000, 1 << 20, 3 << 20, 1.0)
    assert near(float(t) / TICKS_PER_US, (1 << 20) / BW + (2 << 20) / (BW * 2.5))
    # 64 KiB net: under L1 per SM x SMs (2 KiB x 84 = 168 KiB): 2.5 x 8
    t = read_time(A6000, 10_000, 1 << 16, 5 << 16, 1.0)
    assert near(float(t) / TICKS_PER_US, (1 << 16) / BW + (4 << 16) / (BW * 2.5 * 8))
    # over L2: re-reads at the DRAM bandwidth times the coalescing rate
    t = read_time(A6000, 10_000, 8 << 20, 16 << 20, 0.5)
    assert near(float(t) / TICKS_PER_US, (16 << 20) / (BW * 0.5))


def test_read_time_capped_by_blocks() -> None:
    # one block issues one 32-byte transaction per clock: 1.41e9 * 32 bytes/s
    t = read_time(A6000, 1, 1 << 20, 1 << 20, 1.0)
    assert near(float(t) / TICKS_PER_US, (1 << 20) / (CLOCK * 32))


def test_write_time() -> None:
    assert near(float(write_time(A6000, 65536, 1.0)) / TICKS_PER_US, 65536 / BW)
    assert near(float(write_time(A6000, 65536, 0.25)) / TICKS_PER_US, 65536 / (BW // 4))


def test_compute_time_and_combine() -> None:
    # 10 blocks of 64 threads: 2 flops per FMA x 1.41 GHz x 10 SMs x 64 FPUs (truncated)
    rate = int(2 * float(__import__("numpy").float32(1.41)) * 10 * 64)
    t = compute_time(A6000, 10**6, 10, 64)
    assert near(float(t) / TICKS_PER_US, 10**6 / rate * 1e-9)
    # more blocks than SMs, more threads than FPUs: capped at 84 SMs x 128 FPUs
    t = compute_time(A6000, 10**9, 10_000, 1024)
    assert near(float(t) / TICKS_PER_US, 10**9 / int(2 * 1.41000000238 * SMS * FPUS) * 1e-9)
    # c + m - 0.95 min(c, m)
    assert int(combine(4000, 10_000)) == 4000 + 10_000 - 3800


def test_coalescing_rate() -> None:
    import numpy as np

    def rate(tile, dims, nbytes):
        t = np.array([tile])
        return float(coalescing_rate(t, np.ones_like(t), dims, tuple(range(len(dims)))[::-1],
                                     nbytes, 64)[0])
    assert rate([2, 128], (2048, 512), 4) == 1.0          # 512 contiguous bytes
    assert rate([128, 2], (2048, 512), 4) == 8 / 64       # 8 bytes of a 64-byte transaction
    assert rate([1, 911], (512, 911), 4) == 3644 / 3648   # a whole row, 911 floats
    assert rate([4, 911], (512, 911), 4) == 4 * 3644 / (64 * 228)
    assert rate([128, 16], (2048, 512), 1) == 16 / 64


def test_warps_follow_the_largest_padded_tile() -> None:
    assert [int(num_warps_for(n)) for n in (1, 256, 257, 1024, 1025, 4096, 4097)] == \
        [1, 1, 2, 2, 4, 4, 8]


# --------------------------------------------------------------------------- whole fusions
def test_softmax_block_level_config() -> None:
    """[1, 911] from the backend config: param_0 read once, param_1 by each of 512 blocks;
    flops: two multiplies (3 per element on the padded 1 x 1024 tile) and the reduce
    ((1024 - 1) x 3 per element of its 1-element tile), in each of 512 blocks."""
    c = cost(tiles("softmax.hlo", "triton_softmax"))
    assert c.bytes_read == 512 * 911 * 4 + 512 * 911 * 4
    assert c.bytes_written == 512 * 911 * 4
    assert c.flops == 512 * (3 * 1024 + 3 * 1024 + 1023 * 3)
    assert c.num_warps == 2 and c.num_blocks == 512
    assert 4 <= c.exec_time_us <= 6                      # XLA: 5 +- 1 us on A6000


def test_concatenate_regions() -> None:
    """Each operand of the concatenate is evaluated by its share of the blocks."""
    c = cost(tiles("concatenate.hlo", "fusion"), [[1, 128]], num_warps=3)
    assert c.flops == 6 * 128 * 96 + 86 * 128 * (96 * 32 // 96)
    assert c.bytes_read == 4 * 128 * (96 * 64 // 96) + 4 * 128 * (96 * 32 // 96)


def test_dot_reduction_loop() -> None:
    """The dot's operands are evaluated once per step of its K loop (ceil(257 / 64) = 5),
    their tiles [32, 64] and [64, 32]."""
    c = cost(tiles("dot_reduction_loop.hlo", "fusion"), [[32, 32]], num_warps=32)
    blocks = 4 * 2
    assert c.flops == 514 * 32 * 32 * blocks + 86 * 32 * 64 * blocks * 5
    assert c.bytes_read == 2 * 4 * 32 * 64 * blocks * 5


def test_masked_padding_is_not_read() -> None:
    c = cost(tiles("add_2048x512.hlo", "triton_softmax"), [[2, 128]], num_warps=2)
    assert c.bytes_read == 2 * 2048 * 512 * 4
    c65 = cost(fusion_tiles("""HloModule m
f {
  a = f32[65,65] parameter(0)
  b = f32[65,65] parameter(1)
  ROOT s = f32[65,65] add(a, b)
}
ENTRY e {
  a = f32[65,65] parameter(0)
  b = f32[65,65] parameter(1)
  ROOT r = f32[65,65] fusion(a, b), kind=kCustom, calls=f
}""", "r"), [[65, 65]], num_warps=2)
    assert c65.bytes_read == 2 * 65 * 65 * 4 and c65.flops == 128 * 128 * 3


def test_uncoalesced_reads_and_writes() -> None:
    ft = tiles("add_2048x512.hlo", "triton_softmax")
    a = cost(ft, [[2, 128]], num_warps=2)
    b = cost(ft, [[128, 2]], num_warps=2)
    assert b.read_time_us / a.read_time_us == pytest.approx(8, abs=1e-3)
    # written in 8-byte runs (two floats) instead of 512-byte ones: 8x slower (the
    # effective bandwidth is truncated to whole bytes per second, hence not exactly 8)
    assert b.write_time_us / a.write_time_us == pytest.approx(8, abs=1e-3)


def test_register_spill_is_infinite() -> None:
    """0.4 x 65536 registers = 26214.4: the [4, 4] tiling's largest operand and iota tiles
    have 4096 x 4 = 16384 elements; [8, 4] makes the iotas' tiles 8 x 4096 and [4, 8] the
    parameter's 4096 x 8: 32768, over the limit."""
    ft = tiles("broadcast_reduce.hlo", "input_reduce_fusion")
    ok = cost(ft, [[4, 4]], num_warps=8)
    assert not ok.is_infinite and 146 <= ok.exec_time_us <= 148     # XLA: 147 +- 1
    for t in ([8, 4], [4, 8]):
        c = cost(ft, [t], num_warps=8)
        assert c.is_infinite and c.exec_time_us is None


def test_estimated_warps() -> None:
    ft = fusion_tiles("""HloModule m
f {
  a = f32[9,9,9] parameter(0)
  b = f32[9,9,9] parameter(1)
  ROOT s = f32[9,9,9] multiply(a, b)
}
ENTRY e {
  a = f32[9,9,9] parameter(0)
  b = f32[9,9,9] parameter(1)
  ROOT r = f32[9,9,9] fusion(a, b), kind=kCustom, calls=f
}""", "r")
    # 9 x 9 x 9 = 729 (2 warps), but padded 16 x 16 x 16 = 4096: 4 warps
    assert cost(ft, [[9, 9, 9]]).estimated_num_warps == 4


def test_int32_many_blocks() -> None:
    """131076 x 16384 blocks of [1, 1]: param_0 is read through the root's [1, 1] tile and
    the reduce's [1, 16384] one; the worst coalescing (2 of 64 bytes) applies to all of it:
    read time = total bytes x 32 / bandwidth (XLA: 2932 +- 2 s)."""
    text = """HloModule softmax
max_computation {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT m = f16[] maximum(a, b)
}
softmax {
  p = f16[131076,16384]{1,0} parameter(0)
  c = f16[] constant(-inf)
  r = f16[131076]{0} reduce(p, c), dimensions={1}, to_apply=max_computation
  b = f16[131076,16384]{1,0} broadcast(r), dimensions={0}
  ROOT s = f16[131076,16384]{1,0} subtract(p, b)
}
ENTRY main {
  p = f16[131076,16384]{1,0} parameter(0)
  ROOT fusion = f16[131076,16384]{1,0} fusion(p), kind=kCustom, calls=softmax
}"""
    c = cost(fusion_tiles(text, "fusion"), [[1, 1]], num_warps=1)
    n = 131076 * 16384
    total = n * 2 + n * 16384 * 2
    assert c.bytes_read == total
    assert c.read_time_us == pytest.approx(total * 32 / BW * 1e6, rel=1e-5)
    assert 2930e6 <= c.exec_time_us <= 2934e6 and 13e6 <= c.compute_time_us <= 15e6


def test_experimental_tiler_pads_tile_sizes() -> None:
    ft = tiles("softmax.hlo", "triton_softmax", tiler="experimental")
    c = cost(ft, [[4, 911]])
    assert c.output_tile_sizes == [[4, 1024]]
    assert c.bytes_read == 512 * 911 * 4 + 128 * 911 * 4     # masked: capped at 911


def test_symidx_objective_times_each_read_at_its_own_rate() -> None:
    """p + transpose(p), f32[1024,1024], tile [16, 4]: the straight read of p runs 4 floats
    (16 of 64 bytes), the transposed one 16 floats (a whole 64-byte transaction). XLA times
    both reads at the worse rate; the symidx objective each at its own, each read taking
    half of the first touch of p (4 MiB, under L2)."""
    import numpy as np

    f = tiles("self_transpose.hlo", "fusion")
    xla = cost(f, [[16, 4]], num_warps=1)
    own = cost(f, [[16, 4]], num_warps=1, objective="symidx")
    n = (1024 // 16) * (1024 // 4)
    size = 1024 * 1024 * 4
    per_read = n * 16 * 4 * 4
    assert xla.bytes_read == own.bytes_read == 2 * per_read
    want_xla = read_time(A6000, n, size, 2 * per_read, 0.25)
    want_own = read_time(A6000, n, size // 2, per_read, 0.25) + \
        read_time(A6000, n, size // 2, per_read, 1.0)
    assert xla.read_time_us == float(np.asarray(want_xla)) / TICKS_PER_US
    assert own.read_time_us == float(np.asarray(want_own)) / TICKS_PER_US
    assert own.read_time_us < xla.read_time_us
