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
Where the computation is known, each instruction met is first replaced by its
representative (:mod:`symidx.hlo.same_value`: the first instruction computing the same
value, bit for bit), so the holder named is the first instruction computing the value, and
two places recomputing one index (every layer of a model) name one holder.
Across a call boundary the variable's interval may already be narrowed to where the map
reads anything, so the op's clamping interval is not known there: a value replaces the
variable only where it lies inside the interval, and otherwise only narrows it to the hull
of the values clamped into it (which is sound).

A runtime variable's interval alone gives the map its meaning (every value in it); the
provenance says where the value comes from. :func:`forget_elements` drops the element part
of it, which lets maps that differ only there merge (see :mod:`symidx.fusion.sweep`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from sympy import Integer

from symidx.core.expr import Expr, bounds, max_of, min_of, rt
from symidx.core.indexing_map import IndexingMap, RuntimeVar, ValueSource
from symidx.core.interval import Interval
from symidx.core.simplify import compose, simplify
from symidx.core.simplify.finish import finish
from symidx.core.simplify.transforms import remove_unused_symbols
from symidx.errors import SymidxError
from symidx.fusion.values import Scope, index_value
from symidx.hlo import HloComputation, HloInstruction, Shape
from symidx.hlo.same_value import value_numbering
from symidx.lowering.values import (
    Holder,
    KnownValue,
    integer_range,
    known_value_at,
    preserves_integers,
    splits,
    table_runs,
    table_span,
    value_source,
)
from symidx.ops import output_to_input

__all__ = ["runtime_sources", "resolve_runtime_vars", "split_by_tables", "forget_elements"]


def runtime_sources(instr: HloInstruction,
                    parameters: Mapping[int, HloInstruction] | None = None,
                    known: Mapping[int, HloInstruction] | None = None
                    ) -> dict[ValueSource, HloInstruction]:
    """The instructions the runtime variables of a step's maps may name, by that name.

    A plain op's variables name its operands (:func:`symidx.lowering.values.value_source`), or,
    for an operand position in ``known``, the instruction its rule read that operand's
    values from (:func:`symidx.ops.rule`). Maps through a called computation name its
    ``parameter(N)``: ``parameters`` gives the instruction of the caller that fills
    parameter N (a call's operand N; operand N + 1 for a conditional's branch)."""
    if parameters is not None:
        return {ValueSource(f"parameter({n})", parameter=n): op
                for n, op in parameters.items()}
    holders = [op if known is None else known.get(k, op) for k, op in enumerate(instr.operands)]
    return {value_source(op): op for op in reversed(holders)}


def resolve_runtime_vars(m: IndexingMap, sources: Mapping[ValueSource, Holder],
                         clamp: bool, scope: Scope | None = None, settled: bool = False,
                         comp: HloComputation | None = None) -> IndexingMap:
    """``m`` with each runtime variable whose ``source`` is a key of ``sources`` followed to the
    instruction holding its value: replaced by the value when that is known (a constant or
    an iota), otherwise re-pointed at that instruction. A source may also give the values
    known in place of its instruction (:class:`symidx.lowering.values.KnownValue`: a loop
    counter in one state), read as a constant holding them.

    ``comp``: the computation holding the instructions of ``sources`` (by default
    ``scope``'s). There the value is followed through its representatives
    (:func:`symidx.hlo.same_value.representative`): the instruction a variable is
    re-pointed at is the first instruction of ``comp`` computing that value, so that two
    places computing the same index (every layer of a model) name one holder, and the
    maps reading with it are one map. Without a computation the holder is the one the
    value was followed to.

    ``clamp``: the variable's interval is still the op's clamping interval (a map fresh
    from its rule), so a known value reaching outside it is replaced by the clamped value.
    Without ``clamp`` a value replaces the variable only where it lies inside the interval.
    ``scope`` (the computation holding the instructions and its caller,
    :class:`symidx.fusion.values.Scope`) lets a value computed from a parameter be followed
    to the instruction that fills it. ``settled``: ``m`` is its own simplification
    (:func:`~symidx.core.simplify.finish.finish` with point dims folded gives ``m`` again), which
    lets the first variable replaced by a number take a shortcut (:func:`_narrowed_dim`).
    """
    given = m
    if comp is None and scope is not None:
        comp = scope.comp
    i = 0
    while i < m.num_rts:
        var = m.rts[i]
        origin = None if var.source is None else sources.get(var.source)
        if origin is None or var.map is None:
            i += 1
            continue
        holder = _trace_value(origin, var.map, comp)
        folded, shortcut = _fold(m, i, holder, clamp, scope, settled and m is given, comp)
        if folded is not None:
            m = folded  # replaced (the next variable now has index i) or narrowed
            if shortcut:  # the shortcut's map is settled too
                given = m
            continue
        element = finish(holder.element, fold_point_dims=True)
        if _source_of(holder.instr) != var.source or element != var.map:
            m = _repoint(m, i, holder.instr, element)
        i += 1
    return m


def split_by_tables(m: IndexingMap, sources: Mapping[ValueSource, Holder], clamp: bool,
                    comp: HloComputation | None = None) -> list[IndexingMap]:
    """``m`` as a union of maps: one per run of equal values of a constant index table that
    a runtime variable reads along one dimension of ``m`` (``x[jnp.array([4, 0, 2, 2])]``:
    ``d0 in [0, 0]`` reads row 4, ``d0 in [1, 1]`` row 0, ``d0 in [2, 3]`` row 2), each with
    the value in place of the variable where it lies in the variable's interval; several
    variables reading tables along the same variable split it together, each piece holding
    one value of each (the row and the column of ``x[jnp.triu_indices(4, 1)]``). Outside
    it, a variable that is not clamped (a scatter index) reads nothing; a clamped one is
    replaced by the clamped value when ``clamp`` says the interval is still the op's
    clamping interval (see :func:`resolve_runtime_vars`), and otherwise stays. A table read
    along several dimensions, more runs than the table-splitting policy allows
    (:data:`symidx.lowering.values.SPLIT_LIMIT`), or a dimension longer than
    :data:`symidx.lowering.values.SPAN_LIMIT` leave ``m`` whole, for
    :func:`resolve_runtime_vars` to narrow the variable's interval. ``comp``: the
    computation holding the instructions of ``sources``, as for
    :func:`resolve_runtime_vars`."""
    found: dict[int, list[tuple[Expr, int, int, object]]] = {}
    for i, var in enumerate(m.rts):
        origin = None if var.source is None else sources.get(var.source)
        if origin is None or var.map is None:
            continue
        holder = _trace_value(origin, var.map, comp)
        runs = _table_runs(m, holder, var, clamp, comp)
        if runs is None or _expressed(m, var, holder, clamp):
            continue  # no table; or an iota and arithmetic on it, which one map holds
        if not found or runs[0][0] == next(iter(found.values()))[0][0]:
            found[i] = _merged(runs, _held(var, clamp))
    if not found:
        return [m]
    x = next(iter(found.values()))[0][0]
    joint = _joint(found)
    if not splits(len(joint)):  # the first variable's runs alone
        first = min(found)
        joint = _joint({first: found[first]})
    pieces = []
    for lo, hi, held in joint:
        if any(h is _NOTHING for h in held.values()):
            continue  # a scatter index outside the operand: nothing is read
        piece = finish(m.with_constraint(x, (lo, hi)), fold_point_dims=True)
        known = {i: Integer(h) for i, h in held.items() if h is not _UNKNOWN}
        if known:
            piece = _substitute_all(piece, known)
            if not piece.is_known_empty:
                pieces += split_by_tables(piece, sources, clamp, comp)
        elif not piece.is_known_empty:
            pieces.append(piece)
    return pieces or [m.as_known_empty()]


def _expressed(m: IndexingMap, var: RuntimeVar, holder: _Holder, fresh: bool) -> bool:
    """Is the value ``holder`` holds an expression of ``m``'s variables
    (:func:`_value_expression`), which :func:`resolve_runtime_vars` puts in place of
    ``var`` in one map, rather than a table to split by?"""
    if isinstance(holder.instr, KnownValue) or holder.element.is_known_empty \
            or holder.element.is_undefined:
        return False
    value = _value_expression(holder)
    return value is not None and _shares_range_vars(value, var, m, fresh)


def _joint(runs: Mapping[int, list[tuple[Expr, int, int, object]]]
           ) -> list[tuple[int, int, dict[int, object]]]:
    """The runs of several variables read along one variable of a map, refined into runs
    on which each of them holds one value: (first, last position, per variable what its
    value stands for)."""
    starts = sorted({lo for per in runs.values() for _, lo, _, _ in per})
    last = max(hi for per in runs.values() for _, _, hi, _ in per)
    out = []
    for k, lo in enumerate(starts):
        hi = starts[k + 1] - 1 if k + 1 < len(starts) else last
        held = {i: next(h for _, a, b, h in per if a <= lo <= b) for i, per in runs.items()}
        out.append((lo, hi, held))
    return out


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


def _table_runs(m: IndexingMap, holder: _Holder, var: RuntimeVar, fresh: bool,
                comp: HloComputation | None = None) -> list[tuple[Expr, int, int, int]] | None:
    """(variable, first, last position, value) per run of equal values that a constant
    integer table holds at the elements ``holder`` reads along one variable of ``m``: a
    dimension, or a range variable when ``m`` is fresh from its rule (see
    :func:`_shares_range_vars`); the runs as :func:`symidx.lowering.values.table_runs` finds
    them, under the table-splitting policy."""
    element = holder.element
    if element.is_known_empty or element.is_undefined:
        return None
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
    runs = table_runs(holder.instr, element.results, x, span, comp)
    return None if runs is None else [(x, lo, hi, value) for lo, hi, value in runs]


@dataclass(frozen=True, slots=True)
class _Holder:
    """The instruction holding a runtime value (or the values known in its place) and the
    map from the map's dims to the element holding it. The element map is simplified
    without removing unused variables: its range variables keep their numbers (those of the
    provenance map it comes from)."""

    instr: Holder
    element: IndexingMap


def _source_of(holder: Holder) -> ValueSource:
    return holder.source if isinstance(holder, KnownValue) else value_source(holder)


def _trace_value(instr: Holder, element: IndexingMap, comp: HloComputation | None = None
                 ) -> _Holder:
    """Follow a value back through value-preserving ops to the instruction holding it
    (known values are held where they are); in ``comp`` (the computation holding
    ``instr``), through the representative of each instruction met: the first
    instruction of ``comp`` computing the same value (an instruction of another
    computation is its own)."""
    element = simplify(element, replace_point_dims=True)  # a dim of size 1 is its one value
    if isinstance(instr, KnownValue):
        return _Holder(instr, element)
    same = None if comp is None else value_numbering(comp)
    while True:
        if same is not None:  # the same shape: ``element`` is an element of it too
            instr = same.representative(instr)
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
        if not isinstance(instr.shape, Shape) or integer_range(instr.shape.element_type) is None:
            return None
    elif not preserves_integers(instr):
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
    if isinstance(holder.instr, KnownValue):
        value = known_value_at(holder.instr, element.results)
    else:
        value = index_value(holder.instr, element.results, element.variable_bounds(),
                            scope=scope)
    if value is None or not value.free_symbols <= set(element.dim_vars + element.range_vars):
        return None
    return value


def _fold(m: IndexingMap, i: int, holder: _Holder, clamp: bool,
          scope: Scope | None = None, settled: bool = False,
          comp: HloComputation | None = None) -> tuple[IndexingMap | None, bool]:
    """``m`` with runtime variable ``i`` replaced by its value where that is known, or its
    interval narrowed to the values it can take (a point: replaced by it); None when
    nothing is known. ``settled``: see :func:`resolve_runtime_vars`; ``comp``: the
    computation holding the holder, whose values known before the run it may read.

    A value ``v`` reaching outside the variable's interval ``[lo, hi]`` reads nothing for a
    variable that is not ``clamped`` (a scatter index); for one that is, with ``clamp``, it
    is replaced by ``min(max(v, lo), hi)``. Otherwise the variable takes ``clamp(v, [lo, hi])``
    or no value at all (its interval may have been narrowed to where the map reads
    something, and we do not know the op's own clamping interval), so only the interval is
    narrowed to the hull of those values."""
    element = holder.element
    if element.is_known_empty or element.is_undefined:
        return None, False
    var = m.rts[i]
    value = _value_expression(holder, scope)
    if value is not None and not _shares_range_vars(value, var, m, clamp):
        value = None
    if value is None:
        span = table_span(holder.instr, holder.element, comp)
        if span is None:
            return None, False
    else:
        span = bounds(value, m.variable_bounds())
        shape = holder.instr.shape
        representable = integer_range(shape.element_type) if isinstance(shape, Shape) else None
        if representable is None or span not in representable:
            return None, False  # e.g. an s8 iota longer than 128 wraps
        if span in var.bounds:
            shortcut = _narrowed_dim(m, i, value) if settled else None
            if shortcut is not None:
                return shortcut, True
            return _substitute(m, i, value), False
        if not var.clamped:  # a value outside the interval reads nothing
            return _substitute(m, i, value, within=var.bounds), False
        if clamp:
            clamped = min_of(max_of(value, var.bounds.lo), var.bounds.hi)
            return _substitute(m, i, clamped), False
    lo, hi = var.bounds.lo, var.bounds.hi
    if var.clamped:
        narrowed = Interval(max(lo, min(hi, span.lo)), max(lo, min(hi, span.hi)))
    else:
        narrowed = span.intersect(var.bounds)
        if narrowed.is_empty:  # every value held skips: nothing is read
            return m.as_known_empty(), False
    if narrowed.is_point:
        return _substitute(m, i, Integer(narrowed.lo)), False
    if narrowed == var.bounds:
        return None, False
    rts = list(m.rts)
    rts[i] = replace(var, bounds=narrowed)
    return finish(m.replace(rts=rts), fold_point_dims=True), False


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


def _substitute_all(m: IndexingMap, values: Mapping[int, Expr]) -> IndexingMap:
    """``m`` with each runtime variable ``i`` of ``values`` replaced by ``values[i]``."""
    results, constraints = m.substitute({rt(i): v for i, v in values.items()})
    return finish(IndexingMap.create(m.dims, results, m.ranges, m.rts, constraints, m.names),
                  fold_point_dims=True)


def _narrowed_dim(m: IndexingMap, i: int, value: Expr) -> IndexingMap | None:
    """``_substitute(m, i, value)`` without the simplifier's rounds, for a settled ``m``
    (its own simplification) and a number ``value`` (``c``) where runtime variable ``i``
    occurs only as a whole result (which becomes ``c``) and in at most one constraint
    ``d - rt in [a, b]`` over a dim ``d`` that no other constraint mentions and that is at
    most a whole result: ``d``'s interval is cut to ``[a + c, b + c]`` (not empty, and not
    one point where ``d`` is a result) and the constraint and the variable go. The
    simplifier gives this same map: it folds the constraint into the interval, and nothing
    else it would rewrite mentions ``d`` or the variable (a whole result stays as it is).
    A loop's body maps are specialised so at every iteration (a ``dynamic-slice`` at the
    counter). None where the pattern does not hold."""
    if not isinstance(value, Integer):
        return None
    var = rt(i)
    results = []
    for r in m.results:
        if r == var:
            r = value
        elif var in r.free_symbols:
            return None
        results.append(r)
    found = [k for k, (e, _) in enumerate(m.constraints) if var in e.free_symbols]
    dims = m.dims
    constraints = m.constraints
    if found:
        if len(found) != 1:
            return None
        expr, interval = m.constraints[found[0]]
        d = next((d for d in m.dim_vars if d in expr.free_symbols), None)
        if d is None or expr != d - var:
            return None
        constraints = tuple(c for k, c in enumerate(m.constraints) if k != found[0])
        if any(d in e.free_symbols for e, _ in constraints):
            return None
        in_results = False
        for r in results:
            if r == d:
                in_results = True
            elif d in r.free_symbols:
                return None
        j = m.dim_vars.index(d)
        narrowed = Interval(interval.lo + int(value), interval.hi + int(value)
                            ).intersect(m.dims[j])
        if narrowed.is_empty or (in_results and narrowed.is_point):
            return None
        dims = (*m.dims[:j], narrowed, *m.dims[j + 1:])
    if i + 1 < m.num_rts:  # the variables after it are renamed
        return remove_unused_symbols(m.replace(dims=dims, results=tuple(results),
                                               constraints=constraints))[0]
    # The last variable: nothing is renamed, and nothing else became unused (the constraint
    # dropped mentioned only it and ``d``), so this is what removing unused symbols gives.
    names = None if m.names is None else m.names[:m.num_dims + m.num_ranges + i]
    return IndexingMap.create(dims, results, m.ranges, m.rts[:i], constraints, names,
                              check=False)


def _repoint(m: IndexingMap, i: int, instr: Holder, element: IndexingMap
             ) -> IndexingMap:
    rts = list(m.rts)
    rts[i] = replace(rts[i], source=_source_of(instr), map=element)
    return m.replace(rts=rts)


def forget_elements(m: IndexingMap) -> IndexingMap:
    """``m`` with each runtime variable keeping its interval and instruction but not the
    element that holds the value (the same function; less provenance), simplified."""
    if not any(v.map is not None for v in m.rts):
        return m
    return finish(m.replace(rts=[replace(v, map=None) for v in m.rts]),
                  fold_point_dims=True)
