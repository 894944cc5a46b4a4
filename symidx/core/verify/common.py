"""What the deciding procedures share: the Presburger test, the time budget, progress."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any

from symidx._budget import TimeBudget
from symidx.core.expr import CeilDiv, Expr, FloorDiv, Max, Min, Mod
from symidx.core.indexing_map import IndexingMap
from symidx.errors import Undecided

Progress = Callable[[str], None]
"""Told, in a few words, what a procedure is about to do (e.g. for a progress line)."""


def has_module(name: str) -> bool:
    """Is the optional package ``name`` importable?"""
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def optional_module(name: str, extra: str) -> Any:
    """The optional package ``name``, or :class:`Undecided` naming the extra that installs
    it."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise Undecided(f"{name} is not installed (pip install 'symidx[{extra}]')") from None


def non_presburger_reason(*maps: IndexingMap) -> str | None:
    """Why these maps leave Presburger arithmetic (a product of variables, a power, a
    division or modulus by a non-constant), or None if every result and constraint is
    built from ``+``, ``*`` by constants, ``floordiv``/``mod``/``ceildiv`` by constants,
    ``min`` and ``max`` -- the maps an exact procedure decides."""
    for m in maps:
        if m.is_known_empty or m.is_undefined:
            continue
        for e in (*m.results, *(c for c, _ in m.constraints)):
            bad = _first_non_presburger(e)
            if bad is not None:
                from symidx.core.syntax import print_expr

                text = print_expr(bad, dict(zip(m.all_vars, m.display_names())), "xla")
                return f"{text} is not Presburger arithmetic ({_why(bad)})"
    return None


def _first_non_presburger(e: Expr) -> Expr | None:
    for node in _nodes(e):
        if node.is_Mul and sum(not a.is_Integer for a in node.args) > 1:
            return node
        if node.is_Pow:
            return node
        if isinstance(node, (FloorDiv, Mod, CeilDiv)) and not node.args[1].is_Integer:
            return node
        if not (node.is_Integer or node.is_Symbol or node.is_Add or node.is_Mul
                or isinstance(node, (FloorDiv, Mod, CeilDiv, Min, Max))):
            return node
    return None


def _why(node: Expr) -> str:
    if node.is_Mul or node.is_Pow:
        return "a product of variables"
    if isinstance(node, (FloorDiv, Mod, CeilDiv)):
        return "a division by a non-constant"
    return "an unsupported operation"


def _nodes(e: Expr) -> Iterator[Expr]:
    """Every distinct sub-expression once (maps share most of their structure)."""
    stack, seen = [e], {e}
    while stack:
        node = stack.pop()
        yield node
        for a in node.args:
            if a not in seen:
                seen.add(a)
                stack.append(a)


class Deadline(TimeBudget):
    """The time budget of a decision (:class:`symidx._budget.TimeBudget`, started on
    construction): ``seconds`` of CPU -- this process's and the isl worker's -- and, only
    when a caller asks for one, ``wall`` seconds of the wall clock (None: no such limit)."""

    __slots__ = ()

    def __init__(self, seconds: float | None = None, wall: float | None = None) -> None:
        super().__init__(cpu=seconds, wall=wall)

    def out_of(self) -> str:
        """``out of CPU time (60 s)``: what a decision that stops says."""
        return f"out of {self.spent() or self.describe()}"

    def check(self, doing: str) -> None:
        """Raise :class:`Undecided` if the budget is spent."""
        spent = self.spent()
        if spent is not None:
            raise Undecided(f"out of {spent} while {doing}")


def box_size(bounds: tuple[Any, ...]) -> int:
    """How many integer points a box of intervals holds."""
    size = 1
    for b in bounds:
        size *= b.size
    return size
