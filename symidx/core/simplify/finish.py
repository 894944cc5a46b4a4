"""What every map an op rule or a sweep returns goes through: :func:`finish`."""

from __future__ import annotations

from symidx.core.indexing_map import IndexingMap
from symidx.core.simplify.driver import simplify
from symidx.core.simplify.transforms import remove_unused_symbols

__all__ = ["finish"]


def finish(m: IndexingMap, fold_point_dims: bool = False) -> IndexingMap:
    """The map simplified, without unused range or runtime variables."""
    m = simplify(m, replace_point_dims=fold_point_dims)
    if m.is_known_empty or m.is_undefined:
        return m
    return remove_unused_symbols(m)[0]
