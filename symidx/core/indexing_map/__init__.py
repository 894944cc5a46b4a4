"""Indexing maps: the value type, its text, and composition (not simplified).

* :mod:`symidx.core.indexing_map.map`: :class:`IndexingMap`, :class:`RuntimeVar` (with its
  :class:`ValueSource`),
  :class:`MapKind` and :func:`print_map`;
* :mod:`symidx.core.indexing_map.direction`: :class:`Direction`, which way a map points;
* :mod:`symidx.core.indexing_map.text`: expressions as text (:func:`print_expr`);
* :mod:`symidx.core.indexing_map.composition`: :func:`compose_with`, the composition that
  :func:`symidx.compose` (in :mod:`symidx.core.simplify.compose`) runs with the simplifier.
"""

from symidx.core.indexing_map.composition import compose_with
from symidx.core.indexing_map.direction import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, Direction
from symidx.core.indexing_map.map import (
    Constraint,
    IndexingMap,
    MapKind,
    RuntimeVar,
    ValueSource,
    print_map,
)
from symidx.core.indexing_map.text import STYLES, Style, print_expr

__all__ = ["IndexingMap", "RuntimeVar", "ValueSource", "MapKind", "Constraint", "compose_with",
           "print_map", "print_expr", "STYLES", "Style", "Direction", "OUTPUT_TO_INPUT",
           "INPUT_TO_OUTPUT"]
