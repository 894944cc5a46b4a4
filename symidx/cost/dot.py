"""XLA's dot fusion cost model (``gpu_dot_fusion_cost_model.cc``, as of ROCm/xla 183fa00):
the time of a dot tiled ``[..b.., m, n]`` with a contracting tile ``k``, ``num_stages``
pipeline stages and ``num_warps`` warps (the tiled cost model times a fusion's dots with
it). For a dot of ``B`` batches of an ``M x K`` by ``K x N`` product:

* **Compute**: ``2 b m n K`` flops per output tile, times the tiles rounded up to whole
  waves of SMs, at the device's peak matrix rate (``CalculatePeakMatrixOpsPerNs``: its
  matrix units for the lhs type, else its FPUs), derated for a small ``m`` (Blackwell below
  128: 0.5; Hopper below 64: 0.63; Ampere below 32: 0.5).
* **HBM**: both operands read and the output written once, at the peak memory bandwidth
  times the share a transfer of that size attains (a table per GPU generation,
  interpolated).
* **Main loop**: ``ceil(K / k)`` iterations, evaluated one hardware wave at a time (as many
  blocks as fit on the SMs at once, by shared memory -- ``(m + n) k`` elements a stage --
  and by threads): with one stage (or one iteration) memory, compute and a latency tax of
  1300 ns per iteration add up; with ``s`` stages the first ``s - 1`` iterations only load,
  the last ``s - 1`` only compute, and each iteration between takes the larger of its
  compute and its load (the load plus the tax, shared over ``s - 1`` stages, at least the
  load alone).
* **L2**: each tile loads ``(m + n) K`` elements, at H100's measured 6.65 TB/s scaled by the
  device's memory bandwidth over H100's, plus a fixed overhead per iteration of the ``K``
  loop (400 ns, 150 ns with TMA).

The dot's execution time is the larger of the main loop and L2. Supported (XLA's
``IsSupported``): one contracting dimension and at most one non-contracting dimension per
side, and no transpose among the dot's users; otherwise :func:`dot_estimate` returns None
and the tiled model counts the dot's flops as any other instruction's.

Times are ticks (quarter nanoseconds, :mod:`symidx.cost.timing`), as absl::Duration keeps
them: a duration divided by an integer truncates, a floating-point time rounds to a tick.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any

import numpy as np

from symidx.cost.constants import (
    DOT_H100_L2_BANDWIDTH,
    DOT_H100_MEMORY_BANDWIDTH,
    DOT_HBM_BANDWIDTH_FRACTION,
    DOT_K_LOOP_OVERHEAD_S,
    DOT_LOOP_LATENCY_TAX_NS,
    DOT_SMALL_M_DERATE,
)
from symidx.cost.devices import Device
from symidx.cost.timing import TICKS_PER_SECOND, effective_flops_per_ns, f32, nanoseconds, seconds

__all__ = ["DotEstimate", "dot_estimate", "peak_matrix_flops_per_ns", "bits", "generation",
           "effective_hbm_bandwidth", "l2_bandwidth"]

_BITS = {"pred": 8, "s4": 4, "u4": 4, "s8": 8, "u8": 8, "f8e4m3fn": 8, "f8e5m2": 8,
         "f8e4m3": 8, "f8e5m2fnuz": 8, "f8e4m3fnuz": 8, "f8e4m3b11fnuz": 8, "f8e3m4": 8,
         "bf16": 16, "f16": 16, "s16": 16, "u16": 16, "f32": 32, "s32": 32, "u32": 32,
         "f64": 64, "s64": 64, "u64": 64, "c64": 64, "c128": 128, "f4e2m1fn": 4}

#: kLoopLatencyTax in ticks.
_TAX = DOT_LOOP_LATENCY_TAX_NS * TICKS_PER_SECOND // 1_000_000_000


def bits(element_type: str) -> int:
    return _BITS.get(element_type, 32)


@dataclass(frozen=True)
class DotEstimate:
    """The dot model's figures (arrays over tilings; times in ticks)."""

    compute_ticks: Any
    exec_ticks: Any
    flops: Any                      # the wave-quantised flops
    loop_ticks: Any = None          # the pipelined main loop, all waves
    l2_ticks: Any = None
    hbm_read_ticks: Any = None
    hbm_write_ticks: Any = None
    launch_waves: Any = None
    shared_memory_per_block: Any = None


def generation(dev: Device) -> str | None:
    """The CUDA generation the dot model distinguishes (``blackwell`` for compute
    capability 10 and above, ``hopper`` 9, ``ampere`` 8), None for any other device (a ROCm
    device included: XLA reads its CUDA compute capability as none)."""
    if dev.platform != "cuda":
        return None
    major = dev.compute_capability[0]
    if major >= 10:
        return "blackwell"
    return {9: "hopper", 8: "ampere"}.get(major)


def peak_matrix_flops_per_ns(dev: Device, element_type: str) -> int:
    """``CalculatePeakMatrixOpsPerNs``: the device's matrix-unit rate for the type, or its
    FPU rate (``CalculateEffectiveFlopsPerNs`` on every SM) when it has no matrix unit for
    it."""
    units = getattr(dev, "matrix_units", None) or {}
    row = units.get(_rate_key(element_type))
    if row is None:
        return int(effective_flops_per_ns(dev, dev.core_count, dev.fpus_per_core))
    per_core, ops_per_clock, clock_scale = row
    clock = float(np.float32(np.float32(clock_scale) * np.float32(dev.clock_rate_ghz)))
    return int(clock * ops_per_clock * 2 * (dev.core_count * per_core))


def _rate_key(element_type: str) -> str:
    b = bits(element_type)
    kind = "f" if element_type.startswith(("f", "bf", "c")) else "i"
    return f"{kind}{b}"


def effective_hbm_bandwidth(dma: int, dev: Device) -> float:
    """``GetEffectiveHbmBandwidth``: the bandwidth (bytes/s, single precision) a transfer of
    ``dma`` bytes attains: the peak memory bandwidth times the generation's measured share
    (the Ampere table for any device not Hopper or Blackwell)."""
    table = DOT_HBM_BANDWIDTH_FRACTION[
        {"blackwell": "blackwell", "hopper": "hopper"}.get(generation(dev) or "", "ampere")]
    peak = np.float32(dev.memory_bandwidth)
    if dma <= table[0][0]:
        return float(np.float32(np.float32(table[0][1]) * peak))
    if dma >= table[-1][0]:
        return float(np.float32(np.float32(table[-1][1]) * peak))
    hi = next(i for i, (size, _) in enumerate(table) if size >= dma)
    (x1, a), (x2, b) = table[hi - 1], table[hi]
    fa, fb = np.float32(a), np.float32(b)
    t = np.float32(np.float32(dma - x1) / np.float32(x2 - x1))
    return float(np.float32(np.float32(fa + np.float32(t * np.float32(fb - fa))) * peak))


def l2_bandwidth(dev: Device) -> float:
    """The L2 bandwidth the dot model assumes (bytes/s): H100's measured 6.65 TB/s times the
    device's memory bandwidth over H100 SXM's peak (``GetMemoryBandwidthSpec``)."""
    return DOT_H100_L2_BANDWIDTH * (float(dev.memory_bandwidth) / DOT_H100_MEMORY_BANDWIDTH)


def _pipelined(stages: Any, iters: Any, compute: Any, read: Any, write: Any) -> Any:
    """``CalculatePipelinedLoopTime`` in ticks, elementwise."""
    stages = np.asarray(stages, dtype=np.int64)
    iters = np.asarray(iters, dtype=np.int64)
    serial = read + write + compute + iters * _TAX
    k = np.maximum(iters, 1)
    s1 = np.maximum(stages - 1, 1)
    it_compute = compute // k
    it_raw = read // k
    it_mem = it_raw + _TAX
    theoretical = np.maximum(it_raw, it_compute)
    with_latency = np.maximum(it_mem, it_compute)
    it_time = np.maximum(theoretical, with_latency // s1)
    prologue_loops = np.minimum(s1, iters)
    piped = (prologue_loops * it_mem + (iters - prologue_loops) * it_time +
             prologue_loops * it_compute + write)
    return np.where((stages <= 1) | (iters <= 1), serial, piped)


def _launch_waves(blocks: Any, smem: Any, warps: Any, dev: Device) -> Any:
    """``CalculateHardwareLaunchWaves``: the waves of blocks the SMs run one after
    another, as many blocks resident per SM as shared memory and threads allow (at least
    one)."""
    smem = np.asarray(smem, dtype=np.int64)
    warps = np.maximum(np.asarray(warps, dtype=np.int64), 1)
    by_smem = np.where(smem > 0, dev.shared_memory_per_core // np.maximum(smem, 1),
                       dev.threads_per_core_limit)
    by_threads = dev.threads_per_core_limit // (warps * dev.threads_per_warp)
    active = np.maximum(1, np.minimum(by_smem, by_threads))
    capacity = active * dev.core_count
    return -(-np.asarray(blocks, dtype=np.int64) // capacity)


def dot_estimate(dot: Any, tile: Any, block_k: Any, dev: Device, *, num_warps: Any = 1,
                 num_stages: Any = 1, tma: bool = False, users: Any = None
                 ) -> DotEstimate | None:
    """The dot model's figures for ``dot`` tiled ``tile`` (the dot's output tile; rows of an
    array, one per tiling) with contracting tile ``block_k``, ``num_warps`` warps and
    ``num_stages`` stages (scalars or arrays over the rows); None when XLA's dot model does
    not support the dot. ``users`` maps an instruction to the instructions that use it, to
    find a transpose downstream of the dot."""
    dn = dot.dot_dimension_numbers
    if dn is None or len(dn.lhs_contracting_dims) != 1 or len(dn.rhs_contracting_dims) != 1:
        return None
    lhs, rhs = dot.operands[0].shape, dot.operands[1].shape
    lnc = [d for d in range(len(lhs.dims)) if d not in dn.lhs_contracting_dims and
           d not in dn.lhs_batch_dims]
    rnc = [d for d in range(len(rhs.dims)) if d not in dn.rhs_contracting_dims and
           d not in dn.rhs_batch_dims]
    if len(lnc) > 1 or len(rnc) > 1 or not lnc or not rnc:
        return None
    if users is not None and _transposed_downstream(dot, users):
        return None
    b = prod(lhs.dims[d] for d in dn.lhs_batch_dims)
    m, n = lhs.dims[lnc[0]], rhs.dims[rnc[0]]
    k = lhs.dims[dn.lhs_contracting_dims[0]]
    tile = np.atleast_2d(np.asarray(tile, dtype=np.int64))
    if tile.shape[1] < 2 or k <= 0:
        return None
    rows = len(tile)
    tb = np.prod(tile[:, :-2], axis=1) if tile.shape[1] > 2 else np.ones(rows, np.int64)
    tm, tn = tile[:, -2], tile[:, -1]
    tk = np.maximum(np.broadcast_to(np.asarray(block_k, dtype=np.int64), (rows,)), 1)
    lb, rb, ob = bits(lhs.element_type), bits(rhs.element_type), bits(dot.shape.element_type)

    # compute, with tile and wave quantisation
    blocks = (-(-b // tb)) * (-(-m // tm)) * (-(-n // tn))
    waves = -(-blocks // dev.core_count)
    flops = 2 * tb * tm * tn * k * waves * dev.core_count
    rate = np.full(rows, float(peak_matrix_flops_per_ns(dev, lhs.element_type)))
    derate = DOT_SMALL_M_DERATE.get(generation(dev) or "")
    if derate is not None:
        rate = np.where(tm < derate[0], rate * derate[1], rate)
    compute = nanoseconds(np.float64(f32(flops)) / rate)

    # HBM: the operands read and the output written once
    read_bytes = -(-(b * m * k * lb) // 8) + -(-(b * k * n * rb) // 8)
    write_bytes = -(-(b * m * n * ob) // 8)
    bw = np.float32(effective_hbm_bandwidth(read_bytes + write_bytes, dev))
    hbm_read = seconds(np.float32(np.float32(read_bytes) / bw))
    hbm_write = seconds(np.float32(np.float32(write_bytes) / bw))

    # the main loop, one hardware wave at a time
    stages = np.broadcast_to(np.asarray(num_stages, dtype=np.int64), (rows,))
    smem = (tm * tk * lb // 8 + tn * tk * rb // 8) * stages
    iters = -(-k // tk)
    launch = _launch_waves(blocks, smem, np.broadcast_to(num_warps, (rows,)), dev)
    wave = np.maximum(launch, 1)
    loop = _pipelined(stages, iters, compute // wave, hbm_read // wave, hbm_write // wave)
    loop = np.where(blocks > 0, loop * launch, 0)

    # L2: every tile loads its rows of both operands over the whole contraction
    l2_bytes = (-(-(tb * tm * k * lb) // 8) + -(-(tb * tn * k * rb) // 8)) * blocks
    overhead = DOT_K_LOOP_OVERHEAD_S["tma" if tma else "legacy"]
    l2 = seconds(l2_bytes.astype(np.float64) / l2_bandwidth(dev) + iters * overhead)

    exec_ = np.maximum(loop, l2)
    return DotEstimate(compute, exec_, flops, loop, l2, np.broadcast_to(hbm_read, (rows,)),
                       np.broadcast_to(hbm_write, (rows,)), launch, smem)


def _transposed_downstream(dot: Any, users: Any) -> bool:
    """Whether a transpose uses the dot's result, directly or through other users (XLA's
    model does not support it)."""
    seen = {id(dot)}
    stack = [dot]
    while stack:
        cur = stack.pop()
        for u in users.get(id(cur), ()):
            if id(u) in seen:
                continue
            if u.opcode == "transpose":
                return True
            seen.add(id(u))
            stack.append(u)
    return False
