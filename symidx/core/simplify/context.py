"""What an expression rule is given: the :class:`Context` protocol (the rewriter that runs
the rules implements it) and the :data:`Rule` type. Apart from :mod:`symidx.core.simplify.rules`
so that rule modules (:mod:`~symidx.core.simplify.lattice`, :mod:`~symidx.core.simplify.quotients`)
and the table that lists them share it without importing each other in a circle."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from sympy import Symbol

from symidx.core.expr import Expr
from symidx.core.interval import Interval

__all__ = ["Context", "Rule"]


class Context(Protocol):
    """The interval of any expression under the variables' intervals (``bounds``; with the
    map's constraints too, ``known_bounds``), and the simplification of a sub-expression
    (``simplify``, or ``probe`` to look ahead without recording a step)."""

    env: Mapping[Symbol, Interval]

    def bounds(self, e: Expr) -> Interval: ...

    def simplify(self, e: Expr) -> Expr: ...

    def probe(self, e: Expr) -> Expr: ...

    def known_bounds(self, e: Expr) -> Interval: ...


Rule = Callable[[Expr, Context], "Expr | None"]
