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
from dataclasses import dataclass, field
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
from symidx.hlo import HloComputation, HloInstruction, HloModule
from symidx.hlo.facts import array_dims
from symidx.ops import output_to_input
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


def is_dot(instr: HloInstruction) -> bool:
    """Whether ``instr`` is a dot (or a scaled dot) with its dimension numbers."""
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
    if is_dot(real):
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
    if is_dot(real):
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
        if is_dot(instr) and id(instr) not in dot_param and _reaches(root, instr):
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
