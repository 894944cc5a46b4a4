"""A fusion's tiling (XLA's ``SymbolicTileAnalysis``): parameters, tiled instructions,
constraints, and the tiled computation for concrete tile sizes.

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
  (pid_0, rows), which element of which instruction feeds it. Where XLA's rules give no
  tile, the fallbacks of :func:`_tile_of` give one (or a located refusal).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod

from sympy import Integer, Symbol

from symidx.errors import SymidxError, UnsupportedOpError
from symidx.expr import (
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
from symidx.hlo import HloComputation, HloInstruction, HloModule
from symidx.hlo.facts import array_dims
from symidx.indexing_map import IndexingMap, RuntimeVar, ValueSource, print_map
from symidx.indexing_map.text import print_expr
from symidx.interval import Interval
from symidx.ops import output_to_input
from symidx.simplify import compose, remove_unused_symbols, simplify
from symidx.tiling.constraints import Constraints, atom, dnf_or
from symidx.tiling.symbolic_tile import SymbolicTile, TileRefusal, symbolic_tile

__all__ = ["FusionTiling", "TiledInstruction", "Parameter", "analyze", "AnalysisRefusal",
           "fusion_computation", "output_dims"]

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
    n = len(out_dims) + len(dot_param.get(id(real), []))
    n = _hidden_parameters(comp, real, dot_param, params, n)
    # A root of another shape shares the real root's tiles when they write all of it
    # (it is reached from the real root onto its whole index space: a broadcast's
    # operand, a reshape); any other is tiled over its own output dimensions, with
    # program ids of its own.
    others = [r for r in roots if r is not real and _dims(r) != out_dims]
    shared = _reached_onto(comp, roots, real, params, dot_param, out_idx, others) \
        if others else set()
    own: list[tuple[int, HloInstruction, tuple[int, ...]]] = []
    for r_i, r in enumerate(roots):
        if r is real or _dims(r) == out_dims or id(r) in shared or \
                any(r is o for _, o, _ in own):
            continue
        grid = tuple(range(n, n + len(_dims(r))))
        params.append(Parameter(r.name, _dims(r), False))
        n += len(_dims(r))
        own.append((r_i, r, grid))
        n = _hidden_parameters(comp, r, dot_param, params, n)
    flat = [s for p in params for s in p.sizes]
    space = [Interval(0, s - 1) for s in flat]
    root_map = simplify(IndexingMap.create(space, [dim(i) for i in out_idx]),
                        replace_point_dims=False)
    tiling = FusionTiling(comp, roots, real, params, [], Constraints.always(), [], out_idx,
                          grids=[(r, g) for _, r, g in own])
    # Dimensions of one value are folded to constants (their stride is 0), except the
    # non-batch output dimensions of a dot, which XLA keeps as parameters.
    keep = {i for i, size in enumerate(flat) if size != 1}
    if _is_dot(real):
        nb = len(real.dot_dimension_numbers.lhs_batch_dims)  # type: ignore[union-attr]
        keep |= set(out_idx[nb:])
    root_map = _fold_points(root_map, keep)
    # (instruction, map, path, region, the nested fusions entered to reach it, grid)
    order: list[_Visit] = []
    real_grid = tuple(out_idx)
    for r_i, r in enumerate(roots):
        if r is real:
            order.append((r, root_map, f"roots[{r_i}]", (), (), real_grid))
    for r_i, r in enumerate(roots):
        if r is not real and _dims(r) == out_dims:
            order.append((r, root_map, f"roots[{r_i}]", (), (), real_grid))
    for r_i, r, grid in own:
        m = _fold_points(simplify(IndexingMap.create(space, [dim(i) for i in grid]),
                                  replace_point_dims=False), keep)
        order.append((r, m, f"roots[{r_i}]", (), (), grid))
    _walk(tiling, order, dot_param, keep)
    if tiling.constraints.is_unsatisfiable:
        raise AnalysisRefusal("the constraints of the tiles are unsatisfiable")
    return tiling


_NO_TILE = SymbolicTile((), (), (), (), (), Constraints.always())
_Visit = tuple[HloInstruction, IndexingMap, str, tuple[int, ...], tuple[HloInstruction, ...],
               tuple[int, ...]]


def _hidden_parameters(comp: HloComputation, root: HloInstruction,
                       dot_param: dict[int, list[int]], params: list[Parameter], n: int) -> int:
    """One hidden parameter per contracting dimension of every dot ``root`` reaches that
    has none yet (visited from the root down); returns the next parameter index."""
    for instr in reversed(comp.instructions):
        if _is_dot(instr) and id(instr) not in dot_param and _reaches(root, instr):
            kc = _contracting_sizes(instr)
            dot_param[id(instr)] = list(range(n, n + len(kc)))
            params.append(Parameter(instr.name, kc, True))
            n += len(kc)
    return n


ONTO_LIMIT = 4_000_000   # most points enumerated to prove a root reached onto


def _reached_onto(comp: HloComputation, roots: list[HloInstruction], real: HloInstruction,
                  params: list[Parameter], dot_param: dict[int, list[int]],
                  out_idx: list[int], others: list[HloInstruction]) -> set[int]:
    """The ids of the roots in ``others`` that the real root's tiles write whole: some
    map from the real root's parameters reaches the root onto its whole index space
    (counted by enumeration, at most ``ONTO_LIMIT`` points; beyond, not shared)."""
    import numpy as np

    flat = [s for p in params for s in p.sizes]
    space = [Interval(0, s - 1) for s in flat]
    probe = FusionTiling(comp, roots, real, list(params), [], Constraints.always(), [],
                         list(out_idx))
    keep = set(range(len(flat)))
    top = simplify(IndexingMap.create(space, [dim(i) for i in out_idx]),
                   replace_point_dims=False)
    try:
        _walk(probe, [(real, top, "roots[0]", (), (), ())], dict(dot_param), keep,
              tile=False)
    except AnalysisRefusal:
        return set()
    out: set[int] = set()
    for r in others:
        shape = _dims(r)
        for ti in probe.tiled:
            m = ti.map
            if ti.instr is not r or m.num_rts or m.constraints or m.is_known_empty:
                continue
            if m.domain_size() > ONTO_LIMIT:
                continue
            seen: set[int] = set()
            for values in m.points(limit=ONTO_LIMIT):
                res, mask = m.evaluate_arrays(list(values))
                lin = np.zeros(int(mask.sum()), dtype=np.int64)
                for j, n in enumerate(shape):
                    lin = lin * n + np.asarray(res[j])[mask]
                seen |= set(np.unique(lin).tolist())
            if len(seen) == prod(shape):
                out.add(id(r))
                break
    return out


def _walk(tiling: FusionTiling, order: list[_Visit], dot_param: dict[int, list[int]],
          keep: set[int], tile: bool = True) -> None:
    """Every (instruction, path) reached from the roots in ``order``, with its composed
    map and symbolic tile (none when not ``tile``: only the maps), into ``tiling``."""
    seen: set[tuple[int, IndexingMap, tuple[int, ...], tuple[int, ...]]] = set()
    stack = list(reversed(order))
    count = 0
    while stack:
        instr, m, path, region, nest, grid = stack.pop()
        key = (id(instr), m, tuple(id(f) for f in nest), grid)
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
        if tile:
            sym_tile, tile_map, masks = _tile_of(instr, path, m)
        else:
            sym_tile, tile_map, masks = _NO_TILE, m, ()
        rows = _row_parameters(m)
        t = TiledInstruction(instr, path, m, sym_tile.at_unit_sizes(rows), region, grid=grid,
                             rows=rows, tile_map=tile_map, masks=masks)
        seen.add(key)
        tiling.tiled.append(t)
        tiling.constraints = tiling.constraints.and_(t.tile.constraints)
        if instr.opcode == "parameter" and nest:
            # a parameter of a nested fusion's computation: the same tile of the nested
            # fusion's operand in the computation that calls it
            k = instr.parameter_number
            caller = nest[-1]
            if k is None or k >= len(caller.operands):
                raise AnalysisRefusal(f"{instr.name}: parameter {k} of {caller.name}'s "
                                      "computation has no operand")
            stack.append((caller.operands[k], m, f"{path}.caller_operand({k})", region,
                          nest[:-1], grid))
            continue
        if instr.opcode in ("fusion", "call"):
            # a nested fusion (XLA's nested GEMM fusions) or a call (a computation JAX
            # lowers a jnp function to): tile through its computation
            stack.append((_nested_root(instr), m, f"{path}.called_root", region,
                          nest + (instr,), grid))
            continue
        if instr.opcode == "parameter" or not instr.operands:
            continue
        if instr.opcode == "concatenate" and instr.dimensions and tile:
            tiling.concats.append((instr, instr.dimensions[0]))
            # every operand but the last starts a tile: the tile size along the cut
            # divides its extent (XLA checks this when it tiles; here it constrains)
            cut = instr.dimensions[0]
            size = as_expr(t.tile.sizes[cut])
            whole = _dims(instr)[cut]
            # a tile spanning the whole concatenated dimension (read whole, as a reduce
            # or a gather's index vector reads it, or a tile over a bitcast merging it
            # with the next) starts no tile inside an operand
            for op in instr.operands[:-1]:
                tiling.constraints = tiling.constraints.and_dnf(
                    dnf_or(atom(Mod(_dims(op)[cut], size), 0, 0),
                           atom(size, whole, 1 << 62)))
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
            stack.append((op, composed, f"{path}.operand({k})", sub_region, nest, grid))


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
            dropped = tuple(f"{print_expr(e, names)} in [{i.lo}, {i.hi}]"
                            for e, i in candidate.constraints) if masks else ()
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


def _nested_root(instr: HloInstruction) -> HloInstruction:
    from symidx.hlo.facts import called_computation

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
    return called.root


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


# --------------------------------------------------------------------------- tiled computation
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

