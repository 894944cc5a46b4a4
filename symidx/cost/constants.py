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
    "FALLBACK_THREADS_PER_BLOCK", "DOT_L2_BANDWIDTH", "DOT_K_LOOP_OVERHEAD_S",
    "DOT_HBM_BANDWIDTH_GBPS", "SOURCES",
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
#: The dot fusion cost model's L2 bandwidth (bytes/s; measured on H100, used for every
#: device at 183fa00).
DOT_L2_BANDWIDTH = 6.65e12
#: Its per-iteration overhead of the loop over the contracting dimension, in seconds,
#: without and with TMA.
DOT_K_LOOP_OVERHEAD_S = {"legacy": 400e-9, "tma": 150e-9}
#: Its measured HBM bandwidth (GB/s, 2^30 bytes) by transfer size (bytes), on H100.
DOT_HBM_BANDWIDTH_GBPS: tuple[tuple[int, float], ...] = (
    (8192, 1.42), (16384, 3.03), (32768, 6.02), (65536, 11.77), (131072, 23.68),
    (262144, 47.35), (524288, 92.56), (1048576, 179.06), (2097152, 346.75),
    (4194304, 639.38), (8388608, 1069.98), (16777216, 1583.95), (33554432, 1974.72),
    (67108864, 2343.19), (134217728, 2632.96), (268435456, 2766.69),
    (536870912, 2968.89), (1073741824, 3126.0))

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
    "DOT_L2_BANDWIDTH": f"{DOT} (CalculateL2Time)",
    "DOT_K_LOOP_OVERHEAD_S": f"{DOT} (kLegacyLoopOverheadSeconds, kTmaLoopOverheadSeconds)",
    "DOT_HBM_BANDWIDTH_GBPS": f"{DOT} (GetEffectiveHbmBandwidth)",
}
