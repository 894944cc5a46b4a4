"""Are a fusion's reads coalesced? XLA's answer, per operand (XLA
``xla/service/gpu/model/coalescing_analysis.cc``, ``IsReadCoalescedPerOperand``).

For each fusion operand, the map from the first warp's threads to the operand's linear
physical offsets is built and judged as XLA judges it:

1. **Thread mapping.** XLA's loop emitter gives thread ``t`` of block 0 the elements
   ``t * unroll + s`` (``s < unroll``) of the output, in the output's physical order. The
   unroll factor is XLA's ``ComputeLoopFusionConfig``: 4, 2 or 1 (the largest dividing the
   element count) when the output has at least as many elements as the device has threads
   (``threads_per_core_limit * core_count``; XLA's test device, an RTX A6000: 1536 * 84) and
   no op in the fusion may prevent vectorization (reduce-window, sort, dot, sin, cos, tan,
   power, atan2, a concatenate of more than 10 operands, a variadic reduce); else 1. A
   fusion whose hero is a transpose of the minor dimension goes, as in XLA, to the transpose
   emitter, which reads the transpose's operand tile by tile through shared memory: the map
   to that operand is modelled as a warp reading 32 consecutive elements along the operand's
   physical minor dimension, its rows as a range variable (XLA's test: ``(thread_x)[s0] ->
   (thread_x + s0 * 128)``); operands not read through the hero are then not read by the
   hero's threads and count as coalesced, as in XLA.
2. **Composition.** Thread map, then the fusion's output-to-operand maps
   (:mod:`symidx.fusion`), then the operand's layout (logical index -> linear offset,
   :func:`symidx.lowering.layouts.shapes.offset_map`).
3. **Judgement** (XLA's ``IsIndexingCoalesced``): threads ``0..31`` only; runtime
   variables at the midpoint of their interval; every range variable but the last at its
   lower bound; the offset split into ``f(thread) + g(s)`` (a term in both: not coalesced);
   more than one constraint, or one that is not the offset itself: not coalesced; then the
   intervals of offsets read (XLA's ``FindContiguousIntervals``) cost ``ceil(bytes / 128)``
   transactions each, and the read is coalesced when the ideal count (all the elements in
   one stream) exceeds 90% of that.

Scalar operands, operands the fusion does not read, and maps known empty on the first warp
are coalesced; unknown indexing (an op without a rule) is not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from sympy import Add, Integer, Mul, Symbol

from symidx._arith import ceil_div
from symidx.core.expr import Expr, FloorDiv, Mod, add, dim, scale, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.simplify import compose, remove_unused_symbols, simplify
from symidx.errors import SymidxError
from symidx.hlo import HloInstruction, Shape, TupleShape
from symidx.lowering.layouts import shapes, xla

__all__ = [
    "RTX_A6000",
    "DeviceInfo",
    "OperandCoalescing",
    "coalescing_json",
    "coalescing_text",
    "fusion_coalescing",
    "is_indexing_coalesced",
]

WARP = 32
BYTES_PER_TRANSACTION = 128
COALESCED_THRESHOLD = 0.9
MAX_CONCAT_OPERANDS_FOR_UNROLLING = 10
MIN_TILED_TRANSPOSE_DIM = 16
_PREVENTS_VECTORIZATION = {"reduce-window", "sort", "dot", "sine", "cosine", "tan", "power",
                           "atan2"}
_PASS_THROUGH = {"bitcast", "copy", "convert", "negate", "abs", "exponential", "log", "sqrt",
                 "rsqrt", "tanh", "logistic", "not", "sign", "floor", "ceil",
                 "round-nearest-afz", "round-nearest-even", "cbrt", "expm1", "log-plus-one",
                 "is-finite", "real", "imag", "popcnt", "count-leading-zeros"}


@dataclass(frozen=True)
class DeviceInfo:
    """What the unroll factor depends on: threads per SM and the number of SMs."""

    threads_per_core_limit: int = 1536
    core_count: int = 84


RTX_A6000 = DeviceInfo()
"""XLA's ``TestGpuDeviceInfo::RTXA6000DeviceInfo``, the device of XLA's coalescing tests."""


@dataclass(frozen=True)
class OperandCoalescing:
    """The verdict for one fusion operand: ``coalesced``, the ``emitter`` whose threads
    read it, the thread -> offset ``maps`` judged (as text, one per path), and ``reason``
    when it is not coalesced (or is by default)."""

    operand: int
    name: str
    coalesced: bool
    emitter: str
    reason: str = ""
    maps: tuple[str, ...] = field(default=())

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"operand": self.operand, "name": self.name,
                               "coalesced": self.coalesced, "emitter": self.emitter}
        if self.reason:
            out["reason"] = self.reason
        out["maps"] = list(self.maps)
        return out


# ---------------------------------------------------------------------------------------------
# The fusion


def fusion_coalescing(instr: HloInstruction, device: DeviceInfo = RTX_A6000
                      ) -> list[OperandCoalescing]:
    """Per operand of the fusion ``instr``: are its reads coalesced (XLA's sense)?"""
    from symidx.core.syntax import print_map
    from symidx.fusion import Analysis, called_computation, grouped_output_to_input

    if instr.opcode != "fusion":
        raise SymidxError(f"--coalescing is for a fusion instruction; {instr.name} is a "
                          f"{instr.opcode}")
    comp = called_computation(instr)
    if comp is None:
        raise SymidxError(f"fusion {instr.name} has no fused computation")
    analysis = Analysis()
    outputs = _leaves(instr.shape)
    roots = _root_outputs(comp.root, len(outputs))
    vectorizable = not _may_prevent_vectorization(comp)
    per_operand: dict[int, list[tuple[IndexingMap, str]]] = {}
    unknown: dict[int, str] = {}
    emitters: dict[int, str] = {}
    parameters = {p.parameter_number: p for p in comp.parameters}
    for o, (root, out_shape) in enumerate(zip(roots, outputs)):
        hero = _transpose_hero(root)
        if hero is not None:
            start, emitter = hero.operands[0], "transpose"
            thread_map = _transpose_thread_map(hero)
        else:
            start, emitter = root, "loop"
            thread_map = _loop_thread_map(out_shape, device, vectorizable)
        grouped = grouped_output_to_input(comp, start, o if start is comp.root else 0,
                                          analysis=analysis)
        for k, param in parameters.items():
            assert k is not None
            reached = grouped.get((param.name, 0))
            if reached is None:
                continue
            emitters.setdefault(k, emitter)
            if reached.unsupported:
                unknown[k] = f"unknown indexing (unsupported op: {reached.unsupported})"
                continue
            layout_map = shapes.offset_map(_array(instr.operands[k].shape))
            for m in reached.maps:
                full = compose(compose(thread_map, m), layout_map)
                per_operand.setdefault(k, []).append((full, emitter))
    found = []
    for k, operand in enumerate(instr.operands):
        shape = operand.shape
        if isinstance(shape, TupleShape):
            found.append(OperandCoalescing(k, operand.name, False, "none",
                                           "a tuple operand"))
            continue
        if not shape.dims:
            found.append(OperandCoalescing(k, operand.name, True, emitters.get(k, "none"),
                                           "a scalar"))
            continue
        if k in unknown:
            found.append(OperandCoalescing(k, operand.name, False, emitters[k], unknown[k]))
            continue
        if k not in per_operand:
            found.append(OperandCoalescing(k, operand.name, True, "none",
                                           "not read by the hero's threads"))
            continue
        verdicts = [is_indexing_coalesced(m, shapes.element_size_in_bits(shape))
                    for m, _ in per_operand[k]]
        reason = next((why for ok, why, _ in verdicts if not ok), "")
        found.append(OperandCoalescing(
            k, operand.name, all(ok for ok, _, _ in verdicts), emitters[k], reason,
            tuple(print_map(sample, "xla") for _, _, sample in verdicts)))
    return found


def _leaves(shape: Shape | TupleShape) -> list[Shape]:
    if isinstance(shape, TupleShape):
        return [leaf for s in shape.elements for leaf in _leaves(s)]
    return [shape]


def _array(shape: Shape | TupleShape) -> Shape:
    if isinstance(shape, TupleShape):
        raise SymidxError("a tuple-shaped operand has no single layout")
    return shape


def _root_outputs(root: HloInstruction, count: int) -> list[HloInstruction]:
    """The instruction producing each output: the tuple's operands for a tuple root."""
    if root.opcode == "tuple":
        return list(root.operands)
    return [root] * count


def _may_prevent_vectorization(comp: Any) -> bool:
    """XLA's ``MayPreventVectorization``."""
    for i in comp.instructions:
        if i.opcode in _PREVENTS_VECTORIZATION:
            return True
        if i.opcode == "concatenate" and len(i.operands) > MAX_CONCAT_OPERANDS_FOR_UNROLLING:
            return True
        if i.opcode == "reduce" and isinstance(i.shape, TupleShape):
            return True
    return False


def _unroll_factor(elements: int, device: DeviceInfo, vectorizable: bool) -> int:
    """XLA's ``ComputeLoopFusionConfig`` unroll factor (see the module docstring)."""
    if not vectorizable or elements < device.threads_per_core_limit * device.core_count:
        return 1
    return next((f for f in (4, 2) if elements % f == 0), 1)


def _physical_to_logical(shape: Shape, digits: list[Expr]) -> list[Expr]:
    """``digits`` (major to minor in the physical order) as a logical index."""
    order = xla.major_to_minor(shape.layout_or_default.minor_to_major)
    logical: list[Expr] = [Integer(0)] * len(shape.dims)
    for position, d in enumerate(order):
        logical[d] = digits[position]
    return logical


def _loop_thread_map(out: Shape, device: DeviceInfo, vectorizable: bool) -> IndexingMap:
    """Thread ``d0`` in ``[0, 31]`` (unroll symbol ``s0``) -> output logical index."""
    n = math.prod(out.dims)
    unroll = _unroll_factor(n, device, vectorizable)
    linear = add([scale(unroll, dim(0)), sym(0)]) if unroll > 1 else dim(0)
    order = xla.major_to_minor(out.layout_or_default.minor_to_major)
    sizes = [out.dims[d] for d in order]
    digits: list[Expr] = []
    block = 1
    for size in reversed(sizes):
        q = FloorDiv(linear, block) if block > 1 else linear
        digits.append(Mod(q, size))
        block *= size
    digits.reverse()
    ranges = [(0, unroll - 1)] if unroll > 1 else []
    m = IndexingMap.create([WARP], _physical_to_logical(out, digits), ranges,
                           constraints=[(linear, (0, n - 1))])
    return simplify(m)


def _transpose_hero(root: HloInstruction) -> HloInstruction | None:
    """The transpose XLA's transpose emitter would be the hero of: reached from the root
    through unary elementwise ops, moving the minor dimension (after merging dimensions
    that stay together), both merged minor sides at least 16 elements."""
    instr = root
    while instr.opcode in _PASS_THROUGH and len(instr.operands) == 1:
        instr = instr.operands[0]
    if instr.opcode != "transpose" or instr.dimensions is None:
        return None
    src = _array(instr.operands[0].shape)
    perm = list(instr.dimensions)
    groups: list[list[int]] = []
    for d in perm:  # output order of input dims; merge runs of consecutive input dims
        if groups and groups[-1][-1] + 1 == d:
            groups[-1].append(d)
        else:
            groups.append([d])
    if len(groups) < 2:
        return None
    last_input_group = max(groups, key=lambda g: g[-1])
    if groups[-1] is last_input_group:
        return None  # the minor dimension stays minor: a loop fusion
    in_minor = math.prod(src.dims[d] for d in last_input_group)
    out_minor = math.prod(src.dims[d] for d in groups[-1])
    if min(in_minor, out_minor) < MIN_TILED_TRANSPOSE_DIM:
        return None
    return instr


def _transpose_thread_map(hero: HloInstruction) -> IndexingMap:
    """Thread ``d0`` reads element ``d0`` of a row of the transpose's operand, row ``s0``
    (the next physical dimension), the others at 0."""
    src = _array(hero.operands[0].shape)
    order = xla.major_to_minor(src.layout_or_default.minor_to_major)
    sizes = [src.dims[d] for d in order]
    digits: list[Expr] = [Integer(0)] * len(sizes)
    digits[-1] = dim(0)
    ranges = []
    if len(sizes) > 1:
        digits[-2] = sym(0)
        ranges = [(0, min(sizes[-2], 8) - 1)]
    return IndexingMap.create([WARP], _physical_to_logical(src, digits), ranges,
                              constraints=[(dim(0), (0, sizes[-1] - 1))])


# ---------------------------------------------------------------------------------------------
# XLA's judgement of one map


def is_indexing_coalesced(m: IndexingMap, element_bits: int
                          ) -> tuple[bool, str, IndexingMap]:
    """XLA's ``IsIndexingCoalesced`` for a map thread ``d0`` [range vars] -> one linear
    offset: ``(coalesced, reason if not, the sample map judged)``."""
    if m.is_undefined:
        return False, "unknown indexing", m
    if m.num_results == 0 or m.is_known_empty:
        return True, "", m
    m = _fix_runtime_vars(m)
    sample, _ = remove_unused_symbols(simplify(_first_warp(m)))
    if sample.is_known_empty:
        return True, "", sample
    sample = _outer_loops_at_start(sample)
    (result,) = sample.results
    split = _partition(result, sample)
    if split is None:
        return False, "a term depends on both the thread and the loop variable", sample
    if len(sample.constraints) > 1:
        return False, "more than one constraint", sample
    if sample.constraints and sample.constraints[0][0] != result:
        return False, "a constraint other than the offset's own bounds", sample
    intervals = _contiguous_intervals(split, sample)
    if _estimate(intervals, element_bits):
        return True, "", sample
    return False, (f"{len(intervals)} separate interval(s) of offsets for one warp"), sample


def _fix_runtime_vars(m: IndexingMap) -> IndexingMap:
    """Runtime variables at the midpoint of their interval."""
    if not m.rts:
        return m
    fixed = {v: Integer((r.bounds.lo + r.bounds.hi) // 2) for v, r in zip(m.rt_vars, m.rts)}
    results, constraints = m.substitute(fixed)
    return IndexingMap.create(m.dims, results, m.ranges, (), constraints)


def _first_warp(m: IndexingMap) -> IndexingMap:
    """``m`` on threads ``0..31`` of the first warp: dimension 0 is the thread, the others
    (other thread or block ids) at 0."""
    zeros = {v: Integer(0) for v in m.dim_vars[1:]}
    results, constraints = m.substitute(zeros)
    lo, hi = m.dims[0].lo, m.dims[0].hi
    return IndexingMap.create([(max(lo, 0), min(hi, WARP - 1))], results, m.ranges, (),
                              constraints)


def _outer_loops_at_start(m: IndexingMap) -> IndexingMap:
    """Every range variable but the last at its lower bound (XLA: the last is the innermost
    loop)."""
    if m.num_ranges <= 1:
        return m
    fixed = {v: Integer(b.lo) for v, b in zip(m.range_vars[:-1], m.ranges[:-1])}
    last = m.range_vars[-1]
    results, constraints = m.substitute({**fixed, last: sym(0)})
    fixed_map, _ = remove_unused_symbols(simplify(IndexingMap.create(
        m.dims, results, [m.ranges[-1]], (), constraints)))
    return fixed_map


@dataclass(frozen=True)
class _Split:
    of_thread: Expr
    of_loop: Expr


def _partition(expr: Expr, m: IndexingMap) -> _Split | None:
    """``expr`` as ``f(d0) + g(s0)``; constant terms belong to neither (as in XLA)."""
    thread = m.dim_vars[0]
    loop = m.range_vars[0] if m.num_ranges else None
    f: list[Expr] = []
    g: list[Expr] = []
    for term in Add.make_args(expr):
        free = term.free_symbols
        on_thread, on_loop = thread in free, loop is not None and loop in free
        if on_thread and on_loop:
            return None
        if on_thread:
            f.append(term)
        elif on_loop:
            g.append(term)
    return _Split(add(f) if f else Integer(0), add(g) if g else Integer(0))


def _multiplier(f: Expr, thread: Symbol) -> int | None:
    """``c`` when ``f`` is ``c * thread``."""
    if f == thread:
        return 1
    if isinstance(f, Mul) and len(f.args) == 2 and thread in f.args:
        c = f.args[0] if f.args[1] == thread else f.args[1]
        if c.is_Integer:
            return int(c)
    return None


def _contiguous_intervals(split: _Split, m: IndexingMap) -> list[tuple[int, int]]:
    """XLA's ``FindContiguousIntervals``."""
    thread = m.dim_vars[0]
    loop = m.range_vars[0] if m.num_ranges else None
    loop_is_s = loop is not None and split.of_loop == loop
    c = _multiplier(split.of_thread, thread)
    if c == 1 or c == -1:
        return [(0, WARP - 1)]
    if c is not None:
        if loop_is_s:
            lo, hi = m.ranges[0].lo, m.ranges[0].hi
            count = hi - lo + 1
            if count >= abs(c):
                return [(0, c * (WARP - 1) + count - 1)]
            return [(lo + c * i, hi + c * i) for i in range(WARP)]
        return [(c * i, c * i) for i in range(WARP)]
    values = sorted({_evaluate(split.of_thread, thread, t)
                     for t in range(m.dims[0].lo, m.dims[0].hi + 1)})
    intervals: list[tuple[int, int]] = []
    for v in values:
        if intervals and v == intervals[-1][1] + 1:
            intervals[-1] = (intervals[-1][0], v)
        else:
            intervals.append((v, v))
    if not loop_is_s:
        return intervals
    length = m.ranges[0].hi - m.ranges[0].lo
    merged: list[tuple[int, int]] = []
    for lo, hi in intervals:
        if merged and merged[-1][1] >= lo - 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi + length))
        else:
            merged.append((lo, hi + length))
    return merged


def _evaluate(e: Expr, thread: Symbol, t: int) -> int:
    from symidx.core.expr import compile_expr

    return int(compile_expr(e, [thread])([t]))


def _estimate(intervals: list[tuple[int, int]], element_bits: int) -> bool:
    """XLA's ``EstimateCoalescingViaMemoryTransactionsCount``."""
    size = max(1, ceil_div(element_bits, 8))
    transactions = sum(ceil_div((hi - lo + 1) * size, BYTES_PER_TRANSACTION)
                       for lo, hi in intervals)
    if transactions == 0:
        return True
    total = sum(hi - lo + 1 for lo, hi in intervals)
    ideal = ceil_div(total * size, BYTES_PER_TRANSACTION)
    return ideal > transactions * COALESCED_THRESHOLD


# ---------------------------------------------------------------------------------------------
# Output


def coalescing_text(instr: HloInstruction, found: list[OperandCoalescing]) -> str:
    lines = [f"coalescing of {instr.name} (XLA's IsReadCoalescedPerOperand):"]
    for c in found:
        verdict = "coalesced" if c.coalesced else "not coalesced"
        why = f" ({c.reason})" if c.reason else ""
        lines.append(f"operand {c.operand} {c.name}: {verdict}, {c.emitter} emitter{why}")
        lines += [f"  {text}" for text in c.maps]
    return "\n".join(lines)


def coalescing_json(instr: HloInstruction, found: list[OperandCoalescing]) -> dict[str, Any]:
    return {"instruction": instr.name, "operands": [c.as_json() for c in found]}
