"""Thread-value (TV) layouts: which element of a tile each thread holds in each of its
registers (CuTe's ``(thread, value) -> coordinate`` layouts of copy and MMA atoms).

A :class:`TVLayout` is a CuTe :class:`~symidx.layout.nested.Layout` of rank 2 -- mode 0 the
thread, mode 1 the value (register element) -- whose offsets number the elements of a
``rows x cols`` tile, in column-major order (CuTe's convention for MMA operands: ``m + M*k``)
or row-major (ldmatrix: the rows are the 8 addresses a group of threads supplies). From it:

* :meth:`TVLayout.coord` / :meth:`TVLayout.table`: the tile coordinate of ``(thread,
  value)``;
* :meth:`TVLayout.owner`: the inverse, tile coordinate -> ``(thread, value)`` (raises when
  two pairs share an element);
* :meth:`TVLayout.check`: does every pair land on a distinct element, and is every element
  held (a bijection, as an MMA operand's layout is)?
* :meth:`TVLayout.map` and :meth:`TVLayout.inverse_map`: the same as
  :class:`~symidx.core.indexing_map.IndexingMap` s, ``(t, v) -> (row, col)`` and back;
* :meth:`TVLayout.compose`: with the tile's memory layout (a CuTe layout of the rows x cols
  tile, swizzled or not), ``(t, v) -> offset``: what the thread's registers read.

The atoms (:func:`ldmatrix`, with or without ``.trans``, :func:`mma_sm80_16x8x16`) are
CuTe's published layouts (``include/cute/atom/copy_traits_sm75.hpp``, ``mma_traits_sm80.hpp``),
in elements; the tests hold them to the PTX ISA's fragment tables, written out
independently. The newer atoms (SM90 wgmma, SM100 tensor memory, AMD MFMA/WMMA) are in
:mod:`symidx.layout.atoms`, which also names every atom (:func:`symidx.layout.atoms.atom`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from symidx._display import Rich, Shown
from symidx.core.expr import FloorDiv, Mod, dim
from symidx.core.indexing_map import IndexingMap
from symidx.errors import MapError, TooLargeError
from symidx.layout.algebra import composition, left_inverse
from symidx.layout.nested import Layout, evaluate_layout, make_layout, size
from symidx.layout.swizzle import ComposedLayout

Order = Literal["col", "row"]

TV_LIMIT = 1 << 20
"""Most (thread, value) pairs a TV layout is enumerated at."""

__all__ = [
    "ATOMS",
    "TVCheck",
    "TVLayout",
    "atom",
    "ldmatrix",
    "mma_sm80_16x8x16",
]


@dataclass(frozen=True, slots=True)
class TVCheck:
    """What :meth:`TVLayout.check` found: ``injective`` (no element held twice), ``covers``
    (every element held), and the first clash or hole when not."""

    injective: bool
    covers: bool
    clash: tuple[tuple[int, int], tuple[int, int], tuple[int, int]] | None = None
    hole: tuple[int, int] | None = None

    @property
    def bijective(self) -> bool:
        return self.injective and self.covers

    def __str__(self) -> str:
        if self.bijective:
            return "bijective: every element of the tile is held by exactly one (thread, value)"
        parts = []
        if self.clash is not None:
            (t0, v0), (t1, v1), at = self.clash
            parts.append(f"(thread {t0}, value {v0}) and (thread {t1}, value {v1}) both hold "
                         f"{at}")
        if self.hole is not None:
            parts.append(f"no (thread, value) holds {self.hole}")
        return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class TVLayout(Rich):
    """``layout``: ``(thread, value) -> index`` into a ``tile = (rows, cols)`` tile numbered
    in ``order`` (``"col"``: ``row + rows*col``; ``"row"``: ``row*cols + col``)."""

    layout: Layout
    tile: tuple[int, int]
    order: Order = "col"
    name: str = ""

    def __post_init__(self) -> None:
        if len(self.layout) != 2:
            raise MapError(f"a TV layout has two modes (thread, value), got {self.layout}")
        if self.order not in ("col", "row"):
            raise MapError(f"order is 'col' or 'row', got {self.order!r}")
        if len(self.tile) != 2 or any(n < 1 for n in self.tile):
            raise MapError(f"a tile is (rows, cols), got {self.tile}")
        if self.layout.has_basis or any(d < 0 for d in _strides(self.layout)):
            raise MapError(f"{self.layout}: a TV layout has non-negative int strides")
        top = max(self._indices().max(initial=0), 0)
        if top >= self.tile[0] * self.tile[1]:
            raise MapError(f"{self.layout} reaches index {top}, outside the "
                           f"{self.tile[0]}x{self.tile[1]} tile")

    @property
    def threads(self) -> int:
        return size(self.layout[0])

    @property
    def values(self) -> int:
        return size(self.layout[1])

    def _indices(self) -> np.ndarray:
        n = size(self.layout)
        if n > TV_LIMIT:
            raise TooLargeError(f"{self.layout}: {n} (thread, value) pairs; the limit is "
                                f"{TV_LIMIT}")
        return evaluate_layout(self.layout, np.arange(n, dtype=np.int64))

    def _split(self, index: np.ndarray | int) -> tuple[np.ndarray | int, np.ndarray | int]:
        rows, cols = self.tile
        if self.order == "col":
            return index % rows, index // rows
        return index // cols, index % cols

    def index(self, thread: int, value: int) -> int:
        """The tile index (in ``order``) of ``(thread, value)``."""
        if not (0 <= thread < self.threads and 0 <= value < self.values):
            raise MapError(f"(thread {thread}, value {value}) is outside {self.threads} "
                           f"threads x {self.values} values")
        return self.layout(thread, value)

    def coord(self, thread: int, value: int) -> tuple[int, int]:
        """``(row, col)`` of the element ``thread`` holds in its ``value``-th register
        element."""
        r, c = self._split(self.index(thread, value))
        return int(r), int(c)

    def table(self) -> np.ndarray:
        """``(threads, values, 2)`` array: ``table[t, v] == coord(t, v)``."""
        idx = self._indices().reshape(self.values, self.threads).T
        r, c = self._split(idx)
        return np.stack([r, c], axis=-1)

    def check(self) -> TVCheck:
        idx = self._indices()
        rows, cols = self.tile
        seen = np.full(rows * cols, -1, dtype=np.int64)
        clash = None
        for j, i in enumerate(idx.tolist()):
            if seen[i] >= 0 and clash is None:
                first = int(seen[i])
                clash = ((first % self.threads, first // self.threads),
                         (j % self.threads, j // self.threads), self._coord_of(i))
            elif seen[i] < 0:
                seen[i] = j
        holes = np.nonzero(seen < 0)[0]
        hole = self._coord_of(int(holes[0])) if holes.size else None
        return TVCheck(clash is None, hole is None, clash, hole)

    def _coord_of(self, index: int) -> tuple[int, int]:
        r, c = self._split(index)
        return int(r), int(c)

    def owner(self) -> np.ndarray:
        """``(rows, cols, 2)`` array of the ``(thread, value)`` holding each element;
        ``-1`` where none does. Raises :class:`MapError` when two pairs hold one element."""
        report = self.check()
        if not report.injective:
            raise MapError(f"{self.name or self.layout}: {report}")
        rows, cols = self.tile
        out = np.full((rows, cols, 2), -1, dtype=np.int64)
        j = np.arange(size(self.layout), dtype=np.int64)
        r, c = self._split(self._indices())
        out[r, c, 0] = j % self.threads
        out[r, c, 1] = j // self.threads
        return out

    def map(self) -> IndexingMap:
        """``(t, v) -> (row, col)`` as an indexing map."""
        from symidx.layout.maps import cute_map

        (index,) = cute_map(self.layout).results
        rows, cols = self.tile
        if self.order == "col":
            results = [Mod(index, rows), FloorDiv(index, rows)]
        else:
            results = [FloorDiv(index, cols), Mod(index, cols)]
        from symidx.core.simplify import simplify

        return simplify(IndexingMap.create([self.threads, self.values], results))

    def inverse_map(self) -> IndexingMap:
        """``(row, col) -> (t, v)``, defined on the whole tile: the TV layout must be a
        bijection (:meth:`check`). Built from CuTe's ``left_inverse`` of the layout."""
        report = self.check()
        if not report.bijective:
            raise MapError(f"{self.name or self.layout} has no inverse on its tile: {report}")
        from symidx.layout.maps import cute_map

        inv = left_inverse(self.layout)
        inv = Layout((inv.shape,), (inv.stride,))  # one index, split inside the mode
        rows, cols = self.tile
        r, c = dim(0), dim(1)
        index = r + rows * c if self.order == "col" else r * cols + c
        (linear,) = cute_map(inv).results
        linear = linear.subs(dim(0), index)
        from symidx.core.simplify import simplify

        return simplify(IndexingMap.create(
            [rows, cols], [Mod(linear, self.threads), FloorDiv(linear, self.threads)]))

    def compose(self, memory: Layout | ComposedLayout) -> Layout | ComposedLayout:
        """``(t, v) -> offset``: ``memory`` is the rank-2 ``(rows, cols)`` layout of the tile
        in memory; the result is CuTe's ``composition`` of it (ordered as the tile index)
        with the TV layout, with the TV layout's modes. A swizzled ``memory``
        (``Sw o offset o inner``) stays swizzled: ``Sw o offset o (inner o tv)``."""
        inner = memory.inner if isinstance(memory, ComposedLayout) else memory
        if len(inner) != 2 or (size(inner[0]), size(inner[1])) != self.tile:
            raise MapError(f"memory layout {memory} is not a {self.tile[0]}x{self.tile[1]} "
                           f"tile")
        by_index = inner if self.order == "col" else make_layout(inner[1], inner[0])
        composed = composition(by_index, self.layout)
        if isinstance(memory, ComposedLayout):
            return ComposedLayout(memory.outer, memory.offset, composed)
        return composed

    def __str__(self) -> str:
        what = f"{self.name}: " if self.name else ""
        return (f"{what}{self.layout}  (thread, value) -> {self.order}-major index of a "
                f"{self.tile[0]}x{self.tile[1]} tile")

    def _shown_(self) -> Shown:
        """A notebook shows the tile as CuTe's drawers do (:func:`~symidx.layout.pictures.
        tv_figure`); its text: the thread holding each element."""
        from symidx.layout.grid import draw_grid

        rows, cols = self.tile
        if not self.check().injective or max(rows, cols) > 128:
            return Shown(str(self))
        owner = self.owner()
        text = draw_grid(f"{self}\nthread holding each element",
                         [[int(owner[r, c, 0]) for c in range(cols)] for r in range(rows)])

        def draw() -> object:
            from symidx.layout.pictures import tv_figure

            return tv_figure(self)

        return Shown(str(self), draw=draw, fallback=text)


def _strides(layout: Layout) -> list[int]:
    from symidx.layout.int_tuple import flatten

    return list(flatten(layout.stride))


# ---------------------------------------------------------------------------------------------
# Atoms


def ldmatrix(n: int = 4, trans: bool = False) -> TVLayout:
    """``ldmatrix.sync.aligned.m8n8.x{n}[.trans].b16``, in 16-bit elements: the destination
    layout, ``(thread, value) -> row-major index`` of the ``8n x 8`` tile whose row ``8j + k``
    is the ``k``-th row of matrix ``j`` -- the 16-byte row whose address lane ``8j + k``
    supplies (:func:`ldmatrix_source`). Value ``2j + h`` is the half ``h`` of register ``j``.

    Without ``.trans`` (CuTe's ``SM75_U32x{n}_LDSM_N``) thread ``t`` holds row ``t / 4`` of
    each matrix, columns ``2 (t % 4)`` and ``+1``: in bits CuTe writes
    ``(32,(32,n)):(32,(1,1024))``, divided by 16 ``(32,(2,n)):(2,(1,64))``.

    With ``.trans`` (``SM75_U16x{2n}_LDSM_T``: each matrix is handed out transposed, so a
    tile stored M-major reaches the threads as an MMA operand wants it) thread ``t`` holds,
    of each matrix, column ``t / 4`` of rows ``2 (t % 4)`` and ``+1``: row-major index
    ``64 j + 16 (t % 4) + 8 h + t / 4``, the layout ``((4,8),(2,n)):((16,1),(8,64))``
    (CuTe's ``((4,8),(16,2,n)):((256,16),(1,128,1024))`` in bits, divided by 16).
    """
    if n not in (1, 2, 4):
        raise MapError(f"ldmatrix loads 1, 2 or 4 matrices, not {n}")
    if trans:
        values = Layout(2, 8) if n == 1 else Layout((2, n), (8, 64))
        return TVLayout(Layout(((4, 8), values.shape), ((16, 1), values.stride)),
                        (8 * n, 8), "row", f"SM75_U16x{2 * n}_LDSM_T")
    layout = (Layout((32, 2), (2, 1)) if n == 1 else
              Layout((32, (2, n)), (2, (1, 64))))
    return TVLayout(layout, (8 * n, 8), "row", f"SM75_U32x{n}_LDSM_N")


def ldmatrix_source(n: int = 4) -> Layout:
    """Which tile row each thread supplies the address of (CuTe's ``SrcLayout``, by row):
    threads ``0 .. 8n-1`` the rows in order; for ``x1`` and ``x2`` the other threads repeat
    them (their addresses are ignored)."""
    if n not in (1, 2, 4):
        raise MapError(f"ldmatrix loads 1, 2 or 4 matrices, not {n}")
    return Layout((8 * n, 32 // (8 * n)), (1, 0)) if n < 4 else Layout(32, 1)


def mma_sm80_16x8x16(operand: Literal["A", "B", "C"]) -> TVLayout:
    """``mma.sync.aligned.m16n8k16`` with f16 A and B (CuTe's
    ``SM80_16x8x16_F32F16F16F32_TN``): the ``(thread, value)`` layout of an operand, over
    the column-major ``M x K`` (A, 16x16), ``N x K`` (B, 8x16) or ``M x N`` (C and D, 16x8)
    tile, as CuTe's ``ALayout``, ``BLayout``, ``CLayout``."""
    if operand == "A":
        return TVLayout(Layout(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128))), (16, 16),
                        "col", "SM80_16x8x16_F32F16F16F32_TN A (M,K)")
    if operand == "B":
        return TVLayout(Layout(((4, 8), (2, 2)), ((16, 1), (8, 64))), (8, 16), "col",
                        "SM80_16x8x16_F32F16F16F32_TN B (N,K)")
    if operand == "C":
        return TVLayout(Layout(((4, 8), (2, 2)), ((32, 1), (16, 8))), (16, 8), "col",
                        "SM80_16x8x16_F32F16F16F32_TN C (M,N)")
    raise MapError(f"an MMA operand is 'A', 'B' or 'C', not {operand!r}")


ATOMS = {
    "SM75_U32x1_LDSM_N": lambda: ldmatrix(1),
    "SM75_U32x2_LDSM_N": lambda: ldmatrix(2),
    "SM75_U32x4_LDSM_N": lambda: ldmatrix(4),
    "SM75_U16x2_LDSM_T": lambda: ldmatrix(1, trans=True),
    "SM75_U16x4_LDSM_T": lambda: ldmatrix(2, trans=True),
    "SM75_U16x8_LDSM_T": lambda: ldmatrix(4, trans=True),
    "SM80_16x8x16_F32F16F16F32_TN.A": lambda: mma_sm80_16x8x16("A"),
    "SM80_16x8x16_F32F16F16F32_TN.B": lambda: mma_sm80_16x8x16("B"),
    "SM80_16x8x16_F32F16F16F32_TN.C": lambda: mma_sm80_16x8x16("C"),
}
"""The atoms by CuTe's name (an MMA's operand after a dot)."""


def atom(name: str) -> TVLayout:
    """The TV layout of an atom by its CuTe name (see :data:`ATOMS`)."""
    try:
        return ATOMS[name]()
    except KeyError:
        raise MapError(f"unknown atom {name!r}; known: {', '.join(ATOMS)}") from None
