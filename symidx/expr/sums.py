"""Sums and integer multiples built the fast way, in exactly the form sympy builds
(:func:`add`, :func:`scale`, :func:`rebuild`, :func:`substitute`), and sums as linear forms
(:func:`terms`, :func:`from_terms`). The order of a sum's terms (``_ORDERED``) and the
linear forms (``_TERMS``) are remembered."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import is_
from typing import cast

import sympy
from sympy import Add, Expr, Integer, Mul, Symbol

from symidx.expr.nodes import _IntegerOp
from symidx.expr.variables import _VAR_INFO, rt, sym
from symidx.expr.walks import _SCANNED, scan


def clear_caches() -> None:
    """Forget every memoised result (sympy's cache and symidx's own), e.g. so that a
    benchmark measures work on fresh expressions."""
    from sympy.core.cache import clear_cache

    clear_cache()
    _TERMS.clear()
    _SHIFTED.clear()
    _RENAMED.clear()
    _SCANNED.clear()


_SORT_KEY = sympy.core.add._args_sortkey  # the order sympy's Add keeps its terms in
_ORDERED: dict[tuple[Expr, ...], list[Expr]] = {}
_ORDERED_LIMIT = 1 << 16


def _canonical_order(terms: list[Expr]) -> list[Expr]:
    """``terms`` in the order sympy's Add keeps them. Sorting compares terms with
    ``Basic.compare``, a slow structural walk; the same sums come back again and again while
    maps compose, so each order is remembered (the cache is cleared when it fills)."""
    key = tuple(terms)
    found = _ORDERED.get(key)
    if found is None:
        if len(_ORDERED) >= _ORDERED_LIMIT:
            _ORDERED.clear()
        found = _ORDERED[key] = sorted(terms, key=_SORT_KEY)
    return list(found)


def scale(c: int, x: Expr) -> Expr:
    """``c * x`` in sympy's canonical form, built directly when that form is plain."""
    if c == 1:
        return x
    if c == 0:
        return Integer(0)
    if x.is_Integer:
        return Integer(c * int(x))
    if isinstance(x, (_IntegerOp, Symbol)):
        return Mul._from_args((Integer(c), x), True)  # our expressions commute
    if isinstance(x, Mul) and len(x.args) == 2 and x.args[0].is_Integer \
            and isinstance(x.args[1], (_IntegerOp, Symbol)):
        return scale(c * int(x.args[0]), x.args[1])
    if isinstance(x, Add):
        return add([scale(c, t) for t in x.args])
    return Mul(Integer(c), x)


def rebuild(e: Expr, args: Sequence[Expr]) -> Expr:
    """``e.func(*args)``, with sums and integer multiples built the fast way."""
    if isinstance(e, Add):
        return add(args)
    if isinstance(e, Mul) and len(args) == 2 and args[0].is_Integer:
        return scale(int(args[0]), args[1])
    return e.func(*args)


def add(terms: Sequence[Expr]) -> Expr:
    """``Add(*terms)``, identical to what sympy builds, but without ``Add.flatten``'s
    assumption queries when the terms are plain (integers, variables, our operations and
    integer multiples of them). Falls back to sympy for anything else."""
    coeffs: dict[Expr, int] = {}
    original: dict[Expr, Expr | None] = {}  # the term as given, while it is met once
    const = 0
    for a in terms:
        for t in (a.args if isinstance(a, Add) else (a,)):
            if t.is_Integer:
                const += int(t)
                continue
            if isinstance(t, Mul):
                if len(t.args) != 2 or not t.args[0].is_Integer:
                    return Add(*terms)
                c, m = int(t.args[0]), t.args[1]
            else:
                c, m = 1, t
            if not isinstance(m, (_IntegerOp, Symbol)):
                return Add(*terms)
            if m in coeffs:
                coeffs[m] += c
                original[m] = None
            else:
                coeffs[m] = c
                original[m] = t
    out = [original[m] or scale(c, m) for m, c in coeffs.items() if c]
    if not out:
        return Integer(const)
    if len(out) == 1 and not const:
        return out[0]
    out = _canonical_order(out)
    if const:
        out.insert(0, Integer(const))
    return Add._from_args(out, True)


def substitute(exprs: Sequence[Expr], mapping: Mapping[Symbol, Expr]) -> list[Expr]:
    """``[e.xreplace(mapping) for e in exprs]``, with shared sub-expressions rebuilt once
    (results of one map share most of their structure)."""
    if not all(isinstance(k, Symbol) for k in mapping):  # a compound key: by value
        return [e.xreplace(dict(mapping)) for e in exprs]
    # Sub-expressions are remembered by identity (an int's hash and equality are cheap;
    # sympy's are Python calls): every node walked stays alive in ``exprs`` meanwhile, so
    # no id is reused. A variable is looked up by value (an equal symbol may be another
    # object).
    memo: dict[int, Expr] = {}

    def walk(e: Expr) -> Expr:
        got = memo.get(id(e))
        if got is not None:
            return got
        args = e.args
        if not args:
            new = mapping.get(e, e) if e.is_Symbol else e
        else:
            new_args = tuple([walk(a) for a in args])
            new = e if all(map(is_, new_args, args)) else rebuild(e, new_args)
        memo[id(e)] = new
        return new

    return [walk(e) for e in exprs]


#: Expressions with their range and runtime variables renumbered (see :func:`shifted`):
#: ``(expression, range offset, runtime offset)`` -> the renumbered expression.
_SHIFTED: dict[tuple[Expr, int, int], Expr] = {}
_SHIFTED_LIMIT = 1 << 16


def shifted(exprs: Sequence[Expr], ranges: int, rts: int) -> list[Expr]:
    """``exprs`` with every range variable ``s{i}`` renamed ``s{i + ranges}`` and every
    runtime variable ``rt{k}`` renamed ``rt{k + rts}`` (the renumbering a composition gives
    the first map's variables), remembered per expression: composed maps carry the same
    constraints from one composition to the next, so the same expression is renumbered by
    the same offsets again and again (and comes out as the same object, which the
    simplifier's memos then find by identity)."""
    out: list[Expr | None] = []
    missing: list[Expr] = []
    for e in exprs:
        found = _SHIFTED.get((e, ranges, rts))
        out.append(found)
        if found is None:
            missing.append(e)
    if not missing:
        return cast(list[Expr], out)
    mapping: dict[Symbol, Expr] = {}
    for v in scan(missing)[0]:
        kind, index = _VAR_INFO.get(v, ("", 0))
        if kind == "s" and ranges:
            mapping[v] = sym(index + ranges)
        elif kind == "rt" and rts:
            mapping[v] = rt(index + rts)
    done = iter(substitute(missing, mapping) if mapping else missing)
    if len(_SHIFTED) + len(missing) > _SHIFTED_LIMIT:
        _SHIFTED.clear()
    for i, e in enumerate(exprs):
        if out[i] is None:
            new = out[i] = next(done)
            _SHIFTED[(e, ranges, rts)] = new
    return cast(list[Expr], out)


#: Expressions with variables renamed (see :func:`renamed`): ``(expression, the renaming
#: of its own variables)`` -> the renamed expression.
_RENAMED: dict[tuple[Expr, frozenset[tuple[Symbol, Symbol]]], Expr] = {}
_RENAMED_LIMIT = 1 << 16


def renamed(exprs: Sequence[Expr], mapping: Mapping[Symbol, Symbol]) -> list[Expr]:
    """``substitute(exprs, mapping)`` for a mapping from variables to variables (dropping
    a map's unused variables renumbers the others), remembered per expression and the
    part of ``mapping`` on its own variables."""
    out: list[Expr] = []
    missing: list[int] = []
    keys = []
    for i, e in enumerate(exprs):
        if e.is_Symbol:
            out.append(mapping.get(e, e))
            continue
        if not e.args:
            out.append(e)
            continue
        used = scan([e])[0]
        key = (e, frozenset((v, mapping[v]) for v in used if v in mapping))
        if not key[1]:
            out.append(e)
            continue
        found = _RENAMED.get(key)
        out.append(found if found is not None else e)
        if found is None:
            missing.append(i)
            keys.append(key)
    if missing:
        done = substitute([exprs[i] for i in missing], mapping)
        if len(_RENAMED) + len(missing) > _RENAMED_LIMIT:
            _RENAMED.clear()
        for i, key, new in zip(missing, keys, done):
            out[i] = _RENAMED[key] = new
    return out


ONE = Integer(1)
Terms = list[tuple[int, Expr]]
_TERMS: dict[int, tuple[Expr, tuple[tuple[int, Expr], ...]]] = {}
_TERMS_LIMIT = 1 << 14


def terms(e: Expr) -> Terms:
    """``e`` as ``[(coefficient, monomial)]``; the constant has monomial ``1`` (:data:`ONE`).

    Remembered by identity (the entry keeps ``e`` alive, so its id is not reused): finding
    an *equal* expression in a cache would compare trees, which costs more than splitting
    the sum again."""
    got = _TERMS.get(id(e))
    if got is not None and got[0] is e:
        return list(got[1])
    found = _split_terms(e)
    if len(_TERMS) >= _TERMS_LIMIT:
        _TERMS.clear()
    _TERMS[id(e)] = (e, found)
    return list(found)


def _split_terms(e: Expr) -> tuple[tuple[int, Expr], ...]:
    parts = e.args if isinstance(e, Add) else (e,)
    out = []
    for t in parts:
        if t.is_Integer:
            out.append((int(t), ONE))
        elif isinstance(t, Mul) and t.args[0].is_Integer:
            coeff = t.args[0]
            rest = t.args[1] if len(t.args) == 2 else Mul._from_args(t.args[1:])
            out.append((int(coeff), rest))
        else:
            out.append((1, t))
    return tuple(out)


def from_terms(parts: Terms) -> Expr:
    """The sum of ``[(coefficient, monomial)]`` (the inverse of :func:`terms`)."""
    return add([Integer(c) if m is ONE else scale(c, m) for c, m in parts if c])
