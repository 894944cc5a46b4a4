"""CuTe's layout algebra over :class:`~symidx.layout.nested.Layout` (CuTe ``layout.hpp``;
NVIDIA cutlass ``python/pycute/layout.py``), under CuTe's names.

Results are CuTe's results, shape and stride for shape and stride, wherever CuTe's result
keeps the operation's defining property:

* ``coalesce(A)``, ``filter(A)``: the same function on ``[0, size(A))`` (``filter`` drops
  stride-0 modes: the same image);
* ``composition(A, B)``: ``R(i) == A(B(i))`` for every ``i < size(B)``, with ``B``'s modes;
* ``complement(A, M)``: ordered (``R(i-1) < R(i)``), disjoint from ``A``'s image but for
  offset 0, and ``size(R) >= M // size(filter(A))``;
* ``right_inverse(A)``: ``A(R(i)) == i`` for ``i < size(R)``; ``left_inverse(A)``:
  ``R(A(i)) == i`` for ``i < size(A)``;
* ``logical_divide`` / ``logical_product`` and their zipped, tiled, flat, blocked and raked
  rearrangements: compositions and concatenations of the above.

Where CuTe's algorithm would silently break the property, the operation raises
:class:`~symidx.errors.MapError` saying why: a composition whose strides or sizes do not
divide (pycute truncates the result), modes of a multi-mode right side whose offsets carry
into each other in the left side's coordinates (composing mode by mode is then wrong), a
complement of a layout whose modes overlap (pycute returns a layout with a zero in its
shape), a left inverse of a layout that is not injective. Where CuTe refuses only because
its divisibility test is stronger than needed (a mode of ``A`` that a stride does not divide,
but that all the points of ``B`` stay inside), the result is given.

``logical_divide`` uses ``complement(B, size(A))`` as pycute does (CuTe's C++ passes
``shape(coalesce(A))``; the two differ only in the rest mode when the sizes do not divide).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import TypeAlias

import numpy as np

from symidx._arith import ceil_div
from symidx.errors import MapError, TooLargeError
from symidx.layout.int_tuple import (
    Coord,
    IntTuple,
    crd2idx,
    flatten,
    format_int_tuple,
    idx2crd,
    is_int,
    is_tuple,
    rank,
)
from symidx.layout.nested import (
    Layout,
    cosize,
    evaluate_layout,
    flat_modes,
    from_modes,
    layout_values,
    make_layout,
    require_int_strides,
    size,
)

Tiler: TypeAlias = Layout | int | None | tuple["Tiler", ...]
"""The right operand of by-mode operations: a layout, an int ``n`` (meaning ``n:1``), None
(CuTe's ``_``: leave the mode alone) or a tuple of tilers, one per mode."""

CHECK_LIMIT = 1 << 20
"""Most points a result is checked at when no structural argument shows it right."""

OFFSET_SEARCH_LIMIT = 1 << 16
"""Largest layout :func:`offset2crd` inverts by search when it has no left inverse."""

__all__ = [
    "CHECK_LIMIT",
    "OFFSET_SEARCH_LIMIT",
    "Tiler",
    "blocked_product",
    "coalesce",
    "complement",
    "composition",
    "filter",
    "flat_divide",
    "flat_product",
    "left_inverse",
    "logical_divide",
    "logical_product",
    "max_common_vector",
    "offset2crd",
    "raked_product",
    "right_inverse",
    "slice_and_offset",
    "tiled_divide",
    "tiled_product",
    "zip_layouts",
    "zipped_divide",
    "zipped_product",
]

Modes = list[tuple[int, int]]


def _as_layout(b: Layout | int) -> Layout:
    return Layout(b, 1) if is_int(b) else b  # type: ignore[arg-type,return-value]


def _by_mode(op: Callable[[Layout, Tiler], Layout], a: Layout, tilers: tuple[Tiler, ...]
             ) -> Layout:
    """Apply ``op`` to ``a``'s first modes with the matching tilers; keep the other modes."""
    if rank(a.shape) < len(tilers):
        raise MapError(f"{len(tilers)} tilers for layout {a} of rank {rank(a.shape)}")
    parts = [op(a[i], t) for i, t in enumerate(tilers)]
    parts += [a[i] for i in range(len(tilers), rank(a.shape))]
    return make_layout(*parts)


# ---------------------------------------------------------------------------------------------
# Coalesce and filter


def _merge(modes: Modes) -> Modes:
    """Drop size-1 modes; merge a mode into the previous one when it continues it."""
    merged: Modes = []
    for s, d in modes:
        if s == 1:
            continue
        if merged and merged[-1][0] * merged[-1][1] == d:
            merged[-1] = (merged[-1][0] * s, merged[-1][1])
        else:
            merged.append((s, d))
    return merged


def coalesce(layout: Layout, profile: IntTuple | None = None) -> Layout:
    """Fewest modes with the same function on ``[0, size)``: size-1 modes dropped, and a mode
    merged into the previous one when it continues it (``s0 * d0 == d1``).

    With a tuple ``profile``, the first ``len(profile)`` modes are coalesced one by one and
    the remaining modes are kept as they are.
    """
    if isinstance(profile, tuple):
        return _by_profile(layout, profile, coalesce)
    return from_modes(_merge(flat_modes(layout)))


def filter(layout: Layout, profile: IntTuple | None = None) -> Layout:  # noqa: A001
    """:func:`coalesce` after dropping the stride-0 modes: the same set of offsets, each
    reached once per coordinate of the remaining modes. ``1:0`` when nothing is left."""
    if isinstance(profile, tuple):
        return _by_profile(layout, profile, filter)
    return from_modes(_merge([(s, d) for s, d in flat_modes(layout) if d != 0]))


def _by_profile(layout: Layout, profile: tuple[IntTuple, ...],
                one: Callable[[Layout, IntTuple], Layout]) -> Layout:
    """``one`` applied to each of the first ``len(profile)`` modes with its profile, the
    remaining modes kept as they are (how :func:`coalesce` and :func:`filter` take a tuple
    profile)."""
    if rank(layout.shape) < len(profile):
        raise MapError(f"profile {format_int_tuple(profile)} has more modes than {layout}")
    parts = [one(layout[i], profile[i]) for i in range(len(profile))]
    parts += [layout[i] for i in range(len(profile), rank(layout.shape))]
    return make_layout(*parts)


# ---------------------------------------------------------------------------------------------
# Composition


def composition(a: Layout, b: Tiler) -> Layout:
    """``a ∘ b``: the layout ``R`` with ``R(i) == a(b(i))`` for every ``i < size(b)``.

    ``R`` keeps ``b``'s modes (a mode may come out refined, e.g. ``4`` as ``(2,2)``). A
    tuple ``b`` composes mode by mode (``None`` leaves a mode alone; an int ``n`` means
    ``n:1``). Raises :class:`MapError` where no layout with ``b``'s modes computes
    ``a ∘ b`` by CuTe's construction (see the module docstring).
    """
    if b is None:
        return a
    if isinstance(b, tuple):
        return _by_mode(composition, a, b)
    b = _as_layout(b)
    if any(d < 0 for d in flatten(b.stride)):
        raise MapError(f"composition needs non-negative strides on the right, got {b}")
    modes = _left_modes(a, b)
    result = _compose(a, modes, b)
    if rank(b.shape) > 1 or is_tuple(b.shape):
        _check_distributes(a, modes, b, result)
    return result


def _left_modes(a: Layout, b: Layout) -> Modes:
    """``a``'s coalesced modes, as CuTe composes with them. When ``b`` reaches past
    ``size(a)``, a trailing size-1 mode is kept: coalescing drops it, which changes ``a``'s
    values past its size, and ``a ∘ b`` needs them there."""
    if sum((s - 1) * d for s, d in flat_modes(b)) < size(a):
        return _merge(flat_modes(a)) or [(1, 0)]
    whole = flat_modes(a)
    last = whole[-1]
    modes = _merge(whole[:-1])
    if modes and modes[-1][0] * modes[-1][1] == last[1]:
        modes[-1] = (modes[-1][0] * last[0], modes[-1][1])
    else:
        modes.append(last)
    return modes


def _compose(a: Layout, modes: Modes, b: Layout) -> Layout:
    """CuTe's construction, mode by mode of ``b`` (right distributivity)."""
    if isinstance(b.shape, tuple):
        return make_layout(*(_compose(a, modes, mode) for mode in b.modes()))
    return _compose_mode(a, modes, b.shape, b.stride)  # type: ignore[arg-type]


def _compose_mode(a: Layout, modes: Modes, shape: int, stride: int) -> Layout:
    """``a ∘ (shape:stride)``: walk ``a``'s modes, first dividing out ``stride`` (skipping
    whole modes it steps over), then taking ``shape`` points from the modes that remain."""
    if stride == 0:
        return Layout(shape, 0)
    result: Modes = []
    rest_shape, rest_stride = shape, stride
    for a_shape, a_stride in modes[:-1]:
        if rest_shape == 1 or rest_stride % a_shape == 0:
            rest_stride = ceil_div(rest_stride, a_shape)
            continue
        if a_shape % rest_stride == 0:
            taken = min(a_shape // rest_stride, rest_shape)
            if rest_shape % taken != 0:
                raise MapError(f"cannot compose {a} with {shape}:{stride}: {taken} points of "
                               f"a mode of size {a_shape} do not divide the {rest_shape} "
                               f"still needed")
        elif (rest_shape - 1) * rest_stride < a_shape:
            taken = rest_shape  # every point stays inside this mode
        else:
            raise MapError(f"cannot compose {a} with {shape}:{stride}: stride {rest_stride} "
                           f"neither divides nor is divided by mode size {a_shape}")
        result.append((taken, rest_stride * a_stride))
        rest_shape //= taken
        rest_stride = ceil_div(rest_stride, a_shape)
    if rest_shape != 1 or not result:
        result.append((rest_shape, rest_stride * modes[-1][1]))
    return from_modes(result)


def _digit_reach(modes: Modes, shape: int, stride: int) -> list[int]:
    """For each bounded mode of ``a`` (all but the last), the largest coordinate the points
    ``i * stride`` (``i < shape``) have in it -- as :func:`_compose_mode` places them."""
    reach = [0] * (len(modes) - 1)
    rest_shape, rest_stride = shape, stride
    for k, (a_shape, _) in enumerate(modes[:-1]):
        if rest_shape == 1 or stride == 0:
            break
        if rest_stride % a_shape == 0:
            rest_stride //= a_shape
            continue
        taken = (min(a_shape // rest_stride, rest_shape) if a_shape % rest_stride == 0
                 else rest_shape)
        reach[k] = (taken - 1) * rest_stride
        rest_shape //= taken
        rest_stride = 1
    return reach


def _check_distributes(a: Layout, modes: Modes, b: Layout, result: Layout) -> None:
    """Raise unless ``result(i) == a(b(i))`` for all ``i < size(b)``.

    Composing mode by mode (as CuTe does) is right when the offsets of ``b``'s modes add
    without carrying in ``a``'s coordinates: then ``a`` of a sum is the sum of ``a``'s. When
    they do carry, the result is checked point by point (up to :data:`CHECK_LIMIT`).
    """
    leaves = flat_modes(b)
    total = [0] * (len(modes) - 1)
    for s, d in leaves:
        for k, r in enumerate(_digit_reach(modes, s, d)):
            total[k] += r
    if all(t < s for t, (s, _) in zip(total, modes)):
        return
    n = size(b)
    if n > CHECK_LIMIT:
        raise TooLargeError(f"cannot compose {a} with {b}: the modes of {b} carry into each "
                            f"other in the coordinates of {a}, and {n} points are too many "
                            f"to check the mode-by-mode result")
    if a.has_basis:  # coordinate values: compare point by point
        same = all(a(int(x)) == result(i) for i, x in enumerate(layout_values(b)))
    else:
        same = np.array_equal(layout_values(result), evaluate_layout(a, layout_values(b)))
    if not same:
        raise MapError(f"cannot compose {a} with {b}: the modes of {b} carry into each other "
                       f"in the coordinates of {a}, so composing mode by mode (as CuTe does) "
                       f"would be wrong")


# ---------------------------------------------------------------------------------------------
# Complement and inverses


def complement(layout: Layout | int, cotarget: int = 1) -> Layout:
    """The layout of the offsets ``layout`` skips, up to ``cotarget`` (CuTe's construction).

    Sorted by stride, each mode ``s:d`` of ``layout`` contributes the mode
    ``(d // covered):covered`` of what lies below it (``covered`` is the extent of the modes
    below), and a last mode reaches ``cotarget``. When every stride is a multiple of the
    extent below it, ``make_layout(layout, complement(layout, m))`` is a bijection onto
    ``[0, n)`` with ``n >= m``; otherwise the result is still ordered and disjoint from
    ``layout`` (CuTe: ``complement((4,6):(1,6))`` is ``1:0``). Raises :class:`MapError` when
    modes overlap (a stride below the extent of the smaller modes).
    """
    layout = _as_layout(layout)
    require_int_strides(layout, "complement")
    if not is_int(cotarget) or cotarget < 1:
        raise MapError(f"complement needs a positive cotarget, got {cotarget!r}")
    if any(d < 0 for d in flatten(layout.stride)):
        raise MapError(f"complement needs non-negative strides: {layout}")
    result: Modes = []
    covered = 1
    for d, s in sorted((d, s) for s, d in flat_modes(layout) if s != 1 and d != 0):
        if d < covered:
            raise MapError(f"{layout} has no complement: its modes overlap (stride {d} is "
                           f"below {covered}, the extent of the smaller modes)")
        result.append((d // covered, covered))
        covered = s * d
    result.append((ceil_div(cotarget, covered), covered))
    return from_modes(_merge(result))


def _exact_complement(layout: Layout) -> bool:
    """True when every sorted stride is a multiple of the extent below it: ``layout`` with
    its complement is then a bijection onto an interval."""
    covered = 1
    for d, s in sorted((d, s) for s, d in flat_modes(layout) if s != 1 and d != 0):
        if d % covered != 0:
            return False
        covered = s * d
    return True


def right_inverse(layout: Layout | int) -> Layout:
    """A layout ``R`` with ``layout(R(i)) == i`` for every ``i < size(R)``: the modes whose
    strides chain ``1, s0, s0*s1, ...`` in sorted order, as far as they do (pycute)."""
    layout = _as_layout(layout)
    require_int_strides(layout, "right_inverse")
    shapes = flatten(layout.shape)
    positions = flatten(_prefix(shapes))
    result: Modes = []
    covered = 1
    for d, s, position in sorted(zip(flatten(layout.stride), shapes, positions)):
        if s == 1:
            continue
        if d != covered:
            break
        result.append((s, position))
        covered = s * d
    return from_modes(_merge(result))


def _prefix(shapes: tuple[int, ...]) -> tuple[int, ...]:
    out, running = [], 1
    for s in shapes:
        out.append(running)
        running *= s
    return tuple(out)


def left_inverse(layout: Layout | int) -> Layout:
    """A layout ``L`` with ``L(layout(i)) == i`` for every ``i < size(layout)``:
    ``right_inverse(make_layout(layout, complement(layout)))`` (pycute).

    Raises :class:`MapError` when ``layout`` is not injective, or when that construction
    does not invert it (its complement does not tile the gaps exactly and some offset falls
    outside the inverse's reach).
    """
    layout = _as_layout(layout)
    require_int_strides(layout, "left_inverse")
    if any(s > 1 and d == 0 for s, d in flat_modes(layout)):
        raise MapError(f"{layout} is not injective (a stride-0 mode), no left inverse")
    inverse = right_inverse(make_layout(layout, complement(layout)))
    if _exact_complement(layout):
        return inverse
    n = size(layout)
    if n > CHECK_LIMIT:
        raise TooLargeError(f"{layout}: its complement is not exact and {n} points are too "
                            f"many to check a left inverse")
    if not np.array_equal(evaluate_layout(inverse, layout_values(layout)), np.arange(n)):
        raise MapError(f"{layout} has no left inverse of CuTe's form (it is not injective, "
                       f"or its complement does not tile its gaps)")
    return inverse


def offset2crd(layout: Layout, offset: int) -> IntTuple | None:
    """The coordinate (congruent to the shape) that ``layout`` maps to ``offset``; None if no
    coordinate does. Raises :class:`MapError` if several do (the layout is not injective)."""
    if not is_int(offset):
        raise MapError(f"offset must be an int, got {offset!r}")
    try:
        inverse: Layout | None = left_inverse(layout)
    except MapError:
        inverse = None
    if inverse is not None:
        idx = inverse(offset) if offset >= 0 else -1
        if 0 <= idx < size(layout) and layout(idx) == offset:
            return idx2crd(idx, layout.shape)
        return None
    if size(layout) > OFFSET_SEARCH_LIMIT:
        raise TooLargeError(f"{layout} has no left inverse and more than "
                            f"{OFFSET_SEARCH_LIMIT} points to search")
    hits = [i for i in range(size(layout)) if layout(i) == offset]
    if len(hits) > 1:
        raise MapError(f"{layout} is not injective: offset {offset} has {len(hits)} coordinates")
    return idx2crd(hits[0], layout.shape) if hits else None


def max_common_vector(a: Layout, b: Layout) -> int:
    """CuTe's ``max_common_vector``: the number ``n`` of leading elements on which ``a`` and
    ``b`` agree and are contiguous, ``a(b⁻¹(i)) == i`` for ``i < n`` (at least 1)."""
    try:
        common = coalesce(composition(a, right_inverse(b)))
    except MapError:
        return 1
    first = common[0] if is_tuple(common.shape) else common
    return size(first) if first.stride == 1 else 1


# ---------------------------------------------------------------------------------------------
# Divide and product


def logical_divide(a: Layout, b: Tiler) -> Layout:
    """Split ``a`` into ``(tile, rest)``: ``composition(a, make_layout(b, complement(b,
    size(a))))``. A tuple ``b`` divides mode by mode."""
    if b is None:
        return a
    if isinstance(b, tuple):
        return _by_mode(logical_divide, a, b)
    tile = _as_layout(b)
    return composition(a, make_layout(tile, complement(tile, size(a))))


def logical_product(a: Layout, b: Tiler) -> Layout:
    """``a`` repeated by ``b``: ``make_layout(a, composition(complement(a, size(a) *
    cosize(b)), b))``. A tuple ``b`` multiplies mode by mode."""
    if b is None:
        return a
    if isinstance(b, tuple):
        return _by_mode(logical_product, a, b)
    tile = _as_layout(b)
    return make_layout(a, composition(complement(a, size(a) * cosize(tile)), tile))


def _unzip(split: Callable[[Layout, Tiler], Layout], a: Layout, b: Tiler) -> Layout:
    """``((tiles...), (rests..., untouched modes...))``: the rank-2 results of ``split`` per
    mode of ``b``, gathered (CuTe's ``zip2_by`` of the tiler's profile)."""
    if b is None:
        return make_layout(Layout(1, 0), a)
    if isinstance(b, tuple):
        if rank(a.shape) < len(b):
            raise MapError(f"{len(b)} tilers for layout {a} of rank {rank(a.shape)}")
        parts = [_unzip(split, a[i], t) for i, t in enumerate(b)]
        rests = [p[1] for p in parts] + [a[i] for i in range(len(b), rank(a.shape))]
        return make_layout(make_layout(*(p[0] for p in parts)), make_layout(*rests))
    return split(a, b)


def zipped_divide(a: Layout, b: Tiler) -> Layout:
    """``((tile modes...), (rest modes...))``: :func:`logical_divide` with the tile modes
    gathered in mode 0 and the rests (and modes ``b`` does not reach) in mode 1."""
    return _unzip(logical_divide, a, b)


def tiled_divide(a: Layout, b: Tiler) -> Layout:
    """``((tile modes...), rest0, rest1, ...)``: :func:`zipped_divide` with mode 1 unpacked."""
    r = zipped_divide(a, b)
    return make_layout(r[0], *r[1].modes())


def flat_divide(a: Layout, b: Tiler) -> Layout:
    """``(tile0, tile1, ..., rest0, rest1, ...)``: :func:`zipped_divide`, both modes
    unpacked."""
    r = zipped_divide(a, b)
    return make_layout(*r[0].modes(), *r[1].modes())


def zipped_product(a: Layout, b: Tiler) -> Layout:
    """``((a's modes...), (repeats...))``: :func:`logical_product`, gathered like
    :func:`zipped_divide`."""
    return _unzip(logical_product, a, b)


def tiled_product(a: Layout, b: Tiler) -> Layout:
    """:func:`zipped_product` with mode 1 unpacked."""
    r = zipped_product(a, b)
    return make_layout(r[0], *r[1].modes())


def flat_product(a: Layout, b: Tiler) -> Layout:
    """:func:`zipped_product` with both modes unpacked."""
    r = zipped_product(a, b)
    return make_layout(*r[0].modes(), *r[1].modes())


def _append_to_rank(layout: Layout, r: int) -> Layout:
    """``layout`` with ``1:0`` modes appended up to rank ``r`` (CuTe's ``append<R>``)."""
    extra = r - rank(layout.shape)
    if extra <= 0:
        return layout
    return make_layout(*layout.modes(), *([Layout(1, 0)] * extra))


def zip_layouts(first: Layout, second: Layout) -> Layout:
    """CuTe's ``zip(a, b)``: mode ``i`` of the result is ``(a_i, b_i)``; two int-shaped
    layouts give the single mode ``(a, b)``."""
    if is_tuple(first.shape) and is_tuple(second.shape):
        if rank(first.shape) != rank(second.shape):
            raise MapError(f"zip: {first} and {second} have different ranks")
        return make_layout(*(make_layout(x, y) for x, y in zip(first.modes(), second.modes())))
    return Layout((make_layout(first, second).shape,), (make_layout(first, second).stride,))


def _rank_matched_product(block: Layout, tiler: Layout) -> Layout:
    r = builtins.max(rank(block.shape), rank(tiler.shape))
    return logical_product(_append_to_rank(block, r), _append_to_rank(tiler, r))


def blocked_product(block: Layout, tiler: Layout) -> Layout:
    """``block`` repeated over ``tiler``, mode by mode: mode ``i`` is ``(block_i,
    repeat_i)`` -- whole blocks side by side (rank ``max(rank(block), rank(tiler))``)."""
    r = _rank_matched_product(block, _as_layout(tiler))
    return zip_layouts(r[0], r[1])


def raked_product(block: Layout, tiler: Layout) -> Layout:
    """Like :func:`blocked_product` with each mode ``(repeat_i, block_i)``: the blocks'
    elements interleaved (raked) across the repeats."""
    r = _rank_matched_product(block, _as_layout(tiler))
    return zip_layouts(r[1], r[0])


def slice_and_offset(crd: Coord, layout: Layout) -> tuple[Layout, int]:
    """The modes where ``crd`` has ``None`` (CuTe's ``_``) as a layout, and the offset of the
    fixed part: ``layout(c) == sliced(c') + offset`` when ``c`` extends ``crd``."""
    return layout.sliced(crd), crd2idx(crd, layout.shape, layout.stride)
