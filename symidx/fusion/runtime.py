"""Runtime variables met by a sweep: follow each value to the instruction that holds it.

An op map's runtime variable names the operand holding its value (a dynamic-slice offset,
a gather index). When the map enters a sweep, the value is followed through ops that move
integers without changing them (bitcast, broadcast, copy, reshape, reverse, slice,
transpose, widening converts) to the instruction that holds it. If that is an ``iota`` or a
constant read at a fixed element, the value is known and replaces the variable, clamped as
HLO clamps start indices (``min(d0, 32)`` for an iota reaching past the last feasible
start), so the map stays exact. A constant table read at varying elements narrows the
variable's interval to the (clamped) values it holds, and replaces it when that is one
value. Otherwise the variable stays, its provenance pointing at that instruction (a called
computation's ``parameter(N)``, which an enclosing sweep follows into its own computation).
Across a call boundary the variable's interval may already be narrowed to where the map
reads anything, so the op's clamping interval is not known there: a value replaces the
variable only where it lies inside the interval, and otherwise only narrows it to the hull
of the values clamped into it (which is sound).

A runtime variable's interval alone gives the map its meaning (every value in it); the
provenance says where the value comes from. :func:`forget_elements` drops the element part
of it, which lets maps that differ only there merge (see :mod:`symidx.fusion.sweep`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from sympy import Integer

from symidx.errors import SymidxError
from symidx.expr import Expr, bounds, compile_expr, max_of, min_of, rt
from symidx.fusion.values import Scope, index_value
from symidx.hlo import HloInstruction, Shape, ShapeLike
from symidx.hlo.facts import hlo_reference
from symidx.indexing_map import IndexingMap, RuntimeVar
from symidx.interval import Interval
from symidx.ops import finish, output_to_input
from symidx.simplify import compose, simplify

if TYPE_CHECKING:
    import numpy as np

__all__ = ["runtime_sources", "resolve_runtime_vars", "split_by_tables", "forget_elements"]

#: Ops whose output element is one element of operand 0 (a convert: see
#: :func:`_preserves_values`).
_VALUE_PRESERVING = frozenset({"bitcast", "broadcast", "convert", "copy", "reshape",
                               "reverse", "slice", "transpose"})
_INTEGER_TYPE = re.compile(r"([su])([0-9]+)")
_TABLE_LIMIT = 1 << 16  # elements of a constant index table read to bound its values
_RUN_LIMIT = 64  # maps a constant index table may split one map into
_SPAN_LIMIT = 4096  # positions of the dimension along which a table is read


def runtime_sources(instr: HloInstruction,
                    parameters: Mapping[int, HloInstruction] | None = None
                    ) -> dict[str, HloInstruction]:
    """The instructions the runtime variables of a step's maps may name, by that name.

    A plain op's variables name its operands (see
    :func:`symidx.ops._common.hlo_reference`). Maps through a called computation name its
    ``parameter(N)``: ``parameters`` gives the instruction of the caller that fills
    parameter N (a call's operand N; operand N + 1 for a conditional's branch)."""
    if parameters is not None:
        return {f"parameter({n})": op for n, op in parameters.items()}
    return {hlo_reference(op): op for op in reversed(instr.operands)}


def resolve_runtime_vars(m: IndexingMap, sources: Mapping[str, HloInstruction],
                         clamp: bool, scope: Scope | None = None) -> IndexingMap:
    """``m`` with each runtime variable whose ``hlo`` is a key of ``sources`` followed to the
    instruction holding its value: replaced by the value when that is known (a constant or
    an iota), otherwise re-pointed at that instruction.

    ``clamp``: the variable's interval is still the op's clamping interval (a map fresh
    from its rule), so a known value reaching outside it is replaced by the clamped value.
    Without ``clamp`` a value replaces the variable only where it lies inside the interval.
    ``scope`` (the computation holding the instructions and its caller,
    :class:`symidx.fusion.values.Scope`) lets a value computed from a parameter be followed
    to the instruction that fills it.
    """
    i = 0
    while i < m.num_rts:
        var = m.rts[i]
        origin = sources.get(var.hlo)
        if origin is None or var.map is None:
            i += 1
            continue
        holder = _trace_value(origin, var.map)
        folded = _fold(m, i, holder, clamp, scope)
        if folded is not None:
            m = folded  # replaced (the next variable now has index i) or narrowed
            continue
        element = finish(holder.element, fold_point_dims=True)
        if hlo_reference(holder.instr) != var.hlo or element != var.map:
            m = _repoint(m, i, holder.instr, element)
        i += 1
    return m


def split_by_tables(m: IndexingMap, sources: Mapping[str, HloInstruction], clamp: bool
                    ) -> list[IndexingMap]:
    """``m`` as a union of maps: one per run of equal values of a constant index table that
    a runtime variable reads along one dimension of ``m`` (``x[jnp.array([4, 0, 2, 2])]``:
    ``d0 in [0, 0]`` reads row 4, ``d0 in [1, 1]`` row 0, ``d0 in [2, 3]`` row 2), each with
    the value in place of the variable where it lies in the variable's interval. Outside
    it, a variable that is not clamped (a scatter index) reads nothing; a clamped one is
    replaced by the clamped value when ``clamp`` says the interval is still the op's
    clamping interval (see :func:`resolve_runtime_vars`), and otherwise stays. A table read
    along several dimensions, more than ``_RUN_LIMIT`` runs, or a dimension longer than
    ``_SPAN_LIMIT`` leave ``m`` whole, for :func:`resolve_runtime_vars` to narrow the
    variable's interval."""
    for i, var in enumerate(m.rts):
        origin = sources.get(var.hlo)
        if origin is None or var.map is None:
            continue
        runs = _table_runs(m, _trace_value(origin, var.map), var, clamp)
        if runs is None:
            continue
        pieces = []
        for x, lo, hi, held in _merged(runs, _held(var, clamp)):
            if held is _NOTHING:
                continue  # a scatter index outside the operand: nothing is read
            piece = finish(m.with_constraint(x, (lo, hi)), fold_point_dims=True)
            if held is not _UNKNOWN:
                piece = _substitute(piece, i, Integer(held))
                if not piece.is_known_empty:
                    pieces += split_by_tables(piece, sources, clamp)
            elif not piece.is_known_empty:
                pieces.append(piece)
        return pieces or [m.as_known_empty()]
    return [m]


#: What a table value stands for outside a variable's interval: nothing is read (a scatter
#: index), or a value the map cannot know (the interval may have been narrowed).
_NOTHING, _UNKNOWN = object(), object()


def _held(var: RuntimeVar, clamp: bool) -> Callable[[int], object]:
    """What a table value ``v`` stands for in place of ``var``: ``v`` inside its interval;
    outside, the clamped value (``clamp``: the interval is the op's), ``_NOTHING`` (not
    clamped) or ``_UNKNOWN``."""
    def held(value: int) -> object:
        if value in var.bounds:
            return value
        if not var.clamped:
            return _NOTHING
        return min(max(value, var.bounds.lo), var.bounds.hi) if clamp else _UNKNOWN
    return held


def _merged(runs: list[tuple[Expr, int, int, int]], held: Callable[[int], object]
            ) -> list[tuple[Expr, int, int, object]]:
    """``runs`` with each value replaced by what it stands for, adjacent runs that stand
    for the same joined."""
    merged: list[tuple[Expr, int, int, object]] = []
    for x, lo, hi, value in runs:
        h = held(value)
        if merged and merged[-1][3] == h and merged[-1][2] + 1 == lo:
            merged[-1] = (x, merged[-1][1], hi, h)
        else:
            merged.append((x, lo, hi, h))
    return merged


def _constant_table(instr: HloInstruction) -> np.ndarray | None:
    """The integer array a ``constant`` holds, shaped as it is declared; None for any other
    instruction or literal."""
    if instr.opcode != "constant" or instr.literal is None or not isinstance(instr.shape, Shape):
        return None
    import numpy as np

    table = np.asarray(instr.literal)
    return table if table.dtype.kind in "iu" and table.shape == instr.shape.dims else None


def _table_runs(m: IndexingMap, holder: _Holder, var: RuntimeVar, fresh: bool
                ) -> list[tuple[Expr, int, int, int]] | None:
    """(variable, first, last position, value) per run of equal values that a constant
    integer table holds at the elements ``holder`` reads along one variable of ``m``: a
    dimension, or a range variable when ``m`` is fresh from its rule (see
    :func:`_shares_range_vars`)."""
    instr, element = holder.instr, holder.element
    table = _constant_table(instr)
    if table is None or element.is_known_empty or element.is_undefined:
        return None
    import numpy as np

    used = set().union(*(r.free_symbols for r in element.results))
    if len(used) != 1:
        return None
    (x,) = used
    if x in m.dim_vars:
        span = m.dims[m.dim_vars.index(x)]
    elif x in m.range_vars and _shares_range_vars(x, var, m, fresh):
        span = m.ranges[m.range_vars.index(x)]
    else:
        return None
    if span.size > _SPAN_LIMIT:
        return None
    positions = np.arange(span.lo, span.hi + 1, dtype=np.int64)
    index = [np.broadcast_to(compile_expr(r, [x])([positions]), positions.shape)
             for r in element.results]
    if not all(((i >= 0) & (i < n)).all() for i, n in zip(index, table.shape)):
        return None
    values = table[tuple(index)]
    starts = [0] + [k for k in range(1, len(values)) if values[k] != values[k - 1]]
    if len(starts) > _RUN_LIMIT:
        return None
    ends = starts[1:] + [len(values)]
    return [(x, int(positions[a]), int(positions[b - 1]), int(values[a]))
            for a, b in zip(starts, ends)]


@dataclass(frozen=True, slots=True)
class _Holder:
    """The instruction holding a runtime value and the map from the map's dims to the
    element holding it. The element map is simplified without removing unused variables:
    its range variables keep their numbers (those of the provenance map it comes from)."""

    instr: HloInstruction
    element: IndexingMap


def _integer_range(shape: ShapeLike) -> Interval | None:
    """The values of an integer array type; None for other types."""
    match = _INTEGER_TYPE.fullmatch(shape.element_type) if isinstance(shape, Shape) else None
    if match is None:
        return None
    bits = int(match.group(2))
    if match.group(1) == "u":
        return Interval(0, (1 << bits) - 1)
    return Interval(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


def _preserves_values(instr: HloInstruction) -> bool:
    """Does every output element hold an operand element's integer unchanged? A convert
    must widen (or keep) the integer type; the others only move elements."""
    if instr.opcode not in _VALUE_PRESERVING or len(instr.operands) != 1:
        return False
    before, after = _integer_range(instr.operands[0].shape), _integer_range(instr.shape)
    return before is not None and after is not None and before in after


def _trace_value(instr: HloInstruction, element: IndexingMap) -> _Holder:
    """Follow a value back through value-preserving ops to the instruction holding it."""
    element = simplify(element, replace_point_dims=True)  # a dim of size 1 is its one value
    while True:
        found = _step_back(instr, element)
        if found is None:
            return _Holder(instr, element)
        instr, element = found


def _step_back(instr: HloInstruction, element: IndexingMap
               ) -> tuple[HloInstruction, IndexingMap] | None:
    """The operand of ``instr`` holding the value ``instr`` holds at ``element``, and the
    element of it, when ``instr`` only moves integers: a value-preserving op, or a
    concatenate where every element ``element`` reaches lies in the same operand (the
    compositions with the others are known empty: ``concatenate(iota, indices)`` read at
    a fixed position of the index vector). None otherwise."""
    if instr.opcode == "concatenate":
        if _integer_range(instr.shape) is None:
            return None
    elif not _preserves_values(instr):
        return None
    try:
        groups = output_to_input(instr, 0)
    except SymidxError:
        return None
    live = []
    for k, maps in enumerate(groups):
        if len(maps) != 1 or maps[0].num_ranges or maps[0].num_rts:
            return None
        composed = simplify(compose(element, maps[0]), replace_point_dims=True)
        if not composed.is_known_empty:
            live.append((instr.operands[k], composed))
    return live[0] if len(live) == 1 else None


def _value_expression(holder: _Holder, scope: Scope | None = None) -> Expr | None:
    """The value as an expression over the map's variables, when the element decides it:
    an iota, a constant, and arithmetic on them (:func:`symidx.fusion.values.index_value`,
    every value held exactly by its type: no wrap-around), followed out of the computation
    to its caller as ``scope`` allows."""
    element = holder.element
    value = index_value(holder.instr, element.results, element.variable_bounds(),
                        scope=scope)
    if value is None or not value.free_symbols <= set(element.dim_vars + element.range_vars):
        return None
    return value


def _table_span(holder: _Holder) -> Interval | None:
    """The smallest and largest values a constant array holds at the elements the element
    map reaches (None when not a small integer constant, or nothing is reached)."""
    instr, element = holder.instr, holder.element
    table = _constant_table(instr)
    if table is None or not table.ndim or element.domain_size() > _TABLE_LIMIT:
        return None
    lo = hi = None
    for point in element.points(limit=_TABLE_LIMIT):
        results, mask = element.evaluate_arrays(point)
        if len(results) != table.ndim or not all(
                ((r[mask] >= 0) & (r[mask] < n)).all() for r, n in zip(results, table.shape)):
            return None
        values = table[tuple(r[mask] for r in results)]
        if values.size:
            lo = int(values.min()) if lo is None else min(lo, int(values.min()))
            hi = int(values.max()) if hi is None else max(hi, int(values.max()))
    return None if lo is None or hi is None else Interval(lo, hi)


def _fold(m: IndexingMap, i: int, holder: _Holder, clamp: bool,
          scope: Scope | None = None) -> IndexingMap | None:
    """``m`` with runtime variable ``i`` replaced by its value where that is known, or its
    interval narrowed to the values it can take (a point: replaced by it); None when
    nothing is known.

    A value ``v`` reaching outside the variable's interval ``[lo, hi]`` reads nothing for a
    variable that is not ``clamped`` (a scatter index); for one that is, with ``clamp``, it
    is replaced by ``min(max(v, lo), hi)``. Otherwise the variable takes ``clamp(v, [lo, hi])``
    or no value at all (its interval may have been narrowed to where the map reads
    something, and we do not know the op's own clamping interval), so only the interval is
    narrowed to the hull of those values."""
    element = holder.element
    if element.is_known_empty or element.is_undefined:
        return None
    var = m.rts[i]
    value = _value_expression(holder, scope)
    if value is not None and not _shares_range_vars(value, var, m, clamp):
        value = None
    if value is None:
        span = _table_span(holder)
        if span is None:
            return None
    else:
        span = bounds(value, m.variable_bounds())
        representable = _integer_range(holder.instr.shape)
        if representable is None or span not in representable:
            return None  # e.g. an s8 iota longer than 128 wraps
        if span in var.bounds:
            return _substitute(m, i, value)
        if not var.clamped:  # a value outside the interval reads nothing
            return _substitute(m, i, value, within=var.bounds)
        if clamp:
            return _substitute(m, i, min_of(max_of(value, var.bounds.lo), var.bounds.hi))
    lo, hi = var.bounds.lo, var.bounds.hi
    if var.clamped:
        narrowed = Interval(max(lo, min(hi, span.lo)), max(lo, min(hi, span.hi)))
    else:
        narrowed = span.intersect(var.bounds)
        if narrowed.is_empty:  # every value held skips: nothing is read
            return m.as_known_empty()
    if narrowed.is_point:
        return _substitute(m, i, Integer(narrowed.lo))
    if narrowed == var.bounds:
        return None
    rts = list(m.rts)
    rts[i] = replace(var, bounds=narrowed)
    return finish(m.replace(rts=rts), fold_point_dims=True)


def _shares_range_vars(value: Expr, var: RuntimeVar, m: IndexingMap, fresh: bool) -> bool:
    """Can ``value``, over the variables of ``var``'s provenance map (which the element
    maps followed from it keep, numbers included), stand in ``m``? Its dims are ``m``'s;
    its range variables are ``m``'s first ones only in a map fresh from its rule (the
    rules' convention, which composition does not keep)."""
    assert var.map is not None
    if not value.free_symbols & set(var.map.range_vars):
        return True
    return fresh and var.map.ranges == m.ranges[:var.map.num_ranges]


def _substitute(m: IndexingMap, i: int, value: Expr, within: Interval | None = None
                ) -> IndexingMap:
    """``m`` with runtime variable ``i`` replaced by ``value``, which must lie ``within``
    an interval if given (outside it nothing is read)."""
    results, constraints = m.substitute({rt(i): value})
    if within is not None:
        constraints = (*constraints, (value, within))
    return finish(IndexingMap.create(m.dims, results, m.ranges, m.rts, constraints, m.names),
                  fold_point_dims=True)


def _repoint(m: IndexingMap, i: int, instr: HloInstruction, element: IndexingMap
             ) -> IndexingMap:
    rts = list(m.rts)
    rts[i] = replace(rts[i], hlo=hlo_reference(instr), map=element)
    return m.replace(rts=rts)


def forget_elements(m: IndexingMap) -> IndexingMap:
    """``m`` with each runtime variable keeping its interval and instruction but not the
    element that holds the value (the same function; less provenance), simplified."""
    if not any(v.map is not None for v in m.rts):
        return m
    return finish(m.replace(rts=[replace(v, map=None) for v in m.rts]),
                  fold_point_dims=True)
