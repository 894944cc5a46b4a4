"""Maps through a computation: composition over its indexing graph, one sweep.

The output-to-input maps of a computation's root to a parameter are the union, over every
path of the graph, of the per-step maps composed along the path. Paths can be
exponentially many (a ladder of 40 diamonds has 2^40), so nothing here walks paths: one
sweep in reverse topological order keeps, per instruction output, the **set of distinct
maps** reaching it from the start. Each composed map is simplified and has its unused
symbols removed (and, when its step brought range variables into one window sum, those
merged: :func:`~symidx.core.simplify.merge.merge_contiguous_sums`) before it enters a set, so
two paths giving the same function meet in one entry. The work grows with the number of
instructions and of distinct maps.

An :class:`Analysis` holds what it has computed: the indexing graph of each computation
(with the maps of every step it crossed) and the results of each called computation, per
direction and output, so a computation called from many places (a fusion's computation,
a loop body, a shared ``call``) is analysed once. Compositions are memoised too: the same
pair of maps (repeated layers of a model) is composed once. Every memo belongs to one
:class:`Analysis` (its :class:`Memo`, handed to the sweeps and to the loop code): two
analyses share no state, so what one computes cannot depend on what another did before.

Two bounds keep the sets small without changing what a map means:

* when more than :data:`MERGE_LIMIT` maps reach one instruction output, maps that differ
  only in which *element* holds a runtime value are merged: their runtime variables keep
  their interval and instruction (see :func:`symidx.fusion.runtime.forget_elements`);
* when more than :data:`HULL_LIMIT` distinct maps remain, maps that differ only by constant
  offsets along one result are first merged into one map with a range variable (exact,
  :func:`~symidx.core.simplify.merge.merge_constant_offsets`); if still more remain, they are
  replaced by one map to the bounding box of everything they reach, labelled opaque (an
  over-approximation).

**Limits.** An :class:`Analysis` may be given ``cpu_limit`` (CPU seconds from its
creation: a budget of work, the same on a busy machine as on an idle one), ``timeout``
(seconds of the wall clock, when a caller wants one; :mod:`symidx._budget`) and
``max_maps`` (distinct maps held at once in the sets of all its sweeps, which is what memory
grows with: a sweep asked for some instructions only, ``keep``, lets go of the others' sets
as it goes). The sweeps check them as they compose; past one, they stop with
:class:`~symidx.errors.LimitReached`, which says how far they got: never a silent hang.

**Unsupported ops.** An instruction with no indexing rule makes everything it reads, and
everything those read, *unknown* (:attr:`Reached.unsupported` names the op): their other
maps would silently miss what the unsupported op reads.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Collection, Hashable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from symidx._budget import TimeBudget, command_budget, wall_clock
from symidx._gc import young_collections
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.simplify import FeasibilityMemo, compose, feasibility_memo
from symidx.core.simplify.boxes import box_groups
from symidx.core.simplify.existential import tidy_existentials
from symidx.core.simplify.finish import finish
from symidx.core.simplify.merge import has_window_sum, merge_contiguous_sums
from symidx.errors import HloValidationError, LimitReached, SymidxError
from symidx.fusion.graph import IndexingGraph
from symidx.fusion.reached import Path, Reached
from symidx.fusion.sets import (
    HULL_LIMIT,
    MERGE_LIMIT,
    E,
    Entries,
    Sets,
    Start,
    Tally,
    add_entry,
    dim_free,
    reached,
)
from symidx.fusion.steps import Step, leaf_dependencies, results_inside
from symidx.fusion.values import Scope
from symidx.hlo import HloComputation, HloInstruction
from symidx.hlo.facts import called_computation, check_index
from symidx.hlo.leaves import leaf_count, leaves
from symidx.hlo.validate import validate_instruction

if TYPE_CHECKING:
    from symidx.fusion.joint import SharedEntries
    from symidx.fusion.loops import LoopFacts

__all__ = [
    "Key",
    "Limits",
    "MERGE_LIMIT",
    "HULL_LIMIT",
    "Analysis",
    "Memo",
    "parameter_leaves",
]

#: An instruction output: (instruction name, output leaf); see :mod:`symidx.hlo.leaves`.
Key = tuple[str, int]
_COMPOSED_LIMIT = 200_000  # memoised compositions kept (then the memo starts afresh)
#: Charges between two readings of the clocks (a CPU clock is a system call: read at every
#: composition, it would cost more than many compositions do).
_CLOCK_EVERY = 64


@contextlib.contextmanager
def command_deadline(seconds: float, what: str) -> Iterator[None]:
    """While open, every analysis stops with :class:`LimitReached` (``what`` ran out) once
    ``seconds`` of the wall clock have passed (see :func:`symidx._budget.command_budget`,
    which it opens): checked where maps compose, so that no signal handler whose exception
    could be lost (in a finaliser, say) is needed to stop the work."""
    with command_budget(TimeBudget(wall=seconds), what):
        yield


class Limits:
    """The limits of an analysis (see the module docstring): at most ``cpu_limit`` CPU
    seconds and, if given, ``timeout`` seconds of the wall clock from creation (a
    :class:`~symidx._budget.TimeBudget`), and at most ``max_maps`` distinct maps held (None:
    no limit). The sweeps call :meth:`charge` for each map they add to a set. ``watch``,
    when set, is called with :attr:`doing` (how far the sweep is) from :meth:`charge` at
    most once a second: a progress display of work that takes long between results."""

    __slots__ = ("max_maps", "budget", "held", "doing", "watch", "_watched", "_countdown")

    def __init__(self, timeout: float | None = None, max_maps: int | None = None, *,
                 cpu_limit: float | None = None) -> None:
        if max_maps is not None and max_maps < 1:
            raise SymidxError(f"max_maps must be at least 1, not {max_maps!r}")
        self.budget = TimeBudget(cpu=cpu_limit, wall=timeout)
        self.max_maps = max_maps
        self.held = 0
        #: What the analysis is doing, for the message of a limit reached: text, or a
        #: sweep's (instructions done, of total, computation, direction, start)
        self.doing: str | tuple[int, int, str, str, str] = ""
        self.watch: Callable[[str], None] | None = None
        self._watched = 0.0
        self._countdown = 1  # the clocks are read at the first charge, then every few

    @property
    def timeout(self) -> float | None:
        """The wall-clock limit (seconds), if any."""
        return self.budget.wall

    @property
    def cpu_limit(self) -> float | None:
        """The CPU limit (seconds), if any."""
        return self.budget.cpu

    def charge(self, added: int | bool = 0, work: int = 1) -> None:
        """Count ``added`` new maps held and ``work`` steps done (compositions asked
        for); stop at a limit passed (the budget of maps at once; the time budget at the
        first charge and then every 64 steps, a CPU clock being a system call)."""
        self.held += added
        if self.max_maps is not None and self.held > self.max_maps:
            raise LimitReached(f"the budget of {self.max_maps:,} distinct maps",
                               self._done(), budget=True)
        self._countdown -= work
        if self._countdown > 0:
            return
        self._countdown = _CLOCK_EVERY
        spent = self.budget.spent()
        if spent is not None:
            raise LimitReached(spent, self._done())
        if self.watch is not None:
            now = wall_clock()  # how often progress is shown, not how much is done
            if now >= self._watched:
                self._watched = now + 1.0
                self.watch(self.doing_text())

    def check(self) -> None:
        """Read the clocks now (as a sweep starts): stop if the time budget is spent."""
        self._countdown = 1
        self.charge()

    def doing_text(self) -> str:
        """:attr:`doing` as text (a sweep's progress is formatted only when asked for)."""
        doing = self.doing
        if isinstance(doing, tuple):
            done, total, comp, direction, start = doing
            return f"{done} of {total} instructions of {comp} swept {direction} from {start}"
        return doing

    def _done(self) -> str:
        doing = self.doing_text()
        where = f" ({doing})" if doing else ""
        return f"holding {self.held:,} distinct maps{where}"


def parameter_leaves(comp: HloComputation) -> list[tuple[int, int]]:
    """(parameter number, leaf) of every array leaf of ``comp``'s parameters, in order."""
    return [(n, lf) for n, p in enumerate(comp.parameters) for lf in range(leaf_count(p.shape))]


_Sweep = TypeVar("_Sweep", bound=Callable[..., Any])


def _remembering(sweep: _Sweep) -> _Sweep:
    """``sweep`` (a method of :class:`Analysis`) run with the analysis's feasibility memo
    open (see :func:`symidx.core.simplify.feasibility_memo`): the simplifications it makes
    remember their answers there, and nowhere else. Young garbage is collected every
    :data:`~symidx._gc.YOUNG_COLLECTION` allocations meanwhile, as in a ``symidx``
    process (:func:`~symidx._gc.young_collections`): the memos and maps a sweep builds
    live as long as its analysis."""

    @functools.wraps(sweep)
    def run(self: Analysis, *args: Any, **kwargs: Any) -> Any:
        with feasibility_memo(self.memo.feasible, self.memo.feasible_groups), \
                young_collections():
            return sweep(self, *args, **kwargs)

    return cast(_Sweep, run)


class Memo:
    """The memos of one :class:`Analysis`: compositions made (``composed``, emptied when it
    holds :data:`_COMPOSED_LIMIT`), each composed map finished (``finished``: two pairs of
    maps often compose to one map), one object per distinct map (``interned``, so that sets
    and the memo mostly compare by identity), each map with its runtime-value elements
    forgotten (``forgotten``), what the loop code keeps per ``while`` (``loops``, see
    :func:`symidx.fusion.loops.unrolled_maps`) and the simplifier's feasibility answers
    (``feasible`` by the numbers of the constraints, ``feasible_groups`` by the
    constraints themselves: see :func:`symidx.core.simplify.feasibility_memo`)."""

    __slots__ = ("composed", "finished", "interned", "forgotten", "dim_free", "loops",
                 "feasible", "feasible_groups")

    def __init__(self) -> None:
        #: (id of first, id of second) -> (first, second, second ∘ first finished, the
        #: same without its dims where it uses none): see :func:`_composition`
        self.composed: dict[tuple[int, int],
                            tuple[IndexingMap, IndexingMap, IndexingMap, IndexingMap]] = {}
        self.finished: dict[tuple[IndexingMap, bool], IndexingMap] = {}
        self.interned: dict[IndexingMap, IndexingMap] = {}
        self.forgotten: dict[IndexingMap, IndexingMap] = {}
        self.dim_free: dict[IndexingMap, IndexingMap] = {}
        self.loops: dict[Hashable, LoopFacts] = {}
        self.feasible: FeasibilityMemo = {}
        self.feasible_groups: FeasibilityMemo = {}

    def clear(self) -> None:
        """Forget every memoised map (the loop facts stay: they hold no maps)."""
        self.composed.clear()
        self.finished.clear()
        self.interned.clear()
        self.forgotten.clear()
        self.dim_free.clear()

    def interned_map(self, m: IndexingMap) -> IndexingMap:
        """The one object kept for maps equal to ``m``."""
        return self.interned.setdefault(m, m)


class Analysis:
    """The indexing analysis of the computations of a module (see the module docstring).
    One object may serve any number of queries; it keeps what it has computed.

    Every instruction it goes through is checked as XLA's verifier checks it
    (:func:`symidx.hlo.validate.validate_instruction`, once each): one whose shapes do not
    fit its attributes raises the located :class:`~symidx.errors.HloValidationError`, or,
    with ``verify=False``, is read as a labelled over-approximation (whatever it computes,
    it reads only its operands). ``cpu_limit``, ``timeout`` and ``max_maps``: see
    :class:`Limits`.

    ``assume_finite`` chooses the semantics of every map it gives: False (the default,
    ``reads``) -- an output element reads an input element when some value of it, NaN and
    infinities included, changes the output element; True (``finite``) -- when some finite
    value does, every input being finite (a Jacobian's sparsity: a kernel element a
    convolution multiplies by padding, a factor of a product with a known zero, drop out).
    """

    def __init__(self, verify: bool = True, assume_finite: bool = False, *,
                 timeout: float | None = None, max_maps: int | None = None,
                 cpu_limit: float | None = None) -> None:
        self.verify = verify
        self.assume_finite = assume_finite
        self.limits = Limits(timeout, max_maps, cpu_limit=cpu_limit)
        self._misfits: dict[HloInstruction, HloValidationError | None] = {}
        self._graphs: dict[tuple[HloComputation, Scope | None], IndexingGraph] = {}
        self._parameters: dict[tuple[HloComputation, int, Scope | None],
                               dict[tuple[int, int], Reached]] = {}
        self._outputs: dict[tuple[HloComputation, int, int, Scope | None],
                            dict[int, Reached]] = {}
        self._dependencies: dict[HloComputation, list[int]] = {}
        self.memo = Memo()
        self.loop_facts = self.memo.loops  # see symidx.fusion.steps.Callee

    def graph(self, comp: HloComputation, scope: Scope | None = None) -> IndexingGraph:
        """The indexing graph of ``comp`` (built once), or of ``comp`` run by the one call
        that ``scope`` says fills its parameters (see :func:`symidx.fusion.steps.specialized`)."""
        graph = self._graphs.get((comp, scope))
        if graph is None:
            graph = self._graphs[(comp, scope)] = IndexingGraph(comp, self, scope,
                                                                self.memo.interned_map)
        return graph

    # --- what a step through a called computation needs (symidx.fusion.steps.Callee)

    def parameters_of(self, comp: HloComputation, output: int, scope: Scope | None = None
                      ) -> dict[tuple[int, int], Reached]:
        """From root leaf ``output`` of ``comp`` to each (parameter number, leaf) it
        reads (run by the call ``scope`` names, if given)."""
        key = (comp, output, scope)
        found = self._parameters.get(key)
        if found is None:
            names = {p.name for p in comp.parameters}
            grouped = self.backward(comp, comp.root, output, scope=scope, keep=names)
            found = {}
            for n, lf in parameter_leaves(comp):
                r = grouped.get((comp.parameters[n].name, lf))
                if r is not None:
                    found[(n, lf)] = r
            self._parameters[key] = found
        return found

    def parameters_of_outputs(self, comp: HloComputation, outputs: Sequence[int]
                              ) -> list[dict[tuple[int, int], Reached]]:
        """:meth:`parameters_of` for each root leaf of ``outputs``, swept together
        (:meth:`backward_outputs`: the same maps, without origins). Not kept: a caller asks
        for each output once."""
        names = {p.name for p in comp.parameters}
        found = self.backward_outputs(comp, comp.root, outputs, keep=names)
        return [{(n, lf): grouped[(comp.parameters[n].name, lf)]
                 for n, lf in parameter_leaves(comp)
                 if (comp.parameters[n].name, lf) in grouped} for grouped in found]

    def forget(self, comp: HloComputation) -> None:
        """Drop the results kept for ``comp`` analysed whole by itself (not those of the
        computations it calls, nor of ``comp`` run by a call): a caller that streams one
        output after another keeps one output's maps at a time."""
        for found in [k for k in self._parameters if k[0] is comp and k[2] is None]:
            del self._parameters[found]
        for key in [k for k in self._outputs if k[0] is comp and k[3] is None]:
            del self._outputs[key]

    def outputs_of(self, comp: HloComputation, parameter: int, leaf: int,
                   scope: Scope | None = None) -> dict[int, Reached]:
        """From leaf ``leaf`` of parameter ``parameter`` to each root leaf that reads it
        (run by the call ``scope`` names, if given)."""
        key = (comp, parameter, leaf, scope)
        found = self._outputs.get(key)
        if found is None:
            check_index(parameter, len(comp.parameters), comp.name, "parameter")
            grouped = self.forward(comp, comp.parameters[parameter], leaf, scope)
            found = {k: grouped[(comp.root.name, k)] for k in range(leaf_count(comp.root.shape))
                     if (comp.root.name, k) in grouped}
            self._outputs[key] = found
        return found

    def misfit(self, instr: HloInstruction) -> str | None:
        """See :class:`symidx.fusion.steps.Callee` and the class docstring."""
        if instr not in self._misfits:
            try:
                validate_instruction(instr)
                self._misfits[instr] = None
            except HloValidationError as e:
                self._misfits[instr] = e
        found = self._misfits[instr]
        if found is None:
            return None
        if self.verify:
            raise found
        return found.message

    def dependencies(self, comp: HloComputation) -> list[int]:
        """Per root leaf of ``comp``, the leaves of parameter 0 it depends on (bit set)."""
        found = self._dependencies.get(comp)
        if found is None:
            found = self._dependencies[comp] = leaf_dependencies(comp)
        return found

    # --- the sweeps

    @_remembering
    def backward(self, comp: HloComputation, target: HloInstruction, output: int = 0,
                 within: Collection[str] | None = None, scope: Scope | None = None,
                 keep: Collection[str] | None = None) -> dict[Key, Reached]:
        """The output-to-input sweep from output leaf ``output`` of ``target`` to every
        instruction output of ``comp`` it reads (``target`` itself included: the
        identity). Users come before operands, so a set is complete before it is composed
        further. ``within`` (instruction names) limits the sweep to those instructions:
        the others are reached but not looked through. ``scope``: see :meth:`graph`.
        ``keep`` (instruction names): only those are returned, and the set of any other
        instruction is dropped (and no longer counted as held by the limits) as soon as
        it has been composed further, so that memory holds the sweep's frontier, not
        every set it made; what is returned is the same."""
        graph = self.graph(comp, scope)
        reaching = _start(target, output)
        start = Start(_start_dims(reaching))
        unknown = self._sweep_back(graph, reaching, start, target.name, within, keep)
        found = {key: reached(entries, self.memo, start) for key, entries in reaching.items()
                 if key[0] not in unknown and (keep is None or key[0] in keep)}
        for name, (opcode, _) in unknown.items():
            if keep is not None and name not in keep:
                continue
            for lf in range(leaf_count(graph.node(name).shape)):
                found[(name, lf)] = Reached(unsupported=opcode)
        return found

    @_remembering
    def backward_outputs(self, comp: HloComputation, target: HloInstruction,
                         outputs: Sequence[int], keep: Collection[str] | None = None,
                         scope: Scope | None = None) -> list[dict[Key, Reached]]:
        """:meth:`backward` from each output leaf of ``outputs`` of ``target``, in one
        sweep: each map carries the outputs it is reached from, so that a map reached
        from many outputs (the same parameter read through the same backward pass of a
        training step) is composed once for them all. The sets are bounded per output, as
        each output's own sweep bounds them (:mod:`symidx.fusion.joint`), so each output
        gets the maps its own sweep finds, with the same labels. The origins of the maps
        are not tracked: each :class:`Reached` has none."""
        from symidx.fusion.joint import Shared, Starts, reached_each  # for several outputs

        graph = self.graph(comp, scope)
        reaching: dict[Key, SharedEntries] = {}
        dims: list[tuple[Interval, ...]] = []
        for bit, output in enumerate(outputs):
            ((key, identity),) = _start(target, output).items()
            dims.append(_start_dims({key: identity}))
            for m in identity:
                add_entry(reaching.setdefault(key, {}), m, Shared(1 << bit))
        starts = Starts(tuple(dims))
        unknown = self._sweep_back(graph, reaching, starts,
                                   f"{target.name} ({len(outputs)} outputs)", None, keep)
        memo = self.memo
        found: list[dict[Key, Reached]] = [{} for _ in outputs]
        for key, shared in reaching.items():
            if keep is None or key[0] in keep:
                for bit, share in enumerate(reached_each(shared, memo, starts)):
                    if share is not None:
                        found[bit][key] = share
        for name, (opcode, tags) in unknown.items():
            if keep is not None and name not in keep:
                continue
            for bit in range(len(outputs)):
                if tags >> bit & 1:
                    for lf in range(leaf_count(graph.node(name).shape)):
                        found[bit][(name, lf)] = Reached(unsupported=opcode)
        return found

    def _sweep_back(self, graph: IndexingGraph, reaching: dict[Key, dict[IndexingMap, E]],
                    starts: Sets[E], start: str, within: Collection[str] | None,
                    keep: Collection[str] | None) -> dict[str, tuple[str, int]]:
        """The output-to-input sweep of :meth:`backward` and :meth:`backward_outputs`:
        ``reaching`` (the start's sets) filled in, users before operands. Returns the
        instructions whose indexing is unknown to some starts (an op without a rule above
        them): the op, and the starts (bit set). An instruction unknown to every start is
        not looked through."""
        unknown: dict[str, tuple[str, int]] = {}
        everyone = (1 << starts.size) - 1
        limits, memo = self.limits, self.memo
        comp = graph.comp
        total = len(graph.order)
        limits.doing = (0, total, comp.name, "output-to-input", start)
        limits.check()
        for done, instr in enumerate(reversed(graph.order)):
            if not instr.operands or (within is not None and instr.name not in within):
                continue
            limits.doing = (done, total, comp.name, "output-to-input", start)
            blocked = unknown.get(instr.name)
            if blocked is not None:
                for op in instr.operands:
                    _unknown(unknown, op.name, *blocked)
                if blocked[1] == everyone:
                    continue
            for k in range(leaf_count(instr.shape)):
                key = (instr.name, k)
                here = reaching.get(key)
                if not here:
                    continue
                here = reaching[key] = _bounded(here, memo, starts, limits)
                for step in graph.backward(instr, k):
                    op = instr.operands[step.position]
                    if step.unsupported is not None:
                        tags = 0
                        for entry in here.values():
                            tags |= entry.starts
                        _unknown(unknown, op.name, step.unsupported, tags)
                    elif step.maps and not _discarded(op, within, keep):
                        _extend(reaching.setdefault((op.name, step.leaf), {}), here, step,
                                op.name, memo, starts, limits)
                if keep is not None and instr.name not in keep:
                    del reaching[key]
                    limits.held -= len(here)
        return unknown

    @_remembering
    def forward(self, comp: HloComputation, source: HloInstruction, output: int = 0,
                scope: Scope | None = None) -> dict[Key, Reached]:
        """The input-to-output sweep from output leaf ``output`` of ``source`` to every
        instruction output of ``comp`` that reads it: operands before users. ``scope``:
        see :meth:`graph`."""
        graph = self.graph(comp, scope)
        reaching = _start(source, output)
        start = Start(_start_dims(reaching))
        unknown: dict[Key, str] = {}
        limits, memo = self.limits, self.memo
        total = len(graph.order)
        limits.doing = (0, total, comp.name, "input-to-output", source.name)
        limits.check()
        for done, instr in enumerate(graph.order):
            limits.doing = (done, total, comp.name, "input-to-output", source.name)
            for j, op in enumerate(instr.operands):
                for lf in range(leaf_count(op.shape)):
                    key = (op.name, lf)
                    here = reaching.get(key)
                    if key not in unknown and not here:
                        continue
                    for step in graph.forward(instr, j, lf):
                        out = (instr.name, step.output)
                        if key in unknown:
                            unknown.setdefault(out, unknown[key])
                        elif step.unsupported is not None:
                            unknown.setdefault(out, step.unsupported)
                        elif step.maps and here:
                            here = reaching[key] = _bounded(here, memo, start, limits)
                            _extend(reaching.setdefault(out, {}), here, step, instr.name,
                                    memo, start, limits)
        found = {key: reached(entries, memo, start) for key, entries in reaching.items()
                 if key not in unknown}
        found.update({key: Reached(unsupported=opcode) for key, opcode in unknown.items()})
        return found


def _discarded(op: HloInstruction, within: Collection[str] | None,
               keep: Collection[str] | None) -> bool:
    """Would the maps reaching ``op`` in an output-to-input sweep be thrown away? So when
    the sweep returns only ``keep``, ``op`` is not among them, and nothing composes them
    further: ``op`` reads nothing (a constant, an iota; a parameter not asked for) or lies
    outside ``within``. Its set is then not made at all (the compositions into a
    broadcast constant are many)."""
    return keep is not None and op.name not in keep and (
        not op.operands or within is not None and op.name not in within)


def _start(instr: HloInstruction, output: int) -> dict[Key, Entries]:
    found = leaves(instr.shape)
    check_index(output, len(found), instr.name, "output")
    identity = IndexingMap.identity(found[output].dims)
    return {(instr.name, output): {identity: Tally(Path(instr.name), 1)}}


def _unknown(unknown: dict[str, tuple[str, int]], name: str, opcode: str, tags: int
             ) -> None:
    """Mark ``name`` unknown for the starts ``tags`` (the first op without a rule kept)."""
    found = unknown.get(name)
    unknown[name] = (opcode, tags) if found is None else (found[0], found[1] | tags)


def _start_dims(reaching: dict[Key, Entries]) -> tuple[Interval, ...]:
    """The dims of the maps a sweep starts with (its one identity map's)."""
    (entries,) = reaching.values()
    (identity,) = entries
    return identity.dims


def _bounded(entries: dict[IndexingMap, E], memo: Memo, starts: Sets[E], limits: Limits
             ) -> dict[IndexingMap, E]:
    """``entries`` bounded by ``starts`` (:meth:`symidx.fusion.sets.Start.bounded`,
    :meth:`symidx.fusion.joint.Starts.bounded`), ``limits`` told of the maps no longer
    held."""
    found = starts.bounded(entries, memo)
    limits.held -= len(entries) - len(found)
    return found


def _extend(target: dict[IndexingMap, E], here: dict[IndexingMap, E], step: Step, name: str,
            memo: Memo, starts: Sets[E], limits: Limits | None = None) -> None:
    """Add to ``target`` every map of ``here`` composed with every map of ``step``
    (memoised in ``memo``), with its entry after the step into ``name``. ``limits`` are
    charged for the compositions and the new maps held.

    The loop runs once per (map, step map) pair, mostly finding its composition in the
    memo: the memo's lookup is written out here (see :func:`_composition`), and an entry
    that a merge leaves as it was is not stored again. The limits are charged before each
    composition made and once at the end (a pair found in the memo is a lookup), and at
    each new map held when they have a budget of maps (checked at once)."""
    composed, frees, opaque = memo.composed, starts.frees, step.opaque
    each_map = limits is not None and limits.max_maps is not None
    work = added = 0  # compositions asked for and maps held since the last charge
    seconds = [(traced, traced.map, id(traced.map)) for traced in step.maps]
    for first, entry in here.items():
        first_id, reached_from = id(first), entry.starts
        for traced, second, second_id in seconds:
            found = composed.get((first_id, second_id))
            if found is None:
                if limits is not None:
                    limits.charge(added, work)
                    work = added = 0
                found = _composition(first, second, memo)
            work += 1
            m = found[2]
            if found[3] is not m and frees(m, reached_from):
                m = found[3]
            was = target.get(m)
            if was is not None:
                merged = was.plus_after(entry, name, traced, opaque)
                if merged is not was:
                    target[m] = merged
                continue
            target[m] = entry.after(name, traced, opaque)
            added += 1
            if each_map:
                limits.charge(added, work)  # type: ignore[union-attr]
                work = added = 0
    if limits is not None and (work or added):
        limits.charge(added, work)


def _composition(first: IndexingMap, second: IndexingMap, memo: Memo
                 ) -> tuple[IndexingMap, IndexingMap, IndexingMap, IndexingMap]:
    """The memo's entry for ``second ∘ first``, made and kept: ``first``, ``second``, the
    composed map simplified, and that map without its dims where it does not use them
    (:func:`~symidx.fusion.sets.dim_free`; the map itself where it uses them). The memo of
    compositions is keyed by the two objects' identities (a sweep's sets and steps hold
    interned maps, see :meth:`Memo.interned_map`); its entry holds both, so neither
    identity is reused while the entry lives. Two equal maps that are distinct objects
    compose twice, and the second composition finds the first's finished map by value."""
    if len(memo.composed) >= _COMPOSED_LIMIT:
        memo.clear()
    if first.is_known_empty or second.is_known_empty:
        m = IndexingMap.known_empty(first.dims, second.results)
    else:
        # another pair composed to the same map; ``first`` itself where ``second`` passes
        # it through (the composition adds only constraints its intervals satisfy)
        done = (first if _passes_through(first, second) else compose(first, second),
                second.num_ranges > 0)
        finished = memo.finished.get(done)
        if finished is None:
            finished = memo.finished[done] = memo.interned_map(_finished(done[0], second))
        m = finished
    found = memo.composed[(id(first), id(second))] = (first, second, m, dim_free(m, memo))
    return found


def _passes_through(first: IndexingMap, second: IndexingMap) -> bool:
    """Is ``second`` an identity map whose dims hold every value of ``first``'s results
    (by their intervals, as the simplifier's first look at a constraint bounds it:
    :func:`~symidx.core.simplify.passes.results_only_round`, ``fold_constraints``)? Then
    ``compose(first, second)`` is ``first`` and constraints that always hold, which
    :func:`_finished` drops first: it finishes ``first`` alike (an elementwise op's step,
    a quarter of a training step's compositions). A map that divides by a variable is
    left to :func:`compose` (its divisors' constraints)."""
    if (second.num_ranges or second.rts or second.constraints or not first.divides_by_constants
            or first.num_results != second.num_dims or second.results != second.dim_vars):
        return False
    return results_inside(first, second.dims)


def _finished(m: IndexingMap, second: IndexingMap) -> IndexingMap:
    """The composed map ``m`` (whose second map was ``second``) simplified, its unused
    variables removed, the window sums a step with range variables made merged, the
    variables no result uses projected out where that is exact
    (:func:`~symidx.core.simplify.existential.tidy_existentials`), and groups of range
    variables that fill a box or let a box of dims through made that box
    (:func:`~symidx.core.simplify.boxes.box_groups`), before and after the projection:
    each composition then adds a step's variables to a map that has none left over from
    the steps before, however deep the stack of windows."""
    m = _boxed(finish(m, fold_point_dims=True))
    if second.num_ranges and has_window_sum(m):  # stacked windows: one variable per sum
        m, removed = merge_contiguous_sums(m, overlapping=True)
        if removed:
            m = finish(m, fold_point_dims=True)
    # variables only constraints tie to the others (a causal-attention hop's row): exactly
    # projected, and groups of them that repeat another dropped
    tidied = tidy_existentials(m, fold_point_dims=True)
    return tidied if tidied is m else _boxed(tidied)


def _boxed(m: IndexingMap) -> IndexingMap:
    """``m`` with :func:`~symidx.core.simplify.boxes.box_groups` applied, finished again
    where it changed."""
    boxed = box_groups(m)
    return m if boxed is m else finish(boxed, fold_point_dims=True)


def clear_memo() -> None:
    """Nothing: kept so that older callers still import it. Every memo belongs to one
    :class:`Analysis` (its :attr:`Analysis.memo`, see :class:`Memo`); a fresh analysis
    starts with fresh memos."""


def instruction_of(comp: HloComputation, which: HloInstruction | str | None
                   ) -> HloInstruction:
    """``which`` as an instruction of ``comp`` (None: the root)."""
    if which is None:
        return comp.root
    if isinstance(which, HloInstruction):
        return which
    try:
        return comp.instruction(which)
    except KeyError:
        raise SymidxError(f"no instruction named {which!r} in computation {comp.name!r}"
                          ) from None


def reached_by_parameter(comp: HloComputation, found: Mapping[tuple[int, int], Reached]
                         ) -> list[Reached]:
    """Per parameter leaf of ``comp`` (see :func:`parameter_leaves`): what ``found`` has
    for it, or nothing."""
    return [found.get(key, Reached()) for key in parameter_leaves(comp)]


__all__ += ["clear_memo", "instruction_of", "reached_by_parameter", "called_computation"]
