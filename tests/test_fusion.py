"""Fusion analysis (symidx.fusion): the seed's three fusion examples, XLA's own fusion,
grouped and epilogue expectations (tests/data/fusion/xla_fusion_cases.json, copied from
XLA's indexing_analysis_test), runtime variables, nested fusions and calls, unknown
indexing, provenance, and the sweep's cost on a ladder of diamonds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from symidx.analysis import instruction_maps
from symidx.core.indexing_map import IndexingMap
from symidx.core.syntax import print_map
from symidx.fusion import (
    Path as MapPath,
)
from symidx.fusion import (
    Reached,
    called_computation,
    epilogue_input_to_output,
    grouped_input_to_output,
    grouped_output_to_input,
    output_maps,
    parameter_maps,
)
from symidx.hlo import parse_hlo

DATA = Path(__file__).parent / "data" / "fusion"
CASES = {c["id"].split("/")[1]: c for c in
         json.loads((DATA / "xla_fusion_cases.json").read_text())}

MAX_ADD = """
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


def squash(text: str) -> str:
    """XLA's text without whitespace and without the provenance sections."""
    for marker in ("runtime variables:", "replica id:"):
        text = text.split(marker)[0]
    return "".join(text.split()).rstrip(",")


def xla_texts(maps: tuple[IndexingMap, ...] | list[IndexingMap]) -> list[str]:
    return sorted(squash(print_map(m, "xla")) for m in maps)


def fusion_of(body: str, params: list[str], out: str, calls: str = "") -> Any:
    """The root fusion of a module whose fused computation is ``f { body }``."""
    args = ", ".join(f"p{k}" for k in range(len(params)))
    entry = "\n".join(f"  p{k} = {s} parameter({k})" for k, s in enumerate(params))
    text = (f"HloModule m\n{MAX_ADD}{calls}\nf {{\n{body}\n}}\nENTRY e {{\n{entry}\n"
            f"  ROOT fusion = {out} fusion({args}), kind=kLoop, calls=f\n}}\n")
    return parse_hlo(text).entry.root


def maps_of(fusion: Any, output: int = 0) -> list[Reached]:
    comp = called_computation(fusion)
    assert comp is not None
    return parameter_maps(comp, output)


# --- the seed's three examples ------------------------------------------------------------------


def seed_maps(name: str) -> list[str]:
    fusion = parse_hlo((DATA / name).read_text()).entry.root
    (group,) = instruction_maps(fusion, "output_to_input")
    return [print_map(m) for m in group.maps]


def test_seed_tensor_plus_transposed_tensor_reads_p0_twice() -> None:
    domain = "domain:\nd0 in [0, 999],\nd1 in [0, 999]"
    assert sorted(seed_maps("seed_transpose_add.hlo")) == [
        f"(d0, d1) -> (d0, d1),\n{domain}", f"(d0, d1) -> (d1, d0),\n{domain}"]


def test_seed_transposes_deduplicate_to_one_map() -> None:
    assert seed_maps("seed_dedup_transposes.hlo") == [
        "(d0, d1, d2) -> (d2, d0, d1),\ndomain:\nd0 in [0, 9],\nd1 in [0, 49],\nd2 in [0, 19]"]


def test_seed_softmax() -> None:
    domain = "d0 in [0, 1],\nd1 in [0, 64],\nd2 in [0, 124]"
    assert sorted(seed_maps("seed_softmax.hlo")) == [
        f"(d0, d1, d2) -> (d0, d1, d2),\ndomain:\n{domain}",
        f"(d0, d1, d2)[s0] -> (d0, d1, s0),\ndomain:\n{domain},\ns0 in [0, 124]"]


# --- XLA's expectations --------------------------------------------------------------------------

#: Where we deliberately differ from XLA: our answer, exact, and why.
DEVIATIONS = {
    # HLO clamps the offset 99 to 90; XLA keeps a runtime variable over [0, 90].
    "FusionWithRTVarsSimplification_ScalarConstantOutsideOfRangeIsKept":
        [["(d0)->(d0+90),domain:d0in[0,9]"]],
    # iota values 33..41 are clamped to 32; XLA's (d0, 0) reads rows 33..41, which do not
    # exist.
    "FusionWithRTVarsSimplification_Iota":
        [["(d0,d1,d2)->(min(d0,32),0),domain:d0in[0,41],d1in[0,0],d2in[0,0]"]],
    # XLA has no triangular-solve rule; ours: forward substitution with a unit diagonal
    # reads the strict lower triangle of a and the column of b up to the output's row.
    "FusionWithUnsupportedOp":
        [["(d0,d1)->(d0*6,d1*2),domain:d0in[0,3],d1in[0,2]"],
         ["(d0,d1)[s0,s1]->(s0,s1),domain:d0in[0,3],d1in[0,2],s0in[0,3],s1in[0,3],"
          "d0-s0in[0,4],s0-s1in[1,4]"],
         ["(d0,d1)[s0]->(s0,d1),domain:d0in[0,3],d1in[0,2],s0in[0,3],d0-s0in[0,4]"]],
}
FUSION_CASES = sorted(k for k, c in CASES.items() if c["kind"] == "fusion_output_to_input")


@pytest.mark.parametrize("name", FUSION_CASES)
def test_xla_fusion_case(name: str) -> None:
    case = CASES[name]
    module = parse_hlo(case["hlo"])
    (call,) = case["calls"]
    (check,) = case["expected"]
    fusion = module.entry.instruction(call["instr"])
    groups = instruction_maps(fusion, "output_to_input", output=call["output_id"])
    got = [["unknownindexing"] if g.unsupported else xla_texts(g.maps) for g in groups]
    want = DEVIATIONS.get(name) or [sorted(squash(t) for t in group)
                                    for group in check["expected"]]
    assert got == want


def test_unknown_indexing_names_the_op() -> None:
    """XLA's case, its triangular-solve replaced by an opcode without a rule."""
    text = CASES["FusionWithUnsupportedOp"]["hlo"].replace("triangular-solve", "frobnicate")
    groups = instruction_maps(parse_hlo(text).entry.root, "output_to_input")
    assert [g.unsupported for g in groups] == [None, "frobnicate", "frobnicate"]


def grouped(case: str, target: str, within: set[str], output: int = 0) -> dict[str, list[str]]:
    module = parse_hlo(CASES[case]["hlo"])
    found = grouped_output_to_input(module.entry, target, output, within=within)
    return {name: ["UNDEFINED"] if r.unsupported else xla_texts(r.maps)
            for (name, _), r in found.items()}


def expected_grouped(case: str) -> dict[str, list[str]]:
    (check,) = CASES[case]["expected"]
    return {name: sorted(squash(t) for t in texts) for name, texts in check["expected"].items()}


def test_group_maps_by_producers() -> None:
    """One op's maps grouped by the instruction they read (the op itself aside)."""
    found = grouped("GroupIndexingMapsByProducers", "a0", {"a0"})
    del found["a0"]
    assert found == expected_grouped("GroupIndexingMapsByProducers")


@pytest.mark.parametrize(("case", "target", "within"), [
    ("ComputeGroupedOutputToInputIndexing", "a0", {"transpose_p0", "a0"}),
    ("ComputeGroupedOutputToInputIndexing_VariadicReduce", "reduce", {"reduce"}),
    ("ComputeGroupedOutputToInputIndexing_SingleOp", "p1", {"exp0"}),
])
def test_xla_grouped_case(case: str, target: str, within: set[str]) -> None:
    want = expected_grouped(case)
    want.update(GROUPED_DEVIATIONS.get(case, {}))
    assert grouped(case, target, within) == want


#: Where our grouped maps deliberately differ from XLA's: our answer, exact, and why.
GROUPED_DEVIATIONS = {
    # The reducer adds each component apart (add.0 of the first accumulator and element,
    # add.1 of the second): output 0 reads param_0.3 and its init param_2.2, never
    # param_1.3 nor output 1's init (XLA: every input and every init).
    "ComputeGroupedOutputToInputIndexing_VariadicReduce": {
        "param_1.3": ["KNOWNEMPTY"], "constant": ["KNOWNEMPTY"]},
}


@pytest.mark.parametrize("case", ["AllGatherDotFusion_GatherNonContractingDim",
                                  "AllGatherDotFusion_GatherContractingDim"])
def test_xla_all_gather_dot(case: str) -> None:
    """The local operand index, as XLA's (we do not print the replica-id map)."""
    (check,) = CASES[case]["expected"]
    found = grouped(case, "dot", {"all-gather", "dot"})
    assert found["p0"] == sorted(squash(t) for t in check["expected"])


def test_chained_all_gather_composes_local_indices() -> None:
    """XLA gives up (UNDEFINED: it cannot compose replica ids); the local index of the
    composition is ``d0 mod 128``, which is what we give."""
    found = grouped("ChainedAllGatherFusion", "all-gather.1", {"all-gather.0", "all-gather.1"})
    assert found["p0"] == ["(d0)->(d0mod128),domain:d0in[0,511]"]


@pytest.mark.parametrize("case", ["EpilogueIndexing", "EpilogueIndexing_NoEpilogue"])
def test_xla_epilogue(case: str) -> None:
    (call,) = CASES[case]["calls"]
    (check,) = CASES[case]["expected"]
    comp = parse_hlo(CASES[case]["hlo"]).computation("fused_computation")
    found = epilogue_input_to_output(comp, call["epilogue_parent"], call["epilogue_root"])
    assert xla_texts(found.maps) == [squash(check["expected"])]


def test_epilogue_follows_every_use_chain() -> None:
    comp = fusion_of("""
  p0 = f32[4,6] parameter(0)
  t = f32[6,4] transpose(p0), dimensions={1,0}
  n = f32[6,4] negate(t)
  e = f32[6,4] exponential(t)
  side = f32[6,4] abs(t)
  ROOT a = f32[6,4] add(n, e)""", ["f32[4,6]"], "f32[6,4]").called_computations["calls"][0]
    found = epilogue_input_to_output(comp, "t")
    assert xla_texts(found.maps) == ["(d0,d1)->(d0,d1),domain:d0in[0,5],d1in[0,3]"]
    assert found.origins[0].count == 2
    assert epilogue_input_to_output(comp, "side", "a").maps == ()


# --- runtime variables -------------------------------------------------------------------------


def one_map(body: str, params: list[str], out: str) -> str:
    """The one map to parameter 0."""
    (m,) = maps_of(fusion_of(body, params, out))[0].maps
    return print_map(m, "xla")


GATHER = """
  p0 = f32[33,76] parameter(0)
  {indices}
  ROOT gather = f32[{rows},1,1] gather(p0, indices), offset_dims={{1,2}},
    collapsed_slice_dims={{}}, start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1,1}}"""


@pytest.mark.parametrize(("rows", "indices", "expected"), [
    (20, "indices = s64[20,1] iota(), iota_dimension=0", "(d0, 0)"),
    (42, "indices = s64[42,1] iota(), iota_dimension=0", "(min(d0, 32), 0)"),
    (42, "iota = s32[42] iota(), iota_dimension=0\n  indices = s32[42,1] reshape(iota)",
     "(min(d0, 32), 0)"),
    (42, "iota = s32[42] iota(), iota_dimension=0\n  c = s64[42] convert(iota)\n"
         "  indices = s64[42,1] bitcast(c)", "(min(d0, 32), 0)"),
    (5, "c = s32[] constant(40)\n  indices = s32[5,1] broadcast(c), dimensions={}", "(32, 0)"),
])
def test_gather_indices_fold_when_known(rows: int, indices: str, expected: str) -> None:
    text = one_map(GATHER.format(indices=indices, rows=rows), ["f32[33,76]"],
                   f"f32[{rows},1,1]")
    assert text.split(" domain:")[0] == f"(d0, d1, d2) -> {expected},"


def test_a_table_of_gather_indices_gives_a_map_per_row() -> None:
    """Indices ``{7, -2, 9}``: each output row reads the row its index names, clamped."""
    body = GATHER.format(indices="indices = s32[3,1] constant({{7},{-2},{9}})", rows=3)
    maps = maps_of(fusion_of(body, ["f32[33,76]"], "f32[3,1,1]"))[0].maps
    assert sorted(print_map(m, "xla").split(", d1 in")[0] for m in maps) == [
        "(d0, d1, d2) -> (0, 0), domain: d0 in [1, 1]",
        "(d0, d1, d2) -> (7, 0), domain: d0 in [0, 0]",
        "(d0, d1, d2) -> (9, 0), domain: d0 in [2, 2]"]


def test_narrowing_convert_keeps_the_variable() -> None:
    """s8 cannot hold 0..299, so the values on the way would wrap: no folding."""
    text = one_map("""
  p0 = f32[400] parameter(0)
  iota = s32[300] iota(), iota_dimension=0
  narrow = s8[300] convert(iota)
  ROOT ds = f32[300] gather(p0, narrow), offset_dims={}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1}""", ["f32[400]"], "f32[300]")
    assert "rt0: narrow" in text


def test_arithmetic_on_a_wrapping_iota_keeps_the_variable() -> None:
    """An s8 iota of 300 wraps: ``iota + 0`` is not ``d0``, so the variable stays; an s32
    one shifted by 5 is ``d0 + 5``, clamped into the feasible starts."""
    body = """
  p0 = f32[400] parameter(0)
  iota = {t}[300] iota(), iota_dimension=0
  wide = s32[300] convert(iota)
  c = s32[] constant(5)
  five = s32[300] broadcast(c), dimensions={{}}
  shifted = s32[300] add(wide, five)
  ROOT g = f32[300] gather(p0, shifted), offset_dims={{}}, collapsed_slice_dims={{0}},
    start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1}}"""
    text = one_map(body.format(t="s8"), ["f32[400]"], "f32[300]")
    assert "rt0: shifted" in text
    text = one_map(body.format(t="s32"), ["f32[400]"], "f32[300]")
    assert text == "(d0) -> (d0 + 5), domain: d0 in [0, 299]"


def test_offset_through_broadcast_points_at_the_parameter() -> None:
    text = one_map("""
  p0 = f32[100] parameter(0)
  p1 = s32[] parameter(1)
  b = s32[1] broadcast(p1), dimensions={}
  ROOT ds = f32[10] dynamic-slice(p0, b), dynamic_slice_sizes={10}""",
                   ["f32[100]", "s32[]"], "f32[10]")
    assert text.endswith("rt0: parameter(1); (d0) -> (), domain: d0 in [0, 9]")


NESTED_DS = """
inner {
  q0 = f32[100] parameter(0)
  q1 = s32[] parameter(1)
  ROOT ds = f32[10] dynamic-slice(q0, q1), dynamic_slice_sizes={10}
}
"""


@pytest.mark.parametrize(("offset", "expected"), [
    ("c = s32[] constant(7)", "(d0) -> (d0 + 7)"),
    ("c = s32[] copy(p1)", "(d0){rt0} -> (d0 + rt0)"),
])
def test_nested_fusion_offset_is_followed_out(offset: str, expected: str) -> None:
    fusion = fusion_of(f"""
  p0 = f32[100] parameter(0)
  p1 = s32[] parameter(1)
  {offset}
  ROOT nested = f32[10] fusion(p0, c), kind=kLoop, calls=inner""",
                       ["f32[100]", "s32[]"], "f32[10]", NESTED_DS)
    reached = maps_of(fusion)[0]
    text = print_map(reached.maps[0], "xla")
    assert text.startswith(expected + ",")
    if "rt0" in expected:
        assert "rt0: parameter(1)" in text
    assert str(reached.origins[0].path) == "nested [ds -> q0] -> p0"


def test_out_of_range_constant_through_a_nested_fusion_is_clamped_to_the_interval() -> None:
    """Across a fusion boundary the variable's interval may already be narrowed, so the
    value is not clamped as the op would; but it can only take ``clamp(99, [0, 90])`` or
    read nothing, and the hull of that is one value."""
    fusion = fusion_of("""
  p0 = f32[100] parameter(0)
  p1 = s32[] parameter(1)
  c = s32[] constant(99)
  ROOT nested = f32[10] fusion(p0, c), kind=kLoop, calls=inner""",
                       ["f32[100]", "s32[]"], "f32[10]", NESTED_DS)
    text = print_map(maps_of(fusion)[0].maps[0], "xla")
    assert text == "(d0) -> (d0 + 90), domain: d0 in [0, 9]"


def test_table_of_indices_narrows_the_variable() -> None:
    """Gather rows from a constant table read along two dimensions (no map per run): the
    variable ranges over the table's values (clamped); a table of one value is that
    value."""
    text = one_map("""
  p0 = f32[33] parameter(0)
  indices = s32[2,2,1] constant({{{7},{-2}},{{9},{3}}})
  ROOT gather = f32[2,2] gather(p0, indices), offset_dims={}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=2, slice_sizes={1}""", ["f32[33]"], "f32[2,2]")
    assert "rt0 in [0, 9]" in text
    text = one_map(GATHER.format(rows=2, indices="indices = s32[2,1] constant({{40},{50}})"),
                   ["f32[33,76]"], "f32[2,1,1]")
    assert text == "(d0, d1, d2) -> (32, 0), domain: d0 in [0, 1], d1 in [0, 0], d2 in [0, 0]"


def test_update_index_stays_inside_the_update() -> None:
    fusion = fusion_of("""
  p0 = f32[2] parameter(0)
  p1 = f32[1] parameter(1)
  p2 = s32[] parameter(2)
  ROOT dus = f32[2] dynamic-update-slice(p0, p1, p2)""", ["f32[2]", "f32[1]", "s32[]"],
                       "f32[2]")
    operand, update = maps_of(fusion)[:2]
    # the operand outside the updated element: before it (rt0 = 1) or after it (rt0 = 0)
    assert sorted(print_map(m, "xla").split("\n")[0] for m in operand.maps) == [
        "(d0){rt0} -> (d0), domain: d0 in [0, 1], rt0 in [0, 1], d0 - rt0 in [-1, -1]",
        "(d0){rt0} -> (d0), domain: d0 in [0, 1], rt0 in [0, 1], d0 - rt0 in [1, 1]"]
    (m,) = update.maps
    assert print_map(m, "xla").startswith(
        "(d0){rt0} -> (d0 - rt0), domain: d0 in [0, 1], rt0 in [0, 1], d0 - rt0 in [0, 0]")


# --- structure: multi-output, nested, call, unknown ---------------------------------------------


def test_multi_output_fusion_picks_the_output() -> None:
    fusion = fusion_of("""
  p0 = f32[4,6] parameter(0)
  p1 = f32[6] parameter(1)
  t = f32[6,4] transpose(p0), dimensions={1,0}
  b = f32[4,6] broadcast(p1), dimensions={1}
  ROOT out = (f32[6,4], f32[4,6]) tuple(t, b)""", ["f32[4,6]", "f32[6]"],
                       "(f32[6,4], f32[4,6])")
    first, second = maps_of(fusion, 0), maps_of(fusion, 1)
    assert xla_texts(first[0].maps) == ["(d0,d1)->(d1,d0),domain:d0in[0,5],d1in[0,3]"]
    assert first[1].maps == ()
    assert second[0].maps == ()
    assert xla_texts(second[1].maps) == ["(d0,d1)->(d1),domain:d0in[0,3],d1in[0,5]"]


def test_tuple_inside_a_fusion_through_get_tuple_element() -> None:
    fusion = fusion_of("""
  p0 = f32[4,6] parameter(0)
  p1 = f32[4,6] parameter(1)
  zero = f32[] constant(0)
  r = (f32[4], f32[4]) reduce(p0, p1, zero, zero), dimensions={1}, to_apply=pair
  g = f32[4] get-tuple-element(r), index=1
  ROOT n = f32[4] negate(g)""", ["f32[4,6]", "f32[4,6]"], "f32[4]", calls="""
pair {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  s0 = f32[] add(a0, b0)
  s1 = f32[] add(a1, b1)
  ROOT t = (f32[], f32[]) tuple(s0, s1)
}""")
    found = maps_of(fusion)
    # output 1 of the reduce is computed from p1 alone (the reducer adds each pair apart)
    assert xla_texts(found[0].maps) == ["KNOWNEMPTY"]
    assert xla_texts(found[1].maps) == ["(d0)[s0]->(d0,s0),domain:d0in[0,3],s0in[0,5]"]


def test_nested_fusions_and_calls_compose() -> None:
    fusion = fusion_of("""
  p0 = f32[8,4] parameter(0)
  c = f32[4,8] call(p0), to_apply=transposer
  ROOT n = f32[4,8] fusion(c), kind=kLoop, calls=reverser""", ["f32[8,4]"], "f32[4,8]",
                       calls="""
transposer {
  x = f32[8,4] parameter(0)
  ROOT t = f32[4,8] transpose(x), dimensions={1,0}
}
reverser {
  y = f32[4,8] parameter(0)
  ROOT r = f32[4,8] reverse(y), dimensions={1}
}""")
    (reached,) = maps_of(fusion)
    assert xla_texts(reached.maps) == ["(d0,d1)->(-d1+7,d0),domain:d0in[0,3],d1in[0,7]"]
    assert str(reached.origins[0].path) == "n [r -> y] -> c [t -> x] -> p0"
    comp = called_computation(fusion)
    assert comp is not None
    (back,) = output_maps(comp, 0)
    assert xla_texts(back.maps) == ["(d0,d1)->(d1,-d0+7),domain:d0in[0,7],d1in[0,3]"]


def test_unknown_indexing_spreads_to_everything_read_above_it() -> None:
    """p0 is also read directly, but the op without a rule reads it too: its maps would be
    incomplete, so it is unknown; so is everything the op reads, however indirectly."""
    fusion = fusion_of("""
  p0 = f32[4,3] parameter(0)
  p1 = f32[4,4] parameter(1)
  p2 = f32[4,3] parameter(2)
  n = f32[4,4] negate(p1)
  ts = f32[4,3] frobnicate(n, p0)
  s = f32[4,3] add(ts, p0)
  ROOT a = f32[4,3] add(s, p2)""", ["f32[4,3]", "f32[4,4]", "f32[4,3]"], "f32[4,3]")
    comp = called_computation(fusion)
    assert comp is not None
    found = grouped_output_to_input(comp)
    assert {name for (name, _), r in found.items() if r.unsupported} == {"n", "p0", "p1"}
    assert found[("ts", 0)].maps and found[("p2", 0)].maps


def test_unsupported_op_in_a_nested_fusion_marks_only_its_operand() -> None:
    fusion = fusion_of("""
  p0 = f32[4,3] parameter(0)
  p1 = f32[4,4] parameter(1)
  ROOT nested = f32[4,3] fusion(p1, p0), kind=kLoop, calls=solver""",
                       ["f32[4,3]", "f32[4,4]"], "f32[4,3]", calls="""
solver {
  a = f32[4,4] parameter(0)
  b = f32[4,3] parameter(1)
  ts = f32[4,3] frobnicate(a, b)
  n = f32[4,3] negate(b)
  ROOT r = f32[4,3] add(ts, n)
}""")
    p0, p1 = maps_of(fusion)
    assert (p0.unsupported, p1.unsupported) == ("frobnicate", "frobnicate")
    groups = instruction_maps(fusion, "input_to_output", operand=0)
    assert groups[0].unsupported == "frobnicate"


def test_forward_sweep_from_any_instruction() -> None:
    comp = called_computation(parse_hlo((DATA / "seed_transpose_add.hlo").read_text())
                              .entry.root)
    assert comp is not None
    found = grouped_input_to_output(comp, "p0")
    assert xla_texts(found[("a0", 0)].maps) == [
        "(d0,d1)->(d0,d1),domain:d0in[0,999],d1in[0,999]",
        "(d0,d1)->(d1,d0),domain:d0in[0,999],d1in[0,999]"]


def test_bad_arguments_are_errors() -> None:
    from symidx.errors import SymidxError

    comp = called_computation(parse_hlo((DATA / "seed_transpose_add.hlo").read_text())
                              .entry.root)
    assert comp is not None
    with pytest.raises(SymidxError, match="no instruction named 'nope'"):
        grouped_output_to_input(comp, "nope")
    with pytest.raises(SymidxError, match="there is no output 1"):
        parameter_maps(comp, 1)
    with pytest.raises(SymidxError, match="there is no parameter 3"):
        output_maps(comp, 3)


# --- provenance and cost ------------------------------------------------------------------------


def ladder(n: int) -> Any:
    """n diamonds: x -> (transpose∘transpose, negate) -> add; 2^n paths, one distinct map."""
    lines = ["  x0 = f32[8,8] parameter(0)"]
    for i in range(n):
        lines += [f"  t{i} = f32[8,8] transpose(x{i}), dimensions={{1,0}}",
                  f"  a{i} = f32[8,8] transpose(t{i}), dimensions={{1,0}}",
                  f"  b{i} = f32[8,8] negate(x{i})",
                  f"  x{i + 1} = f32[8,8] add(a{i}, b{i})"]
    lines[-1] = lines[-1].replace(f"  x{n}", f"  ROOT x{n}")
    return fusion_of("\n".join(lines), ["f32[8,8]"], "f32[8,8]")


def test_ladder_of_diamonds_costs_linear_time() -> None:
    fusion = ladder(40)
    (reached,) = maps_of(fusion)  # paths are counted, never walked: 2^40 would not end
    assert xla_texts(reached.maps) == ["(d0,d1)->(d0,d1),domain:d0in[0,7],d1in[0,7]"]
    assert reached.origins[0].count == 2 ** 40
    assert len(reached.origins[0].path.names()) == 1 + 40 * 2  # x40, then b_i or a_i, x_i


def test_path_text_and_steps() -> None:
    inner = MapPath("r", MapPath("root"))
    path = MapPath("p0", MapPath("nested", MapPath("a0")), via=inner)
    assert str(path) == "a0 -> nested [root -> r] -> p0"
    assert path.names() == ["a0", "nested", "p0"]


def test_physical_maps_keep_their_origins() -> None:
    fusion = parse_hlo((DATA / "seed_transpose_add.hlo").read_text()).entry.root
    logical = instruction_maps(fusion, "output_to_input")
    physical = instruction_maps(fusion, "output_to_input", physical=True)
    assert physical[0].origins == logical[0].origins
    assert len(physical[0].maps) == len(logical[0].maps) == 2


def test_fusion_groups_are_its_computations_parameter_maps() -> None:
    fusion = parse_hlo((DATA / "seed_dedup_transposes.hlo").read_text()).entry.root
    comp = called_computation(fusion)
    assert comp is not None
    (group,) = instruction_maps(fusion, "output_to_input")
    assert group.unsupported is None and len(group.maps) == 1
    (reached,) = parameter_maps(comp)
    assert reached.unsupported is None and reached.maps == group.maps
