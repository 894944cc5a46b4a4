"""Inputs that used to end in a traceback (issue 23, items 7 and 9) end in a located
error with exit code 2, or in the right answer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from symidx.cli import main

ROOT = Path(__file__).resolve().parent.parent
BIG = "9" * 5000  # past Python's 4,300-digit limit on reading an int


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _module(tmp_path: Path, body: str) -> str:
    path = tmp_path / "m.hlo"
    path.write_text(f"HloModule m\nENTRY e {{\n{body}\n}}\n")
    return str(path)


@pytest.mark.parametrize("body, column, message", [
    (f"  ROOT p = f32[{BIG}] parameter(0)", 16,
     "a dimension size: an integer of 5000 digits is too large (at most 4300)"),
    (f"  ROOT p = f32[4]{{{BIG}}} parameter(0)", 19, "an integer of 5000 digits is too large"),
    (f"  ROOT c = s32[] constant({BIG})", 27, "does not fit in 64 bits"),
    (f"  p = f32[4,3] parameter(0)\n  ROOT r = f32[4,3] reverse(p), dimensions={{{BIG}}}", None,
     "dimensions=: an integer of 5000 digits is too large"),
    (f"  p = f32[4] parameter(0)\n  i = s32[] parameter(1)\n  ROOT r = f32[2] "
     f"dynamic-slice(p, i), dynamic_slice_sizes={{{BIG}}}", None,
     "dynamic_slice_sizes=: an integer of 5000 digits is too large"),
])
def test_huge_integers_in_a_module_are_located_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, column: int,
        message: str) -> None:
    path = _module(tmp_path, body)
    code, _, err = _cli(capsys, "maps", path)
    assert code == 2
    where = f"{path}:line 3, column {column}: " if column else f"{path}:line "
    assert where in err and message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv, message", [
    (["f32[8,8]{1,0}", "--index", f"{BIG},1"],
     "line 1, column 1: --index: an integer of 5000 digits is too large"),
    ([f"f32[{BIG}]{{0}}"], "line 1, column 5: a dimension size: an integer of 5000 digits"),
    ([f"({BIG},2):(1,8)"], "line 1, column 2: an integer of 5000 digits is too large"),
])
def test_huge_integers_in_a_layout_are_located_errors(
        capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, _, err = _cli(capsys, "layout", *argv)
    assert code == 2 and message in err


def test_a_swizzle_above_bit_62_is_an_answer_not_an_overflow(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(capsys, "layout", "Sw<30,30,30> o (8,64):(64,1)", "--index", "7,63")
    # bits 60..89 of offsets below 512 are zero: the swizzle changes nothing here
    assert code == 0 and out.strip() == "511", err
    code, out, _ = _cli(capsys, "layout", "Sw<30,30,30> o (8,64):(64,1)")
    assert code == 0 and "511" in out


def test_non_utf8_input_is_located_by_line_and_column(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.hlo"
    path.write_bytes(b"HloModule m\nENTRY e {\n  p = f32[8] par\xffameter(0)\n}\n")
    code, _, err = _cli(capsys, "maps", str(path))
    assert code == 2
    assert f"{path}:line 3, column 17: not UTF-8: byte 0xff (byte offset 38)" in err
    assert err.rstrip().endswith("^")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("argv, named", [
    (["maps", "symidx/examples/mlp.hlo", "--all"], "cannot write to stdout"),
    (["layout", "f32[8,8]{1,0}", "--png", "/dev/full"], "cannot write /dev/full"),
])
def test_a_full_disk_is_an_error_naming_what_could_not_be_written(
        argv: list[str], named: str) -> None:
    if "--png" in argv:
        pytest.importorskip("matplotlib")
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    with open("/dev/full" if "--png" not in argv else os.devnull, "w") as stdout:
        done = subprocess.run([sys.executable, "-m", "symidx", *argv], cwd=ROOT, env=env,
                              stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=300)
    assert done.returncode == 2
    assert f"symidx: error: {named}: No space left on device" in done.stderr
    assert "Traceback" not in done.stderr
