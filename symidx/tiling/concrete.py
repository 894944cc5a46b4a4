"""The concrete tiles of a fusion for many tilings at once: what the cost model and the
emitter constraints read.

A :class:`TileSet` is built once per fusion from the legacy analysis
(:func:`from_analysis`, XLA's ``SymbolicTileAnalysis``) or from the experimental tiling
space (:func:`from_space`, XLA's ``TilingSpace``). It holds one :class:`TileEntry` per
tiled instruction: its tile sizes and strides as compiled functions of the tile sizes of
the tiling's parameters, its tile offsets (for telling tiles apart), whether it is a load
of a fusion operand, a root, or computed inside, and the regions it lies in: the loop of a
dot over its contracting dimension (``ceil(K / tile)`` times as many blocks evaluate the
dot's operands) and a concatenate's operand (``operand extent / concatenated extent`` of
the blocks, XLA's ``GetNumBlocksForRegion``).

:meth:`TileSet.evaluate` takes a matrix of tilings (one row each, numpy) and returns, per
entry, the tile sizes and strides of every row, the blocks evaluating it, and whether the
entry is a tile of its own in that row: as XLA keeps one tiled instruction per distinct
(instruction, sizes, strides, offsets), an entry whose tile equals an earlier entry's in a
row (two paths to one instruction that meet in the same tile) is dropped there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import product
from math import prod
from typing import Any

import numpy as np
from sympy import Integer

from symidx._text import lazy_pattern
from symidx.core.expr import as_expr, compile_expr, dim, sym, var_index, var_kind
from symidx.errors import SymidxError
from symidx.hlo import HloInstruction
from symidx.hlo.facts import array_dims, called_computation
from symidx.tiling.space import XTile, ts
from symidx.tiling.valid import candidates

__all__ = ["TileEntry", "TileSet", "TileValues", "from_analysis", "from_space",
           "pow2_ceil", "live_shared_bytes", "tile_shared_bytes"]

_STEP = lazy_pattern(r"\.(operand|caller_operand)\((\d+)\)|\.(called_root)")
_ROOT = lazy_pattern(r"roots\[(\d+)\]")

#: Most tile-id combinations enumerated to decide whether two tiles' offsets coincide.
OFFSET_POINTS = 4096


def pow2_ceil(x: Any) -> Any:
    """``llvm::PowerOf2Ceil`` elementwise over a numpy integer array (1 for 0 and 1)."""
    v = np.asarray(x, dtype=np.int64) - 1
    v = np.maximum(v, 0)
    for shift in (1, 2, 4, 8, 16, 32):
        v |= v >> shift
    return v + 1


@dataclass
class TileEntry:
    """One tiled instruction of the fusion (see the module docstring)."""

    instr: HloInstruction
    path: str
    dims: tuple[int, ...]
    kind: str                                   # operand | inside | nested_parameter
    root: int | None                            # which root tile it is, if any
    size_fns: list[Callable[[Sequence[Any]], Any]]
    stride_fns: list[Callable[[Sequence[Any]], Any]]
    size_hi: tuple[int, ...]                    # per parameter: strides see min(size, hi)
    offsets: tuple[Any, ...]                    # sympy, over the parameters' tile origins
    regions: tuple[tuple[Any, ...], ...]        # ("dot", params, lhs dims) | ("concat", n, d)
    region_key: tuple[Any, ...] = ()
    dot: DotInfo | None = None
    size_kinds: list[tuple[str, int]] = field(default_factory=list)
    stride_kinds: list[tuple[str, int]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.instr.name

    @property
    def rank(self) -> int:
        return len(self.size_fns)


def _kind(e: Any) -> tuple[str, int]:
    """How an expression of the parameters is evaluated: ``("const", v)``, ``("col", p)``
    (the parameter itself) or ``("fn", 0)``."""
    e = as_expr(e)
    if e.is_Integer:
        return ("const", int(e))
    if e.is_Symbol:
        return ("col", var_index(e))
    return ("fn", 0)


def _apply(kind: tuple[str, int], fn: Callable[[Sequence[Any]], Any], cols: list[Any]) -> Any:
    if kind[0] == "const":
        return kind[1]
    if kind[0] == "col":
        return cols[kind[1]]
    return fn(cols)


def _entry(instr: HloInstruction, path: str, dims_: tuple[int, ...], kind: str,
           root: int | None, sizes: Sequence[Any], strides: Sequence[Any],
           variables: list[Any], size_hi: tuple[int, ...], offsets: tuple[Any, ...],
           regions: tuple[tuple[Any, ...], ...], region_key: tuple[Any, ...],
           dot: DotInfo | None) -> TileEntry:
    return TileEntry(instr, path, dims_, kind, root,
                     [compile_expr(as_expr(e), variables) for e in sizes],
                     [compile_expr(as_expr(e), variables) for e in strides],
                     size_hi, offsets, regions, region_key, dot,
                     [_kind(e) for e in sizes], [_kind(e) for e in strides])


@dataclass(frozen=True)
class DotInfo:
    """A dot's facts the dot cost model needs: its contracting parameters and the size of
    the contracted dimension."""

    params: tuple[int, ...]
    k: int


@dataclass
class TileValues:
    """The concrete tiles of ``n`` tilings (see :meth:`TileSet.evaluate`)."""

    tilings: Any                         # (n, P) int64: the tilings, one per row
    num_blocks: Any                      # (n,) int64: output tiles
    sizes: list[Any]                     # per entry: (n, rank) int64
    strides: list[Any]
    blocks: list[Any]                    # per entry: (n,) int64, blocks evaluating it
    alive: list[Any]                     # per entry: (n,) bool, a tile of its own

    @property
    def n(self) -> int:
        return int(self.tilings.shape[0])


@dataclass
class TileSet:
    """A fusion's tiled instructions, ready to evaluate for many tilings at once."""

    entries: list[TileEntry]
    extents: tuple[int, ...]            # per parameter: the extent it tiles
    output_params: tuple[int, ...]      # the parameters the blocks run over
    root_dims: list[tuple[int, ...]]    # per root: its output dims
    roots: list[HloInstruction]
    real_root: HloInstruction
    variant: str                        # legacy | experimental
    param_names: tuple[str, ...] = ()
    analysis: Any = None                # the FusionTiling or Space it came from
    _pairs: dict[int, list[tuple[int, int, Any]]] = field(default_factory=dict)

    # ----------------------------------------------------------------- evaluation
    def evaluate(self, tilings: Any, only: Sequence[int] | None = None) -> TileValues:
        """The concrete tiles of every row of ``tilings`` (an ``(n, P)`` integer array or a
        list of tilings). ``only``: evaluate just those entries (the others are left empty
        and not alive)."""
        S = np.atleast_2d(np.asarray(tilings, dtype=np.int64))
        if S.shape[1] != len(self.extents):
            raise SymidxError(f"{S.shape[1]} tile sizes for {len(self.extents)} parameters")
        n = S.shape[0]
        cols = [np.ascontiguousarray(S[:, p]) for p in range(S.shape[1])]
        counts = [-(-self.extents[p] // cols[p]) for p in range(S.shape[1])]
        num_blocks = np.ones(n, dtype=np.int64)
        for p in self.output_params:
            num_blocks = num_blocks * counts[p]
        sizes, strides, blocks = [], [], []
        clamped_cache: dict[tuple[int, ...], list[Any]] = {}
        wanted = set(range(len(self.entries))) if only is None else set(only)
        for k, e in enumerate(self.entries):
            if k not in wanted:
                sizes.append(np.zeros((n, e.rank), dtype=np.int64, order="F"))
                strides.append(np.zeros((n, e.rank), dtype=np.int64, order="F"))
                blocks.append(np.zeros(n, dtype=np.int64))
                continue
            sz = np.empty((n, e.rank), dtype=np.int64, order="F")
            st = np.empty((n, e.rank), dtype=np.int64, order="F")
            for j in range(e.rank):
                sz[:, j] = _apply(e.size_kinds[j], e.size_fns[j], cols)
                kind = e.stride_kinds[j]
                if kind[0] == "const":
                    st[:, j] = kind[1]
                else:
                    cl = clamped_cache.get(e.size_hi)
                    if cl is None:
                        cl = [np.minimum(c, hi) for c, hi in zip(cols, e.size_hi)]
                        clamped_cache[e.size_hi] = cl
                    st[:, j] = _apply(kind, e.stride_fns[j], cl)
            sizes.append(sz)
            strides.append(st)
            b = num_blocks
            for reg in e.regions:
                if reg[0] == "dot":
                    for p, kdim in zip(reg[1], reg[2]):
                        b = b * (-(-kdim // cols[p]))
                else:
                    b = b * reg[1] // reg[2]
            blocks.append(b)
        alive = self._alive(S, counts, sizes, strides, wanted)
        return TileValues(S, num_blocks, sizes, strides, blocks, alive)

    def _alive(self, S: Any, counts: list[Any], sizes: list[Any], strides: list[Any],
               wanted: set[int]) -> list[Any]:
        n = S.shape[0]
        alive = [np.full(n, k in wanted) for k in range(len(self.entries))]
        for j, pairs in self._pair_table().items():
            for i, _, diff in pairs:
                if i not in wanted or j not in wanted:
                    continue
                same = np.all(sizes[i] == sizes[j], axis=1) & np.all(
                    strides[i] == strides[j], axis=1)
                if not same.any():
                    continue
                if diff is not None:
                    same &= _offsets_agree(diff, S, counts, self.extents)
                alive[j] &= ~same
        return alive

    def _pair_table(self) -> dict[int, list[tuple[int, int, Any]]]:
        """For each entry, the earlier entries of the same instruction and region it may
        coincide with, and the difference of their offsets (None: always equal)."""
        if self._pairs or not self.entries:
            return self._pairs
        by_key: dict[tuple[Any, ...], list[int]] = {}
        for k, e in enumerate(self.entries):
            by_key.setdefault((id(e.instr), e.region_key, e.rank), []).append(k)
        table: dict[int, list[tuple[int, int, Any]]] = {}
        for ks in by_key.values():
            for a_pos, j in enumerate(ks):
                for i in ks[:a_pos]:
                    diffs = []
                    for x, y in zip(self.entries[i].offsets, self.entries[j].offsets):
                        d = as_expr(x) - as_expr(y)
                        if d != 0:
                            diffs.append(d)
                    table.setdefault(j, []).append((i, j, diffs or None))
        self._pairs = table
        return table

    def one(self, tiling: Sequence[int]) -> TileValues:
        """The tiles of one tiling (a one-row :meth:`evaluate`)."""
        return self.evaluate([list(tiling)])


def _offsets_agree(diffs: list[Any], S: Any, counts: list[Any], extents: Sequence[int]
                   ) -> Any:
    """Per row: do the offsets of two tiles agree for every tile of the row's tiling? The
    difference is a list of expressions over the tile ids ``d_p`` and the tile sizes
    ``s_p``; every combination of tile ids is tried (up to :data:`OFFSET_POINTS`, beyond
    which the tiles are told apart)."""
    used = sorted({s for d in diffs for s in as_expr(d).free_symbols}, key=str)
    if any(var_kind(s) not in ("d", "s") for s in used):
        return np.zeros(S.shape[0], dtype=bool)      # runtime offsets: tell apart
    cols = []
    for s in used:
        p = var_index(s)
        cols.append(S[:, p] if var_kind(s) == "s" else counts[p])
    keys = np.stack(cols, axis=1) if cols else np.zeros((S.shape[0], 0), dtype=np.int64)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    verdict = np.zeros(len(uniq), dtype=bool)
    fns = [compile_expr(as_expr(d), list(used)) for d in diffs]
    for u, row in enumerate(uniq):
        ids = [k for k, s in enumerate(used) if var_kind(s) == "d"]
        if prod(int(row[k]) for k in ids) > OFFSET_POINTS:
            continue
        grids = [np.arange(int(row[k]), dtype=np.int64) for k in ids]
        mesh = [m.reshape(-1) for m in np.meshgrid(*grids, indexing="ij")] if grids else []
        env: list[Any] = []
        for k in range(len(used)):
            env.append(mesh[ids.index(k)] if k in ids else int(row[k]))
        verdict[u] = all(not np.any(np.asarray(f(env)) != 0) for f in fns)
    return verdict[np.asarray(inverse).reshape(-1)]


# --------------------------------------------------------------------------- legacy
def _walk(t: Any, path: str) -> list[tuple[str, int, HloInstruction]]:
    """The steps of a tiled instruction's path: (kind, operand index, instruction stepped
    from) for each ``operand(k)``, ``called_root`` and ``caller_operand(k)``."""
    m = _ROOT.match(path)
    if m is None:
        raise SymidxError(f"unexpected tile path {path!r}")
    cur = t.roots[int(m.group(1))]
    nest: list[HloInstruction] = []
    steps: list[tuple[str, int, HloInstruction]] = []
    for s in _STEP.finditer(path, m.end()):
        if s.group(3):
            steps.append(("called_root", 0, cur))
            nest.append(cur)
            comp = called_computation(cur)
            assert comp is not None
            cur = comp.root
        elif s.group(1) == "operand":
            k = int(s.group(2))
            steps.append(("operand", k, cur))
            cur = cur.operands[k]
        else:
            k = int(s.group(2))
            caller = nest.pop()
            steps.append(("caller_operand", k, caller))
            cur = caller.operands[k]
    return steps


def from_analysis(t: Any, dot_k: Callable[[HloInstruction], int | None] | None = None
                  ) -> TileSet:
    """The tiles of a legacy analysis (:func:`symidx.tiling.analysis.analyze`)."""
    flat = list(t.flat_sizes)
    variables = [dim(i) for i in range(len(flat))]
    top_params = {id(p) for p in t.computation.parameters}
    roots = list(t.roots)
    # the contracting parameters of each dot, and the extent they tile
    dot_params: dict[int, tuple[int, ...]] = {}
    pos = 0
    for p in t.parameters:
        instr = next((i for c in [t.computation] for i in _all_instrs(c)
                      if i.name == p.instruction), None)
        n = len(p.sizes)
        if instr is not None and instr.opcode in ("dot", "scaled-dot") and \
                instr.dot_dimension_numbers is not None:
            nc = len(instr.dot_dimension_numbers.lhs_contracting_dims)
            if not p.hidden:
                dot_params[id(instr)] = tuple(range(pos, pos + nc))
            else:
                dot_params[id(instr)] = tuple(range(pos, pos + n))
        pos += n
    entries: list[TileEntry] = []
    for ti in t.tiled:
        instr = ti.instr
        dims_ = tuple(array_dims(instr.shape, instr.name)) if not hasattr(
            instr.shape, "elements") else tuple(array_dims(instr.shape.elements[0],
                                                           instr.name))
        steps = _walk(t, ti.path)
        regions: list[tuple[Any, ...]] = []
        region_key: list[Any] = []
        for kind, k, frm in steps:
            if kind != "operand":
                continue
            if frm.opcode == "concatenate" and frm.dimensions:
                cut = frm.dimensions[0]
                opd = array_dims(frm.operands[k].shape, frm.operands[k].name)[cut]
                tot = array_dims(frm.shape, frm.name)[cut]
                regions.append(("concat", opd, tot))
                region_key.append((frm.name, k))
            elif id(frm) in dot_params and frm.opcode in ("dot", "scaled-dot") and k < 2:
                fdn = frm.dot_dimension_numbers
                assert fdn is not None
                lhs = array_dims(frm.operands[0].shape, frm.operands[0].name)
                kd = tuple(lhs[c] for c in fdn.lhs_contracting_dims)
                regions.append(("dot", dot_params[id(frm)], kd))
                region_key.append((frm.name, k))
        root = None
        if not steps:
            m = _ROOT.match(ti.path)
            root = int(m.group(1)) if m else None
        if instr.opcode == "parameter":
            kind = "operand" if id(instr) in top_params else "nested_parameter"
        else:
            kind = "inside"
        tile = ti.tile
        low = {sym(j): Integer(b.lo) for j, b in enumerate(ti.map.ranges)}
        to_ids = {dim(p): dim(p) * sym(p) for p in range(len(flat))}
        offsets = tuple(as_expr(r).xreplace(low).xreplace(to_ids) for r in ti.map.results)
        dot = None
        if instr.opcode in ("dot", "scaled-dot") and id(instr) in dot_params:
            lhs = array_dims(instr.operands[0].shape, instr.operands[0].name)
            dn = instr.dot_dimension_numbers
            assert dn is not None
            kk = prod(lhs[c] for c in dn.lhs_contracting_dims)
            dot = DotInfo(dot_params[id(instr)], kk)
        entries.append(_entry(instr, ti.path, dims_, kind, root, tile.sizes, tile.strides,
                              variables, tuple(b.hi for b in tile.size_bounds), offsets,
                              tuple(regions), tuple(region_key), dot))
    for e in entries:
        e.root = None
    for r, root_instr in enumerate(roots):
        mine = [e for e in entries if e.instr is root_instr]
        exact = [e for e in mine if e.path == f"roots[{r}]"]
        if not mine:
            raise SymidxError(f"the root {root_instr.name} gets no tile from the real root "
                              f"{t.real_root.name}'s tiling")
        (exact or mine)[0].root = r
    return TileSet(entries, tuple(flat), tuple(t.output_params),
                   [tuple(array_dims(r.shape, r.name)) for r in roots], roots, t.real_root,
                   "legacy", tuple(p.instruction for p in t.parameters), t)


def _all_instrs(comp: Any) -> list[HloInstruction]:
    out = list(comp.instructions)
    for i in comp.instructions:
        for cs in i.called_computations.values():
            for c in cs:
                if i.opcode == "fusion":
                    out.extend(_all_instrs(c))
    return out


# --------------------------------------------------------------------------- experimental
def from_space(space: Any) -> TileSet:
    """The tiles of the experimental tiling space (:func:`symidx.tiling.space.build_space`
    without tile sizes): tiles propagated from the roots with the tile sizes ``ts_i``
    symbolic, tile ids ``tid_i`` at the tile origins."""
    nd = len(space.dims)
    variables = [ts(i) for i in range(nd)]
    top_params = {id(p) for p in space.comp.parameters}
    seq_dot: dict[int, tuple[str, int]] = {}
    for (name, kind, idx), d in space.seq.items():
        if kind == "dot":
            seq_dot[d] = (name, idx)
    entries: list[TileEntry] = []
    stack: list[tuple[HloInstruction, Any, int | None, tuple[Any, ...], tuple[Any, ...]]] = []
    for i, r in reversed(list(enumerate(space.roots))):
        stack.append((r, space.root_tile(i), i, (), ()))
    seen: set[tuple[Any, ...]] = set()
    while stack:
        instr, tile, root, regions, rkey = stack.pop()
        key = (id(instr), tile.key(), root, rkey)
        if key in seen:
            continue
        seen.add(key)
        dims_ = tuple(array_dims(instr.shape, instr.name)) if not hasattr(
            instr.shape, "elements") else tuple(array_dims(instr.shape.elements[0],
                                                           instr.name))
        kind = ("operand" if id(instr) in top_params else "nested_parameter") \
            if instr.opcode == "parameter" else "inside"
        offsets = tuple(as_expr(o) for o in tile.offsets)   # over tile ids and sizes
        dot = None
        if instr.opcode in ("dot", "scaled-dot") and instr.dot_dimension_numbers is not None:
            ps = tuple(d for (nm, kd, idx), d in sorted(space.seq.items(), key=lambda x: x[1])
                       if nm == instr.name and kd == "dot")
            lhs = array_dims(instr.operands[0].shape, instr.operands[0].name)
            dot = DotInfo(ps, prod(lhs[c] for c in
                                   instr.dot_dimension_numbers.lhs_contracting_dims))
        entries.append(_entry(instr, "", dims_, kind, root, tile.sizes, tile.strides,
                              variables, tuple(d.size for d in space.dims), offsets, regions,
                              rkey, dot))
        if instr.opcode in ("parameter", "constant", "iota") or not instr.operands:
            continue
        for k, (op, t) in enumerate(zip(instr.operands, space.to_input(instr, tile))):
            if not isinstance(t, XTile):
                continue
            reg, rk = regions, rkey
            if instr.opcode == "concatenate" and instr.dimensions:
                cut = instr.dimensions[0]
                reg = reg + (("concat", array_dims(op.shape, op.name)[cut],
                              array_dims(instr.shape, instr.name)[cut]),)
                rk = rk + ((instr.name, k),)
            elif dot is not None and k < 2:
                lhs = array_dims(instr.operands[0].shape, instr.operands[0].name)
                dn = instr.dot_dimension_numbers
                assert dn is not None
                kd = tuple(lhs[c] for c in dn.lhs_contracting_dims)
                reg = reg + (("dot", dot.params, kd),)
                rk = rk + ((instr.name, k),)
            stack.append((op, t, None, reg, rk))
    out_params = tuple(sorted({p for ids in space.root_dims for p in ids}))
    return TileSet(entries, tuple(d.size for d in space.dims), out_params,
                   [tuple(x) for x in (space.root_shapes or
                                       [space.root_shape] * len(space.roots))],
                   list(space.roots),
                   space.roots[0], "experimental",
                   tuple(f"{d.hlo}:{d.type}" for d in space.dims), space)


def tile_shared_bytes(sizes: Sequence[int], element_bits: int) -> int:
    """What one tile of a fusion parameter keeps live in shared memory: its elements, every
    dimension padded to a power of two (the shape Triton gives a loaded block), times the
    element size. The one definition behind ``--smem``."""
    return prod(1 << max(0, int(s) - 1).bit_length() if s > 1 else 1 for s in sizes) * \
        -(-element_bits // 8)


def live_shared_bytes(ts: TileSet, vals: TileValues) -> Any:
    """Per row: what one block keeps live in shared memory at once, the tiles of the
    fusion's parameters it loads (distinct tiles, :func:`tile_shared_bytes` each; the
    intermediate tiles computed from them are not counted)."""
    total = np.zeros(vals.n, dtype=np.int64)
    for k, e in enumerate(ts.entries):
        if e.kind != "operand":
            continue
        leaf = e.instr.shape
        bits = leaf.bit_width if hasattr(leaf, "bit_width") else 32
        padded = np.prod(pow2_ceil(vals.sizes[k]), axis=1) if e.rank else \
            np.ones(vals.n, dtype=np.int64)
        total += np.where(vals.alive[k], padded * -(-bits // 8), 0)
    return total


def all_tilings(extents: Sequence[int]) -> list[tuple[int, ...]]:
    """XLA's candidate tilings of ``extents`` in its order (powers of two below each extent,
    then the extent; lexicographic, the first parameter slowest)."""
    return list(product(*[candidates(n) for n in extents]))
