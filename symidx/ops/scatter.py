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
that fit (``[0, operand_dim - window_size]``), with provenance ``hlo`` (the indices'
instruction) and a map to the element holding it. They are *not* clamped: a run-time value
outside the interval means the window is skipped and nothing is read. An index held by a
constant at a fixed element is folded into the map (a window that does not fit makes the
map empty), one held by an ``iota`` too, with the fit as a constraint. Where only one start
fits (the window spans the operand along that dim), the simplifier fixes the variable to
that start: the map then no longer says that another run-time value skips the window, so
for such a value it over-approximates; as the union over every index value (its meaning)
it stays exact.

Output ``j`` at index ``O`` (output-to-input):

* operand ``j`` at ``O``; operand ``k != j`` at ``O`` when some update lands on ``O`` (the
  combiner reads every operand);
* every update ``k`` at each ``U`` landing on ``O``: ``G`` ranges over the scatter positions
  (range variables; the batching dims are ``O``'s), the window offset is ``O - start``
  within the window;
* the indices: the whole index vector of every scatter position that can land on ``O``
  (whether an update lands there depends on each of them): every ``G`` with ``O``'s batch
  coordinates, for ``O`` in the part of the operand a window can reach.

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

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sympy import Integer

from symidx.expr import Expr, dim, rt
from symidx.hlo import HloInstruction, Shape, WindowDim
from symidx.hlo.facts import (
    Dims,
    constant_value,
    hlo_reference,
    num_outputs,
    operand_dims,
    output_dims,
)
from symidx.indexing_map import IndexingMap, RuntimeVar
from symidx.interval import Interval
from symidx.ops._common import attribute, require, var_or_zero
from symidx.ops.basic import from_scalar, identity, to_scalar
from symidx.ops.reduction import reduce_window_operand_map, reduce_window_output_map
from symidx.ops.registry import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, rule
from symidx.simplify import compose

Constraint = tuple[Expr, Interval]
_INTEGER_TYPE = re.compile(r"[su][0-9]+")


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
    dims, 0 elsewhere; with the constraints that the window fits."""

    def __init__(self, g: ScatterGeometry, indices: HloInstruction,
                 position: dict[int, Expr], source: Sequence[int],
                 ranges: Sequence[tuple[int, int]]) -> None:
        self.rts: list[RuntimeVar] = []
        self.constraints: list[Constraint] = []
        self.exprs: list[Expr] = [Integer(0)] * len(g.operand)
        for j, q in zip(g.operand_batching, g.indices_batching, strict=True):
            self.exprs[j] = position[q]
        for k, j in enumerate(g.to_operand):
            element = g.indices_element(position, Integer(k))
            value = _known_index(indices, element)
            if value is None:
                provenance = IndexingMap.create(source, element, ranges)
                self.rts.append(RuntimeVar(g.fits(j), hlo_reference(indices), provenance,
                                           clamped=False))
                value = rt(len(self.rts) - 1)
            else:
                self.constraints.append((value, g.fits(j)))
            self.exprs[j] = value


def _known_index(instr: HloInstruction, element: Sequence[Expr]) -> Expr | None:
    """The index held at ``element`` when a map can hold it: an integer constant read at a
    fixed element (its value, not clamped), an integer ``iota`` that does not wrap (the
    element's index along ``iota_dimension``). None otherwise."""
    if instr.opcode == "constant" and all(e.is_Integer for e in element):
        value = constant_value(instr, [int(e) for e in element])
        return None if value is None else Integer(value)
    shape = instr.shape
    if instr.opcode == "iota" and isinstance(shape, Shape) \
            and _INTEGER_TYPE.fullmatch(shape.element_type):
        axis = instr.attr_int("iota_dimension", 0)
        largest = (1 << (shape.bit_width - shape.element_type.startswith("s"))) - 1
        if axis is not None and 0 <= axis < len(element) and shape.dims[axis] - 1 <= largest:
            return element[axis]
    return None


def _positions(g: ScatterGeometry, ranges: list[tuple[int, int]]) -> dict[int, Expr]:
    """A scatter position for an operand index: per dim of the indices (but the index
    vector's), the operand's batching dim it pairs with, or a new range variable."""
    position: dict[int, Expr] = {}
    for q in g.indices_batch:
        if q in g.indices_batching:
            position[q] = dim(g.operand_batching[g.indices_batching.index(q)])
        else:
            position[q] = var_or_zero(g.indices[q], ranges)
    return position


def landing(g: ScatterGeometry, indices: HloInstruction, results: str) -> IndexingMap:
    """Operand (or output) index ``O`` -> the update elements landing on it
    (``results="updates"``), or ``O`` itself when some update lands on it
    (``results="self"``)."""
    ranges: list[tuple[int, int]] = []
    position = _positions(g, ranges)
    starts = _Starts(g, indices, position, g.operand, ranges)
    constraints = list(starts.constraints)
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


def _reachable(g: ScatterGeometry) -> list[Constraint]:
    """On an operand index ``O``: some update window can land on ``O``."""
    return [(dim(j), _reach(g, j)) for j in range(len(g.operand))
            if j not in g.operand_batching]


def indices_read(g: ScatterGeometry) -> IndexingMap:
    """Operand index -> the index vectors that can land an update on it."""
    ranges: list[tuple[int, int]] = []
    position = _positions(g, ranges)
    component = var_or_zero(g.vector_length, ranges) \
        if g.index_vector_dim < len(g.indices) else Integer(0)
    return IndexingMap.create(g.operand, g.indices_element(position, component), ranges,
                              constraints=_reachable(g))


def indices_reach(g: ScatterGeometry) -> IndexingMap:
    """Index element -> the operand (output) indices whose value depends on it."""
    ranges: list[tuple[int, int]] = []
    results: list[Expr] = []
    for j in range(len(g.operand)):
        if j in g.operand_batching:
            results.append(dim(g.indices_batching[g.operand_batching.index(j)]))
        else:
            results.append(var_or_zero(_reach(g, j).hi + 1, ranges))
    return IndexingMap.create(g.indices, results, ranges)


def update_target(g: ScatterGeometry, indices: HloInstruction) -> IndexingMap:
    """Update index ``U`` -> its target ``start + offset``, where the window fits."""
    position = {q: dim(u) for u, q in zip(g.update_scatter, g.indices_batch, strict=True)}
    starts = _Starts(g, indices, position, g.updates, [])
    results: list[Expr] = list(starts.exprs)
    for u, j in zip(g.update_window_dims, g.window, strict=True):
        results[j] = results[j] + dim(u)
    return IndexingMap.create(g.updates, results, rts=starts.rts,
                              constraints=starts.constraints)


@rule(OUTPUT_TO_INPUT, "scatter")
def _scatter_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    g = scatter_geometry(instr)
    indices = instr.operands[g.count]
    combined = landing(g, indices, "self")
    operands = [[identity(g.operand)] if k == output_index else [combined]
                for k in range(g.count)]
    updates = landing(g, indices, "updates")
    return operands + [[indices_read(g)]] + [[updates] for _ in range(g.count)]


@rule(INPUT_TO_OUTPUT, "scatter")
def _scatter_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    g = scatter_geometry(instr)
    indices = instr.operands[g.count]
    if operand_index < g.count:
        combined = landing(g, indices, "self")
        return [[identity(g.operand)] if j == operand_index else [combined]
                for j in range(g.count)]
    if operand_index == g.count:
        return [[indices_reach(g)] for _ in range(g.count)]
    return [[update_target(g, indices)] for _ in range(g.count)]


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

