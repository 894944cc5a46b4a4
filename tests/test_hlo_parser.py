"""The HLO parser: what it reads from the JAX samples and XLA's test modules, the graph it
builds, and where it points when the text is wrong."""

from __future__ import annotations

import gc
import itertools
import json
import math
import re
from pathlib import Path

import pytest

from symidx.errors import ParseError
from symidx.hlo import (
    ConvolutionDimensionNumbers,
    DotDimensionNumbers,
    GatherDimensionNumbers,
    HloLayout,
    HloModule,
    PaddingDim,
    ScatterDimensionNumbers,
    Shape,
    SliceDim,
    TupleShape,
    WindowDim,
    called_computation,
    computation_graph,
    fusion_instructions,
    parse_hlo,
    parse_shape,
    topological_order,
    users,
)
from symidx.hlo.lexer import strip_comments

DATA = Path(__file__).parent / "data" / "hlo"
SAMPLES = sorted(DATA.glob("*.hlo"))
CONFORMANCE = json.loads((DATA / "conformance_modules.json").read_text())


def sample(name: str) -> HloModule:
    return parse_hlo((DATA / name).read_text(), source=name)


def conformance(case_id: str) -> HloModule:
    (text,) = [case["hlo"] for case in CONFORMANCE if case["id"].endswith("/" + case_id)]
    return parse_hlo(text, source=case_id)


# --------------------------------------------------------------------------- what is read

# file: (computations, instructions in all computations, entry root opcode, its shape)
SAMPLE_FACTS = {
    "attention.compiled.hlo": (9, 45, "fusion", "f32[2,4,16,32]{3,2,1,0}"),
    "attention.lowered.hlo": (3, 32, "dot", "f32[2,4,16,32]{3,2,1,0}"),
    "concat_slice.compiled.hlo": (2, 12, "fusion", "f32[4,13,10]{2,1,0}"),
    "concat_slice.lowered.hlo": (1, 8, "multiply", "f32[4,13,10]{2,1,0}"),
    "conv2d.compiled.hlo": (1, 3, "convolution", "f32[1,12,12,16]{3,2,1,0}"),
    "conv2d.lowered.hlo": (1, 3, "convolution", "f32[1,12,12,16]{3,2,1,0}"),
    "cumsum.compiled.hlo": (8, 33, "fusion", "f32[3,50]{1,0}"),
    "cumsum.lowered.hlo": (4, 10, "call", "f32[3,50]{1,0}"),
    "dyn_update.compiled.hlo": (2, 20, "fusion", "f32[20,30]{1,0}"),
    "dyn_update.lowered.hlo": (1, 16, "add", "f32[20,30]{1,0}"),
    "embedding.compiled.hlo": (3, 30, "fusion", "f32[8,32]{1,0}"),
    "embedding.lowered.hlo": (5, 39, "reduce", "f32[8,32]{1,0}"),
    "layernorm.compiled.hlo": (8, 53, "fusion", "f32[4,33,96]{2,1,0}"),
    "layernorm.lowered.hlo": (3, 45, "add", "f32[4,33,96]{2,1,0}"),
    "maxpool.compiled.hlo": (3, 9, "fusion", "f32[2,8,8,4]{3,2,1,0}"),
    "maxpool.lowered.hlo": (2, 6, "reduce-window", "f32[2,8,8,4]{3,2,1,0}"),
    "mlp.compiled.hlo": (4, 18, "fusion", "f32[32,16]{1,0}"),
    "mlp.lowered.hlo": (1, 12, "dot", "f32[32,16]{1,0}"),
    "padded_stencil.compiled.hlo": (3, 16, "fusion", "f32[30,40]{1,0}"),
    "padded_stencil.lowered.hlo": (2, 15, "subtract", "f32[30,40]{1,0}"),
    "rearrange.compiled.hlo": (2, 10, "fusion", "f32[2,16,6,10]{3,2,1,0}"),
    "rearrange.lowered.hlo": (2, 8, "add", "f32[2,16,6,10]{1,3,2,0}"),
    "scan_rnn.compiled.hlo": (9, 53, "get-tuple-element", "f32[6,4,8]{2,1,0}"),
    "scan_rnn.lowered.hlo": (6, 51, "get-tuple-element", "f32[6,4,8]{2,1,0}"),
}


def test_every_sample_is_listed() -> None:
    assert sorted(SAMPLE_FACTS) == [p.name for p in SAMPLES]


@pytest.mark.parametrize("name", sorted(SAMPLE_FACTS))
def test_sample_structure(name: str) -> None:
    n_computations, n_instructions, root_opcode, root_shape = SAMPLE_FACTS[name]
    module = sample(name)
    assert len(module.computations) == n_computations
    assert sum(len(c.instructions) for c in module.computations.values()) == n_instructions
    assert module.entry.is_entry and list(module.computations)[-1] == module.entry.name
    assert module.entry.root.opcode == root_opcode
    assert str(module.entry.root.shape) == root_shape
    for comp in module.computations.values():
        assert comp.root.is_root and comp.root in comp.instructions
        assert [p.parameter_number for p in comp.parameters] == list(range(len(comp.parameters)))
        assert all(not i.name.startswith("%") for i in comp.instructions)


@pytest.mark.parametrize("case", CONFORMANCE, ids=[c["id"].split("/")[-1] for c in CONFORMANCE])
def test_every_conformance_module_parses(case: dict[str, str]) -> None:
    module = parse_hlo(case["hlo"], source=case["id"])
    assert module.entry.root.is_root


def test_conformance_file_has_every_distinct_module() -> None:
    assert len(CONFORMANCE) == 68
    assert len({case["hlo"] for case in CONFORMANCE}) == 68


def test_module_header_and_debug_blocks() -> None:
    module = sample("attention.compiled.hlo")
    assert module.name == "jit_attention"
    assert module.attributes["is_scheduled"] == "true"
    assert module.attributes["entry_computation_layout"] == (
        "{(f32[2,4,16,32]{3,2,1,0}, f32[2,4,24,32]{3,2,1,0}, f32[2,4,24,32]{3,2,1,0})"
        "->f32[2,4,16,32]{3,2,1,0}}")
    assert module.attributes["allow_spmd_sharding_propagation_to_parameters"] == "{true,true,true}"
    assert {k: len(v) for k, v in module.debug_info.items()} == {
        "FileNames": 1, "FunctionNames": 3, "FileLocations": 5, "StackFrames": 5}
    assert module.debug_info["FunctionNames"][2] == '3 "attention"'
    assert module.debug_info["StackFrames"][0] == "1 {file_location_id=1 parent_frame_id=1}"
    assert sample("mlp.lowered.hlo").debug_info == {}
    assert conformance("AllGatherOp").attributes == {"replica_count": "4"}


def test_module_without_header() -> None:
    module = conformance("FusionOpWithDot")
    assert module.name == ""
    assert list(module.computations) == ["f", "e"]
    assert module.entry.name == "e"


def test_percent_names_and_bare_names_read_the_same() -> None:
    compiled = sample("conv2d.compiled.hlo").entry
    lowered = sample("conv2d.lowered.hlo").entry
    assert compiled.name == lowered.name == "main.1"
    assert [i.name for i in compiled.instructions] == [i.name for i in lowered.instructions]
    assert compiled.root.operand_names == ("x.1", "w.1")
    assert compiled.instruction("%x.1") is compiled.instruction("x.1")


def test_signature_and_parameters() -> None:
    module = sample("scan_rnn.compiled.hlo")
    body = module.computation("%region_0.4")
    (param,) = body.parameters
    assert param.name == "arg_tuple.1" and param.parameter_number == 0
    assert isinstance(param.shape, TupleShape) and len(param.shape.elements) == 5
    assert body.root.opcode == "tuple" and len(body.root.operands) == 5
    # Parameters are ordered by number, not by text order.
    closed_call = sample("scan_rnn.lowered.hlo").computation("closed_call.2")
    assert [p.name for p in closed_call.parameters] == ["Arg_0.3", "Arg_1.3", "Arg_2.1"]


def test_operands_with_inline_shapes() -> None:
    root = conformance("DynamicSliceOp").entry.root
    assert root.operand_names == ("src", "of1", "of2", "of3")
    assert root.dynamic_slice_sizes == (1, 2, 32)
    assert root.shape == parse_shape("s32[1,2,32]")


def test_multiline_instructions_and_no_space_before_opcode() -> None:
    root = conformance("ComputeGroupedOutputToInputIndexing_VariadicReduce").entry.root
    assert root.shape == parse_shape("(f32[32]{0}, f32[32]{0})")
    assert root.operand_names == ("param_0.3", "param_1.3", "param_2.2", "constant")
    assert root.dimensions == (1,)
    p0 = conformance("ReduceWindowOp_NoPadding").entry.instruction("p0")
    assert p0.shape == parse_shape("f32[1024,514]") and p0.opcode == "parameter"


def test_layouts_of_chosen_instructions() -> None:
    transpose = sample("rearrange.lowered.hlo").entry.instruction("transpose.1")
    assert isinstance(transpose.shape, Shape)
    assert transpose.shape.layout == HloLayout((1, 3, 2, 0))
    assert transpose.dimensions == (0, 3, 1, 2)
    bitcast = sample("embedding.compiled.hlo").computation("fused_computation")
    assert bitcast.instruction("bitcast.3").shape == parse_shape("s32[40,1]{0,1}")
    no_layout = conformance("BitcastIsReshape").entry.root
    assert isinstance(no_layout.shape, Shape) and no_layout.shape.layout is None
    spaced = conformance("BitcastIsTransposeReshapeTranspose").entry.root
    assert spaced.shape == parse_shape("f32[51,16]{0,1}")


def test_slice() -> None:
    strided = sample("concat_slice.lowered.hlo").entry.instruction("slice.1")
    assert strided.slice == (SliceDim(0, 4, 1), SliceDim(3, 40, 3), SliceDim(0, 20, 2))
    unstrided = sample("padded_stencil.lowered.hlo").entry.instruction("slice.3")
    assert unstrided.slice == (SliceDim(2, 32), SliceDim(4, 44))
    multiline = conformance("SliceOp").entry.root
    assert multiline.slice == (SliceDim(5, 10, 1), SliceDim(3, 20, 7), SliceDim(0, 50, 2))


def test_padding() -> None:
    negative = conformance("PadOpNegativePadding").entry.root
    assert negative.padding == (PaddingDim(-3, -5, 1),)
    pad = sample("padded_stencil.lowered.hlo").computation("_pad.1").root
    assert pad.padding == (PaddingDim(1, 1, 0), PaddingDim(2, 2, 0))
    tail = sample("cumsum.compiled.hlo").computation("fused_computation.2").instruction("pad.1")
    assert tail.padding == (PaddingDim(0, 0), PaddingDim(0, 14))


def test_window() -> None:
    maxpool = sample("maxpool.lowered.hlo").entry.root
    assert maxpool.window == (
        WindowDim(1), WindowDim(3, 2, 1, 1), WindowDim(3, 2, 1, 1), WindowDim(1))
    assert maxpool.called_computations["to_apply"][0].name == "region_0.1"
    cumsum = sample("cumsum.lowered.hlo").computation("cumsum_0.2").root
    assert cumsum.window == (WindowDim(1), WindowDim(50, padding_low=49))
    dilated = conformance("ReduceWindowOp_WindowDilation").entry.root
    assert dilated.window == (WindowDim(2, window_dilation=3), WindowDim(1))
    lhs = conformance("ConvolutionOp_LhsDilation").entry.root
    assert [w.base_dilation for w in lhs.window or ()] == [2, 2]
    reversed_ = conformance("ConvolutionOp_WindowReversal").entry.root
    assert [w.window_reversal for w in reversed_.window or ()] == [True, False]
    no_pad = conformance("ConvolutionOp_4DWithTrivialDims_NoPadding").entry.root
    assert no_pad.window == (WindowDim(3), WindowDim(3), WindowDim(1), WindowDim(1))


def test_convolution_dim_labels_and_group_counts() -> None:
    conv = sample("conv2d.compiled.hlo").entry.root
    assert conv.dim_labels == ConvolutionDimensionNumbers(
        input_batch_dimension=0, input_feature_dimension=3, input_spatial_dimensions=(1, 2),
        kernel_input_feature_dimension=2, kernel_output_feature_dimension=3,
        kernel_spatial_dimensions=(0, 1),
        output_batch_dimension=0, output_feature_dimension=3, output_spatial_dimensions=(1, 2))
    assert conv.window == (WindowDim(3, 1, 1, 1), WindowDim(3, 1, 1, 1))
    assert (conv.feature_group_count, conv.batch_group_count) == (1, 1)
    labels = conformance("ConvolutionOp_4DWithTrivialDims_NoPadding").entry.root.dim_labels
    assert labels is not None
    assert (labels.input_batch_dimension, labels.input_feature_dimension) == (0, 1)
    assert labels.input_spatial_dimensions == (2, 3, 4, 5)
    assert (labels.kernel_output_feature_dimension, labels.kernel_input_feature_dimension) == (0, 1)
    assert conformance("ConvolutionOp_BatchGroups").entry.root.batch_group_count == 7


def test_dot_dimension_numbers() -> None:
    dot = conformance("DotOp").entry.root
    assert dot.dot_dimension_numbers == DotDimensionNumbers(
        lhs_batch_dims=(5, 1), rhs_batch_dims=(1, 5),
        lhs_contracting_dims=(4, 2), rhs_contracting_dims=(3, 0))
    mlp = sample("mlp.lowered.hlo").entry.root
    assert mlp.dot_dimension_numbers == DotDimensionNumbers((), (), (1,), (0,))
    scaled = conformance("ScaledDotOp").entry.root
    assert scaled.dot_dimension_numbers == DotDimensionNumbers((), (), (1,), (0,))


def test_gather_dimension_numbers() -> None:
    gather = sample("embedding.lowered.hlo").computation("_take.3").instruction("gather.1")
    assert gather.gather_dimension_numbers == GatherDimensionNumbers(
        offset_dims=(2,), collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=2)
    assert gather.slice_sizes == (1, 32)
    shuffled = conformance("GatherOpWithShuffledStartIndexMap").entry.root
    assert shuffled.gather_dimension_numbers == GatherDimensionNumbers((1, 2, 3), (), (1, 0), 1)
    assert shuffled.slice_sizes == (7, 8, 4)


def test_scatter_and_batching_dims() -> None:
    module = parse_hlo("""
    HloModule s
    add { a = f32[] parameter(0)
          b = f32[] parameter(1)
          ROOT s = f32[] add(a, b) }
    ENTRY e {
      op = f32[2,10,5] parameter(0)
      idx = s32[2,3,1] parameter(1)
      upd = f32[2,3,5] parameter(2)
      g = f32[2,3,5] gather(op, idx), offset_dims={2}, collapsed_slice_dims={1},
          start_index_map={1}, index_vector_dim=2, operand_batching_dims={0},
          start_indices_batching_dims={0}, slice_sizes={1,1,5}, indices_are_sorted=true
      ROOT sc = f32[2,10,5] scatter(op, idx, upd), update_window_dims={2},
          inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, index_vector_dim=2,
          input_batching_dims={0}, scatter_indices_batching_dims={0}, to_apply=add
    }""")
    gather = module.entry.instruction("g")
    assert gather.gather_dimension_numbers == GatherDimensionNumbers(
        (2,), (1,), (1,), 2, (0,), (0,))
    assert gather.attributes["indices_are_sorted"] == "true"
    scatter = module.entry.root
    assert scatter.scatter_dimension_numbers == ScatterDimensionNumbers(
        (2,), (1,), (1,), 2, (0,), (0,))
    assert scatter.called_computations == {"to_apply": (module.computation("add"),)}


def test_dynamic_slice_tuple_index_and_direction() -> None:
    module = sample("scan_rnn.compiled.hlo")
    ds = module.computation("fused_computation.2").instruction("dynamic_slice.2")
    assert ds.dynamic_slice_sizes == (1, 4, 8)
    assert ds.operand_names == ("param_1.5", "param_2.3", "constant.3", "constant.3")
    assert module.entry.root.tuple_index == 2
    compare = module.computation("wrapped_compare_computation").root
    assert compare.comparison_direction == "LT"


def test_called_computations() -> None:
    module = sample("scan_rnn.compiled.hlo")
    loop = module.entry.instruction("while.6")
    assert loop.called_computations == {"condition": (module.computation("region_1.5"),),
                                        "body": (module.computation("region_0.4"),)}
    assert not module.computation("region_0.4").is_fusion_computation
    assert module.computation("fused_computation.1").is_fusion_computation
    call = sample("cumsum.lowered.hlo").entry.root
    assert call.called_computations["to_apply"][0].name == "cumsum.3"
    branches = parse_hlo("""
    b0 { p = f32[] parameter(0)
         ROOT n = f32[] negate(p) }
    b1 { p = f32[] parameter(0)
         ROOT n = f32[] abs(p) }
    ENTRY e {
      i = s32[] parameter(0)
      x = f32[] parameter(1)
      ROOT c = f32[] conditional(i, x, x), branch_computations={%b0, b1}
    }""")
    assert [c.name for c in branches.entry.root.called_computations["branch_computations"]] == [
        "b0", "b1"]


def test_fusion_kind_metadata_and_backend_config() -> None:
    root = sample("attention.compiled.hlo").entry.root
    assert root.fusion_kind == "kCustom"
    assert root.attr_dict("metadata") == {
        "op_name": "jit(attention)/bhqk,bhkd->bhqd/dot_general", "stack_frame_id": "5"}
    assert root.backend_config_json() == {
        "fusion_config": {"kind": "__ynn_fusion"}, "outer_dimension_partitions": []}
    loop = sample("scan_rnn.compiled.hlo").entry.instruction("while.6")
    assert loop.backend_config_json()["known_trip_count"] == {"n": "6"}  # type: ignore[index]
    assert sample("maxpool.compiled.hlo").entry.root.fusion_kind == "kLoop"


def test_constants() -> None:
    attention = sample("attention.lowered.hlo").entry
    assert attention.instruction("constant.7").literal == float("-inf")
    assert attention.instruction("constant.7").literal_text == "-inf"
    assert attention.instruction("constant.5").literal == 8.0
    embedding = sample("embedding.lowered.hlo").computation("_take.3")
    assert embedding.instruction("constant.11").literal is True
    assert embedding.instruction("constant.10").literal == 100
    assert embedding.instruction("constant.7").literal_text == "nan"
    layernorm = sample("layernorm.lowered.hlo").entry.instruction("constant.3")
    assert layernorm.literal == 1e-05
    module = parse_hlo("""
    ENTRY e {
      a = s32[3] constant({1, 2, -3})
      b = f32[2,2]{1,0} constant({{1,2},{3.5,4}})
      c = pred[2] constant({true, false})
      d = c64[] constant((1, -2))
      e = f32[1000] constant({...})
      ROOT t = (s32[3], f32[2,2], pred[2], c64[], f32[1000]) tuple(a, b, c, d, e)
    }""")
    values = {i.name: i.literal for i in module.entry.instructions if i.opcode == "constant"}
    assert values == {"a": (1, 2, -3), "b": ((1.0, 2.0), (3.5, 4.0)), "c": (True, False),
                      "d": complex(1, -2), "e": None}
    assert module.entry.instruction("e").literal_text == "{...}"


def test_other_attributes_kept_raw() -> None:
    module = parse_hlo("""
    HloModule raw, entry_computation_layout={(f32[4]{0})->f32[4]{0}}
    ENTRY e {
      p = f32[4] parameter(0), sharding={devices=[2]0,1}
      a = f32[4] abs(p), frontend_attributes={_xla_compute_type="host",x="a b"}
      n = f32[4] negate(p), control-predecessors={%a}
      ROOT c = f32[4] custom-call(a, n), custom_call_target="my\\"target",
        backend_config="{\\"k\\": 1}", api_version=API_VERSION_TYPED_FFI,
        operand_layout_constraints={f32[4]{0}, f32[4]{0}}, schedule=[[1,2],(3)]
    }""")
    entry = module.entry
    assert entry.instruction("p").attributes["sharding"] == "{devices=[2]0,1}"
    assert entry.instruction("a").attr_dict("frontend_attributes") == {
        "_xla_compute_type": "host", "x": "a b"}
    assert entry.instruction("n").control_predecessors == [entry.instruction("a")]
    root = entry.root
    assert root.attr_str("custom_call_target") == 'my"target'
    assert root.backend_config_json() == {"k": 1}
    assert root.attributes["operand_layout_constraints"] == "{f32[4]{0}, f32[4]{0}}"
    assert root.attributes["schedule"] == "[[1,2],(3)]"  # a value of any syntax, kept raw
    assert root.attributes["api_version"] == "API_VERSION_TYPED_FFI"


def test_typed_accessors() -> None:
    iota = conformance("IotaOp").entry.root
    assert iota.attr_int("iota_dimension") == 0
    assert iota.attr_int("missing", 7) == 7
    scan = conformance("ScanOp").entry.root
    assert scan.attr_int("num_carries") == 1
    assert scan.attr_int_list("dimensions") == scan.dimensions == (0,)
    assert scan.attr_int_list("missing") is None
    gather = conformance("AllGatherOp").entry.root
    assert gather.attributes["replica_groups"] == "{{0,1}, {2,3}}"
    with pytest.raises(ParseError) as info:
        gather.attr_int_list("replica_groups")
    assert (info.value.line, info.value.column) == (6, 24)
    assert "replica_groups" in info.value.message


def test_comments_and_forward_references() -> None:
    module = parse_hlo("""HloModule c  // a comment
    /* block
       comment */
    ENTRY e {
      ROOT r = f32[2] add(x, y)  // uses x and y before they are defined
      y = f32[2] negate(x)
      x = f32[2] parameter(0)
    }""")
    assert [i.name for i in topological_order(module.entry)] == ["x", "y", "r"]
    assert module.entry.root.name == "r"


def test_repeated_shapes_are_shared_without_confusing_layouts() -> None:
    module = parse_hlo("""
    ENTRY e {
      p = f32[2] parameter(0)
      a = f32[2] negate(p)
      b = f32[2] {0} negate(a)
      c = f32[2]{0:T(2)} negate(b)
      ROOT d = f32[2]{0} add(f32[2]{0} c, f32[2] {0} c)
    }""")
    shapes = {i.name: i.shape for i in module.entry.instructions}
    assert shapes["p"] is shapes["a"] and shapes["a"].layout is None  # type: ignore[union-attr]
    assert shapes["b"] == shapes["d"] == parse_shape("f32[2]{0}")
    assert str(shapes["c"]) == "f32[2]{0:T(2)}"


def test_garbage_collector_state_is_restored() -> None:
    assert gc.isenabled()
    parse_hlo(GOOD)
    assert gc.isenabled()
    with pytest.raises(ParseError):
        parse_hlo("ENTRY e { junk }")
    assert gc.isenabled()
    gc.disable()
    try:
        parse_hlo(GOOD)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_line_numbers() -> None:
    module = sample("conv2d.lowered.hlo")
    assert module.entry.line == 3
    assert [i.line for i in module.entry.instructions] == [4, 5, 6]


# --------------------------------------------------------------------------- graphs


def test_computation_graph_edges() -> None:
    comp = sample("attention.compiled.hlo").computation("fused_computation.4")
    graph = computation_graph(comp)
    assert graph.number_of_nodes() == 8
    assert set(graph.edges) == {
        ("param_1.9", "multiply.3"), ("broadcast.6", "multiply.3"), ("constant.8", "broadcast.6"),
        ("param_0.7", "sub.1"), ("multiply.3", "sub.0"), ("sub.1", "sub.0"), ("sub.0", "exp.0")}
    assert graph.edges["sub.1", "sub.0"]["operand_index"] == 1
    assert graph.nodes["exp.0"]["instr"] is comp.root


def test_same_operand_twice() -> None:
    comp = sample("layernorm.lowered.hlo").entry
    graph = computation_graph(comp)
    edge = graph.edges["sub.11", "integer_pow.1"]
    assert edge["operand_indices"] == (0, 1) and edge["operand_index"] == 0
    ds = sample("scan_rnn.lowered.hlo").computation("dynamic_index_in_dim.1")
    assert computation_graph(ds).edges["constant.4", "dynamic_slice.1"]["operand_indices"] == (2, 3)


def test_users_and_topological_order() -> None:
    comp = sample("attention.lowered.hlo").entry
    assert [u.name for u in users(comp, "div.7")] == ["reduce_max.7", "sub.7"]
    assert [u.name for u in users(comp, "%exp.1")] == ["reduce_sum.7", "div.11"]
    assert users(comp, "dot_general.3") == []
    order = topological_order(comp)
    assert order == comp.instructions  # JAX prints operands first; ties keep text order
    with pytest.raises(KeyError, match="nope"):
        users(comp, "nope")


def test_fusions_of_a_module() -> None:
    module = sample("cumsum.compiled.hlo")
    fusions = fusion_instructions(module)
    assert [f.name for f in fusions] == [
        "pad_bitcast_fusion", "wrapped_reduce-window", "slice_bitcast_fusion",
        "wrapped_reduce-window.1", "bitcast_slice_fusion"]
    assert called_computation(fusions[0]) is module.computation("fused_computation.2")
    assert sum(c.is_fusion_computation for c in module.computations.values()) == 5
    assert called_computation(module.entry.instruction("x.1")) is None


# --------------------------------------------------------------------------- XLA's syntax
# Forms XLA's parser reads (xla/hlo/parser/hlo_parser.cc and its tests), written anew here.


def test_comments_wherever_whitespace_may_be() -> None:
    module = parse_hlo("""/* before the header */ HloModule m, entry_computation_layout={(f32[])->
      (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])}
    ENTRY /*c*/ %e (v: f32[]) -> (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) {
      %v = f32 /*a*/ [ /*b*/ ] parameter(0)  // trailing
      %w = f32[2,3]{1, /*c*/ 0 : T /*d*/ (2,1)} parameter(1)
      ROOT %t = (f32[], f32[],
                 f32[],  // a line comment inside a tuple shape
                 f32[], f32[], /*index=5*/f32[]) tuple(f32[] %v, %v, %v, %v, %v, /*index=5*/%v),
        metadata={op_name="keeps /* this */ and // this" /* but not this */ source_line=3}
    } // after the computation
    """)
    root = module.entry.root
    assert isinstance(root.shape, TupleShape) and len(root.shape.elements) == 6
    assert root.operand_names == ("v",) * 6
    assert module.entry.instruction("w").shape == parse_shape("f32[2,3]{1,0:T(2,1)}")
    assert root.attr_dict("metadata") == {"op_name": "keeps /* this */ and // this",
                                          "source_line": "3"}
    assert module.attributes["entry_computation_layout"].endswith(
        "(f32[], f32[], f32[], f32[], f32[], f32[])}")


def test_unterminated_comment_points_at_its_start() -> None:
    with pytest.raises(ParseError, match="unterminated comment") as info:
        parse_hlo("HloModule m\nENTRY e {\n/* never closed\n  ROOT c = f32[] constant(1)\n}")
    assert (info.value.line, info.value.column) == (3, 1)


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_line_comments_end_at_any_line_break(newline: str) -> None:
    text = newline.join(["HloModule m:", "// garbage", "ENTRY c1 {", "// a comment",
                         "ROOT c = f32[1]{0} constant({12345}) // another", "}"])
    module = parse_hlo(text)
    assert module.name == "m" and module.entry.root.literal == (12345.0,)


def test_inline_operand_instructions() -> None:
    module = parse_hlo("""
    ENTRY e {
      multiply.anon = f32[8,7] parameter(2)
      r = f32[8,7] reshape(f32[1,8,1,7] parameter(0))
      ROOT s = f32[8,7] add(r, f32[8,7] multiply(f32[8,7] parameter(1), multiply.anon))
    }""")
    entry = module.entry
    # XLA's names, kept clear of the names in the text, each inline instruction before its
    # user and after the instructions written before that user.
    assert [i.name for i in entry.instructions] == [
        "multiply.anon", "parameter.anon", "r", "parameter.anon.1", "multiply.anon.1", "s"]
    assert [(p.name, p.parameter_number) for p in entry.parameters] == [
        ("parameter.anon", 0), ("parameter.anon.1", 1), ("multiply.anon", 2)]
    assert entry.instruction("r").operands == [entry.instruction("parameter.anon")]
    assert entry.root.operand_names == ("r", "multiply.anon.1")
    assert entry.instruction("multiply.anon.1").operand_names == (
        "parameter.anon.1", "multiply.anon")
    assert entry.instruction("parameter.anon").shape == parse_shape("f32[1,8,1,7]")
    assert entry.instruction("parameter.anon").line == 4


def test_an_opcode_may_also_be_a_name() -> None:
    # As in XLA: a name followed by '(' is an inline instruction, otherwise a reference.
    module = parse_hlo("""
    ENTRY test {
      add = add(f32[10] parameter(0), f32[10] parameter(1))
      ROOT root = tuple(add, add(add, add), add)
    }""")
    entry = module.entry
    assert [i.name for i in entry.instructions] == [
        "parameter.anon", "parameter.anon.1", "add", "add.anon", "root"]
    assert entry.root.operand_names == ("add", "add.anon", "add")
    assert entry.instruction("add.anon").operand_names == ("add", "add")
    assert str(entry.root.shape) == "(f32[10], f32[10], f32[10])"


def test_omitted_shapes_are_inferred_after_their_operands() -> None:
    module = parse_hlo("""
    ENTRY e {
      ROOT g = get-tuple-element(t), index=1
      t = tuple(s, c)
      s = add(p0, p1)
      c = compare(p0, p1), direction=LT
      p1 = f32[2,3]{1,0} parameter(1)
      p0 = f32[2,3]{1,0} parameter(0)
    }""")
    entry = module.entry
    assert entry.instruction("s").shape == parse_shape("f32[2,3]")
    assert entry.instruction("c").shape == parse_shape("pred[2,3]")
    assert entry.instruction("t").shape == parse_shape("(f32[2,3], pred[2,3])")
    assert entry.root.shape == parse_shape("pred[2,3]")


def test_inference_errors_point_at_the_instruction() -> None:
    text = ("ENTRY e {\n  p = f32[2] parameter(0)\n  q = f32[3] parameter(1)\n"
            "  ROOT s = add(p, q)\n}")
    with pytest.raises(ParseError, match="cannot infer the shape of add 's'") as info:
        parse_hlo(text)
    assert (info.value.line, info.value.column) == (4, 3)
    with pytest.raises(ParseError, match="constant 'c' needs its shape written"):
        parse_hlo("ENTRY e { ROOT c = constant(1) }")


def test_inline_computations() -> None:
    module = parse_hlo("""
    HloModule m
    c.to_apply { ROOT z = f32[] parameter(0) }
    ENTRY e {
      p = f32[] parameter(0)
      c = f32[] call(p), to_apply={
        q = f32[] parameter(0)
        ROOT n = f32[] negate(q)
      }
      i = s32[] parameter(1)
      ROOT k = f32[] conditional(i, c, c), branch_computations={
        {
          t0 = f32[] parameter(0)
          ROOT t1 = f32[] ceil(t0)
        },
        c.to_apply
      }
    }""")
    call = module.entry.instruction("c")
    (body,) = call.called_computations["to_apply"]
    assert body.name == "c.to_apply.1"  # unique in the module
    assert body.root.opcode == "negate" and body.parameters[0].name == "q"
    branches = module.entry.root.called_computations["branch_computations"]
    assert [b.name for b in branches] == ["k.branch_computations", "c.to_apply"]
    assert branches[0].root.opcode == "ceil"
    # XLA's order: an inline computation comes before the computation that holds it.
    assert list(module.computations) == [
        "c.to_apply", "c.to_apply.1", "k.branch_computations", "e"]


def test_single_instruction() -> None:
    module = parse_hlo("%multiply = f32[2,4]{1,0} multiply(f32[2,4]{1,0} %b, f32[2,4]{1,0} %x)")
    entry = module.entry
    assert entry.root.opcode == "multiply" and entry.root.name == "multiply"
    assert [(p.name, p.parameter_number) for p in entry.parameters] == [("b", 0), ("x", 1)]
    unnamed = parse_hlo("f32[2] add(f32[2], f32[2] y)").entry
    assert [p.name for p in unnamed.parameters] == ["_0", "y"]
    assert unnamed.root.name == "add.anon"
    with pytest.raises(ParseError, match="'x' is not defined and has no shape"):
        parse_hlo("m = f32[2] multiply(f32[2] w, x)")
    with pytest.raises(ParseError, match="unknown operand 'x' of 'result'"):
        parse_hlo("r = f32[] reduce(f32[10] a, f32[] b), dimensions={0}, to_apply=\n"
                  "{ result = f32[] add(f32[] x, f32[] y) }")
    nested = parse_hlo("f32[] reduce(f32[10] a, f32[] b), dimensions={0}, to_apply=\n"
                       "{ x = f32[] parameter(0)\n y = f32[] parameter(1)\n"
                       "  ROOT s = f32[] add(x, y) }")
    assert [p.name for p in nested.entry.parameters] == ["a", "b"]
    assert nested.entry.root.called_computations["to_apply"][0].root.operand_names == ("x", "y")
    with pytest.raises(ParseError, match="end of the text after a single instruction"):
        parse_hlo("a = f32[2] parameter(0)\nb = f32[2] negate(a)")


@pytest.mark.parametrize(("value", "kept"), [
    ("{{0, 2, 4, 6}, {1, 3, 5, 7}}", "{{0, 2, 4, 6}, {1, 3, 5, 7}}"),
    ("[2,4]<=[8]", "[2,4]<=[8]"),
    ("[4,2]<=[2,4]T(1,0)", "[4,2]<=[2,4]T(1,0)"),
    ("[4,2] <= [2,4] /* spaced */ T (1,0)", "[4,2] <= [2,4]  T (1,0)"),
    ("mesh['axis_0'=4,'axis_1'=2] {'axis_0'}", "mesh['axis_0'=4,'axis_1'=2] {'axis_0'}"),
])
def test_replica_groups(value: str, kept: str) -> None:
    module = parse_hlo(f"""
    add {{ a = f32[] parameter(0)
          b = f32[] parameter(1)
          ROOT s = f32[] add(a, b) }}
    ENTRY e {{
      p = f32[8] parameter(0)
      ROOT r = f32[8] all-reduce(p), replica_groups={value}, to_apply=add
    }}""")
    assert module.entry.root.attributes["replica_groups"] == kept
    assert module.entry.root.called_computations["to_apply"][0].name == "add"


def test_attribute_values_in_every_form() -> None:
    module = parse_hlo('''
    HloModule m, is_scheduled=true, input_output_alias={ {0}: (0, {0}, must-alias) },
      buffer_donor={ (0, {1}) }, allow_spmd_sharding_propagation_to_output={true,false}
    ENTRY e {
      p = (f32[8], f32[]) parameter(0), sharding={{devices=[2]0,1}, {maximal device=0}},
        parameter_replication={false,true}, origin={({"a"}, {"b"})}
      x = f32[8] get-tuple-element(p), index=0, statistics={visualizing_index=1,stat-1=33}
      y = f32[8] collective-permute(x), source_target_pairs={{0,1},{1,0}},
        slice_sizes={{8}}, channel_id=1
      z = f32[8] exponential(y), result_accuracy={tolerance={rtol=0.5, atol=1.0, ulps=2}},
        frontend_attributes={composite.attributes={n = 1 : i32, t = dense<1> : tensor<i32>},
                             composite.name="foo.bar"}
      c = f32[8] custom-call(z), custom_call_target="t", api_version=API_VERSION_TYPED_FFI,
        custom_call_has_side_effect=true, schedule=SCHEDULE_LATEST, literal=s32[2]{0} {1, 2},
        output_to_operand_aliasing={{}: (0, {})}, operand_layout_constraints={f32[8]{0}},
        backend_config={scale=[1.00],zero_point=[0],storage_type=i8,nested={"a": "}"}}
      ROOT j = f32[8] negate(c), backend_config={key: it's [not balanced}
    }''')
    entry = module.entry
    assert module.attributes["input_output_alias"] == "{ {0}: (0, {0}, must-alias) }"
    assert module.attributes["buffer_donor"] == "{ (0, {1}) }"
    assert entry.instruction("p").attributes["sharding"] == "{{devices=[2]0,1}, {maximal device=0}}"
    assert entry.instruction("p").attributes["origin"] == '{({"a"}, {"b"})}'
    assert entry.instruction("x").tuple_index == 0
    permute = entry.instruction("y")
    assert permute.attributes["slice_sizes"] == "{{8}}" and permute.slice_sizes is None
    assert entry.instruction("z").attr_dict("frontend_attributes")["composite.name"] == "foo.bar"
    assert entry.root.attributes["backend_config"] == "{key: it's [not balanced}"
    root = entry.instruction("c")
    assert root.attributes["literal"] == "s32[2]{0} {1, 2}"
    assert root.attributes["backend_config"] == (
        '{scale=[1.00],zero_point=[0],storage_type=i8,nested={"a": "}"}}')
    assert root.attributes["output_to_operand_aliasing"] == "{{}: (0, {})}"


@pytest.mark.parametrize("literal", [
    "s32[2]{0} {1, 2}", "f32[] 0.1", "pred[] true", "f32[] -inf", "c64[] (1, 2)",
    "( s32[4]{0} {4, 128, 128, 3}, pred[4]{0} {1, 0, 0, 0} )",
])
def test_custom_call_literals(literal: str) -> None:
    text = f'ENTRY e {{ ROOT c = f32[] custom-call(), custom_call_target="t", literal={literal} }}'
    assert parse_hlo(text).entry.root.attributes["literal"] == literal


def test_computation_attributes_and_module_header_forms() -> None:
    module = parse_hlo('''
    HloModule m:, origin_recovery_table={
      {"c"} : {"c__ovp0"},
      "
        HloModule recovery, a string holding a module: } { ) (
      "
    }
    %w (p: f32[10]) -> f32[20] {
      %p = f32[10]{0} parameter(0)
      ROOT %c = f32[20]{0} custom-call(f32[10]{0} %p), custom_call_target="foo"
    }, execution_thread="parallel_thread"
    ENTRY %main (p0: f32[10]) -> f32[20] {
      %p0 = f32[10]{0} parameter(0)
      %s = ((f32[10]{0}), f32[20]{0}, s32[]) async-start(%p0), calls=%w
      ROOT %d = f32[20]{0} async-done(%s)
    }, execution_thread="main"
    ''')
    assert module.name == "m"
    assert module.attributes["origin_recovery_table"].count("HloModule recovery") == 1
    assert module.computation("w").attributes == {"execution_thread": '"parallel_thread"'}
    assert module.entry.attributes == {"execution_thread": '"main"'}
    assert module.entry.instruction("s").called_computations["calls"][0].name == "w"


def test_buffer_shapes() -> None:
    root = parse_hlo('ENTRY e { ROOT b = b(f32[2,4]{1,0}) custom-call(), '
                     'custom_call_target="CreateBuffer" }').entry.root
    assert isinstance(root.shape, Shape) and root.shape.is_buffer
    assert root.shape.dims == (2, 4) and str(root.shape) == "b(f32[2,4]{1,0})"


def test_convolution_labels_with_unknown_dimensions() -> None:
    root = parse_hlo('ENTRY e { ROOT r = f32[100]{0} custom-call(), window={size=2x2}, '
                     'dim_labels=?b01f_0?1io->b01?f, custom_call_target="t" }').entry.root
    assert root.dim_labels is None  # '?' dims cannot be represented; the text is kept
    assert root.attributes["dim_labels"] == "?b01f_0?1io->b01?f"
    assert root.window == (WindowDim(2), WindowDim(2))


def test_window_fields_in_any_order_and_spaced() -> None:
    root = parse_hlo("""
    add { a = f32[] parameter(0)
          b = f32[] parameter(1)
          ROOT s = f32[] add(a, b) }
    ENTRY e {
      p = f32[8] parameter(0)
      z = f32[] constant(0)
      ROOT r = f32[4] reduce-window(p, z), window={ pad=1_1 stride= 2 size=3 }, to_apply=add
    }""").entry.root
    assert root.window == (WindowDim(3, 2, 1, 1),)


# --------------------------------------------------------------------------- literals


def constant(shape: str, literal: str) -> object:
    """The value parse_hlo reads from ``constant(literal)`` of ``shape``."""
    return parse_hlo(f"ENTRY e {{ ROOT c = {shape} constant({literal}) }}").entry.root.literal


@pytest.mark.parametrize(("shape", "literal", "value"), [
    ("f32[2,2]", "{ {1, 2}, /*i0=1*/ {3.5, 4e1} }", ((1.0, 2.0), (3.5, 40.0))),
    ("s32[3]", "{1 2 -3}", (1, 2, -3)),  # the commas may go
    ("pred[2,3]", "{ { 0, 1, 0 }, { true, false, 7 } }",
     ((False, True, False), (True, False, True))),
    ("c64[2]", "{(1, 2), (-inf, 0.5)}", (complex(1, 2), complex(float("-inf"), 0.5))),
    ("u64[]", "-1", 2**64 - 1),  # XLA reads the 64-bit pattern
    ("u64[]", "18446744073709551615", 2**64 - 1),
    ("s4[2]", "{-8, 7}", (-8, 7)),
    ("u4[2]", "{0, 15}", (0, 15)),
    ("bf16[]", "-65505", -65505.0),
    ("f16[]", "65519", 65519.0),  # rounds to 65504, the largest f16
    ("f32[2,0,4,3]", "{ { /*i0=0*/ }, { /*i0=1*/ } }", ((), ())),
    ("f32[1000]", "{...}", None),
    ("f32[3,2]", "{ {1, 2}, ... }", None),
    ("f32[2]", "{1, ...}", None),
    ("(f32[2,1], s32[])", "( { {1}, {2} }, 42 )", None),  # checked, not kept
    ("bf16[17,22]", "1", None),  # XLA: the first element is 1, the others 0
])
def test_literals(shape: str, literal: str, value: object) -> None:
    assert constant(shape, literal) == value


def test_non_finite_literals() -> None:
    values = constant("bf16[4]", "{nan, -nan(0x7f), inf, -inf}")
    assert isinstance(values, tuple)
    assert [math.isnan(v) for v in values] == [True, True, False, False]
    assert values[2:] == (math.inf, -math.inf)


@pytest.mark.parametrize(("shape", "literal", "message"), [
    ("f32[2,3]", "}{1, 2, 3}, {4, 5, 6}}", "unexpected '}' in a literal"),
    ("f32[2]", "{1,{2}}", "f32[2] literal nested deeper than its rank 1"),
    ("f32[2,3]", "{1, 2, 3, 4, 5, 6}", "a value at depth 1, expected nested braces 2 deep"),
    ("f32[2,3,2]", "{{{1, 2}, {3, 4}, {5, 6}, {7, 8}}}", "more than 3 elements at depth 2"),
    ("f32[2]", "{1}", "expected 2 elements at depth 1, found 1"),
    ("f16[]", "-65520", "out of range for f16"),
    ("bf16[]", "1e100", "out of range for bf16"),
    ("f64[]", "1.8e308", "out of range for a double"),
    ("c64[]", "(1e100, 0)", "out of range for the parts of a c64"),
    ("u4[]", "16", "out of range for u4"),
    ("u4[]", "-1", "out of range for u4"),
    ("s4[]", "-9", "out of range for s4"),
    ("u32[]", "4294967296", "out of range for u32"),
    ("s32[]", "1.5", "expected an integer for element type s32"),
    ("f32[]", "true", "true is not a value of element type f32"),
    ("bf16[1]", "{nan(0x3ff)}", "NaN payload 0x3ff does not fit element type bf16"),
    ("f8e4m3fn[1]", "{nan(0x1)}", "NaN payload 0x1 does not fit element type f8e4m3fn"),
    ("c64[]", "1", "expected a complex value (real, imaginary)"),
    ("f32[2,2]", "{{1, ...}}", "'...' may only stand for the elements of the outermost"),
    ("f32[]", "...", "unexpected '...' in a literal"),
])
def test_bad_literals(shape: str, literal: str, message: str) -> None:
    text = f"ENTRY e {{\n  ROOT c = {shape} constant({literal})\n}}"
    with pytest.raises(ParseError) as info:
        parse_hlo(text)
    assert message in info.value.message
    assert info.value.line == 2 and info.value.column > 20  # at the offending token


# --------------------------------------------------------------------------- errors

GOOD = """HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  p0 = f32[8,4]{1,0} parameter(0)
  c0 = f32[] constant(0)
  r = f32[8]{0} reduce(p0, c0), dimensions={1}, to_apply=add
  ROOT t = f32[8]{0} negate(r)
}
"""


def test_the_error_baseline_parses() -> None:
    assert parse_hlo(GOOD).entry.root.opcode == "negate"


@pytest.mark.parametrize(
    ("old", "new", "line", "column", "message"),
    [
        ("dimensions={1}", "dimensions={1]", 12, 46,
         "unbalanced ']': '{' at line 12 expects '}'"),
        ("dimensions={1}", "dimensions={1", 12, 44,
         "expected a list like {0,1} for dimensions=, "
         "found '{1, to_apply=add\\n  ROOT t = f32[8]{0}...'"),
        ("f32[8]{0} negate", "f33[8]{0} negate", 13, 12, "unknown element type 'f33'"),
        ("negate(r)", "negate(q)", 13, 29, "unknown operand 'q' of 't': no instruction"),
        ("c0 = f32[] constant(0)", "r = f32[] constant(0)", 12, 3,
         "duplicate instruction name 'r' in computation 'main' (first defined at line 11)"),
        ("to_apply=add", "to_apply=mul", 12, 58, "unknown computation 'mul' in to_apply= of 'r'"),
        ("add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}",
         "add {\n}", 3, 1, "computation 'add' has no instructions (missing ROOT)"),
        ("  r = f32[8]", "  ROOT r = f32[8]", 13, 3, "second ROOT 't' in computation 'main'"),
        ("reduce(p0, c0)", "reduce(p0, t)", 12, 3, "depends on itself in computation 'main'"),
        ("b = f32[] parameter(1)", "b = f32[] parameter(0)", 5, 3,
         "parameter number 0 of 'b' is already used by 'a'"),
        ("b = f32[] parameter(1)", "b = f32[] parameter(2)", 5, 3,
         "parameter number 2 of 'b' is out of range"),
        ("ROOT t = f32[8]{0} negate(r)", "ROOT t f32[8]{0} negate(r)", 13, 10,
         "expected '=' after instruction name 't', found 'f32'"),
        ("negate(r)", "negate r", 13, 29, "expected '(' after opcode 'negate', found 'r'"),
        ("add(a, b)", "add(a b)", 6, 24, "expected ',' or ')' in the operands of 's', found 'b'"),
        ("parameter(1)", "parameter(x)", 5, 23, "expected a parameter number, found 'x'"),
        ("dimensions={1}", "dimensions={1}, dimensions={0}", 12, 49,
         "duplicate attribute 'dimensions'"),
        ("dimensions={1}", "dimensions={a}", 12, 44,
         "expected a list like {0,1} for dimensions=, found '{a}'"),
        ("add {", "ENTRY add {", 9, 1, "second ENTRY computation 'main' (the first is 'add')"),
        ("ENTRY main {", "add {", 9, 1, "duplicate computation name 'add'"),
        ("constant(0)", 'constant(0), metadata={op_name="x}', 11, 45, "unterminated string"),
    ],
)
def test_malformed_module(old: str, new: str, line: int, column: int, message: str) -> None:
    assert GOOD.count(old) == 1
    text = GOOD.replace(old, new)
    with pytest.raises(ParseError) as info:
        parse_hlo(text, source="bad.hlo")
    err = info.value
    assert message in err.message
    assert (err.line, err.column) == (line, column)
    assert str(err).startswith(f"bad.hlo:line {line}, column {column}: ")


def test_truncated_file() -> None:
    cut = GOOD.index("ROOT t")
    with pytest.raises(ParseError) as info:
        parse_hlo(GOOD[:cut])
    assert (info.value.line, info.value.column) == (13, 3)
    assert "unexpected end of input: computation 'main' opened at line 9 is not closed" in str(
        info.value)
    with pytest.raises(ParseError) as info:
        parse_hlo(GOOD[: GOOD.index("dimensions={1}") + len("dimensions={1")])
    assert (info.value.line, info.value.column) == (12, 44)
    assert info.value.message == "'{' is never closed"
    with pytest.raises(ParseError, match="module 'm' has no computations"):
        parse_hlo("HloModule m\n")
    with pytest.raises(ParseError, match="the text has no computations"):
        parse_hlo("   \n")
    with pytest.raises(ParseError, match="expected a module name after 'HloModule'"):
        parse_hlo("HloModule")


def test_error_excerpt_points_at_the_token() -> None:
    with pytest.raises(ParseError) as info:
        parse_hlo(GOOD.replace("negate(r)", "negate(q)"))
    assert info.value.excerpt() == "  ROOT t = f32[8]{0} negate(q)\n" + " " * 28 + "^"


@pytest.mark.parametrize(
    ("attribute", "message"),
    [
        ("slice={[0:2:1]x}", "expected slice={[start:limit:stride], ...}"),
        ("padding=1_2x3", "expected padding=lo_hi[_interior]x..."),
        ("window={size=3 strid=1}", "bad window field 'strid=1'"),
        ("window={size=3x3 stride=1}", "window field stride= has 1 dimensions, size= has 2"),
        ("window={size=3 pad=1_1_1}", "bad number in window"),
        ("window={size=3 rhs_reversal=2}", "bad number in window"),
        ("dim_labels=b01f_01io->b0f", "expected dim_labels like b01f_01io->b01f"),
        ("dim_labels=b00f_01io->b01f", "expected dim_labels like b01f_01io->b01f"),
        ("index=x", "expected an integer for index=, found 'x'"),
        ("control-predecessors={%p0 %c0}", "expected ',' in control-predecessors=, found '%c0'"),
        ("control-predecessors={%zz}", "unknown operand 'zz' of 't'"),
    ],
)
def test_malformed_attribute(attribute: str, message: str) -> None:
    text = GOOD.replace("negate(r)", f"negate(r), {attribute}")
    with pytest.raises(ParseError) as info:
        parse_hlo(text)
    assert message in info.value.message
    assert info.value.line == 13
    assert info.value.column > 30  # inside the attribute, not at the line start


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        (("dimensions={x}", "slice={[0:2:1]x}", "index=x"), "for dimensions="),
        (("slice={[0:2:1]x}", "window={size=3 strid=1}", "dim_labels=b0"), "expected slice="),
        (("rhs_contracting_dims={x}", "lhs_batch_dims={y}", "dimensions={0}"),
         "for lhs_batch_dims="),
        (("feature_group_count=x", "index=y"), "for index="),
    ],
)
def test_of_malformed_attributes_the_first_in_a_fixed_order_is_reported(
        attributes: tuple[str, ...], message: str) -> None:
    """The typed fields are read in one order whatever the attributes' own order (and
    whether the text is long enough for the one-match reading): the same one of several
    malformed attributes is reported."""
    for order in itertools.permutations(attributes):
        for padding in ("", "\n// " + "x" * 60_000):
            text = GOOD.replace("negate(r)", f"negate(r), {', '.join(order)}") + padding
            with pytest.raises(ParseError, match=re.escape(message)):
                parse_hlo(text, validate=False)


def test_a_gather_without_slice_sizes_is_reported_before_a_later_malformed_attribute() -> None:
    """A gather's ``slice_sizes`` is read in its turn even when missing: a malformed
    attribute read after it (``index=``) is not the one reported."""
    bad = """ENTRY main {
      o = f32[4,5] parameter(0)
      i = s32[2,1] parameter(1)
      ROOT g = f32[2,5] gather(o, i), index=x, offset_dims={1}, collapsed_slice_dims={0},
        start_index_map={0}, index_vector_dim=1
    }"""
    with pytest.raises(ParseError, match="gather 'g' is missing attribute slice_sizes="):
        parse_hlo(bad)
    with pytest.raises(ParseError, match="expected an integer for index="):
        parse_hlo(bad.replace("index=x,", "index=x, slice_sizes={1,5},"))


def test_gather_without_its_dimension_numbers() -> None:
    text = conformance("GatherOp").computations["main"].root.attributes
    assert "slice_sizes" in text
    bad = """ENTRY main {
      o = f32[4,5] parameter(0)
      i = s32[2,1] parameter(1)
      ROOT g = f32[2,5] gather(o, i), offset_dims={1}, collapsed_slice_dims={0},
        start_index_map={0}, index_vector_dim=1
    }"""
    with pytest.raises(ParseError, match="gather 'g' is missing attribute slice_sizes="):
        parse_hlo(bad)


def test_recursive_calls_are_rejected() -> None:
    text = """
    loop { p = f32[] parameter(0)
           ROOT c = f32[] call(p), to_apply=loop }
    ENTRY e { p = f32[] parameter(0)
              ROOT c = f32[] call(p), to_apply=loop }"""
    with pytest.raises(ParseError, match="computation 'loop' calls itself") as info:
        parse_hlo(text)
    assert info.value.line == 2


def test_deep_nesting_never_recurses() -> None:
    depth = 100_000
    deep_shape = GOOD.replace("ROOT t = f32[8]{0}", "ROOT t = " + "(" * depth)
    with pytest.raises(ParseError, match="tuple shapes nested deeper than 64"):
        parse_hlo(deep_shape)
    # A literal nests no deeper than its shape's rank.
    deep_literal = GOOD.replace("f32[] constant(0)",
                                "f32[1,1] constant(" + "{" * depth + "}" * depth + ")")
    with pytest.raises(ParseError, match=r"f32\[1,1\] literal nested deeper than its rank 2"):
        parse_hlo(deep_literal)
    deep_inline = GOOD.replace("negate(r)", "negate(" + "negate(" * depth + "r" + ")" * depth + ")")
    with pytest.raises(ParseError, match="instructions or computations nested deeper than 64"):
        parse_hlo(deep_inline)
    # An attribute read only as text may nest as deep as it likes: it is only kept as text.
    deep_raw = "[" * depth + "]" * depth
    module = parse_hlo(GOOD.replace("negate(r)", f"negate(r), backend_config={deep_raw}"))
    assert module.entry.root.attributes["backend_config"] == deep_raw


def test_errors_point_into_the_original_text_past_comments() -> None:
    text = ("HloModule m  // a comment\n"
            "/* a block comment\n"
            "   over two lines */ ENTRY e {\n"
            "  p = f32[2] /* here */ parameter(0) // and here\n"
            "  ROOT n = f32[2] /* x */ negate(q)\n"
            "}\n")
    with pytest.raises(ParseError, match="unknown operand 'q'") as info:
        parse_hlo(text)
    assert (info.value.line, info.value.column) == (5, 34)
    assert info.value.excerpt().splitlines()[1].index("^") == 33


@pytest.mark.parametrize(("raw", "stripped"), [
    ("{0,/*c*/1}", "{0,1}"),
    ("{maximal/*c*/device=0}", "{maximal device=0}"),  # the tokens stay apart
    ("1/*a*//*b*/2", "1 2"),
    ('{op_name="a/*b*/c" // d\n}', '{op_name="a/*b*/c" \n}'),
    ("'it''s' /* x */", "'it''s' "),
    ("no comment at all", "no comment at all"),
])
def test_strip_comments(raw: str, stripped: str) -> None:
    assert strip_comments(raw) == stripped


def test_named_and_tuple_shardings_are_kept() -> None:
    shardings = [
        "{mesh[a=2,b=4,c=3,d=8], [{a}, {b:(2)2}]}",
        "{{replicated}, {mesh[a=2,b=4], replicated}, {maximal device=5}, "
        "{maximal_mesh[device_id=5]}}",
        "{devices=[2,2,2,2]<=[2,2,4]T(2,1,0) last_tile_dims={manual, replicated}}",
        "{manual shard_as 1}",
    ]
    lines = "\n".join(f"  p{i} = f32[4] parameter({i}), sharding={s}"
                      for i, s in enumerate(shardings))
    module = parse_hlo(f"ENTRY e {{\n{lines}\n  ROOT t = tuple(p0, p1, p2, p3)\n}}")
    assert [module.entry.instruction(f"p{i}").attributes["sharding"]
            for i in range(len(shardings))] == shardings


def test_a_module_proto_in_text_format_is_named_as_such() -> None:
    text = ('# RUN: hlo-translate -hlo-to-mlir %s\n\nhlo_module {\n  name: "foo.5"\n'
            '  computations {\n    name: "main.5"\n  }\n}\n')
    with pytest.raises(ParseError, match=r"HloModuleProto in protobuf text format") as e:
        parse_hlo(text)
    assert (e.value.line, e.value.column) == (1, 1)
