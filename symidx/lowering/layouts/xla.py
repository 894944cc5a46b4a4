"""XLA array layouts as plain integer functions (SPEC §3; seeds 000, 001, 004).

Everything here works on plain values:

* ``dims`` -- the logical dimension sizes, indexed by dimension number (``f32[3,5]`` is
  ``(3, 5)``);
* ``minor_to_major`` -- a permutation of ``range(len(dims))``; its first entry is the
  fastest-varying dimension (``{1,0}`` is row-major);
* ``tiles`` -- a sequence of tiles, each a tuple of ints (``T(8,128)(2,1)`` is
  ``((8, 128), (2, 1))``); :data:`COMBINE` (``-1``, printed ``*``) in a tile merges that
  dimension into the next more-minor one before tiling;
* ``index`` -- a logical multi-index, one entry per dimension number.

Tiling, as the seeds define it, on the *physical* shape (the dims in major-to-minor order):

1. a tile aligns with the most-minor dims; if it has more dims than the shape, the shape gets
   leading size-1 dims;
2. each ``*`` entry merges its dim into the next more-minor one (a row-major reshape);
3. the tiled dims ``d`` are padded to whole tiles and split, giving
   ``(leading dims..., ceil(d/t)..., t...)``, laid out row-major;
4. the next tile applies in the same way to the shape produced by step 3, so ``(8,128)(2,1)``
   re-tiles the ``(8, 128)`` tile dims of the first step.

The physical offset of an element is its row-major position in the final shape; slots that no
logical element reaches are padding. ``tail_padding_alignment_in_elements`` rounds the total
up, and the older ``padded_dimensions`` form pads the logical dims before everything else.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from symidx._arith import ceil_div
from symidx._text import lazy_pattern
from symidx.errors import MapError, ParseError

Dims = tuple[int, ...]
Index = tuple[int, ...]
Tile = tuple[int, ...]
Tiles = tuple[Tile, ...]

COMBINE = -1
"""A tile entry that merges its dimension into the next more-minor one (printed ``*``)."""

XLA_COMBINE_DIMENSION = -(2**63)
"""The value XLA's C++ ``Tile::kCombineDimension`` uses for ``*``; accepted as :data:`COMBINE`."""

__all__ = [
    "COMBINE",
    "XLA_COMBINE_DIMENSION",
    "TilingStep",
    "default_minor_to_major",
    "format_tiles",
    "linear_index",
    "logical_index",
    "major_to_minor",
    "multi_index",
    "parse_tiles",
    "physical_buffer",
    "physical_offset",
    "physical_size_bytes",
    "physical_size_elements",
    "slot_origin",
    "tiled_shape",
    "tiling_plan",
]

_T = TypeVar("_T")


# ---------------------------------------------------------------------------------------------
# Validation and small helpers


def _as_ints(values: Sequence[int], what: str) -> tuple[int, ...]:
    """``values`` as a tuple of ints; a bool or non-int entry is a :class:`MapError`."""
    out = tuple(values)
    for v in out:
        if isinstance(v, bool) or not isinstance(v, int):
            raise MapError(f"{what} must hold integers, got {out!r}")
    return out


def _check_dims(dims: Sequence[int]) -> Dims:
    out = _as_ints(dims, "dims")
    if any(d < 0 for d in out):
        raise MapError(f"dimension sizes must be non-negative, got {out}")
    return out


def _check_minor_to_major(minor_to_major: Sequence[int], rank: int) -> tuple[int, ...]:
    out = _as_ints(minor_to_major, "minor_to_major")
    if sorted(out) != list(range(rank)):
        raise MapError(f"minor_to_major {out} is not a permutation of 0..{rank - 1}")
    return out


def _check_tiles(tiles: Sequence[Sequence[int]]) -> Tiles:
    out = []
    for tile in tiles:
        t = tuple(COMBINE if v == XLA_COMBINE_DIMENSION else v for v in _as_ints(tile, "tile"))
        if not t:
            raise MapError("a tile needs at least one dimension")
        if any(v <= 0 and v != COMBINE for v in t):
            raise MapError(f"tile sizes must be positive or * (-1), got {t}")
        if t[-1] == COMBINE:
            raise MapError(f"tile {t}: * must have a more-minor dimension to combine with")
        out.append(t)
    return tuple(out)


def _check_index(dims: Dims, index: Sequence[int]) -> Index:
    idx = _as_ints(index, "index")
    if len(idx) != len(dims):
        raise MapError(f"index {idx} has rank {len(idx)}, shape {list(dims)} has {len(dims)}")
    for i, (e, d) in enumerate(zip(idx, dims, strict=True)):
        if not 0 <= e < d:
            raise MapError(f"index {idx} is out of bounds: dim {i} is {e}, size {d}")
    return idx


def _check_alignment(alignment: int) -> int:
    if isinstance(alignment, bool) or not isinstance(alignment, int) or alignment < 1:
        raise MapError(f"tail_padding_alignment_in_elements must be >= 1, got {alignment!r}")
    return alignment


def _effective_dims(dims: Dims, padded_dimensions: Sequence[int] | None) -> Dims:
    """The dims the layout lays out: ``padded_dimensions`` when given (older layouts)."""
    if padded_dimensions is None:
        return dims
    padded = _check_dims(padded_dimensions)
    if len(padded) != len(dims):
        raise MapError(f"padded_dimensions {list(padded)} must have rank {len(dims)}")
    if any(p < d for p, d in zip(padded, dims, strict=True)):
        raise MapError(f"padded_dimensions {list(padded)} are smaller than dims {list(dims)}")
    return padded


def _round_up(a: int, b: int) -> int:
    return ceil_div(a, b) * b


def _permute(values: Sequence[_T], order: Sequence[int]) -> tuple[_T, ...]:
    return tuple(values[i] for i in order)


def _unpermute(values: Sequence[_T], order: Sequence[int]) -> tuple[_T, ...]:
    out: list[_T] = list(values)
    for position, dim in enumerate(order):
        out[dim] = values[position]
    return tuple(out)


def _row_major_offset(shape: Dims, index: Index) -> int:
    offset = 0
    for e, d in zip(index, shape, strict=True):
        offset = offset * d + e
    return offset


def _row_major_index(shape: Dims, offset: int) -> Index:
    out = []
    for d in reversed(shape):
        offset, e = divmod(offset, d)
        out.append(e)
    return tuple(reversed(out))


# ---------------------------------------------------------------------------------------------
# minor_to_major without tiling (what XLA's IndexUtil provides)


def default_minor_to_major(rank: int) -> tuple[int, ...]:
    """XLA's default layout ``{rank-1, ..., 0}``: dimension 0 is the most major."""
    return tuple(range(rank - 1, -1, -1))


def major_to_minor(minor_to_major: Sequence[int]) -> tuple[int, ...]:
    """The dimension numbers from the most major to the most minor."""
    return tuple(reversed(tuple(minor_to_major)))


def linear_index(dims: Sequence[int], minor_to_major: Sequence[int], index: Sequence[int]) -> int:
    """Position of ``index`` in a dense (untiled) buffer laid out by ``minor_to_major``.

    >>> linear_index((2, 3), (0, 1), (1, 0))   # column-major [2 x 3]: a d b e c f
    1
    """
    shape = _check_dims(dims)
    m2m = _check_minor_to_major(minor_to_major, len(shape))
    idx = _check_index(shape, index)
    order = major_to_minor(m2m)
    return _row_major_offset(_permute(shape, order), _permute(idx, order))


def multi_index(dims: Sequence[int], minor_to_major: Sequence[int], linear: int) -> Index:
    """Inverse of :func:`linear_index`: the multi-index at position ``linear``."""
    shape = _check_dims(dims)
    m2m = _check_minor_to_major(minor_to_major, len(shape))
    total = math.prod(shape)
    if not 0 <= linear < total:
        raise MapError(f"linear index {linear} is out of bounds for {total} elements")
    order = major_to_minor(m2m)
    return _unpermute(_row_major_index(_permute(shape, order), linear), order)


# ---------------------------------------------------------------------------------------------
# Tiling


@dataclass(frozen=True, slots=True)
class TilingStep:
    """One tile applied to a (physical, major-to-minor) shape.

    ``in_shape`` becomes ``combined`` by a row-major reshape (leading size-1 dims added when
    the tile is longer than the shape, ``*`` dims merged into their more-minor neighbour):
    combined dim ``k`` merges the next ``merged[k]`` dims of ``in_shape`` (0 for an added
    size-1 dim). Then the last ``len(tile)`` dims of ``combined`` are padded and split into
    ``(ceil(d/t)..., t...)``, giving ``out_shape``.
    """

    in_shape: Dims
    combined: Dims
    merged: tuple[int, ...]
    tile: Tile
    out_shape: Dims

    def forward(self, index: Index) -> Index:
        """The index in ``out_shape`` of ``index`` in ``in_shape``."""
        c = _row_major_index(self.combined, _row_major_offset(self.in_shape, index))
        lead = len(c) - len(self.tile)
        outer = tuple(e // t for e, t in zip(c[lead:], self.tile, strict=True))
        inner = tuple(e % t for e, t in zip(c[lead:], self.tile, strict=True))
        return c[:lead] + outer + inner

    def backward(self, index: Index) -> Index | None:
        """The index in ``in_shape`` that :meth:`forward` sends to ``index``; None if padding."""
        k = len(self.tile)
        lead = len(self.combined) - k
        outer = index[lead: lead + k]
        inner = index[lead + k:]
        c = index[:lead] + tuple(q * t + r for q, t, r in zip(outer, self.tile, inner, strict=True))
        if any(e >= d for e, d in zip(c, self.combined, strict=True)):
            return None
        return _row_major_index(self.in_shape, _row_major_offset(self.combined, c))


def _tiling_step(shape: Dims, tile: Tile) -> TilingStep:
    extra = max(0, len(tile) - len(shape))
    padded = (1,) * extra + shape
    behind = (0,) * extra + (1,) * len(shape)  # how many dims of `shape` each padded dim is
    lead = len(padded) - len(tile)
    sizes: list[int] = []
    merged = list(behind[:lead])
    carry, count = 1, 0
    for d, n, t in zip(padded[lead:], behind[lead:], tile, strict=True):
        carry, count = carry * d, count + n
        if t != COMBINE:
            sizes.append(carry)
            merged.append(count)
            carry, count = 1, 0
    kept = tuple(t for t in tile if t != COMBINE)
    combined = padded[:lead] + tuple(sizes)
    keep = len(combined) - len(kept)
    counts = tuple(ceil_div(d, t) for d, t in zip(combined[keep:], kept, strict=True))
    return TilingStep(shape, combined, tuple(merged), kept, combined[:keep] + counts + kept)


@lru_cache(maxsize=1024)
def _plan(dims: Dims, minor_to_major: tuple[int, ...], tiles: Tiles) -> tuple[TilingStep, ...]:
    """The tiling steps for already validated arguments (cached: a pure function)."""
    shape = _permute(dims, major_to_minor(minor_to_major))
    steps = []
    for tile in tiles:
        step = _tiling_step(shape, tile)
        steps.append(step)
        shape = step.out_shape
    return tuple(steps)


def tiling_plan(
    dims: Sequence[int], minor_to_major: Sequence[int], tiles: Sequence[Sequence[int]]
) -> tuple[Dims, tuple[int, ...], tuple[TilingStep, ...]]:
    """The validated ``dims`` and ``minor_to_major``, and one :class:`TilingStep` per tile
    (the first applies to the dims in major-to-minor order, each next one to the shape the
    previous produced)."""
    shape = _check_dims(dims)
    m2m = _check_minor_to_major(minor_to_major, len(shape))
    return shape, m2m, _plan(shape, m2m, _check_tiles(tiles))


def tiled_shape(
    dims: Sequence[int], minor_to_major: Sequence[int], tiles: Sequence[Sequence[int]]
) -> Dims:
    """The physical array: its dims, major to minor, laid out row-major (padding included).

    >>> tiled_shape((3, 5), (1, 0), [(2, 2)])
    (2, 3, 2, 2)
    """
    shape, m2m, steps = tiling_plan(dims, minor_to_major, tiles)
    return steps[-1].out_shape if steps else _permute(shape, major_to_minor(m2m))


def physical_offset(
    dims: Sequence[int],
    minor_to_major: Sequence[int],
    tiles: Sequence[Sequence[int]],
    index: Sequence[int],
    *,
    padded_dimensions: Sequence[int] | None = None,
) -> int:
    """Offset, in elements, of the logical element ``index`` in the physical buffer.

    >>> physical_offset((3, 5), (1, 0), [(2, 2)], (2, 3))   # seed 000, Figure 1
    17
    """
    shape = _check_dims(dims)
    idx = _check_index(shape, index)
    laid_out = _effective_dims(shape, padded_dimensions)
    _, m2m, steps = tiling_plan(laid_out, minor_to_major, tiles)
    order = major_to_minor(m2m)
    e = _permute(idx, order)
    for step in steps:
        e = step.forward(e)
    final = steps[-1].out_shape if steps else _permute(laid_out, order)
    return _row_major_offset(final, e)


def logical_index(
    dims: Sequence[int],
    minor_to_major: Sequence[int],
    tiles: Sequence[Sequence[int]],
    offset: int,
    *,
    padded_dimensions: Sequence[int] | None = None,
    tail_padding_alignment_in_elements: int = 1,
) -> Index | None:
    """Inverse of :func:`physical_offset`: the element at ``offset``, or None for padding.

    ``offset`` must lie in ``[0, physical_size_elements(...))``.
    """
    shape = _check_dims(dims)
    laid_out = _effective_dims(shape, padded_dimensions)
    _, m2m, steps = tiling_plan(laid_out, minor_to_major, tiles)
    order = major_to_minor(m2m)
    final = steps[-1].out_shape if steps else _permute(laid_out, order)
    tiled_size = math.prod(final)
    total = _round_up(tiled_size, _check_alignment(tail_padding_alignment_in_elements))
    if not 0 <= offset < total:
        raise MapError(f"offset {offset} is outside the buffer of {total} elements")
    if offset >= tiled_size:
        return None
    e = _row_major_index(final, offset)
    for step in reversed(steps):
        before = step.backward(e)
        if before is None:
            return None
        e = before
    idx = _unpermute(e, order)
    return idx if all(i < d for i, d in zip(idx, shape, strict=True)) else None


def slot_origin(
    dims: Sequence[int],
    minor_to_major: Sequence[int],
    tiles: Sequence[Sequence[int]],
    offset: int,
) -> tuple[Index, Index] | None:
    """Where the buffer slot at ``offset`` sits in the first tiling: ``(tile, coordinate)``.

    ``tile`` is the slot's first-level tile, as its index in the grid of tiles (untiled
    leading dims first); ``coordinate`` the point, in the dims the first tile splits (major
    to minor, ``*`` dims merged), that the slot stands for -- outside the array for padding.
    None for slots that are padding added by a later tile. Untiled layouts are one tile
    ``()``.

    >>> slot_origin((3, 5), (1, 0), [(2, 2)], 17)   # element (2, 3): tile (1, 1)
    ((1, 1), (2, 3))
    >>> slot_origin((3, 5), (1, 0), [(2, 2)], 14)   # padding below row 2
    ((1, 0), (3, 0))
    """
    shape, m2m, steps = tiling_plan(dims, minor_to_major, tiles)
    final = steps[-1].out_shape if steps else _permute(shape, major_to_minor(m2m))
    if not 0 <= offset < math.prod(final):
        raise MapError(f"offset {offset} is outside the {math.prod(final)} tiled slots")
    e = _row_major_index(final, offset)
    if not steps:
        return (), e
    for step in reversed(steps[1:]):
        before = step.backward(e)
        if before is None:
            return None
        e = before
    first = steps[0]
    k = len(first.tile)
    lead = len(first.combined) - k
    outer, inner = e[lead: lead + k], e[lead + k:]
    merged = tuple(q * t + r for q, t, r in zip(outer, first.tile, inner, strict=True))
    return e[:lead + k], e[:lead] + merged


def physical_size_elements(
    dims: Sequence[int],
    minor_to_major: Sequence[int],
    tiles: Sequence[Sequence[int]] = (),
    *,
    padded_dimensions: Sequence[int] | None = None,
    tail_padding_alignment_in_elements: int = 1,
) -> int:
    """Number of element slots in the buffer: tiles padded, tail padding included."""
    laid_out = _effective_dims(_check_dims(dims), padded_dimensions)
    size = math.prod(tiled_shape(laid_out, minor_to_major, tiles))
    return _round_up(size, _check_alignment(tail_padding_alignment_in_elements))


def physical_size_bytes(
    dims: Sequence[int],
    minor_to_major: Sequence[int],
    tiles: Sequence[Sequence[int]],
    element_size_in_bits: int,
    *,
    padded_dimensions: Sequence[int] | None = None,
    tail_padding_alignment_in_elements: int = 1,
) -> int:
    """Buffer size in bytes; sub-byte elements are packed and the total rounded up.

    >>> physical_size_bytes((3,), (0,), (), 4)   # three s4 values fit in two bytes
    2
    """
    if isinstance(element_size_in_bits, bool) or element_size_in_bits < 1:
        raise MapError(f"element_size_in_bits must be >= 1, got {element_size_in_bits!r}")
    elements = physical_size_elements(
        dims,
        minor_to_major,
        tiles,
        padded_dimensions=padded_dimensions,
        tail_padding_alignment_in_elements=tail_padding_alignment_in_elements,
    )
    return ceil_div(elements * element_size_in_bits, 8)


def physical_buffer(
    values: Sequence[_T],
    dims: Sequence[int],
    minor_to_major: Sequence[int],
    tiles: Sequence[Sequence[int]] = (),
    *,
    padded_dimensions: Sequence[int] | None = None,
    padding_value: _T | None = None,
    tail_padding_alignment_in_elements: int = 1,
) -> list[_T | None]:
    """The buffer holding ``values`` (given in logical row-major order) under the layout.

    Padding slots hold ``padding_value``. Seed 004's column-major ``[2 x 3]`` padded to
    ``[3, 5]``:

    >>> "".join(physical_buffer("abcdef", (2, 3), (0, 1), padded_dimensions=(3, 5),
    ...                         padding_value="0"))
    'ad0be0cf0000000'
    """
    shape = _check_dims(dims)
    if len(values) != math.prod(shape):
        raise MapError(f"{len(values)} values given for shape {list(shape)}")
    size = physical_size_elements(
        shape,
        minor_to_major,
        tiles,
        padded_dimensions=padded_dimensions,
        tail_padding_alignment_in_elements=tail_padding_alignment_in_elements,
    )
    buffer: list[_T | None] = [padding_value] * size
    for position, value in enumerate(values):
        index = _row_major_index(shape, position)
        offset = physical_offset(
            shape, minor_to_major, tiles, index, padded_dimensions=padded_dimensions
        )
        buffer[offset] = value
    return buffer


# ---------------------------------------------------------------------------------------------
# Tile text: T(8,128)(2,1), T(*,*,2,*,3)

_TILE_ENTRY = lazy_pattern(r"(\d+)|\*|-1")


def parse_tiles(text: str) -> Tiles:
    """Parse ``T(8,128)(2,1)`` (the leading ``T`` is optional) into tiles; ``*`` is -1.

    >>> parse_tiles("T(*,*,2,*,3)")
    ((-1, -1, 2, -1, 3),)
    """
    pos = 0
    stripped = text.lstrip()
    if stripped.startswith("T"):
        pos = len(text) - len(stripped) + 1
    tiles: list[Tile] = []
    while True:
        pos = _skip_space(text, pos)
        if pos == len(text):
            break
        if text[pos] != "(":
            raise ParseError("expected '(' to start a tile", text, pos)
        start = pos
        tile, pos = _parse_one_tile(text, pos + 1)
        if tile[-1] == COMBINE:
            raise ParseError("'*' needs a more-minor dimension to combine with", text, start)
        tiles.append(tile)
    if not tiles:
        raise ParseError("expected at least one tile such as (8,128)", text, pos)
    return tuple(tiles)


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _parse_one_tile(text: str, pos: int) -> tuple[Tile, int]:
    """Parse ``8,128)`` starting after the ``(``; returns the tile and the position after."""
    entries: list[int] = []
    while True:
        pos = _skip_space(text, pos)
        match = _TILE_ENTRY.match(text, pos)
        if match is None:
            raise ParseError("expected a tile size or '*'", text, pos)
        number = match.group(1)
        if number is not None and int(number) == 0:
            raise ParseError("tile sizes must be positive", text, pos)
        entries.append(int(number) if number is not None else COMBINE)
        pos = _skip_space(text, match.end())
        if pos < len(text) and text[pos] == ",":
            pos += 1
            continue
        if pos < len(text) and text[pos] == ")":
            return tuple(entries), pos + 1
        raise ParseError("expected ',' or ')' in tile", text, pos)


def format_tiles(tiles: Sequence[Sequence[int]]) -> str:
    """Print tiles as XLA does: ``T(8,128)(2,1)``, ``*`` for combined dims ('' if none)."""
    checked = _check_tiles(tiles)
    if not checked:
        return ""
    body = "".join(
        "(" + ",".join("*" if v == COMBINE else str(v) for v in tile) + ")" for tile in checked
    )
    return "T" + body
