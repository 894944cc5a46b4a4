"""FloorDiv / Mod / CeilDiv semantics, folding, range evaluation and compiled evaluation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sympy import Integer

from symidx.core.expr import CeilDiv, FloorDiv, Mod, bounds, compile_expr, depth, dim, rt, sym
from symidx.core.interval import Interval
from symidx.errors import MapError
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

    from symidx.core.expr import add, scale

    built = add(terms)
    reference = Add(*terms)
    assert built == reference and built.args == reference.args
    assert hash(built) == hash(reference)
    scaled = scale(c, terms[0])
    assert scaled == Mul(c, terms[0]) and scaled.args == Mul(c, terms[0]).args


@given(st.lists(expressions(VARS), min_size=1, max_size=3), expressions(VARS, max_depth=2),
       expressions(VARS, max_depth=2))
def test_substitute_matches_xreplace(exprs, a, b):
    from symidx.core.expr import substitute

    mapping = {d0: a, d1: b}
    assert substitute(exprs, mapping) == [e.xreplace(mapping) for e in exprs]


SHIFT_VARS = [d0, s0, sym(1), sym(2), rt(0), rt(1)]


@given(st.lists(expressions(SHIFT_VARS), min_size=1, max_size=4), st.integers(0, 3),
       st.integers(0, 2))
def test_shifted_renumbers_range_and_runtime_variables(exprs, ranges, rts):
    from symidx.core.expr import shifted

    mapping = {sym(i): sym(i + ranges) for i in range(3)}
    mapping.update({rt(k): rt(k + rts) for k in range(2)})
    expected = [e.xreplace(mapping) for e in exprs]
    assert shifted(exprs, ranges, rts) == expected
    assert shifted(exprs, ranges, rts) == expected  # the remembered answer too


@given(st.lists(expressions(SHIFT_VARS + [FloorDiv(d0, s0), Mod(sym(1), d0 + 1)]), min_size=1,
                max_size=4))
def test_scan_finds_the_variables_and_the_variable_divisors_every_time(exprs):
    from symidx.core.expr import scan, variable_divisions

    expected = (set().union(*(e.free_symbols for e in exprs)),
                any(variable_divisions(e) for e in exprs))
    assert scan(exprs) == expected
    assert scan(exprs) == expected  # the remembered answers too
    assert scan(list(reversed(exprs))) == expected


@given(st.lists(expressions(SHIFT_VARS + [FloorDiv(d0, s0), Mod(sym(1), d0 + 1)]), min_size=2,
                max_size=4), st.integers(1, 5))
def test_scan_of_an_expression_built_of_scanned_parts_is_its_own(parts, k):
    """A composed result is built of the parts' results, scanned before: the walk takes
    their remembered answers; they must be the whole expression's."""
    from symidx.core.expr import clear_caches, scan, variable_divisions, variables

    clear_caches()
    for p in parts[1:]:
        scan([p])  # remembered; the first part is not
    whole = FloorDiv(parts[0] * k + Mod(parts[1], k + 1), k + 2) + sum(parts[2:]) + rt(1)
    assert scan([whole]) == (whole.free_symbols, bool(variable_divisions(whole)))
    assert variables(whole) == whole.free_symbols
    for p in parts:
        assert variables(p) == p.free_symbols


def test_variables_of_atoms_and_of_a_part_with_a_variable_divisor():
    from symidx.core.expr import clear_caches, scan, variables

    clear_caches()
    inner = FloorDiv(d0 * 3 + s0, sym(1) + 1)  # divides by a variable
    assert scan([inner]) == ({d0, s0, sym(1)}, True)
    outer = Mod(inner * 4 + d1, 7)  # its only variable division is inside ``inner``
    assert scan([outer]) == ({d0, d1, s0, sym(1)}, True)
    assert variables(outer) == frozenset({d0, d1, s0, sym(1)})
    assert variables(d0) == frozenset({d0})
    assert variables(Integer(3)) == frozenset()


def test_scan_refuses_a_fraction_every_time():
    from sympy import Rational

    from symidx.core.expr import scan

    e = d0 + Rational(1, 2) * s0
    for _ in range(2):
        with pytest.raises(MapError, match="not an integer"):
            scan([e])


@given(st.lists(expressions(SHIFT_VARS), min_size=1, max_size=4),
       st.permutations(SHIFT_VARS[1:4]))
def test_renamed_renames_as_xreplace_does(exprs, order):
    from symidx.core.expr import renamed

    mapping = dict(zip(SHIFT_VARS[1:4], order))
    mapping[rt(1)] = rt(0)
    expected = [e.xreplace(mapping) for e in exprs]
    assert renamed(exprs, mapping) == expected
    assert renamed(exprs, mapping) == expected  # the remembered answer too


def test_substitute_replaces_a_compound_key_as_xreplace_does():
    from symidx.core.expr import substitute

    e = FloorDiv(d0 + s0, 4) + s0
    assert substitute([e], {d0 + s0: d1}) == [FloorDiv(d1, 4) + s0]


# --- divisors that are variables, powers, and bounds under constraints ----------------------
nonzero_intervals = st.one_of(intervals(1, 7, 5), intervals(-7, -1, 5), intervals(-4, 4, 6))


@given(intervals(-9, 9, 8), nonzero_intervals)
def test_interval_division_by_an_interval_is_sound(a, b):
    """floordiv, ceildiv and mod by an interval divisor contain every value (0 excluded:
    division by zero has no value)."""
    for name, op in [("floordiv", lambda x, y: x // y), ("ceildiv", lambda x, y: -(-x // y)),
                     ("mod", lambda x, y: x % y)]:
        got = getattr(a, name)(b)
        for x in range(a.lo, a.hi + 1):
            for y in range(b.lo, b.hi + 1):
                if y:
                    assert op(x, y) in got, (name, a, b, x, y, got)


def test_mod_by_an_interval_is_not_more_than_the_dividend():
    assert Interval(0, 5).mod(Interval(3, 100)) == Interval(0, 5)
    assert Interval(-5, 0).mod(Interval(-100, -3)) == Interval(-5, 0)
    assert Interval(0, 50).mod(Interval(3, 8)) == Interval(0, 7)


def test_bounds_of_powers_of_variables():
    env = {d0: Interval(-3, 2), d1: Interval(2, 4)}
    assert bounds(d0 * d0, env) == Interval(0, 9)  # even power through 0
    assert bounds(d1 ** 3, env) == Interval(8, 64)
    assert bounds(d0 ** 3, env) == Interval(-27, 8)
    assert compile_expr(d0 * d0 * d1, [d0, d1])([-3, 4]) == 36


def test_variable_divisions_are_found_innermost_first():
    from symidx.core.expr import variable_divisions

    e = FloorDiv(Mod(d0, s0) + FloorDiv(d1, 4), s0 + 1) + CeilDiv(d0, 3)
    assert variable_divisions(e) == [Mod(d0, s0), FloorDiv(Mod(d0, s0) + FloorDiv(d1, 4),
                                                            s0 + 1)]


@given(expressions(VARS), expressions(VARS, max_depth=2), intervals(-10, 20, 12),
       intervals(-4, 8, 6), intervals(-4, 8, 6), intervals(-3, 4, 4))
def test_constrained_bounds_hold_wherever_the_constraint_holds(e, c, civ, i0, i1, i2):
    from symidx.core.expr import constrained_bounds

    env = dict(zip(VARS, (i0, i1, i2)))
    got = constrained_bounds(e + c, env, {c: civ})
    assert got in bounds(e + c, env)  # never looser than the box alone
    fe, fc = compile_expr(e + c, VARS), compile_expr(c, VARS)
    for point in itertools.product(*(range(i.lo, i.hi + 1) for i in (i0, i1, i2))):
        if fc(list(point)) in civ:
            assert fe(list(point)) in got, (e, c, civ, point, got)


def test_constrained_bounds_are_never_looser_than_the_box_alone():
    from symidx.core.expr import constrained_bounds

    # 3*d0 mod 9 for d0 in [0, 3] takes 0, 3, 6, 0: the box's rule knows it, a fact about
    # another expression does not loosen it
    e = Mod(3 * d0, 9)
    assert bounds(e, {d0: Interval(0, 3)}) == Interval(0, 6)
    assert constrained_bounds(e, {d0: Interval(0, 3)}, {d1: Interval(0, 0)}) in Interval(0, 6)


def test_constrained_bounds_use_a_constrained_sum_inside_a_larger_one():
    from symidx.core.expr import constrained_bounds

    env = {d0: Interval(0, 11), d1: Interval(0, 85)}
    x = d0 * 86 + d1
    assert bounds(FloorDiv(x, 64), env) == Interval(0, 16)
    assert constrained_bounds(FloorDiv(x, 64), env, {x: Interval(0, 1023)}) == Interval(0, 15)
    assert constrained_bounds(FloorDiv(x + 5, 64), env, {x: Interval(0, 1023)}) \
        == Interval(0, 16)  # 1028 // 64 = 16
    assert constrained_bounds(x - d1 + 1, env, {x: Interval(0, 1023)}) == Interval(1, 947)



# --- the order of a sum's terms -----------------------------------------------------------------
@given(st.lists(expressions([d0, d1, s0, dim(10), rt(0)], max_depth=3), min_size=2,
                max_size=6, unique=True))
def test_canonical_order_is_sympys(terms):
    """symidx sorts a sum's terms itself (``compare``, a faster ``Basic.compare``): the
    order must be the one sympy's own key gives, or sums would not be canonical."""
    from functools import cmp_to_key

    from sympy.core.add import _args_sortkey

    from symidx.core.expr import canonical_order, compare

    expected = sorted(terms, key=_args_sortkey)
    assert canonical_order(list(terms)) == expected
    assert sorted(terms, key=cmp_to_key(compare)) == expected
    for a, b in itertools.combinations(terms, 2):
        assert compare(a, b) == a.compare(b)


def test_exact_evaluation_holds_no_array_once_it_returns():
    """Its recursive walk is a reference cycle, which only the cyclic collector frees: the
    arrays it holds (the inputs, the shared sub-expressions' values) are let go on return,
    or an enumeration would keep every chunk's arrays until a collection (hundreds of MB
    in ``symidx bench``)."""
    import gc
    import weakref

    from symidx.core.expr import evaluate_exact

    shared = FloorDiv(d0 * 100 + d1, 7)
    x, y = np.arange(1000, dtype=np.int64), np.arange(1000, dtype=np.int64)
    refs = [weakref.ref(x), weakref.ref(y)]
    gc.disable()
    try:
        results, _ = evaluate_exact([shared + 1, Mod(shared, 3)], [d0, d1], [x, y])
        assert list(results[1][:3]) == [(i * 101 // 7) % 3 for i in range(3)]
        del x, y, results
        assert [r() for r in refs] == [None, None]
    finally:
        gc.enable()


@given(st.sampled_from([FloorDiv, CeilDiv, Mod]),
       expressions([dim(0), dim(1)], max_depth=2),
       st.sampled_from([Integer(-3), Integer(-1), Integer(1), Integer(2), Integer(7), sym(0)]),
       st.sampled_from([dim(0), dim(1) * 3 + 1, Integer(0), Integer(5), Integer(-4)]))
def test_a_division_rebuilt_with_its_own_divisor_folds_as_built_anew(op, dividend, divisor,
                                                                     new_dividend):
    from symidx.core.expr.sums import rebuild, substitute

    e = op(dividend, divisor, evaluate=False)  # also a unit divisor, kept as written
    rebuilt = rebuild(e, (new_dividend, divisor))
    assert rebuilt == op(new_dividend, divisor)
    # and through a substitution, checked by value at every point of a small grid
    done = substitute([e], {dim(0): dim(1) - 2})[0]
    for x, s in itertools.product(range(-3, 4), (-2, 3)):
        env = {dim(0): x - 2, dim(1): x, sym(0): s}
        want = e.subs(env)
        assert done.subs(env) == want
