"""``symidx batch`` answers every line (issue 23, item 4): a command that fails in a way
symidx did not foresee is that line's error answer and the next line is read; a command
that would read stdin (which holds the queries) is refused with the reason; a module file
changed since it was read is read again (item 9)."""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from symidx.cli import main
from symidx.cli.batch import answer, run


def _run_batch(lines: list[str], command_line, monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    out = io.StringIO()
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    monkeypatch.setattr("sys.stdout", out)
    assert run(argparse.Namespace(command_line=command_line)) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_command_that_raises_anything_is_its_line_s_answer_and_the_run_goes_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def flaky(argv: Sequence[str]) -> int:
        if argv[1] == "boom":
            raise OverflowError("Python int too large to convert to C long")
        return main(argv)

    lines = [json.dumps({"id": k, "args": ["format", m]}) for k, m in
             enumerate(["(d0) -> (d0), domain: d0 in [0, 3]", "boom",
                        "(d0) -> (d0 * 2), domain: d0 in [0, 1]"])]
    answers = _run_batch(lines, flaky, monkeypatch)
    assert [a["id"] for a in answers] == [0, 1, 2]
    assert [a["exit"] for a in answers] == [0, 70, 0]
    assert "internal error" in answers[1]["stderr"]
    assert "OverflowError: Python int too large" in answers[1]["stderr"]
    assert answers[2]["stdout"].startswith("(d0) -> (d0 * 2)")


def test_ten_thousand_lines_with_failures_among_them_are_all_answered(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_every_seventh(argv: Sequence[str]) -> int:
        if int(argv[1]) % 7 == 0:
            raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")
        print(argv[1])
        return 0

    lines = [json.dumps({"id": k, "args": ["x", str(k)]}) for k in range(10_000)]
    answers = _run_batch(lines, failing_every_seventh, monkeypatch)
    assert len(answers) == 10_000
    assert all(a["exit"] == (70 if a["id"] % 7 == 0 else 0) for a in answers)


def test_stdin_is_refused_in_batch_and_later_queries_are_answered(
        monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [json.dumps({"id": 1, "args": ["format", "-"]}),
             json.dumps({"id": 2, "args": ["maps", "-", "--all"]}),
             json.dumps({"id": 3, "args": ["format", "(d0) -> (d0), domain: d0 in [0, 3]"]})]
    answers = _run_batch(lines, main, monkeypatch)
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert answers[0]["exit"] == answers[1]["exit"] == 2
    assert "is '-' (read stdin), which batch cannot give a command" in answers[0]["stderr"]
    assert answers[2]["exit"] == 0


def test_a_command_cannot_read_the_queries_that_follow(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    def greedy(argv: Sequence[str]) -> int:
        print(repr(sys.stdin.read()))
        return 0

    lines = [json.dumps({"id": k, "args": ["x"]}) for k in range(3)]
    answers = _run_batch(lines, greedy, monkeypatch)
    assert [a["id"] for a in answers] == [0, 1, 2]
    assert all(a["stdout"] == "''\n" for a in answers)


def test_a_module_file_changed_since_it_was_read_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "m.hlo"
    path.write_text("HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n"
                    "  ROOT s = f32[4] slice(p), slice={[1:5]}\n}\n")
    query = json.dumps({"args": ["maps", str(path)]})
    first = answer(query, main)
    stat = path.stat()
    # the same size and the same modification time: only the contents differ
    path.write_text(path.read_text().replace("[1:5]", "[3:7]"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    second = answer(query, main)
    assert first["exit"] == second["exit"] == 0
    assert "d0 + 1" in first["stdout"] and "d0 + 3" in second["stdout"]


class FakeClock:
    """A clock that moves one second at each reading: limits are reached after a count of
    readings, never after real time."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("flag, clock, words", [
    ("timeout", "wall_clock", "time (5 s, batch --timeout)"),
    ("cpu_limit", "cpu_clock", "CPU time (5 s, batch --cpu-limit)")])
def test_a_line_past_batch_s_limit_is_answered_with_exit_3_and_the_next_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str, clock: str,
        words: str) -> None:
    from diamond import diamond

    import symidx._budget

    path = tmp_path / "d.hlo"
    path.write_text(diamond(200, size=37))
    lines = [json.dumps({"id": 1, "args": ["maps", str(path), "--computation", "ENTRY",
                                           "--cpu-limit", "0", "--max-maps", "0"]}),
             json.dumps({"id": 2, "args": ["format", "(d0) -> (d0), domain: d0 in [0, 3]"]})]
    out = io.StringIO()
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setattr(symidx._budget, clock, FakeClock())
    namespace = argparse.Namespace(command_line=main, timeout=0.0, cpu_limit=0.0)
    setattr(namespace, flag, 5.0)
    assert run(namespace) == 0
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["exit"] == 3
    assert first["stderr"].startswith(f"symidx: stopped: ran out of {words}")
    assert second["exit"] == 0


# --- signals (issue 35, item 5) ---------------------------------------------------------------


@pytest.mark.parametrize("signum, code, words", [
    (signal.SIGTERM, 143, "symidx: stopped by SIGTERM"),
    (signal.SIGINT, 130, "symidx: interrupted"),
    (signal.SIGHUP, 129, "symidx: stopped by SIGHUP")])
def test_a_signal_answers_the_line_under_way_and_ends_the_batch(
        monkeypatch: pytest.MonkeyPatch, signum: int, code: int, words: str) -> None:
    def signalled(argv: Sequence[str]) -> int:
        if argv[1] == "stop":
            os.kill(os.getpid(), signum)
            time.sleep(60)  # the handler raises in here
        print(argv[1])
        return 0

    lines = [json.dumps({"id": k, "args": ["x", word]})
             for k, word in enumerate(["one", "stop", "three"])]
    out = io.StringIO()
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    monkeypatch.setattr("sys.stdout", out)
    assert run(argparse.Namespace(command_line=signalled)) == code
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [a["id"] for a in answers] == [0, 1]  # the third line is never read
    assert answers[1]["exit"] == code and answers[1]["stderr"].strip() == words


def test_a_command_that_handles_the_signal_itself_does_not_keep_the_batch_going(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``corpus`` catches SIGTERM, stops its workers and returns 143: the batch answers
    its line with that and stops too (it went on reading lines)."""
    def corpus_like(argv: Sequence[str]) -> int:
        if argv[1] == "stop":
            from symidx.cli.signals import stopped_by_signals

            try:
                with stopped_by_signals():
                    os.kill(os.getpid(), signal.SIGTERM)
                    time.sleep(60)
            except KeyboardInterrupt:
                print("symidx: stopped by SIGTERM: r.jsonl holds ...", file=sys.stderr)
                return 143
        return 0

    lines = [json.dumps({"id": k, "args": ["x", word]}) for k, word in enumerate(["stop", "x"])]
    out = io.StringIO()
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    monkeypatch.setattr("sys.stdout", out)
    assert run(argparse.Namespace(command_line=corpus_like)) == 143
    (only,) = [json.loads(line) for line in out.getvalue().splitlines()]
    assert only["exit"] == 143 and "r.jsonl holds" in only["stderr"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs POSIX processes")
def test_sigterm_ends_a_batch_whose_corpus_query_is_running(tmp_path: Path) -> None:
    """End to end (issue 35): a corpus query whose worker hangs; SIGTERM to the batch
    answers that line (143) and the batch exits 143 without reading the next line."""
    import subprocess

    from corpus_faults import HANG

    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "hang.hlo").write_text(f"// {HANG}\nHloModule h\n"
                                             f"ENTRY e {{\n  ROOT p = f32[2] parameter(0)\n}}\n")
    started = tmp_path / "started"
    tests = Path(__file__).resolve().parent
    env = {**os.environ, "SYMIDX_CORPUS_TEST_HOOK": "corpus_faults:misbehave",
           "CORPUS_TEST_STARTED": str(started),
           "PYTHONPATH": os.pathsep.join([str(tests), str(tests.parent),
                                          os.environ.get("PYTHONPATH", "")])}
    lines = [{"id": 1, "args": ["corpus", str(tmp_path / "m"), "--out",
                                str(tmp_path / "r.jsonl"), "--jobs", "1"]},
             {"id": 2, "args": ["format", "(d0) -> (d0), domain: d0 in [0, 3]"]}]
    batch = subprocess.Popen([sys.executable, "-m", "symidx", "batch"], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert batch.stdin is not None
        batch.stdin.write(json.dumps(lines[0]) + "\n")
        batch.stdin.flush()
        for _ in range(1200):  # until the worker hangs on the module (a guard, not a time)
            if started.exists() or batch.poll() is not None:
                break
            time.sleep(0.1)
        assert started.exists()
        batch.stdin.write(json.dumps(lines[1]) + "\n")
        batch.stdin.flush()
        batch.send_signal(signal.SIGTERM)
        out, err = batch.communicate(timeout=120)
    finally:
        if batch.poll() is None:
            batch.kill()
    assert batch.returncode == 143, err
    (only,) = [json.loads(line) for line in out.splitlines()]
    assert only["id"] == 1 and only["exit"] == 143
    assert "stopped by SIGTERM" in only["stderr"]


# --- progress is never part of an answer (issue 35, item 7) ----------------------------------


def test_progress_never_enters_a_batch_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a loaded machine the progress line's delay passes before the work ends; it used
    to be printed (rates and all) into the answer's stderr when stderr was not a terminal.
    A clock racing an hour ahead at each reading stands for the slowest machine."""
    import symidx.cli.progress as progress_module

    data = Path(__file__).resolve().parent / "data"
    loop = data / "flow" / "while_loop.hlo"
    hours = [0.0]

    def racing() -> float:
        hours[0] += 3600.0
        return hours[0]

    monkeypatch.setattr(progress_module.time, "monotonic", racing)
    for args in (["maps", str(loop), "--computation", "ENTRY", "--output", "all"],
                 ["maps", str(loop), "--computation", "ENTRY", "--output", "all",
                  "--format", "json"],
                 ["maps", str(loop), "--all"]):
        reply = answer(json.dumps({"args": args}), main)
        assert reply["exit"] == 0, reply["stderr"]
        assert " of " not in reply["stderr"] and "/s" not in reply["stderr"], reply["stderr"]


def test_the_verify_progress_line_stays_off_a_stderr_that_is_no_terminal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from symidx.cli.mapverbs import ProgressLine

    monkeypatch.setattr("sys.stderr", io.StringIO())
    with ProgressLine("symidx verify", after=0.0) as progress:
        assert not progress._thread.is_alive()
