"""A corpus run under faults (issue 23): records exactly once, for one question (item 5);
reports and summaries that show outside text without obeying it (item 8); write failures
named (item 7); limits on the analysis of one module (item 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corpus_helpers import corpus, examples_copy, records, validator
from symidx.corpus.results import ResultsFile
from symidx.corpus.summary import Summary
from symidx.errors import SymidxError

# --- item 5: every module recorded once, for one question ----------------------------------


def test_resume_records_the_copies_a_stopped_run_did_not_write(tmp_path: Path) -> None:
    inputs = examples_copy(tmp_path / "in", ("mlp",))
    (inputs / "z_copy.hlo").write_text((inputs / "mlp.hlo").read_text())
    out = tmp_path / "r.jsonl"
    assert corpus(str(inputs), "--out", str(out))[0] == 0
    first, copy = records(out)
    # As if killed between the record and its copy.
    out.write_text(json.dumps(first) + "\n")
    code, _, err = corpus(str(inputs), "--out", str(out), "--resume")
    assert code == 0, err
    again = records(out)
    assert len(again) == 2 and again[1] == copy
    validator().validate(again[1])


def test_resume_records_a_file_added_later_that_repeats_a_recorded_text(
        tmp_path: Path) -> None:
    inputs = examples_copy(tmp_path / "in", ("mlp", "maxpool"))
    out = tmp_path / "r.jsonl"
    assert corpus(str(inputs), "--out", str(out))[0] == 0
    (inputs / "added.hlo").write_text((inputs / "mlp.hlo").read_text())
    code, _, err = corpus(str(inputs), "--out", str(out), "--resume")
    assert code == 0, err
    found = records(out)
    assert len(found) == 3
    added = found[-1]
    assert added["file"] == str(inputs / "added.hlo")
    assert added["duplicate_of"] == {"file": str(inputs / "mlp.hlo"), "module": 0}
    # and once more: nothing new
    assert corpus(str(inputs), "--out", str(out), "--resume")[0] == 0
    assert len(records(out)) == 3


@pytest.mark.parametrize("argv, message", [
    (["--direction", "input-to-output"], "the records answer every fusion output-to-input "
                                         "(semantics reads), this run asks every fusion "
                                         "input-to-output (semantics reads)"),
    (["--computation", "ENTRY"], "this run asks --computation ENTRY output-to-input"),
    (["--maps"], "the records were made without --maps, this run is with"),
    (["--assume-finite"], "this run asks every fusion output-to-input (semantics finite)"),
])
def test_resume_refuses_records_of_another_question(tmp_path: Path, argv: list[str],
                                                     message: str) -> None:
    inputs = examples_copy(tmp_path / "in", ("mlp",))
    out = tmp_path / "r.jsonl"
    assert corpus(str(inputs), "--out", str(out))[0] == 0
    before = out.read_text()
    examples_copy(inputs, ("maxpool",))
    code, _, err = corpus(str(inputs), "--out", str(out), "--resume", *argv)
    assert code == 2 and message in err and "r.jsonl:1:" in err
    assert out.read_text() == before


def test_a_second_run_on_the_same_results_file_is_refused(tmp_path: Path) -> None:
    inputs = examples_copy(tmp_path / "in", ("mlp",))
    out = tmp_path / "r.jsonl"
    with ResultsFile(str(out), resume=False):  # another run, still going
        code, _, err = corpus(str(inputs), "--out", str(out), "--resume")
    assert code == 2 and "another run is writing" in err
    assert out.read_text() == ""
    with ResultsFile(str(out), resume=True), \
            pytest.raises(SymidxError, match="another run is writing"):
        ResultsFile(str(out), resume=True)
    assert corpus(str(inputs), "--out", str(out), "--resume")[0] == 0  # the lock is gone


def test_the_summary_counts_what_is_in_the_file(tmp_path: Path) -> None:
    inputs = examples_copy(tmp_path / "in", ("mlp", "maxpool"))
    out = tmp_path / "r.jsonl"
    assert corpus(str(inputs), "--out", str(out))[0] == 0
    examples_copy(inputs, ("cumsum",))
    code, _, err = corpus(str(inputs), "--out", str(out), "--resume")
    assert code == 0
    assert "1 records written to" in err and "; it holds 3" in err
    assert "3 modules: 3 ok" in err
    assert Summary.of_file(str(out)).total == len(records(out)) == 3


# --- item 7: writes that fail ----------------------------------------------------------------


def test_a_results_file_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    inputs = examples_copy(tmp_path / "in", ("mlp",))
    code, _, err = corpus(str(inputs), "--out", "/dev/full")
    assert code == 2 and "cannot write /dev/full: No space left on device" in err


def test_a_report_that_cannot_be_written_is_refused_before_the_run(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    inputs = examples_copy(tmp_path / "in", ("mlp",))
    out = tmp_path / "r.jsonl"
    report = tmp_path / "missing" / "report.md"
    code, _, err = corpus(str(inputs), "--out", str(out), "--report", str(report))
    assert code == 2 and f"cannot write {report}" in err
    assert not out.exists()  # nothing was run


# --- item 8: outside text is shown, never obeyed ---------------------------------------------

HOSTILE_NAME = "a<script>alert(1)<\\script>|b\n![x](http:e.png)\x1b[2J.hlo"
HOSTILE_TEXT = 'HloModule m <img src=x onerror="alert(1)"> | `code` \x1b]0;owned\x07\n'


def test_the_markdown_report_and_the_summary_escape_names_and_module_text(
        tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / HOSTILE_NAME).write_text(HOSTILE_TEXT)
    report = tmp_path / "report.md"
    code, _, err = corpus(str(inputs / HOSTILE_NAME), "--out", str(tmp_path / "r.jsonl"),
                          "--report", str(report))
    assert code == 4, err  # its one module does not parse
    text = report.read_text()
    for raw in ("<script>", "<img", "onerror=\"", "](http", "\x1b", "\x07"):
        assert raw not in text, raw
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert all(line.endswith("|") for line in rows)  # no row split by a newline
    assert "&lt;script&gt;" in text
    assert "\x1b" not in err and "\x07" not in err
    assert "\\x1b[2J" in err  # shown, not obeyed


def test_the_html_report_escapes_names(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / HOSTILE_NAME).write_text(HOSTILE_TEXT)
    report = tmp_path / "report.html"
    assert corpus(str(inputs), "--out", str(tmp_path / "r.jsonl"), "--report",
                  str(report))[0] == 4
    text = report.read_text()
    assert "<script>" not in text and "<img src=x" not in text


# --- item 2: a module that takes too long stops itself, saying how far it got ----------------


def test_a_module_over_its_budget_is_an_error_record_saying_so(tmp_path: Path) -> None:
    from diamond import diamond

    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "diamond.hlo").write_text(diamond(200))
    out = tmp_path / "r.jsonl"
    code, _, err = corpus(str(inputs), "--out", str(out), "--computation", "ENTRY",
                          "--max-maps", "200")
    assert code == 4, err  # its one module failed
    [record] = records(out)
    assert record["status"] == "error"
    assert record["message"].startswith("ran out of the budget of 200 distinct maps after")
    validator().validate(record)


def test_the_summary_is_the_same_whatever_order_the_records_came_in() -> None:
    def record(k: int, message: str) -> dict:
        return {"status": "error", "message": message, "file": f"f{k}.hlo", "module": 0,
                "bytes": 10, "parse_seconds": 0.0, "analysis_seconds": 0.0,
                "unsupported": {f"op{k % 3}": 1}, "opaque": {}, "duplicate_of": None}

    found = [record(k, f"kind {k % 4}") for k in range(12)]
    forward, backward = Summary(), Summary()
    forward.add_all(found)
    backward.add_all(reversed(found))
    assert forward.text() == backward.text()
    assert forward.tables() == backward.tables()
