"""Pictures of layouts: which offset each element gets, and what the buffer holds.

A :class:`Picture` has two panels of :class:`Cell` s:

* the **grid** -- the logical array, each element at its (row, column) with its offset; for a
  tiled XLA array of rank 1 or 2 also the padding the tiles add past its edges (seed 000,
  Figure 1);
* the **memory** -- every slot of the buffer in offset order, wrapped into rows (one tile a
  row when the tiles are small), padding included.

Each cell knows its first-level tile, so a drawing can give every tile its own colour, as
the tiled-layout seed's figures do. :func:`grid_text` draws the grid as the TLA seed draws a
layout; :func:`save_png` draws both panels with matplotlib (the optional ``plot`` extra),
imported only when called.

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

from symidx.errors import MapError, SymidxError, TooLargeError
from symidx.layout import cute, xla
from symidx.layout.grid import draw_grid
from symidx.layout.shapes import (
    ArrayShape,
    array_shape,
    check_block,
    layout_parts,
    size_in_elements,
)

__all__ = ["PICTURE_LIMIT", "Cell", "Picture", "cute_picture", "grid_text", "save_banks_png",
           "save_png",
           "xla_picture"]

PICTURE_LIMIT = 4096
"""Most elements (and buffer slots) a picture draws."""

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
class Picture:
    """A layout's picture: ``title`` (the layout's text), the ``grid`` and ``memory``
    panels (see the module docstring)."""

    title: str
    grid: tuple[Cell, ...]
    memory: tuple[Cell, ...]

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


def _check_size(what: str, count: int) -> None:
    if count > PICTURE_LIMIT:
        raise TooLargeError(f"{what} has {count} cells; pictures draw at most {PICTURE_LIMIT}")


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


def xla_picture(shape: ArrayShape, block: Sequence[int] | None = None) -> Picture:
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
    _check_size(str(s), max(total, math.prod(dims)))
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
    return Picture(str(s), tuple(grid), tuple(memory))


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


def cute_picture(layout: cute.Layout | cute.ComposedLayout) -> Picture:
    """The picture of a nested (or composed) layout. An element's tile is, per mode, its
    coordinate divided by the mode's first sub-mode (the fractal of a ``zN`` layout); the
    memory panel spans the smallest to the largest offset, and slots no coordinate reaches
    are gaps."""
    inner = layout.inner if isinstance(layout, cute.ComposedLayout) else layout
    view = _grid_layout(inner)
    n_rows, n_cols = cute.size(view[0]), cute.size(view[1])
    _check_size(str(layout), n_rows * n_cols)
    first = [cute.flatten(view[k].shape)[0] for k in range(2)]
    offsets = cute.composed_values(layout, np.arange(n_rows * n_cols, dtype=np.int64))
    grid = [Cell(m, n, int(offsets[m + n_rows * n]), (m // first[0], n // first[1]))
            for m in range(n_rows) for n in range(n_cols)]
    _check_size(f"the buffer of {layout}", int(offsets.max() - offsets.min()) + 1)
    memory = _reached(grid, first[0] * first[1] if first[0] * first[1] > 1 else n_cols)
    return Picture(str(layout), tuple(grid), tuple(memory))


# ---------------------------------------------------------------------------------------------
# PNG


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise SymidxError("--png needs matplotlib: pip install 'symidx[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _colours(picture: Picture, plt: Any) -> dict[TileId, Any]:
    tiles = sorted({c.tile for c in picture.grid + picture.memory if c.tile is not None})
    palette = plt.get_cmap("tab20")
    return {t: palette(i % palette.N) for i, t in enumerate(tiles)}


def _draw_panel(ax: Any, cells: Sequence[Cell], colours: dict[TileId, Any], title: str) -> None:
    digits = max(len(str(c.offset)) for c in cells)
    font = min(9.0, 22.0 / max(digits, 2))
    for c in cells:
        face = "white" if c.padding or c.tile is None else colours[c.tile]
        ax.add_patch(_rectangle(c, face))
        ax.text(c.col + 0.5, c.row + 0.5, str(c.offset), ha="center", va="center",
                fontsize=font, color="0.55" if c.padding else "black")
    ax.set_xlim(0, 1 + max(c.col for c in cells))
    ax.set_ylim(1 + max(c.row for c in cells), 0)
    ax.set_aspect("equal")
    ax.set_anchor("N")
    ax.set_title(title, fontsize=10)
    ax.axis("off")


def _rectangle(cell: Cell, face: Any) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((cell.col, cell.row), 1, 1, facecolor=face, edgecolor="0.25",
                     linewidth=0.6, hatch="///" if cell.padding else None)


def save_png(picture: Picture, path: str) -> None:
    """Draw ``picture`` to a PNG file: the grid on the left, the memory on the right, one
    colour per tile, offsets in the cells, padding white and hatched."""
    plt = _pyplot()
    colours = _colours(picture, plt)
    grid_cols = 1 + max(c.col for c in picture.grid)
    memory_cols = 1 + max(c.col for c in picture.memory)
    rows = 1 + max(c.row for c in picture.grid + picture.memory)
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(0.45 * (grid_cols + memory_cols) + 1, 0.45 * rows + 1.2),
        gridspec_kw={"width_ratios": [grid_cols, memory_cols]}, layout="constrained")
    _draw_panel(left, picture.grid, colours, "logical index -> offset")
    _draw_panel(right, picture.memory, colours, "memory (offset order)")
    fig.suptitle(picture.title, fontsize=11)
    try:
        _save(fig, path)
    finally:
        plt.close(fig)



def save_banks_png(title: str, report: Any, path: str) -> None:
    """Draw a warp's shared-memory request (a :class:`~symidx.layout.banks.BankReport`):
    one column per bank, one row per 128-byte row of words the warp touches; each word
    touched shows the lanes that read it, coloured by how many distinct words its bank
    serves in that phase (white: one, darker: a conflict)."""
    from symidx.layout.banks import BANKS

    plt = _pyplot()
    from matplotlib.patches import Rectangle

    words = sorted({w for (_, w) in report.lanes})
    rows = sorted({w // BANKS for w in words})
    row_of = {r: i for i, r in enumerate(rows)}
    worst = max(1, max(len(s) for per in report.words.values() for s in per))
    fig, ax = plt.subplots(figsize=(0.42 * BANKS + 1, 0.42 * len(rows) + 1.4),
                           layout="constrained")
    cmap = plt.get_cmap("Reds")
    for (phase, word), lanes in report.lanes.items():
        bank = word % BANKS
        load = len(report.words[bank][phase])
        shade = 0.0 if load == 1 else 0.25 + 0.6 * (load - 1) / max(worst - 1, 1)
        y = row_of[word // BANKS]
        ax.add_patch(Rectangle((bank, y), 1, 1, facecolor=cmap(shade), edgecolor="0.3",
                               linewidth=0.5))
        ax.text(bank + 0.5, y + 0.5, _lanes_label(lanes), ha="center", va="center",
                fontsize=6 if len(lanes) > 1 else 7)
    ax.set_xlim(0, BANKS)
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([b + 0.5 for b in range(BANKS)], [str(b) for b in range(BANKS)], fontsize=6)
    ax.set_yticks([i + 0.5 for i in range(len(rows))], [str(r * BANKS) for r in rows],
                  fontsize=6)
    ax.set_xlabel("bank")
    ax.set_ylabel("first word of the row")
    ax.set_aspect("equal")
    ax.set_title(f"{title}\n{report.wavefronts} wavefronts, {report.ideal} without conflicts "
                 f"(cells: lanes reading the word)", fontsize=9)
    try:
        _save(fig, path)
    finally:
        plt.close(fig)


def _save(fig: Any, path: str) -> None:
    """Write ``fig`` as a PNG at ``path``: drawn in memory first, then written and closed
    here, so that a failed write (a full disk, ``/dev/full``) is an error naming the file
    (matplotlib can lose it at close)."""
    import io

    data = io.BytesIO()
    fig.savefig(data, format="png", dpi=100, bbox_inches="tight")
    try:
        with open(path, "wb") as f:
            f.write(data.getvalue())
    except OSError as e:
        raise SymidxError(f"cannot write {path}: {e.strerror or e}") from None


def _lanes_label(lanes: Sequence[int]) -> str:
    """``3`` or ``0-7`` (a run) or ``0,8,..`` (first two of several)."""
    if len(lanes) == 1:
        return str(lanes[0])
    if list(lanes) == list(range(lanes[0], lanes[0] + len(lanes))):
        return f"{lanes[0]}-{lanes[-1]}"
    return f"{lanes[0]},{lanes[1]}.."
