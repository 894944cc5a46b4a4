"""The positional variables of index expressions: dimension ``i`` is ``d{i}``, range
variable ``j`` is ``s{j}``, runtime variable ``k`` is ``rt{k}``; one symbol each, made once
and remembered with its kind and index (``_VAR_INFO``)."""

from __future__ import annotations

from functools import cache
from typing import Any

from sympy import Symbol

from symidx.core.expr.nodes import _FloorModOperators
from symidx.errors import MapError


class IndexVar(_FloorModOperators, Symbol):
    """A symidx variable (``d0``, ``s0``, ``rt0``): a sympy ``Symbol`` on which ``//`` and
    ``%`` build :class:`FloorDiv` and :class:`Mod` (a plain sympy symbol would build
    ``floor(x/4)`` and sympy's ``Mod``, which maps do not take)."""

    __slots__ = ()

    def __reduce_ex__(self, protocol: Any) -> Any:
        # by kind and index: the class's name is not where pickle would look (see below)
        kind, index = _VAR_INFO[self]
        return _variable, (kind, index)


# sympy orders the terms of sums and products by class name (Basic.compare, class_key): a
# variable must sort exactly as a Symbol, or canonical forms (and so the simplifier's
# matches) would change with the class.
IndexVar.__name__ = IndexVar.__qualname__ = "Symbol"


@cache
def _variable(kind: str, index: int) -> Symbol:
    symbol = IndexVar(f"{kind}{index}", integer=True)
    _VAR_INFO[symbol] = (kind, index)
    return symbol


_VAR_INFO: dict[Symbol, tuple[str, int]] = {}


def dim(i: int) -> Symbol:
    """The symbol of dimension variable ``i``."""
    return _variable("d", i)


def sym(i: int) -> Symbol:
    """The symbol of range variable ``i``."""
    return _variable("s", i)


def rt(i: int) -> Symbol:
    """The symbol of runtime variable ``i``."""
    return _variable("rt", i)


def var_kind(symbol: Symbol) -> str:
    """``"d"``, ``"s"`` or ``"rt"`` for one of our variables."""
    try:
        return _VAR_INFO[symbol][0]
    except KeyError:
        raise MapError(f"{symbol} is not a symidx variable") from None


def var_index(symbol: Symbol) -> int:
    try:
        return _VAR_INFO[symbol][1]
    except KeyError:
        raise MapError(f"{symbol} is not a symidx variable") from None
