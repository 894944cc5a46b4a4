"""The simplifier's driver: rounds of passes over a map until nothing changes."""

from __future__ import annotations

from dataclasses import dataclass, field
from dataclasses import replace as replace_field
from typing import Literal, overload

from sympy import Integer, Symbol

from symidx.errors import MapError
from symidx.expr import (
    ONE,
    Expr,
    add,
    constrained_bounds,
    dim,
    from_terms,
    scale,
    substitute,
    sym,
    terms,
)
from symidx.indexing_map import IndexingMap
from symidx.interval import Interval
from symidx.simplify.constraints import (
    CONSTRAINT_RULES,
    as_mod,
    merge_residues,
    residue,
    tighten_to_residue,
)
from symidx.simplify.rewriter import DEFAULT_MAX_STEPS, Rewriter, Step

__all__ = ["simplify", "simplify_expr", "SimplifyResult", "Step", "result_ranges", "MAX_ROUNDS"]

MAX_ROUNDS = 8


@dataclass(frozen=True)
class SimplifyResult:
    """What :func:`simplify` returns with ``trace=True``."""

    map: IndexingMap
    changed: bool
    trace: list[Step] = field(default_factory=list)


@overload
def simplify(m: IndexingMap, *, trace: Literal[False] = False,
             replace_point_dims: bool = True) -> IndexingMap: ...


@overload
def simplify(m: IndexingMap, *, trace: Literal[True],
             replace_point_dims: bool = True) -> SimplifyResult: ...


def simplify(m: IndexingMap, *, trace: bool = False, replace_point_dims: bool = True
             ) -> IndexingMap | SimplifyResult:
    """The simplified map (same meaning). With ``trace=True``, a :class:`SimplifyResult`
    holding the map, whether it changed, and every rewrite step."""
    steps: list[Step] | None = [] if trace else None
    result = m
    if not (m.is_known_empty or m.is_undefined):
        for _ in range(MAX_ROUNDS):
            new, eliminated = _round(result, steps, replace_point_dims)
            settled = new is result or new.is_known_empty or (
                new.all_bounds == result.all_bounds and not eliminated) or new == result
            result = new
            if settled:  # same intervals: another round would find the same expressions
                break
    if result == m:
        result = m  # keep the caller's names and identity when nothing changed
    if trace:
        return SimplifyResult(result, result != m, steps or [])
    return result


def result_ranges(m: IndexingMap) -> list[Interval]:
    """An interval for each result of ``m`` holding every value it takes on the map's
    domain: the variables' intervals *and* the constraints (XLA's ``ComputeResultRanges``).
    A sub-expression that a constraint bounds takes the constraint's interval, so
    ``((d0 * 86 + d1) floordiv 64, (d0 * 86 + d1) mod 64)`` with ``d0 in [0, 11]``,
    ``d1 in [0, 85]`` and ``d0 * 86 + d1 in [0, 1023]`` gives ``[0, 15]`` and ``[0, 63]``
    (the intervals alone give ``[0, 16]``). Sound, not always tight. A known-empty map
    has empty ranges; an undefined one has none (:class:`~symidx.errors.MapError`)."""
    if m.is_undefined:
        raise MapError("an UNDEFINED map has no result ranges")
    if m.is_known_empty:
        return [Interval.EMPTY] * m.num_results
    env = m.variable_bounds()
    known = dict(m.constraints)
    return [constrained_bounds(r, env, known) for r in m.results]


def simplify_expr(expr: Expr, env: dict[Symbol, Interval]) -> Expr:
    """One expression simplified under the given variable intervals."""
    return Rewriter(env).simplify(expr)


def _round(m: IndexingMap, steps: list[Step] | None, replace_point_dims: bool
           ) -> tuple[IndexingMap, bool]:
    """One round; also says whether equalities were eliminated (their replacement
    constraints are folded in the next round)."""
    bounds = list(m.all_bounds)
    variables = m.all_vars
    env = dict(zip(variables, bounds))
    rw = Rewriter(env, steps, DEFAULT_MAX_STEPS)
    # 1. constraints: simplify, fold, tighten variables
    constraints: dict[Expr, Interval] = {}
    residues: dict[Symbol, tuple[int, int]] = {}
    for expr, iv in m.constraints:
        expr = rw.simplify(expr)
        for _ in range(16):
            for rule in CONSTRAINT_RULES:
                folded = rule(expr, iv, rw)
                if folded is not None:
                    new_expr, new_iv = rw.simplify(folded[0]), folded[1]
                    if steps is not None:
                        steps.append(Step(rule.__name__, expr, new_expr, tuple(env.items()),
                                          iv, new_iv))
                    expr, iv = new_expr, new_iv
                    break
            else:
                break
            if iv.is_empty:
                break
        if iv.is_empty:
            return m.as_known_empty(), False
        if expr.is_Integer:
            if int(expr) not in iv:
                return m.as_known_empty(), False
            continue
        if expr.is_Symbol:
            i = variables.index(expr)
            bounds[i] = bounds[i].intersect(iv)
            continue
        found = residue(expr, iv)
        if found is not None:
            x, c, r = found
            if x in residues:
                merged = merge_residues(*residues[x], c, r)
                if merged is None:
                    return m.as_known_empty(), False
                residues[x] = merged
            else:
                residues[x] = (c, r)
            continue
        constraints[expr] = constraints[expr].intersect(iv) if expr in constraints else iv
    for x, (c, r) in residues.items():
        i = variables.index(x)
        bounds[i] = tighten_to_residue(bounds[i], c, r)
        if bounds[i].is_empty:
            return m.as_known_empty(), False
        if bounds[i].is_point:
            continue
        constraints[as_mod(x, c)] = Interval(r, r)
    if any(b.is_empty for b in bounds):
        return m.as_known_empty(), False
    # range variables with one value, or fixed by an equality, are replaced
    before = dict(constraints)
    fixed = _fixed_range_vars(m, bounds, constraints)
    if fixed:
        constraints = _substituted(constraints, fixed)
    reshaped = constraints != before  # new constraints: fold them in another round
    # 2. with the tightened intervals: drop constraints that always hold
    if bounds != list(m.all_bounds):
        env = dict(zip(variables, bounds))
        rw = Rewriter(env, steps, DEFAULT_MAX_STEPS)
    kept: dict[Expr, Interval] = {}
    for expr, iv in constraints.items():
        expr = rw.simplify(expr)
        if expr.is_Integer:
            if int(expr) not in iv:
                return m.as_known_empty(), False
            continue
        b = rw.bounds(expr)
        if b in iv:
            continue
        kept[expr] = kept[expr].intersect(iv) if expr in kept else iv
    # 3. results; point dimensions become constants
    point_dims: dict[Symbol, Expr] = {}
    if replace_point_dims:
        point_dims = {dim(i): Integer(b.lo) for i, b in enumerate(bounds[: m.num_dims])
                      if b.is_point}
    replace = {**point_dims, **fixed}
    raw = substitute(list(m.results), replace) if replace else list(m.results)
    results = [rw.simplify(r) for r in raw]
    if _unchanged(m, bounds, results, kept):
        return m, reshaped
    nd, nr = m.num_dims, m.num_ranges
    rts = tuple(v if v.bounds == b else replace_field(v, bounds=b)
                for v, b in zip(m.rts, bounds[nd + nr:]))
    # no new variables: the checks of a freshly made map are not needed
    return IndexingMap.create(bounds[:nd], results, bounds[nd:nd + nr], rts, kept,
                              m.names, check=False), reshaped


def _unchanged(m: IndexingMap, bounds: list[Interval], results: list[Expr],
               constraints: dict[Expr, Interval]) -> bool:
    """Did the round leave the map as it was (the same objects: the rewriter returns an
    expression it cannot simplify as it is)?"""
    return (all(a is b for a, b in zip(results, m.results))
            and len(constraints) == len(m.constraints)
            and all(constraints.get(e) == iv for e, iv in m.constraints)
            and all(a == b for a, b in zip(bounds, m.all_bounds)))


def _fixed_range_vars(m: IndexingMap, bounds: list[Interval],
                      constraints: dict[Expr, Interval]) -> dict[Symbol, Expr]:
    """Range variables whose value is determined: a single-value interval (``s in [k, k]``
    gives ``s = k``), or a linear equality constraint with coefficient +-1
    (``d0 - s0 in [0, 0]`` gives ``s0 = d0``). The equality is consumed and replaced by
    "the value lies in the variable's interval"; ``constraints`` is updated in place."""
    fixed: dict[Symbol, Expr] = {}
    offset = m.num_dims
    # a runtime variable's source map may take this map's range variables: keep those
    shared = {sym(j) for v in m.rts if v.map is not None for j in range(v.map.num_ranges)}
    range_vars = set(m.range_vars) - shared
    for j, v in enumerate(m.range_vars):
        b = bounds[offset + j]
        if b.is_point and v in range_vars:
            fixed[v] = Integer(b.lo)
    for key, iv in list(constraints.items()):
        if not iv.is_point:
            continue
        expr = substitute([key], fixed)[0] if fixed else key
        parts = terms(expr)
        if not all(t is ONE or t.is_Symbol for _, t in parts):
            continue
        for c, t in parts:
            if t in range_vars and t not in fixed and abs(c) == 1:
                rest = from_terms([(k, u) for k, u in parts if u != t])
                value = scale(c, add([Integer(iv.lo), scale(-1, rest)]))  # c*t + rest = k
                index = offset + m.range_vars.index(t)
                del constraints[key]
                constraints[value] = constraints.get(value, bounds[index]).intersect(
                    bounds[index])
                # earlier values may mention t: express every value without it
                fixed = {k: substitute([v], {t: value})[0] for k, v in fixed.items()}
                fixed[t] = value
                break
    return fixed


def _substituted(constraints: dict[Expr, Interval], fixed: dict[Symbol, Expr]
                 ) -> dict[Expr, Interval]:
    out: dict[Expr, Interval] = {}
    for expr, iv in constraints.items():
        new = substitute([expr], fixed)[0]
        out[new] = out[new].intersect(iv) if new in out else iv
    return out
