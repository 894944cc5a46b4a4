"""XLA's tiled (indexing) cost model, ``GpuPerformanceModelWithIndexingAnalysis``, on the
concrete tiles of :mod:`symidx.tiling.concrete`, for many tilings at once.

For a tiling with ``N`` output tiles (blocks), each tiled instruction ``t`` evaluated by
``B_t`` blocks (``N``, times a dot's ``ceil(K / k)`` for the dot's operands, times a
concatenate operand's share; XLA's ``GetNumBlocksForRegion``):

* **flops**: ``sum_t flops_per_element(t) * padded(t) * B_t`` over the instructions inside
  the fusion (``padded``: every tile dimension rounded up to a power of two; see
  :mod:`symidx.cost.flops`); a dot's flops are reported but its time is the dot model's
  (:mod:`symidx.cost.dot`);
* **bytes read**: per fusion operand, ``sum_t size(t) * B_t * prod_i min(tile_i, dim_i)``
  (masked padding is not read);
* **read time** per operand: ``ReadTimeWithDRAMHeuristic`` with net bytes ``min(operand
  size, bytes)``, at the worst coalescing rate of its tiles (:func:`coalescing_rate`);
* **bytes written**: the roots' sizes; **write time**: each root's bytes over the
  bandwidth times its tile's coalescing rate;
* **compute time**: ``ComputeTime(flops, N, warps x 32)`` plus the dots' compute times;
  **exec time**: ``combine(compute, read + write)``, at least the slowest dot's time;
* **infinite** when a root, operand or iota tile, padded, needs more than 40% of the
  registers of a block (register spill);
* **estimated warps**: 1, 2, 4 or 8 for the largest padded tile up to 256, 1024, 4096, or
  beyond.

:func:`cost_arrays` computes every figure as arrays over the rows of a
:class:`~symidx.tiling.concrete.TileValues`; :func:`tiling_cost` is one tiling's
:class:`TiledCost`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np

from symidx._display import Rich, Shown, html_table
from symidx.cost.constants import FRACTION_OF_REGISTERS_FOR_TILES, NUM_WARPS_THRESHOLDS
from symidx.cost.devices import Device
from symidx.cost.dot import dot_estimate
from symidx.cost.flops import UnmodelledOp, flops_per_element
from symidx.cost.refined import contiguous_rate, smem_ticks, staged_transposes
from symidx.cost.timing import (
    TICKS_PER_US,
    combine,
    compute_time,
    read_time,
    write_time,
)
from symidx.tiling.concrete import TileSet, TileValues, pow2_ceil

__all__ = ["TiledCost", "cost_arrays", "tiling_cost", "coalescing_rate", "num_warps_for",
           "padded_sizes"]

_BYTES = {"pred": 1, "s4": 1, "u4": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2,
          "bf16": 2, "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8,
          "c128": 16}


def element_bytes(shape: Any) -> int:
    """``ShapeUtil::ByteSizeOfPrimitiveType`` of an array shape's element type."""
    if hasattr(shape, "elements"):
        return element_bytes(shape.elements[0])
    et = str(shape.element_type)
    if et in _BYTES:
        return _BYTES[et]
    return max(1, shape.bit_width // 8)


def shape_bytes(shape: Any) -> int:
    """The byte size of a shape, summed over a tuple's leaves."""
    if hasattr(shape, "elements"):
        return sum(shape_bytes(s) for s in shape.elements)
    return element_bytes(shape) * prod(shape.dims)


def num_warps_for(largest_padded_tile: Any) -> Any:
    """XLA's ``GetNumWarps`` (elementwise over an array)."""
    x = np.asarray(largest_padded_tile, dtype=np.int64)
    out = np.full(x.shape, NUM_WARPS_THRESHOLDS[-1][1], dtype=np.int64)
    for bound, warps in reversed(NUM_WARPS_THRESHOLDS[:-1]):
        assert bound is not None
        out = np.where(x <= bound, warps, out)
    return out


def padded_sizes(sizes: Any) -> Any:
    """The number of elements of each row's tile, every dimension a power of two."""
    if sizes.shape[1] == 0:
        return np.ones(sizes.shape[0], dtype=np.int64)
    return np.prod(pow2_ceil(sizes), axis=1)


def coalescing_rate(sizes: Any, strides: Any, dims: tuple[int, ...], minor_to_major: Any,
                    elem_bytes: int, transaction: int) -> Any:
    """XLA's ``BandwidthUtilizationRateHeuristicForTiledMemoryAccess`` per row: the bytes a
    tile reads contiguously (minor to major while the stride is 1, each dimension capped at
    its extent, stopping after the first dimension the tile does not cover) over those
    bytes rounded up to the DRAM-to-L2 transaction."""
    n = sizes.shape[0]
    contiguous = np.ones(n, dtype=np.int64)
    going = np.ones(n, dtype=bool)
    for d in minor_to_major:
        going &= strides[:, d] == 1
        contiguous = np.where(going, contiguous * np.minimum(sizes[:, d], dims[d]),
                              contiguous)
        going &= sizes[:, d] >= dims[d]
    nbytes = contiguous * elem_bytes
    effective = transaction * (-(-nbytes // transaction))
    return nbytes / effective


@dataclass
class TiledCost(Rich):
    """One tiling's cost on one device (XLA's ``EstimateRunTimeData``, with the tiling)."""

    device: str
    variant: str
    tiling: tuple[int, ...]
    output_tile_sizes: list[list[int]]
    num_warps: int
    estimated_num_warps: int
    num_stages: int
    num_blocks: int
    bytes_read: int | None
    bytes_written: int | None
    flops: int | None
    read_time_us: float | None
    write_time_us: float | None
    compute_time_us: float | None
    exec_time_us: float | None
    is_infinite: bool
    operands: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    objective: str = "xla"
    xla_compatible: bool | None = None      # set by a search that departs from XLA's pick
    xla_pick: dict[str, Any] | None = None
    #: the symidx objective's shared-memory time, and per staged transpose its bank figures
    smem_time_us: float | None = None
    shared_memory: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out = self._json()
        if self.objective != "xla":
            out["objective"] = self.objective
            out["smem_time_us"] = self.smem_time_us
            out["shared_memory"] = self.shared_memory
        if self.xla_compatible is not None:
            out["xla_compatible"] = self.xla_compatible
        if self.xla_pick is not None:
            out["xla_pick"] = self.xla_pick
        return out

    def _json(self) -> dict[str, Any]:
        return {"device": self.device, "tiler": self.variant, "tiling": list(self.tiling),
                "output_tile_sizes": self.output_tile_sizes, "num_warps": self.num_warps,
                "estimated_num_warps": self.estimated_num_warps,
                "num_stages": self.num_stages, "num_blocks": self.num_blocks,
                "bytes_read": self.bytes_read, "bytes_written": self.bytes_written,
                "flops": self.flops, "read_time_us": self.read_time_us,
                "write_time_us": self.write_time_us,
                "compute_time_us": self.compute_time_us,
                "exec_time_us": self.exec_time_us, "is_infinite": self.is_infinite,
                "operands": self.operands, "notes": self.notes}

    def text(self) -> str:
        if self.is_infinite:
            head = "exec time: infinite (a tile would spill registers)"
        else:
            head = (f"exec time {self.exec_time_us:.4g} us (compute {self.compute_time_us:.4g},"
                    f" read {self.read_time_us:.4g}, write {self.write_time_us:.4g})")
        return "\n".join([
            f"tiling {list(self.tiling)} on {self.device} ({self.variant}"
            f"{'' if self.objective == 'xla' else ', objective ' + self.objective}): output tiles "
            f"{self.output_tile_sizes}, {self.num_blocks} blocks, {self.num_warps} warps "
            f"(estimated {self.estimated_num_warps})",
            head,
            f"bytes read {self.bytes_read}, written {self.bytes_written}, flops {self.flops}",
        ] + [f"  operand {o['name']}: {o['bytes_read']} bytes, coalescing rate "
             f"{o['coalescing_rate']:.4g}, read {o['read_time_us']:.4g} us"
             for o in self.operands] + [
            f"  shared memory: {_fmt(self.smem_time_us)} us, in compute"
            for _ in [0] if self.smem_time_us is not None and self.shared_memory] + [
            f"    {m['name']} staged: {m['requests']} warp requests per tile, "
            f"{m['write_wavefronts']} wavefronts to write and {m['read_wavefronts']} to read "
            f"each (conflict-free: {m['ideal_wavefronts']})" for m in self.shared_memory
        ] + [f"note: {n}" for n in self.notes])

    def _shown_(self) -> Shown:
        """Two tables: the figures, and each operand's reads (and, under the symidx
        objective, each staged transpose's bank figures)."""
        figures = [("device", self.device), ("tiler", self.variant),
                   ("objective", self.objective),
                   ("output tiles", self.output_tile_sizes), ("blocks", self.num_blocks),
                   ("warps (estimated)", f"{self.num_warps} ({self.estimated_num_warps})"),
                   ("bytes read", self.bytes_read), ("bytes written", self.bytes_written),
                   ("flops", self.flops),
                   ("read time (µs)", _fmt(self.read_time_us)),
                   ("write time (µs)", _fmt(self.write_time_us)),
                   ("compute time (µs)", _fmt(self.compute_time_us)),
                   ("exec time (µs)", "∞" if self.is_infinite else _fmt(self.exec_time_us))]
        if self.smem_time_us is not None:
            figures.append(("shared-memory time (µs)", _fmt(self.smem_time_us)))
        out = html_table(["", "tiled cost"], figures)
        if self.operands:
            out += "\n" + html_table(
                ["operand", "bytes read", "coalescing", "read µs"],
                [(o["name"], o["bytes_read"], f"{o['coalescing_rate']:.4g}",
                  _fmt(o["read_time_us"])) for o in self.operands])
        if self.shared_memory:
            out += "\n" + html_table(
                ["staged", "requests per tile", "write wavefronts", "read wavefronts",
                 "conflict-free"],
                [(m["name"], m["requests"], m["write_wavefronts"], m["read_wavefronts"],
                  m["ideal_wavefronts"]) for m in self.shared_memory])
        return Shown(self.text(), out)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


class _Static:
    """What the model needs per entry that does not depend on the tiling."""

    def __init__(self, ts: TileSet, dev: Device):
        self.flops: list[int] = []
        self.bytes: list[int] = []
        self.mtm: list[tuple[int, ...]] = []
        self.notes: list[str] = []
        #: the transposes a kernel stages in shared memory (the symidx objective)
        self.staged = staged_transposes(ts)
        #: who uses each instruction of the fusion (the dot model looks for a transpose)
        self.users: dict[int, list[Any]] = {}
        seen: set[int] = set()
        for e in ts.entries:
            if e.kind != "inside" or id(e.instr) in seen:
                continue
            seen.add(id(e.instr))
            for o in e.instr.operands:
                self.users.setdefault(id(o), []).append(e.instr)
        for e in ts.entries:
            shape = e.instr.shape
            leaf = shape.elements[0] if hasattr(shape, "elements") else shape
            self.bytes.append(element_bytes(leaf))
            self.mtm.append(tuple(leaf.layout_or_default.minor_to_major)
                            if hasattr(leaf, "layout_or_default") else ())
            if e.kind != "inside" or e.instr.opcode == "fusion":
                # a nested fusion's own instructions are tiles of their own
                self.flops.append(0)
                continue
            try:
                self.flops.append(flops_per_element(e.instr, dev))
            except UnmodelledOp as err:
                self.flops.append(0)
                if str(err) not in self.notes:
                    self.notes.append(f"{err}: counted as 0 flops")


OBJECTIVES = ("xla", "symidx")


def cost_arrays(ts: TileSet, vals: TileValues, dev: Device, num_warps: Any = None,
                num_stages: Any = 1, static: Any = None, objective: str = "xla",
                tma: bool = False) -> dict[str, Any]:
    """Every figure of the model for every row of ``vals`` (numpy arrays; times in ticks).
    ``num_warps`` None: the estimated warps (as XLA's search times each tiling);
    ``num_stages`` and ``tma`` (TMA allowed) reach only the dot model.

    ``objective="symidx"`` times each read of an operand at its own tile's coalescing rate
    (its share of the operand's first-touch bytes from DRAM, the rest re-read), where XLA
    times all of an operand's reads at the worst rate among them (which its own comment
    calls more pessimistic than it needs to be); counts contiguous runs in either
    direction (:func:`symidx.cost.refined.contiguous_rate`); and adds the shared-memory
    time of the tiles transposes stage, bank conflicts included
    (:func:`symidx.cost.refined.smem_ticks`); everything else is XLA's."""
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}")
    st = static or _Static(ts, dev)
    rate_of = coalescing_rate if objective == "xla" else contiguous_rate
    n = vals.n
    N = vals.num_blocks
    limit = FRACTION_OF_REGISTERS_FOR_TILES * dev.registers_per_block_limit
    infinite = np.zeros(n, dtype=bool)
    largest = np.ones(n, dtype=np.int64)
    flops = np.zeros(n, dtype=np.int64)
    dot_flops = np.zeros(n, dtype=np.int64)
    dot_compute = np.zeros(n, dtype=np.int64)
    dot_exec = np.zeros(n, dtype=np.int64)
    op_total: dict[int, Any] = {}
    op_rate: dict[int, Any] = {}
    op_parts: dict[int, list[tuple[Any, Any]]] = {}
    op_instr: dict[int, Any] = {}
    write = np.zeros(n, dtype=np.int64)
    bytes_written = 0
    roots_seen: set[int] = set()
    dots: list[tuple[int, Any]] = []
    for k, e in enumerate(ts.entries):
        alive = vals.alive[k]
        sizes, strides, blocks = vals.sizes[k], vals.strides[k], vals.blocks[k]
        padded = padded_sizes(sizes)
        largest = np.where(alive, np.maximum(largest, padded), largest)
        if e.root is not None:
            infinite |= padded > limit
        if e.kind == "operand" or e.instr.opcode == "iota":
            infinite |= alive & (padded > limit)
        if e.root is not None and e.root not in roots_seen:
            roots_seen.add(e.root)
            nbytes = shape_bytes(e.instr.shape)
            bytes_written += nbytes
            rate = rate_of(sizes, strides, e.dims, st.mtm[k], st.bytes[k],
                           dev.dram_to_l2_transaction_size_bytes)
            write = write + write_time(dev, nbytes, rate)
        if e.kind == "operand":
            elems = blocks.copy()
            for j in range(e.rank):
                elems = elems * np.minimum(sizes[:, j], e.dims[j])
            nb = np.where(alive, elems * st.bytes[k], 0)
            key = id(e.instr)
            op_instr[key] = e.instr
            op_total[key] = op_total.get(key, 0) + nb
            rate = rate_of(sizes, strides, e.dims, st.mtm[k], st.bytes[k],
                           dev.dram_to_l2_transaction_size_bytes)
            rate = np.where(alive, rate, 1.0)
            op_rate[key] = np.minimum(op_rate.get(key, 1.0), rate)
            op_parts.setdefault(key, []).append((nb, rate))
        elif e.kind == "inside":
            f = np.where(alive, st.flops[k] * padded * blocks, 0)
            if e.dot is not None:
                dots.append((k, f))
                continue
            flops = flops + f
    est_warps = num_warps_for(largest)
    warps = est_warps if num_warps is None else np.broadcast_to(
        np.asarray(num_warps, dtype=np.int64), (n,))
    for k, f in dots:
        alive = vals.alive[k]
        est = _dot(ts, vals, k, dev, warps, num_stages, tma, st.users)
        if est is None:
            flops = flops + f
            continue
        dot_flops = dot_flops + f
        dot_compute = dot_compute + np.where(alive, est.compute_ticks, 0)
        dot_exec = np.maximum(dot_exec, np.where(alive, est.exec_ticks, 0))
    read = np.zeros(n, dtype=np.int64)
    bytes_read = np.zeros(n, dtype=np.int64)
    per_operand = []
    for key, total in op_total.items():
        instr = op_instr[key]
        net = np.minimum(shape_bytes(instr.shape), total)
        if objective == "xla":
            t = read_time(dev, N, net, total, op_rate[key])
        else:
            t = np.zeros(n, dtype=np.int64)
            safe = np.maximum(total, 1)
            for nb, rate in op_parts[key]:
                share = (net * nb) // safe          # this read's share of the first touch
                t = t + read_time(dev, N, share, nb, rate)
        read = read + t
        bytes_read = bytes_read + total
        per_operand.append((instr.name, total, op_rate[key], t))
    compute = compute_time(dev, flops, N, warps * dev.threads_per_warp) + dot_compute
    smem: Any = None
    staged: list[dict[str, Any]] = []
    if objective == "symidx":
        smem, staged = smem_ticks(ts, vals, dev, st.staged)
        compute = compute + smem
    exec_ = np.maximum(combine(compute, read + write), dot_exec)
    return {"num_blocks": N, "infinite": infinite, "flops": flops + dot_flops,
            "smem": smem, "staged": staged,
            "bytes_read": bytes_read, "bytes_written": np.full(n, bytes_written),
            "read": read, "write": np.broadcast_to(write, (n,)), "compute": compute,
            "exec": exec_, "estimated_num_warps": est_warps, "num_warps": warps,
            "operands": per_operand, "notes": st.notes}


def _dot(ts: TileSet, vals: TileValues, k: int, dev: Device, warps: Any, stages: Any,
         tma: bool, users: Any) -> Any:
    """The dot model for entry ``k``: its output tile, and its contracting tile (the tile of
    its lhs along the contracting dimension: the contracting parameter)."""
    e = ts.entries[k]
    if e.dot is None or len(e.dot.params) != 1:
        return None
    tk = vals.tilings[:, e.dot.params[0]]
    return dot_estimate(e.instr, vals.sizes[k], tk, dev, num_warps=warps, num_stages=stages,
                        tma=tma, users=users)


def tiling_cost(ts: TileSet, tiling: Any, dev: Device, num_warps: int | None = None,
                num_stages: int = 1, objective: str = "xla", tma: bool = False) -> TiledCost:
    """The cost of one tiling (flat tile sizes in the tile set's parameter order)."""
    vals = ts.one(list(tiling))
    a = cost_arrays(ts, vals, dev, num_warps, num_stages, objective=objective, tma=tma)
    inf = bool(a["infinite"][0])

    def us(key: str) -> float | None:
        return None if inf else float(a[key][0]) / TICKS_PER_US

    out_tiles = root_tiles(ts, vals, 0)
    smem_us = None if inf or a["smem"] is None else float(a["smem"][0]) / TICKS_PER_US
    shared = [{"name": d["name"], "requests": int(d["requests"][0]),
               "write_wavefronts": int(d["write_wavefronts"][0]),
               "read_wavefronts": int(d["read_wavefronts"][0]),
               "ideal_wavefronts": int(d["ideal_wavefronts"][0])}
              for d in a["staged"] if vals.alive[d["entry"]][0]]
    operands = [] if inf else [
        {"name": name, "bytes_read": int(total[0]), "coalescing_rate": float(rate[0]),
         "read_time_us": float(t[0]) / TICKS_PER_US}
        for name, total, rate, t in a["operands"]]
    return TiledCost(
        dev.key, ts.variant, tuple(int(x) for x in tiling), out_tiles,
        int(a["num_warps"][0]), int(a["estimated_num_warps"][0]), num_stages,
        int(a["num_blocks"][0]),
        None if inf else int(a["bytes_read"][0]), None if inf else int(a["bytes_written"][0]),
        None if inf else int(a["flops"][0]), us("read"), us("write"), us("compute"),
        us("exec"), inf, operands, list(a["notes"]), objective,
        smem_time_us=smem_us, shared_memory=shared)


def root_tiles(ts: TileSet, vals: TileValues, row: int) -> list[list[int]]:
    """The output tile of each root in one row (the first tile found for it)."""
    out: dict[int, list[int]] = {}
    for k, e in enumerate(ts.entries):
        if e.root is not None and e.root not in out:
            out[e.root] = [int(x) for x in vals.sizes[k][row]]
    return [out[r] for r in sorted(out)]
