"""The benchmark suite computes what it claims to (no timing is asserted): the maps it times
are right, the islpy and MLIR engines do the same work as symidx, the harness interleaves
engines, keeps the garbage collector on, reports failures in their row, and
``symidx bench`` runs."""

from __future__ import annotations

import contextlib
import gc
import io
import itertools
import re

import pytest

from symidx import IndexingMap, compose, equal
from symidx.analysis import instruction_maps
from symidx.bench import (
    Backend,
    IslBackend,
    MlirBackend,
    NotExpressible,
    Row,
    SymidxBackend,
    Timing,
    bitcast_maps,
    chain_maps,
    compose_chain,
    compose_step_maps,
    cute_maps,
    format_table,
    ladder_hlo,
    measure_row,
    plot,
    round_trip_pair,
    run,
)
from symidx.cli import main
from symidx.core.syntax import parse_map
from symidx.core.verify import has_isl, isl_text
from symidx.errors import SymidxError
from symidx.hlo import parse_hlo
from symidx.layout import cute

needs_isl = pytest.mark.skipif(not has_isl(), reason="islpy not installed")


def test_the_reshape_chain_ends_at_the_identity():
    maps = [IndexingMap.identity([8, 16, 4]), *reversed(chain_maps(16))]
    assert compose_chain(SymidxBackend(), maps) == IndexingMap.identity([8, 16, 4])


def test_the_compose_step_is_a_round_trip():
    first, second = compose_step_maps()
    assert equal(compose(first, second), IndexingMap.identity([10, 10, 10]))


def test_a_ladder_of_forty_diamonds_has_one_map():
    fusion = parse_hlo(ladder_hlo(40)).entry.root
    (group,) = instruction_maps(fusion, "output_to_input")
    assert group.maps == (IndexingMap.identity([16, 32]),)


def test_the_round_trip_pairs_are_equal_and_the_wrong_ones_are_not():
    for k in (10, 20):
        round_trip, identity = round_trip_pair(k)
        wrong, _ = round_trip_pair(k, wrong=True)
        points = list(itertools.product(range(k), repeat=3))
        assert all(round_trip.image(p) == {p} for p in points)
        assert any(wrong.image(p) != {p} for p in points)
        assert identity == IndexingMap.identity([k, k, k])


def test_the_layout_pairs_compose():
    bitcast = compose(*bitcast_maps(64, 256))
    assert bitcast.num_dims == 4 and bitcast.num_results == 4
    tile, flat = cute_maps(8)
    expected = cute.composition(cute.Layout(((4, 8),), ((8, 1),)), cute.Layout((4, 8), (8, 1)))
    composed = compose(tile, flat)
    for point in itertools.product(range(4), range(8)):
        assert composed.evaluate(point) == (expected(*point),)


@needs_isl
@pytest.mark.parametrize("build", [compose_step_maps, lambda: cute_maps(8),
                                   lambda: bitcast_maps(16, 256)])
def test_isl_composes_and_simplifies_to_the_same_relation(build):
    import islpy as isl

    backend = IslBackend(isl)
    first, second = backend.prepare(build)
    composed = backend.compose(first, second)
    expected = isl.Map(isl_text(compose(*build())))
    assert isl.Map.from_pw_multi_aff(composed).is_equal(expected)
    simplified = backend.simplify(composed)
    assert isl.Map.from_pw_multi_aff(simplified).is_equal(expected)
    (fresh,) = backend.prepare(lambda: [build()[0]])
    assert isl.Map.from_pw_multi_aff(backend.simplify(fresh)).is_equal(fresh.relation)


@needs_isl
def test_isl_composes_set_valued_maps_as_relations():
    import islpy as isl

    maps = [parse_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 7], s0 in [0, 1]"),
            parse_map("(d0) -> (d0 floordiv 2), domain: d0 in [0, 8]")]
    backend = IslBackend(isl)
    first, second = backend.prepare(lambda: maps)
    composed = backend.compose(first, second)
    assert composed.is_equal(isl.Map(isl_text(compose(*maps))))
    equal_pair = backend.prepare(lambda: round_trip_pair(10))
    assert backend.equal(*equal_pair)
    assert not backend.equal(*backend.prepare(lambda: round_trip_pair(10, wrong=True)))


def test_mlir_composes_the_reshape_round_trip():
    ir = pytest.importorskip("jaxlib.mlir.ir")
    backend = MlirBackend(ir)
    first, second = backend.prepare(compose_step_maps)
    composed = backend.simplify(backend.compose(first, second))
    assert (composed.n_dims, len(composed.results)) == (3, 3)
    assert str(composed).startswith("(d0, d1, d2) -> (")


class Recorder(Backend):
    """A fake engine: records when it runs and whether the collector was on."""

    def __init__(self, name: str, log: list, fail: Exception | None = None):
        self.name = name
        self.log = log
        self.fail = fail

    def prepare(self, build):
        return list(build())

    def simplify(self, m):
        self.log.append((self.name, gc.isenabled()))
        if self.fail is not None:
            raise self.fail
        return m


def simplify_first(b, maps):
    return b.simplify(maps[0])


def test_engines_are_interleaved_with_the_collector_on():
    log: list = []
    engines = [Recorder("symidx", log), Recorder("islpy", log), Recorder("MLIR", log)]
    row = measure_row("fake", 1, "things", engines, lambda: [IndexingMap.identity([2])],
                      simplify_first, repeats=4, warmup=1)
    assert [name for name, _ in log] == ["symidx", "islpy", "MLIR", "islpy", "MLIR", "symidx",
                                         "MLIR", "symidx", "islpy", "symidx", "islpy", "MLIR",
                                         "islpy", "MLIR", "symidx"]
    assert all(enabled for _, enabled in log)
    assert set(row.times) == {"symidx", "islpy", "MLIR"}
    assert all(t.samples == 4 for t in row.times.values())


def test_a_failing_engine_leaves_its_error_in_the_row_and_the_others_are_timed():
    log: list = []
    engines = [Recorder("symidx", log), Recorder("islpy", log, ValueError("isl broke")),
               Recorder("MLIR", log, NotExpressible("no"))]
    row = measure_row("fake", 1, "things", engines, lambda: [IndexingMap.identity([2])],
                      simplify_first, repeats=3)
    assert row.errors == {"islpy": "ValueError: isl broke"}
    assert set(row.times) == {"symidx"}
    line = format_table([row]).splitlines()[2]
    cells, note = line.split("  ! ")
    assert cells.split()[-4:] == ["error", "-", "-", "-"]
    assert note == "islpy: ValueError: isl broke"


def test_a_case_that_fails_as_a_whole_is_one_row_with_its_error(monkeypatch):
    from symidx.bench import cases

    def broken(backends, quick):
        raise SymidxError("the inputs could not be built")

    monkeypatch.setitem(cases.CASES, "compose", broken)
    rows = run(quick=True, cases=["compose", "seeds"], backends=[SymidxBackend()])
    assert rows[0].errors == {"symidx": "SymidxError: the inputs could not be built"}
    assert [r.case for r in rows[1:]] == [f"seed simplify {k}" for k in range(1, 5)]
    assert all(r.symidx is not None for r in rows[1:])


def test_the_table_shows_medians_spreads_ratios_and_missing_engines():
    table = format_table([
        Row("compose step", 3, "results", {"symidx": Timing(2e-5, 2e-6, 9),
                                           "islpy": Timing(1e-5, 0.0, 9)}),
        Row("equal round trip", 10**12, "points", {"symidx": Timing(0.5, 0.0, 1)})])
    lines = table.splitlines()
    assert lines[0].split() == ["case", "size", "symidx", "islpy", "MLIR", "/islpy", "/MLIR"]
    assert lines[2].split()[-9:] == ["20", "us", "±10%", "10", "us", "±0%", "-", "2.00", "-"]
    assert "1e12 points" in lines[3] and lines[3].split()[-6:] == ["500.00", "ms", "-", "-", "-",
                                                                   "-"]


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    rows = [Row("chain", n, "reshapes", {"symidx": Timing(n * 1e-4, 0, 3),
                                         "islpy": Timing(n * 1e-5, 0, 3)}) for n in (8, 64)]
    assert plot(rows, str(tmp_path / "bench.png"))
    assert (tmp_path / "bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plot(rows[:1], str(tmp_path / "none.png"))


def test_symidx_bench_quick_on_one_case():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["bench", "--quick", "--case", "compose", "--no-plot"]) == 0
    assert "compose step" in out.getvalue()


def test_symidx_bench_equal_case_prints_every_row():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["bench", "--quick", "--case", "equal", "--no-plot"]) == 0
    text = out.getvalue()
    for size in ("1000 points", "1e6 points", "1e9 points", "1e12 points"):
        assert re.search(rf"^equal round trip +{size} ", text, re.M), size
        assert re.search(rf"^unequal round trip +{size} ", text, re.M), size
    assert "error" not in text.split("\n\n")[0]


def test_symidx_bench_rejects_an_unknown_case(capsys):
    assert main(["bench", "--case", "nope", "--no-plot"]) == 2
    assert "unknown benchmark case(s) nope" in capsys.readouterr().err


@needs_isl
def test_isl_times_no_parse_in_simplify_or_equal():
    """Equal work: symidx's maps are parsed outside the timing, so isl's must be too. The
    timed operations use the objects ``prepare`` read; with their text made unreadable
    they still answer."""
    import dataclasses

    import islpy as isl

    from symidx.bench import SEED_EXAMPLES

    backend = IslBackend(isl)
    (seed,) = backend.prepare(lambda: [parse_map(SEED_EXAMPLES[0])])
    unreadable = dataclasses.replace(seed, text="not isl")
    assert backend.simplify(unreadable).is_equal(backend.simplify(seed))
    a, b = backend.prepare(lambda: list(round_trip_pair(10)))
    assert backend.equal(dataclasses.replace(a, text="?"), dataclasses.replace(b, text="?"))


# --- the clock, the equal work of the equality rows, the JSON ------------------------------
class Sleeper(Backend):
    """A fake engine whose operation sleeps (wall time, no CPU) or has a child process
    burn CPU and waits for it."""

    def __init__(self, name: str, how: str):
        self.name = name
        self.how = how

    def prepare(self, build):
        return list(build())

    def simplify(self, m):
        import subprocess
        import sys
        import time

        if self.how == "sleep":
            time.sleep(0.2)
        else:  # a child that spends 0.1 s of its own CPU, waited for
            subprocess.run([sys.executable, "-c", "import time\n"
                            "while time.process_time() < 0.1: pass"], check=True)
        return m


def test_the_clock_is_cpu_time_of_the_process_and_the_children_it_waited_for():
    """Wall time would count the sleep (and every other process of a busy machine); the
    children's CPU is counted, this process's waiting is not."""
    build = lambda: [IndexingMap.identity([2])]  # noqa: E731
    slept = measure_row("sleep", 1, "things", [Sleeper("symidx", "sleep")], build,
                        simplify_first, repeats=1, warmup=0)
    assert slept.symidx < 0.1
    child = measure_row("child", 1, "things", [Sleeper("symidx", "child")], build,
                        simplify_first, repeats=1, warmup=0)
    assert child.symidx >= 0.09


class TextReader(Backend):
    """A fake engine that logs what it reads and decides."""

    def __init__(self, name: str, log: list):
        self.name = name
        self.log = log

    def prepare(self, build):
        raise AssertionError("the equality rows read from text")

    def prepare_text(self, build):
        return [f"text of {m.num_dims} dims" for m in build()]

    def read(self, text):
        self.log.append(("read", text))
        return text

    def equal(self, a, b):
        self.log.append(("equal", a, b))
        return True


def test_the_equality_rows_read_the_pair_from_text_on_every_side():
    from symidx.bench import compare_equal_text

    log: list = []
    row = measure_row("equal", 8, "points", [TextReader("symidx", log), TextReader("islpy", log)],
                      lambda: round_trip_pair(2), compare_equal_text, repeats=1, warmup=0,
                      from_text=True)
    assert set(row.times) == {"symidx", "islpy"}
    assert log.count(("read", "text of 3 dims")) == 4  # two maps, two engines, timed
    assert log.count(("equal", "text of 3 dims", "text of 3 dims")) == 2


@needs_isl
def test_the_engines_read_their_own_text_to_the_same_maps():
    import islpy as isl

    pair = lambda: round_trip_pair(10)  # noqa: E731
    mine, theirs = SymidxBackend(), IslBackend(isl)
    texts = mine.prepare_text(pair)
    assert [mine.read(t) for t in texts] == list(pair())
    isl_texts = theirs.prepare_text(pair)
    assert all(theirs.read(t).is_equal(isl.Map(isl_text(m))) for t, m in zip(isl_texts, pair()))
    assert mine.equal(*[mine.read(t) for t in texts])
    assert theirs.equal(*[theirs.read(t) for t in isl_texts])


def test_symidx_bench_writes_its_rows_as_json(tmp_path):
    import json

    path = tmp_path / "bench.json"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["bench", "--quick", "--case", "compose", "--case", "seeds", "--no-plot",
                     "--json", str(path)]) == 0
    document = json.loads(path.read_text())
    assert document["schema"] == "symidx.bench/1" and document["clock"] == "cpu"
    assert document["quick"] is True and document["engines"][0] == "symidx"
    cases = [row["case"] for row in document["rows"]]
    assert cases == ["compose step"] + [f"seed simplify {k}" for k in range(1, 5)]
    for row in document["rows"]:
        times = row["times"]
        assert times["symidx"]["median"] > 0 and times["symidx"]["samples"] >= 3
        isl = times.get("islpy")
        expected = None if isl is None else times["symidx"]["median"] / isl["median"]
        assert row["ratios"]["islpy"] == pytest.approx(expected) if expected else \
            row["ratios"]["islpy"] is None
    table = out.getvalue()
    assert f"* rows written as JSON to {path}" in table
    jsonschema = pytest.importorskip("jsonschema")
    from importlib import resources

    schema = json.loads(resources.files("symidx").joinpath("schemas/bench-1.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(document, schema)
    broken = dict(document, clock="wall")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_symidx_bench_json_to_a_folder_that_is_not_there_stops_before_the_run(capsys):
    assert main(["bench", "--quick", "--case", "compose", "--no-plot",
                 "--json", "/nonexistent/folder/bench.json"]) == 2
    assert "cannot write /nonexistent/folder/bench.json" in capsys.readouterr().err
