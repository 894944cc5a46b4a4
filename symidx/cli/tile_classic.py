"""``symidx tile FILE.hlo --fusion PRODUCER --cost --model classic``: XLA's classic per-kernel
GPU performance model (:mod:`symidx.cost.classic`) on a producer and, optionally, the
consumers it would be fused into.

    symidx tile F.hlo --fusion PRODUCER --cost --model classic [--consumers C1,C2]
                [--multi-output] [--computation COMP] --device D [--format json]

The document gives ``time_unfused_us`` (a launch per kernel plus each kernel's time),
``time_fused_us`` (with consumers: a launch per consumer plus each fused kernel), and the
producer's own kernel: ``exec_time_us``, ``compute_time_us``, ``read_time_us``,
``write_time_us``, ``memory_access_time_us``, ``end_to_end_cycles``, with its flops, bytes,
emitter and launch dimensions; ``kernels`` holds every kernel priced. An instruction the
model cannot price exits 2 with one located line.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from symidx.cli.common import UsageError
from symidx.cli.tile_emit import emit
from symidx.errors import SymidxError

__all__ = ["add_arguments", "wants_classic", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The classic model's options of ``symidx tile`` (``--cost`` and ``--device`` only
    when no other part of the command defines them)."""
    p.add_argument("--model", choices=("tiled", "classic"),
                   help="with --cost: the tiled model (default) or XLA's classic "
                        "per-kernel model (GpuPerformanceModel)")
    p.add_argument("--consumers",
                   help="with --model classic: the consumers to fuse --fusion into, "
                        "comma-separated")
    p.add_argument("--multi-output", action="store_true",
                   help="with --model classic: a multi-output fusion with the one consumer "
                        "(the fused kernel still writes the producer's output)")
    p.add_argument("--computation",
                   help="with --model classic: the computation holding --fusion "
                        "(default: the entry computation)")
    for flags, kwargs in ((("--cost",), {"action": "store_true",
                                         "help": "the cost of the fusion on --device"}),
                          (("--device",), {"help": "the GPU to price on (e.g. rtx-a6000)"})):
        with contextlib.suppress(argparse.ArgumentError):  # the tiled model's, if defined
            p.add_argument(*flags, **kwargs)  # type: ignore[arg-type]


def wants_classic(args: argparse.Namespace) -> bool:
    return getattr(args, "model", None) == "classic"


def run(args: argparse.Namespace) -> int:
    from symidx.cli.inputs import load_module

    if not args.cost:
        raise UsageError("symidx tile: --model classic prices with --cost")
    if not args.fusion:
        raise UsageError("symidx tile: --model classic needs --fusion PRODUCER")
    consumers_named = [c.strip() for c in (args.consumers or "").split(",") if c.strip()]
    if args.multi_output and len(consumers_named) != 1:
        raise UsageError("symidx tile: --multi-output takes exactly one consumer")
    module = load_module(args.input)
    comp = module.computation(args.computation) if args.computation else module.entry
    producer = comp.instruction(args.fusion)
    consumers = [comp.instruction(name) for name in consumers_named]
    for consumer in consumers:
        if not any(op is producer or (op.opcode == "get-tuple-element"
                                      and op.operands[0] is producer)
                   for op in consumer.operands):
            raise SymidxError(_located(consumer, f"{consumer.name} does not use "
                                                 f"{producer.name}"))
    device = _device(args.device)
    doc = _price(device, comp, producer, consumers, args.multi_output)
    emit(doc, args.format, _text(doc))
    return 0


def _device(name: str | None) -> Any:
    from symidx.cost.devices import device

    return device(name or "rtx-a6000")


def _price(device: Any, comp: Any, producer: Any, consumers: list[Any],
           multi_output: bool) -> dict[str, Any]:
    from symidx.cost.classic import ClassicModel
    from symidx.cost.hlo_cost import UnsupportedByCostModel
    from symidx.cost.numbers import ticks_to_us

    try:
        model = ClassicModel(device, comp)
        times = (model.multi_output_run_times(producer, consumers[0]) if multi_output
                 else model.run_times(producer, consumers))
    except UnsupportedByCostModel as e:
        raise SymidxError(_located(e.instr, str(e)) if e.instr is not None else str(e)) \
            from None
    kernel = times.producer.to_json(device)
    doc: dict[str, Any] = {
        "model": "classic", "device": getattr(device, "key", "") or device.name,
        "producer": producer.name, "consumers": [c.name for c in consumers],
        "multi_output": multi_output,
        "time_unfused_us": ticks_to_us(times.time_unfused),
        "time_fused_us": ticks_to_us(times.time_fused) if consumers else None,
    }
    for key in ("exec_time_us", "compute_time_us", "read_time_us", "write_time_us",
                "memory_access_time_us", "end_to_end_cycles", "flops", "bytes_read",
                "bytes_written", "emitter", "blocks", "threads_per_block"):
        doc[key] = kernel.get(key)
    doc["kernels"] = {
        "producer": kernel,
        "consumers": [dict(name=c.name, **d.to_json(device))
                      for c, d in zip(consumers, times.consumers, strict=True)],
        "fused": [dict(name=f"{producer.name}+{c.name}", **d.to_json(device))
                  for c, d in zip(consumers, times.fused, strict=True)],
    }
    return doc


def _located(instr: Any, message: str) -> str:
    """``FILE:LINE:COLUMN: message`` for an instruction read from text."""
    document = instr.document
    if document is None:
        return message
    offset = instr.offset_of()
    column = offset - document.text.rfind("\n", 0, offset)
    where = f"{document.source}:" if document.source else ""
    return f"{where}line {instr.line}, column {column}: {message}"


def _text(doc: dict[str, Any]) -> str:
    def us(x: float | None) -> str:
        return "inf" if x is None else f"{x:.3f} us"

    lines = [f"classic model on {doc['device']}: {doc['producer']}"
             + (f" -> {', '.join(doc['consumers'])}" if doc["consumers"] else "")]
    kernels = doc["kernels"]
    rows = [(doc["producer"], kernels["producer"])]
    rows += [(k["name"], k) for k in kernels["consumers"]]
    rows += [(k["name"] + " (fused)", k) for k in kernels["fused"]]
    for name, k in rows:
        lines.append(f"  {name}: {k.get('emitter')} ({k.get('emitter_detail')}), "
                     f"{k.get('blocks')} blocks x {k.get('threads_per_block')} threads")
        lines.append(f"    exec {us(k['exec_time_us'])} = compute {us(k['compute_time_us'])}"
                     f" | read {us(k['read_time_us'])} + write {us(k['write_time_us'])};"
                     f" {k['flops']} flops, {k['bytes_read']} B read, "
                     f"{k['bytes_written']} B written"
                     + ("" if k.get("coalesced", True) else ", reads not coalesced"))
    lines.append(f"  unfused {us(doc['time_unfused_us'])}"
                 + (f", fused {us(doc['time_fused_us'])}" if doc["consumers"] else ""))
    return "\n".join(lines)
