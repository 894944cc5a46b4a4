"""``symidx verify``: exit codes 0 equal, 1 different, 2 bad input, 3 undecided; --method,
--timeout, --trace, and a progress line while a long proof runs."""

from __future__ import annotations

import contextlib
import io
import time

import pytest

from symidx.cli import main
from symidx.cli.mapverbs import ProgressLine
from symidx.core.verify import has_isl, has_z3

DIGITS = ("(d0, d1, d2) -> (((d0 * 1000000 + d1 * 1000 + d2) floordiv 1000) mod 1000), "
          "domain: d0 in [0, 999999], d1 in [0, 999], d2 in [0, 999]")
MIDDLE = "(d0, d1, d2) -> (d1), domain: d0 in [0, 999999], d1 in [0, 999], d2 in [0, 999]"
LAST = "(d0, d1, d2) -> (d2), domain: d0 in [0, 999999], d1 in [0, 999], d2 in [0, 999]"
PROOF = pytest.mark.skipif(not (has_isl() or has_z3()), reason="neither islpy nor z3")


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@PROOF
def test_equal_and_different_on_a_huge_domain():
    code, out, _ = run(["verify", DIGITS, MIDDLE])
    assert code == 0 and out in ("equal (isl)\n", "equal (z3 proof)\n")
    code, out, _ = run(["verify", DIGITS, LAST])
    assert code == 1 and out.startswith("different at (")
    point = tuple(int(v) for v in out[len("different at ("):out.index(")")].split(", "))
    middle, last = point[1], point[2]
    assert middle != last and out.rstrip().endswith(f": ({middle}) vs ({last})")


@pytest.mark.parametrize("method, shown", [
    pytest.param("isl", "equal (isl)", marks=pytest.mark.skipif(not has_isl(), reason="isl")),
    pytest.param("smt", "equal (z3 proof)", marks=pytest.mark.skipif(not has_z3(),
                                                                    reason="z3")),
])
def test_the_method_can_be_chosen(method, shown):
    assert run(["verify", DIGITS, MIDDLE, "--method", method]) == (0, shown + "\n", "")


def test_undecided_exits_3_and_says_why():
    code, out, err = run(["verify", DIGITS, MIDDLE, "--method", "enumerate"])
    assert code == 3 and err == ""
    assert out == ("undecided: the domain box has 1000000000000 points, more than 2000000 to "
                   "enumerate\n")
    square = "(d0, d1) -> (d0 * d1), domain: d0 in [0, 99999], d1 in [0, 99999]"
    same = "(d0, d1) -> ((d0 + 1) * d1 - d1), domain: d0 in [0, 99999], d1 in [0, 99999]"
    code, out, _ = run(["verify", square, same])
    assert code == 3 and out.startswith("undecided: d0 * d1 is not Presburger arithmetic")
    other = "(d0, d1) -> (d1 * d0 + 1), domain: d0 in [0, 99999], d1 in [0, 99999]"
    code, out, _ = run(["verify", square, other])  # a difference is found at a sampled point
    assert code == 1 and out.startswith("different at (")


def test_a_timeout_is_honoured():
    a = "(d0, d1) -> (d0, d1), domain: d0 in [0, 999], d1 in [0, 1999]"
    b = "(d0, d1) -> (d0, d1 + d0 floordiv 1000), domain: d0 in [0, 999], d1 in [0, 1999]"
    code, out, _ = run(["verify", a, b, "--method", "enumerate", "--timeout", "0.000001"])
    assert code == 3 and out == ("undecided: out of wall-clock time (1e-06 s) while "
                                 "enumerating the domain\n")
    code, out, _ = run(["verify", a, b, "--method", "enumerate", "--cpu-limit", "0.000001"])
    assert code == 3 and out == ("undecided: out of CPU time (1e-06 s) while enumerating the "
                                 "domain\n")


@pytest.mark.parametrize("argv", [
    ["verify", DIGITS, MIDDLE, "--timeout", "0"],
    ["verify", DIGITS, MIDDLE, "--timeout", "-1"],
    ["verify", DIGITS, MIDDLE, "--method", "z4"],
    ["verify", DIGITS, "(d0) -> (d0 +"],
    ["verify", DIGITS],
])
def test_bad_input_exits_2(argv):
    code, out, err = run(argv)
    assert code == 2 and out == "" and err


@PROOF
def test_the_trace_of_the_digit_map_is_decided_whole():
    code, out, _ = run(["verify", "--trace", DIGITS])
    lines = out.splitlines()
    assert code == 0, out
    assert len(lines) >= 3 and all(line.startswith("step ") for line in lines[:-1])
    assert all(" equal (" in line for line in lines)
    assert lines[-1].startswith(f"{len(lines) - 1} step(s); simplified map: equal (")


def test_a_wrong_step_and_a_wrong_chain_exit_1(monkeypatch):
    import importlib

    from symidx import parse_map
    from symidx.core.expr import Mod, dim
    from symidx.core.interval import Interval

    simplifier = importlib.import_module("symidx.core.simplify")  # the package, not the function
    text = "(d0) -> (d0 mod 16), domain: d0 in [0, 14]"
    wrong = simplifier.Step("bogus", Mod(dim(0), 16), dim(0) + 1, ((dim(0), Interval(0, 14)),))
    result = simplifier.SimplifyResult(parse_map("(d0) -> (d0 + 1), domain: d0 in [0, 14]"),
                                       True, [wrong])
    monkeypatch.setattr(simplifier, "simplify", lambda m, **_: result)
    code, out, _ = run(["verify", "--trace", text, "--method", "enumerate"])
    assert code == 1
    assert out.splitlines() == [
        "step 1 bogus: d0 mod 16  =>  d0 + 1: different at (0): (0) vs (1)",
        "1 step(s); simplified map: different at (0): (0) vs (1)"]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_line_appears_after_the_delay_only():
    err = _Terminal()  # on a terminal only: never in a pipe, a log or a batch answer
    with contextlib.redirect_stderr(err):
        with ProgressLine("symidx verify", after=0.05, every=10) as progress:
            progress.tell("proving with z3")
            time.sleep(0.3)
        with ProgressLine("symidx verify", after=5):
            pass
    assert err.getvalue().splitlines() == ["symidx verify: proving with z3 (0 s so far)"]


# KNOWN EMPTY carries no arity: verify gives it the other map's (was: an internal isl error,
# "spaces don't match", exit 2, on every box too large to enumerate)
NEVER = ("(d0, d1) -> (d0 + d1), domain: d0 in [0, 3000000], d1 in [0, 3], "
         "(d1 * 2) mod 4 in [1, 1]")
SOMETIMES = ("(d0, d1) -> (d0), domain: d0 in [0, 3000000], d1 in [0, 10], "
             "d0 + d1 * 4000000 in [3000000, 3000000]")
EMPTY_METHODS = ["auto", pytest.param("isl", marks=pytest.mark.skipif(
    not has_isl(), reason="islpy not installed")), pytest.param("smt", marks=pytest.mark.skipif(
        not has_z3(), reason="z3 not installed"))]


@pytest.mark.parametrize("method", EMPTY_METHODS)
def test_verify_against_known_empty_answers_both_ways(method):
    code, simplified, _ = run(["simplify", NEVER])
    assert (code, simplified) == (0, "KNOWN EMPTY\n")
    for pair in ([NEVER, simplified], [simplified, NEVER], [NEVER, "KNOWN EMPTY"]):
        code, out, err = run(["verify", *pair, "--method", method])
        assert code == 0 and out.startswith("equal ("), (pair, out, err)
    # a map whose domain has one point: different there, both ways, with the image
    code, out, _ = run(["verify", SOMETIMES, "KNOWN EMPTY", "--method", method])
    assert (code, out) == (1, "different at (3000000, 0): (3000000) vs outside the domain\n")
    code, out, _ = run(["verify", "KNOWN EMPTY", SOMETIMES, "--method", method])
    assert (code, out) == (1, "different at (3000000, 0): outside the domain vs (3000000)\n")
