"""custom-call, random numbers, dynamic shapes, tokens and the op symidx does not model:
brute-force twins (``reference_hlo.py``) on random instructions, and real instructions from
XLA's tests and a JAX train step."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ops_check import EXAMPLES, assert_map, build, check, shapes, text
from reference_hlo import PASS_THROUGH
from symidx.errors import UnsupportedOpError
from symidx.hlo import parse_hlo
from symidx.ops import input_to_output, opaque_reason, output_to_input


@EXAMPLES
@given(shapes(), st.sampled_from(PASS_THROUGH))
def test_pass_through_custom_calls(dims, target) -> None:
    instr = build([text("f32", dims)],
                  f'{text("f32", dims)} custom-call(p0), custom_call_target="{target}"')
    check(instr)
    assert opaque_reason(instr) is None


@EXAMPLES
@given(shapes(min_rank=1, max_rank=2), st.data())
def test_topk_custom_call(dims, data) -> None:
    k = data.draw(st.integers(0, dims[-1]))
    out = dims[:-1] + (k,)
    instr = build([text("f32", dims)], f"({text('f32', out)}, {text('s32', out)}) "
                                       f'custom-call(p0), custom_call_target="TopK", '
                                       f"called_computations={{lt}}")
    check(instr)
    assert opaque_reason(instr) is None


@EXAMPLES
@given(st.lists(shapes(max_rank=2), min_size=0, max_size=3), st.lists(shapes(max_rank=2),
                                                                      min_size=1, max_size=2))
def test_unknown_custom_call_reads_everything(operands, outputs) -> None:
    out = [text("f32", d) for d in outputs]
    shape = out[0] if len(out) == 1 else "(" + ", ".join(out) + ")"
    args = ", ".join(f"p{k}" for k in range(len(operands)))
    instr = build([text("f32", d) for d in operands],
                  f'{shape} custom-call({args}), custom_call_target="my_kernel"')
    check(instr)
    assert opaque_reason(instr) == ("custom-call my_kernel" if operands else None)


def test_exact_target_with_other_shapes_is_labelled() -> None:
    """A Sharding call whose output differs from its operand is not a pass-through."""
    instr = build(["f32[4]"], 'f32[2,2] custom-call(p0), custom_call_target="Sharding"')
    assert opaque_reason(instr) == "custom-call Sharding"
    ((m,),) = output_to_input(instr)
    assert m.image((0, 0)) == {(0,), (1,), (2,), (3,)}


def test_tuple_operand_is_unsupported_with_the_reason() -> None:
    instr = build(["f32[2]", "f32[3]"], 'f32[2] custom-call(t), custom_call_target="foo"',
                  ["t = (f32[2], f32[3]) tuple(p0, p1)"])
    with pytest.raises(UnsupportedOpError, match="operand 0 of r is a tuple"):
        output_to_input(instr)
    with pytest.raises(UnsupportedOpError, match="tuple"):
        input_to_output(instr, 0)


@EXAMPLES
@given(shapes(), st.sampled_from(["rng_uniform", "rng_normal"]))
def test_rng(dims, distribution) -> None:
    instr = build(["f32[]", "f32[]"], f"{text('f32', dims)} rng(p0, p1), "
                                      f"distribution={distribution}")
    check(instr)
    assert opaque_reason(instr) is None


@EXAMPLES
@given(st.integers(1, 3), shapes(), st.booleans())
def test_rng_bit_generator(state, dims, as_tuple) -> None:
    bits = text("u32", dims)
    shape = f"({text('u64', (state,))}, {bits})" if as_tuple else bits
    instr = build([text("u64", (state,))], f"{shape} rng-bit-generator(p0), "
                                           f"algorithm=rng_default")
    check(instr)
    assert opaque_reason(instr) is None


def test_no_reads() -> None:
    check(build([], "u64[2] rng-get-and-update-state(), delta=1"))
    check(build([], "token[] after-all()"))
    check(build(["f32[2]"], "token[] after-all(t0, t1)",
                ["t0 = token[] after-all()", "t1 = token[] after-all()"]))
    check(build(["f32[4,2]"], "s32[] get-dimension-size(p0), dimensions={1}"))


@EXAMPLES
@given(shapes(min_rank=1), st.data())
def test_set_dimension_size(dims, data) -> None:
    axis = data.draw(st.integers(0, len(dims) - 1))
    out = ",".join(f"<={n}" if i == axis else str(n) for i, n in enumerate(dims))
    check(build([text("f32", dims), "s32[]"], f"f32[{out}] set-dimension-size(p0, p1), "
                                              f"dimensions={{{axis}}}"))


@EXAMPLES
@given(st.data())
def test_dynamic_reshape(data) -> None:
    """A static operand reshaped to bounded dynamic dims: exact when only the most major
    output dim is dynamic, a labelled over-approximation otherwise."""
    src = data.draw(shapes(min_rank=1, max_rank=2))
    total = 1
    for n in src:
        total *= n
    minor = data.draw(st.sampled_from([d for d in range(1, total + 1) if total % d == 0]))
    dst = (total // minor, minor)
    dynamic = [data.draw(st.booleans()) for _ in dst]
    out = ",".join(f"<={n}" if d else str(n) for n, d in zip(dst, dynamic, strict=True))
    instr = build([text("f32", src), "s32[]", "s32[]"],
                  f"f32[{out}] dynamic-reshape(p0, p1, p2)")
    opaque = dynamic[1]
    check(instr, over=[0] if opaque else [])
    assert (opaque_reason(instr) is not None) == opaque


@EXAMPLES
@given(shapes(max_rank=2), shapes(max_rank=2))
def test_ops_not_modelled_read_everything(src, dst) -> None:
    instr = build([text("f32", src)], f"{text('f32', dst)} shuffle(p0)")
    assert opaque_reason(instr) is not None
    ((m,),) = output_to_input(instr)
    assert m.num_dims == len(dst) and m.num_results == len(src)
    assert m.domain_size() == _size(dst) * _size(src)


def _size(dims) -> int:
    total = 1
    for n in dims:
        total *= n
    return total


# --- real instructions --------------------------------------------------------------------

REAL = """HloModule m
cmp {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GT
}
ENTRY e {
  %top_k.0 = bf16[4096,8]{1,0} parameter(0)
  %divide.1043 = bf16[16,2048,8,128]{3,2,1,0} parameter(1)
  %dot.9 = bf16[1,8192,14336]{2,1,0} parameter(2)
  %Arg_0 = f32[6] parameter(3)
  %Arg_1 = s32[] parameter(4)
  %Arg_2 = s32[] parameter(5)
  %key.1 = u32[2] parameter(6)
  %q = bf16[2,4,8]{2,1,0} parameter(7)
  %top_k.1 = (bf16[4096,2]{1,0}, s32[4096,2]{1,0}) custom-call(%top_k.0), custom_call_target="TopK", called_computations={%cmp}
  %custom-call.1046 = bf16[16,2048,8,128]{3,2,1,0} custom-call(bf16[16,2048,8,128]{3,2,1,0} %divide.1043), custom_call_target="Sharding", sharding={devices=[8,1,1,1]<=[8]}
  %closed_call.26 = bf16[1,8192,14336]{2,1,0} custom-call(%dot.9), custom_call_target="MoveToHost"
  %custom-call.1 = u32[2]{0} custom-call(%key.1), custom_call_target="Sharding", sharding={replicated}, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@empty_mesh, [{}]>]>"}
  %attn = bf16[2,4,8]{2,1,0} custom-call(%q, %q), custom_call_target="te_fused_attn_forward_ffi"
  %one = f32[<=6] dynamic-reshape(%Arg_0, %Arg_1)
  ROOT %two = f32[<=2,<=3] dynamic-reshape(%Arg_0, %Arg_1, %Arg_2)
}
"""  # noqa: E501


def _instr(name: str):
    return parse_hlo(REAL).entry.instruction(name)


def test_real_custom_calls() -> None:
    ((m,),) = output_to_input(_instr("top_k.1"), 1)
    assert_map(m, "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 4095], d1 in [0, 1], "
                  "s0 in [0, 7]")
    for name in ("custom-call.1046", "closed_call.26", "custom-call.1"):
        ((m,),) = output_to_input(_instr(name))
        assert m.num_ranges == 0 and m.results == tuple(m.dim_vars)
        assert opaque_reason(_instr(name)) is None
    attention = _instr("attn")
    assert opaque_reason(attention) == "custom-call te_fused_attn_forward_ffi"
    q, k = output_to_input(attention)
    assert_map(q[0], "(d0, d1, d2)[s0, s1, s2] -> (s0, s1, s2), domain: d0 in [0, 1], "
                     "d1 in [0, 3], d2 in [0, 7], s0 in [0, 1], s1 in [0, 3], s2 in [0, 7]")


def test_real_dynamic_reshapes() -> None:
    ((m,), (size,)) = output_to_input(_instr("one"))
    assert_map(m, "(d0) -> (d0), domain: d0 in [0, 5]")
    assert_map(size, "(d0) -> (), domain: d0 in [0, 5]")
    assert opaque_reason(_instr("one")) is None
    assert opaque_reason(_instr("two")) is not None


MORE = """HloModule m
ENTRY e {
  %Arg_0.1 = f32[] parameter(0)
  %Arg_1.2 = f32[] parameter(1)
  %state = u64[3] parameter(2)
  %x = f32[4,2] parameter(3)
  %y = f32[4,4] parameter(4)
  %n = s32[] parameter(5)
  %f = f32[4,3] parameter(6)
  %bits = u32[4,3] parameter(7)
  %rng.4 = f32[2,3,5] rng(f32[] %Arg_0.1, f32[] %Arg_1.2), distribution=rng_normal
  %rng-bit-generator.2 = (u64[3], u32[2,2]) rng-bit-generator(u64[3] %state), algorithm=rng_philox
  %get-dimension-size.2 = s32[] get-dimension-size(f32[4,2] %x), dimensions={1}
  %set-dimension-size.2 = f32[4,<=4] set-dimension-size(f32[4,4] %y, s32[] %n), dimensions={1}
  ROOT %stochastic-convert.0 = s8[4,3] stochastic-convert(f32[4,3] %f, u32[4,3] %bits)
}
"""  # noqa: E501


def test_real_random_and_dynamic_shapes() -> None:
    def maps(name: str, output: int = 0):
        return output_to_input(parse_hlo(MORE).entry.instruction(name), output)

    low, high = maps("rng.4")
    assert_map(low[0], "(d0, d1, d2) -> (), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 4]")
    for output, dims in ((0, "d0 in [0, 2]"), (1, "d0 in [0, 1], d1 in [0, 1]")):
        ((m,),) = maps("rng-bit-generator.2", output)
        variables = "(d0)" if output == 0 else "(d0, d1)"
        assert_map(m, f"{variables}[s0] -> (s0), domain: {dims}, s0 in [0, 2]")
    assert maps("get-dimension-size.2") == [[]]
    data, size = maps("set-dimension-size.2")
    assert_map(data[0], "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 3]")
    assert_map(size[0], "(d0, d1) -> (), domain: d0 in [0, 3], d1 in [0, 3]")
    for group in maps("stochastic-convert.0"):
        assert_map(group[0], "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 2]")


def test_real_ragged_all_to_all() -> None:
    """XLA's import test (its /*index=5*/ comment dropped)."""
    instr = parse_hlo("""HloModule m
ENTRY e {
  %Arg_0.1 = f32[6] parameter(0)
  %Arg_1.2 = f32[6] parameter(1)
  %Arg_2.3 = s32[3] parameter(2)
  %Arg_3.4 = s32[3] parameter(3)
  %Arg_4.5 = s32[3] parameter(4)
  %Arg_5.6 = s32[3] parameter(5)
  ROOT %custom-call.7 = f32[6] ragged-all-to-all(f32[6] %Arg_0.1, f32[6] %Arg_1.2, s32[3] %Arg_2.3, s32[3] %Arg_3.4, s32[3] %Arg_4.5, s32[3] %Arg_5.6), channel_id=1, replica_groups={{0,1,2}}
}""").entry.root  # noqa: E501
    source, output, *sizes = output_to_input(instr)
    assert_map(source[0], "(d0)[s0] -> (s0), domain: d0 in [0, 5], s0 in [0, 5]")
    assert_map(output[0], "(d0) -> (d0), domain: d0 in [0, 5]")
    assert [m.image((2,)) for (m,) in sizes] == [{(0,), (1,), (2,)}] * 4
    assert opaque_reason(instr) is not None
