"""The steps of a ``while`` loop: exact when its trip count is known (the body's maps
composed over the iterations), otherwise a labelled over-approximation.

A loop runs on a state, the tuple of its carried leaves: state 0 is the initial value, the
body makes state ``k + 1`` from state ``k``, and the condition, evaluated on each state,
stops the loop at state ``N`` (the trip count), which is the result. So output leaf ``o``
reads, exactly, what the body's maps composed ``N`` times from ``o`` reach in state 0,
and, when its value is not passed through unchanged, what the condition reads in states
``0 .. N`` (the trip count decides its value). Input-to-output is the same composition
the other way.

**The trip count and the values of the counters.** The leaves whose values are known
before the program runs (integer constants, and what the body computes from them: a
counter and what is derived from it) are computed state after state with
:class:`symidx.hlo.fold.Evaluator`, and so is the condition: the first state on
which it is false gives ``N``. This is XLA's brute-force trip count
(``ComputeWhileLoopTripCount``), which covers its pattern (a counter initialised to a
constant, incremented by a constant, compared with a constant) and more. A loop whose
``backend_config`` states ``known_trip_count`` (and ``known_induction_variable`` with
``known_init_step``, as XLA's loop analysis writes them) takes those facts: they give the
counter's values where its initial value comes from a parameter; where both are known and
disagree, the trip count is unknown. A condition that reads anything else (data) leaves
the trip count unknown: the sweep then keeps its labelled over-approximation.

**Per iteration.** The body's maps are computed once (runtime variables name the body's
instructions holding offsets and indices). At iteration ``k`` each such variable whose
value is known in state ``k`` is replaced by that value
(:func:`symidx.fusion.runtime.resolve_runtime_vars`), so a ``dynamic-slice`` at the
counter reads row ``k`` at iteration ``k``, exactly. A variable whose value is not known
stays, ranging over its interval, without provenance (its instruction is inside the body).
Two shortcuts give the simplifier's maps without its rounds (each checked against the
simplifier by a twin test): a body map that is its own simplification, whose counter
variable only cuts one dimension's interval (``d0 - rt0 in [0, 0]``) or is a whole result,
is specialised by cutting that interval (:func:`symidx.fusion.runtime.resolve_runtime_vars`
with ``settled``); and a composition with the identity on intervals that hold every result
of a simplified map (a leaf the body passes on unchanged) is that map.

**Bounds.** Composing ``N`` times costs ``N`` rounds, and the maps of a value can grow by
one per iteration (a scan's output row ``k`` is written at iteration ``k``). When the body's
maps are the same at every iteration (no counter-dependent offset), the rounds stop as soon
as they change nothing (a fixed point: every further iteration gives the same maps), so an
elementwise or permuting body is exact for any trip count. Otherwise at most
:data:`UNROLL_LIMIT` iterations are composed, with at most :data:`MAP_LIMIT` distinct maps
per carried leaf and :data:`COMPOSE_LIMIT` compositions per query; beyond, the loop keeps
the labelled over-approximation and the label says why (``while NAME (loop-carried: 5000
iterations, beyond the unrolling limit of 64)``). Before a carried leaf's maps count as past
:data:`MAP_LIMIT`, those equal but for a constant offset along one result, with intervals
moving in step with it, are merged into one map with a range variable
(:func:`~symidx.core.simplify.merge.merge_offset_pieces`, exact): a scan reading row ``k`` of
its input at iteration ``k`` for output rows ``k ..`` gives one map per row, and they
become one. A merged map remembers the maps it was made of, so that at the next merge a
row added since joins them (:meth:`_Unroller.compacted`), and the loop's step gives the
merge over all of them (one map, not one per merge).

**Otherwise** (:func:`while_steps`): an output leaf the body passes through unchanged
reads the same element of the initial value (exact), and any other output leaf may read,
over the iterations, every element of each initial leaf its value depends on, directly or
through the loop condition (which decides the trip count). Those maps are a sound
over-approximation, labelled opaque (``"while NAME (loop-carried)"``, or ``"while NAME
(loop-carried: WHY)"`` past a bound).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from symidx.core.indexing_map import IndexingMap
from symidx.core.indexing_map.direction import OUTPUT_TO_INPUT, Direction
from symidx.core.interval import Interval
from symidx.core.simplify import compose, result_ranges
from symidx.core.simplify.finish import finish
from symidx.core.simplify.merge import merge_offset_pieces
from symidx.errors import SymidxError
from symidx.fusion.loop_states import (
    UNROLL_LIMIT,
    Specializer,
    State,
    Trips,
    loop_parts,
    producer,
    thawed_state,
    trip_count,
)
from symidx.fusion.reached import Reached, Step, Traced, identity_step
from symidx.fusion.runtime import resolve_runtime_vars
from symidx.hlo import HloComputation, HloInstruction
from symidx.hlo.leaves import leaf_count, leaf_source, leaves
from symidx.lowering.values import Scope, value_source
from symidx.ops.basic import every_element, from_scalar, to_scalar

__all__ = ["UNROLL_LIMIT", "MAP_LIMIT", "COMPOSE_LIMIT", "Trips", "trip_count",
           "Unrolled", "LoopCallee", "LoopFacts", "unrolled_maps", "merged", "while_steps",
           "passes_through"]

#: The most distinct maps kept for one carried leaf.
MAP_LIMIT = 32
#: The most compositions made for one query (one output leaf, or one initial leaf).
COMPOSE_LIMIT = 20_000

#: Per loop (each query of a loop reuses them): its trip count, the instructions holding
#: the leaves it passes on unchanged, and the specializers of its body and condition.
LoopFacts = tuple["Trips | None", dict[int, HloInstruction], tuple["Specializer", "Specializer"]]
#: A loop's facts are kept by its instruction, the initial state an enclosing loop fixes
#: and the computation whose values the initial state is read with (see
#: :func:`unrolled_maps`).
LoopKey = Hashable


class LoopCallee(Protocol):
    """What unrolling needs of the analysis of the body and the condition."""

    #: What unrolling keeps per loop for this analysis (see :func:`unrolled_maps`): the
    #: analysis owns it, so two analyses share nothing.
    loop_facts: dict[LoopKey, LoopFacts]

    def parameters_of(self, comp: HloComputation, output: int, scope: Scope | None = None
                      ) -> Mapping[tuple[int, int], Reached]:
        """From root leaf ``output`` to each (parameter number, leaf) it reads (``scope``:
        what a state of the loop fixes of the body, if anything)."""

    def outputs_of(self, comp: HloComputation, parameter: int, leaf: int,
                   scope: Scope | None = None) -> Mapping[int, Reached]:
        """From leaf ``leaf`` of parameter ``parameter`` to each root leaf that reads it."""

    def dependencies(self, comp: HloComputation) -> list[int]:
        """Per root leaf, the parameter-0 leaves it depends on, as a bit set."""


# --- the steps of a loop ----------------------------------------------------------------------


def while_steps(instr: HloInstruction, direction: Direction, index: int, leaf: int,
                callee: LoopCallee, comp: HloComputation | None = None,
                init: Hashable | None = None) -> list[Step]:
    """The steps of ``while`` ``instr`` from output leaf ``index`` (output-to-input), or
    from leaf ``leaf`` of its operand (input-to-output): exact when the trip count is known
    and the composition stays within its bounds (:func:`unrolled_maps`); otherwise the
    labelled over-approximation of :func:`_loop_sources`, the label saying which bound was
    passed. ``comp``: the computation holding ``instr`` (see :func:`unrolled_maps`).
    ``init``: the initial state's values an enclosing loop fixes at the state its analysis
    serves (:func:`frozen_state`; an inner loop whose trip count is the outer counter)."""
    body, condition = loop_parts(instr)
    backward = direction == OUTPUT_TO_INPUT
    through = frozenset(k for k in range(leaf_count(instr.shape)) if passes_through(body, k))
    found = unrolled_maps(instr, body, condition, callee, backward,
                          index if backward else leaf, through, comp, init)
    if isinstance(found, Unrolled):
        if backward:
            return [Step(index, 0, lf, tuple(Traced(m) for m in maps), opaque=found.opaque)
                    for lf, maps in sorted(found.maps.items())]
        return [Step(k, 0, leaf, tuple(Traced(m) for m in maps), opaque=found.opaque)
                for k, maps in sorted(found.maps.items())]
    reason = f"while {instr.name} (loop-carried" + (f": {found})" if found else ")")
    if backward:
        return [_loop_step(instr, index, source, body, False, reason)
                for source in _loop_sources(index, body, condition, callee)]
    return [_loop_step(instr, k, leaf, body, True, reason)
            for k in range(leaf_count(instr.shape))
            if leaf in _loop_sources(k, body, condition, callee)]


def _loop_sources(output: int, body: HloComputation,
                  condition: HloComputation, callee: LoopCallee) -> list[int]:
    """The leaves of the initial value that output leaf ``output`` may depend on."""
    if passes_through(body, output):
        return [output]
    through_body = callee.dependencies(body)
    needed = (1 << output) | _root_dependencies(callee.dependencies(condition))
    closure = 0
    while needed & ~closure:
        closure |= needed
        needed = 0
        for lf in _bits(closure):
            needed |= through_body[lf]
    return list(_bits(closure))


def _root_dependencies(per_leaf: list[int]) -> int:
    found = 0
    for bits in per_leaf:
        found |= bits
    return found


def _bits(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def _loop_step(instr: HloInstruction, output: int, source: int, body: HloComputation,
               forward: bool, reason: str) -> Step:
    if source == output and passes_through(body, output):
        return identity_step(instr, output, 0, source)
    out, init = leaves(instr.shape)[output].dims, leaves(instr.operands[0].shape)[source].dims
    m = every_element(init, out) if forward else every_element(out, init)
    return Step(output, 0, source, (Traced(m),), opaque=reason)


def passes_through(body: HloComputation, leaf: int) -> bool:
    """Does root leaf ``leaf`` of ``body`` hold parameter 0's leaf ``leaf`` unchanged (moved
    only by tuple, get-tuple-element, copy, opt-barrier and domain)?"""
    if len(body.parameters) != 1:
        return False
    instr, current = body.root, leaf
    for _ in range(len(body.instructions) + 1):
        if instr is body.parameters[0]:
            return current == leaf
        found = leaf_source(instr, current)
        if found is None:
            return False
        instr, current = found
    return False


# --- composing the iterations -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Unrolled:
    """The maps of a loop step: per leaf of the other side (initial leaves output-to-input,
    output leaves input-to-output) its distinct maps; ``opaque`` when a map of the body or
    the condition on the way over-approximates."""

    maps: dict[int, tuple[IndexingMap, ...]]
    opaque: str | None = None


class _TooMuch(SymidxError):
    """The work is beyond a bound; the message says which."""


Family = dict[int, dict[IndexingMap, None]]  # per state leaf: its distinct maps, in order


class _Unroller:
    """One query's composition over the iterations, within the bounds."""

    def __init__(self, callee: LoopCallee, body: HloComputation, condition: HloComputation,
                 trips: Trips, backward: bool,
                 specializers: tuple[Specializer, Specializer]) -> None:
        self.callee, self.body, self.condition = callee, body, condition
        self.trips, self.backward = trips, backward
        self.body_maps, self.condition_maps = specializers
        self.varying = False  # some map used changes with the iteration
        self.opaque: str | None = None
        self.compositions = 0
        self._memo: dict[tuple[IndexingMap, IndexingMap], IndexingMap] = {}
        self._settled: dict[IndexingMap, bool] = {}  # maps that are their simplification
        #: Maps made by merging offsets, each with the maps it was made of (its union is
        #: exactly theirs: a fact about the map's value, true wherever it appears).
        self.pieces: dict[IndexingMap, tuple[IndexingMap, ...]] = {}

    # -- the steps of one iteration, and of one evaluation of the condition

    def _reached(self, found: Mapping[tuple[int, int], Reached] | Mapping[int, Reached]
                 ) -> None:
        for r in found.values():
            if r.unsupported is not None:
                raise _TooMuch(f"{r.unsupported} in the loop has no indexing rule")
            self.opaque = self.opaque or r.opaque

    def body_step(self, leaf: int, k: int) -> dict[int, list[IndexingMap]]:
        """Iteration ``k``'s maps from ``leaf`` (of state ``k + 1`` backward, of state
        ``k`` forward) to the leaves of the other state: the body analysed once, or, where
        state ``k`` fixes a branch or an inner loop's initial state, once per such
        facts (:meth:`Specializer.fixed`)."""
        scope = self._scope(k)
        if self.backward:
            found = self.callee.parameters_of(self.body, leaf, scope)
            self._reached(found)
            pairs = [(lf, r) for (n, lf), r in found.items() if n == 0]
        else:
            outputs = self.callee.outputs_of(self.body, 0, leaf, scope)
            self._reached(outputs)
            pairs = list(outputs.items())
        return {lf: self._at(self.body_maps, r.maps, k) for lf, r in pairs}

    def _scope(self, k: int) -> Scope | None:
        """The scope of the body's analysis at iteration ``k``: what state ``k`` fixes
        (None: nothing, the one analysis of the body serves)."""
        state = self.trips.state(k)
        if state is None or not self.body_maps.decided:
            return None
        fixed = self.body_maps.fixed(k, state)
        if not fixed:
            return None
        self.varying = True  # the body's maps may differ from one iteration to the next
        return Scope(self.body, fixed=fixed)

    def condition_step(self, k: int) -> dict[int, list[IndexingMap]]:
        """Backward: the condition's maps at state ``k`` to the leaves of that state."""
        found = self.callee.parameters_of(self.condition, 0)
        self._reached(found)
        return {lf: self._at(self.condition_maps, r.maps, k)
                for (n, lf), r in found.items() if n == 0}

    def condition_from(self, leaf: int, k: int) -> list[IndexingMap]:
        """Forward: the condition's maps at state ``k`` from ``leaf`` to its scalar."""
        found = self.callee.outputs_of(self.condition, 0, leaf)
        self._reached(found)
        r = found.get(0)
        return [] if r is None else self._at(self.condition_maps, r.maps, k)

    def _at(self, specializer: Specializer, maps: Iterable[IndexingMap], k: int
            ) -> list[IndexingMap]:
        out = []
        for m in maps:
            if specializer.varies(m):
                self.varying = True
                state = self.trips.state(k)
                if state is None:
                    raise _TooMuch(_beyond(self.trips))
                m = specializer.at(m, k, state)
            out.append(m)
        return out

    # -- composition

    def compose(self, first: IndexingMap, second: IndexingMap) -> IndexingMap:
        key = (first, second)
        found = self._memo.get(key)
        if found is None:
            self.compositions += 1
            if self.compositions > COMPOSE_LIMIT:
                raise _TooMuch(f"more than {COMPOSE_LIMIT} compositions")
            if self._within_identity(first, second):
                found = self._memo[key] = first
            else:
                found = self._memo[key] = finish(compose(first, second),
                                                 fold_point_dims=True)
                self._settled.setdefault(found, True)  # what the simplifier gave
        return found

    def _within_identity(self, first: IndexingMap, second: IndexingMap) -> bool:
        """Is ``second`` the identity on intervals holding every result of ``first``
        (:func:`~symidx.core.simplify.result_ranges`, sound), and ``first`` its own
        simplification (a map this unroller's compositions gave, or one checked once)?
        Then the composition is ``first``: it adds only constraints that always hold,
        which the simplifier drops (a leaf the body passes on unchanged)."""
        if second.num_ranges or second.num_rts or second.constraints \
                or second.is_known_empty or second.is_undefined \
                or first.is_known_empty or first.is_undefined \
                or second.results != second.dim_vars:
            return False
        if not all(r in d for r, d in zip(result_ranges(first), second.dims)):
            return False
        settled = self._settled.get(first)
        if settled is None:
            again = finish(first, fold_point_dims=True)
            settled = self._settled[first] = again == first and again.names == first.names
        return settled

    # -- merging offsets past the limit

    def expanded(self, maps: Iterable[IndexingMap]) -> list[IndexingMap]:
        """``maps`` with each map made by :meth:`compacted` replaced by the maps it was
        made of (the same union)."""
        out: dict[IndexingMap, None] = {}
        for m in maps:
            out.update(dict.fromkeys(self.pieces.get(m, (m,))))
        return list(out)

    def compacted(self, maps: list[IndexingMap]) -> list[IndexingMap]:
        """``maps`` with those equal but for a constant offset along one result and
        intervals moving in step with it merged into one map with a range variable
        (:func:`~symidx.core.simplify.merge.merge_offset_pieces`, exact). Maps merged before
        are first taken apart again, so that a row the loop adds at a later iteration joins
        the rows merged before it (one map for a scan's rows, not one per merge)."""
        plain = self.expanded(maps)
        out: dict[IndexingMap, None] = {}
        for m, members in merge_offset_pieces(plain):
            if len(members) > 1:
                m = finish(m, fold_point_dims=True)
                self.pieces[m] = tuple(plain[i] for i in members)
            out[m] = None
        return list(out)

    def final(self, maps: list[IndexingMap]) -> tuple[IndexingMap, ...]:
        """A leaf's maps as the loop step gives them: pieces joined (:func:`merged`) and,
        past :data:`MAP_LIMIT`, offsets merged (:meth:`compacted`); maps merged on the
        way that need not be are taken apart again."""
        maps = merged(list(dict.fromkeys(maps)))
        if len(maps) > MAP_LIMIT or any(m in self.pieces for m in maps):
            maps = merged(self.expanded(maps))
            if len(maps) > MAP_LIMIT:
                maps = self.compacted(maps)
        return tuple(maps)

    def advance(self, family: Family, k: int) -> Family:
        """``family`` (maps to, or from, the leaves of one state) carried over iteration
        ``k``."""
        out: Family = {}
        for leaf, maps in family.items():
            for other, seconds in self.body_step(leaf, k).items():
                target = out.setdefault(other, {})
                for first in maps:
                    for second in seconds:
                        m = self.compose(first, second)
                        if not m.is_known_empty:
                            target[m] = None
        for other, target in out.items():
            if len(target) > 1:
                target = out[other] = dict.fromkeys(merged(list(target)))
            if len(target) > MAP_LIMIT:
                target = out[other] = dict.fromkeys(self.compacted(list(target)))
                if len(target) > MAP_LIMIT:
                    raise _TooMuch(f"more than {MAP_LIMIT} distinct maps for one carried "
                                   f"value")
        return {lf: maps for lf, maps in out.items() if maps}


def merged(maps: list[IndexingMap]) -> list[IndexingMap]:
    """``maps`` with any two that differ only in the interval of one dimension, where the
    two intervals overlap or touch, replaced by one map over their union (the same
    relation: each is the same formula on its part). A loop writing row ``k`` at iteration
    ``k`` gives one map per row; those over consecutive rows that read alike become one."""
    changed = True
    while changed:
        changed = False
        for i in range(min((m.num_dims for m in maps), default=0)):
            groups: dict[tuple[object, ...], list[IndexingMap]] = {}
            for m in maps:
                if m.is_known_empty or m.is_undefined or m.num_dims <= i:
                    groups.setdefault((id(m),), []).append(m)
                    continue
                key = m.key
                groups.setdefault((key[0][:i], key[0][i + 1:], *key[1:]), []).append(m)
            joined = [j for group in groups.values() for j in _joined(group, i)]
            if len(joined) < len(maps):
                maps, changed = joined, True
    return maps


def _joined(group: list[IndexingMap], i: int) -> list[IndexingMap]:
    """Maps differing only in the interval of dimension ``i``, with touching intervals
    joined."""
    if len(group) == 1:
        return group
    group = sorted(group, key=lambda m: m.dims[i].lo)
    out = [group[0]]
    for m in group[1:]:
        last = out[-1]
        if m.dims[i].lo <= last.dims[i].hi + 1:
            if m.dims[i].hi > last.dims[i].hi:
                dims = list(last.dims)
                dims[i] = Interval(last.dims[i].lo, m.dims[i].hi)
                out[-1] = finish(last.replace(dims=tuple(dims)), fold_point_dims=True)
        else:
            out.append(m)
    return out


def _union(a: Family, b: Family) -> Family:
    out = {lf: dict(maps) for lf, maps in a.items()}
    for lf, maps in b.items():
        out.setdefault(lf, {}).update(maps)
    return out


def _same(a: Family, b: Family) -> bool:
    return a.keys() == b.keys() and all(a[lf].keys() == b[lf].keys() for lf in a)


def _beyond(trips: Trips) -> str:
    if trips.count is None:
        return f"more than {UNROLL_LIMIT} iterations, beyond the unrolling limit"
    return f"{trips.count} iterations, beyond the unrolling limit of {UNROLL_LIMIT}"


def unrolled_maps(instr: HloInstruction, body: HloComputation, condition: HloComputation,
                  callee: LoopCallee, backward: bool, index: int,
                  passed_through: frozenset[int], comp: HloComputation | None = None,
                  init: Hashable | None = None) -> Unrolled | str | None:
    """The maps of ``while`` ``instr`` from output leaf ``index`` to the initial leaves
    (``backward``), or from initial leaf ``index`` to the output leaves, composed over the
    iterations. ``passed_through``: the leaves the body passes on unchanged (their values
    do not depend on the trip count). None when the trip count is unknown; a string saying
    which bound the work would pass (see the module docstring). ``comp``: the computation
    holding ``instr``, where a value the loop does not change is held: its holder is the
    representative of that value there (:func:`resolve_runtime_vars`); None: not known.
    ``init``: the initial state an enclosing loop fixes (:func:`frozen_state`), whose
    facts are kept apart from those of the loop on its own (and those read with another
    ``comp``)."""
    kept = callee.loop_facts
    key = (instr, init, comp)  # what is known of the initial state depends on both
    found_loop = kept.get(key)
    if found_loop is None:
        if len(kept) >= _CACHE_LIMIT:
            kept.clear()
        found_loop = kept[key] = _loop_facts(instr, body, condition, passed_through,
                                             None if init is None else thawed_state(init),
                                             comp)
    trips, invariant, specializers = found_loop
    if trips is None:
        return None
    unroller = _Unroller(callee, body, condition, trips, backward, specializers)
    try:
        found = _backward(unroller, instr, index, passed_through) if backward \
            else _forward(unroller, instr, index, passed_through)
    except _TooMuch as e:
        return str(e)
    sources = {value_source(held): held for held in invariant.values()}
    return replace(found, maps={lf: tuple(resolve_runtime_vars(m, sources, clamp=False,
                                                               comp=comp)
                                          for m in maps)
                                for lf, maps in found.maps.items()})


_CACHE_LIMIT = 256  # loops whose facts an analysis keeps (then it starts afresh)


def _loop_facts(instr: HloInstruction, body: HloComputation, condition: HloComputation,
                passed_through: frozenset[int], init: State | None = None,
                comp: HloComputation | None = None) -> LoopFacts:
    invariant = {}
    for lf in passed_through:
        held = producer(instr.operands[0], lf)
        if held is not None:
            invariant[lf] = held
    return (trip_count(instr, body, condition, init=init, comp=comp), invariant,
            (Specializer(body, invariant), Specializer(condition, invariant)))


def _rounds(unroller: _Unroller) -> int:
    """How many iterations to compose: the trip count, unless the body's maps turn out
    not to change with the iteration (then a fixed point ends the rounds first)."""
    count = unroller.trips.count
    return UNROLL_LIMIT + 1 if count is None or count > UNROLL_LIMIT else count


def _backward(u: _Unroller, instr: HloInstruction, output: int,
              passed_through: frozenset[int]) -> Unrolled:
    count = u.trips.count
    dims = leaves(instr.shape)[output].dims
    reads: Family = {output: {IndexingMap.identity(dims): None}}
    control = output not in passed_through
    last = count if count is not None and count <= UNROLL_LIMIT else None
    decides: Family = _family(u.condition_step(-1 if last is None else last)) if control \
        else {}
    for r in range(_rounds(u)):
        k = -1 if last is None else last - 1 - r  # unknown states (-1): nothing varies
        before = (reads, decides)
        reads = u.advance(reads, k)
        if control:
            decides = _union(u.advance(decides, k), _family(u.condition_step(k)))
        if not u.varying and _same(reads, before[0]) and _same(decides, before[1]):
            break
    else:
        if last is None:
            raise _TooMuch(_beyond(u.trips))
    found = {lf: list(maps) for lf, maps in reads.items()}
    for lf, maps in decides.items():
        whole = to_scalar(dims)
        found.setdefault(lf, []).extend(u.compose(whole, m) for m in maps)
    return Unrolled({lf: u.final(maps) for lf, maps in found.items() if maps}, u.opaque)


def _forward(u: _Unroller, instr: HloInstruction, leaf: int,
             passed_through: frozenset[int]) -> Unrolled:
    count = u.trips.count
    dims = leaves(instr.operands[0].shape)[leaf].dims
    reached: Family = {leaf: {IndexingMap.identity(dims): None}}
    known = count is not None and count <= UNROLL_LIMIT
    decides: dict[IndexingMap, None] = dict.fromkeys(_decides(u, reached, 0 if known else -1))
    for k in range(_rounds(u)):
        step = k if known else -1
        before = (reached, dict(decides))
        reached = u.advance(reached, step)
        decides.update(dict.fromkeys(_decides(u, reached, step + 1 if known else -1)))
        if not u.varying and _same(reached, before[0]) and decides.keys() == before[1].keys():
            break
    else:
        if not known:
            raise _TooMuch(_beyond(u.trips))
    found = {o: list(maps) for o, maps in reached.items()}
    for o, out in enumerate(leaves(instr.shape)):
        if o not in passed_through and decides:
            spread = from_scalar(out.dims)
            found.setdefault(o, []).extend(u.compose(m, spread) for m in decides)
    return Unrolled({o: u.final(maps) for o, maps in found.items() if maps}, u.opaque)


def _decides(u: _Unroller, reached: Family, k: int) -> list[IndexingMap]:
    """Forward: from the initial leaf to the condition's scalar at state ``k``."""
    out = []
    for lf, maps in reached.items():
        for second in u.condition_from(lf, k):
            for first in maps:
                m = u.compose(first, second)
                if not m.is_known_empty:
                    out.append(m)
    return out


def _family(step: dict[int, list[IndexingMap]]) -> Family:
    return {lf: dict.fromkeys(m for m in maps if not m.is_known_empty)
            for lf, maps in step.items() if maps}

