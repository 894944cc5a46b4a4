"""Whole computations through everything a real module holds (symidx.fusion.steps): loops,
conditionals, calls with tuples, asynchronous wrappers, collectives, tokens and host
transfers, checked against executing the computation (:mod:`reference_interpreter`, written
from the ops' definitions): every element an output element reads is in its maps, exactly
so unless the group is labelled an over-approximation; input-to-output is the inverse
relation; and the maps do not depend on how many places call a computation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from reference_interpreter import (
    execute,
    held_outside,
    is_integer,
    map_relation,
    provenance_known,
)

from symidx.analysis import ComputationMaps, computation_maps, instruction_maps
from symidx.fusion import Analysis, maps_between, parameter_maps
from symidx.hlo import HloComputation, TupleShape, parse_hlo
from symidx.hlo.leaves import leaf_count, leaves

DATA = Path(__file__).parent / "data"
MODULES = sorted((DATA / "flow").glob("*.hlo")) + sorted((DATA / "flow" / "real").glob("*.hlo")) \
    + [DATA / "hlo" / "scan_rnn.compiled.hlo"]


def arguments(comp: HloComputation, seed: int) -> list[object]:
    """Small random integers for integer (and pred) leaves; floats are never read."""
    rng = np.random.default_rng(seed)
    args: list[object] = []
    for p in comp.parameters:
        per_leaf = [rng.integers(-1, 4, size=leaf.dims) if is_integer(leaf) else None
                    for leaf in leaves(p.shape)]
        args.append(per_leaf if isinstance(p.shape, TupleShape) else per_leaf[0])
    return args


def check_record(comp: HloComputation, record: ComputationMaps, run) -> None:  # noqa: ANN001
    out_dims = leaves(comp.root.shape)[record.index].dims
    for group in record.groups:
        assert group.unsupported is None, group
        param = comp.parameters[group.index]
        leaf = group.leaf or 0
        param_dims = leaves(param.shape)[leaf].dims
        read = run.relation(group.index, record.index, leaf)
        whole = map_relation(group.maps, out_dims, param_dims)
        where = f"{comp.name} output {record.index} -> parameter {group.index} leaf {leaf}"
        assert np.isin(read, whole).all(), f"{where}: unsound"
        if group.opaque is not None:
            continue
        if not provenance_known(group.maps):  # a collective's participant: every one
            assert np.array_equal(whole, read), f"{where}: not exact"
            continue
        if any(v.map is not None and v.map.num_ranges for m in group.maps for v in m.rts):
            continue  # a scatter index held at a varying position: sound is what is checked
        exact = map_relation(group.maps, out_dims, param_dims, run)
        if held_outside(group.maps, run):
            assert np.isin(exact, read).all(), where
        else:
            assert np.array_equal(exact, read), f"{where}: not exact"


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_whole_computation_maps_match_execution(path: Path) -> None:
    module = parse_hlo(path.read_text(), source=path.name)
    comp = module.entry
    records = computation_maps(comp, "output_to_input")
    assert len(records) == leaf_count(comp.root.shape)
    for seed in range(3):
        run = execute(comp, arguments(comp, seed))
        for record in records:
            check_record(comp, record, run)


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_input_to_output_is_the_inverse_relation(path: Path) -> None:
    comp = parse_hlo(path.read_text()).entry
    backward = computation_maps(comp, "output_to_input")
    forward = computation_maps(comp, "input_to_output")
    for record in forward:
        leaf = record.leaf or 0
        param_dims = leaves(comp.parameters[record.index].shape)[leaf].dims
        for group in record.groups:
            out_dims = leaves(comp.root.shape)[group.index].dims
            (mine,) = [g for g in backward[group.index].groups
                       if g.index == record.index and (g.leaf or 0) == leaf]
            there = map_relation(mine.maps, out_dims, param_dims)
            back = map_relation(group.maps, param_dims, out_dims)
            # pair codes o * P + i against i * O + o
            n_param, n_out = int(np.prod(param_dims)), int(np.prod(out_dims))
            flipped = np.sort((back % n_out) * n_param + back // n_out)
            assert np.array_equal(flipped, there), (record.index, group.index)


def _flow(name: str) -> HloComputation:
    return parse_hlo((DATA / "flow" / name).read_text()).entry


def test_a_loop_passes_unchanged_values_through_exactly() -> None:
    records = computation_maps(_flow("while_loop.hlo"), "output_to_input")
    acc, xout, yr = records
    # acc is carried: an over-approximation over acc0, x (sliced) and the counter
    assert {g.index for g in acc.groups if g.maps} == {0, 1, 2}
    assert all(g.opaque == "while loop (loop-carried)" for g in acc.groups if g.maps)
    # x and y pass through unchanged: exact, and nothing else is read
    assert [(g.index, g.opaque) for g in xout.groups if g.maps] == [(2, None)]
    assert [str(m) for g in xout.groups for m in g.maps] == [
        "(d0) -> (d0 + 2),\ndomain:\nd0 in [0, 3]"]
    assert [(g.index, g.opaque) for g in yr.groups if g.maps] == [(3, None)]


def test_a_conditional_reads_its_index_and_every_branch() -> None:
    (record,) = computation_maps(_flow("conditional.hlo"), "output_to_input")
    texts = {g.index: [str(m).split(",\n")[0] for m in g.maps] for g in record.groups}
    assert texts == {0: ["(d0) -> ()"], 1: ["(d0) -> (d0 * 2)"], 2: ["(d0)[s0] -> (d0, s0)"],
                     3: ["(d0) -> (d0)"], 4: ["(d0) -> (-d0 + 2)"]}


def test_computation_maps_equal_the_fusion_maps() -> None:
    module = parse_hlo((DATA / "flow" / "call_tuples.hlo").read_text())
    fusion = module.entry.root
    fused = module.computation("fused")
    by_instruction = instruction_maps(fusion, "output_to_input")
    (record,) = computation_maps(fused, "output_to_input")
    assert [(g.index, g.leaf, g.maps) for g in by_instruction] == \
        [(g.index, g.leaf, g.maps) for g in record.groups]
    assert [g.leaf for g in record.groups] == [0, 1]  # a tuple parameter, leaf by leaf


def test_a_called_computation_is_analysed_once() -> None:
    module = parse_hlo((DATA / "flow" / "call_tuples.hlo").read_text())
    analysis = Analysis()
    callee = module.computation("callee")
    first = analysis.parameters_of(callee, 0)
    computation_maps(module.entry, "output_to_input", analysis=analysis)
    assert analysis.parameters_of(callee, 0) is first
    assert parameter_maps(callee, 0, analysis=analysis) == parameter_maps(callee, 0)


def test_maps_between_is_a_graph_query() -> None:
    comp = _flow("async_ops.hlo")
    found = maps_between(comp, "t", "cd")
    assert [str(m).split(",\n")[0] for m in found[0].maps] == ["(d0, d1) -> (d1, d0 mod 2)"]
    assert maps_between(comp, "cd", "t") == {}  # t does not feed cd
    graph = Analysis().graph(comp)
    assert graph.between("t", "x") >= {"t", "cpd", "agd", "done", "start", "x"}
    assert "y" not in graph.between("t", "x")


# --- the command line -------------------------------------------------------------------------


def run_cli(*argv: str) -> tuple[int, str, str]:
    import contextlib
    import io

    from symidx.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_cli_computation_text_and_json() -> None:
    import json

    path = str(DATA / "flow" / "while_loop.hlo")
    code, out, err = run_cli("maps", path, "--computation", "ENTRY", "--style", "xla")
    assert code == 0
    assert out.splitlines()[:3] == ["computation main output 0", "operand 0 (%start: s32[])",
                                    "over-approximation (while loop (loop-carried))"]
    assert "operand 3 (%y: f32[3])\n(not read by output 0)" in out
    assert "3 outputs of the root; this is the first (--output K" in err
    code, out, err = run_cli("maps", path, "--computation", "main", "--output", "all",
                             "--format", "json", "--style", "xla")
    data = json.loads(out)
    assert code == 0 and err == ""
    assert [c["output"] for c in data["computations"]] == [0, 1, 2]
    xout = data["computations"][1]["operands"]
    assert [g["operand"] for g in xout] == [0, 1, 2, 3]
    assert {k: xout[2][k] for k in ("operand", "name", "shape", "unsupported", "opaque")} \
        == {"operand": 2, "name": "x", "shape": "f32[8]", "unsupported": None, "opaque": None}
    assert [m["text"] for m in xout[2]["maps"]] == ["(d0) -> (d0 + 2), domain: d0 in [0, 3]"]
    assert data["computations"][0]["operands"][1]["opaque"] == "while loop (loop-carried)"
    code, out, _ = run_cli("maps", path, "--computation", "ENTRY", "--operand", "2",
                           "--direction", "input-to-output", "--format", "json")
    record, = json.loads(out)["computations"]
    assert record["input"] == 2 and [len(g["maps"]) for g in record["operands"]] == [1, 1, 0]


def test_cli_computation_usage_errors() -> None:
    path = str(DATA / "flow" / "while_loop.hlo")
    code, _, err = run_cli("maps", path, "--computation", "nowhere")
    assert code == 2 and "no computation named 'nowhere'" in err and "ENTRY" in err
    code, _, err = run_cli("maps", path, "--output", "all")
    assert code == 2 and "'all' as --operand or --output is for --computation" in err
    code, _, err = run_cli("maps", path, "--computation", "ENTRY", "--instruction", "acc")
    assert code == 2 and "--instruction and --computation exclude each other" in err
    code, _, err = run_cli("maps", path, "--computation", "ENTRY", "--output", "7")
    assert code == 2 and "has 3 output(s); there is no output 7" in err


def test_cli_no_verify_reads_a_misfit_as_an_over_approximation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY e {\n  p = f32[2,3] parameter(0)\n"
                   "  ROOT t = f32[2,3] transpose(p), dimensions={1,0}\n}\n")
    code, _, err = run_cli("maps", str(bad), "--computation", "ENTRY")
    assert code == 2 and f"{bad}:line 4, column 3: transpose %t:" in err
    code, out, _ = run_cli("maps", str(bad), "--computation", "ENTRY", "--no-verify",
                           "--style", "xla")
    assert code == 0
    assert out.splitlines()[2].startswith("over-approximation (shapes do not fit: transpose %t")
    assert out.splitlines()[3] == ("(d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 1], "
                                   "d1 in [0, 2], s0 in [0, 1], s1 in [0, 2]")


def test_cli_notes_when_there_is_nothing_to_analyse(tmp_path: Path) -> None:
    empty = tmp_path / "empty.hlo"
    empty.write_text("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                     "  ROOT t = () tuple()\n}\n")
    code, out, err = run_cli("maps", str(empty), "--computation", "ENTRY")
    assert (code, out) == (0, "") and "the root has no outputs: e reads nothing" in err
    code, out, err = run_cli("maps", str(empty), "--computation", "ENTRY", "--format", "json")
    assert code == 0 and '"computations": []' in out
    code, out, err = run_cli("maps", str(empty), "--all")
    assert (code, out) == (0, "") and "module m has no fusions; --computation ENTRY" in err


def test_a_scatter_index_past_the_end_reads_nothing() -> None:
    inside, outside, given = computation_maps(_flow("scatter_constant_index.hlo"),
                                              "output_to_input", output=None)
    updates = {r.index: r.groups[1] for r in (inside, outside, given)}
    # a known table of indices: one map per update row, each folding its index
    assert sorted(str(m).split(",\n")[0] for m in updates[0].maps) == [
        "(d0, d1) -> (0, d1)", "(d0, d1) -> (1, d1)"]
    assert all("d0 in [1, 1]" in str(m) for m in updates[0].maps)  # only row 1 is written
    assert [m.is_known_empty for m in updates[1].maps] == [True]  # index 5: skipped
    (held,) = updates[2].maps
    assert held.num_rts == 1 and not held.rts[0].clamped


def test_cli_checks_what_it_analyses_and_warns_about_the_rest(tmp_path: Path) -> None:
    module = tmp_path / "side.hlo"
    module.write_text("HloModule m\nENTRY e {\n  p = f32[2,3] parameter(0)\n"
                      "  bad = f32[2,3] transpose(p), dimensions={1,0}\n"
                      "  ROOT n = f32[2,3] negate(p)\n}\n")
    code, out, err = run_cli("maps", str(module), "--computation", "ENTRY", "--style", "xla")
    assert code == 0 and "(d0, d1) -> (d0, d1)" in out
    assert f"symidx: warning: {module}:line 4, column 3: transpose %bad: dimensions={{1,0}} " \
           f"of f32[2,3] give f32[3,2], but the instruction says f32[2,3]" in err
    code, _, err = run_cli("maps", str(module), "--instruction", "bad")
    assert code == 2 and f"{module}:line 4, column 3: transpose %bad" in err
    assert "Traceback" not in err


def test_cli_refuses_a_wrong_operand_count_whatever_it_analyses(tmp_path: Path) -> None:
    module = tmp_path / "arity.hlo"
    module.write_text("HloModule m\nENTRY e {\n  p0 = f32[2] parameter(0)\n"
                      "  a = f32[2] add(p0)\n  ROOT n = f32[2] negate(p0)\n}\n")
    for flags in ((), ("--all",), ("--computation", "ENTRY"), ("--no-verify",)):
        code, _, err = run_cli("maps", str(module), *flags)
        assert code == 2 and f"{module}:line 4, column 3: add %a: takes 2 operands, but " \
                              "has 1" in err, flags


def test_an_analysis_without_verification_labels_a_misfit() -> None:
    comp = parse_hlo("HloModule m\nENTRY e {\n  p = f32[2,3] parameter(0)\n"
                     "  ROOT t = f32[2,3] transpose(p), dimensions={1,0}\n}\n",
                     validate=False).entry
    import symidx.errors

    with pytest.raises(symidx.errors.HloValidationError, match="line 4, column 3: transpose"):
        computation_maps(comp, "output_to_input", analysis=Analysis())
    (record,) = computation_maps(comp, "output_to_input", analysis=Analysis(verify=False))
    assert record.groups[0].opaque.startswith("shapes do not fit: transpose %t:")


def test_every_op_left_to_the_sweep_has_its_steps() -> None:
    from symidx.fusion.steps import handled_opcodes
    from symidx.ops import HANDLED_BY_FUSION

    assert handled_opcodes() >= HANDLED_BY_FUSION
    # and the modules here use each of them, so that the twins above run through them
    used = {i.opcode for path in MODULES for c in parse_hlo(path.read_text()).computations
            .values() for i in c.instructions}
    assert sorted(HANDLED_BY_FUSION - used) == []
