"""FloorDiv / Mod / CeilDiv semantics, folding, range evaluation and compiled evaluation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sympy import Integer

from symidx.errors import MapError
from symidx.expr import CeilDiv, FloorDiv, Mod, bounds, compile_expr, depth, dim, sym
from symidx.interval import Interval
from symidx.strategies import expressions, intervals

d0, d1, s0 = dim(0), dim(1), sym(0)


def test_eval_folds_only_universal_facts():
    assert FloorDiv(Integer(-7), Integer(2)) == -4  # floor, not truncation
    assert Mod(Integer(-7), Integer(3)) == 2  # sign of the divisor
    assert Mod(Integer(7), Integer(-3)) == -2
    assert CeilDiv(Integer(7), Integer(2)) == 4
    assert FloorDiv(d0, Integer(1)) == d0
    assert Mod(d0, Integer(1)) == 0
    assert FloorDiv(Integer(0), d0) == 0
    # range-dependent facts are not folded at construction
    assert isinstance(FloorDiv(d0, Integer(16)), FloorDiv)
    assert isinstance(Mod(d0, Integer(16)), Mod)
    assert FloorDiv(d0, 16).is_integer


def test_division_by_zero_is_an_error():
    with pytest.raises(MapError):
        FloorDiv(d0, Integer(0))
    with pytest.raises(MapError):
        Mod(d0, Integer(0))


def test_bounds_examples():
    env = {d0: Interval(0, 9), d1: Interval(0, 15), s0: Interval(-3, 3)}
    assert bounds(d0 * 4 + d1, env) == Interval(0, 51)
    assert bounds(FloorDiv(d1, 4), env) == Interval(0, 3)
    assert bounds(Mod(d0 * 16 + d1, 16), env) == Interval(0, 15)
    assert bounds(Mod(d1, 32), env) == Interval(0, 15)
    assert bounds(-d0 + 16, env) == Interval(7, 16)


def test_depth():
    assert depth(d0) == 1
    assert depth(FloorDiv(d0 + 1, 2)) == 3


VARS = [d0, d1, s0]


@given(expressions(VARS), intervals(-6, 6, 5), intervals(-6, 6, 5), intervals(-3, 4, 4))
def test_bounds_contain_every_sampled_value(e, i0, i1, i2):
    env = dict(zip(VARS, (i0, i1, i2)))
    got = bounds(e, env)
    f = compile_expr(e, VARS)
    for point in itertools.product(*(range(i.lo, i.hi + 1) for i in (i0, i1, i2))):
        assert f(list(point)) in got, (e, point, got)


@given(expressions(VARS, negative_divisors=True), st.lists(st.integers(-20, 20), min_size=3,
                                                            max_size=3))
def test_compiled_matches_sympy_substitution(e, point):
    want = e.xreplace(dict(zip(VARS, map(Integer, point))))
    assert compile_expr(e, VARS)(point) == int(want)


@given(expressions(VARS))
def test_compiled_is_vectorised(e):
    grid = [a.reshape(-1) for a in np.meshgrid(*(np.arange(-3, 4),) * 3, indexing="ij")]
    f = compile_expr(e, VARS)
    got = np.broadcast_to(np.asarray(f(grid)), grid[0].shape)
    for k in range(0, grid[0].size, 37):
        assert got[k] == f([int(g[k]) for g in grid])


@given(st.lists(expressions(VARS, max_depth=2), min_size=1, max_size=5),
       st.integers(-4, 4))
def test_fast_add_and_scale_build_exactly_what_sympy_builds(terms, c):
    from sympy import Add, Mul

    from symidx.expr import add, scale

    built = add(terms)
    reference = Add(*terms)
    assert built == reference and built.args == reference.args
    assert hash(built) == hash(reference)
    scaled = scale(c, terms[0])
    assert scaled == Mul(c, terms[0]) and scaled.args == Mul(c, terms[0]).args


@given(st.lists(expressions(VARS), min_size=1, max_size=3), expressions(VARS, max_depth=2),
       expressions(VARS, max_depth=2))
def test_substitute_matches_xreplace(exprs, a, b):
    from symidx.expr import substitute

    mapping = {d0: a, d1: b}
    assert substitute(exprs, mapping) == [e.xreplace(mapping) for e in exprs]
