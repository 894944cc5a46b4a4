"""Ops where one output element reads many operand elements: reduce, reduce-window, dot,
scaled-dot, sort.

The elements read together become range variables: the reduced dims of a reduce (in the
order of ``dimensions=``), the window of a reduce-window (one variable per window dim of
size > 1), the contracting dims of a dot, the sorted dim of a sort. In the input-to-output
direction the output positions an operand element reaches become range variables: the free
dims of the other dot operand, the output window positions of a reduce-window (with the
stride's ``mod`` constraint), every output for an init value.

Variadic reduce and reduce-window have N inputs then N inits, and a reducer whose
parameters are N accumulators then N elements. Output ``j`` reads input ``i`` and init
``i`` for every ``i`` its value is computed from: ``j`` itself, and, step by step, each
component whose accumulator or element a result already reached reads, following the
reducer's dataflow (:func:`reduced_components`). An argmax's reducer computes the max from
the values alone, so the max output reads no index operand; the index output reads both.

A sort's comparator has parameters ``2k`` and ``2k + 1`` for operand ``k``; the operands
it reads are the keys, and which permutation the sort applies depends on them alone. Output
``j`` reads its own operand and the keys, along the sorted dim
(:func:`sort_keys`): with one key, the sorted keys read no payload, a payload reads the keys
and itself only. (Followed through instructions, not values: a NaN or an infinity in an
operand the comparator does not read cannot change the permutation either.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sympy import Integer

from symidx.core.expr import Expr, FloorDiv, dim, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.simplify import compose
from symidx.hlo import DotDimensionNumbers, HloInstruction, WindowDim
from symidx.hlo.facts import num_outputs, operand_dims, output_dims, result_reads
from symidx.ops._common import attribute, require, var_or_zero
from symidx.ops._window import Constraint, operand_term, output_term
from symidx.ops.basic import from_scalar, to_scalar
from symidx.ops.registry import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, rule

# --- reduce -----------------------------------------------------------------------------------


def reduce_operand_map(operand: Sequence[int], reduced: Sequence[int]) -> IndexingMap:
    """Output index -> input index: kept dims in order, reduced dims as range variables."""
    kept = [i for i in range(len(operand)) if i not in reduced]
    results: list[Expr] = [Integer(0)] * len(operand)
    for position, i in enumerate(kept):
        results[i] = dim(position)
    for k, i in enumerate(reduced):
        results[i] = sym(k)
    return IndexingMap.create([operand[i] for i in kept], results,
                              [(0, operand[i] - 1) for i in reduced])


def reduce_output_map(operand: Sequence[int], reduced: Sequence[int]) -> IndexingMap:
    """Input index -> output index: the kept dims."""
    return IndexingMap.create(operand, [dim(i) for i in range(len(operand))
                                        if i not in reduced])


def _variadic_count(instr: HloInstruction) -> int:
    require(len(instr.operands) % 2 == 0, instr, "expected N inputs and N init values")
    count = len(instr.operands) // 2
    require(count == num_outputs(instr), instr, "expected one output per input")
    return count


def _reduced(instr: HloInstruction) -> tuple[int, ...]:
    reduced: tuple[int, ...] = attribute(instr.dimensions, instr,
                                         "dimensions")
    rank = len(operand_dims(instr, 0))
    require(all(0 <= i < rank for i in reduced) and len(set(reduced)) == len(reduced), instr,
            f"dimensions={list(reduced)} out of range")
    return reduced


def reduced_components(instr: HloInstruction, n: int) -> list[frozenset[int]]:
    """Per output ``j`` of a variadic reduce or reduce-window of ``n`` inputs: the
    components (input ``i`` with init ``i``) its value is computed from. ``j`` itself (an
    empty reduction is the init), then, until nothing is added, every component ``i`` whose
    accumulator (parameter ``i``) or element (parameter ``n + i``) the reducer's result for
    a component already in the set reads (:func:`symidx.hlo.facts.result_reads`): the
    reducer combines partial results in any order, so a result read is read through every
    application. Every component when the reducer is not there to read."""
    reads = result_reads(instr, "to_apply", n) if n > 1 else None
    if reads is None:
        return [frozenset(range(n))] * n
    found = []
    for j in range(n):
        seen, todo = {j}, [j]
        while todo:
            for p in reads[todo.pop()]:
                if 0 <= p < 2 * n and p % n not in seen:
                    seen.add(p % n)
                    todo.append(p % n)
        found.append(frozenset(seen))
    return found


def _kept(m: IndexingMap, read: bool) -> list[IndexingMap]:
    """``[m]`` where the component is read, else ``m`` known empty (nothing is read)."""
    return [m if read else m.as_known_empty()]


@rule(OUTPUT_TO_INPUT, "reduce")
def _reduce_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    n, reduced = _variadic_count(instr), _reduced(instr)
    out = output_dims(instr, output_index)
    used = reduced_components(instr, n)[output_index]
    inputs = [_kept(reduce_operand_map(operand_dims(instr, k), reduced), k in used)
              for k in range(n)]
    return inputs + [_kept(to_scalar(out), k in used) for k in range(n)]


@rule(INPUT_TO_OUTPUT, "reduce")
def _reduce_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    n, reduced = _variadic_count(instr), _reduced(instr)
    used = reduced_components(instr, n)
    k = operand_index % n
    if operand_index >= n:
        return [_kept(from_scalar(output_dims(instr, j)), k in used[j]) for j in range(n)]
    operand = operand_dims(instr, operand_index)
    return [_kept(reduce_output_map(operand, reduced), k in used[j]) for j in range(n)]


# --- reduce-window ------------------------------------------------------------------------


def reduce_window_operand_map(out: Sequence[int], operand: Sequence[int],
                              window: Sequence[WindowDim]) -> IndexingMap:
    """Output index -> input index: window positions as range variables; padding and base
    dilation holes excluded by constraints."""
    return _window_map(out, operand, window, operand_term)


def reduce_window_output_map(out: Sequence[int], operand: Sequence[int],
                             window: Sequence[WindowDim]) -> IndexingMap:
    """Input index -> output index: the output window positions that cover it."""
    return _window_map(operand, out, window, output_term)


def _window_map(source: Sequence[int], target: Sequence[int], window: Sequence[WindowDim],
                term: Callable[[Expr, Expr, WindowDim, int], tuple[Expr, list[Constraint]]]
                ) -> IndexingMap:
    """From an index of ``source`` to ``target``'s, dim by dim: ``term`` (of
    :mod:`symidx.ops._window`) of the dim, a window position (a range variable) and the
    target dim's size."""
    ranges: list[tuple[int, int]] = []
    results, constraints = [], []
    for i, (w, n) in enumerate(zip(window, target, strict=True)):
        e, cs = term(dim(i), var_or_zero(w.size, ranges), w, n)
        results.append(e)
        constraints += cs
    return IndexingMap.create(source, results, ranges, constraints=constraints)


def _window(instr: HloInstruction) -> tuple[WindowDim, ...]:
    window: tuple[WindowDim, ...] = attribute(instr.window, instr,
                                              "window")
    require(len(window) == len(operand_dims(instr, 0)), instr, "window= has the wrong rank")
    return window


@rule(OUTPUT_TO_INPUT, "reduce-window", fold_point_dims=True)
def _reduce_window_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    n, window = _variadic_count(instr), _window(instr)
    out = output_dims(instr, output_index)
    used = reduced_components(instr, n)[output_index]
    inputs = [_kept(reduce_window_operand_map(out, operand_dims(instr, k), window), k in used)
              for k in range(n)]
    return inputs + [_kept(to_scalar(out), k in used) for k in range(n)]


@rule(INPUT_TO_OUTPUT, "reduce-window", fold_point_dims=True)
def _reduce_window_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    n, window = _variadic_count(instr), _window(instr)
    used = reduced_components(instr, n)
    k = operand_index % n
    if operand_index >= n:
        return [_kept(from_scalar(output_dims(instr, j)), k in used[j]) for j in range(n)]
    operand = operand_dims(instr, operand_index)
    return [_kept(reduce_window_output_map(output_dims(instr, j), operand, window),
                  k in used[j]) for j in range(n)]


# --- dot --------------------------------------------------------------------------------------


def _free(rank: int, batch: Sequence[int], contracting: Sequence[int]) -> list[int]:
    return [i for i in range(rank) if i not in batch and i not in contracting]


def dot_operand_maps(lhs: Sequence[int], rhs: Sequence[int], dn: DotDimensionNumbers
                     ) -> tuple[IndexingMap, IndexingMap]:
    """Output index -> lhs index and rhs index. The output is (batch dims, lhs free dims,
    rhs free dims); contracting dim ``k`` is range variable ``s{k}`` in both."""
    lhs_free = _free(len(lhs), dn.lhs_batch_dims, dn.lhs_contracting_dims)
    rhs_free = _free(len(rhs), dn.rhs_batch_dims, dn.rhs_contracting_dims)
    nb = len(dn.lhs_batch_dims)
    out = ([lhs[i] for i in dn.lhs_batch_dims] + [lhs[i] for i in lhs_free]
           + [rhs[i] for i in rhs_free])
    ranges = [(0, lhs[i] - 1) for i in dn.lhs_contracting_dims]

    def side(rank: int, batch: Sequence[int], contracting: Sequence[int], free: list[int],
             first_free: int) -> IndexingMap:
        results: list[Expr] = [Integer(0)] * rank
        for b, i in enumerate(batch):
            results[i] = dim(b)
        for k, i in enumerate(contracting):
            results[i] = sym(k)
        for f, i in enumerate(free):
            results[i] = dim(first_free + f)
        return IndexingMap.create(out, results, ranges)

    return (side(len(lhs), dn.lhs_batch_dims, dn.lhs_contracting_dims, lhs_free, nb),
            side(len(rhs), dn.rhs_batch_dims, dn.rhs_contracting_dims, rhs_free,
                 nb + len(lhs_free)))


def dot_output_map(lhs: Sequence[int], rhs: Sequence[int], dn: DotDimensionNumbers,
                   operand_index: int) -> IndexingMap:
    """lhs index (operand 0) or rhs index (operand 1) -> output index: the other operand's
    free dims become range variables."""
    lhs_free = _free(len(lhs), dn.lhs_batch_dims, dn.lhs_contracting_dims)
    rhs_free = _free(len(rhs), dn.rhs_batch_dims, dn.rhs_contracting_dims)
    if operand_index == 0:
        batch, mine, other, other_free, shape = dn.lhs_batch_dims, lhs_free, rhs, rhs_free, lhs
    else:
        batch, mine, other, other_free, shape = dn.rhs_batch_dims, rhs_free, lhs, lhs_free, rhs
    own: list[Expr] = [dim(i) for i in batch] + [dim(i) for i in mine]
    rest: list[Expr] = [sym(k) for k in range(len(other_free))]
    results = own + rest if operand_index == 0 else own[:len(batch)] + rest + own[len(batch):]
    return IndexingMap.create(shape, results, [(0, other[i] - 1) for i in other_free])


def _dot_numbers(instr: HloInstruction) -> DotDimensionNumbers:
    dn = instr.dot_dimension_numbers or DotDimensionNumbers()
    lhs, rhs = operand_dims(instr, 0), operand_dims(instr, 1)
    pairs = [(dn.lhs_batch_dims, dn.rhs_batch_dims),
             (dn.lhs_contracting_dims, dn.rhs_contracting_dims)]
    ok = all(len(a) == len(b) and all(0 <= i < len(lhs) and 0 <= j < len(rhs)
                                      and lhs[i] == rhs[j] for i, j in zip(a, b, strict=True))
             for a, b in pairs)
    require(ok, instr, "batch or contracting dims do not match")
    lhs_map, _ = dot_operand_maps(lhs, rhs, dn)
    require(tuple(b.size for b in lhs_map.dims) == output_dims(instr), instr,
            "the output shape does not fit the dimension numbers")
    return dn


@rule(OUTPUT_TO_INPUT, "dot")
def _dot_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    lhs_map, rhs_map = dot_operand_maps(operand_dims(instr, 0), operand_dims(instr, 1),
                                        _dot_numbers(instr))
    return [[lhs_map], [rhs_map]]


@rule(INPUT_TO_OUTPUT, "dot")
def _dot_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    return [[dot_output_map(operand_dims(instr, 0), operand_dims(instr, 1),
                            _dot_numbers(instr), operand_index)]]


# --- scaled-dot: dot(lhs, rhs) with per-block scales lhs_scale, rhs_scale -------------------


def _blocks(operand: Sequence[int], scale: Sequence[int], instr: HloInstruction) -> list[int]:
    require(len(scale) == len(operand) and all(s > 0 and n % s == 0
                                               for n, s in zip(operand, scale, strict=True)),
            instr, f"scale {list(scale)} does not divide operand {list(operand)}")
    return [n // s for n, s in zip(operand, scale, strict=True)]


def block_map(operand: Sequence[int], blocks: Sequence[int]) -> IndexingMap:
    """Operand index -> scale index: ``d floordiv block``."""
    return IndexingMap.create(operand, [FloorDiv(dim(i), b) if b > 1 else dim(i)
                                        for i, b in enumerate(blocks)])


def unblock_map(scale: Sequence[int], blocks: Sequence[int]) -> IndexingMap:
    """Scale index -> operand index: every element of its block."""
    ranges: list[tuple[int, int]] = []
    results = [dim(i) * b + var_or_zero(b, ranges) for i, b in enumerate(blocks)]
    return IndexingMap.create(scale, results, ranges)


@rule(OUTPUT_TO_INPUT, "scaled-dot")
def _scaled_dot_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    require(len(instr.operands) == 4, instr, "expected lhs, rhs, lhs_scale, rhs_scale")
    maps = _dot_out(instr, output_index)
    for k in (0, 1):
        blocks = _blocks(operand_dims(instr, k), operand_dims(instr, k + 2), instr)
        maps.append([compose(maps[k][0], block_map(operand_dims(instr, k), blocks))])
    return maps


@rule(INPUT_TO_OUTPUT, "scaled-dot")
def _scaled_dot_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    require(len(instr.operands) == 4, instr, "expected lhs, rhs, lhs_scale, rhs_scale")
    if operand_index < 2:
        return _dot_in(instr, operand_index)
    k = operand_index - 2
    blocks = _blocks(operand_dims(instr, k), operand_dims(instr, operand_index), instr)
    (to_output,), = _dot_in(instr, k)
    return [[compose(unblock_map(operand_dims(instr, operand_index), blocks), to_output)]]


# --- sort -----------------------------------------------------------------------------------


def sort_map(dims: Sequence[int], axis: int) -> IndexingMap:
    """Index -> the whole row along ``axis`` (either direction: a sorted element may come
    from, or go to, any position of its row)."""
    results = [sym(0) if i == axis else dim(i) for i in range(len(dims))]
    return IndexingMap.create(dims, results, [(0, dims[axis] - 1)])


def _sort_axis(instr: HloInstruction) -> int:
    dims = attribute(instr.dimensions, instr, "dimensions")
    shape = operand_dims(instr, 0)
    require(len(dims) == 1 and 0 <= dims[0] < len(shape)
            and all(operand_dims(instr, k) == shape for k in range(len(instr.operands))),
            instr, "expected one sort dimension and operands of one shape")
    return dims[0]


def sort_keys(instr: HloInstruction) -> frozenset[int]:
    """The operands a sort's comparator reads (parameters ``2k`` and ``2k + 1`` compare
    operand ``k``, :func:`symidx.hlo.facts.result_reads`): the keys, which alone decide
    the permutation. Every operand when the comparator is not there to read."""
    reads = result_reads(instr, "to_apply", 1)
    if reads is None:
        return frozenset(range(len(instr.operands)))
    return frozenset(p // 2 for p in reads[0] if 0 <= p < 2 * len(instr.operands))


@rule(OUTPUT_TO_INPUT, "sort")
def _sort_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    axis, keys = _sort_axis(instr), sort_keys(instr)
    return [_kept(sort_map(operand_dims(instr, k), axis), k == output_index or k in keys)
            for k in range(len(instr.operands))]


@rule(INPUT_TO_OUTPUT, "sort")
def _sort_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    axis, keys = _sort_axis(instr), sort_keys(instr)
    return [_kept(sort_map(operand_dims(instr, operand_index), axis),
                  operand_index == j or operand_index in keys)
            for j in range(num_outputs(instr))]
