"""Reference semantics of HLO ops, for the brute-force twins of the indexing rules.

For one instruction and concrete values of its integer operands (offsets, gather indices),
:func:`dependencies` executes the op element by element on index tuples and returns, for
every output index, the set of elements of each operand that the element reads. Everything
here is written from the ops' definitions (XLA's operation semantics, StableHLO's spec for
convolution), one plain loop per output element, independently of :mod:`symidx.ops`.

Dependencies of padding: padded positions read the pad value (pad) or nothing (reduce-window
and convolution inputs); a convolution kernel element counts as read by every window
position, padded or not (it is multiplied by the padding's zero).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from symidx.hlo import HloInstruction, Shape, TupleShape

Index = tuple[int, ...]
Deps = dict[Index, list[set[Index]]]
Values = dict[int, np.ndarray]  # operand number -> its values (integer operands only)


def box(dims: Sequence[int]) -> Iterator[Index]:
    return itertools.product(*(range(n) for n in dims))


def out_dims(instr: HloInstruction, output: int = 0) -> tuple[int, ...]:
    shape = instr.shape
    if isinstance(shape, TupleShape):
        shape = shape.elements[output]
    assert isinstance(shape, Shape)
    return shape.dims


def op_dims(instr: HloInstruction, k: int) -> tuple[int, ...]:
    shape = instr.operands[k].shape
    assert isinstance(shape, Shape)
    return shape.dims


def ravel(index: Sequence[int], dims: Sequence[int]) -> int:
    linear = 0
    for i, n in zip(index, dims, strict=True):
        linear = linear * n + i
    return linear


def unravel(linear: int, dims: Sequence[int]) -> Index:
    out = []
    for n in reversed(dims):
        out.append(linear % n)
        linear //= n
    return tuple(reversed(out))


def clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


REFERENCE: dict[str, Callable[[HloInstruction, Values, int], Deps]] = {}


def reference(*opcodes: str) -> Callable:
    def register(fn: Callable) -> Callable:
        for op in opcodes:
            REFERENCE[op] = fn
        return fn
    return register


def dependencies(instr: HloInstruction, values: Values | None = None, output: int = 0) -> Deps:
    """For each index of output ``output``: per operand, the elements read."""
    return REFERENCE[instr.opcode](instr, values or {}, output)


def _empty(instr: HloInstruction) -> list[set[Index]]:
    return [set() for _ in instr.operands]


def _value(instr: HloInstruction, values: Values, k: int, index: Index = ()) -> int:
    """The integer value of operand ``k`` at ``index`` (constants read from the literal)."""
    op = instr.operands[k]
    if op.opcode == "constant":
        v = op.literal
        for i in index:
            v = v[i]  # type: ignore[index]
        return int(v)  # type: ignore[arg-type]
    return int(values[k][index])


# --- elementwise and friends -----------------------------------------------------------------

ELEMENTWISE = ("add", "subtract", "multiply", "maximum", "compare", "select", "clamp",
               "exponential", "negate", "convert", "copy", "and", "atan2", "map", "tanh",
               "not", "power", "remainder", "reduce-precision", "complex", "abs")


@reference(*ELEMENTWISE)
def _elementwise(instr, values, output):
    deps = {}
    for o in box(out_dims(instr)):
        deps[o] = [{o} if op_dims(instr, k) else {()} for k in range(len(instr.operands))]
    return deps


@reference("bitcast-convert")
def _bitcast_convert(instr, values, output):
    a, b = instr.operands[0].shape.bit_width, instr.shape.bit_width
    deps = {}
    for o in box(out_dims(instr)):
        if a == b:
            deps[o] = [{o}]
        elif a > b:
            deps[o] = [{o[:-1]}]
        else:
            deps[o] = [{o + (k,) for k in range(b // a)}]
    return deps


@reference("broadcast")
def _broadcast(instr, values, output):
    return {o: [{tuple(o[j] for j in instr.dimensions)}] for o in box(out_dims(instr))}


@reference("transpose")
def _transpose(instr, values, output):
    perm = instr.dimensions
    deps = {}
    for o in box(out_dims(instr)):
        i = [0] * len(perm)
        for k, p in enumerate(perm):
            i[p] = o[k]
        deps[o] = [{tuple(i)}]
    return deps


@reference("reverse")
def _reverse(instr, values, output):
    dims = out_dims(instr)
    return {o: [{tuple(n - 1 - v if i in instr.dimensions else v
                       for i, (v, n) in enumerate(zip(o, dims, strict=True)))}]
            for o in box(dims)}


@reference("reshape")
def _reshape(instr, values, output):
    dims, src = out_dims(instr), op_dims(instr, 0)
    return {o: [{unravel(ravel(o, dims), src)}] for o in box(dims)}


def _physical(shape: Shape) -> tuple[int, ...]:
    return tuple(reversed(shape.layout_or_default.minor_to_major))


@reference("bitcast")
def _bitcast(instr, values, output):
    out, src = instr.shape, instr.operands[0].shape
    oo, so = _physical(out), _physical(src)
    deps = {}
    for o in box(out.dims):
        offset = ravel([o[k] for k in oo], [out.dims[k] for k in oo])
        physical = unravel(offset, [src.dims[k] for k in so])
        i = [0] * len(src.dims)
        for p, k in enumerate(so):
            i[k] = physical[p]
        deps[o] = [{tuple(i)}]
    return deps


# --- slicing ------------------------------------------------------------------------------


@reference("slice")
def _slice(instr, values, output):
    return {o: [{tuple(d.start + v * d.stride for v, d in zip(o, instr.slice, strict=True))}]
            for o in box(out_dims(instr))}


@reference("pad")
def _pad(instr, values, output):
    src = op_dims(instr, 0)
    deps = {}
    for o in box(out_dims(instr)):
        i = []
        for v, n, p in zip(o, src, instr.padding, strict=True):
            x = v - p.low
            if x >= 0 and x % (p.interior + 1) == 0 and x // (p.interior + 1) < n:
                i.append(x // (p.interior + 1))
            else:
                break
        deps[o] = [{tuple(i)}, set()] if len(i) == len(src) else [set(), {()}]
    return deps


@reference("concatenate")
def _concatenate(instr, values, output):
    axis = instr.dimensions[0]
    deps = {}
    for o in box(out_dims(instr)):
        groups = _empty(instr)
        start = 0
        for k in range(len(instr.operands)):
            n = op_dims(instr, k)[axis]
            if start <= o[axis] < start + n:
                groups[k].add(o[:axis] + (o[axis] - start,) + o[axis + 1:])
            start += n
        deps[o] = groups
    return deps


def _starts(instr, values, first: int, sizes: Sequence[int], big: Sequence[int]) -> list[int]:
    rank = len(big)
    if len(instr.operands) - first == 1 and len(op_dims(instr, first)) == 1:
        raw = [_value(instr, values, first, (i,)) for i in range(rank)]
    else:
        raw = [_value(instr, values, first + i) for i in range(rank)]
    return [clamp(v, 0, n - m) for v, m, n in zip(raw, sizes, big, strict=True)]


def _offset_reads(instr, first: int) -> list[set[Index]]:
    count = len(instr.operands) - first
    if count == 1 and len(op_dims(instr, first)) == 1:
        return [{(i,) for i in range(op_dims(instr, first)[0])}]
    return [{()} for _ in range(count)]


@reference("dynamic-slice")
def _dynamic_slice(instr, values, output):
    out, src = out_dims(instr), op_dims(instr, 0)
    starts = _starts(instr, values, 1, out, src)
    return {o: [{tuple(v + s for v, s in zip(o, starts, strict=True))}]
            + _offset_reads(instr, 1) for o in box(out)}


@reference("dynamic-update-slice")
def _dynamic_update_slice(instr, values, output):
    out, upd = out_dims(instr), op_dims(instr, 1)
    starts = _starts(instr, values, 2, upd, out)
    deps = {}
    for o in box(out):
        local = tuple(v - s for v, s in zip(o, starts, strict=True))
        inside = all(0 <= v < n for v, n in zip(local, upd, strict=True))
        deps[o] = [set() if inside else {o}, {local} if inside else set()] \
            + _offset_reads(instr, 2)
    return deps


@reference("gather")
def _gather(instr, values, output):
    """XLA's gather: batch dims of the output walk the indices' batch dims; the start of
    the slice comes from the index vector (clamped), or the batch index for batching dims;
    offset dims walk the slice's window dims."""
    g = instr.gather_dimension_numbers
    operand, indices, out = op_dims(instr, 0), op_dims(instr, 1), out_dims(instr)
    sizes = instr.slice_sizes
    batch_out = [d for d in range(len(out)) if d not in g.offset_dims]
    batch_idx = [d for d in range(len(indices)) if d != g.index_vector_dim]
    window = [d for d in range(len(operand))
              if d not in g.collapsed_slice_dims and d not in g.operand_batching_dims]
    deps = {}
    for o in box(out):
        batch = {q: o[batch_out[t]] for t, q in enumerate(batch_idx)}
        vector_reads = set()
        start = [0] * len(operand)
        for k, j in enumerate(g.start_index_map):
            element = tuple(k if q == g.index_vector_dim else batch[q]
                            for q in range(len(indices)))
            vector_reads.add(element)
            start[j] = clamp(int(values[1][element]), 0, operand[j] - sizes[j])
        for j, q in zip(g.operand_batching_dims, g.start_indices_batching_dims, strict=True):
            start[j] = batch[q]
        index = list(start)
        for k, j in enumerate(window):
            index[j] += o[g.offset_dims[k]]
        deps[o] = [{tuple(index)}, vector_reads]
    return deps


# --- reductions ---------------------------------------------------------------------------


@reference("reduce")
def _reduce(instr, values, output):
    n = len(instr.operands) // 2
    src = op_dims(instr, 0)
    kept = [i for i in range(len(src)) if i not in instr.dimensions]
    deps = {}
    for o in box(out_dims(instr, output)):
        reads = set()
        for r in box([src[i] for i in instr.dimensions]):
            i = [0] * len(src)
            for p, d in enumerate(kept):
                i[d] = o[p]
            for p, d in enumerate(instr.dimensions):
                i[d] = r[p]
            reads.add(tuple(i))
        deps[o] = [set(reads) for _ in range(n)] + [{()} for _ in range(n)]
    return deps


def _window_reads(o: Index, window, src: Sequence[int]) -> Iterator[tuple[Index, Index]]:
    """(window position, operand index) for every window position landing on an element."""
    for w in box([d.size for d in window]):
        i = []
        for v, p, d, n in zip(o, w, window, src, strict=True):
            x = v * d.stride + p * d.window_dilation - d.padding_low
            if x < 0 or x % d.base_dilation or x // d.base_dilation >= n:
                break
            i.append(x // d.base_dilation)
        else:
            yield w, tuple(i)


@reference("reduce-window")
def _reduce_window(instr, values, output):
    n = len(instr.operands) // 2
    src = op_dims(instr, 0)
    deps = {}
    for o in box(out_dims(instr, output)):
        reads = {i for _, i in _window_reads(o, instr.window, src)}
        deps[o] = [set(reads) for _ in range(n)] + [{()} for _ in range(n)]
    return deps


def _dot_reads(lhs, rhs, g, o):
    lb, rb = g.lhs_batch_dims, g.rhs_batch_dims
    lc, rc = g.lhs_contracting_dims, g.rhs_contracting_dims
    lf = [i for i in range(len(lhs)) if i not in lb and i not in lc]
    rf = [i for i in range(len(rhs)) if i not in rb and i not in rc]
    left, right = set(), set()
    for c in box([lhs[i] for i in lc]):
        li, ri = [0] * len(lhs), [0] * len(rhs)
        for t, (a, b) in enumerate(zip(lb, rb, strict=True)):
            li[a] = ri[b] = o[t]
        for t, a in enumerate(lf):
            li[a] = o[len(lb) + t]
        for t, b in enumerate(rf):
            ri[b] = o[len(lb) + len(lf) + t]
        for t, (a, b) in enumerate(zip(lc, rc, strict=True)):
            li[a] = ri[b] = c[t]
        left.add(tuple(li))
        right.add(tuple(ri))
    return left, right


@reference("dot")
def _dot(instr, values, output):
    lhs, rhs = op_dims(instr, 0), op_dims(instr, 1)
    return {o: list(_dot_reads(lhs, rhs, instr.dot_dimension_numbers, o))
            for o in box(out_dims(instr))}


@reference("scaled-dot")
def _scaled_dot(instr, values, output):
    lhs, rhs = op_dims(instr, 0), op_dims(instr, 1)
    blocks = [[n // s for n, s in zip(op_dims(instr, k), op_dims(instr, k + 2), strict=True)]
              for k in (0, 1)]
    deps = {}
    for o in box(out_dims(instr)):
        left, right = _dot_reads(lhs, rhs, instr.dot_dimension_numbers, o)
        scales = [{tuple(v // b for v, b in zip(i, blocks[k], strict=True)) for i in side}
                  for k, side in enumerate((left, right))]
        deps[o] = [left, right] + scales
    return deps


@reference("convolution")
def _convolution(instr, values, output):
    """StableHLO's convolution: windows of the padded, dilated input times the kernel, with
    feature groups and batch groups splitting input features / input batch."""
    dn, window = instr.dim_labels, instr.window or ()
    lhs, rhs, out = op_dims(instr, 0), op_dims(instr, 1), out_dims(instr)
    fg, bg = instr.feature_group_count, instr.batch_group_count
    cg = rhs[dn.kernel_input_feature_dimension]
    n_out_f = out[dn.output_feature_dimension]
    batch_per_group = lhs[dn.input_batch_dimension] // bg
    spatial_in = [lhs[i] for i in dn.input_spatial_dimensions]
    deps = {}
    for o in box(out):
        b, f = o[dn.output_batch_dimension], o[dn.output_feature_dimension]
        x = tuple(o[i] for i in dn.output_spatial_dimensions)
        in_b = (f // (n_out_f // bg)) * batch_per_group + b if bg > 1 else b
        first_feature = (f // (n_out_f // fg)) * cg if fg > 1 else 0
        left, right = set(), set()
        for w in box([d.size for d in window]):
            kw = tuple(d.size - 1 - p if d.window_reversal else p
                       for p, d in zip(w, window, strict=True))
            for i in range(cg):
                k = [0] * len(rhs)
                k[dn.kernel_input_feature_dimension] = i
                k[dn.kernel_output_feature_dimension] = f
                for t, j in enumerate(dn.kernel_spatial_dimensions):
                    k[j] = kw[t]
                right.add(tuple(k))
        for _, si in _window_reads(x, window, spatial_in):
            for i in range(cg):
                li = [0] * len(lhs)
                li[dn.input_batch_dimension] = in_b
                li[dn.input_feature_dimension] = first_feature + i
                for t, j in enumerate(dn.input_spatial_dimensions):
                    li[j] = si[t]
                left.add(tuple(li))
        deps[o] = [left, right]
    return deps


@reference("sort")
def _sort(instr, values, output):
    axis = instr.dimensions[0]
    dims = op_dims(instr, 0)
    return {o: [{o[:axis] + (p,) + o[axis + 1:] for p in range(dims[axis])}
                for _ in instr.operands] for o in box(out_dims(instr, output))}


# --- structure and collectives ------------------------------------------------------------


@reference("tuple", "all-reduce")
def _tuple(instr, values, output):
    deps = {}
    for o in box(out_dims(instr, output)):
        groups = _empty(instr)
        groups[output].add(o)
        deps[o] = groups
    return deps


@reference("get-tuple-element")
def _gte(instr, values, output):
    return {o: [{o}] for o in box(out_dims(instr))}


@reference("all-gather")
def _all_gather(instr, values, output):
    axis = instr.dimensions[0]
    n = op_dims(instr, output)[axis]
    deps = {}
    for o in box(out_dims(instr, output)):
        groups = _empty(instr)
        groups[output].add(o[:axis] + (o[axis] % n,) + o[axis + 1:])
        deps[o] = groups
    return deps
