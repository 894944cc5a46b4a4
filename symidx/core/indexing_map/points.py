"""The points of a box of intervals, enumerated in chunks of numpy coordinate arrays: what
a map's evaluation over its whole domain and the enumerating verifier walk."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from math import prod
from typing import Any

from symidx._arith import fits_int64
from symidx.core.interval import Interval

__all__ = ["box_points"]


def box_points(box: Sequence[Interval], chunk: int = 1 << 20) -> Iterator[tuple[Any, ...]]:
    """The points of a box of intervals as flat numpy coordinate arrays, about ``chunk``
    points at a time (the first interval is split); ``()`` once for an empty box. An
    interval whose values do not all fit in int64 comes as an array of Python integers."""
    import numpy as np

    def axis(lo: int, hi: int) -> Any:
        if fits_int64(lo, hi):
            return np.arange(lo, hi + 1, dtype=np.int64)
        return np.asarray(range(lo, hi + 1), dtype=object)  # Python integers

    if not box:
        yield ()
        return
    rest = [axis(b.lo, b.hi) for b in box[1:]]
    per_value = prod(b.size for b in box[1:])
    step = max(1, chunk // max(1, per_value))
    first = box[0]
    for start in range(first.lo, first.hi + 1, step):
        head = axis(start, min(first.hi, start + step - 1))
        grids = np.meshgrid(head, *rest, indexing="ij")
        yield tuple(g.reshape(-1) for g in grids)
