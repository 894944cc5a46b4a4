"""GPU library custom-calls (symidx.ops.gpu_library): cuBLAS gemms, cuDNN convolutions,
TransformerEngine fused attention and XLA's builder library, each checked against its
twin in tests/reference_gpu.py (every output element reads exactly the map's image; the
input-to-output maps are the inverse relation), on small instructions shaped as the ones
in real GPU modules (tests/data/gpu_library_calls.hlo holds such modules)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ops_check import (
    build,
    check,
    check_output_to_input,
    data_of,
    inside,
    relation_in_to_out,
    relation_out_to_in,
    union_image,
)
from reference_hlo import dependencies
from symidx import ops
from symidx.cli import main
from symidx.core.syntax import parse_map
from symidx.hlo import parse_hlo
from symidx.ops.gpu_library import invert, library_call, mlir_attributes

DATA = Path(__file__).parent / "data"


def quoted(config: dict) -> str:
    return json.dumps(json.dumps(config))


def gemm_config(lc=(1,), rc=(0,), lb=(), rb=(), epilogue="DEFAULT", beta=0, **extra) -> str:
    config = {"gemm_backend_config": {
        "alpha_real": 1, "beta": beta, "alpha_imag": 0, "epilogue": epilogue,
        "dot_dimension_numbers": {
            "lhs_contracting_dimensions": [str(d) for d in lc],
            "rhs_contracting_dimensions": [str(d) for d in rc],
            "lhs_batch_dimensions": [str(d) for d in lb],
            "rhs_batch_dimensions": [str(d) for d in rb]},
        "precision_config": {"operand_precision": ["DEFAULT", "DEFAULT"]}, **extra}}
    return quoted(config)


# --- cuBLAS -------------------------------------------------------------------------------------


def test_cublas_lt_matmul_as_in_the_corpus_is_the_dot():
    # xla/backends/gpu/tests/kernel_reuse.hlo: f32[5,5] custom-call(a, a), smaller here
    instr = build(["f32[3,4]", "f32[4,2]"],
                  f'f32[3,2]{{1,0}} custom-call(p0, p1), custom_call_target="__cublas$lt$matmul",'
                  f' backend_config={gemm_config()}')
    check(instr)
    (lhs,), (rhs,) = ops.output_to_input(instr, 0)
    assert lhs == parse_map("(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 2], d1 in [0, 1], "
                            "s0 in [0, 3]")
    assert rhs == parse_map("(d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 2], d1 in [0, 1], "
                            "s0 in [0, 3]")
    assert ops.opaque_reason(instr) is None


def test_cublas_gemm_with_batch_dims_matrix_bias_and_workspace():
    instr = build(["f32[2,3,4]", "f32[2,2,4]", "f32[2,3,2]"],
                  f'(f32[2,3,2], s8[16]) custom-call(p0, p1, p2), '
                  f'custom_call_target="__cublas$gemm", backend_config='
                  f'{gemm_config(lc=(2,), rc=(2,), lb=(0,), rb=(0,), beta=1)}')
    check(instr)
    assert ops.opaque_reason(instr, 0) is None
    assert "workspace" in ops.opaque_reason(instr, 1)


def test_cublas_c_is_not_read_when_beta_is_zero():
    instr = build(["f32[3,4]", "f32[4,2]", "f32[3,2]"],
                  f'f32[3,2] custom-call(p0, p1, p2), custom_call_target="__cublas$gemm", '
                  f'backend_config={gemm_config(beta=0)}')
    check(instr)
    assert ops.output_to_input(instr, 0)[2] == []


def test_cublas_lt_bias_gelu_aux_epilogue():
    instr = build(["f32[3,4]", "f32[4,2]", "f32[2]"],
                  f'(f32[3,2], f32[3,2], s8[8]) custom-call(p0, p1, p2), '
                  f'custom_call_target="__cublas$lt$matmul", '
                  f'backend_config={gemm_config(epilogue="BIAS_GELU_AUX")}')
    check(instr)
    (bias,) = ops.output_to_input(instr, 1)[2]
    assert bias == parse_map("(d0, d1) -> (d1), domain: d0 in [0, 2], d1 in [0, 1]")


def test_cublas_f8_scales_and_amax():
    instr = build(["f8e4m3fn[3,4]", "f8e4m3fn[2,4]", "f32[]", "f32[]", "f32[]", "f32[]"],
                  f'(f32[3,2], f32[], s8[8]) custom-call(p0, p1, p2, p3, p4, p5), '
                  f'custom_call_target="__cublas$lt$matmul$f8", '
                  f'backend_config={gemm_config(rc=(1,), damax_output=True)}')
    check(instr)
    # no C: c_scale (operand 4) scales nothing
    assert ops.output_to_input(instr, 0)[4] == []


def test_cublas_unknown_epilogue_stays_labelled():
    instr = build(["f32[3,4]", "f32[4,2]"],
                  f'f32[3,2] custom-call(p0, p1), custom_call_target="__cublas$lt$matmul", '
                  f'backend_config={gemm_config(epilogue="D_RELU")}')
    assert library_call(instr) is None
    assert ops.opaque_reason(instr) == "custom-call __cublas$lt$matmul"
    check_output_to_input(instr, over=[0, 1])


# --- cuDNN --------------------------------------------------------------------------------------

WINDOW = "window={size=3 stride=2 pad=1_1}, dim_labels=b0f_0io->b0f"


def test_cudnn_forward_is_the_convolution():
    # the shape of xla/backends/gpu/transforms/layout_assignment's __cudnn$convForward
    instr = build(["f32[2,5,2]", "f32[3,2,4]"],
                  f'(f32[2,3,4], u8[0]) custom-call(p0, p1), {WINDOW}, '
                  f'custom_call_target="__cudnn$convForward"')
    check(instr)
    assert ops.opaque_reason(instr, 0) is None


def test_cudnn_bias_activation_with_side_input():
    instr = build(["f32[2,5,2]", "f32[3,2,4]", "f32[4]", "f32[2,3,4]"],
                  f'(f32[2,3,4], u8[0]) custom-call(p0, p1, p2, p3), {WINDOW}, '
                  f'custom_call_target="__cudnn$convBiasActivationForward", backend_config='
                  + quoted({"cudnn_conv_backend_config": {"activation_mode": "kRelu",
                                                          "conv_result_scale": 1,
                                                          "side_input_scale": 1}}))
    check(instr)


@pytest.mark.parametrize("window, size, groups, out", [
    ("window={size=3 stride=2 pad=1_1}", 3, 1, 3),
    ("window={size=2 stride=1 pad=0_1 rhs_dilate=2}", 2, 1, 4),
    ("window={size=3 stride=2 pad=1_1 rhs_reversal=1}", 3, 2, 3),
    ("window={size=2 stride=3 pad=-1_2}", 2, 2, 2),
])
def test_cudnn_backward_input_and_filter(window, size, groups, out):
    c = 2 * groups
    attrs = f'{window}, dim_labels=b0f_0io->b0f, feature_group_count={groups}'
    # the forward convolution these describe is valid HLO (its output has ``out`` positions)
    build([f"f32[2,5,{c}]", f"f32[{size},2,4]"], f"f32[2,{out},4] convolution(p0, p1), {attrs}")
    grad_in = build([f"f32[2,{out},4]", f"f32[{size},2,4]"],
                    f'(f32[2,5,{c}], u8[0]) custom-call(p0, p1), {attrs}, '
                    f'custom_call_target="__cudnn$convBackwardInput"')
    check(grad_in)
    grad_filter = build([f"f32[2,5,{c}]", f"f32[2,{out},4]"],
                        f'(f32[{size},2,4], u8[0]) custom-call(p0, p1), {attrs}, '
                        f'custom_call_target="__cudnn$convBackwardFilter"')
    check(grad_filter)


def test_cudnn_shapes_that_do_not_fit_stay_labelled():
    instr = build(["f32[2,5,2]", "f32[3,2,4]"],
                  f'(f32[2,4,4], u8[0]) custom-call(p0, p1), {WINDOW}, '
                  f'custom_call_target="__cudnn$convForward"')
    assert library_call(instr) is None
    assert ops.opaque_reason(instr) == "custom-call __cudnn$convForward"


# --- TransformerEngine --------------------------------------------------------------------------


def attention(forward: bool, layout: int, mask: int, b=2, s=3, skv=None, h=2, g=1, d=2,
              left=-1, right=-1, bias=None):
    """A te_fused_attn_{forward,backward}_ffi instruction as JAX emits it (operands and
    backend_config as in the llama and mixtral modules), on small shapes."""
    skv = skv or s
    base = (s, b) if layout < 5 else (b, s)
    group = layout % 5

    def arr(*dims):
        return f"bf16[{','.join(map(str, dims))}]"

    if group == 0:
        qkv = [arr(*base, 3, h, d)]
    elif group == 1:
        qkv = [arr(*base, h, 3, d)]
    else:
        kvbase = (skv, b) if layout < 5 else (b, skv)
        q = arr(*base, h, d)
        if group == 2:
            qkv = [q, arr(*kvbase, 2, g, d)]
        elif group == 3:
            qkv = [q, arr(*kvbase, g, 2, d)]
        else:
            qkv = [q, arr(*kvbase, g, d), arr(*kvbase, g, d)]
    while len(qkv) < 3:
        qkv.append("bf16[0]")
    o = arr(*base, h, d)
    bias_shape = arr(*bias) if bias else "bf16[0]"
    cu = f"s32[{b + 1}]"
    if forward:
        params = qkv + [bias_shape, "u32[2]", cu, cu] + ["f32[0]"] * 6
        result = f"({o}, f32[{b},{h},{s},1], u32[2,4], u8[48])"
    else:
        params = qkv + [bias_shape, f"f32[{b},{h},{s},1]", "u32[2,4]", o, o, cu, cu] \
            + ["f32[0]"] * 6
        result = f"({', '.join(qkv)}, bf16[0], u8[64])"
    config = (f"attn_heads = {h} : i64, bias_batch = {bias[0] if bias else 0} : i64, "
              f"bias_heads = {bias[1] if bias else 0} : i64, bias_type = {2 if bias else 0} "
              f": i64, deterministic = false, dropout_probability = 0.000000e+00 : f64, "
              f"input_batch = {b} : i64, is_training = true, kv_max_seqlen = {skv} : i64, "
              f"mask_type = {mask} : i64, max_segments_per_seq = 1 : i64, num_gqa_groups = "
              f"{g} : i64, q_max_seqlen = {s} : i64, qk_head_dim = {d} : i64, qkv_layout = "
              f"{layout} : i64, scaling_factor = 1.000000e+00 : f64, v_head_dim = {d} : i64, "
              f"window_size_left = {left} : i64, window_size_right = {right} : i64")
    target = "te_fused_attn_forward_ffi" if forward else "te_fused_attn_backward_ffi"
    operands = ", ".join(f"p{k}" for k in range(len(params)))
    return build(params, f'{result} custom-call({operands}), custom_call_target="{target}", '
                         f'api_version=API_VERSION_TYPED_FFI, backend_config={{{config}}}')


def cu_values(instr, forward: bool, q=(0, 2, 5), kv=(0, 3, 4)):
    first = 5 if forward else 8
    return {first: np.array(q), first + 1: np.array(kv)}


def check_attention(instr, forward: bool, padding: bool, values=None):
    """Every output against the twin (the softmax statistics of padded rows are said to
    read as a valid row: a superset), and input-to-output the inverse relation (a superset
    for padding masks, whose run-time lengths it drops)."""
    values = values or {}
    for output in range(len(instr.shape.elements)):
        over = range(len(instr.operands)) if forward and output == 1 and padding else ()
        check_output_to_input(instr, values, over=over, output=output)
    data = data_of(instr, values)
    for k in range(len(instr.operands)):
        for output in range(len(instr.shape.elements)):
            read = relation_out_to_in(instr, k, output, data)
            reached = relation_in_to_out(instr, k, output, data)
            if padding:
                assert read <= reached, (k, output, sorted(read - reached)[:4])
            else:
                assert read == reached, (k, output, sorted(read ^ reached)[:4])


@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("layout, mask", [
    (9, 3), (9, 0), (9, 2), (7, 0), (7, 3), (5, 2), (0, 1), (8, 5), (4, 4), (6, 3)])
def test_fused_attention_against_its_twin(forward, layout, mask):
    gqa = layout % 5 >= 2  # packed q, k and v share a head count
    instr = attention(forward, layout, mask, h=4 if gqa else 2, g=2 if gqa else 2)
    padding = mask in (1, 3, 5)
    values = cu_values(instr, forward) if padding else {}
    check_attention(instr, forward, padding, values)


@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("lengths", [((0, 2, 5), (0, 0, 4)), ((0, 0, 3), (0, 2, 4))])
@pytest.mark.parametrize("mask", [1, 3])
def test_fused_attention_with_an_empty_sequence(forward, lengths, mask):
    """A valid row without kv columns reads nothing of q, k, v (nor does a kv column that no
    row uses): the rule's maps say so exactly, through a range variable whose only
    constraint involves the lengths. ``remove_unused_symbols`` (run on every rule's maps)
    drops such a variable with its constraint, so the finished maps are a superset there."""
    instr = attention(forward, 9, mask, h=4, g=2)
    values = cu_values(instr, forward, *lengths)
    data = data_of(instr, values)
    call = library_call(instr)
    for output in (0, 1, 2) if not forward else (0,):
        raw, finished = call.reads(output), ops.output_to_input(instr, output)
        for o, reads in dependencies(instr, values, output).items():
            for k, dims in enumerate(call.ops):
                exact = inside(union_image(raw[k], o, data), dims, output, o, k)
                assert exact == reads[k], (output, o, k, sorted(exact ^ reads[k])[:4])
                assert reads[k] <= union_image(finished[k], o, data)


def test_fused_attention_cross_lengths_window_and_bias():
    instr = attention(True, 9, 0, s=3, skv=4, left=1, right=1, bias=(1, 2, 3, 4))
    check_attention(instr, True, False)
    instr = attention(True, 9, 4, s=2, skv=4, h=2, g=1)
    check_attention(instr, True, False)


def test_fused_attention_maps_read_the_lengths_and_say_what_is_labelled():
    instr = attention(True, 9, 3)
    (q_map,) = ops.output_to_input(instr, 0)[0]
    assert [str(v.source) for v in q_map.rts] == ["parameter(5)"] * 2 + ["parameter(6)"] * 2
    assert ops.opaque_reason(instr, 0) is None
    assert "rng_state" in ops.opaque_reason(instr, 2)
    assert "workspace" in ops.opaque_reason(instr, 3)
    assert "padding" in ops.opaque_reason(instr, 0, ops.INPUT_TO_OUTPUT)
    assert ops.opaque_reason(attention(True, 9, 2), 0, ops.INPUT_TO_OUTPUT) is None


def test_fused_attention_not_modelled_stays_labelled():
    instr = attention(True, 12, 0)  # thd (ragged) layout
    assert library_call(instr) is None
    assert ops.opaque_reason(instr) == "custom-call te_fused_attn_forward_ffi"


def test_mlir_attributes():
    found = mlir_attributes("{a = 1 : i64, b = true, c = -2.5e+00 : f64, d = \"x\"}")
    assert found == {"a": 1, "b": True, "c": -2.5}


def test_invert_is_the_inverse_relation():
    m = parse_map("(d0, d1)[s0] -> (d0 + s0, d1), domain: d0 in [0, 3], d1 in [0, 1], "
                  "s0 in [0, 2], d0 - s0 in [-1, 1]")
    inverse = invert(m, (6, 2))
    pairs = {(p, q) for p in [(a, b) for a in range(4) for b in range(2)]
             for q in m.image(p)}
    back = {(p, q) for q in [(a, b) for a in range(6) for b in range(2)]
            for p in inverse.image(q)}
    assert pairs == back


# --- XLA's builder library -------------------------------------------------------------------


def test_builder_math_is_elementwise():
    instr = build(["f32[2,3]", "f32[2,3]"],
                  'f32[2,3] custom-call(p0, p1), custom_call_target="xla_builder.math.NextAfter"')
    check(instr)
    assert ops.opaque_reason(instr) is None


def test_builder_calls_without_a_computation_or_fitting_shapes_stay_labelled():
    # xla/hlo/builder/tests/matrix/get_matrix_diagonal_via_gather.hlo: f32[2,2] -> f32[2,2]
    instr = build(["f32[2,2]"], 'f32[2,2] custom-call(p0), '
                                'custom_call_target="xla_builder.matrix.GetMatrixDiagonalViaGather"')
    assert ops.opaque_reason(instr) == \
        "custom-call xla_builder.matrix.GetMatrixDiagonalViaGather"
    broadcast = build(["f32[3]", "f32[]"], 'f32[3] custom-call(p0, p1), '
                                           'custom_call_target="xla_builder.math.NextAfter"')
    assert ops.opaque_reason(broadcast) == "custom-call xla_builder.math.NextAfter"
    check_output_to_input(broadcast, over=[0, 1])


def test_builder_call_with_its_computation_is_analysed_through_it():
    main_args = ["maps", str(DATA / "gpu_library_calls.hlo"), "--computation", "builder",
                 "--format", "json"]
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(main_args) == 0
    (record,) = json.loads(out.getvalue())["computations"]
    (group,) = record["operands"]
    assert group["opaque"] is None
    assert [m["text"] for m in group["maps"]] == ["(d0) -> (d0), domain: d0 in [0, 2]"]


# --- the modules in tests/data ------------------------------------------------------------------


def test_gpu_modules_from_the_corpus_get_exact_maps():
    module = parse_hlo((DATA / "gpu_library_calls.hlo").read_text())
    calls = [i for c in module.computations.values() for i in c.instructions
             if i.opcode == "custom-call"]
    assert calls
    for instr in calls:
        target = instr.attr_str("custom_call_target")
        if target.startswith("xla_builder") and instr.called_computations:
            continue
        assert library_call(instr) is not None or target.startswith("xla_builder"), target
        assert ops.opaque_reason(instr, 0) is None, target


# --- dynamic shapes -------------------------------------------------------------------------


def test_slice_to_dynamic_and_pad_to_static():
    # xla/backends/gpu/tests/calling_convention.hlo
    sliced = build(["s32[2,2,2]", "s32[]", "s32[]", "s32[]"],
                   's32[2,<=2,2] custom-call(p0, p1, p2, p3), '
                   'custom_call_target="SliceToDynamic"')
    check(sliced)
    padded = build(["s32[2,<=2,2]"], '(s32[2,2,2], s32[], s32[], s32[]) custom-call(p0), '
                                     'custom_call_target="PadToStatic"')
    check(padded)
    assert ops.opaque_reason(sliced) is None and ops.opaque_reason(padded) is None
    assert ops.output_to_input(padded, 1) == [[]]
