"""``symidx batch`` answers every line (issue 23, item 4): a command that fails in a way
symidx did not foresee is that line's error answer and the next line is read; a command
that would read stdin (which holds the queries) is refused with the reason; a module file
changed since it was read is read again (item 9)."""

from __future__ import annotations

import argparse
import io
import json
import os
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


def test_a_line_past_batch_timeout_is_answered_with_exit_3_and_the_next_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from diamond import diamond

    path = tmp_path / "d.hlo"
    # a size no other test uses: the maps (and what caches hold of them) are its own
    path.write_text(diamond(200, size=37))
    lines = [json.dumps({"id": 1, "args": ["maps", str(path), "--computation", "ENTRY",
                                           "--timeout", "0", "--max-maps", "0"]}),
             json.dumps({"id": 2, "args": ["format", "(d0) -> (d0), domain: d0 in [0, 3]"]})]
    out = io.StringIO()
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    monkeypatch.setattr("sys.stdout", out)
    assert run(argparse.Namespace(command_line=main, timeout=0.5)) == 0
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["exit"] == 3
    assert first["stderr"].startswith("symidx: stopped: ran out of time (0.5 s, batch --timeout)")
    assert second["exit"] == 0
