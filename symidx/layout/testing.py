"""Test helpers for kernel authors' own CPU suites (pytest or not: failures are
``AssertionError`` s with a precise message).

:func:`assert_swizzle_roundtrip` proves that a shared-memory store and its read agree through
a swizzle -- every element is read back from the slot it was stored in, no two elements share
a slot -- and, given the read's lane pattern, that the read is no worse than an allowed bank
conflict degree. Those two checks catch the two mutations ROCm/rocm-libraries#10845's review
found its CPU suite let through: a store/read mask mismatch, and deleting the swizzle
outright (still correct, but the conflicts come back).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from symidx.layout.banks import NVIDIA_SMEM, BankReport, Machine, serve
from symidx.layout.linear import LinearLayout
from symidx.layout.nested import Layout
from symidx.layout.swizzle import ComposedLayout

__all__ = ["ROUNDTRIP_LIMIT", "assert_swizzle_roundtrip"]

ROUNDTRIP_LIMIT = 1 << 22
"""Most elements of a tile :func:`assert_swizzle_roundtrip` checks."""

OffsetFn = Callable[..., Any]


def _offsets(f: Any, index: Sequence[np.ndarray], what: str) -> np.ndarray:
    """Offsets of ``f`` at the index arrays: a CuTe layout (called per point), a Triton
    linear layout of ``dim0, dim1, ...``, or a vectorised callable."""
    if isinstance(f, (Layout, ComposedLayout)):
        out = np.array([f(*(int(i[k]) for i in index)) for k in range(index[0].size)],
                       dtype=np.int64)
    elif isinstance(f, LinearLayout):
        names = [f"dim{k}" for k in range(len(index))]
        out = np.array([f.apply(dict(zip(names, (int(i[k]) for i in index))))[0][1]
                        for k in range(index[0].size)], dtype=np.int64)
    else:
        out = np.asarray(f(*index), dtype=np.int64)
        if out.shape != index[0].shape:
            out = np.broadcast_to(out, index[0].shape).copy()
    if out.shape != index[0].shape:
        raise AssertionError(f"{what} gave {out.shape} offsets for {index[0].shape} elements")
    return out


def assert_swizzle_roundtrip(
    store: OffsetFn | Any,
    read: OffsetFn | Any,
    shape: Sequence[int],
    *,
    buffer: int | None = None,
    element_bits: int = 16,
    reads: Callable[[int], Sequence[int]] | None = None,
    vector: int = 1,
    machine: Machine = NVIDIA_SMEM,
    max_conflict: float | None = None,
) -> BankReport | None:
    """Assert that ``read`` reads back every element of a ``shape`` tile from where
    ``store`` put it.

    ``store`` and ``read`` map a logical index (one int array per dimension of ``shape``,
    vectorised: ``lambda r, c: r * 128 + (c ^ ((r & 31) << 2))``; or a CuTe layout, or a
    Triton linear layout) to an element offset in the shared buffer. Checked at every
    element: offsets lie in ``[0, buffer)`` (``buffer`` defaults to the tile's size, or the
    largest offset + 1 when larger ones are intended: pass it), no two elements are stored
    at one offset, and ``read == store``.

    With ``reads`` (lane -> the logical index where the lane's read starts; it reads
    ``vector`` elements along the last dimension) and ``max_conflict``, the read's bank
    conflict degree on ``machine`` (:mod:`symidx.layout.banks`) must be at most
    ``max_conflict`` (1: conflict-free). Returns that bank report, else None.
    """
    dims = tuple(int(n) for n in shape)
    size = math.prod(dims)
    if size > ROUNDTRIP_LIMIT:
        raise AssertionError(f"a {list(dims)} tile has {size} elements; the limit is "
                             f"{ROUNDTRIP_LIMIT}")
    index = [np.asarray(i, dtype=np.int64).reshape(-1)
             for i in np.unravel_index(np.arange(size), dims)]
    stored = _offsets(store, index, "store")
    loaded = _offsets(read, index, "read")
    limit = size if buffer is None else buffer

    def at(k: int) -> tuple[int, ...]:
        return tuple(int(i[k]) for i in index)

    for name, offs in (("store", stored), ("read", loaded)):
        bad = np.nonzero((offs < 0) | (offs >= limit))[0]
        if bad.size:
            k = int(bad[0])
            raise AssertionError(f"{name} puts element {at(k)} at offset {int(offs[k])}, "
                                 f"outside the buffer [0, {limit})")
    order = np.argsort(stored, kind="stable")
    same = np.nonzero(stored[order][1:] == stored[order][:-1])[0]
    if same.size:
        a, b = int(order[same[0]]), int(order[same[0] + 1])
        raise AssertionError(f"store puts elements {at(a)} and {at(b)} both at offset "
                             f"{int(stored[a])}: the store is not a permutation")
    wrong = np.nonzero(stored != loaded)[0]
    if wrong.size:
        k = int(wrong[0])
        raise AssertionError(f"element {at(k)} is stored at offset {int(stored[k])} but read "
                             f"from offset {int(loaded[k])} ({wrong.size} of {size} elements "
                             f"differ): the read's swizzle does not undo the store's")
    if reads is None:
        if max_conflict is not None:
            raise AssertionError("max_conflict needs the read's lane pattern (reads=)")
        return None
    lanes = machine.lanes
    starts = [tuple(int(x) for x in reads(lane)) for lane in range(lanes)]
    for lane, s in enumerate(starts):
        if len(s) != len(dims) or any(not 0 <= x < n for x, n in zip(s, dims)) or \
                s[-1] + vector > dims[-1]:
            raise AssertionError(f"lane {lane} reads {vector} elements from {s}, outside the "
                                 f"{list(dims)} tile")
    lane_index = [np.array([s[d] + (k if d == len(dims) - 1 else 0)
                            for s in starts for k in range(vector)], dtype=np.int64)
                  for d in range(len(dims))]
    offsets = _offsets(read, lane_index, "read").reshape(lanes, vector)
    per_phase = machine.lanes_per_phase(-(-vector * element_bits // 8))
    requests = [[(lane, offsets[lane]) for lane in range(p, min(p + per_phase, lanes))]
                for p in range(0, lanes, per_phase)]
    report = serve(requests, element_bits, machine, "lanes")
    if max_conflict is not None and report.degree > max_conflict:
        raise AssertionError(f"the read is a {report.degree:g}-way bank conflict on "
                             f"{machine.name} ({report.wavefronts} wavefronts for "
                             f"{report.ideal}), more than the {max_conflict:g} allowed: is the "
                             f"swizzle missing?")
    return report
