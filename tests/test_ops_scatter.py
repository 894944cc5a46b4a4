"""scatter and select-and-scatter: brute-force twins on random instructions, and real
instructions (a JAX embedding gradient's scatter, XLA's select-and-scatter test).

Scatter's runtime variables do not clamp: a start index outside the variable's interval
means the update window is skipped, so the run-time checks evaluate maps with
``skip=True``; the index values drawn reach past both ends of the operand. Three checks:

* the maps read exactly what scatter reads for *some* value of the indices (the maps'
  meaning, runtime variables over their intervals), and input-to-output relates the same
  pairs (for constant indices: at least what scatter reads with their values -- exactly
  unless a variable with a single start was fixed, see below);
* with the drawn index values, output-to-input maps read at least what scatter reads
  (exactly, unless the simplifier fixed a variable whose interval is a single start: see
  ``symidx.ops.scatter``).
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ops_check import (
    EXAMPLES,
    assert_map,
    build,
    build_computation,
    check,
    check_output_to_input,
    check_static,
    inside,
    lst,
    operand_dims,
    shapes,
    text,
    union_image,
    values_for,
    window_fields,
)
from reference_hlo import box, dependencies
from symidx.core.syntax import print_map
from symidx.hlo import parse_hlo
from symidx.hlo.facts import hlo_reference
from symidx.lowering.values import SCATTER_SPLIT_LIMIT, value_source
from symidx.ops import input_to_output, num_outputs, opaque_reason, output_to_input

#: Combiners by N: reading the current value (sum), overwriting it (set), or one of each.
COMBINERS = {1: ["sum", "set"], 2: ["sum2", "set2", "add_set2"]}


@st.composite
def scatter_case(draw):
    """A random scatter: operand dims, batching dims, the operand dims the index vector
    moves, inserted dims, window sizes, scatter positions, where the index vector sits, and
    the layout of the updates; N = 1 or 2; the indices a parameter (random values, some out
    of bounds) or sometimes a constant."""
    operand = draw(shapes(min_rank=1, max_rank=3))
    r = len(operand)
    batching = sorted(draw(st.sets(st.sampled_from(range(r)), max_size=1))) if r > 1 else []
    rest = [j for j in range(r) if j not in batching]
    to_operand = list(draw(st.permutations(draw(st.lists(st.sampled_from(rest), min_size=1,
                                                         unique=True)))))
    inserted = sorted(draw(st.sets(st.sampled_from(rest))))
    window = [j for j in range(r) if j not in inserted and j not in batching]
    sizes = {j: draw(st.integers(1, operand[j])) for j in window}
    extra = draw(st.lists(st.integers(1, 3), max_size=2))
    batch_sizes = [operand[j] for j in batching] + extra
    order = draw(st.permutations(range(len(batch_sizes))))
    indices_batch = [batch_sizes[t] for t in order]
    implicit = len(to_operand) == 1 and draw(st.booleans())
    ivd = len(indices_batch) if implicit else draw(st.integers(0, len(indices_batch)))
    indices = list(indices_batch)
    if not implicit:
        indices.insert(ivd, len(to_operand))
    positions = [q for q in range(len(indices)) if q != ivd]
    indices_batching = [positions[order.index(t)] for t in range(len(batching))]
    update_rank = len(indices_batch) + len(window)
    window_dims = sorted(draw(st.permutations(range(update_rank)))[:len(window)])
    updates, b, w = [], iter(indices_batch), iter(window)
    for u in range(update_rank):
        updates.append(sizes[next(w)] if u in window_dims else next(b))
    count = draw(st.integers(1, 2))
    out = text("f32", operand) if count == 1 else \
        "(" + ", ".join([text("f32", operand)] * count) + ")"
    values = values_for(draw, tuple(indices), max(operand), lo=-1)
    params = [text("f32", operand)] * count
    extra_lines = []
    if draw(st.integers(0, 4)) == 0:  # constant indices
        literal = np.array2string(values, separator=",").replace("[", "{").replace("]", "}")
        extra_lines.append(f"idx = {text('s32', indices)} constant({literal})")
        index_name, values_by_operand = "idx", {}
    else:
        params.append(text("s32", indices))
        index_name, values_by_operand = f"p{count}", {count: values}
    first_update = len(params)
    params += [text("f32", updates)] * count
    args = [f"p{k}" for k in range(count)] + [index_name] \
        + [f"p{first_update + k}" for k in range(count)]
    root = (f"{out} scatter({', '.join(args)}), update_window_dims={lst(window_dims)}, "
            f"inserted_window_dims={lst(inserted)}, "
            f"scatter_dims_to_operand_dims={lst(to_operand)}, index_vector_dim={ivd}, "
            f"to_apply={draw(st.sampled_from(COMBINERS[count]))}")
    if batching:
        root += (f", input_batching_dims={lst(batching)}, "
                 f"scatter_indices_batching_dims={lst(indices_batching)}")
    return params, root, extra_lines, values_by_operand


@settings(max_examples=200)
@given(scatter_case())
def test_scatter(case) -> None:
    params, root, extra, values = case
    instr = build(params, root, extra)
    # constant indices: exact when the maps are split per scatter position (each folds its
    # values); else a variable with a single start may be fixed (see symidx.ops.scatter)
    dims = instr.operands[len(instr.operands) // 2].shape.dims
    vector = instr.scatter_dimension_numbers.index_vector_dim
    positions = int(np.prod([n for q, n in enumerate(dims) if q != vector]))
    check_static(instr, exact=not extra or positions <= SCATTER_SPLIT_LIMIT)
    for output in range(num_outputs(instr)):
        check_output_to_input(instr, values, range(len(instr.operands)), output, skip=True)
    assert opaque_reason(instr) is None


@EXAMPLES
@given(st.data())
def test_select_and_scatter(data) -> None:
    dims = data.draw(shapes(min_rank=1, max_rank=2))
    window, source = window_fields(data.draw, dims, dilations=False)
    root = (f"{text('f32', dims)} select-and-scatter(p0, p1, p2), window={{{window}}}, "
            f"select=lt, scatter=sum")
    check(build([text("f32", dims), text("f32", source), "f32[]"], root))


# --- real instructions --------------------------------------------------------------------

#: The embedding gradient of a JAX train step (DLRM, xla/backends/cpu/benchmarks/hlo): the
#: 6272 gradient rows added to the rows of a 944-row table that the ids name.
EMBEDDING_GRAD = """HloModule m
%region_28.43 (scatter-add.8: f32[], scatter-add.9: f32[]) -> f32[] {
  %scatter-add.8 = f32[] parameter(0)
  %scatter-add.9 = f32[] parameter(1)
  ROOT %add.57 = f32[] add(%scatter-add.8, %scatter-add.9)
}

ENTRY %_take_95.44 (Arg_0.29: s32[6272,1], Arg_1.25: f32[6272,8]) -> f32[944,8] {
  %constant.150 = f32[] constant(0)
  %broadcast_in_dim.55 = f32[944,8]{1,0} broadcast(%constant.150), dimensions={}
  %Arg_0.29 = s32[6272,1]{1,0} parameter(0)
  %Arg_1.25 = f32[6272,8]{1,0} parameter(1)
  ROOT %scatter-add.11 = f32[944,8]{1,0} scatter(%broadcast_in_dim.55, %Arg_0.29, %Arg_1.25), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%region_28.43
}
"""  # noqa: E501


def test_embedding_gradient_scatter() -> None:
    instr = parse_hlo(EMBEDDING_GRAD).entry.root
    operand, indices, updates = output_to_input(instr)
    assert_map(operand[0], "(d0, d1) -> (d0, d1), domain: d0 in [0, 943], d1 in [0, 7]")
    # table row d0 reads the gradient rows s0 whose id is d0
    assert_map(updates[0], "(d0, d1)[s0]{rt0} -> (s0, d1), domain: d0 in [0, 943], "
                           "d1 in [0, 7], s0 in [0, 6271], rt0 in [0, 943], "
                           "d0 - rt0 in [0, 0]")
    rt0 = updates[0].rts[0]
    assert str(rt0.source) == "parameter(0)" and rt0.map is not None
    assert_map(rt0.map, "(d0, d1)[s0] -> (s0, 0), domain: d0 in [0, 943], d1 in [0, 7], "
                        "s0 in [0, 6271]")
    # whether a gradient row lands on d0 depends on every id
    assert_map(indices[0], "(d0, d1)[s0] -> (s0, 0), domain: d0 in [0, 943], d1 in [0, 7], "
                           "s0 in [0, 6271]")
    ((back,),) = input_to_output(instr, 2)
    assert_map(back, "(d0, d1){rt0} -> (rt0, d1), domain: d0 in [0, 6271], d1 in [0, 7], "
                     "rt0 in [0, 943]")


SELECT_AND_SCATTER = """HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  %input = f32[4,5] parameter(0)
  %source = f32[2,2] parameter(1)
  %init_value = f32[] parameter(2)
  ROOT %select-and-scatter = f32[4,5] select-and-scatter(f32[4,5] %input, f32[2,2] %source, f32[] %init_value), window={size=2x3 stride=2x3 pad=0_0x0_1}, select=%ge, scatter=%add
}
"""  # noqa: E501


def test_real_select_and_scatter() -> None:
    """2x3 windows with stride 2x3 tile the 4x6 padded input: an element reads its own
    window and that window's source element."""
    instr = parse_hlo(SELECT_AND_SCATTER).entry.root
    operand, source, init = output_to_input(instr)
    assert_map(source[0], "(d0, d1) -> (d0 floordiv 2, d1 floordiv 3), domain: "
                          "d0 in [0, 3], d1 in [0, 4]")
    assert operand[0].image((1, 4)) == {(r, c) for r in (0, 1) for c in (3, 4)}
    assert_map(init[0], "(d0, d1) -> (), domain: d0 in [0, 3], d1 in [0, 4]")


#: XLA's variadic argmax scatter (xla/backends/gpu/codegen/emitters/tests/scatter):
#: indices from an iota, so update row g lands on operand row g.
ARGMAX = """HloModule m
argmax_combiner {
  %curr_score     = f32[] parameter(0)
  %curr_agent     = s32[] parameter(1)
  %incoming_score = f32[] parameter(2)
  %incoming_agent = s32[] parameter(3)
  %is_higher = pred[] compare(%incoming_score, %curr_score), direction=GT
  %new_score = f32[] select(%is_higher, %incoming_score, %curr_score)
  %new_agent = s32[] select(%is_higher, %incoming_agent, %curr_agent)
  ROOT %result = (f32[], s32[]) tuple(%new_score, %new_agent)
}
ENTRY fusion {
  %operand_1 = f32[50,5]  parameter(0)
  %operand_2 = s32[50,5]  parameter(1)
  %indices =  s32[24,1] iota(), iota_dimension=0
  %update_1 = f32[24,1,3] parameter(2)
  %update_2 = s32[24,1,3] parameter(3)

  ROOT %scatter = (f32[50,5], s32[50,5]) scatter(
      %operand_1, %operand_2, %indices, %update_1, %update_2),
    update_window_dims={1,2},
    inserted_window_dims={},
    scatter_dims_to_operand_dims={0},
    index_vector_dim=1,
    unique_indices=true,
    to_apply=argmax_combiner
}
"""


def test_real_variadic_scatter_with_iota_indices() -> None:
    instr = parse_hlo(ARGMAX).entry.root
    for output in (0, 1):
        groups = output_to_input(instr, output)
        own, other = groups[output][0], groups[1 - output][0]
        assert_map(own, "(d0, d1) -> (d0, d1), domain: d0 in [0, 49], d1 in [0, 4]")
        if output == 0:  # the new score is computed from the scores alone
            assert other.is_known_empty
        else:  # the new agent also from the scores, where an update lands: rows 0..23,
            # columns 0..2
            assert_map(other, "(d0, d1) -> (d0, d1), domain: d0 in [0, 23], d1 in [0, 2]")
        for k in (3, 4):
            assert_map(groups[k][0], "(d0, d1) -> (d0, 0, d1), domain: d0 in [0, 23], "
                                     "d1 in [0, 2]")
        assert not groups[3][0].rts  # the iota's value is folded
    (back,) = input_to_output(instr, 3)[0]
    assert_map(back, "(d0, d1, d2) -> (d0, d2), domain: d0 in [0, 23], d1 in [0, 0], "
                     "d2 in [0, 2]")


def test_an_iota_that_wraps_is_not_folded() -> None:
    """An s8 iota of 300 wraps past 127: its values stay a runtime variable."""
    def update_map(n: int):
        instr = build([f"f32[{n}]"] * 2, f"f32[{n}] scatter(p0, idx, p1), "
                                         "update_window_dims={}, inserted_window_dims={0}, "
                                         "scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
                                         "to_apply=sum",
                      [f"idx = s8[{n}] iota(), iota_dimension=0"])
        return output_to_input(instr)[2][0]

    assert len(update_map(300).rts) == 1
    assert_map(update_map(100), "(d0) -> (d0), domain: d0 in [0, 99]")


# --- known indices ---------------------------------------------------------------------------


def _scatter(indices: str, combiner: str = "set", rows: int = 5) -> str:
    return (f"f32[{rows},2] scatter(p0, idx, p1), update_window_dims={{1}}, "
            "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
            f"to_apply={combiner}")


def test_duplicate_known_indices_read_every_update_landing() -> None:
    """``x.at[jnp.array([2, 2])].set(u)``: row 2 of x is overwritten, and reads both rows
    of u (XLA leaves the order of application undefined, so either may win)."""
    instr = build(["f32[5,2]", "f32[2,2]"], _scatter("idx"),
                  ["c = s32[] constant(2)", "idx = s32[2,1] broadcast(c), dimensions={}"])
    operand, _, updates = output_to_input(instr)
    assert {(r, c) for r in range(5) for c in range(2)
            if any(m.image((r, c)) for m in operand)} == {
        (r, c) for r in (0, 1, 3, 4) for c in range(2)}
    assert set().union(*(m.image((2, 1)) for m in updates)) == {(0, 1), (1, 1)}
    assert not any(m.image((3, 1)) for m in updates)


def test_an_adding_combiner_reads_the_operand_everywhere() -> None:
    instr = build(["f32[5,2]", "f32[2,2]"], _scatter("idx", "sum"),
                  ["idx = s32[2,1] constant({{1}, {3}})"])
    (operand,), _, _ = output_to_input(instr)
    assert_map(operand, "(d0, d1) -> (d0, d1), domain: d0 in [0, 4], d1 in [0, 1]")


def test_an_index_past_the_end_overwrites_nothing() -> None:
    instr = build(["f32[5,2]", "f32[2,2]"], _scatter("idx"),
                  ["idx = s32[2,1] constant({{7}, {-1}})"])
    (operand,), _, updates = output_to_input(instr)
    assert_map(operand, "(d0, d1) -> (d0, d1), domain: d0 in [0, 4], d1 in [0, 1]")
    assert all(m.is_known_empty for m in updates)


def test_a_variadic_set_reads_no_other_operand() -> None:
    """``to_apply=set2`` returns the updates: where an update lands, output 0 reads neither
    operand; elsewhere only its own."""
    instr = build(["f32[4]", "f32[4]", "f32[2]", "f32[2]"],
                  "(f32[4], f32[4]) scatter(p0, p1, idx, p2, p3), update_window_dims={}, "
                  "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                  "index_vector_dim=1, to_apply=set2",
                  ["idx = s32[2,1] constant({{0}, {1}})"])
    own, other, _, _, _ = output_to_input(instr, 0)
    assert [print_map(m, "xla") for m in own] == ["(d0) -> (d0), domain: d0 in [2, 3]"]
    assert [m.is_known_empty for m in other] == [True]
    (back,) = input_to_output(instr, 1)[0]
    assert back.is_known_empty


def test_updates_covering_the_operand_leave_it_unread() -> None:
    instr = build(["f32[3,2]", "f32[3,2]"], _scatter("idx", rows=3),
                  ["io = s32[3] iota(), iota_dimension=0", "idx = s32[3,1] reshape(io)"])
    operand = output_to_input(instr)[0]
    assert [m.is_known_empty for m in operand] == [True]


def test_a_combiner_reading_its_results_through_a_tuple() -> None:
    """The combiner's dataflow is followed through get-tuple-element of a tuple."""
    from symidx.ops.scatter import combiner_reads, operands_after_updates
    instr = parse_hlo("""HloModule m
swap {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  t = (f32[], f32[]) tuple(a1, b0)
  g0 = f32[] get-tuple-element(t), index=0
  g1 = f32[] get-tuple-element(t), index=1
  ROOT r = (f32[], f32[]) tuple(g1, g0)
}
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  i = s32[2,1] parameter(2)
  u0 = f32[2] parameter(3)
  u1 = f32[2] parameter(4)
  ROOT s = (f32[4], f32[4]) scatter(p0, p1, i, u0, u1), update_window_dims={},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
    to_apply=swap
}""").entry.root
    reads = combiner_reads(instr, 2)
    assert reads == [frozenset({2}), frozenset({1})]
    # output 1 reads current value 1 -- its own: after updates, operand 1 and nothing else
    assert operands_after_updates(reads, 2) == [frozenset(), frozenset({1})]


# --- indices held elsewhere (``known``: a sweep's table outside the fusion) -----------------


@settings(max_examples=60)
@given(scatter_case())
def test_scatter_reads_known_indices_where_they_are_held(case) -> None:
    """Given ``known`` (the instruction holding the indices' values, as a sweep finds a
    constant table outside a fusion), the rule reads the values there: each output element
    reads what scatter reads with those values in its indices operand (the reference, by
    brute force) -- exactly, and input-to-output relates the same pairs, when the maps are
    split per scatter position (each folds its values; past
    :data:`~symidx.lowering.values.SCATTER_SPLIT_LIMIT` positions a variable with a single start
    may be fixed, see ``symidx.ops.scatter``: at least what is read) -- and every runtime
    variable left names the holder, not the parameter."""
    params, root, extra, values = case
    assume(values)  # the indices are a parameter
    ((n, table),) = values.items()
    literal = np.array2string(table, separator=",").replace("[", "{").replace("]", "}")
    comp = build_computation(params, root,
                             [*extra, f"held = {text('s32', table.shape)} constant({literal})"])
    instr, held = comp.root, comp.instruction("held")
    vector = instr.scatter_dimension_numbers.index_vector_dim
    exact = int(np.prod([m for q, m in enumerate(table.shape) if q != vector])) \
        <= SCATTER_SPLIT_LIMIT
    known = {n: held}
    data = {hlo_reference(held): table}  # a variable left reads the holder's values
    for output in range(num_outputs(instr)):
        groups = output_to_input(instr, output, known=known)
        assert all(v.source == value_source(held) for group in groups for m in group
                   for v in m.rts)
        forward = [set() for _ in groups]
        for o, reads in dependencies(instr, values, output).items():
            for k, group in enumerate(groups):
                got = inside(union_image(group, o, data, skip=True), operand_dims(instr, k))
                assert got == reads[k] if exact else reads[k] <= got, (
                    o, k, sorted(got ^ reads[k])[:6])
                forward[k] |= {(o, i) for i in got}
        for k in range(len(instr.operands) if exact else 0):
            back = input_to_output(instr, k, known=known)[output]
            assert all(v.source == value_source(held) for m in back for v in m.rts)
            backward = {(o, i) for i in box(operand_dims(instr, k))
                        for o in union_image(back, i, data, skip=True)}
            assert backward == forward[k], (k, output, sorted(backward ^ forward[k])[:6])


def test_known_indices_held_elsewhere_by_hand() -> None:
    """``x.at[i].set(u)`` with ``i`` a parameter whose values, ``{1, 4, 9}``, a constant
    outside holds: rows 1 and 4 of x are overwritten (row 9 is past the end: skipped), so
    x is read on rows 0, 2, 3, 5 only; row 1 reads update row 0, row 4 update row 1.
    Without ``known`` the indices are unknown: x is read everywhere."""
    comp = build_computation(["f32[6,2]", "s32[3,1]", "f32[3,2]"],
                             "f32[6,2] scatter(p0, p1, p2), update_window_dims={1}, "
                             "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                             "index_vector_dim=1, to_apply=set",
                             ["held = s32[3,1] constant({{1}, {4}, {9}})"])
    instr, held = comp.root, comp.instruction("held")
    operand, _, updates = output_to_input(instr, known={1: held})
    x_read = {(r, c) for r in range(6) for c in range(2)
              if any(m.image((r, c)) for m in operand)}
    assert x_read == {(r, c) for r in (0, 2, 3, 5) for c in range(2)}
    for r in range(6):
        for c in range(2):
            expected = {(0, c)} if r == 1 else {(1, c)} if r == 4 else set()
            assert set().union(*(m.image((r, c)) for m in updates)) == expected, (r, c)
    assert not any(v for m in operand + updates for v in m.rts)  # every value folded
    (unknown,), _, _ = output_to_input(instr)
    assert_map(unknown, "(d0, d1) -> (d0, d1), domain: d0 in [0, 5], d1 in [0, 1]")
