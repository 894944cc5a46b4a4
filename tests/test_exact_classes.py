"""The six classes of avoidable over-approximation a value oracle found (issue 36), each
fixed as a class, on the JAX programs of :mod:`exact_programs` (modules in
``tests/data/exact/``, lowered and compiled for the CPU):

1. an iota column of a scatter's or gather's indices (vmap of a scatter-add, of a
   dynamic-update-slice) is the index, not a runtime value;
2. indices computed from constants only (``x[jnp.triu_indices(4, 1)]``) are folded;
3. an inner loop whose trip count is the outer counter is unrolled per outer state;
4. a ``cond`` on a loop counter's parity or range runs one branch per iteration;
5. a sort's key outputs read no payload, a payload its own operand and the keys;
6. a variadic reduce's output reads the components its reducer computes it from.

The twins, without JAX, against the reference interpreter (:mod:`reference_interpreter`,
written from the ops' definitions): every module's maps are sound for every run and exact
for it with their runtime variables set to the run's values, and -- the check the old maps
fail -- their union over the runtime variables is exactly the union of what runs over
every value of the integer inputs read (one run when there are none: the indices, the trip
counts and the branches are then known before the run); the module XLA compiles gives the
lowered module's relations, and input-to-output is the inverse relation. With JAX, against
XLA itself, NaN and infinities included: 0 unsound, and exact on each program's ``exact``
pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from exact_programs import DATA, Program
from reference_interpreter import Execution, execute, held_outside, is_integer, map_relation

from symidx.analysis import ComputationMaps, computation_maps
from symidx.core.indexing_map import IndexingMap
from symidx.hlo import HloComputation, TupleShape, parse_hlo
from symidx.hlo.leaves import leaves

#: Program name -> its class, as exact_programs.py lists them (that module needs JAX to
#: build the programs, not to name them).
CLASSES = {
    "vmap_scatter_add": 1, "vmap_dynamic_update_slice": 1, "vmap_dynamic_slice": 1,
    "triu_indices_gather": 2, "tril_indices_set": 2, "nested_loop_triangle": 3,
    "scan_parity_cond": 4, "fori_parity_cond": 4, "fori_range_cond": 4,
    "sort_payload": 5, "sort_two_keys": 5, "argmax_pairs": 6}
STAGES = ("lowered", "compiled")
CASES = [(name, stage) for name in sorted(CLASSES) for stage in STAGES]


@cache
def _entry(name: str, stage: str) -> HloComputation:
    path = DATA / f"{name}.{stage}.hlo"
    return parse_hlo(path.read_text(), source=path.name).entry


@cache
def _maps(name: str, stage: str) -> tuple[ComputationMaps, ...]:
    return tuple(computation_maps(_entry(name, stage), "output_to_input"))


Relations = dict[tuple[int, int], np.ndarray]


def _whole(name: str, stage: str) -> Relations:
    """Per (output leaf, parameter): the pairs the maps relate, runtime variables over
    their whole intervals."""
    comp = _entry(name, stage)
    found = {}
    for record in _maps(name, stage):
        out = leaves(comp.root.shape)[record.index].dims
        for group in record.groups:
            assert group.unsupported is None and group.opaque is None, (record.index, group)
            param = leaves(comp.parameters[group.index].shape)[0].dims
            found[(record.index, group.index)] = map_relation(group.maps, out, param)
    return found


def _arguments(comp: HloComputation, value: int) -> list[object]:
    """Every element of every integer parameter ``value`` (floats are never read)."""
    args: list[object] = []
    for p in comp.parameters:
        assert not isinstance(p.shape, TupleShape)
        args.append(np.full(p.shape.dims, value) if is_integer(p) else None)
    return args


def _values(comp: HloComputation) -> range:
    """The values the integer inputs take in the runs: every start and index that lands,
    clamps or is skipped, on each side (one run when no input is an integer)."""
    if not any(is_integer(p) for p in comp.parameters):
        return range(1)
    reach = max(max(p.shape.dims, default=1) for p in comp.parameters)
    return range(-2, reach + 3)


def _per_run(maps: Sequence[IndexingMap], run: Execution, one_run: bool) -> bool:
    """Do ``maps`` say what one run reads, with their runtime variables set to the run's
    values? When every input value is known (one run), or when they have runtime
    variables whose values the run holds (not inside a fusion). A map without one, where
    the inputs are integers, is the union over their values (the operand of a scatter at
    input indices: any update may be skipped)."""
    held = [run.value_of(str(v.source)) is not None for m in maps for v in m.rts]
    return all(held) and (one_run or bool(held))


def test_the_programs_cover_the_six_classes() -> None:
    assert sorted(set(CLASSES.values())) == [1, 2, 3, 4, 5, 6]
    assert {p.stem.split(".")[0] for p in DATA.glob("*.hlo")} == set(CLASSES)


@pytest.mark.parametrize(("name", "stage"), CASES, ids=[f"{n}.{s}" for n, s in CASES])
def test_maps_are_what_runs_over_every_value_read(name: str, stage: str) -> None:
    comp = _entry(name, stage)
    whole = _whole(name, stage)
    union: dict[tuple[int, int], set[int]] = {key: set() for key in whole}
    for value in _values(comp):
        run = execute(comp, _arguments(comp, value))
        for record in _maps(name, stage):
            out = leaves(comp.root.shape)[record.index].dims
            for group in record.groups:
                key = (record.index, group.index)
                param = leaves(comp.parameters[group.index].shape)[0].dims
                read = run.relation(group.index, record.index)
                assert np.isin(read, whole[key]).all(), f"{key}: unsound at {value}"
                if _per_run(group.maps, run, len(_values(comp)) == 1):
                    exact = map_relation(group.maps, out, param, run)
                    if held_outside(group.maps, run):
                        assert np.isin(exact, read).all(), key
                    else:
                        assert np.array_equal(exact, read), f"{key}: not exact at {value}"
                union[key].update(read.tolist())
    for key, pairs in whole.items():
        assert sorted(pairs.tolist()) == sorted(union[key]), \
            f"{key}: the maps relate {len(pairs)} pairs, the runs read {len(union[key])}"


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_the_compiled_module_reads_what_the_lowered_one_reads(name: str) -> None:
    lowered, compiled = _whole(name, "lowered"), _whole(name, "compiled")
    assert lowered.keys() == compiled.keys()
    for key in lowered:
        assert np.array_equal(lowered[key], compiled[key]), key


@pytest.mark.parametrize(("name", "stage"), CASES, ids=[f"{n}.{s}" for n, s in CASES])
def test_input_to_output_is_the_inverse_relation(name: str, stage: str) -> None:
    comp = _entry(name, stage)
    backward = _whole(name, stage)
    for record in computation_maps(comp, "input_to_output"):
        param = leaves(comp.parameters[record.index].shape)[0].dims
        for group in record.groups:
            assert group.opaque is None and group.unsupported is None
            out = leaves(comp.root.shape)[group.index].dims
            forward = map_relation(group.maps, param, out)
            n_param, n_out = int(np.prod(param)), int(np.prod(out))
            flipped = np.sort((forward % n_out) * n_param + forward // n_out)
            assert np.array_equal(flipped, backward[(group.index, record.index)]), \
                (group.index, record.index)


# --- each class, by name --------------------------------------------------------------------


def _pairs(name: str, key: tuple[int, int], stage: str = "compiled") -> int:
    return len(_whole(name, stage)[key])


def test_an_iota_column_of_vmapped_indices_is_the_batch_index() -> None:
    """vmap of ``x.at[i].add(u)``: row ``b`` of the output reads the indices and updates
    of batch ``b`` only (2 of each for each of its 5 elements), as the lowered scatter's
    batching dims say; the compiled module concatenates an iota column to the indices."""
    assert _pairs("vmap_scatter_add", (0, 1)) == _pairs("vmap_scatter_add", (0, 2)) == 3 * 5 * 2


def test_indices_from_constants_are_folded() -> None:
    """``x[jnp.triu_indices(4, 1)]`` reads the 6 elements above the diagonal, one each."""
    [record] = _maps("triu_indices_gather", "compiled")
    [group] = record.groups
    assert not any(m.rts for m in group.maps)
    assert sorted(divmod(int(p), 16) for p in _whole("triu_indices_gather", "compiled")[(0, 0)]) \
        == [(0, 1), (1, 2), (2, 3), (3, 6), (4, 7), (5, 11)]


def test_an_inner_trip_count_set_by_the_outer_counter() -> None:
    """``d[j] += d[j + 1]`` for ``j < i``, ``i < 4``: worked by hand, ``d[0]`` reads
    ``x[0..2]``, ``d[1]`` ``x[1..2]``, ``d[2]`` ``x[2..3]``, and the last two themselves
    (the loops labelled loop-carried read all 25 pairs)."""
    pairs = sorted(divmod(int(p), 5) for p in _whole("nested_loop_triangle", "compiled")[(0, 0)])
    assert pairs == [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2), (2, 3), (3, 3), (4, 4)]


def test_a_cond_on_the_counter_runs_one_branch_per_iteration() -> None:
    """``roll`` on even steps, ``* 2`` on odd ones, four steps: two rolls."""
    pairs = sorted(divmod(int(p), 3) for p in _whole("fori_parity_cond", "compiled")[(0, 0)])
    assert pairs == [(0, 1), (1, 2), (2, 0)]


def test_sorted_keys_read_no_payload_and_a_max_no_index() -> None:
    assert _pairs("sort_payload", (0, 1)) == 0 and _pairs("sort_payload", (1, 1)) == 25
    assert _pairs("sort_two_keys", (0, 2)) == _pairs("sort_two_keys", (1, 2)) == 0
    assert _pairs("argmax_pairs", (0, 1)) == 0 and _pairs("argmax_pairs", (1, 1)) == 3 * 4


# --- against XLA itself -----------------------------------------------------------------------


@cache
def _programs() -> dict[str, Program]:
    pytest.importorskip("jax")
    from exact_programs import programs

    return programs()


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_xla_shows_no_unsound_pair_and_the_exact_pairs_exactly(name: str) -> None:
    from xla_oracle import dependences, map_pairs

    program = _programs()[name]
    assert program.kind == CLASSES[name]
    import jax

    found = dependences(jax.jit(program.fn, keep_unused=True), list(program.shapes),
                        trials=2, ieee=True)
    for stage in STAGES:
        pairs, labels = map_pairs((DATA / f"{name}.{stage}.hlo").read_text())
        assert not labels, labels
        for key in set(pairs) | set(found):
            ours, theirs = pairs.get(key, set()), found.get(key, set())
            assert theirs <= ours, f"{stage} {key}: unsound at {sorted(theirs - ours)[:4]}"
            if key in program.exact:
                assert ours == theirs, f"{stage} {key}: loose at {sorted(ours - theirs)[:4]}"


def test_the_stored_modules_are_what_jax_makes_of_the_programs() -> None:
    """The modules in tests/data/exact are the programs' (a program changed without
    regenerating them fails here): each program's lowered module has the stored one's
    parameters."""
    from exact_programs import modules

    for name, program in _programs().items():
        stored = _entry(name, "lowered")
        fresh = parse_hlo(modules(program)["lowered"]).entry
        assert [p.shape for p in fresh.parameters] == [p.shape for p in stored.parameters]
        assert Path(DATA / f"{name}.compiled.hlo").exists()


# --- the dataflow of reducers and comparators --------------------------------------------------

REDUCERS = """HloModule m
swap {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  s0 = f32[] add(a1, b1)
  s1 = f32[] add(a0, b0)
  ROOT t = (f32[], f32[]) tuple(s0, s1)
}
chain {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  a2 = f32[] parameter(2)
  b0 = f32[] parameter(3)
  b1 = f32[] parameter(4)
  b2 = f32[] parameter(5)
  m = f32[] maximum(a0, b0)
  t = (f32[], f32[]) tuple(m, b1)
  first = f32[] get-tuple-element(t), index=0
  c = f32[] call(first, b1), to_apply=pick
  ROOT r = (f32[], f32[], f32[]) tuple(m, c, b2)
}
pick {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
by_second {
  a0 = f32[] parameter(0)
  b0 = f32[] parameter(1)
  a1 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  a2 = f32[] parameter(4)
  b2 = f32[] parameter(5)
  ROOT lt = pred[] compare(a1, b1), direction=LT
}
ENTRY e {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  z = f32[2,3] parameter(2)
  i = f32[] constant(0)
  swapped = (f32[2], f32[2]) reduce(x, y, i, i), dimensions={1}, to_apply=swap
  chained = (f32[2], f32[2], f32[2]) reduce(x, y, z, i, i, i), dimensions={1}, to_apply=chain
  ROOT sorted = (f32[2,3], f32[2,3], f32[2,3]) sort(x, y, z), dimensions={1}, to_apply=by_second
}
"""


def test_each_output_reads_the_components_its_reducer_reaches() -> None:
    """A reducer that swaps its components makes each output read both (a result reads
    the other's accumulator, over any number of applications); one whose results read
    their own component and the first's (through a tuple and a call) reads those; a sort
    compared by its second operand moves every operand by the second's order."""
    from symidx.ops.reduction import reduced_components, sort_keys

    comp = parse_hlo(REDUCERS).entry
    swapped, chained, ordered = (comp.instruction(n) for n in ("swapped", "chained", "sorted"))
    assert reduced_components(swapped, 2) == [frozenset({0, 1})] * 2
    assert reduced_components(chained, 3) == [
        frozenset({0}), frozenset({0, 1}), frozenset({2})]
    assert sort_keys(ordered) == frozenset({1})
    record = computation_maps(comp, "output_to_input")
    assert [[g.index for g in r.groups if not all(m.is_known_empty for m in g.maps)]
            for r in record] == [[0, 1], [1], [1, 2]]
