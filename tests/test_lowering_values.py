"""symidx.lowering.values: the one resolver of what an index operand holds (constants, iotas,
tables and the policy that splits maps by them, a caller's fill, the typed source of a
runtime variable), and symidx.hlo.moves, the one table of ops that move values unchanged.

Every expected value is read off the HLO text by hand."""

from __future__ import annotations

import numpy as np
from sympy import Integer

from symidx.core.expr import dim, sym
from symidx.core.indexing_map import IndexingMap, ValueSource
from symidx.core.interval import Interval
from symidx.hlo import HloComputation, HloInstruction, Shape, parse_hlo
from symidx.hlo.moves import MOVES_ELEMENTS, MOVES_VALUES, PASSES_WHOLE
from symidx.lowering.values import (
    SCATTER_SPLIT_LIMIT,
    SPAN_LIMIT,
    SPLIT_LIMIT,
    KnownValue,
    Scope,
    constant_table,
    cross,
    exact_range,
    filling,
    held_at,
    integer_range,
    known_value_at,
    known_values,
    leaf_value,
    preserves_integers,
    splits,
    table_runs,
    table_span,
    value_source,
)
from symidx.ops._common import known_start

d0, d1 = dim(0), dim(1)


def entry_of(body: str, before: str = "") -> HloComputation:
    return parse_hlo(f"HloModule m\n{before}\nENTRY e {{\n{body}\n}}\n").entry


def named(comp: HloComputation, name: str) -> HloInstruction:
    return next(i for i in comp.instructions if i.name == name)


# --- the table of moves ----------------------------------------------------------------------


def test_the_moves_table() -> None:
    assert {"bitcast", "broadcast", "copy", "reshape", "reverse", "slice",
                              "transpose"} == MOVES_ELEMENTS
    assert {"copy", "opt-barrier", "domain"} == PASSES_WHOLE
    assert set(MOVES_VALUES) == MOVES_ELEMENTS | PASSES_WHOLE
    assert "convert" not in MOVES_VALUES and "add" not in MOVES_VALUES


def test_preserves_integers() -> None:
    e = entry_of("""  p = s32[4] parameter(0)
  wide = s64[4] convert(p)
  narrow = s16[4] convert(p)
  unsigned = u32[4] convert(p)
  f = f32[4] convert(p)
  r = s32[2,2] reshape(p)
  n = s32[4] negate(p)
  ROOT t = (s64[4], s16[4], u32[4], f32[4], s32[2,2], s32[4]) tuple(wide, narrow, unsigned,
                                                                    f, r, n)""")
    assert preserves_integers(named(e, "wide"))  # s32 fits s64
    assert not preserves_integers(named(e, "narrow"))  # s32 does not fit s16
    assert not preserves_integers(named(e, "unsigned"))  # negative s32 are not u32
    assert not preserves_integers(named(e, "f"))  # not an integer type
    assert preserves_integers(named(e, "r"))
    assert not preserves_integers(named(e, "n"))


# --- types -----------------------------------------------------------------------------------


def test_integer_and_exact_ranges() -> None:
    assert integer_range("s8") == Interval(-128, 127)
    assert integer_range("u16") == Interval(0, 65535)
    assert integer_range("s32") == Interval(-2147483648, 2147483647)
    assert integer_range("pred") is None and integer_range("f32") is None
    assert exact_range("s8") == Interval(-128, 127)
    assert exact_range("f32") == Interval(-16777216, 16777216)
    assert exact_range("bf16") == Interval(-256, 256)
    assert exact_range("pred") is None


# --- where a value is held -------------------------------------------------------------------


def test_value_source_names_the_holder() -> None:
    e = entry_of("""  q = s32[3] parameter(0)
  p = s32[3] parameter(1)
  c = s32[2] constant({4, 0})
  big = s32[11] constant({100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110})
  ROOT a = s32[3] add(p, p)""")
    p = value_source(named(e, "p"), e)
    assert str(p) == "parameter(1)" and p.parameter == 1 and p.instruction == "p"
    assert p.computation == "e"
    c = value_source(named(e, "c"))
    assert str(c) == "constant({4, 0})" and c.parameter is None and c.computation is None
    # a literal longer than 40 characters: named by the instruction's name
    assert str(value_source(named(e, "big"))) == "big"
    assert str(value_source(e.root)) == "a"


def test_sources_are_equal_when_they_print_the_same() -> None:
    """As when the source was text: two like-named holders in two computations are one."""
    one = ValueSource("parameter(1)", computation="f", instruction="x", parameter=1)
    other = ValueSource("parameter(1)", computation="g", instruction="y", parameter=1)
    assert one == other and hash(one) == hash(other)
    assert one != ValueSource("parameter(2)")


# --- constants and iotas ---------------------------------------------------------------------


def test_held_at_constants_tables_and_iotas() -> None:
    e = entry_of("""  c = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  i = s32[5,7] iota(), iota_dimension=1
  small = s8[200] iota(), iota_dimension=0
  fits = u8[256] iota(), iota_dimension=0
  ROOT t = (s32[2,3], s32[5,7], s8[200], u8[256]) tuple(c, i, small, fits)""")
    c = named(e, "c")
    assert held_at(c, [Integer(1), Integer(2)]) == 6
    assert held_at(c, [Integer(0), d0]) is None  # a varying element of a constant
    assert held_at(c, [Integer(1), Integer(0)], np.array([[7, 8, 9], [10, 11, 12]])) == 10
    assert held_at(named(e, "i"), [d0, d1]) == d1
    assert held_at(named(e, "i"), [Integer(3), Integer(4)]) == 4
    assert held_at(named(e, "small"), [d0]) is None  # s8 holds 0..127: 200 values wrap
    assert held_at(named(e, "fits"), [d0]) == d0  # u8 holds 0..255


def test_known_start_clamps_constants_and_keeps_iotas_in_bounds() -> None:
    e = entry_of("""  c = s32[3] constant({-2, 5, 40})
  i = s32[8] iota(), iota_dimension=0
  ROOT t = (s32[3], s32[8]) tuple(c, i)""")
    c, i = named(e, "c"), named(e, "i")
    feasible = Interval(0, 32)
    assert known_start(c, [Integer(0)], feasible, {}) == 0  # -2 clamped up
    assert known_start(c, [Integer(1)], feasible, {}) == 5
    assert known_start(c, [Integer(2)], feasible, {}) == 32  # 40 clamped down
    assert known_start(i, [d0], feasible, {d0: Interval(0, 7)}) == d0
    assert known_start(i, [d0], Interval(0, 3), {d0: Interval(0, 7)}) is None


def test_known_start_keeps_a_wrapping_iota_a_runtime_value() -> None:
    """An s8 iota of 200 elements holds -128 at element 128 (it wraps), which HLO clamps to
    0: the index is not the element's, so the start stays a runtime variable."""
    e = entry_of("  ROOT i = s8[200] iota(), iota_dimension=0")
    assert known_start(e.root, [d0], Interval(0, 250), {d0: Interval(0, 199)}) is None


def test_leaf_value() -> None:
    e = entry_of("""  c = f32[2] constant({3, 4.5})
  same = s32[2,2] constant({{7, 7}, {7, 7}})
  b = pred[2] constant({true, false})
  i = s32[4,5] iota(), iota_dimension=0
  ROOT t = (f32[2], s32[2,2], pred[2], s32[4,5]) tuple(c, same, b, i)""")
    c = named(e, "c")
    assert leaf_value(c, [Integer(0)]) == 3  # an integral float
    assert leaf_value(c, [Integer(1)]) is None  # 4.5
    assert leaf_value(c, [Integer(2)]) is None  # outside the literal
    assert leaf_value(named(e, "same"), [d0, d1]) == 7  # every element equal
    assert leaf_value(named(e, "b"), [Integer(0)]) is None  # a pred is no integer
    assert leaf_value(named(e, "i"), [d0 + 1, d1]) == d0 + 1


# --- tables ----------------------------------------------------------------------------------


def test_known_values_fold_constants_and_iotas() -> None:
    e = entry_of("""  i = s32[4] iota(), iota_dimension=0
  two = s32[] constant(2)
  b = s32[4] broadcast(two), dimensions={}
  ROOT m = s32[4] multiply(i, b)""")
    assert known_values(e.root).tolist() == [0, 2, 4, 6]
    p = entry_of("  ROOT p = s32[4] parameter(0)").root
    assert known_values(p) is None


def test_constant_table_and_its_span() -> None:
    e = entry_of("""  c = s32[4] constant({4, 0, 2, 2})
  f = f32[2] constant({1, 2})
  ROOT t = (s32[4], f32[2]) tuple(c, f)""")
    c = named(e, "c")
    assert constant_table(c).tolist() == [4, 0, 2, 2]
    assert constant_table(named(e, "f")) is None  # not an integer table
    # elements 1..3 hold 0, 2, 2
    assert table_span(c, IndexingMap.create([Interval(1, 3)], [d0])) == Interval(0, 2)
    # every element, through a range variable: (d0)[s0] -> (s0)
    assert table_span(c, IndexingMap.create([1], [sym(0)], [(0, 3)])) == Interval(0, 4)
    # an element outside the table: nothing is known
    assert table_span(c, IndexingMap.create([Interval(2, 4)], [d0])) is None


def test_table_runs_split_by_equal_values() -> None:
    c = entry_of("  ROOT c = s32[4] constant({4, 0, 2, 2})").root
    assert table_runs(c, [d0], d0, Interval(0, 3)) == [(0, 0, 4), (1, 1, 0), (2, 3, 2)]
    # read backwards, positions 1..3: elements 2, 1, 0 hold 2, 0, 4
    assert table_runs(c, [3 - d0], d0, Interval(1, 3)) == [(1, 1, 2), (2, 2, 0), (3, 3, 4)]
    assert table_runs(c, [d0 + 1], d0, Interval(0, 3)) is None  # element 4 is outside


def test_a_known_value_is_read_as_a_constant_holding_it() -> None:
    """Values known in place of their instruction (a loop counter in one state): read at a
    fixed element, where every element is equal, and as a table, as a constant holding
    them would be; the values by hand."""
    src = ValueSource("i")
    table = KnownValue(src, Shape("s32", (4,)), np.array([4, 0, 2, 2], dtype=np.int32))
    assert known_value_at(table, [Integer(2)]) == 2
    assert known_value_at(table, [d0]) is None  # a varying element, and the values differ
    assert known_value_at(table, [Integer(4)]) is None  # outside
    assert known_value_at(table, [Integer(-1)]) is None
    assert known_value_at(table, []) is None  # the whole array is no element
    same = KnownValue(src, Shape("s32", (3,)), np.full(3, 7, dtype=np.int32))
    assert known_value_at(same, [d0]) == 7
    assert known_value_at(KnownValue(src, Shape("u8", ()), np.array(200, np.uint8)), []) == 200
    # a pred is no integer; a value the element type does not hold is not taken
    assert known_value_at(KnownValue(src, Shape("pred", ()), np.array(True)), []) is None
    assert known_value_at(KnownValue(src, Shape("s8", ()), np.array(200)), []) is None
    # as a table: elements 1..3 hold 0, 2, 2; runs along d0 as for the constant above
    assert table_span(table, IndexingMap.create([Interval(1, 3)], [d0])) == Interval(0, 2)
    assert table_span(table, IndexingMap.create([Interval(2, 4)], [d0])) is None
    assert table_runs(table, [d0], d0, Interval(0, 3)) == [(0, 0, 4), (1, 1, 0), (2, 3, 2)]
    # values of other dims than the shape's, or not integers, are no table
    odd = KnownValue(src, Shape("s32", (2, 2)), np.array([4, 0, 2, 2], dtype=np.int32))
    assert table_span(odd, IndexingMap.create([Interval(0, 3)], [d0])) is None
    flags = KnownValue(src, Shape("pred", (2,)), np.array([True, False]))
    assert table_runs(flags, [d0], d0, Interval(0, 1)) is None


def test_the_splitting_policy_has_one_limit() -> None:
    assert SCATTER_SPLIT_LIMIT == SPLIT_LIMIT // 4
    assert splits(SPLIT_LIMIT) and not splits(SPLIT_LIMIT + 1)
    assert splits(16, SCATTER_SPLIT_LIMIT) and not splits(17, SCATTER_SPLIT_LIMIT)
    many = entry_of(f"  ROOT i = s32[{SPLIT_LIMIT + 1}] iota(), iota_dimension=0").root
    # an iota is no constant table; a constant of SPLIT_LIMIT + 1 distinct values is too many
    assert table_runs(many, [d0], d0, Interval(0, SPLIT_LIMIT)) is None
    values = ", ".join(str(k) for k in range(SPLIT_LIMIT + 1))
    table = entry_of(f"  ROOT c = s32[{SPLIT_LIMIT + 1}] constant({{{values}}})").root
    assert table_runs(table, [d0], d0, Interval(0, SPLIT_LIMIT)) is None
    assert table_runs(table, [d0], d0, Interval(0, SPLIT_LIMIT - 1)) == [
        (k, k, k) for k in range(SPLIT_LIMIT)]
    zeros = ", ".join("0" * (SPAN_LIMIT + 1))
    zero = entry_of(f"  ROOT z = s32[{SPAN_LIMIT + 1}] constant({{{zeros}}})").root
    assert table_runs(zero, [d0], d0, Interval(0, SPAN_LIMIT - 1)) == [(0, SPAN_LIMIT - 1, 0)]
    # a span longer than SPAN_LIMIT is not read, even for one run
    assert table_runs(zero, [d0], d0, Interval(0, SPAN_LIMIT)) is None


# --- a caller's fill -------------------------------------------------------------------------


CALLED = """
f {
  x = s32[3] parameter(0)
  ROOT n = s32[3] negate(x)
}
"""


def test_filling_follows_a_parameter_to_its_single_caller() -> None:
    module = parse_hlo(f"""HloModule m
{CALLED}
ENTRY e {{
  c = s32[3] constant({{1, 2, 3}})
  ROOT k = s32[3] call(c), to_apply=f
}}""")
    f = module.computations["f"]
    x = f.parameters[0]
    held = filling(x, Scope(f))
    assert held is not None and held.name == "c"
    # the call's output comes from the root of the computation it runs
    crossed = cross(module.entry.root, Scope(module.entry))
    assert crossed is not None and crossed[0].name == "n" and crossed[1].comp is f
    # not a parameter: nothing to fill
    assert filling(f.root, Scope(f)) is None


def test_filling_is_unknown_with_two_callers_unless_the_scope_says() -> None:
    module = parse_hlo(f"""HloModule m
{CALLED}
ENTRY e {{
  c = s32[3] constant({{1, 2, 3}})
  d = s32[3] constant({{4, 5, 6}})
  k = s32[3] call(c), to_apply=f
  l = s32[3] call(d), to_apply=f
  ROOT t = (s32[3], s32[3]) tuple(k, l)
}}""")
    f = module.computations["f"]
    x = f.parameters[0]
    assert filling(x, Scope(f)) is None  # which call fills it is not known
    d = named(module.entry, "d")
    held = filling(x, Scope(f, (d,), Scope(module.entry)))
    assert held is d


def test_values_known_in_a_computation_follow_its_single_caller() -> None:
    """``folded``/``known_in``: a fusion's parameter filled by its one caller with a folded
    table is that table; one filled by an entry parameter depends on an input
    (``reads_input``), and so is unknown without evaluating; ``known_values`` knows neither
    (it does not leave the computation)."""
    from symidx.lowering.values import known_in, reads_input

    module = parse_hlo("""HloModule m
f {
  t = s32[3] parameter(0)
  x = s32[3] parameter(1)
  one = s32[] constant(1)
  ones = s32[3] broadcast(one), dimensions={}
  a = s32[3] add(t, ones)
  ROOT b = s32[3] add(x, ones)
}
ENTRY e {
  i = s32[3] iota(), iota_dimension=0
  p = s32[3] parameter(0)
  ROOT r = s32[3] fusion(i, p), kind=kLoop, calls=f
}""")
    f = module.computation("f")
    a, b = f.instruction("a"), f.instruction("b")
    assert known_in(a, f).tolist() == [1, 2, 3]
    assert known_values(a) is None
    assert not reads_input(a, f) and reads_input(b, f)
    assert known_in(b, f) is None
    assert known_in(module.entry.instruction("i"), f).tolist() == [0, 1, 2]  # not f's: plain
