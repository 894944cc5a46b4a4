"""Composition with the simplifier: the public :func:`symidx.compose`."""

from __future__ import annotations

from symidx.core.indexing_map import IndexingMap, compose_with
from symidx.core.simplify.driver import simplify
from symidx.errors import expect_type

__all__ = ["compose"]


def compose(first: IndexingMap, second: IndexingMap) -> IndexingMap:
    """``second ∘ first``: ``first`` applied first, its results fed to ``second``'s dims.

    As XLA's ``ComposeIndexingMaps``: the result has ``first``'s dims; its range variables
    are ``second``'s then ``first``'s (runtime variables likewise); its constraints are both
    maps' plus "each of ``first``'s results lies in ``second``'s dimension interval" (except
    where that result is a dimension or constant already inside it). Not simplified:
    :func:`symidx.core.simplify.simplify` removes the constraints that always hold. A runtime
    variable's source map (where its value comes from) is composed too, and simplified.
    """
    expect_type(first, IndexingMap, "first", "compose")
    expect_type(second, IndexingMap, "second", "compose")
    return compose_with(first, second, simplify)
