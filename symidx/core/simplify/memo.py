"""What the simplifier remembers between maps: the variables of an expression.

Composed maps carry the same constraints from one composition to the next (a stack of
convolutions keeps every layer's window constraints), so the variables of one expression
are asked for again and again; :func:`variables_of` walks each expression once.
"""

from __future__ import annotations

from sympy import Symbol

from symidx.core.expr import Expr, on_clear_caches, variables

__all__ = ["variables_of", "clear", "VARIABLES_LIMIT"]

#: Expressions whose variables are remembered before the memo starts afresh.
VARIABLES_LIMIT = 200_000
_VARIABLES: dict[Expr, frozenset[Symbol]] = {}


def variables_of(e: Expr) -> frozenset[Symbol]:
    """The variables ``e`` uses (:func:`~symidx.core.expr.free_vars`), remembered: by identity
    (:func:`~symidx.core.expr.variables`, no hash of a fresh expression) and by value (an
    equal expression that is another object: the same map read or built again)."""
    if not e._args:  # an atom: nothing to remember
        return variables(e)
    found = _VARIABLES.get(e)
    if found is None:
        if len(_VARIABLES) >= VARIABLES_LIMIT:
            _VARIABLES.clear()
        found = _VARIABLES[e] = variables(e)
    return found


def clear() -> None:
    """Forget what is remembered (for benchmarks on fresh maps)."""
    _VARIABLES.clear()


on_clear_caches(clear)
