"""Memory layouts as integer functions: logical index -> physical offset.

Two families, each a module of small pure functions over plain ints and tuples:

* :mod:`symidx.layout.xla` -- XLA layouts: ``minor_to_major``, tiling ``T(8,128)(2,1)``
  (with ``*`` combined dimensions), tail padding and the older ``padded_dimensions`` form.
* :mod:`symidx.layout.cute` -- nested ``shape:stride`` layouts (CuTe / CATLASS TLA) and their
  algebra: ``coalesce``, ``composition``, ``complement``, ``logical_divide``, ...

Turning either into an :class:`~symidx.indexing_map.IndexingMap` is done elsewhere.
"""

from __future__ import annotations

from symidx.layout import cute, xla

__all__ = ["cute", "xla"]
