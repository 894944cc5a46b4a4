"""Every analysis is bounded (issue 23, item 2): ``maps`` (and the API) take a time limit
and a budget of distinct maps; past either they stop with exit code 3 and say how far they
got. The reproducer is the 200-level diamond of ``tests/diamond.py``: without a limit it
ran for more than ten CPU-minutes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from diamond import diamond

import symidx
from symidx.analysis import computation_maps, find_computation, module_fusion_maps
from symidx.cli import main
from symidx.errors import ArgumentTypeError, LimitReached, SymidxError
from symidx.fusion import Analysis, Limits
from symidx.hlo import parse_hlo
from symidx.ops import OUTPUT_TO_INPUT

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def diamond_200(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("diamond") / "diamond200.hlo"
    path.write_text(diamond(200))
    return path


def test_the_diamond_is_what_the_issue_describes() -> None:
    text = diamond(200)
    assert 40_000 <= len(text) <= 48_000  # "a 44 KB module"
    module = parse_hlo(text)
    ops = [i.opcode for i in module.entry.instructions]
    assert ops.count("reverse") == ops.count("concatenate") == ops.count("add") == 200
    assert ops.count("slice") == 400


def test_maps_stops_at_its_budget_of_distinct_maps_with_exit_3(
        diamond_200: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["maps", str(diamond_200), "--computation", "ENTRY", "--max-maps", "300"])
    out, err = capsys.readouterr()
    assert code == 3 and out == ""
    assert err.startswith("symidx: stopped: ran out of the budget of 300 distinct maps "
                          "after holding 301 distinct maps (")
    assert "instructions of main swept output-to-input from x200" in err


def test_maps_that_run_out_of_memory_stop_with_one_line_and_exit_3(
        diamond_200: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A memory limit the machine sets (ulimit, a container) is said as the others are:
    one line, exit code 3, no traceback."""
    import symidx.fusion.sweep as sweep

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(sweep, "_extend", exhausted)
    code = main(["maps", str(diamond_200), "--computation", "ENTRY"])
    out, err = capsys.readouterr()
    assert code == 3 and out == ""
    assert err == ("symidx: stopped: ran out of memory (a smaller --max-maps holds fewer "
                   "maps at once)\n")


class FakeClock:
    """A clock that moves one second at each reading: a limit of N seconds is reached
    after a count of readings, the same however busy the machine is."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("flags, clock, words", [
    (["--cpu-limit", "20"], "cpu_clock", "CPU time (20 s)"),
    (["--timeout", "20", "--cpu-limit", "0"], "wall_clock", "wall-clock time (20 s)")])
def test_maps_stops_at_its_time_limit_with_exit_3(
        diamond_200: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, flags: list[str], clock: str, words: str) -> None:
    import symidx._budget

    monkeypatch.setattr(symidx._budget, clock, FakeClock())
    code = main(["maps", str(diamond_200), "--computation", "ENTRY", *flags,
                 "--max-maps", "0"])
    out, err = capsys.readouterr()
    assert code == 3 and out == ""
    assert err.startswith(f"symidx: stopped: ran out of {words} after holding ")
    assert len(err.strip().splitlines()) == 1


def test_the_default_limit_counts_cpu_time_not_the_wall_clock(
        diamond_200: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A wall clock that races ahead (a machine busy with other work) does not stop an
    analysis under the default limits: only CPU time counts (issue 35)."""
    import symidx._budget

    hours = FakeClock()
    hours.now = 0.0
    monkeypatch.setattr(symidx._budget, "wall_clock", lambda: hours() * 3600)
    code = main(["maps", str(diamond_200), "--computation", "ENTRY"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("computation main output 0")


def test_a_small_diamond_answers_within_the_default_limits(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "d.hlo"
    path.write_text(diamond(12))
    assert main(["maps", str(path), "--computation", "ENTRY"]) == 0
    assert capsys.readouterr().out.startswith("computation main output 0\noperand 0")


def test_the_200_level_diamond_answers_within_the_default_limits(
        diamond_200: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["maps", str(diamond_200), "--computation", "ENTRY"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("computation main output 0")
    assert "distinct maps replaced by their bounding box" in out


def test_the_api_takes_the_same_limits(diamond_200: Path) -> None:
    comp = find_computation(parse_hlo(diamond_200.read_text()), "ENTRY")
    with pytest.raises(LimitReached) as caught:
        computation_maps(comp, OUTPUT_TO_INPUT, output=0, max_maps=500)
    assert caught.value.limit == "the budget of 500 distinct maps"
    assert "instructions of main" in caught.value.done
    analysis = Analysis(max_maps=500)
    with pytest.raises(LimitReached):
        computation_maps(comp, OUTPUT_TO_INPUT, output=0, analysis=analysis)
    with pytest.raises(LimitReached, match=r"ran out of wall-clock time \(0.01 s\)"):
        computation_maps(comp, OUTPUT_TO_INPUT, output=0, timeout=0.01)
    with pytest.raises(LimitReached, match=r"ran out of CPU time \(0.01 s\)"):
        computation_maps(comp, OUTPUT_TO_INPUT, output=0, cpu_limit=0.01)


def test_limits_refuse_nonsense() -> None:
    with pytest.raises(SymidxError, match="timeout must be a positive number"):
        Limits(timeout=0)
    with pytest.raises(SymidxError, match="CPU limit must be a positive number"):
        Limits(cpu_limit=-1)
    with pytest.raises(SymidxError, match="max_maps must be at least 1"):
        Limits(max_maps=0)
    with pytest.raises(SymidxError):
        Limits(timeout=float("nan"))


@pytest.mark.parametrize("call, message", [
    (lambda: computation_maps("ENTRY", OUTPUT_TO_INPUT),
     "computation_maps: comp must be of type HloComputation, not str"),
    (lambda: module_fusion_maps("HloModule m", OUTPUT_TO_INPUT),
     "module_fusion_maps: module must be of type HloModule, not str"),
    (lambda: find_computation(None, "ENTRY"),
     "find_computation: module must be of type HloModule, not NoneType"),
    (lambda: parse_hlo(b"HloModule m"), "parse_hlo: text must be of type str, not bytes"),
    (lambda: symidx.simplify("(d0) -> (d0)"),
     "simplify: m must be of type IndexingMap, not str"),
    (lambda: symidx.compose("a", "b"), "compose: first must be of type IndexingMap, not str"),
    (lambda: symidx.print_map({}), "print_map: m must be of type IndexingMap, not dict"),
    (lambda: symidx.output_to_input("add"),
     "output_to_input: instr must be of type HloInstruction, not str"),
])
def test_wrong_argument_types_are_named_not_attribute_errors(call, message: str) -> None:
    with pytest.raises(ArgumentTypeError) as caught:
        call()
    assert str(caught.value) == message
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, SymidxError)


# --- Ctrl-C (item 7) -------------------------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_ctrl_c_in_maps_exits_130_with_one_line(tmp_path: Path) -> None:
    deep = tmp_path / "deep.hlo"
    deep.write_text(diamond(4000))  # a minute of CPU: still at work when interrupted
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.Popen([sys.executable, "-m", "symidx", "maps", str(deep),
                            "--computation", "ENTRY", "--cpu-limit", "0", "--max-maps", "0"],
                           cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 120
        while run.poll() is None and _cpu_seconds(run.pid) < 2.0 and time.monotonic() < end:
            time.sleep(0.1)  # well into the analysis
        assert run.poll() is None
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=180)  # a busy machine is slow to answer
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130
    assert err.decode().strip() == "symidx: interrupted"
    assert out == b""


# --- the simplifier's budget (item 9) --------------------------------------------------------


def test_an_exhausted_simplifier_budget_is_said_without_explain(
        capsys: pytest.CaptureFixture[str]) -> None:
    text = ("(d0, d1) -> ((d0 * 4 + d1) floordiv 4, (d0 * 4 + d1) mod 4), "
            "domain: d0 in [0, 7], d1 in [0, 3]")
    assert main(["simplify", "--max-steps", "1", text]) == 0
    out, err = capsys.readouterr()
    assert "symidx: note: the simplifier's budget ran out (rewrite steps (1 per pass)" in err
    assert out.startswith("(d0, d1) -> (")
    assert main(["simplify", text]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.startswith("(d0, d1) -> (d0, d1)")


def test_a_command_deadline_stops_an_analysis_without_a_signal() -> None:
    """``batch --timeout`` also sets a deadline every analysis checks where maps compose, so
    a lost timer signal (its exception raised inside a finaliser is only printed) cannot
    let a line run on without end."""
    from symidx.fusion.sweep import command_deadline

    module = parse_hlo(diamond(200, size=29))  # a size of its own: nothing cached
    with command_deadline(0.2, "time (0.2 s, a test)"), \
            pytest.raises(LimitReached, match=r"time \(0\.2 s, a test\)"):
        computation_maps(module.entry, "output_to_input")
