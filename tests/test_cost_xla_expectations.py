"""Every expectation of XLA's cost-model tests at ROCm/xla 183fa00 that ``symidx tile``'s
cost contract can express (``gpu_indexing_performance_model_test.cc``,
``triton_emitter_constraints_test.cc``, ``gpu_performance_model_test.cc``), run through the
command line as a user would.

The expected values are XLA's, as its tests state them (a number, a tolerance, a relation
between two runs); where a test compares with one of XLA's internal functions (the dot
model's compute time, its effective HBM bandwidth, ``GpuHloCostAnalysis``'s flop count),
the value is worked out here by hand from XLA's definition of that function and the
device's constants. The modules are in ``tests/data/cost/xla`` (see its SOURCES.md).

Not expressible, so not here: ``EstimateRunTimeForFusion_Infinite{Producer,Consumer}``
(they plant an infinite time in XLA's cache).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from symidx.cli import main

DATA = Path(__file__).parent / "data" / "cost" / "xla"
TILERS = ("legacy", "experimental")          # XLA runs its TEST_Ps under both tilers

# TestGpuDeviceInfo::RTXA6000DeviceInfo
BW = 768_096_000_000
SMS, FPUS, CLOCK_GHZ = 84, 128, 1.41


def run(capsys: pytest.CaptureFixture[str], hlo: str, fusion: str, *argv: str,
        tiler: str | None = None) -> dict[str, Any]:
    args = ["tile", str(DATA / f"{hlo}.hlo"), "--fusion", fusion, *argv,
            "--device", "rtx-a6000", "--format", "json"]
    if tiler:
        args += ["--tiler", tiler]
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def near(x: float | None, want: float, tol: float) -> bool:
    return x is not None and abs(x - want) <= tol


# --------------------------------------------------------------- the tiled model
@pytest.mark.parametrize("tiler", TILERS)
def test_triton_gemm_custom_block_level_parameters(capsys: Any, tiler: str) -> None:
    """TritonGemmWithCustomBlockLevelParameters: the config's tiling (64x64, 4 warps,
    3 stages) and a custom one (16x16, 1 warp, 1 stage) cost differently."""
    r0 = run(capsys, "TritonGemmWithCustomBlockLevelParameters", "_", "--cost", tiler=tiler)
    r1 = run(capsys, "TritonGemmWithCustomBlockLevelParameters", "_", "--cost", "--sizes",
             "16,16", "--num-warps", "1", "--num-stages", "1", tiler=tiler)
    assert r0["exec_time_us"] is not None and r1["exec_time_us"] is not None
    assert r0["exec_time_us"] != r1["exec_time_us"]


def _dot_compute_ns(m: int, n: int, k: int, tm: int, tn: int) -> float:
    """The dot model's compute time of an m x k by k x n product on output tiles tm x tn
    (CalculateComputeTimeWithTileAndWaveQuantization): whole waves of SMs, the A6000's FPU
    rate (it has no matrix unit description), no derate for tm >= 32."""
    blocks = math.ceil(m / tm) * math.ceil(n / tn)
    waves = math.ceil(blocks / SMS)
    flops = 2 * tm * tn * k * waves * SMS
    peak = int(CLOCK_GHZ * 2 * SMS * FPUS)           # 30320 flops per ns
    return flops / peak


@pytest.mark.parametrize("tiler", TILERS)
def test_triton_gemm_compute_bound_bf16(capsys: Any, tiler: str) -> None:
    """TritonGemmComputeBoundBf16: within 10% above the 128x128 compute time plus the loop
    latency tax (1300 ns)."""
    r = run(capsys, "TritonGemmComputeBoundBf16", "_", "--cost", tiler=tiler)
    expected_us = (_dot_compute_ns(8192, 8192, 8192, 128, 128) + 1300) / 1000
    assert expected_us <= r["exec_time_us"] <= 1.1 * expected_us


@pytest.mark.parametrize("tiler", TILERS)
def test_triton_gemm_compute_bound_bf16_one_stage(capsys: Any, tiler: str) -> None:
    """TritonGemmComputeBoundBf16NumStages1 expects more than 1.2 x the 128x128 compute
    time. Its 256 x 512 root tile needs more than 40% of a block's registers, so XLA rates
    it infinite (register spill), which is more than any bound."""
    r = run(capsys, "TritonGemmComputeBoundBf16NumStages1", "_", "--cost", tiler=tiler)
    assert 256 * 512 > 0.4 * 65536
    assert r["is_infinite"] is True and r["exec_time_us"] is None


@pytest.mark.parametrize("tiler", TILERS)
def test_triton_gemm_memory_bound_bf16(capsys: Any, tiler: str) -> None:
    """TritonGemmMemoryBoundBf16: within 10% above the HBM time of both operands and the
    output at the effective bandwidth (Ampere table: 2 x (4096 + 8) x 4096 bytes lies
    between the 32 MiB and 64 MiB rows) plus the loop latency tax."""
    r = run(capsys, "TritonGemmMemoryBoundBf16", "_", "--cost", tiler=tiler)
    total = 2 * (4096 + 4 * 2) * 4096
    lo, hi, a, b = 33554432, 67108864, 0.60084187, 0.71295513
    bw = (a + (total - lo) / (hi - lo) * (b - a)) * BW
    expected_us = total / bw * 1e6 + 1.3
    assert expected_us <= r["exec_time_us"] <= 1.1 * expected_us


@pytest.mark.parametrize("tiler", TILERS)
def test_triton_softmax_from_config(capsys: Any, tiler: str) -> None:
    """TritonSoftmaxFusionInstructionIsSupported: param_0 read once, param_1 512 times."""
    r = run(capsys, "TritonSoftmaxFusionInstructionIsSupported", "triton_softmax", "--cost",
            tiler=tiler)
    assert r["bytes_read"] == 512 * 911 * 4 + 512 * 911 * 4
    assert r["bytes_written"] == 512 * 911 * 4
    assert near(r["exec_time_us"], 5, 1)


@pytest.mark.parametrize("tiler", TILERS)
def test_more_tiles_than_int32(capsys: Any, tiler: str) -> None:
    """NumberOfTilesLargerThanInt32Max_IsSupported: 2932 +- 2 s read and exec, 14 +- 1 s
    compute."""
    r = run(capsys, "NumberOfTilesLargerThanInt32Max_IsSupported", "fusion", "--cost",
            "--sizes", "1,1", "--num-warps", "1", tiler=tiler)
    assert near(r["read_time_us"], 2932e6, 2e6)
    assert near(r["compute_time_us"], 14e6, 1e6)
    assert near(r["exec_time_us"], 2932e6, 2e6)


@pytest.mark.parametrize("tiler", TILERS)
def test_concatenate(capsys: Any, tiler: str) -> None:
    r = run(capsys, "Concatenate", "fusion", "--cost", "--sizes", "1,128", "--num-warps",
            "3", tiler=tiler)
    assert r["flops"] == 6 * 128 * 96 + 86 * 128 * (96 * 32 // 96)
    assert r["bytes_read"] == 4 * 128 * (96 * 64 // 96) + 4 * 128 * (96 * 32 // 96)


@pytest.mark.parametrize("tiler", TILERS)
def test_dot_with_reduction_loop(capsys: Any, tiler: str) -> None:
    r = run(capsys, "DotWithReductionLoop", "fusion", "--cost", "--sizes", "32,32",
            "--num-warps", "32", tiler=tiler)
    blocks, k_steps = 8, math.ceil(257 / 64)
    assert r["flops"] == 514 * 1024 * blocks + 86 * 2048 * (blocks * k_steps)
    assert r["bytes_read"] == 2 * 4 * (64 * 32) * (blocks * k_steps)


@pytest.mark.parametrize("tiler", TILERS)
def test_softmax_register_spill(capsys: Any, tiler: str) -> None:
    r = run(capsys, "Softmax_RegisterSpill_ReturnsInfinite", "triton_softmax", "--cost",
            "--sizes", "1,16000", "--num-warps", "1", tiler=tiler)
    assert near(r["exec_time_us"], 3, 1)
    r = run(capsys, "Softmax_RegisterSpill_ReturnsInfinite", "triton_softmax", "--cost",
            "--sizes", "2,16000", "--num-warps", "1", tiler=tiler)
    assert r["is_infinite"] is True


@pytest.mark.parametrize("tiler", TILERS)
def test_broadcast_reduce_register_spill(capsys: Any, tiler: str) -> None:
    name, f = "BroadcastReduce_RegisterSpill_ReturnsInfinite", "input_reduce_fusion"
    r = run(capsys, name, f, "--cost", "--sizes", "4,4", "--num-warps", "8", tiler=tiler)
    assert near(r["exec_time_us"], 147, 1)
    for sizes, warps in (("8,4", "8"), ("4,8", "4")):
        r = run(capsys, name, f, "--cost", "--sizes", sizes, "--num-warps", warps,
                tiler=tiler)
        assert r["is_infinite"] is True


@pytest.mark.parametrize("tiler", TILERS)
def test_whole_dimension_reads_unpadded(capsys: Any, tiler: str) -> None:
    r = run(capsys, "UsesHloDimensionSizeWhenTileCoversFullDimensionForMemoryAccessTime",
            "triton_softmax", "--cost", "--sizes", "65,65", "--num-warps", "2", tiler=tiler)
    assert r["bytes_read"] == 2 * 65 * 65 * 4
    assert r["flops"] == 128 * 128 * 3


@pytest.mark.parametrize("tiler", TILERS)
def test_uncoalesced_reads(capsys: Any, tiler: str) -> None:
    name, f = "UncoalescedReadsAreScaledBasedOnWasteTransactionPercentage", "triton_softmax"
    good = run(capsys, name, f, "--cost", "--sizes", "2,128", "--num-warps", "2", tiler=tiler)
    bad = run(capsys, name, f, "--cost", "--sizes", "128,2", "--num-warps", "2", tiler=tiler)
    assert good["bytes_read"] == bad["bytes_read"] == 2 * 2048 * 512 * 4
    assert abs(bad["read_time_us"] / good["read_time_us"] - 8) <= 0.001


@pytest.mark.parametrize("tiler", TILERS)
def test_uncoalesced_writes(capsys: Any, tiler: str) -> None:
    name = "UncoalescedWritesAreScaledBasedOnWasteTransactionPercentage"
    good = run(capsys, name, "fusion", "--cost", "--sizes", "16,128", "--num-warps", "1",
               tiler=tiler)
    bad = run(capsys, name, "fusion", "--cost", "--sizes", "128,16", "--num-warps", "1",
              tiler=tiler)
    assert good["bytes_read"] == bad["bytes_read"] == 2 * 2048 * 512
    assert abs(bad["write_time_us"] / good["write_time_us"] - 4) <= 0.001


@pytest.mark.parametrize("tiler", TILERS)
@pytest.mark.parametrize("hlo, sizes", [
    ("GetLaunchDimensionsForTiledFusion_IsSupported", "9,9,9"),   # padded 16^3 = 4096
    ("NumberOfWarpsDependsOnLargestLiveTileSize", "1"),           # the [1, 4096] operand
])
def test_estimated_warps(capsys: Any, tiler: str, hlo: str, sizes: str) -> None:
    r = run(capsys, hlo, "fusion", "--cost", "--sizes", sizes, tiler=tiler)
    assert r["estimated_num_warps"] == 4


# --------------------------------------------------------------- the tile search
@pytest.mark.parametrize("tiler, tile", [("legacy", [4, 911]), ("experimental", [4, 1024])])
def test_best_softmax(capsys: Any, tiler: str, tile: list[int]) -> None:
    """EstimateBestTiling_TritonSoftmax_IsSupported: 128 blocks of [4, 911] (padded under
    the experimental tiler), 4 warps, param_1 read 128 times."""
    b = run(capsys, "EstimateBestTiling_TritonSoftmax_IsSupported", "triton_softmax",
            "--best", tiler=tiler)["best"]
    assert b["output_tile_sizes"] == [tile] and b["num_warps"] == 4
    assert b["bytes_read"] == 512 * 911 * 4 + 128 * 911 * 4
    assert b["bytes_written"] == 512 * 911 * 4
    assert near(b["exec_time_us"], 5, 1)


def test_best_combined_fusion(capsys: Any) -> None:
    b = run(capsys, "EstimateBestTiling_CombinedFusion", "fusion", "--best")["best"]
    assert b["output_tile_sizes"] == [[1, 1, 4096], [1, 1, 4096]]


def test_best_multi_output_fusion(capsys: Any) -> None:
    b = run(capsys, "EstimateBestTiling_MultioutputFusion", "fusion", "--best")["best"]
    assert b["output_tile_sizes"] == [[1, 4], [16]] and b["num_warps"] == 1


# --------------------------------------------------------------- flops per element
@pytest.mark.parametrize("hlo, instr, elements, total", [
    # (256 - 1) x 3: both reduced dimensions padded to 16
    ("PaddedReduceDimensions", "reduce", 1, 765),
    # GpuHloCostAnalysis: (input - output elements) x the reducer's flops (add/f32: 3)
    ("MatchesGpuHloCostAnalysis_Reduce", "reduce", 32, (32 * 64 - 32) * 3),
    ("MatchesGpuHloCostAnalysis_VariadicReduce", "reduce", 32, (32 * 64 - 32) * (3 + 3)),
    # the sm_86 op profile: cosine/f32 662 cycles; clamp is not listed (3)
    ("MatchesGpuHloCostAnalysis_Elementwise_Cosine", "cosine", 32, 32 * 662),
    ("MatchesGpuHloCostAnalysis_Elementwise_Clamp", "clamp", 32, 32 * 3),
    ("MatchesGpuHloCostAnalysis_Gather", "gather", 1806 * 7 * 8 * 4, 0),
    # (window - 1) x output elements x 3; the window is not a reduce-then-broadcast
    ("MatchesGpuHloCostAnalysis_ReduceWindow", "reduce-window", 13 * 3 * 8 * 15,
     6 * 13 * 3 * 8 * 15 * 3),
    ("MatchesGpuHloCostAnalysis_Concatenate_Aligned", "concat", 32 * 128, 6 * 32 * 128),
    # the first operand's 31 along dimension 1 is not a multiple of 32: 400 per element
    ("MatchesGpuHloCostAnalysis_Concatenate_Unaligned", "concat", 32 * 64, 400 * 32 * 64),
])
def test_flops_per_element(capsys: Any, hlo: str, instr: str, elements: int,
                           total: int) -> None:
    r = run(capsys, f"FlopsPerElementTest.{hlo}", instr, "--flops-per-element")
    assert r["flops_per_element"] * elements == total


# --------------------------------------------------------------- emitter constraints
LEGACY = "TritonEmitterConstraintsTest."


@pytest.mark.parametrize("hlo, sizes, emitter, extra, valid", [
    ("TooBigTileSizesConstraintIsEnforced", "8,128", "triton", (), True),
    ("TooBigTileSizesConstraintIsEnforced", "18,50304", "triton", (), False),
    ("TooBigTileSizesConstraintIsEnforced", "1024,1", "triton", (), False),
    ("DotOperandSizeConstraintIsEnforced", "4,4,4", "triton", (), True),
    ("DotOperandSizeConstraintIsEnforced", "512,4,4", "triton", (), False),
    ("TooManyBlocksConstraintIsEnforced", "128,128", "triton", (), True),
    ("TooManyBlocksConstraintIsEnforced", "1,1", "triton", (), False),
    ("FusionHasValidTileSizes", "1,3", "none", (), True),
    ("FusionHasValidTileSizes", "1,3", "triton", (), False),
    ("FusionHasValidTileSizes", "1,6", "triton", (), True),
    ("FusionHasValidTileSizes", "2,1", "triton", (), True),
    ("FusionHasValidTileSizes", "1,8", "triton", (), True),
    ("FusionHasValidTileSizes", "1,4", "triton", (), True),
    ("MultiOutputFusionHasPowerOfTwoTileSizes", "1", "none", ("--tiled-root", "reduce"),
     True),
    ("MultiOutputFusionHasPowerOfTwoTileSizes", "1", "triton", ("--tiled-root", "reduce"),
     False),
])
def test_emitter_legacy(capsys: Any, hlo: str, sizes: str, emitter: str,
                        extra: tuple[str, ...], valid: bool) -> None:
    r = run(capsys, LEGACY + hlo, "fusion", "--sizes", sizes, "--emitter", emitter, *extra,
            tiler="legacy")
    assert r["valid"] is valid


MOF = ("--xla-flag", "xla_gpu_unsupported_enable_triton_multi_output_fusion=true")


@pytest.mark.parametrize("hlo, sizes, extra, reason", [
    ("TooBigTileSizesConstraintIsEnforced", "8,128,8192", (), None),
    ("TooBigTileSizesConstraintIsEnforced", "18,50304,8192", (),
     "padded tile size product that exceeds the maximum"),
    ("TooBigTileSizesConstraintIsEnforced", "1024,1,8192", (),
     "padded tile size product that exceeds the maximum"),
    ("DotOperandSizeConstraintIsEnforced", "4,4,4", (), None),
    ("DotOperandSizeConstraintIsEnforced", "512,4,4", (),
     "exceeds the maximum MMA dimension size"),
    ("TooManyBlocksConstraintIsEnforced", "128,128", (), None),
    ("TooManyBlocksConstraintIsEnforced", "1,1", (), "exceeds the device grid"),
    ("FusionHasValidTileSizes", "1,3", (), "neither a power of 2 nor equal"),
    ("FusionHasValidTileSizes", "1,6", (), None),
    ("FusionHasValidTileSizes", "2,1", (), None),
    ("FusionHasValidTileSizes", "1,8", (), None),
    ("FusionHasValidTileSizes", "1,4", (), None),
    ("MultiOutputFusionHasPowerOfTwoTileSizes", "1,12,12", MOF,
     "neither a power of 2 nor equal"),
])
def test_emitter_experimental(capsys: Any, hlo: str, sizes: str, extra: tuple[str, ...],
                              reason: str | None) -> None:
    r = run(capsys, "VerifyTritonConstraintsTest." + hlo, "fusion", "--space-sizes", sizes,
            "--emitter", "triton", *extra, tiler="experimental")
    assert r["valid"] is (reason is None)
    if reason is not None:
        assert reason in r["reason"]


# --------------------------------------------------------------- the classic model
def classic(capsys: Any, hlo: str, fusion: str, *argv: str) -> dict[str, Any]:
    return run(capsys, hlo, fusion, "--cost", "--model", "classic", *argv)


@pytest.mark.parametrize("hlo, want, tol", [
    ("LargeWrite", 53, 10), ("SmallReadWrite", 1, 1), ("LargeReadWrite", 175, 30),
    ("L1CacheEffect", 118, 12), ("L2CacheEffect", 123, 12), ("UnusedParameter", 1, 1),
])
def test_classic_unfused(capsys: Any, hlo: str, want: int, tol: int) -> None:
    """XLA truncates the unfused time to whole microseconds before comparing."""
    fusion = "fusion" if hlo == "UnusedParameter" else "r.1"
    r = classic(capsys, hlo, fusion)
    assert abs(math.trunc(r["time_unfused_us"]) - want) <= tol


def test_classic_small_read_write(capsys: Any) -> None:
    r = classic(capsys, "SmallReadWrite", "r.1")
    assert near(r["end_to_end_cycles"], 38.4, 0.1) and near(r["exec_time_us"], 0, 1)


def test_classic_large_read_write(capsys: Any) -> None:
    r = classic(capsys, "LargeReadWrite", "r.1")
    assert near(r["end_to_end_cycles"], 220284, 100)
    assert near(r["exec_time_us"], 156, 10)
    assert near(r["compute_time_us"], 1, 1)
    assert near(r["memory_access_time_us"], 156, 10)


@pytest.mark.parametrize("hlo, producer", [
    ("FusingTransposeIntoReduceIsSlow", "transpose.1"),
    ("FusingTransposeMultiOutputFusionIntoReduceIsSlow", "fusion"),
])
def test_classic_transpose_into_reduce(capsys: Any, hlo: str, producer: str) -> None:
    r = classic(capsys, hlo, producer, "--consumers", "reduce.1")
    assert abs(math.trunc(r["time_unfused_us"]) - 105) <= 10
    assert abs(math.trunc(r["time_fused_us"]) - 514) <= 10


def test_classic_relations(capsys: Any) -> None:
    """The tests that compare two runs, or fused with unfused."""
    a = classic(capsys, "ComputeBoundReducesWithSameLaunchDimensions", "reduce.1",
                "--consumers", "reduce.2")
    b = classic(capsys, "ComputeBoundReducesWithSameLaunchDimensions", "reduce.3",
                "--consumers", "reduce.4")
    assert abs(math.trunc(a["time_fused_us"]) - math.trunc(b["time_fused_us"])) <= 2
    r = classic(capsys, "FusingNonMinorTransposeIntoReduceIsFast", "transpose.1",
                "--consumers", "reduce.1")
    assert r["time_fused_us"] < r["time_unfused_us"]
    a = classic(capsys, "DusScalesWithUpdates", "dus1")
    b = classic(capsys, "DusScalesWithUpdates", "dus2")
    assert abs(math.trunc(a["time_unfused_us"]) - math.trunc(b["time_unfused_us"])) <= 10
    a = classic(capsys, "EqualCostBeforeAndAfterFusion", "f.1", "--consumers", "r.1",
                "--computation", "e1")
    b = classic(capsys, "EqualCostBeforeAndAfterFusion", "f.2", "--computation", "e2")
    assert a["time_fused_us"] == b["time_unfused_us"]
    r = classic(capsys, "DoNotFuseDivideIntoSmallReduce", "reduce", "--consumers", "divide")
    assert r["time_unfused_us"] < r["time_fused_us"]
    a = classic(capsys, "PreferFusingExpensiveInstructionsIntoProducer", "fusion.0",
                "--consumers", "exp")
    b = classic(capsys, "PreferFusingExpensiveInstructionsIntoProducer", "exp",
                "--consumers", "fusion.1")
    assert (b["time_unfused_us"] - b["time_fused_us"] <
            a["time_unfused_us"] - a["time_fused_us"])
    r = classic(capsys, "DontFuseExpensiveElementwiseIntoSmallReduce", "fusion",
                "--consumers", "reduce")
    assert r["time_unfused_us"] < r["time_fused_us"]


def test_classic_multi_output_write(capsys: Any) -> None:
    """EstimateRunTimeForFusion_MultiOutputWrite_ReturnsCorrectTime: XLA truncates to whole
    milliseconds (120 +- 1 unfused, 103 +- 1 fused)."""
    r = classic(capsys, "MultiOutputWrite_ReturnsCorrectTime", "loop_power_fusion",
                "--consumers", "input_reduce_fusion", "--multi-output")
    assert abs(math.trunc(r["time_unfused_us"] / 1000) - 120) <= 1
    assert abs(math.trunc(r["time_fused_us"] / 1000) - 103) <= 1
