"""XLA layouts of HLO array shapes: offsets, sizes, memory spaces and indexing maps.

Every function here takes an HLO array shape -- a :class:`~symidx.hlo.shape.Shape` or its
text, e.g. ``f32[3,5]{1,0:T(2,2)}`` or ``bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)S(1)}``
-- and reads its layout: ``minor_to_major`` (default ``{rank-1,...,0}``), tiles ``T(..)``,
tail padding ``L(n)``, element size ``E(n)`` and memory space ``S(n)``. The work is done by
the integer functions of :mod:`symidx.lowering.layouts.xla` and the maps of
:mod:`symidx.lowering.layouts.maps` (what XLA's ``IndexUtil`` and ``ShapeUtil::ArraySize``
provide). :mod:`symidx.layout` gives it under its own name, ``symidx.layout.shapes``.

Sizes follow XLA: an element takes ``E(n)`` bits when the layout says so (sub-byte types
are then packed, ``s4[3]{0:E(4)}`` is 2 bytes), otherwise whole bytes
(``ShapeUtil::ByteSizeOfPrimitiveType``: ``s4`` and ``pred`` take one byte each). A bounded
dynamic dimension ``<=n`` is laid out at its bound.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from symidx._arith import ceil_div
from symidx.core.indexing_map import IndexingMap
from symidx.core.simplify import compose, simplify
from symidx.errors import MapError
from symidx.hlo.shape import UNBOUNDED_SIZE, Shape, parse_shape
from symidx.lowering.layouts import maps, xla

__all__ = [
    "MEMORY_SPACE_NAMES",
    "ArrayShape",
    "array_shape",
    "block_offset_map",
    "check_block",
    "element_size_in_bits",
    "layout_parts",
    "logical_index",
    "logical_index_map",
    "memory_space_name",
    "offset_map",
    "offset_to_logical_map",
    "physical_index_map",
    "physical_offset",
    "physical_shape",
    "reinterpret_map",
    "size_in_bytes",
    "size_in_elements",
]

ArrayShape = Shape | str
"""An HLO array shape, or its text."""

MEMORY_SPACE_NAMES: Mapping[int, str] = MappingProxyType({
    0: "device HBM",
    1: "VMEM",
    5: "host memory",
})
"""The memory spaces seed 001 names: ``S(0)`` (the default, usually not printed) is the
device's high-bandwidth memory, ``S(1)`` VMEM on a TPU, ``S(5)`` host memory. ``S(2)``,
``S(3)``, ... are device-specific."""


def memory_space_name(space: int) -> str:
    """What ``S(space)`` means: ``device HBM``, ``VMEM``, ``host memory``, or
    ``device-specific memory space n``."""
    if space < 0:
        raise MapError(f"memory spaces are non-negative, got S({space})")
    return MEMORY_SPACE_NAMES.get(space, f"device-specific memory space {space}")


def array_shape(shape: ArrayShape) -> Shape:
    """``shape`` as a :class:`Shape`, parsed if it is text; tuples are an error, as are
    unbounded dynamic dimensions and an empty ``minor_to_major`` on a non-scalar."""
    parsed = parse_shape(shape) if isinstance(shape, str) else shape
    if not isinstance(parsed, Shape):
        raise MapError(f"a layout belongs to an array shape, not the tuple {parsed}")
    if UNBOUNDED_SIZE in parsed.dims:
        raise MapError(f"{parsed} has an unbounded dynamic dimension; it has no layout size")
    if parsed.layout is not None and len(parsed.layout.minor_to_major) != parsed.rank:
        raise MapError(f"layout {parsed.layout} of {parsed} does not order its "
                       f"{parsed.rank} dimensions")
    return parsed


def layout_parts(shape: ArrayShape) -> tuple[xla.Dims, tuple[int, ...], xla.Tiles]:
    """The dims, ``minor_to_major`` and tiles of ``shape``, as the functions of
    :mod:`symidx.lowering.layouts.xla` take them."""
    s = array_shape(shape)
    layout = s.layout_or_default
    return s.dims, layout.minor_to_major, tuple(t.dims for t in layout.tiles)


def element_size_in_bits(shape: ArrayShape) -> int:
    """Bits one element takes in the buffer: ``E(n)`` if the layout has it, otherwise the
    element type's width rounded up to whole bytes (0 for ``token``)."""
    s = array_shape(shape)
    explicit = s.layout_or_default.element_size_in_bits
    return explicit if explicit else ceil_div(s.bit_width, 8) * 8


def physical_shape(shape: ArrayShape) -> xla.Dims:
    """The physical array: dims major to minor, tiles expanded (``f32[3,5]{1,0:T(2,2)}`` is
    ``(2, 3, 2, 2)``)."""
    return xla.tiled_shape(*layout_parts(shape))


def size_in_elements(shape: ArrayShape) -> int:
    """Element slots in the buffer: whole tiles, then tail padding ``L(n)``."""
    s = array_shape(shape)
    return xla.physical_size_elements(
        *layout_parts(s),
        tail_padding_alignment_in_elements=s.layout_or_default.tail_padding_alignment_in_elements)


def size_in_bytes(shape: ArrayShape) -> int:
    """Bytes of the buffer: :func:`size_in_elements` times :func:`element_size_in_bits`,
    rounded up to a whole byte."""
    return ceil_div(size_in_elements(shape) * element_size_in_bits(shape), 8)


def physical_offset(shape: ArrayShape, index: Sequence[int]) -> int:
    """Offset, in elements, of the logical element ``index``.

    >>> physical_offset("f32[3,5]{1,0:T(2,2)}", (2, 3))   # seed 000, Figure 1
    17
    """
    return xla.physical_offset(*layout_parts(shape), index)


def logical_index(shape: ArrayShape, offset: int) -> xla.Index | None:
    """The logical element at ``offset`` (in ``[0, size_in_elements)``), None for padding."""
    s = array_shape(shape)
    return xla.logical_index(
        *layout_parts(s), offset,
        tail_padding_alignment_in_elements=s.layout_or_default.tail_padding_alignment_in_elements)


def offset_map(shape: ArrayShape) -> IndexingMap:
    """Logical index -> physical offset in elements, simplified."""
    return maps.xla_offset_map(*layout_parts(shape))


def block_offset_map(shape: ArrayShape, block: Sequence[int]) -> IndexingMap:
    """:func:`offset_map` on the sub-array ``[0:block[0], 0:block[1], ...]`` only."""
    s = array_shape(shape)
    sizes = check_block(s.dims, block)
    return simplify(IndexingMap.create(sizes, offset_map(s).results), replace_point_dims=False)


def check_block(dims: Sequence[int], block: Sequence[int]) -> tuple[int, ...]:
    """``block`` as a tuple if it fits in ``dims`` (one size per dim, from 1 to the dim's
    size), else :class:`MapError`."""
    if len(block) != len(dims) or not all(1 <= b <= n for b, n in zip(block, dims)):
        raise MapError(f"a block of {list(dims)} has one size per dim, each from 1 to the "
                       f"dim's size; got {list(block)}")
    return tuple(block)


def physical_index_map(shape: ArrayShape) -> IndexingMap:
    """Logical index -> physical index (into :func:`physical_shape`)."""
    return maps.xla_physical_index_map(*layout_parts(shape))


def logical_index_map(shape: ArrayShape) -> IndexingMap:
    """Physical index -> logical index; constraints leave out the padding."""
    return maps.xla_logical_index_map(*layout_parts(shape))


def offset_to_logical_map(shape: ArrayShape) -> IndexingMap:
    """Physical offset -> logical index; constraints leave out the padding."""
    return maps.xla_offset_to_logical_map(*layout_parts(shape))


def reinterpret_map(src: ArrayShape, dst: ArrayShape) -> IndexingMap:
    """Logical index of ``dst`` -> logical index of ``src`` when both describe the same
    buffer (a bitcast): ``dst``'s physical index, reshaped (row-major) to ``src``'s physical
    shape, then the inverse of ``src``'s layout. Elements of ``dst`` that land on padding of
    ``src`` have no image. When the physical shapes agree the reshape is the identity, so
    size-1 dimensions keep their variables (``f32[1,250]{0,1}`` read as ``f32[250,1]`` is
    ``(d0, d1) -> (d1, d0)``, as XLA prints it).

    Raises :class:`MapError` when the element sizes or the buffer sizes differ.
    """
    s, d = array_shape(src), array_shape(dst)
    if element_size_in_bits(s) != element_size_in_bits(d):
        raise MapError(f"{s} and {d} have elements of different sizes")
    if size_in_bytes(s) != size_in_bytes(d):
        raise MapError(f"{s} ({size_in_bytes(s)} bytes) and {d} ({size_in_bytes(d)} bytes) "
                       f"are not the same buffer")
    to_src = compose(maps.row_major_reshape_map(physical_shape(d), physical_shape(s)),
                     logical_index_map(s))
    return simplify(compose(physical_index_map(d), to_src), replace_point_dims=False)
