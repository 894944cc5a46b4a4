"""topk, fft, batch norm, cholesky, triangular-solve, ragged-dot, sort with several
operands: brute-force twins (``reference_hlo.py``) on random instructions, and real
instructions from XLA's tests."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ops_check import EXAMPLES, assert_map, build, check, lst, shapes, text
from symidx.hlo import parse_hlo
from symidx.ops import opaque_reason, output_to_input


@EXAMPLES
@given(shapes(min_rank=1), st.data())
def test_topk(dims, data) -> None:
    k = data.draw(st.integers(0, dims[-1]))
    out = text("f32", dims[:-1] + (k,))
    shape = f"({out}, {text('s32', dims[:-1] + (k,))})"
    check(build([text("f32", dims)], f"{shape} topk(p0), k={k}, largest=true"))


@EXAMPLES
@given(st.data())
def test_sort_of_several_operands(data) -> None:
    dims = data.draw(shapes(min_rank=1))
    axis = data.draw(st.integers(0, len(dims) - 1))
    count = data.draw(st.integers(2, 3))
    shape = "(" + ", ".join([text("f32", dims)] * count) + ")"
    args = ", ".join(f"p{k}" for k in range(count))
    comparator = "lt2" if count == 2 else "lt3"
    check(build([text("f32", dims)] * count,
                f"{shape} sort({args}), dimensions={{{axis}}}, to_apply={comparator}"))


@EXAMPLES
@given(st.data())
def test_fft(data) -> None:
    kind = data.draw(st.sampled_from(["FFT", "IFFT", "RFFT", "IRFFT"]))
    batch = data.draw(shapes(max_rank=2))
    lengths = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=2))
    half = tuple(lengths[:-1]) + (lengths[-1] // 2 + 1,)
    src, dst = {"FFT": (lengths, lengths), "IFFT": (lengths, lengths),
                "RFFT": (lengths, half), "IRFFT": (half, lengths)}[kind]
    types = {"RFFT": ("f32", "c64"), "IRFFT": ("c64", "f32")}.get(kind, ("c64", "c64"))
    root = (f"{text(types[1], batch + tuple(dst))} fft(p0), fft_type={kind}, "
            f"fft_length={lst(lengths)}")
    check(build([text(types[0], batch + tuple(src))], root))


@EXAMPLES
@given(shapes(min_rank=1), st.data())
def test_batch_norm(dims, data) -> None:
    f = data.draw(st.integers(0, len(dims) - 1))
    x, v = text("f32", dims), text("f32", (dims[f],))
    attrs = f"epsilon=0.001, feature_index={f}"
    check(build([x, v, v], f"({x}, {v}, {v}) batch-norm-training(p0, p1, p2), {attrs}"))
    check(build([x, v, v, v, v], f"{x} batch-norm-inference(p0, p1, p2, p3, p4), {attrs}"))
    check(build([x, v, v, v, x], f"({x}, {v}, {v}) batch-norm-grad(p0, p1, p2, p3, p4), "
                                 f"{attrs}"))


@EXAMPLES
@given(shapes(max_rank=1), st.integers(1, 4), st.booleans())
def test_cholesky(batch, n, lower) -> None:
    dims = batch + (n, n)
    instr = build([text("f32", dims)],
                  f"{text('f32', dims)} cholesky(p0), lower={str(lower).lower()}")
    check(instr)  # reads: a NaN anywhere in the triangle read makes the result undefined
    check(instr, assume_finite=True)  # the recurrence, for a positive-definite operand
    assert opaque_reason(instr) is not None  # the other triangle is implementation-defined


@settings(max_examples=150)
@given(shapes(max_rank=1), st.integers(1, 4), st.integers(1, 3), st.data())
def test_triangular_solve(batch, m, n, data) -> None:
    left, lower, unit = (data.draw(st.booleans()) for _ in range(3))
    transpose = data.draw(st.sampled_from(["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"]))
    k = m if left else n
    a, b = text("f32", batch + (k, k)), text("f32", batch + (m, n))
    flags = {"left_side": left, "lower": lower, "unit_diagonal": unit}
    attrs = ", ".join(f"{key}={str(v).lower()}" for key, v in flags.items())
    instr = build([a, b], f"{b} triangular-solve(p0, p1), {attrs}, transpose_a={transpose}")
    check(instr)
    assert opaque_reason(instr) is None


@st.composite
def ragged_dot_case(draw):
    """One of the three modes, with group sizes that may run past the ragged dim."""
    mode = draw(st.sampled_from([1, 2, 3]))
    groups = draw(st.integers(1, 3))
    b, m, k, n = (draw(st.integers(1, 3)) for _ in range(4))
    nb = draw(st.integers(0, 1))
    batch = [b] * nb
    lhs = batch + [m, k]
    lhs_batch, lhs_contracting = list(range(nb)), [nb + 1]
    if mode == 3:
        lhs, lhs_batch, lhs_contracting = [b, m, k], [0], [2]
        rhs, rhs_batch, rhs_contracting, group = [b, k, n], [0], [1], []
        ragged, out = 0, [b, m, n]
        sizes = [groups]
    elif mode == 1:
        rhs = [groups] + batch + [k, n]
        rhs_batch, rhs_contracting, group = list(range(1, nb + 1)), [nb + 1], [0]
        ragged, out = nb, batch + [m, n]
        sizes = batch + [groups]
    else:
        rhs = batch + [k, n]
        rhs_batch, rhs_contracting, group = list(range(nb)), [nb], []
        ragged, out = nb + 1, [groups] + batch + [m, n]
        sizes = batch + [groups]
    values = np.array(draw(st.lists(st.integers(0, 3), min_size=int(np.prod(sizes)),
                                    max_size=int(np.prod(sizes)))),
                      dtype=np.int64).reshape(sizes)
    attrs = (f"lhs_batch_dims={lst(lhs_batch)}, rhs_batch_dims={lst(rhs_batch)}, "
             f"lhs_contracting_dims={lst(lhs_contracting)}, "
             f"rhs_contracting_dims={lst(rhs_contracting)}, lhs_ragged_dims={{{ragged}}}")
    if group:
        attrs += f", rhs_group_dims={lst(group)}"
    params = [text("f32", lhs), text("f32", rhs), text("s64", sizes)]
    return params, f"{text('f32', out)} ragged-dot(p0, p1, p2), {attrs}", {2: values}


@settings(max_examples=150)
@given(ragged_dot_case())
def test_ragged_dot(case) -> None:
    params, root, values = case
    instr = build(params, root)
    check(instr, values, over=[0, 1, 2])
    assert opaque_reason(instr) is not None


# --- real instructions ---------------------------------------------------------------------

REAL = """HloModule m
ENTRY e {
  %x = bf16[1,16] parameter(0)
  %Arg_0.1 = f32[19,11,5] parameter(1)
  %Arg_1.2 = f32[3,5,7] parameter(2)
  %Arg_2.3 = s64[19,3] parameter(3)
  %input = f32[2,2,2,2] parameter(4)
  %scale = f32[2] parameter(5)
  %offset = f32[2] parameter(6)
  %a = f32[4,4] parameter(7)
  %b = f32[4,3] parameter(8)
  %top_k.3 = (bf16[1,10]{1,0}, s32[1,10]{1,0}) topk(%x), k=10, largest=true, is_stable=true
  %ragged-dot.4 = f32[19,11,7] ragged-dot(f32[19,11,5] %Arg_0.1, f32[3,5,7] %Arg_1.2, s64[19,3] %Arg_2.3), lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}
  %batch-norm-train = (f32[2,2,2,2], f32[2], f32[2]) batch-norm-training(f32[2,2,2,2] %input, f32[2] %scale, f32[2] %offset), epsilon=0.001, feature_index=1
  %triangular-solve.3 = f32[4,3] triangular-solve(f32[4,4] %a, f32[4,3] %b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE, unit_diagonal=true
  %b2 = f32[3,9] parameter(9)
  ROOT %fft.2 = c64[3,5]{1,0} fft(f32[3,9] %b2), fft_type=RFFT, fft_length={9}
}
"""  # noqa: E501


def _instr(name: str):
    return parse_hlo(REAL).entry.instruction(name)


def test_real_topk() -> None:
    for output in (0, 1):
        ((m,),) = output_to_input(_instr("top_k.3"), output)
        assert_map(m, "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 0], d1 in [0, 9], "
                      "s0 in [0, 15]")


def test_real_ragged_dot() -> None:
    """Mode 1: output row (d0, d1) uses the rhs of the group holding d1, any of the 3."""
    lhs, rhs, sizes = output_to_input(_instr("ragged-dot.4"))
    assert_map(lhs[0], "(d0, d1, d2)[s0] -> (d0, d1, s0), domain: d0 in [0, 18], "
                       "d1 in [0, 10], d2 in [0, 6], s0 in [0, 4]")
    assert_map(rhs[0], "(d0, d1, d2)[s0, s1] -> (s1, s0, d2), domain: d0 in [0, 18], "
                       "d1 in [0, 10], d2 in [0, 6], s0 in [0, 4], s1 in [0, 2]")
    assert opaque_reason(_instr("ragged-dot.4")) is not None


def test_real_batch_norm_training() -> None:
    """The output reads the whole feature slice; the batch mean too, but not scale."""
    instr = _instr("batch-norm-train")
    x, scale, offset = output_to_input(instr, 0)
    assert_map(x[0], "(d0, d1, d2, d3)[s0, s1, s2] -> (s0, d1, s1, s2), domain: "
                     "d0 in [0, 1], d1 in [0, 1], d2 in [0, 1], d3 in [0, 1], s0 in [0, 1], "
                     "s1 in [0, 1], s2 in [0, 1]")
    assert_map(scale[0], "(d0, d1, d2, d3) -> (d1), domain: d0 in [0, 1], d1 in [0, 1], "
                         "d2 in [0, 1], d3 in [0, 1]")
    x, scale, offset = output_to_input(instr, 1)
    assert_map(x[0], "(d0)[s0, s1, s2] -> (s0, d0, s1, s2), domain: d0 in [0, 1], "
                     "s0 in [0, 1], s1 in [0, 1], s2 in [0, 1]")
    assert scale == [] and offset == []


def test_real_triangular_solve() -> None:
    """Forward substitution with a unit diagonal: x[i][j] reads b[0..i][j] and the strict
    lower triangle of a up to row i."""
    a, b = output_to_input(_instr("triangular-solve.3"))
    assert len(a) == 1  # no diagonal map
    assert a[0].image((2, 1)) == {(1, 0), (2, 0), (2, 1)}
    assert b[0].image((2, 1)) == {(0, 1), (1, 1), (2, 1)}


def test_real_fft() -> None:
    ((m,),) = output_to_input(_instr("fft.2"))
    assert_map(m, "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 2], d1 in [0, 4], "
                  "s0 in [0, 8]")


def test_real_cholesky_and_batch_norm_grad() -> None:
    module = parse_hlo("""HloModule m
ENTRY e {
  %a = f32[1,291,291] parameter(0)
  %input = f32[2,2,2,2] parameter(1)
  %scale = f32[2] parameter(2)
  %mean = f32[2] parameter(3)
  %variance = f32[2] parameter(4)
  %grad_output = f32[2,2,2,2] parameter(5)
  %out = f32[1,291,291] cholesky(f32[1,291,291] %a), lower=true
  ROOT %batch-norm-grad = (f32[2,2,2,2], f32[2], f32[2]) batch-norm-grad(f32[2,2,2,2] %input, f32[2] %scale, f32[2] %mean, f32[2] %variance, f32[2,2,2,2] %grad_output), epsilon=0.001, feature_index=1
}""")  # noqa: E501
    out = module.entry.instruction("out")
    (maps,) = output_to_input(out)  # reads: the whole lower triangle, everywhere
    assert len(set().union(*(m.image((0, 3, 1)) for m in maps))) == 291 * 292 // 2
    (maps,) = output_to_input(out, assume_finite=True)
    # L[3][1] = (a[3][1] - L[3][0] L[1][0]) / L[1][1]
    assert set().union(*(m.image((0, 3, 1)) for m in maps)) == {
        (0, 0, 0), (0, 1, 0), (0, 1, 1), (0, 3, 0), (0, 3, 1)}
    # the upper triangle is implementation-defined: any element of the lower triangle
    assert len(set().union(*(m.image((0, 1, 3)) for m in maps))) == 291 * 292 // 2
    grad = module.entry.root
    *others, dy = output_to_input(grad, 2)  # grad_offset = sum of dy over the feature
    assert others == [[], [], [], []]
    assert_map(dy[0], "(d0)[s0, s1, s2] -> (s0, d0, s1, s2), domain: d0 in [0, 1], "
                      "s0 in [0, 1], s1 in [0, 1], s2 in [0, 1]")
