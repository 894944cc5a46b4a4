"""Index expressions evaluated without sympy: :func:`compile_expr` (a function of the
variables' values, ints or numpy arrays) and :func:`evaluate_exact` (over arrays, int64
where every value on the way provably fits, Python integers elsewhere)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from sympy import Add, Expr, Mul, Pow, Symbol

from symidx._arith import int_array, python_ints
from symidx.core.expr.nodes import CeilDiv, FloorDiv, Max, Min, Mod, _IntegerDivision
from symidx.errors import MapError


def _minimum(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    import numpy as np

    return np.minimum(a, b)


def _maximum(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    import numpy as np

    return np.maximum(a, b)


def _floordiv(a: Any, b: Any) -> Any:
    if isinstance(b, int):  # ints raise ZeroDivisionError; a constant divisor is never 0
        return a // b
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):  # 0 only outside the domain
        return a // b


def _mod(a: Any, b: Any) -> Any:
    if isinstance(b, int):
        return a % b
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        return a % b


def _ceildiv(a: Any, b: Any) -> Any:
    return -_floordiv(-a, b)


def compile_expr(expr: Expr, variables: Sequence[Symbol]) -> Callable[[Sequence[Any]], Any]:
    """A function of the variables' values (ints, or numpy integer arrays that broadcast)
    computing ``expr`` with floor division and Python-style mod. No sympy in the loop.

    A divisor that is not a constant is nonzero on a map's domain (maps are checked when
    made), but may be zero elsewhere: with ints that raises ``ZeroDivisionError``; with
    arrays the value there is meaningless and the caller masks it out."""
    position = {v: i for i, v in enumerate(variables)}

    def build(node: Expr) -> Callable[[Sequence[Any]], Any]:
        if node.is_Integer:
            value = int(node)
            return lambda env: value
        if node.is_Symbol:
            if node not in position:
                raise MapError(f"variable {node} is not bound")
            i = position[node]
            return lambda env: env[i]
        parts = [build(a) for a in node.args]
        if isinstance(node, Add):
            return lambda env: _fold(operator.add, [p(env) for p in parts])
        if isinstance(node, Mul):
            return lambda env: _fold(operator.mul, [p(env) for p in parts])
        if isinstance(node, Pow) and node.args[1].is_Integer and int(node.args[1]) > 0:
            base, n = parts[0], int(node.args[1])
            return lambda env: base(env) ** n
        if isinstance(node, (FloorDiv, Mod, CeilDiv, Min, Max)):
            op = _BINARY[type(node)]
            if len(parts) == 2:
                a, b = parts
                return lambda env: op(a(env), b(env))
            return lambda env: _fold(op, [p(env) for p in parts])
        raise MapError(f"unsupported expression {node}")

    return build(expr)


def _fold(op: Callable[[Any, Any], Any], values: list[Any]) -> Any:
    result = values[0]
    for v in values[1:]:
        result = op(result, v)
    return result


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    FloorDiv: _floordiv,
    Mod: _mod,
    CeilDiv: _ceildiv,
    Min: _minimum,
    Max: _maximum,
}


INT64_SAFE = 1 << 62
"""Values below this in magnitude are computed in numpy's int64 (with room to spare)."""


def evaluate_exact(exprs: Sequence[Expr], variables: Sequence[Symbol],
                   values: Sequence[Any]) -> tuple[list[Any], Any]:
    """The expressions evaluated over numpy arrays of the variables' values (one
    broadcastable integer array per variable, int64 or of Python ints), *exactly*: a node
    is computed in int64 only when a bound on the magnitude of it and of every value
    computed on the way to it (partial sums and products) is below :data:`INT64_SAFE`;
    otherwise in Python integers (numpy object arrays), so nothing wraps. A value that
    fits in int64 is handed on as int64 even when it was computed in Python integers.

    Returns (values of ``exprs``, ``defined``): ``defined`` is a boolean array, False
    where some divisor that is not a constant is 0 (there the expression has no value:
    the values returned at those points are meaningless), or None when no divisor is 0
    anywhere."""
    import numpy as np

    arrays = [int_array(v) for v in values]
    position = {v: i for i, v in enumerate(variables)}
    magnitude: dict[Expr, int] = {}
    for v, a in zip(variables, arrays):
        magnitude[v] = max(abs(int(a.min())), abs(int(a.max()))) if a.size else 0
    memo: dict[Expr, Any] = {}
    undefined: list[Any] = []
    shared = _shared_nodes(exprs)  # only these are kept: the others die once used

    def walk(e: Expr) -> Any:
        got = memo.get(e)
        if got is not None:
            return got
        if e.is_Integer:
            value = int(e)
            magnitude[e] = abs(value)
            got = np.int64(value) if abs(value) < INT64_SAFE else value
        elif e.is_Symbol:
            if e not in position:
                raise MapError(f"variable {e} is not bound")
            got = arrays[position[e]]
        else:
            args = [walk(a) for a in e.args]
            sizes = [magnitude[a] for a in e.args]
            size = _magnitude_of(e, sizes)
            magnitude[e] = size
            if size >= INT64_SAFE or any(s >= INT64_SAFE for s in sizes):
                args = [x if isinstance(x, int) else python_ints(x) for x in args]
            got = _apply(e, args, undefined)
            if size < INT64_SAFE:
                got = int_array(got)  # proven to fit: int64
            if e in shared:
                memo[e] = got
        return got

    results = [walk(e) for e in exprs]
    # ``walk`` (recursive) is a reference cycle, collected late: not the arrays it holds
    memo.clear()
    arrays.clear()
    defined = None
    for zero in undefined:
        defined = ~zero if defined is None else defined & ~zero
    undefined.clear()
    return results, defined


def _shared_nodes(exprs: Sequence[Expr]) -> set[Expr]:
    """The compound sub-expressions used more than once (by two parents, or twice at the
    top): the values worth keeping while the others are computed."""
    uses: dict[Expr, int] = {}
    stack = list(exprs)
    while stack:
        e = stack.pop()
        if not e.args:
            continue
        uses[e] = uses.get(e, 0) + 1
        if uses[e] == 1:  # its own arguments counted once, however often it is used
            stack.extend(e.args)
    return {e for e, n in uses.items() if n > 1}


def _magnitude_of(e: Expr, sizes: list[int]) -> int:
    """A bound on ``|e|`` and on every value computed on the way to it, from the bounds of
    its arguments."""
    if isinstance(e, Add):
        return sum(sizes)
    if isinstance(e, Mul):
        product = 1
        for s in sizes:
            product *= s
        return product
    if isinstance(e, Pow):
        power: int = sizes[0] ** abs(int(e.args[1]))  # int ** int is Any to mypy
        return power
    # floordiv, ceildiv (through -a), mod (|a mod b| < |b|), min, max: no larger than an
    # argument
    return max(sizes)


def _apply(e: Expr, args: list[Any], undefined: list[Any]) -> Any:
    """One node over its arguments' values; a divisor that is not a constant has its
    zeros replaced by 1 and recorded in ``undefined``."""
    import numpy as np

    if isinstance(e, Add):
        return _fold(operator.add, args)
    if isinstance(e, Mul):
        return _fold(operator.mul, args)
    if isinstance(e, Pow):
        if not (e.args[1].is_Integer and int(e.args[1]) > 0):
            raise MapError(f"unsupported power {e}")
        return args[0] ** int(e.args[1])
    if isinstance(e, _IntegerDivision):
        a, b = args
        if not e.args[1].is_Integer:
            zero = np.asarray(b == 0)
            if zero.any():
                undefined.append(zero)
                b = np.where(zero, 1, b)
        if isinstance(e, FloorDiv):
            return a // b
        if isinstance(e, Mod):
            return a % b
        return -((-a) // b)
    if isinstance(e, Min):
        return np.minimum(*args)
    if isinstance(e, Max):
        return np.maximum(*args)
    raise MapError(f"unsupported expression {e}")
