"""symidx corpus with the local engine: finding and splitting modules, the record of each
(checked against what the input files say, by hand, and against the published schema),
the results file and --resume, time limits and crashed workers, the summary and report."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from corpus_helpers import (
    DATA,
    EXAMPLES,
    EXIT,
    HOOK,
    KILL,
    SPIN,
    TIMING,
    by_place,
    corpus,
    examples_copy,
    misbehaving,
    records,
    validator,
)
from symidx.cli import main
from symidx.corpus import Options, Task, analyse, find_files, scan, split_sections
from symidx.corpus.results import ResultsFile
from symidx.corpus.summary import Summary, error_kind
from symidx.errors import SymidxError

LIT = DATA / "lit_split.txt"


def lit_records() -> dict[int, dict]:
    text = LIT.read_text()
    return {s.index: analyse(Task(str(LIT), s.index, s.line, s.text), Options())
            for s in split_sections(text)}


# --- finding and splitting ---------------------------------------------------------------------


def test_sections_are_numbered_in_the_file_and_comment_only_ones_are_not_modules() -> None:
    sections = split_sections(LIT.read_text())
    # Sections 0..5 are separated by five '// -----' lines (one with text after its
    # dashes); section 2 holds only comments. Lines counted in the file by hand.
    assert [(s.index, s.line) for s in sections] == [(0, 1), (1, 19), (3, 31), (4, 40), (5, 56)]
    assert sections[0].text.startswith("// RUN:")
    assert "HloModule broken" in sections[2].text
    assert not [line for s in sections for line in s.text.splitlines()
                if line.startswith("// -----")]


def test_a_file_without_separators_is_one_module_exactly_as_it_stands() -> None:
    text = (EXAMPLES / "mlp.hlo").read_text()
    [section] = split_sections(text)
    assert (section.index, section.line, section.text) == (0, 1, text)
    assert split_sections("// only a comment\n\n") == []


def test_folders_are_searched_recursively_for_hlo_txt_and_gz(tmp_path: Path) -> None:
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    text = (EXAMPLES / "mlp.hlo").read_text()
    (tmp_path / "a.hlo").write_text(text)
    (tmp_path / "sub" / "b.txt").write_text(text.replace("jit_mlp", "jit_b"))
    (tmp_path / "sub" / "deeper" / "c.hlo.gz").write_bytes(
        gzip.compress(text.replace("jit_mlp", "jit_c").encode()))
    (tmp_path / "notes.md").write_text("not a module")
    (tmp_path / "d.json").write_text("{}")
    found = find_files([str(tmp_path)])
    assert found == [str(tmp_path / "a.hlo"), str(tmp_path / "sub" / "b.txt"),
                     str(tmp_path / "sub" / "deeper" / "c.hlo.gz")]
    refs = scan(found)
    assert len(refs) == 3 and len({r.sha256 for r in refs}) == 3
    # A file named explicitly is read whatever its name; each file once.
    assert find_files([str(tmp_path / "d.json"), str(tmp_path / "a.hlo"),
                       str(tmp_path)])[:2] == [str(tmp_path / "d.json"),
                                               str(tmp_path / "a.hlo")]
    assert len(find_files([str(tmp_path / "a.hlo"), str(tmp_path)])) == 3
    assert find_files([str(tmp_path / "**" / "*.txt")]) == [str(tmp_path / "sub" / "b.txt")]


def test_paths_that_name_nothing_are_errors(tmp_path: Path) -> None:
    with pytest.raises(SymidxError, match="no such file or folder"):
        find_files([str(tmp_path / "missing.hlo")])
    with pytest.raises(SymidxError, match="no file matches"):
        find_files([str(tmp_path / "*.hlo")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(SymidxError, match="no .*hlo.* file under"):
        find_files([str(tmp_path / "empty")])


def test_the_same_text_twice_is_one_module_with_a_duplicate(tmp_path: Path) -> None:
    text = (EXAMPLES / "mlp.hlo").read_text()
    (tmp_path / "a.hlo").write_text(text)
    (tmp_path / "b.hlo").write_text("// -----\n" + text)
    [ref] = scan(find_files([str(tmp_path)]))
    assert (ref.file, ref.index, ref.line) == (str(tmp_path / "a.hlo"), 0, 1)
    assert ref.duplicates == ((str(tmp_path / "b.hlo"), 1, 2),)


# --- the record of one module ------------------------------------------------------------------


def test_records_of_a_lit_file_say_what_each_module_is() -> None:
    found = lit_records()
    ok, headerless, broken, invalid, mixed = (found[k] for k in (0, 1, 3, 4, 5))
    assert ok["status"] == "ok" and ok["message"] is None and ok["name"] == "transpose_add"
    assert ok["counts"] == {"computations": 2, "instructions": 5, "fusions": 1, "groups": 1,
                            "maps": 1, "invalid": 0}
    # XLA reads a module without the HloModule line: one computation, the entry.
    assert headerless["status"] == "ok"
    assert headerless["counts"]["instructions"] == 2 and headerless["counts"]["fusions"] == 0
    # Locations are the file's own lines (the ')' missing on line 36 is seen on line 37).
    assert broken["status"] == "parse-error"
    assert broken["message"].startswith(f"{LIT}:line 37, column 1: ")
    assert broken["counts"] is None and broken["analysis_seconds"] is None
    # An instruction XLA's verifier rejects stops the analysis where it stands.
    assert invalid["status"] == "error"
    assert invalid["message"].startswith(f"{LIT}:line 46, column 3: concatenate %cat")
    assert invalid["counts"]["instructions"] == 6 and "maps" not in invalid["counts"]
    assert mixed["status"] == "ok"
    assert mixed["unsupported"] == {"frobnicate": 2}
    assert mixed["opaque"] == {"custom-call MyKernel": 1}
    assert mixed["counts"]["groups"] == 3 and mixed["counts"]["maps"] == 1


def test_a_record_names_its_module_by_content() -> None:
    import hashlib

    section = split_sections(LIT.read_text())[0]
    record = analyse(Task("x.hlo", 0, 1, section.text), Options())
    assert record["sha256"] == hashlib.sha256(section.text.encode()).hexdigest()
    assert record["bytes"] == len(section.text.encode())


def test_with_maps_the_record_holds_what_symidx_maps_prints(tmp_path: Path) -> None:
    import contextlib
    import io

    path = EXAMPLES / "attention.hlo"
    for extra, options in (([], Options(maps=True)),
                           (["--computation", "ENTRY", "--direction", "input-to-output"],
                            Options(maps=True, computation="ENTRY",
                                    direction="input-to-output"))):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            assert main(["maps", str(path), "--format", "json",
                         *(extra or ["--all"])]) == 0
        record = analyse(Task(str(path), 0, 1, path.read_text()), options)
        assert record["maps"] == json.loads(out.getvalue())
        maps = [m for f in record["maps"].get("fusions", record["maps"].get("computations"))
                for g in f["operands"] for m in g["maps"]]
        assert record["counts"]["maps"] == len(maps) > 0


def test_every_record_validates_against_the_schema(tmp_path: Path) -> None:
    check = validator()
    for options in (Options(), Options(maps=True), Options(computation="ENTRY", maps=True),
                    Options(direction="input-to-output", maps=True)):
        for path in [*sorted(EXAMPLES.glob("*.hlo")), LIT]:
            for s in split_sections(path.read_text()):
                check.validate(analyse(Task(str(path), s.index, s.line, s.text), options))
    bad = lit_records()[0] | {"status": "ok", "message": "not null for ok"}
    assert not check.is_valid(bad)
    assert not check.is_valid(lit_records()[0] | {"extra": 1})


def test_a_missing_computation_is_an_error_of_that_module() -> None:
    text = (EXAMPLES / "mlp.hlo").read_text()
    record = analyse(Task("m.hlo", 0, 1, text), Options(computation="nowhere"))
    assert record["status"] == "error" and "no computation named 'nowhere'" in record["message"]


# --- runs, the results file and --resume -------------------------------------------------------


def test_a_run_writes_one_record_per_module_and_resume_skips_them(tmp_path: Path) -> None:
    inputs = examples_copy(tmp_path / "in")
    shutil.copy(LIT, inputs / "lit_split.txt")
    out = tmp_path / "r.jsonl"
    code, stdout, err = corpus(str(inputs), "--out", str(out), "--jobs", "2")
    assert code == 1 and stdout == ""  # some modules failed (1 parse-error, 1 error)
    found = records(out)
    expected = {(str(p), s.index) for p in inputs.iterdir()
                for s in split_sections(p.read_text())}
    assert set(by_place(found)) == expected and len(found) == len(expected) == 17
    check = validator()
    for record in found:
        check.validate(record)
    # The same records as the analysis run in this process.
    inline = {(str(p), s.index): analyse(Task(str(p), s.index, s.line, s.text), Options())
              for p in inputs.iterdir() for s in split_sections(p.read_text())}
    assert by_place(found) == by_place(list(inline.values()))
    assert "17 modules: 15 ok, 1 parse-error, 1 error" in err
    # Again with --resume: nothing to do, nothing written.
    code, _, err = corpus(str(inputs), "--out", str(out), "--resume")
    assert code == 1 and len(records(out)) == 17  # the results hold those failures still
    assert "17 already recorded, 0 to analyse" in err


def test_without_resume_existing_results_are_never_overwritten(tmp_path: Path) -> None:
    inputs = examples_copy(tmp_path / "in", ("mlp",))
    out = tmp_path / "r.jsonl"
    assert corpus(str(inputs), "--out", str(out))[0] == 0
    before = out.read_text()
    code, _, err = corpus(str(inputs), "--out", str(out))
    assert code == 2 and "already holds results: --resume" in err
    assert out.read_text() == before


def test_a_killed_run_loses_only_what_was_in_flight(tmp_path: Path) -> None:
    inputs = examples_copy(tmp_path / "in")
    out = tmp_path / "r.jsonl"
    assert corpus(str(inputs), "--out", str(out), "--jobs", "2")[0] == 0
    full = by_place(records(out))
    lines = out.read_text().splitlines(keepends=True)
    # As if killed while writing the tenth record: nine whole lines and half of one.
    out.write_text("".join(lines[:9]) + lines[9][: len(lines[9]) // 2])
    code, _, err = corpus(str(inputs), "--out", str(out), "--resume", "--jobs", "2")
    assert code == 0 and "cut a partial last line" in err
    assert "9 already recorded, 3 to analyse" in err
    again = records(out)
    assert len(again) == 12 and by_place(again) == full


def test_resume_refuses_a_file_that_is_not_a_results_file(tmp_path: Path) -> None:
    inputs = examples_copy(tmp_path / "in", ("mlp",))
    out = tmp_path / "r.jsonl"
    out.write_text('{"something": "else"}\n')
    code, _, err = corpus(str(inputs), "--out", str(out), "--resume")
    assert code == 2 and "r.jsonl:1: not a symidx.corpus/1 record" in err
    assert out.read_text() == '{"something": "else"}\n'


def test_the_same_module_in_two_files_is_analysed_once_and_recorded_twice(
        tmp_path: Path) -> None:
    inputs = examples_copy(tmp_path / "in", ("mlp",))
    (inputs / "z_copy.hlo").write_text((inputs / "mlp.hlo").read_text())
    out = tmp_path / "r.jsonl"
    code, _, err = corpus(str(inputs), "--out", str(out))
    assert code == 0 and "2 modules (1 repeating another's text)" in err
    first, second = records(out)
    assert first["sha256"] == second["sha256"] and first["duplicate_of"] is None
    assert second["duplicate_of"] == {"file": first["file"], "module": 0}
    assert (first["file"], second["file"]) == (str(inputs / "mlp.hlo"),
                                               str(inputs / "z_copy.hlo"))
    validator().validate(second)


def test_results_file_appends_and_reads_back(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    record = lit_records()[0]
    with ResultsFile(str(out), resume=False) as results:
        results.write(record)
    with ResultsFile(str(out), resume=True) as results:
        assert set(results.done) == {record["sha256"]} and results.cut == 0
        assert results.record_of(record["sha256"]) == record
    assert records(out) == [record]


# --- workers that hang or die --------------------------------------------------------------


def test_hanging_and_crashing_modules_are_recorded_and_the_run_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker busy in a loop that never checks its budget is stopped by its CPU time
    (read from /proc: the same however busy the machine is, so the small modules beside it,
    slow under load, are never cut short); the others that die are replaced."""
    inputs = examples_copy(tmp_path / "in", ("mlp", "maxpool", "rearrange", "layernorm"))
    misbehaving(inputs, SPIN, "cumsum")
    misbehaving(inputs, EXIT, "embedding")
    misbehaving(inputs, KILL, "conv2d")
    monkeypatch.setenv("SYMIDX_CORPUS_TEST_HOOK", HOOK)
    out = tmp_path / "r.jsonl"
    code, _, err = corpus(str(inputs), "--out", str(out), "--jobs", "2", "--cpu-limit", "2")
    assert code == 1, err
    found = {Path(r["file"]).stem: r for r in records(out)}
    assert len(found) == 7
    assert found["spin"]["status"] == "timeout"
    assert found["spin"]["message"] == "no result after 2 s of CPU: the worker was stopped"
    assert found["exit"]["status"] == "error"
    assert found["exit"]["message"] == "the worker process died"
    assert found["kill"]["status"] == "error"
    assert found["kill"]["message"] == "the worker process died"
    # The workers that replaced them analysed the rest.
    assert all(found[name]["status"] == "ok"
               for name in ("mlp", "maxpool", "rearrange", "layernorm"))
    assert "7 modules: 4 ok, 2 error, 1 timeout" in err
    for record in found.values():
        validator().validate(record)


# --- summary, report and usage -----------------------------------------------------------------


def test_error_kinds_leave_out_the_place_and_the_names() -> None:
    assert error_kind("a/b.hlo:line 46, column 3: concatenate %cat.3: operands f32[2]") \
        == "concatenate %…: operands f32[2]"
    assert error_kind("x" * 200).endswith("…") and len(error_kind("x" * 200)) == 120


def test_the_summary_counts_statuses_errors_and_ops() -> None:
    summary = Summary()
    found = lit_records()
    summary.add_all(found.values())
    summary.add_all([found[4] | {"file": "other.hlo"}])
    assert summary.statuses == {"ok": 3, "parse-error": 1, "error": 2}
    [(kind, count)] = [(k, n) for k, n in summary.errors.items() if k.startswith("error")]
    assert count == 2 and kind.startswith("error: concatenate %…: operands")
    assert summary.unsupported == {"frobnicate": 2}
    assert summary.opaque == {"custom-call MyKernel": 1}
    text = summary.text()
    assert text.splitlines()[0] == "6 modules: 3 ok, 1 parse-error, 2 error"
    assert "unsupported ops, by groups of maps: frobnicate 2" in text


def test_a_module_without_a_fusion_is_analysed_whole() -> None:
    found = lit_records()
    # section 1 is one computation and no fusion: its entry, analysed whole
    assert (found[0]["analysed"], found[1]["analysed"]) == ("fusions", "entry")
    assert found[1]["counts"]["fusions"] == 0 and found[1]["counts"]["maps"] == 1
    assert found[3]["analysed"] is None  # it did not parse
    summary = Summary()
    summary.add_all(found.values())
    assert summary.analysed == {"fusions": 2, "entry": 1}
    line = summary.text().splitlines()[1]
    assert line.startswith("ok: 2 by their fusions, 1 whole (entry computation, no fusion); "
                           "0 gave no map;")
    asked = analyse(Task(str(LIT), 1, 19, split_sections(LIT.read_text())[1].text),
                    Options(computation="ENTRY"))
    assert asked["analysed"] == "computation"


@pytest.mark.parametrize("suffix", [".md", ".html"])
def test_the_report_has_the_plot_and_the_tables(tmp_path: Path, suffix: str) -> None:
    pytest.importorskip("matplotlib")
    inputs = examples_copy(tmp_path / "in", ("mlp", "maxpool"))
    shutil.copy(LIT, inputs / "lit_split.txt")
    report = tmp_path / f"report{suffix}"
    code, _, err = corpus(str(inputs), "--out", str(tmp_path / "r.jsonl"), "--report",
                          str(report))
    assert code == 1 and f"report written to {report}" in err
    text = report.read_text()
    assert "Modules by status" in text and "frobnicate" in text and "MyKernel" in text
    assert "Modules analysed (status ok)" in text and "by their fusions" in text
    if suffix == ".md":
        assert "![analysis time against module size](report.png)" in text
        assert (tmp_path / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert '<img alt="analysis time against module size" src="data:image/png;base64,' \
            in text


@pytest.mark.parametrize("argv, message", [
    (["--engine", "local", "--address", "x:1"], "--address is for --engine ray or dask"),
    (["--report", "r.pdf"], "--report writes FILE.html or FILE.md"),
    (["--jobs", "0"], "expected a positive number"),
    (["--timeout", "-1"], "expected seconds"),
    (["--cpu-limit", "x"], "expected seconds"),
    (["--max-bytes", "12Q"], "expected a number of bytes"),
    (["--engine", "spark"], "invalid choice"),
])
def test_usage_errors(tmp_path: Path, argv: list[str], message: str) -> None:
    code, _, err = corpus(str(EXAMPLES), "--out", str(tmp_path / "r.jsonl"), *argv)
    assert code == 2 and message in err
    assert not (tmp_path / "r.jsonl").exists()


@pytest.mark.parametrize("engine, extra", [("ray", "ray"), ("dask", "dask")])
def test_a_missing_extra_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  engine: str, extra: str) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("ray", "distributed") else
                        real(name, *a))
    code, _, err = corpus(str(EXAMPLES), "--out", str(tmp_path / "r.jsonl"), "--engine", engine)
    assert code == 2 and f"pip install 'symidx[{extra}]'" in err


def test_an_unreadable_file_gets_a_record_saying_why(tmp_path: Path) -> None:
    inputs = examples_copy(tmp_path / "in", ("mlp",))
    (inputs / "bad.hlo.gz").write_bytes(b"not gzip at all")
    out = tmp_path / "r.jsonl"
    code, _, err = corpus(str(inputs), "--out", str(out))
    assert code == 1
    bad, good = sorted(records(out), key=lambda r: r["file"])
    assert good["status"] == "ok"
    assert bad["status"] == "error" and bad["module"] == 0
    assert bad["message"].startswith(f"cannot read {inputs / 'bad.hlo.gz'}: not a gzip file")
    validator().validate(bad)
    assert "error: cannot read FILE: not a gzip file" in err
    # resumed: the same file, still unreadable, is not recorded again
    code, _, err = corpus(str(inputs), "--out", str(out), "--resume")
    assert code == 1 and len(records(out)) == 2


def test_timing_fields_are_the_only_ones_that_vary() -> None:
    first, second = lit_records(), lit_records()
    assert by_place(list(first.values())) == by_place(list(second.values()))
    assert all(first[0][k] is not None for k in TIMING)


def test_a_ray_address_where_nothing_listens_fails_at_once() -> None:
    import socket

    from symidx.corpus.ray_engine import _check_reachable

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(SymidxError, match=f"cannot join the Ray cluster at 127.0.0.1:{port}"):
        _check_reachable(f"127.0.0.1:{port}")
    _check_reachable("auto")  # left to Ray


def test_the_test_hook_imports_a_module_by_name_and_never_runs_a_file(tmp_path: Path) -> None:
    """The hook is ``MODULE:FUNCTION`` of an importable module: a file's path is refused
    before anything is loaded (the file below would leave a mark if it ran)."""
    mark = tmp_path / "ran"
    script = tmp_path / "evil.py"
    script.write_text(f"open({str(mark)!r}, 'w').close()\ndef f(task): pass\n")
    task = Task("m.hlo", 0, 1, (EXAMPLES / "mlp.hlo").read_text())
    for spec in (f"{script}:f", "../evil:f", "corpus_faults"):
        with pytest.raises(SymidxError, match="is not MODULE:FUNCTION"):
            analyse(task, Options(hook=spec))
    with pytest.raises(SymidxError, match="cannot import the test hook 'evil.py:f'"):
        analyse(task, Options(hook="evil.py:f"))  # a module evil.py, not on the path
    assert not mark.exists()
    # the tests' own hook, by its module name: a module without a marker analysed as usual
    assert analyse(task, Options(hook=HOOK))["status"] == "ok"
