"""The constants of XLA's GPU cost models, in one place, each with where XLA defines it.

The values are those of the XLA version symidx's cost conformance data was taken from
(ROCm/xla 183fa00); where a later XLA changed one, the note says so. Device constants
(bandwidths, cores, caches) are data: :mod:`symidx.cost.devices`.
"""

from __future__ import annotations

__all__ = [
    "KERNEL_LAUNCH_OVERHEAD_US", "NCCL_KERNEL_LAUNCH_OVERHEAD_US", "L2_CACHE_SPEEDUP",
    "L1_CACHE_SPEEDUP", "MEMORY_COMPUTE_PARALLELISM", "FRACTION_OF_REGISTERS_FOR_TILES",
    "NUM_WARPS_THRESHOLDS", "MAX_TENSOR_NUM_ELEMENTS", "MAX_MMA_DIM_SIZE",
    "CONCATENATE_FLOPS", "CONCATENATE_MISALIGNED_FLOPS", "DEFAULT_FLOPS_PER_ELEMENT",
    "FALLBACK_THREADS_PER_BLOCK", "DOT_H100_L2_BANDWIDTH", "DOT_H100_MEMORY_BANDWIDTH",
    "DOT_K_LOOP_OVERHEAD_S", "DOT_LOOP_LATENCY_TAX_NS", "DOT_HBM_BANDWIDTH_FRACTION",
    "DOT_SMALL_M_DERATE", "SOURCES",
]

BASE = "xla/service/gpu/model/gpu_performance_model_base.h"
INDEXING = "xla/service/gpu/model/gpu_indexing_performance_model.cc"
EMITTER = "xla/service/gpu/model/triton_emitter_constraints.cc"
HLO_COST = "xla/service/gpu/model/gpu_hlo_cost_analysis.cc"
DOT = "xla/service/gpu/model/gpu_dot_fusion_cost_model.cc"

#: kKernelLaunchOverhead: the cost of launching one kernel (1 µs at 183fa00; 2.5 µs later).
KERNEL_LAUNCH_OVERHEAD_US = 1.0
#: kNcclKernelLaunchOverhead.
NCCL_KERNEL_LAUNCH_OVERHEAD_US = 5.0
#: kL2CacheSpeedup: a re-read of an operand smaller than L2 runs this much faster than HBM.
L2_CACHE_SPEEDUP = 2.5
#: kL1CacheSpeedup: and this much faster again when it fits in L1 on every SM.
L1_CACHE_SPEEDUP = 8.0
#: kMemoryComputeParallelism: the share of min(compute, memory) that overlaps.
MEMORY_COMPUTE_PARALLELISM = 0.95
#: kFractionOfRegistersAvailableToStoreTile: a padded tile above this share of the
#: registers of a block spills (the tiled model then rates the tiling infinite).
FRACTION_OF_REGISTERS_FOR_TILES = 0.4
#: GetNumWarps: (largest padded live tile at most, warps); the last row has no bound.
NUM_WARPS_THRESHOLDS: tuple[tuple[int | None, int], ...] = (
    (256, 1), (1024, 2), (4096, 4), (None, 8))
#: kMaxTensorNumElements: Triton's TRITON_MAX_TENSOR_NUMEL, the largest padded tile.
MAX_TENSOR_NUM_ELEMENTS = 1_048_576
#: kMaxMMADimSize: the largest (padded) tile of a dot operand along any dimension.
MAX_MMA_DIM_SIZE = 256
#: HandleConcatenate: flops per element of a concatenate, and when the first operand's
#: size along a concatenated dimension other than the first is not a multiple of 32.
CONCATENATE_FLOPS = 6
CONCATENATE_MISALIGNED_FLOPS = 400
#: kDefaultFlopsPerElement: an elementwise op the device's op profile does not list.
DEFAULT_FLOPS_PER_ELEMENT = 3
#: EstimateFusionLaunchDimensions' fallback: 128 threads per block, one per element.
FALLBACK_THREADS_PER_BLOCK = 128
#: The dot fusion cost model's L2 bandwidth on H100 SXM (bytes/s), and H100 SXM's peak memory
#: bandwidth (bytes/s): a device's L2 bandwidth is the first scaled by its memory bandwidth
#: over the second.
DOT_H100_L2_BANDWIDTH = 6.65e12
DOT_H100_MEMORY_BANDWIDTH = 3352.32e9
#: Its per-iteration overhead of the loop over the contracting dimension in the L2 time, in
#: seconds, without and with TMA.
DOT_K_LOOP_OVERHEAD_S = {"legacy": 400e-9, "tma": 150e-9}
#: kLoopLatencyTax: the fixed cost of one iteration of the memory loop (1300 ns).
DOT_LOOP_LATENCY_TAX_NS = 1300
#: The share of the peak memory bandwidth a transfer of so many bytes attains, measured per
#: GPU generation (interpolated linearly between rows; clamped at both ends).
DOT_HBM_BANDWIDTH_FRACTION: dict[str, tuple[tuple[int, float], ...]] = {
    "ampere": (
        (8192, 0.00043418), (16384, 0.00092645), (32768, 0.00184066), (65536, 0.00359877),
        (131072, 0.00724035), (262144, 0.01447766), (524288, 0.02830100),
        (1048576, 0.05448203), (2097152, 0.10550455), (4194304, 0.19454216),
        (8388608, 0.32555948), (16777216, 0.48194352), (33554432, 0.60084187),
        (67108864, 0.71295513), (134217728, 0.79326842), (268435456, 0.83355906),
        (536870912, 0.89447866), (1073741824, 0.93435348), (2147483648, 0.94308240),
        (4294967296, 0.94739100), (8589934592, 0.94989600)),
    "hopper": (
        (8192, 0.00042359), (16384, 0.00090385), (32768, 0.00179577), (65536, 0.00351100),
        (131072, 0.00706376), (262144, 0.01412455), (524288, 0.02761073),
        (1048576, 0.05341375), (2097152, 0.10343583), (4194304, 0.19072761),
        (8388608, 0.31917596), (16777216, 0.47249365), (33554432, 0.58906066),
        (67108864, 0.69897562), (134217728, 0.78541428), (268435456, 0.82530600),
        (536870912, 0.88562244), (1073741824, 0.93248850), (2147483648, 0.94120000),
        (4294967296, 0.94550000), (8589934592, 0.94800000)),
    "blackwell": (
        (8192, 0.00041057), (16384, 0.00080983), (32768, 0.00159736), (65536, 0.00315074),
        (131072, 0.00621472), (262144, 0.01009557), (524288, 0.01892165),
        (1048576, 0.03517364), (2097152, 0.06441370), (4194304, 0.11489171),
        (8388608, 0.19611710), (16777216, 0.31310696), (33554432, 0.45727190),
        (67108864, 0.60433204), (134217728, 0.72808478), (268435456, 0.81644540),
        (536870912, 0.87240125), (1073741824, 0.90518887), (2147483648, 0.92353306),
        (4294967296, 0.93353170), (8589934592, 0.93890402)),
}
#: The matrix-rate derate for a small M tile, per generation: (M below, factor).
DOT_SMALL_M_DERATE: dict[str, tuple[int, float]] = {
    "blackwell": (128, 0.5), "hopper": (64, 0.63), "ampere": (32, 0.5)}

#: Where each constant comes from.
SOURCES: dict[str, str] = {
    "KERNEL_LAUNCH_OVERHEAD_US": f"{BASE} (kKernelLaunchOverhead)",
    "NCCL_KERNEL_LAUNCH_OVERHEAD_US": f"{BASE} (kNcclKernelLaunchOverhead)",
    "L2_CACHE_SPEEDUP": f"{BASE} (kL2CacheSpeedup)",
    "L1_CACHE_SPEEDUP": f"{BASE} (kL1CacheSpeedup)",
    "MEMORY_COMPUTE_PARALLELISM": f"{BASE} (kMemoryComputeParallelism)",
    "FRACTION_OF_REGISTERS_FOR_TILES": f"{INDEXING} (kFractionOfRegistersAvailableToStoreTile)",
    "NUM_WARPS_THRESHOLDS": f"{INDEXING} (GetNumWarps)",
    "MAX_TENSOR_NUM_ELEMENTS": f"{EMITTER} (kMaxTensorNumElements)",
    "MAX_MMA_DIM_SIZE": f"{EMITTER} (kMaxMMADimSize)",
    "CONCATENATE_FLOPS": f"{HLO_COST} (HandleConcatenate), {INDEXING} (FlopsPerElement)",
    "CONCATENATE_MISALIGNED_FLOPS": f"{HLO_COST} (HandleConcatenate)",
    "DEFAULT_FLOPS_PER_ELEMENT": f"{HLO_COST} (kDefaultFlopsPerElement)",
    "FALLBACK_THREADS_PER_BLOCK": "xla/service/gpu/model/gpu_performance_model_base.cc "
                                  "(EstimateFusionLaunchDimensions)",
    "DOT_H100_L2_BANDWIDTH": f"{DOT} (GetMemoryBandwidthSpec)",
    "DOT_H100_MEMORY_BANDWIDTH": f"{DOT} (GetMemoryBandwidthSpec)",
    "DOT_K_LOOP_OVERHEAD_S": f"{DOT} (kLegacyLoopOverheadSeconds, kTmaLoopOverheadSeconds)",
    "DOT_LOOP_LATENCY_TAX_NS": "xla/service/gpu/model/gpu_dot_fusion_cost_model.h "
                               "(kLoopLatencyTax)",
    "DOT_HBM_BANDWIDTH_FRACTION": f"{DOT} (kAmpere/kHopper/kBlackwellScaledHbmBandwidthTable)",
    "DOT_SMALL_M_DERATE": f"{DOT} (GetEffectiveFlopsPerNsForTileSize)",
}
