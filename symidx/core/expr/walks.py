"""Walks over index expressions: the variables they use, whether they divide by a
non-constant (what a new map checks), their depth."""

from __future__ import annotations

from collections.abc import Sequence

from sympy import Add, Expr, Mul, Pow, Symbol

from symidx.core.expr.nodes import _IntegerDivision, _IntegerOp
from symidx.errors import MapError


def free_vars(e: Expr) -> set[Symbol]:
    """The variables ``e`` uses (as sympy's ``free_symbols``, by a cheaper walk)."""
    return scan([e])[0]


def variables(e: Expr) -> frozenset[Symbol]:
    """The variables ``e`` uses, as :func:`free_vars`, remembered per expression (by
    identity, with :func:`scan`'s answers): a frozen set, not a copy."""
    if e._args:
        return _scanned(e)[0]
    if e.is_Symbol:
        return frozenset((e,))
    _check_atom(e)
    return _NONE


_NONE: frozenset[Symbol] = frozenset()


def depth(expr: Expr) -> int:
    """Height of the expression tree (an atom has depth 1)."""
    best = 0
    stack = [(expr, 1)]
    while stack:
        node, d = stack.pop()
        best = max(best, d)
        stack.extend((a, d + 1) for a in node.args)
    return best


def variable_divisions(expr: Expr) -> list[Expr]:
    """The ``floordiv``, ``ceildiv`` and ``mod`` sub-expressions of ``expr`` whose divisor
    is not a constant (``s0 floordiv s1``), innermost first."""
    found: list[Expr] = []
    seen: set[int] = set()  # by identity: a shared sub-expression is walked once
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        e, done = stack.pop()
        if done:
            if isinstance(e, _IntegerDivision) and not e.args[1].is_Integer:
                found.append(e)
            continue
        if id(e) in seen or not e.args:
            continue
        seen.add(id(e))
        stack.append((e, True))
        stack.extend((a, False) for a in e.args)
    return found


def scan(exprs: Sequence[Expr]) -> tuple[set[Symbol], bool]:
    """The variables the expressions use, and whether one divides by a non-constant (one
    cheap walk: what a new map checks). Each expression's answer is remembered (by
    identity, see :func:`_scanned`): maps made one from another share most expressions."""
    symbols: set[Symbol] = set()
    divides = False
    for e in reversed(exprs):
        if e.is_Symbol:
            symbols.add(e)
        elif e.args:
            used, by_variable = _scanned(e)
            symbols |= used
            divides = divides or by_variable
        else:
            _check_atom(e)
    return symbols, divides


#: Per expression (by identity; the entry keeps the expression alive, so its id is not
#: reused): the expression, its variables, whether it divides by a non-constant.
_SCANNED: dict[int, tuple[Expr, frozenset[Symbol], bool]] = {}
_SCANNED_LIMIT = 1 << 16


def _scanned(e: Expr) -> tuple[frozenset[Symbol], bool]:
    """:func:`scan` of one compound expression, remembered."""
    got = _SCANNED.get(id(e))
    if got is not None and got[0] is e:
        return got[1], got[2]
    used, divides = _walk(e)
    if len(_SCANNED) >= _SCANNED_LIMIT:
        _SCANNED.clear()
    _SCANNED[id(e)] = (e, used, divides)
    return used, divides


def _walk(expr: Expr) -> tuple[frozenset[Symbol], bool]:
    """The variables of a compound expression and whether it divides by a non-constant.
    A sub-expression scanned before (a composed map's results are built of the parts'
    results, which were scanned when those maps were made) contributes its remembered
    answer without being walked again."""
    found: dict[int, Symbol] = {}  # by identity: a symbol's hash is a Python call
    symbols: set[Symbol] = set()
    divides = False
    seen: set[int] = set()
    stack = list(expr._args)
    kind = _kind(type(expr))
    if kind is _DIVISION:
        divides = not stack[1].is_Integer
    elif kind is _FOREIGN:
        raise MapError(_foreign_advice(expr))
    scanned = _SCANNED.get
    while stack:
        e = stack.pop()
        args = e._args  # as ``e.args``, without the property's call
        if not args:
            if e.is_Symbol:
                found[id(e)] = e
            elif not e.is_Integer:
                _check_atom(e)
            continue
        key = id(e)
        if key in seen:
            continue
        seen.add(key)
        got = scanned(key)
        if got is not None and got[0] is e:
            symbols |= got[1]
            divides = divides or got[2]
            continue
        kind = _KINDS.get(type(e)) or _kind(type(e))
        if kind is _DIVISION:
            if not args[1].is_Integer:
                divides = True
        elif kind is _FOREIGN:
            raise MapError(_foreign_advice(e))
        stack.extend(args)
    if symbols:
        symbols.update(found.values())
        return frozenset(symbols), divides
    return frozenset(found.values()), divides


_COMPOUND = (Add, Mul, Pow, _IntegerOp)
# what a compound node's class is to the walk, found once per class
_DIVISION, _OTHER, _FOREIGN = "division", "other", "foreign"
_KINDS: dict[type, str] = {}


def _kind(cls: type) -> str:
    kind = _KINDS.get(cls)
    if kind is None:
        kind = _KINDS[cls] = (_DIVISION if issubclass(cls, _IntegerDivision) else
                              _OTHER if issubclass(cls, _COMPOUND) else _FOREIGN)
    return kind


def _check_atom(e: Expr) -> None:
    """An atom that is no variable must be an integer."""
    if e.is_Rational and not e.is_Integer:
        raise MapError(f"{e} is not an integer: index expressions take integer "
                       f"coefficients; for division write FloorDiv(a, b)")


def _foreign_advice(e: Expr) -> str:
    """Why a sympy function cannot be in a map, and what to write instead."""
    name = type(e).__name__
    instead = {"floor": "symidx.FloorDiv(a, b) (a // b on symidx's variables builds it)",
               "ceiling": "symidx.CeilDiv(a, b)",
               "Mod": "symidx.Mod(a, b) (a % b on symidx's variables builds it)",
               "Min": "symidx.core.expr.Min(a, b)", "Max": "symidx.core.expr.Max(a, b)"}.get(name)
    advice = f": write {instead}" if instead else ""
    return (f"{e} uses sympy's {name}, which index expressions do not take (they have "
            f"symidx's own FloorDiv, Mod, CeilDiv, Min and Max){advice}")
