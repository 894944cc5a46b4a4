"""Nested ``shape:stride`` layouts and their algebra (CuTe; CATLASS TLA; SPEC §3; seed 003):
one namespace for the pieces, under CuTe's names.

* :mod:`symidx.layout.int_tuple` -- IntTuples: ``product``, ``flatten``, ``prefix_product``,
  ``shape_div``, ``crd2idx``, ``idx2crd``, ``slice_``, ...;
* :mod:`symidx.layout.nested` -- the :class:`Layout` value, its text, the CATLASS 2-D helpers
  and Ascend fractal formats;
* :mod:`symidx.layout.algebra` -- ``coalesce``, ``filter``, ``composition``, ``complement``,
  the inverses, ``logical_divide`` / ``logical_product`` and their zipped, tiled, flat,
  blocked and raked forms, ``slice_and_offset``;
* :mod:`symidx.layout.swizzle` -- ``Swizzle`` (``Sw<B,M,S>``) and ``ComposedLayout``;
* :mod:`symidx.layout.text` -- :func:`parse_layout`, the one reader of layout text: CuTe
  C++'s and the CuTe DSL's printed forms (``Sw<3,4,3> o _0 o (_8,_64):(_64,_1)``,
  ``S<3,4,3> o 0 o (8,64):(64,1)``, ``!cute.composed_layout<"...">``).

>>> from symidx.layout import cute
>>> a = cute.parse_layout("((4,2),(4,3)):((4,16),(1,32))")
>>> a(1, 5), str(cute.complement(cute.parse_layout("(4,10):(1,10)")))
(37, '2:4')
"""

from __future__ import annotations

from symidx.layout.algebra import (
    CHECK_LIMIT,
    OFFSET_SEARCH_LIMIT,
    Tiler,
    blocked_product,
    coalesce,
    complement,
    composition,
    filter,
    flat_divide,
    flat_product,
    left_inverse,
    logical_divide,
    logical_product,
    max_common_vector,
    offset2crd,
    raked_product,
    right_inverse,
    slice_and_offset,
    tiled_divide,
    tiled_product,
    zip_layouts,
    zipped_divide,
    zipped_product,
)
from symidx.layout.foreign import as_layout
from symidx.layout.int_tuple import (
    ArithTuple,
    Coord,
    E,
    Integer,
    IntTuple,
    ScaledBasis,
    ceil_div,
    compatible,
    congruent,
    crd2crd,
    crd2idx,
    dice,
    elem_scale,
    flatten,
    format_int_tuple,
    has_none,
    idx2crd,
    inner_product,
    is_int,
    is_tuple,
    prefix_product,
    product,
    product_each,
    shape_div,
    signum,
    slice_,
    suffix_product,
    tuple_max,
    unflatten,
)
from symidx.layout.int_tuple import depth as _depth
from symidx.layout.int_tuple import rank as _rank
from symidx.layout.nested import (
    BYTES_PER_C0,
    C0_PER_FRACTAL,
    FRACTAL_FORMATS,
    FractalFormat,
    Layout,
    column_major,
    compact_col_major,
    compact_row_major,
    cosize,
    crd2offset,
    evaluate_layout,
    flat_modes,
    fractal_layout,
    from_modes,
    layout_values,
    make_identity_layout,
    make_layout,
    make_layout_tile,
    row_major,
    size,
    to_grid,
)
from symidx.layout.swizzle import (
    ComposedLayout,
    Swizzle,
    composed_values,
    swizzle_expr,
)
from symidx.layout.text import parse_layout, parse_swizzle

#: The old name of :func:`parse_layout`, which reads composed layouts too.
parse_any_layout = parse_layout


def rank(x: IntTuple | Layout) -> int:
    """Number of top-level modes (1 for an int)."""
    return _rank(x.shape if isinstance(x, Layout) else x)


def depth(x: IntTuple | Layout) -> int:
    """Nesting depth: 0 for an int, 1 for a flat tuple, ..."""
    return _depth(x.shape if isinstance(x, Layout) else x)


__all__ = [
    "ArithTuple", "E", "Integer", "ScaledBasis", "as_layout", "make_identity_layout",
    "BYTES_PER_C0", "C0_PER_FRACTAL", "CHECK_LIMIT", "FRACTAL_FORMATS", "OFFSET_SEARCH_LIMIT",
    "ComposedLayout", "Coord", "FractalFormat", "IntTuple", "Layout", "Swizzle", "Tiler",
    "blocked_product", "ceil_div", "coalesce", "column_major", "compact_col_major",
    "compact_row_major", "compatible", "complement", "composed_values", "composition",
    "congruent", "cosize", "crd2crd", "crd2idx", "crd2offset", "depth", "dice", "elem_scale",
    "evaluate_layout", "filter", "flat_divide", "flat_modes", "flat_product", "flatten",
    "format_int_tuple", "fractal_layout", "from_modes", "has_none", "idx2crd",
    "inner_product", "is_int", "is_tuple", "layout_values", "left_inverse", "logical_divide",
    "logical_product", "make_layout", "make_layout_tile", "max_common_vector", "offset2crd",
    "parse_any_layout", "parse_layout", "parse_swizzle", "prefix_product", "product",
    "product_each",
    "raked_product", "rank", "right_inverse", "row_major", "shape_div", "signum", "size",
    "slice_", "slice_and_offset", "suffix_product", "swizzle_expr", "tiled_divide",
    "tiled_product", "to_grid", "tuple_max", "unflatten", "zip_layouts", "zipped_divide",
    "zipped_product",
]
