"""Gathers and dynamic slices at indices a constant table holds (``x[jnp.array([4, 0, 2])]``)
read exactly the rows the table names: one map per run of equal values. Brute-force twins:
the reference interpreter reads the table's values, clamped as HLO clamps them.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_interpreter import execute, map_relation
from test_fusion_exact import check_exact, module, shape
from test_fusion_masks import check_entry_exact

from symidx.fusion import called_computation, parameter_maps
from symidx.hlo import parse_hlo


def literal(values: list[int], dims: tuple[int, ...]) -> str:
    array = np.array(values).reshape(dims)

    def text(a: Any) -> str:
        return "{" + ", ".join(text(x) for x in a) + "}" if isinstance(a, np.ndarray) \
            and a.ndim else str(int(a))
    return text(array) if array.ndim else str(int(array))


@st.composite
def table_gather(draw: Any) -> tuple[str, str, bool]:
    """(module text with the table inside the fusion, the same with the table in the entry
    passed as a parameter, whether every index lies in ``[0, n - 1]``): a row gather
    ``x[table]`` from an operand of ``n`` rows, the table of ``k`` (or ``k x 1``) indices,
    some maybe outside ``[0, n - 1]``."""
    n, cols, k = draw(st.integers(1, 5)), draw(st.integers(1, 3)), draw(st.integers(1, 6))
    values = draw(st.lists(st.integers(-2, n + 1), min_size=k, max_size=k))
    vector = draw(st.booleans())  # an explicit index vector dimension
    idims = (k, 1) if vector else (k,)
    table = f"s32[{','.join(map(str, idims))}] constant({literal(values, idims)})"
    gather = (f"g = {shape((k, cols))} gather(q0, t), offset_dims={{1}}, "
              f"collapsed_slice_dims={{0}}, start_index_map={{0}}, "
              f"index_vector_dim={1 if vector else 1}, slice_sizes={{1,{cols}}}")
    inside = module([shape((n, cols))], [f"t = {table}", gather], shape((k, cols)))
    itype = f"s32[{','.join(map(str, idims))}]"
    outside = (f"HloModule tables\nf {{\n  q0 = {shape((n, cols))} parameter(0)\n"
               f"  t = {itype} parameter(1)\n  ROOT {gather}\n}}\n"
               f"ENTRY e {{\n  a0 = {shape((n, cols))} parameter(0)\n  c = {table}\n"
               f"  ROOT fusion = {shape((k, cols))} fusion(a0, c), kind=kLoop, calls=f\n}}\n")
    return inside, outside, all(0 <= v < n for v in values)


@settings(max_examples=80)
@given(table_gather())
def test_a_gather_at_a_constant_table_reads_the_rows_it_names(case) -> None:
    inside, outside, in_range = case
    check_exact(inside, None, [])
    if in_range:
        check_entry_exact(outside)
    else:  # across the call, an index HLO clamps may keep its interval (sound)
        comp = parse_hlo(outside).entry
        run = execute(comp, [None] * len(comp.parameters))
        (x,) = parameter_maps(comp)
        got = map_relation(x.maps, comp.root.shape.dims, comp.parameters[0].shape.dims)
        assert np.isin(run.relation(0), got).all()


def test_runs_of_equal_indices_share_a_map() -> None:
    """``x[[4, 0, 2, 2, 9]]`` of 6 rows: row 9 is clamped to 5 (a gather clamps)."""
    text = module(["f32[6]"], [
        "t = s32[5,1] constant({{4}, {0}, {2}, {2}, {9}})",
        "g = f32[5] gather(q0, t), offset_dims={}, collapsed_slice_dims={0}, "
        "start_index_map={0}, index_vector_dim=1, slice_sizes={1}"], "f32[5]")
    comp = called_computation(parse_hlo(text).entry.root)
    assert comp is not None
    (x,) = parameter_maps(comp)
    assert sorted(str(m).replace("\n", " ") for m in x.maps) == [
        "(d0) -> (0), domain: d0 in [1, 1]",
        "(d0) -> (2), domain: d0 in [2, 3]",
        "(d0) -> (4), domain: d0 in [0, 0]",
        "(d0) -> (5), domain: d0 in [4, 4]"]


def test_windows_at_table_offsets_are_exact() -> None:
    """A gather of two-element windows at offsets ``{6, 1, 1}`` of an 8-element operand:
    rows 0 and 1-2 of the output read their windows, nothing else."""
    text = module(["f32[8]"], [
        "t = s32[3] constant({6, 1, 1})",
        "i = s32[3,1] reshape(t)",
        "g = f32[3,2] gather(q0, i), offset_dims={1}, collapsed_slice_dims={}, "
        "start_index_map={0}, index_vector_dim=1, slice_sizes={2}"], "f32[3,2]")
    check_exact(text, None, [])


SCATTER_OUTSIDE = """HloModule scatter_outside
set {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] copy(b)
}
fused {
  x = f32[6,2] parameter(0)
  i = s32[3,1] parameter(1)
  u = f32[3,2] parameter(2)
  ROOT s = f32[6,2] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0},
    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=set
}
ENTRY e {
  x = f32[6,2] parameter(0)
  u = f32[3,2] parameter(1)
  i = s32[3,1] constant({ {1}, {4}, {TABLE} })
  ROOT f = f32[6,2] fusion(x, i, u), kind=kLoop, calls=fused
}
"""


@pytest.mark.parametrize("last", [4, 0, 9])
def test_a_fused_scatter_knows_the_table_its_caller_passes(last: int) -> None:
    """XLA fuses ``x.at[jnp.array([1, 4, k])].set(u)`` and leaves the table outside the
    fusion: rows the updates overwrite read nothing of ``x`` (row 9 is outside: skipped),
    and each written row reads its update."""
    x, u = check_entry_exact(SCATTER_OUTSIDE.replace("TABLE", str(last)))
    written = {1, 4} | ({last} if 0 <= last < 6 else set())
    read = sorted(set(range(6)) - written)
    runs = []  # the rows of x read, as runs of consecutive rows
    for r in read:
        if runs and runs[-1][1] + 1 == r:
            runs[-1][1] = r
        else:
            runs.append([r, r])
    assert sorted(re.search(r"d0 in \[\d+, \d+\]", t).group() for t in x) == sorted(
        f"d0 in [{a}, {b}]" for a, b in runs)
    assert len(u) == sum(0 <= v < 6 for v in (1, 4, last))  # one map per landing update
    # (two updates landing on row 4 are both read: XLA does not say which one wins)


#: More scatter positions than the rule splits its maps by
#: (:data:`symidx.lowering.values.SCATTER_SPLIT_LIMIT`): the index stays a runtime variable
#: naming the table outside the fusion, which the sweep then reads.
LONG_TABLE = [3, 3, 7, 0, 30, 12, -1, 5, 5, 5, 9, 1, 2, 14, 8, 8, 11, 4, 6, 13]


def test_a_fused_scatter_follows_a_long_table_its_caller_passes() -> None:
    """``x.at[table].add(u)`` with a table of 20 indices outside the fusion (30 and -1
    skipped): row r of x reads the update rows whose index is r, exactly."""
    k = len(LONG_TABLE)
    text = SCATTER_OUTSIDE.replace("f32[6,2]", "f32[16,2]").replace(
        "s32[3,1]", f"s32[{k},1]").replace("f32[3,2]", f"f32[{k},2]").replace(
        "{ {1}, {4}, {TABLE} }", "{" + ", ".join(f"{{{v}}}" for v in LONG_TABLE) + "}").replace(
        "copy(b)", "add(a, b)")
    assert text.count(f"s32[{k},1]") == 2
    x, u = check_entry_exact(text)
    assert x == ["(d0, d1) -> (d0, d1),\ndomain:\nd0 in [0, 15],\nd1 in [0, 1]"]  # added to
    assert not any("rt" in t for t in u)  # every index folded from the table
