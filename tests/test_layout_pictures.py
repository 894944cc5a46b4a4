"""Pictures of layouts (symidx.layout.pictures): the grid and memory panels of the seeds'
figures, the text grid drawn as the TLA seed draws one, and the PNG (when matplotlib is
installed)."""

from __future__ import annotations

import sys

import pytest
from test_layout_cute import SEED003_ZN, ZN, words
from test_layout_xla import SEED000_FIGURE2

from symidx.errors import MapError, SymidxError, TooLargeError
from symidx.layout import cute
from symidx.layout.grid import draw_grid
from symidx.layout.pictures import (
    PICTURE_LIMIT,
    cute_picture,
    grid_text,
    save_png,
    xla_picture,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_seed000_figure1_grid_memory_and_padding() -> None:
    picture = xla_picture("f32[3,5]{1,0:T(2,2)}")
    assert picture.values() == [[0, 1, 4, 5, 8], [2, 3, 6, 7, 10], [12, 13, 16, 17, 20]]
    element = next(c for c in picture.grid if (c.row, c.col) == (2, 3))
    assert (element.offset, element.tile, element.padding) == (17, (1, 1), False)
    # the tiles cover a 4x6 rectangle: row 3 and column 5 are padding
    padding = {(c.row, c.col): c.offset for c in picture.grid if c.padding}
    assert set(padding) == {(3, j) for j in range(6)} | {(i, 5) for i in range(3)}
    assert padding[(3, 0)] == 14 and padding[(0, 5)] == 9
    # memory: 24 slots, one 2x2 tile a row, 9 of them padding
    assert len(picture.memory) == 24 and sum(c.padding for c in picture.memory) == 9
    assert [(c.row, c.col) for c in picture.memory[4:6]] == [(1, 0), (1, 1)]
    assert {c.tile for c in picture.memory[:4]} == {(0, 0)}


def test_seed000_figure2_numbers_and_tiles() -> None:
    picture = xla_picture("f32[4,8]{1,0:T(2,4)(2,1)}")
    assert picture.values() == SEED000_FIGURE2
    assert not any(c.padding for c in picture.grid + picture.memory)
    tiles = {(c.row, c.col): c.tile for c in picture.grid}
    assert tiles[(0, 0)] == tiles[(1, 3)] == (0, 0) and tiles[(2, 4)] == (1, 1)


def test_tail_padding_has_no_tile() -> None:
    picture = xla_picture("f32[3]{0:T(2)L(8)}")
    assert [(c.padding, c.tile) for c in picture.memory[3:]] == [(True, (1,))] + [
        (True, None)] * 4


def test_combined_dims_draw_no_edge_padding() -> None:
    picture = xla_picture("f32[3,5]{1,0:T(*,4)}")  # 15 elements in one row of 16
    assert picture.values() == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14]]
    assert not any(c.padding for c in picture.grid)
    assert sum(c.padding for c in picture.memory) == 1


def test_rank_3_arrays_put_leading_dims_on_the_rows() -> None:
    picture = xla_picture("f32[2,2,3]{0,1,2}")
    assert picture.values() == [[0, 4, 8], [2, 6, 10], [1, 5, 9], [3, 7, 11]]


def test_a_block_and_the_gaps_between_its_offsets() -> None:
    picture = xla_picture("f32[4,8]{1,0:T(2,4)}", (2, 6))
    assert picture.values() == [[0, 1, 2, 3, 8, 9], [4, 5, 6, 7, 12, 13]]
    assert [c.offset for c in picture.memory if c.padding] == [10, 11]


def test_scalar() -> None:
    assert xla_picture("f32[]").values() == [[0]]


def test_seed003_zn_picture_is_the_seed_grid_and_tiles_are_fractals() -> None:
    picture = cute_picture(ZN)
    assert words(grid_text(picture)) == words(SEED003_ZN)
    assert grid_text(picture) == cute.to_grid(ZN)
    element = next(c for c in picture.grid if (c.row, c.col) == (1, 5))
    assert (element.offset, element.tile) == (37, (0, 1))
    assert len({c.tile for c in picture.grid}) == 6 and not any(c.padding for c in picture.memory)


def test_cute_memory_marks_unreached_offsets_and_rank_3_is_flattened() -> None:
    picture = cute_picture(cute.Layout((2, 2), (1, 4)))
    assert [c.offset for c in picture.memory if c.padding] == [2, 3]
    rank3 = cute_picture(cute.Layout((2, 3, 2), (1, 2, 6)))
    assert rank3.values() == [[0, 2, 4, 6, 8, 10], [1, 3, 5, 7, 9, 11]]


def test_draw_grid_errors_and_wide_labels() -> None:
    with pytest.raises(MapError, match="at least one row"):
        draw_grid("x", [])
    lines = draw_grid("x", [[i] for i in range(101)]).splitlines()
    assert lines[-2].startswith("100  |")


def test_too_large_pictures_are_refused() -> None:
    with pytest.raises(TooLargeError, match=str(PICTURE_LIMIT)):
        xla_picture("f32[100,100]")
    with pytest.raises(TooLargeError, match="buffer"):
        cute_picture(cute.Layout((2, 2), (1, 10000)))


def test_png_is_written(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    for name, picture in [("xla.png", xla_picture("f32[3,5]{1,0:T(2,2)}")),
                          ("zn.png", cute_picture(ZN))]:
        path = tmp_path / name
        save_png(picture, str(path))
        assert path.read_bytes()[:8] == PNG_MAGIC


def test_png_to_a_bad_path_is_an_error(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    with pytest.raises(SymidxError, match="cannot write"):
        save_png(cute_picture(ZN), str(tmp_path / "missing" / "x.png"))


def test_png_without_matplotlib_says_what_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(SymidxError, match=r"symidx\[plot\]"):
        save_png(cute_picture(ZN), "unused.png")
