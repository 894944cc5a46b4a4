"""XLA's time formulas (``gpu_performance_model_base.cc``), over numpy arrays, with XLA's
arithmetic: ``float`` where XLA computes in single precision, integer truncation where it
stores an ``int64_t``, and times as ``absl::Duration``, whole quarter nanoseconds
(:func:`seconds`, :func:`nanoseconds`), so that two tilings XLA rates equal are equal here.

* :func:`read_time`: ``ReadTimeWithDRAMHeuristic`` -- the first ``net`` bytes from DRAM at
  the bandwidth times the coalescing rate, the re-reads (``total - net``) at the bandwidth
  times 2.5 when ``net`` is under the L2 size (times 8 more under L1 per SM times SMs),
  else at the DRAM rate; both capped by ``AdjustBandwidth`` (blocks x clock x
  transactions per clock).
* :func:`compute_time`: ``ComputeTime`` -- flops over ``2 x clock x min(blocks, SMs) x
  min(threads per block, FPUs per SM)`` (the last product truncated to an integer, as
  ``CalculateEffectiveFlopsPerNs`` returns one).
* :func:`combine`: ``CombineComputeAndMemoryAccessTime`` -- ``c + m - 0.95 min(c, m)``.
* :func:`write_time`: bytes over the bandwidth times the root tile's coalescing rate (the
  product truncated to an integer, as XLA stores it).

Times are int64 arrays of ticks (quarter nanoseconds); :data:`TICKS_PER_US` converts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symidx.cost.constants import L1_CACHE_SPEEDUP, L2_CACHE_SPEEDUP, MEMORY_COMPUTE_PARALLELISM
from symidx.cost.devices import Device

__all__ = ["TICKS_PER_US", "seconds", "nanoseconds", "scale", "read_time", "write_time",
           "compute_time", "combine", "effective_flops_per_ns", "f32"]

TICKS_PER_SECOND = 4_000_000_000
TICKS_PER_US = 4000.0


def f32(x: Any) -> Any:
    return np.asarray(x, dtype=np.float64).astype(np.float32)


def seconds(x: Any) -> Any:
    """``absl::Seconds(x)``: whole seconds, and the fraction rounded to a tick."""
    x = np.asarray(x, dtype=np.float64)
    whole = np.floor(x)
    frac = x - whole
    with np.errstate(invalid="ignore", over="ignore"):
        return (whole * TICKS_PER_SECOND + np.round(frac * TICKS_PER_SECOND)).astype(np.int64)


def nanoseconds(x: Any) -> Any:
    """``absl::Nanoseconds(x)`` for a floating-point ``x``."""
    return seconds(np.asarray(x, dtype=np.float64) * 1e-9)


def scale(ticks: Any, r: float) -> Any:
    """``duration * r`` (absl rounds the product to a tick)."""
    return seconds(np.asarray(ticks, dtype=np.float64) / TICKS_PER_SECOND * r)


def _adjust(dev: Device, bandwidth: Any, num_blocks: Any) -> Any:
    per_block = f32(f32(dev.clock_rate_ghz) * np.float32(1.0e9)) * np.float32(
        dev.memory_transactions_per_clock)
    max_bw = f32(np.asarray(num_blocks, dtype=np.float64) * np.float64(per_block))
    return np.minimum(f32(bandwidth), max_bw)


def read_time(dev: Device, num_blocks: Any, net: Any, total: Any, rate: Any) -> Any:
    """``ReadTimeWithDRAMHeuristic`` in ticks, elementwise over arrays."""
    net = np.asarray(net, dtype=np.int64)
    total = np.asarray(total, dtype=np.int64)
    rate = np.asarray(rate, dtype=np.float64)
    dram = f32(dev.memory_bandwidth * rate)
    rest = np.full(net.shape, np.float32(dev.memory_bandwidth), dtype=np.float32)
    in_l2 = net < dev.l2_cache_size
    in_l1 = net < dev.l1_cache_size_per_sm * dev.core_count
    rest = np.where(in_l2, rest * np.float32(L2_CACHE_SPEEDUP), f32(rest * rate))
    rest = np.where(in_l2 & in_l1, rest * np.float32(L1_CACHE_SPEEDUP), rest)
    dram = _adjust(dev, dram, num_blocks)
    rest = _adjust(dev, rest, num_blocks)
    n_dram = np.minimum(net, total)
    n_cache = total - n_dram
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = f32(f32(n_dram) / dram)
        t2 = f32(f32(n_cache) / rest)
    return seconds(t1) + seconds(t2)


def write_time(dev: Device, nbytes: Any, rate: Any) -> Any:
    """``bytes / (rate x bandwidth)`` in ticks, the effective bandwidth an integer."""
    bw = np.floor(np.asarray(rate, dtype=np.float64) * dev.memory_bandwidth)
    with np.errstate(divide="ignore"):
        return seconds(np.asarray(nbytes, dtype=np.float64) / bw)


def effective_flops_per_ns(dev: Device, num_blocks: Any, threads_per_block: Any) -> Any:
    """``CalculateEffectiveFlopsPerNs`` (an integer)."""
    fpus = np.minimum(np.asarray(threads_per_block, dtype=np.int64), dev.fpus_per_core)
    cores = np.minimum(np.asarray(num_blocks, dtype=np.int64), dev.core_count)
    per_fpu = np.float64(f32(dev.clock_rate_ghz)) * 2
    return np.trunc(per_fpu * (cores * fpus)).astype(np.int64)


def compute_time(dev: Device, flops: Any, num_blocks: Any, threads_per_block: Any) -> Any:
    """``ComputeTime`` in ticks."""
    rate = effective_flops_per_ns(dev, num_blocks, threads_per_block)
    with np.errstate(divide="ignore", invalid="ignore"):
        ns = f32(f32(np.asarray(flops, dtype=np.float64)) / f32(rate))
    return nanoseconds(ns)


def combine(compute: Any, memory: Any) -> Any:
    """``CombineComputeAndMemoryAccessTime`` in ticks."""
    return compute + memory - scale(np.minimum(compute, memory), MEMORY_COMPUTE_PARALLELISM)
