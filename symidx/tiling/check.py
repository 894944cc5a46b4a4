"""Proof and cost of a concrete tiling, by enumeration (``symidx tile ... --check``).

A tile is a load plan: for each program id, each row (a range variable of its offsets map:
a gather's rows, one per index element) and each value of the runtime variables it loads
with, it must hold what that program id's output tile reads. ``covers`` is proven point by
point: every point of the instruction's composed map (a position of the tiling's parameter
space, a value of each range variable, a value of each runtime variable in its bounds) reads
an element that lies in the tile of the program id owning that position, at the row of that
position, loaded with that runtime value. A runtime value is a free variable here: the
statement holds for every value an index element may hold, one tile at a time (not the
union of the tiles over every value). ``exact``: no tile, over all program ids, rows and
runtime values, loads an in-bounds element that no point reads.

Limits count work: a budget of enumerated points (the same verdict on every machine) and
the process's CPU seconds; a wall-clock limit only when asked for. Hitting one leaves the
instruction undecided, saying which (never a guess).

Costs per tiled instruction: the elements one tile spans (its footprint, also in bytes),
the elements all tiles read (with re-reads), the run of consecutive elements a tile row
reads along the layout's minor-most dimension, and the shared-memory verdict for a budget.
For every fused parameter (a load from memory), ``coalescing``: XLA's judgement of the
first warp's read of the first tile (:mod:`symidx.tiling.coalescing`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from math import prod
from typing import Any

from symidx.core.indexing_map import IndexingMap, RuntimeVar
from symidx.core.interval import Interval
from symidx.errors import TooLargeError
from symidx.tiling.limits import BUDGET, Limits
from symidx.tiling.limits import LimitStop as _Stop

__all__ = ["check_tiling", "check_text", "POINT_LIMIT", "BUDGET", "Limits"]

POINT_LIMIT = 4_000_000     # most points one enumeration holds at once


def _bytes_per_element(instr: Any) -> int:
    text = str(instr.shape)
    table = {"pred": 1, "s8": 1, "u8": 1, "f8": 1, "bf16": 2, "f16": 2, "s16": 2, "u16": 2,
             "f32": 4, "s32": 4, "u32": 4, "f64": 8, "s64": 8, "u64": 8, "c64": 8,
             "c128": 16}
    for k in sorted(table, key=len, reverse=True):
        if text.startswith(k):
            return table[k]
    return 4


def _linear(coords: Any, shape: Sequence[int]) -> Any:
    import numpy as np

    lin = np.zeros(coords.shape[0], dtype=np.int64)
    for j, n in enumerate(shape):
        lin = lin * max(n, 1) + coords[:, j]
    return lin


def _blocks(m: IndexingMap, limits: Limits) -> Iterator[tuple[list[Any], Any, Any]]:
    """``m``'s points block by block, spending the budget: the variables' values, the mask
    of those in the domain and, a row each, the coordinates they map to (None, and one
    block, when ``m`` has no results)."""
    import numpy as np

    if m.domain_size() > limits.budget - limits.spent:
        raise _Stop(f"budget of {limits.budget} points")
    for values in m.points(limit=POINT_LIMIT):
        n = int(np.size(values[0])) if values else 1
        limits.spend(n)
        results, mask = m.evaluate_arrays(list(values))
        if not results:
            yield list(values), mask, None
            return
        yield list(values), mask, np.stack([np.asarray(r)[mask] for r in results], axis=1)


def _image(m: IndexingMap, shape: Sequence[int], limits: Limits) -> Any:
    import numpy as np

    parts = []
    for _, _, coords in _blocks(m, limits):
        if coords is None:
            return np.zeros(1, dtype=np.int64)
        parts.append(_linear(coords, shape))
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


def _tiles(om: IndexingMap, sizes: Sequence[int], strides: Sequence[int],
           shape: Sequence[int], limits: Limits) -> tuple[Any, int]:
    """The in-bounds elements of every tile (all program ids, rows and runtime values),
    and how many loads they make (re-reads included)."""
    import numpy as np

    offsets_parts = []
    for _, mask, coords in _blocks(om, limits):
        if coords is None:
            return np.zeros(1, dtype=np.int64), int(mask.sum()) if hasattr(mask, "sum") else 1
        offsets_parts.append(coords)
    offsets = np.unique(np.concatenate(offsets_parts), axis=0) if offsets_parts else \
        np.zeros((0, len(shape)), dtype=np.int64)
    n = prod(sizes) * max(1, offsets.shape[0])
    if n > POINT_LIMIT:
        raise _Stop(f"tiles of {n} elements, above the {POINT_LIMIT} enumerated at once")
    limits.spend(n)
    grids = np.meshgrid(*[np.arange(s, dtype=np.int64) * st for s, st in zip(sizes, strides)],
                        indexing="ij")
    steps = np.stack([g.reshape(-1) for g in grids], axis=1) if grids else \
        np.zeros((1, 0), dtype=np.int64)
    elems = (offsets[:, None, :] + steps[None, :, :]).reshape(-1, len(shape))
    inside = np.ones(elems.shape[0], dtype=bool)
    for j, n in enumerate(shape):
        inside &= (elems[:, j] >= 0) & (elems[:, j] < n)
    reads = int(inside.sum())
    return np.unique(_linear(elems[inside], shape)), reads


def _uncovered(t: Any, ti: Any, r: Any, sizes: Sequence[int], schedule: str,
               limits: Limits) -> list[int] | None:
    """The first element some point of ``ti``'s map reads that the tile of its program id,
    row and runtime values does not hold (None: every read is covered)."""
    import numpy as np

    from symidx.tiling.tiled import schedule_dims

    m = ti.map
    if m.num_results == 0:
        return None
    flat = t.flat_sizes
    order = schedule_dims(t, ti, schedule)
    counts = [-(-flat[p] // sizes[p]) for p in order]
    om = r.offsets_map
    nd, nr = m.num_dims, m.num_ranges
    if _shift_alike(m, om, r.rt_origins):
        # every runtime variable moves the read and the tile alike (and masks neither):
        # whether a read is in its tile does not depend on its value, one value decides
        m = m.replace(rts=tuple(RuntimeVar(Interval(v.bounds.lo, v.bounds.lo), v.source,
                                           v.map, v.clamped) for v in m.rts))
    for values, mask, _ in _blocks(m, limits):
        shape = np.broadcast_shapes(*(np.shape(v) for v in values)) if values else ()
        full = [np.broadcast_to(np.asarray(v, dtype=np.int64), shape) for v in values]
        reads, _ = m.evaluate_arrays(full)
        pid = np.zeros(shape, dtype=np.int64)
        for j, p in enumerate(order):
            pid = pid * counts[j] + full[p] // sizes[p]
        ranges = []
        for kind, j in r.range_origins:
            ranges.append(full[nd + j] if kind == "range" else full[j] % sizes[j])
        rts = [full[nd + nr + k] for k in r.rt_origins]
        offsets, has_tile = om.evaluate_arrays([pid] + ranges + rts)
        inside = has_tile.copy()
        for j, (size, stride) in enumerate(zip(r.tile_sizes, r.tile_strides)):
            diff = np.asarray(reads[j]) - np.asarray(offsets[j])
            if stride == 0:
                inside &= diff == 0
            else:
                q = np.floor_divide(diff, stride)
                inside &= (np.mod(diff, stride) == 0) & (q >= 0) & (q < size)
        bad = mask & ~inside
        if bad.any():
            at = int(np.flatnonzero(bad.reshape(-1))[0])
            return [int(np.asarray(x).reshape(-1)[at]) for x in reads]
    return None


def _shift_alike(m: IndexingMap, om: IndexingMap, rt_origins: Sequence[int]) -> bool:
    """Does each runtime variable appear only as the same additive term of a read's
    result and of its tile's offset (and in no constraint of either)?"""
    from symidx.core.expr import free_vars, rt, terms, var_kind

    if not m.num_rts:
        return False
    if any(var_kind(v) == "rt" for e, _ in list(m.constraints) + list(om.constraints)
           for v in free_vars(e)):
        return False
    to_om = {rt(k): rt(j) for j, k in enumerate(rt_origins)}
    if len(to_om) != m.num_rts:
        return False
    for a, b in zip(m.results, om.results):
        def rt_terms(e: Any, rename: dict[Any, Any] | None = None) -> dict[Any, int] | None:
            out: dict[Any, int] = {}
            for c, mono in terms(e):
                vs = free_vars(mono)
                if not any(var_kind(v) == "rt" for v in vs):
                    continue
                if not (mono.is_Symbol and var_kind(mono) == "rt"):
                    return None
                key = rename.get(mono, mono) if rename else mono
                out[key] = out.get(key, 0) + c
            return out
        ta, tb = rt_terms(a, to_om), rt_terms(b)
        if ta is None or tb is None or ta != tb:
            return False
    return True


def check_tiling(t: Any, sizes: Sequence[int], deadline: float = 60.0,
                 smem: int | None = None, schedule: str = "major-to-minor",
                 budget: int | None = None, wall_deadline: float | None = None
                 ) -> dict[str, Any]:
    """The proof and costs of ``sizes`` for the analysed fusion ``t`` (see the module
    docstring); ``ok`` when every instruction is covered exactly. ``deadline`` is in CPU
    seconds of this process, ``budget`` in enumerated points, ``wall_deadline`` (only when
    given) in seconds of wall-clock time."""

    from symidx.tiling.analysis import output_dims
    from symidx.tiling.tiled import tiled_computation

    limits = Limits(BUDGET if budget is None else budget, deadline, wall_deadline).start()
    results = tiled_computation(t, sizes, assume_satisfied=True, schedule=schedule,
                                enforce_concatenate=False)
    report: list[dict[str, Any]] = []
    ok, undecided = True, False
    footprint_total = 0
    for ti, r in zip(t.tiled, results):
        shape = list(output_dims(ti.instr))
        entry: dict[str, Any] = {"name": ti.name, "path": ti.path}
        esize = _bytes_per_element(ti.instr)
        footprint = prod(r.tile_sizes) if r.tile_sizes else 1
        entry.update({"tile_elements": footprint, "tile_bytes": footprint * esize})
        entry.update(_contiguity(ti.instr, r.tile_sizes, r.tile_strides, esize))
        if any(ti.instr is q for q in t.computation.parameters):
            entry["coalescing"] = _coalescing(r, ti.instr.shape)
        footprint_total += footprint * esize
        try:
            missing = _uncovered(t, ti, r, sizes, schedule, limits)
            entry["covers"] = missing is None
            if missing is not None:
                entry["first_missing"] = missing
                ok = False
            exact = _exactness(ti, r, shape, limits, esize)
            entry.update(exact)
            if exact.get("first_extra") is not None:
                ok = False
        except (_Stop, TooLargeError) as e:
            entry["undecided"] = str(e)
            undecided = True
        report.append(entry)
    out: dict[str, Any] = {"ok": ok and not undecided, "undecided": undecided,
                           "instructions": report,
                           "footprint_bytes": footprint_total,
                           "smem_bytes": _live_shared_bytes(t, results),
                           "points_enumerated": limits.spent}
    if smem is not None:
        out["smem_budget"] = smem
        out["fits_smem"] = out["smem_bytes"] <= smem
    return out


def _exactness(ti: Any, r: Any, shape: Sequence[int], limits: Limits, esize: int
               ) -> dict[str, Any]:
    """``exact`` (no tile loads an in-bounds element no point reads, over every runtime
    value) and the read counts. For a tile loaded at runtime values, when enumerating every
    value passes what is left of the budget, exactness is not judged (``exact`` None, with
    the reason): ``covers``, the load plan's soundness, was proven per value already."""
    import numpy as np

    points = ti.map.domain_size() + r.offsets_map.domain_size()
    big = ti.map.num_rts and (points > (limits.budget - limits.spent) // 2
                              or max(ti.map.domain_size(), r.offsets_map.domain_size())
                              > POINT_LIMIT)
    if big:
        return {"exact": None, "exact_undecided": "runtime values too many to enumerate "
                f"within the budget ({limits.budget} points)"}
    image = _image(ti.map, shape, limits)
    tiles, reads = _tiles(r.offsets_map, r.tile_sizes, r.tile_strides, shape, limits)
    extra = np.setdiff1d(tiles, image, assume_unique=True)
    out: dict[str, Any] = {"exact": bool(extra.size == 0), "elements_read": reads,
                           "distinct_elements": int(tiles.size), "bytes_read": reads * esize}
    if extra.size:
        out["first_extra"] = _unlinear(int(extra[0]), shape)
    return out


def _live_shared_bytes(t: Any, results: Sequence[Any]) -> int:
    """What one program id keeps live in shared memory at once: the distinct tiles of the
    fusion's parameters it loads (:func:`symidx.tiling.concrete.tile_shared_bytes`, the one
    definition ``--best --smem`` uses too), not the intermediates computed from them."""
    from symidx.tiling.concrete import tile_shared_bytes

    params = {id(p) for p in t.computation.parameters}
    seen: set[tuple[Any, ...]] = set()
    total = 0
    for ti, r in zip(t.tiled, results):
        if id(ti.instr) not in params:
            continue
        key = (ti.name, tuple(r.tile_sizes), tuple(r.tile_strides), str(r.offsets_map))
        if key in seen:
            continue
        seen.add(key)
        total += tile_shared_bytes(r.tile_sizes, getattr(ti.instr.shape, "bit_width", 32))
    return total


def _contiguity(instr: Any, sizes: Sequence[int], strides: Sequence[int], esize: int
                ) -> dict[str, Any]:
    """How a tile meets memory under the instruction's layout: the minor-most dimension and
    the run of consecutive elements one row of the tile reads there (its tile size when the
    stride is 1, else 1), in elements and bytes."""
    shape = instr.shape
    if not sizes or not hasattr(shape, "layout_or_default"):
        return {}
    minor = shape.layout_or_default.minor_to_major[0]
    run = sizes[minor] if abs(strides[minor]) == 1 else 1
    return {"minor_dim": minor, "contiguous_elements": run, "contiguous_bytes": run * esize}


def _coalescing(r: Any, shape: Any) -> dict[str, Any]:
    from symidx.errors import SymidxError
    from symidx.tiling.coalescing import tile_coalescing

    try:
        return tile_coalescing(r.offsets_map, r.tile_sizes, r.tile_strides, shape)
    except SymidxError as e:
        return {"coalesced": False, "reason": f"not judged: {e}", "map": ""}


def check_text(check: dict[str, Any]) -> list[str]:
    """The ``--check`` report as text lines."""
    verdict = "ok" if check["ok"] else ("undecided" if check["undecided"] else "NOT ok")
    lines = [f"check: {verdict}, footprint {check['footprint_bytes']} bytes per program id"
             f" (parameter tiles live in shared memory: {check['smem_bytes']} bytes)"
             + (f", fits smem {check['smem_budget']}: {check['fits_smem']}"
                if "smem_budget" in check else "")]
    for e in check["instructions"]:
        if "undecided" in e:
            proof = f"undecided ({e['undecided']})"
        elif e.get("exact") is None:
            proof = f"covers {e['covers']}, exact not judged ({e.get('exact_undecided')})"
        else:
            proof = (f"covers {e['covers']} exact {e['exact']}, {e['elements_read']} "
                     f"elements read ({e['bytes_read']} bytes)")
        line = (f"  {e['name']} ({e['path']}): {proof}; tile {e['tile_elements']} elements "
                f"({e['tile_bytes']} bytes)")
        if "contiguous_elements" in e:
            line += f", contiguous run {e['contiguous_elements']}"
        c = e.get("coalescing")
        if c is not None:
            line += ", coalesced" if c["coalesced"] else \
                f", not coalesced ({c.get('reason', '')})"
        lines.append(line)
    return lines


def _unlinear(lin: int, shape: Sequence[int]) -> list[int]:
    out = []
    for n in reversed(shape):
        out.append(lin % max(n, 1))
        lin //= max(n, 1)
    return out[::-1]
