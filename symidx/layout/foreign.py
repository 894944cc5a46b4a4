"""Layouts from other libraries' objects, read by their attributes (nothing is imported):

* pycute (NVIDIA cutlass ``python/pycute``): ``Layout`` (``.shape``, ``.stride``),
  ``Swizzle`` (``.bits``, ``.base``, ``.shift``) and ``ComposedLayout`` (``.layoutB``,
  ``.offset``, ``.layoutA``: ``layoutB o offset o layoutA``);
* anything else with plain-int ``.shape`` and ``.stride`` tuples (a CuTe DSL layout whose
  shape and stride are static, symidx's own :class:`~symidx.layout.nested.Layout`);
* anything else that prints as CuTe prints a layout (a CuTe DSL ``ComposedLayout`` prints
  ``S<3,4,3> o 0 o (8,64):(64,1)``), read by :func:`symidx.layout.text.parse_layout`.

:func:`as_layout` returns the symidx value, or raises :class:`~symidx.errors.MapError`
naming what it could not read.
"""

from __future__ import annotations

from typing import Any

from symidx._text import lazy_pattern
from symidx.errors import MapError, ParseError
from symidx.layout.int_tuple import IntTuple, ScaledBasis, is_int
from symidx.layout.nested import Layout
from symidx.layout.swizzle import ComposedLayout, Swizzle
from symidx.layout.text import parse_layout, parse_swizzle

__all__ = ["as_layout"]


def as_layout(obj: object) -> Layout | ComposedLayout | Swizzle:
    """``obj`` as a symidx layout: a symidx value is returned as it is; a pycute (or other)
    object is read by its attributes."""
    if isinstance(obj, (Layout, ComposedLayout, Swizzle)):
        return obj
    o: Any = obj
    if all(hasattr(obj, a) for a in ("layoutB", "offset", "layoutA")):
        outer = as_layout(o.layoutB)
        inner = as_layout(o.layoutA)
        offset = o.offset
        if not isinstance(inner, Layout) or isinstance(outer, ComposedLayout) or \
                not is_int(offset):
            raise MapError(f"cannot read the composed layout {obj!r}: it needs an outer "
                           f"swizzle or layout, an int offset and an inner layout")
        return ComposedLayout(outer, offset, inner)
    if all(hasattr(obj, a) for a in ("bits", "base", "shift")):
        return Swizzle(int(o.bits), int(o.base),
                       int(o.shift))
    if hasattr(obj, "shape") and hasattr(obj, "stride"):
        shape = _plain(o.shape, f"{obj!r}'s shape")
        stride = _plain(o.stride, f"{obj!r}'s stride")
        return Layout(shape, stride)
    printed = str(obj)
    if _PRINTED.match(printed):  # a CuTe DSL object read by the text it prints
        try:
            return parse_swizzle(printed) if ":" not in printed else parse_layout(printed)
        except ParseError as e:
            raise MapError(f"cannot read a layout from {type(obj).__name__} {printed!r}: "
                           f"{e.message}") from None
    raise MapError(f"cannot read a layout from {type(obj).__name__} {obj!r}: expected a "
                   f"symidx or pycute Layout, Swizzle or ComposedLayout, or an object that "
                   f"prints as CuTe prints one")


#: Text that looks like CuTe's printed layouts: a swizzle, a shape:stride or a composition.
_PRINTED = lazy_pattern(r"\s*(S\s*<|Sw\s*<|[(_\d])")


def _plain(t: object, what: str) -> IntTuple:
    """Lists and tuples as tuples, int-like leaves (numpy ints, ``__index__``) as ints."""
    if isinstance(t, (tuple, list)):
        return tuple(_plain(c, what) for c in t)
    if isinstance(t, ScaledBasis):
        return t  # type: ignore[return-value]
    if isinstance(t, bool) or not hasattr(t, "__index__"):
        raise MapError(f"{what} has a leaf {t!r} that is not a static int")
    return int(t.__index__())
