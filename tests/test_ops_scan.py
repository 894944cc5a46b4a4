"""``scan``: brute-force twins (``reference_hlo._scan`` runs the loop step by step) on
hand-written and random bodies, hand-derived maps for the classic shapes of scan, the
labelled over-approximation where a body reads part of a per-step array, and bad scans."""

from __future__ import annotations

import pytest
from hlo_text import scalar_computation
from hypothesis import given
from hypothesis import strategies as st

from ops_check import (
    EXAMPLES,
    assert_map,
    check,
    input_to_output,
    opaque_reason,
    output_to_input,
)
from symidx.errors import HloShapeError, HloValidationError
from symidx.fusion.scan import Progression, progressions
from symidx.hlo import HloInstruction, parse_hlo
from symidx.ops import HANDLED_BY_FUSION

SUM = scalar_computation("sum", "add")


def scan_module(body: str, params: list[str], root: str, validate: bool = True
                ) -> HloInstruction:
    """The root ``scan`` of a module with ``body`` (named ``body``) and entry parameters
    ``p0, p1, ..`` of the shapes ``params``."""
    lines = [f"  p{k} = {shape} parameter({k})" for k, shape in enumerate(params)]
    text = "HloModule m\n" + SUM + body + "ENTRY e {\n" + "\n".join(lines) \
        + f"\n  ROOT r = {root}\n}}\n"
    return parse_hlo(text, validate=validate).entry.root


def scalar_body(params: int, lines: list[str], root: str) -> str:
    decl = [f"  q{k} = f32[] parameter({k})" for k in range(params)]
    return "body {\n" + "\n".join(decl + [f"  {line}" for line in lines]) \
        + f"\n  ROOT t = {root}\n}}\n"


# --- the classic bodies, by hand ------------------------------------------------------------
IDENTITY = scalar_body(2, [], "(f32[], f32[]) tuple(q0, q1)")
CUMSUM = scalar_body(2, ["s = f32[] add(q0, q1)"], "(f32[], f32[]) tuple(s, s)")
READS_CARRY = scalar_body(2, ["s = f32[] add(q0, q1)"], "(f32[], f32[]) tuple(q1, s)")


def test_identity_body_matches_xla_where_xla_is_exact() -> None:
    """XLA's ScanOp case: output 0 reads input 0 at its own position (XLA: (d0) -> (d0));
    the body's output is its input slice alone, so the init is read nowhere (XLA says
    (d0) -> (), an over-approximation), and the final carry is the init."""
    scan = scan_module(IDENTITY, ["f32[10]", "f32[]"],
                       "(f32[10], f32[]) scan(p0, p1), dimensions={0}, num_carries=1, "
                       "to_apply=body")
    assert opaque_reason(scan) is None
    (x,), (init,) = output_to_input(scan, 0)
    assert_map(x, "(d0) -> (d0), domain: d0 in [0, 9]")
    assert init.is_known_empty
    (x,), (init,) = output_to_input(scan, 1)
    assert x.is_known_empty
    assert_map(init, "() -> ()")
    check(scan)


@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_sum(reverse: bool) -> None:
    """out[d] = init + x[0] + .. + x[d] (reversed: x[d] + .. + x[9])."""
    flag = ", is_reverse=true" if reverse else ""
    scan = scan_module(CUMSUM, ["f32[10]", "f32[]"],
                       f"(f32[10], f32[]) scan(p0, p1), dimensions={{0}}, num_carries=1, "
                       f"to_apply=body{flag}")
    (x,), (init,) = output_to_input(scan, 0)
    if reverse:
        assert_map(x, "(d0)[s0] -> (s0), domain: d0 in [0, 9], s0 in [0, 9], "
                      "s0 - d0 in [0, 9]")
    else:
        assert_map(x, "(d0)[s0] -> (s0), domain: d0 in [0, 9], s0 in [0, 9], "
                      "d0 - s0 in [0, 9]")
    assert_map(init, "(d0) -> (), domain: d0 in [0, 9]")
    (x,), (init,) = output_to_input(scan, 1)
    assert_map(x, "()[s0] -> (s0), domain: s0 in [0, 9]")
    assert_map(init, "() -> ()")
    check(scan)


def test_output_reading_the_carry_reads_strictly_earlier_steps() -> None:
    """out[d] is the carry before step d: init + x[0] + .. + x[d - 1]."""
    scan = scan_module(READS_CARRY, ["f32[10]", "f32[]"],
                       "(f32[10], f32[]) scan(p0, p1), dimensions={0}, num_carries=1, "
                       "to_apply=body")
    (x,), (init,) = output_to_input(scan, 0)
    assert_map(x, "(d0)[s0] -> (s0), domain: d0 in [0, 9], s0 in [0, 9], d0 - s0 in [1, 9]")
    assert_map(init, "(d0) -> (), domain: d0 in [0, 9]")
    (out,), _ = input_to_output(scan, 0)
    assert_map(out, "(d0)[s0] -> (s0), domain: d0 in [0, 9], s0 in [0, 9], s0 - d0 in [1, 9]")
    check(scan)


def test_two_carries_delay_the_reads() -> None:
    """a' = b, b' = b + x, out = a: out[d] reads x[0..d-2], init a at d = 0 only, init b
    from d = 1."""
    body = scalar_body(3, ["s = f32[] add(q0, q2)"], "(f32[], f32[], f32[]) tuple(q1, q2, s)")
    scan = scan_module(body, ["f32[10]", "f32[]", "f32[]"],
                       "(f32[10], f32[], f32[]) scan(p0, p1, p2), dimensions={0}, "
                       "num_carries=2, to_apply=body")
    (x,), (a,), (b,) = output_to_input(scan, 0)
    assert_map(x, "(d0)[s0] -> (s0), domain: d0 in [0, 9], s0 in [0, 9], d0 - s0 in [2, 9]")
    assert_map(a, "(d0) -> (), domain: d0 in [0, 0]")
    assert_map(b, "(d0) -> (), domain: d0 in [1, 9]")
    (x,), (a,), (b,) = output_to_input(scan, 1)  # final a: the b before the last step
    assert_map(x, "()[s0] -> (s0), domain: s0 in [0, 8]")
    assert a.is_known_empty
    assert_map(b, "() -> ()")
    check(scan)


def test_swapping_carries_read_every_other_step() -> None:
    """a' = b, b' = a + x, out = a: the paths through the carries have a parity."""
    body = scalar_body(3, ["s = f32[] add(q0, q1)"], "(f32[], f32[], f32[]) tuple(q1, q2, s)")
    scan = scan_module(body, ["f32[7]", "f32[]", "f32[]"],
                       "(f32[7], f32[], f32[]) scan(p0, p1, p2), dimensions={0}, "
                       "num_carries=2, to_apply=body")
    assert opaque_reason(scan) is None
    (x,), (a,), (b,) = output_to_input(scan, 0)
    # out[d] = a_d; a_d = b_{d-1} = a_{d-2} + x[d-2]: x[d-2], x[d-4], ..; init a at even d
    assert_map(x, "(d0)[s0] -> (s0), domain: d0 in [0, 6], s0 in [0, 6], d0 - s0 in [2, 6], "
                  "(d0 - s0) mod 2 in [0, 0]")
    assert_map(a, "(d0) -> (), domain: d0 in [0, 6], d0 mod 2 in [0, 0]")
    assert_map(b, "(d0) -> (), domain: d0 in [1, 5], (d0 - 1) mod 2 in [0, 0]")
    check(scan)
    check(scan_module(body, ["f32[7]", "f32[]", "f32[]"],
                      "(f32[7], f32[], f32[]) scan(p0, p1, p2), dimensions={0}, "
                      "num_carries=2, is_reverse=true, to_apply=body"))


def test_two_inputs_and_a_single_result() -> None:
    """No carries, one output: out[d] = x[d] * y[d]; the scan's result is not a tuple."""
    body = "body {\n  q0 = f32[3] parameter(0)\n  q1 = f32[3] parameter(1)\n" \
        "  ROOT t = f32[3] multiply(q0, q1)\n}\n"
    scan = scan_module(body, ["f32[3,5]", "f32[3,5]"],
                       "f32[3,5] scan(p0, p1), dimensions={1}, num_carries=0, to_apply=body")
    (x,), (y,) = output_to_input(scan, 0)
    assert_map(x, "(d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 4]")
    assert_map(y, "(d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 4]")
    check(scan)


def test_per_step_vectors_read_whole_or_same() -> None:
    """A per-step vector carry: h' = h + x (same index), out = broadcast(sum(h)) (all)."""
    body = """body {
  x = f32[4] parameter(0)
  h = f32[4] parameter(1)
  z = f32[] constant(0)
  total = f32[] reduce(h, z), dimensions={0}, to_apply=sum
  out = f32[4] broadcast(total), dimensions={}
  next = f32[4] add(h, x)
  ROOT t = (f32[4], f32[4]) tuple(out, next)
}
"""
    scan = scan_module(body, ["f32[4,5]", "f32[4]"],
                       "(f32[4,5], f32[4]) scan(p0, p1), dimensions={1}, num_carries=1, "
                       "to_apply=body")
    assert opaque_reason(scan) is None
    (x,), (h,) = output_to_input(scan, 0)
    assert_map(x, "(d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 3], d1 in [0, 4], "
                  "s0 in [0, 3], s1 in [0, 4], d1 - s1 in [1, 4]")
    assert_map(h, "(d0, d1)[s0] -> (s0), domain: d0 in [0, 3], d1 in [0, 4], s0 in [0, 3]")
    (x,), (h,) = output_to_input(scan, 1)
    assert_map(x, "(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 4]")
    assert_map(h, "(d0) -> (d0), domain: d0 in [0, 3]")
    check(scan)


def test_a_body_reading_part_of_a_step_is_a_labelled_over_approximation() -> None:
    body = """body {
  x = f32[4] parameter(0)
  h = f32[4] parameter(1)
  r = f32[4] reverse(x), dimensions={0}
  next = f32[4] add(h, r)
  ROOT t = (f32[4], f32[4]) tuple(r, next)
}
"""
    scan = scan_module(body, ["f32[3,4]", "f32[4]"],
                       "(f32[3,4], f32[4]) scan(p0, p1), dimensions={0}, num_carries=1, "
                       "to_apply=body")
    reason = opaque_reason(scan)
    assert reason is not None and reason.startswith("scan:") and "parameter 0" in reason
    check(scan, over=[0, 1])


# --- random bodies --------------------------------------------------------------------------
@st.composite
def random_scans(draw) -> HloInstruction:
    """A scan whose body results each add a random choice of its parameters, each read at
    the same index or (per-step vectors) summed whole."""
    n_in, carries, n_out = (draw(st.integers(lo, 2)) for lo in (0, 0, 0))
    if n_in + n_out + carries == 0 or (n_in == 0 and n_out == 0):
        n_in = 1
    step = draw(st.sampled_from([(), (2,)]))
    axis = draw(st.integers(0, len(step)))
    length = draw(st.integers(1, 5))
    shape = "f32[" + ",".join(map(str, step)) + "]"
    full = list(step)
    full.insert(axis, length)
    full_shape = "f32[" + ",".join(map(str, full)) + "]"
    params = n_in + carries
    lines = [f"  q{k} = {shape} parameter({k})" for k in range(params)]
    lines.append("  zero = f32[] constant(0)")
    results = []
    for r in range(n_out + carries):
        chosen = draw(st.lists(st.integers(0, params - 1), max_size=3, unique=True)) \
            if params else []
        terms = []
        for q in chosen:
            if step and draw(st.booleans()):
                lines.append(f"  sum{r}_{q} = f32[] reduce(q{q}, zero), dimensions={{0}}, "
                             f"to_apply=sum")
                lines.append(f"  all{r}_{q} = {shape} broadcast(sum{r}_{q}), dimensions={{}}")
                terms.append(f"all{r}_{q}")
            else:
                terms.append(f"q{q}")
        if not terms:
            lines.append(f"  c{r} = {shape} broadcast(zero), dimensions={{}}")
            terms.append(f"c{r}")
        value = terms[0]
        for i, term in enumerate(terms[1:]):
            lines.append(f"  add{r}_{i} = {shape} add({value}, {term})")
            value = f"add{r}_{i}"
        results.append(value)
    out_shapes = [full_shape] * n_out + [shape] * carries
    if len(results) == 1:
        root_line = f"  ROOT t = {shape} copy({results[0]})"
        scan_shape = out_shapes[0]
    else:
        root_line = f"  ROOT t = ({', '.join([shape] * len(results))}) tuple({', '.join(results)})"
        scan_shape = f"({', '.join(out_shapes)})"
    body = "body {\n" + "\n".join(lines + [root_line]) + "\n}\n"
    operands = [full_shape] * n_in + [shape] * carries
    reverse = ", is_reverse=true" if draw(st.booleans()) else ""
    args = ", ".join(f"p{k}" for k in range(len(operands)))
    return scan_module(body, operands, f"{scan_shape} scan({args}), dimensions={{{axis}}}, "
                                       f"num_carries={carries}, to_apply=body{reverse}")


@EXAMPLES
@given(random_scans())
def test_random_scans_are_exact(scan) -> None:
    assert opaque_reason(scan) is None
    check(scan)


# --- progressions, parsing, bad scans -------------------------------------------------------
def test_progressions() -> None:
    assert progressions([]) == []
    assert progressions([1, 2, 3, 4]) == [Progression(1, 4)]
    assert progressions([0, 2, 4, 6]) == [Progression(0, 6, 2)]
    assert progressions([1, 3, 4, 5]) == [Progression(1, 1), Progression(3, 5)]
    assert progressions([0, 2, 4, 9]) == [Progression(0, 4, 2), Progression(9, 9)]
    assert progressions([v * v for v in range(12)]) is None


def test_xla_style_scans_parse_and_validate() -> None:
    """The attributes XLA prints: is_associative, is_reverse, frontend attributes."""
    scan = scan_module(CUMSUM, ["f32[10]", "f32[]"],
                       "(f32[10], f32[]) scan(p0, p1), dimensions={0}, num_carries=1, "
                       "is_associative=true, is_reverse=false, to_apply=body, "
                       'frontend_attributes={test_attr="yes"}')
    assert scan.opcode == "scan" and scan.dimensions == (0,)
    (x,), _ = output_to_input(scan, 0)
    assert_map(x, "(d0)[s0] -> (s0), domain: d0 in [0, 9], s0 in [0, 9], d0 - s0 in [0, 9]")


@pytest.mark.parametrize(("root", "message"), [
    ("(f32[10], f32[]) scan(p0, p1), dimensions={0,1}, num_carries=1, to_apply=body",
     "must name one dimension"),
    ("(f32[10], f32[]) scan(p0, p1), dimensions={0}, to_apply=body", "num_carries"),
    ("(f32[10], f32[]) scan(p0, p1), dimensions={0}, num_carries=1, to_apply=body, "
     "is_reverse=maybe", "is_reverse=maybe"),
    ("(f32[10], f32[]) scan(p0, p1), dimensions={0}, num_carries=0, to_apply=body",
     "is not a dimension of every input"),
    ("(f32[10], f32[]) scan(p0, p1), dimensions={0}, num_carries=1, to_apply=sum",
     r"sum returns \[\(\)\], expected \[\(\), \(\)\]"),
    ("(f32[9], f32[]) scan(p0, p1), dimensions={0}, num_carries=1, to_apply=body",
     "disagree on the length"),
])
def test_bad_scans_raise_precise_errors(root: str, message: str) -> None:
    """The parser's validation rejects them at their line; without it, the analysis says
    what does not fit."""
    with pytest.raises(HloValidationError, match=r"line \d+, column \d+: scan %r: "):
        scan_module(CUMSUM, ["f32[10]", "f32[]"], root)
    scan = scan_module(CUMSUM, ["f32[10]", "f32[]"], root, validate=False)
    with pytest.raises(HloShapeError, match=message):
        output_to_input(scan, 0)
    with pytest.raises(HloShapeError, match=message):
        input_to_output(scan, 0)


def test_scan_is_the_fusion_floors_work() -> None:
    """A scan runs a called computation: its maps come from the sweep, not an op rule."""
    assert "scan" in HANDLED_BY_FUSION
