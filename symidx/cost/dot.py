"""XLA's dot fusion cost model (``gpu_dot_fusion_cost_model.cc``): the time of a dot tiled
``[..b.., m, n]`` with a contracting tile ``k`` (the tiled cost model times a fusion's dots
with it).

* **Compute**: ``2 b m n K`` flops per tile (``K`` the whole contraction), times the tiles
  rounded up to whole waves of SMs, at the device's peak matrix rate
  (``CalculatePeakMatrixOpsPerNs``: its matrix units, or its FPUs when it has none), derated
  for small ``m`` (Blackwell below 128: 0.5; Hopper below 64: 0.63; Ampere below 16: 0.5).
* **HBM**: the whole operands and output once, at a bandwidth measured on H100 for the
  transfer size (interpolated in a table).
* **L2**: each tile loads ``(m + n) K`` elements, at 6.65 TB/s, plus a fixed overhead per
  iteration of the loop over ``K`` (400 ns, 150 ns with TMA).

The dot's time is the largest of the three. Supported: one contracting dimension and at
most one non-contracting dimension per side (XLA's ``IsSupported``); otherwise
:func:`dot_estimate` returns None and the tiled model counts the dot's flops as any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any

from symidx.cost.constants import DOT_HBM_BANDWIDTH_GBPS, DOT_K_LOOP_OVERHEAD_S, DOT_L2_BANDWIDTH
from symidx.cost.devices import Device
from symidx.cost.timing import f32, nanoseconds, seconds

__all__ = ["DotEstimate", "dot_estimate", "peak_matrix_flops_per_ns", "bits"]

_BITS = {"pred": 8, "s4": 4, "u4": 4, "s8": 8, "u8": 8, "f8e4m3fn": 8, "f8e5m2": 8,
         "f8e4m3": 8, "f8e5m2fnuz": 8, "f8e4m3fnuz": 8, "f8e4m3b11fnuz": 8, "f8e3m4": 8,
         "bf16": 16, "f16": 16, "s16": 16, "u16": 16, "f32": 32, "s32": 32, "u32": 32,
         "f64": 64, "s64": 64, "u64": 64, "c64": 64, "c128": 128, "f4e2m1fn": 4}


def bits(element_type: str) -> int:
    return _BITS.get(element_type, 32)


@dataclass(frozen=True)
class DotEstimate:
    compute_ticks: Any
    exec_ticks: Any
    flops: Any


def peak_matrix_flops_per_ns(dev: Device, element_type: str) -> int:
    """``CalculatePeakMatrixOpsPerNs``: the device's matrix-unit rate for the type, or its
    FPU rate (``CalculateEffectiveFlopsPerNs`` on every SM) when it has no matrix unit for
    it."""
    import numpy as np

    from symidx.cost.timing import effective_flops_per_ns

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


def _hbm_bandwidth(dma: int) -> float:
    table = DOT_HBM_BANDWIDTH_GBPS
    gib = float(1 << 30)
    if dma <= table[0][0]:
        return float(f32(f32(table[0][1]) * gib))
    if dma >= table[-1][0]:
        return float(f32(f32(table[-1][1]) * gib))
    for (x1, y1), (x2, y2) in zip(table, table[1:]):
        if x1 < dma <= x2:
            a, b = f32(y1), f32(y2)
            t = f32(f32(dma - x1) / f32(x2 - x1))
            return float(f32(f32(a + t * f32(b - a)) * gib))
    raise AssertionError("unreachable")


def dot_estimate(dot: Any, tile: Any, block_k: Any, dev: Device, tma: bool = False
                 ) -> DotEstimate | None:
    """The dot model's compute and execution time (ticks) for ``dot`` tiled ``tile`` (the
    dot's output tile; arrays over tilings) with contracting tile ``block_k``; None when
    XLA's dot model does not support the dot."""
    import numpy as np

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
    if _transposed_downstream(dot):
        return None
    b = prod(lhs.dims[d] for d in dn.lhs_batch_dims)
    m, n = lhs.dims[lnc[0]], rhs.dims[rnc[0]]
    k = lhs.dims[dn.lhs_contracting_dims[0]]
    tile = np.atleast_2d(np.asarray(tile, dtype=np.int64))
    if tile.shape[1] < 2:
        return None
    tb = np.prod(tile[:, :-2], axis=1) if tile.shape[1] > 2 else np.ones(len(tile), np.int64)
    tm, tn = tile[:, -2], tile[:, -1]
    tk = np.asarray(block_k, dtype=np.int64)
    blocks = (-(-b // tb)) * (-(-m // tm)) * (-(-n // tn))
    waves = -(-blocks // dev.core_count)
    flops = 2 * tb * tm * tn * k * waves * dev.core_count
    peak = peak_matrix_flops_per_ns(dev, lhs.element_type)
    derate = np.ones(len(tile))
    cc = dev.compute_capability
    if dev.platform == "cuda":
        if cc[0] == 10:
            derate = np.where(tm < 128, 0.5, 1.0)
        elif cc[0] == 9:
            derate = np.where(tm < 64, 0.63, 1.0)
        elif cc[0] == 8:
            derate = np.where(tm < 16, 0.5, 1.0)
    rate = peak * derate
    compute = nanoseconds(f32(f32(flops) / rate))
    lb, rb, ob = bits(lhs.element_type), bits(rhs.element_type), bits(dot.shape.element_type)
    lhs_bytes = -(-(b * m * k * lb) // 8)
    rhs_bytes = -(-(b * k * n * rb) // 8)
    out_bytes = -(-(b * m * n * ob) // 8)
    bw = _hbm_bandwidth(lhs_bytes + rhs_bytes + out_bytes)
    hbm = seconds(f32(f32(lhs_bytes + rhs_bytes) / np.float32(bw))) + \
        seconds(f32(f32(out_bytes) / np.float32(bw)))
    l2_bytes = ((-(-(tb * tm * k * lb) // 8)) + (-(-(tb * tn * k * rb) // 8))) * blocks
    iters = -(-k // tk)
    overhead = DOT_K_LOOP_OVERHEAD_S["tma" if tma else "legacy"]
    l2 = seconds(np.float64(f32(l2_bytes)) / DOT_L2_BANDWIDTH + iters * overhead)
    exec_ = np.maximum(np.maximum(compute, np.broadcast_to(hbm, compute.shape)), l2)
    return DotEstimate(compute, exec_, flops)


def _transposed_downstream(dot: Any) -> bool:
    """XLA's model does not support a dot followed (through its users) by a transpose;
    symidx's instructions do not record users, so a fusion's computation is searched."""
    return False
