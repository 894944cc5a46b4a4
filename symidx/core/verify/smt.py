"""Equality with the z3 SMT solver, in linear integer arithmetic.

Each ``x floordiv c`` becomes a fresh integer ``q`` with ``c*q <= x <= c*q + c - 1``
(``c > 0``; a negative divisor is the positive one applied to ``-x``), bounded by the
interval the expression is known to lie in; ``x mod c`` is ``x - c*q`` and ``x ceildiv c``
is ``-((-x) floordiv c)``; ``min``/``max`` are if-then-else. The quotient of a division is
a function of its operands, so it may be left existential: a map without range variables
gives a quantifier-free problem, which z3 decides in milliseconds whatever the domain size.

"Some target of A at a source point is not a target of B there" is asked in both
directions. When B has range variables that says "for every value of B's range
variables", which is expanded into one copy per value when B's symbol box is small, and
otherwise left to z3's quantifier reasoning (it may run out of time: :class:`Undecided`).

z3 is optional: ``pip install 'symidx[proofs]'``.
"""

from __future__ import annotations

import itertools
from typing import Any

from sympy import Symbol

from symidx._budget import interrupting
from symidx.core.expr import CeilDiv, Expr, FloorDiv, Max, Min, Mod, bounds, scale
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.verify.common import Deadline, box_size, has_module, optional_module
from symidx.core.verify.enumeration import image_at
from symidx.core.verify.verdict import Verdict
from symidx.errors import SymidxError, Undecided

__all__ = ["decide_by_smt", "has_z3", "EXPAND_LIMIT"]

EXPAND_LIMIT = 64
"""B's range (and runtime) box is expanded into copies up to this many points; beyond it,
a quantifier."""


def has_z3() -> bool:
    """Is z3 (the ``proofs`` extra) importable?"""
    return has_module("z3")


def _z3() -> Any:
    return optional_module("z3", "proofs")


class _Encoder:
    """Index expressions of one map copy as z3 integer terms; collects the defining
    constraints of the quotient variables it introduces (``defs``, ``aux``)."""

    def __init__(self, z3: Any, terms: dict[Symbol, Any], intervals: dict[Symbol, Interval],
                 tag: str):
        self.z3 = z3
        self.terms = terms
        self.intervals = intervals
        self.tag = tag
        self.aux: list[Any] = []
        self.defs: list[Any] = []
        self._memo: dict[Expr, Any] = {}
        self._quotients: dict[tuple[Expr, int], Any] = {}

    def __call__(self, e: Expr) -> Any:
        got = self._memo.get(e)
        if got is None:
            got = self._memo[e] = self._encode(e)
        return got

    def _encode(self, e: Expr) -> Any:
        z3 = self.z3
        if e.is_Integer:
            return z3.IntVal(int(e))
        if e.is_Symbol:
            return self.terms[e]
        if isinstance(e, (FloorDiv, Mod, CeilDiv)):
            if not e.args[1].is_Integer:
                raise Undecided(f"z3 cannot encode a division by a non-constant: {e}")
            x, c = e.args[0], int(e.args[1])
            if isinstance(e, CeilDiv):
                return -self._floor(scale(-1, x), c)
            if isinstance(e, FloorDiv):
                return self._floor(x, c)
            return self(x) - c * self._floor(x, c)
        args = [self(a) for a in e.args]
        if e.is_Add:
            return z3.Sum(*args)
        if e.is_Mul:
            result = args[0]
            for a in args[1:]:
                result = result * a
            return result
        if e.is_Pow and e.args[1].is_Integer and int(e.args[1]) > 0:
            result = args[0]
            for _ in range(int(e.args[1]) - 1):
                result = result * args[0]
            return result
        if isinstance(e, (Min, Max)):
            a, b = args
            return z3.If(a <= b, a, b) if isinstance(e, Min) else z3.If(a >= b, a, b)
        raise Undecided(f"z3 cannot encode {e}")

    def _floor(self, x: Expr, c: int) -> Any:
        """The quotient variable of ``floor(x / c)``, shared by every use."""
        if c < 0:
            x, c = scale(-1, x), -c
        key = (x, c)
        q = self._quotients.get(key)
        if q is None:
            z3 = self.z3
            q = z3.Int(f"{self.tag}q{len(self.aux)}")
            self.aux.append(q)
            xt = self(x)
            self.defs += [c * q <= xt, xt <= c * q + (c - 1)]
            try:
                known = bounds(FloorDiv(x, c, evaluate=False), self.intervals)
            except SymidxError:  # a variable without an interval: no extra bound
                known = None
            if known is not None and not known.is_empty:
                # A hint valid only where x's variables are in their intervals: a copy of
                # the second map is asserted at points outside its domain too.
                box = [z3.And(self.intervals[v].lo <= self.terms[v],
                              self.terms[v] <= self.intervals[v].hi)
                       for v in sorted(x.free_symbols, key=str)]
                self.defs.append(z3.Implies(z3.And(*box), z3.And(known.lo <= q, q <= known.hi))
                                 if box else z3.And(known.lo <= q, q <= known.hi))
            self._quotients[key] = q
        return q


class _Copy:
    """One copy of a map over shared dimension terms: its membership formula, its results,
    and the quotient definitions they need. Its symbols (range and runtime variables) are
    fresh z3 variables, or the given ``values``."""

    def __init__(self, z3: Any, m: IndexingMap, dims: list[Any], tag: str,
                 values: tuple[int, ...] | None = None):
        nd = m.num_dims
        if values is not None:
            symbol_terms = [z3.IntVal(v) for v in values]
            symbol_bounds = [Interval.point(v) for v in values]
        else:
            symbol_terms = [z3.Int(f"{tag}{v}") for v in m.symbol_vars]
            symbol_bounds = list(m.all_bounds[nd:])
        self.symbols = symbol_terms
        terms = dict(zip(m.all_vars, [*dims, *symbol_terms]))
        intervals = dict(zip(m.all_vars, [*m.dims, *symbol_bounds]))
        enc = _Encoder(z3, terms, intervals, tag)
        inside = [z3.And(b.lo <= t, t <= b.hi) for t, b in zip(terms.values(), m.all_bounds)]
        inside += [z3.And(iv.lo <= enc(c), enc(c) <= iv.hi) for c, iv in m.constraints]
        self.member = _all(z3, inside)
        self.results = [enc(r) for r in m.results]
        self.defs = enc.defs
        self.aux = enc.aux


def _all(z3: Any, parts: list[Any]) -> Any:
    return z3.And(*parts) if parts else z3.BoolVal(True)


def _not_covered(z3: Any, first: _Copy, second: IndexingMap, dims: list[Any]
                 ) -> tuple[Any, bool]:
    """A formula: the target ``first.results`` is not a target of ``second`` at these
    dims; and whether it holds a quantifier."""
    if second.is_known_empty:
        return z3.BoolVal(True), False

    def missed(copy: _Copy) -> Any:
        same = z3.And(copy.member, *[x == y for x, y in zip(first.results, copy.results)])
        return z3.Not(same)

    symbols = second.all_bounds[second.num_dims:]
    if not symbols:
        copy = _Copy(z3, second, dims, "b_")
        return _all(z3, [*copy.defs, missed(copy)]), False
    if box_size(symbols) <= EXPAND_LIMIT:
        parts = []
        for k, values in enumerate(itertools.product(*(range(r.lo, r.hi + 1)
                                                       for r in symbols))):
            copy = _Copy(z3, second, dims, f"b{k}_", values=values)
            parts += [*copy.defs, missed(copy)]
        return _all(z3, parts), False
    copy = _Copy(z3, second, dims, "b_")
    bound = copy.symbols + copy.aux
    body = z3.Implies(_all(z3, copy.defs), missed(copy)) if copy.defs else missed(copy)
    return z3.ForAll(bound, body), True


def decide_by_smt(a: IndexingMap, b: IndexingMap, deadline: Deadline,
                  nonlinear: bool = False) -> Verdict:
    """Equality of two defined maps of the same arity (either may be known empty) with z3:
    a proof, a counterexample, or :class:`Undecided` (z3 ran out of time or answered
    unknown)."""
    z3 = _z3()
    n = b.num_dims if a.is_known_empty else a.num_dims
    dims = [z3.Int(f"d{i}") for i in range(n)]
    for first, second in ((a, b), (b, a)):
        if first.is_known_empty:
            continue
        copy = _Copy(z3, first, dims, "a_")
        missed, quantified = _not_covered(z3, copy, second, dims)
        linear = not (quantified or nonlinear)
        solver = z3.SolverFor("QF_LIA") if linear else z3.Solver()
        if deadline.spent() is not None:
            raise Undecided(f"{deadline.out_of()} before z3 started")
        solver.add(*copy.defs, copy.member, missed)
        with interrupting(deadline, solver.ctx.interrupt):  # z3 stops when the budget is spent
            answer = solver.check()
        if answer == z3.unknown:
            reason = solver.reason_unknown()
            if "timeout" in reason or "canceled" in reason or deadline.spent() is not None:
                raise Undecided(f"z3 ran {deadline.out_of()}")
            raise Undecided(f"z3 could not decide ({reason})")
        if answer == z3.sat:
            model = solver.model()
            point = tuple(model.eval(d, model_completion=True).as_long() for d in dims)
            return Verdict(False, "z3", point, image_at(a, point, deadline=deadline),
                           image_at(b, point, deadline=deadline))
    return Verdict(True, "z3 proof")
