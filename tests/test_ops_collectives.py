"""Collectives per participant: brute-force twins on random shapes and groups, and real
instructions from XLA's tests.

Each check runs every participant of a group (its rank is the runtime variable
``participant``) against the reference relation between (participant, output index) and
(participant, operand index) pairs in ``reference_hlo.py``: output-to-input images are the
local operand indices read, input-to-output images the local output indices reached.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ops_check import EXAMPLES, assert_map, build, check_collective, shapes, text
from symidx.core.syntax import print_map
from symidx.errors import SymidxError
from symidx.hlo import parse_hlo
from symidx.ops import input_to_output, opaque_reason, output_to_input
from symidx.ops.collectives import PARTICIPANT, group_size


@st.composite
def groups(draw, size: int, known: bool = True) -> str:
    """``replica_groups`` text for groups of ``size``: explicit, iota, or (unless
    ``known``) empty."""
    forms = ["explicit", "iota"] + ([] if known else ["empty"])
    form = draw(st.sampled_from(forms))
    count = draw(st.integers(1, 2))
    if form == "empty":
        return "{}"
    if form == "iota":
        return f"[{count},{size}]<=[{count * size}]"
    ids = draw(st.permutations(range(count * size)))
    return "{" + ",".join("{" + ",".join(map(str, ids[g * size:(g + 1) * size])) + "}"
                          for g in range(count)) + "}"


def _tuple(shapes_text: list[str]) -> str:
    return shapes_text[0] if len(shapes_text) == 1 else "(" + ", ".join(shapes_text) + ")"


@EXAMPLES
@given(st.lists(shapes(max_rank=2), min_size=1, max_size=3), st.integers(1, 3), st.data())
def test_all_reduce(parts, size, data) -> None:
    params = [text("f32", d) for d in parts]
    args = ", ".join(f"p{k}" for k in range(len(parts)))
    instr = build(params, f"{_tuple(params)} all-reduce({args}), "
                          f"replica_groups={data.draw(groups(size, known=False))}, "
                          f"to_apply=sum")
    check_collective(instr, size)
    assert opaque_reason(instr) is None


@EXAMPLES
@given(st.integers(1, 3), st.data())
def test_all_gather_and_reduce_scatter(size, data) -> None:
    count = data.draw(st.integers(1, 2))
    rank = data.draw(st.integers(1, 3))
    axis = data.draw(st.integers(0, rank - 1))
    small = [data.draw(shapes(min_rank=rank, max_rank=rank)) for _ in range(count)]
    big = [d[:axis] + (d[axis] * size,) + d[axis + 1:] for d in small]
    args = ", ".join(f"p{k}" for k in range(count))
    replica_groups = data.draw(groups(size, known=False))
    gather = build([text("f32", d) for d in small],
                   f"{_tuple([text('f32', d) for d in big])} all-gather({args}), "
                   f"replica_groups={replica_groups}, dimensions={{{axis}}}")
    check_collective(gather, size)
    scatter = build([text("f32", d) for d in big],
                    f"{_tuple([text('f32', d) for d in small])} reduce-scatter({args}), "
                    f"replica_groups={replica_groups}, dimensions={{{axis}}}, to_apply=sum")
    check_collective(scatter, size)
    assert opaque_reason(gather) is None and opaque_reason(scatter) is None


@EXAMPLES
@given(st.integers(1, 3), st.data())
def test_all_to_all_split(size, data) -> None:
    dims = list(data.draw(shapes(min_rank=1, max_rank=3)))
    axis = data.draw(st.integers(0, len(dims) - 1))
    dims[axis] *= size
    replica_groups = data.draw(groups(size, known=False))
    instr = build([text("f32", dims)], f"{text('f32', dims)} all-to-all(p0), "
                                       f"replica_groups={replica_groups}, "
                                       f"dimensions={{{axis}}}")
    unknown = replica_groups == "{}"
    check_collective(instr, size, over=[0] if unknown else [])
    assert (opaque_reason(instr) is not None) == unknown


@EXAMPLES
@given(shapes(max_rank=2), st.integers(1, 3), st.data())
def test_all_to_all_of_several_arrays(dims, size, data) -> None:
    params = [text("f32", dims)] * size
    args = ", ".join(f"p{k}" for k in range(size))
    shape = "(" + ", ".join(params) + ")"  # a tuple, even of one array
    instr = build(params, f"{shape} all-to-all({args}), "
                          f"replica_groups={data.draw(groups(size))}")
    check_collective(instr, size, over=range(size) if size > 1 else [])
    assert (opaque_reason(instr) is not None) == (size > 1)


@EXAMPLES
@given(shapes(max_rank=2), st.integers(1, 4), st.data())
def test_collective_permute(dims, size, data) -> None:
    targets = data.draw(st.permutations(range(size)))
    pairs = [(s, t) for s, t in enumerate(targets) if data.draw(st.booleans()) or s == 0]
    listed = {p for pair in pairs for p in pair}
    if listed != set(range(size)):  # participants are the listed ones, numbered densely
        rename = {p: i for i, p in enumerate(sorted(listed))}
        pairs = [(rename[s], rename[t]) for s, t in pairs]
        size = len(listed)
    text_pairs = "{" + ",".join(f"{{{s},{t}}}" for s, t in pairs) + "}"
    count = data.draw(st.integers(1, 2))
    params = [text("f32", dims)] * count
    args = ", ".join(f"p{k}" for k in range(count))
    instr = build(params, f"{_tuple(params)} collective-permute({args}), "
                          f"source_target_pairs={text_pairs}")
    without_source = {t for _, t in pairs} != set(range(size))
    check_collective(instr, size, over=range(count) if without_source else [])
    assert (opaque_reason(instr) is not None) == without_source


@EXAMPLES
@given(shapes(max_rank=2), st.integers(1, 3), st.data())
def test_collective_broadcast(dims, size, data) -> None:
    instr = build([text("f32", dims)], f"{text('f32', dims)} collective-broadcast(p0), "
                                       f"replica_groups={data.draw(groups(size))}")
    check_collective(instr, size, over=[0] if size > 1 else [])
    assert (opaque_reason(instr) is not None) == (size > 1)


@EXAMPLES
@given(st.integers(1, 3), st.data())
def test_ragged_all_to_all(size, data) -> None:
    rows = data.draw(st.integers(1, 4))
    inner = data.draw(shapes(max_rank=1))
    block = (rows,) + inner
    # participant j sends rows [start, start + count) to i, written at offset `at` in i's
    # output: keep every slice inside both arrays
    values: dict[int, np.ndarray] = {k: np.zeros((size, size), dtype=np.int64)
                                     for k in (2, 3, 4, 5)}
    for j in range(size):
        for i in range(size):
            count = data.draw(st.integers(0, rows))
            values[2][j][i] = data.draw(st.integers(0, rows - count))
            values[3][j][i] = count
            values[4][j][i] = data.draw(st.integers(0, rows - count))
            values[5][i][j] = count
    params = [text("f32", block)] * 2 + [text("s32", (size,))] * 4
    instr = build(params, f"{text('f32', block)} ragged-all-to-all(p0, p1, p2, p3, p4, p5), "
                          f"replica_groups={data.draw(groups(size))}")
    check_collective(instr, size, values, over=range(6))
    assert opaque_reason(instr) is not None


# --- real instructions from XLA's tests (realhlo) ----------------------------------------

MODULE = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  %Arg_0.4 = f32[4,2] parameter(0)
  %parameter = s32[2,2]{1,0} parameter(1)
  %input = f32[128,32]{1,0} parameter(2)
  %reduce-scatter.1 = f32[2,2] reduce-scatter(%Arg_0.4), channel_id=1, replica_groups={{0,1},{2,3}}, dimensions={0}, to_apply=add
  %all-to-all = s32[2,2]{1,0} all-to-all(s32[2,2]{1,0} %parameter), channel_id=1, replica_groups={{1,2}, {3,0}}, dimensions={1}
  %chain = f32[128,32]{1,0} collective-permute(%input), source_target_pairs={{0,1},{1,2},{2,3}}, channel_id=1
  %ring = f32[128,32]{1,0} collective-permute(%input), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}, channel_id=1
  ROOT %collective-broadcast.1 = f32[4,2] collective-broadcast(%Arg_0.4), channel_id=1, replica_groups={{0,1},{2,3}}
}
"""  # noqa: E501


def _instr(name: str):
    return parse_hlo(MODULE).entry.instruction(name)


def test_real_reduce_scatter() -> None:
    """Participant p of a pair keeps rows 2p, 2p + 1 of the sum."""
    instr = _instr("reduce-scatter.1")
    ((m,),) = output_to_input(instr)
    assert_map(m, "(d0, d1){rt0} -> (d0 + rt0 * 2, d1), domain: d0 in [0, 1], d1 in [0, 1], "
                  "rt0 in [0, 1]")
    assert m.rts[0].source == PARTICIPANT and m.rts[0].map is None
    ((back,),) = input_to_output(instr, 0)
    assert_map(back, "(d0, d1) -> (d0 mod 2, d1), domain: d0 in [0, 3], d1 in [0, 1]")


def test_real_all_to_all() -> None:
    """Groups of two, split along dim 1 in chunks of one column: participant p's column c
    is column p of participant c."""
    instr = _instr("all-to-all")
    assert group_size(instr) == 2
    ((m,),) = output_to_input(instr)
    assert_map(m, "(d0, d1){rt0} -> (d0, rt0), domain: d0 in [0, 1], d1 in [0, 1], "
                  "rt0 in [0, 1]")


def test_real_collective_permute() -> None:
    """A chain leaves participant 0 without a source (it outputs zeros): labelled; a ring
    is exact."""
    assert opaque_reason(_instr("chain")) is not None
    assert opaque_reason(_instr("ring")) is None
    ((m,),) = output_to_input(_instr("ring"))
    assert_map(m, "(d0, d1) -> (d0, d1), domain: d0 in [0, 127], d1 in [0, 31]")


def test_real_collective_broadcast() -> None:
    instr = _instr("collective-broadcast.1")
    ((m,),) = output_to_input(instr)
    assert_map(m, "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 1]")
    assert opaque_reason(instr) == "collective-broadcast: only the root's operand is read"


def test_group_size_forms() -> None:
    def size(groups: str) -> int | None:
        return group_size(build(["f32[4]"], f"f32[4] all-reduce(p0), replica_groups={groups}, "
                                            f"to_apply=sum"))

    assert size("{{0,1},{2,3}}") == 2
    assert size("{{1,2,3}, {4,5,0}}") == 3
    assert size("[2,4]<=[8]") == 4
    assert size("[8,2]<=[2,8]T(1,0)") == 2
    assert size("{}") is None
    with pytest.raises(SymidxError, match="different sizes"):
        size("{{0,1},{2}}")


def test_shapes_and_groups_must_agree() -> None:
    """Parsing rejects the instruction; a rule given it anyway says why."""
    instr = build(["f32[2]"], "f32[6] all-gather(p0), replica_groups={{0,1,2}}, "
                              "dimensions={0}")
    instr.attributes["replica_groups"] = "{{0,1}}"
    with pytest.raises(SymidxError, match="groups of 3"):
        output_to_input(instr)


def test_collective_reduce_is_labelled() -> None:
    instr = build(["f32[2,3]", "f32[]"], "(f32[2,3], f32[]) collective-reduce(p0, p1), "
                                         "replica_groups={{0,1}}, to_apply=sum")
    assert opaque_reason(instr) is not None
    groups_ = output_to_input(instr, 0)
    assert [print_map(m, "xla") for (m,) in groups_] == [
        "(d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 1], d1 in [0, 2], s0 in [0, 1], "
        "s1 in [0, 2]",
        "(d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 2]"]
