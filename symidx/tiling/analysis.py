"""A fusion's tiling (XLA's ``SymbolicTileAnalysis``): parameters, tiled instructions and
constraints.

* **Parameters** (the tiling space): the output dimensions of the real root (a dot root:
  its contracting dimensions first), then one hidden parameter per contracting dimension
  of every other dot (visited from the root down). Reduced dimensions get none: as in XLA
  they stay range variables, so a tile spans the whole reduced extent. A root of another
  shape that the real root's tiles do not write whole gets output parameters of its own
  (its *grid*: program ids of its own). A ``call`` is tiled through as a nested fusion.
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

Where XLA's rules give no tile, the fallbacks of :func:`_tile_of` give one (or a located
refusal). The tiled computation at concrete tile sizes (each instruction's tile, the
``pid_0 -> offsets`` maps, the schedules, the load plans) is in :mod:`symidx.tiling.tiled`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from math import prod

from sympy import Integer, Symbol

from symidx.core.expr import (
    Expr,
    Mod,
    as_expr,
    dim,
    free_vars,
    rt,
    sym,
    var_index,
    var_kind,
)
from symidx.core.indexing_map import IndexingMap, print_map
from symidx.core.indexing_map.text import print_expr
from symidx.core.interval import Interval
from symidx.core.simplify import compose, remove_unused_symbols, simplify
from symidx.errors import SymidxError, UnsupportedOpError
from symidx.fusion import Analysis, IndexingGraph
from symidx.hlo import HloComputation, HloInstruction, HloModule
from symidx.hlo.facts import array_dims, called_computation
from symidx.tiling.constraints import Constraints, atom, dnf_or
from symidx.tiling.symbolic_tile import SymbolicTile, TileRefusal, symbolic_tile

__all__ = ["FusionTiling", "TiledInstruction", "Parameter", "analyze", "AnalysisRefusal",
           "fusion_computation", "is_dot", "output_dims"]

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
    # the output parameters its program ids run over (its root's), major first
    grid: tuple[int, ...] = ()
    # the parameters a runtime variable's source reads (a gather's batch dimensions):
    # each position along them is a row of its own (the tile is per row)
    rows: tuple[int, ...] = ()
    # the map the tile was derived from (``map`` with the dimensions it sees at one value
    # set to that value, when the tile needs it); offsets are computed from it
    tile_map: IndexingMap | None = None
    # constraints of ``map`` the tile does not hold to (low or interior padding): the tile
    # is the box around the reads without them; the emitter masks the rest
    masks: tuple[str, ...] = ()

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
    # roots tiled over their own output parameters (their shape is not the real root's):
    # (root, its output parameters)
    grids: list[tuple[HloInstruction, tuple[int, ...]]] = field(default_factory=list)
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


def output_dims(instr: HloInstruction) -> tuple[int, ...]:
    """An instruction's output dimensions; for one with several outputs of the same
    dimensions (a variadic reduce or reduce-window, a sort), theirs: one tile serves all."""
    elements = getattr(instr.shape, "elements", None)
    if elements is None:
        return tuple(array_dims(instr.shape, instr.name))
    dims = {tuple(array_dims(e, instr.name)) for e in elements}
    if len(dims) != 1:
        raise AnalysisRefusal(f"{instr.name} ({instr.opcode}) has outputs of different "
                              f"shapes {instr.shape}: one tile cannot serve them")
    return dims.pop()


_dims = output_dims


def _roots(comp: HloComputation) -> list[HloInstruction]:
    root = comp.root
    if root.opcode == "tuple":
        return list(root.operands)
    return [root]


def is_dot(instr: HloInstruction) -> bool:
    """Whether ``instr`` is a dot (or a scaled dot) with its dimension numbers."""
    return instr.opcode in ("dot", "scaled-dot") and instr.dot_dimension_numbers is not None


def _contracting_sizes(instr: HloInstruction) -> tuple[int, ...]:
    dn = instr.dot_dimension_numbers
    assert dn is not None
    lhs = _dims(instr.operands[0])
    return tuple(lhs[d] for d in dn.lhs_contracting_dims)


@dataclass
class _Space:
    """The tiling space as :func:`analyze` builds it: the parameters so far, each dot's
    hidden parameters (by ``id``), the real root's output parameters and the roots tiled
    over output parameters of their own (position among the roots, root, parameters)."""

    params: list[Parameter]
    dot_param: dict[int, list[int]]
    out_idx: list[int]
    own: list[tuple[int, HloInstruction, tuple[int, ...]]] = field(default_factory=list)

    @property
    def flat(self) -> list[int]:
        return [s for p in self.params for s in p.sizes]


def analyze(comp: HloComputation, analysis: Analysis | None = None) -> FusionTiling:
    """The tiling of the fused computation ``comp`` (XLA's ``SymbolicTileAnalysis``, see
    the module docstring): its parameters, every (instruction, path) its roots read with
    the composed map and symbolic tile, and the conjunction of the tiles' constraints.

    The fusion is walked on ``analysis``'s indexing graphs (:class:`symidx.fusion.Analysis`;
    None: a fresh one): which instruction reads which, their topological order and each
    instruction's own maps (:meth:`~symidx.fusion.IndexingGraph.rule_maps`) come from
    there, computed once for every path through them and for the next query. Raises
    :class:`AnalysisRefusal` where XLA's analysis gives no tiling (a nested fusion as
    the root, an op without a rule or a tile, unsatisfiable constraints)."""
    analysis = analysis or Analysis()
    graph = analysis.graph(comp)
    roots = _roots(comp)
    real = _real_root(graph, roots)
    space = _space(analysis, graph, roots, real)
    tiling = FusionTiling(comp, roots, real, space.params, [], Constraints.always(), [],
                          space.out_idx, grids=[(r, g) for _, r, g in space.own])
    keep = _kept_parameters(space, real)
    _walk(tiling, _root_visits(graph, roots, real, space, keep), space.dot_param, keep,
          analysis)
    if tiling.constraints.is_unsatisfiable:
        raise AnalysisRefusal("the constraints of the tiles are unsatisfiable")
    return tiling


def _real_root(graph: IndexingGraph, roots: list[HloInstruction]) -> HloInstruction:
    """The root that reads the most roots (the first such); refused if a nested fusion."""
    reads = {r.name: graph.reads(r.name) for r in roots}
    real = max(roots, key=lambda r: sum(o.name in reads[r.name] for o in roots))
    if real.opcode == "fusion":
        # as XLA (BailsOutOnRootFusion): nested fusions are tiled as operands, not as roots
        raise AnalysisRefusal(f"the root {real.name} is a nested fusion; a nested fusion is "
                              "tiled only as an operand (as XLA)")
    return real


def _space(analysis: Analysis, graph: IndexingGraph, roots: list[HloInstruction],
           real: HloInstruction) -> _Space:
    """The parameters: the real root's output dimensions (a dot's contracting ones
    first), the dots' hidden parameters, then the roots that need a grid of their own."""
    out_dims = _dims(real)
    if is_dot(real):
        kc = _contracting_sizes(real)
        space = _Space([Parameter(real.name, kc + out_dims, False)],
                       {id(real): list(range(len(kc)))},
                       list(range(len(kc), len(kc) + len(out_dims))))
    else:
        space = _Space([Parameter(real.name, out_dims, False)], {},
                       list(range(len(out_dims))))
    _hidden_parameters(graph, real, space)
    # A root of another shape shares the real root's tiles when they write all of it
    # (it is reached from the real root onto its whole index space: a broadcast's
    # operand, a reshape); any other is tiled over its own output dimensions, with
    # program ids of its own.
    others = [r for r in roots if r is not real and _dims(r) != out_dims]
    shared = _reached_onto(analysis, graph, roots, real, space, others) if others \
        else set()
    for r_i, r in enumerate(roots):
        if r is real or _dims(r) == out_dims or id(r) in shared or \
                any(r is o for _, o, _ in space.own):
            continue
        n = len(space.flat)
        space.own.append((r_i, r, tuple(range(n, n + len(_dims(r))))))
        space.params.append(Parameter(r.name, _dims(r), False))
        _hidden_parameters(graph, r, space)
    return space


def _kept_parameters(space: _Space, real: HloInstruction) -> set[int]:
    """The parameters kept as dimensions: those of more than one value, and the non-batch
    output dimensions of a dot root, which XLA keeps as parameters (the others are folded
    to constants: their stride is 0)."""
    keep = {i for i, size in enumerate(space.flat) if size != 1}
    if is_dot(real):
        nb = len(real.dot_dimension_numbers.lhs_batch_dims)  # type: ignore[union-attr]
        keep |= set(space.out_idx[nb:])
    return keep


def _root_visits(graph: IndexingGraph, roots: list[HloInstruction], real: HloInstruction,
                 space: _Space, keep: set[int]) -> list[_Visit]:
    """Where the walk starts: the real root, the roots of its shape (the same map), then
    the roots with a grid of their own, each with the map from the parameters to it."""
    grid = tuple(space.out_idx)
    root_map = _grid_map(space, grid, keep)
    order = [_Visit(r, root_map, f"roots[{r_i}]", (), (), grid, (graph,))
             for r_i, r in enumerate(roots) if r is real]
    order += [_Visit(r, root_map, f"roots[{r_i}]", (), (), grid, (graph,))
              for r_i, r in enumerate(roots) if r is not real and _dims(r) == _dims(real)]
    order += [_Visit(r, _grid_map(space, own, keep), f"roots[{r_i}]", (), (), own, (graph,))
              for r_i, r, own in space.own]
    return order


def _grid_map(space: _Space, grid: tuple[int, ...], keep: set[int]) -> IndexingMap:
    """The map from the parameter space to the output parameters ``grid``."""
    dims = [Interval(0, s - 1) for s in space.flat]
    m = simplify(IndexingMap.create(dims, [dim(i) for i in grid]), replace_point_dims=False)
    return _fold_points(m, keep)


_NO_TILE = SymbolicTile((), (), (), (), (), Constraints.always())


@dataclass(frozen=True, slots=True)
class _Visit:
    """An (instruction, path) the walk reaches: its composed map, the hidden parameters
    its tiles iterate over, the nested fusions entered to reach it (and their
    computations' indexing graphs, the outermost first), and its grid."""

    instr: HloInstruction
    map: IndexingMap
    path: str
    region: tuple[int, ...]
    nest: tuple[HloInstruction, ...]
    grid: tuple[int, ...]
    graphs: tuple[IndexingGraph, ...]


def _hidden_parameters(graph: IndexingGraph, root: HloInstruction, space: _Space) -> None:
    """One hidden parameter per contracting dimension of every dot ``root`` reads that
    has none yet (visited from the root down, users before operands)."""
    reads = graph.reads(root.name)
    for instr in reversed(graph.order):
        if is_dot(instr) and id(instr) not in space.dot_param and instr.name in reads:
            kc = _contracting_sizes(instr)
            n = len(space.flat)
            space.dot_param[id(instr)] = list(range(n, n + len(kc)))
            space.params.append(Parameter(instr.name, kc, True))


ONTO_LIMIT = 4_000_000   # most points enumerated to prove a root reached onto


def _reached_onto(analysis: Analysis, graph: IndexingGraph, roots: list[HloInstruction],
                  real: HloInstruction, space: _Space, others: list[HloInstruction]
                  ) -> set[int]:
    """The ids of the roots in ``others`` that the real root's tiles write whole: some
    map from the real root's parameters reaches the root onto its whole index space
    (counted by enumeration, at most ``ONTO_LIMIT`` points; beyond, not shared)."""
    flat = space.flat
    probe = FusionTiling(graph.comp, roots, real, list(space.params), [],
                         Constraints.always(), [], list(space.out_idx))
    keep = set(range(len(flat)))
    top = simplify(IndexingMap.create([Interval(0, s - 1) for s in flat],
                                      [dim(i) for i in space.out_idx]),
                   replace_point_dims=False)
    try:
        _walk(probe, [_Visit(real, top, "roots[0]", (), (), (), (graph,))],
              dict(space.dot_param), keep, analysis, tile=False)
    except AnalysisRefusal:
        return set()
    return {id(r) for r in others
            if any(ti.instr is r and _onto(ti.map, _dims(r)) for ti in probe.tiled)}


def _onto(m: IndexingMap, shape: tuple[int, ...]) -> bool:
    """Whether ``m`` (no runtime variables, no constraints, at most ``ONTO_LIMIT``
    points) reaches every index of ``shape``."""
    import numpy as np

    if m.num_rts or m.constraints or m.is_known_empty or m.domain_size() > ONTO_LIMIT:
        return False
    seen: set[int] = set()
    for values in m.points(limit=ONTO_LIMIT):
        res, mask = m.evaluate_arrays(list(values))
        lin = np.zeros(int(mask.sum()), dtype=np.int64)
        for j, n in enumerate(shape):
            lin = lin * n + np.asarray(res[j])[mask]
        seen |= set(np.unique(lin).tolist())
    return len(seen) == prod(shape)


def _walk(tiling: FusionTiling, order: list[_Visit], dot_param: dict[int, list[int]],
          keep: set[int], analysis: Analysis, tile: bool = True) -> None:
    """Every (instruction, path) reached from the roots in ``order``, with its composed
    map and symbolic tile (none when not ``tile``: only the maps), into ``tiling``; a
    nested fusion's computation is walked on its indexing graph in ``analysis``."""
    seen: set[tuple[int, IndexingMap, tuple[int, ...], tuple[int, ...]]] = set()
    stack = list(reversed(order))
    count = 0
    while stack:
        v = stack.pop()
        key = (id(v.instr), v.map, tuple(id(f) for f in v.nest), v.grid)
        if key in seen:
            continue
        if v.map.is_known_empty:
            # read by no element of the output (a concatenate operand a slice skips): no
            # tile loads it, and nothing below it is reached along this path
            tiling.unread.append((v.instr.name, v.path))
            continue
        count += 1
        if count > MAX_TILED:
            raise AnalysisRefusal(f"more than {MAX_TILED} tiled instructions (paths); the "
                                  "fusion is too large to tile per path")
        t = _tiled(v, tile)
        seen.add(key)
        tiling.tiled.append(t)
        tiling.constraints = tiling.constraints.and_(t.tile.constraints)
        stack.extend(_next_visits(tiling, v, t, dot_param, keep, analysis, tile))


def _tiled(v: _Visit, tile: bool) -> TiledInstruction:
    """The tiled instruction of the visit ``v`` (with no tile when not ``tile``)."""
    if tile:
        sym_tile, tile_map, masks = _tile_of(v.instr, v.path, v.map)
    else:
        sym_tile, tile_map, masks = _NO_TILE, v.map, ()
    rows = _row_parameters(v.map)
    return TiledInstruction(v.instr, v.path, v.map, sym_tile.at_unit_sizes(rows), v.region,
                            grid=v.grid, rows=rows, tile_map=tile_map, masks=masks)


def _next_visits(tiling: FusionTiling, v: _Visit, t: TiledInstruction,
                 dot_param: dict[int, list[int]], keep: set[int], analysis: Analysis,
                 tile: bool) -> list[_Visit]:
    """What the walk visits after ``v`` (its tiled instruction ``t``), in the order the
    stack pops them last: a nested computation's parameter continues at the nested
    fusion's operand in the computation that calls it, a nested fusion or a call at
    its computation's root, any other instruction at its operands (a concatenate's cut
    constrains the tile sizes first)."""
    instr, m, path = v.instr, v.map, v.path
    if instr.opcode == "parameter" and v.nest:
        # a parameter of a nested fusion's computation: the same tile of the nested
        # fusion's operand in the computation that calls it
        k = instr.parameter_number
        caller = v.nest[-1]
        if k is None or k >= len(caller.operands):
            raise AnalysisRefusal(f"{instr.name}: parameter {k} of {caller.name}'s "
                                  "computation has no operand")
        return [replace(v, instr=caller.operands[k], path=f"{path}.caller_operand({k})",
                           nest=v.nest[:-1], graphs=v.graphs[:-1])]
    if instr.opcode in ("fusion", "call"):
        # a nested fusion (XLA's nested GEMM fusions) or a call (a computation JAX
        # lowers a jnp function to): tile through its computation
        graph = analysis.graph(_nested(instr))
        return [replace(v, instr=graph.comp.root, path=f"{path}.called_root",
                           nest=v.nest + (instr,), graphs=v.graphs + (graph,))]
    if instr.opcode == "parameter" or not instr.operands:
        return []
    if instr.opcode == "concatenate" and instr.dimensions and tile:
        _constrain_cut(tiling, instr, t)
    try:
        groups = v.graphs[-1].rule_maps(instr, 0)
    except UnsupportedOpError as e:
        raise AnalysisRefusal(f"{instr.name}: {e}") from None
    sub_region = v.region + tuple(dot_param.get(id(instr), ()))
    found = []
    for k, (op, maps) in enumerate(zip(instr.operands, groups)):
        maps = _one_map(maps)
        if len(maps) != 1:
            raise AnalysisRefusal(f"{instr.name} reads operand {k} ({op.name}) through "
                                  f"{len(maps)} maps with different results; a tile "
                                  "needs one")
        composed = _compose(m, maps[0], dot_param.get(id(instr), []), keep, instr)
        found.append(replace(v, instr=op, map=composed, path=f"{path}.operand({k})",
                                region=sub_region))
    return found


def _constrain_cut(tiling: FusionTiling, instr: HloInstruction, t: TiledInstruction) -> None:
    """A concatenate's cut: every operand but the last starts a tile, so the tile size
    along the cut divides its extent (XLA checks this when it tiles; here it
    constrains). A tile spanning the whole concatenated dimension (read whole, as a
    reduce or a gather's index vector reads it, or a tile over a bitcast merging it with
    the next) starts no tile inside an operand."""
    assert instr.dimensions is not None
    cut = instr.dimensions[0]
    tiling.concats.append((instr, cut))
    size = as_expr(t.tile.sizes[cut])
    whole = _dims(instr)[cut]
    for op in instr.operands[:-1]:
        tiling.constraints = tiling.constraints.and_dnf(
            dnf_or(atom(Mod(_dims(op)[cut], size), 0, 0), atom(size, whole, 1 << 62)))


def _tile_of(instr: HloInstruction, path: str, m: IndexingMap
             ) -> tuple[SymbolicTile, IndexingMap, tuple[str, ...]]:
    """The symbolic tile of ``m``, the map it is derived from, and the masks it ignores.
    Where XLA's rules find none: dimensions the instruction sees at one value only (a
    concatenate's operand, a slice of a merged dimension) are set to that value, which
    their terms then add to the offset; and a constraint that is not a high-padding bound
    (low or interior padding, a concatenate's interleaved operand) becomes a mask: the
    tile is the box around what the map reads without it (sound, more than is read)."""
    try:
        return symbolic_tile(m, simplified=True, constant_stride=None, aligned=True), m, ()
    except TileRefusal as e:
        first = e
    points = {dim(i): Integer(b.lo) for i, b in enumerate(m.dims) if b.lo == b.hi}
    tries = [m]
    if points:
        folded = m.replace(results=tuple(as_expr(r).xreplace(points) for r in m.results),
                           constraints=tuple((as_expr(c).xreplace(points), i)
                                             for c, i in m.constraints))
        tries.insert(0, simplify(folded, replace_point_dims=False))
    # an expression a constraint pins to one value is that value in the results (the
    # odd positions of an interleave: d mod 2 in [1, 1])
    pins = {as_expr(e): Integer(i.lo) for e, i in m.constraints if i.lo == i.hi
            and not as_expr(e).is_Symbol}
    if pins:
        pinned = m.replace(results=tuple(as_expr(r).xreplace(pins) for r in m.results))
        tries.append(simplify(pinned, replace_point_dims=False))
    for masks, hulls in ((False, False), (True, False), (True, True)):
        for candidate in tries:
            if candidate is m and not masks:
                continue
            try:
                tile = symbolic_tile(candidate, simplified=True, constant_stride=None,
                                     masks=masks, hulls=hulls, aligned=True)
            except TileRefusal:
                continue
            names = dict(zip(candidate.all_vars, candidate.display_names()))
            dropped = tuple(sorted(f"{print_expr(e, names)} in [{i.lo}, {i.hi}]"
                                   for e, i in candidate.constraints)) if masks else ()
            # by text: the constraints' own order is by hash, another in every process
            if hulls:
                dropped += ("the box around a sum whose strides do not nest (a window)",)
            return tile, candidate, dropped
    raise AnalysisRefusal(f"no symbolic tile for {instr.name} ({instr.opcode}) at "
                          f"{path}: {first.reason}" +
                          (f"; not strided: {first.subexpr}" if first.subexpr else "") +
                          f"; composed map: {print_map(m, 'xla').splitlines()[0]}") from None


def _row_parameters(m: IndexingMap) -> tuple[int, ...]:
    """The parameters a runtime variable's source reads: along them, each position of a
    tile loads at a value of its own (a gather's batch dimensions)."""
    rows: set[int] = set()
    for v in m.rts:
        if v.map is None:
            continue
        for e in v.map.results:
            rows |= {var_index(x) for x in free_vars(e) if var_kind(x) == "d"}
        for e, _ in v.map.constraints:
            rows |= {var_index(x) for x in free_vars(e) if var_kind(x) == "d"}
    return tuple(sorted(rows))


def _nested(instr: HloInstruction) -> HloComputation:
    """The computation a nested fusion or a ``call`` runs (one output), or a refusal."""
    what = "nested fusion" if instr.opcode == "fusion" else instr.opcode
    try:
        called = called_computation(instr)
    except SymidxError as e:
        raise AnalysisRefusal(str(e)) from None
    if called is None:
        raise AnalysisRefusal(f"{what} {instr.name} has no called computation")
    if called.root.opcode == "tuple":
        raise AnalysisRefusal(f"{what} {instr.name} has several outputs (a tuple "
                              "root); tiling through it is not supported")
    return called


def _one_map(maps: list[IndexingMap]) -> list[IndexingMap]:
    """Pieces of one read that differ only in their constraints (a pad's value, a
    dynamic-update-slice's operand around the window) as one map without those
    constraints: the box around the pieces, a sound over-approximation of the reads."""
    if len(maps) <= 1:
        return maps
    maps = [_without_masks(m) for m in maps]
    first = maps[0]
    same = all(m.results == first.results and m.ranges == first.ranges and
               m.rts == first.rts and m.num_dims == first.num_dims for m in maps)
    if not same:
        return maps
    dims = [Interval(min(m.dims[i].lo for m in maps), max(m.dims[i].hi for m in maps))
            for i in range(first.num_dims)]
    return [IndexingMap.create(dims, first.results, first.ranges, first.rts)]


def _without_masks(m: IndexingMap) -> IndexingMap:
    """A piece whose runtime variables only mask it (a dynamic-update-slice's operand
    outside a window at a runtime offset): without those variables and their masks."""
    if not m.num_rts or m.is_known_empty or m.is_undefined:
        return m
    in_results = {v for r in m.results for v in free_vars(as_expr(r)) if var_kind(v) == "rt"}
    if in_results:
        return m
    keep = [(e, i) for e, i in m.constraints
            if not any(var_kind(v) == "rt" for v in free_vars(as_expr(e)))]
    return remove_unused_symbols(m.replace(constraints=tuple(keep)))[0]


def _outer_runtime_first(m: IndexingMap, inner: int) -> IndexingMap:
    """The composed map's runtime variables reordered as XLA lists them: those of the
    instructions nearer the root (the parent's) first, then the operand's own ``inner``."""
    if not inner or m.num_rts <= inner or m.is_known_empty or m.is_undefined:
        return m
    order = list(range(inner, m.num_rts)) + list(range(inner))
    rename = {rt(old): rt(new) for new, old in enumerate(order)}
    return IndexingMap.create(m.dims, [as_expr(r).xreplace(rename) for r in m.results],
                              m.ranges, [m.rts[k] for k in order],
                              [(as_expr(e).xreplace(rename), i) for e, i in m.constraints])


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
    m = _outer_runtime_first(compose(parent, op_map), op_map.num_rts)
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
