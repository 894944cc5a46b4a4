"""Random fused computations: their maps are what executing them says.

:func:`symidx.strategies.hlo_modules` builds small fusions from the ops symidx composes
(elementwise, transpose, reverse, slice, pad, broadcast, reduce, reshape, concatenate,
dynamic-slice, dynamic-update-slice, gather with iota or constant indices, a nested fusion),
with shared operands, diamonds and tuple roots. The reference interpreter runs each for
every value of its integer parameter (the one runtime start index, or beyond, where HLO
clamps it). Every run must read only what the maps give (sound); over all runs, the maps
must give exactly what is read, unless a gather reads a table of several indices (a map
cannot say which row reads which index). Input-to-output maps must be the inverse
relation.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from reference_interpreter import execute, map_relation

from symidx.fusion import called_computation, output_maps, parameter_maps
from symidx.hlo import HloModule, Shape, parse_hlo
from symidx.hlo.literal import LiteralValue
from symidx.ops import num_outputs
from symidx.strategies import HLO_OPCODES, INDEX_OPCODES, hlo_modules

MAX_SIZE = 48

FUSIONS = hlo_modules(max_ops=6, fused=True, max_inputs=2, shared=True, tuple_root=True,
                      max_elements=MAX_SIZE, opcodes=INDEX_OPCODES + HLO_OPCODES)
"""Fusions whose parameter 0 is the ``s32[]`` start index (read by at most one op); the
index opcodes listed first, so that they are drawn about as often as the rest."""


def size(dims: tuple[int, ...]) -> int:
    return int(np.prod(dims, dtype=np.int64)) if dims else 1


def _values(literal: LiteralValue) -> list[LiteralValue]:
    return [v for x in literal for v in _values(x)] if isinstance(literal, tuple) else [literal]


def can_be_exact(module: HloModule) -> bool:
    """Whether maps can give exactly what is read: not when a gather reads a table of
    several different indices (a map cannot say which row reads which index)."""
    return not any(
        i.opcode == "gather" and i.operands[1].opcode == "constant"
        and i.operands[1].literal is not None and len(set(_values(i.operands[1].literal))) > 1
        for comp in module.computations.values() for i in comp.instructions)


def test_can_be_exact_sees_a_table_of_indices() -> None:
    gather = """HloModule g
ENTRY e {{
  x = f32[4,2] parameter(0)
  i = s32[2,1] constant({table})
  ROOT g = f32[2,2] gather(x, i), offset_dims={{1}}, collapsed_slice_dims={{0}},
    start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1,2}}
}}
"""
    assert can_be_exact(parse_hlo(gather.format(table="{{1},{1}}")))
    assert not can_be_exact(parse_hlo(gather.format(table="{{1},{3}}")))


@settings(max_examples=40)
@given(FUSIONS)
def test_random_fusion_maps_match_execution(text: str) -> None:
    """For every start index p0 can hold (and some beyond, which HLO clamps), the maps
    contain what the run reads; over all of them, exactly (a map with a runtime variable
    gives what some value of it reads)."""
    module = parse_hlo(text)
    exact = can_be_exact(module)
    fusion = module.entry.root
    comp = called_computation(fusion)
    assert comp is not None
    reach = max(max(i.shape.dims, default=1) for i in comp.instructions
                if isinstance(i.shape, Shape))
    runs = [execute(comp, [np.int64(v)] + [None] * (len(comp.parameters) - 1))
            for v in range(-2, reach + 3)]
    for output in range(num_outputs(fusion)):
        out_dims = comp.root.shape.dims if num_outputs(fusion) == 1 \
            else comp.root.shape.elements[output].dims
        for k, reached in enumerate(parameter_maps(comp, output)):
            assert reached.unsupported is None
            whole = map_relation(reached.maps, out_dims, comp.parameters[k].shape.dims)
            read = np.unique(np.concatenate([run.relation(k, output) for run in runs]))
            assert np.isin(read, whole).all(), f"parameter {k}: unsound\n{text}"
            if exact:
                assert np.array_equal(read, whole), f"parameter {k}: not exact\n{text}"
            forward = output_maps(comp, k)[output]
            inverse = map_relation(forward.maps, comp.parameters[k].shape.dims, out_dims)
            assert np.array_equal(_transposed(inverse, comp.parameters[k].shape.dims, out_dims),
                                  whole), f"parameter {k}: input-to-output differs\n{text}"


def _transposed(codes: np.ndarray, source: tuple[int, ...], target: tuple[int, ...]
                ) -> np.ndarray:
    """Pair codes ``s * T + t`` as ``t * S + s``."""
    n_target, n_source = size(target), size(source)
    return np.unique((codes % n_target) * n_source + codes // n_target)
