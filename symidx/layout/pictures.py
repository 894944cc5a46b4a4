"""Pictures of layouts: which offset each element gets, and what the buffer holds.

A :class:`Picture` has two panels of :class:`Cell` s:

* the **grid** -- the logical array, each element at its (row, column) with its offset; for a
  tiled XLA array of rank 1 or 2 also the padding the tiles add past its edges (seed 000,
  Figure 1);
* the **memory** -- every slot of the buffer in offset order, wrapped into rows (one tile a
  row when the tiles are small), padding included.

Each cell knows its first-level tile, so a drawing can give every tile its own colour, as
the tiled-layout seed's figures do; or a cell is coloured by its shared-memory bank, or by
its offset mod ``k``, so that a swizzle shows. :func:`grid_text` draws the grid as the TLA
seed draws a layout; :func:`figure` draws both panels with matplotlib (the optional ``plot``
extra, imported only when called; object-oriented ``Figure`` s, no global backend), with row
and column indices and a legend or colour scale, and :func:`save` writes PNG or SVG (by the
file's suffix). :func:`tv_figure` draws a thread-value layout as CuTe's drawers do (thread
and value in each cell), :func:`banks_figure` a warp's request to the banks.

**Size policy.** Figures stay below :data:`MAX_INCHES` inches a side (100 pixels an inch),
so cells shrink as a layout grows; offsets are printed while they fit at
:data:`MIN_FONT` points or more, else cells are colour only; past :data:`SUMMARY` rows or
columns only the top-left ``SUMMARY x SUMMARY`` corner is drawn. The title says which.

Grids are two-dimensional: a rank-1 layout is one row; a rank-3+ XLA array puts its leading
dims (row-major) on the rows and its last dim on the columns; a rank-3+ CuTe layout puts
mode 0 on the rows and the other modes (colexicographically) on the columns.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from symidx._display import Drawing, Rich, Shown
from symidx.errors import MapError, ParseError, SymidxError, TooLargeError
from symidx.layout import cute
from symidx.layout.figures import image, save
from symidx.layout.grid import draw_grid
from symidx.lowering.layouts import xla
from symidx.lowering.layouts.shapes import (
    ArrayShape,
    array_shape,
    check_block,
    element_size_in_bits,
    layout_parts,
    size_in_elements,
)

__all__ = ["CUTE_TV_COLOURS", "FIGURE_LIMIT", "LEGIBLE", "MAX_INCHES", "MIN_FONT",
           "PICTURE_LIMIT", "SUMMARY", "Cell", "Colour", "Highlight", "Picture", "bank_of",
           "banks_figure", "colour_keys", "cute_picture", "figure", "grid_text",
           "offsets_picture", "owner_figure", "parse_highlight", "picture_image", "save",
           "save_banks_png", "save_png", "tv_figure", "xla_picture"]

PICTURE_LIMIT = 4096
"""Most elements (and buffer slots) a picture holds by default (the text grid's limit)."""

FIGURE_LIMIT = 1 << 15
"""Most elements (and buffer slots) a picture drawn as a figure may hold (pass it as
``limit``); the figure itself shows at most ``SUMMARY x SUMMARY`` cells."""

LEGIBLE = 32
"""Most rows or columns with every index on the axes (past it, every 8th)."""

SUMMARY = 128
"""Most rows or columns drawn at all (the top-left corner past that)."""

MAX_INCHES = 16.0
"""Largest side of a figure, in inches (100 pixels an inch)."""

MAX_ROW = 32
"""Widest row of the memory panel."""

TileId = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Cell:
    """One square of a picture: where it is drawn, the offset it shows, the first-level
    tile it belongs to (None if none: tail padding), and whether it is padding."""

    row: int
    col: int
    offset: int
    tile: TileId | None
    padding: bool = False


@dataclass(frozen=True, slots=True)
class Picture(Rich):
    """A layout's picture: ``title`` (the layout's text), the ``grid`` and ``memory``
    panels (see the module docstring)."""

    title: str
    grid: tuple[Cell, ...]
    memory: tuple[Cell, ...]
    element_bits: int = 32

    def _shown_(self) -> Shown:
        """A notebook shows the picture drawn (:func:`figure`), else its text grid."""
        return Shown(f"picture of {self.title}", draw=lambda: figure(self),
                     drawable=max(len(self.grid), len(self.memory)) <= FIGURE_LIMIT,
                     fallback=grid_text(self))

    def values(self) -> list[list[int]]:
        """The offsets of the elements, one list per grid row."""
        elements = [c for c in self.grid if not c.padding]
        n_rows = 1 + max(c.row for c in elements)
        n_cols = 1 + max(c.col for c in elements)
        out = [[0] * n_cols for _ in range(n_rows)]
        for c in elements:
            out[c.row][c.col] = c.offset
        return out


def grid_text(picture: Picture) -> str:
    """The grid as the TLA seed draws a layout: title, column numbers, boxed offsets."""
    return draw_grid(picture.title, picture.values())


def _check_size(what: str, count: int, limit: int = PICTURE_LIMIT) -> None:
    if count > limit:
        raise TooLargeError(f"{what} has {count} cells; pictures draw at most {limit}")


def _wrap(width: int) -> Callable[[int], tuple[int, int]]:
    """Position of the ``i``-th memory slot in rows of ``width`` (at most :data:`MAX_ROW`)."""
    width = max(1, min(width, MAX_ROW))
    return lambda i: divmod(i, width)


# ---------------------------------------------------------------------------------------------
# XLA arrays


def _grid_position(dims: Sequence[int]) -> Callable[[Sequence[int]], tuple[int, int]]:
    """Logical index -> (row, column): leading dims row-major on the rows, last on columns."""
    def position(index: Sequence[int]) -> tuple[int, int]:
        if not index:
            return 0, 0
        row = 0
        for e, n in zip(index[:-1], dims[:-1]):
            row = row * n + e
        return row, index[-1]
    return position


def xla_picture(shape: ArrayShape, block: Sequence[int] | None = None,
                limit: int = PICTURE_LIMIT) -> Picture:
    """The picture of an XLA array's layout; tiles are the first-level tiles.

    With ``block`` (one size per dim), only the sub-array ``[0:block[0], 0:block[1], ...]``:
    its elements, and the buffer from its smallest to its largest offset, the slots it does
    not reach drawn as gaps.
    """
    s = array_shape(shape)
    dims, m2m, tiles = layout_parts(s)
    view = dims if block is None else check_block(dims, block)
    if not math.prod(dims):
        raise MapError(f"{s} has no elements to draw")
    total = size_in_elements(s)
    _check_size(str(s), max(total, math.prod(dims)), limit)
    _, _, steps = xla.tiling_plan(dims, m2m, tiles)
    tiled = math.prod(xla.tiled_shape(dims, m2m, tiles))
    order = xla.major_to_minor(m2m)
    position = _grid_position(view)
    place = _wrap(math.prod(steps[0].tile) if steps else (dims[order[-1]] if dims else 1))
    extra = len(steps[0].combined) - len(dims) if steps else 0
    # The padding past the array's edges can be drawn when the first tile merges no dims.
    edges = block is None and len(dims) <= 2 and (
        not steps or steps[0].merged == (0,) * extra + (1,) * len(dims))
    grid: list[Cell] = []
    memory: list[Cell] = []
    for p in range(total):
        origin = xla.slot_origin(dims, m2m, tiles, p) if p < tiled else None
        tile = origin[0] if origin is not None else None
        logical = xla.logical_index(dims, m2m, tiles, p) if p < tiled else None
        memory.append(Cell(*place(p), p, tile, logical is None))
        if logical is not None:
            if all(e < n for e, n in zip(logical, view)):
                grid.append(Cell(*position(logical), p, tile))
        elif origin is not None and edges and not any(origin[1][:extra]):
            padded = [0] * len(dims)
            for k, e in zip(order, origin[1][extra:]):
                padded[k] = e
            grid.append(Cell(*position(padded), p, tile, True))
    if block is not None:
        memory = _reached(grid, 1 + max(c.col for c in memory))
    return Picture(str(s), tuple(grid), tuple(memory), element_size_in_bits(s))


def _reached(grid: Sequence[Cell], width: int) -> list[Cell]:
    """The buffer from the smallest to the largest offset in ``grid``, wrapped at ``width``;
    slots no grid cell reaches are gaps."""
    tile_at: dict[int, TileId | None] = {}
    for c in grid:
        if not c.padding:
            tile_at.setdefault(c.offset, c.tile)
    low, high = min(tile_at), max(tile_at)
    place = _wrap(width)
    return [Cell(*place(o - low), o, tile_at.get(o), o not in tile_at)
            for o in range(low, high + 1)]


# ---------------------------------------------------------------------------------------------
# CuTe layouts


def _grid_layout(layout: cute.Layout) -> cute.Layout:
    """``layout`` as two modes: (rows, columns)."""
    r = cute.rank(layout)
    if r == 1:
        return cute.make_layout(cute.Layout(1, 0), layout)
    if r == 2:
        return layout
    return cute.make_layout(layout[0], cute.make_layout(*(layout[i] for i in range(1, r))))


def cute_picture(layout: cute.Layout | cute.ComposedLayout, element_bits: int = 32,
                 limit: int = PICTURE_LIMIT) -> Picture:
    """The picture of a nested (or composed) layout. An element's tile is, per mode, its
    coordinate divided by the mode's first sub-mode (the fractal of a ``zN`` layout); the
    memory panel spans the smallest to the largest offset, and slots no coordinate reaches
    are gaps."""
    inner = layout.inner if isinstance(layout, cute.ComposedLayout) else layout
    view = _grid_layout(inner)
    n_rows, n_cols = cute.size(view[0]), cute.size(view[1])
    _check_size(str(layout), n_rows * n_cols, limit)
    first = [cute.flatten(view[k].shape)[0] for k in range(2)]
    offsets = cute.composed_values(layout, np.arange(n_rows * n_cols, dtype=np.int64))
    grid = [Cell(m, n, int(offsets[m + n_rows * n]), (m // first[0], n // first[1]))
            for m in range(n_rows) for n in range(n_cols)]
    _check_size(f"the buffer of {layout}", int(offsets.max() - offsets.min()) + 1, limit)
    memory = _reached(grid, first[0] * first[1] if first[0] * first[1] > 1 else n_cols)
    return Picture(str(layout), tuple(grid), tuple(memory), element_bits)


def offsets_picture(title: str, values: np.ndarray, element_bits: int = 32,
                    limit: int = PICTURE_LIMIT) -> Picture:
    """The picture of a 2-D array of offsets (element ``(r, c)`` -> ``values[r, c]``: a
    layout given by its offsets, such as a Triton shared layout); no tiles."""
    n_rows, n_cols = values.shape
    _check_size(title, n_rows * n_cols, limit)
    grid = [Cell(r, c, int(values[r, c]), None) for r in range(n_rows) for c in range(n_cols)]
    _check_size(f"the buffer of {title}", int(values.max() - values.min()) + 1, limit)
    return Picture(title, tuple(grid), tuple(_reached(grid, n_cols)), element_bits)


# ---------------------------------------------------------------------------------------------
# Drawing (matplotlib, object-oriented)

Colour = str
"""``"tile"``, ``"bank"``, ``"mod:K"`` (offset mod K) or ``"auto"`` (bank for a swizzled
layout, else tile)."""

BANKS = 32


def bank_of(offset: int, element_bits: int) -> int:
    """The shared-memory bank (32 banks of 4-byte words) of an element's first byte."""
    return (offset * element_bits // 32) % BANKS


def _matplotlib() -> Any:
    try:
        import matplotlib
        import matplotlib.figure  # noqa: F401
    except ImportError:
        raise SymidxError("pictures need matplotlib: pip install 'symidx[plot]'") from None
    return matplotlib


def _palette(n: int) -> list[Any]:
    """``n`` distinct colours: the qualitative tab20, tab20b, tab20c (60), else evenly
    spaced on a perceptual map."""
    mpl = _matplotlib()
    listed = [c for name in ("tab20", "tab20b", "tab20c") for c in mpl.colormaps[name].colors]
    if n <= len(listed):
        # tab20 pairs a strong and a light shade: take the strong ones first
        order = list(range(0, len(listed), 2)) + list(range(1, len(listed), 2))
        return [tuple(listed[i]) + (1.0,) for i in order[:n]]
    cmap = mpl.colormaps["turbo"]
    return [cmap(i / max(n - 1, 1)) for i in range(n)]


def _cyclic(n: int) -> list[Any]:
    """``n`` distinct colours around the hue circle: neighbouring banks (offsets) get
    neighbouring hues, so an unswizzled row is a smooth rainbow and a swizzle shows as
    its blocks out of order."""
    mpl = _matplotlib()
    cmap = mpl.colormaps["hsv"]
    return [cmap(0.92 * i / max(n - 1, 1)) for i in range(n)]


def _colour_mode(picture: Picture, colour: Colour) -> tuple[str, int]:
    if colour == "auto":
        tiles = {c.tile for c in picture.grid if c.tile is not None}
        return ("bank", BANKS) if picture.title.startswith("Sw<") or len(tiles) <= 1 else (
            "tile", 0)
    if colour == "tile":
        return "tile", 0
    if colour == "bank":
        return "bank", BANKS
    if colour.startswith("mod:"):
        try:
            k = int(colour[4:])
        except ValueError:
            k = 0
        if k < 1:
            raise MapError(f"colour 'mod:K' needs a positive K, got {colour!r}")
        return "mod", k
    raise MapError(f"colour is 'auto', 'tile', 'bank' or 'mod:K', not {colour!r}")


def colour_keys(picture: Picture, colour: Colour = "auto") -> dict[tuple[str, int, int], Any]:
    """The key each cell is coloured by: ``(panel, row, col) -> key`` (a tile, a bank, or
    an offset mod K; None for padding and gaps)."""
    mode, k = _colour_mode(picture, colour)
    out: dict[tuple[str, int, int], Any] = {}
    for panel, cells in (("grid", picture.grid), ("memory", picture.memory)):
        for c in cells:
            if c.padding or (mode == "tile" and c.tile is None):
                key: Any = None
            elif mode == "tile":
                key = c.tile
            elif mode == "bank":
                key = bank_of(c.offset, picture.element_bits)
            else:
                key = c.offset % k
            out[(panel, c.row, c.col)] = key
    return out


MIN_FONT = 4.5
"""Smallest font (points) offsets are printed at; below it cells are colour only."""


def _cell_inches(rows: int, cols: int, extra: float = 0.0) -> float:
    """Inches per cell: 0.42 at most, and small enough that the figure stays under
    :data:`MAX_INCHES` (``extra`` inches of legend beside it)."""
    return min(0.42, (MAX_INCHES - 2 - extra) / max(cols, 1), (MAX_INCHES - 2) / max(rows, 1))


def _font_for(inch: float, longest: int, lines: int = 1) -> float:
    """The font that fits ``longest`` characters (and ``lines`` lines) in a cell."""
    return min(8.0, inch * 72 * 0.85 / (0.62 * max(longest, 2)), inch * 72 * 0.8 / lines)


def _crop(cells: Sequence[Cell]) -> tuple[list[Cell], int, int, bool]:
    rows = 1 + max(c.row for c in cells)
    cols = 1 + max(c.col for c in cells)
    if rows <= SUMMARY and cols <= SUMMARY:
        return list(cells), rows, cols, False
    kept = [c for c in cells if c.row < SUMMARY and c.col < SUMMARY]
    return kept, min(rows, SUMMARY), min(cols, SUMMARY), True


def _index_ticks(ax: Any, rows: int, cols: int, fontsize: float) -> None:
    step_c = 1 if cols <= LEGIBLE else 8
    step_r = 1 if rows <= LEGIBLE else 8
    ax.set_xticks([c + 0.5 for c in range(0, cols, step_c)],
                  [str(c) for c in range(0, cols, step_c)], fontsize=fontsize)
    ax.set_yticks([r + 0.5 for r in range(0, rows, step_r)],
                  [str(r) for r in range(0, rows, step_r)], fontsize=fontsize)
    ax.xaxis.tick_top()
    ax.tick_params(length=0, pad=1)
    for side in ax.spines.values():
        side.set_visible(False)


def _draw_cells(ax: Any, cells: Sequence[Cell], face: Callable[[Cell], Any],
                label: Callable[[Cell], str] | None, rows: int, cols: int,
                font: float, marked: Callable[[Cell], bool] | None = None) -> None:
    """The cells as one image (``ax.images[0]``: RGBA per cell, transparent where no cell
    is), padding hatched, thin cell borders, and the labels; with ``marked``, the marked
    cells (a highlight) outlined thick and the others faded."""
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Rectangle

    rgba = np.zeros((rows, cols, 4))
    for c in cells:
        rgba[c.row, c.col] = to_rgba(face(c))
        if marked is not None and not marked(c):
            rgba[c.row, c.col, :3] = 1 - 0.3 * (1 - rgba[c.row, c.col, :3])
    ax.imshow(rgba, extent=(0, cols, rows, 0), interpolation="nearest", aspect="equal")
    for c in cells:
        if c.padding:
            ax.add_patch(Rectangle((c.col, c.row), 1, 1, facecolor="none", edgecolor="0.55",
                                   linewidth=0.0, hatch="///"))
    width = 0.4 if label is not None else 0.15
    if max(rows, cols) <= SUMMARY:
        ax.hlines(range(rows + 1), 0, cols, colors="0.3", linewidth=width)
        ax.vlines(range(cols + 1), 0, rows, colors="0.3", linewidth=width)
    if label is not None:
        for c in cells:
            ax.text(c.col + 0.5, c.row + 0.5, label(c), ha="center", va="center",
                    fontsize=font, color="0.45" if c.padding or (
                        marked is not None and not marked(c)) else "black")
    if marked is not None:
        for c in cells:
            if marked(c):
                ax.add_patch(Rectangle((c.col, c.row), 1, 1, facecolor="none",
                                       edgecolor="black", linewidth=1.6, zorder=3))
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_aspect("equal")
    ax.set_anchor("N")
    _index_ticks(ax, rows, cols, 6.0 if max(rows, cols) > LEGIBLE else 7.0)


def figure(picture: Picture, colour: Colour = "auto", memory: bool | None = None,
           highlight: Highlight | None = None) -> Drawing:
    """The picture drawn (a :class:`~symidx._display.Drawing`; its ``figure`` is the
    matplotlib ``Figure``): the grid (logical index -> offset, rows and columns numbered)
    and -- by default when colouring by tile, or with a highlight -- the memory panel,
    coloured by ``colour`` with a legend (tiles) or a colour scale (banks, offsets mod K),
    under the size policy (module docstring). ``highlight`` (:func:`parse_highlight`:
    rows and columns of the grid, e.g. a slice or a tile) outlines those elements and the
    slots of memory they are stored in, and fades the others."""
    _matplotlib()
    from matplotlib.figure import Figure

    mode, k = _colour_mode(picture, colour)
    keys = colour_keys(picture, colour)
    show_memory = (mode == "tile" or highlight is not None) if memory is None else memory
    marked_grid = None if highlight is None else {
        (c.row, c.col) for c in picture.grid if not c.padding and highlight.holds(c.row, c.col)}
    marked_offsets = None if marked_grid is None else {
        c.offset for c in picture.grid if (c.row, c.col) in marked_grid}
    grid, g_rows, g_cols, g_cut = _crop(picture.grid)
    panels = [("grid", grid, g_rows, g_cols)]
    cut = g_cut
    if show_memory:
        mem, m_rows, m_cols, m_cut = _crop(picture.memory)
        panels.append(("memory", mem, m_rows, m_cols))
        cut = cut or m_cut
    rows = max(p[2] for p in panels)
    cols = sum(p[3] for p in panels) + 2 * (len(panels) - 1)
    inch = _cell_inches(rows, cols, 2.4)
    digits = max(len(str(c.offset)) for c in picture.grid + picture.memory)
    font = _font_for(inch, digits)
    legible = font >= MIN_FONT
    fig = Figure(figsize=(inch * cols + 2.4, inch * rows + 1.6), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False,
                        gridspec_kw={"width_ratios": [p[3] for p in panels]})[0]
    if mode == "tile":
        tiles = sorted({c.tile for c in picture.grid + picture.memory if c.tile is not None})
        base = _palette(min(len(tiles), 60))
        colours = {t: base[i % len(base)] for i, t in enumerate(tiles)}
        palette: list[Any] = []
    else:
        palette = _cyclic(BANKS if mode == "bank" else k)

    def face_of(panel: str) -> Callable[[Cell], Any]:
        def face(c: Cell) -> Any:
            key = keys[(panel, c.row, c.col)]
            if key is None:
                return "white"
            return colours[key] if mode == "tile" else palette[key]
        return face

    label = (lambda c: str(c.offset)) if legible else None
    titles = {"grid": "logical index (row, column) -> offset",
              "memory": "memory (offset order)"}
    def marked_in(panel: str) -> Callable[[Cell], bool] | None:
        if marked_grid is None or marked_offsets is None:
            return None
        if panel == "grid":
            return lambda c: (c.row, c.col) in marked_grid
        return lambda c: not c.padding and c.offset in marked_offsets

    for ax, (panel, cells, n_rows, n_cols) in zip(axes, panels):
        _draw_cells(ax, cells, face_of(panel), label, n_rows, n_cols, font, marked_in(panel))
        ax.set_title(titles[panel], fontsize=9)
    if mode == "tile":
        from matplotlib.patches import Patch

        shown = tiles[:12]
        handles = [Patch(facecolor=colours[t], edgecolor="0.3", label=f"tile {t}")
                   for t in shown]
        if any(c.padding for c in picture.grid + picture.memory):
            handles.append(Patch(facecolor="white", edgecolor="0.3", hatch="///",
                                 label="padding / gap"))
        if len(tiles) > len(shown):
            handles.append(Patch(facecolor="none", edgecolor="none",
                                 label=f"... {len(tiles) - len(shown)} more tiles"))
        fig.legend(handles=handles, loc="outside right upper", fontsize=7,
                   title="colour = tile", title_fontsize=8)
    else:
        from matplotlib.cm import ScalarMappable
        from matplotlib.colors import BoundaryNorm, ListedColormap

        n = len(palette)
        norm = BoundaryNorm([i - 0.5 for i in range(n + 1)], n)
        bar = fig.colorbar(ScalarMappable(norm=norm, cmap=ListedColormap(palette)),
                           ax=list(axes), location="right", shrink=0.95, aspect=25)
        step = 1 if n <= 16 else (2 if n <= 32 else max(1, n // 16))
        bar.set_ticks(list(range(0, n, step)))
        bar.ax.tick_params(labelsize=6)
        bar.set_label(f"bank ({picture.element_bits}-bit elements; 32 banks of 4 bytes)"
                      if mode == "bank" else f"offset mod {k}", fontsize=8)
    notes = []
    if not legible:
        notes.append(f"offsets not printed (cells too small at {rows}x{cols}): colour only")
    if cut:
        notes.append(f"only the first {SUMMARY} rows and columns are drawn")
    if highlight is not None and marked_offsets is not None:
        notes.append(f"highlighted: {highlight} ({len(marked_grid or ())} elements, "
                     f"{_ranges(sorted(marked_offsets))})")
    fig.suptitle(picture.title + ("\n" + "; ".join(notes) if notes else ""), fontsize=10)
    return Drawing(fig)


def _ranges(offsets: Sequence[int]) -> str:
    """``offsets 0-7, 64-71`` (runs of consecutive offsets; the first few)."""
    if not offsets:
        return "no offsets"
    runs: list[list[int]] = [[offsets[0], offsets[0]]]
    for o in offsets[1:]:
        if o == runs[-1][1] + 1:
            runs[-1][1] = o
        else:
            runs.append([o, o])
    shown = [f"{a}-{b}" if b > a else str(a) for a, b in runs[:6]]
    more = f", ... ({len(runs)} runs)" if len(runs) > 6 else ""
    return "offsets " + ", ".join(shown) + more


@dataclass(frozen=True)
class Highlight:
    """Rows and columns of a picture's grid: per axis a half-open range ``(start, stop)``
    (None: all of it). :func:`parse_highlight` reads ``"0:4,8:16"``, ``"2,:"``."""

    rows: tuple[int, int] | None
    cols: tuple[int, int] | None

    def holds(self, row: int, col: int) -> bool:
        return all(r is None or r[0] <= v < r[1] for r, v in ((self.rows, row),
                                                               (self.cols, col)))

    def __str__(self) -> str:
        def one(r: tuple[int, int] | None) -> str:
            return ":" if r is None else str(r[0]) if r[1] == r[0] + 1 else f"{r[0]}:{r[1]}"
        return f"rows {one(self.rows)}, columns {one(self.cols)}"


def parse_highlight(text: str) -> Highlight:
    """``ROWS,COLS`` of a grid, each an index ``i``, a range ``a:b`` (``b`` excluded;
    either end may be left out) or ``:`` (all); one item alone is the rows. A tile:
    ``0:8,0:16``; a row: ``3``; a column: ``:,5``."""
    parts = text.split(",")
    if len(parts) > 2:
        raise ParseError("a highlight is ROWS[,COLS]", text, len(parts[0]) + len(parts[1]) + 1)
    found: list[tuple[int, int] | None] = []
    at = 0
    for part in parts:
        item = part.strip()
        try:
            if item in ("", ":"):
                found.append(None)
            elif ":" in item:
                a, b = item.split(":", 1)
                lo = int(a) if a.strip() else 0
                hi = int(b) if b.strip() else 1 << 62
                if lo < 0 or hi <= lo:
                    raise ValueError
                found.append((lo, hi))
            else:
                i = int(item)
                if i < 0:
                    raise ValueError
                found.append((i, i + 1))
        except ValueError:
            raise ParseError("expected an index i, a range a:b or ':'", text, at) from None
        at += len(part) + 1
    return Highlight(found[0], found[1] if len(found) > 1 else None)


def save_png(picture: Picture, path: str, colour: Colour = "auto",
             highlight: Highlight | None = None) -> None:
    """Draw ``picture`` (:func:`figure`) and write it (PNG, or SVG for a ``.svg`` path)."""
    save(figure(picture, colour, highlight=highlight), path)


def picture_image(picture: Picture, fmt: str = "png", colour: Colour = "auto") -> bytes:
    """``picture`` drawn (:func:`figure`) as an image in memory: ``png`` or ``svg``."""
    return image(figure(picture, colour).figure, fmt)


#: CuTe's thread-value colours (``TikzColor_TV`` of ``print_latex``): eight pastels, by
#: thread mod 8.
CUTE_TV_COLOURS = ((175, 175, 255), (175, 255, 175), (255, 255, 175), (255, 175, 175),
                   (210, 210, 255), (210, 255, 210), (255, 255, 210), (255, 210, 210))


def tv_figure(tv: Any, colour: str = "thread", style: str = "cute",
              highlight: Highlight | None = None) -> Drawing:
    """A thread-value layout (:class:`~symidx.layout.tv.TVLayout`) as CuTe's drawers
    (``print_latex``, ``print_svg``) show one: the tile, each element labelled with the
    thread ``T`` and value ``V`` holding it, coloured by thread (``colour="value"``: by
    value) with CuTe's eight colours (thread mod 8); ``style="distinct"`` gives every
    thread its own colour, with a colour scale. ``highlight`` outlines rows and columns of
    the tile (:func:`parse_highlight`)."""
    rows, cols = tv.tile
    if max(rows, cols) > SUMMARY:
        raise TooLargeError(f"a {rows}x{cols} tile; TV pictures draw at most {SUMMARY}")
    order = "column" if tv.order == "col" else "row"
    return owner_figure(f"{tv.name or tv.layout}", f"{tv.layout}: (thread, value) -> "
                        f"{order}-major index of the {rows}x{cols} tile", tv.owner(),
                        tv.threads, tv.values, colour=colour, style=style,
                        highlight=highlight)


def owner_figure(title: str, subtitle: str, owner: np.ndarray, threads: int, values: int,
                 labels: tuple[str, str] = ("T", "V"), colour: str = "thread",
                 style: str = "cute", highlight: Highlight | None = None,
                 copies: np.ndarray | None = None) -> Drawing:
    """Who holds each element of a tile: ``owner`` is ``(rows, cols, 2)``, the thread and
    value (register) of each element (``-1``: none); each cell labelled ``T<t> V<v>``
    (``labels``), coloured by thread or by value, CuTe's way (``style="cute"``: eight
    colours, by thread mod 8) or one colour each (``"distinct"``, with a colour scale).
    ``copies`` (``rows x cols``) counts the holders of each element, when several do (a
    broadcast): the cell shows how many more."""
    _matplotlib()
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    if colour not in ("thread", "value"):
        raise MapError(f"colour is 'thread' or 'value', not {colour!r}")
    if style not in ("cute", "distinct"):
        raise MapError(f"style is 'cute' or 'distinct', not {style!r}")
    rows, cols = owner.shape[:2]
    if max(rows, cols) > SUMMARY:
        raise TooLargeError(f"a {rows}x{cols} tile; these pictures draw at most {SUMMARY}")
    n = threads if colour == "thread" else values
    palette: list[Any] = ([(r / 255, g / 255, b / 255, 1.0) for r, g, b in CUTE_TV_COLOURS]
                          if style == "cute" else _palette(n))
    cells = [Cell(r, c, 0, None, bool(owner[r, c, 0] < 0)) for r in range(rows)
             for c in range(cols)]
    k = 0 if colour == "thread" else 1

    def face(c: Cell) -> Any:
        return "white" if c.padding else palette[int(owner[c.row, c.col, k]) % len(palette)]

    def label(c: Cell) -> str:
        t, v = owner[c.row, c.col]
        more = "" if copies is None or copies[c.row, c.col] <= 1 else \
            f"\n+{int(copies[c.row, c.col]) - 1}"
        return "" if c.padding else f"{labels[0]}{t}\n{labels[1]}{v}{more}"

    inch = min(0.55, (MAX_INCHES - 4.4) / max(cols, 1), (MAX_INCHES - 2) / max(rows, 1))
    lines = 3 if copies is not None and int(copies.max()) > 1 else 2
    font = _font_for(inch, len(f"{labels[0]}{threads - 1}"), lines)
    legible = font >= MIN_FONT
    fig = Figure(figsize=(inch * cols + 2.4, inch * rows + 1.6), layout="constrained")
    ax = fig.subplots()
    marked = None if highlight is None else (lambda c: highlight.holds(c.row, c.col))
    _draw_cells(ax, cells, face, label if legible else None, rows, cols, font, marked)
    if style == "cute":
        shown = min(len(palette), n)
        handles = [Patch(facecolor=palette[i], edgecolor="0.3",
                         label=f"{colour} {i}" + (" + 8j" if n > 8 else ""))
                   for i in range(shown)]
        fig.legend(handles=handles, loc="outside right upper", fontsize=7,
                   title=f"colour = {colour} mod 8" if n > 8 else f"colour = {colour}",
                   title_fontsize=8)
    else:
        norm = BoundaryNorm([i - 0.5 for i in range(n + 1)], n)
        bar = fig.colorbar(ScalarMappable(norm=norm, cmap=ListedColormap(palette)), ax=ax,
                           location="right", shrink=0.9, aspect=30)
        bar.set_ticks(list(range(0, n, 1 if n <= 32 else max(1, n // 16))))
        bar.ax.tick_params(labelsize=6)
        bar.set_label(colour, fontsize=8)
    notes = "" if legible else "; labels left out (too many cells)"
    if highlight is not None:
        notes += f"; highlighted: {highlight}"
    fig.suptitle(f"{title}\n{subtitle}{notes}", fontsize=9)
    return Drawing(fig)


def banks_figure(title: str, report: Any) -> Drawing:
    """A request to the banks (a :class:`~symidx.layout.banks.BankReport`): a column per
    bank, a row per ``banks x 4`` bytes of words touched; each word touched labelled with
    the lanes reading it, coloured by how many distinct words its bank serves in that phase
    (a colour scale: 1 is conflict-free)."""
    _matplotlib()
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    n_banks = report.banks
    words = sorted({w for (_, w) in report.lanes})
    rows = sorted({w // n_banks for w in words})
    if len(rows) > SUMMARY:
        rows = rows[:SUMMARY]
    row_of = {r: i for i, r in enumerate(rows)}
    worst = max(1, max(len(s) for per in report.words.values() for s in per))
    mpl = _matplotlib()
    reds = mpl.colormaps["Reds"]
    levels = [(1.0, 1.0, 1.0, 1.0)] + [reds(0.3 + 0.6 * i / max(worst - 2, 1))
                                       for i in range(worst - 1)]
    inch = min(0.42, (MAX_INCHES - 2) / (n_banks + 3))
    fig = Figure(figsize=(inch * n_banks + 2.2, inch * len(rows) + 1.8), layout="constrained")
    ax = fig.subplots()
    for (phase, word), lanes in report.lanes.items():
        if word // n_banks not in row_of:
            continue
        bank = word % n_banks
        load = len(report.words[bank][phase])
        y = row_of[word // n_banks]
        ax.add_patch(Rectangle((bank, y), 1, 1, facecolor=levels[load - 1], edgecolor="0.3",
                               linewidth=0.5))
        ax.text(bank + 0.5, y + 0.5, _lanes_label(lanes), ha="center", va="center",
                fontsize=5.5 if len(lanes) > 1 else 6.5)
    ax.set_xlim(0, n_banks)
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([b + 0.5 for b in range(n_banks)], [str(b) for b in range(n_banks)],
                  fontsize=6)
    ax.set_yticks([i + 0.5 for i in range(len(rows))], [str(r * n_banks) for r in rows],
                  fontsize=6)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    ax.set_xlabel("bank")
    ax.set_ylabel("first word of the row")
    ax.set_aspect("equal")
    norm = BoundaryNorm([i + 0.5 for i in range(worst + 1)], worst)
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=ListedColormap(levels)), ax=ax,
                       location="right", shrink=0.9, aspect=20)
    bar.set_ticks(list(range(1, worst + 1)))
    bar.ax.tick_params(labelsize=6)
    bar.set_label("distinct words the bank serves in the phase", fontsize=7)
    fig.suptitle(f"{title}\n{report.wavefronts} wavefronts, {report.ideal} without conflicts "
                 f"(cells: the lanes reading the word)", fontsize=9)
    return Drawing(fig)


def save_banks_png(title: str, report: Any, path: str) -> None:
    """Draw :func:`banks_figure` and write it (PNG, or SVG for a ``.svg`` path)."""
    save(banks_figure(title, report), path)


def _lanes_label(lanes: Sequence[int]) -> str:
    """``3`` or ``0-7`` (a run) or ``0,8,..`` (first two of several)."""
    if len(lanes) == 1:
        return str(lanes[0])
    if list(lanes) == list(range(lanes[0], lanes[0] + len(lanes))):
        return f"{lanes[0]}-{lanes[-1]}"
    return f"{lanes[0]},{lanes[1]}.."
