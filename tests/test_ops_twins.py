"""Brute-force twins of every op rule, on random shapes and attributes (hypothesis).

For each op a strategy draws a small instruction (random shapes, attributes, layouts, offset
and index values). Two checks, by enumeration (see ``ops_check.py``):

* output-to-input: each output element reads exactly the map's image, runtime variables
  taking the values the op really uses (clamped offsets, gather indices);
* input-to-output is the inverse relation of output-to-input, operand by operand and output
  by output.

The reference semantics are in ``reference_hlo.py``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ops_check import (
    EXAMPLES,
    build,
    check,
    dim_size,
    lst,
    shapes,
    text,
    values_for,
    window_fields,
)
from reference_hlo import ELEMENTWISE, TERNARY, UNARY, dependencies
from symidx.ops import output_to_input

# --- elementwise ----------------------------------------------------------------------------


#: Element types an elementwise op needs: (operand types, output type); f32 otherwise.
TYPES = {
    "and": (["pred"] * 2, "pred"), "or": (["pred"] * 2, "pred"), "xor": (["pred"] * 2, "pred"),
    "not": (["pred"], "pred"), "compare": (["f32"] * 2, "pred"),
    "convert": (["f32"], "s32"), "complex": (["f32"] * 2, "c64"),
    "real": (["c64"], "f32"), "imag": (["c64"], "f32"), "is-finite": (["f32"], "pred"),
    "count-leading-zeros": (["s32"], "s32"), "popcnt": (["s32"], "s32"),
    "mulhi": (["s32"] * 2, "s32"), "shift-left": (["s32"] * 2, "s32"),
    "shift-right-arithmetic": (["s32"] * 2, "s32"), "shift-right-logical": (["s32"] * 2, "s32"),
    "stochastic-convert": (["f32", "u32"], "s8"), "select": (["pred", "f32", "f32"], "f32"),
}


@settings(max_examples=300)
@given(st.data())
def test_elementwise(data) -> None:
    dims = data.draw(shapes())
    op = data.draw(st.sampled_from(ELEMENTWISE))
    arity = 1 if op in UNARY else 3 if op in TERNARY else 2
    types, out = TYPES.get(op, (["f32"] * arity, "f32"))
    # XLA lets clamp's bounds and select's predicate be scalars (not select's branches)
    may_be_scalar = {"clamp": (0, 2), "select": (0,)}.get(op, ())
    scalar = [data.draw(st.booleans()) if k in may_be_scalar else False for k in range(arity)]
    params = [text(t, () if s else dims) for t, s in zip(types, scalar, strict=True)]
    args = ", ".join(f"p{k}" for k in range(arity))
    all_dims = ",".join(map(str, range(len(dims))))
    attrs = {"compare": ", direction=LT", "map": f", dimensions={{{all_dims}}}, to_apply=sum",
             "reduce-precision": ", exponent_bits=5, mantissa_bits=10"}.get(op, "")
    check(build(params, f"{text(out, dims)} {op}({args}){attrs}"))


@EXAMPLES
@given(shapes(), st.sampled_from([("f32", "s32", 0), ("f32", "u8", 4), ("u8", "f32", 4),
                                  ("f16", "f32", 2), ("f32", "s16", 2)]))
def test_bitcast_convert(dims, types) -> None:
    src, dst, ratio = types
    narrower = {"u8": 8, "s16": 16, "f16": 16}
    if ratio and narrower.get(dst, 32) < narrower.get(src, 32):
        in_dims, out_dims = dims, dims + (ratio,)
    elif ratio:
        in_dims, out_dims = dims + (ratio,), dims
    else:
        in_dims = out_dims = dims
    check(build([text(src, in_dims)], f"{text(dst, out_dims)} bitcast-convert(p0)"))


# --- shape ops --------------------------------------------------------------------------------


@EXAMPLES
@given(st.data())
def test_broadcast(data) -> None:
    out = data.draw(shapes(max_rank=3))
    kept = sorted(data.draw(st.permutations(range(len(out))))[:data.draw(
        st.integers(0, len(out)))])
    operand = tuple(out[j] for j in kept)
    dims = ",".join(map(str, kept))
    check(build([text("f32", operand)], f"{text('f32', out)} broadcast(p0), dimensions={{{dims}}}"))


@EXAMPLES
@given(st.data())
def test_transpose_and_reverse(data) -> None:
    dims = data.draw(shapes(min_rank=1))
    perm = data.draw(st.permutations(range(len(dims))))
    out = tuple(dims[p] for p in perm)
    check(build([text("f32", dims)], f"{text('f32', out)} transpose(p0), "
                                     f"dimensions={{{','.join(map(str, perm))}}}"))
    flipped = sorted(data.draw(st.permutations(range(len(dims))))[:data.draw(
        st.integers(0, len(dims)))])
    check(build([text("f32", dims)], f"{text('f32', dims)} reverse(p0), "
                                     f"dimensions={{{','.join(map(str, flipped))}}}"))


@st.composite
def two_shapes(draw) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes with the same element count (factors regrouped, size-1 dims sprinkled)."""
    factors = draw(st.lists(st.sampled_from([2, 3, 2, 4]), min_size=0, max_size=3))

    def shape() -> tuple[int, ...]:
        order = draw(st.permutations(factors))
        dims: list[int] = []
        for f in order:
            if dims and draw(st.booleans()):
                dims[-1] *= f
            else:
                dims.append(f)
        for _ in range(draw(st.integers(0, 2))):
            dims.insert(draw(st.integers(0, len(dims))), 1)
        return tuple(dims)

    a = shape()
    if draw(st.booleans()):  # same factor order: a plain reshape
        return a, tuple(d for d in a if d != 1) or (1,)
    return a, shape()


@EXAMPLES
@given(two_shapes())
def test_reshape(shapes_) -> None:
    src, dst = shapes_
    if np.prod(src) != np.prod(dst):
        src, dst = src, src[::-1]
    check(build([text("f32", src)], f"{text('f32', dst)} reshape(p0)"))


@EXAMPLES
@given(st.data())
def test_bitcast(data) -> None:
    src, dst = data.draw(two_shapes())
    if np.prod(src) != np.prod(dst):
        dst = src[::-1]
    src_layout = data.draw(st.permutations(range(len(src))))
    dst_layout = data.draw(st.permutations(range(len(dst))))
    check(build([text("f32", src, src_layout)], f"{text('f32', dst, dst_layout)} bitcast(p0)"))


# --- slicing ----------------------------------------------------------------------------------


@EXAMPLES
@given(st.data())
def test_slice(data) -> None:
    dims = data.draw(shapes(min_rank=1, sizes=st.integers(1, 7)))
    parts, out = [], []
    for n in dims:
        start = data.draw(st.integers(0, n - 1))
        limit = data.draw(st.integers(start + 1, n))
        stride = data.draw(st.integers(1, 3))
        parts.append(f"[{start}:{limit}:{stride}]")
        out.append(len(range(start, limit, stride)))
    check(build([text("f32", dims)], f"{text('f32', out)} slice(p0), slice={{{','.join(parts)}}}"))


@EXAMPLES
@given(st.data())
def test_pad(data) -> None:
    """Exact for the pad value too: it is read where the output holds padding, and
    nowhere (one known-empty map) by a pure crop or an operand of one element with only
    interior padding."""
    dims = data.draw(shapes(min_rank=1, max_rank=2))
    padding, out = [], []
    for n in dims:
        low, high, interior = (data.draw(st.integers(-2, 2)), data.draw(st.integers(-2, 2)),
                               data.draw(st.integers(0, 2)))
        size = low + high + (n - 1) * (interior + 1) + 1
        if size < 1:
            high += 1 - size
            size = 1
        padding.append((low, high, interior))
        out.append(size)
    root = (f"{text('f32', out)} pad(p0, p1), "
            f"padding={'x'.join(f'{lo}_{hi}_{i}' for lo, hi, i in padding)}")
    instr = build([text("f32", dims), "f32[]"], root)
    check(instr)
    # no output position holds padding (a crop, interior padding of one element): one
    # known-empty map
    unread = not any(reads[1] for reads in dependencies(instr).values())
    value = output_to_input(instr)[1]
    assert [m.is_known_empty for m in value] == [True] if unread \
        else not any(m.is_known_empty for m in value)
    if all(lo <= 0 and hi <= 0 and i == 0 for lo, hi, i in padding):
        assert unread


@EXAMPLES
@given(st.data())
def test_concatenate(data) -> None:
    dims = data.draw(shapes(min_rank=1))
    axis = data.draw(st.integers(0, len(dims) - 1))
    sizes = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    params = [text("f32", dims[:axis] + (n,) + dims[axis + 1:]) for n in sizes]
    out = dims[:axis] + (sum(sizes),) + dims[axis + 1:]
    args = ", ".join(f"p{k}" for k in range(len(sizes)))
    check(build(params, f"{text('f32', out)} concatenate({args}), dimensions={{{axis}}}"))


def _offsets(data, rank: int, big, first: int, limit) -> tuple[list[str], list[str], dict]:
    """Offset operands (parameters, constants, or one vector) and the values of parameters."""
    params, extra, values, args = [], [], {}, []
    if data.draw(st.integers(0, 4)) == 0:  # older HLO: one vector of offsets
        params.append(text("s32", (rank,)))
        values[first] = values_for(data.draw, (rank,), max(big))
        return params, extra, values, [f"p{first}"]
    for i in range(rank):
        k = first + i
        if data.draw(st.booleans()):
            extra.append(f"c{k} = s32[] constant({data.draw(st.integers(-2, big[i] + 2))})")
            args.append(f"c{k}")
        else:
            args.append(f"p{len(params) + first}")
            values[k] = np.array(data.draw(st.integers(-2, big[i] + 2)))
            params.append("s32[]")
    return params, extra, values, args


@EXAMPLES
@given(st.data())
def test_dynamic_slice(data) -> None:
    dims = data.draw(shapes(min_rank=1))
    sizes = [data.draw(st.integers(1, n)) for n in dims]
    params, extra, values, args = _offsets(data, len(dims), dims, 1, sizes)
    root = (f"{text('f32', sizes)} dynamic-slice(p0, {', '.join(args)}), "
            f"dynamic_slice_sizes={{{','.join(map(str, sizes))}}}")
    check(build([text("f32", dims)] + params, root, extra), values)


@EXAMPLES
@given(st.data())
def test_dynamic_update_slice(data) -> None:
    dims = data.draw(shapes(min_rank=1))
    sizes = [data.draw(st.integers(1, n)) for n in dims]
    params, extra, values, args = _offsets(data, len(dims), dims, 2, sizes)
    root = f"{text('f32', dims)} dynamic-update-slice(p0, p1, {', '.join(args)})"
    instr = build([text("f32", dims), text("f32", sizes)] + params, root, extra)
    check(instr, values)
    # the operand is read outside the updated window only: nowhere when it is all of it
    operand = output_to_input(instr)[0]
    assert [m.is_known_empty for m in operand] == [True] if list(sizes) == list(dims) \
        else not any(m.is_known_empty for m in operand)


@st.composite
def gather_case(draw):
    operand = draw(shapes(min_rank=1, max_rank=3))
    r = len(operand)
    batching = sorted(draw(st.sets(st.sampled_from(range(r)), max_size=1))) if r > 1 else []
    rest = [j for j in range(r) if j not in batching]
    start_map = list(draw(st.permutations(draw(st.lists(st.sampled_from(rest), min_size=1,
                                                         unique=True)))))
    collapsed = sorted(draw(st.sets(st.sampled_from(rest))))
    sizes = [1 if j in batching or j in collapsed else draw(st.integers(1, operand[j]))
             for j in range(r)]
    extra_batch = draw(st.lists(st.integers(1, 3), max_size=2))
    batch_sizes = [operand[j] for j in batching] + extra_batch
    order = draw(st.permutations(range(len(batch_sizes))))
    indices_batch = [batch_sizes[t] for t in order]  # indices batch dims, in order
    implicit = len(start_map) == 1 and draw(st.booleans())
    ivd = len(indices_batch) if implicit else draw(st.integers(0, len(indices_batch)))
    indices = list(indices_batch)
    if not implicit:
        indices.insert(ivd, len(start_map))
    batch_positions = [q for q in range(len(indices)) if q != ivd]
    indices_batching = [batch_positions[order.index(t)] for t in range(len(batching))]
    window = [j for j in range(r) if j not in collapsed and j not in batching]
    out_rank = len(indices_batch) + len(window)
    offset_dims = sorted(draw(st.permutations(range(out_rank)))[:len(window)])
    out, b, w = [], iter(indices_batch), iter(window)
    for o in range(out_rank):
        out.append(sizes[next(w)] if o in offset_dims else next(b))

    root = (f"{text('f32', out)} gather(p0, p1), offset_dims={lst(offset_dims)}, "
            f"collapsed_slice_dims={lst(collapsed)}, start_index_map={lst(start_map)}, "
            f"index_vector_dim={ivd}, slice_sizes={lst(sizes)}")
    if batching:
        root += (f", operand_batching_dims={lst(batching)}, "
                 f"start_indices_batching_dims={lst(indices_batching)}")
    values = {1: values_for(draw, tuple(indices), max(operand))}
    return build([text("f32", operand), text("s32", indices)], root), values


@settings(max_examples=200)
@given(gather_case())
def test_gather(case) -> None:
    instr, values = case
    check(instr, values)


# --- reductions ---------------------------------------------------------------------------


@EXAMPLES
@given(st.data())
def test_reduce(data) -> None:
    dims = data.draw(shapes(min_rank=1))
    reduced = data.draw(st.lists(st.sampled_from(range(len(dims))), unique=True))
    out = tuple(n for i, n in enumerate(dims) if i not in reduced)
    red = ",".join(map(str, reduced))
    if data.draw(st.booleans()):
        root = f"{text('f32', out)} reduce(p0, p1), dimensions={{{red}}}, to_apply=sum"
        check(build([text("f32", dims), "f32[]"], root))
    else:  # variadic: each output reads the components the reducer computes it from
        reducer, second = data.draw(st.sampled_from([("sum2", "f32"), ("argmax2", "s32")]))
        shape = f"({text('f32', out)}, {text(second, out)})"
        root = f"{shape} reduce(p0, p1, p2, p3), dimensions={{{red}}}, to_apply={reducer}"
        check(build([text("f32", dims), text(second, dims), "f32[]", f"{second}[]"], root))


@EXAMPLES
@given(st.data())
def test_reduce_window(data) -> None:
    dims = data.draw(shapes(min_rank=1, max_rank=2))
    window, out = window_fields(data.draw, dims)
    if data.draw(st.booleans()):
        root = f"{text('f32', out)} reduce-window(p0, p1), window={{{window}}}, to_apply=sum"
        check(build([text("f32", dims), "f32[]"], root))
    else:
        reducer, second = data.draw(st.sampled_from([("sum2", "f32"), ("argmax2", "s32")]))
        shape = f"({text('f32', out)}, {text(second, out)})"
        root = (f"{shape} reduce-window(p0, p1, p2, p3), window={{{window}}}, "
                f"to_apply={reducer}")
        check(build([text("f32", dims), text(second, dims), "f32[]", f"{second}[]"], root))


@st.composite
def dot_case(draw, scaled: bool = False):
    nb, nc, nl, nr = (draw(st.integers(0, 2 if k else 1)) for k in range(4))
    batch = draw(st.lists(dim_size, min_size=nb, max_size=nb))
    contract = draw(st.lists(st.sampled_from([2, 4]) if scaled else dim_size,
                             min_size=nc, max_size=nc))
    lfree = draw(st.lists(dim_size, min_size=nl, max_size=nl))
    rfree = draw(st.lists(dim_size, min_size=nr, max_size=nr))

    def side(free):
        roles = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] \
            + [("f", i) for i in range(len(free))]
        roles = draw(st.permutations(roles))
        size = {"b": batch, "c": contract, "f": free}
        dims = [size[r][i] for r, i in roles]
        pos = {r: [p for p, _ in sorted(((p, i) for p, (rr, i) in enumerate(roles) if rr == r),
                                        key=lambda t: t[1])] for r in "bcf"}
        return dims, pos

    (ld, lp), (rd, rp) = side(lfree), side(rfree)
    out = batch + [ld[p] for p in sorted(lp["f"])] + [rd[p] for p in sorted(rp["f"])]

    attrs = (f"lhs_batch_dims={lst(lp['b'])}, rhs_batch_dims={lst(rp['b'])}, "
             f"lhs_contracting_dims={lst(lp['c'])}, rhs_contracting_dims={lst(rp['c'])}")
    if not scaled:
        return build([text("f32", ld), text("f32", rd)], f"{text('f32', out)} dot(p0, p1), {attrs}")
    ls = [n // 2 if n % 2 == 0 and draw(st.booleans()) else n for n in ld]
    rs = [n // 2 if n % 2 == 0 and draw(st.booleans()) else n for n in rd]
    params = [text("f32", ld), text("f32", rd), text("f32", ls), text("f32", rs)]
    return build(params, f"{text('f32', out)} scaled-dot(p0, p1, p2, p3), {attrs}")


@EXAMPLES
@given(dot_case())
def test_dot(instr) -> None:
    check(instr)


@EXAMPLES
@given(dot_case(scaled=True))
def test_scaled_dot(instr) -> None:
    check(instr)


@st.composite
def conv_case(draw):
    ns = draw(st.integers(1, 2))
    fg, bg = draw(st.sampled_from([(1, 1), (2, 1), (1, 2), (3, 1)]))
    batch_per_group, cg = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    per_group = draw(st.integers(1, 2))
    features_out = per_group * fg * bg
    spatial = draw(st.lists(st.integers(1, 4), min_size=ns, max_size=ns))
    kernel = draw(st.lists(st.integers(1, 3), min_size=ns, max_size=ns))
    window, out_spatial = window_fields(draw, spatial, reversal=True, kernel=kernel)
    digits = [str(k) for k in range(ns)]
    lhs_l = "".join(draw(st.permutations(["b", "f"] + digits)))
    rhs_l = "".join(draw(st.permutations(["i", "o"] + digits)))
    out_l = "".join(draw(st.permutations(["b", "f"] + digits)))

    def dims(labels, sizes):
        return [sizes[c] if c in sizes else sizes[int(c)] for c in labels]

    lhs = dims(lhs_l, {"b": batch_per_group * bg, "f": cg * fg, **dict(enumerate(spatial))})
    rhs = dims(rhs_l, {"i": cg, "o": features_out, **dict(enumerate(kernel))})
    out = dims(out_l, {"b": batch_per_group, "f": features_out,
                       **dict(enumerate(out_spatial))})
    root = (f"{text('f32', out)} convolution(p0, p1), window={{{window}}}, "
            f"dim_labels={lhs_l}_{rhs_l}->{out_l}, feature_group_count={fg}, "
            f"batch_group_count={bg}")
    return build([text("f32", lhs), text("f32", rhs)], root)


@settings(max_examples=200)
@given(conv_case())
def test_convolution(instr) -> None:
    check(instr)


@settings(max_examples=100)
@given(conv_case())
def test_convolution_kernel_over_padding_or_holes_is_read_unless_finite(instr) -> None:
    """With edge padding or lhs dilation, a window position on padding or on a dilation hole
    multiplies the kernel element there by zero: read under ``reads`` (``0 * inf`` is NaN),
    not under ``finite`` (exact, both directions, both semantics)."""
    assume(any(w.padding_low > 0 or w.padding_high > 0 or w.base_dilation > 1
               for w in instr.window))
    check(instr)
    check(instr, assume_finite=True)


@EXAMPLES
@given(st.data())
def test_sort(data) -> None:
    dims = data.draw(shapes(min_rank=1))
    axis = data.draw(st.integers(0, len(dims) - 1))
    if data.draw(st.booleans()):
        root = f"{text('f32', dims)} sort(p0), dimensions={{{axis}}}, to_apply=lt"
        check(build([text("f32", dims)], root))
    else:  # the keys are the operands the comparator reads: 0, both, or 1
        comparator = data.draw(st.sampled_from(["lt2", "lt2_both", "lt2_second"]))
        shape = f"({text('f32', dims)}, {text('f32', dims)})"
        root = f"{shape} sort(p0, p1), dimensions={{{axis}}}, to_apply={comparator}"
        check(build([text("f32", dims)] * 2, root))


# --- structure and collectives ----------------------------------------------------------------


@EXAMPLES
@given(st.lists(shapes(max_rank=2), min_size=1, max_size=3), st.data())
def test_tuple_and_get_tuple_element(parts, data) -> None:
    params = [text("f32", d) for d in parts]
    shape = "(" + ", ".join(params) + ")"
    args = ", ".join(f"p{k}" for k in range(len(parts)))
    check(build(params, f"{shape} tuple({args})"))
    k = data.draw(st.integers(0, len(parts) - 1))
    root = f"{params[k]} get-tuple-element(t), index={k}"
    check(build(params, root, [f"t = {shape} tuple({args})"]))


