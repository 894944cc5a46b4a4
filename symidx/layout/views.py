"""A layout as the questions about it see it: logical dimensions, an element size, and the
offsets (in elements) of any logical indices, vectorised.

:func:`view` builds one from a nested layout (``shape:stride``), a composed layout
(``Sw<B,M,S> o shape:stride``) or an XLA shape with its layout. Dimensions are the top-level
modes of a nested layout (an index into a mode is split colexicographically inside it) or
the dims of an XLA array. The *linear index* of a logical index follows the layout's own
convention: colexicographic (first mode fastest) for nested layouts, row-major (last dim
fastest) for XLA arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from symidx._arith import int_array
from symidx.errors import TooLargeError
from symidx.layout import cute
from symidx.lowering.layouts import shapes

if TYPE_CHECKING:
    from symidx.hlo.shape import Shape

__all__ = ["VIEW_LIMIT", "LayoutView", "view"]

VIEW_LIMIT = 1 << 24
"""Most elements a question enumerates."""


@dataclass(frozen=True)
class LayoutView:
    """``dims`` (logical sizes), ``element_bits``, ``minor`` (the dims from fastest- to
    slowest-varying in memory, as the layout declares them), ``colex`` (True: the linear
    index is colexicographic, else row-major) and ``offsets``: linear indices -> offsets."""

    title: str
    dims: tuple[int, ...]
    element_bits: int
    minor: tuple[int, ...]
    colex: bool
    offsets: Callable[[np.ndarray], np.ndarray]

    @property
    def size(self) -> int:
        return math.prod(self.dims)

    def grid(self) -> np.ndarray:
        """Every element's offset, as an array of shape ``dims``."""
        if self.size > VIEW_LIMIT:
            raise TooLargeError(f"{self.title} has {self.size} elements; the limit is "
                                f"{VIEW_LIMIT}")
        flat = self.offsets(np.arange(self.size, dtype=np.int64))
        if self.colex:
            return flat.reshape(tuple(reversed(self.dims))).transpose()
        return flat.reshape(self.dims)

    def linear_stride(self, k: int) -> int:
        """How far the linear index moves when index ``k`` grows by one."""
        return math.prod(self.dims[:k]) if self.colex else math.prod(self.dims[k + 1:])

    def coordinate(self, linear: np.ndarray, k: int) -> np.ndarray:
        """Index ``k`` of the logical index at ``linear``."""
        return (linear // self.linear_stride(k)) % self.dims[k]

    def linear(self, index: Sequence[np.ndarray]) -> np.ndarray:
        """The linear index of the logical index arrays ``index``."""
        out = np.zeros(np.broadcast_shapes(*(np.shape(i) for i in index)), dtype=np.int64)
        order = range(len(self.dims) - 1, -1, -1) if self.colex else range(len(self.dims))
        for k in order:
            out = out * self.dims[k] + index[k]
        return out


def view(layout: cute.Layout | cute.ComposedLayout | Shape, element_bits: int = 32
         ) -> LayoutView:
    """The view of a nested or composed layout (elements of ``element_bits``) or of an XLA
    array shape (its own element type)."""
    if isinstance(layout, (cute.Layout, cute.ComposedLayout)):
        inner = layout.inner if isinstance(layout, cute.ComposedLayout) else layout
        modes = list(inner.modes())
        dims = tuple(cute.size(m) for m in modes)
        strides = [min((abs(d) for s, d in cute.flat_modes(m) if s > 1), default=0)
                   for m in modes]
        minor = tuple(sorted(range(len(dims)), key=lambda k: (strides[k] == 0, strides[k], k)))
        return LayoutView(str(layout), dims, element_bits, minor, True,
                          lambda i: cute.composed_values(layout, i))
    return _xla_view(layout)


def _xla_view(shape: Shape) -> LayoutView:
    s = shapes.array_shape(shape)
    dims = tuple(s.dims)
    offset_map = shapes.offset_map(s)
    minor = tuple(s.layout_or_default.minor_to_major)

    def offsets(i: np.ndarray) -> np.ndarray:
        index = []
        for n in reversed(dims):
            i, digit = np.divmod(i, n)
            index.append(digit)
        values, _ = offset_map.evaluate_arrays(list(reversed(index)))
        got = int_array(values[0])  # exact: int64 only when every offset fits
        if got.dtype != np.int64:
            raise TooLargeError(f"{s}: offsets reach past 64-bit integers")
        return got

    return LayoutView(str(s), dims, shapes.element_size_in_bits(s), minor, False, offsets)
