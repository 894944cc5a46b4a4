"""Whether a map's results are an MLIR ``affine_map``: what ``print_map(m, "mlir")`` may
print.

MLIR's affine expressions (its parser's rules) are sums of terms where

* a product has at most one factor that holds a dimension: the other factors are constants
  or symbols (``d0 * s0`` is semi-affine and parses; ``d0 * d0`` and ``d0 * d1`` do not);
* ``floordiv``, ``ceildiv`` and ``mod`` divide by a constant or a symbol, never by a
  dimension; MLIR lowers a division by a constant only when it is positive, and its
  ``floordiv``/``mod`` are defined for a positive divisor, so a constant divisor must be
  positive and a symbolic one positive wherever the map's variables can be;
* there is no ``min`` or ``max`` (``affine.min`` and ``affine.max`` are operations over a
  map's results, not expressions);
* constants are 64-bit integers.

Range and runtime variables print as MLIR's symbols.
"""

from __future__ import annotations

from sympy import Symbol

from symidx.core.expr import CeilDiv, Expr, FloorDiv, Max, Min, Mod, bounds
from symidx.core.interval import Interval

__all__ = ["non_affine_reason"]

_INT64 = Interval(-(1 << 63), (1 << 63) - 1)


def non_affine_reason(results: tuple[Expr, ...], dims: frozenset[Symbol],
                      env: dict[Symbol, Interval]) -> tuple[Expr, str] | None:
    """The first sub-expression of ``results`` that MLIR's affine expressions cannot
    write, with the reason (see the module docstring), or None when every result is
    affine (or semi-affine). ``dims``: the dimension variables (the others are symbols);
    ``env``: every variable's interval."""
    for e in results:
        found = _first(e, dims, env)
        if found is not None:
            return found
    return None


def _first(e: Expr, dims: frozenset[Symbol], env: dict[Symbol, Interval]
           ) -> tuple[Expr, str] | None:
    stack, seen = [e], {e}
    while stack:
        node = stack.pop()
        reason = _why(node, dims, env)
        if reason is not None:
            return node, reason
        for a in node.args:
            if a not in seen:
                seen.add(a)
                stack.append(a)
    return None


def _why(node: Expr, dims: frozenset[Symbol], env: dict[Symbol, Interval]) -> str | None:
    def has_dim(x: Expr) -> bool:
        return bool(x.free_symbols & dims)

    if node.is_Integer:
        return None if int(node) in _INT64 else "a constant past 64-bit integers"
    if node.is_Symbol or node.is_Add:
        return None
    if node.is_Mul:
        return "a product of dimensions" if sum(map(has_dim, node.args)) > 1 else None
    if node.is_Pow:
        base, power = node.args
        if not (power.is_Integer and int(power) > 0):
            return "a power that is not a positive integer"
        return "a product of dimensions" if has_dim(base) else None
    if isinstance(node, (FloorDiv, CeilDiv, Mod)):
        divisor = node.args[1]
        if has_dim(divisor):
            return "a division by a dimension"
        if bounds(divisor, env).lo < 1:
            return "a division by a divisor that is not always positive"
        return None
    if isinstance(node, (Min, Max)):
        return f"a {'min' if isinstance(node, Min) else 'max'}, which affine expressions lack"
    return "an operation affine expressions lack"
