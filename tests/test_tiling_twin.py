"""The tile-executing twin: a fusion evaluated tile by tile with the derived tiles.

The numpy reference interpreter (``reference_interpreter.py``, independent of
``symidx.ops``) says which parameter elements each output element reads. For a tiling, a
program id computes the root's tile from the tiles of the parameters at that program id
(and, inside a dot's region, at every step of its contraction loop). The twin checks the
whole output is reproduced this way: every output element lies in exactly one root tile,
and every parameter element it reads lies in a tile its program id loads. 0 differences.
"""

from __future__ import annotations

import itertools
from math import prod
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from reference_interpreter import execute

from symidx.cli.inputs import load_module
from symidx.hlo.facts import array_dims
from symidx.strategies import hlo_modules
from symidx.tiling import analysis
from symidx.tiling.valid import valid_tilings

DATA = Path(__file__).parent / "data" / "tiling"
CASES = ["diamond.hlo", "dot.hlo", "bitcast.hlo", "concat.hlo", "mixed.hlo",
         "reshape_split.hlo", "slice_concat.hlo", "nested_gemm.hlo"]


def tile_elements(result: analysis.TiledResult, pid: int, shape: list[int]) -> set[int]:
    """Linear indices of the in-bounds elements of one tile."""
    m = result.offsets_map
    if not m.constraints_hold([pid], [b.lo for b in m.ranges], [v.bounds.lo for v in m.rts]):
        # pids whose origin lies outside this instruction's range (a concatenate operand)
        return set()
    offsets = m.evaluate([pid], [b.lo for b in m.ranges], [v.bounds.lo for v in m.rts])
    out = set()
    for k in itertools.product(*[range(s) for s in result.tile_sizes]):
        idx = [o + st * kk for o, st, kk in zip(offsets, result.tile_strides, k)]
        if all(0 <= i < n for i, n in zip(idx, shape)):
            out.add(int(np.ravel_multi_index(idx, shape)) if shape else 0)
    return out


def differences(path: Path, sizes: list[int], schedule: str = "major-to-minor") -> int:
    module = load_module(str(path))
    comp = analysis.fusion_computation(module, "fusion")
    t = analysis.analyze(comp)
    results = analysis.tiled_computation(t, sizes, assume_satisfied=True, schedule=schedule)
    run = execute(comp, [None] * len(comp.parameters))
    root = comp.root
    out_shape = list(array_dims(root.shape, root.name))
    flat = t.flat_sizes
    outs = t.output_params
    n_root = prod(-(-flat[p] // sizes[p]) for p in outs)
    reads = run.reads[(root.name, 0)]
    owner = np.full(max(1, prod(out_shape)), -1)
    diffs = 0
    root_result = next(r for r, ti in zip(results, t.tiled) if ti.path == "roots[0]")
    for pid in range(n_root):
        outputs = tile_elements(root_result, pid, out_shape)
        for e in outputs:
            diffs += owner[e] != -1           # written twice
            owner[e] = pid
        loaded: set[int] = set()
        for r, ti in zip(results, t.tiled):
            if not any(ti.instr is q for q in comp.parameters):
                continue     # not a load from memory (nested fusions' parameters included)
            p = ti.instr.parameter_number
            assert p is not None
            shape = list(array_dims(ti.instr.shape, ti.name))
            inner = prod(-(-flat[q] // sizes[q]) for q in ti.region)
            for sub in range(inner):
                loaded |= {run.offsets[(p, 0)] + i
                           for i in tile_elements(r, pid * inner + sub, shape)}
        for e in outputs:
            diffs += len(set(reads[e]) - loaded)     # a read the tile did not load
    diffs += int((owner == -1).sum())                # an output element no tile writes
    return diffs


@pytest.mark.parametrize("name", CASES)
def test_tiles_reproduce_the_output(name: str) -> None:
    module = load_module(str(DATA / name))
    t = analysis.analyze(analysis.fusion_computation(module, "fusion"))
    tilings = list(itertools.islice(valid_tilings(t), 0, None))
    # the smallest, the largest and one in the middle of the valid tilings
    picks = {tilings[0], tilings[-1], tilings[len(tilings) // 2]}
    for sizes in picks:
        assert differences(DATA / name, list(sizes)) == 0, sizes


@pytest.mark.parametrize("name", ["dot.hlo", "batched_dot.hlo", "nested_gemm.hlo"])
def test_transposed_dot_schedule_reproduces_the_output(name: str) -> None:
    """Under the transposed-dot schedule, each program id's operand tiles still hold what
    its root tile reads."""
    module = load_module(str(DATA / name))
    t = analysis.analyze(analysis.fusion_computation(module, "fusion"))
    tilings = list(valid_tilings(t))
    for sizes in {tilings[0], tilings[-1], tilings[len(tilings) // 2]}:
        assert differences(DATA / name, list(sizes), "transposed-dot") == 0, sizes


def test_twin_sees_a_wrong_tiling() -> None:
    """A tiling that violates the constraints (a reshape tile that is not strided) makes the
    twin report differences: it can fail."""
    module = load_module(str(DATA / "reshape_split.hlo"))
    t = analysis.analyze(analysis.fusion_computation(module, "fusion"))
    assert not analysis.constraints_hold(t, [3])
    assert differences(DATA / "reshape_split.hlo", [3]) > 0


@settings(max_examples=40)
@given(hlo_modules(max_ops=4, fused=True, shared=True, max_inputs=2))
def test_random_fusions_are_reproduced_tile_by_tile(text: str) -> None:
    """Random fusions (symidx.strategies): every tiling symidx accepts, among the smallest,
    the largest and a middle valid one, reproduces the whole output."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "random.hlo"
        path.write_text(text)
        module = load_module(str(path))
        try:
            t = analysis.analyze(analysis.fusion_computation(module, "fusion"))
        except analysis.AnalysisRefusal:
            assume(False)
            return
        tilings = list(itertools.islice(valid_tilings(t), 0, 200))
        assume(tilings)
        for sizes in {tilings[0], tilings[-1], tilings[len(tilings) // 2]}:
            assert differences(path, list(sizes)) == 0, (sizes, text)


def test_an_operand_nothing_reads_is_tiled_as_known_empty() -> None:
    """Padding that crops the operand's only element (low 1, high -1): the composed map is
    known empty and the tiling still reproduces the output (found by the random twin)."""
    path = DATA / "pad_everything_cropped.hlo"
    module = load_module(str(path))
    t = analysis.analyze(analysis.fusion_computation(module, "fusion"))
    tilings = list(valid_tilings(t))
    assert tilings == [(1, 1)]
    assert differences(path, list(tilings[0])) == 0
