"""Matplotlib figures of their own (``matplotlib.figure.Figure``, never pyplot: the global
backend a notebook or script set is left alone), and a grid of offsets drawn on one, as
notebooks show a nested layout (``_repr_png_``, ``_repr_svg_``). matplotlib is the optional
``plot`` extra, imported only here, on first use."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from symidx.errors import SymidxError

__all__ = ["GRID_LIMIT", "figure", "colormap", "image", "save", "grid_figure", "grid_image"]

#: Most cells a grid draws.
GRID_LIMIT = 4096


def figure(**options: Any) -> Any:
    """A new ``Figure`` (``options`` as ``Figure`` takes them)."""
    try:
        import matplotlib  # noqa: F401 - first, so that a missing matplotlib is seen
        from matplotlib.figure import Figure
    except ImportError:
        raise SymidxError("drawing needs matplotlib: pip install 'symidx[plot]'") from None
    return Figure(**options)


def colormap(name: str) -> Any:
    import matplotlib

    return matplotlib.colormaps[name]


def image(fig: Any, fmt: str) -> bytes:
    """``fig`` as ``png`` or ``svg`` bytes."""
    out = io.BytesIO()
    fig.savefig(out, format=fmt, dpi=100, bbox_inches="tight")
    return out.getvalue()


def save(fig: Any, path: str) -> None:
    """Write ``fig`` at ``path``: SVG for a ``.svg`` path, else PNG. Drawn in memory first,
    then written and closed here, so that a failed write (a full disk, ``/dev/full``) is an
    error naming the file (matplotlib can lose it at close)."""
    data = image(fig, "svg" if str(path).lower().endswith(".svg") else "png")
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise SymidxError(f"cannot write {path}: {e.strerror or e}") from None


def grid_figure(title: str, values: Sequence[Sequence[int]], shade: str = "offset") -> Any:
    """A grid of offsets: one cell per value, shaded by the offset (``shade="bank"``: a hue
    per shared-memory bank of a 32-bit element, ``offset mod 32``, so that a swizzle shows),
    row and column numbers at the sides."""
    n_rows, n_cols = len(values), len(values[0])
    fig = figure(figsize=(0.45 * n_cols + 1, 0.45 * n_rows + 1), layout="constrained")
    from matplotlib.patches import Rectangle

    ax = fig.subplots()
    shades = colormap("Blues")
    hues = colormap("hsv")
    top = max(1, max(max(row) for row in values))
    digits = max(len(str(v)) for row in values for v in row)
    for r, row in enumerate(values):
        for c, v in enumerate(row):
            face = (hues(0.92 * (v % 32) / 31) if shade == "bank"
                    else shades(0.1 + 0.5 * v / top))
            ax.add_patch(Rectangle((c, r), 1, 1, facecolor=face, alpha=0.55 if
                                   shade == "bank" else 1.0, edgecolor="0.25",
                                   linewidth=0.6))
            ax.text(c + 0.5, r + 0.5, str(v), ha="center", va="center",
                    fontsize=min(9.0, 22.0 / max(digits, 2)))
    ax.set_xlim(0, n_cols)
    ax.set_ylim(n_rows, 0)
    ax.set_xticks([c + 0.5 for c in range(n_cols)], [str(c) for c in range(n_cols)],
                  fontsize=7)
    ax.set_yticks([r + 0.5 for r in range(n_rows)], [str(r) for r in range(n_rows)],
                  fontsize=7)
    ax.tick_params(length=0)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=10)
    return fig


def grid_image(title: str, values: Sequence[Sequence[int]], fmt: str) -> bytes | None:
    """The grid as ``png`` or ``svg`` bytes; None without matplotlib, or when it has more
    than :data:`GRID_LIMIT` cells (a notebook then shows the text)."""
    if sum(len(row) for row in values) > GRID_LIMIT:
        return None
    try:
        return image(grid_figure(title, values), fmt)
    except SymidxError:
        return None
