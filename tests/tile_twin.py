"""The tile-executing twin: a fusion evaluated tile by tile with the derived load plans.

The numpy reference interpreter (``reference_interpreter.py``, independent of
``symidx.ops``) says which parameter elements each output element reads, for concrete
integer arguments (gather indices, dynamic offsets). For a tiling, each program id computes
its root tile from what it loads: for every tiled parameter, the tiles of that program id
(and, inside a dot's region, of every step of its contraction loop), one tile per row (a
range variable of the offsets map) and, for a runtime variable, at the value the element
its source names holds in this run (clamped into its bounds where the op clamps). The twin
counts the differences: an output element written by no tile or by two, and a parameter
element an output element reads that its program id does not load. 0 means the load plan
is sound for these arguments.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from math import prod
from typing import Any

import numpy as np
from reference_interpreter import Execution, execute

from symidx.hlo import HloComputation
from symidx.tiling import analysis, tiled


def runtime_values(m: Any, pid: int, ranges: Sequence[int], run: Execution
                   ) -> list[list[int]]:
    """Per runtime variable of the offsets map ``m``, the values it takes at this program
    id and row: the element its source names, read off the run; every value in its bounds
    when the source is not known (the union: still sound, only coarser)."""
    out = []
    for v in m.rts:
        if v.source is None or v.map is None or v.source.instruction is None:
            out.append(list(range(v.bounds.lo, v.bounds.hi + 1)))
            continue
        assert v.map.num_dims == m.num_dims, \
            f"runtime variable source {v.map} is not over the program ids of {m}"
        held = run.values.get((v.source.instruction, 0))
        assert held is not None, f"the run does not know {v.source.instruction}"
        element = v.map.evaluate([pid], list(ranges)[:v.map.num_ranges])
        held = np.asarray(held)
        if any(not 0 <= e < n for e, n in zip(element, held.shape)):
            out.append([])            # a row past the end: no tile there (masked)
            continue
        value = int(held[tuple(element)] if element else held)
        if v.clamped:
            value = min(max(value, v.bounds.lo), v.bounds.hi)
        out.append([value])
    return out


def tile_elements(result: tiled.TiledResult, pid: int, shape: list[int],
                  run: Execution) -> set[int]:
    """Linear indices of the in-bounds elements one program id loads: every row (range
    variable of the offsets map) at the runtime values this run gives it."""
    m = result.offsets_map
    out: set[int] = set()
    for ranges in itertools.product(*[range(b.lo, b.hi + 1) for b in m.ranges]):
        for rts in itertools.product(*runtime_values(m, pid, ranges, run)):
            if not m.constraints_hold([pid], list(ranges), list(rts)):
                continue   # no tile here (a concatenate operand outside its range)
            offsets = m.evaluate([pid], list(ranges), list(rts))
            for k in itertools.product(*[range(s) for s in result.tile_sizes]):
                idx = [o + st * kk for o, st, kk in zip(offsets, result.tile_strides, k)]
                if all(0 <= i < n for i, n in zip(idx, shape)):
                    out.add(int(np.ravel_multi_index(idx, shape)) if shape else 0)
    return out


def differences(comp: HloComputation, sizes: Sequence[int],
                arguments: Sequence[object] = (), schedule: str = "major-to-minor",
                results: list[tiled.TiledResult] | None = None) -> int:
    """The number of differences between the output computed tile by tile and the
    reference run with ``arguments`` (integer parameters' values)."""
    t = analysis.analyze(comp)
    if results is None:
        results = tiled.tiled_computation(t, sizes, assume_satisfied=True,
                                             schedule=schedule, enforce_concatenate=False)
    run = execute(comp, list(arguments) + [None] * (len(comp.parameters) - len(arguments)))
    flat = t.flat_sizes
    diffs = 0
    for r_i, root in enumerate(t.roots):
        path = f"roots[{r_i}]"
        found = [(r, ti) for r, ti in zip(results, t.tiled) if ti.path == path]
        if not found:
            continue       # a root tiled along another root's path (shared tile)
        root_result, root_ti = found[0]
        grid = tiled.grid_of(t, root_ti)
        out_shape = list(analysis.output_dims(root))
        n_root = prod(-(-flat[p] // sizes[p]) for p in grid)
        reads = run.reads[(root.name, 0)]
        owner = np.full(max(1, prod(out_shape)), -1)
        for pid in range(n_root):
            outputs = tile_elements(root_result, pid, out_shape, run)
            for e in outputs:
                diffs += owner[e] != -1           # written twice
                owner[e] = pid
            loaded: set[int] = set()
            for r, ti in zip(results, t.tiled):
                if not any(ti.instr is q for q in comp.parameters):
                    continue     # not a load from memory (nested fusions' parameters too)
                if tiled.grid_of(t, ti) != grid:
                    continue     # another root's program ids
                p = ti.instr.parameter_number
                assert p is not None
                shape = list(analysis.output_dims(ti.instr))
                inner = prod(-(-flat[q] // sizes[q]) for q in ti.region)
                for sub in range(inner):
                    loaded |= {run.offsets[(p, 0)] + i
                               for i in tile_elements(r, pid * inner + sub, shape, run)}
            for e in outputs:
                diffs += len(set(reads[e]) - loaded)     # a read the tile did not load
        diffs += int((owner == -1).sum())                # an output element no tile writes
    return diffs
