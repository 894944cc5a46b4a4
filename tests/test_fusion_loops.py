"""``while`` loops whose trip count is known (symidx.fusion.loops): the maps are the body's
composed over the iterations, checked against executing the loop
(:mod:`reference_interpreter`, written from the ops' definitions): EXACTLY what is read,
output-to-input and input-to-output, for an elementwise body, a permuting body, a scan
that slices and updates at the counter, a carry feeding another, nested loops, and trip
counts found by running the counter or stated in ``backend_config``. A loop whose trip
count depends on data, or whose unrolling passes a bound, keeps the sound labelled
over-approximation, and the label says why."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from reference_interpreter import execute, map_relation, provenance_known

from symidx.analysis import computation_maps
from symidx.core.expr import dim, rt
from symidx.core.indexing_map import IndexingMap, RuntimeVar, ValueSource
from symidx.core.interval import Interval
from symidx.core.simplify import compose
from symidx.core.simplify.finish import finish
from symidx.core.syntax import print_map
from symidx.fusion import Analysis
from symidx.fusion.loops import MAP_LIMIT, UNROLL_LIMIT, _Unroller, merged, trip_count
from symidx.fusion.runtime import resolve_runtime_vars
from symidx.hlo import HloComputation, Shape, parse_hlo
from symidx.hlo.leaves import leaves
from symidx.lowering.values import KnownValue

DATA = Path(__file__).parent / "data" / "loops"


def _entry(name: str) -> HloComputation:
    return parse_hlo((DATA / name).read_text(), source=name).entry


def _while(comp: HloComputation, name: str = "loop"):  # noqa: ANN202
    instr = comp.instruction(name)
    return instr, instr.called_computations["body"][0], \
        instr.called_computations["condition"][0]


def _pairs(maps: tuple[IndexingMap, ...], source: tuple[int, ...], target: tuple[int, ...]
           ) -> np.ndarray:
    return map_relation(maps, source, target)


def check_against_execution(comp: HloComputation, args: list[object],
                            exact: bool = True) -> list[str | None]:
    """Both directions against one run: every read pair is in the maps; exactly the read
    pairs where a group is not labelled (``exact``: no group may be). Returns the labels
    met."""
    run = execute(comp, args)
    labels: list[str | None] = []
    backward = computation_maps(comp, "output_to_input", analysis=Analysis())
    for record in backward:
        out_dims = leaves(comp.root.shape)[record.index].dims
        for group in record.groups:
            assert group.unsupported is None
            leaf = group.leaf or 0
            param_dims = leaves(comp.parameters[group.index].shape)[leaf].dims
            read = run.relation(group.index, record.index, leaf)
            claimed = _pairs(group.maps, out_dims, param_dims)
            where = f"output {record.index} -> parameter {group.index}"
            assert np.isin(read, claimed).all(), f"{where}: unsound"
            if group.maps:
                labels.append(group.opaque)
            if exact:
                assert group.opaque is None, where
            if group.opaque is None:
                assert provenance_known(group.maps), where
                assert np.array_equal(claimed, read), f"{where}: not exact"
    forward = computation_maps(comp, "input_to_output", analysis=Analysis())
    for record in forward:
        leaf = record.leaf or 0
        param_dims = leaves(comp.parameters[record.index].shape)[leaf].dims
        n_param = int(np.prod(param_dims))
        for group in record.groups:
            out_dims = leaves(comp.root.shape)[group.index].dims
            n_out = int(np.prod(out_dims))
            reached = _pairs(group.maps, param_dims, out_dims)
            flipped = np.sort((reached % n_out) * n_param + reached // n_out)
            read = run.relation(record.index, group.index, leaf)
            where = f"parameter {record.index} -> output {group.index}"
            assert np.isin(read, flipped).all(), f"{where}: unsound"
            if group.maps:
                labels.append(group.opaque)
            if group.opaque is None:
                assert np.array_equal(flipped, read), f"{where}: not exact"
            elif exact:
                raise AssertionError(f"{where}: labelled {group.opaque}")
    return labels


# --- exact -----------------------------------------------------------------------------------


def test_an_elementwise_body_reads_the_same_element() -> None:
    comp = _entry("elementwise.hlo")
    check_against_execution(comp, [None])
    (record,) = computation_maps(comp, "output_to_input")
    assert [str(m) for m in record.groups[0].maps] == [
        "(d0, d1) -> (d0, d1),\ndomain:\nd0 in [0, 2],\nd1 in [0, 3]"]


def test_a_permuting_body_is_a_permutation() -> None:
    comp = _entry("roll.hlo")
    check_against_execution(comp, [None])
    (record,) = computation_maps(comp, "output_to_input")
    pairs = _pairs(record.groups[0].maps, (3, 4), (3, 4))
    # rolled twice along dimension 1: out[i, j] = x[i, (j - 2) mod 4], a bijection
    expected = sorted((r * 4 + j) * 12 + r * 4 + (j - 2) % 4
                      for r in range(3) for j in range(4))
    assert pairs.tolist() == expected


def test_a_scan_reads_its_row_at_each_iteration() -> None:
    comp = _entry("scan.hlo")
    check_against_execution(comp, [np.int64(0), None, None, None])
    c, ys = computation_maps(comp, "output_to_input")
    # ys[r] = 2 * (c0 + xs[0] + .. + xs[r]): rows 0..r of xs, c0, nothing of ys0
    xs = {g.index: g for g in ys.groups}[3]
    pairs = _pairs(xs.maps, (5, 3), (5, 3))
    assert pairs.tolist() == sorted((r * 3 + j) * 15 + q * 3 + j
                                    for r in range(5) for j in range(3)
                                    for q in range(r + 1))
    assert not {g.index: g for g in ys.groups}[2].maps  # every row is overwritten


def test_a_carry_feeding_another_carry() -> None:
    check_against_execution(_entry("carries.hlo"), [None, None])


def test_nested_loops_compose_the_inner_loop_per_outer_iteration() -> None:
    comp = _entry("nested.hlo")
    check_against_execution(comp, [None, None])
    (record,) = computation_maps(comp, "output_to_input")
    xs = record.groups[1]
    assert not any(m.rts for m in xs.maps)  # the outer counter was known at each step


def test_a_fixed_point_keeps_a_long_loop_exact() -> None:
    comp = _entry("elementwise_long.hlo")
    instr, body, cond = _while(comp)
    assert trip_count(instr, body, cond).count is None  # more than the simulated states
    check_against_execution(comp, [None])


# --- labelled ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_a_data_dependent_trip_count_stays_labelled(n: int) -> None:
    labels = check_against_execution(_entry("data_dependent.hlo"), [np.int64(n), None],
                                     exact=False)
    assert set(labels) == {"while loop (loop-carried)"}


def test_beyond_the_unrolling_limit_stays_labelled_and_says_why() -> None:
    labels = check_against_execution(_entry("scan_long.hlo"),
                                     [np.int64(0), None, None, None], exact=False)
    assert set(labels) == {f"while loop (loop-carried: 100 iterations, beyond the unrolling "
                           f"limit of {UNROLL_LIMIT})"}


# --- the trip count ----------------------------------------------------------------------------


def test_the_trip_count_runs_the_counter() -> None:
    instr, body, cond = _while(_entry("carries.hlo"))
    trips = trip_count(instr, body, cond)
    assert trips is not None and trips.count == 4  # 7, 5, 3, 1, then 0 > 0 fails
    assert [int(s[1]) for s in trips.states] == [7, 5, 3, 1, -1]
    instr, body, cond = _while(_entry("roll.hlo"))
    assert trip_count(instr, body, cond).count == 2  # 1 and 2 pass i <= 2


def test_the_trip_count_stated_in_backend_config_gives_the_counter() -> None:
    instr, body, cond = _while(_entry("scan.hlo"))  # the counter starts from a parameter
    trips = trip_count(instr, body, cond)
    assert trips is not None and trips.count == trips.stated == 5
    assert [int(s[0]) for s in trips.states] == [0, 1, 2, 3, 4, 5]


def test_no_trip_count_when_the_condition_reads_data() -> None:
    instr, body, cond = _while(_entry("data_dependent.hlo"))
    assert trip_count(instr, body, cond) is None


def test_a_stated_trip_count_that_contradicts_the_counter_is_not_used() -> None:
    text = (DATA / "elementwise.hlo").read_text().replace(
        "condition=cond, body=body", 'condition=cond, body=body, '
        'backend_config={"known_trip_count":{"n":"4"}}')
    comp = parse_hlo(text).entry
    instr, body, cond = _while(comp)
    assert trip_count(instr, body, cond) is None
    assert set(check_against_execution(comp, [None], exact=False)) == {
        "while loop (loop-carried)"}


# --- the parts ---------------------------------------------------------------------------------


def test_merging_joins_touching_pieces_only() -> None:
    a = IndexingMap.create([(0, 1), 3], [0, dim(1)])
    b = IndexingMap.create([(2, 2), 3], [0, dim(1)])
    c = IndexingMap.create([(4, 4), 3], [0, dim(1)])  # [0, 2] and [4, 4] do not touch
    other = IndexingMap.create([(3, 3), 3], [1, dim(1)])  # another formula
    found = merged([a, b, c, other])
    assert sorted(found, key=str) == sorted(
        [IndexingMap.create([(0, 2), 3], [0, dim(1)]), c, other], key=str)


def test_each_analysis_keeps_its_own_memos():
    """Compositions, interned maps and loop facts belong to one Analysis: a second
    analysis starts empty, shares no map object with the first and finds the same maps."""
    comp = _entry("nested.hlo")
    first, second = Analysis(), Analysis()

    def found(analysis: Analysis) -> list[object]:
        return [(r.index, [(g.index, g.leaf, g.maps) for g in r.groups])
                for r in computation_maps(comp, "output_to_input", analysis=analysis)]

    ours = found(first)
    assert first.memo.composed and first.memo.interned and len(first.memo.loops) == 2
    assert not (second.memo.composed or second.memo.interned or second.memo.loops)
    assert found(second) == ours
    assert second.memo.loops.keys() == first.memo.loops.keys()
    assert not {id(m) for m in first.memo.interned.values()} & \
        {id(m) for m in second.memo.interned.values()}


def test_a_counter_value_resolves_a_runtime_variable_without_an_instruction() -> None:
    """What the loop code hands the resolver for a counter in one state: its value, shape
    and name (a ``KnownValue``), no instruction. An offset ``d0 + rt0`` (``rt0`` in
    ``[0, 6]``) held by the counter ``i``: 5 replaces it; 9 is clamped to 6 (HLO clamps a
    start); a counter table ``{4, 0, 2, 2}`` read at ``d0`` narrows ``rt0`` to ``[0, 4]``;
    a ``pred`` leaves it, still naming ``i``. Expected by hand."""
    d0 = dim(0)
    source = ValueSource("i", computation="body", instruction="i")

    def resolved(shape: Shape, values: np.ndarray, element: list) -> IndexingMap:
        held = IndexingMap.create([Interval(0, 3)], element)
        m = IndexingMap.create([Interval(0, 3)], [d0 + rt(0)],
                               rts=[RuntimeVar(Interval(0, 6), source, held)])
        return resolve_runtime_vars(m, {source: KnownValue(source, shape, values)},
                                    clamp=False)

    scalar = Shape("s32", ())
    assert print_map(resolved(scalar, np.array(5, np.int32), []), "xla") == \
        "(d0) -> (d0 + 5), domain: d0 in [0, 3]"
    assert print_map(resolved(scalar, np.array(9, np.int32), []), "xla") == \
        "(d0) -> (d0 + 6), domain: d0 in [0, 3]"
    table = resolved(Shape("s32", (4,)), np.array([4, 0, 2, 2], np.int32), [d0])
    assert [(v.bounds, str(v.source)) for v in table.rts] == [(Interval(0, 4), "i")]
    flag = resolved(Shape("pred", ()), np.array(True), [])
    assert [(v.bounds, str(v.source)) for v in flag.rts] == [(Interval(0, 6), "i")]


# --- long scans: rows read one per iteration, merged into one map with a variable ----------


@pytest.mark.parametrize("name", ["gru_scan_40.hlo", "lstm_scan_40.hlo"])
def test_a_long_recurrent_scan_stays_exact(name: str) -> None:
    """A GRU or LSTM over 40 steps reads row k of its input at step k: one map per row
    (more than MAP_LIMIT), merged into one map whose row is a range variable tied to the
    output row, exactly as executing the loop reads (both directions)."""
    comp = _entry(name)
    check_against_execution(comp, [None, None, None])
    (record,) = computation_maps(comp, "output_to_input", analysis=Analysis())
    xs = {g.index: g for g in record.groups}[0]
    # one map, not one per merge: rows added after a merge join the rows merged before
    assert len(xs.maps) == 1 < MAP_LIMIT
    # output row d0 reads input rows 0 .. d0
    pairs = _pairs(xs.maps, (40, 2, 2), (40, 2, 1))
    assert pairs.tolist() == sorted((((r * 2 + b) * 2 + j) * 80) + q * 2 + b
                                    for r in range(40) for b in range(2) for j in range(2)
                                    for q in range(r + 1))


def test_a_bidirectional_scan_stays_exact() -> None:
    """Two GRU scans over 36 steps, one of them reversed (row ``35 - k`` at iteration
    ``k``: the rows arrive in decreasing order), both exact against execution."""
    comp = _entry("bidirectional_gru_36.hlo")
    assert check_against_execution(comp, [None] * 5)


# --- the per-iteration shortcut: the same maps as the simplifier's --------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.hlo")))
def test_the_per_iteration_shortcuts_give_the_simplifiers_maps(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Wherever a loop's body map takes the shortcut (runtime._narrowed_dim: the counter
    only cuts a dim's interval or is a whole result), the map is the one the simplifier
    gives for the same substitution (runtime._substitute); wherever a composition with an
    identity is skipped (_Unroller._within_identity), the simplified composition is the
    map kept: equal, and printed alike."""
    from symidx.fusion import runtime

    shortcut, taken = runtime._narrowed_dim, []

    def checked(m: IndexingMap, i: int, value):  # noqa: ANN001, ANN202
        fast = shortcut(m, i, value)
        if fast is not None:
            slow = runtime._substitute(m, i, value)
            assert fast == slow and print_map(fast) == print_map(slow), (m, value)
            taken.append(fast)
        return fast

    within, kept = _Unroller._within_identity, []

    def checked_identity(self: _Unroller, first: IndexingMap, second: IndexingMap) -> bool:
        if within(self, first, second):
            slow = finish(compose(first, second), fold_point_dims=True)
            assert slow == first and print_map(slow) == print_map(first), (first, second)
            kept.append(first)
            return True
        return False

    monkeypatch.setattr(runtime, "_narrowed_dim", checked)
    monkeypatch.setattr(_Unroller, "_within_identity", checked_identity)
    comp = _entry(name)
    for direction in ("output_to_input", "input_to_output"):
        computation_maps(comp, direction, analysis=Analysis())
    if name in ("gru_scan_40.hlo", "lstm_scan_40.hlo", "scan.hlo"):  # unrolled scans
        assert taken, "a scan's body reads its row at the counter: the shortcut applies"
        assert kept, "a scan passes its input on unchanged: composing with the identity"
