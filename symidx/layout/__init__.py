"""Memory layouts: logical index -> physical offset, as integer functions and as maps.

* ``symidx.layout.xla`` -- XLA layouts as small pure functions over plain ints and
  tuples: ``minor_to_major``, tiling ``T(8,128)(2,1)`` (with ``*`` combined dimensions),
  tail padding and the older ``padded_dimensions`` form (what XLA's ``IndexUtil`` does).
  The module is :mod:`symidx.lowering.layouts.xla` (an op rule reads it, and the op rules
  import nothing of this package), given here under its old name: ``from symidx.layout
  import xla``.
* :mod:`symidx.layout.cute` -- nested ``shape:stride`` layouts (CuTe / CATLASS TLA) and their
  algebra: ``coalesce``, ``composition``, ``complement``, ``logical_divide``, ..., and the
  Ascend fractal formats.
* :mod:`symidx.layout.maps` -- both as :class:`~symidx.core.indexing_map.IndexingMap` s, and a
  nested layout read back from a map.
* ``symidx.layout.shapes`` -- the same for an HLO shape with its layout (text or
  :class:`~symidx.hlo.shape.Shape`): offsets, sizes in elements and bytes, memory spaces,
  maps, and bitcasts between two layouts of one buffer. The module is
  :mod:`symidx.lowering.layouts.shapes`, given here under its old name (``from symidx.layout
  import shapes``, loaded on first use: it needs the simplifier).
* :mod:`symidx.layout.grid` and :mod:`symidx.layout.pictures` -- a layout drawn as a grid of
  offsets (text, as the TLA seed draws one) or as a PNG (matplotlib, optional).
* :mod:`symidx.layout.text` -- the one reader of layout text (CuTe C++'s and the CuTe DSL's
  printed forms).
* :mod:`symidx.layout.linear`, :mod:`symidx.layout.triton`, :mod:`symidx.layout.ttgir` and
  :mod:`symidx.layout.holders` -- Triton's linear layouts, its encodings converted to them
  as Triton converts them, read from TTGIR, and who holds each element (drawn; the banks
  of a copy at Triton's vector width).
"""

from __future__ import annotations

import importlib

from symidx.layout import cute
from symidx.lowering.layouts import xla

__all__ = ["cute", "shapes", "xla"]

#: Public name -> the module it is, imported on first use.
_LAZY = {"shapes": "symidx.lowering.layouts.shapes"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        module = importlib.import_module(_LAZY[name])
        globals()[name] = module
        return module
    raise AttributeError(f"module 'symidx.layout' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
