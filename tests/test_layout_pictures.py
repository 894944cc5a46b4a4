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


# ---------------------------------------------------------------------------------------------
# Pictures people read: colours that show a swizzle, indices, legends, sizes, TV layouts


def png_size(path) -> tuple[int, int]:
    """Width and height from the PNG header (IHDR)."""
    with open(path, "rb") as f:
        data = f.read(24)
    assert data[:8] == PNG_MAGIC
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def cells_and_colours(ax) -> dict[tuple[int, int], tuple[float, ...]]:
    """(row, col) -> RGBA of each cell drawn on ``ax`` (the cells' image; transparent
    pixels are no cell)."""
    image = ax.images[0].get_array()
    rows, cols = image.shape[:2]
    return {(r, c): tuple(float(x) for x in image[r, c]) for r in range(rows)
            for c in range(cols) if image[r, c][3] > 0}


SWIZZLED = "Sw<3,3,3> o (8,64):(64,1)"


def test_distinct_banks_get_distinct_colours() -> None:
    pytest.importorskip("matplotlib")
    from symidx.layout.pictures import figure

    layout = cute.parse_any_layout(SWIZZLED)
    fig = figure(cute_picture(layout, 16), "bank")
    colours = cells_and_colours(fig.axes[0])
    assert len(colours) == 8 * 64
    by_bank: dict[int, set[tuple[float, ...]]] = {}
    for (r, c), rgba in colours.items():
        bank = (layout(r, c) * 16 // 32) % 32  # twin: 16-bit elements, 4-byte banks
        by_bank.setdefault(bank, set()).add(rgba)
    assert len(by_bank) == 32
    assert all(len(s) == 1 for s in by_bank.values())            # one colour per bank
    assert len({next(iter(s)) for s in by_bank.values()}) == 32  # distinct banks, distinct
    # the swizzle shows: row 1 does not repeat row 0's colours, an unswizzled layout does
    assert [colours[(1, c)] for c in range(64)] != [colours[(0, c)] for c in range(64)]
    plain = cells_and_colours(figure(cute_picture(cute.parse_any_layout("(8,64):(64,1)"), 16),
                                     "bank").axes[0])
    assert [plain[(1, c)] for c in range(64)] == [plain[(0, c)] for c in range(64)]


def test_offset_mod_k_and_tile_colours_are_distinct() -> None:
    pytest.importorskip("matplotlib")
    from symidx.layout.pictures import figure

    layout = cute.parse_any_layout("Sw<2,0,2> o (4,4):(4,1)")
    colours = cells_and_colours(figure(cute_picture(layout), "mod:4").axes[0])
    keys = {}
    for (r, c), rgba in colours.items():
        keys.setdefault(layout(r, c) % 4, set()).add(rgba)
    assert len(keys) == 4 and all(len(s) == 1 for s in keys.values())
    assert len({next(iter(s)) for s in keys.values()}) == 4
    fig = figure(cute_picture(ZN), "tile")
    tiles = {}
    for (r, c), rgba in cells_and_colours(fig.axes[0]).items():
        tiles.setdefault((r // 4, c // 4), set()).add(rgba)
    assert len(tiles) == 6 and len({next(iter(s)) for s in tiles.values()}) == 6
    assert fig.legends and "colour = tile" in fig.legends[0].get_title().get_text()
    with pytest.raises(MapError, match="mod:K"):
        figure(cute_picture(ZN), "mod:0")


def test_indices_legend_and_colour_scale() -> None:
    pytest.importorskip("matplotlib")
    from symidx.layout.pictures import figure

    fig = figure(cute_picture(cute.parse_any_layout(SWIZZLED), 16))  # auto: bank
    grid = fig.axes[0]
    assert [t.get_text() for t in grid.get_yticklabels()] == [str(r) for r in range(8)]
    assert [t.get_text() for t in grid.get_xticklabels()][:3] == ["0", "8", "16"]
    bar = fig.axes[-1]
    assert "bank" in bar.get_ylabel() and len(bar.get_yticks()) == 16
    texts = {t.get_text() for t in grid.texts}
    assert {"0", "64", "511"} <= texts  # offsets printed at this size


@pytest.mark.parametrize(("text", "note"), [
    ("(16,16):(16,1)", None),
    ("(64,64):(64,1)", "colour only"),
    ("(200,200):(200,1)", "only the first 128 rows and columns"),
])
def test_size_policy_keeps_pictures_bounded_and_says_so(tmp_path, text: str, note) -> None:
    pytest.importorskip("matplotlib")
    from symidx.layout.pictures import figure

    layout = cute.parse_any_layout(text)
    fig = figure(cute_picture(layout, limit=1 << 16))
    title = fig._suptitle.get_text()
    if note is None:
        assert "\n" not in title
    else:
        assert note in title
    path = tmp_path / "p.png"
    save_png(cute_picture(layout, limit=1 << 16), str(path))
    width, height = png_size(path)
    assert width <= 1800 and height <= 1800


def test_tv_picture_labels_thread_and_value(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from symidx.layout.pictures import save, tv_figure
    from symidx.layout.tv import mma_sm80_16x8x16

    tv = mma_sm80_16x8x16("C")
    fig = tv_figure(tv)
    ax = fig.axes[0]
    labels = {(int(t.get_position()[1]), int(t.get_position()[0])): t.get_text()
              for t in ax.texts}
    assert len(labels) == 16 * 8
    for (r, c), text in labels.items():  # twin: PTX's C fragment (groupID, threadID_in_group)
        t, v = (int(x[1:]) for x in text.split("\n"))
        group, tig = t >> 2, t % 4
        assert (group + 8 * (v >= 2), 2 * tig + (v & 1)) == (r, c)
    colours = cells_and_colours(ax)
    by_thread = {}
    for (r, c), text in labels.items():
        by_thread.setdefault(text.split("\n")[0], set()).add(colours[(r, c)])
    assert len(by_thread) == 32 and all(len(s) == 1 for s in by_thread.values())
    # CuTe's drawers (print_latex's TikzColor_TV): eight pastels by thread mod 8
    pastels = [(175, 175, 255), (175, 255, 175), (255, 255, 175), (255, 175, 175),
               (210, 210, 255), (210, 255, 210), (255, 255, 210), (255, 210, 210)]
    for name, found in by_thread.items():
        rgb = tuple(round(255 * x) for x in next(iter(found))[:3])
        assert rgb == pastels[int(name[1:]) % 8]
    distinct = cells_and_colours(tv_figure(tv, style="distinct").axes[0])
    assert len(set(distinct.values())) == 32
    save(fig, str(tmp_path / "tv.svg"))
    assert "<svg" in (tmp_path / "tv.svg").read_text()[:400]


def test_figures_do_not_switch_the_global_backend() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    from symidx.layout.pictures import figure

    before = matplotlib.get_backend()
    figure(cute_picture(ZN))
    assert matplotlib.get_backend() == before


def test_docs_pictures_are_legible_sizes() -> None:
    from pathlib import Path

    docs = Path(__file__).resolve().parent.parent / "docs"
    text = (docs / "layouts.md").read_text()
    names = ["layout-zN.png", "layout-f32-3x5-T2x2.png", "layout-swizzle-Sw333-8x64.png",
             "tv-SM80_16x8x16-A.png", "banks-Sw333-8x64-rows.png", "layout-64x64.png"]
    for name in names:
        assert f"({name})" in text, name
        width, height = png_size(docs / name)
        assert 200 <= width <= 1800 and 150 <= height <= 1800, (name, width, height)


def outlined(ax) -> set[tuple[int, int]]:
    """(row, col) of the cells outlined as a highlight on ``ax``."""
    return {(int(p.get_y()), int(p.get_x())) for p in ax.patches
            if p.get_linewidth() > 1.5 and p.get_facecolor()[3] == 0}


@pytest.mark.parametrize(("text", "spec"), [("(8,8):(8,1)", "0:2,0:4"),
                                            ("Sw<3,3,3> o (8,64):(64,1)", "1,:"),
                                            ("(8,8):(1,8)", ":,3")])
def test_a_highlight_outlines_the_elements_and_where_they_are_stored(text, spec) -> None:
    pytest.importorskip("matplotlib")
    from symidx.layout import cute
    from symidx.layout.pictures import cute_picture, figure, parse_highlight

    layout = cute.parse_layout(text)
    h = parse_highlight(spec)
    drawing = figure(cute_picture(layout), highlight=h)
    grid_ax, memory_ax = drawing.axes[:2]
    rows, cols = cute.size(layout.shape[0]), cute.size(layout.shape[1])
    expected = {(r, c) for r in range(rows) for c in range(cols) if h.holds(r, c)}
    assert outlined(grid_ax) == expected
    width = min(rows * cols, 32)                 # memory rows: 32 slots, offset order
    stored = {layout(r, c) for r, c in expected}
    assert outlined(memory_ax) == {divmod(o, width) for o in stored}
    assert "highlighted: rows" in drawing.figure.get_suptitle()


@pytest.mark.parametrize(("spec", "rows", "cols"), [
    ("0:8,0:16", (0, 8), (0, 16)), ("3", (3, 4), None), (":,5", None, (5, 6)),
    ("2:", (2, 1 << 62), None)])
def test_highlights_read(spec, rows, cols) -> None:
    from symidx.layout.pictures import parse_highlight

    h = parse_highlight(spec)
    assert (h.rows, h.cols) == (rows, cols)


@pytest.mark.parametrize(("spec", "column"), [("a", 1), ("1,2,3", 4), ("4:2", 1), ("0,x", 3)])
def test_bad_highlights_are_located(spec, column) -> None:
    from symidx.errors import ParseError
    from symidx.layout.pictures import parse_highlight

    with pytest.raises(ParseError) as found:
        parse_highlight(spec)
    assert found.value.column == column


def test_figures_are_drawings_that_show_as_images() -> None:
    """Every picture function returns a Drawing (never a bare Figure): it shows as PNG and
    SVG, and keeps the Figure."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from symidx._display import Drawing
    from symidx.layout import banks, cute, views
    from symidx.layout.pictures import banks_figure, cute_picture, figure, tv_figure
    from symidx.layout.tv import mma_sm80_16x8x16

    report = banks.bank_conflicts(views.view(cute.parse_layout("(32,32):(32,1)")),
                                  cute.Layout(32, 32))
    for drawing in (tv_figure(mma_sm80_16x8x16("A")), figure(cute_picture(
            cute.parse_layout("(4,4):(4,1)"))), banks_figure("a column", report)):
        assert isinstance(drawing, Drawing) and isinstance(drawing.figure, Figure)
        assert drawing._repr_png_()[:4] == b"\x89PNG"
        assert "<svg" in drawing._repr_svg_()
        assert drawing.axes == drawing.figure.axes
