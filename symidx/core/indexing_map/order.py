"""The order a map keeps its constraints in: the same in every process.

The simplifier's passes read a map's constraints in this order, and some take the first
that fits; an order by hash followed ``PYTHONHASHSEED``, so answers depended on the
process.
"""

from __future__ import annotations

import functools
from typing import Any

from sympy import Expr

from symidx.core.interval import Interval

__all__ = ["sorted_constraints"]

Constraint = tuple[Expr, Interval]


def sorted_constraints(merged: dict[Expr, Interval]) -> tuple[Constraint, ...]:
    """Constraints in a canonical order, the same in every process (:func:`_compared`:
    the passes that take the first constraint that fits follow this order, so an order by
    hash made answers depend on ``PYTHONHASHSEED``). Equality uses a frozenset."""
    if len(merged) < 2:
        return tuple(merged.items())
    return tuple(sorted(merged.items(), key=_BY_EXPRESSION))


def _compared(a: Expr, b: Expr) -> int:
    """-1, 0 or 1 as ``a`` comes before, with or after ``b`` in an order that no hash
    seed moves: by the node's class name, then a symbol's name, an integer's value, or
    the arguments in turn (sympy keeps a sum's terms in a canonical order). Two
    constraints mostly differ at the top or in a first argument, where this stops; a key
    built for the whole expression costs several times more (sympy's own ``compare``
    too)."""
    if a is b:
        return 0
    ta, tb = type(a), type(b)
    if ta is not tb:
        return -1 if ta.__name__ < tb.__name__ else 1
    x: Any
    y: Any
    if a.is_Symbol:
        x, y = a.name, b.name
    elif a.is_Integer:
        x, y = int(a), int(b)
    elif not a.args:
        x, y = str(a), str(b)
    else:
        for p, q in zip(a.args, b.args):
            found = _compared(p, q)
            if found:
                return found
        x, y = len(a.args), len(b.args)
    return int(x > y) - int(x < y)


def _compared_constraints(p: Constraint, q: Constraint) -> int:
    return _compared(p[0], q[0])


_BY_EXPRESSION = functools.cmp_to_key(_compared_constraints)
