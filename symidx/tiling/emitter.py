"""What Triton can emit: XLA's Triton emitter constraints on a tiling
(``triton_emitter_constraints.cc``: ``TritonEmitterConstraints`` for the legacy analysis,
``VerifyTritonConstraints`` for the experimental tiler), over many tilings at once.

A tiling is refused when

* **a tile is too big**: some tiled instruction's tile, every dimension padded to a power
  of two, has more than :data:`MAX_TENSOR_NUM_ELEMENTS` elements (Triton's
  ``TRITON_MAX_TENSOR_NUMEL``);
* **a dot operand is too big**: a tile of a dot's operand, the tiling's sizes padded to
  powers of two, is longer than :data:`MAX_MMA_DIM_SIZE` along some dimension;
* **the grid is too big**: the number of output tiles is not below the device's grid
  limit in x;
* **a root tile is neither a power of two nor the whole dimension** along some dimension
  (for every root of a multi-output fusion);
* (legacy) **a reshape or bitcast, a concatenate, cannot take the padded tile**: the
  reshape's own tiling constraints hold for its output tile padded to powers of two; a
  concatenate's padded tile along the concatenated dimension divides every operand's
  extent there, with offset 0 and stride 1.

:class:`TritonConstraints` is built once per :class:`~symidx.tiling.concrete.TileSet`;
:meth:`TritonConstraints.check` answers for every row of a
:class:`~symidx.tiling.concrete.TileValues` with a reason code per row, and
:meth:`TritonConstraints.reason` words a row's reason (with XLA's phrases).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from symidx.core.expr import dim
from symidx.hlo.facts import array_dims
from symidx.tiling.concrete import TileSet, TileValues, pow2_ceil

__all__ = ["TritonConstraints", "MAX_TENSOR_NUM_ELEMENTS", "MAX_MMA_DIM_SIZE", "OK",
           "TOO_BIG", "MMA", "GRID", "ROOT_POW2", "CUSTOM", "ANALYSIS"]

#: ``kMaxTensorNumElements`` (triton_emitter_constraints.cc).
MAX_TENSOR_NUM_ELEMENTS = 1_048_576
#: ``kMaxMMADimSize`` (triton_emitter_constraints.cc).
MAX_MMA_DIM_SIZE = 256

OK, ANALYSIS, TOO_BIG, GRID, MMA, CUSTOM, ROOT_POW2 = range(7)


@dataclass
class _Custom:
    entry: int
    kind: str                       # reshape | concat
    evaluate: Any                   # (sizes at raw params, sizes at padded) -> bool array
    what: str


class TritonConstraints:
    """The Triton emitter's constraints on the tilings of one fusion (see the module
    docstring). ``grid_limit`` is the device's ``block_dim_limit().x``."""

    def __init__(self, ts: TileSet, grid_limit: int, analysis_constraints: bool = True):
        self.ts = ts
        self.grid_limit = grid_limit
        self.analysis_constraints = analysis_constraints
        self.dot_operands: list[tuple[int, list[int]]] = []
        self.custom: list[_Custom] = []
        by_path = {e.path: k for k, e in enumerate(ts.entries) if e.path}
        for k, e in enumerate(ts.entries):
            if e.kind != "inside":
                continue
            if e.instr.opcode in ("dot", "scaled-dot"):
                ops: list[int | None] = [by_path.get(f"{e.path}.operand({i})")
                                         for i in range(2)]
                if ts.variant == "experimental":
                    ops = list(self._experimental_operands(k))
                self.dot_operands.append((k, [o for o in ops if o is not None]))
            elif ts.variant == "legacy" and e.instr.opcode in ("reshape", "bitcast"):
                c = _reshape_constraint(e)
                if c is not None:
                    self.custom.append(_Custom(k, "reshape", c, e.instr.name))
            elif ts.variant == "legacy" and e.instr.opcode == "concatenate" and \
                    e.instr.dimensions:
                self.custom.append(_Custom(k, "concat", _concat_constraint(e, k),
                                           e.instr.name))

    def _experimental_operands(self, k: int) -> list[int]:
        """The tiles of the dot's operands in the experimental tile set: the entries of the
        operand instructions in the dot's region."""
        e = self.ts.entries[k]
        out = []
        for i, op in enumerate(e.instr.operands[:2]):
            key = e.region_key + ((e.instr.name, i),)
            found = [j for j, x in enumerate(self.ts.entries)
                     if x.instr is op and x.region_key == key]
            if found:
                out.append(found[0])
        return out

    def check(self, vals: TileValues, padded_vals: TileValues | None = None) -> Any:
        """A reason code per row (:data:`OK` when the tiling can be emitted)."""
        import numpy as np

        ts = self.ts
        n = vals.n
        code = np.full(n, OK, dtype=np.int64)

        def fail(mask: Any, c: int) -> None:
            code[(code == OK) & mask] = c

        if self.analysis_constraints and ts.variant == "legacy":
            fail(~self.analysis_ok(vals), ANALYSIS)
        for k in range(len(ts.entries)):
            padded = np.prod(pow2_ceil(vals.sizes[k]), axis=1) if vals.sizes[k].shape[1] \
                else np.ones(n, dtype=np.int64)
            fail(padded > MAX_TENSOR_NUM_ELEMENTS, TOO_BIG)
        fail(vals.num_blocks >= self.grid_limit, GRID)
        if self.dot_operands or self.custom:
            needed = [o for _, ops in self.dot_operands for o in ops] + \
                [c.entry for c in self.custom]
            pv = padded_vals if padded_vals is not None else (
                ts.evaluate(pow2_ceil(vals.tilings), only=needed) if ts.variant == "legacy"
                else vals)
            for _, ops in self.dot_operands:
                for o in ops:
                    fail(np.any(pv.sizes[o] > MAX_MMA_DIM_SIZE, axis=1) |
                         np.any(pv.sizes[o] < 1, axis=1), MMA)
            for c in self.custom:
                fail(~c.evaluate(vals.sizes[c.entry], pv, vals), CUSTOM)
        for k, e in enumerate(ts.entries):
            if e.root is None:
                continue
            sz = vals.sizes[k]
            pow2 = (sz & (sz - 1)) == 0
            whole = sz == np.asarray(e.dims, dtype=np.int64)[None, :] if e.dims else pow2
            fail(np.any(~(pow2 | whole), axis=1), ROOT_POW2)
        return code

    def analysis_ok(self, vals: TileValues) -> Any:
        """The analysis' own constraints (and a concatenate's tile dividing its operands)."""
        import numpy as np

        t = self.ts.analysis
        S = vals.tilings
        ok = np.ones(vals.n, dtype=bool)
        if t is None:
            return ok
        ev = t.constraints.evaluator([dim(i) for i in range(S.shape[1])])
        res = ev([S[:, i] for i in range(S.shape[1])])
        ok &= np.broadcast_to(np.asarray(res, dtype=bool), (vals.n,))
        for k, e in enumerate(self.ts.entries):
            if e.instr.opcode == "concatenate" and e.instr.dimensions:
                cut = e.instr.dimensions[0]
                tsz = vals.sizes[k][:, cut]
                for op in e.instr.operands[:-1]:
                    ok &= (array_dims(op.shape, op.name)[cut] % tsz) == 0
        return ok

    def reason(self, code: int, vals: TileValues, row: int) -> str:
        """XLA's words for a row's reason code."""
        import numpy as np

        ts = self.ts
        if code == OK:
            return ""
        if code == ANALYSIS:
            return "the tiling does not satisfy the tiling analysis' constraints"
        if code == TOO_BIG:
            for k, e in enumerate(ts.entries):
                p = int(np.prod(pow2_ceil(vals.sizes[k][row:row + 1]))) \
                    if vals.sizes[k].shape[1] else 1
                if p > MAX_TENSOR_NUM_ELEMENTS:
                    return (f"{e.name} has a tile {list(map(int, vals.sizes[k][row]))} with "
                            f"a padded tile size product that exceeds the maximum "
                            f"({p} > {MAX_TENSOR_NUM_ELEMENTS} elements)")
        if code == GRID:
            return (f"Number of blocks exceeds the device grid limit "
                    f"({int(vals.num_blocks[row])} >= {self.grid_limit})")
        if code == MMA:
            return (f"a dot operand's tile exceeds the maximum MMA dimension size "
                    f"({MAX_MMA_DIM_SIZE})")
        if code == CUSTOM:
            return "a reshape, bitcast or concatenate cannot take the tile padded to powers of 2"
        if code == ROOT_POW2:
            for k, e in enumerate(ts.entries):
                if e.root is not None:
                    sz = [int(x) for x in vals.sizes[k][row]]
                    bad = [i for i, s in enumerate(sz) if s & (s - 1) and s != e.dims[i]]
                    if bad:
                        return (f"the tile size {sz[bad[0]]} of root {e.name} along dimension "
                                f"{bad[0]} is neither a power of 2 nor equal to the dimension "
                                f"size {e.dims[bad[0]]}")
        return "refused"


def _reshape_constraint(e: Any) -> Any:
    """The reshape's own tiling constraints, on its output tile padded to powers of 2."""
    import numpy as np

    from symidx.errors import SymidxError
    from symidx.ops import output_to_input
    from symidx.tiling.symbolic_tile import TileRefusal, symbolic_tile

    try:
        maps = output_to_input(e.instr, 0)[0]
        tile = symbolic_tile(maps[0], simplified=False)
    except (TileRefusal, SymidxError, IndexError):
        return None
    cons = tile.constraints
    if cons.is_always:
        return None
    rank = len(e.dims)
    ev = cons.evaluator([dim(i) for i in range(rank)])

    def evaluate(sizes: Any, pv: Any, vals: Any) -> Any:
        padded = pow2_ceil(sizes)
        return np.broadcast_to(np.asarray(ev([padded[:, i] for i in range(rank)]),
                                          dtype=bool), (sizes.shape[0],))
    return evaluate


def _concat_constraint(e: Any, index: int | None = None) -> Any:
    """A concatenate's padded tile along the cut divides every operand's extent, and its
    stride there is 1."""
    import numpy as np

    cut = e.instr.dimensions[0]
    extents = [array_dims(op.shape, op.name)[cut] for op in e.instr.operands]

    def evaluate(sizes: Any, pv: Any, vals: Any) -> Any:
        padded = pow2_ceil(sizes[:, cut])
        ok = np.ones(sizes.shape[0], dtype=bool)
        for x in extents:
            ok &= (x % padded) == 0
        if index is not None:
            ok &= pv.strides[index][:, cut] == 1    # stride 1 along the cut
        return ok
    return evaluate
