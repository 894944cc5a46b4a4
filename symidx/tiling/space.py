"""The experimental tiling view (XLA's ``TilingSpace`` and expression tiles).

A **tiling space** has one dimension per output dimension of the root (*parallel*), then
one per reduced dimension of every reduce and per contracting dimension of every dot
(*sequential*, visited from the root down), and one runtime variable per offset operand of
every dynamic-slice. A **tile** of an instruction is four lists of expressions over the tile
ids ``tid_i``, the tile sizes ``ts_i`` and the runtime variables ``rt_j``: per dimension its
offset, size, stride and upper bound (the end of the valid range, a mask for the last tile).

Tiles are propagated through an op by its indexing map (symidx's op rules), with XLA's
per-op facts for the bounds: a result ``k * d_i + c (+ rt)`` (a slice, strided or not, a
pad, a concatenate operand, a dynamic slice) maps dimension ``i``'s offset ``o`` to
``k * o + c``, its stride ``s`` to ``k * s`` and its upper bound ``u`` to ``k * u + c``
(a pad operand's bound is its extent; a concatenate operand's is clamped into it, and its
offset is ``tid * ts - C``); a range variable that is a reduced or contracted dimension
becomes that sequential dimension's tile; ``x floordiv c`` (a block-scaled dot's scales)
covers the blocks the tile touches; an all-gather's ``x mod c`` carries the replica ids;
a constant is a one-element tile; ``sum_i c_i * d_i + c`` that linearizes dimensions (a
reshape that merges them), once tile sizes are assigned, is one strided run when the tile
is 1s, at most one partial dimension, whole dimensions, 1s (major to minor). Anything else
(a reshape that splits dimensions, interior padding, a reversed dimension) is refused with
the expression that is not handled (:class:`SpaceRefusal`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sympy import Integer, Symbol

from symidx.core.expr import (
    Expr,
    FloorDiv,
    Max,
    Min,
    Mod,
    as_expr,
    dim,
    rt,
    sym,
    terms,
    var_index,
    var_kind,
)
from symidx.core.indexing_map import IndexingMap
from symidx.core.indexing_map.text import print_expr
from symidx.errors import SymidxError, UnsupportedOpError
from symidx.hlo import HloComputation, HloInstruction
from symidx.hlo.facts import array_dims
from symidx.ops import input_to_output, output_to_input

__all__ = ["Space", "XTile", "SpaceRefusal", "build_space", "tid", "ts", "rtv"]


class SpaceRefusal(SymidxError):
    pass


# The space's symbols are symidx's positional variables, printed with XLA's names: tile id
# ``tid_i`` is ``d_i``, tile size ``ts_i`` is ``s_i``, runtime variable ``rt_j`` is ``rt_j``.
def tid(i: int) -> Symbol:
    return dim(i)


def ts(i: int) -> Symbol:
    return sym(i)


def rtv(j: int) -> Symbol:
    return rt(j)


def _label(v: Symbol) -> str:
    kind = var_kind(v)
    return {"d": "tid_", "s": "ts_", "rt": "rt_"}[kind] + str(var_index(v))


@dataclass(frozen=True)
class XTile:
    offsets: tuple[Expr, ...]
    sizes: tuple[Expr, ...]
    strides: tuple[Expr, ...]
    upper_bounds: tuple[Expr, ...]
    replica_ids: XTile | None = None    # an all-gather's operand: which replica holds it

    def key(self) -> tuple[object, ...]:
        return (self.offsets, self.sizes, self.strides, self.upper_bounds,
                self.replica_ids.key() if self.replica_ids else None)

    def to_json(self) -> dict[str, object]:
        def p(xs: Sequence[Expr]) -> list[str]:
            return [_text(x) for x in xs]
        out: dict[str, object] = {
            "offsets": p(self.offsets), "sizes": p(self.sizes), "strides": p(self.strides),
            "upper_bounds": p(self.upper_bounds), "constraints": None}
        if self.replica_ids is not None:
            out["replica_ids"] = self.replica_ids.to_json()
        return out


@dataclass
class Dimension:
    id: int
    size: int
    type: str
    hlo: str
    dim_id: int


@dataclass
class RtVar:
    id: int
    lo: int
    hi: int
    hlo: str


@dataclass
class Space:
    comp: HloComputation
    roots: list[HloInstruction]
    dims: list[Dimension]
    rts: list[RtVar]
    seq: dict[tuple[str, str, int], int]          # (instr, kind, index) -> dimension id
    rt_of: dict[tuple[str, int], int]             # (instr, offset operand) -> rt id
    tile_sizes: list[int] | None = None
    root_shape: list[int] = field(default_factory=list)
    root_dims: list[list[int]] = field(default_factory=list)  # per root: its dimension ids
    root_shapes: list[list[int]] = field(default_factory=list)  # per root: its dims

    # ----- the symbols' values
    def subst(self) -> dict[Symbol, Expr]:
        out: dict[Symbol, Expr] = {}
        if self.tile_sizes is None:
            return out
        for d, s in zip(self.dims, self.tile_sizes):
            out[ts(d.id)] = Integer(s)
            if -(-d.size // s) <= 1:
                out[tid(d.id)] = Integer(0)
        return out

    def finish(self, t: XTile) -> XTile:
        sub = self.subst()
        if not sub:
            return t

        def f(xs: Sequence[Expr]) -> tuple[Expr, ...]:
            return tuple(as_expr(x).xreplace(sub) for x in xs)
        return XTile(f(t.offsets), f(t.sizes), f(t.strides), f(t.upper_bounds),
                     self.finish(t.replica_ids) if t.replica_ids else None)

    def root_tile(self, r: int) -> XTile:
        shape = self.root_shapes[r] if self.root_shapes else self.root_shape
        ids = self.root_dims[r]
        return self.finish(XTile(tuple(tid(i) * ts(i) for i in ids), tuple(ts(i) for i in ids),
                                 tuple(Integer(1) for _ in ids),
                                 tuple(Integer(n) for n in shape)))

    def to_json(self) -> dict[str, object]:
        dims = []
        for d in self.dims:
            e: dict[str, object] = {"id": d.id, "size": d.size, "type": d.type, "hlo": d.hlo,
                                    "dim_id": d.dim_id}
            if self.tile_sizes is not None:
                e["tile_size"] = self.tile_sizes[d.id]
            dims.append(e)
        return {"dimensions": dims,
                "rt_vars": [{"id": r.id, "bounds": [r.lo, r.hi], "hlo": r.hlo} for r in self.rts]}

    # ----- propagation
    def replica_ids_of(self, tile: XTile) -> XTile:
        """``tile`` with its replica ids, when it is the tile of an all-gather's operand
        given without them: an offset ``x mod c`` along the gathered dimension, ``c`` that
        operand's extent there, is the offset within replica ``x floordiv c`` (of
        ``gathered extent / c`` replicas)."""
        if tile.replica_ids is not None:
            return tile
        for g in self.comp.instructions:
            if g.opcode != "all-gather" or not g.dimensions or not g.operands:
                continue
            d = g.dimensions[0]
            src = array_dims(g.operands[0].shape, g.operands[0].name)
            out = array_dims(g.shape, g.name) if not _is_tuple(g) else ()
            if d >= len(src) or d >= len(out) or not src[d]:
                continue
            c, n = src[d], out[d] // src[d]
            for off in tile.offsets:
                e = as_expr(off)
                if isinstance(e, Mod) and e.args[1].is_Integer and int(e.args[1]) == c:
                    return XTile(tile.offsets, tile.sizes, tile.strides, tile.upper_bounds,
                                 XTile((FloorDiv(e.args[0], c),), (Integer(1),),
                                       (Integer(1),), (Integer(n),)))
        return tile

    def to_input(self, instr: HloInstruction, tile: XTile) -> list[XTile]:
        if instr.opcode == "get-tuple-element":
            return [tile]
        if instr.opcode == "scan":
            return self._scan_input(instr, tile)
        try:
            groups = output_to_input(instr, 0)
        except UnsupportedOpError as e:
            raise SpaceRefusal(f"{instr.name}: {e}") from None
        out = []
        for k, (op, maps) in enumerate(zip(instr.operands, groups)):
            if not _is_tuple(op) and not array_dims(op.shape, op.name):
                out.append(XTile((), (), (), ()))      # a scalar: the empty tile
                continue
            if len(maps) != 1:
                raise SpaceRefusal(f"{instr.name} reads operand {k} through {len(maps)} maps")
            out.append(self.finish(self._through(instr, k, maps[0], tile,
                                                 array_dims(op.shape, op.name), False)))
        return out

    def to_output(self, instr: HloInstruction, operand: int, tile: XTile) -> list[XTile]:
        if instr.opcode == "get-tuple-element":
            return [tile]
        if instr.opcode == "scan":
            shapes = [array_dims(x, instr.name) for x in instr.shape.elements]  # type: ignore[union-attr]
            return self._scan_like(instr, tile, shapes)
        try:
            groups = input_to_output(instr, operand)
        except UnsupportedOpError as e:
            raise SpaceRefusal(f"{instr.name}: {e}") from None
        maps = groups[0]
        if len(maps) != 1:
            raise SpaceRefusal(f"{instr.name}: operand {operand} reaches the output through "
                               f"{len(maps)} maps")
        shape = array_dims(instr.shape, instr.name) if not _is_tuple(instr) else \
            array_dims(instr.shape.elements[0], instr.name)  # type: ignore[union-attr]
        return [self.finish(self._through(instr, operand, maps[0], tile, shape, True))]

    def _scan_input(self, instr: HloInstruction, tile: XTile) -> list[XTile]:
        return self._scan_like(instr, tile, [array_dims(op.shape, op.name)
                                             for op in instr.operands])

    def _scan_like(self, instr: HloInstruction, tile: XTile, shapes: list[tuple[int, ...]]
                   ) -> list[XTile]:
        """A scan's arrays share its tile; its carries drop the scanned dimension."""
        dims_attr = instr.dimensions or (0,)
        out = []
        n_in = len(shapes)
        for k, shape in enumerate(shapes):
            if len(shape) == len(tile.offsets):
                out.append(tile)
            elif len(shape) == len(tile.offsets) - 1:
                keep = [i for i in range(len(tile.offsets)) if i not in dims_attr]
                out.append(XTile(_pick(tile.offsets, keep), _pick(tile.sizes, keep),
                                 _pick(tile.strides, keep), _pick(tile.upper_bounds, keep)))
            else:
                raise SpaceRefusal(f"{instr.name}: operand {k} of {n_in} has rank "
                                   f"{len(shape)}, the tile rank {len(tile.offsets)}")
        return out

    def _through(self, instr: HloInstruction, k: int, m: IndexingMap, tile: XTile,
                 shape: Sequence[int], forward: bool) -> XTile:
        if m.is_known_empty and m.num_results == 0:
            return XTile((), (), (), ())
        if m.is_undefined or m.is_known_empty:
            raise SpaceRefusal(f"{instr.name}: operand {k} has no map to propagate through")
        for c, _ in m.constraints:
            if any(isinstance(x, Mod) for x in as_expr(c).atoms(Mod)):
                raise SpaceRefusal(f"{instr.name}: operand {k} is read through a strided "
                                   f"mask ({print_expr(c)}), e.g. interior padding")
        offs, sizes, strides, ubs = [], [], [], []
        self._replica: list[tuple[Expr, ...]] = []
        for j, e in enumerate(m.results):
            o, s, st, ub = self._result(instr, k, j, as_expr(e), tile, m,
                                        shape[j] if j < len(shape) else 1, forward)
            offs.append(o)
            sizes.append(s)
            strides.append(st)
            ubs.append(ub)
        # an all-gather's operand says which replica holds it; below it, the operands of
        # the ops that compute that operand keep the replica ids (XLA carries them)
        replica = tile.replica_ids
        if self._replica:
            o, ub = self._replica[0]
            replica = XTile((o,), (Integer(1),), (Integer(1),), (ub,))
        return XTile(tuple(offs), tuple(sizes), tuple(strides), tuple(ubs), replica)

    def _result(self, instr: HloInstruction, k: int, j: int, e: Expr, tile: XTile,
                m: IndexingMap, extent: int, forward: bool
                ) -> tuple[Expr, Expr, Expr, Expr]:
        if isinstance(e, (FloorDiv, Mod)) and e.args[1].is_Integer and int(e.args[1]) > 0:
            c = int(e.args[1])
            o, size, st, ub = self._result(instr, k, j, as_expr(e.args[0]), tile, m,
                                           extent * c, forward)
            if st != 1:
                raise SpaceRefusal(f"{instr.name}: operand {k} dimension {j} is "
                                   f"{print_expr(e)}, a non-unit stride under a division")
            if instr.opcode in ("reshape", "bitcast") and _within_one_block(o, size, c):
                # every tile lies in one block of c (its size divides c and its offset is
                # a multiple of its size): one block, and the part of it the tile holds
                if isinstance(e, FloorDiv):
                    return FloorDiv(o, c), Integer(1), Integer(1), FloorDiv(o, c) + 1
                return Mod(o, c), size, st, Mod(o, c) + size
            if isinstance(e, FloorDiv):
                # the tile's elements, divided: ceil(size / c) of them
                new_ub = FloorDiv(ub + (c - 1), c)
                if as_expr(new_ub).is_Integer:
                    new_ub = Integer(min(int(new_ub), extent))
                # the blocks the tile touches: exact whatever the tile's alignment
                blocks = FloorDiv(o + size - 1, c) - FloorDiv(o, c) + 1
                return FloorDiv(o, c), blocks, Integer(1), new_ub
            if instr.opcode != "all-gather":
                raise SpaceRefusal(f"{instr.name}: operand {k} dimension {j} is "
                                   f"{print_expr(e)}, a tile that may wrap around (not "
                                   f"proven to lie in one block of {c}: that needs concrete "
                                   f"tile sizes dividing {c} and offsets multiple of them)")
            # an all-gather's operand: the offset within the replica, and which replica
            self._replica.append((FloorDiv(o, c), FloorDiv(ub + (c - 1), c)))
            return Mod(o, c), size, st, Integer(extent)
        const = 0
        dims_: list[tuple[int, Expr]] = []
        syms: list[tuple[int, Expr]] = []
        rts: list[tuple[int, Expr]] = []
        for c, mono in terms(e):
            if mono.is_Integer or mono == 1:
                const += c
                continue
            if not mono.is_Symbol:
                raise SpaceRefusal(f"{instr.name}: operand {k} dimension {j} is "
                                   f"{print_expr(e)}, not a shifted dimension")
            kind = var_kind(mono)
            (dims_ if kind == "d" else syms if kind == "s" else rts).append((c, mono))
        shift: Expr = Integer(const)
        for c, r in rts:
            if c != 1:
                raise SpaceRefusal(f"{instr.name}: runtime offset {print_expr(e)}")
            shift = shift + rtv(self._rt_id(instr, j, var_index(r)))
        if len(dims_) == 1 and not syms:
            c, d = dims_[0]
            i = var_index(d)
            if c < 1:
                raise SpaceRefusal(f"{instr.name}: operand {k} dimension {j} is "
                                   f"{print_expr(e)}, a reversed dimension")
            # element r of the output reads c * r + shift: a strided slice's tile is
            # c times as sparse, and its bound moves the same way (XLA's slice rule)
            ub = tile.upper_bounds[i] * c + shift
            if instr.opcode == "pad" and not forward:
                ub = Integer(extent)          # the operand's extent (XLA's pad rule)
            elif instr.opcode == "concatenate" and not forward:
                # clamped into the operand (XLA: max(min(bound, extent), 0))
                ub = Integer(max(0, min(int(ub), extent))) if as_expr(ub).is_Integer \
                    else Max(Min(ub, Integer(extent)), Integer(0))
            return tile.offsets[i] * c + shift, tile.sizes[i], tile.strides[i] * c, ub
        if not dims_ and len(syms) == 1 and syms[0][0] == 1:
            s = syms[0][1]
            seq = self._seq_dim(instr, k, j)
            if seq is not None and not forward:
                d = self.dims[seq]
                return (tid(seq) * ts(seq) + shift, ts(seq), Integer(1), Integer(d.size))
            b = m.ranges[var_index(s)]
            n = b.hi - b.lo + 1
            size = Integer(_next_pow2(n)) if forward else Integer(n)
            return Integer(b.lo) + shift, size, Integer(1), Integer(extent)
        if not dims_ and not syms:
            return shift, Integer(1), Integer(1), shift + 1
        if len(dims_) >= 2 and not syms and self.tile_sizes is not None:
            merged = self._merged(instr, dims_, shift, tile, m)
            if merged is not None:
                return merged
        raise SpaceRefusal(f"{instr.name}: operand {k} dimension {j} is {print_expr(e)}, "
                           "not a shifted dimension (a reshape or bitcast that merges or "
                           "splits dimensions, or interior padding)")

    def _merged(self, instr: HloInstruction, terms_: list[tuple[int, Expr]], shift: Expr,
                tile: XTile, m: IndexingMap) -> tuple[Expr, Expr, Expr, Expr] | None:
        """``sum_i c_i * d_i + shift`` that linearizes dimensions (a reshape or bitcast that
        merges them: each coefficient the next one times the next dimension's extent), for
        concrete tile sizes of the pattern (1*, partial?, full*, 1*) from major to minor
        (XLA's collapsed tile): one strided run of ``prod(size_i)`` elements, its stride the
        innermost dimension's with more than one element. None for any other pattern."""
        order = sorted(terms_, key=lambda cd: -cd[0])
        idx = [var_index(d) for _, d in order]
        extents = [m.dims[i].hi - m.dims[i].lo + 1 for i in idx]
        coeffs = [c for c, _ in order]
        if any(c < 1 for c in coeffs) or any(coeffs[a] != coeffs[a + 1] * extents[a + 1]
                                            for a in range(len(order) - 1)):
            return None
        sizes = [as_expr(tile.sizes[i]) for i in idx]
        if not all(x.is_Integer for x in sizes) or any(
                as_expr(tile.strides[i]) != 1 for i in idx):
            return None
        t = [int(x) for x in sizes]
        a = 0
        while a < len(t) and t[a] == 1:
            a += 1
        b = len(t)
        while b > a and t[b - 1] == 1:
            b -= 1
        # between a and b: at most one partial dimension, then whole ones
        inner = [q for q in range(a, b) if t[q] != extents[q]]
        if inner and inner[-1] != a:
            return None
        size = 1
        for x in t:
            size *= x
        last = max((q for q in range(len(t)) if t[q] > 1), default=None)
        stride = Integer(coeffs[last]) if last is not None else Integer(0)
        offset: Expr = shift
        ub: Expr = shift + 1
        for c, i, x in zip(coeffs, idx, t):
            o = tile.offsets[i]
            offset = offset + c * o
            ub = ub + c * Min(o + (x - 1), tile.upper_bounds[i] - 1)
        return offset, Integer(size), stride, ub

    def _rt_id(self, instr: HloInstruction, j: int, r: int) -> int:
        if (instr.name, j + 1) in self.rt_of:
            return self.rt_of[(instr.name, j + 1)]
        mine = sorted(v for (n, _), v in self.rt_of.items() if n == instr.name)
        if r < len(mine):
            return mine[r]
        raise SpaceRefusal(f"{instr.name}: a runtime variable the space does not have")

    def _seq_dim(self, instr: HloInstruction, k: int, j: int) -> int | None:
        if instr.opcode == "reduce":
            return self.seq.get((instr.name, "reduce", j))
        if instr.opcode in ("dot", "scaled-dot") and instr.dot_dimension_numbers is not None:
            dn = instr.dot_dimension_numbers
            side = dn.lhs_contracting_dims if k % 2 == 0 else dn.rhs_contracting_dims
            if k >= 2:   # a scaled dot's scales follow their operands' contraction
                side = dn.lhs_contracting_dims if k == 2 else dn.rhs_contracting_dims
            if j in side:
                return self.seq.get((instr.name, "dot", side.index(j)))
        return None


def _ragged(instr: HloInstruction) -> Any:
    from symidx.ops.linalg import ragged_dot

    try:
        return ragged_dot(instr)
    except SymidxError as e:
        raise SpaceRefusal(f"{instr.name}: {e}") from None


def _within_one_block(offset: Expr, size: Expr, c: int) -> bool:
    """Does every tile ``[offset, offset + size)`` lie in one block ``[k c, (k + 1) c)``?
    Proven when the size is a constant dividing ``c`` and every term of the offset (tile
    ids times constants, a constant) is a multiple of it; runtime variables or symbolic
    tile sizes leave it unproven."""
    size = as_expr(size)
    if not size.is_Integer or int(size) < 1 or c % int(size):
        return False
    s = int(size)
    for coeff, mono in terms(as_expr(offset)):
        if mono == 1 or mono.is_Integer or mono.is_Symbol and var_kind(mono) == "d":
            if coeff % s:
                return False
        else:
            return False
    return True


def _pick(xs: tuple[Expr, ...], keep: Sequence[int]) -> tuple[Expr, ...]:
    return tuple(xs[i] for i in keep)


def _text(x: Expr) -> str:
    e = as_expr(x)
    return print_expr(e, {v: _label(v) for v in e.free_symbols})


def _next_pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def _is_tuple(instr: HloInstruction) -> bool:
    return hasattr(instr.shape, "elements")


def build_space(comp: HloComputation, tile_sizes: Sequence[int] | None = None) -> Space:
    root = comp.root
    roots = [root]
    if root.opcode == "tuple":
        roots = list(root.operands)
    elif _is_tuple(root):      # a variadic reduce: one root tile per output
        roots = [root] * len(root.shape.elements)  # type: ignore[union-attr]
    dims: list[Dimension] = []
    seq: dict[tuple[str, str, int], int] = {}
    # A root of a shape no earlier root has gets parallel dimensions of its own (XLA's
    # TilingSpace::Create appends them root by root); roots of one shape share them, and a
    # variadic root (a tuple-shaped reduce or scan) has one set.
    root_dims: list[list[int]] = []
    root_shapes: list[list[int]] = []
    placed: dict[object, list[int]] = {}
    for r in roots:
        if _is_tuple(r):
            shape = array_dims(r.shape.elements[0], r.name)  # type: ignore[union-attr]
        else:
            shape = array_dims(r.shape, r.name)
        root_shapes.append(list(shape))
        if id(r) in placed or tuple(shape) in placed:
            root_dims.append(placed.get(id(r)) or placed[tuple(shape)])
            continue
        definer = r
        if r.opcode == "get-tuple-element" and r.operands[0].opcode == "scan":
            definer = r.operands[0]
        scan_dims = set(definer.dimensions or ()) if definer.opcode == "scan" else set()
        ids = []
        for i, n in enumerate(shape):
            ids.append(len(dims))
            dims.append(Dimension(len(dims), n, "sequential" if i in scan_dims else "parallel",
                                  definer.name if i in scan_dims else r.name, i))
        placed[id(r)] = ids
        placed[tuple(shape)] = ids
        root_dims.append(ids)
    for instr in reversed(comp.instructions):
        if instr.opcode == "reduce" and instr.dimensions is not None:
            shape = array_dims(instr.operands[0].shape, instr.operands[0].name)
            for d in instr.dimensions:
                seq[(instr.name, "reduce", d)] = len(dims)
                dims.append(Dimension(len(dims), shape[d], "sequential", instr.name,
                                      len(dims)))
        elif instr.opcode in ("dot", "scaled-dot") and instr.dot_dimension_numbers is not None:
            shape = array_dims(instr.operands[0].shape, instr.operands[0].name)
            for idx, d in enumerate(instr.dot_dimension_numbers.lhs_contracting_dims):
                seq[(instr.name, "dot", idx)] = len(dims)
                dims.append(Dimension(len(dims), shape[d], "sequential", instr.name,
                                      len(dims)))
        elif instr.opcode == "ragged-dot":
            # XLA's ProcessRaggedDot: a ragged non-contracting dimension loops over the
            # groups, then the contraction; a ragged contracting dimension is the loop
            rd = _ragged(instr)
            loops = ([("group", rd.groups)] if not rd.leading else []) + \
                [("dot", rd.lhs[d]) for d in rd.lhs_contracting]
            for idx, (kind, size) in enumerate(loops):
                seq[(instr.name, kind, idx)] = len(dims)
                dims.append(Dimension(len(dims), size, "sequential", instr.name, len(dims)))
    rts: list[RtVar] = []
    rt_of: dict[tuple[str, int], int] = {}
    for instr in reversed(comp.instructions):
        if instr.opcode == "ragged-dot":
            # the size of the current group (rows or contracting positions it holds), and
            # for a ragged contracting dimension also where the group starts
            rd = _ragged(instr)
            ragged = instr.attr_int_list("lhs_ragged_dims") or (0,)
            extent = rd.lhs[ragged[0]]
            names = [instr.operands[2].name] + ([f"{instr.name}.group_start"]
                                               if rd.leading else [])
            for j, hlo in enumerate(names):
                rt_of[(instr.name, 10_000 + j)] = len(rts)
                rts.append(RtVar(len(rts), 0, extent, hlo))
        if instr.opcode == "dynamic-slice":
            src = array_dims(instr.operands[0].shape, instr.operands[0].name)
            out = array_dims(instr.shape, instr.name)
            for j in range(1, len(instr.operands)):
                rt_of[(instr.name, j)] = len(rts)
                rts.append(RtVar(len(rts), 0, src[j - 1] - out[j - 1],
                                 instr.operands[j].name))
    space = Space(comp, roots, dims, rts, seq, rt_of)
    space.root_dims = root_dims
    space.root_shapes = root_shapes
    space.root_shape = root_shapes[0]
    if tile_sizes is not None:
        if len(tile_sizes) != len(dims):
            raise SpaceRefusal(f"{len(tile_sizes)} tile sizes for {len(dims)} dimensions")
        if any(s < 1 for s in tile_sizes):
            raise SpaceRefusal("tile sizes must be at least 1")
        space.tile_sizes = list(tile_sizes)
    return space


def tile_computation(space: Space) -> list[tuple[HloInstruction, int, XTile]]:
    """Every instruction reached from the roots, with its distinct tiles (numbered per
    instruction), by propagating the root tiles to the operands."""
    seen: dict[tuple[str, bool], list[XTile]] = {}
    out: list[tuple[HloInstruction, int, XTile]] = []
    # A root that is also read inside the computation keeps its own tile (as XLA's).
    stack = [(r, space.root_tile(i), True) for i, r in enumerate(space.roots)][::-1]
    while stack:
        instr, tile, is_root = stack.pop()
        known = seen.setdefault((instr.name, is_root and instr.opcode == "parameter"), [])
        if any(t.key() == tile.key() for t in known):
            continue
        known.append(tile)
        out.append((instr, len(known) - 1, tile))
        if instr.opcode in ("parameter", "constant", "iota") or not instr.operands:
            continue
        for op, t in zip(instr.operands, space.to_input(instr, tile)):
            stack.append((op, t, False))
    return out

