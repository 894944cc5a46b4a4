"""Ops that read a window of their operand: slice, pad, concatenate, dynamic-slice,
dynamic-update-slice, gather.

Static windows are affine with a restricted domain: slice's input-to-output map is
``(d - start) floordiv stride`` on ``[start, last]`` with ``(d - start) mod stride = 0``; pad's
output-to-input map is its mirror image, and negative padding simply cuts the domain.

Dynamic offsets are runtime variables. HLO clamps a start index so the whole slice stays in
bounds, so each variable's feasible interval is ``[0, operand_dim - slice_size]``; its
provenance is the instruction holding the value (``parameter(2)``, or the instruction's
name) with a map from this map's dimensions to the element holding it (``(d0, d1) -> ()``
for a scalar offset, ``(d0, d1, d2, d3) -> (d0, 1)`` for a gather index). An offset that is
an integer constant is folded into the map, clamped as HLO clamps it.

Where XLA's maps are loose, these are exact, as unions of maps: the pad value is read by
the output elements that hold padding (low and high edges, interior gaps: one map per
region, none for a pure crop); dynamic-update-slice's operand is read outside the updated
window only (one map per side of the window along each dimension it does not span, with the
start a runtime variable when it is not known; none when the update covers the operand).
The update is read at ``d - rt`` where that lies in the update
(``d0 - rt0 in [0, size - 1]``; XLA's map points outside it for some values of ``rt``).
An offset is read only where some value of it changes the output element (XLA:
everywhere): nowhere along a dimension the slice or update spans (the clamped
start is always 0); for dynamic-update-slice only where some value of it puts the element
inside the update window (anywhere along its own dimension, within the window along the
others: ``d1 - rt0 in [0, size - 1]``, ``rt0`` the other offset). Likewise a gather reads
only the components of its index vector along operand dims the slice does not span.

Gather is handled in full generality: any ``offset_dims``, ``collapsed_slice_dims``,
``start_index_map`` order, ``index_vector_dim`` (including the implicit trailing one) and
``operand_batching_dims``/``start_indices_batching_dims``. In the input-to-output direction
the runtime variables' provenance maps take the map's batch range variables as their own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sympy import Integer

from symidx.core.expr import Expr, FloorDiv, Mod, dim, rt, sym
from symidx.core.indexing_map import IndexingMap, RuntimeVar
from symidx.core.interval import Interval
from symidx.hlo import HloInstruction
from symidx.hlo.facts import Dims, operand_dims, output_dims
from symidx.lowering.values import value_source
from symidx.ops._common import attribute, known_start, require, var_or_zero
from symidx.ops.basic import from_scalar, identity, to_scalar
from symidx.ops.registry import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, rule

# --- slice ----------------------------------------------------------------------------------


def slice_operand_map(out: Sequence[int], starts: Sequence[int], strides: Sequence[int]
                      ) -> IndexingMap:
    """Output index -> operand index: ``d * stride + start``."""
    return IndexingMap.create(out, [dim(i) * s + b for i, (b, s) in
                                    enumerate(zip(starts, strides, strict=True))])


def slice_output_map(operand: Sequence[int], out: Sequence[int], starts: Sequence[int],
                     strides: Sequence[int]) -> IndexingMap:
    """Operand index -> output index, on the operand elements the slice keeps."""
    domain, results, constraints = [], [], []
    for i, (n, b, s) in enumerate(zip(out, starts, strides, strict=True)):
        domain.append(Interval(b, b + (n - 1) * s) if n > 0 else Interval(0, -1))
        offset = dim(i) - b
        results.append(FloorDiv(offset, s) if s > 1 else offset)
        if s > 1:
            constraints.append((Mod(offset, s), Interval(0, 0)))
    del operand
    return IndexingMap.create(domain, results, constraints=constraints)


def _slice_attrs(instr: HloInstruction) -> tuple[list[int], list[int]]:
    dims = attribute(instr.slice, instr, "slice")
    operand, out = operand_dims(instr, 0), output_dims(instr)
    require(len(dims) == len(operand) == len(out)
            and all(d.stride > 0 and len(range(d.start, d.limit, d.stride)) == n
                    for d, n in zip(dims, out, strict=True)),
            instr, "slice= does not fit the operand and output shapes")
    return [d.start for d in dims], [d.stride for d in dims]


@rule(OUTPUT_TO_INPUT, "slice")
def _slice_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    starts, strides = _slice_attrs(instr)
    return [[slice_operand_map(output_dims(instr), starts, strides)]]


@rule(INPUT_TO_OUTPUT, "slice")
def _slice_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    starts, strides = _slice_attrs(instr)
    return [[slice_output_map(operand_dims(instr, 0), output_dims(instr), starts, strides)]]


# --- pad --------------------------------------------------------------------------------------


def pad_operand_map(out: Sequence[int], operand: Sequence[int],
                    padding: Sequence[tuple[int, int, int]]) -> IndexingMap:
    """Output index -> operand index: ``(d - low) floordiv (interior + 1)`` on the output
    positions that hold operand elements (``(d - low) mod (interior + 1) = 0``)."""
    domain, results, constraints = [], [], []
    for i, (m, n, (low, _, interior)) in enumerate(zip(out, operand, padding, strict=True)):
        step = interior + 1
        last = low + (n - 1) * step
        domain.append(Interval(max(0, low), min(m - 1, last)) if n > 0 else Interval(0, -1))
        offset = dim(i) - low
        results.append(FloorDiv(offset, step) if step > 1 else offset)
        if step > 1:
            constraints.append((Mod(offset, step), Interval(0, 0)))
    return IndexingMap.create(domain, results, constraints=constraints)


def pad_output_map(out: Sequence[int], operand: Sequence[int],
                   padding: Sequence[tuple[int, int, int]]) -> IndexingMap:
    """Operand index -> output index: ``d * (interior + 1) + low``, on the operand elements
    that negative padding does not cut off."""
    domain, results = [], []
    for i, (m, n, (low, _, interior)) in enumerate(zip(out, operand, padding, strict=True)):
        step = interior + 1
        first = max(0, -(low // step))  # smallest d with d * step + low >= 0
        last = min(n - 1, (m - 1 - low) // step)
        domain.append(Interval(first, last))
        results.append(dim(i) * step + low)
    return IndexingMap.create(domain, results)


#: Output positions along one dimension: an interval, and optionally a constraint saying
#: which of its positions (``(d - low) mod step in [1, step - 1]``: not on the grid of copies).
Positions = tuple[Interval, "tuple[int, int] | None"]


def padding_positions(m: int, n: int, low: int, interior: int) -> list[Positions]:
    """The positions along one output dimension of size ``m`` that hold the pad value
    (``n >= 1`` operand elements, ``low`` edge padding, ``interior`` padding between
    elements): the low edge, the high edge and the interior gaps, each where it is not
    empty. ``(low, step)`` in a region's second field means the positions ``d`` of its
    interval with ``(d - low) mod step != 0``. Negative edge padding cuts operand elements
    off: what is left of the grid of copies decides."""
    step = interior + 1
    last = low + (n - 1) * step  # the output position of the last operand element
    found: list[Positions] = []
    if low > 0:
        found.append((Interval(0, min(low, m) - 1), None))
    if last + 1 <= m - 1:
        found.append((Interval(max(last + 1, 0), m - 1), None))
    gaps = Interval(max(low + 1, 0), min(last - 1, m - 1))
    one_period = range(gaps.lo, min(gaps.hi, gaps.lo + step) + 1)
    if interior > 0 and any((d - low) % step for d in one_period):  # a gap is left
        found.append((gaps, (low, step)))
    return found


def _gap_constraint(var: Expr, grid: tuple[int, int] | None) -> list[tuple[Expr, Interval]]:
    if grid is None:
        return []
    low, step = grid
    return [(Mod(var - low, step), Interval(1, step - 1))]


def _pad_regions(out: Sequence[int], operand: Sequence[int],
                 padding: Sequence[tuple[int, int, int]]) -> list[tuple[int, Positions]]:
    """(output dimension, positions along it) for every region of padding: an output
    element holds the pad value iff it lies in the positions of some region along their
    dimension. With an empty operand every output element does (one region); a scalar or
    empty output has none."""
    if 0 in out:
        return []
    if 0 in operand:
        return [(0, (Interval(0, out[0] - 1), None))]
    return [(i, where) for i, (m, n, (low, _, interior)) in
            enumerate(zip(out, operand, padding, strict=True))
            for where in padding_positions(m, n, low, interior)]


def pad_value_maps(out: Sequence[int], operand: Sequence[int],
                   padding: Sequence[tuple[int, int, int]]) -> list[IndexingMap]:
    """Output index -> the pad value ``()``: one map per region of padding (see
    :func:`padding_positions`; the maps overlap where regions of two dimensions meet). A
    pure crop reads the pad value nowhere: one known-empty map."""
    maps = []
    for i, (where, grid) in _pad_regions(out, operand, padding):
        domain = [where if j == i else Interval(0, m - 1) for j, m in enumerate(out)]
        maps.append(IndexingMap.create(domain, [], constraints=_gap_constraint(dim(i), grid)))
    return maps or [to_scalar(out).as_known_empty()]


def pad_value_output_maps(out: Sequence[int], operand: Sequence[int],
                          padding: Sequence[tuple[int, int, int]]) -> list[IndexingMap]:
    """The pad value -> the output elements holding it: ``()[s0, ...] -> (s0, ...)`` per
    region of padding, the mirror image of :func:`pad_value_maps`."""
    maps = []
    for i, (where, grid) in _pad_regions(out, operand, padding):
        ranges = [where if j == i else Interval(0, m - 1) for j, m in enumerate(out)]
        maps.append(IndexingMap.create([], [sym(j) for j in range(len(out))], ranges,
                                       constraints=_gap_constraint(sym(i), grid)))
    return maps or [from_scalar(out).as_known_empty()]


def _padding(instr: HloInstruction) -> list[tuple[int, int, int]]:
    padding = attribute(instr.padding, instr, "padding")
    operand, out = operand_dims(instr, 0), output_dims(instr)
    require(len(padding) == len(operand) == len(out)
            and all(p.interior >= 0 and n == p.low + p.high + max(0, (m - 1) * (p.interior + 1)
                                                                   + 1)
                    for p, m, n in zip(padding, operand, out, strict=True)),
            instr, "padding= does not fit the operand and output shapes")
    return [(p.low, p.high, p.interior) for p in padding]


@rule(OUTPUT_TO_INPUT, "pad")
def _pad_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    out, operand, padding = output_dims(instr), operand_dims(instr, 0), _padding(instr)
    return [[pad_operand_map(out, operand, padding)], pad_value_maps(out, operand, padding)]


@rule(INPUT_TO_OUTPUT, "pad")
def _pad_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    out, operand, padding = output_dims(instr), operand_dims(instr, 0), _padding(instr)
    if operand_index == 1:
        return [pad_value_output_maps(out, operand, padding)]
    return [[pad_output_map(out, operand, padding)]]


# --- concatenate --------------------------------------------------------------------------


def concatenate_operand_map(out: Sequence[int], axis: int, offset: int, size: int
                            ) -> IndexingMap:
    """Output index -> index of the operand placed at ``offset`` along ``axis``."""
    domain = [Interval(offset, offset + size - 1) if i == axis else Interval(0, n - 1)
              for i, n in enumerate(out)]
    results = [dim(i) - offset if i == axis else dim(i) for i in range(len(out))]
    return IndexingMap.create(domain, results)


def concatenate_output_map(operand: Sequence[int], axis: int, offset: int) -> IndexingMap:
    """Operand index -> output index."""
    return IndexingMap.create(operand, [dim(i) + offset if i == axis else dim(i)
                                        for i in range(len(operand))])


def _concat_offsets(instr: HloInstruction) -> tuple[int, list[int], list[int]]:
    dims = attribute(instr.dimensions, instr, "dimensions")
    require(len(dims) == 1, instr, "dimensions= must name one dimension")
    axis = dims[0]
    sizes = [operand_dims(instr, k)[axis] for k in range(len(instr.operands))]
    offsets = [sum(sizes[:k]) for k in range(len(sizes))]
    return axis, offsets, sizes


@rule(OUTPUT_TO_INPUT, "concatenate")
def _concat_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    axis, offsets, sizes = _concat_offsets(instr)
    out = output_dims(instr)
    return [[concatenate_operand_map(out, axis, o, n)] for o, n in zip(offsets, sizes, strict=True)]


@rule(INPUT_TO_OUTPUT, "concatenate")
def _concat_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    axis, offsets, _ = _concat_offsets(instr)
    return [[concatenate_output_map(operand_dims(instr, operand_index), axis,
                                    offsets[operand_index])]]


# --- runtime offsets ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OffsetSource:
    """Where the start index of one dimension comes from: an element of an instruction."""

    instr: HloInstruction
    element: tuple[int, ...] = ()


def check_fits(instr: HloInstruction, small: Sequence[int], big: Sequence[int]) -> None:
    """A slice of shape ``small`` must fit in ``big``."""
    require(len(small) == len(big) and all(0 <= m <= n for m, n in zip(small, big, strict=True)),
            instr, f"shape {list(small)} does not fit in {list(big)}")


def offset_sources(instr: HloInstruction, first: int, rank: int) -> list[OffsetSource]:
    """The offset of each dimension: one scalar operand per dimension from operand ``first``
    on, or (older HLO) the elements of one rank-1 operand."""
    rest = instr.operands[first:]
    if len(rest) == 1 and len(operand_dims(instr, first)) == 1:
        require(operand_dims(instr, first) == (rank,), instr, "the offsets do not fit")
        return [OffsetSource(rest[0], (i,)) for i in range(rank)]
    require(len(rest) == rank and all(not operand_dims(instr, first + i) for i in range(rank)),
            instr, f"expected {rank} scalar offsets")
    return [OffsetSource(op) for op in rest]


def offset_term(source: OffsetSource, feasible: Interval, dims: Sequence[int | Interval],
                rts: list[RuntimeVar]) -> Expr:
    """The start index as an expression: a constant offset's clamped value (or an iota's
    index, see :func:`known_start`), otherwise a new runtime variable (appended to ``rts``)
    with provenance ``source``."""
    element = [Integer(e) for e in source.element]
    known = known_start(source.instr, element, feasible, {})
    if known is not None:
        return known
    provenance = IndexingMap.create(dims, element)
    rts.append(RuntimeVar(feasible, value_source(source.instr), provenance))
    return rt(len(rts) - 1)


Constraint = tuple[Expr, Interval]
#: Offset ``k``'s constraints on the coordinates (an expression per dim) where its value
#: matters, given the map's dims (for the provenance of runtime variables, appended to the
#: list); None where it never matters (its clamped value is fixed).
Where = Callable[[int, Sequence[Expr], Sequence[int | Interval], list[RuntimeVar]],
                 list[Constraint] | None]


def _offsets_read(out: Sequence[int], sources: list[OffsetSource], where: Where
                  ) -> list[list[IndexingMap]]:
    """Output index -> the offsets it depends on, a group per offset operand (one for a
    vector of offsets, with a map per component that matters)."""
    coords = [dim(i) for i in range(len(out))]
    groups: list[list[IndexingMap]] = []
    for k, src in enumerate(sources):
        rts: list[RuntimeVar] = []
        constraints = where(k, coords, out, rts)
        m = IndexingMap.create(out, [Integer(e) for e in src.element], rts=rts,
                               constraints=constraints or [])
        groups.append([m.as_known_empty() if constraints is None else m])
    if sources and sources[0].element:  # one vector of offsets
        return [[m for [m] in groups if not m.is_known_empty] or groups[0]]
    return groups


def _offsets_written(out: Sequence[int], sources: list[OffsetSource], where: Where,
                     position: int) -> list[list[IndexingMap]]:
    """Offset element -> the output indices that depend on it (the inverse of
    :func:`_offsets_read`), for the ``position``-th offset operand."""
    coords = [sym(i) for i in range(len(out))]
    ranges = [(0, n - 1) for n in out]
    maps = []
    for k, src in enumerate(sources):
        if not src.element and k != position:
            continue
        dims: list[int | Interval] = [Interval(e, e) for e in src.element]
        rts: list[RuntimeVar] = []
        constraints = where(k, coords, dims, rts)
        if constraints is not None:
            maps.append(IndexingMap.create(dims, coords, ranges, rts, constraints))
    if not maps:
        return [[from_scalar(out).as_known_empty() if not sources[0].element else
                 IndexingMap.create([len(sources)], coords, ranges).as_known_empty()]]
    return [maps]


# --- dynamic-slice ------------------------------------------------------------------------


def _moved(source: Sequence[int], part: Sequence[int], whole: Sequence[int],
           sources: list[OffsetSource], into_whole: bool, inside: bool = False
           ) -> IndexingMap:
    """An index of ``source`` (the slice ``part`` or the ``whole`` array) moved by the
    slice's offsets (each in ``[0, whole - part]``): ``d + offset`` into the whole array,
    ``d - offset`` into the slice; with ``inside``, only where that lies in the slice."""
    rts: list[RuntimeVar] = []
    results, constraints = [], []
    for i, (m, n, src) in enumerate(zip(part, whole, sources, strict=True)):
        offset = offset_term(src, Interval(0, n - m), source, rts)
        e = dim(i) + offset if into_whole else dim(i) - offset
        results.append(e)
        if inside:
            constraints.append((e, Interval(0, m - 1)))
    return IndexingMap.create(source, results, rts=rts, constraints=constraints)


def dynamic_slice_operand_map(out: Sequence[int], operand: Sequence[int],
                              sources: list[OffsetSource]) -> IndexingMap:
    """Output index -> operand index: ``d + offset``."""
    return _moved(out, out, operand, sources, into_whole=True)


def dynamic_slice_output_map(out: Sequence[int], operand: Sequence[int],
                             sources: list[OffsetSource]) -> IndexingMap:
    """Operand index -> output index: ``d - offset``, where that lies in the slice."""
    return _moved(operand, out, operand, sources, into_whole=False, inside=True)


def dynamic_slice_offsets(out: Sequence[int], operand: Sequence[int]) -> Where:
    """Where a dynamic-slice's offset ``k`` matters: everywhere, unless the slice spans the
    operand along dim ``k`` (the clamped start is then always 0)."""
    def where(k: int, coords: Sequence[Expr], dims: Sequence[int | Interval],
              rts: list[RuntimeVar]) -> list[Constraint] | None:
        return [] if out[k] < operand[k] else None
    return where


def _slice_geometry(instr: HloInstruction, update: bool
                    ) -> tuple[Dims, Dims, list[OffsetSource]]:
    """A dynamic-slice's output and operand dims, or a dynamic-update-slice's (``update``)
    output and update dims, the slice checked to fit in the whole array; and where the
    offsets (the operands after the arrays) come from."""
    out = output_dims(instr)
    if update:
        part, whole, first = operand_dims(instr, 1), out, 2
    else:
        part, whole, first = out, operand_dims(instr, 0), 1
    check_fits(instr, part, whole)
    return out, part if update else whole, offset_sources(instr, first, len(whole))


@rule(OUTPUT_TO_INPUT, "dynamic-slice")
def _ds_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    out, operand, sources = _slice_geometry(instr, update=False)
    return ([[dynamic_slice_operand_map(out, operand, sources)]]
            + _offsets_read(out, sources, dynamic_slice_offsets(out, operand)))


@rule(INPUT_TO_OUTPUT, "dynamic-slice")
def _ds_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    out, operand, sources = _slice_geometry(instr, update=False)
    if operand_index > 0:
        return _offsets_written(out, sources, dynamic_slice_offsets(out, operand),
                                operand_index - 1)
    return [[dynamic_slice_output_map(out, operand, sources)]]


# --- dynamic-update-slice -----------------------------------------------------------------


def dus_update_map(out: Sequence[int], update: Sequence[int], sources: list[OffsetSource]
                   ) -> IndexingMap:
    """Output index -> update index: ``d - offset``, where that lies in the update (the
    output elements the update overwrites, for each value of the offsets)."""
    return _moved(out, update, out, sources, into_whole=False, inside=True)


def dus_update_output_map(out: Sequence[int], update: Sequence[int],
                          sources: list[OffsetSource]) -> IndexingMap:
    """Update index -> output index: ``d + offset``."""
    return _moved(update, update, out, sources, into_whole=True)


def dus_operand_maps(out: Sequence[int], update: Sequence[int], sources: list[OffsetSource]
                     ) -> list[IndexingMap]:
    """Output index -> operand index (and back: the same maps): the identity on the elements
    the update does not overwrite. Those lie before or after the updated window along some
    dimension ``i``: one map per side, ``d_i`` in ``[0, start - 1]`` or
    ``[start + size, n - 1]`` for a known start, ``d_i - rt in [size - n, -1]`` or
    ``[size, n - 1]`` for a runtime one (exact for every value of ``rt``). A dimension the
    update spans has no such side; an update covering the whole operand leaves nothing
    read (one known-empty map), an empty update leaves everything."""
    if 0 in update:
        return [identity(out)]
    maps = []
    for i, (n, u, src) in enumerate(zip(out, update, sources, strict=True)):
        if u == n:
            continue
        rts: list[RuntimeVar] = []
        start = offset_term(src, Interval(0, n - u), out, rts)
        if start.is_Integer:
            c = int(start)
            sides = [Interval(0, c - 1), Interval(c + u, n - 1)]
            maps += [IndexingMap.create([side if j == i else Interval(0, m - 1)
                                         for j, m in enumerate(out)],
                                        [dim(j) for j in range(len(out))])
                     for side in sides if not side.is_empty]
        else:
            maps += [IndexingMap.create(out, [dim(j) for j in range(len(out))], rts=rts,
                                        constraints=[(dim(i) - start, side)])
                     for side in (Interval(u - n, -1), Interval(u, n - 1))]
    return maps or [identity(out).as_known_empty()]


def dus_offsets(out: Sequence[int], update: Sequence[int], sources: list[OffsetSource]
                ) -> Where:
    """Where a dynamic-update-slice's offset ``k`` matters: at the output indices some value
    of it puts inside the update window: along dim ``k`` anywhere, along each other dim ``j``
    the update does not span ``coords[j] - start_j in [0, size_j - 1]`` (a runtime
    ``start_j``: anywhere as the union over its values). Nowhere when the update spans the
    operand along dim ``k`` (its clamped value is always 0) or is empty."""
    def where(k: int, coords: Sequence[Expr], dims: Sequence[int | Interval],
              rts: list[RuntimeVar]) -> list[Constraint] | None:
        if 0 in update or update[k] == out[k]:
            return None
        constraints = []
        for j, (n, u, src) in enumerate(zip(out, update, sources, strict=True)):
            if j != k and u < n:
                start = offset_term(src, Interval(0, n - u), dims, rts)
                constraints.append((coords[j] - start, Interval(0, u - 1)))
        return constraints
    return where


@rule(OUTPUT_TO_INPUT, "dynamic-update-slice")
def _dus_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    out, update, sources = _slice_geometry(instr, update=True)
    return ([dus_operand_maps(out, update, sources), [dus_update_map(out, update, sources)]]
            + _offsets_read(out, sources, dus_offsets(out, update, sources)))


@rule(INPUT_TO_OUTPUT, "dynamic-update-slice")
def _dus_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    out, update, sources = _slice_geometry(instr, update=True)
    if operand_index > 1:
        return _offsets_written(out, sources, dus_offsets(out, update, sources),
                                operand_index - 2)
    if operand_index == 0:
        return [dus_operand_maps(out, update, sources)]
    return [[dus_update_output_map(out, update, sources)]]


# --- gather ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class GatherGeometry:
    """A gather's shapes and dimension numbers, with the correspondences derived from them.

    Output dims not in ``offset_dims`` are batch dims; the ``t``-th of them
    (``batch_out[t]``) walks the ``t``-th dim of the indices other than the index vector dim
    (``batch_indices[t]``). Operand dims neither collapsed nor batching are window dims; the
    ``k``-th of them (``window[k]``) is offset by output dim ``offset_dims[k]``.
    """

    operand: tuple[int, ...]
    indices: tuple[int, ...]
    out: tuple[int, ...]
    offset_dims: tuple[int, ...]
    collapsed: tuple[int, ...]
    start_index_map: tuple[int, ...]
    index_vector_dim: int
    operand_batching: tuple[int, ...]
    indices_batching: tuple[int, ...]
    slice_sizes: tuple[int, ...]

    @property
    def batch_out(self) -> list[int]:
        return [o for o in range(len(self.out)) if o not in self.offset_dims]

    @property
    def batch_indices(self) -> list[int]:
        return [q for q in range(len(self.indices)) if q != self.index_vector_dim]

    @property
    def window(self) -> list[int]:
        return [j for j in range(len(self.operand))
                if j not in self.collapsed and j not in self.operand_batching]

    def out_dim_of_indices_dim(self, q: int) -> int:
        return self.batch_out[self.batch_indices.index(q)]

    def indices_element(self, batch: dict[int, Expr], component: Expr) -> list[Expr]:
        """The index into the indices tensor: ``batch`` gives the expression of each output
        batch dim; ``component`` the position along the index vector dim."""
        element = []
        for q in range(len(self.indices)):
            element.append(component if q == self.index_vector_dim
                           else batch[self.out_dim_of_indices_dim(q)])
        return element

    def feasible(self, j: int) -> Interval:
        """The start indices HLO's clamping allows along operand dim ``j``."""
        return Interval(0, self.operand[j] - self.slice_sizes[j])


def gather_geometry(instr: HloInstruction) -> GatherGeometry:
    gdn = attribute(instr.gather_dimension_numbers, instr, "gather dimension numbers")
    sizes = attribute(instr.slice_sizes, instr, "slice_sizes")
    g = GatherGeometry(operand_dims(instr, 0), operand_dims(instr, 1), output_dims(instr),
                       gdn.offset_dims, gdn.collapsed_slice_dims,
                       gdn.start_index_map, gdn.index_vector_dim,
                       gdn.operand_batching_dims,
                       gdn.start_indices_batching_dims, sizes)
    require(len(g.slice_sizes) == len(g.operand) and len(g.window) == len(g.offset_dims)
            and len(g.batch_out) == len(g.batch_indices)
            and len(g.operand_batching) == len(g.indices_batching)
            and (g.index_vector_dim == len(g.indices) and len(g.start_index_map) == 1
                 or g.index_vector_dim < len(g.indices)
                 and g.indices[g.index_vector_dim] == len(g.start_index_map)),
            instr, "inconsistent gather dimension numbers")
    return g


def gather_operand_map(g: GatherGeometry, indices_instr: HloInstruction) -> IndexingMap:
    """Output index -> operand index: start (runtime) plus offset within the slice."""
    batch = {o: dim(o) for o in g.batch_out}
    rts: list[RuntimeVar] = []
    results: list[Expr] = []
    for j in range(len(g.operand)):
        offset = dim(g.offset_dims[g.window.index(j)]) if j in g.window else Integer(0)
        if j in g.start_index_map:
            k = g.start_index_map.index(j)
            element = g.indices_element(batch, Integer(k))
            env = {dim(o): Interval(0, n - 1) for o, n in enumerate(g.out)}
            start = known_start(indices_instr, element, g.feasible(j), env)
            if start is None:
                provenance = IndexingMap.create(g.out, element)
                rts.append(RuntimeVar(g.feasible(j), value_source(indices_instr), provenance))
                start = rt(len(rts) - 1)
            results.append(start + offset)
        elif j in g.operand_batching:
            q = g.indices_batching[g.operand_batching.index(j)]
            results.append(dim(g.out_dim_of_indices_dim(q)))
        else:
            results.append(offset)
    return IndexingMap.create(g.out, results, rts=rts)


def moving_components(g: GatherGeometry) -> list[int]:
    """The components of the index vector whose clamped value can change: those along an
    operand dim the slice does not span (along the others the start is always 0)."""
    return [k for k, j in enumerate(g.start_index_map) if g.slice_sizes[j] < g.operand[j]]


def gather_indices_map(g: GatherGeometry) -> list[IndexingMap]:
    """Output index -> indices elements: the components of the index vector of its batch
    position that can change the start (one map each, or one for all of them)."""
    batch = {o: dim(o) for o in g.batch_out}
    moving = moving_components(g)
    if len(moving) == len(g.start_index_map):
        ranges: list[tuple[int, int]] = []
        component = (var_or_zero(len(g.start_index_map), ranges)
                     if g.index_vector_dim < len(g.indices) else Integer(0))
        return [IndexingMap.create(g.out, g.indices_element(batch, component), ranges)]
    maps = [IndexingMap.create(g.out, g.indices_element(batch, Integer(k))) for k in moving]
    return maps or [IndexingMap.create(g.out, g.indices_element(batch, Integer(0)))
                    .as_known_empty()]


def gather_operand_output_map(g: GatherGeometry, indices_instr: HloInstruction
                              ) -> IndexingMap:
    """Operand index -> output index: any batch position (a range variable, unless it is a
    batching dim), offset = index - start, within the slice."""
    ranges: list[tuple[int, int]] = []
    batch: dict[int, Expr] = {}
    for q in g.batch_indices:
        o = g.out_dim_of_indices_dim(q)
        if q in g.indices_batching:
            batch[o] = dim(g.operand_batching[g.indices_batching.index(q)])
        else:
            ranges.append((0, g.out[o] - 1))
            batch[o] = sym(len(ranges) - 1)
    rts: list[RuntimeVar] = []
    offsets: dict[int, Expr] = {}
    constraints: list[tuple[Expr, Interval]] = []
    for j in range(len(g.operand)):
        if j in g.operand_batching:
            continue
        offset: Expr = dim(j)
        if j in g.start_index_map:
            element = g.indices_element(batch, Integer(g.start_index_map.index(j)))
            provenance = IndexingMap.create(g.operand, element, ranges)
            rts.append(RuntimeVar(g.feasible(j), value_source(indices_instr), provenance))
            offset = offset - rt(len(rts) - 1)
        constraints.append((offset, Interval(0, g.slice_sizes[j] - 1)))
        offsets[j] = offset
    results = [batch[o] if o in batch else offsets[g.window[g.offset_dims.index(o)]]
               for o in range(len(g.out))]
    return IndexingMap.create(g.operand, results, ranges, rts, constraints)


def gather_indices_output_map(g: GatherGeometry) -> list[IndexingMap]:
    """Indices index -> output index: its batch position, every offset; for the components
    of the index vector that can change the start (:func:`moving_components`)."""
    ranges: list[tuple[int, int]] = []
    results: list[Expr] = []
    for o in range(len(g.out)):
        if o in g.offset_dims:
            ranges.append((0, g.out[o] - 1))
            results.append(sym(len(ranges) - 1))
        else:
            results.append(dim(g.batch_indices[g.batch_out.index(o)]))
    moving = moving_components(g)
    whole = IndexingMap.create(g.indices, results, ranges)
    if len(moving) == len(g.start_index_map):
        return [whole]
    v = g.index_vector_dim
    return [IndexingMap.create([Interval(k, k) if q == v else Interval(0, n - 1)
                                for q, n in enumerate(g.indices)], results, ranges)
            for k in moving] or [whole.as_known_empty()]


@rule(OUTPUT_TO_INPUT, "gather")
def _gather_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    g = gather_geometry(instr)
    return [[gather_operand_map(g, instr.operands[1])], gather_indices_map(g)]


@rule(INPUT_TO_OUTPUT, "gather")
def _gather_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    g = gather_geometry(instr)
    if operand_index == 0:
        return [[gather_operand_output_map(g, instr.operands[1])]]
    return [gather_indices_output_map(g)]
