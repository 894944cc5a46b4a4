"""Every fusion of every compiled JAX sample gets its maps, and they are what executing the
fused computation says (:mod:`reference_interpreter`, on random integer arguments): every
element an output element reads is in its maps, and, with each runtime variable set to the
value its provenance holds in the run, the maps give exactly what is read (only a part of
it where a held value is clamped into the variable's interval, which a map may no longer
record)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from reference_interpreter import (
    Execution,
    execute,
    held_outside,
    is_integer,
    map_relation,
    provenance_known,
)

from symidx.analysis import instruction_maps
from symidx.fusion import called_computation
from symidx.hlo import HloInstruction, Shape, fusion_instructions, parse_hlo
from symidx.ops import num_outputs

DATA = Path(__file__).parent / "data" / "hlo"
SAMPLES = sorted(DATA.glob("*.compiled.hlo"))


def arguments(fusion: HloInstruction, seed: int) -> list[np.ndarray | None]:
    """Random integers for integer parameters: small ones (seed 0), or reaching past both
    ends of every dimension of the fused computation, so clamping is exercised; floats
    are never read."""
    rng = np.random.default_rng(seed)
    comp = called_computation(fusion)
    assert comp is not None
    reach = max((max(i.shape.dims, default=1) for i in comp.instructions
                 if isinstance(i.shape, Shape)), default=1) + 3
    low, high = (0, 3) if seed == 0 else (-reach, reach)  # seed 0: offsets in range
    return [rng.integers(low, high, size=p.shape.dims) if is_integer(p) else None
            for p in comp.parameters]


def check_fusion(fusion: HloInstruction, run: Execution, output: int) -> None:
    """The fusion's maps from output ``output`` against the run."""
    comp = run.comp
    out_shape = fusion.shape if isinstance(fusion.shape, Shape) else fusion.shape.elements[output]
    for group in instruction_maps(fusion, "output_to_input", output=output):
        assert group.unsupported is None, (fusion.name, group.unsupported)
        param_dims = comp.parameters[group.index].shape.dims
        read = run.relation(group.index, output)
        whole = map_relation(group.maps, out_shape.dims, param_dims)
        assert np.isin(read, whole).all(), f"{fusion.name} operand {group.index}: unsound"
        assert provenance_known(group.maps)
        exact = map_relation(group.maps, out_shape.dims, param_dims, run)
        if held_outside(group.maps, run):  # clamped offsets: part of what is read
            assert np.isin(exact, read).all(), f"{fusion.name} operand {group.index}"
        else:
            assert np.array_equal(exact, read), f"{fusion.name} operand {group.index}"


def sample_fusions() -> list[tuple[str, HloInstruction]]:
    found = []
    for path in SAMPLES:
        module = parse_hlo(path.read_text(), source=path.name)
        found += [(f"{path.stem}:{f.name}", f) for f in fusion_instructions(module)]
    return found


FUSIONS = sample_fusions()


def test_every_sample_has_fusions() -> None:
    assert len(SAMPLES) == 12 and len(FUSIONS) >= 30


@pytest.mark.parametrize(("label", "fusion"), FUSIONS, ids=[label for label, _ in FUSIONS])
def test_sample_fusion_maps_match_execution(label: str, fusion: HloInstruction) -> None:
    comp = called_computation(fusion)
    assert comp is not None
    for seed in range(2 if any(is_integer(p) for p in comp.parameters) else 1):
        run = execute(comp, arguments(fusion, seed))
        for output in range(num_outputs(fusion)):
            check_fusion(fusion, run, output)
