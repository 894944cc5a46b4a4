"""hypothesis strategies for indexing maps, for symidx's tests and for yours.

    from hypothesis import given
    from symidx.strategies import indexing_maps

    @given(indexing_maps())
    def test_my_rewrite(m): ...

Every map drawn is valid and small enough to check by enumeration (domain boxes of at most
a few thousand points). Requires hypothesis (the ``test`` extra).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from sympy import Integer

from symidx.expr import Expr, FloorDiv, Max, Min, Mod, dim, rt, sym
from symidx.indexing_map import IndexingMap, RuntimeVar
from symidx.interval import Interval

__all__ = ["intervals", "expressions", "indexing_maps", "affine_expressions"]


def intervals(min_value: int = -8, max_value: int = 12, max_size: int = 8
              ) -> st.SearchStrategy[Interval]:
    """Non-empty intervals inside ``[min_value, max_value]`` of at most ``max_size`` values."""
    @st.composite
    def build(draw: Any) -> Interval:
        lo = draw(st.integers(min_value, max_value))
        size = draw(st.integers(1, max_size))
        return Interval(lo, min(max_value, lo + size - 1))

    return build()


def affine_expressions(variables: list[Any], max_coeff: int = 16, max_terms: int = 3
                       ) -> st.SearchStrategy[Expr]:
    """``c0 + c1*v1 + ...`` over some of ``variables``."""
    @st.composite
    def build(draw: Any) -> Expr:
        expr: Expr = Integer(draw(st.integers(-max_coeff, max_coeff)))
        if not variables:
            return expr
        for v in draw(st.lists(st.sampled_from(variables), max_size=max_terms)):
            coeff = draw(st.integers(-max_coeff, max_coeff).filter(bool))
            expr = expr + coeff * v
        return expr

    return build()


def expressions(variables: list[Any], max_depth: int = 3, negative_divisors: bool = False,
                min_max: bool = True) -> st.SearchStrategy[Expr]:
    """Random index expressions: sums, products by constants, floordiv and mod by
    constants, min and max, over ``variables``."""
    leaves: st.SearchStrategy[Expr] = st.integers(-12, 12).map(Integer)
    if variables:
        leaves = st.one_of(leaves, st.sampled_from(variables), st.sampled_from(variables))
    divisors = st.integers(1, 9)
    if negative_divisors:
        divisors = st.one_of(divisors, st.integers(-9, -1))

    def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        options = [
            st.tuples(children, children).map(lambda ab: ab[0] + ab[1]),
            st.tuples(children, children).map(lambda ab: ab[0] - ab[1]),
            st.tuples(children, st.integers(-8, 8)).map(lambda ac: ac[0] * ac[1]),
            st.tuples(children, divisors).map(lambda ac: FloorDiv(ac[0], ac[1])),
            st.tuples(children, divisors).map(lambda ac: Mod(ac[0], ac[1])),
        ]
        if min_max:
            options += [st.tuples(children, children).map(lambda ab: Min(*ab)),
                        st.tuples(children, children).map(lambda ab: Max(*ab))]
        return st.one_of(*options)

    return st.recursive(leaves, extend, max_leaves=2 ** max_depth)


def indexing_maps(max_dims: int = 3, max_ranges: int = 2, max_rts: int = 1,
                  max_results: int = 3, max_constraints: int = 2,
                  negative_divisors: bool = False, min_max: bool = True
                  ) -> st.SearchStrategy[IndexingMap]:
    """Random valid maps with small domains."""
    @st.composite
    def build(draw: Any) -> IndexingMap:
        nd = draw(st.integers(0, max_dims))
        nr = draw(st.integers(0, max_ranges))
        nt = draw(st.integers(0, max_rts))
        variables = ([dim(i) for i in range(nd)] + [sym(i) for i in range(nr)]
                     + [rt(i) for i in range(nt)])
        exprs = expressions(variables, negative_divisors=negative_divisors, min_max=min_max)
        dims = [draw(intervals(-4, 12, 8)) for _ in range(nd)]
        ranges = [draw(intervals(-4, 8, 5)) for _ in range(nr)]
        rts = [RuntimeVar(draw(intervals(0, 6, 4))) for _ in range(nt)]
        results = draw(st.lists(exprs, max_size=max_results))
        constraints = draw(st.lists(st.tuples(exprs, intervals(-20, 30, 30)),
                                    max_size=max_constraints))
        return IndexingMap.create(dims, results, ranges, rts, constraints)

    return build()
