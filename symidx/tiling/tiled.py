"""A fusion's tiling at concrete tile sizes (XLA's ``TiledHloComputation``): each tiled
instruction's tile and the map from a program id to the tile's offsets.

* **Tiled computation** (``tiled_computation(sizes)``): each instruction's tile sizes and
  strides, and the ``pid_0 -> offsets`` map under the major-to-minor schedule: the root's
  output parameters, major first, then the hidden parameters of the dots whose operands
  the instruction feeds; or under XLA's transposed-dot schedule (a dot root with one
  non-contracting dimension per side, no other dot): the same with the root's m and n
  parameters swapped, so that consecutive program ids walk down m.
* **Load plans**: a tile holds what its program id's output tile reads at every runtime
  value it is loaded with. The parameters a runtime variable's source reads (a gather's
  batch dimensions) are *rows*: each position of a tile along them is a tile of its own
  (a range variable of the offsets map), and each runtime variable's source map says, for
  (pid_0, rows), which element of which instruction feeds it.

The tiling itself (parameters, tiled instructions, constraints) is made by
:func:`symidx.tiling.analysis.analyze`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod

from sympy import Integer, Symbol

from symidx.core.expr import (
    Expr,
    FloorDiv,
    Mod,
    as_expr,
    dim,
    free_vars,
    rt,
    sym,
    terms,
    var_index,
    var_kind,
)
from symidx.core.indexing_map import IndexingMap, RuntimeVar, ValueSource, print_map
from symidx.core.interval import Interval
from symidx.core.simplify import remove_unused_symbols, simplify
from symidx.errors import SymidxError
from symidx.hlo import HloInstruction
from symidx.tiling.analysis import (
    AnalysisRefusal,
    FusionTiling,
    TiledInstruction,
    is_dot,
    output_dims,
)
from symidx.tiling.symbolic_tile import SymbolicTile

__all__ = ["SCHEDULES", "TiledResult", "check_sizes", "constraints_hold", "grid_of",
           "program_id_origin", "schedule_dims", "tiled_computation", "transposed_dot_dims"]

_dims = output_dims


@dataclass
class TiledResult:
    """One tiled instruction at concrete tile sizes: its tile's sizes and strides, and the
    map from the program id ``pid_0`` to the tile's offsets. A range variable of that map
    is a *row*: the instruction loads one tile per value of it (a gather's rows, at the
    values of the index elements feeding them). ``runtime_variables`` names the holder of
    each runtime variable (as XLA names it); the variable's ``source`` map in
    ``offsets_map`` sends (pid_0, rows) to the element of the holder that feeds it."""

    name: str
    path: str
    tile_sizes: list[int]
    tile_strides: list[int]
    offsets_map: IndexingMap
    runtime_variables: list[str]
    # per row (range variable of ``offsets_map``): the tiling parameter whose positions it
    # runs over, or None (a range variable of the instruction's map, e.g. reduced)
    row_parameters: list[int | None] = field(default_factory=list)
    grid: list[int] = field(default_factory=list)   # the output parameters of its pids
    # per range variable of ``offsets_map``: ("range", j) for range variable j of the
    # instruction's map, ("row", p) for the positions along parameter p; per runtime
    # variable: its index among the instruction's map's runtime variables
    range_origins: list[tuple[str, int]] = field(default_factory=list)
    rt_origins: list[int] = field(default_factory=list)
    # what the tile holds beyond what is read (constraints it ignores: low or interior
    # padding, an interleave; a window's box): a labelled over-approximation
    masks: list[str] = field(default_factory=list)

    def rows(self) -> list[dict[str, object]]:
        return [{"range_variable": k, "count": b.hi - b.lo + 1, "parameter": p}
                for k, (b, p) in enumerate(zip(self.offsets_map.ranges, self.row_parameters))]

    def runtime_sources(self) -> list[dict[str, object]]:
        """Per runtime variable: its holder and the map (pid_0, rows) -> its element."""
        out: list[dict[str, object]] = []
        for name, v in zip(self.runtime_variables, self.offsets_map.rts):
            element = None
            if v.map is not None:
                element = print_map(v.map, "xla").split("\nruntime")[0]
            out.append({"holder": name, "element": element, "bounds": [v.bounds.lo,
                                                                       v.bounds.hi],
                        "clamped": v.clamped})
        return out


def check_sizes(t: FusionTiling, sizes: Sequence[int]) -> None:
    flat = t.flat_sizes
    if len(sizes) != len(flat):
        raise AnalysisRefusal(f"{len(sizes)} tile sizes for {len(flat)} parameters "
                              f"({', '.join(p.instruction for p in t.parameters)})")
    for i, s in enumerate(sizes):
        if s < 1:
            raise AnalysisRefusal(f"tile size {s} of parameter d{i} is below 1")


def constraints_hold(t: FusionTiling, sizes: Sequence[int]) -> bool:
    variables = [dim(i) for i in range(len(sizes))]
    return t.constraints.evaluator(variables)(list(sizes))


SCHEDULES = ("major-to-minor", "transposed-dot")


def schedule_dims(t: FusionTiling, ti: TiledInstruction, schedule: str = "major-to-minor"
                  ) -> list[int]:
    """The parameters a tiled instruction's program ids run over, major first: the root's
    output parameters, then the hidden parameters of the dots it feeds. Under the
    transposed-dot schedule the dot root's two non-contracting output parameters (m, n)
    trade places, so that m varies faster than n (XLA's ``TransposedDotTiledHloSchedule``)."""
    order = grid_of(t, ti) + list(ti.region)
    if schedule == "transposed-dot":
        m, n = transposed_dot_dims(t)
        i, j = order.index(m), order.index(n)
        order[i], order[j] = n, m
    elif schedule != "major-to-minor":
        raise AnalysisRefusal(f"unknown schedule {schedule!r} (one of {', '.join(SCHEDULES)})")
    return order


def transposed_dot_dims(t: FusionTiling) -> tuple[int, int]:
    """The parameters of the dot root's m and n output dimensions, or a refusal saying why
    the transposed-dot schedule does not apply (XLA's conditions: the root is a dot, no other
    dot has parameters, one non-contracting dimension on each side)."""
    dot = t.real_root
    if not is_dot(dot):
        raise AnalysisRefusal(f"the transposed-dot schedule needs a dot root; {dot.name} is a "
                              f"{dot.opcode}")
    if any(p.hidden for p in t.parameters[1:]):
        raise AnalysisRefusal("the transposed-dot schedule is for a fusion with a single dot; "
                              "other dots have tiling parameters: " +
                              ", ".join(p.instruction for p in t.parameters[1:] if p.hidden))
    dn = dot.dot_dimension_numbers
    assert dn is not None
    for side, operand, contracting, batch in (
            ("lhs", dot.operands[0], dn.lhs_contracting_dims, dn.lhs_batch_dims),
            ("rhs", dot.operands[1], dn.rhs_contracting_dims, dn.rhs_batch_dims)):
        free = len(_dims(operand)) - len(contracting) - len(batch)
        if free != 1:
            raise AnalysisRefusal(f"the transposed-dot schedule needs one non-contracting "
                                  f"dimension on each side of {dot.name}; its {side} "
                                  f"({operand.name}) has {free}")
    return t.output_params[-2], t.output_params[-1]


def grid_of(t: FusionTiling, ti: TiledInstruction) -> list[int]:
    """The output parameters a tiled instruction's program ids run over (its root's)."""
    return list(ti.grid) if ti.grid else list(t.output_params)


def tiled_computation(t: FusionTiling, sizes: Sequence[int], assume_satisfied: bool = False,
                      schedule: str = "major-to-minor", enforce_concatenate: bool = True
                      ) -> list[TiledResult]:
    """Every tiled instruction at these tile sizes (see :class:`TiledResult`). Refused
    when the sizes violate the constraints, unless ``assume_satisfied`` (XLA's
    ``constraints_are_known_satisfied``), which skips the check of the constraints. A
    concatenate whose operands (all but the last) are not a whole number of tiles along
    the cut is refused either way, as XLA refuses it even when the constraints are assumed
    (``enforce_concatenate=False`` skips that too: the tiles then still hold what is
    read, with masks, which ``--check`` proves)."""
    check_sizes(t, sizes)
    if not assume_satisfied and not constraints_hold(t, sizes):
        raise AnalysisRefusal(f"the tiling {list(sizes)} does not satisfy the constraints")
    if enforce_concatenate:
        for instr, cut in t.concats:
            for k, op in enumerate(instr.operands[:-1]):
                ts = _tile_size_at(t, instr, cut, sizes)
                if ts is not None and ts < _dims(instr)[cut] and _dims(op)[cut] % ts:
                    raise AnalysisRefusal(
                        f"{instr.name}: operand {k} ({op.name}) has {_dims(op)[cut]} elements "
                        f"along the concatenated dimension, not divisible by tile size {ts}")
    return [_tiled_one(t, ti, sizes, schedule) for ti in t.tiled]


def _tiled_one(t: FusionTiling, ti: TiledInstruction, sizes: Sequence[int],
               schedule: str) -> TiledResult:
    flat = t.flat_sizes
    origin, total = program_id_origin(schedule_dims(t, ti, schedule), flat, sizes)
    m = ti.tile_map or ti.map
    # rows: each position of the tile along a parameter a runtime variable's source reads
    # is a tile of its own, at the value its index element holds
    row_params = [p for p in ti.rows if min(sizes[p], flat[p]) > 1]
    nr = m.num_ranges
    at = dict(origin)
    row_cons: list[tuple[Expr, Interval]] = []
    for k, p in enumerate(row_params):
        at[dim(p)] = origin[dim(p)] + sym(nr + k)
        row_cons.append((origin[dim(p)] + sym(nr + k), Interval(0, flat[p] - 1)))
    row_ranges = [Interval(0, min(sizes[p], flat[p]) - 1) for p in row_params]
    try:
        tsz, _, tst = _eval_tile(ti.tile, sizes)
        shifts = _eval_shifts(ti.tile, sizes)
    except SymidxError as e:
        raise AnalysisRefusal(f"{ti.name}: {e}") from None
    low: dict[Symbol, Expr] = {sym(j): Integer(b.lo) for j, b in enumerate(m.ranges)}
    # a runtime variable with one feasible value is that value
    low.update({rt(k): Integer(v.bounds.lo) for k, v in enumerate(m.rts)
                if v.bounds.lo == v.bounds.hi})
    results = [as_expr(r).xreplace(at).xreplace(low) + shift
               for r, shift in zip(m.results, shifts)]
    cons = _tile_meets(m, at, sizes, flat, row_params)
    # a parameter narrowed in the instruction's map (a concatenate's operand, a padded
    # operand) keeps only the tiles that meet its range
    cons += [(origin[dim(p)], Interval(b.lo - sizes[p] + 1, b.hi))
             for p, b in enumerate(m.dims) if b != Interval(0, flat[p] - 1)
             and p not in row_params]
    cons += [(e, Interval(max(i.lo, b.lo), min(i.hi, b.hi))) for (e, i), b in
             zip(row_cons, [m.dims[p] for p in row_params])]
    ranges = list(m.ranges) + row_ranges
    rts = [_runtime_at(v, at, ranges, total) for v in m.rts]
    om = IndexingMap.create([Interval(0, total - 1)], results, ranges, rts, cons,
                            names=["pid_0"] + [None] * (len(ranges) + m.num_rts))
    om, removed = remove_unused_symbols(simplify(om))
    gone = set(removed)
    kept = [k for k in range(len(ranges)) if k not in gone]
    kept_rts = [k for k in range(m.num_rts) if len(ranges) + k not in gone]
    origins: list[tuple[str, int]] = [("range", j) for j in range(nr)] + \
        [("row", p) for p in row_params]
    names = [_rt_name(t, v.source, k) for k, v in enumerate(om.rts)]
    return TiledResult(ti.name, ti.path, tsz, tst, om, names,
                       [origins[k][1] if origins[k][0] == "row" else None for k in kept],
                       list(grid_of(t, ti)), [origins[k] for k in kept], kept_rts,
                       list(ti.masks))


def _tile_meets(m: IndexingMap, at: dict[Symbol, Expr], sizes: Sequence[int],
                flat: Sequence[int], rows: Sequence[int]) -> list[tuple[Expr, Interval]]:
    """The map's constraints as conditions on a tile: a constraint ``e in [lo, hi]`` holds
    somewhere in the tile at ``at`` (its origin; rows at their position). ``e`` affine in
    the tiled dimensions ranges over ``e(origin) + [least, most]`` across the tile, so the
    tile meets the constraint when ``e(origin)`` lies in ``[lo - most, hi - least]`` (a
    dynamic-update-slice's window overlapping a tile that starts before it). A constraint
    that is not affine in them is dropped: every tile is kept, masked (sound)."""
    out = []
    for e, interval in m.constraints:
        e = as_expr(e)
        least = most = 0
        affine = True
        for c, mono in terms(e):
            tiled = [v for v in free_vars(mono) if var_kind(v) == "d"
                     and var_index(v) not in rows]
            if not tiled:
                continue
            if not (mono.is_Symbol and var_kind(mono) == "d"):
                affine = False
                break
            span = min(sizes[var_index(mono)], flat[var_index(mono)]) - 1
            least += min(0, c * span)
            most += max(0, c * span)
        if affine:
            out.append((e.xreplace(at), Interval(interval.lo - most, interval.hi - least)))
    return out


def _runtime_at(v: RuntimeVar, at: dict[Symbol, Expr], ranges: Sequence[Interval],
                total: int) -> RuntimeVar:
    """A runtime variable of a tiled instruction's map with its source read at the tile:
    the source map from the parameter space becomes one from (pid_0, rows), over the
    offsets map's range variables ``ranges``."""
    if v.map is None or v.map.is_known_empty or v.map.is_undefined or \
            v.map.num_ranges > len(ranges):
        return RuntimeVar(v.bounds, v.source, None, v.clamped)
    results = [as_expr(r).xreplace(at) for r in v.map.results]
    src = IndexingMap.create([Interval(0, total - 1)], results, list(ranges),
                             names=["pid_0"] + [None] * len(ranges))
    return RuntimeVar(v.bounds, v.source, simplify(src, replace_point_dims=False), v.clamped)


def program_id_origin(order: Sequence[int], flat: Sequence[int], sizes: Sequence[int]
                      ) -> tuple[dict[Symbol, Expr], int]:
    """Program id ``pid_0`` delinearized over ``order`` (major first; ``ceil(size / tile)``
    tiles per parameter): each parameter's tile origin as an expression of ``pid_0``
    (parameters not in ``order`` at 0), and the number of program ids."""
    counts = [-(-flat[p] // sizes[p]) for p in order]
    pid = dim(0)
    origin: dict[Symbol, Expr] = {dim(i): Integer(0) for i in range(len(flat))}
    for j, (p, c) in enumerate(zip(order, counts)):
        inner = prod(counts[j + 1:])
        origin[dim(p)] = Mod(FloorDiv(pid, inner), c) * sizes[p]
    return origin, prod(counts)


def _rt_name(t: FusionTiling, source: ValueSource | None, k: int) -> str:
    """The instruction holding a runtime value; a fused parameter is named by the fusion's
    operand (as XLA names it)."""
    if source is None:
        return f"rt{k}"
    if (source.parameter is not None and t.fusion is not None
            and source.parameter < len(t.fusion.operands)):
        return t.fusion.operands[source.parameter].name
    return source.instruction or source.text.split(" = ")[0]


def _tile_size_at(t: FusionTiling, instr: HloInstruction, axis: int, sizes: Sequence[int]
                  ) -> int | None:
    for ti in t.tiled:
        if ti.instr is instr:
            return _eval_tile(ti.tile, sizes)[0][axis]
    return None


def _eval_shifts(tile: SymbolicTile, sizes: Sequence[int]) -> list[int]:
    """Per result, where its box starts relative to the map at the tile's origin: 0, or
    (strides of both signs summed) the least value's distance below the origin's."""
    env = {dim(i): Integer(v) for i, v in enumerate(sizes)}
    out = []
    for j in range(tile.rank):
        if not (tile.mixed and tile.mixed[j]):
            out.append(0)
            continue
        v = as_expr(tile.box_shifts[j]).xreplace(env)
        if not v.is_Integer:
            raise SymidxError(f"cannot evaluate {v} at tile sizes {list(sizes)}")
        out.append(int(v))
    return out


def _eval_tile(tile: SymbolicTile, sizes: Sequence[int]) -> tuple[list[int], list[int],
                                                                  list[int]]:
    env = {dim(i): Integer(v) for i, v in enumerate(sizes)}
    # Strides are evaluated at tile sizes clamped to the dimensions' extents (as XLA's
    # EvaluateTileStrides): a tile larger than its dimension has that dimension's stride.
    clamped = {dim(i): Integer(min(v, b.hi)) for i, (v, b) in
               enumerate(zip(sizes, tile.size_bounds))}

    def ev(e: Expr, at: dict[Symbol, Expr]) -> int:
        v = as_expr(e).xreplace(at)
        if not v.is_Integer:
            raise SymidxError(f"cannot evaluate {e} at tile sizes {list(sizes)}")
        return int(v)
    strides = [tile.box_strides[j] if tile.mixed and tile.mixed[j] else e
               for j, e in enumerate(tile.strides)]
    return ([ev(e, env) for e in tile.sizes], [], [ev(e, clamped) for e in strides])

