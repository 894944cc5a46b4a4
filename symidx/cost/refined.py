"""What ``--objective symidx`` adds to XLA's tiled cost model: reads timed by the coalescing
symidx proves, and the shared-memory traffic of tiles a transpose stages, with its bank
conflicts. XLA's objective (the default) uses none of it.

**Coalescing** (:func:`contiguous_rate`). XLA's heuristic
(``BandwidthUtilizationRateHeuristicForTiledMemoryAccess``) counts the bytes a tile reads
contiguously, minor to major, while the tile's stride is 1 and each dimension whole, over
those bytes rounded up to the 64-byte DRAM transaction. A tile that reads its minor
dimension backwards (stride -1: the operand of a ``reverse``) reads the same consecutive
addresses, in the other order -- ``symidx tile --check`` proves its first warp coalesced --
but XLA counts one element (4 of 64 bytes for f32, a 16 times slower read). symidx counts
the run in either direction, and lets a dimension of extent 1 (whatever its stride) not
break it: the run is then the shortest maximal run of consecutive addresses the tile
reads (``tests/test_cost_refined.py`` checks it against the tile's enumerated addresses).

**Shared memory and banks** (:func:`staged_transposes`, :func:`smem_ticks`). A transpose
(or a copy to another layout) whose result's minor-most physical dimension is not its
operand's changes which dimension a warp's
lanes run along; a Triton kernel does that through shared memory (a layout conversion):
the operand's tile is written to a buffer in its own order (lanes along its minor
dimension) and read back in the result's (lanes along the result's minor dimension). symidx
models the buffer as the operand's tile, each dimension padded to a power of two, stored
in the operand's physical order with no padding or swizzle, and asks the bank model
(:func:`symidx.layout.banks.serve`: 32 banks of 4-byte words, lanes in phases by access
width; an AMD LDS on ROCm devices) how many wavefronts the first warp's write and read
take; every request of the tile is taken to conflict as the first (exact for
power-of-two tiles, whose requests are translates of the first). One wavefront is one SM
cycle of the shared-memory pipe, so the staged tiles cost ``sum over transposes of blocks
x requests x (write + read wavefronts)`` cycles, spread over ``min(blocks, SMs)`` SMs at
the device clock, added to the compute time before XLA combines compute and memory.

These are symidx's assumptions, not XLA's or Triton's (Triton may pad or swizzle such a
buffer, which removes the conflicts); they are there to compare tilings XLA's model sees as
equal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import prod
from typing import Any

import numpy as np

from symidx.cost.devices import Device
from symidx.cost.timing import TICKS_PER_SECOND
from symidx.layout import banks
from symidx.tiling.concrete import TileSet, TileValues, pow2_ceil

__all__ = ["contiguous_rate", "StagedTranspose", "staged_transposes", "bank_wavefronts",
           "smem_ticks"]


def contiguous_rate(sizes: Any, strides: Any, dims: tuple[int, ...], minor_to_major: Any,
                    elem_bytes: int, transaction: int) -> Any:
    """Per row: the bytes of a tile's runs of consecutive addresses (in either direction)
    over those bytes rounded up to the DRAM transaction (see the module docstring)."""
    n = sizes.shape[0]
    run = np.ones(n, dtype=np.int64)
    going = np.ones(n, dtype=bool)
    for d in minor_to_major:
        s = sizes[:, d]
        ok = going & ((np.abs(strides[:, d]) == 1) | (s == 1) | (dims[d] == 1))
        run = np.where(ok, run * np.minimum(s, dims[d]), run)
        going = ok & (s >= dims[d])
    nbytes = run * elem_bytes
    effective = transaction * (-(-nbytes // transaction))
    return nbytes / effective


@dataclass(frozen=True)
class StagedTranspose:
    """A transpose a Triton kernel stages in shared memory: the entry of its result's tile,
    its permutation, the operand's physical order (minor first) and the operand dimension
    the result's lanes run along."""

    entry: int
    name: str
    permutation: tuple[int, ...]
    operand_minor_to_major: tuple[int, ...]
    read_order: tuple[int, ...]          # operand dims, the result's minor first
    element_bits: int


def staged_transposes(ts: TileSet) -> list[StagedTranspose]:
    """The transposes of the fusion that change the minor-most physical dimension, and the
    copies that do (a copy to another layout is a physical transpose; see the module
    docstring)."""
    out = []
    for k, e in enumerate(ts.entries):
        instr = e.instr
        if e.kind != "inside" or instr.opcode not in ("transpose", "copy") or not e.rank:
            continue
        perm = tuple(int(x) for x in (instr.dimensions or ())) \
            if instr.opcode == "transpose" else tuple(range(e.rank))
        op_shape: Any = instr.operands[0].shape
        res_shape: Any = instr.shape
        if len(perm) != e.rank or not hasattr(op_shape, "layout_or_default") or \
                not hasattr(res_shape, "layout_or_default"):
            continue
        op_mtm = tuple(op_shape.layout_or_default.minor_to_major)
        res_mtm = tuple(res_shape.layout_or_default.minor_to_major)
        read_order = tuple(perm[d] for d in res_mtm)
        if read_order[0] == op_mtm[0]:
            continue
        out.append(StagedTranspose(k, instr.name, perm, op_mtm, read_order,
                                   int(getattr(op_shape, "bit_width", 32))))
    return out


def _machine(dev: Device) -> Any:
    return banks.AMD_LDS_CDNA3 if dev.platform == "rocm" else banks.NVIDIA_SMEM


@lru_cache(maxsize=4096)
def bank_wavefronts(tile: tuple[int, ...], order_minor: tuple[int, ...],
                    lanes_minor: tuple[int, ...], element_bits: int, machine_name: str
                    ) -> tuple[int, int]:
    """The wavefronts (SM cycles) of the first request of a warp whose lanes take the
    elements of a ``tile`` (stored unpadded, dimension ``order_minor[0]`` fastest) in the
    order ``lanes_minor`` (the dimension lanes run along first), and the phases that
    request has without conflicts."""
    machine = banks.MACHINES[machine_name]
    lanes = min(machine.lanes, prod(tile))
    lane = np.arange(lanes, dtype=np.int64)
    coord = {}
    rest = lane
    for d in lanes_minor:
        coord[d] = rest % tile[d]
        rest = rest // tile[d]
    offset = np.zeros(lanes, dtype=np.int64)
    pitch = 1
    for d in order_minor:
        offset = offset + coord[d] * pitch
        pitch *= tile[d]
    per_phase = machine.lanes_per_phase(-(-element_bits // 8))
    requests = [[(int(i), [int(offset[i])]) for i in range(p, min(p + per_phase, lanes))]
                for p in range(0, lanes, per_phase)]
    report = banks.serve(requests, element_bits, machine)
    return report.wavefronts, report.ideal


def smem_ticks(ts: TileSet, vals: TileValues, dev: Device,
               staged: Sequence[StagedTranspose]) -> tuple[Any, list[dict[str, Any]]]:
    """Per row: the time (ticks) of the staged tiles' shared-memory traffic, and per staged
    transpose its figures (arrays over rows: wavefronts per request written and read, the
    conflict-free count, requests per tile)."""
    n = vals.n
    machine = _machine(dev)
    cycles = np.zeros(n, dtype=np.float64)
    details = []
    for st in staged:
        k = st.entry
        res = pow2_ceil(vals.sizes[k])                      # (n, rank): result tile, padded
        op = np.empty_like(res)
        for j, d in enumerate(st.permutation):
            op[:, d] = res[:, j]
        shapes, inverse = np.unique(op, axis=0, return_inverse=True)
        inverse = np.asarray(inverse).reshape(-1)
        write = np.empty(len(shapes), dtype=np.int64)
        read = np.empty(len(shapes), dtype=np.int64)
        ideal = np.empty(len(shapes), dtype=np.int64)
        for u, shape in enumerate(shapes):
            tile = tuple(int(x) for x in shape)
            write[u], ideal[u] = bank_wavefronts(tile, st.operand_minor_to_major,
                                                 st.operand_minor_to_major, st.element_bits,
                                                 machine.name)
            read[u], _ = bank_wavefronts(tile, st.operand_minor_to_major, st.read_order,
                                         st.element_bits, machine.name)
        requests = -(-np.prod(op, axis=1) // machine.lanes)
        w, r, i = write[inverse], read[inverse], ideal[inverse]
        alive = vals.alive[k]
        cycles += np.where(alive, vals.blocks[k] * requests * (w + r), 0)
        details.append({"name": st.name, "entry": k, "write_wavefronts": w, "read_wavefronts": r,
                        "ideal_wavefronts": i, "requests": requests})
    sms = np.minimum(np.asarray(vals.num_blocks, dtype=np.int64), dev.core_count)
    with np.errstate(divide="ignore", invalid="ignore"):
        seconds = cycles / (np.maximum(sms, 1) * dev.clock_rate_ghz * 1e9)
    return np.round(seconds * TICKS_PER_SECOND).astype(np.int64), details
