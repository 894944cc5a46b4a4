"""The maps of one step of a sweep: between one output of an instruction and one operand.

Outputs and operands are counted in array *leaves* (:mod:`symidx.hlo.leaves`): a step
connects output leaf ``output`` of an instruction with leaf ``leaf`` of its operand at
``position``. Output-to-input, its maps send an index of the output to the operand
elements it reads; input-to-output, an index of the operand to the output elements that
read it. One table, :data:`STEPS`, gives the step of each opcode the fusion floor handles
itself (its keys are :data:`symidx.ops.HANDLED_BY_FUSION`); every other opcode takes its
per-op rule. Where the maps come from:

* **array ops**: the per-op rules of :mod:`symidx.ops`; runtime variables are followed to
  the instructions holding their values (:mod:`symidx.fusion.runtime`), and every map is
  kept inside the shape it points into;
* **ops that move tuple leaves** (``tuple``, ``get-tuple-element``, ``opt-barrier``,
  ``domain``, ``add-dependency``, ``copy-start``/``copy-done``, ``async-update``/
  ``async-done``, ``send``, ``recv-done``, the ``*-done`` of asynchronous collectives, a
  ``copy`` of a tuple):
  the identity between the leaves they connect; ``after-all``, ``send-done``, ``recv``,
  ``infeed`` and ``outfeed`` read no array element of their operands (a ``recv``'s or
  ``infeed``'s data comes from outside the computation);
* **called computations**: ``fusion``, ``call`` and ``async-start`` through their
  computation (analysed once per direction and output, see :class:`Callee`);
  ``conditional`` through every branch (the union: which branch runs is a runtime value,
  read as the scalar operand 0 by every output element); ``*-start`` of asynchronous
  collectives: the operands it keeps, and the collective's own rule for its result;
* ``while``: the body's maps composed over the iterations when the trip count is known,
  a labelled over-approximation otherwise (:func:`symidx.fusion.loops.while_steps`);
* ``scan``: its body's maps walked through the carries (:mod:`symidx.fusion.scan`);
* an op whose rule over-approximates (``symidx.ops.opaque_reason``, e.g. a custom-call
  with an unknown target) keeps its rule's maps with that label; one whose operands or
  outputs are tuples a rule cannot take reads every element of every leaf, labelled too;
  so does an op whose shapes do not fit its attributes (XLA's parser accepts some such
  modules, its verifier would not): whatever it computes, it reads only its operands.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import replace
from functools import wraps
from typing import TYPE_CHECKING, Protocol

from symidx.core.expr import Expr, bounds, dim, sym
from symidx.core.indexing_map import IndexingMap, ValueSource
from symidx.core.indexing_map.direction import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, Direction
from symidx.core.interval import Interval
from symidx.core.simplify import compose
from symidx.core.simplify.finish import finish
from symidx.errors import HloShapeError, ParseError, SymidxError, UnsupportedOpError
from symidx.fusion.reached import Reached, Step, Traced, identity_step
from symidx.fusion.runtime import resolve_runtime_vars, runtime_sources, split_by_tables
from symidx.fusion.values import Scope, filling, nonzero_where, select_constraints
from symidx.hlo import HloComputation, HloInstruction, Shape, ShapeLike, TupleShape
from symidx.hlo.asynchronous import (
    ASYNC_COLLECTIVE_DONE,
    ASYNC_COLLECTIVES,
    keeps_operands,
    wrapped_collective,
)
from symidx.hlo.facts import branch_attributes, branch_of, called_computation
from symidx.hlo.graph import topological_order
from symidx.hlo.leaves import element_leaves, leaf_count, leaves
from symidx.hlo.validate import located
from symidx.lowering.values import known_in, known_values
from symidx.ops import (
    input_to_output,
    library_computation,
    opaque_reason,
    output_to_input,
)
from symidx.ops.basic import every_element, from_scalar, to_scalar

if TYPE_CHECKING:
    from symidx.fusion.loops import LoopFacts

__all__ = [
    "results_inside",
    "Traced",
    "Step",
    "Callee",
    "backward_steps",
    "forward_steps",
    "leaf_dependencies",
    "handled_opcodes",
]

class Callee(Protocol):
    """What a step needs of the analysis of a called computation."""

    #: The semantics of the maps: False for ``reads`` (an element is read when some IEEE
    #: value of it changes the output), True for ``finite`` (some finite value, every
    #: input finite); see :func:`symidx.ops.rule`.
    assume_finite: bool
    #: What the loop code keeps per ``while`` (see :class:`symidx.fusion.loops.LoopCallee`).
    loop_facts: dict[Hashable, LoopFacts]

    def parameters_of(self, comp: HloComputation, output: int, scope: Scope | None = None
                      ) -> Mapping[tuple[int, int], Reached]:
        """From root leaf ``output`` to each (parameter number, leaf) it reads; ``scope``
        names the call that runs ``comp`` when it is analysed per call."""

    def outputs_of(self, comp: HloComputation, parameter: int, leaf: int,
                   scope: Scope | None = None) -> Mapping[int, Reached]:
        """From leaf ``leaf`` of parameter ``parameter`` to each root leaf that reads it
        (``scope``: as for :meth:`parameters_of`)."""

    def dependencies(self, comp: HloComputation) -> list[int]:
        """Per root leaf, the parameter-0 leaves it depends on, as a bit set (see
        :func:`leaf_dependencies`)."""

    def misfit(self, instr: HloInstruction) -> str | None:
        """What XLA's verifier finds wrong with ``instr`` when the analysis reads such
        instructions as over-approximations; None when it is right. (An analysis that
        verifies raises the located error instead.)"""


# --- the two entry points -----------------------------------------------------------------


def backward_steps(instr: HloInstruction, output: int, callee: Callee, *,
                   resolve: bool = True, scope: Scope | None = None) -> list[Step]:
    """The steps from output leaf ``output`` of ``instr`` to the operand leaves it reads.
    ``resolve=False`` leaves an array op's maps as its rule gives them (runtime variables
    naming the operands, results unrestricted), as a single instruction's maps are
    printed; otherwise the values ``instr`` reads are followed through ``scope`` (the
    computation holding it, and its caller: a select's mask). An instruction whose shapes
    do not fit raises an error at its line."""
    try:
        return _steps(instr, OUTPUT_TO_INPUT, output, -1, callee, resolve, scope)
    except HloShapeError as e:
        raise _at(instr, e) from None


def forward_steps(instr: HloInstruction, position: int, leaf: int, callee: Callee, *,
                  resolve: bool = True, scope: Scope | None = None) -> list[Step]:
    """The steps from leaf ``leaf`` of operand ``position`` of ``instr`` to its outputs
    (``resolve``: see :func:`backward_steps`)."""
    try:
        return _steps(instr, INPUT_TO_OUTPUT, position, leaf, callee, resolve, scope)
    except HloShapeError as e:
        raise _at(instr, e) from None


def _at(instr: HloInstruction, error: HloShapeError) -> SymidxError:
    """``error`` located at ``instr`` (unless it already is)."""
    if isinstance(error, ParseError) or instr.document is None:
        return error
    return located(instr, str(error))


def _steps(instr: HloInstruction, direction: Direction, index: int, leaf: int,
           callee: Callee, resolve: bool, scope: Scope | None) -> list[Step]:
    """The one dispatch: an instruction whose shapes do not fit reads everything (labelled);
    otherwise its opcode's entry in :data:`STEPS`, or, for every other opcode, its per-op
    rule (:func:`_op_steps`)."""
    misfit = callee.misfit(instr)
    if misfit is not None:
        return _everything(instr, direction, index, leaf, f"shapes do not fit: {misfit}")
    return STEPS.get(instr.opcode, _op_steps)(instr, direction, index, leaf, callee, resolve,
                                              scope)


def _op_steps(instr: HloInstruction, direction: Direction, index: int, leaf: int,
              callee: Callee, resolve: bool, scope: Scope | None) -> list[Step]:
    """An op with a per-op rule: its rule's maps (refined by the values its operands hold:
    a select's mask, under ``finite`` a factor's zeros); a custom-call that carries the
    computation it computes goes through it; a ``copy`` of a tuple moves its leaves."""
    if library_computation(instr) is not None:
        return _call_steps(instr, direction, index, leaf, callee, resolve, scope)
    if instr.opcode == "copy" and isinstance(instr.shape, TupleShape):
        return _moved_steps(instr, direction, index, leaf, callee)
    steps = _rule_steps(instr, direction, index, leaf, resolve, scope, callee.assume_finite)
    if resolve and callee.assume_finite and instr.opcode in PRODUCTS:
        return _product_steps(instr, steps, scope, backward=direction == OUTPUT_TO_INPUT)
    return _select_steps(instr, steps, scope) if resolve and instr.opcode == "select" else steps


# --- per-op rules -----------------------------------------------------------------------------


def _rule_steps(instr: HloInstruction, direction: Direction, index: int, leaf: int,
                resolve: bool = True, scope: Scope | None = None,
                assume_finite: bool = False) -> list[Step]:
    """Steps from the per-op rule (output-to-input: ``index`` is the output leaf;
    input-to-output: the operand position, whose leaf ``leaf`` must be 0). ``resolve``:
    follow runtime variables (through ``scope``: the computation holding ``instr``, and its
    caller) and keep maps inside their target shape. ``assume_finite``: the rule's maps
    under the ``finite`` semantics."""
    if _has_tuple_operand(instr):
        return _everything(instr, direction, index, leaf, _opacity(instr))
    backward = direction == OUTPUT_TO_INPUT
    known = _known_indices(instr, scope) \
        if resolve and scope is not None and instr.opcode == "scatter" else None
    try:
        groups = (output_to_input(instr, index, assume_finite=assume_finite, known=known)
                  if backward
                  else input_to_output(instr, index, assume_finite=assume_finite, known=known))
    except UnsupportedOpError as e:
        reason = opaque_reason(instr)
        if reason is not None:
            return _everything(instr, direction, index, leaf, reason)
        return _unsupported(instr, direction, index, e.opcode)
    except HloShapeError as e:  # shapes XLA's parser lets through, but that do not fit
        return _everything(instr, direction, index, leaf, f"shapes do not fit: {e}")
    return _group_steps(instr, direction, index, groups,
                        lambda out: opaque_reason(instr, out, direction), resolve, scope,
                        known)


def _known_indices(scatter: HloInstruction, scope: Scope) -> dict[int, HloInstruction] | None:
    """The instruction outside the computation that fills ``scatter``'s indices parameter,
    by the indices' operand position, when it holds values known before the run (a
    constant table, an iota); None otherwise. The rule reads the indices there
    (:func:`symidx.ops.scatter.scatter_indices`): it then knows where the updates land, as
    it does for indices computed in the same computation (XLA fuses a scatter and leaves a
    constant table of indices outside)."""
    n = len(scatter.operands) // 2
    indices = scatter.operands[n] if len(scatter.operands) % 2 == 1 else None
    held = None if indices is None else filling(indices, scope)
    if held is None or known_values(held) is None:
        return None
    return {n: held}


def _select_steps(instr: HloInstruction, steps: list[Step], scope: Scope | None
                  ) -> list[Step]:
    """A ``select``'s steps, each branch read only where the predicate picks it when the
    output index decides the predicate (a causal mask: :mod:`symidx.fusion.values`)."""
    out = _leaf_dims(instr.shape, 0)
    env = {dim(i): Interval(0, n - 1) for i, n in enumerate(out)}
    branches = select_constraints(instr, env, scope)
    refined = []
    for step in steps:
        where = branches[step.position - 1] if step.position in (1, 2) else None
        if where is None:
            refined.append(step)
            continue
        maps = []
        for t in step.maps:
            kept = [c for c in (finish(_constrained(t.map, conjunction)) for conjunction in where)
                    if not c.is_known_empty]
            maps += [Traced(c, t.via, t.count) for c in kept] or \
                [Traced(t.map.as_known_empty(), t.via, t.count)]
        refined.append(replace(step, maps=tuple(maps)))
    return refined


#: The ops whose factors the ``finite`` semantics drops where the other factor is zero.
PRODUCTS = frozenset({"multiply", "dot"})


def _product_steps(instr: HloInstruction, steps: list[Step], scope: Scope | None,
                   backward: bool) -> list[Step]:
    """Under the ``finite`` semantics: a factor of a ``multiply`` or a ``dot`` is not read
    where the other factor is surely zero or NaN (:func:`symidx.fusion.values.nonzero_where`):
    a finite value times zero is zero whatever the value (``+0`` or ``-0``, one value to
    this semantics), and anything times NaN is NaN. Not under ``reads``: ``inf * 0`` is
    NaN. Elementwise ``multiply`` in both directions (its maps are the
    identity, or from a scalar); ``dot`` output-to-input, where both operand maps share
    the contracting range variables, so the other factor's element is known at every point
    of the map. (A dot's input-to-output maps keep the reads: an over-approximation.)"""
    if len(instr.operands) != 2 or (instr.opcode == "dot" and not backward):
        return steps
    out = _leaf_dims(instr.shape, 0)
    refined = []
    for step in steps:
        other = 1 - step.position
        maps = []
        for t in step.maps:
            where = _zero_of_other(instr, other, t.map, out, steps, scope)
            kept = [t.map] if where is None else [
                c for c in (finish(_constrained(t.map, conjunction)) for conjunction in where)
                if not c.is_known_empty]
            maps += [Traced(c, t.via, t.count) for c in kept] or \
                [Traced(t.map.as_known_empty(), t.via, t.count)]
        refined.append(replace(step, maps=tuple(maps)))
    return refined


def _zero_of_other(instr: HloInstruction, other: int, m: IndexingMap, out: Sequence[int],
                   steps: list[Step], scope: Scope | None
                   ) -> tuple[tuple[tuple[Expr, Interval], ...], ...] | None:
    """Where, over the variables of ``m`` (a map of one factor), the other factor may hold
    something other than zero or NaN, as a union of conjunctions (``()``: nowhere); None
    when that may be everywhere (keep ``m``)."""
    if m.is_known_empty or m.is_undefined or m.num_rts:
        return None
    op = instr.operands[other]
    if not isinstance(op.shape, Shape):
        return None
    env = {dim(i): b for i, b in enumerate(m.dims)}
    env.update({sym(j): b for j, b in enumerate(m.ranges)})
    if instr.opcode == "multiply":
        if tuple(b.size for b in m.dims) != tuple(out) or m.num_ranges:
            return None
        element: tuple[Expr, ...] = tuple(dim(i) for i in range(len(out))) \
            if op.shape.dims else ()
    else:  # dot: the other factor's map at the same point (same dims, same range variables)
        twins = [t.map for s in steps if s.position == other for t in s.maps]
        if len(twins) != 1 or twins[0].dims != m.dims or twins[0].ranges != m.ranges \
                or twins[0].num_rts:
            return None
        element = tuple(twins[0].results)
    return nonzero_where(op, element, env, scope)


def _constrained(m: IndexingMap, conjunction: tuple[tuple[Expr, Interval], ...]
                 ) -> IndexingMap:
    for expr, interval in conjunction:
        m = m.with_constraint(expr, interval)
    return m


def _group_steps(instr: HloInstruction, direction: Direction, index: int,
                 groups: list[list[IndexingMap]], reason: str | None | Callable[[int], str | None],
                 resolve: bool = True, scope: Scope | None = None,
                 known: Mapping[int, HloInstruction] | None = None) -> list[Step]:
    """One step per group of an instruction's own maps (per operand output-to-input, per
    output input-to-output), labelled ``reason`` when they over-approximate (a function of
    the output leaf when that decides); ``resolve``: follow runtime variables and keep maps
    inside their target shape; ``known``: the operands whose values the rule read from
    another instruction (see :func:`symidx.ops.rule`), which its runtime variables name."""
    backward = direction == OUTPUT_TO_INPUT
    sources = runtime_sources(instr, known=known)
    steps = []
    for k, group in enumerate(groups):
        output, position = (index, k) if backward else (k, index)
        target = _leaf_dims(instr.operands[position].shape, 0) if backward \
            else _leaf_dims(instr.shape, output)
        if resolve:  # constant index tables split a map; runtime values are followed
            group = [p for m in group
                     for p in split_by_tables(m, sources, clamp=True,
                                              comp=_computation(scope))]
        maps = tuple(Traced(_inside(resolve_runtime_vars(m, sources, clamp=True, scope=scope),
                                    target) if resolve else m) for m in group)
        why = reason(output) if callable(reason) else reason
        steps.append(Step(output, position, 0, maps, opaque=why))
    return steps


def _has_tuple_operand(instr: HloInstruction) -> bool:
    return any(isinstance(op.shape, TupleShape) for op in instr.operands)


def _opacity(instr: HloInstruction) -> str:
    return opaque_reason(instr) or f"{instr.opcode} on tuples"


def _everything(instr: HloInstruction, direction: Direction, index: int, leaf: int,
                reason: str) -> list[Step]:
    """Every element of every operand leaf read by every output element (the sound
    over-approximation of an op whose reads are unknown), labelled ``reason``."""
    out_leaves = leaves(instr.shape)
    if direction == OUTPUT_TO_INPUT:
        source = out_leaves[index].dims
        return [Step(index, j, lf, (Traced(every_element(source, s.dims)),), opaque=reason)
                for j, op in enumerate(instr.operands) for lf, s in enumerate(leaves(op.shape))]
    source = leaves(instr.operands[index].shape)[leaf].dims
    return [Step(k, index, leaf, (Traced(every_element(source, s.dims)),), opaque=reason)
            for k, s in enumerate(out_leaves)]


def _unsupported(instr: HloInstruction, direction: Direction, index: int, opcode: str
                 ) -> list[Step]:
    if direction == OUTPUT_TO_INPUT:
        return [Step(index, j, lf, unsupported=opcode) for j, op in enumerate(instr.operands)
                for lf in range(leaf_count(op.shape))]
    return [Step(k, index, 0, unsupported=opcode) for k in range(leaf_count(instr.shape))]


def _leaf_dims(shape: ShapeLike, leaf: int) -> tuple[int, ...]:
    return leaves(shape)[leaf].dims


def _inside(m: IndexingMap, dims: tuple[int, ...]) -> IndexingMap:
    """``m`` restricted to the indices whose results lie in ``dims``: outside, nothing is
    read. An op's rule keeps its own images inside the operand (the op twins check it);
    this guards the maps a step rewrites -- runtime values resolved, maps reached through
    a called computation."""
    if m.is_known_empty or m.is_undefined or len(dims) != m.num_results:
        return m
    if results_inside(m, [Interval(0, n - 1) for n in dims]):
        return m
    return finish(compose(m, IndexingMap.identity(dims)), fold_point_dims=True)


def results_inside(m: IndexingMap, intervals: Sequence[Interval]) -> bool:
    """Does each result of ``m`` lie inside its interval, by the bounds its variables'
    intervals give it (:func:`~symidx.core.expr.bounds`: sound, so True is sure; an empty
    bound, a result with no value, is not inside)?"""
    env = m.variable_bounds()
    memo: dict[Expr, Interval] = {}
    for r, interval in zip(m.results, intervals):
        span = bounds(r, env, memo)
        if not (span.lo <= span.hi and interval.lo <= span.lo and span.hi <= interval.hi):
            return False
    return True


# --- ops that move tuple leaves -----------------------------------------------------------------

#: Ops whose output is their operand 0, leaf for leaf.
_SAME_LEAVES = frozenset({"opt-barrier", "domain", "add-dependency", "async-update"})
#: Ops that read no array element of their operands.
_NO_READS = frozenset({"after-all", "send-done", "recv", "infeed", "outfeed"})


def _operand_leaves(instr: HloInstruction, base: int = 0) -> list[tuple[int, int, int]]:
    """Every leaf of every operand laid out one after the other from output leaf ``base``:
    (output leaf, operand position, operand leaf) triples (a ``tuple``, or the operands an
    asynchronous op keeps in its output's element 0)."""
    triples = []
    for j, op in enumerate(instr.operands):
        n = leaf_count(op.shape)
        triples += [(base + lf, j, lf) for lf in range(n)]
        base += n
    return triples


def _kept(instr: HloInstruction, base: int, direction: Direction, index: int, leaf: int
          ) -> list[Step]:
    """The identity steps of :func:`_operand_leaves` from ``base``: to output leaf
    ``index`` (output-to-input), or from leaf ``leaf`` of operand ``index``."""
    return _connected(instr, _operand_leaves(instr, base), direction, index, leaf)


def _connected(instr: HloInstruction, wiring: list[tuple[int, int, int]],
               direction: Direction, index: int, leaf: int) -> list[Step]:
    """The identity steps of ``wiring`` (see :func:`_wiring`) to output leaf ``index``
    (output-to-input), or from leaf ``leaf`` of operand ``index``."""
    if direction == OUTPUT_TO_INPUT:
        return [identity_step(instr, out, p, lf) for out, p, lf in wiring if out == index]
    return [identity_step(instr, out, p, lf) for out, p, lf in wiring
            if (p, lf) == (index, leaf)]


#: Wirings at least this long are indexed once and kept (:func:`_indexed_wiring`): a
#: training step's root tuple has hundreds of leaves, and each output asks for its own.
_LARGE_WIRING = 64
#: The indexed wirings kept, the most recent last (a few instructions: the roots swept).
_WIRINGS: dict[HloInstruction, tuple[dict[int, list[tuple[int, int, int]]],
                                     dict[tuple[int, int], list[tuple[int, int, int]]]]] = {}
_WIRINGS_KEPT = 8


def _moved_steps(instr: HloInstruction, direction: Direction, index: int, leaf: int,
                 callee: Callee) -> list[Step]:
    """An op that only moves tuple leaves, or reads nothing: the identity between the
    leaves it connects (:func:`_wiring`). A long wiring is looked up in its index, so that
    asking for each of its ``n`` leaves costs ``O(n)`` in all, not ``O(n^2)``."""
    del callee
    found = _WIRINGS.get(instr)
    if found is None:
        wiring = _wiring(instr)
        assert wiring is not None
        if len(wiring) < _LARGE_WIRING:
            return _connected(instr, wiring, direction, index, leaf)
        found = _indexed_wiring(instr, wiring)
    by_output, by_operand = found
    picked = by_output.get(index, []) if direction == OUTPUT_TO_INPUT \
        else by_operand.get((index, leaf), [])
    return [identity_step(instr, out, p, lf) for out, p, lf in picked]


def _indexed_wiring(instr: HloInstruction, wiring: list[tuple[int, int, int]]
                    ) -> tuple[dict[int, list[tuple[int, int, int]]],
                               dict[tuple[int, int], list[tuple[int, int, int]]]]:
    """``wiring`` by output leaf and by operand leaf, kept in :data:`_WIRINGS` (the
    oldest dropped past :data:`_WIRINGS_KEPT`)."""
    by_output: dict[int, list[tuple[int, int, int]]] = {}
    by_operand: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for triple in wiring:
        out, p, lf = triple
        by_output.setdefault(out, []).append(triple)
        by_operand.setdefault((p, lf), []).append(triple)
    if len(_WIRINGS) >= _WIRINGS_KEPT:
        del _WIRINGS[next(iter(_WIRINGS))]
    _WIRINGS[instr] = by_output, by_operand
    return by_output, by_operand


def _wiring(instr: HloInstruction) -> list[tuple[int, int, int]] | None:
    """(output leaf, operand position, operand leaf) triples connected by the identity,
    for the ops that only move tuple leaves; None for the others."""
    opcode = instr.opcode
    if opcode == "tuple":
        return _operand_leaves(instr)
    if opcode in _NO_READS:
        return []
    if opcode in _SAME_LEAVES or (opcode == "copy" and isinstance(instr.shape, TupleShape)):
        return [(k, 0, k) for k in range(leaf_count(instr.operands[0].shape))]
    if opcode == "get-tuple-element":
        span = _element(instr.operands[0], instr.tuple_index, instr)
        return [(k, 0, lf) for k, lf in enumerate(span)]
    if opcode == "copy-start":  # (destination, source, context)
        n = leaf_count(instr.operands[0].shape)
        return [(e.start + lf, 0, lf) for e in (_element(instr, 0, instr),
                                                 _element(instr, 1, instr))
                for lf in range(n)]
    if opcode in ("copy-done", "recv-done", "send"):  # element 0 of the operand, or the
        if opcode == "send":                            # operand as element 0
            return [(lf, 0, lf) for lf in range(leaf_count(instr.operands[0].shape))]
        return [(k, 0, lf) for k, lf in enumerate(_element(instr.operands[0], 0, instr))]
    if opcode == "async-done":
        return [(k, 0, lf) for k, lf in enumerate(_element(instr.operands[0], 1, instr))]
    if opcode in ASYNC_COLLECTIVE_DONE:
        start = instr.operands[0]
        if keeps_operands(start):
            return [(k, 0, lf) for k, lf in enumerate(_element(start, 1, instr))]
        return [(k, 0, k) for k in range(leaf_count(start.shape))]
    return None


def _element(holder: HloInstruction, index: int | None, user: HloInstruction) -> range:
    """The leaves of tuple element ``index`` of ``holder``'s shape (an error naming
    ``user`` when there is none)."""
    try:
        return element_leaves(holder.shape, -1 if index is None else index)
    except IndexError:
        raise HloShapeError(f"{user.opcode} {user.name}: {holder.name} of shape "
                            f"{holder.shape} has no tuple element {index}") from None


# --- called computations ----------------------------------------------------------------------


def _through(comp: HloComputation, direction: Direction, index: int, leaf: int,
             callee: Callee, instr: HloInstruction, positions: Mapping[int, int],
             out_base: int = 0, scope: Scope | None = None,
             caller: HloComputation | None = None) -> list[Step]:
    """Steps through ``comp`` run on operands of ``instr``: output-to-input from root leaf
    ``index`` (the caller's output leaf ``out_base + index``), input-to-output from leaf
    ``leaf`` of the caller's operand at position ``index``. ``positions`` sends each
    parameter number of ``comp`` to the operand position that fills it. ``scope``: the
    analysis of ``comp`` run by this call (:func:`specialized`), or None for the one that
    serves every call. ``caller``: the computation holding ``instr`` (None: not known),
    where a runtime variable's holder is the representative of its value."""
    sources = runtime_sources(instr, {n: instr.operands[p] for n, p in positions.items()})
    if direction == OUTPUT_TO_INPUT:
        return [_reached_step(out_base + index, positions[param], lf, r, sources,
                              _leaf_dims(comp.parameters[param].shape, lf), caller)
                for (param, lf), r in callee.parameters_of(comp, index, scope).items()]
    param = next(n for n, p in positions.items() if p == index)
    return [_reached_step(out_base + k, index, leaf, r, sources,
                          _leaf_dims(comp.root.shape, k), caller)
            for k, r in callee.outputs_of(comp, param, leaf, scope).items()]


def _reached_step(output: int, position: int, leaf: int, r: Reached,
                  sources: Mapping[ValueSource, HloInstruction], target: tuple[int, ...],
                  caller: HloComputation | None) -> Step:
    maps = tuple(Traced(_inside(resolve_runtime_vars(p, sources, clamp=False, comp=caller),
                                target),
                        o.path, o.count) for m, o in zip(r.maps, r.origins, strict=True)
                 for p in split_by_tables(m, sources, clamp=False, comp=caller))
    return Step(output, position, leaf, maps, r.unsupported, r.opaque)


def _call_steps(instr: HloInstruction, direction: Direction, index: int, leaf: int,
                callee: Callee, resolve: bool, scope: Scope | None) -> list[Step]:
    """``fusion``, ``call``, and a custom-call that carries its computation: through the
    computation it runs on its operands (once per call when :func:`specialized`)."""
    del resolve  # maps through a computation always follow their runtime variables
    comp = called_computation(instr) or library_computation(instr)
    assert comp is not None
    fixed = () if scope is None else scope.fixed_inside(instr.name)
    inner = Scope(comp, tuple(instr.operands), scope or Scope(None), fixed) \
        if fixed or specialized(comp) else None
    return _through(comp, direction, index, leaf, callee, instr,
                    {n: n for n in range(len(instr.operands))}, scope=inner,
                    caller=_computation(scope))


def _computation(scope: Scope | None) -> HloComputation | None:
    return None if scope is None else scope.comp


#: A computation called from several places is analysed once per call when it is at most
#: this long and holds a select (whose mask a caller may decide).
SPECIALIZE_LIMIT = 64


def specialized(comp: HloComputation) -> bool:
    """Is ``comp`` analysed once per call that runs it, with the values of that call's
    operands (:class:`symidx.fusion.values.Scope`), rather than once for every call? Yes
    for a short computation with a ``select`` that several instructions call: JAX's
    unoptimised ``_where``, called wherever ``jnp.where`` is, takes each caller's mask.
    (A computation with a single caller follows its parameters to that caller anyway.)"""
    return len(comp.callers) > 1 and len(comp.instructions) <= SPECIALIZE_LIMIT \
        and any(i.opcode == "select" for i in comp.instructions)


def _async_start_steps(instr: HloInstruction, direction: Direction, index: int, leaf: int,
                       callee: Callee, resolve: bool, scope: Scope | None) -> list[Step]:
    """``((operands...), result, context...)``: element 0 keeps the operands, element 1 is
    the called computation's result, the rest read nothing."""
    del resolve  # maps through a computation always follow their runtime variables
    comp = called_computation(instr)
    assert comp is not None
    kept, result = _element(instr, 0, instr), _element(instr, 1, instr)
    positions = {n: n for n in range(len(instr.operands))}
    steps = _kept(instr, kept.start, direction, index, leaf)
    caller = _computation(scope)
    if direction == OUTPUT_TO_INPUT:
        if index in result:
            steps += _through(comp, direction, index - result.start, leaf, callee, instr,
                              positions, out_base=result.start, caller=caller)
        return steps
    return steps + _through(comp, direction, index, leaf, callee, instr, positions,
                            out_base=result.start, caller=caller)


def _conditional_steps(instr: HloInstruction, direction: Direction, index: int, leaf: int,
                       callee: Callee, resolve: bool, scope: Scope | None) -> list[Step]:
    """Every branch (branch ``b`` runs on operand ``b + 1``), or the one branch that runs
    when the branch index is known before the run (:func:`chosen_branch`); operand 0 (the
    predicate or branch index) is read by every output element."""
    del resolve  # maps through a computation always follow their runtime variables
    branches = _branches(instr)
    caller = _computation(scope)
    chosen = chosen_branch(instr, len(branches), scope)
    steps = []
    if direction == OUTPUT_TO_INPUT:
        out = _leaf_dims(instr.shape, index)
        steps.append(Step(index, 0, 0, (Traced(to_scalar(out)),)))
        for b, comp in enumerate(branches):
            if chosen is None or b == chosen:
                steps += _through(comp, direction, index, leaf, callee, instr, {0: b + 1},
                                  caller=caller)
        return steps
    if index == 0:
        return [Step(k, 0, 0, (Traced(from_scalar(s.dims)),))
                for k, s in enumerate(leaves(instr.shape))]
    if chosen is not None and index - 1 != chosen:
        return []  # a branch that does not run reads nothing
    return _through(branches[index - 1], direction, index, leaf, callee, instr, {0: index},
                    caller=caller)


def chosen_branch(instr: HloInstruction, count: int, scope: Scope | None) -> int | None:
    """The branch a ``conditional`` of ``count`` branches runs whatever the input values:
    where an enclosing loop fixes it at the state the analysis serves (a ``cond`` on the
    parity of a loop's counter: :attr:`Scope.fixed`), or where its branch index (or
    predicate) folds from constants and iotas (:func:`symidx.lowering.values.known_in`, in the
    scope's computation, its parameters followed to a single caller). HLO runs the last
    branch for an index outside ``[0, count - 1]``; a predicate runs branch 0 when true.
    None when the branch index is a runtime value."""
    fixed = None if scope is None else scope.fixed_at(instr.name)
    if isinstance(fixed, int) and 0 <= fixed < count:
        return fixed
    table = known_in(instr.operands[0], _computation(scope))
    if table is None or table.size != 1:
        return None
    return branch_of(instr.operands[0].shape, int(table.reshape(-1)[0]), count)


def _branches(instr: HloInstruction) -> tuple[HloComputation, ...]:
    branches = tuple(comp for key in branch_attributes(instr)
                     for comp in instr.called_computations[key])
    if not branches or len(instr.operands) != len(branches) + 1 \
            or any(len(c.parameters) != 1 for c in branches):
        raise HloShapeError(f"conditional {instr.name}: expected a branch index and one "
                            f"operand per branch, each branch taking one parameter")
    return branches


def _async_collective_steps(instr: HloInstruction, direction: Direction, index: int,
                            leaf: int, callee: Callee) -> list[Step]:
    """``X-start``: either the result of ``X`` itself, or ``(operands, result,
    context...)``; the result's maps are the collective's own rule's
    (:func:`symidx.hlo.asynchronous.wrapped_collective`)."""
    del callee
    inner = wrapped_collective(instr)
    if not keeps_operands(instr):
        return _rule_steps(inner, direction, index, leaf)
    kept, result = _element(instr, 0, instr), _element(instr, 1, instr)
    steps = _kept(instr, kept.start, direction, index, leaf)
    if direction == OUTPUT_TO_INPUT:
        if index in result:
            steps += [replace(s, output=s.output + result.start)
                      for s in _rule_steps(inner, direction, index - result.start, leaf)]
        return steps
    return steps + [replace(s, output=s.output + result.start)
                    for s in _rule_steps(inner, direction, index, leaf)]


def _scan_steps(instr: HloInstruction, direction: Direction, index: int, leaf: int,
                callee: Callee) -> list[Step]:
    """A scan's reads from its body's, walked through the carries (:mod:`symidx.fusion.scan`);
    one step per operand (output-to-input) or output (input-to-output). The scan module is
    imported here, by the first scan met (start-up: most modules have none)."""
    from symidx.fusion.scan import scan_input_to_output, scan_output_to_input

    try:
        if direction == OUTPUT_TO_INPUT:
            groups, reason = scan_output_to_input(instr, index, callee.parameters_of)
        else:
            groups, reason = scan_input_to_output(instr, index, callee.parameters_of)
    except HloShapeError as e:  # a scan XLA's parser lets through, but whose parts disagree
        return _everything(instr, direction, index, leaf, f"shapes do not fit: {e}")
    return _group_steps(instr, direction, index, groups, reason)


def leaf_dependencies(comp: HloComputation) -> list[int]:
    """Per root leaf of ``comp``: the leaves of parameter 0 it depends on, as a bit set
    (bit ``l`` for leaf ``l``). Tuple plumbing and calls are followed leaf by leaf; any
    other op makes each output leaf depend on every leaf of every operand."""
    deps: dict[str, list[int]] = {}
    for instr in _order(comp):
        if instr.opcode == "parameter":
            n = leaf_count(instr.shape)
            deps[instr.name] = [1 << lf for lf in range(n)] if instr.parameter_number == 0 \
                else [0] * n
            continue
        operand_bits = [deps[op.name] for op in instr.operands]
        wiring = _wiring(instr)
        count = leaf_count(instr.shape)
        if wiring is not None:
            bits = [0] * count
            for out, p, lf in wiring:
                bits[out] |= operand_bits[p][lf]
        else:
            every = 0
            for per_leaf in operand_bits:
                for b in per_leaf:
                    every |= b
            bits = [every] * count
        deps[instr.name] = bits
    return deps[comp.root.name]


def _order(comp: HloComputation) -> list[HloInstruction]:
    return topological_order(comp)




# --- the one table ----------------------------------------------------------------------------

#: A step function: ``(instr, direction, index, leaf, callee, resolve, scope)``, as
#: :func:`_steps` receives them.
StepFunction = Callable[[HloInstruction, Direction, int, int, Callee, bool, "Scope | None"],
                        list[Step]]


def _plain(step: Callable[[HloInstruction, Direction, int, int, Callee], list[Step]]
           ) -> StepFunction:
    """A step that needs neither ``resolve`` nor the sweep's scope."""
    @wraps(step)
    def plain(instr: HloInstruction, direction: Direction, index: int, leaf: int,
              callee: Callee, resolve: bool, scope: Scope | None) -> list[Step]:
        return step(instr, direction, index, leaf, callee)
    return plain


class _WhileSteps:
    """:func:`symidx.fusion.loops.while_steps`, its module imported on the first ``while``
    met (or when ``__wrapped__`` is asked): most modules have no loop, and the loop code is
    big (start-up). The loop's maps name holders in the computation of the sweep's scope."""

    __slots__ = ()

    @property
    def __wrapped__(self) -> Callable[..., list[Step]]:
        from symidx.fusion.loops import while_steps

        return while_steps

    def __call__(self, instr: HloInstruction, direction: Direction, index: int, leaf: int,
                 callee: Callee, resolve: bool, scope: Scope | None) -> list[Step]:
        del resolve  # maps through a loop always follow their runtime variables
        return self.__wrapped__(instr, direction, index, leaf, callee,
                                comp=_computation(scope),
                                init=None if scope is None else scope.fixed_at(instr.name))


#: Ops that only move tuple leaves, or read no array element (:func:`_wiring`).
_MOVES = _SAME_LEAVES | _NO_READS | ASYNC_COLLECTIVE_DONE | {
    "tuple", "get-tuple-element", "copy-start", "copy-done", "recv-done", "send", "async-done"}

#: The steps of every opcode the fusion floor handles itself, its keys exactly
#: :data:`symidx.ops.HANDLED_BY_FUSION` (tests/test_architecture.py holds it); any other
#: opcode's steps come from its per-op rule (:func:`_op_steps`).
STEPS: dict[str, StepFunction] = {
    "fusion": _call_steps,
    "call": _call_steps,
    "async-start": _async_start_steps,
    "conditional": _conditional_steps,
    "while": _WhileSteps(),
    "scan": _plain(_scan_steps),
    **{op: _plain(_async_collective_steps) for op in ASYNC_COLLECTIVES},
    **{op: _plain(_moved_steps) for op in _MOVES},
}


def handled_opcodes() -> frozenset[str]:
    """The opcodes whose steps come from here rather than from a per-op rule: calls, loops,
    conditionals, asynchronous wrappers, and the ops that move tuple leaves or read
    nothing (the keys of :data:`STEPS`)."""
    return frozenset(STEPS)
