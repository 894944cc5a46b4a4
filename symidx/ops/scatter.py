"""Ops that write windows of updates into their operand: scatter, select-and-scatter.

**scatter** (variadic): ``N`` operands, the indices, ``N`` updates; ``N`` outputs (a tuple
when ``N > 1``). Update element ``U`` has a scatter position ``G`` (its dims not in
``update_window_dims``, which walk the indices' dims other than ``index_vector_dim``) and a
window offset (its ``update_window_dims``). Its target in the operand is ``start + offset``:
``start`` holds the index vector at ``G`` (scattered by ``scatter_dims_to_operand_dims``),
``G``'s own index on the batching dims (``input_batching_dims`` paired with
``scatter_indices_batching_dims``), 0 elsewhere; ``offset`` puts the window offset on the
operand's window dims (neither inserted nor batching). XLA does not clamp: an update window
that does not fit the operand (``start`` outside ``[0, operand_dim - window_size]`` on some
dim) is skipped entirely.

The index vectors are runtime variables, as for gather: one per component, over the starts
that fit (``[0, operand_dim - window_size]``), with provenance ``source`` (the indices'
instruction) and a map to the element holding it. They are *not* clamped: a run-time value
outside the interval means the window is skipped and nothing is read. Indices known whatever
the run (a constant, an iota, integer ops of them in the same computation or the
computations it calls: :func:`symidx.lowering.values.known_values`; or held by the instruction
outside the computation that fills the indices parameter, when the caller of the rule
passes it as ``known``: :func:`scatter_indices`) are folded into the maps: at
a fixed element their value (a window that does not fit makes the map empty); an iota at a
varying one, its index, with the fit as a constraint; a small known table
(:data:`symidx.lowering.values.SCATTER_SPLIT_LIMIT` scatter positions at most) splits each map
into one per scatter position, each with its values. Where only one start fits (the window
spans the operand along that dim), the simplifier fixes a variable to that start: the map
then no longer says that another run-time value skips the window, so for such a value it
over-approximates; as the union over every index value (its meaning) it stays exact.

The combiner (``to_apply``: N current values, then N updates) is followed from each result
to the parameters it is computed from (:func:`combiner_reads`). Where updates land, result
``j`` reads the operands reached from ``j`` in one step or more (a step: a result to the
current values it reads; several updates may land, in any order).

Output ``j`` at index ``O`` (output-to-input):

* operand ``j`` at ``O``, except where an update lands whatever the run when result ``j``
  never reads operand ``j`` (an overwriting combiner, ``x.at[i].set(u)``, with known
  indices: one identity map per box of the operand outside the windows that land, known
  empty when they cover it). With indices a runtime value every update may be skipped, so
  the identity is exact as the union over their values;
* operand ``k != j`` at ``O`` when some update lands on ``O`` and result ``j`` reads it;
  nowhere otherwise;
* every update ``k`` at each ``U`` landing on ``O``: ``G`` ranges over the scatter positions
  (range variables; the batching dims are ``O``'s), the window offset is ``O - start``
  within the window. Two updates landing on one element are both read: XLA leaves the
  order in which the combiner meets them undefined;
* the indices: component ``k`` of the index vector of every scatter position ``G`` (with
  ``O``'s batch coordinates) where some value of it lands ``G``'s window on ``O``, the other
  components as they are: anywhere along the dim ``k`` moves, within the window from the
  other components' starts (runtime variables, or folded values) along the others.

The input-to-output maps are the inverse relations (an update ``U`` goes to
``start + offset``, where ``start`` fits).

**select-and-scatter** ``(operand, source, init)``: windows as reduce-window's (padding,
strides) over ``operand``, one per ``source`` element. Each window selects one of its
elements and adds its ``source`` element there; the output starts as ``init``. Which element
is selected depends on the operand's values, so an output element reads every operand
element of every window containing it, those windows' source elements, and ``init``: the
dependencies over all operand values, exact as such.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sympy import Integer

from symidx.core.expr import Expr, dim, rt, sym
from symidx.core.indexing_map import IndexingMap, RuntimeVar
from symidx.core.interval import Interval
from symidx.core.simplify import compose
from symidx.hlo import HloInstruction, WindowDim
from symidx.hlo.facts import Dims, num_outputs, operand_dims, output_dims, result_reads
from symidx.lowering.values import SCATTER_SPLIT_LIMIT, held_at, known_values, splits, value_source
from symidx.ops._common import attribute, require, var_or_zero
from symidx.ops.basic import from_scalar, identity, to_scalar
from symidx.ops.reduction import reduce_window_operand_map, reduce_window_output_map
from symidx.ops.registry import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, rule

if TYPE_CHECKING:  # numpy is imported when a scatter is analysed, not at start-up
    import numpy as np

Constraint = tuple[Expr, Interval]


@dataclass(frozen=True)
class ScatterGeometry:
    """A scatter's shapes and dimension numbers, with the correspondences derived from them.

    The ``t``-th scatter dim of the updates (``update_scatter[t]``) walks the ``t``-th dim
    of the indices other than the index vector dim (``indices_batch[t]``). The ``k``-th
    window dim of the operand (``window[k]``) is walked by ``update_window_dims[k]``.
    """

    count: int
    operand: Dims
    indices: Dims
    updates: Dims
    update_window_dims: tuple[int, ...]
    inserted: tuple[int, ...]
    to_operand: tuple[int, ...]
    index_vector_dim: int
    operand_batching: tuple[int, ...]
    indices_batching: tuple[int, ...]

    @property
    def update_scatter(self) -> list[int]:
        return [u for u in range(len(self.updates)) if u not in self.update_window_dims]

    @property
    def indices_batch(self) -> list[int]:
        return [q for q in range(len(self.indices)) if q != self.index_vector_dim]

    @property
    def window(self) -> list[int]:
        return [j for j in range(len(self.operand))
                if j not in self.inserted and j not in self.operand_batching]

    def window_size(self, j: int) -> int:
        """The update window's extent along operand dim ``j`` (1 off the window dims)."""
        window = self.window
        return self.updates[self.update_window_dims[window.index(j)]] if j in window else 1

    def fits(self, j: int) -> Interval:
        """The starts along operand dim ``j`` at which the window fits in the operand."""
        return Interval(0, self.operand[j] - self.window_size(j))

    def indices_element(self, position: dict[int, Expr], component: Expr) -> list[Expr]:
        """The element of the indices holding ``component`` of the index vector at scatter
        position ``position`` (an expression per indices dim but the vector dim)."""
        return [component if q == self.index_vector_dim else position[q]
                for q in range(len(self.indices))]

    @property
    def vector_length(self) -> int:
        if self.index_vector_dim == len(self.indices):
            return 1
        return self.indices[self.index_vector_dim]


def scatter_geometry(instr: HloInstruction) -> ScatterGeometry:
    sdn = attribute(instr.scatter_dimension_numbers, instr, "scatter dimension numbers")
    require(len(instr.operands) % 2 == 1 and len(instr.operands) >= 3, instr,
            "expected N operands, the indices and N updates")
    n = len(instr.operands) // 2
    g = ScatterGeometry(n, operand_dims(instr, 0), operand_dims(instr, n),
                        operand_dims(instr, n + 1), sdn.update_window_dims,
                        sdn.inserted_window_dims, sdn.scatter_dims_to_operand_dims,
                        sdn.index_vector_dim, sdn.input_batching_dims,
                        sdn.scatter_indices_batching_dims)
    r = len(g.operand)
    dims_ok = (
        num_outputs(instr) == n
        and all(operand_dims(instr, k) == g.operand and output_dims(instr, k) == g.operand
                and operand_dims(instr, n + 1 + k) == g.updates for k in range(n))
        and 0 <= g.index_vector_dim <= len(g.indices)
        and len(g.to_operand) == g.vector_length
        and len(g.update_scatter) == len(g.indices_batch)
        and len(g.window) == len(g.update_window_dims)
        and all(0 <= j < r for j in g.to_operand + g.inserted + g.operand_batching)
        and not set(g.to_operand) & set(g.operand_batching)
        and len(g.operand_batching) == len(g.indices_batching)
        and all(g.indices[q] == g.operand[j]
                for j, q in zip(g.operand_batching, g.indices_batching, strict=True))
        and all(g.updates[u] == g.indices[q]
                for u, q in zip(g.update_scatter, g.indices_batch, strict=True))
        and all(g.window_size(j) <= g.operand[j] for j in g.window)
    )
    require(dims_ok, instr, "inconsistent scatter dimension numbers and shapes")
    return g


class _Starts:
    """The start of the update window along each operand dim, as expressions: runtime
    variables for the index vector (or folded values), the scatter position on batching
    dims, 0 elsewhere; with the constraints that the window fits. ``skip``: a component
    left out (its start stays 0; see :func:`indices_read`)."""

    def __init__(self, g: ScatterGeometry, indices: Indices,
                 position: dict[int, Expr], source: Sequence[int | Interval],
                 ranges: Sequence[tuple[int, int]], skip: int | None = None) -> None:
        self.rts: list[RuntimeVar] = []
        self.constraints: list[Constraint] = []
        self.exprs: list[Expr] = [Integer(0)] * len(g.operand)
        for j, q in zip(g.operand_batching, g.indices_batching, strict=True):
            self.exprs[j] = position[q]
        for k, j in enumerate(g.to_operand):
            if k == skip:
                continue
            element = g.indices_element(position, Integer(k))
            value = _known_index(indices, element)
            if value is None:
                provenance = IndexingMap.create(source, element, ranges)
                self.rts.append(RuntimeVar(g.fits(j), value_source(indices.instr), provenance,
                                           clamped=False))
                value = rt(len(self.rts) - 1)
            else:
                self.constraints.append((value, g.fits(j)))
            self.exprs[j] = value


@dataclass(frozen=True)
class Indices:
    """The instruction holding a scatter's indices (its indices operand, or the instruction
    outside the computation that fills it: :func:`scatter_indices`), with the values it
    holds whatever the run when they fold from constants and iotas
    (:func:`symidx.lowering.values.known_values`)."""

    instr: HloInstruction
    table: np.ndarray | None

    @classmethod
    def of(cls, instr: HloInstruction) -> Indices:
        return cls(instr, known_values(instr))


def _known_index(indices: Indices, element: Sequence[Expr]) -> Expr | None:
    """The index held at ``element`` when a map can hold it (not clamped): a known value
    read at a fixed element, an integer ``iota`` that does not wrap
    (:func:`symidx.lowering.values.held_at`)."""
    return held_at(indices.instr, element, indices.table)


#: Boxes the operand's untouched part may take before it is left as the whole operand.
_BOX_LIMIT = 64

Position = dict[int, int] | None  # a scatter position by indices dim; None: every one


def _position_count(g: ScatterGeometry) -> int:
    count = 1
    for q in g.indices_batch:
        count *= g.indices[q]
    return count


def _all_positions(g: ScatterGeometry) -> list[dict[int, int]]:
    return [dict(zip(g.indices_batch, p, strict=True))
            for p in itertools.product(*(range(g.indices[q]) for q in g.indices_batch))]


def _choices(g: ScatterGeometry, indices: Indices) -> list[Position]:
    """The scatter positions a map is built for: each one for a small known table of
    indices (every map then folds its values), else all at once (``[None]``)."""
    if indices.table is not None and splits(_position_count(g), SCATTER_SPLIT_LIMIT):
        return list(_all_positions(g))
    return [None]


def _positions(g: ScatterGeometry, ranges: list[tuple[int, int]], fixed: Position = None
               ) -> tuple[dict[int, Expr], list[Constraint]]:
    """A scatter position for an operand index: per dim of the indices (but the index
    vector's), the operand's batching dim it pairs with, or a new range variable; or the
    ``fixed`` position, with the constraints that the operand index's batching coordinates
    are its own."""
    position: dict[int, Expr] = {}
    constraints: list[Constraint] = []
    for q in g.indices_batch:
        if fixed is not None:
            position[q] = Integer(fixed[q])
            if q in g.indices_batching:
                j = g.operand_batching[g.indices_batching.index(q)]
                constraints.append((dim(j), Interval(fixed[q], fixed[q])))
        elif q in g.indices_batching:
            position[q] = dim(g.operand_batching[g.indices_batching.index(q)])
        else:
            position[q] = var_or_zero(g.indices[q], ranges)
    return position, constraints


def landing(g: ScatterGeometry, indices: Indices, results: str) -> list[IndexingMap]:
    """Operand (or output) index ``O`` -> the update elements landing on it
    (``results="updates"``), or ``O`` itself when some update lands on it
    (``results="self"``)."""
    return [_landing(g, indices, results, fixed) for fixed in _choices(g, indices)]


def _landing(g: ScatterGeometry, indices: Indices, results: str, fixed: Position
             ) -> IndexingMap:
    ranges: list[tuple[int, int]] = []
    position, constraints = _positions(g, ranges, fixed)
    starts = _Starts(g, indices, position, g.operand, ranges)
    constraints += starts.constraints
    offsets: dict[int, Expr] = {}
    for j in range(len(g.operand)):
        if j in g.operand_batching:
            continue
        offset = dim(j) - starts.exprs[j]
        constraints.append((offset, Interval(0, g.window_size(j) - 1)))
        offsets[j] = offset
    if results == "self":
        out: list[Expr] = [dim(j) for j in range(len(g.operand))]
    else:
        out = [Integer(0)] * len(g.updates)
        for u, q in zip(g.update_scatter, g.indices_batch, strict=True):
            out[u] = position[q]
        for u, j in zip(g.update_window_dims, g.window, strict=True):
            out[u] = offsets[j]
    return IndexingMap.create(g.operand, out, ranges, starts.rts, constraints)


def _reach(g: ScatterGeometry, j: int) -> Interval:
    """Where along operand dim ``j`` (not a batching dim) some update window can land: any
    index if the indices move the window along ``j``, else within the window from 0;
    nowhere for an empty window."""
    if g.window_size(j) == 0:
        return Interval(0, -1)
    return Interval(0, (g.operand[j] if j in g.to_operand else g.window_size(j)) - 1)


def _component_reach(g: ScatterGeometry, starts: _Starts, coords: Sequence[Expr],
                     k: int) -> list[Constraint]:
    """On an operand index ``coords``: some value of component ``k`` of the index vector
    lands the update window there, the other components as ``starts`` holds them."""
    moved = g.to_operand[k]
    constraints = list(starts.constraints)
    for j in range(len(g.operand)):
        if j in g.operand_batching:
            continue
        if j == moved:
            constraints.append((coords[j], _reach(g, j)))
        else:
            constraints.append((coords[j] - starts.exprs[j],
                                Interval(0, g.window_size(j) - 1)))
    return constraints


def indices_read(g: ScatterGeometry, indices: Indices) -> list[IndexingMap]:
    """Operand index -> the index elements whose value decides whether (or which) an update
    lands on it: component ``k`` of a scatter position's index vector where some value of
    it lands that position's window, the other components as they are (runtime variables,
    or folded values)."""
    maps = []
    for fixed in _choices(g, indices):
        for k in range(g.vector_length):
            ranges: list[tuple[int, int]] = []
            position, constraints = _positions(g, ranges, fixed)
            starts = _Starts(g, indices, position, g.operand, ranges, skip=k)
            coords = [dim(j) for j in range(len(g.operand))]
            maps.append(IndexingMap.create(
                g.operand, g.indices_element(position, Integer(k)), ranges, starts.rts,
                constraints + _component_reach(g, starts, coords, k)))
    return maps


def indices_reach(g: ScatterGeometry, indices: Indices) -> list[IndexingMap]:
    """Index element -> the operand (output) indices whose value depends on it (the inverse
    of :func:`indices_read`)."""
    maps = []
    for fixed in _choices(g, indices):
        for k in range(g.vector_length):
            domain: list[int | Interval] = [
                Interval(k, k) if q == g.index_vector_dim
                else Interval(fixed[q], fixed[q]) if fixed is not None
                else Interval(0, n - 1) for q, n in enumerate(g.indices)]
            position: dict[int, Expr] = {q: Integer(fixed[q]) if fixed is not None
                                         else dim(q) for q in g.indices_batch}
            starts = _Starts(g, indices, position, domain, [], skip=k)
            ranges: list[tuple[int, int]] = []
            coords: list[Expr] = []
            for j, n in enumerate(g.operand):
                if j in g.operand_batching:
                    coords.append(position[g.indices_batching[g.operand_batching.index(j)]])
                else:
                    ranges.append((0, n - 1))
                    coords.append(sym(len(ranges) - 1))
            maps.append(IndexingMap.create(domain, coords, ranges, starts.rts,
                                           _component_reach(g, starts, coords, k)))
    return maps


def update_target(g: ScatterGeometry, indices: Indices) -> list[IndexingMap]:
    """Update index ``U`` -> its target ``start + offset``, where the window fits."""
    maps = []
    for fixed in _choices(g, indices):
        domain: list[int | Interval] = list(g.updates)
        for u, q in zip(g.update_scatter, g.indices_batch, strict=True):
            if fixed is not None:
                domain[u] = Interval(fixed[q], fixed[q])
        position: dict[int, Expr] = {
            q: Integer(fixed[q]) if fixed is not None else dim(u)
            for u, q in zip(g.update_scatter, g.indices_batch, strict=True)}
        starts = _Starts(g, indices, position, domain, [])
        results: list[Expr] = list(starts.exprs)
        for u, j in zip(g.update_window_dims, g.window, strict=True):
            results[j] = results[j] + dim(u)
        maps.append(IndexingMap.create(domain, results, rts=starts.rts,
                                       constraints=starts.constraints))
    return maps


# --- the combiner, and what an update overwrites -----------------------------------------


def combiner_reads(instr: HloInstruction, n: int) -> list[frozenset[int]]:
    """Per result ``j`` of a scatter's combiner (``to_apply``, parameters: the N current
    values, then the N updates): the parameters it depends on, following the dataflow
    (:func:`symidx.hlo.facts.result_reads`). Every parameter when the combiner is not
    there to read."""
    found = result_reads(instr, "to_apply", n)
    return [frozenset(range(2 * n))] * n if found is None else found


def operands_after_updates(reads: Sequence[frozenset[int]], n: int) -> list[frozenset[int]]:
    """Per output ``j``: the operands its value can depend on where one or more updates
    landed (combiner applied in any order): those reached from ``j`` in one step or more,
    a step going from result ``m`` to each current value ``i < n`` it reads."""
    after = []
    for j in range(n):
        seen: set[int] = set()
        todo = [j]
        while todo:
            m = todo.pop()
            for i in reads[m]:
                if i < n and i not in seen:
                    seen.add(i)
                    todo.append(i)
        after.append(frozenset(seen))
    return after


Box = list[tuple[int, int]]


def overwritten_windows(g: ScatterGeometry, indices: Indices) -> list[Box] | None:
    """The update windows that land whatever the run: one box per scatter position whose
    window fits, when every index is known (:class:`Indices`); None otherwise."""
    if indices.table is None:
        return None
    boxes = []
    for position in _all_positions(g):
        start = [0] * len(g.operand)
        for j, q in zip(g.operand_batching, g.indices_batching, strict=True):
            start[j] = position[q]
        for k, j in enumerate(g.to_operand):
            element = tuple(k if q == g.index_vector_dim else position[q]
                            for q in range(len(g.indices)))
            start[j] = int(indices.table[element])
        if all(start[j] in g.fits(j) for j in range(len(g.operand))) \
                and all(g.window_size(j) > 0 for j in range(len(g.operand))):
            boxes.append([(start[j], start[j] + g.window_size(j) - 1)
                          for j in range(len(g.operand))])
    return boxes


def _subtract(boxes: list[Box], cut: Box) -> list[Box]:
    """``boxes`` (disjoint) minus ``cut``, as disjoint boxes."""
    result = []
    for box in boxes:
        if any(hi < c_lo or c_hi < lo for (lo, hi), (c_lo, c_hi) in zip(box, cut)):
            result.append(box)
            continue
        rest = list(box)
        for i, ((lo, hi), (c_lo, c_hi)) in enumerate(zip(box, cut)):
            if lo < c_lo:
                result.append(rest[:i] + [(lo, c_lo - 1)] + rest[i + 1:])
            if c_hi < hi:
                result.append(rest[:i] + [(c_hi + 1, hi)] + rest[i + 1:])
            rest[i] = (max(lo, c_lo), min(hi, c_hi))
    return result


def untouched(g: ScatterGeometry, indices: Indices) -> list[IndexingMap] | None:
    """Operand index -> itself where no update window lands whatever the run (the identity
    on the complement of :func:`overwritten_windows`, one map per box; known empty when
    the updates cover the operand); None when that is not known (or takes more than
    ``_BOX_LIMIT`` boxes)."""
    windows = overwritten_windows(g, indices)
    if windows is None:
        return None
    rest: list[Box] = [[(0, n - 1) for n in g.operand]]
    for window in windows:
        rest = _subtract(rest, window)
        if len(rest) > _BOX_LIMIT:
            return None
    same = [dim(j) for j in range(len(g.operand))]
    return [IndexingMap.create([Interval(lo, hi) for lo, hi in box], same) for box in rest] \
        or [identity(g.operand).as_known_empty()]


def operand_maps(instr: HloInstruction, g: ScatterGeometry, indices: Indices, output: int
                 ) -> list[list[IndexingMap]]:
    """Output ``output`` -> each operand (and back: the same relations). Its own operand
    where no update lands, and where updates land if the combiner reads that operand's
    current value (through other results too: :func:`operands_after_updates`); another
    operand where updates land if the combiner reads it so, nowhere otherwise. With
    indices not known, an update may always be skipped: the own operand is read
    everywhere."""
    after = operands_after_updates(combiner_reads(instr, g.count), g.count)[output]
    groups = []
    for k in range(g.count):
        if k == output:
            kept = None if k in after else untouched(g, indices)
            groups.append(kept if kept is not None else [identity(g.operand)])
        elif k in after:
            groups.append(landing(g, indices, "self"))
        else:
            groups.append([identity(g.operand).as_known_empty()])
    return groups


def scatter_indices(instr: HloInstruction, g: ScatterGeometry,
                    known: Mapping[int, HloInstruction] | None = None) -> Indices:
    """The indices of scatter ``instr``, read where ``known`` says their values are held
    (the instruction outside the computation that fills the indices parameter, holding
    values known before the run: a sweep hands it in, see :func:`symidx.ops.rule`), else
    off the indices operand itself. The rule then knows where the updates land, as it
    does for indices computed in the same computation (XLA fuses a scatter and leaves a
    constant table of indices outside), and its runtime variables name that holder."""
    held = None if known is None else known.get(g.count)
    return Indices.of(instr.operands[g.count] if held is None else held)


@rule(OUTPUT_TO_INPUT, "scatter", known_operands=True)
def _scatter_out(instr: HloInstruction, output_index: int,
                 known: Mapping[int, HloInstruction] | None = None
                 ) -> list[list[IndexingMap]]:
    g = scatter_geometry(instr)
    indices = scatter_indices(instr, g, known)
    updates = landing(g, indices, "updates")
    return operand_maps(instr, g, indices, output_index) + [indices_read(g, indices)] \
        + [updates for _ in range(g.count)]


@rule(INPUT_TO_OUTPUT, "scatter", known_operands=True)
def _scatter_in(instr: HloInstruction, operand_index: int,
                known: Mapping[int, HloInstruction] | None = None
                ) -> list[list[IndexingMap]]:
    g = scatter_geometry(instr)
    indices = scatter_indices(instr, g, known)
    if operand_index < g.count:
        return [operand_maps(instr, g, indices, j)[operand_index] for j in range(g.count)]
    if operand_index == g.count:
        return [indices_reach(g, indices) for _ in range(g.count)]
    return [update_target(g, indices) for _ in range(g.count)]


# --- select-and-scatter -------------------------------------------------------------------


def _select_and_scatter(instr: HloInstruction) -> tuple[Dims, Dims, tuple[WindowDim, ...]]:
    require(len(instr.operands) == 3, instr, "expected operand, source, init_value")
    operand, source = operand_dims(instr, 0), operand_dims(instr, 1)
    window: tuple[WindowDim, ...] = attribute(instr.window, instr, "window")
    require(output_dims(instr) == operand and not operand_dims(instr, 2)
            and len(window) == len(operand) == len(source), instr,
            "expected an output of the operand's shape, a scalar init and a window per dim")
    return operand, source, window


def shared_window_map(operand: Sequence[int], source: Sequence[int],
                      window: Sequence[WindowDim]) -> IndexingMap:
    """Operand index -> the operand elements sharing a window with it (a symmetric
    relation, so either direction)."""
    return compose(reduce_window_output_map(source, operand, window),
                   reduce_window_operand_map(source, operand, window))


@rule(OUTPUT_TO_INPUT, "select-and-scatter", fold_point_dims=True)
def _select_and_scatter_out(instr: HloInstruction, output_index: int
                            ) -> list[list[IndexingMap]]:
    operand, source, window = _select_and_scatter(instr)
    return [[shared_window_map(operand, source, window)],
            [reduce_window_output_map(source, operand, window)], [to_scalar(operand)]]


@rule(INPUT_TO_OUTPUT, "select-and-scatter", fold_point_dims=True)
def _select_and_scatter_in(instr: HloInstruction, operand_index: int
                           ) -> list[list[IndexingMap]]:
    operand, source, window = _select_and_scatter(instr)
    if operand_index == 0:
        return [[shared_window_map(operand, source, window)]]
    if operand_index == 1:
        return [[reduce_window_operand_map(source, operand, window)]]
    return [[from_scalar(operand)]]

