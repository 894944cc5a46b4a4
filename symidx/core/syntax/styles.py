"""Maps printed in other compilers' syntaxes: ``isl`` and ``inductor``
(:data:`FOREIGN_STYLES`), each read back by :func:`symidx.core.syntax.parse_map` with the same
``syntax`` to an equal map.

``isl``: ``{ [d0, d1] -> [d0 + d1, floor((d0)/4)] : 0 <= d0 <= 15 and 0 <= d1 <= 3 }``; a
map with range or runtime variables names its outputs and binds those variables with
``exists`` (they are existential: the map's image is the union over their values), as
isl reads them (``islpy.Map(text)``).

``inductor``: the results as PyTorch Inductor writes index expressions (``FloorDiv``,
``ModularIndexing``, ``CeilDiv``, ``Min``, ``Max``; a ``mod`` as ``ModularIndexing(x, 1,
m)``), then ``, domain: x in [lo, hi], ...``. Inductor's expressions are functions of
their variables only, so a map with range or runtime variables has no Inductor form
(:class:`~symidx.errors.MapError`).
"""

from __future__ import annotations

from sympy import Add, Integer, Mul, Symbol

from symidx.core.expr import CeilDiv, Expr, FloorDiv, Max, Min, Mod
from symidx.core.indexing_map import IndexingMap
from symidx.core.indexing_map.text import Style, order_key, unknown_style
from symidx.errors import MapError

__all__ = ["FOREIGN_STYLES", "print_foreign"]

#: The styles printed here.
FOREIGN_STYLES = (Style.ISL, Style.INDUCTOR)


def print_foreign(m: IndexingMap, style: str) -> str:
    """``m`` in ``style`` (one of :data:`FOREIGN_STYLES`)."""
    if m.is_known_empty:
        return "KNOWN EMPTY"
    if m.is_undefined:
        return "UNDEFINED"
    names = m.display_names()
    table = dict(zip(m.all_vars, names))
    if style == "inductor":
        return _inductor_map(m, names, table)
    if style == "isl":
        return _isl_map(m, names, table)
    raise unknown_style(style, FOREIGN_STYLES)


# --------------------------------------------------------------------------- Inductor


def _inductor_map(m: IndexingMap, names: list[str], table: dict[Symbol, str]) -> str:
    if m.num_ranges or m.num_rts:
        raise MapError("a map with range or runtime variables has no Inductor form "
                       "(Inductor's index expressions are functions of their variables)")
    printer = _Printer(table, "inductor")
    results = [printer.expr(r) for r in m.results]
    head = results[0] if len(results) == 1 else f"({', '.join(results)})"
    domain = [f"{n} in {b}" for n, b in zip(names, m.all_bounds)]
    domain += sorted(f"{printer.expr(c)} in {i}" for c, i in m.constraints)
    return head + (f", domain: {', '.join(domain)}" if domain else "")


# --------------------------------------------------------------------------- isl


def _isl_map(m: IndexingMap, names: list[str], table: dict[Symbol, str]) -> str:
    printer = _Printer(table, "isl")
    nd = m.num_dims
    dims = names[:nd]
    hidden = names[nd:]  # range and runtime variables: existential in isl
    conditions = [f"{b.lo} <= {n} <= {b.hi}" for n, b in zip(names, m.all_bounds)]
    conditions += sorted(f"{i.lo} <= {printer.expr(c)} <= {i.hi}" for c, i in m.constraints)
    results = [printer.expr(r) for r in m.results]
    if not hidden:
        body = " and ".join(conditions)
        return f"{{ [{', '.join(dims)}] -> [{', '.join(results)}]" + \
            (f" : {body} }}" if body else " }")
    taken = set(names)
    outputs = []
    for i in range(len(results)):
        name, k = f"o{i}", i
        while name in taken:
            k += len(results)
            name = f"o{k}"
        taken.add(name)
        outputs.append(name)
    inner = [f"{o} = {r}" for o, r in zip(outputs, results)] + conditions[nd:]
    outer = conditions[:nd]
    text = f"exists ({', '.join(hidden)} : {' and '.join(inner)})"
    return f"{{ [{', '.join(dims)}] -> [{', '.join(outputs)}] : " + \
        " and ".join(outer + [text]) + " }"


# --------------------------------------------------------------------------- expressions


class _Printer:
    def __init__(self, names: dict[Symbol, str], style: str) -> None:
        self.names = names
        self.style = style

    def expr(self, e: Expr) -> str:
        if isinstance(e, Add):
            terms = sorted(e.args, key=order_key)
            out = self.atom(terms[0], negative_ok=True)
            for t in terms[1:]:
                coefficient, rest = t.as_coeff_Mul()
                if coefficient < 0:
                    out += " - " + self.atom(-t)
                else:
                    out += " + " + self.atom(t)
            return out
        return self.atom(e, negative_ok=True)

    def atom(self, e: Expr, negative_ok: bool = False) -> str:
        """``e`` as an operand of a sum (products and calls bind tighter)."""
        if e.is_Integer:
            text = str(int(e))
            return text if negative_ok or int(e) >= 0 else f"({text})"
        if isinstance(e, Symbol):
            return self.names.get(e, str(e))
        if isinstance(e, Mul):
            coefficient, rest = e.as_coeff_Mul()
            if coefficient == -1:
                text = "-" + self.factor(rest)
                return text if negative_ok else f"({text})"
            factors = [self.factor(f) for f in Mul.make_args(rest)]
            if coefficient != 1:
                factors.insert(0, str(int(coefficient)))
            text = "*".join(factors)
            return text if negative_ok or coefficient > 0 else f"({text})"
        if isinstance(e, Add):
            return f"({self.expr(e)})"
        return self.call(e)

    def factor(self, e: Expr) -> str:
        if isinstance(e, (Add, Mul)) or (e.is_Integer and int(e) < 0):
            return f"({self.expr(e)})"
        return self.atom(e)

    def call(self, e: Expr) -> str:
        a = e.args
        if self.style == "inductor":
            if isinstance(e, Mod) and isinstance(a[0], FloorDiv):
                inner = a[0].args
                return (f"ModularIndexing({self.expr(inner[0])}, {self.expr(inner[1])}, "
                        f"{self.expr(a[1])})")
            if isinstance(e, Mod):
                return f"ModularIndexing({self.expr(a[0])}, 1, {self.expr(a[1])})"
            name = {FloorDiv: "FloorDiv", CeilDiv: "CeilDiv", Min: "Min", Max: "Max"}.get(
                type(e))
            if name is not None:
                return f"{name}({', '.join(self.expr(x) for x in a)})"
        else:
            if isinstance(e, FloorDiv):
                return f"floor(({self.expr(a[0])})/{self.divisor(a[1])})"
            if isinstance(e, CeilDiv):
                return f"ceil(({self.expr(a[0])})/{self.divisor(a[1])})"
            if isinstance(e, Mod):
                return f"(({self.expr(a[0])}) mod {self.divisor(a[1])})"
            if isinstance(e, (Min, Max)):
                return f"{type(e).__name__.lower()}({self.expr(a[0])}, {self.expr(a[1])})"
        raise MapError(f"cannot print {e} in {self.style} style")

    def divisor(self, e: Expr) -> str:
        if not isinstance(e, Integer):
            raise MapError(f"isl divides by constants only, not by {e}")
        return str(int(e))
