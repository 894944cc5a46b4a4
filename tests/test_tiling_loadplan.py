"""Tiles are load plans: a tile holds what its output tile reads for each program id and each
runtime value it loads with (a gather's rows, a reversed merged dimension), `--check` proves
exactly that, and the decisions do not depend on the machine's load.

The twin (``tile_twin.py``) runs the reference interpreter with concrete index values and
loads, per program id and row, the tile at the value its runtime variable's source element
holds; a difference is a read the program id does not load.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tile_twin import differences

from symidx.cli import main
from symidx.cli.inputs import load_module
from symidx.core.expr import FloorDiv, Mod, as_expr, dim, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.syntax import parse_expr
from symidx.tiling import analysis, check, symbolic_tile, tiled
from symidx.tiling.check import check_tiling
from symidx.tiling.valid import valid_tilings

DATA = Path(__file__).parent / "data" / "tiling"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def comp_of(name: str):  # type: ignore[no-untyped-def]
    return analysis.fusion_computation(load_module(str(DATA / name)), "fusion")


def tiled_json(capsys: pytest.CaptureFixture[str], name: str, sizes: str,
               *extra: str) -> dict:  # type: ignore[type-arg]
    code, out, err = run_cli(capsys, "tile", str(DATA / name), "--fusion", "fusion",
                             "--sizes", sizes, "--format", "json", *extra)
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


INDEX_VALUES = [[[7], [9], [3], [15]], [[-3], [40], [0], [8]], [[5], [5], [5], [5]]]


# --------------------------------------------------------------------------- gathers
@pytest.mark.parametrize("sizes", [[1, 8], [2, 8], [4, 8], [4, 4], [2, 2], [4, 1]])
def test_a_gather_batch_tile_loads_every_gathered_row(sizes: list[int]) -> None:
    """A batch tile of 2 or 4 reads 2 or 4 rows of the table, at the values of 2 or 4
    index elements: the plan loads each row (the twin runs three index vectors, one of
    them out of range, which the gather clamps)."""
    comp = comp_of("gather_rows.hlo")
    for idx in INDEX_VALUES:
        assert differences(comp, sizes, [None, np.array(idx, dtype=np.int32)]) == 0


@pytest.mark.parametrize("sizes", [[8], [4], [1]])
def test_a_gather_under_a_reduce_loads_one_row_per_reduced_index(sizes: list[int]) -> None:
    comp = comp_of("gather_reduce.hlo")
    for idx in INDEX_VALUES:
        assert differences(comp, sizes, [None, np.array(idx, dtype=np.int32)]) == 0


def test_each_runtime_variable_names_the_index_element_feeding_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    """With a batch tile of 2 the table's tile is two rows (range variable s0 in [0, 1]),
    and rt0 of row s0 at program id pid_0 is element (2 * pid_0 + s0, 0) of the index
    operand, named as XLA names it (the fusion's operand)."""
    doc = tiled_json(capsys, "gather_rows.hlo", "2,8")
    table = next(x for x in doc["tiled"] if x["name"] == "table")
    assert table["tile_sizes"] == [1, 8]
    assert table["runtime_variables"] == ["i"]
    (source,) = table["runtime_sources"]
    from symidx.core.syntax import parse_map

    m = parse_map(source["element"])
    for pid, row in itertools.product(range(2), range(2)):
        assert m.evaluate([pid], [row]) == (2 * pid + row, 0)
    assert table["rows"] == [{"range_variable": 0, "count": 2, "parameter": 0}]


def _first_row_only(results: list[tiled.TiledResult]) -> list[tiled.TiledResult]:
    out = []
    for r in results:
        m = r.offsets_map
        if m.num_ranges:
            m = IndexingMap.create(m.dims, m.results, [Interval(b.lo, b.lo) for b in m.ranges],
                                   m.rts, m.constraints)
        out.append(dataclasses.replace(r, offsets_map=m))
    return out


def test_check_proves_a_gather_per_program_id_and_runtime_value(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`--check` proves the plan per program id, row and runtime value; a plan that loads
    only the first row of each tile (as one row at a runtime offset did) is caught, though
    the union of its tiles over every runtime value covers the table."""
    t = analysis.analyze(comp_of("gather_rows.hlo"))
    assert check_tiling(t, [2, 8])["ok"]
    real = tiled.tiled_computation
    monkeypatch.setattr(check, "tiled_computation",  # the name the check calls
                        lambda *a, **k: _first_row_only(real(*a, **k)))
    bad = check_tiling(t, [2, 8])
    table = next(i for i in bad["instructions"] if i["name"] == "table")
    assert not bad["ok"] and table["covers"] is False
    comp = comp_of("gather_rows.hlo")
    twin = differences(comp, [2, 8], [None, np.array(INDEX_VALUES[0], dtype=np.int32)],
                       results=_first_row_only(real(t, [2, 8], assume_satisfied=True)))
    assert twin > 0


# --------------------------------------------------------------------------- strided sums
@pytest.mark.parametrize("sizes", [[2, 8], [1, 8], [1, 2], [1, 4], [1, 1], [2, 1]])
def test_a_reversed_merged_dimension_is_loaded_as_its_box(sizes: list[int]) -> None:
    """reshape then reverse (``jnp.flip(x.reshape(2, 8), 1)``): output (i, j) reads
    8 i + 7 - j. A [2, 8] tile reads 0..15: the box starts at its minimum, stride 1."""
    assert differences(comp_of("flip_merge.hlo"), sizes) == 0


def test_the_box_of_a_mixed_sign_sum_starts_at_its_minimum(
        capsys: pytest.CaptureFixture[str]) -> None:
    doc = tiled_json(capsys, "flip_merge.hlo", "2,8", "--check")
    p0 = next(x for x in doc["tiled"] if x["name"] == "p0")
    assert (p0["tile_sizes"], p0["tile_strides"]) == ([16], [1])
    assert "-> (0)" in p0["tile_offsets_indexing"]
    assert doc["check"]["ok"]


@st.composite
def mixed_sums(draw: st.DrawFn) -> IndexingMap:
    """``sum c_k d_k + c`` with nested strides of both signs (a reshape merging dims some
    of which a reverse flipped)."""
    n = draw(st.integers(2, 3))
    extents = [draw(st.integers(1, 4)) for _ in range(n)]
    signs = [draw(st.sampled_from([1, -1])) for _ in range(n)]
    stride, expr, const = 1, 0, 0
    for k in reversed(range(n)):
        expr = expr + signs[k] * stride * dim(k)
        if signs[k] < 0:
            const += stride * (extents[k] - 1)
        stride *= extents[k]
    return IndexingMap.create([Interval(0, e - 1) for e in extents], [expr + const])


@given(mixed_sums())
def test_every_sum_tile_is_its_box_where_its_constraints_hold(m: IndexingMap) -> None:
    """Where the constraints hold, ``box`` (offset at the minimum, stride >= 0) holds exactly
    the values the origin tile takes, whatever the signs of the strides."""
    tile = symbolic_tile(m)
    holds = tile.constraints.evaluator([dim(i) for i in range(m.num_dims)])
    for sizes in itertools.product(*[range(1, b.hi + 2) for b in m.dims]):
        if not holds(list(sizes)):
            continue
        offsets, tsizes, strides = tile.evaluate_box(sizes)
        want = {m.evaluate(p)[0] for p in itertools.product(*[range(s) for s in sizes])}
        assert strides[0] >= 0
        assert {offsets[0] + strides[0] * k for k in range(tsizes[0])} == want, (m, sizes)


@st.composite
def sums_of_parts(draw: st.DrawFn) -> IndexingMap:
    """``c * d0 + part(d1)`` where the part is ``d1 mod k``, ``d1 floordiv k`` or
    ``(d1 floordiv j) mod k``, ``c`` its number of values (a reshape that splits one
    dimension and merges a piece of it with another: the strides nest), either sign."""
    e0 = draw(st.integers(1, 4))
    k = draw(st.integers(2, 4))
    kind = draw(st.sampled_from(["mod", "div", "divmod"]))
    if kind == "mod":
        e1 = k * draw(st.integers(1, 3))
        part, values = Mod(dim(1), k), k
    elif kind == "div":
        e1 = k * draw(st.integers(1, 3))
        part, values = FloorDiv(dim(1), k), e1 // k
    else:
        j = draw(st.integers(2, 3))
        e1 = j * k * draw(st.integers(1, 2))
        part, values = Mod(FloorDiv(dim(1), j), k), k
    sign = draw(st.sampled_from([1, -1]))
    return IndexingMap.create([Interval(0, e0 - 1), Interval(0, e1 - 1)],
                              [dim(0) * values * sign + part])


@given(sums_of_parts())
def test_a_sum_of_a_dimension_and_a_split_part_is_exact_where_its_constraints_hold(
        m: IndexingMap) -> None:
    """Brute force: where the constraints hold, the values the origin tile takes fill the
    box (offset at the least value, stride >= 0) exactly. Such sums (a transposed split of
    a reshape, an interleave merged back) were refused."""
    tile = symbolic_tile(m)
    holds = tile.constraints.evaluator([dim(i) for i in range(m.num_dims)])
    checked = 0
    for sizes in itertools.product(*[range(1, b.hi + 2) for b in m.dims]):
        if not holds(list(sizes)):
            continue
        offsets, tsizes, strides = tile.evaluate_box(sizes)
        want = {m.evaluate(p)[0] for p in itertools.product(*[range(s) for s in sizes])}
        assert {offsets[0] + strides[0] * k for k in range(tsizes[0])} == want, (m, sizes)
        checked += 1
    assert checked


def tile_map(text: str) -> IndexingMap:
    """A tile map's text (dims, no domain) as a map over a wide domain, to evaluate."""
    from symidx.core.syntax import parse_map

    head = text.split("->")[0]
    names = [n.strip() for n in head.split("[")[0].strip(" ()").split(",") if n.strip()]
    return parse_map(text + ", domain: " + ", ".join(f"{n} in [0, 1000]" for n in names))


def test_a_mixed_sign_map_tile_says_its_box(capsys: pytest.CaptureFixture[str]) -> None:
    """The map-level tile keeps XLA's offset and stride (its test expects them) and says
    that they are not a box, with the box beside them."""
    code, out, _ = run_cli(capsys, "tile", "(d0, d1) -> (d0 * 8 - d1 + 7), domain: "
                           "d0 in [0, 1], d1 in [0, 7]", "--format", "json")
    tile = json.loads(out)["tile"]
    assert code == 0 and tile["offset_map"] == "(d0, d1) -> (7)"
    box = tile["box"]
    off, stride = tile_map(box["offset_map"]), tile_map(box["stride_map"])
    assert off.evaluate([2, 8]) == (0,) and stride.evaluate([2, 8]) == (1,)
    assert off.evaluate([1, 8]) == (0,) and off.evaluate([2, 1]) == (7,)
    code, out, _ = run_cli(capsys, "tile", "(d0, d1) -> (d0 * 8 - d1 + 7), domain: "
                           "d0 in [0, 1], d1 in [0, 7]")
    assert "not a box" in out


# --------------------------------------------------------------------------- decisions
def test_check_is_bounded_by_counted_work_not_the_wall_clock(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A wall clock racing ahead (a busy machine) changes nothing; a budget of counted
    points or of CPU seconds (a fake CPU clock) leaves the proof undecided, saying which."""
    t = analysis.analyze(comp_of("dot.hlo"))
    real_monotonic, real_time = time.monotonic, time.time
    ticks = itertools.count()
    monkeypatch.setattr(time, "monotonic", lambda: real_monotonic() + 1000 * next(ticks))
    monkeypatch.setattr(time, "time", lambda: real_time() + 1000 * next(ticks))
    assert check_tiling(t, [16, 4, 8])["ok"]
    asked = check_tiling(t, [16, 4, 8], wall_deadline=30.0)      # only when asked for
    assert asked["undecided"]
    assert any("wall-clock" in i.get("undecided", "") for i in asked["instructions"])
    small = check_tiling(t, [16, 4, 8], budget=10)
    assert small["undecided"] and not small["ok"]
    assert any("budget" in i.get("undecided", "") for i in small["instructions"])
    monkeypatch.undo()
    real_cpu = time.process_time
    cpu = itertools.count()
    monkeypatch.setattr(time, "process_time", lambda: real_cpu() + 100 * next(cpu))
    slow = check_tiling(t, [16, 4, 8], deadline=30.0)
    assert slow["undecided"]
    assert any("CPU" in i.get("undecided", "") for i in slow["instructions"])


def test_the_same_budget_gives_the_same_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tile", str(DATA / "dot.hlo"), "--fusion", "fusion", "--sizes", "16,4,8",
            "--check", "--budget", "50", "--format", "json"]
    first = run_cli(capsys, *argv)
    second = run_cli(capsys, *argv)
    assert first[0] == second[0] == 3
    assert json.loads(first[1])["check"] == json.loads(second[1])["check"]


def test_assume_satisfied_skips_the_constraints_but_not_the_concatenate_rule(
        capsys: pytest.CaptureFixture[str]) -> None:
    """As its help says (and as XLA's constraints_are_known_satisfied): a tiling that
    violates the constraints is tiled, but 5, which does not divide the concatenated
    operands' 12, is refused either way, naming the rule. Such tiles would still be sound
    (masked): --check proves them, and so does the twin."""
    code, _, err = run_cli(capsys, "tile", str(DATA / "reshape_split.hlo"), "--fusion",
                           "fusion", "--sizes", "3", "--assume-satisfied")
    assert code == 0, err
    for extra, why in (([], "constraints"), (["--assume-satisfied"], "not divisible by tile "
                                                                    "size 5")):
        code, _, err = run_cli(capsys, "tile", str(DATA / "concat.hlo"), "--fusion", "fusion",
                               "--sizes", "8,5", *extra)
        assert code == 2 and why in err
    t = analysis.analyze(comp_of("concat.hlo"))
    assert all(i["covers"] for i in check_tiling(t, [8, 5])["instructions"])
    assert differences(comp_of("concat.hlo"), [8, 5]) == 0


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("flag", [["--check"], ["--smem", "4096"], ["--assume-satisfied"],
                                  ["--schedule", "transposed-dot"]])
def test_a_flag_that_needs_sizes_without_them_exits_2(capsys: pytest.CaptureFixture[str],
                                                       flag: list[str]) -> None:
    code, out, err = run_cli(capsys, "tile", str(DATA / "dot.hlo"), "--fusion", "fusion",
                             *flag)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert flag[0] in err and "--sizes" in err


def test_a_tile_larger_than_its_dimension_is_one_masked_tile(
        capsys: pytest.CaptureFixture[str]) -> None:
    """As XLA (a Triton tile is a power of two): kept, one tile along that dimension, the
    elements past its end masked; said on stderr; --check proves it."""
    code, out, err = run_cli(capsys, "tile", str(DATA / "dot.hlo"), "--fusion", "fusion",
                             "--sizes", "64,16,32", "--check", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["check"]["ok"]
    assert "exceeds" in err and "masked" in err
    root = doc["tiled"][0]
    assert root["tile_sizes"] == [16, 32] and "pid_0 in [0, 0]" in root["tile_offsets_indexing"]


# --------------------------------------------------------------------------- structure
def test_runtime_variables_are_listed_outermost_first(
        capsys: pytest.CaptureFixture[str]) -> None:
    """XLA lists the runtime variables of a tile reached through two dynamic slices from
    the root down: the outer slice's offset (off2) first."""
    doc = tiled_json(capsys, "dynamic_slice_chain.hlo", "1")
    two = [x for x in doc["tiled"] if len(x["runtime_variables"]) == 2]
    assert two and all(x["runtime_variables"] == ["off2", "off"] for x in two)


def test_roots_of_different_shapes_each_get_their_own_program_ids(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "tile", str(DATA / "two_outputs.hlo"), "--fusion",
                           "fusion", "--format", "json")
    doc = json.loads(out)
    assert [p["sizes"] for p in doc["parameters"]] == [[10, 8], [11, 9]]
    for sizes in ([4, 4, 4, 4], [10, 8, 1, 16], [1, 1, 11, 9]):
        assert differences(comp_of("two_outputs.hlo"), sizes) == 0
    doc = tiled_json(capsys, "two_outputs.hlo", "4,4,4,4", "--check")
    assert doc["check"]["ok"]
    assert {x["name"] for x in doc["tiled"]} >= {"add", "mul", "p2", "p3"}


def test_a_two_output_space_gives_each_root_its_dimensions(
        capsys: pytest.CaptureFixture[str]) -> None:
    """XLA's TilingSpace for roots of different shapes: one parallel dimension per output
    dimension of each root; root 1's tile runs over dimensions 2 and 3, to its own bounds."""
    code, out, _ = run_cli(capsys, "tile", str(DATA / "two_outputs.hlo"), "--fusion",
                           "fusion", "--space", "--format", "json")
    doc = json.loads(out)
    assert [(d["size"], d["dim_id"], d["hlo"]) for d in doc["dimensions"]] == \
        [(10, 0, "add"), (8, 1, "add"), (11, 0, "mul"), (9, 1, "mul")]
    root1 = next(t for t in doc["tiles"] if t.get("root") == 1)
    assert root1["offsets"] == ["tid_2 * ts_2", "tid_3 * ts_3"]
    assert root1["upper_bounds"] == ["11", "9"]


def test_a_concatenate_operand_bound_is_clamped_when_symbolic(
        capsys: pytest.CaptureFixture[str]) -> None:
    """An upper bound that is an expression is clamped into the operand as XLA does:
    max(min(bound - start, extent), 0)."""
    tile = json.dumps({"offsets": ["tid_0 * ts_0", "tid_1 * ts_1"], "sizes": ["ts_0", "ts_1"],
                       "strides": ["1", "1"], "upper_bounds": ["8", "tid_1 * 30"]})
    code, out, _ = run_cli(capsys, "tile", str(DATA / "concat.hlo"), "--fusion", "fusion",
                           "--space", "--propagate", "input", "--instruction", "c",
                           "--input-tile", tile, "--format", "json")
    assert code == 0
    tiles = json.loads(out)["tiles"]
    names = {"tid_1": dim(1)}
    for k, (start, extent) in enumerate([(0, 12), (12, 12), (24, 8)]):
        bound = parse_expr(tiles[k]["upper_bounds"][1], names)
        for tid in range(3):
            got = bound.xreplace({dim(1): tid})
            assert int(got) == max(min(tid * 30 - start, extent), 0), (k, tid, bound)


def test_a_reshape_tile_proven_inside_one_row_is_propagated(
        capsys: pytest.CaptureFixture[str]) -> None:
    """XLA's FailsToPropagateToConcatenateThroughBitcast, at its tile sizes [1, 2]: the
    concatenate's second operand tile starts at 2 tid_1 - 512, a multiple of 2, which
    divides the 512 of a row, so it never wraps: row (2 tid_1 - 512) / 512, two elements
    from (2 tid_1 - 512) mod 512. Sizes that do not divide the row are refused, located."""
    tile = json.dumps({"offsets": ["tid_0", "tid_1 * 2 - 512"], "sizes": ["1", "2"],
                       "strides": ["1", "1"], "upper_bounds": ["10", "1024"]})
    code, out, _ = run_cli(capsys, "tile", str(DATA / "concat_of_bitcast.hlo"), "--space",
                           "--sizes", "1,2", "--propagate", "input", "--instruction", "reshape",
                           "--input-tile", tile, "--format", "json")
    assert code == 0
    (got,) = json.loads(out)["tiles"]
    assert got["sizes"] == ["1", "1", "2"]
    names = {"tid_0": dim(0), "tid_1": dim(1)}
    for t1 in range(256, 768):
        env = {dim(0): 3, dim(1): t1}
        offsets = [int(parse_expr(x, names).xreplace(env)) for x in got["offsets"]]
        bounds = [int(parse_expr(x, names).xreplace(env)) for x in got["upper_bounds"]]
        flat = 2 * t1 - 512
        assert offsets == [3, flat // 512, flat % 512]
        assert bounds == [10, flat // 512 + 1, flat % 512 + 2]
    code, _, err = run_cli(capsys, "tile", str(DATA / "concat_of_bitcast.hlo"), "--space",
                           "--sizes", "1,3")
    assert "may wrap around" in err and "reshape" in err


def test_an_all_gather_operand_tile_carries_its_replica_ids(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Given the all-gather's operand tile without its replica ids (the offset within the
    replica, (tid_1 ts_1) mod 32), propagation through the broadcast below it keeps which
    replica holds it, (tid_1 ts_1) / 32 of 2 (XLA's CanPropagateReplicaIdThroughBroadcast)."""
    tile = json.dumps({"offsets": ["tid_0 * ts_0", "(tid_1 * ts_1) mod 32", "tid_2 * ts_2"],
                       "sizes": ["ts_0", "ts_1", "ts_2"], "strides": ["1", "2", "3"],
                       "upper_bounds": ["10", "32", "5"]})
    code, out, _ = run_cli(capsys, "tile", str(DATA / "all_gather_broadcast.hlo"), "--space",
                           "--propagate", "input", "--instruction", "broadcast",
                           "--input-tile", tile, "--format", "json")
    (got,) = json.loads(out)["tiles"]
    assert code == 0 and got["offsets"] == ["tid_0 * ts_0", "(tid_1 * ts_1) mod 32"]
    rep = got["replica_ids"]
    assert rep["offsets"] == ["(tid_1 * ts_1) / 32"] and rep["upper_bounds"] == ["2"]


@pytest.mark.parametrize("name, parallel, sequential, rts", [
    ("ragged_dot.hlo", [256, 64], [8, 128], 1),
    ("ragged_dot_contracting.hlo", [8, 128, 64], [256], 2)])
def test_a_ragged_dot_space_has_xla_dimensions(capsys: pytest.CaptureFixture[str], name: str,
                                               parallel: list[int], sequential: list[int],
                                               rts: int) -> None:
    """A ragged non-contracting dimension loops over the groups then the contraction (one
    runtime variable: the group's size); a ragged contracting dimension is the loop (two:
    the group's size and start)."""
    code, out, _ = run_cli(capsys, "tile", str(DATA / name), "--space", "--format", "json")
    doc = json.loads(out)
    assert code == 0
    assert [d["size"] for d in doc["dimensions"] if d["type"] == "parallel"] == parallel
    assert [d["size"] for d in doc["dimensions"] if d["type"] == "sequential"] == sequential
    assert len(doc["rt_vars"]) == rts


def test_valid_tilings_are_bounded_by_counted_points(capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    """The same budget gives the same answer: enough points list every valid tiling, too
    few stop at the same place, undecided (exit 3), saying the budget."""
    argv = ["tile", str(DATA / "tensor_network_rank8.hlo"), "--fusion", "fusion",
            "--valid-tilings", "--count"]
    code, out, _ = run_cli(capsys, *argv)
    assert code == 0
    for _ in range(2):
        code, out, err = run_cli(capsys, *argv, "--budget", "5")
        assert code == 3 and "budget of 5 points" in err and out == ""


def test_a_huge_gather_table_is_proven_at_one_runtime_value(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A 200000-row table: the runtime variable moves the read and the tile alike, so one
    value decides each program id and row; exactness over every value is not judged."""
    doc = tiled_json(capsys, "gather_huge_table.hlo", "2,8", "--check")
    table = next(i for i in doc["check"]["instructions"] if i["name"] == "table")
    assert table["covers"] is True and table["exact"] is None
    assert doc["check"]["ok"] and not doc["check"]["undecided"]


@st.composite
def windows(draw: st.DrawFn) -> IndexingMap:
    """``c d0 + s0 + k`` (a reduce-window or convolution's input: a tile of outputs and a
    window over each), strides that do not nest."""
    e0, n = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    c = draw(st.integers(1, 3))
    sign = draw(st.sampled_from([1, -1]))
    return IndexingMap.create([Interval(0, e0 - 1)], [sign * c * dim(0) + sym(0)],
                              [Interval(0, n - 1)])


@given(windows())
def test_the_box_around_a_window_holds_every_value(m: IndexingMap) -> None:
    """With ``hulls`` (the analysis' fallback), a window's tile is the box from its least
    to its largest value: every value the origin tile takes is in it; for stride 1 it is
    exactly those values."""
    tile = symbolic_tile(m, hulls=True)
    for (size,) in itertools.product(range(1, m.dims[0].hi + 2)):
        offsets, tsizes, strides = tile.evaluate_box([size])
        box = {offsets[0] + strides[0] * k for k in range(tsizes[0])}
        want = {m.evaluate([p], [s])[0] for p in range(size)
                for s in range(m.ranges[0].hi + 1)}
        assert want <= box, (m, size)
        if abs(int(as_expr(m.results[0]).coeff(dim(0)))) == 1:
            assert want == box, (m, size)


def test_a_rope_concatenate_through_bitcasts_is_tiled_whole_or_in_halves() -> None:
    """rotate_half as XLA's GPU fusions see it: the halves stacked as a dimension of 2,
    the second at offset 1 of it (a term `d3 - 1` with d3 in [1, 1]), concatenated and
    bitcast back. A tile of the whole head dimension (8) spans the concatenated dimension
    (no divisibility rule to meet); halves and smaller tiles lie in one operand."""
    comp = comp_of("rope_stacked.hlo")
    t = analysis.analyze(comp)
    for d3 in (1, 2, 4, 8):
        assert tiled.constraints_hold(t, [1, 2, 4, d3])
        assert differences(comp, [1, 2, 4, d3]) == 0
    assert check_tiling(t, [2, 3, 4, 8])["ok"]


def test_interior_padding_is_a_mask_on_the_box(capsys: pytest.CaptureFixture[str]) -> None:
    """lax.pad with interior padding: the operand is read at every other row; its tile is
    the box around those reads, the constraint listed as a mask (XLA refuses)."""
    code, out, _ = run_cli(capsys, "tile", str(DATA / "pad_interior.hlo"), "--fusion",
                           "fusion", "--format", "json")
    doc = json.loads(out)
    assert code == 0
    masked = [i for i in doc["instructions"] if i.get("masks")]
    assert masked and any("mod 2" in m for i in masked for m in i["masks"])
    comp = comp_of("pad_interior.hlo")
    t = analysis.analyze(comp)
    for sizes in ([1, 1], [2, 4], [4, 13], [9, 16], [3, 5]):
        assert differences(comp, sizes) == 0, sizes
    assert all(i["covers"] for i in check_tiling(t, [2, 4])["instructions"])


def test_a_call_is_tiled_through_its_computation(capsys: pytest.CaptureFixture[str]) -> None:
    """JAX lowers jnp.flip to a call; the entry, tiled as one fusion, goes through it (path
    .called_root), its parameter continuing to the call's operand (.caller_operand)."""
    code, out, err = run_cli(capsys, "tile", str(DATA / "flip_call.hlo"), "--sizes", "8",
                             "--format", "json")
    assert code == 0, err
    paths = [x["path"] for x in json.loads(out)["tiled"]]
    assert any(p.endswith(".called_root") for p in paths)
    assert any(p.endswith(".caller_operand(0)") for p in paths)
    comp = load_module(str(DATA / "flip_call.hlo")).entry
    for sizes in ([16], [8], [4], [1]):
        assert differences(comp, sizes) == 0, sizes


def test_a_floordiv_tile_must_not_straddle_blocks(capsys: pytest.CaptureFixture[str]) -> None:
    """jnp.repeat(x, 3, axis=0): output row r reads row r floordiv 3. A tile of 2 rows
    starting at row 2 reads rows 0 and 1: two rows, where XLA's size ceil(2 / 3) says one.
    A fusion's tiles start at every multiple of the tile size, so a floordiv is constrained
    as a mod is (3 and the tile size divide one another); the tilings left are sound."""
    comp = comp_of("repeat_rows.hlo")
    t = analysis.analyze(comp)
    assert not tiled.constraints_hold(t, [2, 4])
    assert differences(comp, [2, 4]) > 0            # the tile XLA's rule gives misses a row
    valid = list(valid_tilings(t))
    assert {v[0] for v in valid} == {1, 12}
    for sizes in valid:
        assert differences(comp, list(sizes)) == 0, sizes
    code, out, _ = run_cli(capsys, "tile", "(d0) -> (d0 floordiv 3), domain: d0 in [0, 11]")
    assert "constraints" not in out                 # the map-level tile stays XLA's


def test_masks_are_listed_in_text_order_whatever_the_hash_seed() -> None:
    """A map's constraints are kept in hash order, which differs from process to process;
    the masks a tile lists are sorted by text, so ``symidx tile`` prints the same answer
    under every ``PYTHONHASHSEED``."""
    conv = Path(__file__).resolve().parent / "data" / "hlo" / "conv2d.compiled.hlo"
    outs = []
    for seed in ("0", "1", "7"):
        run = subprocess.run([sys.executable, "-m", "symidx", "tile", str(conv), "--format",
                              "json"], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "PYTHONHASHSEED": seed})
        assert run.returncode == 0, run.stderr
        outs.append(run.stdout)
    assert outs[0] == outs[1] == outs[2]
    masks = [i["masks"] for i in json.loads(outs[0])["instructions"] if i.get("masks")]
    assert any(len(m) >= 2 for m in masks)
    for m in masks:
        constraints = [x for x in m if " in [" in x]
        assert constraints == sorted(constraints)
