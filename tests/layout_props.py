"""The defining property of each CuTe layout operation, checked point by point with a
twin evaluator written from the definition (no symidx, no pycute code).

A layout is any object with ``.shape`` and ``.stride`` (an :class:`L`, a symidx or a pycute
Layout); an int ``n`` is ``n:1``; a tuple is a by-mode tiler (a layout, int or None per
mode). Each ``*_ok`` function returns None when the property holds and a short reason when
it does not.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

Pair = tuple[Any, Any]


@dataclass(frozen=True)
class L:
    """A layout as plain data."""

    shape: Any
    stride: Any


def pair(layout: Any) -> Pair:
    """``(shape, stride)`` of a layout object, or of an int ``n`` (``n:1``)."""
    if isinstance(layout, int):
        return (layout, 1)
    return (layout.shape, layout.stride)


def leaves(t: Any) -> list[int]:
    return [v for c in t for v in leaves(c)] if isinstance(t, tuple) else [t]


def size(layout: Any) -> int:
    return math.prod(leaves(pair(layout)[0]))


def rank(layout: Any) -> int:
    shape = pair(layout)[0]
    return len(shape) if isinstance(shape, tuple) else 1


def mode(layout: Any, i: int) -> L:
    shape, stride = pair(layout)
    if isinstance(shape, tuple):
        return L(shape[i], stride[i])
    assert i == 0
    return L(shape, stride)


def at(layout: Any, i: int) -> int:
    """The offset of 1-D index ``i``: colexicographic digits over the flat modes, the last
    mode taking any overflow."""
    shape, stride = pair(layout)
    flat = list(zip(leaves(shape), leaves(stride)))
    total = 0
    for k, (s, d) in enumerate(flat):
        if k == len(flat) - 1:
            total += i * d
        else:
            total += (i % s) * d
            i //= s
    return total


def values(layout: Any) -> list[int]:
    return [at(layout, i) for i in range(size(layout))]


def same(a: Any, b: Any) -> bool:
    return pair(a) == pair(b)


def positive_shape(layout: Any) -> bool:
    return all(isinstance(s, int) and s > 0 for s in leaves(pair(layout)[0]))


# ---------------------------------------------------------------------------------------------
# Properties


def coalesce_ok(a: Any, r: Any) -> str | None:
    if not positive_shape(r) or size(r) != size(a):
        return "size changed"
    if any(isinstance(s, tuple) for s in (pair(r)[0] if isinstance(pair(r)[0], tuple) else ())):
        return "not flat"
    return None if values(r) == values(a) else "values differ"


def filter_ok(a: Any, r: Any) -> str | None:
    kept = math.prod(s for s, d in zip(leaves(pair(a)[0]), leaves(pair(a)[1])) if d != 0)
    if not positive_shape(r) or size(r) != kept:
        return "size is not the product of the non-stride-0 modes"
    return None if set(values(r)) == set(values(a)) else "image differs"


def composition_ok(a: Any, b: Any, r: Any) -> str | None:
    """``r(i) == a(b(i))`` for all ``i < size(b)``, ``r`` with ``b``'s modes; a tuple ``b``
    (a by-mode tiler) mode by mode."""
    if b is None:
        return None if same(a, r) else "None tiler changed the layout"
    if isinstance(b, tuple):
        return _by_mode(composition_ok, a, b, r)
    b = L(*pair(b))
    if not positive_shape(r) or size(r) != size(b):
        return f"size {size(r)} is not size(b) = {size(b)}"
    if isinstance(b.shape, tuple) and (rank(r) != rank(b) or any(
            size(mode(r, k)) != size(mode(b, k)) for k in range(rank(b)))):
        return "modes of b not kept"
    for i in range(size(b)):
        if at(r, i) != at(a, at(b, i)):
            return f"r({i}) = {at(r, i)}, a(b({i})) = {at(a, at(b, i))}"
    return None


def _by_mode(check: Any, a: Any, tilers: tuple[Any, ...], r: Any, *extra: Any) -> str | None:
    if rank(r) != rank(a) or rank(a) < len(tilers):
        return "rank changed"
    for k, t in enumerate(tilers):
        why = check(mode(a, k), t, mode(r, k), *extra)
        if why:
            return f"mode {k}: {why}"
    for k in range(len(tilers), rank(a)):
        if not same(mode(r, k), mode(a, k)):
            return f"mode {k} changed"
    return None


def complement_ok(a: Any, cotarget: int, r: Any) -> str | None:
    """Ordered and disjoint from ``a`` but for 0; when every stride of ``a`` (sorted, modes
    of size 1 or stride 0 left out) is a multiple of the extent below it, ``(a, r)`` is a
    bijection onto ``[0, n)`` with ``n >= cotarget``. (Otherwise CuTe's construction keeps
    neither that nor its header's ``size(r) >= cotarget / size(filter(a))``:
    ``complement((2,3,4):(0,3,16), 103)`` is ``(3,2):(1,64)``.)"""
    if not positive_shape(r):
        return "a shape entry is not positive"
    rv = values(r)
    if any(x >= y for x, y in zip(rv, rv[1:])):
        return "not ordered"
    image = set(values(a))
    if any(v in image for v in rv[1:]):
        return "not disjoint"
    if not exact_strides(a):
        return None
    image = sorted(x + y for y in rv for x in set(values(a)))
    if image != list(range(len(image))) or len(image) < cotarget:
        return "with a, not a bijection onto an interval reaching the cotarget"
    return None


def exact_strides(a: Any) -> bool:
    """Sorted by stride (size-1 and stride-0 modes left out), each stride is a multiple of
    the extent of the modes below it."""
    covered = 1
    for d, s in sorted((d, s) for s, d in zip(leaves(pair(a)[0]), leaves(pair(a)[1]))
                       if s != 1 and d != 0):
        if d % covered:
            return False
        covered = s * d
    return True


def right_inverse_ok(a: Any, r: Any) -> str | None:
    if not positive_shape(r):
        return "a shape entry is not positive"
    return next((f"a(r({i})) != {i}" for i in range(size(r)) if at(a, at(r, i)) != i), None)


def left_inverse_ok(a: Any, r: Any) -> str | None:
    if not positive_shape(r):
        return "a shape entry is not positive"
    return next((f"r(a({i})) != {i}" for i in range(size(a)) if at(r, at(a, i)) != i), None)


def make_layout(*layouts: Any) -> L:
    ps = [pair(x) for x in layouts]
    return L(tuple(p[0] for p in ps), tuple(p[1] for p in ps))


def logical_divide_ok(a: Any, b: Any, r: Any, complement_of: Any) -> str | None:
    """``r == a ∘ (b, c)`` point by point, with ``c = complement(b, size(a))`` (given by
    ``complement_of(b, size(a))``, itself checked); by mode for a tuple ``b``."""
    if b is None:
        return None if same(a, r) else "None tiler changed the layout"
    if isinstance(b, tuple):
        return _by_mode(logical_divide_ok, a, b, r, complement_of)
    c = complement_of(b, size(a))
    why = complement_ok(b, size(a), c)
    if why:
        return f"complement: {why}"
    if rank(r) != 2 or size(mode(r, 0)) != size(b):
        return "not (tile, rest)"
    return composition_ok(a, make_layout(b, c), r)


def logical_product_ok(a: Any, b: Any, r: Any, complement_of: Any) -> str | None:
    """``r == (a, c ∘ b)`` with ``c = complement(a, size(a) * cosize(b))``."""
    if b is None:
        return None if same(a, r) else "None tiler changed the layout"
    if isinstance(b, tuple):
        return _by_mode(logical_product_ok, a, b, r, complement_of)
    if rank(r) != 2 or not same(mode(r, 0), a):
        return "mode 0 is not a"
    cosize_b = max(values(b)) + 1
    c = complement_of(a, size(a) * cosize_b)
    why = complement_ok(a, size(a) * cosize_b, c)
    if why:
        return f"complement: {why}"
    return composition_ok(c, b, mode(r, 1))


def ungather(r: Any, tilers: Any, a: Any) -> Any:
    """The logical layout whose tile modes (mode 0 of ``r``) and rest modes (mode 1, then
    the modes the tiler does not reach) were gathered by a zipped divide or product; a
    reason (str) when ``r`` does not have that form."""
    if not isinstance(tilers, tuple):
        return r
    if rank(r) != 2:
        return "not rank 2"
    tiles, rests = mode(r, 0), mode(r, 1)
    if rank(tiles) != len(tilers) or rank(rests) != rank(a):
        return "modes not gathered"
    parts = []
    for k, t in enumerate(tilers):
        if t is None:
            if not same(mode(tiles, k), L(1, 0)):
                return f"mode {k}: a None tiler's tile is not 1:0"
            parts.append(mode(rests, k))
        else:
            parts.append(make_layout(mode(tiles, k), mode(rests, k)))
    parts += [mode(rests, j) for j in range(len(tilers), rank(a))]
    return make_layout(*parts)


def slice_ok(a: Any, crd: Any, sliced: Any, offset: int) -> str | None:
    """``a(c) == sliced(free part of c) + offset`` for every ``c`` completing ``crd``."""
    shape, stride = pair(a)
    holes: list[Any] = []

    def fill(c: Any, s: Any) -> Any:
        if isinstance(c, tuple):
            return tuple(fill(x, y) for x, y in zip(c, s))
        if c is None:
            holes.append(s)
            return None
        return c

    fill(crd, shape)
    sizes = [math.prod(leaves(s)) for s in holes]
    if math.prod(sizes) != size(sliced):
        return "sliced size differs"
    for index, free in enumerate(itertools.product(*(range(n) for n in reversed(sizes)))):
        free = tuple(reversed(free))
        full = _complete(crd, iter(free))
        linear = 0
        for v, n in zip(reversed(free), reversed(sizes)):
            linear = linear * n + v
        if crd_offset(full, shape, stride) != at(sliced, linear) + offset:
            return f"at {full}"
        if index > 4096:
            break
    return None


def _complete(c: Any, free: Any) -> Any:
    """``c`` with each ``None`` replaced by the next value of ``free``."""
    if isinstance(c, tuple):
        return tuple(_complete(x, free) for x in c)
    return next(free) if c is None else c


def crd_offset(crd: Any, shape: Any, stride: Any) -> int:
    """Offset of a coordinate (tuples mode by mode, ints split colexicographically)."""
    if isinstance(crd, tuple):
        return sum(crd_offset(c, s, d) for c, s, d in zip(crd, shape, stride))
    return at(L(shape, stride), crd)
