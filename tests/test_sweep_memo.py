"""The memos a sweep leans on: the steps of an analysis's graphs hold one object per
distinct map, and the memo of compositions, keyed by the two maps' identities, keeps both
maps (so an identity is not reused while its entry lives) and answers equal but distinct
maps with an equal map."""

from __future__ import annotations

import gc

from hypothesis import assume, given
from hypothesis import strategies as st

from symidx.core.expr import FloorDiv, Mod, as_expr, bounds, dim, rt, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.simplify import compose
from symidx.core.syntax import parse_map
from symidx.fusion import Analysis
from symidx.fusion.sweep import Memo, _composition, _finished, _passes_through
from symidx.hlo import parse_hlo

TWO_NEGATES = """
HloModule m

ENTRY e {
  p = f32[4,8] parameter(0)
  a = f32[4,8] negate(p)
  b = f32[4,8] negate(a)
  ROOT c = f32[4,8] exponential(b)
}
"""

TWO_REVERSES = """
HloModule m

ENTRY e {
  p = f32[4,8] parameter(0)
  a = f32[4,8] reverse(p), dimensions={0}
  ROOT b = f32[4,8] reverse(a), dimensions={0}
}
"""


def test_steps_of_equal_maps_hold_one_object():
    comp = parse_hlo(TWO_NEGATES).entry
    analysis = Analysis()
    graph = analysis.graph(comp)
    maps = [graph.backward(comp.instruction(name), 0)[0].maps[0].map
            for name in ("a", "b", "c")]
    assert maps[0] == IndexingMap.identity(maps[0].dims)
    assert maps[0] is maps[1] is maps[2]


def test_steps_are_plain_without_an_intern_and_interned_with_one():
    from symidx.fusion.graph import IndexingGraph

    comp = parse_hlo(TWO_REVERSES).entry
    graph = IndexingGraph(comp, Analysis())
    a, b = (graph.backward(comp.instruction(name), 0)[0].maps[0].map for name in ("a", "b"))
    assert a == b and a is not b
    graph = Analysis().graph(comp)
    a, b = (graph.backward(comp.instruction(name), 0)[0].maps[0].map for name in ("a", "b"))
    assert a == parse_map("(d0, d1) -> (3 - d0, d1), domain: d0 in [0, 3], d1 in [0, 7]")
    assert a is b


def test_the_composition_memo_keeps_both_maps_and_answers_by_value():
    memo = Memo()
    first = parse_map("(d0) -> (d0 floordiv 4, d0 mod 4), domain: d0 in [0, 15]")
    second = parse_map("(d0, d1) -> (d0 * 4 + d1), domain: d0 in [0, 3], d1 in [0, 3]")
    found = _composition(first, second, memo)[2]
    assert found == parse_map("(d0) -> (d0), domain: d0 in [0, 15]")
    ((kept_first, kept_second, kept, freed),) = memo.composed.values()
    assert kept_first is first and kept_second is second and kept is found
    assert freed is kept  # it uses its dim: kept with it
    # equal maps built again are other objects: composed again, the same finished map
    again = _composition(parse_map(str(first)), parse_map(str(second)), memo)[2]
    assert again is found
    assert len(memo.composed) == 2


def test_the_composition_memo_keeps_a_map_without_the_dims_it_does_not_use():
    memo = Memo()
    first = parse_map("(d0, d1) -> (d1 * 0 + 3), domain: d0 in [0, 3], d1 in [0, 7]")
    second = parse_map("(d0) -> (d0 + 1), domain: d0 in [0, 9]")
    _composition(first, second, memo)
    ((_, _, kept, freed),) = memo.composed.values()
    assert kept == parse_map("(d0, d1) -> (4), domain: d0 in [0, 3], d1 in [0, 7]")
    assert freed == parse_map("() -> (4)")


def test_a_memo_entry_outlives_the_callers_references():
    memo = Memo()
    first = parse_map("(d0) -> (d0 + 1), domain: d0 in [0, 7]")
    second = parse_map("(d0) -> (d0 * 2), domain: d0 in [1, 8]")
    key = (id(first), id(second))
    _composition(first, second, memo)
    del first, second
    gc.collect()
    # the objects behind the key are alive (the entry holds them): no new map can take
    # their identities and be answered with their composition
    kept_first, kept_second, _, _ = memo.composed[key]
    assert (id(kept_first), id(kept_second)) == key


CONSTANT_READ = """
HloModule m

ENTRY e {
  p = f32[4,8] parameter(0)
  q = f32[8] parameter(1)
  k = f32[] constant(2)
  kb = f32[4,8] broadcast(k), dimensions={}
  i = s32[4,8] iota(), iota_dimension=1
  f = f32[4,8] convert(i)
  qb = f32[4,8] broadcast(q), dimensions={1}
  a = f32[4,8] multiply(p, kb)
  b = f32[4,8] add(a, f)
  ROOT c = f32[4,8] subtract(b, qb)
}
"""


def _key_names(found):
    return {name for name, _ in found}


def test_a_sweep_asked_for_some_instructions_makes_no_set_for_a_leaf_it_drops():
    """A sweep that returns only the parameters (``keep``) composes nothing into a constant
    or an iota (leaves it would drop): fewer compositions than the sweep that returns
    everything, and the same maps for what it returns, parameters and instructions in
    between alike."""
    comp = parse_hlo(CONSTANT_READ).entry
    whole = Analysis()
    everything = whole.backward(comp, comp.root)
    assert {"k", "i", "kb", "qb", "p", "q"} <= _key_names(everything)
    for keep in ({"p", "q"}, {"p", "q", "kb"}, {"q", "i"}):
        analysis = Analysis()
        found = analysis.backward(comp, comp.root, keep=keep)
        assert found == {key: r for key, r in everything.items() if key[0] in keep}
        assert len(analysis.memo.composed) < len(whole.memo.composed)
    # a kept leaf is still reached; one left outside ``within`` is not looked through
    analysis = Analysis()
    found = analysis.backward(comp, comp.root, within={"c", "b", "a"}, keep={"kb", "p"})
    assert _key_names(found) == {"kb", "p"}
    assert found[("kb", 0)] == everything[("kb", 0)]


def test_the_joint_sweep_gives_each_output_what_its_own_sweep_gives_past_a_constant():
    """:meth:`Analysis.backward_outputs` (``--output all``), which returns only the
    parameters, against each output's own sweep, on a computation whose outputs read a
    broadcast constant and an iota."""
    text = CONSTANT_READ.replace("ROOT c = f32[4,8] subtract(b, qb)",
                                 "c = f32[4,8] subtract(b, qb)\n"
                                 "  ROOT t = (f32[4,8], f32[4,8]) tuple(c, kb)")
    comp = parse_hlo(text).entry
    joint = Analysis().parameters_of_outputs(comp, [0, 1])
    for output, found in enumerate(joint):
        alone = Analysis().parameters_of(comp, output)
        assert {key: r.maps for key, r in found.items()} == \
            {key: r.maps for key, r in alone.items()}
    assert joint[1] == {}  # the second output reads a constant only


@st.composite
def _first_maps(draw):
    """Small maps as a sweep holds them: dims, range and runtime variables, results that
    are sums, floordivs and mods of them, and a constraint on a sum."""
    dims = [Interval(0, draw(st.integers(0, 5))) for _ in range(draw(st.integers(1, 2)))]
    ranges = [Interval(0, draw(st.integers(1, 4))) for _ in range(draw(st.integers(0, 2)))]
    rts = [Interval(draw(st.integers(-2, 0)), draw(st.integers(0, 3)))
           for _ in range(draw(st.integers(0, 1)))]
    variables = [dim(i) for i in range(len(dims))] + [sym(i) for i in range(len(ranges))] \
        + [rt(i) for i in range(len(rts))]

    def term():
        total = as_expr(draw(st.integers(-3, 3)))
        for v in variables:
            total += draw(st.integers(-2, 3)) * v
        kind = draw(st.sampled_from(["sum", "floordiv", "mod"]))
        if kind == "sum":
            return total
        c = draw(st.integers(1, 4))
        return FloorDiv(total, c) if kind == "floordiv" else Mod(total, c)

    results = [term() for _ in range(draw(st.integers(1, 3)))]
    constraints = []
    if draw(st.booleans()):
        lo = draw(st.integers(-4, 4))
        span = Interval(lo, lo + draw(st.integers(0, 6)))
        constraints.append((variables[0] + variables[-1], span))
    return IndexingMap.create(dims, results, ranges, rts, constraints)


@given(_first_maps(), st.lists(st.integers(0, 3), min_size=6, max_size=6))
def test_an_identity_step_finishes_its_first_map_as_the_composition_does(first, margins):
    """Where an identity map's dims hold every value of the first map's results (by their
    intervals), the sweep finishes the first map itself instead of composing: the answer
    is the one the composition's finish gives. Where a dim is too small, it composes."""
    assume(not first.is_known_empty)
    env = first.variable_bounds()
    spans = [bounds(r, env) for r in first.results]
    wide = IndexingMap.identity([Interval(s.lo - a, s.hi + b) for s, a, b in
                                 zip(spans, margins[::2], margins[1::2])])
    assert _passes_through(first, wide)
    assert _finished(first, wide) == _finished(compose(first, wide), wide)
    narrow = IndexingMap.identity([Interval(s.lo + 1, s.hi) if i == 0 else s
                                   for i, s in enumerate(spans)])
    assert not _passes_through(first, narrow)
    found = _composition(first, wide, Memo())
    assert found[2] == _finished(compose(first, wide), wide)
