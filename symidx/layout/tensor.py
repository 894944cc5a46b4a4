"""A CuTe ``Tensor`` view: a layout over an engine (CuTe ``tensor.hpp``).

``Tensor(layout, engine)`` reads ``engine[base + layout(c)]`` at coordinate ``c``; without an
engine it is CuTe's counting tensor, whose values are the offsets themselves. Slicing with
``None`` (CuTe's ``_``) keeps modes and moves the base (``t[2, None]`` is row 2), and
:meth:`Tensor.partition` gives the values one thread holds under a thread-value layout. A
rank-1 or rank-2 tensor prints as CuTe's ``print_tensor`` grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from symidx.errors import MapError, TooLargeError
from symidx.layout.algebra import slice_and_offset
from symidx.layout.grid import draw_grid
from symidx.layout.int_tuple import Coord, has_none
from symidx.layout.nested import VALUES_LIMIT, Layout, layout_values, size
from symidx.layout.tv import TVLayout

__all__ = ["Tensor", "make_tensor"]


@dataclass(frozen=True, eq=False)
class Tensor:
    """``layout`` over ``engine`` (a 1-D array; None: the offsets), starting at ``base``."""

    layout: Layout
    engine: np.ndarray | None = field(default=None, repr=False)
    base: int = 0

    def __post_init__(self) -> None:
        if self.layout.has_basis:
            raise MapError(f"a tensor's layout has int strides, {self.layout} has basis "
                           f"strides")
        if self.engine is not None:
            engine = np.asarray(self.engine)
            if engine.ndim != 1:
                raise MapError(f"an engine is one-dimensional, got shape {engine.shape}")
            object.__setattr__(self, "engine", engine)
            offsets = self.offsets()
            if offsets.size and (offsets.min() < 0 or offsets.max() >= engine.size):
                raise MapError(f"{self.layout} at base {self.base} reaches offsets "
                               f"[{offsets.min()}, {offsets.max()}], outside the engine's "
                               f"{engine.size} elements")

    def offsets(self) -> np.ndarray:
        """The offsets into the engine, in colexicographic coordinate order."""
        return layout_values(self.layout) + self.base

    def values(self) -> np.ndarray:
        """The tensor's values in colexicographic coordinate order."""
        offsets = self.offsets()
        return offsets if self.engine is None else self.engine[offsets]

    def __getitem__(self, crd: Coord) -> object:
        """A value at a full coordinate; a :class:`Tensor` when ``crd`` has ``None``."""
        if has_none(crd):
            sliced, offset = slice_and_offset(crd, self.layout)
            return Tensor(sliced, self.engine, self.base + offset)
        offset = self.base + self.layout(crd)
        return offset if self.engine is None else self.engine[offset].item()

    def __call__(self, *crd: Coord) -> object:
        return self[crd[0] if len(crd) == 1 else tuple(crd)]

    def __len__(self) -> int:
        return len(self.layout)

    @property
    def shape(self) -> object:
        return self.layout.shape

    def size(self) -> int:
        return size(self.layout)

    def partition(self, tv: TVLayout, thread: int) -> Tensor:
        """The values ``thread`` holds under ``tv`` (this tensor is ``tv``'s tile): a rank-1
        tensor over the thread's values, in value order."""
        if len(self.layout) != 2 or (size(self.layout[0]), size(self.layout[1])) != tv.tile:
            raise MapError(f"tensor {self.layout} is not the {tv.tile[0]}x{tv.tile[1]} tile of "
                           f"{tv.name or tv.layout}")
        if not 0 <= thread < tv.threads:
            raise MapError(f"thread {thread} is outside {tv.threads} threads")
        composed = tv.compose(self.layout)
        assert isinstance(composed, Layout)
        return Tensor(composed, self.engine, self.base)[thread, None]  # type: ignore[return-value]

    def __str__(self) -> str:
        head = ("counting tensor" if self.engine is None else
                f"tensor of {self.engine.dtype}") + f" o {self.base} o {self.layout}"
        if size(self.layout) > VALUES_LIMIT:
            raise TooLargeError(f"{head}: too many values to print")
        rank = len(self.layout)
        if rank > 2:
            return f"{head}\n{self.values().tolist()}"
        grid: list[list[Any]]
        if rank == 1:
            grid = [[self[i] for i in range(size(self.layout))]]
        else:
            rows, cols = size(self.layout[0]), size(self.layout[1])
            grid = [[self[(r, c)] for c in range(cols)] for r in range(rows)]
        return draw_grid(head, grid)


def make_tensor(engine: Sequence[object] | np.ndarray | None, layout: Layout,
                base: int = 0) -> Tensor:
    """CuTe's ``make_tensor(engine, layout)``."""
    return Tensor(layout, None if engine is None else np.asarray(engine), base)
