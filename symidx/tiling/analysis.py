"""A fusion's tiling (XLA's ``SymbolicTileAnalysis``): parameters, tiled instructions,
constraints, and the tiled computation for concrete tile sizes.

* **Parameters** (the tiling space): the output dimensions of the real root (a dot root:
  its contracting dimensions first), then one hidden parameter per contracting dimension
  of every other dot (visited from the root down). Reduced dimensions get none: as in XLA
  they stay range variables, so a tile spans the whole reduced extent.
* **Tiled instructions**: one per (instruction, path from the root), the composed map from
  the parameter space to the instruction's output (a dot's contracting range variables
  become its hidden parameters), duplicates merged; each gets its symbolic tile.
* **Nested fusions** (XLA's nested GEMM fusions): a ``fusion`` inside the fused
  computation is tiled, then its computation's root with the same map (path
  ``.called_root``), and each of that computation's parameters continues, with its map, to
  the nested fusion's operand in the calling computation (path ``.caller_operand(k)``).
  The maps are composed op by op along each path, as :mod:`symidx.fusion` composes them.
  A nested fusion as the root is refused, as XLA refuses it.
* **Constraints**: the conjunction of every tile's constraints, kept factored.
* **Tiled computation** (``tiled_computation(sizes)``): each instruction's tile sizes and
  strides, and the ``pid_0 -> offsets`` map under the major-to-minor schedule: the root's
  output parameters, major first, then the hidden parameters of the dots whose operands
  the instruction feeds; or under XLA's transposed-dot schedule (a dot root with one
  non-contracting dimension per side, no other dot): the same with the root's m and n
  parameters swapped, so that consecutive program ids walk down m.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod

from sympy import Integer, Symbol

from symidx.errors import SymidxError, UnsupportedOpError
from symidx.expr import Expr, FloorDiv, Mod, as_expr, dim, rt, sym
from symidx.hlo import HloComputation, HloInstruction, HloModule
from symidx.hlo.facts import array_dims
from symidx.indexing_map import IndexingMap, ValueSource, print_map
from symidx.interval import Interval
from symidx.ops import output_to_input
from symidx.simplify import compose, remove_unused_symbols, simplify
from symidx.tiling.constraints import Constraints, atom
from symidx.tiling.symbolic_tile import SymbolicTile, TileRefusal, symbolic_tile

__all__ = ["FusionTiling", "TiledInstruction", "Parameter", "analyze", "AnalysisRefusal",
           "fusion_computation"]

MAX_TILED = 5000     # most (instruction, path) pairs explored


class AnalysisRefusal(SymidxError):
    """XLA's analysis gives no tiling: names the instruction, its composed map and why."""


@dataclass(frozen=True)
class Parameter:
    instruction: str
    sizes: tuple[int, ...]
    hidden: bool          # a dot's contracting dimension (not an output dimension)


@dataclass
class TiledInstruction:
    instr: HloInstruction
    path: str
    map: IndexingMap                 # parameter space -> the instruction's output index
    tile: SymbolicTile
    region: tuple[int, ...]          # the hidden parameters its tiles iterate over
    operands: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.instr.name


@dataclass
class FusionTiling:
    computation: HloComputation
    roots: list[HloInstruction]
    real_root: HloInstruction
    parameters: list[Parameter]
    tiled: list[TiledInstruction]
    constraints: Constraints
    concats: list[tuple[HloInstruction, int]]   # (concatenate, its parameter of the cut dim)
    outputs: list[int] = field(default_factory=list)   # the root's output parameters
    unread: list[tuple[str, str]] = field(default_factory=list)  # (instruction, path)
    fusion: HloInstruction | None = None

    @property
    def flat_sizes(self) -> list[int]:
        return [s for p in self.parameters for s in p.sizes]

    @property
    def output_params(self) -> list[int]:
        return list(self.outputs)

    def names(self) -> dict[Symbol, str]:
        return {dim(i): f"d{i}" for i in range(len(self.flat_sizes))}


def fusion_computation(module: HloModule, fusion: str | None) -> HloComputation:
    if fusion is None:
        return module.entry
    found = [i for c in [module.entry, *module.computations.values()]
             for i in c.instructions if i.name == fusion]
    if not found:
        raise SymidxError(f"no instruction {fusion!r} in the module")
    instr = found[0]
    comps = [c for cs in instr.called_computations.values() for c in cs]
    if instr.opcode != "fusion" or not comps:
        raise SymidxError(f"{fusion} is a {instr.opcode}, not a fusion")
    return comps[0]


def _dims(instr: HloInstruction) -> tuple[int, ...]:
    return tuple(array_dims(instr.shape, instr.name))


def _roots(comp: HloComputation) -> list[HloInstruction]:
    root = comp.root
    if root.opcode == "tuple":
        return list(root.operands)
    return [root]


def _reaches(a: HloInstruction, b: HloInstruction) -> bool:
    seen, stack = set(), [a]
    while stack:
        x = stack.pop()
        if x is b:
            return True
        if id(x) in seen:
            continue
        seen.add(id(x))
        stack.extend(x.operands)
    return False


def _is_dot(instr: HloInstruction) -> bool:
    return instr.opcode in ("dot", "scaled-dot") and instr.dot_dimension_numbers is not None


def _contracting_sizes(instr: HloInstruction) -> tuple[int, ...]:
    dn = instr.dot_dimension_numbers
    assert dn is not None
    lhs = _dims(instr.operands[0])
    return tuple(lhs[d] for d in dn.lhs_contracting_dims)


def analyze(comp: HloComputation) -> FusionTiling:
    roots = _roots(comp)
    real = max(roots, key=lambda r: sum(_reaches(r, o) for o in roots))
    if real.opcode == "fusion":
        # as XLA (BailsOutOnRootFusion): nested fusions are tiled as operands, not as roots
        raise AnalysisRefusal(f"the root {real.name} is a nested fusion; a nested fusion is "
                              "tiled only as an operand (as XLA)")
    params: list[Parameter] = []
    out_dims = _dims(real)
    dot_param: dict[int, list[int]] = {}     # id(dot) -> its hidden parameter indices
    if _is_dot(real):
        kc = _contracting_sizes(real)
        params.append(Parameter(real.name, kc + out_dims, False))
        dot_param[id(real)] = list(range(len(kc)))
        out_idx = list(range(len(kc), len(kc) + len(out_dims)))
    else:
        params.append(Parameter(real.name, out_dims, False))
        out_idx = list(range(len(out_dims)))
    hidden_of_root = dot_param.get(id(real), [])
    n = len(out_dims) + len(hidden_of_root)
    for instr in reversed(comp.instructions):
        if _is_dot(instr) and id(instr) not in dot_param and _reaches(real, instr):
            kc = _contracting_sizes(instr)
            dot_param[id(instr)] = list(range(n, n + len(kc)))
            params.append(Parameter(instr.name, kc, True))
            n += len(kc)
    flat = [s for p in params for s in p.sizes]
    space = [Interval(0, s - 1) for s in flat]
    root_map = simplify(IndexingMap.create(space, [dim(i) for i in out_idx]),
                        replace_point_dims=False)
    tiling = FusionTiling(comp, roots, real, params, [], Constraints.always(), [], out_idx)
    # Dimensions of one value are folded to constants (their stride is 0), except the
    # non-batch output dimensions of a dot, which XLA keeps as parameters.
    keep = {i for i, size in enumerate(flat) if size != 1}
    if _is_dot(real):
        nb = len(real.dot_dimension_numbers.lhs_batch_dims)  # type: ignore[union-attr]
        keep |= set(out_idx[nb:])
    root_map = _fold_points(root_map, keep)
    seen: dict[tuple[int, IndexingMap, tuple[int, ...]], TiledInstruction] = {}
    # (instruction, map, path, region, the nested fusions entered to reach it)
    order: list[tuple[HloInstruction, IndexingMap, str, tuple[int, ...],
                      tuple[HloInstruction, ...]]] = []
    for r_i, r in enumerate(roots):
        if r is real:
            order.append((r, root_map, f"roots[{r_i}]", (), ()))
    for r_i, r in enumerate(roots):
        if r is not real:
            m = _other_root_map(real, r, root_map)
            if m is not None:
                order.append((r, m, f"roots[{r_i}]", (), ()))
    stack = list(reversed(order))
    count = 0
    while stack:
        instr, m, path, region, nest = stack.pop()
        key = (id(instr), m, tuple(id(f) for f in nest))
        if key in seen:
            continue
        if m.is_known_empty:
            # read by no element of the output (a concatenate operand a slice skips): no
            # tile loads it, and nothing below it is reached along this path
            tiling.unread.append((instr.name, path))
            continue
        count += 1
        if count > MAX_TILED:
            raise AnalysisRefusal(f"more than {MAX_TILED} tiled instructions (paths); the "
                                  "fusion is too large to tile per path")
        try:
            tile = symbolic_tile(m, simplified=True, constant_stride=None)
        except TileRefusal as e:
            raise AnalysisRefusal(f"no symbolic tile for {instr.name} ({instr.opcode}) at "
                                  f"{path}: {e.reason}" +
                                  (f"; not strided: {e.subexpr}" if e.subexpr else "") +
                                  f"; composed map: {print_map(m, 'xla').splitlines()[0]}"
                                  ) from None
        t = TiledInstruction(instr, path, m, tile, region)
        seen[key] = t
        tiling.tiled.append(t)
        tiling.constraints = tiling.constraints.and_(tile.constraints)
        if instr.opcode == "parameter" and nest:
            # a parameter of a nested fusion's computation: the same tile of the nested
            # fusion's operand in the computation that calls it
            k = instr.parameter_number
            caller = nest[-1]
            if k is None or k >= len(caller.operands):
                raise AnalysisRefusal(f"{instr.name}: parameter {k} of {caller.name}'s "
                                      "computation has no operand")
            stack.append((caller.operands[k], m, f"{path}.caller_operand({k})", region,
                          nest[:-1]))
            continue
        if instr.opcode == "fusion":
            # a nested fusion (XLA's nested GEMM fusions): tile through its computation
            stack.append((_nested_root(instr), m, f"{path}.called_root", region,
                          nest + (instr,)))
            continue
        if instr.opcode == "parameter" or not instr.operands:
            continue
        if instr.opcode == "concatenate" and instr.dimensions:
            tiling.concats.append((instr, instr.dimensions[0]))
            # every operand but the last starts a tile: the tile size along the cut
            # divides its extent (XLA checks this when it tiles; here it constrains)
            cut = instr.dimensions[0]
            for op in instr.operands[:-1]:
                tiling.constraints = tiling.constraints.and_dnf(
                    atom(Mod(_dims(op)[cut], tile.sizes[cut]), 0, 0))
        try:
            groups = output_to_input(instr, 0)
        except UnsupportedOpError as e:
            raise AnalysisRefusal(f"{instr.name}: {e}") from None
        sub_region = region + tuple(dot_param.get(id(instr), ()))
        for k, (op, maps) in enumerate(zip(instr.operands, groups)):
            maps = _one_map(maps)
            if len(maps) != 1:
                raise AnalysisRefusal(f"{instr.name} reads operand {k} ({op.name}) through "
                                      f"{len(maps)} maps with different results; a tile "
                                      "needs one")
            composed = _compose(m, maps[0], dot_param.get(id(instr), []), keep, instr)
            stack.append((op, composed, f"{path}.operand({k})", sub_region, nest))
    if tiling.constraints.is_unsatisfiable:
        raise AnalysisRefusal("the constraints of the tiles are unsatisfiable")
    return tiling


def _nested_root(instr: HloInstruction) -> HloInstruction:
    from symidx.hlo.facts import called_computation

    called = called_computation(instr)
    if called is None:
        raise AnalysisRefusal(f"nested fusion {instr.name} has no fused computation")
    if called.root.opcode == "tuple":
        raise AnalysisRefusal(f"nested fusion {instr.name} has several outputs (a tuple "
                              "root); tiling through it is not supported")
    return called.root


def _one_map(maps: list[IndexingMap]) -> list[IndexingMap]:
    """Pieces of one read that differ only in their constraints (a pad's value, a
    dynamic-update-slice's operand around the window) as one map without those
    constraints: the box around the pieces, a sound over-approximation of the reads."""
    if len(maps) <= 1:
        return maps
    first = maps[0]
    same = all(m.results == first.results and m.ranges == first.ranges and
               m.rts == first.rts and m.num_dims == first.num_dims for m in maps)
    if not same:
        return maps
    dims = [Interval(min(m.dims[i].lo for m in maps), max(m.dims[i].hi for m in maps))
            for i in range(first.num_dims)]
    return [IndexingMap.create(dims, first.results, first.ranges, first.rts)]


def _other_root_map(real: HloInstruction, other: HloInstruction, root_map: IndexingMap
                    ) -> IndexingMap | None:
    """An extra output of a multi-output fusion is tiled like the real root when their
    shapes agree (XLA reuses the tile it reaches on the way)."""
    if _dims(real) == _dims(other):
        return root_map
    return None


def _fold_points(m: IndexingMap, keep: set[int]) -> IndexingMap:
    if m.is_known_empty or m.is_undefined:  # nothing to fold (nothing is read)
        return m
    points = {dim(i): Integer(b.lo) for i, b in enumerate(m.dims)
              if b.lo == b.hi and i not in keep}
    if not points:
        return m
    results = [as_expr(r).xreplace(points) for r in m.results]
    cons = [(as_expr(e).xreplace(points), i) for e, i in m.constraints]
    return simplify(IndexingMap.create(m.dims, results, m.ranges, m.rts, cons, names=m.names),
                    replace_point_dims=False)


def _compose(parent: IndexingMap, op_map: IndexingMap, hidden: Sequence[int], keep: set[int],
             instr: HloInstruction) -> IndexingMap:
    m = compose(parent, op_map)
    if hidden:
        # the dot's contracting range variables (its own, so the first ones) -> parameters
        nc = len(hidden)
        if m.num_ranges < nc:
            raise AnalysisRefusal(f"{instr.name}: the dot's operand map has no contracting "
                                  "range variable to make a parameter of")
        mapping: dict[Symbol, Expr] = {sym(j): dim(hidden[j]) for j in range(nc)}
        mapping.update({sym(j): sym(j - nc) for j in range(nc, m.num_ranges)})
        results = [as_expr(r).xreplace(mapping) for r in m.results]
        cons = [(as_expr(e).xreplace(mapping), i) for e, i in m.constraints]
        dims = list(m.dims)
        for j, h in enumerate(hidden):
            dims[h] = dims[h].intersect(m.ranges[j])
        m = IndexingMap.create(dims, results, m.ranges[nc:], m.rts, cons,
                               names=None)
    return _fold_points(simplify(m, replace_point_dims=False), keep)


# --------------------------------------------------------------------------- tiled computation
@dataclass
class TiledResult:
    name: str
    path: str
    tile_sizes: list[int]
    tile_strides: list[int]
    offsets_map: IndexingMap
    runtime_variables: list[str]


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
    order = list(t.output_params) + list(ti.region)
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
    if not _is_dot(dot):
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


def tiled_computation(t: FusionTiling, sizes: Sequence[int], assume_satisfied: bool = False,
                      schedule: str = "major-to-minor") -> list[TiledResult]:
    check_sizes(t, sizes)
    if not assume_satisfied and not constraints_hold(t, sizes):
        raise AnalysisRefusal(f"the tiling {list(sizes)} does not satisfy the constraints")
    flat = t.flat_sizes
    for instr, cut in t.concats:
        for k, op in enumerate(instr.operands[:-1]):
            ts = _tile_size_at(t, instr, cut, sizes)
            if ts is not None and _dims(op)[cut] % ts:
                raise AnalysisRefusal(
                    f"{instr.name}: operand {k} ({op.name}) has {_dims(op)[cut]} elements "
                    f"along the concatenated dimension, not divisible by tile size {ts}")
    out: list[TiledResult] = []
    for ti in t.tiled:
        origin, total = program_id_origin(schedule_dims(t, ti, schedule), flat, sizes)
        results = [as_expr(r).xreplace(origin) for r in ti.map.results]
        low: dict[Symbol, Expr] = {sym(j): Integer(b.lo) for j, b in enumerate(ti.map.ranges)}
        # a runtime variable with one feasible value is that value
        low.update({rt(k): Integer(v.bounds.lo) for k, v in enumerate(ti.map.rts)
                    if v.bounds.lo == v.bounds.hi})
        results = [r.xreplace(low) for r in results]
        cons = [(as_expr(e).xreplace(origin), i) for e, i in ti.map.constraints]
        # a parameter narrowed in the instruction's map (a concatenate's operand, a padded
        # operand) keeps only the tiles that meet its range
        cons += [(origin[dim(p)], Interval(b.lo - sizes[p] + 1, b.hi))
                 for p, b in enumerate(ti.map.dims) if b != Interval(0, flat[p] - 1)]
        om = IndexingMap.create([Interval(0, total - 1)], results, ti.map.ranges, ti.map.rts,
                                cons, names=["pid_0"] + [None] * (ti.map.num_ranges +
                                                               ti.map.num_rts))
        om = remove_unused_symbols(simplify(om))[0]
        try:
            tsz, _, tst = _eval_tile(ti.tile, sizes)
        except SymidxError as e:
            raise AnalysisRefusal(f"{ti.name}: {e}") from None
        rts = [_rt_name(t, v.source, k) for k, v in enumerate(om.rts)]
        out.append(TiledResult(ti.name, ti.path, tsz, tst, om, rts))
    return out


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
    return ([ev(e, env) for e in tile.sizes], [], [ev(e, clamped) for e in tile.strides])

