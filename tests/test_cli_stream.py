"""Whole programs streamed: ``symidx maps FILE --computation ENTRY --output all`` writes each
output as soon as it is computed (text, JSON, or one JSON document per line), names outputs
by instruction or tuple path, summarises the parameters an output does not read, and the
API gives the entries one at a time."""

from __future__ import annotations

import contextlib
import io
import json
from importlib import resources
from pathlib import Path

import pytest

from symidx.analysis import computation_maps, iter_computation_maps, output_leaves
from symidx.cli import main
from symidx.cli.progress import Progress
from symidx.errors import SymidxError
from symidx.fusion import Analysis
from symidx.hlo import parse_hlo

DATA = Path(__file__).parent / "data"
LOOP = DATA / "flow" / "while_loop.hlo"

# output 1 goes through an instruction whose declared shape its operands do not give (XLA's
# verifier rejects it): analysing that output stops with a located error, output 0 does not
BROKEN = """HloModule broken
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  n = f32[4] negate(a)
  bad = f32[5] add(b, b)
  ROOT t = (f32[4], f32[5]) tuple(n, bad)
}
"""


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_entries_come_one_at_a_time() -> None:
    module = parse_hlo(BROKEN, validate=False)
    entries = iter_computation_maps(module.entry, "output_to_input", analysis=Analysis())
    first = next(entries)  # computed without touching output 1
    assert first.index == 0
    assert [len(g.maps) for g in first.groups] == [1, 0]
    with pytest.raises(SymidxError, match="add"):
        next(entries)


def test_jsonl_writes_the_first_document_before_a_later_output_fails(tmp_path: Path) -> None:
    path = tmp_path / "broken.hlo"
    path.write_text(BROKEN)
    code, out, err = run("maps", str(path), "--computation", "ENTRY", "--output", "all",
                         "--format", "jsonl")
    assert code == 2 and "line 6" in err
    line, stop = out.splitlines()
    document = json.loads(line)
    assert document["computations"][0]["output"] == 0
    # a last document says why the others are missing
    assert json.loads(stop)["computations"] == [] and "line 6" in json.loads(stop)["stopped"]


def test_jsonl_lines_validate_and_equal_the_json_document() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(resources.files("symidx").joinpath("schemas/maps-1.json").read_text())
    code, out, _ = run("maps", str(LOOP), "--computation", "ENTRY", "--output", "all",
                       "--format", "jsonl")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert [d["computations"][0]["output"] for d in lines] == [0, 1, 2]
    for document in lines:
        jsonschema.validate(document, schema)
    code, out, _ = run("maps", str(LOOP), "--computation", "ENTRY", "--output", "all",
                       "--format", "json")
    whole = json.loads(out)
    jsonschema.validate(whole, schema)
    assert whole["computations"] == [d["computations"][0] for d in lines]


def test_streamed_json_equals_the_analysis() -> None:
    module = parse_hlo(LOOP.read_text())
    expected = computation_maps(module.entry, "input_to_output", analysis=Analysis())
    code, out, _ = run("maps", str(LOOP), "--computation", "ENTRY", "--direction",
                       "input-to-output", "--operand", "all", "--format", "json")
    assert code == 0
    got = json.loads(out)["computations"]
    assert [(c["input"], [len(g["maps"]) for g in c["operands"]]) for c in got] == [
        (c.index, [len(g.maps) for g in c.groups]) for c in expected]


def test_outputs_by_name_and_tuple_path() -> None:
    module = parse_hlo("""HloModule m
ENTRY main {
  a = f32[2] parameter(0)
  b = f32[3] parameter(1)
  n = f32[2] negate(a)
  inner = (f32[2], f32[3]) tuple(n, b)
  ROOT t = (f32[3], (f32[2], f32[3])) tuple(b, inner)
}
""")
    comp = module.entry
    assert output_leaves(comp, "all") == [0, 1, 2]
    assert output_leaves(comp, "{1}") == [1, 2]
    assert output_leaves(comp, "1.0") == [1]
    assert output_leaves(comp, "n") == [1]
    assert output_leaves(comp, "%inner") == [1, 2]
    assert output_leaves(comp, "b") == [0, 2]
    with pytest.raises(SymidxError, match="no instruction of that name"):
        output_leaves(comp, "nothing")
    with pytest.raises(SymidxError, match=r"no tuple element at \{0,1\}"):
        output_leaves(comp, "{0,1}")


def test_output_by_name_on_the_command_line(tmp_path: Path) -> None:
    # the root is tuple(acc, xout, yr)
    code, out, _ = run("maps", str(LOOP), "--computation", "ENTRY", "--output", "xout",
                       "--format", "jsonl")
    assert code == 0
    assert [json.loads(line)["computations"][0]["output"] for line in out.splitlines()] == [1]
    code, _, err = run("maps", str(LOOP), "--output", "xout")
    assert code == 2 and "for --computation" in err


def test_unread_parameters_are_one_line() -> None:
    code, out, _ = run("maps", str(LOOP), "--computation", "ENTRY", "--output", "1")
    assert code == 0
    assert out.rstrip().endswith("not read by output 1: parameters 0-1, 3 (3 of 4)")
    assert "operand 0" not in out


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _states(stream: io.StringIO) -> list[str]:
    """Every state of the line rewritten in place, in order."""
    return [part.rstrip() for part in stream.getvalue().replace("\n", "\r").split("\r")
            if part.strip()]


def test_progress_on_a_terminal_and_nowhere_else() -> None:
    tty = Terminal()
    lines = Progress("work", delay=0, stream=tty, bar=False)
    for k in range(1, 4):
        lines(k, 3, "output")
    shown = _states(tty)
    assert shown[0].startswith("work: output 1 of 3") and shown[-1].startswith("work: output 3")
    late = Terminal()
    waits = Progress("work", delay=60, stream=late, bar=False)
    waits(1, 3)
    assert late.getvalue() == ""
    log = io.StringIO()  # a pipe, a log, the stderr of a batch answer: nothing, ever
    quiet = Progress("work", delay=0, stream=log)
    for k in range(1, 4):
        quiet(k, 3, "output")
        quiet.during("12 of 40 instructions swept")
    quiet.close()
    assert log.getvalue() == ""


# three outputs reading the same parameters through shared instructions: a few maps each
SHARED = """HloModule shared
ENTRY main {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  r = f32[8] reverse(a), dimensions={0}
  s = f32[8] add(a, r)
  t = f32[8] multiply(s, b)
  u = f32[4] slice(t), slice={[2:6]}
  p = f32[8] pad(u, f32[] constant(0)), padding=2_2
  w = f32[8] add(p, s)
  ROOT out = (f32[8], f32[8], f32[4]) tuple(t, w, u)
}
"""


@pytest.mark.parametrize("path", [LOOP, "shared"])
def test_every_output_streamed_equals_that_output_alone(path: Path | str,
                                                        tmp_path: Path) -> None:
    if path == "shared":
        path = tmp_path / "shared.hlo"
        path.write_text(SHARED)
    options = ["--computation", "ENTRY", "--format", "jsonl", "--explain"]
    code, out, _ = run("maps", str(path), *options, "--output", "all")
    assert code == 0
    streamed = out.splitlines()
    assert len(streamed) == 3
    for k, line in enumerate(streamed):
        code, alone, _ = run("maps", str(path), *options, "--output", str(k))
        assert code == 0
        assert alone.strip() == line
    assert any(json.loads(line)["computations"][0]["operands"][0]["maps"]
               for line in streamed)


def test_the_budget_of_maps_holds_per_output(tmp_path: Path) -> None:
    # each output alone fits in the budget; all three together would not
    path = tmp_path / "shared.hlo"
    path.write_text(SHARED)
    options = ["--computation", "ENTRY", "--format", "jsonl"]
    for k in range(3):
        assert run("maps", str(path), *options, "--output", str(k), "--max-maps", "16")[0] == 0
    code, out, err = run("maps", str(path), *options, "--output", "all", "--max-maps", "16")
    assert code == 0, err
    assert len(out.splitlines()) == 3


def test_a_sweep_keeping_the_parameters_returns_the_same_and_holds_less() -> None:
    module = parse_hlo(SHARED)
    comp = module.entry
    names = {p.name for p in comp.parameters}
    for k in range(3):
        whole, kept = Analysis(), Analysis()
        everything = whole.backward(comp, comp.root, k)
        only = kept.backward(comp, comp.root, k, keep=names)
        assert set(only) == {key for key in everything if key[0] in names}
        assert all(only[key] == everything[key] for key in only)
        assert kept.limits.held < whole.limits.held


def test_progress_within_an_output(monkeypatch) -> None:
    import symidx.cli.progress as progress_module

    clock = [0.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: clock[0])
    tty = Terminal()
    lines = Progress("work", delay=0, stream=tty, bar=False)
    lines.during("starting")  # nothing before the count is known
    assert tty.getvalue() == ""
    clock[0] = 1.0
    lines(1, 3, "output")
    clock[0] = 2.0
    lines.during("12 of 40 instructions swept")
    shown = _states(tty)
    assert len(shown) == 2 and shown[0].startswith("work: output 1 of 3 (")
    assert shown[1] == "work: output 1 of 3 done; 12 of 40 instructions swept"
    module = parse_hlo(SHARED)
    analysis = Analysis()
    told: list[str] = []
    analysis.limits.watch = told.append
    analysis.parameters_of(module.entry, 1)
    assert told and "swept output-to-input from out" in told[0]


def test_a_joint_sweep_of_every_output_shows_how_far_it_is() -> None:
    """--output all sweeps the outputs together: the progress knows how many there are
    before the first is done, so the sweep's own progress shows."""
    module = parse_hlo(SHARED)
    calls: list[tuple[int, int, str | None]] = []
    seen: list[str] = []
    analysis = Analysis()

    def progress(done: int, total: int, what: str | None = None) -> None:
        calls.append((done, total, what))

    analysis.limits.watch = seen.append
    entries = list(iter_computation_maps(module.entry, "output_to_input", analysis=analysis,
                                         progress=progress, jointly=True))
    assert calls[0] == (0, 3, "output") and calls[-1] == (3, 3, "output")
    assert seen and "(3 outputs)" in seen[0]
    alone = computation_maps(module.entry, "output_to_input")
    assert [e.groups for e in entries] == [_without_origins(e.groups) for e in alone]


def _without_origins(groups):
    from dataclasses import replace

    return tuple(replace(g, origins=()) for g in groups)


def test_the_time_left_is_measured_from_the_first_output_done(monkeypatch) -> None:
    """Outputs of a joint sweep all come after it: the rate is that of the outputs, not
    the sweep's time spread over them."""
    import symidx.cli.progress as progress_module

    clock = [0.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: clock[0])
    out = Terminal()
    lines = Progress("work", delay=0, stream=out, bar=False)
    lines(0, 101, "output")
    clock[0] = 100.0  # the sweep
    lines(1, 101, "output")
    clock[0] = 110.0
    lines(51, 101, "output")  # 50 outputs in 10 s after the first
    shown = _states(out)
    assert shown[-2] == "work: output 1 of 101 (100 s, 0.01/s, 2.8 h left)"
    assert shown[-1] == "work: output 51 of 101 (110 s, 5/s, 10 s left)"


def test_a_joint_sweep_out_of_time_says_how_far_it_got() -> None:
    """Time spent is not given back: a joint sweep that runs out of it stops there (the
    sweeps of each output could only stop at once), saying how far it got."""
    from symidx.errors import LimitReached

    module = parse_hlo(SHARED)
    analysis = Analysis(timeout=1e-9)
    with pytest.raises(LimitReached, match=r"\(3 outputs\)") as stopped:
        list(iter_computation_maps(module.entry, "output_to_input", analysis=analysis,
                                   jointly=True))
    assert not stopped.value.budget


def test_a_joint_sweep_past_half_the_time_left_gives_way_to_one_output_at_a_time(
        monkeypatch) -> None:
    """The joint sweep answers only at its end: it may spend half the time left, then the
    outputs are swept one at a time, each given as it is done (a stop would lose only
    those not finished), with the answers a sweep of each output alone gives."""
    from symidx.errors import LimitReached

    module = parse_hlo(SHARED)
    analysis = Analysis(cpu_limit=600)
    spent_by_joint: list[float] = []

    def slow_joint(comp, outputs):
        # work until the joint sweep's own share of the budget stops it
        budget = analysis.limits.budget
        spent_by_joint.append(budget.cpu)
        while True:
            analysis.limits.check()
            budget._cpu_start -= 1.0  # a second of CPU, without spending it

    monkeypatch.setattr(analysis, "parameters_of_outputs", slow_joint)
    given: list[int] = []
    asked: list[int] = []
    real = analysis.parameters_of

    def one_output(comp, k):
        asked.append(k)
        assert asked == given + [k]  # each output is given before the next is swept
        return real(comp, k)

    monkeypatch.setattr(analysis, "parameters_of", one_output)
    entries = []
    for e in iter_computation_maps(module.entry, "output_to_input", analysis=analysis,
                                   jointly=True):
        given.append(e.index)
        entries.append(e)
    assert spent_by_joint and spent_by_joint[0] <= 300  # half of 600 s at most
    assert given == [0, 1, 2]
    alone = computation_maps(module.entry, "output_to_input")
    assert [_without_origins(e.groups) for e in entries] == \
        [_without_origins(e.groups) for e in alone]
    assert analysis.limits.budget.cpu == 600  # the whole budget is back
    # the whole budget, spent inside the joint sweep, still stops everything
    spent = Analysis(cpu_limit=600)

    def spends_everything(comp, outputs):
        raise LimitReached("CPU time (600 s)", "the joint sweep")

    monkeypatch.setattr(spent, "parameters_of_outputs", spends_everything)
    monkeypatch.setattr(spent.limits, "budget", _Spent(600))
    with pytest.raises(LimitReached):
        list(iter_computation_maps(module.entry, "output_to_input", analysis=spent,
                                   jointly=True))


class _Spent:
    """A budget with no time left."""

    def __init__(self, cpu: float) -> None:
        self.cpu, self.wall = cpu, None

    def remaining(self) -> float:
        return 0.0

    def spent(self) -> str:
        return f"CPU time ({self.cpu:g} s)"


# --- a stop leaves usable output (issue 35, item 6) -------------------------------------------


def test_json_that_stops_at_an_error_is_still_one_valid_document(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(resources.files("symidx").joinpath("schemas/maps-1.json").read_text())
    path = tmp_path / "broken.hlo"
    path.write_text(BROKEN)
    code, out, err = run("maps", str(path), "--computation", "ENTRY", "--output", "all",
                         "--format", "json")
    assert code == 2 and "line 6" in err
    document = json.loads(out)  # whole: the outputs finished, and why the rest are not
    jsonschema.validate(document, schema)
    assert [c["output"] for c in document["computations"]] == [0]
    assert document["stopped"].startswith("error: ") and "line 6" in document["stopped"]


class _Flipping(io.StringIO):
    """Standard output that, once the first output's entry is written to it, makes the CPU
    clock read a billion seconds: the budget runs out between two outputs, whatever the
    real time."""

    def __init__(self) -> None:
        super().__init__()
        self.flipped = False

    def write(self, text: str) -> int:
        self.flipped = self.flipped or '"output"' in text
        return super().write(text)


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_output_all_that_runs_out_of_its_budget_keeps_the_outputs_finished(
        monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    """Each output written as soon as it is final; past the CPU budget the JSON is whole
    and says it stopped (jsonl: a last document saying so), exit 3."""
    import symidx._budget

    out, err = _Flipping(), io.StringIO()
    monkeypatch.setattr(symidx._budget, "cpu_clock", lambda: 1e9 if out.flipped else 0.0)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["maps", str(LOOP), "--computation", "ENTRY", "--explain", "--format", fmt,
                     "--output", "all", "--cpu-limit", "5"])
    assert code == 3 and "symidx: stopped: ran out of CPU time (5 s)" in err.getvalue()
    if fmt == "json":
        document = json.loads(out.getvalue())
        done, stopped = document["computations"], document["stopped"]
    else:
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
        done = [c for d in lines[:-1] for c in d["computations"]]
        assert lines[-1]["computations"] == []
        stopped = lines[-1]["stopped"]
    assert [c["output"] for c in done] == [0]
    assert stopped.startswith("stopped: ran out of CPU time (5 s)")
