"""The layout and HLO strategies of symidx.strategies draw valid values, and what they draw
holds symidx to its reference semantics: layouts against their integer functions, single ops
and fused chains against the element-by-element reference in reference_hlo."""

from __future__ import annotations

import itertools
from functools import cache

from hypothesis import given, settings

from ops_check import check, image, union_image
from reference_hlo import Index, box, dependencies
from symidx import equal, simplify
from symidx.analysis import instruction_maps
from symidx.hlo import HloComputation, HloInstruction, Shape, parse_hlo, parse_shape
from symidx.layout import cute
from symidx.layout.maps import cute_map, xla_offset_map
from symidx.lowering.layouts import xla
from symidx.ops import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT
from symidx.strategies import (
    HLO_OPCODES,
    INDEX_OPCODES,
    cute_layouts,
    hlo_modules,
    indexing_maps,
    xla_shapes,
)


@settings(max_examples=40)
@given(xla_shapes())
def test_xla_shapes_print_parse_and_lay_out_every_element_once(shape: Shape):
    assert parse_shape(str(shape)) == shape
    layout = shape.layout_or_default
    tiles = [t.dims for t in layout.tiles]
    size = xla.physical_size_elements(shape.dims, layout.minor_to_major, tiles)
    offset_map = xla_offset_map(shape.dims, layout.minor_to_major, tiles)
    offsets = set()
    for index in box(shape.dims):
        offset = xla.physical_offset(shape.dims, layout.minor_to_major, tiles, index)
        assert 0 <= offset < size
        assert offset_map.evaluate(index) == (offset,)
        offsets.add(offset)
    assert len(offsets) == shape.num_elements


@settings(max_examples=40)
@given(cute_layouts())
def test_cute_layouts_print_parse_and_match_their_map(layout: cute.Layout):
    assert cute.parse_layout(str(layout)) == layout
    m = cute_map(layout)
    sizes = [b.size for b in m.dims]
    assert sizes == [cute.size(mode) for mode in layout.modes()]
    for point in itertools.product(*(range(n) for n in sizes)):
        assert m.evaluate(point) == (layout(*point),), (str(layout), point)


def test_hlo_modules_draw_every_opcode():
    seen: set[str] = set()

    @settings(max_examples=300, database=None)  # 150 missed reduce 1 run in 8 (dev profile)
    @given(hlo_modules(max_ops=1))
    def collect(text: str) -> None:
        seen.add(parse_hlo(text).entry.root.opcode)

    collect()
    assert seen == set(HLO_OPCODES)


def test_hlo_modules_draw_every_index_opcode_within_the_limits():
    """Shared operands, index ops and tuple roots: every opcode comes up, every array keeps
    to ``max_elements``, only a reshape makes a dimension longer than ``2 * max_dim`` (and
    a parameter of its dims may follow), and the start index has at most one reader."""
    seen: set[str] = set()

    @settings(max_examples=300, database=None)
    @given(hlo_modules(max_ops=4, fused=True, max_inputs=2, shared=True, tuple_root=True,
                       max_elements=20, opcodes=INDEX_OPCODES + HLO_OPCODES))
    def collect(text: str) -> None:
        fused = parse_hlo(text).entry.root.called_computations["calls"][0]
        seen.update(i.opcode for i in fused.instructions)
        start = fused.parameters[0]
        assert str(start.shape) == "s32[]"
        assert sum(start in i.operands for i in fused.instructions) <= 1
        for i in fused.instructions:
            if isinstance(i.shape, Shape) and i.shape.element_type == "f32":
                assert i.shape.num_elements <= 20
                longest = max([8] + [d for op in i.operands for d in op.shape.dims])
                grown = max(i.shape.dims, default=1) > longest
                assert not grown or i.opcode in ("reshape", "parameter")

    collect()
    assert set(INDEX_OPCODES) | set(HLO_OPCODES) | {"tuple"} <= seen


@settings(max_examples=60)
@given(hlo_modules(max_ops=1))
def test_single_ops_match_the_reference(text: str):
    root = parse_hlo(text).entry.root
    check(root)


def reads_through(comp: HloComputation) -> dict[Index, list[set[Index]]]:
    """For every index of the root: per parameter, the elements it reads through the chain,
    by running the reference op by op."""
    deps = {i.name: dependencies(i) for i in comp.instructions
            if i.opcode not in ("parameter", "constant")}

    @cache
    def reach(instr: HloInstruction, index: Index) -> frozenset[tuple[int, Index]]:
        if instr.opcode == "parameter":
            return frozenset({(instr.parameter_number, index)})
        if instr.opcode == "constant":
            return frozenset()
        return frozenset().union(*(reach(op, i)
                                   for op, elements in zip(instr.operands, deps[instr.name][index])
                                   for i in elements))

    out = {}
    for index in deps[comp.root.name]:
        found = reach(comp.root, index)
        out[index] = [{i for k, i in found if k == p.parameter_number} for p in comp.parameters]
    return out


@settings(max_examples=40)
@given(hlo_modules(max_ops=4, fused=True))
def test_fused_chains_match_the_reference_both_ways(text: str):
    fusion = parse_hlo(text).entry.root
    comp = fusion.called_computations["calls"][0]
    groups = instruction_maps(fusion, OUTPUT_TO_INPUT)
    assert [g.unsupported for g in groups] == [None] * len(fusion.operands)
    expected = reads_through(comp)
    for index, per_param in expected.items():
        for g, want in zip(groups, per_param):
            assert union_image(g.maps, index, {}) == want, (g.index, index, text)
    for k, param in enumerate(comp.parameters):
        (forward,) = instruction_maps(fusion, INPUT_TO_OUTPUT, operand=k)
        relation = {(o, i) for i in box(param.shape.dims) for m in forward.maps
                    for o in image(m, i, {})}
        assert relation == {(o, i) for o, per_param in expected.items() for i in per_param[k]}


# The two examples of docs/guide.md ("Property-based tests of your own"), as written there.

@settings(max_examples=25, deadline=None)
@given(indexing_maps(max_dims=2, max_ranges=1, max_rts=0))
def test_simplify_keeps_the_meaning(m):
    assert equal(simplify(m), m)


@settings(max_examples=10, deadline=None)
@given(hlo_modules(max_ops=3, fused=True))
def test_every_fusion_operand_has_a_rule(text):
    fusion = parse_hlo(text).entry.root
    assert all(g.unsupported is None for g in instruction_maps(fusion, "output_to_input"))
