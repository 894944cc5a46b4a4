"""A small sample of the tile sweep (benchmarks/bench_tile_sweep.py): CPU fusions XLA made
of JAX programs written as models are (an embedding gather with a batch, RoPE concatenates,
an interleave, flips, a negative pad, an argmax's variadic reduce, dynamic slices and
updates, a roll), each a module of its own in tests/data/tiling/real/.

symidx tiles each at its smallest, largest and a middle valid tiling (none refused), and the
reference-interpreter twin runs every program id of each with integer operands drawn twice:
every parameter element an output tile reads is loaded by its program id, at the runtime
values its index elements hold. The sweep does the same on XLA:CPU with perturbed inputs.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from tile_twin import differences

from symidx.cli.inputs import load_module
from symidx.hlo.facts import array_dims
from symidx.tiling import analysis
from symidx.tiling.check import check_tiling
from symidx.tiling.valid import valid_tilings

REAL = Path(__file__).parent / "data" / "tiling" / "real"
CASES = sorted(p.name for p in REAL.glob("*.hlo"))


def integer_arguments(comp, rng: np.random.Generator) -> list[object]:  # type: ignore[no-untyped-def]
    """Values for the parameters: integers (indices, offsets) from a little below 0 to a
    little past the largest dimension, some clamped; floats drawn at random (an argmax's
    index depends on them)."""
    params = list(comp.parameters)
    bound = max(max(array_dims(p.shape, p.name), default=1) for p in params)
    out: list[object] = []
    for p in params:
        if p.shape.element_type.startswith(("s", "u")):
            out.append(rng.integers(-3, bound + 3, size=array_dims(p.shape, p.name))
                       .astype(np.int64))
        else:
            out.append(rng.standard_normal(array_dims(p.shape, p.name)))
    return out


def test_the_sample_holds_the_classes_the_sweep_found() -> None:
    assert len(CASES) >= 10
    text = " ".join((REAL / c).read_text() for c in CASES)
    for op in ("gather(", "concatenate(", "reverse(", "pad(", "dynamic-slice(",
               "dynamic-update-slice(", "reduce("):
        assert op in text, op


@pytest.mark.parametrize("name", CASES)
def test_real_fusions_are_tiled_and_their_tiles_are_load_plans(name: str) -> None:
    comp = load_module(str(REAL / name)).entry
    t = analysis.analyze(comp)
    tilings = list(itertools.islice(valid_tilings(t), 400))
    assert tilings, name
    rng = np.random.default_rng(sum(map(ord, name)))
    for sizes in {tilings[0], tilings[-1], tilings[len(tilings) // 2]}:
        for _ in range(2):
            args = integer_arguments(comp, rng)
            assert differences(comp, list(sizes), args) == 0, (name, sizes)


@pytest.mark.parametrize("name", ["embed_multiply_bitcast.hlo",
                                  "dyn_update_select_dynamic_update_slice.hlo",
                                  "flip_both_multiply_bitcast.hlo"])
def test_check_proves_the_real_tilings(name: str) -> None:
    t = analysis.analyze(load_module(str(REAL / name)).entry)
    tilings = list(itertools.islice(valid_tilings(t), 400))
    for sizes in {tilings[0], tilings[-1], tilings[len(tilings) // 2]}:
        report = check_tiling(t, list(sizes))
        assert all(i["covers"] for i in report["instructions"]), (name, sizes)
