"""Every verb of the command line, fed random arguments and random input: it answers with an
exit code (0 to 3) and a message, never with an escaping exception (no ``ValueError``,
``KeyError`` or ``IndexError`` traceback)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symidx.cli import main

DATA = Path(__file__).parent / "data"
SAMPLES = [str(p) for p in sorted((DATA / "flow").glob("*.hlo"))[:4]] + [
    str(DATA / "tiny_slice.hlo"), str(DATA / "hlo" / "mlp.compiled.hlo")]

MAP_TOKENS = ["(", ")", "[", "]", "{", "}", ",", "->", "d0", "d1", "s0", "rt0", "+", "-", "*",
              "floordiv", "ceildiv", "mod", "/", "min", "max", "domain:", "in", "0", "1", "7",
              "-3", "99999999999999999999", "runtime variables:", "hlo:", "affine_map<", ">",
              "KNOWN EMPTY", "d0 in [0, 9]", "s0 in [0, 3]", "\n", ":", ";", "x", "é"]
VALID_MAPS = ["(d0) -> (d0 mod 8), domain: d0 in [0, 15]",
              "(d0, d1)[s0] -> (d0 + s0, d1 floordiv 2), domain: d0 in [0, 3], d1 in [0, 7], "
              "s0 in [0, 2]",
              "(d0) -> (d0 * 2 + 1), domain: d0 in [0, 9]"]
maps_text = st.one_of(st.sampled_from(VALID_MAPS),
                      st.lists(st.sampled_from(MAP_TOKENS), max_size=14).map(" ".join),
                      st.text(max_size=30))
numbers = st.one_of(st.integers(-3, 12).map(str), st.sampled_from(["all", "x", "", "1e3"]))

MAPS_FLAGS = st.lists(st.one_of(
    st.just(["--all"]), st.just(["--explain"]), st.just(["--physical"]),
    st.just(["--no-verify"]),
    st.tuples(st.just("--format"), st.sampled_from(["text", "json", "mlir", "yaml"])).map(list),
    st.tuples(st.just("--style"), st.sampled_from(["doc", "xla", "mlir", "?"])).map(list),
    st.tuples(st.just("--direction"), st.sampled_from(
        ["output-to-input", "input-to-output", "sideways"])).map(list),
    st.tuples(st.just("--operand"), numbers).map(list),
    st.tuples(st.just("--output"), numbers).map(list),
    st.tuples(st.just("--instruction"), st.sampled_from(["loop", "t", "c", "%x", "nope"])
              ).map(list),
    st.tuples(st.just("--computation"), st.sampled_from(["ENTRY", "main", "body", "?"])
              ).map(list),
), max_size=4).map(lambda groups: [a for g in groups for a in g])


@st.composite
def hlo_file_text(draw: st.DrawFn) -> str:
    """A sample module, possibly with a piece cut out or repeated."""
    text = Path(draw(st.sampled_from(SAMPLES))).read_text()
    if draw(st.booleans()):
        return text
    a = draw(st.integers(0, len(text)))
    b = draw(st.integers(a, min(len(text), a + 40)))
    return text[:a] + (text[a:b] * draw(st.integers(0, 2))) + text[b:]


def run(argv: list[str]) -> int:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert isinstance(code, int) and 0 <= code <= 3, (argv, code)
    assert "Traceback" not in err.getvalue()
    return code


FUZZ = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@FUZZ
@given(st.sampled_from(["format", "simplify", "compose", "verify"]),
       st.lists(maps_text, min_size=0, max_size=3),
       st.lists(st.sampled_from(["--style", "xla", "doc", "--explain", "--trace",
                                 "--no-simplify", "--bogus"]), max_size=3))
def test_map_verbs(verb: str, maps: list[str], flags: list[str]) -> None:
    run([verb, *maps, *flags])


@FUZZ
@given(hlo_file_text(), MAPS_FLAGS)
def test_maps(tmp_path_factory, text: str, flags: list[str]) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "m.hlo"
    path.write_text(text)
    run(["maps", str(path), *flags])


@FUZZ
@given(st.one_of(st.sampled_from(["f32[3,5]{1,0:T(2,2)}", "((4,2),(4,3)):((4,16),(1,32))",
                                  "(4,8):(8,1)", "bf16[8,128]{1,0:T(8,128)(2,1)}"]),
                 st.text(max_size=25)),
       st.lists(st.sampled_from(["--index", "2,3", "0", "-1,x", "--tile", "2,2", "--style",
                                 "xla"]), max_size=4))
def test_layout(spec: str, flags: list[str]) -> None:
    run(["layout", spec, *flags])


@FUZZ
@given(st.lists(st.one_of(
    st.builds(lambda v, m: json.dumps({"args": [v, m]}),
              st.sampled_from(["format", "simplify", "maps", "batch", "nope"]), maps_text),
    st.text(max_size=20)), max_size=4))
def test_batch(monkeypatch_lines: list[str]) -> None:
    import sys

    saved = sys.stdin
    sys.stdin = io.StringIO("\n".join(monkeypatch_lines) + "\n")
    try:
        assert run(["batch"]) == 0
    finally:
        sys.stdin = saved
