"""Bad input refused, located, exit 2: raw bytes never echoed to the terminal, empty
intervals in maps a user wrote, ``--style mlir`` on a map that is not affine, attributes an
HLO op does not take."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from symidx.cli import main
from symidx.errors import HloValidationError, ParseError
from symidx.hlo import parse_hlo

# what a terminal acts on: C0 controls but tab and newline, DEL, C1 controls, bidi overrides
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- raw bytes

BINARY = (b"\x7fELF\x02\x01\x01" + b"\x00" * 40 + b"\x1b[2J\x1b]0;owned\x07\r"
          + bytes(range(256)) * 40 + b"\n" + b"\x1b[31m" * 500)


@pytest.mark.parametrize("data", [
    BINARY,                                                     # not UTF-8
    b"HloModule m\x1b[31m\x00\x00\x07 " + b"A" * 5000 + b"\n",  # UTF-8, with controls
    b"HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\xe2\x80\xae" + b"\x1b[2J" * 2000,
], ids=["binary", "controls", "bidi"])
def test_a_file_of_raw_bytes_gets_a_short_safe_excerpt(tmp_path: Path, data: bytes):
    path = tmp_path / "m.hlo"
    path.write_bytes(data)
    code, out, err = run(["maps", str(path)])
    # was: the whole raw line (escape sequences, NULs, 10 KB of a binary) on stderr
    assert code == 2 and out == ""
    assert not UNSAFE.search(err), err
    assert len(err) < 600 and err.count("\n") == 3, err
    message, shown, caret = err.splitlines()
    assert re.match(rf"symidx: error: {re.escape(str(path))}:line \d+, column \d+: ", message)
    assert caret.strip() == "^" and len(caret) <= len(shown)


def test_an_excerpt_keeps_the_caret_under_the_column_it_names():
    line = "x = " + "\x1b" * 300 + "BAD" + "\x00" * 300
    err = ParseError("bad", "first line\n" + line, len("first line\n") + line.index("BAD"))
    shown, caret = err.excerpt().splitlines()
    assert (err.line, err.column) == (2, line.index("BAD") + 1)
    assert shown[len(caret) - 1:].startswith("BAD")  # the caret is under the spot
    assert shown.startswith("...") and shown.endswith("...") and len(shown) <= 110
    assert not UNSAFE.search(shown)
    short = ParseError("bad", "(d0) -> (d0 +)", 13)
    assert short.excerpt() == "(d0) -> (d0 +)\n             ^"


# --------------------------------------------------------------------------- empty intervals

@pytest.mark.parametrize("argv, column", [
    (["simplify", "(d0) -> (d0), domain: d0 in [5, 3]"], 29),
    (["simplify", "(d0) -> (d0), domain: d0 in [0, 3], d0 mod 2 in [1, 0]"], 49),
    (["verify", "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [2, -2]",
      "KNOWN EMPTY"], 52),
    (["simplify", "--syntax", "inductor", "x + 1, domain: x in [4, 2]"], 21),
    (["simplify", "--syntax", "mlir",
      "affine_map<(d0) -> (d0)>\ndomain: d0 in [9, 0]"], 15),
])
def test_an_empty_interval_a_user_wrote_is_refused_where_it_is(argv, column):
    # was: KNOWN EMPTY, exit 0 (the verify: "equal")
    code, out, err = run(argv)
    assert code == 2 and out == ""
    first = err.splitlines()[0]
    assert first.endswith(f"column {column}: empty interval: its low end is above its high "
                          f"end (a map that reads nothing is written KNOWN EMPTY)"), err


def test_maps_that_are_empty_without_an_empty_interval_are_still_known_empty():
    # intervals that are not empty but meet nowhere, a constraint that never holds, and
    # KNOWN EMPTY itself: derived, not written empty
    for text in ("(d0) -> (d0), domain: d0 in [0, 3], d0 in [5, 6]",
                 "(d0) -> (d0), domain: d0 in [0, 3], d0 mod 2 in [5, 6]", "KNOWN EMPTY"):
        assert run(["simplify", text])[:2] == (0, "KNOWN EMPTY\n")


def test_the_library_reads_an_empty_interval_as_xla_does_unless_asked_not_to():
    from symidx import parse_map

    # XLA's parser reads `d0 in [0, -1]` (its tests do) as a known-empty map
    assert parse_map("(d0) -> (d0), domain: d0 in [0, -1]").is_known_empty
    with pytest.raises(ParseError, match="empty interval") as caught:
        parse_map("(d0) -> (d0), domain: d0 in [0, -1]", allow_empty=False)
    assert (caught.value.line, caught.value.column) == (1, 29)
    with pytest.raises(ParseError, match="empty interval"):
        parse_map("x, domain: x in [1, 0]", syntax="tvm", allow_empty=False)


# --------------------------------------------------------------------------- --style mlir

@pytest.mark.parametrize("text, shown, reason", [
    ("(d0) -> (d0 * d0), domain: d0 in [0, 3]", "d0 * d0", "a product of dimensions"),
    ("(d0, d1) -> (d0 * d1 + 1), domain: d0 in [0, 3], d1 in [0, 3]", "d0 * d1",
     "a product of dimensions"),
    ("(d0, d1) -> (d0 floordiv d1), domain: d0 in [0, 3], d1 in [1, 3]", "d0 floordiv d1",
     "a division by a dimension"),
    ("(d0, d1) -> (d0 mod (d1 + 1)), domain: d0 in [0, 3], d1 in [0, 3]", "d0 mod (d1 + 1)",
     "a division by a dimension"),
    ("(d0)[s0] -> (d0 floordiv (s0 - 2)), domain: d0 in [0, 3], s0 in [0, 4]",
     "d0 floordiv (s0 - 2)", "a division by a divisor that is not always positive"),
    ("(d0) -> (d0 floordiv -3), domain: d0 in [0, 30]", "d0 floordiv -3",
     "a division by a divisor that is not always positive"),
    ("(d0) -> (min(d0, 2)), domain: d0 in [0, 3]", "min(d0, 2)",
     "a min, which affine expressions lack"),
    ("(d0) -> (d0 + 9223372036854775808), domain: d0 in [0, 3]", "9223372036854775808",
     "a constant past 64-bit integers"),
])
def test_the_mlir_style_refuses_what_is_not_affine(text, shown, reason):
    # was: affine_map<(d0) -> (d0 * d0)> and the like, exit 0
    code, out, err = run(["simplify", "--style", "mlir", text])
    assert (code, out) == (2, "")
    assert err == (f"symidx: error: not an affine map, so the mlir style cannot print it: "
                   f"{shown} is {reason} (the doc and xla styles print any map)\n")
    assert run(["simplify", "--style", "xla", text])[0] == 0


def test_the_mlir_style_prints_semi_affine_maps_that_mlir_reads():
    code, out, _ = run(["simplify", "--style", "mlir",
                        "(d0)[s0] -> (d0 * s0, d0 floordiv s0, d0 mod 4), "
                        "domain: d0 in [0, 7], s0 in [1, 3]"])
    assert (code, out) == (0, "affine_map<(d0)[s0] -> (d0 * s0, d0 floordiv s0, d0 mod 4)>\n"
                              "domain: d0 in [0, 7], s0 in [1, 3]\n")


def test_a_modules_own_strings_are_shown_not_obeyed(tmp_path: Path):
    # op_name, source_file and a custom call's target are the module's strings: printed
    # with --explain and in a reason, they sent escape sequences to the terminal
    path = tmp_path / "meta.hlo"
    path.write_text(
        'HloModule m\nENTRY e {\n'
        '  p0 = f32[4] parameter(0), metadata={op_name="evil\x1b[31mRED" '
        'source_file="a\x07.py" source_line=3}\n'
        '  n = f32[4] negate(p0), metadata={op_name="x\x1b]0;title\x07" source_file="b.py" '
        'source_line=4}\n'
        '  ROOT c = f32[4] custom-call(n), custom_call_target="ev\x1b[2Jil"\n}\n')
    code, out, err = run(["maps", str(path), "--explain"])
    assert code == 0 and not UNSAFE.search(out + err), out
    assert "source: x\\x1b]0;title\\x07 (b.py:4)" in out
    assert "over-approximation (custom-call ev\\x1b[2Jil)" in out


# --------------------------------------------------------------------------- attributes

ADD = """HloModule m
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  ROOT a = f32[4] add(p0, p1), dimensions={0}
}
"""


def test_an_attribute_the_op_does_not_take_is_refused_where_it_is(tmp_path: Path):
    # was: accepted silently, the maps printed, exit 0
    path = tmp_path / "add.hlo"
    path.write_text(ADD)
    code, out, err = run(["maps", str(path)])
    assert (code, out) == (2, "")
    first = err.splitlines()[0]
    assert first.startswith(f"symidx: error: {path}:line 5, column ")
    assert "add %a: unexpected attribute dimensions= (add takes no attribute of its own" in first
    for validate in (True, False):  # XLA's parser refuses it: validated or not
        with pytest.raises(HloValidationError, match="unexpected attribute dimensions=") as e:
            parse_hlo(ADD, validate=validate)
        assert e.value.line == 5


@pytest.mark.parametrize("line, attribute", [
    ("ROOT t = f32[3,2] transpose(p), dimensions={1,0}, index=0", "index"),
    ("ROOT t = f32[2,3] negate(p), slice={[0:2], [0:3]}", "slice"),
    ("ROOT t = f32[2,3] copy(p), is_stable=true", "is_stable"),
    ("ROOT t = f32[2,3] exponential(p), result_accuracy={mode=highest}, window={size=1x1}",
     "window"),
])
def test_other_attributes_out_of_place(line, attribute):
    text = f"HloModule m\nENTRY e {{\n  p = f32[2,3] parameter(0)\n  {line}\n}}\n"
    with pytest.raises(HloValidationError, match=f"unexpected attribute {attribute}="):
        parse_hlo(text, validate=False)
