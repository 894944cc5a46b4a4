"""XLA's dot fusion cost model (``gpu_dot_fusion_cost_model.cc`` at ROCm/xla 183fa00),
against hand computation: each expected figure is worked out below in plain floating point
from the model's definition and the device's constants, not from symidx's code."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from symidx.cost import cost, fusion_tiles
from symidx.cost.devices import device
from symidx.cost.dot import dot_estimate, effective_hbm_bandwidth, l2_bandwidth
from symidx.cost.timing import TICKS_PER_US
from symidx.hlo import parse_module

XLA = Path(__file__).parent / "data" / "cost" / "xla"
A6000 = device("rtx-a6000")
TAX_NS = 1300.0

GEMM = """HloModule m
ENTRY e {{
  p0 = {t}[{b}{m},{k}] parameter(0)
  p1 = {t}[{b}{k},{n}] parameter(1)
  ROOT d = {t}[{b}{m},{n}] dot(p0, p1), {batch}lhs_contracting_dims={{{lc}}},
    rhs_contracting_dims={{{rc}}}
}}
"""


def gemm(m: int, n: int, k: int, t: str = "bf16", batch: int = 0):
    b = f"{batch}," if batch else ""
    text = GEMM.format(t=t, b=b, m=m, n=n, k=k, lc=2 if batch else 1, rc=1 if batch else 0,
                       batch="lhs_batch_dims={0}, rhs_batch_dims={0}, " if batch else "")
    mod = parse_module(text)
    return mod.entry.root


def table_bw(total: int, rows: list[tuple[int, float]], peak: float) -> float:
    for (x1, a), (x2, b) in zip(rows, rows[1:]):
        if x1 < total <= x2:
            return (a + (total - x1) / (x2 - x1) * (b - a)) * peak
    raise AssertionError


def test_effective_hbm_bandwidth_per_generation() -> None:
    """The share of the peak a transfer attains: the Ampere table on the A6000 (compute
    capability 8.9), Hopper's on H100, Blackwell's on B200; clamped at both ends."""
    total = 2 * (4096 + 8) * 4096
    want = table_bw(total, [(33554432, 0.60084187), (67108864, 0.71295513)], 768_096_000_000)
    assert effective_hbm_bandwidth(total, A6000) == pytest.approx(want, rel=1e-6)
    h100 = device("h100")
    want = table_bw(total, [(33554432, 0.58906066), (67108864, 0.69897562)], 3_352_320e6)
    assert effective_hbm_bandwidth(total, h100) == pytest.approx(want, rel=1e-6)
    b200 = device("b200")
    want = table_bw(3 << 20, [(2097152, 0.06441370), (4194304, 0.11489171)],
                    8_796_093_022_208)
    assert effective_hbm_bandwidth(3 << 20, b200) == pytest.approx(want, rel=1e-6)
    assert effective_hbm_bandwidth(100, A6000) == pytest.approx(0.00043418 * 768.096e9,
                                                                rel=1e-6)
    assert effective_hbm_bandwidth(1 << 40, A6000) == pytest.approx(0.949896 * 768.096e9,
                                                                    rel=1e-6)


def test_l2_bandwidth_scales_with_memory_bandwidth() -> None:
    assert l2_bandwidth(device("h100")) == pytest.approx(6.65e12)
    assert l2_bandwidth(A6000) == pytest.approx(6.65e12 * 768.096 / 3352.32)


def memory_bound_by_hand(stages: int) -> float:
    """The bf16 [4, 4096] x [4096, 4096] dot, tiled [4, 128] with k = 128 and 4 warps, on
    the A6000, in ns (TritonGemmMemoryBoundBf16's fusion)."""
    blocks = 4096 // 128                                   # 32 output tiles, one wave
    flops = 2 * 4 * 128 * 4096 * SMS
    compute = flops / (30320 * 0.5)                        # tile m 4 < 32: Ampere derate
    read, write = 2 * 4 * 4096 + 2 * 4096 * 4096, 2 * 4 * 4096
    bw = table_bw(read + write, [(33554432, 0.60084187), (67108864, 0.71295513)],
                  768_096_000_000)
    t_read, t_write = read / bw * 1e9, write / bw * 1e9
    smem = (4 * 128 * 2 + 128 * 128 * 2) * stages          # bytes a block keeps per stage
    per_sm = max(1, min(102400 // smem, 1536 // (4 * 32)))
    waves = math.ceil(blocks / (per_sm * SMS))
    assert waves == 1
    iters = 4096 // 128
    if stages <= 1:
        loop = t_read + t_write + compute + iters * TAX_NS
    else:
        ic, im = compute / iters, t_read / iters
        it = max(max(im, ic), max(im + TAX_NS, ic) / (stages - 1))
        pro = min(stages - 1, iters)
        loop = pro * (im + TAX_NS) + (iters - pro) * it + pro * ic + t_write
    l2 = (2 * 4 * 4096 + 2 * 128 * 4096) * blocks / (6.65e12 * 768.096 / 3352.32) * 1e9 \
        + iters * 400
    return max(loop, l2)


SMS = 84


@pytest.mark.parametrize("stages", [1, 2, 3, 4])
def test_pipelined_loop_memory_bound(stages: int) -> None:
    dot = gemm(4, 4096, 4096)
    est = dot_estimate(dot, [[4, 128]], 128, A6000, num_warps=4, num_stages=stages)
    assert est is not None
    got_ns = float(est.exec_ticks[0]) / TICKS_PER_US * 1000
    assert got_ns == pytest.approx(memory_bound_by_hand(stages), rel=1e-4)  # ticks truncate


def test_launch_waves_by_shared_memory_and_threads() -> None:
    """bf16 128 x 128 tiles with k = 32 and 3 stages need 48 KiB: two blocks per SM of
    the A6000 (100 KiB), so 4096 tiles take ceil(4096 / 168) = 25 waves; with 1 stage three
    blocks fit by memory, and 12 by threads at 4 warps."""
    dot = gemm(8192, 8192, 8192)
    est = dot_estimate(dot, [[128, 128]], 32, A6000, num_warps=4, num_stages=3)
    assert est is not None
    assert int(est.shared_memory_per_block[0]) == (128 * 32 * 2 * 2) * 3
    assert int(est.launch_waves[0]) == math.ceil(4096 / (2 * SMS))
    est = dot_estimate(dot, [[128, 128]], 32, A6000, num_warps=4, num_stages=1)
    assert int(est.launch_waves[0]) == math.ceil(4096 / (6 * SMS))
    est = dot_estimate(dot, [[128, 128]], 32, A6000, num_warps=32, num_stages=1)
    assert int(est.launch_waves[0]) == math.ceil(4096 / (1 * SMS))


@pytest.mark.parametrize("tm, derated", [(16, True), (31, True), (32, False)])
def test_ampere_small_m_derate(tm: int, derated: bool) -> None:
    """On compute capability 8.x an M tile below 32 halves the matrix rate."""
    dot = gemm(1024, 1024, 1024, "f32")
    est = dot_estimate(dot, [[tm, 64]], 32, A6000)
    assert est is not None
    blocks = math.ceil(1024 / tm) * (1024 // 64)
    flops = 2 * tm * 64 * 1024 * math.ceil(blocks / SMS) * SMS
    want = flops / (30320 * (0.5 if derated else 1.0))
    assert float(est.compute_ticks[0]) / TICKS_PER_US * 1000 == pytest.approx(want, abs=0.25)


def test_batched_tile_and_l2() -> None:
    """A batch tile multiplies the flops and the L2 bytes of every block; the L2 time adds
    400 ns per step of the K loop."""
    dot = gemm(256, 256, 512, "f16", batch=8)
    est = dot_estimate(dot, [[2, 64, 128]], 64, A6000, num_warps=4, num_stages=2)
    assert est is not None
    blocks = 4 * 4 * 2
    l2_bytes = (2 * 64 * 512 * 2 + 2 * 128 * 512 * 2) * blocks
    want = l2_bytes / (6.65e12 * 768.096 / 3352.32) * 1e9 + (512 // 64) * 400
    assert float(est.l2_ticks[0]) / TICKS_PER_US * 1000 == pytest.approx(want, abs=0.25)
    assert int(est.flops[0]) == 2 * 2 * 64 * 128 * 512 * math.ceil(blocks / SMS) * SMS


def test_unsupported_dots() -> None:
    """Two non-contracting dimensions on a side, or a transpose downstream: no estimate."""
    mod = parse_module("""HloModule m
ENTRY e {
  p0 = f32[4,8,16] parameter(0)
  p1 = f32[16,32] parameter(1)
  ROOT d = f32[4,8,32] dot(p0, p1), lhs_contracting_dims={2}, rhs_contracting_dims={0}
}
""")
    assert dot_estimate(mod.entry.root, [[4, 8, 32]], 16, A6000) is None
    mod = parse_module("""HloModule m
ENTRY e {
  p0 = f32[64,16] parameter(0)
  p1 = f32[16,32] parameter(1)
  d = f32[64,32] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  n = f32[64,32] negate(d)
  ROOT t = f32[32,64] transpose(n), dimensions={1,0}
}
""")
    d = mod.entry.instruction("d")
    users = {id(d): [mod.entry.instruction("n")],
             id(mod.entry.instruction("n")): [mod.entry.root]}
    assert dot_estimate(d, [[64, 32]], 16, A6000, users=users) is None
    assert dot_estimate(d, [[64, 32]], 16, A6000, users={id(d): []}) is not None


def test_config_without_stages_runs_the_loop_unpipelined() -> None:
    """A block_level_fusion_config without num_stages has none (the proto's 0): the dot's
    loop then runs serially, as with one stage, and keeps no stage in shared memory."""
    text = (XLA / "TritonGemmMemoryBoundBf16.hlo").read_text()
    no_stages = text.replace('"num_stages":"3",', "")
    assert no_stages != text
    ft = fusion_tiles(no_stages, "_")
    assert ft.config is not None and ft.config.num_stages == 0
    c0 = cost(ft)
    c1 = cost(fusion_tiles(text, "_"), num_stages=1)
    assert c0.exec_time_us == pytest.approx(memory_bound_by_hand(1) / 1000, rel=1e-4)
    assert c1.exec_time_us == pytest.approx(memory_bound_by_hand(1) / 1000, rel=1e-4)
    c3 = cost(fusion_tiles(text, "_"))
    assert c3.num_stages == 3
    assert c3.exec_time_us == pytest.approx(memory_bound_by_hand(3) / 1000, rel=1e-4)
