"""Proof and cost of a concrete tiling, by enumeration (``symidx tile ... --check``).

For every tiled instruction and the given tile sizes, the elements its tiles read over all
program ids (each tile: ``offset + stride * k`` for ``k < size`` per dimension, masked to
the instruction's shape) are compared with the elements the composed map reads over the
whole parameter space (its image). The tiling *covers* an instruction when every element
of the image is in some tile, and is *exact* when no tile reads an in-bounds element
outside the image. A runtime variable is ranged over its interval on both sides (the
statement holds for the union over its values). Enumeration runs under a deadline and a
point limit; hitting either leaves the instruction undecided (never a guess).

Costs per tiled instruction: the elements one tile spans (its footprint, also in bytes),
the elements all tiles read (with re-reads), the run of consecutive elements a tile row
reads along the layout's minor-most dimension, and the shared-memory verdict for a budget.
For every fused parameter (a load from memory), ``coalescing``: XLA's judgement of the
first warp's read of the first tile (:mod:`symidx.tiling.coalescing`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from math import prod
from typing import Any

from symidx.errors import TooLargeError
from symidx.hlo.facts import array_dims
from symidx.indexing_map import IndexingMap

__all__ = ["check_tiling", "check_text", "POINT_LIMIT"]

POINT_LIMIT = 4_000_000


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


def _image_blocks(m: IndexingMap, deadline: float) -> Iterator[tuple[Any, Any]]:
    """``m``'s points block by block (:class:`TimeoutError` past ``deadline``): the mask of
    those in the domain and, a row each, the coordinates they map to (None, and the last
    block, when ``m`` has no results)."""
    import numpy as np

    for values in m.points(limit=POINT_LIMIT):
        if time.monotonic() > deadline:
            raise TimeoutError
        results, mask = m.evaluate_arrays(list(values))
        if not results:
            yield mask, None
            return
        yield mask, np.stack([np.asarray(r)[mask] for r in results], axis=1)


def _image(m: IndexingMap, shape: Sequence[int], deadline: float) -> Any:
    import numpy as np

    parts = []
    for _, coords in _image_blocks(m, deadline):
        if coords is None:
            return np.zeros(1, dtype=np.int64)
        parts.append(_linear(coords, shape))
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


def _tiles(om: IndexingMap, sizes: Sequence[int], strides: Sequence[int],
           shape: Sequence[int], deadline: float) -> tuple[Any, int]:
    import numpy as np

    offsets_parts = []
    for mask, coords in _image_blocks(om, deadline):
        if coords is None:
            return np.zeros(1, dtype=np.int64), int(mask.sum()) if hasattr(mask, "sum") else 1
        offsets_parts.append(coords)
    offsets = np.unique(np.concatenate(offsets_parts), axis=0) if offsets_parts else \
        np.zeros((0, len(shape)), dtype=np.int64)
    if prod(sizes) * max(1, offsets.shape[0]) > POINT_LIMIT:
        raise TooLargeError("tiles too large to enumerate")
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


def check_tiling(t: Any, sizes: Sequence[int], deadline: float = 30.0,
                 smem: int | None = None, schedule: str = "major-to-minor") -> dict[str, Any]:
    """The proof and costs of ``sizes`` for the analysed fusion ``t`` (see the module
    docstring); ``ok`` when every instruction is covered exactly."""
    import numpy as np

    from symidx.tiling.analysis import tiled_computation

    stop = time.monotonic() + deadline
    results = tiled_computation(t, sizes, assume_satisfied=True, schedule=schedule)
    report: list[dict[str, Any]] = []
    ok, undecided = True, False
    footprint_total = 0
    for ti, r in zip(t.tiled, results):
        shape = list(array_dims(ti.instr.shape, ti.name))
        entry: dict[str, Any] = {"name": ti.name, "path": ti.path}
        esize = _bytes_per_element(ti.instr)
        footprint = prod(r.tile_sizes) if r.tile_sizes else 1
        entry.update({"tile_elements": footprint, "tile_bytes": footprint * esize})
        entry.update(_contiguity(ti.instr, r.tile_sizes, r.tile_strides, esize))
        if any(ti.instr is q for q in t.computation.parameters):
            entry["coalescing"] = _coalescing(r, ti.instr.shape)
        footprint_total += footprint * esize
        try:
            image = _image(ti.map, shape, stop)
            tiles, reads = _tiles(r.offsets_map, r.tile_sizes, r.tile_strides, shape, stop)
            missing = np.setdiff1d(image, tiles, assume_unique=True)
            extra = np.setdiff1d(tiles, image, assume_unique=True)
            entry.update({"covers": bool(missing.size == 0), "exact": bool(extra.size == 0),
                          "elements_read": reads, "distinct_elements": int(tiles.size),
                          "bytes_read": reads * esize})
            if missing.size:
                entry["first_missing"] = _unlinear(int(missing[0]), shape)
                ok = False
            if extra.size:
                entry["first_extra"] = _unlinear(int(extra[0]), shape)
                ok = False
        except (TimeoutError, TooLargeError) as e:
            entry["undecided"] = "deadline" if isinstance(e, TimeoutError) else str(e)
            undecided = True
        report.append(entry)
    out: dict[str, Any] = {"ok": ok and not undecided, "undecided": undecided,
                           "instructions": report,
                           "footprint_bytes": footprint_total,
                           "smem_bytes": _live_shared_bytes(t, results)}
    if smem is not None:
        out["smem_budget"] = smem
        out["fits_smem"] = out["smem_bytes"] <= smem
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
