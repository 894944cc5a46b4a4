"""Constraints on tile sizes, kept factored.

XLA keeps the constraints of a tiling as one disjunctive normal form (DNF): a disjunction
of conjunctions of atoms ``e in [lo, hi]``. Conjoining the DNFs of many reshapes multiplies
their disjuncts (openxla/xla#41173: rank-12 fusions run out of memory). Here a
:class:`Constraints` is a *conjunction of small DNFs*, grouped so that two groups share no
variable; conjoining two constraints only merges the groups that share a variable.
Evaluation, counting and streaming of valid tilings work group by group
(:mod:`symidx.tiling.valid`); only the text the contract asks for is a flat DNF, and it is
expanded on demand with a limit.

An atom is ``(expr, lo, hi)``: ``lo <= expr <= hi``. A DNF is a tuple of conjunctions, each
a tuple of atoms: ``()`` is unsatisfiable, ``((),)`` always satisfied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

from sympy import Symbol

from symidx.core.expr import Expr, as_expr, compile_expr, evaluate_exact, free_vars
from symidx.core.indexing_map.text import print_expr
from symidx.errors import TooLargeError

__all__ = ["Atom", "Conj", "DNF", "TRUE", "FALSE", "Constraints", "dnf_or", "dnf_and",
           "atom", "dnf_text", "EXPAND_LIMIT"]

Atom = tuple[Expr, int, int]
Conj = tuple[Atom, ...]
DNF = tuple[Conj, ...]
TRUE: DNF = ((),)
FALSE: DNF = ()
EXPAND_LIMIT = 100_000   # most disjuncts a flat DNF text may have


def atom(expr: Expr | int, lo: int, hi: int) -> DNF:
    """The DNF of one atom, folded when ``expr`` is a constant."""
    e = as_expr(expr)
    if e.is_Integer:
        return TRUE if lo <= int(e) <= hi else FALSE
    return (((e, lo, hi),),)


def _conj_and(a: Conj, b: Conj) -> Conj | None:
    """Two conjunctions as one; atoms on the same expression are intersected (None:
    empty)."""
    merged: dict[Expr, tuple[int, int]] = {}
    order: list[Expr] = []
    for e, lo, hi in a + b:
        if e in merged:
            plo, phi = merged[e]
            lo, hi = max(lo, plo), min(hi, phi)
        else:
            order.append(e)
        if lo > hi:
            return None
        merged[e] = (lo, hi)
    return tuple((e, *merged[e]) for e in order)


def _dedupe(conjs: Sequence[Conj]) -> DNF:
    """Duplicates dropped, and (for small DNFs) every conjunction that contains all the
    atoms of another (absorption: ``a || a && b`` is ``a``)."""
    seen: set[frozenset[Atom]] = set()
    out: list[Conj] = []
    for c in conjs:
        key = frozenset(c)
        if not c:
            return TRUE
        if key not in seen:
            seen.add(key)
            out.append(c)
    if len(out) <= 512:
        keys = [frozenset(c) for c in out]
        out = [c for i, c in enumerate(out)
               if not any(j != i and keys[j] < keys[i] for j in range(len(out)))]
    return tuple(out)


def dnf_or(a: DNF, b: DNF) -> DNF:
    return _dedupe(list(a) + list(b))


def dnf_and(a: DNF, b: DNF, limit: int = EXPAND_LIMIT) -> DNF:
    """The conjunction of two DNFs, distributed (at most ``limit`` disjuncts)."""
    if len(a) * len(b) > limit:
        raise TooLargeError(f"a DNF of {len(a)} x {len(b)} disjuncts exceeds {limit}")
    out = []
    for x, y in product(a, b):
        c = _conj_and(x, y)
        if c is not None:
            out.append(c)
    return _dedupe(out)


def _vars_of(d: DNF) -> frozenset[Symbol]:
    out: set[Symbol] = set()
    for c in d:
        for e, _, _ in c:
            out |= free_vars(e)
    return frozenset(out)


def dnf_text(d: DNF, names: Mapping[Symbol, str] | None = None) -> str:
    """XLA's text: ``e in [lo, hi] && ... || ...``, ``always satisfied``,
    ``unsatisfiable``."""
    if d == FALSE:
        return "unsatisfiable"
    if any(not c for c in d):
        return "always satisfied"
    table = dict(names or {})
    return " || ".join(" && ".join(f"{print_expr(e, table)} in [{lo}, {hi}]"
                                   for e, lo, hi in c) for c in d)


@dataclass(frozen=True)
class Constraints:
    """A conjunction of DNFs, grouped: the DNFs of one group share variables (directly or
    through each other), two groups share none. Nothing is ever distributed here: a
    group is evaluated by checking each of its DNFs; only :meth:`flat` (the text the
    contract asks for) multiplies them out, under a limit."""

    groups: tuple[tuple[DNF, ...], ...] = ()

    @classmethod
    def always(cls) -> Constraints:
        return cls(())

    @classmethod
    def of(cls, d: DNF) -> Constraints:
        return cls.always().and_dnf(d)

    @property
    def is_always(self) -> bool:
        return not self.groups

    @property
    def is_unsatisfiable(self) -> bool:
        return any(d == FALSE for g in self.groups for d in g)

    def and_dnf(self, d: DNF, limit: int = EXPAND_LIMIT) -> Constraints:
        if d == TRUE:
            return self
        if d == FALSE:
            return Constraints(((FALSE,),))
        if self.is_unsatisfiable:
            return self
        vs = _vars_of(d)
        merged: list[DNF] = []
        rest = []
        for g in self.groups:
            gv = frozenset().union(*(_vars_of(x) for x in g))
            if gv & vs:
                merged.extend(g)
                vs = vs | gv
            else:
                rest.append(g)
        if d not in merged:
            merged.append(d)
        return Constraints(tuple(rest) + (tuple(merged),))

    def and_(self, other: Constraints, limit: int = EXPAND_LIMIT) -> Constraints:
        out = self
        for g in other.groups:
            for d in g:
                out = out.and_dnf(d, limit)
        return out

    def substitute(self, values: Mapping[Symbol, Expr]) -> Constraints:
        """The constraints with variables replaced (atoms that become constants fold)."""
        out = Constraints.always()
        for g in self.groups:
            for d in g:
                new: DNF = FALSE
                for conj in d:
                    c: DNF = TRUE
                    for e, lo, hi in conj:
                        c = dnf_and(c, atom(as_expr(e).xreplace(dict(values)), lo, hi))
                    new = dnf_or(new, c)
                out = out.and_dnf(new)
        return out

    def group_variables(self) -> list[list[Symbol]]:
        return [sorted(frozenset().union(*(_vars_of(d) for d in g)), key=str)
                for g in self.groups]

    def variables(self) -> frozenset[Symbol]:
        out: frozenset[Symbol] = frozenset()
        for vs in self.group_variables():
            out |= frozenset(vs)
        return out

    def num_dnfs(self) -> int:
        return sum(len(g) for g in self.groups)

    def num_atoms(self) -> int:
        return sum(len(c) for g in self.groups for d in g for c in d)

    def flat(self, limit: int = EXPAND_LIMIT) -> DNF:
        """One DNF (the product of every DNF); TooLargeError above ``limit``."""
        out: DNF = TRUE
        for g in self.groups:
            for d in g:
                out = dnf_and(out, d, limit)
        return out

    def text(self, names: Mapping[Symbol, str] | None = None,
             limit: int = EXPAND_LIMIT) -> str:
        return dnf_text(self.flat(limit), names)

    def factored_text(self, names: Mapping[Symbol, str] | None = None) -> list[str]:
        """Every DNF of every group, one text each (their conjunction is the whole)."""
        return [dnf_text(d, names) for g in self.groups for d in g]

    def evaluator(self, variables: Sequence[Symbol]) -> _Evaluator:
        return _Evaluator(self, variables)

    def holds(self, env: Mapping[Symbol, int]) -> bool:
        variables = sorted(env, key=str)
        return self.evaluator(variables)([env[v] for v in variables])


class _Evaluator:
    """The constraints compiled over positional variable values: ints, or numpy integer
    arrays (then the answer is a boolean array)."""

    def __init__(self, cons: Constraints, variables: Sequence[Symbol]):
        self.variables = list(variables)
        self.exprs: list[list[list[tuple[Expr, int, int]]]] = [
            [list(c) for c in d] for g in cons.groups for d in g]
        self.dnfs: list[list[list[tuple[Any, int, int]]]] = [
            [[(compile_expr(e, self.variables), lo, hi) for e, lo, hi in c] for c in d]
            for d in self.exprs]

    def __call__(self, values: Sequence[Any]) -> Any:
        if values and not isinstance(values[0], int) and hasattr(values[0], "shape"):
            return self.vectorised(values)
        return all(self.dnf_holds(d, values) for d in self.dnfs)

    @staticmethod
    def dnf_holds(dnf: list[list[tuple[Any, int, int]]], values: Sequence[int]) -> bool:
        for conj in dnf:
            ok = True
            for fn, lo, hi in conj:
                try:
                    v = fn(values)
                except ZeroDivisionError:
                    ok = False
                    break
                if not lo <= v <= hi:
                    ok = False
                    break
            if ok:
                return True
        return False

    def vectorised(self, values: Sequence[Any]) -> Any:
        """Over arrays of values, exactly (:func:`symidx.core.expr.evaluate_exact`: a product of
        tile sizes past int64 does not wrap); where a divisor is 0 a constraint does not
        hold, as :meth:`dnf_holds` says."""
        import numpy as np

        shape = np.broadcast_shapes(*(np.shape(v) for v in values))
        result = np.ones(shape, dtype=bool)
        for dnf in self.exprs:
            any_conj = np.zeros(shape, dtype=bool)
            for conj in dnf:
                got, defined = evaluate_exact([e for e, _, _ in conj], self.variables, values)
                ok = np.ones(shape, dtype=bool) if defined is None else defined
                for v, (_, lo, hi) in zip(got, conj):
                    ok = ok & (v >= lo) & (v <= hi)
                any_conj |= ok
            result &= any_conj
        return result
