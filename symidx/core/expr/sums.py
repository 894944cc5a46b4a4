"""Sums and integer multiples built the fast way, in exactly the form sympy builds
(:func:`add`, :func:`scale`, :func:`rebuild`, :func:`substitute`), and sums as linear forms
(:func:`terms`, :func:`from_terms`). The linear forms (``_TERMS``) are remembered."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cmp_to_key
from operator import is_
from typing import Any, cast

import sympy
from sympy import Add, Basic, Expr, Integer, Mul, Symbol
from sympy.core.basic import ordering_of_classes
from sympy.core.cache import clear_cache

from symidx.core.expr.nodes import ZERO, CeilDiv, FloorDiv, Mod, _IntegerOp, _new_expr, integer
from symidx.core.expr.variables import _VAR_INFO, rt, sym
from symidx.core.expr.walks import _SCANNED, scan


def clear_caches() -> None:
    """Forget every memoised result (sympy's cache and symidx's own: these of the
    expressions, and those the floors above register with :func:`on_clear_caches`, the
    simplifier's), e.g. so that a benchmark measures work on fresh expressions and no
    sample reuses what an earlier one found."""
    clear_cache()
    _TERMS.clear()
    _SHIFTED.clear()
    _RENAMED.clear()
    _SCANNED.clear()
    for forget in _CLEARERS:
        forget()


_CLEARERS: list[Callable[[], None]] = []


def on_clear_caches(forget: Callable[[], None]) -> None:
    """Have :func:`clear_caches` also call ``forget`` (a memo of a higher floor, which
    this one cannot import, registers its own clearing)."""
    _CLEARERS.append(forget)


_SORT_KEY = cmp_to_key(sympy.Basic.compare)  # the order sympy's Add keeps its terms in
_RANKS = {name: i for i, name in enumerate(ordering_of_classes)}
_UNRANKED = len(ordering_of_classes) + 1


def compare(a: Expr, b: Expr) -> int:
    """-1, 0 or 1 as sympy's ``Basic.compare`` (the order of a sum's terms): by class (in
    sympy's ordering of classes, then by name), then by the length of the hashable
    content, then item by item, expressions compared the same way. For expressions whose
    hashable content holds expressions, numbers, strings and tuples of them (every index
    expression); anything else raises TypeError."""
    if a is b:
        return 0
    ta, tb = type(a), type(b)
    if ta is not tb:
        na, nb = ta.__name__, tb.__name__
        if na != nb:
            ra, rb = _RANKS.get(na, _UNRANKED), _RANKS.get(nb, _UNRANKED)
            if ra == rb:  # both unranked: by name
                return -1 if na < nb else 1
            return -1 if ra < rb else 1
    ca, cb = a._hashable_content(), b._hashable_content()
    if len(ca) != len(cb):
        return -1 if len(ca) < len(cb) else 1
    for x, y in zip(ca, cb):
        if x is y:
            continue
        if isinstance(x, Basic):
            if not isinstance(y, Basic):
                raise TypeError("no canonical order for an expression and a value")
            c = compare(x, y)
            if c:
                return c
        elif isinstance(x, (int, str, tuple)) and type(y) is type(x):
            if x != y:
                return -1 if x < y else 1  # type: ignore[operator]  # same type, ordered
        else:
            raise TypeError(f"no canonical order for {type(x).__name__}")
    return 0


_COMPARE_KEY = cmp_to_key(compare)


def canonical_order(terms: list[Expr]) -> list[Expr]:
    """``terms`` in the order sympy's Add keeps them (:func:`compare`, a faster
    ``Basic.compare``; sympy's own for terms it cannot compare)."""
    try:
        if len(terms) == 2:
            a, b = terms
            return [b, a] if compare(a, b) > 0 else [a, b]
        return sorted(terms, key=_COMPARE_KEY)
    except TypeError:
        return sorted(terms, key=_SORT_KEY)


_DIVISIONS = frozenset({FloorDiv, CeilDiv, Mod})
#: The monomials sums are built of directly: variables and our operations.
_MONOMIAL = (_IntegerOp, Symbol)
_mul_from_args = Mul._from_args
_add_from_args = Add._from_args


def _times(c: int, m: Expr) -> Expr:
    """``c * m`` for a monomial ``m`` and an integer ``c`` other than 0 and 1."""
    return _mul_from_args((integer(c), m), True)  # our expressions commute


def scale(c: int, x: Expr) -> Expr:
    """``c * x`` in sympy's canonical form, built directly when that form is plain."""
    if c == 1:
        return x
    if c == 0:
        return ZERO
    if x.is_Integer:
        return integer(c * x.p)
    if isinstance(x, _MONOMIAL):
        return _times(c, x)
    if isinstance(x, Mul):
        args = x._args
        if len(args) == 2 and args[0].is_Integer and isinstance(args[1], _MONOMIAL):
            return scale(c * args[0].p, args[1])
    elif isinstance(x, Add):
        return add([scale(c, t) for t in x._args])
    return Mul(integer(c), x)


def rebuild(e: Expr, args: Sequence[Expr]) -> Expr:
    """``e.func(*args)``, with sums and integer multiples built the fast way."""
    t = type(e)
    if t in _DIVISIONS:
        a, b = args
        if b is e._args[1] and not a.is_Integer and not (b.is_Integer and -1 <= b.p <= 1):
            # the node's own divisor (neither 0 nor a unit) and a dividend that is not a
            # constant: nothing for ``eval`` to fold
            return _new_expr(t, a, b)
        return t.of(a, b)
    if isinstance(e, Add):
        return add(args)
    if isinstance(e, Mul):
        if len(args) == 2 and args[0].is_Integer:
            return scale(args[0].p, args[1])
    elif isinstance(e, _IntegerOp):
        return e.of(*args)
    return e.func(*args)


def add(terms: Sequence[Expr]) -> Expr:
    """``Add(*terms)``, identical to what sympy builds, but without ``Add.flatten``'s
    assumption queries when the terms are plain (integers, variables, our operations and
    integer multiples of them). Falls back to sympy for anything else."""
    # per monomial: [its coefficient, the term as given while it is met once]; one dict
    # operation per term (a monomial's hash is a Python call)
    entries: dict[Expr, list[Any]] = {}
    const = 0
    for a in terms:
        for t in (a._args if isinstance(a, Add) else (a,)):
            if t.is_Integer:
                const += t.p
                continue
            if isinstance(t, Mul):
                targs = t._args
                if len(targs) != 2 or not targs[0].is_Integer:
                    return Add(*terms)
                c, m = targs[0].p, targs[1]
            else:
                c, m = 1, t
            if not isinstance(m, _MONOMIAL):
                return Add(*terms)
            entry = [c, t]
            got = entries.setdefault(m, entry)
            if got is not entry:
                got[0] += c
                got[1] = None
    out = [t or scale(c, m) for m, (c, t) in entries.items() if c]
    return _sum(out, const)


def _sum(out: list[Expr], const: int) -> Expr:
    """The sum of distinct terms (monomials or their multiples) and a constant."""
    if not out:
        return integer(const)
    if len(out) == 1 and not const:
        return out[0]
    if len(out) > 1:
        out = canonical_order(out)
    if const:
        out.insert(0, integer(const))
    return _add_from_args(out, True)


def substitute(exprs: Sequence[Expr], mapping: Mapping[Symbol, Expr]) -> list[Expr]:
    """``[e.xreplace(mapping) for e in exprs]``, with shared sub-expressions rebuilt once
    (results of one map share most of their structure)."""
    for k in mapping:
        if not isinstance(k, Symbol):  # a compound key: by value
            return [e.xreplace(dict(mapping)) for e in exprs]
    # Sub-expressions are remembered by identity (an int's hash and equality are cheap;
    # sympy's are Python calls): every node walked stays alive in ``exprs`` meanwhile, so
    # no id is reused. A variable is looked up by value (an equal symbol may be another
    # object).
    memo: dict[int, Expr] = {}
    remembered = memo.get
    replaced = mapping.get

    def walk(e: Expr) -> Expr:  # a compound expression
        got = remembered(id(e))
        if got is not None:
            return got
        args = e._args
        new_args = tuple([(walk(a) if a._args else replaced(a, a) if a.is_Symbol else a)
                          for a in args])
        new = e if all(map(is_, new_args, args)) else rebuild(e, new_args)
        memo[id(e)] = new
        return new

    done = [walk(e) if e._args else replaced(e, e) if e.is_Symbol else e for e in exprs]
    memo.clear()  # ``walk`` (recursive) is a reference cycle, collected late: not its memo
    return done


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
    parts = e._args if isinstance(e, Add) else (e,)
    out = []
    for t in parts:
        if t.is_Integer:
            out.append((t.p, ONE))
        elif isinstance(t, Mul) and t._args[0].is_Integer:
            targs = t._args
            rest = targs[1] if len(targs) == 2 else _mul_from_args(targs[1:])
            out.append((targs[0].p, rest))
        else:
            out.append((1, t))
    return tuple(out)


def from_terms(parts: Terms) -> Expr:
    """The sum of ``[(coefficient, monomial)]`` (the inverse of :func:`terms`): like
    monomials merged, each scaled once, in sympy's canonical order; built directly when
    every monomial is a variable or one of our operations, by :func:`add` otherwise."""
    coeffs: dict[Expr, int] = {}
    const = 0
    for c, m in parts:
        if m is ONE:
            const += c
        elif isinstance(m, _MONOMIAL):
            got = coeffs.get(m)
            coeffs[m] = c if got is None else got + c
        else:
            return add([integer(k) if t is ONE else scale(k, t) for k, t in parts if k])
    return _sum([m if c == 1 else _times(c, m) for m, c in coeffs.items() if c], const)
