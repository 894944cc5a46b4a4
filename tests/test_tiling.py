"""Symbolic tiling: the tile of a map against brute force, the factored constraints against
their flat DNF, valid tilings against enumeration, the CLI contract, and --check."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symidx.cli import main
from symidx.core.expr import FloorDiv, Mod, dim, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.syntax import parse_map
from symidx.tiling import Constraints, TileRefusal, symbolic_tile
from symidx.tiling.constraints import TRUE, atom, dnf_and, dnf_or

DATA = Path(__file__).parent / "data" / "tiling"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- brute force
def projected_values(m: IndexingMap, sizes: tuple[int, ...], j: int) -> set[int]:
    """Values of result ``j`` over the output tile at the origin with these sizes (range
    variables over their intervals), by enumeration."""
    out = set()
    ranges = [range(b.lo, b.hi + 1) for b in m.ranges]
    for point in itertools.product(*[range(s) for s in sizes]):
        if not all(p <= b.hi for p, b in zip(point, m.dims)):
            continue
        for syms in itertools.product(*ranges):
            out.add(m.evaluate(point, syms)[j])
    return out


def assert_tile_exact(m: IndexingMap) -> int:
    """Where the tile's constraints hold, each result's values over the origin tile are
    exactly ``offset + stride * k`` for ``k < size``. Returns how many sizes it checked."""
    tile = symbolic_tile(m)
    variables = [dim(i) for i in range(m.num_dims)]
    holds = tile.constraints.evaluator(variables)
    checked = 0
    for sizes in itertools.product(*[range(1, b.hi + 2) for b in m.dims]):
        if not holds(list(sizes)):
            continue
        offsets, tsizes, strides = tile.evaluate(sizes)
        for j in range(m.num_results):
            want = projected_values(m, sizes, j)
            got = {offsets[j] + strides[j] * k for k in range(tsizes[j])}
            assert got == want, (str(m), sizes, j, offsets, tsizes, strides)
        checked += 1
    return checked


@st.composite
def strided_maps(draw: st.DrawFn) -> IndexingMap:
    """Maps whose results are sums of scaled dims, dims' floordivs and mods by constants,
    range variables and constants: the forms XLA's rules cover and some they refuse."""
    nd = draw(st.integers(1, 3))
    dims = [draw(st.integers(1, 12)) for _ in range(nd)]
    nr = draw(st.integers(0, 1))
    ranges = [(0, draw(st.integers(0, 3))) for _ in range(nr)]
    results = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["dim", "sum", "div", "mod", "divmod", "const", "sym"]))
        d = dim(draw(st.integers(0, nd - 1)))
        c = draw(st.integers(2, 6))
        if kind == "dim":
            results.append(d * draw(st.sampled_from([1, 1, 2, -1])) + draw(st.integers(0, 3)))
        elif kind == "sum" and nd >= 2:
            results.append(dim(0) * dims[1] + dim(1))
        elif kind == "div":
            results.append(FloorDiv(d, c))
        elif kind == "mod":
            results.append(Mod(d, c))
        elif kind == "divmod":
            results.append(Mod(FloorDiv(d, c), draw(st.integers(2, 4))))
        elif kind == "sym" and nr:
            results.append(sym(0) + draw(st.integers(0, 2)))
        else:
            results.append(draw(st.integers(0, 5)))
    return IndexingMap.create(dims, results, ranges)


@given(strided_maps())
def test_symbolic_tile_is_exact_where_its_constraints_hold(m: IndexingMap) -> None:
    try:
        assert_tile_exact(m)
    except TileRefusal as e:
        assert e.reason   # a refusal says why


def test_xla_mod_floordiv_case_is_exact_and_constrained() -> None:
    # XLA's CanPropagateTileModAndFloorDiv: a tile exists, with a divisibility constraint.
    m = parse_map("(d0) -> (d0 floordiv 35, (d0 floordiv 7) mod 5, d0 mod 7), "
                  "domain: d0 in [0, 104]")
    assert assert_tile_exact(m) > 0
    tile = symbolic_tile(m)
    holds = tile.constraints.evaluator([dim(0)])
    assert not holds([3])          # 3 neither divides 7 nor is a multiple of it
    assert holds([7]) and holds([35]) and holds([1])


def test_reshape_sum_has_disjunctive_constraints() -> None:
    m = parse_map("(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]")
    assert_tile_exact(m)
    tile = symbolic_tile(m)
    holds = tile.constraints.evaluator([dim(0), dim(1)])
    assert holds([1, 5]) and holds([3, 8]) and not holds([2, 4])


def test_refusals_name_the_subexpression() -> None:
    with pytest.raises(TileRefusal) as e:
        symbolic_tile(parse_map("(d0, d1) -> (d0 * d1), domain: d0 in [0, 3], d1 in [0, 3]"))
    assert e.value.subexpr and "d0" in e.value.subexpr
    with pytest.raises(TileRefusal):   # low padding: a constraint not starting at 0
        symbolic_tile(parse_map("(d0, d1) -> (d0 * 16 + d1), domain: d0 in [0, 3], "
                                "d1 in [0, 15], d0 * 16 + d1 in [2, 40]"))


# --------------------------------------------------------------------------- constraints
@st.composite
def dnfs(draw: st.DrawFn, variables: int = 3) -> tuple:  # type: ignore[type-arg]
    out = ()
    for _ in range(draw(st.integers(0, 3))):
        conj = TRUE
        for _ in range(draw(st.integers(1, 2))):
            v = dim(draw(st.integers(0, variables - 1)))
            e = draw(st.sampled_from([v, Mod(v, 2), Mod(4, v)]))
            lo = draw(st.integers(0, 3))
            conj = dnf_and(conj, atom(e, lo, lo + draw(st.integers(0, 2))))
        out = dnf_or(out, conj)
    return out


def _flat_holds(d: tuple, env: dict) -> bool:  # type: ignore[type-arg]
    return any(all(lo <= int(e.xreplace(env)) <= hi for e, lo, hi in conj) for conj in d)


@given(st.lists(dnfs(), min_size=1, max_size=4))
def test_factored_constraints_equal_their_flat_conjunction(parts: list) -> None:  # type: ignore[type-arg]
    cons = Constraints.always()
    for d in parts:
        cons = cons.and_dnf(d)
    variables = [dim(i) for i in range(3)]
    ev = cons.evaluator(variables)
    for values in itertools.product(range(1, 5), repeat=3):
        env = dict(zip(variables, values))
        want = all(_flat_holds(d, env) for d in parts)
        assert ev(list(values)) == want
        assert _flat_holds(cons.flat(), env) == want
    # groups share no variable
    seen: set = set()  # type: ignore[type-arg]
    for g in cons.groups:
        vs = {v for d in g for c in d for e, _, _ in c for v in e.free_symbols}
        assert not vs & seen
        seen |= vs


# --------------------------------------------------------------------------- the CLI
def test_map_tile_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "tile", "(d0) -> (d0 floordiv 35, d0 mod 7), domain: "
                             "d0 in [0, 104]", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["schema"] == "symidx.tiles/1"
    assert set(doc["tile"]) >= {"offset_map", "size_map", "stride_map", "rt_vars",
                                "constraints"}
    assert "mod" in doc["tile"]["constraints"]


def test_map_refusal_exits_2_with_a_reason(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "tile", "(d0, d1) -> (d0 * d1), domain: d0 in [0, 3], "
                             "d1 in [0, 3]", "--format", "json")
    assert code == 2
    assert json.loads(out)["tile"] is None
    assert "d0" in err and "Traceback" not in err


def test_bad_map_text_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "tile", "(d0) -> (d0 +", "--format", "json")
    assert code == 2 and "Traceback" not in err


def test_dot_fusion_has_a_hidden_parameter(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "tile", str(DATA / "dot.hlo"), "--fusion", "fusion",
                             "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["parameters"] == [{"instruction": "dot", "sizes": [64, 8, 16], "hidden": False}]
    names = {i["name"] for i in doc["instructions"]}
    assert names == {"dot", "n", "p0", "p1"}


def test_sizes_give_pid_maps_and_check_proves_them(capsys: pytest.CaptureFixture[str]
                                                   ) -> None:
    code, out, err = run_cli(capsys, "tile", str(DATA / "dot.hlo"), "--fusion", "fusion",
                             "--sizes", "16,4,8", "--check", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    by_name = {t["name"]: t for t in doc["tiled"]}
    assert by_name["p0"]["tile_sizes"] == [4, 16]
    assert by_name["p1"]["tile_sizes"] == [16, 8]
    assert "pid_0" in by_name["dot"]["tile_offsets_indexing"]
    assert doc["check"]["ok"] is True
    assert all(i["covers"] and i["exact"] for i in doc["check"]["instructions"])


def test_runtime_offsets_are_named_by_the_fusion_operand(capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    # The fused parameter p1 is operand `off` of the fusion: XLA names the runtime
    # variable by the value the fusion is given, not by the fused parameter.
    code, out, err = run_cli(capsys, "tile", str(DATA / "dynamic_slice_renamed.hlo"),
                             "--fusion", "f", "--sizes", "2,8", "--format", "json")
    assert code == 0, err
    by_name = {t["name"]: t for t in json.loads(out)["tiled"]}
    assert by_name["p0"]["runtime_variables"] == ["off"]
    assert by_name["ds"]["runtime_variables"] == []


def test_check_detects_a_wrong_tiling() -> None:
    """Tiles one element short of the map's reads are found (the check can fail)."""
    from symidx.cli.inputs import load_module
    from symidx.tiling import analysis, tiled
    from symidx.tiling.check import check_tiling

    t = analysis.analyze(analysis.fusion_computation(load_module(str(DATA / "concat.hlo")),
                                                     "fusion"))
    good = check_tiling(t, [8, 4])
    assert good["ok"]
    real = tiled.tiled_computation

    def short(tiling, sizes, assume_satisfied=False,  # type: ignore[no-untyped-def]
              schedule="major-to-minor", **kwargs):
        out = real(tiling, sizes, assume_satisfied, **kwargs)
        for r in out:
            r.tile_sizes = [max(1, s - 1) for s in r.tile_sizes]
        return out
    tiled.tiled_computation = short
    try:
        bad = check_tiling(t, [8, 4])
    finally:
        tiled.tiled_computation = real
    assert not bad["ok"]
    assert any(not i["covers"] for i in bad["instructions"])


def test_constraint_violation_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "tile", str(DATA / "reshape_split.hlo"), "--fusion",
                           "fusion", "--sizes", "3", "--format", "json")
    assert code == 2 and "constraints" in err


def test_valid_tilings_match_enumeration(capsys: pytest.CaptureFixture[str]) -> None:
    from symidx.cli.inputs import load_module
    from symidx.tiling import analysis
    from symidx.tiling.valid import candidates, count_valid

    code, out, err = run_cli(capsys, "tile", str(DATA / "reshape_split.hlo"), "--fusion",
                             "fusion", "--valid-tilings", "--format", "json")
    assert code == 0, err
    got = {tuple(t) for t in json.loads(out)["tilings"]}
    t = analysis.analyze(analysis.fusion_computation(
        load_module(str(DATA / "reshape_split.hlo")), "fusion"))
    flat = t.constraints.flat()
    want = {(s,) for s in candidates(60) if _flat_holds(flat, {dim(0): s})}
    assert got == want and got
    assert count_valid(t)[0] == len(got)


def test_space_and_propagation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "tile", str(DATA / "diamond.hlo"), "--fusion", "fusion",
                             "--space", "--sizes", "8,128,128", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert [d["type"] for d in doc["dimensions"]] == ["parallel", "parallel", "sequential"]
    tiled = [t for t in doc["tiles"] if t["kind"] == "instruction"]
    assert {t["name"] for t in tiled} == {"subtract", "broadcast", "reduce", "constant", "p0"}
    code, out, err = run_cli(capsys, "tile", str(DATA / "concat.hlo"), "--fusion", "fusion",
                             "--space", "--propagate", "input", "--instruction", "c",
                             "--input-tile", "root:0", "--format", "json")
    assert code == 0, err
    tiles = json.loads(out)["tiles"]
    assert tiles[1]["offsets"][1] == "tid_1 * ts_1 - 12"


def test_propagation_refusal_is_located(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "tile", str(DATA / "bitcast.hlo"), "--fusion", "fusion",
                             "--space", "--propagate", "input", "--instruction", "b",
                             "--input-tile", "root:0", "--format", "json")
    assert code == 2
    assert "b:" in err and "d0" in err and "Traceback" not in err



# --------------------------------------------------------------------------- the schema
@pytest.mark.parametrize("argv", [
    ["(d0) -> (d0 floordiv 4, d0 mod 4), domain: d0 in [0, 15]"],
    ["(d0, d1) -> (d0 * d1), domain: d0 in [0, 3], d1 in [0, 3]"],
    [str(DATA / "dot.hlo"), "--fusion", "fusion"],
    [str(DATA / "dot.hlo"), "--fusion", "fusion", "--sizes", "16,4,8", "--check",
     "--smem", "4096"],
    [str(DATA / "bitcast.hlo"), "--fusion", "fusion", "--valid-tilings"],
    [str(DATA / "bitcast.hlo"), "--fusion", "fusion", "--valid-tilings", "--count"],
    [str(DATA / "diamond.hlo"), "--fusion", "fusion", "--space", "--sizes", "8,32,32"],
    [str(DATA / "concat.hlo"), "--fusion", "fusion", "--space", "--propagate", "input",
     "--instruction", "c", "--input-tile", "root:0"],
])
def test_json_validates_against_the_schema(capsys: pytest.CaptureFixture[str],
                                           argv: list[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from importlib import resources

    schema = json.loads(resources.files("symidx").joinpath("schemas/tiles-1.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    code, out, err = run_cli(capsys, "tile", *argv, "--format", "json")
    assert code in (0, 2), err
    doc = json.loads(out)
    jsonschema.validate(doc, schema)
    bad = dict(doc, unexpected=1)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


# --------------------------------------------------------------------------- rank 12
def _analyse(name: str):  # type: ignore[no-untyped-def]
    from symidx.cli.inputs import load_module
    from symidx.tiling import analysis

    return analysis.analyze(analysis.fusion_computation(load_module(str(DATA / name)),
                                                        "fusion"))


def test_rank8_count_equals_the_flat_dnf_at_every_candidate() -> None:
    from symidx.tiling.valid import candidates, count_valid, valid_tilings

    t = _analyse("tensor_network_rank8.hlo")
    flat = t.constraints.flat()
    variables = [dim(i) for i in range(len(t.flat_sizes))]
    want = {c for c in itertools.product(*[candidates(n) for n in t.flat_sizes])
            if _flat_holds(flat, dict(zip(variables, c)))}
    assert set(valid_tilings(t)) == want
    assert count_valid(t)[0] == len(want) > 0


def test_rank12_tensor_network_is_analysed_and_counted() -> None:
    """openxla/xla#41173's shape of problem: 18 parameters, three bitcast disjunctions whose
    product has tens of thousands of disjuncts; symidx keeps them apart."""
    import numpy as np

    from symidx.tiling.valid import candidates, count_valid

    t = _analyse("tensor_network_rank12.hlo")
    assert len(t.flat_sizes) == 18
    n, total = count_valid(t)
    assert total == 2 ** 18
    # the whole grid at once (no grouping), evaluated with numpy: the same count
    axes = np.meshgrid(*[np.asarray(candidates(s)) for s in t.flat_sizes], indexing="ij")
    mask = t.constraints.evaluator([dim(i) for i in range(18)])([a.reshape(-1) for a in axes])
    assert int(mask.sum()) == n > 0


def test_a_group_too_large_is_undecided_exit_3(capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from symidx.tiling import valid

    monkeypatch.setattr(valid, "GROUP_LIMIT", 10)
    code, _, err = run_cli(capsys, "tile", str(DATA / "tensor_network_rank8.hlo"), "--fusion",
                           "fusion", "--valid-tilings", "--count", "--format", "json")
    assert code == 3 and "undecided" in err and "limit 10" in err


def test_check_reports_an_overrun_that_loads_an_unread_element(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A reversed slice: the last row tile overruns the output by two rows, which lands on
    row 0 of the parameter, a real element the map never reads. --check says so (exit 1)."""
    code, out, err = run_cli(capsys, "tile", str(DATA / "mixed.hlo"), "--fusion", "fusion",
                             "--sizes", "4,4", "--check", "--format", "json")
    assert code == 1, err
    by_name = {i["name"]: i for i in json.loads(out)["check"]["instructions"]}
    assert by_name["p1"]["covers"] and not by_name["p1"]["exact"]
    assert by_name["p1"]["first_extra"] == [0, 0]
    assert by_name["p0"]["covers"] and by_name["p0"]["exact"]
    assert by_name["p0"]["contiguous_elements"] == 4


def test_an_operand_no_tile_reads_is_listed_unread(capsys: pytest.CaptureFixture[str]) -> None:
    """slice(concat): the slice [13:43] never reaches the first operand; XLA refuses the
    shifted tiles of the second (its remaining size 17 is not a multiple of 5), symidx tiles
    them and --check proves the tiles cover exactly what is read."""
    code, out, err = run_cli(capsys, "tile", str(DATA / "slice_concat.hlo"), "--fusion",
                             "fusion", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["unread"] == [{"name": "p0", "path": "roots[0].operand(0).operand(0)"}]
    code, out, err = run_cli(capsys, "tile", str(DATA / "slice_concat.hlo"), "--fusion",
                             "fusion", "--sizes", "5", "--check", "--format", "json")
    assert code == 0, err
    check = json.loads(out)["check"]
    assert check["ok"] and {i["name"] for i in check["instructions"]} == \
        {"slice", "concat", "p1", "p2"}


def test_multi_output_fusion_xla_refuses_is_tiled_and_proven(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Roots that share no tile (XLA: "Unsupported case of multi-output fusion"): the extra
    output is computed by the tiles of the real root's path; --check proves every tiled
    instruction, the extra root among them, covered exactly."""
    code, out, err = run_cli(capsys, "tile", str(DATA / "multi_output.hlo"), "--fusion",
                             "fusion", "--sizes", "1,4", "--check", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["roots"] == ["broadcast", "abs"]
    check = doc["check"]
    assert check["ok"]
    assert {i["name"] for i in check["instructions"]} == {"broadcast", "abs", "p0"}


def test_strided_slice_propagation_scales_offsets_strides_and_bounds(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "tile", str(DATA / "strided_slice.hlo"), "--fusion",
                             "fusion", "--space", "--propagate", "input", "--instruction",
                             "s", "--input-tile", "root:0", "--format", "json")
    assert code == 0, err
    tile = json.loads(out)["tiles"][0]
    assert tile["offsets"][0].replace(" ", "") in ("tid_0*ts_0*3+1", "(tid_0*ts_0)*3+1")
    assert tile["strides"] == ["3", "1"]
    assert tile["upper_bounds"] == ["40", "8"]     # 13 * 3 + 1
    # and the fusion's symbolic tiling agrees, proven on concrete sizes
    code, out, err = run_cli(capsys, "tile", str(DATA / "strided_slice.hlo"), "--fusion",
                             "fusion", "--sizes", "4,8", "--check", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert {t["name"]: t["tile_strides"] for t in doc["tiled"]}["p0"] == [3, 1]
    assert doc["check"]["ok"]


def test_a_module_whose_root_is_a_fusion_is_told_to_name_it(capsys) -> None:
    """Without --fusion the entry computation is one fusion; when its root is a fusion the
    refusal says how to tile that fusion, and doing so works."""
    from symidx.cli import main as cli

    example = str(Path(__file__).resolve().parent.parent / "symidx/examples/layernorm.hlo")
    assert cli(["tile", example]) == 2
    err = capsys.readouterr().err
    assert "--fusion broadcast_add_fusion tiles that fusion" in err
    assert cli(["tile", example, "--fusion", "broadcast_add_fusion"]) == 0
