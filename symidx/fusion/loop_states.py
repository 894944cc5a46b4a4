"""A ``while`` loop's states: its trip count and the values its counters hold state after
state, and the body's maps at one state (see :mod:`symidx.fusion.loops`, which composes
them over the iterations).

**The trip count and the values of the counters.** The leaves whose values are known
before the program runs (integer constants, and what the body computes from them: a
counter and what is derived from it) are computed state after state with
:class:`symidx.hlo.fold.Evaluator`, and so is the condition: the first state on which it
is false gives ``N`` (:func:`trip_count`). A loop's ``backend_config`` may state the trip
count and its counter.

**One state.** :class:`Specializer` gives the maps of the body (or the condition) at one
state: runtime variables naming its instructions replaced by their values in that state;
and what that state fixes of the conditionals and inner loops of the body
(:meth:`Specializer.fixed`): a conditional's branch (a ``cond`` on the parity of the
counter) and the initial state of an inner loop whose trip count is not known otherwise
(an inner loop whose trip count is the outer counter). The body is then analysed once per
distinct such facts (:attr:`symidx.lowering.values.Scope.fixed`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from symidx.core.indexing_map import IndexingMap, ValueSource
from symidx.core.simplify.finish import finish
from symidx.errors import HloShapeError, SymidxError
from symidx.fusion.runtime import resolve_runtime_vars
from symidx.hlo import HloComputation, HloInstruction, Shape
from symidx.hlo.facts import branch_attributes, branch_of
from symidx.hlo.leaves import element_leaves, leaf_count, leaf_source, leaves
from symidx.lowering.values import (
    MAX_DEPTH,
    KnownValue,
    counter_dtype,
    evaluator,
    known_leaves,
    value_source,
)

# The evaluator needs numpy: it is imported when a loop is analysed, not at start-up.
if TYPE_CHECKING:
    from symidx.hlo.fold import Evaluator, Value

__all__ = ["UNROLL_LIMIT", "State", "Trips", "trip_count", "Specializer", "Fixed",
           "frozen_state", "thawed_state", "loop_parts", "producer"]

#: The most iterations composed one by one (a body whose maps change with the counter).
UNROLL_LIMIT = 64

State = tuple["Value | None", ...]  # per leaf of a loop's state: its value, if known


def loop_parts(instr: HloInstruction) -> tuple[HloComputation, HloComputation]:
    """The body and the condition of ``while`` ``instr`` (:class:`HloShapeError` unless it
    has one of each and one operand)."""
    called = instr.called_computations
    body, condition = called.get("body", ()), called.get("condition", ())
    if len(body) != 1 or len(condition) != 1 or len(instr.operands) != 1:
        raise HloShapeError(f"while {instr.name}: expected one operand, body= and "
                            f"condition=")
    return body[0], condition[0]


# --- the trip count ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Trips:
    """A loop's trip count (None: more than the states simulated) and the known leaf
    values of its first states (``states[k]`` is state ``k``)."""

    count: int | None
    states: tuple[State, ...]
    stated: int | None = None  # the trip count backend_config states, if any

    def state(self, k: int) -> State | None:
        return self.states[k] if 0 <= k < len(self.states) else None


@dataclass(frozen=True, slots=True)
class _Stated:
    """What a loop's ``backend_config`` states about it."""

    count: int | None
    counter: int | None  # the state leaf of the induction variable
    init: int | None
    step: int | None


def _stated(instr: HloInstruction) -> _Stated:
    config = instr.backend_config_json()
    if not isinstance(config, dict):
        return _Stated(None, None, None, None)

    def number(key: str, field: str) -> int | None:
        part = config.get(key)
        value = part.get(field) if isinstance(part, dict) else None
        try:
            return int(value) if isinstance(value, (str, int)) else None
        except ValueError:
            return None

    count = number("known_trip_count", "n")
    element = number("known_induction_variable", "tuple_index")
    counter = None
    if element is not None:
        try:
            span = element_leaves(instr.operands[0].shape, element)
            counter = span.start if len(span) == 1 else None
        except IndexError:
            counter = None
    return _Stated(count if count is not None and count >= 0 else None, counter,
                   number("known_init_step", "init"), number("known_init_step", "step"))


def trip_count(instr: HloInstruction, body: HloComputation, condition: HloComputation,
               limit: int = UNROLL_LIMIT, init: State | None = None,
               comp: HloComputation | None = None) -> Trips | None:
    """The trip count of ``while`` ``instr`` and the known values of states ``0 ..
    min(N, limit)`` (see the module docstring); None when the condition's value is not
    known (and no trip count is stated) or contradicts the stated one. ``init``: the
    initial state's values when an enclosing loop knows more of them than the constants
    of ``instr``'s computation give; by default those, in ``comp`` (the computation
    holding ``instr``, if known) followed to the caller that fills its parameters
    (:func:`symidx.lowering.values.known_leaves`: XLA's CPU compiler wraps a loop in a
    ``call``)."""
    stated = _stated(instr)
    state = _padded(known_leaves(instr.operands[0], comp) if init is None else init,
                    leaf_count(instr.operands[0].shape))
    state = _with_counter(state, stated, 0, instr)
    states = [state]
    for k in range(limit + 1):
        go = evaluator({0: state}).value(condition.root)
        if go is None or go.size != 1:
            if stated.count is None:
                return None
            running = k < stated.count
        else:
            running = bool(go.reshape(-1)[0])
            if stated.count is not None and running != (k < stated.count):
                return None
        if not running:
            return Trips(k, tuple(states), stated.count)
        if k == limit:
            break
        state = _with_counter(_padded(evaluator({0: state}).leaves(body.root), len(state)),
                              stated, k + 1, instr)
        states.append(state)
    return Trips(stated.count, tuple(states), stated.count)


def _padded(values: Sequence[Value | None], count: int) -> State:
    """The first ``count`` leaf values, None (unknown) past the end of ``values``."""
    return tuple(values[:count]) + (None,) * (count - len(values))


def _with_counter(state: State, stated: _Stated, k: int, instr: HloInstruction) -> State:
    """``state`` (state ``k``) with the counter's stated value, where one is stated."""
    if stated.counter is None or stated.init is None or stated.step is None \
            or stated.counter >= len(state):
        return state
    import numpy as np

    dtype = counter_dtype(leaves(instr.operands[0].shape)[stated.counter])
    if dtype is None or dtype == np.bool_:
        return state
    value = np.asarray(stated.init + k * stated.step, dtype=np.int64).astype(dtype)
    known = state[stated.counter]
    if known is not None and not np.array_equal(known, value):
        return state  # the evaluated value wins over a stated one that disagrees
    return state[:stated.counter] + (value,) + state[stated.counter + 1:]


# --- maps of one iteration ----------------------------------------------------------------


class Specializer:
    """The maps of one computation (the body or the condition) at one state: runtime
    variables naming its instructions replaced by their values in that state.

    A variable held by a leaf the body passes on unchanged holds, at every iteration, the
    initial value of that leaf: it is re-pointed at the instruction of the enclosing
    computation that holds it (``invariant``), where an enclosing loop may know it."""

    def __init__(self, comp: HloComputation, invariant: Mapping[int, HloInstruction]
                 ) -> None:
        self.comp = comp
        self.holders = _holders(comp)
        self.outside: dict[ValueSource, HloInstruction] = {}
        for ref, (sites, holder) in self.holders.items():
            lf = _parameter_leaf(holder)
            if not sites and lf is not None and lf in invariant:
                self.outside[ref] = invariant[lf]
        self._evaluators: dict[tuple[int, tuple[HloInstruction, ...]], Evaluator] = {}
        self._memo: dict[tuple[IndexingMap, int], IndexingMap] = {}
        self._settled_maps: dict[IndexingMap, bool] = {}
        #: The conditionals and loops of the computation (through calls) whose branch or
        #: initial state a state of the loop may fix, and what is fixed at each state.
        self.decided = _decided(comp)
        self._fixed: dict[int, Fixed] = {}
        self._trips_unknown: dict[HloInstruction, bool] = {}
        self._before: dict[HloInstruction, State] = {}

    def _unknown_trips(self, instr: HloInstruction, before: State) -> bool:
        """Is the trip count of the inner loop ``instr`` unknown from what is known of its
        initial state before the run? Only then does a state fix its initial state (each
        fixed state costs an analysis of the body)."""
        found = self._trips_unknown.get(instr)
        if found is None:
            try:
                body, condition = loop_parts(instr)
                found = trip_count(instr, body, condition, init=before) is None
            except SymidxError:
                found = False
            self._trips_unknown[instr] = found
        return found

    def fixed(self, k: int, state: State) -> Fixed:
        """What state ``k`` (its known values ``state``) fixes of the computation's
        conditionals and loops, as :attr:`symidx.lowering.values.Scope.fixed` holds it: a
        conditional's branch where its index is known in that state and not before the run
        whatever the state (a ``cond`` on the parity of the counter), the initial state of
        an inner loop whose trip count is not known before the run, where the state knows
        more of it (an inner loop whose trip count is the outer counter)."""
        found = self._fixed.get(k)
        if found is None:
            entries: list[tuple[tuple[str, ...], Hashable]] = []
            for sites, instr in self.decided:
                path = (*(site.name for site in sites), instr.name)
                held = self._evaluator(k, state, sites)
                before = self._before.get(instr)
                if before is None:
                    before = self._before[instr] = _before(instr)
                if instr.opcode == "conditional":
                    value = held.value(instr.operands[0])
                    if value is not None and value.size == 1 and before[0] is None:
                        count = sum(len(instr.called_computations[key])
                                    for key in branch_attributes(instr))
                        entries.append((path, branch_of(instr.operands[0].shape,
                                                        int(value.reshape(-1)[0]), count)))
                elif self._unknown_trips(instr, before):
                    init = held.leaves(instr.operands[0])
                    if any(v is not None and b is None for v, b in zip(init, before)):
                        entries.append((path, frozen_state(init)))
            found = self._fixed[k] = tuple(entries)
        return found

    def varies(self, m: IndexingMap) -> bool:
        """Does ``m`` hold a runtime variable whose value is held in the computation?"""
        return any(v.source in self.holders for v in m.rts)

    def at(self, m: IndexingMap, k: int, state: State | None) -> IndexingMap:
        """``m`` at state ``k`` (``state`` its known values; None: nothing is known)."""
        if not self.varies(m):
            return m
        key = (m, k)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._resolved(m, k, state)
        return found

    def _resolved(self, m: IndexingMap, k: int, state: State | None) -> IndexingMap:
        sources = {}
        if state is not None:
            for var in m.rts:
                if var.source not in self.holders:
                    continue
                sites, holder = self.holders[var.source]
                value = self._evaluator(k, state, sites).value(holder)
                if value is not None and isinstance(holder.shape, Shape):
                    sources[var.source] = KnownValue(var.source, holder.shape, value)
        if sources:
            m = resolve_runtime_vars(m, sources, clamp=False, settled=self._settled(m))
        if not self.varies(m):
            return m
        # What is left is not known here: a value the loop does not change is held outside
        # it; any other keeps its interval, and no provenance (its instruction is inside
        # the loop, meaningless outside).
        rts = []
        for v in m.rts:
            if v.source in self.outside:
                v = replace(v, source=value_source(self.outside[v.source]))
            elif v.source in self.holders:
                v = replace(v, map=None)
            rts.append(v)
        return finish(m.replace(rts=rts), fold_point_dims=True)

    def _settled(self, m: IndexingMap) -> bool:
        """Is ``m`` its own simplification (see :func:`resolve_runtime_vars`)? Asked once
        per map, not per iteration."""
        found = self._settled_maps.get(m)
        if found is None:
            again = finish(m, fold_point_dims=True)
            found = self._settled_maps[m] = again == m and again.names == m.names
        return found

    def _evaluator(self, k: int, state: State, sites: tuple[HloInstruction, ...]
                   ) -> Evaluator:
        """The evaluator of the computation that the call ``sites`` (from the body down)
        lead to, at state ``k``."""
        key = (k, sites)
        found = self._evaluators.get(key)
        if found is None:
            if not sites:
                found = evaluator({0: state})
            else:
                outer, site = self._evaluator(k, state, sites[:-1]), sites[-1]
                found = evaluator({n: tuple(outer.value(op, lf)
                                            for lf in range(leaf_count(op.shape)))
                                   for n, op in enumerate(site.operands)})
            self._evaluators[key] = found
        return found


#: What a loop's state fixes of the conditionals and loops of its body (see
#: :meth:`Specializer.fixed`).
Fixed = tuple[tuple[tuple[str, ...], Hashable], ...]


def _decided(comp: HloComputation) -> list[tuple[tuple[HloInstruction, ...], HloInstruction]]:
    """The ``conditional`` and ``while`` instructions of ``comp`` and of the computations
    its ``call`` and ``fusion`` instructions run (not inside a loop or a branch: those
    decide their own), each with the calls leading to it from ``comp``."""
    found = []
    todo: list[tuple[tuple[HloInstruction, ...], HloComputation]] = [((), comp)]
    while todo:
        sites, current = todo.pop()
        for instr in current.instructions:
            if instr.opcode in ("conditional", "while"):
                found.append((sites, instr))
            elif instr.opcode in ("call", "fusion") and len(sites) < MAX_DEPTH:
                called = [c for cs in instr.called_computations.values() for c in cs]
                if len(called) == 1:
                    todo.append(((*sites, instr), called[0]))
    return found


def _before(instr: HloInstruction) -> State:
    """What is known of a conditional's branch index (one leaf) or a loop's initial state
    before the run, whatever the enclosing loop's state: what the constants of its
    computation give (its parameters unknown, whichever calls lead to it)."""
    held = instr.operands[0]
    if instr.opcode == "conditional":
        return (evaluator({}).value(held),)
    return _padded(evaluator({}).leaves(held), leaf_count(held.shape))


def _holders(comp: HloComputation) -> dict[ValueSource, tuple[tuple[HloInstruction, ...],
                                                               HloInstruction]]:
    """The instructions a runtime variable of ``comp``'s maps may name, by the name it
    uses, each with the ``call``/``fusion`` instructions leading to it from ``comp`` (a
    variable held inside a called computation that a sweep could not follow out of it).
    Names met twice (a computation called from two places, or two instructions of one
    name) are left out: which one a variable means is not known."""
    found: dict[ValueSource, tuple[tuple[HloInstruction, ...], HloInstruction]] = {}
    twice: set[ValueSource] = set()
    todo: list[tuple[tuple[HloInstruction, ...], HloComputation]] = [((), comp)]
    seen: set[str] = set()
    while todo:
        sites, current = todo.pop()
        for instr in current.instructions:
            ref = value_source(instr)
            if ref in found:
                twice.add(ref)
            found[ref] = (sites, instr)
            for called in instr.called_computations.values():
                for c in called:
                    if c.name in seen:
                        twice.update(value_source(i) for i in c.instructions)
                        continue
                    seen.add(c.name)
                    if instr.opcode in ("call", "fusion") and len(called) == 1:
                        todo.append(((*sites, instr), c))
                    else:
                        twice.update(value_source(i) for i in c.instructions)
    return {ref: where for ref, where in found.items() if ref not in twice}


def _parameter_leaf(instr: HloInstruction) -> int | None:
    """The leaf of parameter 0 that ``instr`` is (the parameter itself, or a
    get-tuple-element of it giving one leaf); None for any other instruction."""
    if instr.opcode == "parameter":
        return 0 if instr.parameter_number == 0 and leaf_count(instr.shape) == 1 else None
    if instr.opcode != "get-tuple-element":
        return None
    param = instr.operands[0]
    if param.opcode != "parameter" or param.parameter_number != 0:
        return None
    try:
        span = element_leaves(param.shape, instr.tuple_index or 0)
    except IndexError:
        return None
    return span.start if len(span) == 1 else None


def producer(instr: HloInstruction, leaf: int) -> HloInstruction | None:
    """The array instruction whose value is leaf ``leaf`` of ``instr``'s value, through
    tuples, get-tuple-element of tuples and copies; None when no single instruction holds
    it."""
    for _ in range(64):
        if instr.opcode == "get-tuple-element" and leaf_count(instr.shape) == 1 \
                and instr.operands[0].opcode != "tuple":
            return instr  # e.g. a counter taken from an enclosing loop's state
        found = leaf_source(instr, leaf)
        if found is None:
            moves = instr.opcode in ("tuple", "get-tuple-element")  # a leaf out of range
            return instr if not moves and leaf_count(instr.shape) == 1 and leaf == 0 else None
        instr, leaf = found
    return None



def frozen_state(state: Sequence[Value | None]) -> Hashable:
    """A loop state's known values as a hashable key (per leaf: None, or the type, shape
    and bytes of its array), as :attr:`symidx.lowering.values.Scope.fixed` holds them."""
    return tuple(None if v is None else (v.dtype.str, v.shape, v.tobytes()) for v in state)


def thawed_state(key: Hashable) -> State:
    """The state :func:`frozen_state` made ``key`` of."""
    import numpy as np

    assert isinstance(key, tuple)
    return tuple(None if v is None else
                 np.frombuffer(v[2], dtype=np.dtype(v[0])).reshape(v[1]).copy()
                 for v in key)
