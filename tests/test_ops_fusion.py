"""Maps through fused computations (and ``call``): the seed's three fusion examples, the
sweep's cost on a ladder of diamonds, unknown indexing through unsupported ops, and
input-to-output through a fusion as the inverse relation of output-to-input."""

from __future__ import annotations

from pathlib import Path

import pytest

from ops_check import inside, union_image
from reference_hlo import box
from symidx.analysis import instruction_maps
from symidx.core.syntax import parse_map, print_map
from symidx.fusion import output_maps, parameter_maps
from symidx.hlo import fusion_instructions, parse_hlo
from symidx.ops import finish

DATA = Path(__file__).parent / "data"

MAX = """
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""


def fusion_maps(fused: str, params: list[str], out: str, output: int = 0):
    """Output-to-input map groups of a fusion of the computation ``fused``."""
    args = ", ".join(f"p{k}" for k in range(len(params)))
    entry = "\n".join(f"  p{k} = {s} parameter({k})" for k, s in enumerate(params))
    text = (f"HloModule m\n{MAX}\nf {{\n{fused}\n}}\nENTRY e {{\n{entry}\n"
            f"  ROOT fusion = {out} fusion({args}), kind=kLoop, calls=f\n}}\n")
    root = parse_hlo(text).entry.root
    return instruction_maps(root, "output_to_input", output=output), root


def as_set(texts: list[str]) -> set:
    return {finish(parse_map(t), fold_point_dims=True) for t in texts}


def test_seed_tensor_plus_transposed_tensor() -> None:
    (group,), _ = fusion_maps("""
  p0 = f32[1000, 1000] parameter(0)
  transpose_p0 = f32[1000, 1000]{0, 1} transpose(p0), dimensions={1, 0}
  ROOT a0 = f32[1000, 1000] add(p0, transpose_p0)""", ["f32[1000,1000]"], "f32[1000,1000]")
    domain = "domain: d0 in [0, 999], d1 in [0, 999]"
    assert set(group.maps) == as_set([f"(d0, d1) -> (d0, d1), {domain}",
                                      f"(d0, d1) -> (d1, d0), {domain}"])


def test_seed_deduplicated_transposes() -> None:
    (group,), _ = fusion_maps("""
  p0 = f32[20, 10, 50] parameter(0)
  lhs_transpose_1 = f32[10, 20, 50] transpose(p0), dimensions={1, 0, 2}
  lhs_e = f32[10, 20, 50] exponential(lhs_transpose_1)
  lhs_transpose_2 = f32[10, 50, 20] transpose(lhs_e), dimensions={0, 2, 1}
  rhs_transpose_1 = f32[50, 10, 20] transpose(p0), dimensions={2, 1, 0}
  rhs_log = f32[50, 10, 20] exponential(rhs_transpose_1)
  rhs_transpose_2 = f32[10, 50, 20] transpose(rhs_log), dimensions={1, 0, 2}
  ROOT add = f32[10, 50, 20] add(lhs_transpose_2, rhs_transpose_2)""",
                              ["f32[20,10,50]"], "f32[10,50,20]")
    assert group.maps == tuple(as_set([
        "(d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 49], d2 in [0, 19]"]))


def test_seed_softmax() -> None:
    (group,), _ = fusion_maps("""
  p0 = f32[2,65,125] parameter(0)
  c_inf = f32[] constant(-inf)
  max = f32[2,65] reduce(p0, c_inf), dimensions={2}, to_apply=max
  max_b = f32[2,65,125] broadcast(max), dimensions={0,1}
  shifted = f32[2,65,125] subtract(p0, max_b)
  e = f32[2,65,125] exponential(shifted)
  zero = f32[] constant(0)
  sum = f32[2,65] reduce(e, zero), dimensions={2}, to_apply=add
  sum_b = f32[2,65,125] broadcast(sum), dimensions={0,1}
  ROOT softmax = f32[2,65,125] divide(e, sum_b)""", ["f32[2,65,125]"], "f32[2,65,125]")
    domain = "d0 in [0, 1], d1 in [0, 64], d2 in [0, 124]"
    assert set(group.maps) == as_set([
        f"(d0, d1, d2)[s0] -> (d0, d1, s0), domain: {domain}, s0 in [0, 124]",
        f"(d0, d1, d2) -> (d0, d1, d2), domain: {domain}"])


def test_slice_of_concatenate_is_known_empty_for_unread_operands() -> None:
    groups, _ = fusion_maps("""
  p0 = f32[2, 5, 7] parameter(0)
  p1 = f32[2, 11, 7] parameter(1)
  p2 = f32[2, 17, 7] parameter(2)
  concat = f32[2, 33, 7] concatenate(p0, p1, p2), dimensions={1}
  ROOT slice = f32[2, 3, 7] slice(concat), slice={[0:2:1], [0:5:2], [0:7:1]}""",
                            ["f32[2,5,7]", "f32[2,11,7]", "f32[2,17,7]"], "f32[2,3,7]")
    assert groups[0].maps == tuple(as_set([
        "(d0, d1, d2) -> (d0, d1 * 2, d2), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 6]"]))
    assert [g.maps[0].is_known_empty for g in groups[1:]] == [True, True]


def test_unsupported_op_makes_its_operands_unknown() -> None:
    groups, _ = fusion_maps("""
  p0 = f32[20, 20] parameter(0)
  p1 = f32[4,4] parameter(1)
  p2 = f32[4,3] parameter(2)
  lhs = f32[4,3] frobnicate(p1, p2)
  rhs = f32[4, 3] slice(p0), slice={[0:20:6], [0:5:2]}
  ROOT add = f32[4, 3] add(lhs, rhs)""", ["f32[20,20]", "f32[4,4]", "f32[4,3]"], "f32[4,3]")
    assert groups[0].maps == tuple(as_set(
        ["(d0, d1) -> (d0 * 6, d1 * 2), domain: d0 in [0, 3], d1 in [0, 2]"]))
    assert [(g.maps, g.unsupported) for g in groups[1:]] == [((), "frobnicate")] * 2


def test_constant_offset_folds_in_a_fusion() -> None:
    (group,), _ = fusion_maps("""
  p0 = s32[4096] parameter(0)
  offset = s64[] constant(42)
  ROOT ds = s32[10] dynamic-slice(p0, offset), dynamic_slice_sizes={10}""",
                              ["s32[4096]"], "s32[10]")
    assert group.maps == tuple(as_set(["(d0) -> (d0 + 42), domain: d0 in [0, 9]"]))


def test_iota_indices_fold_only_when_in_range() -> None:
    def gather(rows: int):
        (group,), _ = fusion_maps(f"""
  p0 = f32[33,76] parameter(0)
  iota = s64[{rows},1] iota(), iota_dimension=0
  ROOT gather = f32[{rows},1,1] gather(p0, iota), offset_dims={{1,2}},
    collapsed_slice_dims={{}}, start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1,1}}""",
                                  ["f32[33,76]"], f"f32[{rows},1,1]")
        return group.maps

    (folded,) = gather(20)
    assert not folded.rts and str(folded.results) == "(d0, 0)"
    (clamped,) = gather(42)  # rows 33..41 read row 32: the start index is clamped
    assert not clamped.rts and print_map(clamped, "xla").startswith("(d0, d1, d2) -> "
                                                                      "(min(d0, 32), 0)")


def test_ladder_of_diamonds_costs_linear_time() -> None:
    """40 diamonds: 2^40 paths, but every level reaches p0 through one distinct map."""
    lines = ["  x0 = f32[8,8] parameter(0)"]
    for i in range(40):
        lines += [f"  a{i} = f32[8,8] negate(x{i})",
                  f"  b{i} = f32[8,8] exponential(x{i})",
                  f"  x{i + 1} = f32[8,8] add(a{i}, b{i})"]
    lines[-1] = lines[-1].replace("  x40", "  ROOT x40")
    (group,), _ = fusion_maps("\n".join(lines), ["f32[8,8]"], "f32[8,8]")
    assert group.maps == tuple(as_set(["(d0, d1) -> (d0, d1), domain: d0 in [0, 7], "
                                       "d1 in [0, 7]"]))


def test_multi_output_fusion_picks_the_output() -> None:
    fused = """
  p0 = f32[4,6] parameter(0)
  t = f32[6,4] transpose(p0), dimensions={1,0}
  n = f32[4,6] negate(p0)
  ROOT out = (f32[6,4], f32[4,6]) tuple(t, n)"""
    (first,), _ = fusion_maps(fused, ["f32[4,6]"], "(f32[6,4], f32[4,6])", output=0)
    (second,), _ = fusion_maps(fused, ["f32[4,6]"], "(f32[6,4], f32[4,6])", output=1)
    assert first.maps == tuple(as_set(["(d0, d1) -> (d1, d0), domain: d0 in [0, 5], "
                                       "d1 in [0, 3]"]))
    assert second.maps == tuple(as_set(["(d0, d1) -> (d0, d1), domain: d0 in [0, 3], "
                                        "d1 in [0, 5]"]))


INVERSE_CASES = [
    ("""
  p0 = f32[4,6] parameter(0)
  p1 = f32[6] parameter(1)
  t = f32[6,4] transpose(p0), dimensions={1,0}
  b = f32[6,4] broadcast(p1), dimensions={0}
  s = f32[3,4] slice(t), slice={[1:6:2], [0:4:1]}
  bs = f32[3,4] slice(b), slice={[0:3:1], [0:4:1]}
  ROOT r = f32[3,4] add(s, bs)""", ["f32[4,6]", "f32[6]"], "f32[3,4]"),
    ("""
  p0 = f32[2,6] parameter(0)
  p1 = f32[] parameter(1)
  r = f32[12] reshape(p0)
  pd = f32[15] pad(r, p1), padding=1_2_0
  ROOT rw = f32[7] reduce-window(pd, p1), window={size=3 stride=2}, to_apply=add""",
     ["f32[2,6]", "f32[]"], "f32[7]"),
]


@pytest.mark.parametrize(("fused", "params", "out"), INVERSE_CASES)
def test_fusion_input_to_output_is_the_inverse(fused: str, params: list[str], out: str
                                               ) -> None:
    _, root = fusion_maps(fused, params, out)
    comp = root.called_computations["calls"][0]
    backward = parameter_maps(comp)
    out_dims = root.shape.dims
    for k, param in enumerate(comp.parameters):
        forward = output_maps(comp, k)[0]
        assert forward.unsupported is None and backward[k].unsupported is None
        forward_maps = forward.maps
        in_dims = param.shape.dims
        r1 = {(o, i) for o in box(out_dims)
              for i in inside(union_image(backward[k].maps, o, {}), in_dims, k, o)}
        r2 = {(o, i) for i in box(in_dims)
              for o in inside(union_image(forward_maps, i, {}), out_dims, k, i)}
        assert r1 == r2


@pytest.mark.parametrize("path", sorted(DATA.glob("hlo/*.compiled.hlo")), ids=lambda p: p.name)
def test_every_sample_fusion_gets_its_maps(path: Path) -> None:
    module = parse_hlo(path.read_text(), source=path.name)
    for fusion in fusion_instructions(module):
        for output in range(len(getattr(fusion.shape, "elements", [None]))):
            groups = instruction_maps(fusion, "output_to_input", output=output)
            assert len(groups) == len(fusion.operands)
            for g in groups:
                assert g.unsupported is None, (fusion.name, g.unsupported)
                assert all(m.num_dims == len(g.maps[0].dims) for m in g.maps)
