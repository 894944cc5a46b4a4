"""Contiguity of a layout: along each dimension, how many consecutive elements sit at
consecutive offsets, and the widest vector access that is legal there.

For dimension ``k`` of size ``n`` (every other index fixed, each such *line* in turn):

* ``longest`` -- the longest stretch of consecutive indices whose offsets step by +1, in
  any line;
* ``run`` -- the largest ``r`` such that, in every line, every aligned block
  ``[j*r, (j+1)*r)`` (the last one cut at ``n``) steps by +1 inside: what a kernel can
  rely on everywhere (the gcd of the places where some line breaks);
* ``vector`` -- the widest legal vector access, in elements: the largest power of two
  ``v`` dividing ``run`` and ``n``, with every aligned chunk's first offset a multiple of
  ``v`` (the buffer itself aligned), and ``v`` elements at most ``max_vector_bytes``
  (16: a 128-bit access on NVIDIA GPUs). Also in bytes.

The answers are exact: every element of the layout is looked at (up to
:data:`~symidx.layout.views.VIEW_LIMIT` elements).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from symidx._arith import ceil_div
from symidx.layout.views import LayoutView

__all__ = ["MAX_VECTOR_BYTES", "DimContiguity", "contiguity", "contiguity_text"]

MAX_VECTOR_BYTES = 16
"""The widest vector access: 128 bits."""


@dataclass(frozen=True)
class DimContiguity:
    """The contiguity of one dimension (see the module docstring); ``vector_bytes`` is
    ``vector`` in bytes (``vector * element_bits / 8``, rounded up)."""

    dim: int
    size: int
    longest: int
    run: int
    vector: int
    vector_bytes: int
    minor: bool

    def as_json(self) -> dict[str, Any]:
        return {"dim": self.dim, "size": self.size, "longest": self.longest, "run": self.run,
                "vector": self.vector, "vector_bytes": self.vector_bytes, "minor": self.minor}


def contiguity(v: LayoutView, max_vector_bytes: int = MAX_VECTOR_BYTES
               ) -> list[DimContiguity]:
    """The contiguity of every dimension, the memory-minor one first."""
    grid = v.grid()
    return [_along(grid, k, v, max_vector_bytes) for k in v.minor]


def _along(grid: np.ndarray, k: int, v: LayoutView, max_vector_bytes: int) -> DimContiguity:
    lines = np.moveaxis(grid, k, -1).reshape(-1, grid.shape[k])
    n = lines.shape[1]
    steps = np.diff(lines, axis=1) == 1
    broken = np.flatnonzero(~steps.all(axis=0))
    run = n if broken.size == 0 else math.gcd(*(int(p) + 1 for p in broken))
    longest = _longest_stretch(steps)
    limit = max(1, max_vector_bytes * 8 // max(v.element_bits, 1))
    vector = 1
    while (vector * 2 <= limit and run % (vector * 2) == 0 and n % (vector * 2) == 0
           and (lines[:, :: vector * 2] % (vector * 2) == 0).all()):
        vector *= 2
    return DimContiguity(k, n, longest, run, vector, ceil_div(vector * v.element_bits, 8),
                         k == v.minor[0])


def _longest_stretch(steps: np.ndarray) -> int:
    """1 + the longest run of True along the last axis, over all rows."""
    best = 0
    current = np.zeros(steps.shape[0], dtype=np.int64)
    for j in range(steps.shape[1]):
        current = np.where(steps[:, j], current + 1, 0)
        best = max(best, int(current.max(initial=0)))
    return best + 1


def contiguity_text(v: LayoutView, found: list[DimContiguity]) -> str:
    """One line per dimension, the minor one first."""
    what = "mode" if v.colex else "dim"
    lines = [f"contiguity of {v.title} ({v.element_bits}-bit elements):"]
    for c in found:
        tag = ", minor" if c.minor else ""
        lines.append(
            f"{what} {c.dim} (size {c.size}{tag}): runs of {c.longest} contiguous element"
            f"{'s' if c.longest != 1 else ''} at most, {c.run} in every aligned block; "
            f"widest vector {c.vector} element{'s' if c.vector != 1 else ''} "
            f"({c.vector_bytes} bytes)")
    return "\n".join(lines)
