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

from symidx.cost.devices import Device
from symidx.cost.tiled import TiledCost, _Static, cost_arrays, tiling_cost
from symidx.cost.timing import TICKS_PER_US
from symidx.errors import SymidxError
from symidx.tiling.concrete import TileSet, live_shared_bytes, pow2_ceil
from symidx.tiling.emitter import OK, TritonConstraints
from symidx.tiling.valid import candidates, group_solutions

__all__ = ["SearchResult", "best_tilings", "CHUNK", "candidate_chunks"]

#: Tilings costed at once (rows of one numpy evaluation).
CHUNK = 65536


@dataclass
class SearchResult:
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

    def _repr_html_(self) -> str:
        return _search_html(self)


def _search_html(res: SearchResult) -> str:
    from html import escape

    head = (f"<p>{res.valid} valid of {res.considered} tilings considered"
            f"{'' if res.complete else '; ' + escape(res.stopped)}</p>")
    rows = "".join(
        f"<tr><td>{i + 1}</td><td>{escape(str(c.output_tile_sizes))}</td>"
        f"<td>{c.estimated_num_warps}</td><td>{c.num_blocks}</td><td>{c.bytes_read}</td>"
        f"<td>{c.exec_time_us:.4g}</td></tr>" for i, c in enumerate(res.best))
    return (head + "<table><tr><th>#</th><th>output tiles</th><th>warps</th><th>blocks</th>"
            "<th>bytes read</th><th>exec µs</th></tr>" + rows + "</table>")


def _best_json(c: TiledCost) -> dict[str, Any]:
    d = c.to_json()
    d["num_warps"] = c.estimated_num_warps
    return d


def candidate_chunks(ts: TileSet, chunk: int = CHUNK) -> Iterator[Any]:
    """The candidate tilings of ``ts`` as ``(rows, P)`` arrays in XLA's order (see the
    module docstring); legacy: only the analysis' valid tilings, group by group."""
    import numpy as np

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
    import numpy as np

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
    start = time.process_time()
    considered = valid = 0
    # (exec ticks, tiling in XLA's order, tiling), best first
    kept: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
    order_of = xla_order(ts)
    complete, stopped = True, ""
    per_tiling = not isinstance(ts, TileSet)
    kept_xla: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
    for S in candidate_chunks(ts, chunk):
        if considered + len(S) > max_tilings:
            S = S[:max_tilings - considered]
            complete, stopped = False, f"stopped at --max-tilings {max_tilings}"
        if len(S) == 0:
            break
        considered += len(S)
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
        if not complete:
            break
        if time.process_time() - start > cpu_seconds:
            complete, stopped = False, (f"stopped after {considered} tilings: "
                                        f"{cpu_seconds:g} CPU seconds")
            break
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
    return SearchResult(best, considered, valid, complete, stopped, ts.variant,
                        list(static.notes) if static is not None else [])


def _keep(kept: list[tuple[int, tuple[int, ...], tuple[int, ...]]], rows: Any, ex: Any,
          top: int, order_of: Sequence[int]) -> None:
    """Merge a chunk's rows into the ``top`` cheapest so far; among equal times the first
    tiling in XLA's order (lexicographic over the parameters in ``order_of``)."""
    import numpy as np

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
    import numpy as np

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
    import numpy as np

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

