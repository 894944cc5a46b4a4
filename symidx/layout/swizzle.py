"""CuTe's swizzles and composed layouts (CuTe ``swizzle.hpp``, ``swizzle_layout.hpp``).

``Swizzle(B, M, S)`` -- printed ``Sw<B,M,S>`` -- XORs ``B`` bits of an offset into ``B``
other bits: the bits ``[M + max(0,S), +B)`` (YYY) into the bits ``[M - min(0,S), +B)``
(ZZZ); the ``M`` lowest bits never change. It is a bijection on every aligned block of
``2^(B+M+|S|)`` offsets, its own inverse, and the standard way to spread a tile's rows over
shared-memory banks.

A :class:`ComposedLayout` ``outer o offset o inner`` maps a coordinate ``c`` to
``outer(offset + inner(c))``; CuTe prints ``Sw<3,4,3> o _0 o (_8,_64):(_64,_1)``, the
CuTe DSL ``S<3,4,3> o 0 o (8,64):(64,1)``: both read with
:func:`symidx.layout.text.parse_layout`, the one layout reader.

XOR is not affine, but each swizzled bit is the sum of two bits mod 2, so a swizzle is
exactly a quasi-affine map over the offset's bits: :func:`swizzle_expr` builds
``e + sum_k 2^z_k * (((e floordiv 2^z_k) + (e floordiv 2^y_k)) mod 2 - (e floordiv 2^z_k)
mod 2)`` for a non-negative ``e`` -- exact on every point, no piecewise cases.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from symidx._arith import fits_int64
from symidx._display import Rich, Shown
from symidx.core.expr import Expr, FloorDiv, Mod, add, scale
from symidx.errors import MapError, TooLargeError
from symidx.layout.grid import draw_grid
from symidx.layout.int_tuple import Coord, is_int, rank
from symidx.layout.nested import Layout, evaluate_layout, size

__all__ = [
    "ComposedLayout",
    "Swizzle",
    "composed_values",
    "swizzle_expr",
]



#: The largest bits, base or |shift| a swizzle may have (far past any 64-bit offset, but
#: small enough that its masks are cheap integers).
_MAX_BITS = 1024
#: The bits of a non-negative int64.
_INT64_BITS = (1 << 63) - 1


@dataclass(frozen=True, slots=True)
class Swizzle:
    """``Sw<bits,base,shift>``: ``offset ^ ((offset & yyy_mask) >> shift)`` (a negative
    shift shifts left)."""

    bits: int
    base: int
    shift: int

    def __post_init__(self) -> None:
        if not all(is_int(v) for v in (self.bits, self.base, self.shift)):
            raise MapError(f"a swizzle's bits, base and shift are ints, got {self!r}")
        if self.bits < 0 or self.base < 0:
            raise MapError(f"{self}: bits and base must be non-negative")
        if max(self.bits, self.base, abs(self.shift)) > _MAX_BITS:
            raise MapError(f"Sw<{self.bits},{self.base},{self.shift}>: bits, base and shift "
                           f"above {_MAX_BITS} are not supported (offsets have 64 bits)")
        if abs(self.shift) < self.bits:
            raise MapError(f"{self}: |shift| must be at least bits (the masks would overlap)")

    @property
    def yyy_mask(self) -> int:
        """The bits read."""
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def zzz_mask(self) -> int:
        """The bits changed."""
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    def bit_pairs(self) -> list[tuple[int, int]]:
        """``(z, y)`` per swizzled bit: bit ``z`` of the result is bit ``z`` XOR bit ``y``."""
        z0 = self.base - min(0, self.shift)
        y0 = self.base + max(0, self.shift)
        return [(z0 + k, y0 + k) for k in range(self.bits)]

    def __call__(self, offset: int) -> int:
        moved = offset & self.yyy_mask
        return offset ^ (moved >> self.shift if self.shift >= 0 else moved << -self.shift)

    def apply(self, offsets: np.ndarray) -> np.ndarray:
        """The swizzle of every (non-negative) offset of an int64 array. Masks above bit
        62 read only zero bits of such offsets; a left shift that would carry a bit past
        bit 62 is a :class:`~symidx.errors.TooLargeError`, not a wrapped offset."""
        mask = self.yyy_mask & _INT64_BITS  # a non-negative int64 has no higher bit
        moved = offsets & mask
        if self.shift >= 0:
            return offsets ^ (moved >> self.shift)
        top = int(moved.max()) if moved.size else 0
        if top.bit_length() - self.shift > 63:
            raise TooLargeError(f"{self} moves bit {top.bit_length() - 1} to bit "
                                f"{top.bit_length() - 1 - self.shift}: past a 64-bit offset")
        return offsets ^ (moved << -self.shift)

    def size(self) -> int:
        """The period of the pattern: ``2^(bits + base + |shift|)``."""
        return 1 << (self.bits + self.base + abs(self.shift))

    def __str__(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"


def swizzle_expr(sw: Swizzle, e: Expr) -> Expr:
    """The swizzle of the non-negative offset ``e``, exactly, bit by bit (see the module
    docstring)."""
    terms: list[Expr] = [e]
    for z, y in sw.bit_pairs():
        bz = FloorDiv(e, 1 << z) if z else e
        by = FloorDiv(e, 1 << y)
        terms.append(scale(1 << z, Mod(add([bz, by]), 2)))
        terms.append(scale(-(1 << z), Mod(bz, 2)))
    return add(terms)


@dataclass(frozen=True, slots=True)
class ComposedLayout(Rich):
    """``outer o offset o inner``: ``c -> outer(offset + inner(c))`` (CuTe's
    ``ComposedLayout``). ``outer`` is a :class:`Swizzle` or a :class:`Layout`."""

    outer: Swizzle | Layout
    offset: int
    inner: Layout

    def __post_init__(self) -> None:
        if not is_int(self.offset):
            raise MapError(f"a composed layout's offset is an int, got {self.offset!r}")

    @property
    def shape(self) -> object:
        return self.inner.shape

    def __call__(self, *crd: Coord) -> int:
        return self.outer(self.offset + self.inner(*crd))

    def __getitem__(self, i: int) -> ComposedLayout:
        return ComposedLayout(self.outer, self.offset, self.inner[i])

    def __len__(self) -> int:
        return rank(self.inner.shape)

    def modes(self) -> Iterator[ComposedLayout]:
        return (self[i] for i in range(len(self)))

    def __str__(self) -> str:
        middle = f" o {self.offset}" if self.offset else ""
        return f"{self.outer}{middle} o {self.inner}"

    def _shown_(self) -> Shown:
        """A notebook shows the grid of offsets (rows: mode 0), drawn with a hue per bank
        of a 32-bit element so that the swizzle shows (its text without matplotlib)."""
        if size(self.inner) > _SHOWN or len(self) > 2 or self.inner.has_basis:
            return Shown(str(self))
        rows = size(self.inner[0]) if len(self) == 2 else 1
        cols = size(self.inner) // rows
        flat = composed_values(self).tolist()
        values = [[flat[r + rows * c] for c in range(cols)] for r in range(rows)]

        def draw() -> object:
            from symidx.layout.figures import grid_figure

            return grid_figure(str(self), values, shade="bank")

        return Shown(str(self), draw=draw, fallback=draw_grid(str(self), values))


#: Most elements a notebook draws of a composed layout (more: its text).
_SHOWN = 4096


def composed_values(layout: Layout | ComposedLayout, index: np.ndarray | None = None
                    ) -> np.ndarray:
    """The offsets of ``layout`` at the 1-D indices ``index`` (default: all of them)."""
    inner = layout.inner if isinstance(layout, ComposedLayout) else layout
    index = np.arange(size(inner), dtype=np.int64) if index is None else index
    values = evaluate_layout(inner, index)
    if not isinstance(layout, ComposedLayout):
        return values
    if values.size:  # the offset added in Python integers first: int64 must not wrap
        low, high = int(values.min()) + layout.offset, int(values.max()) + layout.offset
        if not fits_int64(low, high):
            raise TooLargeError(f"{layout}: offsets reach {high if high > 0 else low}, past "
                                f"64-bit integers")
    values = values + layout.offset
    if isinstance(layout.outer, Swizzle):
        if (values < 0).any():
            raise MapError(f"{layout}: a swizzle of a negative offset")
        return layout.outer.apply(values)
    return evaluate_layout(layout.outer, values)
