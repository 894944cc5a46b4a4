"""``symidx layout``: offsets, maps and grids of XLA and nested layouts, the seeds' numbers,
errors with positions (exit 2), and ``--png``."""

from __future__ import annotations

import contextlib
import io
import sys

import pytest
from test_layout_cute import SEED003_ZN, seed_table, words
from test_layout_xla import SEED000_FIGURE2

from symidx.cli import main

ZN = "((4,2),(4,3)):((4,16),(1,32))"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["layout", *argv])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("layout", "index", "offset"), [
    ("f32[3,5]{1,0:T(2,2)}", "2,3", 17),  # seed 000, Figure 1
    ("f32[4,8]{1,0:T(2,4)(2,1)}", "3,1", 19),  # seed 000, Figure 2
    ("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}", "1,6,7,10,9", 12430),
    ("bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}", "0,0,1,0", 1),
    ("f32[2,3]{0,1}", "0,1", 2),  # seed 001: a d b e c f
    (ZN, "1,5", 37),  # seed 003, crd2offset
    ("(2,3):(1,2)", "1,2", 5),
    ("((4,2),(4,3)):((4,16),(1,32))", " 7 , 11 ", 95),
    ("f32[]", "", 0),
])
def test_index_prints_the_physical_offset(layout: str, index: str, offset: int) -> None:
    assert run(layout, "--index", index) == (0, f"{offset}\n", "")


def test_seed000_combined_offset_is_the_112x110_arrays() -> None:
    combined = run("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}", "--index", "1,6,7,10,9")
    # row (1 * 7 + 6) * 8 + 7 = 111, column 10 * 10 + 9 = 109
    assert combined == run("f32[112,110]{1,0:T(2,3)}", "--index", "111,109")


def test_seed000_figure1_map_and_grid() -> None:
    code, out, _ = run("f32[3,5]{1,0:T(2,2)}")
    assert code == 0
    assert out == """\
15 elements in 24 slots of 32 bits (96 bytes); physical shape [2,3,2,2]; memory space S(0): \
device HBM

(d0, d1) -> ((d0 mod 2) * 2 + (d0 floordiv 2) * 12 + (d1 floordiv 2) * 4 + d1 mod 2),
domain:
d0 in [0, 2],
d1 in [0, 4]

f32[3,5]{1,0:T(2,2)}
       0    1    2    3    4
    +----+----+----+----+----+
 0  |  0 |  1 |  4 |  5 |  8 |
    +----+----+----+----+----+
 1  |  2 |  3 |  6 |  7 | 10 |
    +----+----+----+----+----+
 2  | 12 | 13 | 16 | 17 | 20 |
    +----+----+----+----+----+
"""


def test_seed000_figure2_grid() -> None:
    _, out, _ = run("f32[4,8]{1,0:T(2,4)(2,1)}")
    grid = out[out.index("f32[4,8]{1,0:T(2,4)(2,1)}\n"):]
    assert seed_table(grid) == SEED000_FIGURE2


def test_seed003_zn_grid_and_summary() -> None:
    code, out, _ = run(ZN, "--style", "xla")
    assert code == 0
    summary, _, text_map, _, *grid = out.splitlines()
    assert summary == "rank 2, depth 2, size 96, cosize 96"
    # rows step by 4 across both fractals (4 * 4 == 16), columns by 1 inside a fractal
    assert text_map == ("(d0, d1) -> ((d1 / 4) * 32 + d0 * 4 + d1 mod 4), "
                        "domain: d0 in [0, 7], d1 in [0, 11]")
    assert words("\n".join(grid)) == words(SEED003_ZN)


def test_seed003_make_layout_tile() -> None:
    _, out, _ = run(ZN, "--tile", "4,4")
    assert "((4,1),(4,1)):((4,16),(1,32))" in out.splitlines()
    assert run(ZN, "--tile", "4,4", "--index", "3,3") == (0, "15\n", "")


def test_memory_space_and_sizes_in_the_summary() -> None:
    _, out, _ = run("bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}")
    assert out.splitlines()[0] == (
        "4194304 elements in 4194304 slots of 16 bits (8388608 bytes); physical shape "
        "[32,4,32,4,128,2,1]; memory space S(1): VMEM")
    assert "(no grid: " in out
    _, out, _ = run("s4[5]{0:E(4)S(5)}")
    assert out.splitlines()[0] == ("5 elements in 5 slots of 4 bits (3 bytes); physical shape "
                                   "[5]; memory space S(5): host memory")


def test_an_empty_array_has_no_grid() -> None:
    code, out, _ = run("f32[0,3]{1,0:T(2,2)}")
    assert code == 0
    assert out.splitlines()[2:] == ["KNOWN EMPTY", "", "(no grid: f32[0,3]{1,0:T(2,2)} has no "
                                    "elements to draw)"]


def test_xla_tile_is_the_block_at_the_origin() -> None:
    _, out, _ = run("f32[4,8]{1,0:T(2,4)}", "--tile", "2,6", "--style", "xla")
    assert "(d0, d1) -> ((d1 / 4) * 8 + d0 * 4 + d1 mod 4), domain: d0 in [0, 1], " \
           "d1 in [0, 5]" in out
    assert run("f32[4,8]{1,0:T(2,4)}", "--tile", "2,6", "--index", "1,5") == (0, "13\n", "")


@pytest.mark.parametrize(("argv", "message"), [
    (["f32[3,5]{1,0:T(2,2)}", "--index", "3,3"], "out of bounds: dim 0 is 3, size 3"),
    (["f32[3,5]", "--index", "1"], "rank 1"),
    ([ZN, "--index", "37"], "2 top-level mode(s); --index gives 1 integer(s)"),
    ([ZN, "--index", "8,0"], "mode 0 is 8, size 8"),
    (["f32[4,8]", "--tile", "2,2", "--index", "2,0"], "outside the tile"),
    (["f32[4,8]", "--tile", "2,9"], "one size per dim"),
    (["(f32[2], s32[2])"], "not the tuple"),
    ([ZN, "--tile", "4,4,4"], "tile shape"),
])
def test_bad_requests_exit_2_with_a_message(argv: list[str], message: str) -> None:
    code, out, err = run(*argv)
    assert (code, out) == (2, "")
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize(("argv", "column"), [
    (["f32[3,5]{1,0:T(2,x)}"], 18),
    (["((4,2),(4,3)):((4,16),(1,3x))"], 27),
    (["f32[3,5]", "--index", "1,a"], 3),
    (["f32[3,5]", "--tile", "2;2"], 2),
])
def test_parse_errors_point_at_the_spot(argv: list[str], column: int) -> None:
    code, _, err = run(*argv)
    assert code == 2
    assert f"column {column}:" in err
    caret = err.splitlines()[-1]
    assert caret.index("^") == column - 1


def test_png(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "fig1.png"
    code, out, _ = run("f32[3,5]{1,0:T(2,2)}", "--index", "2,3", "--png", str(path))
    assert (code, out) == (0, "17\n")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    path = tmp_path / "zn.png"
    assert run(ZN, "--tile", "4,4", "--png", str(path))[0] == 0 and path.exists()


def test_png_without_matplotlib_exits_2(monkeypatch, tmp_path) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, _, err = run(ZN, "--png", str(tmp_path / "x.png"))
    assert code == 2 and "matplotlib" in err
