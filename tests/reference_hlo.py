"""Reference semantics of HLO ops, for the brute-force twins of the indexing rules.

For one instruction and concrete values of its integer operands (offsets, gather indices),
:func:`dependencies` executes the op element by element on index tuples and returns, for
every output index, the set of elements of each operand that the element reads. Everything
here is written from the ops' definitions (XLA's operation semantics, StableHLO's spec for
convolution), one plain loop per output element, independently of :mod:`symidx.ops`.

Dependencies of padding: padded positions read the pad value (pad) or nothing
(reduce-window). A convolution's window position on padding or a dilation hole reads no input
element; the kernel element there multiplies a zero, which the two semantics tell apart:
under ``reads`` (the default) it is read (``0 * inf`` is NaN), under ``finite``
(:func:`finite_semantics`) it is not.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import re
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from symidx.hlo import HloInstruction, Shape, TupleShape

Index = tuple[int, ...]
Deps = dict[Index, list[set[Index]]]
Values = dict[int, np.ndarray]  # operand number -> its values (integer operands only)


#: Whether the references give dependences under the ``finite`` semantics (every input
#: finite) rather than ``reads`` (any IEEE value).
FINITE: contextvars.ContextVar[bool] = contextvars.ContextVar("finite", default=False)


@contextlib.contextmanager
def finite_semantics() -> Iterator[None]:
    """The references inside give dependences under the ``finite`` semantics."""
    token = FINITE.set(True)
    try:
        yield
    finally:
        FINITE.reset(token)


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

#: The elementwise opcodes of XLA's ``hlo_opcode.h``, by arity.
UNARY = ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "ceil", "convert",
         "copy", "cosh", "cosine", "count-leading-zeros", "erf", "exponential",
         "exponential-minus-one", "floor", "imag", "is-finite", "log", "log-plus-one",
         "logistic", "negate", "not", "popcnt", "real", "reduce-precision",
         "round-nearest-afz", "round-nearest-even", "rsqrt", "sign", "sine", "sinh", "sqrt",
         "tan", "tanh")
BINARY = ("add", "and", "atan2", "complex", "compare", "divide", "maximum", "minimum",
          "mulhi", "multiply", "or", "power", "remainder", "shift-left",
          "shift-right-arithmetic", "shift-right-logical", "stochastic-convert", "subtract",
          "xor", "map")
TERNARY = ("clamp", "select")
ELEMENTWISE = UNARY + BINARY + TERNARY


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


def _offset_reads(instr, first: int, o: Index, matters) -> list[set[Index]]:
    """The offset elements output ``o`` reads: offset ``k`` where ``matters(k, o)``."""
    count = len(instr.operands) - first
    if count == 1 and len(op_dims(instr, first)) == 1:
        return [{(k,) for k in range(op_dims(instr, first)[0]) if matters(k, o)}]
    return [{()} if matters(k, o) else set() for k in range(count)]


@reference("dynamic-slice")
def _dynamic_slice(instr, values, output):
    """Output ``o`` reads the operand at ``o + start`` (clamped starts); offset ``k`` when
    its value can change what is read: when the slice is narrower than the operand along
    dim ``k`` (else its clamped value is always 0)."""
    out, src = out_dims(instr), op_dims(instr, 0)
    starts = _starts(instr, values, 1, out, src)

    def matters(k, o):
        return out[k] < src[k]
    return {o: [{tuple(v + s for v, s in zip(o, starts, strict=True))}]
            + _offset_reads(instr, 1, o, matters) for o in box(out)}


@reference("dynamic-update-slice")
def _dynamic_update_slice(instr, values, output):
    """Output ``o`` reads the update at ``o - start`` inside the window, else the operand at
    ``o``; offset ``k`` when some value of it (the others as they are) puts ``o`` inside the
    window: it then decides which update element, if any, ``o`` takes. Along dim ``k``
    every position can be covered, unless the update spans the operand there (the clamped
    offset is always 0)."""
    out, upd = out_dims(instr), op_dims(instr, 1)
    starts = _starts(instr, values, 2, upd, out)

    def matters(k, o):
        if upd[k] == out[k]:
            return False
        return any(all(0 <= o[j] - (s if j == k else starts[j]) < upd[j]
                       for j in range(len(out)))
                   for s in range(out[k] - upd[k] + 1))
    deps = {}
    for o in box(out):
        local = tuple(v - s for v, s in zip(o, starts, strict=True))
        inside = all(0 <= v < n for v, n in zip(local, upd, strict=True))
        deps[o] = [set() if inside else {o}, {local} if inside else set()] \
            + _offset_reads(instr, 2, o, matters)
    return deps


@reference("gather")
def _gather(instr, values, output):
    """XLA's gather: batch dims of the output walk the indices' batch dims; the start of
    the slice comes from the index vector (clamped), or the batch index for batching dims;
    offset dims walk the slice's window dims. A component of the index vector is read when
    its clamped value can change: the slice is narrower than the operand along its dim."""
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
            if sizes[j] < operand[j]:  # else the clamped start is always 0
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


def _reducer_reads(instr, n: int, elements: Sequence[list[set[tuple[int, Index]]]]
                   ) -> list[list[set[Index]]]:
    """Per output of a variadic reduction of ``n`` components, per operand (N inputs, then
    N inits): the elements read, running the reducer over ``elements`` in order from the
    inits. An element gives, per component, the (operand, index) pairs its value reads;
    each result reads what the accumulators and elements it is computed from read (the
    reducer's parameters: N accumulators, then N elements). XLA leaves the order of the
    applications undefined: one order gives every order's reads when each result reads its
    own accumulator (every reducer the twins draw); for others (a reducer swapping its
    components) it is what that order reads, a lower bound."""
    params = _combiner_params(instr, n)
    acc: list[set[tuple[int, Index]]] = [{(n + j, ())} for j in range(n)]
    for element in elements:
        acc = [set().union(*(acc[p] if p < n else element[p - n] for p in params[j]))
               for j in range(n)]
    found = []
    for j in range(n):
        per_operand: list[set[Index]] = [set() for _ in range(2 * n)]
        for k, index in acc[j]:
            per_operand[k].add(index)
        found.append(per_operand)
    return found


def reduced_elements(instr, o: Index) -> Iterator[Index]:
    """The input elements a ``reduce`` combines into output element ``o``, in order."""
    src = op_dims(instr, 0)
    kept = [i for i in range(len(src)) if i not in instr.dimensions]
    for r in box([src[i] for i in instr.dimensions]):
        i = [0] * len(src)
        for p, d in enumerate(kept):
            i[d] = o[p]
        for p, d in enumerate(instr.dimensions):
            i[d] = r[p]
        yield tuple(i)


@reference("reduce")
def _reduce(instr, values, output):
    n = len(instr.operands) // 2
    return {o: _reducer_reads(instr, n, [[{(k, i)} for k in range(n)]
                                         for i in reduced_elements(instr, o)])[output]
            for o in box(out_dims(instr, output))}


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
    """A window position on an element combines it; one on padding or a base-dilation
    hole combines the init value (StableHLO pads the inputs with the inits)."""
    n = len(instr.operands) // 2
    src = op_dims(instr, 0)
    deps = {}
    for o in box(out_dims(instr, output)):
        under = dict(_window_reads(o, instr.window, src))
        elements = [[{(k, under[w])} if w in under else {(n + k, ())} for k in range(n)]
                    for w in box([d.size for d in instr.window])]
        deps[o] = _reducer_reads(instr, n, elements)[output]
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
        landing = dict(_window_reads(x, window, spatial_in))
        for w in (landing if FINITE.get() else box([d.size for d in window])):
            kw = tuple(d.size - 1 - p if d.window_reversal else p
                       for p, d in zip(w, window, strict=True))
            for i in range(cg):
                k = [0] * len(rhs)
                k[dn.kernel_input_feature_dimension] = i
                k[dn.kernel_output_feature_dimension] = f
                for t, j in enumerate(dn.kernel_spatial_dimensions):
                    k[j] = kw[t]
                right.add(tuple(k))
                if w not in landing:  # padding or a hole: no input element
                    continue
                si = landing[w]
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
    """The comparator decides the permutation from the operands whose parameters (``2k``
    and ``2k + 1`` for operand ``k``) it is computed from; output ``j`` at a position
    holds operand ``j``'s element the permutation puts there, which may be any of its row.
    So it reads its own operand's row and every compared operand's row."""
    axis = instr.dimensions[0]
    dims = op_dims(instr, 0)
    compared = {p // 2 for p in _combiner_params(instr, 1)[0]}
    return {o: [{o[:axis] + (p,) + o[axis + 1:] for p in range(dims[axis])}
                if k == output or k in compared else set()
                for k in range(len(instr.operands))] for o in box(out_dims(instr, output))}


# --- structure and collectives ------------------------------------------------------------


@reference("tuple")
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


@reference("scan")
def _scan(instr, values, output):
    """Run the loop as XLA's ScanExpander lowers it: step ``t`` (position ``t``, or
    ``N - 1 - t`` with ``is_reverse``) calls the body on the inputs' slices at that position
    and the carries (the inits at first); the body returns (outputs' slices.., carries..).
    Every element keeps the set of (operand, index) it reads; what one body result element
    reads of the body's parameters comes from running the body in the reference
    interpreter."""
    from reference_interpreter import execute  # it imports this module

    (body,) = instr.called_computations["to_apply"]
    carries = int(instr.attributes["num_carries"])
    n_in = len(instr.operands) - carries
    axis = instr.dimensions[0]
    reverse = instr.attributes.get("is_reverse", "false") == "true"
    shapes = instr.shape.elements if isinstance(instr.shape, TupleShape) else (instr.shape,)
    n_out = len(shapes) - carries
    length = (op_dims(instr, 0) if n_in else shapes[0].dims)[axis]
    run = execute(body, [])
    param_dims = [p.shape.dims for p in body.parameters]
    owner = {}  # code of a body parameter element -> (parameter, index)
    for p, dims in enumerate(param_dims):
        for i, index in enumerate(box(dims)):
            owner[run.offsets[(p, 0)] + i] = (p, index)
    # per carry, per element (row-major): the set of (operand, index) it reads
    carry = [[{(n_in + c, index)} for index in box(param_dims[n_in + c])]
             for c in range(carries)]
    stacked = [dict() for _ in range(n_out)]
    for t in range(length):
        position = length - 1 - t if reverse else t

        def reads(code, carry=carry, position=position):
            p, index = owner[code]
            if p >= n_in:
                return carry[p - n_in][ravel(index, param_dims[p])]
            return {(p, index[:axis] + (position,) + index[axis:])}

        results = [[set().union(*(reads(code) for code in codes))
                    for codes in run.reads[(body.root.name, r)]]
                   for r in range(n_out + carries)]
        for r in range(n_out):
            for i, index in enumerate(box(shapes[r].dims[:axis] + shapes[r].dims[axis + 1:])):
                stacked[r][index[:axis] + (position,) + index[axis:]] = results[r][i]
        carry = results[n_out:]
    final = stacked[output] if output < n_out else dict(
        zip(box(shapes[output].dims), carry[output - n_out], strict=True))
    deps = {}
    for o in box(out_dims(instr, output)):
        groups = _empty(instr)
        for k, index in final[o]:
            groups[k].add(index)
        deps[o] = groups
    return deps




# --- no reads, dynamic shapes, random numbers --------------------------------------------------


@reference("after-all", "get-dimension-size", "rng-get-and-update-state")
def _nothing(instr, values, output):
    """Tokens and dimension sizes carry no elements: nothing is read."""
    return {o: _empty(instr) for o in box(out_dims(instr, output))}


@reference("set-dimension-size")
def _set_dimension_size(instr, values, output):
    return {o: [{o}, {()}] for o in box(out_dims(instr))}


@reference("dynamic-reshape")
def _dynamic_reshape(instr, values, output):
    """For every choice of run-time output sizes (each within its bound, as many elements as
    the static operand), output ``o`` -- where it is an element -- is the element at the
    same row-major position of the operand. Every output element reads every size."""
    out, src = instr.shape, op_dims(instr, 0)
    total = int(np.prod(src))
    choices = [range(1, n + 1) if dyn else [n] for n, dyn in zip(out.dims, out.dynamic,
                                                                   strict=True)]
    deps: Deps = {o: [set()] + [{()} for _ in instr.operands[1:]] for o in box(out.dims)}
    for sizes in itertools.product(*choices):
        if int(np.prod(sizes)) != total:
            continue
        for o in box(sizes):
            deps[o][0].add(unravel(ravel(o, sizes), src))
    return deps


def _everything(instr) -> list[set[Index]]:
    return [set(box(op_dims(instr, k))) for k in range(len(instr.operands))]


@reference("rng", "rng-bit-generator")
def _random(instr, values, output):
    """Random numbers are a function of every parameter (state) element."""
    return {o: _everything(instr) for o in box(out_dims(instr, output))}


# --- topk, fft, batch norm -------------------------------------------------------------------


@reference("topk")
def _topk(instr, values, output):
    """The k largest of each last-dimension row: every element of the row is compared."""
    n = op_dims(instr, 0)[-1]
    return {o: [{o[:-1] + (i,) for i in range(n)}] for o in box(out_dims(instr, output))}


@reference("fft")
def _fft(instr, values, output):
    """Each frequency (sample) is a sum over every sample (frequency) of the transformed
    trailing dims."""
    src = op_dims(instr, 0)
    batch = len(src) - len(instr.attr_int_list("fft_length"))
    return {o: [{o[:batch] + t for t in box(src[batch:])}] for o in box(out_dims(instr))}


def _feature_slice(dims, f: int, c: int) -> set[Index]:
    return {i for i in box(dims) if i[f] == c}


@reference("batch-norm-training")
def _bn_training(instr, values, output):
    """y = scale * (x - mean) / sqrt(var + eps) + offset, mean and var over the feature's
    slice; outputs (y, mean, var)."""
    dims, f = op_dims(instr, 0), instr.attr_int("feature_index")
    deps = {}
    for o in box(out_dims(instr, output)):
        c = o[f] if output == 0 else o[0]
        x = _feature_slice(dims, f, c)
        deps[o] = [x, {(c,)}, {(c,)}] if output == 0 else [x, set(), set()]
    return deps


@reference("batch-norm-inference")
def _bn_inference(instr, values, output):
    """y = scale * (x - mean) / sqrt(variance + eps) + offset, with the given mean and
    variance: x at the same index, the per-feature operands at its feature."""
    f = instr.attr_int("feature_index")
    return {o: [{o}] + [{(o[f],)} for _ in range(4)] for o in box(out_dims(instr))}


@reference("batch-norm-grad")
def _bn_grad(instr, values, output):
    """Operands (x, scale, mean, var, dy). grad_x reads x and dy over the feature's slice
    (through the sums c and d) and scale, mean, var at the feature; grad_scale = sum of dy
    * (x - mean) / sqrt(var + eps); grad_offset = sum of dy."""
    dims, f = op_dims(instr, 0), instr.attr_int("feature_index")
    deps = {}
    for o in box(out_dims(instr, output)):
        c = o[f] if output == 0 else o[0]
        x, at = _feature_slice(dims, f, c), {(c,)}
        deps[o] = [[x, at, at, at, x], [x, set(), at, at, x],
                   [set(), set(), set(), set(), x]][output]
    return deps


# --- cholesky, triangular-solve ---------------------------------------------------------------


def _flag(instr, key: str) -> bool:
    return (instr.attr_str(key) or "false").lower() == "true"


@reference("cholesky")
def _cholesky(instr, values, output):
    """Cholesky-Banachiewicz on the lower triangle (lower=false: on the transpose of the
    upper one), each factor element carrying the set of elements of ``a`` it was computed
    from (``finite``, which takes a positive-definite operand as given). The other triangle
    of the output is implementation-defined: any element the op reads (its triangle of
    ``a``). Under ``reads`` every element reads that whole triangle: an operand that is not
    positive definite (a NaN anywhere in it) leaves the whole result undefined."""
    dims = op_dims(instr, 0)
    n, lower = dims[-1], _flag(instr, "lower")

    def a(p: int, q: int) -> Index:  # the element of a read as a_lower[p][q]
        return (p, q) if lower else (q, p)

    factor: dict[tuple[int, int], set[Index]] = {}
    for j in range(n):
        reads = {a(j, j)}
        for k in range(j):
            reads |= factor[(j, k)]
        factor[(j, j)] = reads
        for i in range(j + 1, n):
            reads = {a(i, j)} | factor[(j, j)]
            for k in range(j):
                reads |= factor[(i, k)] | factor[(j, k)]
            factor[(i, j)] = reads
    triangle = {a(p, q) for p in range(n) for q in range(p + 1)}
    deps = {}
    for o in box(dims):
        row, col = o[-2:]
        i, j = (row, col) if lower else (col, row)
        elements = factor[(i, j)] if j <= i and FINITE.get() else triangle
        deps[o] = [{o[:-2] + e for e in elements}]
    return deps


@reference("triangular-solve")
def _triangular_solve(instr, values, output):
    """Substitution on op(a) x = b (left_side) or x op(a) = b, each solved element of x
    carrying the elements of a and b it was computed from. With unit_diagonal the diagonal
    is taken as 1, not read."""
    b_dims = op_dims(instr, 1)
    m, n = b_dims[-2:]
    left, lower, unit = _flag(instr, "left_side"), _flag(instr, "lower"), \
        _flag(instr, "unit_diagonal")
    transposed = (instr.attr_str("transpose_a") or "NO_TRANSPOSE") != "NO_TRANSPOSE"
    op_lower = lower != transposed

    def op_a(p: int, q: int) -> Index:  # op(a)[p][q] as an element of a
        return (q, p) if transposed else (p, q)

    x: dict[tuple[int, int], tuple[set[Index], set[Index]]] = {}
    if left:  # op(a)[i][k] x[k][j]: row i uses the rows below (lower) or above it
        order = range(m) if op_lower else range(m - 1, -1, -1)
        for j in range(n):
            for i in order:
                used = [k for k in range(m) if (k < i if op_lower else k > i)]
                a_reads = {op_a(i, k) for k in used} | (set() if unit else {op_a(i, i)})
                b_reads = {(i, j)}
                for k in used:
                    a_reads |= x[(k, j)][0]
                    b_reads |= x[(k, j)][1]
                x[(i, j)] = (a_reads, b_reads)
    else:  # x[i][k] op(a)[k][j]: column j uses the columns after (lower) or before it
        order = range(n - 1, -1, -1) if op_lower else range(n)
        for i in range(m):
            for j in order:
                used = [k for k in range(n) if (k > j if op_lower else k < j)]
                a_reads = {op_a(k, j) for k in used} | (set() if unit else {op_a(j, j)})
                b_reads = {(i, j)}
                for k in used:
                    a_reads |= x[(i, k)][0]
                    b_reads |= x[(i, k)][1]
                x[(i, j)] = (a_reads, b_reads)
    deps = {}
    for o in box(b_dims):
        a_reads, b_reads = x[o[-2:]]
        deps[o] = [{o[:-2] + e for e in a_reads}, {o[:-2] + e for e in b_reads}]
    return deps


# --- ragged-dot ---------------------------------------------------------------------------------


@reference("ragged-dot")
def _ragged_dot(instr, values, output):
    """jax.lax.ragged_dot_general's three modes. The ragged lhs dim is cut into consecutive
    groups of group_sizes (one row of sizes per batch and outer coordinates, or one for
    all): (1) a free dim: its rows in group g use rhs group g; (2) a contracting dim: output
    group g sums over the contracting positions in group g; (3) a batch dim: a dot. Positions
    beyond the last group give zeros and read nothing; a position in group g depends on
    sizes 0..g (beyond the last group: on every size)."""
    g = instr.dot_dimension_numbers
    lhs, rhs, sizes = op_dims(instr, 0), op_dims(instr, 1), op_dims(instr, 2)
    ragged = instr.attr_int_list("lhs_ragged_dims")[0]
    group_dim = (instr.attr_int_list("rhs_group_dims") or (None,))[0]
    lb, rb, lc, rc = (g.lhs_batch_dims, g.rhs_batch_dims, g.lhs_contracting_dims,
                      g.rhs_contracting_dims)
    lf = [i for i in range(len(lhs)) if i not in lb and i not in lc]
    rf = [i for i in range(len(rhs)) if i not in rb and i not in rc and i != group_dim]
    mode = 2 if ragged in lc else 3 if ragged in lb else 1
    same_kind = lc if mode == 2 else lb if mode == 3 else lf
    outer = [i for i in same_kind if i < ragged]
    lead = list(lb) + outer if mode != 3 else outer

    def groups_of(li: Index) -> tuple[list[int], Index]:
        """The group sizes row for lhs index ``li`` and its first index in ``sizes``."""
        prefix = tuple(li[i] for i in lead) if len(sizes) > 1 else ()
        return [int(values[2][prefix + (t,)]) for t in range(sizes[-1])], prefix

    def group_at(li: Index) -> tuple[int | None, set[Index]]:
        row, prefix = groups_of(li)
        start = 0
        for t, size in enumerate(row):
            if start <= li[ragged] < start + size:
                return t, {prefix + (u,) for u in range(t + 1)}
            start += max(size, 0)
        return None, {prefix + (u,) for u in range(len(row))}

    deps = {}
    first = 1 if mode == 2 else 0
    for o in box(out_dims(instr)):
        left, right, read_sizes = set(), set(), set()
        for c in box([lhs[i] for i in lc]):
            li, ri = [0] * len(lhs), [0] * len(rhs)
            for t, (a, b) in enumerate(zip(lb, rb, strict=True)):
                li[a] = ri[b] = o[first + t]
            for t, a in enumerate(lf):
                li[a] = o[first + len(lb) + t]
            for t, b in enumerate(rf):
                ri[b] = o[first + len(lb) + len(lf) + t]
            for t, (a, b) in enumerate(zip(lc, rc, strict=True)):
                li[a] = ri[b] = c[t]
            group, needed = group_at(tuple(li))
            read_sizes |= needed
            if group is None or (mode == 2 and group != o[0]):
                continue
            if mode == 1:
                ri[group_dim] = group
            left.add(tuple(li))
            right.add(tuple(ri))
        deps[o] = [left, right, read_sizes]
    return deps


# --- scatter, select-and-scatter ----------------------------------------------------------


def _scatter_parts(instr):
    """(N, operand dims, indices dims, updates dims, dimension numbers, the update scatter
    dims, the indices batch dims, the operand window dims, the window size per operand
    dim)."""
    n = len(instr.operands) // 2
    operand, indices, updates = op_dims(instr, 0), op_dims(instr, n), op_dims(instr, n + 1)
    d = instr.scatter_dimension_numbers
    scatter_dims = [u for u in range(len(updates)) if u not in d.update_window_dims]
    indices_batch = [q for q in range(len(indices)) if q != d.index_vector_dim]
    window = [j for j in range(len(operand))
              if j not in d.inserted_window_dims and j not in d.input_batching_dims]
    size = [1] * len(operand)
    for k, j in enumerate(window):
        size[j] = updates[d.update_window_dims[k]]
    return n, operand, indices, updates, d, scatter_dims, indices_batch, window, size


def _vector_elements(d, indices, position: dict[int, int]) -> list[Index]:
    """The elements of the indices holding the index vector at scatter position
    ``position`` (indices dim -> value)."""
    count = 1 if d.index_vector_dim == len(indices) else indices[d.index_vector_dim]
    return [tuple(k if q == d.index_vector_dim else position[q] for q in range(len(indices)))
            for k in range(count)]


def _scatter_target(parts, u: Index, vector: Sequence[int]) -> Index | None:
    """XLA's scatter: update element ``u`` goes to start + offset, start from the index
    ``vector`` of its scatter position (and its batch coordinates), offset from its window
    dims; None when the window does not fit in the operand (the update is skipped)."""
    n, operand, indices, updates, d, scatter_dims, indices_batch, window, size = parts
    position = {q: u[scatter_dims[t]] for t, q in enumerate(indices_batch)}
    start = [0] * len(operand)
    for k, j in enumerate(d.scatter_dims_to_operand_dims):
        start[j] = vector[k]
    for j, q in zip(d.input_batching_dims, d.scatter_indices_batching_dims, strict=True):
        start[j] = position[q]
    if not all(0 <= start[j] <= operand[j] - size[j] for j in range(len(operand))):
        return None
    index = list(start)
    for k, j in enumerate(window):
        index[j] += u[d.update_window_dims[k]]
    return tuple(index)


def _combiner_params(instr, n: int) -> list[set[int]]:
    """Per result of the computation ``to_apply`` names (a scatter's combiner, a reducer,
    a comparator): the parameters its value is computed from."""
    (comp,) = instr.called_computations["to_apply"]

    def params(x) -> set[int]:
        if x.opcode == "parameter":
            return {x.parameter_number}
        if x.opcode == "get-tuple-element" and x.operands[0].opcode == "tuple":
            return params(x.operands[0].operands[x.tuple_index])
        return set().union(*(params(op) for op in x.operands))
    root = comp.root
    return [params(root)] if n == 1 else [params(leaf) for leaf in root.operands]


def _after(params: list[set[int]], n: int, output: int, times: int) -> set[int]:
    """The operands result ``output`` is computed from after the combiner ran ``times``
    times at an element (each run reads the current values the previous left)."""
    current = {output}
    for _ in range(times):
        current = {i for m in current for i in params[m] if i < n}
    return current


def _scatter_reads(instr, values: Values | None, output: int) -> Deps:
    """Output ``output`` at ``o``: the operands the combiner's result ``output`` is computed
    from after it ran once per update landing on ``o`` (no run: its own operand), and every
    update landing on ``o``; component ``k`` of an index vector when some value of it
    (the others as they are) lands its window on ``o``. With ``values`` None: the union over
    every value of the indices (any number of the updates that can land on ``o`` may)."""
    parts = _scatter_parts(instr)
    n, operand, indices, updates, d, scatter_dims, indices_batch, window, size = parts
    params = _combiner_params(instr, n)
    landed: dict[Index, set[Index]] = {}
    reachable: dict[Index, set[Index]] = {}  # operand index -> index elements
    for u in box(updates):
        position = {q: u[scatter_dims[t]] for t, q in enumerate(indices_batch)}
        elements = _vector_elements(d, indices, position)
        held = None if values is None else [_value(instr, values, n, e) for e in elements]
        for k, element in enumerate(elements):
            for value in range(-1, operand[d.scatter_dims_to_operand_dims[k]] + 1):
                for others in itertools.product(*(
                        range(-1, operand[j] + 1) if held is None else (held[i],)
                        for i, j in enumerate(d.scatter_dims_to_operand_dims))):
                    vector = list(others)
                    vector[k] = value
                    where = _scatter_target(parts, u, vector)
                    if where is not None:
                        reachable.setdefault(where, set()).add(element)
        if held is None:
            for candidate in itertools.product(*(range(-1, operand[j] + 1)
                                                 for j in d.scatter_dims_to_operand_dims)):
                where = _scatter_target(parts, u, candidate)
                if where is not None:
                    landed.setdefault(where, set()).add(u)
        else:
            target = _scatter_target(parts, u, held)
            if target is not None:
                landed.setdefault(target, set()).add(u)
    deps = {}
    for o in box(operand):
        hits = landed.get(o, set())
        runs = {len({tuple(u[s] for s in scatter_dims) for u in hits})}
        if values is None:
            runs = set(range(max(runs) + 1))
        read = set().union(*(_after(params, n, output, t) for t in runs))
        deps[o] = ([{o} if k in read else set() for k in range(n)]
                   + [set(reachable.get(o, set()))] + [set(hits)] * n)
    return deps


@reference("scatter")
def _scatter(instr, values, output):
    return _scatter_reads(instr, values, output)


def static_dependencies(instr: HloInstruction, output: int = 0) -> Deps:
    """:func:`dependencies` united over every value of the op's integer operands that is
    not a constant (scatter only): what a map means when its runtime variables range over
    their intervals."""
    assert instr.opcode == "scatter"
    indices = instr.operands[len(instr.operands) // 2]
    return _scatter_reads(instr, {} if indices.opcode == "constant" else None, output)


@reference("select-and-scatter")
def _select_and_scatter(instr, values, output):
    """Each window (one per source element) selects one of its operand elements -- which
    one depends on the values -- and adds its source element there; the output starts as
    init. So output ``o`` can be written by every window containing it, and depends on
    every operand element of those windows and on their source elements."""
    operand, source = op_dims(instr, 0), op_dims(instr, 1)
    members = {w: {i for _, i in _window_reads(w, instr.window, operand)} for w in box(source)}
    deps = {}
    for o in box(operand):
        windows = {w for w, elements in members.items() if o in elements}
        reads: set[Index] = set()
        for w in windows:
            reads |= members[w]
        deps[o] = [reads, windows, {()}]
    return deps


# --- custom calls ----------------------------------------------------------------------------

#: custom-call targets whose output is their operand (XLA's annotations).
PASS_THROUGH = ("Sharding", "xla.sdy.FuncResultSharding", "annotate_device_placement",
                "MoveToHost", "MoveToDevice", "LayoutConstraint")


@reference("custom-call")
def _custom_call(instr, values, output):
    """Annotations pass their operand through; TopK is the topk op; any other target may
    read anything (what a sound map must cover)."""
    target = instr.attr_str("custom_call_target")
    if target in PASS_THROUGH:
        return {o: [{o}] for o in box(out_dims(instr))}
    if target == "TopK":
        return _topk(instr, values, output)
    if target == "SliceToDynamic":  # the array, its sizes set: every size read
        return {o: [{o}] + [{()} for _ in instr.operands[1:]] for o in box(out_dims(instr))}
    if target == "PadToStatic":  # the same buffer at its bounds; the sizes: no element
        return {o: [{o} if output == 0 else set()] for o in box(out_dims(instr, output))}
    from reference_gpu import library_dependencies  # GPU library calls: their own module

    found = library_dependencies(instr, values, output)
    return _random(instr, values, output) if found is None else found


# --- collectives: per participant -------------------------------------------------------------

#: opcode -> fn(instr, group size, values, output) -> {(participant, output index): per
#: operand, the set of (participant, operand index) read}.
COLLECTIVE: dict[str, Callable] = {}


def collective(*opcodes: str) -> Callable:
    def register(fn: Callable) -> Callable:
        for op in opcodes:
            COLLECTIVE[op] = fn
        return fn
    return register


def collective_dependencies(instr: HloInstruction, size: int, values: Values | None = None,
                            output: int = 0) -> dict[tuple[int, Index], list[set]]:
    return COLLECTIVE[instr.opcode](instr, size, values or {}, output)


def _each(instr, size: int, output: int, reads: Callable) -> dict:
    """``reads(p, o)`` -> {operand number: set of (participant, index)} for every
    participant ``p`` and output index ``o``."""
    deps = {}
    for p in range(size):
        for o in box(out_dims(instr, output)):
            groups = _empty(instr)
            for k, elements in reads(p, o).items():
                groups[k] |= elements
            deps[(p, o)] = groups
    return deps


@collective("all-reduce")
def _all_reduce(instr, size, values, output):
    """Output k combines operand k of every participant at the same index."""
    return _each(instr, size, output, lambda p, o: {output: {(j, o) for j in range(size)}})


@collective("all-gather")
def _all_gather(instr, size, values, output):
    """The participants' operands concatenated along the gather dim, in rank order."""
    axis = instr.dimensions[0]
    n = op_dims(instr, output)[axis]
    return _each(instr, size, output, lambda p, o: {
        output: {(o[axis] // n, o[:axis] + (o[axis] % n,) + o[axis + 1:])}})


@collective("reduce-scatter")
def _reduce_scatter(instr, size, values, output):
    """All-reduce, then participant p keeps block p along the scatter dim."""
    axis = instr.dimensions[0]
    n = out_dims(instr, output)[axis]
    return _each(instr, size, output, lambda p, o: {
        output: {(j, o[:axis] + (o[axis] + p * n,) + o[axis + 1:]) for j in range(size)}})


@collective("all-to-all")
def _all_to_all(instr, size, values, output):
    """With a split dim: chunk i of participant j goes to participant i, placed as chunk j.
    Several arrays: operand i of participant j goes to participant i as output j."""
    if instr.dimensions is None:
        return _each(instr, size, output, lambda p, o: {p: {(output, o)}})
    axis = instr.dimensions[0]
    c = op_dims(instr, 0)[axis] // size
    return _each(instr, size, output, lambda p, o: {
        0: {(o[axis] // c, o[:axis] + (p * c + o[axis] % c,) + o[axis + 1:])}})


def _source_of(instr, p: int) -> int | None:
    pairs = [tuple(int(v) for v in m.split(","))
             for m in re.findall(r"\{(\d+,\d+)\}", instr.attributes["source_target_pairs"]
                                 .replace(" ", ""))]
    sources = [s for s, t in pairs if t == p]
    return sources[0] if sources else None


@collective("collective-permute")
def _collective_permute(instr, size, values, output):
    """Participant p receives the operand of its source in source_target_pairs; zeros
    when it has none."""
    def reads(p, o):
        source = _source_of(instr, p)
        return {} if source is None else {output: {(source, o)}}
    return _each(instr, size, output, reads)


@collective("collective-broadcast")
def _collective_broadcast(instr, size, values, output):
    """Every participant receives the operand of the group's first participant."""
    return _each(instr, size, output, lambda p, o: {output: {(0, o)}})


@collective("ragged-all-to-all")
def _ragged_all_to_all(instr, size, values, output):
    """Participant j sends rows input[input_offsets[i] : + send_sizes[i]] of its input to
    participant i, which writes them at output_offsets[i] (j's array) of its output; rows
    nobody writes keep the output operand. ``values[k][j]`` is participant j's operand k."""
    def reads(p, o):
        got: dict[int, set] = {}
        for j in range(size):
            start, count = int(values[2][j][p]), int(values[3][j][p])
            at = int(values[4][j][p])
            if at <= o[0] < at + count:
                got.setdefault(0, set()).add((j, (start + o[0] - at,) + o[1:]))
                for k in (2, 3, 4):
                    got.setdefault(k, set()).add((j, (p,)))
        if 0 not in got:
            got[1] = {(p, o)}
        return got
    return _each(instr, size, output, reads)
