"""Nested ``shape:stride`` layouts (CuTe; CATLASS TLA; SPEC §3; seed 003): the
:class:`Layout` value, its text, and the 2-D helpers of CATLASS.

A *layout* ``shape:stride`` maps a coordinate to an offset: ``((4,2),(4,3)):((4,16),(1,32))``
sends row 1, column 5 to ``37``. Shapes and strides are *IntTuples*
(:mod:`symidx.layout.int_tuple`); a layout's shape and stride have the same nesting (are
*congruent*).

Coordinates can be given at any level: a tuple matching the shape's nesting, or an int that is
split colexicographically (first mode fastest) across the modes it indexes. An int that
overflows a mode spills into its last sub-mode, as CuTe does, so every layout extends
naturally to all non-negative integers.

The 2-D helpers (``make_layout_tile``, ``row_major``, ``column_major``, the Ascend
``zN``/``nZ``/``zZ``/``nN`` fractal formats) follow CATLASS ``include/tla/layout.hpp``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from symidx._arith import INT64_MAX, ceil_div, int_array
from symidx._display import Rich, Shown
from symidx._text import too_long
from symidx.errors import MapError, ParseError, TooLargeError
from symidx.layout.figures import grid_figure
from symidx.layout.grid import draw_grid
from symidx.layout.int_tuple import (
    ArithTuple,
    Coord,
    E,
    IntTuple,
    ScaledBasis,
    check_int_tuple,
    congruent,
    crd2idx,
    depth,
    flatten,
    format_int_tuple,
    has_none,
    is_int,
    prefix_product,
    product,
    rank,
    slice_,
    suffix_product,
)

FractalFormat = Literal["zN", "nZ", "zZ", "nN"]
FRACTAL_FORMATS: tuple[FractalFormat, ...] = ("zN", "nZ", "zZ", "nN")

BYTES_PER_C0 = 32
"""Bytes in one Ascend C0 block (a fractal row of a ``z`` format)."""

C0_PER_FRACTAL = 16
"""C0 blocks in one Ascend fractal."""

VALUES_LIMIT = 1 << 24
"""Most points :func:`layout_values` evaluates at once."""

__all__ = [
    "BYTES_PER_C0",
    "C0_PER_FRACTAL",
    "FRACTAL_FORMATS",
    "VALUES_LIMIT",
    "Layout",
    "column_major",
    "compact_col_major",
    "compact_row_major",
    "cosize",
    "crd2offset",
    "evaluate_layout",
    "flat_modes",
    "fractal_layout",
    "from_modes",
    "layout_values",
    "make_identity_layout",
    "make_layout",
    "make_layout_tile",
    "parse_layout",
    "row_major",
    "size",
    "to_grid",
]


def crd2offset(crd: IntTuple, shape: IntTuple, stride: IntTuple) -> int:
    """CATLASS TLA's name for :func:`crd2idx` with an explicit stride.

    >>> crd2offset((1, 5), ((4, 2), (4, 3)), ((4, 16), (1, 32)))   # seed 003
    37
    """
    return crd2idx(crd, shape, stride)


# ---------------------------------------------------------------------------------------------
# Layout


@dataclass(frozen=True, slots=True)
class Layout(Rich):
    """A ``shape:stride`` layout: a frozen, hashable value; call it to map coordinates.

    >>> a = Layout(((4, 2), (4, 3)), ((4, 16), (1, 32)))
    >>> a(1, 5), str(a)
    (37, '((4,2),(4,3)):((4,16),(1,32))')
    """

    shape: IntTuple
    stride: IntTuple = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        check_int_tuple(self.shape, "shape")
        if self.stride is None:  # pycute's and CuTe's default: compact column-major
            object.__setattr__(self, "stride", prefix_product(self.shape))
        if any(isinstance(d, ScaledBasis) for d in flatten(self.stride)):
            _check_basis_stride(self.stride)
        else:
            check_int_tuple(self.stride, "stride")
        if not congruent(self.shape, self.stride):
            raise MapError(f"shape {format_int_tuple(self.shape)} and stride "
                           f"{format_int_tuple(self.stride)} are not congruent")
        if any(s < 1 for s in flatten(self.shape)):
            raise MapError(f"shape {format_int_tuple(self.shape)} must be positive")

    def __call__(self, *crd: Coord) -> int:
        """Offset of a coordinate: ``layout(i)``, ``layout(row, col)``, ``layout((r, c))``.

        A coordinate with ``None`` (CuTe's ``_``) is a slice: use
        :func:`symidx.layout.algebra.slice_and_offset` for that.
        """
        if not crd:
            raise MapError("a layout needs a coordinate")
        whole = crd[0] if len(crd) == 1 else tuple(crd)
        if has_none(whole):
            raise MapError(f"coordinate {format_int_tuple(whole)} has a '_': slicing is "
                           f"slice_and_offset(crd, layout)")
        value = crd2idx(whole, self.shape, self.stride)
        return ArithTuple.of(value) if isinstance(value, ScaledBasis) else value

    def __getitem__(self, i: int) -> Layout:
        """The ``i``-th mode as a layout (an int-shaped layout is its own only mode)."""
        if isinstance(self.shape, tuple) and isinstance(self.stride, tuple):
            return Layout(self.shape[i], self.stride[i])
        if i in (0, -1):
            return self
        raise MapError(f"layout {self} has one mode, asked for mode {i}")

    def __len__(self) -> int:
        """The rank (pycute's ``len``)."""
        return rank(self.shape)

    def modes(self) -> Iterator[Layout]:
        """The top-level modes, each as a layout."""
        return (self[i] for i in range(rank(self.shape)))

    def sliced(self, crd: Coord) -> Layout:
        """The modes where ``crd`` has ``None``, as a layout (CuTe's ``slice``)."""
        shape, stride = slice_(crd, self.shape), slice_(crd, self.stride)
        return Layout(shape, stride) if shape else Layout(1, 0)

    def __str__(self) -> str:
        return f"{format_int_tuple(self.shape)}:{format_int_tuple(self.stride)}"

    @property
    def has_basis(self) -> bool:
        """True when some stride is a basis element (``E(i)``): the layout maps coordinates
        to coordinates."""
        return any(isinstance(d, ScaledBasis) for d in flatten(self.stride))

    # Notebooks: the grid of offsets (rows: mode 0; columns: the other modes), drawn.
    def grid_values(self) -> list[list[int]]:
        """The offsets as a grid: row ``i``, column ``j`` holds ``self[0](i) + rest(j)``,
        ``rest`` the other modes (one row for a rank-1 layout)."""
        if rank(self.shape) < 2:
            return [[self(i) for i in range(size(self))]]
        first = self[0]
        rest = make_layout(*(self[i] for i in range(1, rank(self.shape))))
        columns = [rest(j) for j in range(size(rest))]
        return [[first(i) + c for c in columns] for i in range(size(first))]

    def _shown_(self) -> Shown:
        """A notebook shows the grid of offsets, drawn (its text without matplotlib)."""
        if size(self) > _SHOWN or self.has_basis:
            return Shown(str(self))
        values = self.grid_values()

        def draw() -> Any:
            return grid_figure(str(self), values)

        return Shown(str(self), draw=draw, fallback=draw_grid(str(self), values))


#: Most elements a notebook draws of a layout (more: its text).
_SHOWN = 4096


def require_int_strides(layout: Layout, what: str) -> None:
    """Raise :class:`MapError` when ``layout`` has basis strides: ``what`` needs offsets."""
    if layout.has_basis:
        raise MapError(f"{what} needs int strides; {layout} has basis strides (E(i))")


def _check_basis_stride(stride: object) -> None:
    if isinstance(stride, tuple):
        if not stride:
            raise MapError("stride contains an empty tuple")
        for child in stride:
            _check_basis_stride(child)
    elif not isinstance(stride, ScaledBasis) and stride != 0:
        raise MapError(f"a layout with basis strides (E(i)) may also have stride 0, not "
                       f"{stride!r}: an int stride adds to an offset, a basis stride to a "
                       f"coordinate")


def make_identity_layout(shape: IntTuple) -> Layout:
    """CuTe's ``make_identity_layout``: ``shape`` with basis strides, mapping each coordinate
    to itself (as an :class:`~symidx.layout.int_tuple.ArithTuple`).

    >>> make_identity_layout((4, 2))(5)
    (1, 1)
    """
    check_int_tuple(shape, "shape")
    if not isinstance(shape, tuple):
        return Layout(shape, E(0))  # type: ignore[arg-type]

    def strides(s: IntTuple, path: tuple[int, ...]) -> IntTuple:
        if isinstance(s, tuple):
            return tuple(strides(c, path + (k,)) if isinstance(c, tuple) else
                         _basis_of(c, path + (k,)) for k, c in enumerate(s))
        return _basis_of(s, path)

    return Layout(shape, strides(shape, ()))


def _basis_of(s: IntTuple, path: tuple[int, ...]) -> Any:
    return ScaledBasis(1, path) if not isinstance(s, tuple) else tuple(
        _basis_of(c, path + (k,)) for k, c in enumerate(s))


def size(x: IntTuple | Layout) -> int:
    """Size of the domain: the product of the shape."""
    return product(x.shape if isinstance(x, Layout) else x)


def cosize(layout: Layout) -> int:
    """Size of the codomain: one past the largest offset (strides are non-negative)."""
    require_int_strides(layout, "cosize")
    if any(d < 0 for d in flatten(layout.stride)):
        raise MapError(f"cosize needs non-negative strides: {layout}")
    return layout(size(layout) - 1) + 1


def make_layout(*layouts: Layout | IntTuple, stride: IntTuple | None = None) -> Layout:
    """The layout whose modes are ``layouts``, in order (CuTe's ``make_layout(a, b, ...)``).

    Given a shape instead (the CuTe DSL's ``make_layout((4, 2), stride=(1, 4))``), the layout
    of that shape and stride; without ``stride``, compact column-major (CuTe's default).

    >>> str(make_layout((4, 2), stride=(1, 4))), str(make_layout((4, 2)))
    ('(4,2):(1,4)', '(4,2):(1,4)')
    """
    if not layouts:
        raise MapError("make_layout needs at least one layout")
    if not all(isinstance(a, Layout) for a in layouts):
        if len(layouts) != 1:
            raise MapError("make_layout takes layouts, or one shape (and stride=...)")
        return Layout(layouts[0], stride)  # type: ignore[arg-type]
    if stride is not None:
        raise MapError("make_layout: stride= goes with a shape, not with layouts")
    return Layout(tuple(a.shape for a in layouts),  # type: ignore[union-attr]
                  tuple(a.stride for a in layouts))  # type: ignore[union-attr]


def compact_col_major(shape: IntTuple) -> Layout:
    """``shape`` with compact column-major (CuTe's default, ``LayoutLeft``) strides."""
    return Layout(shape, prefix_product(shape))


def compact_row_major(shape: IntTuple) -> Layout:
    """``shape`` with compact row-major (``LayoutRight``) strides."""
    return Layout(shape, suffix_product(shape))


def flat_modes(layout: Layout) -> list[tuple[int, int]]:
    """The (shape, stride) pairs of the flattened layout, in order."""
    return list(zip(flatten(layout.shape), flatten(layout.stride)))


def from_modes(modes: list[tuple[int, int]]) -> Layout:
    """A depth-1 layout from (shape, stride) pairs: ``1:0`` if none, int-shaped if one."""
    if not modes:
        return Layout(1, 0)
    if len(modes) == 1:
        return Layout(*modes[0])
    return Layout(tuple(s for s, _ in modes), tuple(d for _, d in modes))


def layout_values(layout: Layout, count: int | None = None) -> np.ndarray:
    """``[layout(i) for i in range(count)]`` (default ``size(layout)``) as an int64 array."""
    n = size(layout) if count is None else count
    if n > VALUES_LIMIT:
        raise TooLargeError(f"{layout}: {n} points; the limit is {VALUES_LIMIT}")
    return evaluate_layout(layout, np.arange(n, dtype=np.int64))


def evaluate_layout(layout: Layout, index: np.ndarray) -> np.ndarray:
    """``layout(i)`` for every non-negative int ``i`` of ``index``, vectorised; indices past
    the size spill into the last mode, as ``layout(i)`` does. Offsets are int64: a layout
    whose offsets at these indices could pass it is a :class:`~symidx.errors.TooLargeError`
    (checked in Python integers first), never a wrapped offset."""
    require_int_strides(layout, "evaluate_layout")
    index = int_array(index)
    modes = flat_modes(layout)
    low, high = (int(index.min()), int(index.max())) if index.size else (0, 0)
    bound = offset_bound(modes, min(low, 0), max(high, 0))
    if bound > INT64_MAX:
        raise TooLargeError(f"{layout}: offsets reach {bound} in magnitude, past 64-bit "
                            f"integers")
    out = np.zeros(index.shape, dtype=np.int64)
    for k, (s, d) in enumerate(modes):
        digit = index if k == len(modes) - 1 else index % s
        out += digit * d
        index = index // s
    return out


def offset_bound(modes: list[tuple[int, int]], low: int, high: int) -> int:
    """A bound on ``|layout(i)|`` for every ``i`` in ``[low, high]`` (``low <= 0 <=
    high``; ``modes``: the flattened (shape, stride) pairs), in Python integers: each
    mode's largest coordinate times the size of its stride, the last taking what spills
    past the others (``i // below`` rounds down: a negative ``i`` spills one more)."""
    bound, below = 0, 1
    for k, (s, d) in enumerate(modes):
        spill = max(high // below, ceil_div(-low, below))
        last = k == len(modes) - 1
        # below the last mode, i mod s: any residue when i may be negative
        digit = spill if last else (s - 1 if low < 0 else min(s - 1, spill))
        bound += digit * abs(d)
        below *= s
    return bound


# ---------------------------------------------------------------------------------------------
# Text


def parse_layout(text: str) -> Layout:
    """Parse CuTe's text ``shape:stride``, e.g. ``((4,2),(4,3)):((4,16),(1,32))``: the
    plain piece of :func:`symidx.layout.text.parse_layout`, the one layout reader (which
    reads swizzled and composed layouts and the CuTe DSL's types too).

    Static ints may carry CuTe's and TLA's underscore (``(_2,4):(_12,_1)``); strides may be
    negative or basis strides (``1@0``, ``_1@1``, ``1@0@1`` for mode 1 of mode 0, as CuTe
    prints ``E<1,0>``... reversed: the last ``@`` is the outermost mode).
    """
    parser = _Parser(text)
    shape = parser.int_tuple()
    parser.expect(":", "expected ':' between shape and stride")
    stride_at = parser.skip_space()
    stride = parser.int_tuple()
    parser.expect_end()
    if any(isinstance(v, ScaledBasis) for v in flatten(shape)):
        raise ParseError("a shape holds ints, not basis strides", text, 0)
    for value, at in parser.leaves[: len(flatten(shape))]:
        if value < 1:
            raise ParseError("shape entries must be positive", text, at)
    if not congruent(shape, stride):
        raise ParseError(f"stride is not congruent to shape {format_int_tuple(shape)}",
                         text, stride_at)
    try:
        return Layout(shape, stride)
    except MapError as e:
        raise ParseError(str(e), text, stride_at) from None


class _Parser:
    """Recursive-descent reader of IntTuples; records each int with its offset."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.leaves: list[tuple[int, int]] = []

    def skip_space(self) -> int:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1
        return self.pos

    def peek(self) -> str:
        self.skip_space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str, message: str) -> None:
        if self.peek() != char:
            raise ParseError(message, self.text, self.pos)
        self.pos += 1

    def expect_end(self) -> None:
        if self.peek():
            raise ParseError("unexpected text after the layout", self.text, self.pos)

    def int_tuple(self) -> IntTuple:
        if self.peek() == "(":
            self.pos += 1
            if self.peek() == ")":
                raise ParseError("empty tuple", self.text, self.pos)
            items = [self.int_tuple()]
            while self.peek() == ",":
                self.pos += 1
                items.append(self.int_tuple())
            self.expect(")", "expected ',' or ')'")
            return tuple(items)
        return self.leaf()

    def integer(self) -> int:
        start = self.skip_space()
        pos = start
        if self.text.startswith("_", pos):
            pos += 1
        digits_at = pos + 1 if self.text.startswith("-", pos) else pos
        end = digits_at
        while end < len(self.text) and self.text[end] in "0123456789":
            end += 1
        if end == digits_at:
            raise ParseError("expected an integer or '('", self.text, start)
        reason = too_long(self.text[digits_at:end])
        if reason is not None:
            raise ParseError(reason, self.text, start)
        value = int(self.text[pos:end])
        self.leaves.append((value, start))
        self.pos = end
        return value

    def leaf(self) -> Any:
        """An int, or a basis stride ``V@M[@M...]`` (CuTe prints ``E<i,j>`` scaled by
        ``V`` as ``V@j@i``)."""
        if self.peek() == "?":
            raise ParseError("a dynamic value ('?', as the CuTe DSL prints one) has no "
                             "value to compute offsets with", self.text, self.pos)
        value = self.integer()
        modes: list[int] = []
        while self.text.startswith("@", self.pos):
            self.pos += 1
            at = self.pos
            mode = self.integer()
            self.leaves.pop()
            if mode < 0:
                raise ParseError("a basis mode is non-negative", self.text, at)
            modes.append(mode)
        if not modes:
            return value
        return ScaledBasis(value, tuple(reversed(modes)))


# ---------------------------------------------------------------------------------------------
# Matrix layouts (CATLASS TLA)


def row_major(rows: int, cols: int) -> Layout:
    """``(rows,cols):(cols,1)``."""
    return Layout((rows, cols), (cols, 1))


def column_major(rows: int, cols: int) -> Layout:
    """``(rows,cols):(1,rows)``."""
    return Layout((rows, cols), (1, rows))


def fractal_layout(
    fmt: FractalFormat,
    rows: int,
    cols: int,
    *,
    element_bits: int = 16,
    elems_per_c0: int | None = None,
    c0_per_fractal: int = C0_PER_FRACTAL,
) -> Layout:
    """An Ascend fractal layout of a ``rows x cols`` matrix, padded to whole fractals.

    A C0 block is 32 bytes: ``elems_per_c0 = 256 // element_bits`` elements (override it, and
    ``c0_per_fractal``, for small examples). The first letter is the order inside a fractal,
    the second the order of the fractals (``z``/``Z`` row-major, ``n``/``N`` column-major):

    * ``zN``, ``zZ``: fractals of ``c0_per_fractal x elems_per_c0`` (16 rows of one C0 each);
    * ``nZ``, ``nN``: fractals of ``elems_per_c0 x c0_per_fractal`` (16 columns of one C0).

    >>> str(fractal_layout("zN", 8, 12, elems_per_c0=4, c0_per_fractal=4))   # seed 003
    '((4,2),(4,3)):((4,16),(1,32))'
    """
    if fmt not in FRACTAL_FORMATS:
        raise MapError(f"unknown fractal format {fmt!r}; expected one of {FRACTAL_FORMATS}")
    if rows < 1 or cols < 1:
        raise MapError(f"a fractal layout needs a positive shape, got {rows} x {cols}")
    if elems_per_c0 is None:
        if element_bits < 1 or (8 * BYTES_PER_C0) % element_bits != 0:
            raise MapError(f"{element_bits}-bit elements do not pack a 32-byte C0 block")
        elems_per_c0 = 8 * BYTES_PER_C0 // element_bits
    if elems_per_c0 < 1 or c0_per_fractal < 1:
        raise MapError(f"fractal sizes must be positive, got {elems_per_c0}, {c0_per_fractal}")
    row_major_inside = fmt[0] == "z"
    frac_rows, frac_cols = ((c0_per_fractal, elems_per_c0) if row_major_inside
                            else (elems_per_c0, c0_per_fractal))
    n_rows, n_cols = ceil_div(rows, frac_rows), ceil_div(cols, frac_cols)
    fractal = frac_rows * frac_cols
    inner = (frac_cols, 1) if row_major_inside else (1, frac_rows)
    outer = (fractal, n_rows * fractal) if fmt[1] == "N" else (n_cols * fractal, fractal)
    return Layout(((frac_rows, n_rows), (frac_cols, n_cols)),
                  ((inner[0], outer[0]), (inner[1], outer[1])))


def make_layout_tile(layout: Layout, tile_shape: tuple[int, ...]) -> Layout:
    """CATLASS ``MakeLayoutTile``: the layout of a ``tile_shape`` tile of ``layout``.

    A flat layout keeps its strides with the new shape; a fractal (depth-2, rank-2) layout
    keeps its inner fractal shape and strides and counts the fractals the tile needs.

    >>> a = parse_layout("((4,2),(4,3)):((4,16),(1,32))")
    >>> str(make_layout_tile(a, (4, 4)))   # seed 003
    '((4,1),(4,1)):((4,16),(1,32))'
    """
    if not isinstance(tile_shape, tuple) or len(tile_shape) not in (1, 2):
        raise MapError(f"a tile shape is a tuple of one or two ints, got {tile_shape!r}")
    if any(not is_int(t) or t < 1 for t in tile_shape):
        raise MapError(f"tile sizes must be positive ints, got {tile_shape!r}")
    if depth(layout.shape) <= 1:
        if rank(layout.shape) != len(tile_shape):
            raise MapError(f"tile {tile_shape} does not match the rank of {layout}")
        stride = layout.stride if isinstance(layout.stride, tuple) else (layout.stride,)
        return Layout(tile_shape, stride)
    if len(tile_shape) != 2 or rank(layout.shape) != 2:
        raise MapError(f"a nested tile layout needs a rank-2 layout and tile, got {layout}")
    inner = []
    for mode in layout.modes():
        first = mode.shape[0] if isinstance(mode.shape, tuple) else None
        if not isinstance(first, int) or rank(mode.shape) != 2 or depth(mode.shape) != 1:
            raise MapError(f"{layout} is not a fractal layout ((r0,r1),(c0,c1)):(...)")
        inner.append(first)
    shape = tuple((fr, ceil_div(t, fr)) for fr, t in zip(inner, tile_shape))
    return Layout(shape, layout.stride)


def to_grid(layout: Layout) -> str:
    """The rank-2 layout drawn as CuTe's ``print_layout`` (and the TLA seed) draws it: the
    layout, then a grid of offsets, rows indexed by mode 0 and columns by mode 1.

    A rank-1 layout is drawn as a single row.
    """
    if rank(layout.shape) == 1:
        grid_layout = make_layout(Layout(1, 0), layout)
    elif rank(layout.shape) == 2:
        grid_layout = layout
    else:
        raise MapError(f"to_grid draws rank-1 or rank-2 layouts, {layout} has rank "
                       f"{rank(layout.shape)}")
    n_rows, n_cols = size(grid_layout[0]), size(grid_layout[1])
    values = [[grid_layout(m, n) for n in range(n_cols)] for m in range(n_rows)]
    return draw_grid(str(layout), values)
