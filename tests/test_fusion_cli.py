"""``symidx maps --explain`` and ``--all``: text and JSON, and bad usage (exit 2)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from symidx.cli import main

DATA = Path(__file__).parent / "data"
SEED = str(DATA / "fusion" / "seed_transpose_add.hlo")
NESTED = str(DATA / "fusion" / "nested.hlo")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_explain_text_puts_a_path_under_each_map() -> None:
    code, out, _ = run("maps", SEED, "--explain", "--style", "xla")
    assert code == 0
    assert out.splitlines() == [
        "operand 0 (%p0: f32[1000,1000])",
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 999], d1 in [0, 999]",
        "path: a0 -> p0",
        "",
        "(d0, d1) -> (d1, d0), domain: d0 in [0, 999], d1 in [0, 999]",
        "path: a0 -> transpose_p0 -> p0"]


def test_explain_json_adds_origins_beside_maps() -> None:
    code, out, _ = run("maps", NESTED, "--explain", "--format", "json", "--output", "1")
    assert code == 0
    operand = json.loads(out)["operands"][0]
    assert operand["origins"] == [
        {"path": ["out", "fixed", {"name": "p0", "via": ["ds", "x"]}], "paths": 1}]
    assert len(operand["maps"]) == 1


def test_explain_for_a_plain_op_is_one_step() -> None:
    code, out, _ = run("maps", SEED, "--instruction", "a0", "--explain", "--style", "xla")
    assert code == 0
    assert "path: a0 -> transpose_p0" in out and "path: a0 -> p0" in out


def test_all_text_has_a_block_per_fusion_and_output() -> None:
    code, out, _ = run("maps", NESTED, "--all", "--style", "xla")
    assert code == 0
    headers = [line for line in out.splitlines() if line.startswith("fusion ")]
    assert headers == ["fusion inner", "fusion fixed", "fusion fusion output 0",
                       "fusion fusion output 1"]


def test_all_json_schema() -> None:
    code, out, _ = run("maps", NESTED, "--all", "--format", "json", "--style", "xla")
    assert code == 0
    doc = json.loads(out)
    assert (doc["module"], doc["direction"]) == ("nested", "output-to-input")
    first = doc["fusions"][0]
    assert {k: first[k] for k in ("instruction", "computation", "calls", "kind", "output")} \
        == {"instruction": "inner", "computation": "outer", "calls": "slicer",
            "kind": "kLoop", "output": 0}
    assert [(f["instruction"], f["output"]) for f in doc["fusions"]] == [
        ("inner", 0), ("fixed", 0), ("fusion", 0), ("fusion", 1)]
    assert doc["schema"] == "symidx.maps/1"
    assert [m["text"] for m in doc["fusions"][3]["operands"][0]["maps"]] == [
        "(d0) -> (d0 + 5), domain: d0 in [0, 9]"]


def test_all_input_to_output() -> None:
    code, out, _ = run("maps", NESTED, "--all", "--direction", "input-to-output",
                       "--format", "json", "--style", "xla")
    assert code == 0
    fusions = json.loads(out)["fusions"]
    assert [(f["instruction"], f["input"]) for f in fusions] == [
        ("inner", 0), ("inner", 1), ("fixed", 0), ("fixed", 1), ("fusion", 0), ("fusion", 1)]
    through_fixed = fusions[4]["operands"][1]  # p0 to output 1: the slice at the constant 5
    assert through_fixed["output"] == 1
    assert [m["text"] for m in through_fixed["maps"]] == [
        "(d0) -> (d0 - 5), domain: d0 in [5, 14]"]


def test_all_on_every_sample_has_no_unknown_indexing() -> None:
    for path in sorted((DATA / "hlo").glob("*.compiled.hlo")):
        code, out, _ = run("maps", str(path), "--all", "--format", "json")
        assert code == 0, path
        for fusion in json.loads(out)["fusions"]:
            assert all(g["unsupported"] is None for g in fusion["operands"]), path


def test_unknown_indexing_in_json_names_the_op() -> None:
    hlo = DATA / "fusion" / "unsupported.hlo"
    code, out, _ = run("maps", str(hlo), "--format", "json", "--style", "xla")
    assert code == 0
    operands = json.loads(out)["operands"]
    assert operands[1] == {"operand": 1, "name": "p1", "shape": "f32[4,4]", "leaf": None,
                           "maps": [], "unsupported": "frobnicate", "opaque": None}
    code, out, _ = run("maps", str(hlo))
    assert "unknown indexing (unsupported op: frobnicate)" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["--all", "--instruction", "fusion"], "--all and --instruction exclude each other"),
    (["--output", "3"], "fusion has 2 output(s); there is no output 3"),
    (["--all", "--operand", "7"], "there is no operand 7"),
])
def test_bad_usage_exits_2(argv: list[str], message: str) -> None:
    code, out, err = run("maps", NESTED, *argv)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


def test_bad_hlo_exits_2_with_a_location(tmp_path: Path) -> None:
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT p = f32[2 parameter(0)\n}\n")
    code, _, err = run("maps", str(bad), "--all")
    assert code == 2 and "line 3" in err
