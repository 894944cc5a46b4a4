"""The rules of :mod:`symidx.core.simplify.existential`, checked against brute force: the image of
every source index (the set of targets, over every value of the range and runtime
variables, SPEC §1) is the same before and after."""

from __future__ import annotations

import itertools

from hypothesis import assume, given
from hypothesis import strategies as st

from symidx.core.expr import FloorDiv, Mod, add, bounds, dim, rt, scale, sym
from symidx.core.expr.evaluate import compile_expr
from symidx.core.indexing_map import IndexingMap, RuntimeVar, ValueSource
from symidx.core.interval import Interval
from symidx.core.simplify.existential import (
    EXISTENTIAL_RULES,
    _difference_bounds,
    drop_implied_constraints,
    has_existential,
    merge_equal_existentials,
    order_range_vars,
    oriented,
    project_existentials,
    tidy_existentials,
)
from symidx.core.syntax import parse_map
from symidx.strategies import expressions, intervals

DIMS = [Interval(0, 3)]


def _images(m: IndexingMap) -> list[set[tuple[int, ...]]]:
    return [m.image((d,)) for d in range(DIMS[0].lo, DIMS[0].hi + 1)]


def _variables(nr: int, nt: int) -> list:
    return [dim(0)] + [sym(i) for i in range(nr)] + [rt(i) for i in range(nt)]


@st.composite
def linear_constraint(draw, variables, nonlinear: bool = True):
    """``sum c*v + k in [lo, hi]`` over some of ``variables`` (coefficients mostly +-1, some
    2 or -2), now and then with a floordiv or mod of one variable added."""
    picked = draw(st.lists(st.sampled_from(variables), min_size=1, max_size=3, unique=True))
    e = sum(draw(st.sampled_from([1, -1, 1, -1, 2, -2])) * v for v in picked)
    if nonlinear and draw(st.integers(0, 4)) == 0:
        v = draw(st.sampled_from(variables))
        e = e + (FloorDiv(v, 2) if draw(st.booleans()) else Mod(v, 2))
    e = e + draw(st.integers(-2, 2))
    lo = draw(st.integers(-4, 3))
    return e, Interval(lo, lo + draw(st.integers(0, 4)))


@st.composite
def existential_maps(draw):
    """Maps of one dim whose range and runtime variables are partly unused by the results
    and tied to the others by constraints (as a chain of attention hops leaves them)."""
    nr = draw(st.integers(1, 4))
    nt = draw(st.integers(0, 2))
    ranges = []
    for _ in range(nr):
        lo = draw(st.integers(-1, 1))
        ranges.append(Interval(lo, lo + draw(st.integers(0, 3))))
    rts = [RuntimeVar(Interval(0, draw(st.integers(1, 3))), ValueSource("x"))
           for _ in range(nt)]
    variables = _variables(nr, nt)
    shown = draw(st.lists(st.sampled_from(variables[:1 + nr]), min_size=1, max_size=2))
    results = [v + draw(st.integers(-1, 1)) for v in shown]
    if draw(st.integers(0, 3)) == 0:
        results.append(FloorDiv(shown[0] + dim(0), 2))
    constraints = draw(st.lists(linear_constraint(variables), min_size=1, max_size=4))
    return IndexingMap.create(DIMS, results, ranges, rts, constraints)


def _check_same(before: IndexingMap, after: IndexingMap) -> None:
    if after.is_known_empty:
        assert all(not image for image in _images(before))
        return
    assert _images(after) == _images(before)


@given(existential_maps(), st.integers(1, 16))
def test_project_existentials_keeps_every_image(m, limit):
    projected, removed = project_existentials(m, limit)
    if not projected.is_known_empty:
        assert projected.num_ranges == m.num_ranges - len(removed)
    _check_same(m, projected)


@given(existential_maps())
def test_drop_implied_constraints_keeps_every_image(m):
    found, dropped = drop_implied_constraints(m)
    assert len(found.constraints) <= len(m.constraints)
    _check_same(m, found)


@st.composite
def repeated_groups(draw):
    """Maps whose unused variables come in groups, some a copy of another under a renaming
    (its constraints perhaps spelled negated, or with a looser interval the variables'
    bounds cut back), some almost a copy (another interval, another coefficient)."""
    source = draw(st.sampled_from([ValueSource("a"), ValueSource("b")]))
    lo = draw(st.integers(-1, 1))
    s_iv = Interval(lo, lo + draw(st.integers(0, 2)))
    t_iv = Interval(0, draw(st.integers(1, 3)))
    ranges: list[Interval] = [Interval(0, 3)]  # s0: in the results
    rts: list[RuntimeVar] = []
    results = [sym(0) + dim(0) * draw(st.integers(0, 1))]
    template = draw(st.lists(st.tuples(st.sampled_from([1, -1]), st.sampled_from([1, -1, 0]),
                                       st.sampled_from([1, -1, 0]), st.integers(-2, 2),
                                       st.integers(0, 3)), min_size=1, max_size=2))
    constraints = []
    for _ in range(draw(st.integers(1, 3))):
        x = sym(len(ranges))
        ranges.append(s_iv)
        y = rt(len(rts))
        rts.append(RuntimeVar(t_iv, source))
        for a, b, c, k, w in template:
            if draw(st.integers(0, 5)) == 0:
                k += 1  # almost a copy
            e = a * x + b * y + c * sym(0) + k
            iv = Interval(-1, -1 + w)
            if draw(st.booleans()):
                e, iv = -e, Interval(-iv.hi, -iv.lo)
            if draw(st.booleans()):
                iv = Interval(iv.lo - 20, iv.hi) if draw(st.booleans()) else \
                    Interval(iv.lo, iv.hi + 20)
            constraints.append((e, iv))
    return IndexingMap.create(DIMS, results, ranges, rts, constraints)


@given(repeated_groups())
def test_merge_equal_existentials_keeps_every_image(m):
    merged, removed = merge_equal_existentials(m)
    assert merged.num_ranges + merged.num_rts == m.num_ranges + m.num_rts - len(removed)
    _check_same(m, merged)


@given(existential_maps())
def test_merge_equal_existentials_on_any_map(m):
    _check_same(m, merge_equal_existentials(m)[0])


@given(existential_maps())
def test_order_range_vars_keeps_every_image(m):
    ordered = order_range_vars(m)
    _check_same(m, ordered)
    assert order_range_vars(ordered) == ordered


@given(existential_maps(), st.permutations(range(4)))
def test_order_range_vars_makes_renamed_maps_one(m, order):
    """A map with its range variables renamed (listed in another order) becomes the same
    map, when the results use each of them (their order is then the results')."""
    assume(not m.is_known_empty)
    perm = [i for i in order if i < m.num_ranges]
    rename = {sym(old): sym(new) for new, old in enumerate(perm)}
    exprs = [e.xreplace(rename) for e in (*m.results, *(e for e, _ in m.constraints))]
    n = len(m.results)
    other = IndexingMap.create(m.dims, exprs[:n], [m.ranges[i] for i in perm], m.rts,
                               list(zip(exprs[n:], (iv for _, iv in m.constraints))))
    _check_same(m, other)
    used = set().union(*(r.free_symbols for r in m.results))
    if all(sym(i) in used for i in range(m.num_ranges)) and \
            len({_first_result(m, sym(i)) for i in range(m.num_ranges)}) == m.num_ranges:
        assert order_range_vars(other) == order_range_vars(m)


def _first_result(m: IndexingMap, v) -> int:
    return next(k for k, r in enumerate(m.results) if v in r.free_symbols)


@given(existential_maps())
def test_tidy_existentials_keeps_every_image(m):
    from symidx.core.simplify.finish import finish

    m = finish(m)
    _check_same(m, tidy_existentials(m))


@given(st.integers(-3, 3), st.integers(0, 3), st.booleans())
def test_oriented_says_the_same(k, width, flip):
    e = (-1 if flip else 1) * (sym(0) - rt(0)) + k
    iv = Interval(-2, -2 + width)
    spelled, interval = oriented(e, iv)
    env = {sym(0): Interval(0, 3), rt(0): Interval(0, 3)}
    for a, b in itertools.product(range(4), repeat=2):
        value = {sym(0): a, rt(0): b}
        assert (int(e.subs(value)) in iv) == (int(spelled.subs(value)) in interval)
    assert next(c for c, x in _terms(spelled) if x == sym(0)) > 0
    del env


def _terms(e):
    from symidx.core.expr import terms

    return terms(e)


# --- the shapes the rules are for -----------------------------------------------------------

def _hops(n: int, seq: int = 6) -> IndexingMap:
    """``n`` causal-attention hops over a sequence whose length is a runtime value: row
    ``d0`` reads row ``s0`` no later than it, which reads ``s1`` no later than that, ...;
    every row below the run-time length ``rt1 - rt0`` (one copy of the bounds per hop,
    as the bounds' elements forgotten leave them)."""
    rows = [dim(0)] + [sym(k) for k in range(n)]
    constraints = []
    rts = []
    for k in range(n):
        lo, hi = rt(2 * k), rt(2 * k + 1)
        rts += [RuntimeVar(Interval(0, 2 * seq), ValueSource("cu")),
                RuntimeVar(Interval(0, 2 * seq), ValueSource("cu_end"))]
        constraints.append((rows[k + 1] - rows[k], Interval(-3 * seq, 0)))
        constraints.append((rows[k + 1] + lo - hi, Interval(-3 * seq, -1)))
    return IndexingMap.create([Interval(0, seq - 1)], [rows[-1]],
                              [Interval(0, seq - 1)] * n, rts, constraints)


def test_attention_hops_keep_the_one_hop_form():
    from symidx.core.simplify.finish import finish

    one = finish(_hops(1, seq=3))
    assert not project_existentials(one)[1]  # the one hop's row is in the result
    for n in (2, 3, 5):
        chain = finish(_hops(n, seq=3))
        assert has_existential(chain)
        tidy = tidy_existentials(chain)
        assert tidy.num_ranges == 1 and tidy.num_rts == 2, str(tidy)
        # brute force over the chain's own variables is affordable for two hops only
        # (four runtime variables); the rules' soundness is checked above on every shape
        for d in range(3):
            assert tidy.image((d,)) == one.image((d,))
            if n == 2:
                assert chain.image((d,)) == one.image((d,))


def test_project_existentials_on_a_chain():
    m = parse_map("(d0)[s0, s1] -> (s1), domain: d0 in [0, 9], s0 in [0, 9], s1 in [0, 9], "
                  "s1 - s0 in [-9, 0], s0 - d0 in [-9, 0]")
    projected, removed = project_existentials(m)
    assert removed == [0] and projected.num_ranges == 1
    assert all(projected.image((d,)) == {(k,) for k in range(d + 1)} for d in range(10))
    # a coefficient of 2: integer projection is not exact that way, so the variable stays
    doubled = parse_map("(d0)[s0, s1] -> (s1), domain: d0 in [0, 9], s0 in [0, 9], "
                        "s1 in [0, 19], s1 - s0 * 2 in [0, 0], s0 - d0 in [-9, 0]")
    assert project_existentials(doubled) == (doubled, [])


def test_merge_equal_existentials_drops_a_repeated_group():
    m = parse_map("(d0)[s0]{rt0, rt1, rt2, rt3} -> (s0), domain: d0 in [0, 9], "
                  "s0 in [0, 9], rt0 in [0, 20], rt1 in [0, 20], rt2 in [0, 20], "
                  "rt3 in [0, 20], s0 + rt0 - rt1 in [-30, -1], -s0 - rt2 + rt3 in [1, 20]")
    merged, removed = merge_equal_existentials(m)
    assert merged.num_rts == 2 and removed == [3, 4]  # s0 first, then rt0 .. rt3
    # another interval: not a copy
    other = parse_map("(d0)[s0]{rt0, rt1, rt2, rt3} -> (s0), domain: d0 in [0, 9], "
                      "s0 in [0, 9], rt0 in [0, 20], rt1 in [0, 20], rt2 in [0, 20], "
                      "rt3 in [0, 20], s0 + rt0 - rt1 in [-30, -1], s0 + rt2 - rt3 in [-30, -2]")
    assert merge_equal_existentials(other) == (other, [])


def test_the_group_kept_is_the_same_whatever_the_hash_seed():
    """Of two equal groups, the one whose first variable comes first by name is kept, in
    every process: the groups were once ordered by a root that depended on the order in
    which a set of symbols iterates, so that processes with other hash seeds dropped the
    other group (the same relation, another text)."""
    import os
    import subprocess
    import sys

    probe = ("from symidx.core.syntax import parse_map\n"
             "from symidx.core.simplify.existential import merge_equal_existentials\n"
             "m = parse_map('(d0)[s0]{rt0, rt1, rt2, rt3} -> (s0), domain: d0 in [0, 9], "
             "s0 in [0, 9], rt0 in [0, 20], rt1 in [0, 20], rt2 in [0, 20], rt3 in [0, 20], "
             "s0 + rt0 - rt3 in [-30, -1], s0 + rt1 - rt2 in [-30, -1]')\n"
             "print(merge_equal_existentials(m)[1])\n")
    seen = set()
    for seed in range(6):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        seen.add(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                env=env, check=True).stdout.strip())
    assert seen == {"[2, 3]"}  # rt1 and rt2 go; rt0 and rt3 (rt0 first) stay


def test_every_existential_rule_is_documented_in_the_merges_table():
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "simplifier.md").read_text()
    table = doc[doc.index("## Merges"):]
    for name, fn in EXISTENTIAL_RULES.items():
        assert f"| `{name}`" in table and f"`{fn.__name__}`" in table, name


def test_merge_equal_existentials_tries_a_few_renamings_of_a_large_group_not_all():
    """Two groups of ten range variables alike (one interval), each variable in three
    constraints ``a - b in [-1, 1]``: the Petersen graph and a pentagonal prism, which no
    renaming makes alike though every variable plays the same part. 10! = 3,628,800
    renamings, of which only the first few are tried, one at a time, each made and let
    go: a list of all of them would hold hundreds of megabytes (a MobileNetV2 training
    step's maps ran out of 8 GB so)."""
    import tracemalloc

    ring = [(i, (i + 1) % 5) for i in range(5)] + [(i, i + 5) for i in range(5)]
    petersen = ring + [(5 + i, 5 + (i + 2) % 5) for i in range(5)]
    prism = ring + [(5 + i, 5 + (i + 1) % 5) for i in range(5)]

    def group(edges, first):
        return [f"s{first + a} - s{first + b} in [-1, 1]" for a, b in edges]

    def two(one, other):
        names = ", ".join(f"s{i}" for i in range(20))
        ranges = ", ".join(f"s{i} in [0, 3]" for i in range(20))
        return parse_map(f"(d0)[{names}] -> (d0), domain: d0 in [0, 9], {ranges}, "
                         + ", ".join(group(one, 0) + group(other, 10)))

    m = two(petersen, prism)
    tracemalloc.start()
    try:
        assert merge_equal_existentials(m) == (m, [])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000
    # two prisms: alike, one group merged away
    merged, removed = merge_equal_existentials(two(prism, prism))
    assert len(removed) == 10 and merged.num_ranges == 10


_VARS = [dim(0), dim(1), sym(0)]


@given(expressions(_VARS), expressions(_VARS),
       st.lists(intervals(-6, 9, 6), min_size=3, max_size=3))
def test_the_interval_of_a_difference_is_that_of_the_sum_built(f, e, spans):
    """``_dominated``'s gap between two bounds, worked out from their terms, is the
    interval :func:`bounds` gives the difference built as an expression; and it holds
    every value of the difference (brute force)."""
    env = dict(zip(_VARS, spans))
    gap = _difference_bounds(f, e, env, {})
    assert gap == bounds(add([f, scale(-1, e)]), env)
    difference = compile_expr(add([f, scale(-1, e)]), _VARS)
    for point in itertools.product(*(range(b.lo, b.hi + 1) for b in spans)):
        try:
            value = difference(point)
        except ZeroDivisionError:  # a divisor that is 0 there: no value
            continue
        assert gap.lo <= value <= gap.hi
