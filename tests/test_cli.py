"""The command line, called in-process through symidx.cli.main(argv)."""

from __future__ import annotations

import io
import re
import subprocess
import sys

import pytest

from symidx.cli import main

RESHAPE = "(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]"
COLLAPSE = "(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]"


def run(argv, stdin: str = "", monkeypatch=None):
    import contextlib

    out, err = io.StringIO(), io.StringIO()
    if monkeypatch is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_format_styles():
    code, out, _ = run(["format", RESHAPE])
    assert code == 0
    assert out == "(d0) -> (d0 floordiv 8, d0 mod 8),\ndomain:\nd0 in [0, 31]\n"
    assert run(["format", RESHAPE, "--style", "xla"])[1] == (
        "(d0) -> (d0 / 8, d0 mod 8), domain: d0 in [0, 31]\n")
    assert run(["format", RESHAPE, "--style", "mlir"])[1] == (
        "affine_map<(d0) -> (d0 floordiv 8, d0 mod 8)>\ndomain: d0 in [0, 31]\n")


def test_format_reads_stdin(monkeypatch):
    code, out, _ = run(["format", "-", "--style", "xla"], RESHAPE, monkeypatch)
    assert code == 0 and out.startswith("(d0) -> (d0 / 8")


def test_compose_is_second_after_first_and_simplified():
    code, out, _ = run(["compose", COLLAPSE, RESHAPE, "--style", "xla"])
    assert code == 0
    assert out == "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 7]\n"
    raw = run(["compose", COLLAPSE, RESHAPE, "--style", "xla", "--no-simplify"])[1]
    assert "/ 8" in raw


def test_simplify_and_explain():
    text = ("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], "
            "d1 in [0, 14]")
    assert run(["simplify", text, "--style", "xla"])[1] == (
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]\n")
    code, out, _ = run(["simplify", text, "--explain", "--style", "xla"])
    assert code == 0
    assert "constant_by_range: d1 / 16  =>  0" in out
    assert "mod_single_period: d1 mod 16  =>  d1" in out
    assert out.rstrip().endswith("(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]")
    assert "1 round(s), 2 rewrite step(s)" in out
    assert re.search(r"^  mod_single_period +1 / 1$", out, re.M)
    assert re.search(r"^  simplify_results +1 / 2$", out, re.M)
    assert "budget: finished within it" in out


def test_simplify_explain_reports_a_budget_that_ran_out():
    text = ("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], "
            "d1 in [0, 14]")
    code, out, _ = run(["simplify", text, "--explain", "--style", "xla", "--max-steps", "1"])
    assert code == 0
    assert "budget exhausted: rewrite steps (1 per pass) in simplify_results" in out
    # correct but less simple: one of the two rewrites made
    assert out.rstrip().endswith(
        "(d0, d1) -> (d0, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]")
    assert run(["simplify", text, "--max-steps", "-1"])[0] == 2


def test_verify_exit_codes():
    a = "(d0, d1) -> ((d0 * 16 + d1) floordiv 8), domain: d0 in [0, 3], d1 in [0, 15]"
    b = "(d0, d1) -> (d0 * 2 + d1 floordiv 8), domain: d0 in [0, 3], d1 in [0, 15]"
    c = "(d0, d1) -> (d0 * 2 + d1 floordiv 4), domain: d0 in [0, 3], d1 in [0, 15]"
    assert run(["verify", a, b]) == (0, "equal (exhaustive)\n", "")
    code, out, _ = run(["verify", a, c])
    assert code == 1 and out == "different at (0, 4): (0) vs (1)\n"


@pytest.mark.parametrize("argv, where", [
    (["format", "(d0) -> (d0 +), domain: d0 in [0, 3]"], "line 1, column 14"),
    (["simplify", "(d0) -> (d0)\ndomain:\nd0 in [0, ]"], "line 3, column 11"),
    (["compose", RESHAPE, "(d0) -> (d0), domain: d0 in [0, 3]"], "cannot compose"),
    (["verify", RESHAPE, "nonsense"], "line 1, column 1"),
])
def test_bad_input_is_one_message_and_exit_2(argv, where):
    code, out, err = run(argv)
    assert code == 2 and out == ""
    assert where in err and "Traceback" not in err
    assert err.startswith("symidx: error: ")


def test_usage_errors_exit_2():
    code, _, err = run(["format"])
    assert code == 2 and "usage:" in err
    code, _, err = run(["frobnicate"])
    assert code == 2
    assert run(["--help"])[0] == 0


def test_python_dash_m_entry_point():
    proc = subprocess.run([sys.executable, "-m", "symidx", "format", RESHAPE, "--style", "xla"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("(d0) -> (d0 / 8, d0 mod 8)")
    bad = subprocess.run([sys.executable, "-m", "symidx", "format", "(d0) -> ("],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_verify_trace_checks_every_step():
    text = ("(d0, d1) -> (((d1 * 2 + d0 floordiv 64) mod 3) * 256 + (d0 mod 64) * 4 + "
            "((d1 * 128 + d0) floordiv 192) * 768), domain: d0 in [0, 127], d1 in [0, 3071]")
    code, out, _ = run(["verify", "--trace", text, "--method", "enumerate"])
    lines = out.splitlines()
    assert code == 0 and len(lines) == 3
    assert all(line.endswith("equal (exhaustive)") for line in lines)
    assert lines[0].startswith("step 1 sum_recombine_div_mod: ")
    assert lines[-1] == "2 step(s); simplified map: equal (exhaustive)"
    assert run(["verify", "--trace", text, text])[0] == 2
    assert run(["verify", text])[0] == 2
