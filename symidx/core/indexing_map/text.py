"""Expressions as text, in a canonical order.

Terms of a sum print in a fixed order (XLA's: sums, products, mod, floordiv, ceildiv, max,
min, variables, constants), so equal expressions print equal text whatever order they were
built in. Styles (:data:`STYLES`): ``doc`` and ``mlir`` spell division ``floordiv``, ``xla``
spells it ``/`` and prints a negated variable bare on the left of an operator. A map's text
(:func:`symidx.core.indexing_map.print_map`) is built from these; the parser that reads it back is
:mod:`symidx.core.syntax`.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any

import sympy
from sympy import Add, Integer, Mul, Pow, Symbol

from symidx.core.expr import CeilDiv, Expr, FloorDiv, Max, Min, Mod, var_index, var_kind
from symidx.errors import MapError

__all__ = ["Style", "STYLES", "print_expr", "order_key", "ExprPrinter", "int_text", "int_of_digits"]

_PIECE = 4_000  # digits per conversion: under Python's default limit of 4,300


def int_text(value: int) -> str:
    """An integer in decimal, whatever its length: Python refuses ``str()`` past 4,300
    digits (a guard against quadratic conversions), so longer ones are converted in pieces
    of :data:`_PIECE` digits."""
    try:
        return str(value)
    except ValueError:
        pass
    n, pieces = abs(value), []
    unit = 10 ** _PIECE
    while n >= unit:
        n, low = divmod(n, unit)
        pieces.append(str(low).zfill(_PIECE))
    pieces.append(str(n))
    return ("-" if value < 0 else "") + "".join(reversed(pieces))


def int_of_digits(digits: str) -> int:
    """The value of a string of decimal digits, whatever its length (in pieces past
    Python's limit of 4,300 digits)."""
    if len(digits) <= _PIECE:
        return int(digits)
    value = 0
    for start in range(0, len(digits), _PIECE):
        piece = digits[start:start + _PIECE]
        value = value * 10 ** len(piece) + int(piece)
    return value


class Style(str, Enum):
    """How a map is printed: symidx's own styles (:data:`STYLES`, printed here and by
    :func:`symidx.core.indexing_map.print_map`) and the foreign ones
    (:data:`symidx.core.syntax.FOREIGN_STYLES`, printed by
    :mod:`symidx.core.syntax.styles`). A ``str`` enum: a style compares equal to, and
    prints as, its name (``"xla"``)."""

    DOC = "doc"
    XLA = "xla"
    MLIR = "mlir"
    ISL = "isl"
    INDUCTOR = "inductor"

    # printed as its value, as ``enum.StrEnum`` (Python 3.11) does
    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Style.{self.name}"

    @classmethod
    def among(cls, style: object, styles: Sequence[Style]) -> Style:
        """``style`` (a :class:`Style` or its name) when it is one of ``styles``; else a
        :class:`MapError` that names them (:func:`unknown_style`)."""
        if style not in styles:
            raise unknown_style(style, styles)
        return cls(style)


def unknown_style(style: object, styles: Sequence[Style]) -> MapError:
    """The error for a ``style`` that is not one of ``styles``."""
    return MapError(f"unknown style {style!r}; choose one of {', '.join(styles)}")


#: symidx's own styles.
STYLES = (Style.DOC, Style.XLA, Style.MLIR)

_KIND_RANK = {Add: 0, Mul: 1, Pow: 1, Mod: 2, FloorDiv: 3, CeilDiv: 4, Max: 5, Min: 6}
_VAR_RANK, _CONST_RANK = 7, 8
_KIND_OFFSET = {"d": 0, "s": 1 << 20, "rt": 2 << 20}


def order_key(expr: Expr) -> tuple[Any, ...]:
    """XLA's canonical order of terms: sums < products < mod < floordiv < ceildiv < max <
    min < variables (dims, range, runtime, by position) < constants; ties by operands. A
    negated variable sorts as the variable (XLA prints ``d0 - s0`` and ``-d1 + 16``)."""
    if expr.is_Integer:
        return (_CONST_RANK, int(expr))
    if expr.is_Symbol:
        return (_VAR_RANK, _KIND_OFFSET[var_kind(expr)] + var_index(expr))
    if isinstance(expr, Mul):
        coeff, factors = _split_mul(expr)
        lhs = _product_key(factors)
        if coeff == -1 and len(factors) == 1 and factors[0].is_Symbol:
            return lhs + (1,)  # -x sorts with x (just after it): d0 - s0, -d1 + 16
        return lhs if coeff == 1 else (1, lhs, (_CONST_RANK, coeff))
    if isinstance(expr, Pow):
        return _product_key(_pow_factors(expr))
    if isinstance(expr, Add):
        return (0, tuple(order_key(a) for a in _sorted_terms(expr)))
    rank = _KIND_RANK.get(type(expr))
    if rank is None:
        raise MapError(f"cannot print {expr}")
    return (rank, tuple(order_key(a) for a in _ordered_args(expr)))


def _product_key(factors: list[Expr]) -> tuple[Any, ...]:
    key = order_key(factors[0])
    for f in factors[1:]:
        key = (1, key, order_key(f))
    return key


def _split_mul(expr: Expr) -> tuple[int, list[Expr]]:
    coeff = 1
    factors: list[Expr] = []
    for a in expr.args:
        if a.is_Integer:
            coeff *= int(a)
        elif isinstance(a, Pow):
            factors.extend(_pow_factors(a))
        elif a.is_Number:
            raise MapError(f"non-integer coefficient in {expr}")
        else:
            factors.append(a)
    factors.sort(key=order_key)
    return coeff, factors


def _pow_factors(expr: Expr) -> list[Expr]:
    base, exponent = expr.args
    if not (exponent.is_Integer and 0 < int(exponent) <= 64):
        raise MapError(f"unsupported power {expr}")
    return [base] * int(exponent)


def _sorted_terms(expr: Expr) -> list[Expr]:
    return sorted(expr.args, key=order_key)


def _ordered_args(expr: Expr) -> Sequence[Expr]:
    if isinstance(expr, (Min, Max)):
        return sorted(expr.args, key=order_key)
    return expr.args


_DIV_WORDS = {"doc": {FloorDiv: "floordiv", CeilDiv: "ceildiv", Mod: "mod"},
              "mlir": {FloorDiv: "floordiv", CeilDiv: "ceildiv", Mod: "mod"},
              "xla": {FloorDiv: "/", CeilDiv: "ceildiv", Mod: "mod"}}


class ExprPrinter:
    """Prints expressions with the given display names, in one style."""

    def __init__(self, names: dict[Symbol, str], style: str):
        self.names = names
        self.words = _DIV_WORDS[style]
        # XLA prints a negated variable bare on the left of an operator (``-d0 mod 2``);
        # unary minus binds tightest, so that reads back the same.
        self.bare_negation = style == "xla"

    def top(self, e: Expr) -> str:
        return self.sum(e) if isinstance(e, Add) else self.term(e)

    def sum(self, e: Expr) -> str:
        terms = _sorted_terms(e)
        out = [self.term(terms[0])]
        for t in terms[1:]:
            negated = _negated(t)
            if negated is None:
                out.append(" + " + self.term(t))
            else:
                out.append(" - " + self.term(negated))
        return "".join(out)

    def term(self, e: Expr) -> str:
        """An operand of '+': anything but a sum prints bare."""
        if e.is_Integer or e.is_Symbol:
            return self.atom(e)
        if isinstance(e, (Mul, Pow)):
            return self.product(e)
        if isinstance(e, Add):
            return "(" + self.sum(e) + ")"
        if isinstance(e, (FloorDiv, Mod, CeilDiv)):
            return self.division(e)
        if isinstance(e, (Min, Max)):
            return self.call(e)
        raise MapError(f"cannot print {e}")

    def atom(self, e: Expr) -> str:
        if e.is_Integer:
            return int_text(int(e))
        try:
            return self.names[e]
        except KeyError:
            return str(e)

    def operand(self, e: Expr, same: type | None = None) -> str:
        """An operand of a multiplicative operator: parenthesised unless atomic (or the
        same left-associative operator on the left)."""
        if e.is_Symbol or e.is_Integer or isinstance(e, (Min, Max)):
            return self.term(e)
        if same is not None and isinstance(e, same):
            return self.term(e)
        if self.bare_negation and same is not None and isinstance(e, Mul) \
                and len(e.args) == 2 and e.args[0] == -1 and e.args[1].is_Symbol:
            return "-" + self.atom(e.args[1])
        return "(" + self.top(e) + ")"

    def product(self, e: Expr) -> str:
        if isinstance(e, Pow):
            coeff, factors = 1, _pow_factors(e)
        else:
            coeff, factors = _split_mul(e)
        if coeff == -1 and factors:
            inner = factors[0] if len(factors) == 1 else Mul(*factors)
            if len(factors) == 1 and (inner.is_Symbol or isinstance(inner, (Min, Max))):
                return "-" + self.term(inner)
            return "-(" + self.top(inner) + ")"
        parts = [self.operand(f) for f in factors]
        if coeff != 1:
            parts.append(int_text(coeff))
        return " * ".join(parts)

    def division(self, e: Expr) -> str:
        a, b = e.args
        return f"{self.operand(a, same=type(e))} {self.words[type(e)]} {self.operand(b)}"

    def call(self, e: Expr) -> str:
        name = "min" if isinstance(e, Min) else "max"
        args = list(_ordered_args(e))
        text = self.top(args[0])
        for a in args[1:]:
            text = f"{name}({text}, {self.top(a)})"
        return text


def _negated(term: Expr) -> Expr | None:
    """``t`` when ``term`` is ``-t`` written with a negative coefficient, else None."""
    if term.is_Integer and int(term) < 0:
        return Integer(-int(term))
    if isinstance(term, Mul):
        coeff, factors = term.as_coeff_Mul()
        if coeff.is_Integer and int(coeff) < 0:
            return -term
    return None


def print_expr(expr: Expr | int, names: Sequence[str] | dict[Symbol, str] | None = None,
               style: str = "xla", variables: Sequence[Symbol] | None = None) -> str:
    """One expression as text. ``names`` maps our variables to display names."""
    Style.among(style, STYLES)
    expr = sympy.Integer(expr) if isinstance(expr, int) else expr
    table: dict[Symbol, str] = {}
    if isinstance(names, dict):
        table = names
    elif names is not None and variables is not None:
        table = dict(zip(variables, names))
    return ExprPrinter(table, style).top(expr)
