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
from symidx.errors import ParseError

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
