"""The tile-executing twin (``tile_twin.py``): a fusion evaluated tile by tile with the
derived tiles. The numpy reference interpreter (``reference_interpreter.py``, independent of
``symidx.ops``) says which parameter elements each output element reads; every output
element must lie in exactly one root tile, and every parameter element it reads in a tile
its program id loads (inside a dot's region, at any step of its contraction loop). 0
differences.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from tile_twin import differences as twin_differences

from symidx.cli.inputs import load_module
from symidx.strategies import hlo_modules
from symidx.tiling import analysis, tiled
from symidx.tiling.valid import valid_tilings

DATA = Path(__file__).parent / "data" / "tiling"
CASES = ["diamond.hlo", "dot.hlo", "bitcast.hlo", "concat.hlo", "mixed.hlo",
         "reshape_split.hlo", "slice_concat.hlo", "nested_gemm.hlo"]


def differences(path: Path, sizes: list[int], schedule: str = "major-to-minor") -> int:
    """The twin's differences for the fusion in ``path`` (see ``tile_twin.py``)."""
    comp = analysis.fusion_computation(load_module(str(path)), "fusion")
    return twin_differences(comp, sizes, schedule=schedule)


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
    assert not tiled.constraints_hold(t, [3])
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
