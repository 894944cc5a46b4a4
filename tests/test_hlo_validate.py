"""Shape inference and validation of HLO, as XLA's shape inference and verifier define them.

* every check rejects a small invalid module with the exact message, at the exact line and
  column (the instruction, or the attribute at fault);
* modules XLA accepts (mixed precision, bounded dimensions, preferred element types, scalar
  clamp bounds, unknown opcodes...) pass;
* ``infer_shape`` gives what XLA's ``shape_inference_test.cc`` expects (the facts are copied
  from its cases, the names say which);
* hypothesis checks inferred sizes against constructions from the ops' definitions (numpy
  slicing, padding by hand, window positions counted one by one, ``einsum``);
* the CLI reports an invalid module with ``FILE:line L, column C:`` and exit code 2.
"""

from __future__ import annotations

import re
import string
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from symidx.cli import main
from symidx.errors import HloShapeError, HloValidationError, ParseError
from symidx.hlo import HloInstruction, Shape, parse_hlo, parse_shape
from symidx.hlo.infer import bitcast_convert_shape, infer_shape, window_output_size
from symidx.hlo.instructions import CALLING_ATTRIBUTES
from symidx.hlo.validate import _ATTRIBUTES_ONLY, validate_instruction, validate_module

COMPUTATIONS = """\
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}

neg {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}

fused {
  p = f32[3] parameter(0)
  ROOT n = f32[3] negate(p)
}

cond {
  c = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}

cond2 {
  c = s32[] parameter(0)
  ROOT t = s32[] constant(1)
}

body {
  b = s32[] parameter(0)
  ROOT r = f32[] convert(b)
}

take_f32_2 {
  x = f32[2] parameter(0)
  ROOT y = f32[2] negate(x)
}

add_in_tuple {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  ROOT t = (f32[]) tuple(s)
}

step {
  x = f32[3] parameter(0)
  c = f32[3] parameter(1)
  s = f32[3] add(x, c)
  ROOT t = (f32[3], f32[3]) tuple(s, s)
}

carry_only {
  c = f32[3] parameter(0)
  ROOT n = f32[3] negate(c)
}
"""
PREFIX = "HloModule m\n\n" + COMPUTATIONS + "\nENTRY e {\n"
FIRST_BODY_LINE = PREFIX.count("\n") + 1


def module(*lines: str) -> str:
    """A module whose entry computation holds ``lines`` (indented by two spaces)."""
    return PREFIX + "".join(f"  {line}\n" for line in lines) + "}\n"


def entry_root(*lines: str) -> HloInstruction:
    """The root of an unvalidated module (to ask infer_shape about it)."""
    return parse_hlo(module(*lines), validate=False).entry.root


def where(lines: tuple[str, ...], attribute: str | None) -> tuple[int, int]:
    """Line and column the error must point at: the last line's instruction, or the value of
    ``attribute=`` on it (counted here from the text, independently of the parser)."""
    line = FIRST_BODY_LINE + len(lines) - 1
    text = "  " + lines[-1]
    column = 3 if attribute is None else text.index(f", {attribute}=") + len(attribute) + 4
    return line, column


# --------------------------------------------------------------------------- rejections

P = "p = f32[2] parameter(0)"
Q = "q = f32[2] parameter(1)"

# (id, lines (the last one is at fault), attribute pointed at or None, exact message)
INVALID = [
    ("arity_binary", (P, "ROOT out = f32[2] add(p)"), None,
     "add %out: takes 2 operands, but has 1"),
    ("arity_unary", (P, "ROOT n = f32[2] negate(p, p)"), None,
     "negate %n: takes 1 operand, but has 2"),
    ("transpose_shape", ("p = f32[2,3] parameter(0)",
                         "ROOT t = f32[2,3] transpose(p), dimensions={1,0}"), None,
     "transpose %t: dimensions={1,0} of f32[2,3] give f32[3,2], but the instruction says "
     "f32[2,3]"),
    ("transpose_permutation", ("p = f32[2,3] parameter(0)",
                               "ROOT t = f32[3,2] transpose(p), dimensions={0,0}"),
     "dimensions", "transpose %t: dimensions={0,0} is not a permutation of the 2 dimensions "
                   "of f32[2,3]"),
    ("broadcast_size", ("p = f32[3] parameter(0)",
                        "ROOT b = f32[4,2] broadcast(p), dimensions={1}"), "dimensions",
     "broadcast %b: dimensions={1} maps dimension 0 of f32[3] (size 3) to dimension 1 of "
     "f32[4,2] (size 2); they must be equal"),
    ("broadcast_count", ("p = f32[3] parameter(0)",
                         "ROOT b = f32[3,4] broadcast(p), dimensions={0,1}"), "dimensions",
     "broadcast %b: dimensions={0,1} must name one output dimension per dimension of the "
     "operand f32[3]"),
    ("broadcast_range", ("p = f32[3] parameter(0)",
                         "ROOT b = f32[3,4] broadcast(p), dimensions={2}"), "dimensions",
     "broadcast %b: dimensions={2} names dimension 2, but the output f32[3,4] has rank 2"),
    ("broadcast_type", ("p = f32[3] parameter(0)",
                        "ROOT b = s32[3,4] broadcast(p), dimensions={0}"), None,
     "broadcast %b: broadcasting f32[3] keeps its element type, but the instruction says "
     "s32[3,4]"),
    ("reshape_count", ("p = f32[2,3] parameter(0)", "ROOT r = f32[7] reshape(p)"), None,
     "reshape %r: the operand f32[2,3] has 6 elements, but the instruction says f32[7] "
     "(7 elements)"),
    ("convert_dims", ("p = f32[2,3] parameter(0)", "ROOT c = s32[3,2] convert(p)"), None,
     "convert %c: converting f32[2,3] to s32 gives s32[2,3], but the instruction says "
     "s32[3,2]"),
    ("bitcast_convert_narrower", ("p = f32[4] parameter(0)",
                                  "ROOT b = u8[16] bitcast-convert(p)"), None,
     "bitcast-convert %b: bitcasting f32[4] to u8 gives u8[4,4], but the instruction says "
     "u8[16]"),
    ("bitcast_convert_wider", ("p = u8[3] parameter(0)", "ROOT b = f32[] bitcast-convert(p)"),
     None, "bitcast-convert %b: bitcasting u8[3] to the 4x wider f32 needs a last dimension "
           "of size 4"),
    ("iota_dimension", ("ROOT i = s32[4] iota(), iota_dimension=1",), "iota_dimension",
     "iota %i: iota_dimension=1 must name a dimension of s32[4]"),
    ("no_implicit_broadcast", (P, "q = f32[3] parameter(1)", "ROOT out = f32[2] add(p, q)"),
     None, "add %out: operands must have the same dimensions (HLO does not broadcast "
           "implicitly), but are f32[2] and f32[3]"),
    ("binary_types", (P, "q = s32[2] parameter(1)", "ROOT out = f32[2] add(p, q)"), None,
     "add %out: operands must have the same element type, but are f32[2] and s32[2]"),
    ("compare_gives_pred", (P, Q, "ROOT c = f32[2] compare(p, q), direction=LT"), None,
     "compare %c: operands f32[2], f32[2] give pred[2], but the instruction says f32[2]"),
    ("output_type_class", (P, Q, "ROOT out = s32[2] add(p, q)"), None,
     "add %out: operands f32[2], f32[2] give f32[2], but the instruction says s32[2]"),
    ("unary_type", ("p = s32[2] parameter(0)", "ROOT f = s32[2] floor(p)"), None,
     "floor %f: needs a floating-point operand, but the operand is s32[2]"),
    ("select_predicate", (P, Q, "ROOT s = f32[2] select(p, q, q)"), None,
     "select %s: the predicate must have element type pred, but is f32[2]"),
    ("clamp_bound", ("lo = f32[3] parameter(0)", "x = f32[2] parameter(1)",
                     "hi = f32[] parameter(2)", "ROOT c = f32[2] clamp(lo, x, hi)"), None,
     "clamp %c: min f32[3] must be a scalar or have the shape of the operand f32[2]"),
    ("slice_bounds", ("p = f32[4] parameter(0)", "ROOT s = f32[5] slice(p), slice={[0:5]}"),
     "slice", "slice %s: slice [0:5:1] of dimension 0 is out of bounds: it needs 0 <= start "
              "<= limit <= 4 and stride > 0"),
    ("slice_shape", ("p = f32[4] parameter(0)", "ROOT s = f32[3] slice(p), slice={[0:4:2]}"),
     None, "slice %s: slice={[0:4:2]} of f32[4] give f32[2], but the instruction says f32[3]"),
    ("pad_shape", ("p = f32[3] parameter(0)", "z = f32[] constant(0)",
                   "ROOT q = f32[7] pad(p, z), padding=1_2_1"), None,
     "pad %q: padding=1_2_1 of f32[3], f32[] give f32[8], but the instruction says f32[7]"),
    ("pad_interior", ("p = f32[3] parameter(0)", "z = f32[] constant(0)",
                      "ROOT q = f32[3] pad(p, z), padding=0_0_-1"), "padding",
     "pad %q: interior padding -1 of dimension 0 is negative"),
    ("concatenate_operands", ("p = f32[2,3] parameter(0)", "q = f32[2,4] parameter(1)",
                              "ROOT c = f32[4,3] concatenate(p, q), dimensions={0}"), None,
     "concatenate %c: operands f32[2,3] and f32[2,4] differ in more than dimension 0"),
    ("concatenate_shape", ("p = f32[2,3] parameter(0)", "q = f32[2,4] parameter(1)",
                           "ROOT c = f32[2,6] concatenate(p, q), dimensions={1}"), None,
     "concatenate %c: dimensions={1} of f32[2,3], f32[2,4] give f32[2,7], but the instruction "
     "says f32[2,6]"),
    ("dot_contracting", ("a = f32[2,3] parameter(0)", "b = f32[4,5] parameter(1)",
                         "ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, "
                         "rhs_contracting_dims={0}"), "lhs_contracting_dims",
     "dot %d: the contracting dimensions of lhs f32[2,3] (sizes [3]) and rhs f32[4,5] "
     "(sizes [4]) differ"),
    ("dot_shape", ("a = f32[2,3] parameter(0)", "b = f32[3,5] parameter(1)",
                   "ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, "
                   "rhs_contracting_dims={0}"), None,
     "dot %d: lhs_contracting_dims={1}, rhs_contracting_dims={0} of f32[2,3], f32[3,5] give "
     "[2,5], but the instruction says f32[2,4] (the element type may differ, the dimensions "
     "may not)"),
    ("convolution_features", ("x = f32[1,8,4] parameter(0)", "k = f32[3,2,5] parameter(1)",
                              "ROOT c = f32[1,6,5] convolution(x, k), window={size=3}, "
                              "dim_labels=b0f_0io->b0f"), None,
     "convolution %c: the input features (4) divided by feature_group_count (1) must equal "
     "the kernel input features (2)"),
    ("convolution_shape", ("x = f32[1,8,4] parameter(0)", "k = f32[3,4,5] parameter(1)",
                           "ROOT c = f32[1,8,5] convolution(x, k), window={size=3}, "
                           "dim_labels=b0f_0io->b0f"), None,
     "convolution %c: window={size=3}, dim_labels=b0f_0io->b0f of f32[1,8,4], f32[3,4,5] "
     "give [1,6,5], but the instruction says f32[1,8,5] (the element type may differ, the "
     "dimensions may not)"),
    ("reduce_dimension", ("p = f32[4,5] parameter(0)", "z = f32[] constant(0)",
                          "ROOT r = f32[4] reduce(p, z), dimensions={2}, to_apply=add"),
     "dimensions", "reduce %r: dimensions={2} names dimension 2, but f32[4,5] has rank 2"),
    ("reduce_reducer_arity", ("p = f32[4] parameter(0)", "q = f32[4] parameter(1)",
                              "z = f32[] constant(0)",
                              "ROOT r = (f32[], f32[]) reduce(p, q, z, z), dimensions={0}, "
                              "to_apply=add"), "to_apply",
     "reduce %r: to_apply=%add takes 2 parameters, but needs 4 (an accumulator and an element "
     "per input)"),
    ("reduce_shape", ("p = f32[4,5] parameter(0)", "z = f32[] constant(0)",
                      "ROOT r = f32[4] reduce(p, z), dimensions={0}, to_apply=add"), None,
     "reduce %r: dimensions={0} of f32[4,5], f32[] give f32[5], but the instruction says "
     "f32[4]"),
    ("reduce_window_shape", ("p = f32[8,8] parameter(0)", "z = f32[] constant(0)",
                             "ROOT w = f32[4,3] reduce-window(p, z), window={size=2x2 "
                             "stride=2x2}, to_apply=add"), None,
     "reduce-window %w: window={size=2x2 stride=2x2} of f32[8,8], f32[] give f32[4,4], but "
     "the instruction says f32[4,3]"),
    ("select_and_scatter_source", ("p = f32[8,16] parameter(0)", "s = f32[4,6] parameter(1)",
                                   "z = f32[] constant(0)",
                                   "ROOT x = f32[8,16] select-and-scatter(p, s, z), "
                                   "window={size=2x2 stride=2x2}, select=ge, scatter=add"),
     None, "select-and-scatter %x: the source f32[4,6] must have one element per window "
           "position: f32[4,8]"),
    ("gather_collapsed_size", ("p = f32[64,48] parameter(0)", "i = s64[32] parameter(1)",
                               "ROOT g = f32[64,32] gather(p, i), offset_dims={0}, "
                               "collapsed_slice_dims={1}, start_index_map={1}, "
                               "index_vector_dim=1, slice_sizes={64,2}"), "slice_sizes",
     "gather %g: slice_sizes={64,2}: size 2 of dimension 1 does not fit f32[64,48] (a "
     "collapsed or batching dimension takes at most 1)"),
    ("gather_shape", ("p = f32[64,48] parameter(0)", "i = s64[32] parameter(1)",
                      "ROOT g = f32[32,64] gather(p, i), offset_dims={0}, "
                      "collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, "
                      "slice_sizes={64,1}"), None,
     "gather %g: offset_dims={0}, collapsed_slice_dims={1}, start_index_map={1}, "
     "index_vector_dim=1, slice_sizes={64,1} of f32[64,48], s64[32] give f32[64,32], but the "
     "instruction says f32[32,64]"),
    ("scatter_update_rank", ("p = f32[3,3] parameter(0)", "i = s32[2] parameter(1)",
                             "u = f32[2,3,1] parameter(2)",
                             "ROOT s = f32[3,3] scatter(p, i, u), update_window_dims={1}, "
                             "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                             "index_vector_dim=1, to_apply=add"), None,
     "scatter %s: updates f32[2,3,1] must have rank 2"),
    ("dynamic_slice_sizes", ("p = f32[4,5] parameter(0)", "i = s32[] parameter(1)",
                             "ROOT d = f32[2,6] dynamic-slice(p, i, i), "
                             "dynamic_slice_sizes={2,6}"), "dynamic_slice_sizes",
     "dynamic-slice %d: dynamic_slice_sizes={2,6} does not fit in f32[4,5]"),
    ("dynamic_slice_indices", ("p = f32[4,5] parameter(0)", "i = s32[] parameter(1)",
                               "ROOT d = f32[2,2] dynamic-slice(p, i), "
                               "dynamic_slice_sizes={2,2}"), None,
     "dynamic-slice %d: needs 2 start indices (one per operand dimension), but has 1"),
    ("dynamic_update_slice", ("p = f32[4] parameter(0)", "u = f32[5] parameter(1)",
                              "i = s32[] parameter(2)",
                              "ROOT d = f32[4] dynamic-update-slice(p, u, i)"), None,
     "dynamic-update-slice %d: the update f32[5] does not fit in the operand f32[4]"),
    ("tuple_shape", (P, "c = f32[] constant(1)", "ROOT t = (f32[2], s32[]) tuple(p, c)"),
     None, "tuple %t: operands f32[2], f32[] give (f32[2], f32[]), but the instruction says "
           "(f32[2], s32[])"),
    ("tuple_index", ("t = (f32[], s32[]) parameter(0)",
                     "ROOT g = f32[] get-tuple-element(t), index=2"), "index",
     "get-tuple-element %g: index=2 is out of range for the 2-tuple (f32[], s32[])"),
    ("reverse_dimension", ("p = f32[4] parameter(0)",
                           "ROOT r = f32[4] reverse(p), dimensions={1}"), "dimensions",
     "reverse %r: dimensions={1} names dimension 1, but f32[4] has rank 1"),
    ("sort_comparator", ("p = f32[4] parameter(0)",
                         "ROOT s = f32[4] sort(p), dimensions={0}, to_apply=add"), "to_apply",
     "sort %s: to_apply=%add must return pred[], but returns f32[]"),
    ("map_arity", (P, Q, "ROOT m = f32[2] map(p, q), dimensions={0}, to_apply=neg"),
     "to_apply", "map %m: to_apply=%neg takes 1 parameter, but map has 2 operands"),
    ("all_reduce_shape", ("p = f32[8] parameter(0)",
                          "ROOT a = f32[4] all-reduce(p), to_apply=add"), None,
     "all-reduce %a: operand f32[8] gives f32[8], but the instruction says f32[4]"),
    ("all_gather_groups", (P, "ROOT a = f32[8] all-gather(p), dimensions={0}, "
                              "replica_groups={{0,1,2}}"), None,
     "all-gather %a: dimensions={0}, replica_groups={{0,1,2}} of f32[2] give f32[6], but the "
     "instruction says f32[8]"),
    ("all_gather_whole_shards", (P, "ROOT a = f32[5] all-gather(p), dimensions={0}"), None,
     "all-gather %a: dimensions={0} of f32[2] give f32[6], but the instruction says f32[5]"),
    ("reduce_scatter_shards", ("p = f32[8] parameter(0)",
                               "ROOT r = f32[2] reduce-scatter(p), dimensions={0}, "
                               "replica_groups={{0,1,2}}, to_apply=add"), None,
     "reduce-scatter %r: dimension 0 of f32[8] is not divisible by the 3 shards"),
    ("all_to_all_shape", ("p = f32[8,4] parameter(0)",
                          "ROOT a = f32[4,8] all-to-all(p), dimensions={0}"), None,
     "all-to-all %a: dimensions={0} of f32[8,4] give f32[8,4], but the instruction says "
     "f32[4,8]"),
    ("collective_permute_shape", ("p = f32[4] parameter(0)",
                                  "ROOT c = f32[3] collective-permute(p), "
                                  "source_target_pairs={{0,1}}"), None,
     "collective-permute %c: operand f32[4] gives f32[4], but the instruction says f32[3]"),
    ("cholesky_square", ("p = f32[3,4] parameter(0)", "ROOT c = f32[3,4] cholesky(p)"), None,
     "cholesky %c: needs a floating-point or complex operand of rank >= 2 with square minor "
     "dimensions, but has f32[3,4]"),
    ("triangular_solve_shared", ("a = f32[3,3] parameter(0)", "b = f32[4,2] parameter(1)",
                                 "ROOT t = f32[4,2] triangular-solve(a, b), left_side=true, "
                                 "lower=true, transpose_a=NO_TRANSPOSE"), None,
     "triangular-solve %t: needs a square a and b of one floating-point or complex type, "
     "equal batch dimensions and a shared dimension, but has a=f32[3,3] and b=f32[4,2] "
     "(left_side=true)"),
    ("fft_rank", ("p = c64[16,8] parameter(0)",
                  "ROOT f = c64[16,8] fft(p), fft_type=FFT, fft_length={32,16,8}"),
     "fft_length", "fft %f: fft_length={32,16,8} needs 1 to 3 lengths and an operand of at "
                   "least that rank, but the operand is c64[16,8]"),
    ("rng_bit_generator_state", ("s = u64[2] parameter(0)",
                                 "ROOT r = (u64[3], u32[4]) rng-bit-generator(s), "
                                 "algorithm=rng_default"), None,
     "rng-bit-generator %r: a tuple shape must be (state u64[2], bits), but the instruction "
     "says (u64[3], u32[4])"),
    ("batch_norm_scale", ("x = f32[2,3] parameter(0)", "s = f32[4] parameter(1)",
                          "o = f32[3] parameter(2)",
                          "ROOT b = (f32[2,3], f32[3], f32[3]) batch-norm-training(x, s, o), "
                          "epsilon=0.001, feature_index=1"), None,
     "batch-norm-training %b: scale must be f32[3] (one per feature), but is f32[4]"),
    ("topk_k", ("p = f32[4,5] parameter(0)",
                "ROOT t = (f32[4,6], s32[4,6]) topk(p), k=6, largest=true"), "k",
     "topk %t: k=6 must be at most the last dimension of f32[4,5]"),
    ("while_body", ("i = s32[] parameter(0)",
                    "ROOT w = s32[] while(i), condition=cond, body=body"), "body",
     "while %w: body=%body returns f32[], but the loop state is s32[]"),
    ("while_condition", ("i = s32[] parameter(0)",
                         "ROOT w = s32[] while(i), condition=cond2, body=cond"), "condition",
     "while %w: condition=%cond2 must return pred[], but returns s32[]"),
    ("conditional_branch_parameter", ("c = pred[] parameter(0)", "p = f32[2] parameter(1)",
                                      "i = s32[] parameter(2)",
                                      "ROOT r = f32[2] conditional(c, p, i), "
                                      "true_computation=take_f32_2, "
                                      "false_computation=take_f32_2"), "false_computation",
     "conditional %r: false_computation=%take_f32_2: parameter 0 is f32[2], but is given "
     "s32[]"),
    ("scan_dimensions", ("xs = f32[5,3] parameter(0)", "i = f32[3] parameter(1)",
                         "ROOT r = (f32[5,3], f32[3]) scan(xs, i), dimensions={0,1}, "
                         "num_carries=1, to_apply=step"), "dimensions",
     "scan %r: dimensions={0,1} must name one dimension"),
    ("scan_num_carries", ("xs = f32[5,3] parameter(0)", "i = f32[3] parameter(1)",
                          "ROOT r = (f32[5,3], f32[3]) scan(xs, i), dimensions={0}, "
                          "num_carries=3, to_apply=step"), "num_carries",
     "scan %r: num_carries=3 must be between 0 and the 2 operands"),
    ("scan_slice", ("xs = f32[5,4] parameter(0)", "i = f32[3] parameter(1)",
                    "ROOT r = (f32[5,3], f32[3]) scan(xs, i), dimensions={0}, num_carries=1, "
                    "to_apply=step"), "to_apply",
     "scan %r: to_apply=%step: parameter 0 is f32[3], but is given f32[4]"),
    ("scan_axis", ("xs = f32[3] parameter(0)", "i = f32[3] parameter(1)",
                   "ROOT r = (f32[3], f32[3]) scan(xs, i), dimensions={1}, num_carries=1, "
                   "to_apply=step"), "dimensions",
     "scan %r: dimensions={1} is not a dimension of input 0 f32[3]"),
    ("scan_length", ("xs = f32[5,3] parameter(0)", "i = f32[3] parameter(1)",
                     "ROOT r = (f32[6,3], f32[3]) scan(xs, i), dimensions={0}, "
                     "num_carries=1, to_apply=step"), None,
     "scan %r: dimensions={0}, num_carries=1 of f32[5,3], f32[3] give (f32[5,3], f32[3]), "
     "but the instruction says (f32[6,3], f32[3])"),
    ("scan_carry", ("xs = f32[5,3] parameter(0)", "i = f32[3] parameter(1)",
                    "ROOT r = (f32[5,3]) scan(xs, i, i), dimensions={0}, num_carries=2, "
                    "to_apply=step"), "to_apply",
     "scan %r: to_apply=%step takes 2 parameters, but is given 3"),
    ("call_arity", (P, "ROOT c = f32[] call(p), to_apply=add"), "to_apply",
     "call %c: to_apply=%add takes 2 parameters, but is given 1"),
    ("fusion_parameter", ("p = f32[4] parameter(0)",
                          "ROOT f = f32[3] fusion(p), kind=kLoop, calls=fused"), "calls",
     "fusion %f: calls=%fused: parameter 0 is f32[3], but operand 0 is f32[4]"),
    ("fusion_root", ("p = f32[3] parameter(0)",
                     "ROOT f = f32[4] fusion(p), kind=kLoop, calls=fused"), None,
     "fusion %f: the root of %fused gives f32[3], but the instruction says f32[4]"),
    ("after_all_token", ("t = token[] after-all()", "ROOT a = f32[] after-all(t, t)"), None,
     "after-all %a: operands token[], token[] give token[], but the instruction says f32[]"),
    ("add_dependency_token", (P, "q = f32[] parameter(1)",
                              "ROOT a = f32[2] add-dependency(p, q)"), None,
     "add-dependency %a: operand 1 (%q) must be token[], but is f32[]"),
]


@pytest.mark.parametrize(("lines", "attribute", "message"),
                         [case[1:] for case in INVALID], ids=[case[0] for case in INVALID])
def test_invalid_module_is_rejected_at_the_spot(lines: tuple[str, ...], attribute: str | None,
                                                message: str) -> None:
    with pytest.raises(HloValidationError) as caught:
        parse_hlo(module(*lines), source="bad.hlo")
    err = caught.value
    line, column = where(lines, attribute)
    assert err.message == message
    assert (err.line, err.column) == (line, column)
    assert str(err) == f"bad.hlo:line {line}, column {column}: {message}"


def test_validation_errors_are_parse_and_shape_errors() -> None:
    text = module(P, "ROOT out = f32[2] add(p)")
    for kind in (ParseError, HloShapeError, HloValidationError):
        with pytest.raises(kind, match="takes 2 operands"):
            parse_hlo(text)


def test_validate_false_keeps_what_xla_rejects() -> None:
    lines = ("p = f32[2,3] parameter(0)", "ROOT t = f32[2,3] transpose(p), dimensions={1,0}")
    module_ = parse_hlo(module(*lines), validate=False)
    assert str(module_.entry.root.shape) == "f32[2,3]"
    with pytest.raises(HloValidationError, match=r"give f32\[3,2\]"):
        validate_instruction(module_.entry.root)


def _outcome(check, module_) -> str | None:
    try:
        check(module_)
    except HloValidationError as err:
        return str(err)
    return None


@pytest.mark.parametrize(("lines", "attribute", "message"),
                         [case[1:] for case in INVALID], ids=[case[0] for case in INVALID])
def test_checking_alike_instructions_once_rejects_the_same(lines: tuple[str, ...],
                                                           attribute: str | None,
                                                           message: str) -> None:
    """parse_hlo checks an instruction alike to one that passed only once
    (validate_module(parsed=True)); each rejected case is rejected there as it is when
    every instruction is checked, with the same message at the same spot."""
    try:
        module_ = parse_hlo(module(*lines), source="bad.hlo", validate=False)
    except HloValidationError as err:  # refused before validation (operand count, attribute)
        assert message in str(err)
        return
    every = _outcome(validate_module, module_)
    assert every is not None and message in every
    assert _outcome(lambda m: validate_module(m, parsed=True), module_) == every


def test_an_instruction_alike_in_all_but_its_fault_is_still_rejected() -> None:
    """Many alike instructions pass; one that differs only in what the verifier rejects
    (its declared shape, an operand's shape, a reducer's types, a dimensions= value) is
    rejected at its own line, not let through as its passing neighbours were."""
    ok = ["q = f32[4,3] parameter(0)", "z = f32[] constant(0)", "zi = s32[] constant(0)"]
    ok += [f"a{k} = f32[4,3] add(q, q)" for k in range(5)]
    ok += [f"r{k} = f32[4] reduce(q, z), dimensions={{1}}, to_apply=add" for k in range(5)]
    faults = [
        ("b = f32[4,4] add(q, q)", "give f32[4,3]", None),
        ("b = f32[4] reduce(q, z), dimensions={0}, to_apply=add", "give f32[3]", None),
        ("b = f32[4] reduce(q, zi), dimensions={1}, to_apply=add", "init value 0", "to_apply"),
        ("b = f32[4] reduce(q, z), dimensions={1}, to_apply=addi", "reduces s32", "to_apply"),
    ]
    ints = "addi {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n" \
           "  ROOT s = s32[] add(a, b)\n}\n\n"
    for fault, message, attribute in faults:
        text = module(*ok, fault, "ROOT t = (f32[4,3]) tuple(a0)").replace(
            "HloModule m\n\n", "HloModule m\n\n" + ints, 1)
        with pytest.raises(HloValidationError, match=re.escape(message)) as caught:
            parse_hlo(text)
        line, column = where((*ok, fault), attribute)
        assert (caught.value.line, caught.value.column) == (line + ints.count("\n"), column)


def test_checking_alike_instructions_once_agrees_on_the_bundled_modules() -> None:
    """Every bundled module (tests/data) passes or fails alike on both paths."""
    paths = sorted(Path(__file__).parent.joinpath("data").rglob("*.hlo"))
    assert len(paths) > 100
    for path in paths:
        try:
            module_ = parse_hlo(path.read_text(), str(path), validate=False)
        except ParseError:
            continue
        assert _outcome(lambda m: validate_module(m, parsed=True), module_) == \
            _outcome(validate_module, module_), path


def test_the_attributes_naming_computations_are_those_called() -> None:
    """validate_module(parsed=True) leaves out the values of the attributes naming
    computations (it compares the called computations' interfaces instead), picking them
    by name: in a parsed module, they are the keys of ``called_computations``. Here on the
    bundled modules and on computations named, listed and written inline, read along each of
    the reader's paths (a short text, and one long enough for its one-match patterns)."""
    inline = module("p = f32[3] parameter(0)", "z = f32[] constant(0)",
                    "i = s32[] constant(0)",
                    "r = f32[] reduce(p, z), dimensions={0}, to_apply={ a = f32[] parameter(0) "
                    "b = f32[] parameter(1) ROOT s = f32[] add(a, b) }",
                    "w = s32[] while(i), condition=cond, body=body",
                    "k = f32[3] conditional(i, p, p), branch_computations={fused, fused}",
                    "ROOT f = f32[3] fusion(p), kind=kLoop, calls=fused")
    texts = [inline, inline + "\n// " + "x" * 60_000 + "\n"]
    texts += [path.read_text() for path in
              sorted(Path(__file__).parent.joinpath("data").rglob("*.hlo"))]
    calling = 0
    for text in texts:
        try:
            module_ = parse_hlo(text, validate=False)
        except ParseError:
            continue
        for computation in module_.computations.values():
            for instr in computation.instructions:
                assert set(instr.called_computations) == \
                    set(instr.attributes) & CALLING_ATTRIBUTES, instr
                calling += bool(instr.called_computations)
    assert calling > 100


def test_the_opcodes_passed_over_without_attributes_are_checked_on_attributes_only() -> None:
    """validate_module(parsed=True) passes over an instruction without attributes whose
    opcode's check reads nothing but the attributes (a parameter, a constant, a custom call:
    no verifier check of their own, no inference rule, no fixed operand count): each such
    passes, whatever its shape and operands. With an attribute it does not take, a
    parameter is still rejected."""
    assert {"parameter", "constant"} <= _ATTRIBUTES_ONLY
    p = HloInstruction("p", "parameter", Shape("f32", (2,)), 1, parameter_number=0)
    for opcode in _ATTRIBUTES_ONLY:
        for operands in ([], [p], [p, p, p]):
            validate_instruction(HloInstruction("x", opcode, Shape("s32", (3,)), 2,
                                                operands=list(operands)))
    text = module("p = f32[2] parameter(0), dimensions={0}", "ROOT n = f32[2] negate(p)")
    with pytest.raises(HloValidationError, match="unexpected attribute dimensions="):
        parse_hlo(text)


# --------------------------------------------------------------------------- acceptances

VALID = [
    ("mixed_precision", (P, Q, "ROOT out = bf16[2] add(p, q)")),
    ("bounded_dimension", ("p = f32[<=4] parameter(0)", "q = f32[4] parameter(1)",
                           "ROOT out = f32[4] add(p, q)")),
    ("unbounded_dimension", ("p = f32[?] parameter(0)", "ROOT n = f32[7] negate(p)")),
    ("layouts_ignored", ("p = f32[2,3]{0,1} parameter(0)",
                         "ROOT t = f32[3,2]{0,1} transpose(p), dimensions={1,0}")),
    ("clamp_scalar_bounds", ("lo = f32[] parameter(0)", "p = f32[2] parameter(1)",
                             "hi = f32[] parameter(2)",
                             "ROOT c = f32[2] clamp(lo, p, hi)")),
    ("select_scalar_predicate", ("c = pred[] parameter(0)", "p = f32[2] parameter(1)",
                                 "ROOT s = f32[2] select(c, p, p)")),
    ("dot_preferred_type", ("a = bf16[2,3] parameter(0)", "b = bf16[3,5] parameter(1)",
                            "ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, "
                            "rhs_contracting_dims={0}")),
    ("convolution_preferred_type", ("x = s8[1,8,4] parameter(0)", "k = s8[3,4,5] parameter(1)",
                                    "ROOT c = s32[1,6,5] convolution(x, k), window={size=3}, "
                                    "dim_labels=b0f_0io->b0f")),
    ("broadcast_unsorted_dimensions", ("p = f32[2,3] parameter(0)",
                                       "ROOT b = f32[3,4,2] broadcast(p), dimensions={2,0}")),
    ("broadcast_scalar_without_dimensions", ("c = f32[] constant(1)",
                                             "ROOT b = f32[3] broadcast(c)")),
    ("convert_any_type", ("p = f32[2,3] parameter(0)", "ROOT c = s8[2,3] convert(p)")),
    ("reshape_any_dims", ("p = f32[2,3] parameter(0)", "ROOT r = f32[3,1,2] reshape(p)")),
    ("bitcast_anything", ("p = f32[2,3] parameter(0)", "ROOT b = s8[24] bitcast(p)")),
    ("custom_call", (P, "ROOT c = (s32[7], f32[]) custom-call(p, p, p), "
                        "custom_call_target=\"anything\"")),
    ("unknown_opcode", (P, "ROOT x = f32[9,9] frobnicate(p)")),
    ("all_gather_across_partitions", (P, "ROOT a = f32[8] all-gather(p), channel_id=1, "
                                         "replica_groups={{0,1}}, dimensions={0}")),
    ("all_gather_iota_groups", (P, "ROOT a = f32[8] all-gather(p), "
                                   "replica_groups=[2,4]<=[8], dimensions={0}")),
    ("variadic_reduce", ("p = f32[4,5] parameter(0)", "q = s32[4,5] parameter(1)",
                         "z = f32[] constant(0)", "y = s32[] constant(0)",
                         "ROOT r = (f32[5], s32[5]) reduce(p, q, z, y), dimensions={0}, "
                         "to_apply=argmax")),
    ("reduce_with_a_one_tuple_reducer", ("p = f32[4,5] parameter(0)", "z = f32[] constant(0)",
                                         "ROOT r = (f32[5]) reduce(p, z), dimensions={0}, "
                                         "to_apply=add_in_tuple")),
    ("gather_batching_dims", ("p = f32[100,64,5,48] parameter(0)",
                              "i = s64[5,100,32] parameter(1)",
                              "ROOT g = f32[5,100,32,8] gather(p, i), offset_dims={3}, "
                              "collapsed_slice_dims={1}, start_index_map={1}, "
                              "index_vector_dim=3, operand_batching_dims={0,2}, "
                              "start_indices_batching_dims={1,0}, slice_sizes={1,1,1,8}")),
]
ARGMAX = """\
argmax {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  m = f32[] maximum(a, b)
  k = s32[] maximum(i, j)
  ROOT r = (f32[], s32[]) tuple(m, k)
}

"""


def test_scans_xla_accepts_are_accepted_and_their_shapes_inferred() -> None:
    """Outputs stacked along the scanned dimension, then the final carries; a scan with
    only carries; a single result as an array."""
    root = entry_root("xs = f32[5,3] parameter(0)", "i = f32[3] parameter(1)",
                      "ROOT r = (f32[5,3], f32[3]) scan(xs, i), dimensions={0}, "
                      "num_carries=1, to_apply=step")
    assert str(infer_shape(root)) == "(f32[5,3], f32[3])"
    parse_hlo(module("xs = f32[3,5] parameter(0)", "i = f32[3] parameter(1)",
                     "ROOT r = (f32[3,5], f32[3]) scan(xs, i), dimensions={1}, "
                     "num_carries=1, is_reverse=true, to_apply=step"))
    only = entry_root("i = f32[3] parameter(0)",
                      "ROOT r = f32[3] scan(i), dimensions={0}, num_carries=1, "
                      "to_apply=carry_only")
    assert str(infer_shape(only)) == "f32[3]"


@pytest.mark.parametrize("lines", [case[1] for case in VALID], ids=[case[0] for case in VALID])
def test_what_xla_accepts_is_accepted(lines: tuple[str, ...]) -> None:
    parse_hlo(module(*lines).replace("\nENTRY e", "\n" + ARGMAX + "ENTRY e"))


def test_sample_modules_validate() -> None:
    data = Path(__file__).parent / "data"
    paths = sorted(data.glob("**/*.hlo"))
    assert len(paths) >= 30
    for path in paths:
        parse_hlo(path.read_text(), source=path.name)


# --------------------------------------------------------------------------- XLA's facts

def _window(size: str, stride: str = "", pad: str = "", lhs: str = "", rhs: str = "") -> str:
    fields = [f"size={size}"] + [f"{k}={v}" for k, v in (("stride", stride), ("pad", pad),
                                                          ("lhs_dilate", lhs),
                                                          ("rhs_dilate", rhs)) if v]
    return "window={" + " ".join(fields) + "}"


# (shape_inference_test.cc case, operand declarations, the instruction's right-hand side
#  after its declared shape, the shape XLA infers)
FACTS = [
    ("Convolve", ("x = f32[10,11,3,4] parameter(0)", "k = f32[2,12,11,3] parameter(1)"),
     "convolution(x, k), " + _window("3x2", "2x1", "1_1x0_0") + ", dim_labels=bf01_1oi0->bf01",
     "f32[10,12,2,3]"),
    ("ConvolveWithWindowDilation",
     ("x = f32[10,11,103,4] parameter(0)", "k = f32[2,12,11,3] parameter(1)"),
     "convolution(x, k), " + _window("3x2", "3x1", "0_0x2_1", rhs="6x2")
     + ", dim_labels=bf01_1oi0->bf01", "f32[10,12,31,5]"),
    ("ConvolveWithBaseDilation",
     ("x = f32[10,11,3,4] parameter(0)", "k = f32[2,12,11,4] parameter(1)"),
     "convolution(x, k), " + _window("4x2", "3x1", "0_0x2_1", lhs="6x2")
     + ", dim_labels=bf01_1oi0->bf01", "f32[10,12,4,9]"),
    ("ConvolveWithBF16_F16", ("x = bf16[10,11,3,4] parameter(0)",
                              "k = f16[2,12,11,3] parameter(1)"),
     "convolution(x, k), " + _window("3x2", "2x1", "1_1x0_0") + ", dim_labels=bf01_1oi0->bf01",
     "bf16[10,12,2,3]"),
    ("ReduceWindowInHalf", ("p = f32[8,8] parameter(0)", "z = f32[] constant(0)"),
     "reduce-window(p, z), " + _window("2x2", "2x2") + ", to_apply=add", "f32[4,4]"),
    ("SelectAndScatterProperShapes", ("p = f32[8,16] parameter(0)", "s = f32[4,8] parameter(1)",
                                      "z = f32[] constant(0)"),
     "select-and-scatter(p, s, z), " + _window("2x2", "2x2") + ", select=ge, scatter=add",
     "f32[8,16]"),
    ("SelectScalarPredBetweenArrays", ("c = pred[] parameter(0)", "a = f32[64,48] parameter(1)"),
     "select(c, a, a)", "f32[64,48]"),
    ("ClampMinScalar", ("lo = f32[] parameter(0)", "a = f32[64,48] parameter(1)"),
     "clamp(lo, a, a)", "f32[64,48]"),
    ("ClampOperandMatrix", ("lo = f32[] parameter(0)", "a = f32[64,48] parameter(1)"),
     "clamp(lo, a, lo)", "f32[64,48]"),
    ("Complex", ("a = f32[32] parameter(0)",), "complex(a, a)", "c64[32]"),
    ("VariadicOpTuplify", ("a = s32[] parameter(0)", "b = f32[] parameter(1)"), "tuple(a, b)",
     "(s32[], f32[])"),
    ("InferSliceShapeRank2", ("p = f32[128,64] parameter(0)",),
     "slice(p), slice={[32:64], [0:64]}", "f32[32,64]"),
    ("InferSliceShapeRank2WithStrides", ("p = f32[128,64] parameter(0)",),
     "slice(p), slice={[32:64:2], [0:64:4]}", "f32[16,16]"),
    ("InferSliceShapeRank2WithStridesNotIntegral", ("p = f32[128,64] parameter(0)",),
     "slice(p), slice={[15:20:2], [0:13:4]}", "f32[3,4]"),
    ("InferSliceWithDynamicDimensions", ("p = f32[<=128,<=64] parameter(0)",),
     "slice(p), slice={[32:33], [0:64]}", "f32[1,<=64]"),
    ("InferConstIndexShape", ("t = (f32[], s32[]) parameter(0)",),
     "get-tuple-element(t), index=1", "s32[]"),
    ("ReduceCubeAmongFirstDimension", ("p = f32[2,3,4] parameter(0)", "z = f32[] constant(0)"),
     "reduce(p, z), dimensions={0}, to_apply=add", "f32[3,4]"),
    ("ReduceCubeAmongAllDimensions", ("p = f32[2,3,4] parameter(0)", "z = f32[] constant(0)"),
     "reduce(p, z), dimensions={0,1,2}, to_apply=add", "f32[]"),
    ("DotWithRankHigherThanTwo", ("a = f32[32,32,32] parameter(0)",
                                  "b = f32[32,64] parameter(1)"),
     "dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}", "f32[32,32,64]"),
    ("VectorDotVector", ("a = f32[64] parameter(0)",),
     "dot(a, a), lhs_contracting_dims={0}, rhs_contracting_dims={0}", "f32[]"),
    ("ScalarDotVector", ("a = f32[] parameter(0)", "b = f32[32] parameter(1)"), "dot(a, b)",
     "f32[32]"),
    ("TensorFlowGather", ("p = f32[64,48] parameter(0)", "i = s64[32] parameter(1)"),
     "gather(p, i), offset_dims={0}, collapsed_slice_dims={1}, start_index_map={1}, "
     "index_vector_dim=1, slice_sizes={64,1}", "f32[64,32]"),
    ("TensorFlowGatherV2", ("p = f32[64,48] parameter(0)", "i = s64[32] parameter(1)"),
     "gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
     "index_vector_dim=1, slice_sizes={1,48}", "f32[32,48]"),
    ("TensorFlowGatherBatchingDims", ("p = f32[100,64,5,48] parameter(0)",
                                      "i = s64[5,100,32] parameter(1)"),
     "gather(p, i), offset_dims={3}, collapsed_slice_dims={1}, start_index_map={1}, "
     "index_vector_dim=3, operand_batching_dims={0,2}, start_indices_batching_dims={1,0}, "
     "slice_sizes={1,1,1,8}", "f32[5,100,32,8]"),
    ("TensorFlowGatherNd", ("p = f32[64,48] parameter(0)", "i = s64[10,9,8,7,1] parameter(1)"),
     "gather(p, i), offset_dims={4}, collapsed_slice_dims={0}, start_index_map={0}, "
     "index_vector_dim=4, slice_sizes={1,48}", "f32[10,9,8,7,48]"),
    ("NonDefaultGatherIndicesLeafDim_A", ("p = f32[50,49,48,47,46] parameter(0)",
                                          "i = s64[10,9,5,7,6] parameter(1)"),
     "gather(p, i), offset_dims={4,5,6,7,8}, collapsed_slice_dims={}, "
     "start_index_map={0,1,2,3,4}, index_vector_dim=2, slice_sizes={30,29,28,27,26}",
     "f32[10,9,7,6,30,29,28,27,26]"),
    ("ScalarGatherIndices", ("p = f32[50,49,48,47,46] parameter(0)", "i = s64[] parameter(1)"),
     "gather(p, i), offset_dims={0,1,2,3}, collapsed_slice_dims={0}, start_index_map={0}, "
     "index_vector_dim=0, slice_sizes={1,30,29,28,27}", "f32[30,29,28,27]"),
    ("DynamicGatherEntireDimension", ("p = f32[3,<=2,1] parameter(0)", "i = s64[] parameter(1)"),
     "gather(p, i), offset_dims={0,1}, collapsed_slice_dims={0}, start_index_map={0}, "
     "index_vector_dim=0, slice_sizes={1,2,1}", "f32[<=2,1]"),
    ("InferFftShapeTestFftRanks", ("p = c64[16,8] parameter(0)",),
     "fft(p), fft_type=FFT, fft_length={16,8}", "c64[16,8]"),
    ("RFFT", ("p = f32[16,8] parameter(0)",), "fft(p), fft_type=RFFT, fft_length={16,8}",
     "c64[16,5]"),
    ("IRFFT", ("p = c64[16,5] parameter(0)",), "fft(p), fft_type=IRFFT, fft_length={16,8}",
     "f32[16,8]"),
    ("AllGather", ("p = f32[1,8,4] parameter(0)",),
     "all-gather(p), dimensions={0}, replica_groups={{0,1,2,3,4,5,6,7}}", "f32[8,8,4]"),
    ("TopK", ("p = f32[4,50000] parameter(0)",), "topk(p), k=10, largest=true",
     "(f32[4,10], s32[4,10])"),
]


@pytest.mark.parametrize(("lines", "rhs", "expected"), [f[1:] for f in FACTS],
                         ids=[f[0] for f in FACTS])
def test_infer_shape_gives_what_xla_infers(lines: tuple[str, ...], rhs: str,
                                           expected: str) -> None:
    instr = entry_root(*lines, f"ROOT r = {expected} {rhs}")
    assert str(infer_shape(instr)) == expected
    parse_hlo(module(*lines, f"ROOT r = {expected} {rhs}"))  # and the module validates


# (shape_inference_test.cc case, operand declarations, right-hand side, part of the error)
FAILING_FACTS = [
    ("ConvolveBatchGroupCountUnequalOutputFeature",
     ("x = f32[60,38,17,13] parameter(0)", "k = f32[38,10,4,4] parameter(1)"),
     "convolution(x, k), window={size=4x4 pad=0_2x2_1 rhs_dilate=3x2}, "
     "dim_labels=bf01_io01->bf01, batch_group_count=6",
     "must be a multiple of feature_group_count (1) and batch_group_count (6)"),
    ("SelectAndScatterWrongSourceShape", ("p = f32[8,16] parameter(0)",
                                          "s = f32[4,6] parameter(1)", "z = f32[] constant(0)"),
     "select-and-scatter(p, s, z), window={size=2x2 stride=2x2}, select=ge, scatter=add",
     "must have one element per window position"),
    ("SelectAndScatterWrongSelectShape2", ("p = f32[8,16] parameter(0)",
                                           "s = f32[4,8] parameter(1)", "z = f32[] constant(0)"),
     "select-and-scatter(p, s, z), window={size=2x2 stride=2x2}, select=add, scatter=add",
     "must take 2 parameters and return pred[]"),
    ("SelectBadShapes (predicate shape)", ("c = pred[64] parameter(0)",
                                           "a = f32[64,48] parameter(1)"),
     "select(c, a, a)", "must be a scalar or have the dimensions of"),
    ("SelectBadShapes (s32 predicate)", ("c = s32[] parameter(0)", "a = f32[64,48] parameter(1)"),
     "select(c, a, a)", "must have element type pred"),
    ("ClampOperandScalar", ("a = f32[64,48] parameter(0)", "x = f32[] parameter(1)"),
     "clamp(a, x, a)", "min f32[64,48] must be a scalar or have the shape of the operand"),
    ("ClampMaxMatrix", ("x = f32[] parameter(0)", "a = f32[64,48] parameter(1)"),
     "clamp(x, x, a)", "max f32[64,48] must be a scalar"),
    ("Complex (f16)", ("a = f16[] parameter(0)",), "complex(a, a)", "two f32 or two f64"),
    ("Complex (s32)", ("a = s32[] parameter(0)",), "complex(a, a)", "two f32 or two f64"),
    ("InferOobSliceShapeRank2", ("p = f32[128,64] parameter(0)",),
     "slice(p), slice={[127:129], [0:2]}", "out of bounds"),
    ("InferInvalidStride", ("p = f32[128,64] parameter(0)",),
     "slice(p), slice={[127:128:0], [0:2]}", "stride > 0"),
    ("InferTupleElementShapeOutOfBound", ("t = (f32[], s32[]) parameter(0)",),
     "get-tuple-element(t), index=2", "out of range"),
    ("ErrorOutOfBoundsDimension", ("p = f32[5,3] parameter(0)", "z = f32[] constant(0)"),
     "reduce(p, z), dimensions={3,4}, to_apply=add", "names dimension 3"),
    ("ReduceWithRepeatedReduceDimension", ("p = f32[5,3] parameter(0)",
                                           "z = f32[] constant(0)"),
     "reduce(p, z), dimensions={0,0}, to_apply=add", "repeats a dimension"),
    ("ErrorToApplyArity", ("p = f32[5,3] parameter(0)", "z = f32[] constant(0)"),
     "reduce(p, z), dimensions={0}, to_apply=neg", "takes 1 parameter, but needs 2"),
    ("VectorDotVector (mismatch)", ("a = f32[64] parameter(0)", "b = f32[32] parameter(1)"),
     "dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
     "contracting dimensions of lhs f32[64]"),
    ("InvalidGatherDimNumbers_NonAscendingWindowIndices",
     ("p = f32[50,49,48,47,46] parameter(0)", "i = s64[10,9,8,7,5] parameter(1)"),
     "gather(p, i), offset_dims={4,5,6,8,7}, collapsed_slice_dims={}, "
     "start_index_map={0,1,2,3,4}, index_vector_dim=4, slice_sizes={30,29,28,27,26}",
     "offset_dims={4,5,6,8,7} must be sorted"),
    ("InvalidGatherDimNumbers_WindowIndexOutOfBounds",
     ("p = f32[50,49,48,47,46] parameter(0)", "i = s64[10,9,8,7,5] parameter(1)"),
     "gather(p, i), offset_dims={4,5,99,100,101}, collapsed_slice_dims={}, "
     "start_index_map={0,1,2,3,4}, index_vector_dim=4, slice_sizes={30,29,28,27,26}",
     "names dimension 99, but the output has rank 9"),
    ("InvalidGatherDimNumbers_MismatchingElidedWindowDims",
     ("p = f32[50,49,48,47,46] parameter(0)", "i = s64[10,9,8,7,5] parameter(1)"),
     "gather(p, i), offset_dims={4,5,6,7,8}, collapsed_slice_dims={4}, "
     "start_index_map={0,1,2,3,4}, index_vector_dim=4, slice_sizes={30,29,28,27,26}",
     "each an offset, collapsed or batching dimension"),
    ("FloatingPointGatherIndicesInput", ("p = f32[64,48] parameter(0)",
                                         "i = f32[32] parameter(1)"),
     "gather(p, i), offset_dims={0}, collapsed_slice_dims={1}, start_index_map={1}, "
     "index_vector_dim=1, slice_sizes={64,1}", "must be integral"),
    ("InferFftShapeTestFftTypes", ("p = f32[16,8] parameter(0)",),
     "fft(p), fft_type=FFT, fft_length={16,8}", "needs a complex operand"),
]


@pytest.mark.parametrize(("lines", "rhs", "error"), [f[1:] for f in FAILING_FACTS],
                         ids=[f[0] for f in FAILING_FACTS])
def test_infer_shape_rejects_what_xla_rejects(lines: tuple[str, ...], rhs: str,
                                              error: str) -> None:
    instr = entry_root(*lines, f"ROOT r = f32[] {rhs}")
    with pytest.raises(HloShapeError) as caught:
        infer_shape(instr)
    assert error in str(caught.value)


@pytest.mark.parametrize(("operand", "element_type", "expected"), [
    ("s8[10]", "pred", "pred[10]"),  # BitcastConvertS8ToPred
    ("pred[10,4]", "f32", "f32[10]"),  # BitcastConvertPredToF32
    ("f32[3]", "u8", "u8[3,4]"),
    ("f16[5,2]", "f32", "f32[5]"),
])
def test_bitcast_convert_shape(operand: str, element_type: str, expected: str) -> None:
    shape = parse_shape(operand)
    assert isinstance(shape, Shape)
    assert str(bitcast_convert_shape(shape, element_type)) == expected


@pytest.mark.parametrize("rhs", ["iota(), iota_dimension=0", "reshape(p)", "convert(p)",
                                 "broadcast(p), dimensions={0}", "custom-call(p)",
                                 "all-gather(p), dimensions={0}"])
def test_infer_shape_says_when_the_shape_must_be_written(rhs: str) -> None:
    instr = entry_root("p = f32[4] parameter(0)", f"ROOT r = f32[4] {rhs}")
    with pytest.raises(HloShapeError, match=r"write (it|the shape)"):
        infer_shape(instr)


# --------------------------------------------------------------------------- brute force

@given(st.lists(st.integers(0, 6), min_size=1, max_size=3), st.data())
def test_slice_sizes_are_numpy_slicing(dims: list[int], data) -> None:
    slices = []
    for n in dims:
        start = data.draw(st.integers(0, n))
        limit = data.draw(st.integers(start, n))
        slices.append((start, limit, data.draw(st.integers(1, 4))))
    expected = np.zeros(dims)[tuple(slice(*s) for s in slices)].shape
    text = ", ".join(f"[{a}:{b}:{c}]" for a, b, c in slices)
    instr = entry_root(f"p = f32[{','.join(map(str, dims))}] parameter(0)",
                       f"ROOT s = f32[] slice(p), slice={{{text}}}")
    assert infer_shape(instr) == parse_shape(f"f32[{','.join(map(str, expected))}]")


def padded_length(n: int, low: int, high: int, interior: int) -> int | None:
    """The length of a row of ``n`` elements padded by hand: ``interior`` holes between
    neighbours, then ``low``/``high`` elements added (or removed, if negative) at the ends.
    None if more elements are removed than there are."""
    row: list[int | None] = []
    for i in range(n):
        row += [None] * (interior if i else 0) + [i]
    for amount, at_front in ((low, True), (high, False)):
        if amount >= 0:
            row = [None] * amount + row if at_front else row + [None] * amount
        elif -amount > len(row):
            return None
        else:
            row = row[-amount:] if at_front else row[:amount]
    return len(row)


@given(st.integers(0, 6), st.integers(-4, 4), st.integers(-4, 4), st.integers(0, 3))
def test_pad_sizes_are_padding_by_hand(n: int, low: int, high: int, interior: int) -> None:
    expected = padded_length(n, low, high, interior)
    instr = entry_root(f"p = f32[{n}] parameter(0)", "z = f32[] constant(0)",
                       f"ROOT q = f32[] pad(p, z), padding={low}_{high}_{interior}")
    if expected is None:
        assume(n + (n - 1) * interior * (n > 0) + low + high < 0)  # XLA only sees the total
        with pytest.raises(HloShapeError, match="negative"):
            infer_shape(instr)
    else:
        assert infer_shape(instr) == parse_shape(f"f32[{expected}]")


@given(st.lists(st.integers(1, 4), max_size=3), st.lists(st.integers(1, 4), max_size=3))
def test_reshape_keeps_numpys_element_count(source: list[int], target: list[int]) -> None:
    try:
        np.zeros(source).reshape(target)
        numpy_accepts = True
    except ValueError:
        numpy_accepts = False
    text = module(f"p = f32[{','.join(map(str, source))}] parameter(0)",
                  f"ROOT r = f32[{','.join(map(str, target))}] reshape(p)")
    if numpy_accepts:
        parse_hlo(text)
    else:
        with pytest.raises(HloValidationError, match="elements"):
            parse_hlo(text)


def window_positions(n: int, size: int, stride: int, low: int, high: int,
                     base_dilation: int, window_dilation: int) -> int | None:
    """Count, one by one, the window positions over a row of ``n`` elements dilated by
    ``base_dilation`` and padded by ``low``/``high``: a position is a start ``k * stride``
    whose taps ``start + t * window_dilation`` (t < size) all fall in the padded row. None if
    the padded row has negative length."""
    dilated = 0 if n == 0 else (n - 1) * base_dilation + 1
    length = low + dilated + high
    if length < 0:
        return None
    count = 0
    start = 0
    while all(start + t * window_dilation < length for t in range(size)):
        count += 1
        start += stride
    return count


WINDOW = (st.integers(0, 9), st.integers(1, 4), st.integers(1, 3), st.integers(-2, 3),
          st.integers(-2, 3), st.integers(1, 3), st.integers(1, 3))


@given(*WINDOW)
def test_reduce_window_sizes_are_counted_positions(n, size, stride, low, high, base_dilation,
                                                   window_dilation) -> None:
    expected = window_positions(n, size, stride, low, high, base_dilation, window_dilation)
    window = (f"window={{size={size} stride={stride} pad={low}_{high} lhs_dilate={base_dilation}"
              f" rhs_dilate={window_dilation}}}")
    instr = entry_root(f"p = f32[{n}] parameter(0)", "z = f32[] constant(0)",
                       f"ROOT w = f32[] reduce-window(p, z), {window}, to_apply=add")
    if expected is None:
        with pytest.raises(HloShapeError, match="negative"):
            infer_shape(instr)
    else:
        assert infer_shape(instr) == parse_shape(f"f32[{expected}]")
        assert window_output_size(n, size, stride, low, high, base_dilation,
                                  window_dilation) == expected


@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.tuples(*WINDOW[:5]),
       st.tuples(*WINDOW[:5]))
def test_convolution_spatial_sizes_are_counted_positions(batch, features, out_features,
                                                         dim0, dim1) -> None:
    (n0, k0, s0, l0, h0), (n1, k1, s1, l1, h1) = dim0, dim1
    positions = [window_positions(n0, k0, s0, l0, h0, 1, 1),
                 window_positions(n1, k1, s1, l1, h1, 1, 1)]
    assume(None not in positions)
    window = f"window={{size={k0}x{k1} stride={s0}x{s1} pad={l0}_{h0}x{l1}_{h1}}}"
    instr = entry_root(f"x = f32[{batch},{n0},{n1},{features}] parameter(0)",
                       f"k = f32[{k0},{k1},{features},{out_features}] parameter(1)",
                       f"ROOT c = f32[] convolution(x, k), {window}, dim_labels=b01f_01io->b01f")
    expected = f"f32[{batch},{positions[0]},{positions[1]},{out_features}]"
    assert infer_shape(instr) == parse_shape(expected)


@given(st.lists(st.integers(1, 4), min_size=1, max_size=4).flatmap(
    lambda dims: st.tuples(st.just(dims), st.permutations(range(len(dims))))))
def test_transpose_is_numpys(case) -> None:
    dims, perm = case
    expected = np.zeros(dims).transpose(perm).shape
    instr = entry_root(f"p = f32[{','.join(map(str, dims))}] parameter(0)",
                       f"ROOT t = f32[] transpose(p), dimensions={{{','.join(map(str, perm))}}}")
    assert infer_shape(instr) == parse_shape(f"f32[{','.join(map(str, expected))}]")


@given(st.lists(st.integers(0, 3), min_size=1, max_size=3), st.data())
def test_concatenate_is_numpys(dims: list[int], data) -> None:
    axis = data.draw(st.integers(0, len(dims) - 1))
    sizes = data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=4))
    arrays = [np.zeros(dims[:axis] + [s] + dims[axis + 1:]) for s in sizes]
    expected = np.concatenate(arrays, axis=axis).shape
    lines = [f"p{k} = f32[{','.join(map(str, a.shape))}] parameter({k})"
             for k, a in enumerate(arrays)]
    operands = ", ".join(f"p{k}" for k in range(len(arrays)))
    instr = entry_root(*lines, f"ROOT c = f32[] concatenate({operands}), dimensions={{{axis}}}")
    assert infer_shape(instr) == parse_shape(f"f32[{','.join(map(str, expected))}]")


@given(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2), st.integers(0, 2), st.data())
def test_dot_is_einsum(batch, contracting, lhs_free, rhs_free, data) -> None:
    letters = iter(string.ascii_lowercase)
    sizes = {}
    batch_l = [next(letters) for _ in range(batch)]
    contract_l = [next(letters) for _ in range(contracting)]
    lhs_l = [next(letters) for _ in range(lhs_free)]
    rhs_l = [next(letters) for _ in range(rhs_free)]
    for letter in batch_l + contract_l + lhs_l + rhs_l:
        sizes[letter] = data.draw(st.integers(1, 3))
    lhs_order = data.draw(st.permutations(batch_l + contract_l + lhs_l))
    rhs_order = data.draw(st.permutations(batch_l + contract_l + rhs_l))
    # XLA's output: the batch dimensions (in lhs_batch_dims order), then the free dimensions
    # of lhs, then those of rhs, each in operand order
    out = batch_l + [c for c in lhs_order if c in lhs_l] + [c for c in rhs_order if c in rhs_l]
    spec = f"{''.join(lhs_order)},{''.join(rhs_order)}->{''.join(out)}"
    expected = np.einsum(spec, np.zeros([sizes[c] for c in lhs_order]),
                         np.zeros([sizes[c] for c in rhs_order])).shape

    def positions(order, chosen):
        return "{" + ",".join(str(order.index(c)) for c in chosen) + "}"

    attrs = (f"lhs_batch_dims={positions(lhs_order, batch_l)}, "
             f"rhs_batch_dims={positions(rhs_order, batch_l)}, "
             f"lhs_contracting_dims={positions(lhs_order, contract_l)}, "
             f"rhs_contracting_dims={positions(rhs_order, contract_l)}")
    instr = entry_root(f"a = f32[{','.join(str(sizes[c]) for c in lhs_order)}] parameter(0)",
                       f"b = f32[{','.join(str(sizes[c]) for c in rhs_order)}] parameter(1)",
                       f"ROOT d = f32[] dot(a, b), {attrs}")
    assert infer_shape(instr) == parse_shape(f"f32[{','.join(map(str, expected))}]")


# --------------------------------------------------------------------------- the CLI

def test_cli_reports_an_invalid_module_with_its_place(tmp_path: Path, capsys) -> None:
    path = tmp_path / "bad.hlo"
    path.write_text("HloModule m\n\nENTRY e {\n  p = f32[2,3] parameter(0)\n"
                    "  ROOT t = f32[2,3] transpose(p), dimensions={1,0}\n}\n")
    assert main(["maps", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:line 5, column 3: transpose %t: dimensions={{1,0}} of f32[2,3] give " \
           f"f32[3,2], but the instruction says f32[2,3]" in err
    assert "  ROOT t = f32[2,3] transpose(p), dimensions={1,0}\n  ^" in err
    assert "Traceback" not in err


def test_an_opcode_has_one_shape_rule() -> None:
    """A second rule for an opcode is an error at registration, not a silent replacement of
    the first (which would make the rule that applies depend on import order)."""
    from symidx.hlo.infer.common import _infers

    with pytest.raises(RuntimeError, match="two shape rules for transpose"):
        _infers("transpose")(lambda instr: Shape("f32"))
    module = parse_hlo("ENTRY e {\n  p = f32[2,3] parameter(0)\n"
                       "  ROOT t = f32[3,2] transpose(p), dimensions={1,0}\n}")
    assert str(infer_shape(module.entry.root)) == "f32[3,2]"


def test_conditional_branches_are_found_in_one_place() -> None:
    """``branch_attributes`` names a conditional's branches for the shape rule, the
    verifier's messages and the fusion floor alike (no other module reads the attributes)."""
    from pathlib import Path

    from symidx.hlo import parse_hlo
    from symidx.hlo.facts import branch_attributes

    module = parse_hlo("""HloModule m
t {
  a = f32[2] parameter(0)
  ROOT n = f32[2] negate(a)
}
f {
  b = f32[2] parameter(0)
  ROOT c = f32[2] copy(b)
}
ENTRY e {
  p = pred[] parameter(0)
  x = f32[2] parameter(1)
  ROOT r = f32[2] conditional(p, x, x), true_computation=t, false_computation=f
}""")
    assert branch_attributes(module.entry.root) == ("true_computation", "false_computation")
    assert branch_attributes(module.entry.instruction("x")) == ()
    root = Path(__file__).parent.parent / "symidx"
    readers = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                     if '"true_computation"' in p.read_text(encoding="utf-8")
                     # the parser's lists of attribute kinds and of the attributes it takes
                     and p.name not in ("instructions.py", "attribute_table.py"))
    assert readers == ["hlo/facts.py"]
