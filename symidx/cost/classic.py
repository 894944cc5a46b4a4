"""XLA's classic per-kernel GPU performance model (``GpuPerformanceModel``): what a kernel
costs, and what fusing a producer into its consumers saves.

Per kernel (``EstimateRunTimeForInstruction``):

* **compute** = flops / (2 x clock x min(blocks, SMs) x min(threads per block, FPUs per
  SM)), the flops per nanosecond truncated to an integer as XLA's ``int64_t``;
* **read** = per operand, the first ``min(operand size, bytes read)`` bytes from DRAM at
  the memory bandwidth times the coalescing rate (1, or element size / 64 when the reads do
  not coalesce), the rest re-read at the bandwidth x 2.5 when the operand fits the L2 (x 8
  more when it fits the SMs' L1s), else at the DRAM rate again; every bandwidth capped at
  blocks x clock x 32 bytes per cycle (``ReadTimeWithDRAMHeuristic``, ``AdjustBandwidth``);
* **write** = bytes written / memory bandwidth;
* **exec** = compute + memory - 0.95 x min(compute, memory), memory = read + write.

Launch dimensions come from the emitter (:mod:`symidx.cost.launch`), flops and bytes from
the cost analysis (:mod:`symidx.cost.hlo_cost`). Reads coalesce unless a copy or transpose
in the producer or consumer moves the minor dimension (outside a transpose kernel), or a
reduction kernel fuses two reductions (``IsReadCoalescedHeuristic``).

A producer fused into a consumer (``EstimateRunTimeForFusion``) is one kernel over both:
the emitter of the fused graph, flops = producer's x its utilization by the consumer +
the consumer's, each kernel parameter read as much as the producer and the consumer read
it (less what an elementwise producer and consumer read in common), the consumer's writes
(and the producer's, for a multi-output fusion).

``run_times`` (``EstimateRunTimes``): unfused = 1 us launch per kernel + the producer's and
consumers' exec times; fused = 1 us per consumer + each consumer's fused kernel. Durations
are ``absl::Duration``s, whole quarter nanoseconds (:mod:`symidx.cost.numbers`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from symidx.cost.constants import (
    KERNEL_LAUNCH_OVERHEAD_US,
    L1_CACHE_SPEEDUP,
    L2_CACHE_SPEEDUP,
    MEMORY_COMPUTE_PARALLELISM,
)
from symidx.cost.devices import Device
from symidx.cost.fusion_view import (
    EmitterKind,
    FusionView,
    is_input_fusible_reduction,
    transposes_minor_dimension,
)
from symidx.cost.hlo_cost import CostAnalysis, is_elementwise
from symidx.cost.launch import Emitter, emitter_for
from symidx.cost.numbers import (
    INFINITE,
    TICKS_PER_NS,
    Ticks,
    f32,
    f32_add,
    f32_div,
    f32_mul,
    llround,
    scale_ticks,
    ticks_from_ns,
    ticks_from_seconds,
    ticks_to_ns,
    ticks_to_us,
)
from symidx.cost.shapes import element_bytes, shape_size
from symidx.hlo import HloComputation, HloInstruction, Shape, TupleShape
from symidx.hlo.facts import called_computation

__all__ = ["ClassicModel", "RunTimeData", "RunTimes", "adjust_bandwidth",
           "read_time_with_dram_heuristic", "write_time", "effective_flops_per_ns",
           "compute_time", "combine", "coalescing_rate", "is_read_coalesced_heuristic"]

#: ``kKernelLaunchOverhead`` in ticks.
_LAUNCH_TICKS = round(KERNEL_LAUNCH_OVERHEAD_US * 1000 * TICKS_PER_NS)


# ---------------------------------------------------------------------- formulas
def adjust_bandwidth(device: Device, bandwidth: float, num_blocks: int) -> float:
    """``AdjustBandwidth``: a block issues at most ``memory_transactions_per_clock`` bytes
    a cycle, so few blocks cannot use the whole bandwidth (single precision, as XLA)."""
    per_block = f32_mul(f32_mul(f32(device.clock_rate_ghz), f32(1.0e9)),
                        device.memory_transactions_per_clock)
    return min(f32(bandwidth), f32_mul(num_blocks, per_block))


def read_time_with_dram_heuristic(device: Device, num_blocks: int, n_bytes_net: int,
                                  n_bytes_total: int, utilization_rate: float) -> Ticks:
    """``ReadTimeWithDRAMHeuristic``: the first ``n_bytes_net`` bytes from DRAM at the
    coalescing-reduced bandwidth, the rest from cache when the operand fits one."""
    bandwidth = device.memory_bandwidth
    dram = f32(bandwidth * utilization_rate)
    rest = f32(bandwidth)
    if n_bytes_net < device.l2_cache_size:
        rest = f32_mul(rest, L2_CACHE_SPEEDUP)
        if n_bytes_net < device.l1_cache_size_per_sm * device.core_count:
            rest = f32_mul(rest, L1_CACHE_SPEEDUP)
    else:
        rest = f32(rest * utilization_rate)
    dram = adjust_bandwidth(device, dram, num_blocks)
    rest = adjust_bandwidth(device, rest, num_blocks)
    from_dram = min(n_bytes_net, n_bytes_total)
    from_cache = n_bytes_total - from_dram
    return (ticks_from_seconds(f32_div(from_dram, dram))
            + ticks_from_seconds(f32_div(from_cache, rest)))


def write_time(device: Device, bytes_written: int) -> Ticks:
    """``WriteTime``: bytes / memory bandwidth."""
    return ticks_from_seconds(f32_div(f32(bytes_written), device.memory_bandwidth))


def effective_flops_per_ns(device: Device, num_blocks: int, threads_per_block: int) -> int:
    """``CalculateEffectiveFlopsPerNs``: 2 flops (an FMA) per cycle per active FPU."""
    fpus = min(threads_per_block, device.fpus_per_core) * min(num_blocks, device.core_count)
    per_fpu = float(f32(f32(device.clock_rate_ghz) * 2))
    return int(per_fpu * fpus)


def compute_time(device: Device, flops: int, num_blocks: int, threads_per_block: int) -> Ticks:
    """``ComputeTime``: flops / the effective flops per nanosecond."""
    rate = effective_flops_per_ns(device, num_blocks, threads_per_block)
    if rate <= 0:
        return INFINITE if flops > 0 else 0
    return ticks_from_ns(f32_div(f32(flops), rate))


def combine(compute: Ticks, memory: Ticks) -> Ticks:
    """``CombineComputeAndMemoryAccessTime``: most of the shorter hides under the longer."""
    if compute == INFINITE or memory == INFINITE:
        return INFINITE
    return compute + memory - scale_ticks(min(compute, memory), MEMORY_COMPUTE_PARALLELISM)


def coalescing_rate(element_type: str, device: Device, coalesced: bool) -> float:
    """``GetCoalescingUtilizationRate``: 1, or one element of each DRAM->L2 transaction."""
    if coalesced:
        return 1.0
    size = 4 if element_type in ("tuple", "token") else element_bytes(element_type)
    return size / device.dram_to_l2_transaction_size_bytes


def is_read_coalesced_heuristic(kind: EmitterKind, producer: HloInstruction,
                                consumer: HloInstruction | None) -> bool:
    """``IsReadCoalescedHeuristic``: outside a transpose kernel, a copy or transpose that
    moves the minor dimension (not of a broadcast or iota) breaks coalescing; so does a
    reduction kernel fusing two reductions."""
    if kind != EmitterKind.TRANSPOSE and (
            _bad_transpose(producer) or (consumer is not None and _bad_transpose(consumer))):
        return False
    return not (kind == EmitterKind.REDUCTION and consumer is not None
                and is_input_fusible_reduction(producer)
                and is_input_fusible_reduction(consumer))


def _is_broadcast(instr: HloInstruction) -> bool:
    while True:
        if instr.opcode in ("broadcast", "iota"):
            return True
        if len(instr.operands) != 1:
            return False
        if instr.opcode != "bitcast" and not is_elementwise(instr):
            return False
        instr = instr.operands[0]


def _bad_transpose(instr: HloInstruction) -> bool:
    if instr.opcode == "fusion":
        comp = called_computation(instr)
        return comp is not None and any(
            transposes_minor_dimension(i) and not _is_broadcast(i.operands[0])
            for i in comp.instructions if i.operands)
    return transposes_minor_dimension(instr) and not _is_broadcast(instr.operands[0])


# ---------------------------------------------------------------------- results
@dataclass(frozen=True)
class RunTimeData:
    """``EstimateRunTimeData`` of one kernel, with the emitter it was priced under."""

    flops: int
    bytes_read: int
    bytes_written: int
    read_time: Ticks
    write_time: Ticks
    compute_time: Ticks
    exec_time: Ticks
    emitter: Emitter | None = None
    coalesced: bool = True
    reads: tuple[dict[str, Any], ...] = ()

    @property
    def memory_access_time(self) -> Ticks:
        return self.read_time + self.write_time

    def end_to_end_cycles(self, device: Device) -> float:
        """``MakeReificationCostFromRuntime``: exec nanoseconds x clock GHz."""
        return ticks_to_ns(self.exec_time) * float(f32(device.clock_rate_ghz))

    def to_json(self, device: Device) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "flops": self.flops, "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "exec_time_us": _us(self.exec_time), "compute_time_us": _us(self.compute_time),
            "read_time_us": _us(self.read_time), "write_time_us": _us(self.write_time),
            "memory_access_time_us": _us(self.memory_access_time),
            "end_to_end_cycles": None if self.exec_time == INFINITE
            else self.end_to_end_cycles(device),
            "coalesced": self.coalesced,
        }
        if self.emitter is not None:
            doc["emitter"] = self.emitter.kind.value
            doc["emitter_detail"] = self.emitter.detail
            doc["blocks"] = self.emitter.launch.num_blocks
            doc["threads_per_block"] = self.emitter.launch.threads_per_block
        doc["reads"] = list(self.reads)
        return doc


@dataclass(frozen=True)
class RunTimes:
    """``GpuPerformanceModel::RunTimes``, with the kernels behind them."""

    time_unfused: Ticks
    time_fused: Ticks
    producer: RunTimeData
    consumers: tuple[RunTimeData, ...] = ()
    fused: tuple[RunTimeData, ...] = field(default=())


def _us(ticks: Ticks) -> float | None:
    return None if ticks == INFINITE else ticks_to_us(ticks)


# ---------------------------------------------------------------------- the model
class ClassicModel:
    """The classic model on one device, over the instructions of ``computation`` (each
    priced on first use: an instruction the model cannot price elsewhere in the
    computation does not stop it)."""

    def __init__(self, device: Device, computation: HloComputation) -> None:
        self.device = device
        self.computation = computation
        self.costs = CostAnalysis(device.op_profile)
        self._runtime: dict[HloInstruction, RunTimeData] = {}

    # ------------------------------------------------------------ one kernel
    def estimate_instruction(self, instr: HloInstruction) -> RunTimeData:
        """``EstimateRunTimeForInstruction``: ``instr`` as a kernel of its own."""
        if instr in self._runtime:
            return self._runtime[instr]
        costs = self.costs
        flops = costs.flop_count(instr)
        written = costs.output_bytes_accessed(instr)
        view = FusionView.single(instr)
        emitter = emitter_for(view, self.device)
        blocks = emitter.launch.num_blocks
        compute = compute_time(self.device, flops, blocks, emitter.launch.threads_per_block)
        coalesced = is_read_coalesced_heuristic(emitter.kind, instr, None)
        read, bytes_read, reads = self._reads(
            [(op, self._operand_bytes(instr, op)) for op in instr.operands], blocks, coalesced)
        write = write_time(self.device, written)
        data = RunTimeData(flops, bytes_read, written, read, write, compute,
                           combine(compute, read + write), emitter, coalesced, reads)
        self._runtime[instr] = data
        return data

    # ------------------------------------------------------------ a fusion
    def estimate_fusion(self, producer: HloInstruction, consumer: HloInstruction,
                        producer_writes_side_output: bool = False) -> RunTimeData:
        """``EstimateRunTimeForFusion``: ``producer`` fused into ``consumer``."""
        p = self.estimate_instruction(producer)
        c = self.estimate_instruction(consumer)
        if p.exec_time == INFINITE or c.exec_time == INFINITE:
            return RunTimeData(0, 0, 0, INFINITE, INFINITE, INFINITE, INFINITE)
        utilization = 0.0
        for k, op in enumerate(consumer.operands):
            if op is producer or (op.opcode == "get-tuple-element" and op.operands[0] is producer):
                utilization = f32_add(utilization, self.costs.operand_utilization(consumer, k))
        view = FusionView.producer_consumer(producer, consumer)
        emitter = emitter_for(view, self.device)
        blocks = emitter.launch.num_blocks
        flops = int(f32_add(f32_mul(p.flops, utilization), c.flops))
        compute = compute_time(self.device, flops, blocks, emitter.launch.threads_per_block)
        coalesced = is_read_coalesced_heuristic(emitter.kind, producer, consumer)
        read, bytes_read, reads = self._reads(
            [(op, self.shared_operand_bytes(producer, consumer, op)) for op in view.parameters],
            blocks, coalesced)
        written = c.bytes_written
        write = c.write_time
        if producer_writes_side_output:
            written += p.bytes_written
            write += p.write_time
        return RunTimeData(flops, bytes_read, written, read, write, compute,
                           combine(compute, read + write), emitter, coalesced, reads)

    def run_times(self, producer: HloInstruction,
                  consumers: list[HloInstruction]) -> RunTimes:
        """``EstimateRunTimes``: the producer and consumers apart, and the producer fused
        into each consumer."""
        p = self.estimate_instruction(producer)
        unfused = _LAUNCH_TICKS * (len(consumers) + 1) + p.exec_time
        fused: Ticks = _LAUNCH_TICKS * len(consumers)
        consumer_data, fused_data = [], []
        for consumer in consumers:
            c = self.estimate_instruction(consumer)
            f = self.estimate_fusion(producer, consumer)
            unfused += c.exec_time
            fused += f.exec_time
            consumer_data.append(c)
            fused_data.append(f)
        return RunTimes(unfused, fused, p, tuple(consumer_data), tuple(fused_data))

    def multi_output_run_times(self, producer: HloInstruction,
                               consumer: HloInstruction) -> RunTimes:
        """``EstimateRunTimesForMultiOutputFusion``: the fused kernel still writes the
        producer's output."""
        p = self.estimate_instruction(producer)
        c = self.estimate_instruction(consumer)
        f = self.estimate_fusion(producer, consumer, producer_writes_side_output=True)
        unfused = 2 * _LAUNCH_TICKS + p.exec_time + c.exec_time
        fused = _LAUNCH_TICKS + f.exec_time
        return RunTimes(unfused, fused, p, (c,), (f,))

    # ------------------------------------------------------------ bytes
    def _reads(self, operands: list[tuple[HloInstruction, int]], blocks: int,
               coalesced: bool) -> tuple[Ticks, int, tuple[dict[str, Any], ...]]:
        """The read time of a kernel reading ``bytes`` of each operand: the time, the bytes
        and one record per operand."""
        total_time: Ticks = 0
        total_bytes = 0
        records = []
        for operand, total in operands:
            net = min(shape_size(operand.shape), total)
            total_bytes += total
            rate = coalescing_rate(_element_type(operand.shape), self.device, coalesced)
            t = read_time_with_dram_heuristic(self.device, blocks, net, total, rate)
            total_time += t
            records.append({"operand": operand.name, "bytes_net": net, "bytes_total": total,
                            "coalesced": coalesced, "read_time_us": _us(t)})
        return total_time, total_bytes, tuple(records)

    def _operand_bytes(self, instr: HloInstruction, operand: HloInstruction) -> int:
        """``GetOperandBytesAccessed``: 0 unless ``instr`` uses ``operand``."""
        k = _operand_index(instr, operand)
        return 0 if k is None else self.costs.operand_bytes_accessed(instr, k)

    def operand_utilization(self, instr: HloInstruction, operand: HloInstruction) -> float:
        """``GetOperandUtilization``: summed over the outputs of a multi-output fusion."""
        if _is_multi_output_fusion(operand):
            total = 0.0
            for k, op in enumerate(instr.operands):
                if op.opcode == "get-tuple-element" and op.operands[0] is operand:
                    total = f32_add(total, self.costs.operand_utilization(instr, k))
            return total
        index = _operand_index(instr, operand)
        return 0.0 if index is None else self.costs.operand_utilization(instr, index)

    def common_utilization(self, producer: HloInstruction, k: int,
                           consumer: HloInstruction) -> float:
        """``GetCommonUtilization``: how much of producer operand ``k`` the consumer reads
        at the same elements (elementwise producers and consumers only)."""
        operand = producer.operands[k]
        common = _operand_index(consumer, operand)
        if common is None:
            return 0.0
        elementwise_producer = is_elementwise(producer) or (
            producer.opcode == "fusion" and self._uses_elementwise_from_root(producer, k))
        if not elementwise_producer:
            return 0.0
        if consumer.opcode == "fusion":
            comp = called_computation(consumer)
            assert comp is not None
            if _is_multi_output_fusion(producer):
                indices = [i for i, op in enumerate(consumer.operands)
                           if op.opcode == "get-tuple-element" and op.operands[0] is producer]
            else:
                index = _operand_index(consumer, producer)
                indices = [] if index is None else [index]
            total = 0.0
            for i in indices:
                total = f32_add(total, self.costs.common_elementwise_utilization(
                    comp.parameters[common], comp.parameters[i]))
            return total
        return 1.0 if is_elementwise(consumer) else 0.0

    def _uses_elementwise_from_root(self, fusion: HloInstruction, k: int) -> bool:
        comp = called_computation(fusion)
        assert comp is not None
        return self.costs.common_elementwise_utilization(comp.parameters[k], comp.root) == 1.0

    def shared_operand_bytes(self, producer: HloInstruction, consumer: HloInstruction,
                             operand: HloInstruction) -> int:
        """``GetSharedOperandBytesAccessed``: what the fused kernel reads of ``operand``."""
        by_consumer_util = self.operand_utilization(consumer, producer)
        by_producer = self._operand_bytes(producer, operand)
        by_consumer = self._operand_bytes(consumer, operand)
        k = _operand_index(producer, operand)
        common = 0.0 if k is None else self.common_utilization(producer, k, consumer)
        common_bytes = llround(f32_mul(shape_size(operand.shape), common))
        return llround(f32_mul(by_producer, by_consumer_util)) + by_consumer - common_bytes


def _operand_index(instr: HloInstruction, operand: HloInstruction) -> int | None:
    for k, op in enumerate(instr.operands):
        if op is operand:
            return k
    return None


def _is_multi_output_fusion(instr: HloInstruction) -> bool:
    if instr.opcode != "fusion":
        return False
    comp = called_computation(instr)
    return comp is not None and comp.root.opcode == "tuple"


def _element_type(shape: Shape | TupleShape) -> str:
    return shape.element_type if isinstance(shape, Shape) else "tuple"
