"""Golden tests: XLA's own expectations for single ops (from XLA's indexing_analysis_test,
HLO and expected maps copied here as data), plus the behaviour around the rules: the
registry, unsupported ops, physical layouts, deliberate differences from XLA.

A case's expected map is compared with the rule's map by equality once both are canonical
(parsed, simplified like the rules), and as printed text in the ``xla`` style where symidx
prints exactly what XLA prints.
"""

from __future__ import annotations

import pytest

from helpers import assert_same_function
from symidx.analysis import instruction_maps
from symidx.core.syntax import parse_map, print_map
from symidx.errors import SymidxError, UnsupportedOpError
from symidx.hlo import parse_hlo
from symidx.ops import (
    HANDLED_BY_FUSION,
    INPUT_TO_OUTPUT,
    OUTPUT_TO_INPUT,
    finish,
    input_to_output,
    output_to_input,
    rule,
    supported_opcodes,
)

MAX = """
max {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT max = f32[] maximum(p0, p1)
}
"""


def root(body: str, *, validate: bool = True):
    """The entry root of a module with ``body``; ``validate=False`` keeps shapes XLA's verifier
    rejects, to test how a rule handles them itself."""
    return parse_hlo("HloModule m\n" + MAX + "ENTRY e {\n" + body + "\n}\n",
                     validate=validate).entry.root


CONV = """
p0 = f32[1,12,10,4] parameter(0)
p1 = f32[4,3,5,8] parameter(1)
ROOT conv = {out} convolution(p0, p1), window={{{window}}}, dim_labels=b01f_i01o->b01f
"""
#: The kernel map: XLA's under the ``reads`` semantics (every window position: a kernel
#: element over padding or a dilation hole is multiplied by zero, and ``0 * inf`` is NaN);
#: under ``finite`` with the input map's window constraints (``extra``): only where its
#: window position lands on a real input element.
KERNEL = ("(d0, d1, d2, d3)[s0, s1, s2] -> (s2, s0, s1, d3), domain: d0 in [0, 0], "
          "d1 in [0, {a}], d2 in [0, {b}], d3 in [0, 7], s0 in [0, 2], s1 in [0, 4], "
          "s2 in [0, 3]{extra}")

#: (name, HLO body, output index, expected xla text per operand -- a list of texts for a
#: group of several maps --, exact text?)
OUTPUT_TO_INPUT_CASES = [
    ("conv_no_padding", CONV.format(out="f32[1,10,6,8]", window="size=3x5 pad=0_0x0_0"), 0, [
        "(d0, d1, d2, d3)[s0, s1, s2] -> (0, d1 + s0, d2 + s1, s2), domain: d0 in [0, 0], "
        "d1 in [0, 9], d2 in [0, 5], d3 in [0, 7], s0 in [0, 2], s1 in [0, 4], s2 in [0, 3]",
        KERNEL.format(a=9, b=5, extra="")], True),
    ("conv_padding_stride",
     CONV.format(out="f32[1,6,5,8]", window="size=3x5 stride=2x2 pad=1_1x2_2"), 0, [
         "(d0, d1, d2, d3)[s0, s1, s2] -> (0, d1 * 2 + s0 - 1, d2 * 2 + s1 - 2, s2), "
         "domain: d0 in [0, 0], d1 in [0, 5], d2 in [0, 4], d3 in [0, 7], s0 in [0, 2], "
         "s1 in [0, 4], s2 in [0, 3], d1 * 2 + s0 in [1, 12], d2 * 2 + s1 in [2, 11]",
         KERNEL.format(a=5, b=4, extra="")], True),
    ("conv_lhs_dilation",
     CONV.format(out="f32[1,21,15,8]", window="size=3x5 pad=0_0x0_0 lhs_dilate=2x2"), 0, [
         "(d0, d1, d2, d3)[s0, s1, s2] -> (0, (d1 + s0) / 2, (d2 + s1) / 2, s2), "
         "domain: d0 in [0, 0], d1 in [0, 20], d2 in [0, 14], d3 in [0, 7], s0 in [0, 2], "
         "s1 in [0, 4], s2 in [0, 3], (d1 + s0) mod 2 in [0, 0], (d2 + s1) mod 2 in [0, 0]",
         KERNEL.format(a=20, b=14, extra="")], True),
    ("conv_rhs_dilation",
     CONV.format(out="f32[1,8,2,8]", window="size=3x5 pad=0_0x0_0 rhs_dilate=2x2"), 0, [
         "(d0, d1, d2, d3)[s0, s1, s2] -> (0, s0 * 2 + d1, s1 * 2 + d2, s2), domain: "
         "d0 in [0, 0], d1 in [0, 7], d2 in [0, 1], d3 in [0, 7], s0 in [0, 2], "
         "s1 in [0, 4], s2 in [0, 3]", KERNEL.format(a=7, b=1, extra="")], True),
    ("conv_window_reversal",
     CONV.format(out="f32[1,10,6,8]", window="size=3x5 pad=0_0x0_0 rhs_reversal=1x0"), 0, [
         "(d0, d1, d2, d3)[s0, s1, s2] -> (0, d1 + s0, d2 + s1, s2), domain: d0 in [0, 0], "
         "d1 in [0, 9], d2 in [0, 5], d3 in [0, 7], s0 in [0, 2], s1 in [0, 4], s2 in [0, 3]",
         "(d0, d1, d2, d3)[s0, s1, s2] -> (s2, -s0 + 2, s1, d3), domain: d0 in [0, 0], "
         "d1 in [0, 9], d2 in [0, 5], d3 in [0, 7], s0 in [0, 2], s1 in [0, 4], "
         "s2 in [0, 3]"], True),
    # XLA gives the batch group a range variable s3 in [0, 6] (an over-approximation);
    # StableHLO's definition makes it exact: group = output feature floordiv 3.
    ("conv_batch_groups", """
p0 = f32[14,12,10,4] parameter(0)
p1 = f32[4,3,5,21] parameter(1)
ROOT conv = f32[2,10,6,21] convolution(p0, p1), window={size=3x5 pad=0_0x0_0},
  dim_labels=b01f_i01o->b01f, batch_group_count=7
""", 0, [
        "(d0, d1, d2, d3)[s0, s1, s2] -> ((d3 / 3) * 2 + d0, d1 + s0, d2 + s1, s2), domain: "
        "d0 in [0, 1], d1 in [0, 9], d2 in [0, 5], d3 in [0, 20], s0 in [0, 2], "
        "s1 in [0, 4], s2 in [0, 3]",
        "(d0, d1, d2, d3)[s0, s1, s2] -> (s2, s0, s1, d3), domain: d0 in [0, 1], "
        "d1 in [0, 9], d2 in [0, 5], d3 in [0, 20], s0 in [0, 2], s1 in [0, 4], "
        "s2 in [0, 3]"], True),
    ("conv_trivial_dims", """
p0 = f64[1,1,16,16,2,2]{5,4,3,2,1,0} parameter(0)
p1 = f64[1,1,3,3,1,1]{5,4,3,2,1,0} parameter(1)
ROOT conv = f64[1,1,14,14,2,2]{5,4,3,2,1,0} convolution(p0, p1),
  window={size=3x3x1x1}, dim_labels=bf0123_oi0123->bf0123
""", 0, [
        "(d0, d1, d2, d3, d4, d5)[s0, s1] -> (0, 0, d2 + s0, d3 + s1, d4, d5), domain: "
        "d0 in [0, 0], d1 in [0, 0], d2 in [0, 13], d3 in [0, 13], d4 in [0, 1], "
        "d5 in [0, 1], s0 in [0, 2], s1 in [0, 2]",
        "(d0, d1, d2, d3, d4, d5)[s0, s1] -> (0, 0, s0, s1, 0, 0), domain: d0 in [0, 0], "
        "d1 in [0, 0], d2 in [0, 13], d3 in [0, 13], d4 in [0, 1], d5 in [0, 1], "
        "s0 in [0, 2], s1 in [0, 2]"], True),
    ("reduce_window_padding_stride", """
c_inf = f32[] constant(-inf)
p0 = f32[13, 17] parameter(0)
ROOT reduce-window = f32[7, 17] reduce-window(p0, c_inf),
  window={size=3x2 stride=2x1 pad=1_1x0_1}, to_apply=max
""", 0, [
        "(d0, d1)[s0, s1] -> (d0 * 2 + s0 - 1, d1 + s1), domain: d0 in [0, 6], "
        "d1 in [0, 16], s0 in [0, 2], s1 in [0, 1], d0 * 2 + s0 in [1, 13], "
        "d1 + s1 in [0, 16]",
        "(d0, d1) -> (), domain: d0 in [0, 6], d1 in [0, 16]"], True),
    ("reduce_window_dilation", """
c_inf = f32[] constant(-inf)
p0 = f32[7, 3] parameter(0)
ROOT reduce-window = f32[4, 3] reduce-window(p0, c_inf),
  window={size=2x1 pad=0_0x0_0 rhs_dilate=3x1}, to_apply=max
""", 0, [
        "(d0, d1)[s0] -> (s0 * 3 + d0, d1), domain: d0 in [0, 3], d1 in [0, 2], "
        "s0 in [0, 1]", "(d0, d1) -> (), domain: d0 in [0, 3], d1 in [0, 2]"], True),
    ("reduce_window_trivial_dims", """
c_inf = f32[] constant(-inf)
p0 = f32[1024, 514, 1, 1] parameter(0)
ROOT reduce-window = f32[1024, 3, 1, 1] reduce-window(p0, c_inf),
  window={size=1x512x1x1 pad=0_0x0_0x0_0x0_0}, to_apply=max
""", 0, [
        "(d0, d1, d2, d3)[s0] -> (d0, d1 + s0, 0, 0), domain: d0 in [0, 1023], "
        "d1 in [0, 2], d2 in [0, 0], d3 in [0, 0], s0 in [0, 511]",
        "(d0, d1, d2, d3) -> (), domain: d0 in [0, 1023], d1 in [0, 2], d2 in [0, 0], "
        "d3 in [0, 0]"], True),
    ("bitcast_is_reshape", """
p0 = f32[4, 32] parameter(0)
ROOT bitcast = f32[4, 8, 4] bitcast(p0)
""", 0, ["(d0, d1, d2) -> (d0, d1 * 4 + d2), domain: d0 in [0, 3], d1 in [0, 7], "
         "d2 in [0, 3]"], True),
    ("bitcast_size1_transpose", """
p0 = f32[1,250]{0,1} parameter(0)
ROOT bitcast = f32[250,1]{1,0} bitcast(p0)
""", 0, ["(d0, d1) -> (d1, d0), domain: d0 in [0, 249], d1 in [0, 0]"], True),
    ("bitcast_transpose_reshape_transpose", """
p0 = f32[16, 17, 3] parameter(0)
ROOT bitcast = f32[51, 16] {0, 1} bitcast(p0)
""", 0, ["(d0, d1) -> (d1, d0 / 3, d0 mod 3), domain: d0 in [0, 50], d1 in [0, 15]"], True),
    ("pad_negative", """
p0 = f32[7] parameter(0)
p1 = f32[] parameter(1)
ROOT pad = f32[5] pad(p0, p1), padding=-3_-5_1
""", 0, ["(d0) -> ((d0 + 3) / 2), domain: d0 in [0, 4], (d0 + 3) mod 2 in [0, 0]",
         # XLA: "(d0) -> (), domain: d0 in [0, 4]"; the pad value is read only by the
         # interior gaps (even d0), as the operand map's constraint says
         ["(d0) -> (), domain: d0 in [0, 4], (d0 + 3) mod 2 in [1, 1]"]], True),
    ("reshape_nothing", """
p0 = f32[1,0,0] parameter(0)
ROOT reshape = f32[0] reshape(p0)
""", 0, ["KNOWN EMPTY"], True),
    ("select_scalar_predicate", """
p0 = pred[] parameter(0)
p1 = f32[1000, 1000] parameter(1)
p2 = f32[1000, 1000] parameter(2)
ROOT select = f32[1000, 1000] select(p0, p1, p2)
""", 0, ["(d0, d1) -> (), domain: d0 in [0, 999], d1 in [0, 999]",
         "(d0, d1) -> (d0, d1), domain: d0 in [0, 999], d1 in [0, 999]",
         "(d0, d1) -> (d0, d1), domain: d0 in [0, 999], d1 in [0, 999]"], True),
    ("scaled_dot", """
a = f32[2,10] parameter(0)
b = f32[10,2] parameter(1)
a_scale = f32[2,2] parameter(2)
b_scale = f32[2,2] parameter(3)
ROOT dot = f32[2,2] scaled-dot(a, b, a_scale, b_scale), lhs_contracting_dims={1},
  rhs_contracting_dims={0}
""", 0, ["(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 1], d1 in [0, 1], s0 in [0, 9]",
         "(d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 1], d1 in [0, 1], s0 in [0, 9]",
         "(d0, d1)[s0] -> (d0, s0 / 5), domain: d0 in [0, 1], d1 in [0, 1], s0 in [0, 9]",
         "(d0, d1)[s0] -> (s0 / 5, d1), domain: d0 in [0, 1], d1 in [0, 1], s0 in [0, 9]"],
     True),
    ("all_gather", """
p0 = f32[128, 128] parameter(0)
ROOT all-gather = f32[128, 256] all-gather(p0), replica_groups={{0,1}, {2,3}}, dimensions={1}
""", 0, ["(d0, d1) -> (d0, d1 mod 128), domain: d0 in [0, 127], d1 in [0, 255]"], True),
    ("dot_many_dims", """
p0 = f32[4, 38, 17, 11, 18, 10] parameter(0)
p1 = f32[17, 10, 16, 18, 22, 38] parameter(1)
ROOT dot = f32[10, 38, 4, 11, 16, 22] dot(p0, p1), lhs_batch_dims={5,1},
  rhs_batch_dims={1,5}, lhs_contracting_dims={4,2}, rhs_contracting_dims={3,0}
""", 0, ["(d0, d1, d2, d3, d4, d5)[s0, s1] -> (d2, d1, s1, d3, s0, d0), domain: "
         "d0 in [0, 9], d1 in [0, 37], d2 in [0, 3], d3 in [0, 10], d4 in [0, 15], "
         "d5 in [0, 21], s0 in [0, 17], s1 in [0, 16]",
         "(d0, d1, d2, d3, d4, d5)[s0, s1] -> (s1, d0, d4, s0, d5, d1), domain: "
         "d0 in [0, 9], d1 in [0, 37], d2 in [0, 3], d3 in [0, 10], d4 in [0, 15], "
         "d5 in [0, 21], s0 in [0, 17], s1 in [0, 16]"], True),
    ("get_tuple_element", """
p0 = f32[10, 20] parameter(0)
p1 = f32[30, 40] parameter(1)
t0 = (f32[10, 20], f32[30, 40]) tuple(p0, p1)
ROOT gte0 = f32[10, 20] get-tuple-element(t0), index=0
""", 0, ["(d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]"], True),
    # XLA keeps a runtime variable for an out-of-range constant; HLO clamps it to 90.
    ("dynamic_slice_constant_clamped", """
p0 = s32[100] parameter(0)
offset = s64[] constant(99)
ROOT ds = s32[10] dynamic-slice(p0, offset), dynamic_slice_sizes={10}
""", 0, ["(d0) -> (d0 + 90), domain: d0 in [0, 9]", "(d0) -> (), domain: d0 in [0, 9]"],
     True),
    # XLA prints d0 - rt0; symidx's printer orders terms as XLA's simplifier would.
    ("dynamic_update_slice", """
src = s32[20,30] parameter(0)
upd = s32[5,10] parameter(1)
of1 = s32[] parameter(2)
of2 = s32[] parameter(3)
ROOT dus = s32[20,30] dynamic-update-slice(src, upd, of1, of2)
""", 0, [
        # XLA: "(d0, d1) -> (d0, d1), domain: d0 in [0, 19], d1 in [0, 29]"; the operand is
        # read outside the updated window only, on either side of it along either dim
        [f"(d0, d1){{rt0}} -> (d0, d1), domain: d0 in [0, 19], d1 in [0, 29], "
         f"rt0 in [0, {last}], {var} - rt0 in {side}"
         for var, last, sides in (("d0", 15, ("[-15, -1]", "[5, 19]")),
                                  ("d1", 20, ("[-20, -1]", "[10, 29]")))
         for side in sides],
        # XLA: the same without the last two constraints (images outside the update for
        # some offsets); the update is read where the offsets put the element inside it
        "(d0, d1){rt0, rt1} -> (d0 - rt0, d1 - rt1), domain: d0 in [0, 19], d1 in [0, 29], "
         "rt0 in [0, 15], rt1 in [0, 20], d0 - rt0 in [0, 4], d1 - rt1 in [0, 9]",
        # XLA: "(d0, d1) -> (), domain: d0 in [0, 19], d1 in [0, 29]" for both offsets; an
        # offset matters where one of its values puts the element inside the window: any
        # row for of1, within the window's columns (rt0: of2) -- and the mirror for of2
        "(d0, d1){rt0} -> (), domain: d0 in [0, 19], d1 in [0, 29], rt0 in [0, 20], "
        "d1 - rt0 in [0, 9]",
        "(d0, d1){rt0} -> (), domain: d0 in [0, 19], d1 in [0, 29], rt0 in [0, 15], "
        "d0 - rt0 in [0, 4]"], False),
]


def _compare(got, text: str, exact: bool, fold: bool) -> None:
    expected = parse_map(text)
    if exact:
        assert print_map(got, "xla").split("\nruntime variables:")[0] == text
    if expected.rts:  # XLA's text has no provenance: compare without it
        got = got.replace(rts=[type(v)(v.bounds) for v in got.rts])
    assert got == finish(expected, fold)
    assert_same_function(got, expected)


@pytest.mark.parametrize(("name", "body", "output", "expected", "exact"),
                         OUTPUT_TO_INPUT_CASES, ids=[c[0] for c in OUTPUT_TO_INPUT_CASES])
def test_xla_output_to_input(name: str, body: str, output: int, expected: list[str],
                             exact: bool) -> None:
    instr = root(body)
    groups = output_to_input(instr, output)
    expected_groups = [[e] if isinstance(e, str) else e for e in expected]
    assert [len(g) for g in groups] == [len(e) for e in expected_groups]
    fold = instr.opcode in ("reduce-window", "convolution")
    for group, texts in zip(groups, expected_groups, strict=True):
        for got, text in zip(group, texts, strict=True):
            _compare(got, text, exact, fold)


#: (case name, the window constraints the kernel map gets under ``finite``)
FINITE_KERNELS = [
    ("conv_padding_stride", ", d1 * 2 + s0 in [1, 12], d2 * 2 + s1 in [2, 11]"),
    ("conv_lhs_dilation", ", (d1 + s0) mod 2 in [0, 0], (d2 + s1) mod 2 in [0, 0]"),
    ("conv_no_padding", ""),
]


@pytest.mark.parametrize(("name", "extra"), FINITE_KERNELS, ids=[c[0] for c in FINITE_KERNELS])
def test_conv_kernel_under_finite_reads_only_over_input_elements(name: str, extra: str
                                                                  ) -> None:
    body = next(c[1] for c in OUTPUT_TO_INPUT_CASES if c[0] == name)
    instr = root(body)
    reads = output_to_input(instr, 0)
    finite = output_to_input(instr, 0, assume_finite=True)
    assert finite[0] == reads[0]  # the input map is the same under both
    a, b = (int(n) - 1 for n in instr.shape.dims[1:3])
    _compare(finite[1][0], KERNEL.format(a=a, b=b, extra=extra), True, True)


def test_xla_bitcast_input_to_output() -> None:
    instr = root("p0 = f32[16, 17, 3] parameter(0)\n"
                 "ROOT bitcast = f32[51, 16] {0, 1} bitcast(p0)")
    ((got,),) = input_to_output(instr, 0)
    assert print_map(got, "xla") == ("(d0, d1, d2) -> (d1 * 3 + d2, d0), domain: "
                                     "d0 in [0, 15], d1 in [0, 16], d2 in [0, 2]")


@pytest.mark.parametrize(("layouts", "out_to_in", "in_to_out"), [
    (("", "{1, 0, 2}"),
     "(d0, d1, d2) -> (d1, d2, d0), domain: d0 in [0, 29], d1 in [0, 9], d2 in [0, 19]",
     "(d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]"),
    (("{1, 0, 2}", ""),
     "(d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]",
     "(d0, d1, d2) -> (d1, d2, d0), domain: d0 in [0, 29], d1 in [0, 9], d2 in [0, 19]"),
])
def test_physical_layout(layouts: tuple[str, str], out_to_in: str, in_to_out: str) -> None:
    instr = root(f"p0 = f32[10, 20, 30]{layouts[0]} parameter(0)\n"
                 f"ROOT add0 = f32[10, 20, 30]{layouts[1]} exponential(p0)")
    (group,) = instruction_maps(instr, OUTPUT_TO_INPUT, physical=True)
    assert [print_map(m, "xla") for m in group.maps] == [out_to_in]
    (group,) = instruction_maps(instr, INPUT_TO_OUTPUT, operand=0, physical=True)
    assert [print_map(m, "xla") for m in group.maps] == [in_to_out]


def test_physical_layout_with_tiles_excludes_padding() -> None:
    # the physical index of a tiled array is (tile row, tile column, row in tile, column in
    # tile); elementwise ops are the identity there, except on the padding slots
    instr = root("p0 = f32[3,5]{1,0:T(2,2)} parameter(0)\n"
                 "ROOT n = f32[3,5]{1,0:T(2,2)} negate(p0)")
    [group] = instruction_maps(instr, OUTPUT_TO_INPUT, physical=True)
    [m] = group.maps
    assert m.image((1, 2, 0, 0)) == {(1, 2, 0, 0)}  # logical (2, 4)
    assert m.image((1, 2, 1, 0)) == set()  # logical row 3: padding
    assert m.image((1, 2, 0, 1)) == set()  # logical column 5: padding


def test_unsupported_op_raises_naming_it() -> None:
    """An opcode without a per-op rule (outfeed moves data out of the program: symidx.fusion's
    business) raises, naming it."""
    instr = root("p1 = f32[4,4] parameter(0)\ntok = token[] after-all()\n"
                 "ROOT out = token[] outfeed(p1, tok), outfeed_shape=f32[4,4]")
    with pytest.raises(UnsupportedOpError, match="outfeed") as err:
        output_to_input(instr)
    assert err.value.opcode == "outfeed"
    with pytest.raises(UnsupportedOpError):
        input_to_output(instr, 0)


def test_scan_and_control_flow_are_the_fusion_floors() -> None:
    """scan, while and call run called computations: symidx.fusion follows them (scan:
    tests/test_ops_scan.py), no per-op rule does."""
    for opcode in ("scan", "while", "call"):
        assert opcode in HANDLED_BY_FUSION
        assert opcode not in supported_opcodes()
        assert opcode not in supported_opcodes("input_to_output")


def test_bitcast_convert_width_change_needs_the_minor_dim() -> None:
    ok = root("p0 = f32[4] parameter(0)\nROOT b = u8[4,4] bitcast-convert(p0)")
    ((got,),) = output_to_input(ok)
    assert print_map(got, "xla") == "(d0, d1) -> (d0), domain: d0 in [0, 3], d1 in [0, 3]"
    bad = root("p0 = f32[4] parameter(0)\nROOT b = u8[16] bitcast-convert(p0)", validate=False)
    with pytest.raises(UnsupportedOpError, match="bitcast-convert"):
        output_to_input(bad)


def test_tiled_bitcast_follows_the_buffer() -> None:
    instr = root("p0 = f32[8,128]{1,0:T(8,128)} parameter(0)\n"
                 "ROOT b = f32[1024]{0} bitcast(p0)")
    [[m]] = output_to_input(instr)
    assert m.evaluate((130,)) == (1, 2)
    padded = root("p0 = f32[3,5]{1,0:T(2,2)} parameter(0)\n"
                  "ROOT b = f32[15]{0} bitcast(p0)")
    with pytest.raises(UnsupportedOpError, match="not the same buffer"):
        output_to_input(padded)


def test_bad_indices_are_errors_not_maps() -> None:
    instr = root("p0 = f32[4] parameter(0)\nROOT n = f32[4] negate(p0)")
    with pytest.raises(SymidxError, match="no output 1"):
        output_to_input(instr, 1)
    with pytest.raises(SymidxError, match="no operand 1"):
        input_to_output(instr, 1)


def test_malformed_attributes_are_errors() -> None:
    instr = root("p0 = f32[4,5] parameter(0)\nROOT t = f32[5,4] transpose(p0), "
                 "dimensions={0,1}", validate=False)
    with pytest.raises(SymidxError, match="transpose"):
        output_to_input(instr)


def test_one_rule_per_opcode_and_direction() -> None:
    with pytest.raises(ValueError, match="two output_to_input rules"):
        rule(OUTPUT_TO_INPUT, "add")(lambda instr, i: [])
    assert supported_opcodes(OUTPUT_TO_INPUT) == supported_opcodes(INPUT_TO_OUTPUT)
