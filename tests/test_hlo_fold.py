"""symidx.hlo.fold: the integer values instructions hold before the program runs, from
constants, iotas and given parameter leaves; anything else unknown (None), never guessed.
Expected values are worked out by hand, or (the random programs) by the reference
interpreter, written from the ops' definitions."""

from __future__ import annotations

import numpy as np
from hlo_text import scalar_computation
from hypothesis import given
from hypothesis import strategies as st
from reference_interpreter import execute

from symidx.hlo import HloComputation, parse_hlo
from symidx.hlo.fold import LIMIT, Evaluator, integer_values
from symidx.hlo.leaves import leaf_count, leaves
from symidx.strategies import hlo_modules


def entry_of(body: str, before: str = "") -> HloComputation:
    return parse_hlo(f"HloModule m\n{before}\nENTRY e {{\n{body}\n}}\n").entry


def root_of(body: str, before: str = ""):  # noqa: ANN201
    return entry_of(body, before).root


# --- integer_values: constants and iotas -------------------------------------------------------


def test_moves_of_a_constant_table() -> None:
    r = root_of("""  c = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  t = s32[3,2] transpose(c), dimensions={1,0}
  s = s32[2,2] slice(t), slice={[1:3], [0:2]}
  v = s32[2,2] reverse(s), dimensions={0}
  b = s32[2,2,2] broadcast(v), dimensions={1,2}
  k = s32[2,2,1] constant({{{7}, {8}}, {{9}, {0}}})
  ROOT cat = s32[2,2,3] concatenate(b, k), dimensions={2}""")
    values = integer_values(r)
    assert values is not None
    table = np.array([[1, 2, 3], [4, 5, 6]]).T[1:3][::-1]
    expected = np.concatenate([np.broadcast_to(table, (2, 2, 2)),
                               np.array([[[7], [8]], [[9], [0]]])], axis=2)
    assert values.tolist() == expected.tolist()


def test_a_broadcast_places_the_operand_along_its_dimensions() -> None:
    r = root_of("""  c = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  ROOT b = s32[3,4,2] broadcast(c), dimensions={2,0}""")
    # out[i, j, k] = c[k, i]
    assert integer_values(r).tolist() == [[[1, 4]] * 4, [[2, 5]] * 4, [[3, 6]] * 4]


def test_arithmetic_wraps_at_the_element_width() -> None:
    r = root_of("""  a = s8[2] constant({100, -100})
  ROOT s = s8[2] add(a, a)""")
    assert integer_values(r).tolist() == [-56, 56]  # 200 and -200 wrapped to 8 bits
    r = root_of("""  a = u8[2] constant({3, 250})
  b = u8[2] constant({5, 10})
  ROOT s = u8[2] subtract(a, b)""")
    assert integer_values(r).tolist() == [254, 240]
    r = root_of("""  i = u8[300] iota(), iota_dimension=0
  ROOT s = u8[2] slice(i), slice={[255:257]}""")
    assert integer_values(r).tolist() == [255, 0]


def test_predicates_select_and_clamp() -> None:
    r = root_of("""  i = s32[4] iota(), iota_dimension=0
  two = s32[] constant(2)
  t = s32[4] broadcast(two), dimensions={}
  lt = pred[4] compare(i, t), direction=LT
  n = s32[4] negate(i)
  s = s32[4] select(lt, n, i)
  lo = s32[] constant(-1)
  hi = s32[] constant(2)
  ROOT c = s32[4] clamp(lo, s, hi)""")
    assert integer_values(r).tolist() == [0, -1, 2, 2]


def test_division_truncates_toward_zero() -> None:
    body = """  a = s32[4] constant({7, -7, 7, -7})
  b = s32[4] constant({2, 2, -2, -2})
  ROOT d = s32[4] OP(a, b)"""
    assert integer_values(root_of(body.replace("OP", "divide"))).tolist() == [3, -3, -3, 3]
    assert integer_values(root_of(body.replace("OP", "remainder"))).tolist() == [1, -1, 1, -1]
    r = root_of("""  a = s64[] constant(-9223372036854775808)
  b = s64[] constant(4)
  ROOT d = s64[] divide(a, b)""")
    assert int(integer_values(r)) == -(2 ** 61)


def test_unary_ops_and_converts() -> None:
    r = root_of("""  a = s8[4] constant({-128, -3, 0, 5})
  m = s8[4] abs(a)
  s = s8[4] sign(a)
  n = s8[4] not(a)
  p = pred[4] convert(a)
  q = pred[4] not(p)
  w = s32[4] convert(q)
  ROOT t = (s8[4], s8[4], s8[4], s32[4]) tuple(m, s, n, w)""")
    values = Evaluator({})
    assert [values.value(r, k).tolist() for k in range(4)] == [
        [-128, 3, 0, 5],  # |-128| wraps back to -128 in 8 bits
        [-1, -1, 0, 1], [127, 2, -1, -6], [0, 0, 1, 0]]


def test_a_bitcast_reads_the_elements_in_memory_order() -> None:
    body = """  c = s32[2,3]{1,0} constant({{0, 1, 2}, {3, 4, 5}})
  ROOT b = TYPE bitcast(c)"""
    # memory 0..5; s32[3,2]{0,1}: element (i, j) at i + 3j; s32[2,3]{0,1}: at i + 2j
    assert integer_values(root_of(body.replace("TYPE", "s32[3,2]{0,1}"))).tolist() == [
        [0, 3], [1, 4], [2, 5]]
    assert integer_values(root_of(body.replace("TYPE", "s32[2,3]{0,1}"))).tolist() == [
        [0, 2, 4], [1, 3, 5]]
    assert integer_values(root_of(body.replace("TYPE", "s32[6]{0}"))).tolist() == [0, 1, 2, 3, 4, 5]
    assert integer_values(root_of(body.replace("TYPE", "s32[2,3]{1,0:T(2,2)}"))) is None  # tiled


def test_values_follow_tuples_and_called_computations() -> None:
    comp = entry_of("""  k = s32[] constant(4)
  f = (s32[3], s32[]) fusion(k), kind=kLoop, calls=table
  t = s32[3] get-tuple-element(f), index=0
  ROOT c = s32[3] call(t), to_apply=negative""", before="""
table {
  n = s32[] parameter(0)
  i = s32[3] iota(), iota_dimension=0
  b = s32[3] broadcast(n), dimensions={}
  m = s32[3] multiply(i, b)
  ROOT t = (s32[3], s32[]) tuple(m, n)
}

negative {
  x = s32[3] parameter(0)
  ROOT n = s32[3] negate(x)
}""")
    assert integer_values(comp.root).tolist() == [0, -4, -8]


def test_a_long_chain_needs_no_recursion() -> None:
    lines = ["  v0 = s32[] constant(0)", "  one = s32[] constant(1)"]
    lines += [f"  v{k + 1} = s32[] add(v{k}, one)" for k in range(3000)]
    lines[-1] = "  ROOT" + lines[-1][1:]
    assert int(integer_values(root_of("\n".join(lines)))) == 3000


# --- the Evaluator: given parameter leaves -----------------------------------------------------


def test_the_evaluator_follows_integer_arithmetic_and_wraps() -> None:
    comp = parse_hlo("""HloModule m
ENTRY e {
  p = (s32[], s8[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  b = s8[] get-tuple-element(p), index=1
  neg = pred[] compare(i, s32[] constant(0)), direction=LT
  wrapped = s32[] add(i, s32[] constant(5))
  idx = s32[] select(neg, wrapped, i)
  q = s32[] divide(idx, s32[] constant(-2))
  r = s32[] remainder(idx, s32[] constant(-2))
  big = s8[] add(b, s8[] constant(100))
  ROOT t = (s32[], s32[], s32[], s8[]) tuple(idx, q, r, big)
}
""").entry
    values = Evaluator({0: (np.asarray(-3, np.int32), np.asarray(100, np.int8))})
    assert [int(values.value(comp.root, k)) for k in range(4)] == [2, -1, 0, -56]
    values = Evaluator({0: (np.asarray(7, np.int32), None)})
    assert [int(values.value(comp.root, k)) for k in range(3)] == [7, -3, 1]
    assert values.value(comp.root, 3) is None  # b unknown


def test_given_leaves_reach_a_called_computation() -> None:
    comp = entry_of("""  p = s32[2] parameter(0)
  q = s32[2] parameter(1)
  ROOT f = (s32[2], s32[2]) fusion(p, q), kind=kLoop, calls=pair""", before="""
pair {
  a = s32[2] parameter(0)
  b = s32[2] parameter(1)
  s = s32[2] subtract(a, b)
  ROOT t = (s32[2], s32[2]) tuple(s, b)
}""")
    values = Evaluator({0: (np.array([5, 1], np.int32),), 1: (np.array([2, 3], np.int32),)})
    assert values.value(comp.root, 0).tolist() == [3, -2]
    assert values.value(comp.root, 1).tolist() == [2, 3]
    values = Evaluator({1: (np.array([2, 3], np.int32),)})  # parameter 0 not given
    assert values.value(comp.root, 0) is None
    assert values.value(comp.root, 1).tolist() == [2, 3]


# --- unknown -----------------------------------------------------------------------------------


def test_unknown_values() -> None:
    assert integer_values(root_of("""  p = s32[3] parameter(0)
  ROOT n = s32[3] negate(p)""")) is None
    assert integer_values(root_of("""  f = f32[] constant(1.5)
  ROOT c = s32[] convert(f)""")) is None
    assert integer_values(root_of("""  a = s32[2] constant({7, 2})
  z = s32[2] constant({1, 0})
  ROOT d = s32[2] divide(a, z)""")) is None  # by zero
    assert integer_values(root_of("""  a = s64[] constant(-9223372036854775808)
  m = s64[] constant(-1)
  ROOT d = s64[] divide(a, m)""")) is None  # overflows int64
    assert integer_values(root_of("""  a = u64[2] constant({1, 2})
  ROOT n = u64[2] add(a, a)""")) is None
    assert integer_values(root_of("""  c = s32[4,1] constant({{1}, {2}, {3}, {4}})
  i = s32[2,1] constant({{1}, {3}})
  ROOT g = s32[2,1] gather(c, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0},
    index_vector_dim=1, slice_sizes={1,1}""")) is None  # not evaluated
    assert integer_values(root_of("""  a = f32[2] constant({1, 2})
  s = f32[2] add(a, a)
  ROOT c = s32[2] convert(s)""")) is None  # floating-point arithmetic rounds
    big = LIMIT + 1
    assert integer_values(root_of(f"  ROOT i = s32[{big}] iota(), iota_dimension=0")) is None
    assert integer_values(root_of(f"""  i = s32[{big}] iota(), iota_dimension=0
  ROOT s = s32[2] slice(i), slice={{[0:2]}}""")) is None


def test_given_leaves_of_the_wrong_count_are_unknown() -> None:
    comp = entry_of("""  p = (s32[], s32[]) parameter(0)
  ROOT g = s32[] get-tuple-element(p), index=1""")
    assert Evaluator({0: (np.asarray(1, np.int32),)}).value(comp.root) is None
    assert int(Evaluator({0: (None, np.asarray(2, np.int32))}).value(comp.root)) == 2


# --- random programs against the reference interpreter -----------------------------------------

INTEGER_PROGRAMS = hlo_modules(
    max_ops=6, fused=True, max_inputs=2, shared=True, tuple_root=True, max_elements=64,
    opcodes=("negate", "add", "multiply", "transpose", "reverse", "broadcast", "reshape",
             "slice", "concatenate", "fusion"))


@given(INTEGER_PROGRAMS, st.data())
def test_random_programs_match_the_reference_interpreter(text: str, data: st.DataObject
                                                         ) -> None:
    comp = parse_hlo(text.replace("f32", "s32")).entry
    args = []
    for param in comp.parameters:
        dims = leaves(param.shape)[0].dims
        count = int(np.prod(dims, dtype=np.int64))
        flat = data.draw(st.lists(st.integers(-3, 3), min_size=count, max_size=count))
        args.append(np.array(flat, np.int32).reshape(dims))
    run = execute(comp, args)
    values = Evaluator({p: (a,) for p, a in enumerate(args)})
    for lf in range(leaf_count(comp.root.shape)):
        found = values.value(comp.root, lf)
        expected = run.values[(comp.root.name, lf)].astype(np.int32)  # as s32 wraps
        assert found is not None and found.dtype == np.int32
        assert found.tolist() == expected.tolist()
    assert all(v is None for v in Evaluator({}).leaves(comp.root))  # parameters unknown


# --- shifts, placements, reductions, floating-point masks ----------------------------------------


def test_shifts_move_every_bit_out_past_the_width() -> None:
    r = root_of("""  a = s32[4] constant({1, 1, 1, 1})
  b = s32[4] constant({0, 31, 32, -1})
  l = s32[4] shift-left(a, b)
  m = s32[2] constant({-8, -8})
  n = s32[2] constant({1, 40})
  g = s32[2] shift-right-logical(m, n)
  h = s32[2] shift-right-arithmetic(m, n)
  ROOT t = (s32[4], s32[2], s32[2]) tuple(l, g, h)""")
    values = Evaluator({})
    assert values.value(r, 0).tolist() == [1, -(2 ** 31), 0, 0]
    assert values.value(r, 1).tolist() == [(2 ** 32 - 8) >> 1, 0]  # the bits as unsigned
    assert values.value(r, 2).tolist() == [-4, -1]  # the sign fills every bit


def test_dynamic_slices_clamp_their_starts_and_pads_crop() -> None:
    r = root_of("""  c = s32[4] constant({1, 2, 3, 4})
  far = s32[] constant(5)
  before = s32[] constant(-1)
  a = s32[2] dynamic-slice(c, far), dynamic_slice_sizes={2}
  b = s32[2] dynamic-slice(c, before), dynamic_slice_sizes={2}
  u = s32[2] constant({8, 9})
  d = s32[4] dynamic-update-slice(c, u, far)
  zero = s32[] constant(0)
  p = s32[7] pad(c, zero), padding=1_-1_1
  ROOT t = (s32[2], s32[2], s32[4], s32[7]) tuple(a, b, d, p)""")
    values = Evaluator({})
    assert values.value(r, 0).tolist() == [3, 4]  # start 5 clamped to 2
    assert values.value(r, 1).tolist() == [1, 2]  # start -1 clamped to 0
    assert values.value(r, 2).tolist() == [1, 2, 8, 9]
    # 1 0 2 0 3 0 4 with one 0 before and the last element cropped
    assert values.value(r, 3).tolist() == [0, 1, 0, 2, 0, 3, 0]


REDUCERS = "\n" + scalar_computation("add", "add", "s32") + scalar_computation(
    "max", "maximum", "s32", operands=("b", "a")) + """set {
  a = s32[] parameter(0)
  ROOT b = s32[] parameter(1)
}
sub {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] subtract(a, b)
}"""


def test_reductions_whose_init_is_an_identity_or_idempotent() -> None:
    r = root_of("""  c = s32[2,3] constant({{1, 5, 2}, {7, 0, 3}})
  zero = s32[] constant(0)
  nine = s32[] constant(9)
  s = s32[2] reduce(c, zero), dimensions={1}, to_apply=add
  m = s32[3] reduce(c, nine), dimensions={0}, to_apply=max
  i = s32[6] iota(), iota_dimension=0
  cum = s32[6] reduce-window(i, zero), window={size=6 pad=5_0}, to_apply=add
  ROOT t = (s32[2], s32[3], s32[6]) tuple(s, m, cum)""", REDUCERS)
    values = Evaluator({})
    assert values.value(r, 0).tolist() == [8, 10]
    assert values.value(r, 1).tolist() == [9, 9, 9]  # max with 9, however often applied
    assert values.value(r, 2).tolist() == [0, 1, 3, 6, 10, 15]  # jnp.cumsum's window
    for body in ("""  c = s32[3] constant({1, 2, 3})
  one = s32[] constant(1)
  ROOT s = s32[] reduce(c, one), dimensions={0}, to_apply=add""",  # 1 is not add's identity
                 """  c = s32[3] constant({1, 2, 3})
  zero = s32[] constant(0)
  ROOT s = s32[] reduce(c, zero), dimensions={0}, to_apply=sub"""):  # not one op of both
        assert integer_values(root_of(body, REDUCERS)) is None


def test_scatters_combine_updates_and_skip_windows_that_do_not_fit() -> None:
    body = """  x = s32[4] constant({10, 20, 30, 40})
  i = s32[3,1] constant({{1}, {1}, {INDEX}})
  u = s32[3] constant({1, 2, 3})
  ROOT s = s32[4] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0},
    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=COMBINER"""
    def value(index: int, combiner: str) -> list[int] | None:
        found = integer_values(root_of(body.replace("INDEX", str(index))
                                       .replace("COMBINER", combiner), REDUCERS))
        return None if found is None else found.tolist()
    assert value(3, "add") == [10, 23, 30, 43]
    assert value(4, "add") == [10, 23, 30, 40]  # index 4 does not fit: skipped
    assert value(3, "set") is None  # two updates land on element 1: order undefined
    assert integer_values(root_of(body.replace("{{1}, {1}, {INDEX}}", "{{0}, {1}, {3}}")
                                  .replace("COMBINER", "set"), REDUCERS)).tolist() == [
        1, 2, 30, 3]


def test_floating_point_values_that_nothing_rounds() -> None:
    """``jnp.triu`` of ones as JAX lowers it: a select of 0.0 and 1.0 by an iota mask,
    compared with zero, is known before the run; arithmetic on floats is not."""
    r = root_of("""  i = s32[3,3] iota(), iota_dimension=0
  j = s32[3,3] iota(), iota_dimension=1
  ge = pred[3,3] compare(i, j), direction=GE
  zero = f32[] constant(0)
  zeros = f32[3,3] broadcast(zero), dimensions={}
  one = f32[] constant(1)
  ones = f32[3,3] broadcast(one), dimensions={}
  t = f32[3,3] select(ge, zeros, ones)
  ne = pred[3,3] compare(t, zeros), direction=NE
  ROOT c = s32[3,3] convert(ne)""")
    assert integer_values(r).tolist() == [[0, 1, 1], [0, 0, 1], [0, 0, 0]]
    r = root_of("""  i = f16[2048] iota(), iota_dimension=0
  ROOT c = s32[2048] convert(i)""")
    assert integer_values(r).tolist() == list(range(2048))
    for body in ("""  a = f32[] constant(0.1)
  z = f32[] constant(0)
  ROOT c = pred[] compare(a, z), direction=GT""",  # 0.1 is not held exactly by f32
                 """  a = f32[] constant(-0)
  z = f32[] constant(0)
  ROOT c = pred[] compare(a, z), direction=LT, type=TOTALORDER""",  # orders -0 < +0
                 """  a = f32[] constant(2.5)
  ROOT c = s32[] convert(a)""",  # rounds
                 """  i = f16[4096] iota(), iota_dimension=0
  ROOT c = s32[4096] convert(i)"""):  # f16 holds the integers up to 2048 only
        assert integer_values(root_of(body)) is None
