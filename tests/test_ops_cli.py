"""``symidx maps``: formats, options, unknown indexing, errors."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from symidx.cli import main

GATHER = """HloModule m
ENTRY main {
  operand = f32[33,76,70] parameter(0)
  indices = s32[1806,2] parameter(1)
  ROOT r = f32[1806,7,8,4] gather(operand, indices), offset_dims={1,2,3},
    collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={7,8,4}
}
"""

MIXED = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  p0 = f32[4,6] parameter(0)
  p1 = f32[4,4] parameter(1)
  t = f32[6,4] transpose(p0), dimensions={1,0}
  s = f32[4,4] frobnicate(p1, p1)
  ROOT out = (f32[6,4], f32[4,4]) tuple(t, s)
}
ENTRY e {
  p0 = f32[4,6] parameter(0)
  p1 = f32[4,4] parameter(1)
  red = f32[4] reduce(p0, c), dimensions={1}, to_apply=add
  c = f32[] constant(0)
  ROOT fusion = (f32[6,4], f32[4,4]) fusion(p0, p1), kind=kLoop, calls=f
}
"""


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def gather_file(tmp_path: Path) -> str:
    path = tmp_path / "gather.hlo"
    path.write_text(GATHER)
    return str(path)


@pytest.fixture
def mixed_file(tmp_path: Path) -> str:
    path = tmp_path / "mixed.hlo"
    path.write_text(MIXED)
    return str(path)


def test_text_format(capsys, gather_file: str) -> None:
    code, out, _ = run(capsys, "maps", gather_file, "--style", "xla")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "operand 0 (%operand: f32[33,76,70])"
    assert lines[1].startswith("(d0, d1, d2, d3){rt0, rt1} -> (d1 + rt0, d2 + rt1, d3)")
    assert lines[2:5] == ["runtime variables:",
                          "rt0: parameter(1); (d0, d1, d2, d3) -> (d0, 0), domain: "
                          "d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3]",
                          "rt1: parameter(1); (d0, d1, d2, d3) -> (d0, 1), domain: "
                          "d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3]"]
    assert lines[5:7] == ["", "operand 1 (%indices: s32[1806,2])"]
    assert lines[7].startswith("(d0, d1, d2, d3)[s0] -> (d0, s0), domain:")


def test_json_format_and_operand_filter(capsys, gather_file: str) -> None:
    code, out, _ = run(capsys, "maps", gather_file, "--format", "json", "--operand", "1",
                       "--style", "xla")
    assert code == 0
    got = json.loads(out)
    assert got["schema"] == "symidx.maps/1"
    assert got["instruction"] == "r" and got["direction"] == "output-to-input"
    (group,) = got["operands"]
    assert {k: group[k] for k in ("operand", "name", "shape", "leaf", "unsupported",
                                  "opaque")} == {
        "operand": 1, "name": "indices", "shape": "s32[1806,2]", "leaf": None,
        "unsupported": None, "opaque": None}
    (m,) = group["maps"]
    assert m["text"] == ("(d0, d1, d2, d3)[s0] -> (d0, s0), domain: d0 in [0, 1805], "
                         "d1 in [0, 6], d2 in [0, 7], d3 in [0, 3], s0 in [0, 1]")
    assert m["dims"][0] == {"name": "d0", "lo": 0, "hi": 1805}
    assert m["symbols"] == [{"name": "s0", "lo": 0, "hi": 1}]
    assert m["results"] == ["d0", "s0"] and m["constraints"] == [] and m["special"] is None


def test_mlir_format(capsys, gather_file: str) -> None:
    code, out, _ = run(capsys, "maps", gather_file, "--style", "mlir", "--operand", "1")
    assert code == 0
    assert out.splitlines()[1] == "affine_map<(d0, d1, d2, d3)[s0] -> (d0, s0)>"


def test_input_to_output_lists_outputs(capsys, gather_file: str) -> None:
    code, out, _ = run(capsys, "maps", gather_file, "--direction", "input-to-output",
                       "--operand", "1", "--format", "json", "--style", "xla")
    assert code == 0
    got = json.loads(out)
    assert got["direction"] == "input-to-output" and got["input"] == 1
    (group,) = got["operands"]
    assert group["output"] == 0 and group["name"] == "r"
    assert [m["text"] for m in group["maps"]] == [
        "(d0, d1)[s0, s1, s2] -> (d0, s0, s1, s2), domain: d0 in [0, 1805], d1 in [0, 1], "
        "s0 in [0, 6], s1 in [0, 7], s2 in [0, 3]"]
    code, out, _ = run(capsys, "maps", gather_file, "--direction", "input-to-output",
                       "--operand", "1")
    assert out.splitlines()[0] == "output 0 (%r: f32[1806,7,8,4])"


def test_stdin(capsys, monkeypatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(GATHER))
    code, out, _ = run(capsys, "maps", "-", "--operand", "1")
    assert code == 0
    assert out.startswith("operand 1 (%indices: s32[1806,2])\n(d0, d1, d2, d3)[s0] -> (d0, s0),")


def test_fusion_output_and_unknown_indexing(capsys, mixed_file: str) -> None:
    code, out, _ = run(capsys, "maps", mixed_file, "--output", "0", "--format", "json",
                       "--style", "xla")
    assert code == 0
    got = json.loads(out)
    assert [m["text"] for m in got["operands"][0]["maps"]] == [
        "(d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 3]"]
    assert got["operands"][1]["maps"] == []
    code, out, _ = run(capsys, "maps", mixed_file, "--output", "1", "--format", "json")
    got = json.loads(out)
    assert got["operands"][1]["maps"] == []  # no fake map: the op is named
    assert got["operands"][1]["unsupported"] == "frobnicate"
    assert got["operands"][0]["maps"] == [] and got["operands"][0]["unsupported"] is None
    code, out, _ = run(capsys, "maps", mixed_file, "--output", "1")
    assert "unknown indexing (unsupported op: frobnicate)" in out
    assert "(not read by output 1)" in out


def test_fusion_input_to_output(capsys, mixed_file: str) -> None:
    code, out, _ = run(capsys, "maps", mixed_file, "--direction", "input-to-output",
                       "--operand", "1", "--format", "json")
    assert code == 0
    got = json.loads(out)
    assert [(g["maps"], g["unsupported"]) for g in got["operands"]] == [
        ([], None), ([], "frobnicate")]


def test_named_instruction(capsys, mixed_file: str) -> None:
    code, out, _ = run(capsys, "maps", mixed_file, "--instruction", "red", "--style", "xla")
    assert code == 0
    assert out.splitlines() == ["operand 0 (%p0: f32[4,6])",
                                "(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 5]",
                                "", "operand 1 (%c: f32[])",
                                "(d0) -> (), domain: d0 in [0, 3]"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--instruction", "nope"], "no instruction named 'nope'"),
    (["--operand", "7"], "there is no operand 7"),
    (["--output", "3"], "there is no output 3"),
    (["--physical", "--instruction", "red"], None),
])
def test_bad_requests_exit_2(capsys, mixed_file: str, argv: list[str], message: str | None
                             ) -> None:
    code, out, err = run(capsys, "maps", mixed_file, *argv)
    if message is None:  # --physical on default layouts works
        assert code == 0
        return
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err
    assert "Traceback" not in err


def test_unreadable_and_malformed_files_exit_2(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "maps", str(tmp_path / "missing.hlo"))
    assert code == 2 and "cannot read" in err and "Traceback" not in err
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT x = f32[2] negate(y)\n}\n")
    code, _, err = run(capsys, "maps", str(bad))
    assert code == 2 and "line 3" in err and "Traceback" not in err
