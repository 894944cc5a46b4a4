"""The best tiling of a fusion on a device (XLA's ``TryFindBestTilingForFusion``), and the
runners-up.

Every candidate tiling is costed with its estimated warps; those that violate the
constraints (the analysis' own and, with ``emitter="triton"``, Triton's:
:mod:`symidx.tiling.emitter`) or spill registers (infinite cost) are dropped, and the
lowest execution time wins. Ties go to the tiling XLA meets first: XLA enumerates the
candidates per parameter (powers of two below the extent, then the extent) in
lexicographic order, the first parameter slowest, and keeps the first of equal times
(a stable sort), so among equal times the lexicographically smallest tiling wins.

* **Legacy** (``SymbolicTileAnalysis``): the candidates are the analysis' valid tilings,
  generated per constraint group and multiplied out in chunks (never listed one by one):
  a fusion of rank 12 is costed in vectorised chunks of :data:`CHUNK` tilings.
* **Experimental** (``TilingSpace``): every dimension of the space takes the candidates
  (a reduction's dimension its whole extent), each tile size padded to a power of two.

``smem``: a hard limit on what one block keeps live in shared memory at once, the tiles of
the fusion's parameters it loads (:func:`symidx.tiling.concrete.live_shared_bytes`).

The search is bounded by work: at most ``max_tilings`` tilings and ``cpu_seconds`` of
process CPU time; past either it stops and says how far it got (``complete`` False).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np

from symidx._display import Rich, Shown, html_table
from symidx.cost.devices import Device
from symidx.cost.tiled import TiledCost, _Static, cost_arrays, root_tiles, tiling_cost
from symidx.cost.timing import TICKS_PER_US
from symidx.errors import SymidxError
from symidx.tiling.concrete import TileSet, live_shared_bytes, pow2_ceil
from symidx.tiling.emitter import OK, TritonConstraints
from symidx.tiling.valid import candidates, group_solutions

__all__ = ["SearchResult", "best_tilings", "CHUNK", "candidate_chunks", "Ranking",
           "rank_tilings"]

#: Tilings costed at once (rows of one numpy evaluation).
CHUNK = 65536


@dataclass
class SearchResult(Rich):
    """The best tilings found (cheapest first) and how the search went."""

    best: list[TiledCost]
    considered: int                 # candidate tilings looked at
    valid: int                      # of those, valid (constraints, registers, smem)
    complete: bool                  # False: stopped at a work limit
    stopped: str = ""
    variant: str = "legacy"
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"best": _best_json(self.best[0]) if self.best else None,
                               "top": [_best_json(c) for c in self.best],
                               "considered": self.considered, "valid": self.valid,
                               "complete": self.complete, "tiler": self.variant}
        if self.stopped:
            out["stopped"] = self.stopped
        if self.notes:
            out["notes"] = self.notes
        return out

    def text(self) -> str:
        lines = [f"best of {self.valid} valid tilings ({self.considered} considered"
                 f"{'' if self.complete else ', ' + self.stopped}):"]
        for i, c in enumerate(self.best):
            lines.append(f"#{i + 1}: " + c.text().replace("\n", "\n    "))
        return "\n".join(lines)

    def _shown_(self) -> Shown:
        caption = (f"{self.valid} valid of {self.considered} tilings considered"
                   f"{'' if self.complete else '; ' + self.stopped}")
        return Shown(self.text(), html_table(
            ["#", "output tiles", "warps", "blocks", "bytes read", "exec µs"],
            [(i + 1, c.output_tile_sizes, c.estimated_num_warps, c.num_blocks, c.bytes_read,
              f"{c.exec_time_us:.4g}") for i, c in enumerate(self.best)], caption))


def _best_json(c: TiledCost) -> dict[str, Any]:
    d = c.to_json()
    d["num_warps"] = c.estimated_num_warps
    return d


def candidate_chunks(ts: TileSet, chunk: int = CHUNK) -> Iterator[Any]:
    """The candidate tilings of ``ts`` as ``(rows, P)`` arrays in XLA's order (see the
    module docstring); legacy: only the analysis' valid tilings, group by group."""
    if ts.variant == "experimental":
        cands = []
        for d in ts.analysis.dims:
            if d.type == "sequential" and d.hlo in _reduce_names(ts):
                cands.append([pow2_ceil([d.size])[0]])
            else:
                cands.append([int(x) for x in pow2_ceil(candidates(d.size))])
        yield from _product_chunks([np.asarray(c, dtype=np.int64)[:, None] for c in cands],
                                   [[i] for i in range(len(cands))], len(cands), chunk)
        return
    t = ts.analysis
    flat = list(t.flat_sizes)
    cands = [candidates(n) for n in flat]
    params_of, sols = group_solutions(t.constraints, cands)
    constrained = {p for ps in params_of for p in ps}
    parts = [np.asarray(s, dtype=np.int64).reshape(len(s), len(ps))
             for ps, s in zip(params_of, sols)]
    cols = [list(ps) for ps in params_of]
    for p in range(len(flat)):
        if p not in constrained:
            parts.append(np.asarray(cands[p], dtype=np.int64)[:, None])
            cols.append([p])
    yield from _product_chunks(parts, cols, len(flat), chunk)


def _reduce_names(ts: TileSet) -> set[str]:
    return {name for (name, kind, _), _d in ts.analysis.seq.items() if kind == "reduce"}


def _product_chunks(parts: Sequence[Any], cols: Sequence[Sequence[int]], width: int,
                    chunk: int) -> Iterator[Any]:
    """The product of the parts' rows, ``chunk`` rows at a time, as ``(rows, width)``
    arrays (each part fills its columns)."""
    sizes = [len(p) for p in parts]
    total = prod(sizes)
    if total == 0:
        return
    radix = [prod(sizes[i + 1:]) for i in range(len(sizes))]
    for start in range(0, total, chunk):
        idx = np.arange(start, min(total, start + chunk), dtype=np.int64)
        out = np.empty((len(idx), width), dtype=np.int64)
        for part, c, r, s in zip(parts, cols, radix, sizes):
            out[:, c] = part[(idx // r) % s]
        yield out


def best_tilings(ts: TileSet, dev: Device, *, emitter: str = "triton", top: int = 1,
                 smem: int | None = None, max_tilings: int = 50_000_000,
                 cpu_seconds: float = 120.0, chunk: int = CHUNK, objective: str = "xla"
                 ) -> SearchResult:
    """The ``top`` cheapest valid tilings of ``ts`` on ``dev`` (see the module docstring).

    ``objective="symidx"`` ranks by symidx's refinement of XLA's cost
    (:func:`symidx.cost.tiled.cost_arrays`); when its pick is not XLA's, the pick says so
    (``xla_compatible`` False) and carries XLA's pick with both costs."""

    if top < 1:
        raise SymidxError("--top must be at least 1")
    if emitter not in ("triton", "none"):
        raise SymidxError(f"unknown emitter {emitter!r} (triton or none)")
    triton = static = None
    if isinstance(ts, TileSet):
        triton = TritonConstraints(ts, dev.block_dim_limit[0]) if emitter == "triton" \
            else None
        static = _Static(ts, dev)
    valid = 0
    # (exec ticks, tiling in XLA's order, tiling), best first
    kept: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
    order_of = xla_order(ts)
    per_tiling = not isinstance(ts, TileSet)
    kept_xla: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
    budget = _Budget(max_tilings, cpu_seconds)
    for S in budget.chunks(ts, chunk):
        if per_tiling:
            ok, ex_all, ex_xla = _assess_each(ts, S, dev, emitter, smem, objective)
        else:
            ok, ex_all, ex_xla = _assess(ts, S, dev, triton, static, smem, objective)
        valid += int(ok.sum())
        if ok.any():
            rows = S[ok]
            _keep(kept, rows, ex_all[ok], top, order_of)
            if objective != "xla":
                _keep(kept_xla, rows, ex_xla[ok], 1, order_of)

    def costed(tiling: tuple[int, ...], obj: str) -> TiledCost:
        tiles = ts.make(list(tiling)) if per_tiling else ts   # type: ignore[attr-defined]
        return tiling_cost(tiles, tiling, dev, None, objective=obj)

    best = [costed(tiling, objective) for _, _, tiling in kept]
    for c, (ticks, _, _) in zip(best, kept):
        assert c.exec_time_us is not None and abs(c.exec_time_us - ticks / TICKS_PER_US) < 1e-9
    if objective != "xla" and best and kept_xla:
        theirs = kept_xla[0][2]
        best[0].xla_compatible = best[0].tiling == theirs
        if not best[0].xla_compatible:
            x_own = costed(best[0].tiling, "xla")
            x_theirs = costed(theirs, "xla")
            s_theirs = costed(theirs, objective)
            best[0].xla_pick = {
                "tiling": list(theirs), "output_tile_sizes": x_theirs.output_tile_sizes,
                "exec_time_us": x_theirs.exec_time_us,
                f"exec_time_us_{objective}": s_theirs.exec_time_us,
                "this_pick_exec_time_us_xla": x_own.exec_time_us}
    return SearchResult(best, budget.considered, valid, budget.complete, budget.stopped,
                        ts.variant, list(static.notes) if static is not None else [])


class _Budget:
    """The candidate chunks within the work limits: at most ``max_tilings`` tilings and
    ``cpu_seconds`` of process CPU time (checked after each chunk); says how far it got."""

    def __init__(self, max_tilings: int, cpu_seconds: float):
        self.max_tilings = max_tilings
        self.cpu_seconds = cpu_seconds
        self.considered = 0
        self.complete = True
        self.stopped = ""

    def chunks(self, ts: Any, chunk: int) -> Iterator[Any]:
        start = time.process_time()
        for S in candidate_chunks(ts, chunk):
            if self.considered + len(S) > self.max_tilings:
                S = S[:self.max_tilings - self.considered]
                self.complete = False
                self.stopped = f"stopped at --max-tilings {self.max_tilings}"
            if len(S) == 0:
                return
            self.considered += len(S)
            yield S
            if not self.complete:
                return
            if time.process_time() - start > self.cpu_seconds:
                self.complete = False
                self.stopped = (f"stopped after {self.considered} tilings: "
                                f"{self.cpu_seconds:g} CPU seconds")
                return


def _keep(kept: list[tuple[int, tuple[int, ...], tuple[int, ...]]], rows: Any, ex: Any,
          top: int, order_of: Sequence[int]) -> None:
    """Merge a chunk's rows into the ``top`` cheapest so far; among equal times the first
    tiling in XLA's order (lexicographic over the parameters in ``order_of``)."""
    keyed = rows[:, list(order_of)]
    order = np.lexsort(tuple(keyed[:, j] for j in range(keyed.shape[1] - 1, -1, -1)) + (ex,))
    for i in order[:top]:
        kept.append((int(ex[i]), tuple(int(x) for x in keyed[i]),
                     tuple(int(x) for x in rows[i])))
    kept.sort()
    del kept[top:]


def xla_order(ts: Any) -> list[int]:
    """The parameters in the order XLA's flat tiling lists them: a dot root's output
    dimensions before its contracting ones (symidx lists the contracting ones first)."""
    n = len(ts.extents)
    if ts.variant != "legacy":
        return list(range(n))
    out = list(ts.output_params)
    return out + [p for p in range(n) if p not in out]


def _assess(ts: TileSet, S: Any, dev: Device, triton: Any, static: Any, smem: int | None,
            objective: str = "xla") -> tuple[Any, Any, Any]:
    """Per row of ``S``: valid (constraints, finite cost, shared memory), exec ticks under
    ``objective`` and under XLA's."""
    vals = ts.evaluate(S)
    ok = np.ones(len(S), dtype=bool)
    if triton is not None:
        ok &= triton.check(vals) == OK
    elif ts.variant == "legacy":
        ok &= TritonConstraints(ts, 1 << 62).analysis_ok(vals)
    a = cost_arrays(ts, vals, dev, None, 1, static)
    ok &= ~a["infinite"]
    if smem is not None:
        ok &= live_shared_bytes(ts, vals) <= smem
    if objective == "xla":
        return ok, a["exec"], a["exec"]
    b = cost_arrays(ts, vals, dev, None, 1, static, objective=objective)
    return ok, b["exec"], a["exec"]


def _assess_each(pt: Any, S: Any, dev: Device, emitter: str, smem: int | None,
                 objective: str = "xla") -> tuple[Any, Any, Any]:
    """:func:`_assess` row by row, each tiling propagated on its own (a tiling whose tiles
    cannot be propagated is not valid)."""
    ok = np.zeros(len(S), dtype=bool)
    ex = np.zeros(len(S), dtype=np.int64)
    ex_xla = np.zeros(len(S), dtype=np.int64)
    for i, row in enumerate(S):
        try:
            ts = pt.make([int(x) for x in row])
        except SymidxError:
            continue
        triton = TritonConstraints(ts, dev.block_dim_limit[0]) if emitter == "triton" \
            else None
        o, e, x = _assess(ts, row[None, :], dev, triton, _Static(ts, dev), smem, objective)
        ok[i], ex[i], ex_xla[i] = bool(o[0]), int(e[0]), int(x[0])
    return ok, ex, ex_xla


def all_candidates(ts: TileSet) -> list[tuple[int, ...]]:
    """Every candidate tiling in XLA's order (small fusions; for tests and listings)."""
    out: list[tuple[int, ...]] = []
    for S in candidate_chunks(ts):
        out.extend(tuple(int(x) for x in row) for row in S)
    return out



@dataclass
class Ranking(Rich):
    """Every valid tiling of a fusion (the analysis' constraints) with its cost on a device,
    cheapest first in XLA's order (:func:`rank_tilings`)."""

    device: str
    objective: str
    rows: list[dict[str, Any]]
    count: int                      # valid tilings ranked (``rows`` may hold fewer)
    considered: int
    complete: bool
    stopped: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tilings": [r["tiling"] for r in self.rows],
                               "device": self.device, "objective": self.objective,
                               "ranked": self.rows, "count": self.count}
        if len(self.rows) < self.count or not self.complete:
            out["truncated"] = True
        return out

    def text(self) -> str:
        lines = [f"{self.count} valid tilings on {self.device}, cheapest first"
                 f"{'' if self.objective == 'xla' else ' (objective ' + self.objective + ')'}"
                 f"{'' if self.complete else '; ' + self.stopped}:"]
        for r in self.rows:
            head = ",".join(map(str, r["tiling"]))
            if r["is_infinite"]:
                body = "infinite (a tile would spill registers)"
            else:
                body = (f"exec {r['exec_time_us']:.4g} us (compute {r['compute_time_us']:.4g},"
                        f" read {r['read_time_us']:.4g}, write {r['write_time_us']:.4g}), "
                        f"{r['num_blocks']} blocks, {r['num_warps']} warps, bytes read "
                        f"{r['bytes_read']}")
            tail = "" if r["emitter_valid"] else "; not for Triton: " + r["emitter_reason"]
            lines.append(f"{head}: {body}{tail}")
        return "\n".join(lines)

    def _shown_(self) -> Shown:
        return Shown(self.text(), html_table(
            ["#", "tiling", "output tiles", "warps", "blocks", "bytes read", "exec µs",
             "Triton"],
            [(i + 1, r["tiling"], r["output_tile_sizes"], r["num_warps"], r["num_blocks"],
              r["bytes_read"], "∞" if r["is_infinite"] else f"{r['exec_time_us']:.4g}",
              "yes" if r["emitter_valid"] else r["emitter_reason"])
             for i, r in enumerate(self.rows)],
            f"{self.count} valid tilings on {self.device}, cheapest first"))


def rank_tilings(ts: TileSet, dev: Device, *, limit: int = 100_000, objective: str = "xla",
                 max_tilings: int = 50_000_000, cpu_seconds: float = 120.0,
                 chunk: int = CHUNK) -> Ranking:
    """Every tiling that satisfies the analysis' constraints, costed as XLA's search costs
    it (estimated warps, one stage) and sorted by execution time, ties in XLA's order (the
    order its stable sort keeps); tilings rated infinite (register spill) last. Each row
    says whether Triton can emit the tiling (the search keeps only those). ``limit``: the
    most rows kept (the cheapest); ``max_tilings`` and ``cpu_seconds`` bound the work."""
    if not isinstance(ts, TileSet) or ts.variant != "legacy":
        raise SymidxError("ranking valid tilings takes the legacy tiler's tile set")
    analysis_only = TritonConstraints(ts, 1 << 62)
    triton = TritonConstraints(ts, dev.block_dim_limit[0])
    static = _Static(ts, dev)
    order_of = xla_order(ts)
    count = 0
    parts: list[dict[str, Any]] = []
    budget = _Budget(max_tilings, cpu_seconds)
    for S in budget.chunks(ts, chunk):
        vals = ts.evaluate(S)
        ok = analysis_only.analysis_ok(vals)
        if ok.any():
            codes = triton.check(vals)
            a = cost_arrays(ts, vals, dev, None, 1, static, objective=objective)
            idx = np.nonzero(ok)[0]
            count += len(idx)
            parts.append(_rank_part(ts, S, vals, a, codes, triton, idx, order_of, limit))
    rows = sorted((r for p in parts for r in p["rows"]), key=lambda r: r.pop("_key"))
    return Ranking(dev.key, objective, rows[:limit], count, budget.considered,
                   budget.complete, budget.stopped)


def _rank_part(ts: TileSet, S: Any, vals: Any, a: dict[str, Any], codes: Any,
               triton: TritonConstraints, idx: Any, order_of: Sequence[int],
               limit: int) -> dict[str, Any]:
    """The cheapest ``limit`` rows ``idx`` of one chunk, as documents with a sort key."""
    inf = a["infinite"]
    big = np.iinfo(np.int64).max
    ex = np.where(inf, big, a["exec"])
    keyed = S[:, list(order_of)]
    order = np.lexsort(tuple(keyed[idx, j] for j in range(keyed.shape[1] - 1, -1, -1)) +
                       (ex[idx],))
    rows = []

    def us(key: str, i: int) -> float | None:
        return None if inf[i] else float(a[key][i]) / TICKS_PER_US

    for i in idx[order[:limit]]:
        i = int(i)
        code = int(codes[i])
        rows.append({
            "_key": (int(ex[i]), tuple(int(x) for x in keyed[i])),
            "tiling": [int(x) for x in S[i]],
            "output_tile_sizes": root_tiles(ts, vals, i),
            "num_warps": int(a["estimated_num_warps"][i]),
            "num_blocks": int(np.broadcast_to(a["num_blocks"], (len(S),))[i]),
            "bytes_read": None if inf[i] else int(a["bytes_read"][i]),
            "bytes_written": None if inf[i] else int(a["bytes_written"][i]),
            "flops": None if inf[i] else int(a["flops"][i]),
            "read_time_us": us("read", i), "write_time_us": us("write", i),
            "compute_time_us": us("compute", i), "exec_time_us": us("exec", i),
            "is_infinite": bool(inf[i]),
            "emitter_valid": code == OK,
            "emitter_reason": "" if code == OK else triton.reason(code, vals, i)})
    return {"rows": rows}
