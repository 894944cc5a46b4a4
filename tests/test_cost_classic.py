"""XLA's classic per-kernel GPU model (``symidx.cost.classic``): each formula against a hand
computation from XLA's definitions, the cost analysis and launch dimensions against what
XLA's tests state, XLA's ``GpuPerformanceModelTest`` expectations, and general facts
(fusing an elementwise producer never costs more; a producer fused into its consumer costs
exactly what the equivalent fusion costs) on generated shapes.

The device is XLA's test device, the RTX A6000: 84 SMs of 128 FPUs at 1.41 GHz,
768.096 GB/s, 6 MiB of L2, 2 KiB of L1 per SM (``TestGpuDeviceInfo::RTXA6000DeviceInfo``
and ``device_description.h``'s defaults). Durations are quarter-nanosecond ticks.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symidx.cli import main
from symidx.cost.classic import (
    ClassicModel,
    adjust_bandwidth,
    coalescing_rate,
    combine,
    compute_time,
    effective_flops_per_ns,
    read_time_with_dram_heuristic,
    write_time,
)
from symidx.cost.devices import device
from symidx.cost.fusion_view import EmitterKind, FusionView, reduction_dims, tiled_transpose
from symidx.cost.hlo_cost import CostAnalysis
from symidx.cost.launch import emitter_for
from symidx.cost.numbers import f32, scale_ticks, ticks_from_ns, ticks_from_seconds, ticks_to_us
from symidx.hlo import parse_hlo

DATA = Path(__file__).parent / "data" / "cost_classic"
A6000 = device("rtx-a6000")
BW = 768_096_000_000          # bytes/s
CLOCK = 1.41                  # GHz
TICKS = 4                     # per nanosecond


def _ticks(seconds: float) -> int:
    return round(seconds * 1e9 * TICKS)


def _model(name: str, computation: str | None = None) -> tuple[ClassicModel, object]:
    module = parse_hlo((DATA / name).read_text())
    comp = module.computation(computation) if computation else module.entry
    return ClassicModel(A6000, comp), comp


# ---------------------------------------------------------------------- arithmetic
def test_durations_round_to_the_nearest_quarter_nanosecond() -> None:
    # absl::Seconds(double) and absl::Nanoseconds(float) round to a tick
    assert ticks_from_seconds(11.08e-9) == 44          # 44.32 ticks
    assert ticks_from_seconds(5.2077e-9) == 21         # 20.83 ticks
    assert ticks_from_ns(1.0391) == 4
    # Duration * double rounds halves away from zero
    assert scale_ticks(3, 0.5) == 2
    assert scale_ticks(4, 0.95) == 4                   # 3.8
    assert scale_ticks(10, 0.95) == 10                 # 9.5


def test_single_precision_is_single_precision() -> None:
    assert f32(16_777_217) == 16_777_216
    assert f32(0.1) != 0.1


# ---------------------------------------------------------------------- formulas
def test_bandwidth_is_capped_by_the_blocks_issuing_transactions() -> None:
    # AdjustBandwidth: at most 32 bytes per cycle per block
    assert adjust_bandwidth(A6000, BW, 8) == pytest.approx(8 * CLOCK * 1e9 * 32, rel=1e-6)
    assert adjust_bandwidth(A6000, BW, 100_000) == pytest.approx(BW, rel=1e-6)


@pytest.mark.parametrize(("blocks", "threads", "want"), [
    (8, 128, int(2.82 * 8 * 128)),          # 2887: min(blocks, SMs) x min(threads, FPUs)
    (1000, 1024, int(2.82 * 84 * 128)),     # 30320: the whole GPU
    (1, 1, 2),                               # one FPU: 2.82 truncated
    (19, 256, int(2.82 * 19 * 128)),
])
def test_effective_flops_per_ns(blocks: int, threads: int, want: int) -> None:
    assert effective_flops_per_ns(A6000, blocks, threads) == want


def test_compute_time() -> None:
    assert compute_time(A6000, 3000, 8, 128) == round(3000 / 2887 * TICKS)
    assert compute_time(A6000, 30_000_000, 19532, 128) == round(30_000_000 / 30320 * TICKS)


def test_read_time_from_dram_only() -> None:
    # the first n_bytes_net come from DRAM, here at the 8-block cap
    cap = 8 * CLOCK * 1e9 * 32
    assert read_time_with_dram_heuristic(A6000, 8, 4000, 4000, 1.0) == _ticks(4000 / cap)


def test_read_time_rereads_from_l1() -> None:
    # 40 kB fits the L1s (84 x 2 KiB): re-reads at 768 GB/s x 2.5 x 8
    got = read_time_with_dram_heuristic(A6000, 19532, 40_000, 40_000_000, 1.0)
    want = _ticks(40_000 / BW) + _ticks(39_960_000 / (BW * 2.5 * 8))
    assert abs(got - want) <= 1


def test_read_time_rereads_from_l2() -> None:
    # 4 MB fits the L2 (6 MiB), not the L1s: re-reads at x 2.5
    got = read_time_with_dram_heuristic(A6000, 19532, 4_000_000, 40_000_000, 1.0)
    want = _ticks(4_000_000 / BW) + _ticks(36_000_000 / (BW * 2.5))
    assert abs(got - want) <= 1


def test_uncoalesced_reads_use_one_element_per_transaction() -> None:
    assert coalescing_rate("f32", A6000, False) == 4 / 64
    assert coalescing_rate("bf16", A6000, False) == 2 / 64
    assert coalescing_rate("f32", A6000, True) == 1.0
    # 8 MB does not fit the L2: the re-reads are as slow as the first read
    got = read_time_with_dram_heuristic(A6000, 19532, 8_000_000, 16_000_000, 4 / 64)
    assert abs(got - 2 * _ticks(8_000_000 / (BW / 16))) <= 2


def test_write_time() -> None:
    assert write_time(A6000, 4000) == _ticks(4000 / BW)
    assert write_time(A6000, 40_000_000) == _ticks(40_000_000 / BW)


def test_compute_and_memory_overlap_95_percent() -> None:
    assert combine(4, 109) == 4 + 109 - 4                 # 0.95 x 4 ticks rounds to 4
    assert combine(1000, 10) == 1000 + 10 - 10            # 9.5 rounds to 10
    assert combine(0, 77) == 77


def test_small_read_write_end_to_end_cycles() -> None:
    """XLA's SmallReadWrite: 38.4 +- 0.1 cycles. By hand: 8 blocks of 128 threads; two 4 kB
    reads at the 8-block cap (44 ticks each), a 4 kB write (21 ticks), 3000 flops at 2887
    per ns (4 ticks): 4 + 109 - round(0.95 x 4) = 109 ticks = 27.25 ns x 1.41 GHz."""
    model, comp = _model("small_read_write.hlo")
    data = model.estimate_instruction(comp.instruction("r.1"))
    assert (data.read_time, data.write_time, data.compute_time, data.exec_time) == \
        (88, 21, 4, 109)
    assert data.end_to_end_cycles(A6000) == pytest.approx(27.25 * 1.41, abs=1e-4)
    assert abs(data.end_to_end_cycles(A6000) - 38.4) <= 0.1


# ---------------------------------------------------------------------- cost analysis
def _costs(text: str) -> tuple[CostAnalysis, object]:
    comp = parse_hlo(text).entry
    costs = CostAnalysis(A6000.op_profile)
    costs.analyze(comp)
    return costs, comp


def test_elementwise_flops_come_from_the_op_profile() -> None:
    costs, comp = _costs("""
HloModule m
ENTRY e {
  p = f32[1000] parameter(0)
  x = f32[1000] exponential(p)
  ROOT a = f32[1000] add(x, p)
}""")
    assert costs.flop_count(comp.instruction("x")) == 86 * 1000   # sm_86: exponential/f32
    assert costs.flop_count(comp.instruction("a")) == 3 * 1000    # not profiled: 3


def test_reduce_flops_and_init_reads() -> None:
    """A reduce applies its reducer (in - out) times; it reads its init value once per
    output element."""
    model, comp = _model("compute_bound_reduces.hlo")
    reduce1 = comp.instruction("reduce.1")
    per_application = 5 * 244 + 3          # five f32 logs (sm_86) and a maximum
    assert model.costs.flop_count(reduce1) == per_application * (150 * 32 * 128 - 150 * 32)
    assert model.costs.operand_bytes_accessed(reduce1, 1) == 150 * 32 * 4
    assert model.costs.operand_utilization(reduce1, 1) == 150 * 32
    assert model.costs.output_bytes_accessed(reduce1) == 150 * 32 * 4


def test_a_broadcast_parameter_is_read_once_per_output_element() -> None:
    model, comp = _model("l1_cache.hlo")
    fusion = comp.instruction("r.1")
    assert model.costs.operand_utilization(fusion, 0) == 1000
    assert model.costs.operand_bytes_accessed(fusion, 0) == 40_000 * 1000
    assert model.costs.operand_bytes_accessed(fusion, 1) == 40_000_000
    assert model.costs.output_bytes_accessed(fusion) == 40_000_000


def test_an_unused_parameter_is_not_read() -> None:
    model, comp = _model("unused_parameter.hlo")
    fusion = comp.instruction("r")
    assert model.costs.operand_bytes_accessed(fusion, 1) == 0
    assert model.costs.operand_bytes_accessed(fusion, 0) == 400_000


def test_a_dynamic_update_slice_writes_its_update_and_reads_nothing_it_overwrites() -> None:
    model, comp = _model("dus_scales.hlo")
    for name in ("dus1", "dus2"):
        fusion = comp.instruction(name)
        assert model.costs.output_bytes_accessed(fusion) == 1024 * 4
        assert model.costs.operand_bytes_accessed(fusion, 0) == 0
        assert model.costs.operand_bytes_accessed(fusion, 1) == 1024 * 1048576 * 4


def test_a_sliced_parameter_is_read_in_proportion() -> None:
    costs, comp = _costs("""
HloModule m
f {
  p = f32[100] parameter(0)
  s = f32[10] slice(p), slice={[0:10]}
  ROOT n = f32[10] negate(s)
}
ENTRY e {
  p = f32[100] parameter(0)
  ROOT r = f32[10] fusion(p), kind=kLoop, calls=f
}""")
    fusion = comp.instruction("r")
    assert costs.operand_utilization(fusion, 0) == pytest.approx(0.1)
    assert costs.operand_bytes_accessed(fusion, 0) == 40


def test_concatenate_flops_six_or_four_hundred() -> None:
    costs, comp = _costs("""
HloModule m
ENTRY e {
  a = f32[8,32] parameter(0)
  b = f32[8,32] parameter(1)
  c = f32[8,33] parameter(2)
  ok = f32[8,64] concatenate(a, b), dimensions={1}
  rows = f32[16,32] concatenate(a, b), dimensions={0}
  ROOT bad = f32[8,65] concatenate(c, a), dimensions={1}
}""")
    assert costs.flop_count(comp.instruction("ok")) == 6 * 8 * 64
    assert costs.flop_count(comp.instruction("rows")) == 6 * 16 * 32
    assert costs.flop_count(comp.instruction("bad")) == 400 * 8 * 65


def test_fusion_flops_weigh_each_instruction_by_its_utilization() -> None:
    model, comp = _model("l1_cache.hlo")
    # the add, evaluated once per output element; the broadcast and bitcast cost nothing
    assert model.costs.flop_count(comp.instruction("r.1")) == 3 * 10_000_000


def test_common_elementwise_utilization() -> None:
    model, comp = _model("small_read_write.hlo")
    model.costs.ensure(comp.instruction("r.1"))
    fused = comp.instruction("r.1").called_computations["calls"][0]
    p0, p1 = fused.parameters
    assert model.costs.common_elementwise_utilization(p0, fused.root) == 1.0
    assert model.costs.common_elementwise_utilization(p0, p1) == 1.0


# ---------------------------------------------------------------------- emitters
def _emitter(text: str, name: str | None = None):  # type: ignore[no-untyped-def]
    comp = parse_hlo(text).entry
    instr = comp.instruction(name) if name else comp.root
    return emitter_for(FusionView.single(instr), A6000)


def test_loop_launch_dimensions_from_xlas_loop_emitter_tests() -> None:
    # MlirLoopFusionTest.ThreadId_IndexingNotUnrolled: th_x in [0, 19], bl_x in [0, 0]
    e = _emitter("""
HloModule m
neg { p = f32[20] parameter(0)
      ROOT n = f32[20] negate(p) }
ENTRY e { p = f32[20] parameter(0)
          ROOT f = f32[20] fusion(p), kind=kLoop, calls=neg }""")
    assert (e.kind, e.launch.num_blocks, e.launch.threads_per_block) == (EmitterKind.LOOP, 1, 20)
    # MlirLoopFusionTest.ThreadId_Broadcast: th_x in [0, 127], bl_x in [0, 46]
    e = _emitter("""
HloModule m
b { p = f32[20] parameter(0)
    ROOT b = f32[10,20,30] broadcast(p), dimensions={1} }
ENTRY e { p = f32[20] parameter(0)
          ROOT f = f32[10,20,30] fusion(p), kind=kLoop, calls=b }""")
    assert (e.launch.num_blocks, e.launch.threads_per_block) == (47, 128)


def test_loop_unrolls_when_there_is_more_work_than_thread_slots() -> None:
    # 10M elements >= 84 x 1536 slots: 4 per thread, 128 threads a block
    model, comp = _model("large_read_write.hlo")
    e = emitter_for(FusionView.single(comp.instruction("r.1")), A6000)
    assert e.launch.num_blocks == math.ceil(10_000_000 / 4 / 128)
    # a scalar is one thread
    e = _emitter("""
HloModule m
ENTRY e { a = f32[] parameter(0)
          ROOT n = f32[] negate(a) }""")
    assert (e.launch.num_blocks, e.launch.threads_per_block) == (1, 1)


@pytest.mark.parametrize(("shape", "dims", "out"), [
    # MlirTransposeFusionTest.ThreadIndexing021 and 201: d0 in [0, 127], d3 in [0, 199]
    ("f32[100,32,64]", "{0,2,1}", "f32[100,64,32]"),
    ("f32[100,64,32]", "{2,0,1}", "f32[32,100,64]"),
])
def test_transpose_launch_dimensions_from_xlas_transpose_emitter_tests(
        shape: str, dims: str, out: str) -> None:
    e = _emitter(f"""
HloModule m
t {{ p = {shape} parameter(0)
     ROOT t = {out} transpose(p), dimensions={dims} }}
ENTRY e {{ p = {shape} parameter(0)
           ROOT f = {out} fusion(p), kind=kInput, calls=t }}""")
    assert (e.kind, e.launch.num_blocks, e.launch.threads_per_block) == \
        (EmitterKind.TRANSPOSE, 200, 128)


_ADD = """add { a = f32[] parameter(0)
       b = f32[] parameter(1)
       ROOT s = f32[] add(a, b) }"""


def _reduce_emitter(shape: str, out: str, dims: str, element: str = "f32"):  # type: ignore[no-untyped-def]
    text = f"""
HloModule m
add {{ a = {element}[] parameter(0)
       b = {element}[] parameter(1)
       ROOT s = {element}[] add(a, b) }}
f {{ p = {shape} parameter(0)
     c = {element}[] constant(0)
     ROOT r = {out} reduce(p, c), dimensions={dims}, to_apply=add }}
ENTRY e {{ p = {shape} parameter(0)
           ROOT f = {out} fusion(p), kind=kInput, calls=f }}"""
    return _emitter(text)


def test_row_reduction_threads_from_xlas_reduction_emitter_tests() -> None:
    # ReductionTest.VariadicRowReduce (f32[5,200,2048] over dim 2): shared tile 2x4, i.e.
    # 2 rows of 4 warps per block
    e = _reduce_emitter("f32[5,200,2048]", "f32[5,200]", "{2}")
    assert e.thread_grid == (2, 128)
    # ReductionTest.F64RowReduction (f64[100,128]): one warp a row, no shared memory
    e = _reduce_emitter("f64[100,128]", "f64[100]", "{1}", "f64")
    assert e.thread_grid[1] == 32
    # ReductionTest.NonPowerOfTwoRowReduction (f64[100,568]): two warps a row
    e = _reduce_emitter("f64[100,568]", "f64[100]", "{1}", "f64")
    assert e.thread_grid[1] == 64
    # ReductionTest.MultiRowReduction (f32[1024,4]): a shuffle over 4 threads a row
    e = _reduce_emitter("f32[1024,4]", "f32[1024]", "{1}")
    assert "multi-row" in e.detail and e.thread_grid[1] == 4


def test_reduction_kinds() -> None:
    comp = parse_hlo((DATA / "non_minor_transpose_into_reduce.hlo").read_text()).entry
    # reducing the physically major dimension: a column reduction [1, 128, 1500 x 32]
    dims = reduction_dims(comp.instruction("reduce.1"))
    assert (dims.is_row, dims.dims) == (False, (1, 128, 48000))
    comp = parse_hlo((DATA / "compute_bound_reduces.hlo").read_text()).entry
    dims = reduction_dims(comp.instruction("reduce.1"))
    assert (dims.is_row, dims.dims) == (True, (1, 4800, 128))


def test_tiled_transposes_are_found_on_logical_dimensions() -> None:
    comp = parse_hlo((DATA / "transpose_into_reduce.hlo").read_text()).entry
    assert tiled_transpose(comp.instruction("transpose.1")) is not None
    comp = parse_hlo("""
HloModule m
ENTRY e { p = f32[1500,2,3] parameter(0)
          ROOT t = f32[1500,3,2] transpose(p), dimensions={0,2,1} }""").entry
    assert tiled_transpose(comp.root) is None       # too small a tile


# ---------------------------------------------------------------------- XLA's model tests
def test_large_write() -> None:
    model, comp = _model("large_write.hlo")
    t = model.run_times(comp.instruction("r.1"), [])
    assert abs(math.trunc(ticks_to_us(t.time_unfused)) - 53) <= 10


def test_small_read_write() -> None:
    model, comp = _model("small_read_write.hlo")
    t = model.run_times(comp.instruction("r.1"), [])
    assert abs(math.trunc(ticks_to_us(t.time_unfused)) - 1) <= 1
    assert abs(ticks_to_us(t.producer.exec_time)) <= 1


def test_large_read_write() -> None:
    model, comp = _model("large_read_write.hlo")
    t = model.run_times(comp.instruction("r.1"), [])
    assert abs(math.trunc(ticks_to_us(t.time_unfused)) - 175) <= 30
    assert abs(t.producer.end_to_end_cycles(A6000) - 220284) <= 100
    assert abs(ticks_to_us(t.producer.exec_time) - 156) <= 10
    assert abs(ticks_to_us(t.producer.compute_time) - 1) <= 1
    assert abs(ticks_to_us(t.producer.memory_access_time) - 156) <= 10


@pytest.mark.parametrize(("name", "want", "tolerance"), [
    ("l1_cache.hlo", 118, 12), ("l2_cache.hlo", 123, 12), ("unused_parameter.hlo", 1, 1)])
def test_cache_effects_and_unused_parameters(name: str, want: int, tolerance: int) -> None:
    model, comp = _model(name)
    t = model.run_times(comp.root, [])
    assert abs(math.trunc(ticks_to_us(t.time_unfused)) - want) <= tolerance


def test_l1_reads_are_faster_than_l2_reads() -> None:
    l1, c1 = _model("l1_cache.hlo")
    l2, c2 = _model("l2_cache.hlo")
    assert l1.run_times(c1.root, []).time_unfused < l2.run_times(c2.root, []).time_unfused


def test_compute_bound_reduces_with_same_launch_dimensions() -> None:
    model, comp = _model("compute_bound_reduces.hlo")
    a = model.run_times(comp.instruction("reduce.1"), [comp.instruction("reduce.2")])
    b = model.run_times(comp.instruction("reduce.3"), [comp.instruction("reduce.4")])
    assert a.fused[0].emitter.launch == b.fused[0].emitter.launch
    assert abs(math.trunc(ticks_to_us(a.time_fused))
               - math.trunc(ticks_to_us(b.time_fused))) <= 2


@pytest.mark.parametrize(("name", "producer"), [
    ("transpose_into_reduce.hlo", "transpose.1"),
    ("transpose_mof_into_reduce.hlo", "fusion")])
def test_fusing_a_transpose_into_a_reduce_is_slow(name: str, producer: str) -> None:
    model, comp = _model(name)
    t = model.run_times(comp.instruction(producer), [comp.instruction("reduce.1")])
    assert abs(math.trunc(ticks_to_us(t.time_unfused)) - 105) <= 10
    assert abs(math.trunc(ticks_to_us(t.time_fused)) - 514) <= 10
    assert not t.fused[0].coalesced and t.producer.coalesced


def test_fusing_a_non_minor_transpose_into_a_reduce_is_fast() -> None:
    model, comp = _model("non_minor_transpose_into_reduce.hlo")
    t = model.run_times(comp.instruction("transpose.1"), [comp.instruction("reduce.1")])
    assert t.time_fused < t.time_unfused
    assert t.fused[0].coalesced


def test_dynamic_update_slices_scale_with_their_updates() -> None:
    model, comp = _model("dus_scales.hlo")
    a = model.run_times(comp.instruction("dus1"), [])
    b = model.run_times(comp.instruction("dus2"), [])
    assert a.producer.emitter.kind == EmitterKind.DYNAMIC_UPDATE_SLICE
    assert abs(math.trunc(ticks_to_us(a.time_unfused))
               - math.trunc(ticks_to_us(b.time_unfused))) <= 10


def test_equal_cost_before_and_after_fusion() -> None:
    model, comp = _model("equal_cost.hlo", "e1")
    fused = model.run_times(comp.instruction("f.1"), [comp.instruction("r.1")])
    other, comp2 = _model("equal_cost.hlo")
    whole = other.run_times(comp2.instruction("f.2"), [])
    assert fused.time_fused == whole.time_unfused


@pytest.mark.parametrize(("name", "producer", "consumer"), [
    ("divide_into_small_reduce.hlo", "reduce", "divide"),
    ("expensive_into_small_reduce.hlo", "fusion", "reduce")])
def test_some_fusions_do_not_pay(name: str, producer: str, consumer: str) -> None:
    model, comp = _model(name)
    t = model.run_times(comp.instruction(producer), [comp.instruction(consumer)])
    assert t.time_unfused < t.time_fused


def test_prefer_fusing_expensive_instructions_into_their_producer() -> None:
    model, comp = _model("prefer_fusing_into_producer.hlo")
    exp = comp.instruction("exp")
    into_producer = model.run_times(comp.instruction("fusion.0"), [exp])
    into_consumer = model.run_times(exp, [comp.instruction("fusion.1")])
    assert (into_consumer.time_unfused - into_consumer.time_fused
            < into_producer.time_unfused - into_producer.time_fused)


def test_multi_output_fusion_still_writes_the_producer() -> None:
    model, comp = _model("multi_output_write.hlo")
    t = model.multi_output_run_times(comp.instruction("loop_power_fusion"),
                                     comp.instruction("input_reduce_fusion"))
    assert abs(math.trunc(ticks_to_us(t.time_unfused) / 1000) - 120) <= 1
    assert abs(math.trunc(ticks_to_us(t.time_fused) / 1000) - 103) <= 1
    assert t.fused[0].write_time == t.producer.write_time + t.consumers[0].write_time


# ---------------------------------------------------------------------- properties
_UNARY = st.sampled_from(["negate", "exponential", "tanh", "log", "sqrt", "abs"])
_DIMS = st.lists(st.integers(1, 600), min_size=1, max_size=3)


def _split(dims: list[int], ops: list[str]) -> str:
    """A multiply fusion and the unary ops ``ops`` applied to it, one instruction each."""
    shape = f"f32[{','.join(map(str, dims))}]"
    chain = "\n".join(f"      u{i} = {shape} {op}({'f' if i == 0 else f'u{i - 1}'})"
                      for i, op in enumerate(ops))
    return f"""
HloModule m
f1 {{ a = {shape} parameter(0)
      b = {shape} parameter(1)
      ROOT m = {shape} multiply(a, b) }}
ENTRY e1 {{ a = {shape} parameter(0)
      b = {shape} parameter(1)
      f = {shape} fusion(a, b), kind=kLoop, calls=f1
{chain}
      ROOT t = ({shape}) tuple(u{len(ops) - 1}) }}"""


def _whole(dims: list[int], op: str) -> str:
    """The multiply and ``op`` in one fusion."""
    shape = f"f32[{','.join(map(str, dims))}]"
    return f"""
HloModule m
f2 {{ a = {shape} parameter(0)
      b = {shape} parameter(1)
      m = {shape} multiply(a, b)
      ROOT u = {shape} {op}(m) }}
ENTRY e2 {{ a = {shape} parameter(0)
            b = {shape} parameter(1)
            ROOT g = {shape} fusion(a, b), kind=kLoop, calls=f2 }}"""


@given(_DIMS, _UNARY)
def test_a_fused_producer_costs_what_the_fusion_costs(dims: list[int], op: str) -> None:
    """XLA's EqualCostBeforeAndAfterFusion on any shape: an elementwise producer fused into
    its elementwise consumer is priced exactly as the fusion of both."""
    split = parse_hlo(_split(dims, [op])).entry
    fused = ClassicModel(A6000, split).run_times(split.instruction("f"),
                                                 [split.instruction("u0")])
    whole = parse_hlo(_whole(dims, op)).entry
    alone = ClassicModel(A6000, whole).run_times(whole.root, [])
    assert fused.time_fused == alone.time_unfused


@given(_DIMS, _UNARY, _UNARY)
def test_fusing_elementwise_ops_never_costs_more(dims: list[int], op1: str, op2: str) -> None:
    """The fused kernel reads what the producer read and writes what the consumer wrote;
    the producer's write, the consumer's read and a launch are saved."""
    comp = parse_hlo(_split(dims, [op1, op2])).entry
    model = ClassicModel(A6000, comp)
    t = model.run_times(comp.instruction("u0"), [comp.instruction("u1")])
    assert t.time_fused <= t.time_unfused
    t = model.run_times(comp.instruction("f"), [comp.instruction("u0")])
    assert t.time_fused <= t.time_unfused


@given(st.integers(64, 1024), st.sampled_from([32, 64, 128, 256]),
       st.sampled_from([32, 64, 128, 256]))
def test_moving_the_minor_dimension_into_a_reduce_breaks_coalescing(
        batch: int, rows: int, cols: int) -> None:
    """A transpose of the two minor dimensions fused into a reduction reads
    uncoalesced (16x slower for f32); one that keeps the minor dimension does not, and
    fusing it saves the transpose's write and the reduce's read."""
    c = """
max { a = f32[] parameter(0)
      b = f32[] parameter(1)
      ROOT m = f32[] maximum(a, b) }"""
    minor = parse_hlo(f"""
HloModule m
{c}
ENTRY e {{ k = f32[] constant(-inf)
           p = f32[{batch},{rows},{cols}] parameter(0)
           t = f32[{batch},{cols},{rows}] transpose(p), dimensions={{0,2,1}}
           ROOT r = f32[{batch},{rows}] reduce(t, k), dimensions={{1}}, to_apply=max }}""").entry
    t = ClassicModel(A6000, minor).run_times(minor.instruction("t"), [minor.root])
    assert not t.fused[0].coalesced
    assert t.time_fused > t.time_unfused
    kept = parse_hlo(f"""
HloModule m
{c}
ENTRY e {{ k = f32[] constant(-inf)
           p = f32[{batch},{rows},{cols}]{{1,2,0}} parameter(0)
           t = f32[{batch},{cols},{rows}]{{2,0,1}} transpose(p), dimensions={{0,2,1}}
           ROOT r = f32[{batch},{rows}] reduce(t, k), dimensions={{1}}, to_apply=max }}""").entry
    t = ClassicModel(A6000, kept).run_times(kept.instruction("t"), [kept.root])
    assert t.fused[0].coalesced
    assert t.time_fused < t.time_unfused


# ---------------------------------------------------------------------- command line
def _tile(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["tile", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_prices_a_producer_and_its_consumer(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _tile(capsys, str(DATA / "transpose_into_reduce.hlo"), "--fusion",
                         "transpose.1", "--cost", "--model", "classic", "--consumers",
                         "reduce.1", "--device", "rtx-a6000", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert abs(math.trunc(doc["time_fused_us"]) - 514) <= 10
    assert doc["emitter"] == "transpose"
    for key in ("exec_time_us", "compute_time_us", "read_time_us", "write_time_us",
                "memory_access_time_us", "end_to_end_cycles"):
        assert isinstance(doc[key], float)
    assert doc["kernels"]["fused"][0]["coalesced"] is False
    code, out, _ = _tile(capsys, str(DATA / "transpose_into_reduce.hlo"), "--fusion",
                         "transpose.1", "--cost", "--model", "classic", "--consumers",
                         "reduce.1", "--device", "rtx-a6000")
    assert code == 0 and "reads not coalesced" in out and "fused 513.229 us" in out


def test_cli_computation_and_multi_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _tile(capsys, str(DATA / "equal_cost.hlo"), "--fusion", "f.1", "--cost",
                         "--model", "classic", "--consumers", "r.1", "--computation", "e1",
                         "--device", "rtx-a6000", "--format", "json")
    assert code == 0 and json.loads(out)["time_fused_us"] > 0
    code, out, _ = _tile(capsys, str(DATA / "multi_output_write.hlo"), "--fusion",
                         "loop_power_fusion", "--cost", "--model", "classic", "--consumers",
                         "input_reduce_fusion", "--multi-output", "--device", "rtx-a6000",
                         "--format", "json")
    assert code == 0 and json.loads(out)["multi_output"] is True


def test_cli_refuses_with_one_located_line(capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    path = tmp_path / "cc.hlo"
    path.write_text("""HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  ROOT c = f32[8] custom-call(p), custom_call_target="foo"
}
""")
    code, _, err = _tile(capsys, str(path), "--fusion", "c", "--cost", "--model", "classic",
                         "--device", "rtx-a6000")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "line 4, column" in lines[0] and "custom-call" in lines[0]
    code, _, err = _tile(capsys, str(DATA / "small_read_write.hlo"), "--fusion", "p0",
                         "--cost", "--model", "classic", "--consumers", "p1",
                         "--device", "rtx-a6000")
    assert code == 2 and "does not use" in err


def test_an_unpriced_instruction_elsewhere_does_not_stop_the_model() -> None:
    comp = parse_hlo("""
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  c = f32[8] custom-call(p), custom_call_target="foo"
  n = f32[8] negate(p)
  ROOT t = (f32[8], f32[8]) tuple(c, n)
}""").entry
    t = ClassicModel(A6000, comp).run_times(comp.instruction("n"), [])
    assert t.producer.flops == 3 * 8


def test_cli_triton_fusions_are_left_to_the_tiled_model(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "t.hlo"
    path.write_text("""HloModule m
f { p = f32[8] parameter(0)
    ROOT n = f32[8] negate(p) }
ENTRY e {
  p = f32[8] parameter(0)
  ROOT t = f32[8] fusion(p), kind=kCustom, calls=f, backend_config=BACKEND
}
""".replace("BACKEND", '{"fusion_backend_config":{"kind":"__triton"}}'))
    code, _, err = _tile(capsys, str(path), "--fusion", "t", "--cost", "--model", "classic",
                         "--device", "rtx-a6000")
    assert code == 2 and "Triton" in err and "line 6" in err


def test_json_validates_against_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from importlib import resources

    schema = json.loads(resources.files("symidx").joinpath("schemas/tiles-1.json").read_text())
    code, out, _ = _tile(capsys, str(DATA / "prefer_fusing_into_producer.hlo"), "--fusion",
                         "exp", "--cost", "--model", "classic", "--consumers", "fusion.1",
                         "--device", "rtx-a6000", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    jsonschema.validate(doc, schema)
    bad = dict(doc, kernels=dict(doc["kernels"], producer={"flops": 1}))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
