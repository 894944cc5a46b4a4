"""GPU library calls: the ``custom-call`` targets XLA's GPU compiler and TransformerEngine
emit for matmuls, convolutions and attention, read from their ``backend_config`` and the
instruction's own attributes. :mod:`symidx.ops.custom_call` dispatches to
:func:`library_call`; a call whose shapes or configuration do not fit what is described
here stays a labelled over-approximation (every output element reads everything).

**cuBLAS** (``__cublas$gemm``, ``__cublas$lt$matmul``, ``__cublas$lt$matmul$f8``; facts from
XLA's ``GemmBackendConfig``): ``D = alpha * dot(A, B) + beta * C (+ bias)``, then an
elementwise activation (``epilogue``). Operands ``A, B[, C][, a_scale, b_scale, c_scale,
d_scale][, bias]`` (scales for ``$f8``, bias when the epilogue names one: a vector along the
output's last dimension). ``dot_dimension_numbers`` give the dot's maps (the ``dot`` rule's
functions). ``C`` is read at the output's index only when ``beta != 0`` (BLAS does not read
``C`` when ``beta = 0``). Outputs: ``D``, then ``aux`` for a ``*_AUX`` epilogue (the
pre-activation value, read like ``D``), ``amax`` for ``damax_output`` (a scalar reading
every element ``D`` reads), and a workspace (scratch: labelled, every element read).

**cuDNN convolutions** (``__cudnn$convForward``, ``__cudnn$convBiasActivationForward``,
``__cudnn$convBackwardInput``, ``__cudnn$convBackwardFilter``; facts from XLA's
``gpu_conv_rewriter``/``cudnn_conv_runner``): ``window``, ``dim_labels`` and
``feature_group_count`` on the instruction describe the *forward* convolution. Forward: the
``convolution`` rule (:mod:`symidx.ops.convolution`); the fused form adds ``bias`` (read at
the output feature) and a side input (read at the output index) before an elementwise
activation. Backward input (operands ``d_out, filter``, result the forward input's shape):
``d_in[x]`` sums ``d_out[o] * filter[w]`` over the output positions ``o`` whose window puts
position ``w`` on ``x``. Backward filter (operands ``input, d_out``, result the filter's
shape): ``d_filter[w]`` sums ``input[x] * d_out[o]`` over batch and output positions, ``x``
under window position ``w`` of ``o``. Padding and dilation holes take no part in either
sum. The last output leaf, a ``u8`` scratch buffer, is labelled.

**TransformerEngine fused attention** (``te_fused_attn_forward_ffi``,
``te_fused_attn_backward_ffi``; facts from TransformerEngine's ``fused_attn.h``, its JAX
FFI bindings and its tests). Forward operands ``q, k, v, bias, seed, q_cu_seqlens,
kv_cu_seqlens, ...`` (the rest unused by the ``bshd``/``sbhd`` formats), outputs ``O,
softmax_aux, rng_state, workspace``; backward operands ``q, k, v, bias, softmax_aux,
rng_state, O, dO, q_cu_seqlens, kv_cu_seqlens, ...``, outputs ``dq, dk, dv, dbias,
workspace`` (packed layouts pack their gradients as their inputs). ``qkv_layout`` (0-9:
``sb3hd`` ... ``bshd_bshd_bshd``) says where q, k and v live; head ``h`` of q uses head
``h floordiv (attn_heads / num_gqa_groups)`` of k and v. ``O[b, i, h, e]`` reads the whole
row ``q[b, i, h, :]``, ``k[b, j, g, :]`` and ``v[b, j, g, e]`` for every kv position ``j``
the mask allows; ``softmax_aux[b, h, i, 0]`` the same without ``v``. ``mask_type``: no mask,
padding (valid rows ``i < q_len[b]`` and columns ``j < kv_len[b]``, the lengths being
``cu_seqlens[b + 1] - cu_seqlens[b]``, runtime variables read from the cu_seqlens operands),
causal ``j <= i`` (top left) or ``j - i <= kv_len - q_len`` (bottom right), and the padded
forms; a sliding window ``i - left <= j <= i + right``. Padded rows of ``O`` and of the
gradients are zero (TransformerEngine's tests check it): they read only the lengths. The
backward pass recomputes the probabilities from ``softmax_aux`` (cuDNN's flash-attention
algorithm: ``P = exp(S - stats)``, ``dS = P * (dP - rowsum(dO * O))``), so ``dq`` and ``dk``
read ``q, k, v, O, dO, softmax_aux`` over the allowed pairs, and ``dv[b, j, g, e]`` reads
``q, k[b, j, g, :], softmax_aux`` and ``dO[b, i, h, e]`` only. Labelled: ``rng_state``
(derived from the seed), the workspace, ``softmax_aux`` of padded rows (unspecified: said
to read as a valid row), and input-to-output maps of padding masks (the run-time lengths
dropped). Dropout, a backward bias, and the ragged ``thd`` layouts are not modelled. A row
whose sequence has no kv element at all (``kv_len = 0``; or a kv column when ``q_len = 0``)
reads nothing; the rule says so with a range variable whose only constraint involves the
lengths, which :func:`symidx.simplify.remove_unused_symbols` drops (its maps then claim
that row's reads: a superset, sound, not labelled). Where the mask leaves every row some
column (and every column some row) without run-time lengths, that variable is left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from sympy import Integer

from symidx.errors import HloShapeError
from symidx.expr import Expr, FloorDiv, Mod, dim, rt, substitute, sym
from symidx.hlo import DotDimensionNumbers, HloInstruction, Shape
from symidx.hlo.facts import require
from symidx.hlo.leaves import leaves
from symidx.hlo.values import value_source
from symidx.indexing_map import IndexingMap, RuntimeVar
from symidx.interval import Interval
from symidx.ops._window import operand_term, output_term
from symidx.ops.basic import every_element, from_scalar, identity, to_scalar
from symidx.ops.convolution import (
    ConvGeometry,
    convolution_lhs_output_map,
    convolution_operand_maps,
    convolution_rhs_output_map,
)
from symidx.ops.reduction import dot_operand_maps, dot_output_map

__all__ = ["LibraryCall", "library_call", "GEMM_TARGETS", "CONV_TARGETS", "ATTENTION_TARGETS",
           "invert", "mlir_attributes"]

Groups = list[list[IndexingMap]]
Dims = tuple[int, ...]

GEMM_TARGETS = frozenset({"__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8"})
FORWARD, FUSED, BACKWARD_INPUT, BACKWARD_FILTER = "forward", "fused", "input", "filter"
CONV_TARGETS = {"__cudnn$convForward": FORWARD, "__cudnn$convBiasActivationForward": FUSED,
                "__cudnn$convBackwardInput": BACKWARD_INPUT,
                "__cudnn$convBackwardFilter": BACKWARD_FILTER}
ATTENTION_TARGETS = frozenset({"te_fused_attn_forward_ffi", "te_fused_attn_backward_ffi"})


class LibraryCall:
    """A recognised library call: per output leaf, the maps to each operand
    (:meth:`reads`); per operand, the maps to each output leaf (:meth:`reached`); and per
    output leaf why its maps over-approximate (:meth:`reason`, None when exact)."""

    target: str

    def reads(self, output: int) -> Groups:
        raise NotImplementedError

    def reached(self, operand: int) -> Groups:
        raise NotImplementedError

    def reason(self, output: int | None, backward: bool = True) -> str | None:
        """Why the maps of output leaf ``output`` (None: any) over-approximate, output-to-
        input (``backward``) or input-to-output."""
        return None


def library_call(instr: HloInstruction) -> LibraryCall | None:
    """The library call ``instr`` is, or None (not a library target, or one whose shapes
    or configuration do not fit its description: it stays a labelled over-approximation)."""
    target = instr.attr_str("custom_call_target") or ""
    if target not in GEMM_TARGETS and target not in CONV_TARGETS \
            and target not in ATTENTION_TARGETS:
        return None
    return _call(instr)


@lru_cache(maxsize=64)  # a few calls at a time (they keep their module alive)
def _call(instr: HloInstruction) -> LibraryCall | None:
    target = instr.attr_str("custom_call_target") or ""
    if any(not isinstance(op.shape, Shape) for op in instr.operands):
        return None
    try:
        if target in GEMM_TARGETS:
            return _Gemm(instr, target)
        if target in CONV_TARGETS:
            return _Conv(instr, target)
        return _Attention(instr, target)
    except (HloShapeError, KeyError, TypeError, ValueError):
        return None


def _dims(instr: HloInstruction, k: int) -> Dims:
    shape = instr.operands[k].shape
    assert isinstance(shape, Shape)
    return shape.dims


def _out_leaves(instr: HloInstruction) -> list[Shape]:
    return list(leaves(instr.shape))


def _config(instr: HloInstruction, key: str) -> dict[str, Any]:
    """``backend_config`` JSON, the part under ``key`` when nested (newer XLA wraps it)."""
    config = instr.backend_config_json()
    if not isinstance(config, dict):
        return {}
    inner = config.get(key)
    return inner if isinstance(inner, dict) else config


def _ints(values: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in values or ())


def _is_workspace(shape: Shape) -> bool:
    return len(shape.dims) == 1 and shape.element_type in ("s8", "u8")


# --- cuBLAS -----------------------------------------------------------------------------------

_EPILOGUES = frozenset({"DEFAULT", "BIAS", "RELU", "BIAS_RELU", "GELU", "GELU_AUX",
                        "BIAS_GELU", "BIAS_GELU_AUX", "SILU", "BIAS_SILU"})


class _Gemm(LibraryCall):
    def __init__(self, instr: HloInstruction, target: str) -> None:
        self.target = target
        cfg = _config(instr, "gemm_backend_config")
        dn = cfg.get("dot_dimension_numbers", {})
        self.dn = DotDimensionNumbers(
            _ints(dn.get("lhs_batch_dimensions")), _ints(dn.get("rhs_batch_dimensions")),
            _ints(dn.get("lhs_contracting_dimensions")),
            _ints(dn.get("rhs_contracting_dimensions")))
        epilogue = str(cfg.get("epilogue", "DEFAULT"))
        require(epilogue in _EPILOGUES, instr, f"epilogue {epilogue} not modelled")
        alpha = (float(cfg.get("alpha_real", 1)), float(cfg.get("alpha_imag", 0)))
        require(alpha != (0.0, 0.0), instr, "alpha = 0")
        beta = float(cfg.get("beta", 0))
        ops = [_dims(instr, k) for k in range(len(instr.operands))]
        require(len(ops) >= 2, instr, "expected two operands")
        self.lhs, self.rhs = ops[0], ops[1]
        pairs = [(self.dn.lhs_batch_dims, self.dn.rhs_batch_dims),
                 (self.dn.lhs_contracting_dims, self.dn.rhs_contracting_dims)]
        require(all(len(a) == len(b) and all(0 <= i < len(self.lhs) and 0 <= j < len(self.rhs)
                                             and self.lhs[i] == self.rhs[j]
                                             for i, j in zip(a, b, strict=True))
                    for a, b in pairs), instr, "batch or contracting dims do not match")
        lhs_map, rhs_map = dot_operand_maps(self.lhs, self.rhs, self.dn)
        self.lhs_map, self.rhs_map = lhs_map, rhs_map
        self.d = tuple(b.size for b in lhs_map.dims)
        f8 = target.endswith("$f8")
        has_bias = "BIAS" in epilogue
        extra = len(ops) - 2 - (4 if f8 else 0) - (1 if has_bias else 0)
        require(extra in (0, 1), instr, "unexpected operand count")
        #: per operand: "a", "b", "c", "c_scale", "scale", "bias"
        kinds = ["a", "b"] + ["c"] * extra + (["scale", "scale", "c_scale", "scale"] if f8
                                              else []) + (["bias"] if has_bias else [])
        self.kinds = kinds
        self.c_read = beta != 0.0
        for k, kind in enumerate(kinds):
            if kind == "c":
                require(ops[k] == self.d, instr, "C does not have the output's shape")
            elif kind in ("scale", "c_scale"):
                require(ops[k] == (), instr, "an f8 scale is not a scalar")
            elif kind == "bias":
                require(len(self.d) >= 1 and ops[k] == (self.d[-1],), instr,
                        "the bias is not a vector along the output's last dimension")
        self.ops = ops
        outs = _out_leaves(instr)
        out_kinds = ["d"] + (["aux"] if epilogue.endswith("_AUX") else []) \
            + (["amax"] if f8 and cfg.get("damax_output") else [])
        if len(outs) == len(out_kinds) + 1 and not isinstance(instr.shape, Shape):
            out_kinds.append("workspace")
        require(len(outs) == len(out_kinds), instr, "unexpected outputs")
        for shape, kind in zip(outs, out_kinds, strict=True):
            expect = {"d": self.d, "aux": self.d, "amax": ()}.get(kind)
            require(expect is None and _is_workspace(shape) or shape.dims == expect, instr,
                    f"output {kind} has an unexpected shape")
        self.outs, self.out_kinds = outs, out_kinds

    def _read_by_d(self, k: int) -> bool:
        kind = self.kinds[k]
        return (kind not in ("c", "c_scale") or self.c_read) and \
            (kind != "c_scale" or "c" in self.kinds)

    def reads(self, output: int) -> Groups:
        kind = self.out_kinds[output]
        out = self.outs[output].dims
        if kind == "workspace":
            return [[every_element(out, dims)] for dims in self.ops]
        groups: Groups = []
        for k, dims in enumerate(self.ops):
            if not self._read_by_d(k):
                groups.append([])
            elif kind == "amax":
                groups.append([every_element(out, dims)])
            else:
                groups.append([self._d_map(k)])
        return groups

    def _d_map(self, k: int) -> IndexingMap:
        kind = self.kinds[k]
        if kind == "a":
            return self.lhs_map
        if kind == "b":
            return self.rhs_map
        if kind == "c":
            return identity(self.d)
        if kind == "bias":
            return IndexingMap.create(self.d, [dim(len(self.d) - 1)])
        return to_scalar(self.d)

    def reached(self, operand: int) -> Groups:
        kind, dims = self.kinds[operand], self.ops[operand]
        groups: Groups = []
        for out_kind, shape in zip(self.out_kinds, self.outs, strict=True):
            if out_kind == "workspace":
                groups.append([every_element(dims, shape.dims)])
            elif not self._read_by_d(operand):
                groups.append([])
            elif out_kind == "amax":
                groups.append([to_scalar(dims)])
            elif kind in ("a", "b"):
                groups.append([dot_output_map(self.lhs, self.rhs, self.dn, kind == "b")])
            elif kind == "c":
                groups.append([identity(dims)])
            elif kind == "bias":
                rest = self.d[:-1]
                groups.append([IndexingMap.create(dims, [sym(i) for i in range(len(rest))]
                                                  + [dim(0)], [(0, n - 1) for n in rest])])
            else:
                groups.append([from_scalar(self.d)])
        return groups

    def reason(self, output: int | None, backward: bool = True) -> str | None:
        if output is None:
            return self.reason(len(self.outs) - 1)
        if self.out_kinds[output] == "workspace":
            return f"custom-call {self.target} workspace (scratch)"
        return None


# --- cuDNN convolutions -------------------------------------------------------------------------


class _Conv(LibraryCall):
    def __init__(self, instr: HloInstruction, target: str) -> None:
        self.target = target
        self.kind = CONV_TARGETS[target]
        dn = instr.dim_labels
        require(dn is not None and instr.window is not None, instr,
                "expected window= and dim_labels=")
        assert dn is not None and instr.window is not None
        outs = _out_leaves(instr)
        require(len(outs) >= 1 and all(_is_workspace(s) for s in outs[1:]), instr,
                "expected (result, scratch) outputs")
        self.outs = outs
        result = outs[0].dims
        ops = [_dims(instr, k) for k in range(len(instr.operands))]
        if self.kind == BACKWARD_INPUT:
            require(len(ops) == 2, instr, "expected (d_out, filter)")
            lhs, rhs, out = result, ops[1], ops[0]
        elif self.kind == BACKWARD_FILTER:
            require(len(ops) == 2, instr, "expected (input, d_out)")
            lhs, rhs, out = ops[0], result, ops[1]
        else:
            expected = (2,) if self.kind == FORWARD else (3, 4)
            require(len(ops) in expected, instr, "unexpected operand count")
            lhs, rhs, out = ops[0], ops[1], result
        g = ConvGeometry(lhs, rhs, out, instr.window, dn, instr.feature_group_count,
                         instr.batch_group_count)
        _check_geometry(g, instr)
        require(self.kind in (FORWARD, FUSED) or g.batch_groups == 1, instr,
                "batch_group_count in a backward convolution")
        self.g, self.ops = g, ops
        if self.kind == FUSED:
            require(ops[2] == (g.output_features,), instr, "the bias is not per output feature")
            require(len(ops) == 3 or ops[3] == out, instr,
                    "the side input does not have the output's shape")

    # output-to-input

    def reads(self, output: int) -> Groups:
        if output > 0:
            return [[every_element(self.outs[output].dims, dims)] for dims in self.ops]
        g = self.g
        if self.kind in (FORWARD, FUSED):
            lhs_map, rhs_map = convolution_operand_maps(g)
            groups: Groups = [[lhs_map], [rhs_map]]
            if self.kind == FUSED:
                groups.append([IndexingMap.create(g.out, [dim(g.dn.output_feature_dimension)])])
                if len(self.ops) == 4:
                    groups.append([identity(g.out)])
            return groups
        first, second = (_grad_input_reads if self.kind == BACKWARD_INPUT
                         else _grad_filter_reads)(g)
        return [[first], [second]]

    # input-to-output

    def reached(self, operand: int) -> Groups:
        g = self.g
        rest = [[every_element(self.ops[operand], s.dims)] for s in self.outs[1:]]
        if self.kind in (FORWARD, FUSED):
            if operand == 0:
                first = convolution_lhs_output_map(g)
            elif operand == 1:
                first = convolution_rhs_output_map(g)
            elif operand == 2:
                f = g.dn.output_feature_dimension
                others = [i for i in range(len(g.out)) if i != f]
                results: list[Expr] = [Integer(0)] * len(g.out)
                for n, i in enumerate(others):
                    results[i] = sym(n)
                results[f] = dim(0)
                first = IndexingMap.create(self.ops[2], results,
                                           [(0, g.out[i] - 1) for i in others])
            else:
                first = identity(g.out)
            return [[first]] + rest
        if self.kind == BACKWARD_INPUT:
            return [[_grad_input_reached(g, operand)]] + rest
        return [[_grad_filter_reached(g, operand)]] + rest

    def reason(self, output: int | None, backward: bool = True) -> str | None:
        if output is None:
            return self.reason(len(self.outs) - 1) if len(self.outs) > 1 else None
        return f"custom-call {self.target} scratch" if output > 0 else None


def _check_geometry(g: ConvGeometry, instr: HloInstruction) -> None:
    """The checks of :func:`symidx.ops.convolution.conv_geometry`, on given shapes."""
    dn, fg, bg = g.dn, g.feature_groups, g.batch_groups
    n = len(dn.input_spatial_dimensions)
    require(len(g.lhs) == len(g.rhs) == len(g.out) == n + 2 and len(g.window) == n, instr,
            "ranks do not fit dim_labels and window=")
    require(all(w.size == g.rhs[dn.kernel_spatial_dimensions[k]]
                for k, w in enumerate(g.window)), instr,
            "window sizes differ from the kernel's spatial dims")
    require(fg >= 1 and bg >= 1 and (fg == 1 or bg == 1), instr, "bad group counts")
    require(g.lhs[dn.input_feature_dimension] == g.input_features_per_group * fg, instr,
            "input features do not match the kernel's input features")
    require(g.output_features == g.rhs[dn.kernel_output_feature_dimension]
            and g.output_features % (fg * bg) == 0 and g.lhs[dn.input_batch_dimension] % bg == 0
            and g.out[dn.output_batch_dimension] == g.batch_per_group, instr,
            "feature or batch dims do not fit the group counts")
    for k, w in enumerate(g.window):
        size = g.lhs[dn.input_spatial_dimensions[k]]
        padded = (size - 1) * w.base_dilation + 1 + w.padding_low + w.padding_high
        reach = (w.size - 1) * w.window_dilation + 1
        expect = 0 if padded < reach else (padded - reach) // w.stride + 1
        require(g.out[dn.output_spatial_dimensions[k]] == expect, instr,
                "the output's spatial dims do not fit the window")


@dataclass
class _Builder:
    """The parts of one map under construction: range variables, runtime variables (with
    their provenance from the map's dims) and constraints."""

    source: Sequence[int | Interval]
    ranges: list[tuple[int, int]] = field(default_factory=list)
    rts: list[RuntimeVar] = field(default_factory=list)
    constraints: list[tuple[Expr, Interval]] = field(default_factory=list)

    def var(self, size: int) -> Expr:
        if size == 1:
            return Integer(0)
        self.ranges.append((0, size - 1))
        return sym(len(self.ranges) - 1)

    def runtime(self, bounds: Interval, instr: HloInstruction, element: Expr) -> Expr:
        self.rts.append(RuntimeVar(bounds, value_source(instr),
                                   IndexingMap.create(self.source, [element])))
        return rt(len(self.rts) - 1)

    def where(self, expr: Expr, lo: int, hi: int) -> None:
        self.constraints.append((expr, Interval(lo, hi)))

    def map(self, results: Sequence[Expr]) -> IndexingMap:
        return IndexingMap.create(self.source, results, self.ranges, self.rts,
                                  self.constraints)


def _feature_group(g: ConvGeometry, out_feature: Expr) -> Expr:
    return FloorDiv(out_feature, g.output_features // g.feature_groups) \
        if g.feature_groups > 1 else Integer(0)


def _kernel_position(w_size: int, reversal: bool, position: Expr) -> Expr:
    return Integer(w_size - 1) - position if reversal else position


def _grad_input_reads(g: ConvGeometry) -> tuple[IndexingMap, IndexingMap]:
    """d_in index -> d_out and filter: the outputs whose windows cover it."""
    dn, b = g.dn, _Builder(g.lhs)
    positions = [b.var(w.size) for w in g.window]
    per_group = g.output_features // g.feature_groups
    c = dim(dn.input_feature_dimension)
    cg = g.input_features_per_group
    group = FloorDiv(c, cg) if g.feature_groups > 1 else Integer(0)
    of = group * per_group + b.var(per_group)
    d_out: list[Expr] = [Integer(0)] * len(g.out)
    d_out[dn.output_batch_dimension] = dim(dn.input_batch_dimension)
    d_out[dn.output_feature_dimension] = of
    kernel: list[Expr] = [Integer(0)] * len(g.rhs)
    kernel[dn.kernel_input_feature_dimension] = Mod(c, cg) if g.feature_groups > 1 else c
    kernel[dn.kernel_output_feature_dimension] = of
    for k, w in enumerate(g.window):
        o = dn.output_spatial_dimensions[k]
        d_out[o], cs = output_term(dim(dn.input_spatial_dimensions[k]), positions[k], w,
                                   g.out[o])
        b.constraints += cs
        kernel[dn.kernel_spatial_dimensions[k]] = _kernel_position(w.size, w.window_reversal,
                                                                   positions[k])
    return b.map(d_out), b.map(kernel)


def _grad_filter_reads(g: ConvGeometry) -> tuple[IndexingMap, IndexingMap]:
    """d_filter index -> input and d_out: every batch element and output position."""
    dn, b = g.dn, _Builder(g.rhs)
    batch = b.var(g.lhs[dn.input_batch_dimension])
    outs = [b.var(g.out[o]) for o in dn.output_spatial_dimensions]
    of = dim(dn.kernel_output_feature_dimension)
    x: list[Expr] = [Integer(0)] * len(g.lhs)
    x[dn.input_batch_dimension] = batch
    x[dn.input_feature_dimension] = _feature_group(g, of) * g.input_features_per_group \
        + dim(dn.kernel_input_feature_dimension)
    d_out: list[Expr] = [Integer(0)] * len(g.out)
    d_out[dn.output_batch_dimension] = batch
    d_out[dn.output_feature_dimension] = of
    for k, w in enumerate(g.window):
        i = dn.input_spatial_dimensions[k]
        position = _kernel_position(w.size, w.window_reversal,
                                    dim(dn.kernel_spatial_dimensions[k]))
        x[i], cs = operand_term(outs[k], position, w, g.lhs[i])
        b.constraints += cs
        d_out[dn.output_spatial_dimensions[k]] = outs[k]
    return b.map(x), b.map(d_out)


def _grad_input_reached(g: ConvGeometry, operand: int) -> IndexingMap:
    """d_out (0) or filter (1) index -> the d_in elements it contributes to."""
    dn = g.dn
    cg = g.input_features_per_group
    if operand == 0:
        b = _Builder(g.out)
        positions = [b.var(w.size) for w in g.window]
        of = dim(dn.output_feature_dimension)
        batch = dim(dn.output_batch_dimension)
        outs = [dim(o) for o in dn.output_spatial_dimensions]
        ci = b.var(cg)
    else:
        b = _Builder(g.rhs)
        batch = b.var(g.out[dn.output_batch_dimension])
        outs = [b.var(g.out[o]) for o in dn.output_spatial_dimensions]
        of = dim(dn.kernel_output_feature_dimension)
        positions = [_kernel_position(w.size, w.window_reversal,
                                      dim(dn.kernel_spatial_dimensions[k]))
                     for k, w in enumerate(g.window)]
        ci = dim(dn.kernel_input_feature_dimension)
    d_in: list[Expr] = [Integer(0)] * len(g.lhs)
    d_in[dn.input_batch_dimension] = batch
    d_in[dn.input_feature_dimension] = _feature_group(g, of) * cg + ci
    for k, w in enumerate(g.window):
        i = dn.input_spatial_dimensions[k]
        d_in[i], cs = operand_term(outs[k], positions[k], w, g.lhs[i])
        b.constraints += cs
    return b.map(d_in)


def _grad_filter_reached(g: ConvGeometry, operand: int) -> IndexingMap:
    """input (0) or d_out (1) index -> the d_filter elements it contributes to."""
    dn = g.dn
    cg = g.input_features_per_group
    per_group = g.output_features // g.feature_groups
    if operand == 0:
        b = _Builder(g.lhs)
        positions = [b.var(w.size) for w in g.window]
        c = dim(dn.input_feature_dimension)
        group = FloorDiv(c, cg) if g.feature_groups > 1 else Integer(0)
        of = group * per_group + b.var(per_group)
        ci = Mod(c, cg) if g.feature_groups > 1 else c
        for k, w in enumerate(g.window):
            o = dn.output_spatial_dimensions[k]
            _, cs = output_term(dim(dn.input_spatial_dimensions[k]), positions[k], w, g.out[o])
            b.constraints += cs
    else:
        b = _Builder(g.out)
        positions = [b.var(w.size) for w in g.window]
        of = dim(dn.output_feature_dimension)
        ci = b.var(cg)
        for k, w in enumerate(g.window):
            i = dn.input_spatial_dimensions[k]
            _, cs = operand_term(dim(dn.output_spatial_dimensions[k]), positions[k], w,
                                 g.lhs[i])
            b.constraints += cs
    kernel: list[Expr] = [Integer(0)] * len(g.rhs)
    kernel[dn.kernel_input_feature_dimension] = ci
    kernel[dn.kernel_output_feature_dimension] = of
    for k, w in enumerate(g.window):
        kernel[dn.kernel_spatial_dimensions[k]] = _kernel_position(w.size, w.window_reversal,
                                                                   positions[k])
    return b.map(kernel)


# --- TransformerEngine fused attention ----------------------------------------------------------

_MLIR_ENTRY = re.compile(r"(\w+)\s*=\s*(true|false|[-+0-9.eE]+)(?:\s*:\s*\w+)?")


def mlir_attributes(text: str) -> dict[str, int | float | bool]:
    """``{a = 1 : i64, b = true, c = 1.0e+00 : f64}`` (an MLIR dictionary, as the FFI's
    ``backend_config`` prints) as a dict; entries of other forms are skipped."""
    found: dict[str, int | float | bool] = {}
    for m in _MLIR_ENTRY.finditer(text):
        key, raw = m.group(1), m.group(2)
        if raw in ("true", "false"):
            found[key] = raw == "true"
            continue
        try:
            found[key] = int(raw)
        except ValueError:
            try:
                found[key] = float(raw)
            except ValueError:
                continue
    return found


NO_MASK, PADDING, CAUSAL, PADDING_CAUSAL, CAUSAL_BOTTOM_RIGHT, PADDING_CAUSAL_BOTTOM_RIGHT = \
    range(6)
#: A tensor's place in an operand (or output leaf): its position and, per dimension of
#: that array, the logical axis ("b", "s", "h", "d") or a packed constant index.
Template = tuple[int | str, ...]


@dataclass(frozen=True)
class _Tensor:
    position: int
    template: Template

    def place(self, b: Expr, s: Expr, h: Expr, d: Expr) -> list[Expr]:
        axes = {"b": b, "s": s, "h": h, "d": d}
        return [axes[t] if isinstance(t, str) else Integer(t) for t in self.template]

    def logical(self, builder: _Builder) -> dict[str, Expr]:
        """The logical (b, s, h, d) of an index of this tensor (the map's dims); a packed
        position is pinned by a constraint."""
        found: dict[str, Expr] = {}
        for k, t in enumerate(self.template):
            if isinstance(t, str):
                found[t] = dim(k)
            else:
                builder.where(dim(k), t, t)
        return found


def _layout(layout: int) -> tuple[_Tensor, _Tensor, _Tensor]:
    """Where q, k and v live for ``qkv_layout`` 0-9 (``sbhd`` 0-4, ``bshd`` 5-9)."""
    base: Template = ("s", "b", "h", "d") if layout < 5 else ("b", "s", "h", "d")
    group = layout % 5

    def packed(position: int, after: int, index: int) -> _Tensor:
        return _Tensor(position, base[:after] + (index,) + base[after:])

    if group == 0:  # 3HD
        return packed(0, 2, 0), packed(0, 2, 1), packed(0, 2, 2)
    if group == 1:  # H3D
        return packed(0, 3, 0), packed(0, 3, 1), packed(0, 3, 2)
    if group == 2:  # HD_2HD
        return _Tensor(0, base), packed(1, 2, 0), packed(1, 2, 1)
    if group == 3:  # HD_H2D
        return _Tensor(0, base), packed(1, 3, 0), packed(1, 3, 1)
    return _Tensor(0, base), _Tensor(1, base), _Tensor(2, base)


def _sizes(dims: Dims, tensor: _Tensor) -> dict[str, int]:
    """The sizes of the logical axes of ``tensor`` held in an array of ``dims``
    (:class:`ValueError` when the ranks differ or a packed index is out of range)."""
    if len(dims) != len(tensor.template) or any(
            isinstance(t, int) and not t < n for t, n in zip(tensor.template, dims, strict=True)):
        raise ValueError(f"{list(dims)} does not hold {tensor.template}")
    return {t: n for t, n in zip(tensor.template, dims, strict=True) if isinstance(t, str)}


class _Attention(LibraryCall):
    def __init__(self, instr: HloInstruction, target: str) -> None:
        self.target = target
        self.instr = instr
        self.forward = target == "te_fused_attn_forward_ffi"
        cfg = mlir_attributes(instr.attributes.get("backend_config", ""))
        layout = int(cfg["qkv_layout"])
        require(0 <= layout <= 9, instr, f"qkv_layout {layout} (ragged thd) not modelled")
        require(float(cfg.get("dropout_probability", 0.0)) == 0.0, instr,
                "dropout not modelled")
        self.mask = int(cfg.get("mask_type", 0))
        require(0 <= self.mask <= 5, instr, f"mask_type {self.mask}")
        self.left = int(cfg.get("window_size_left", -1))
        self.right = int(cfg.get("window_size_right", -1))
        self.bottom_right = self.mask in (CAUSAL_BOTTOM_RIGHT, PADDING_CAUSAL_BOTTOM_RIGHT)
        require(not (self.bottom_right and (self.left >= 0 or self.right >= 0)), instr,
                "a sliding window with a bottom-right causal mask")
        self.causal = self.mask in (CAUSAL, PADDING_CAUSAL) or self.bottom_right
        self.padding = self.mask in (PADDING, PADDING_CAUSAL, PADDING_CAUSAL_BOTTOM_RIGHT)
        bias_type = int(cfg.get("bias_type", 0))
        ops = [_dims(instr, k) for k in range(len(instr.operands))]
        self.ops = ops
        require(len(ops) >= (7 if self.forward else 10), instr, "too few operands")
        self.q, self.k, self.v = _layout(layout)
        qs, ks, vs = (_sizes(ops[t.position], t) for t in (self.q, self.k, self.v))
        self.B, self.Sq, self.H, self.D = qs["b"], qs["s"], qs["h"], qs["d"]
        self.Skv, self.G, self.Dv = ks["s"], ks["h"], vs["d"]
        require(ks["b"] == vs["b"] == self.B and vs["s"] == self.Skv and vs["h"] == self.G
                and ks["d"] == self.D and self.G >= 1 and self.H % self.G == 0, instr,
                "q, k and v do not fit together")
        for key, value in (("attn_heads", self.H), ("num_gqa_groups", self.G),
                           ("q_max_seqlen", self.Sq), ("kv_max_seqlen", self.Skv),
                           ("input_batch", self.B)):
            require(key not in cfg or int(cfg[key]) == value, instr, f"{key} does not fit")
        bias = ops[3]
        self.bias = bias_type in (1, 2) and len(bias) == 4 and 0 not in bias
        if self.bias:
            require(bias[0] in (1, self.B) and bias[1] in (1, self.H) and
                    bias[2:] == (self.Sq, self.Skv), instr, "the bias does not fit")
            require(self.forward, instr, "a bias in the backward pass not modelled")
        cu = (5, 6) if self.forward else (8, 9)
        self.q_cu, self.kv_cu = cu
        require(ops[cu[0]] == ops[cu[1]] == (self.B + 1,), instr,
                "cu_seqlens do not have batch + 1 elements")
        outs = _out_leaves(instr)
        self.outs = outs
        o_tensor = self.o = _Tensor(0, _unpacked(layout))
        o_dims = tuple(o_tensor.place(*(Integer(n) for n in (self.B, self.Sq, self.H,
                                                             self.Dv))))
        o_sizes = tuple(int(e) for e in o_dims)
        if self.forward:
            require(len(outs) == 4 and outs[0].dims == o_sizes
                    and outs[1].dims == (self.B, self.H, self.Sq, 1), instr,
                    "outputs do not fit")
            self.seed = 4
        else:
            require(ops[4] == (self.B, self.H, self.Sq, 1) and ops[6] == ops[7] == o_sizes,
                    instr, "softmax_aux, O or dO do not fit")
            require(len(outs) == 5 and all(outs[t.position].dims == ops[t.position]
                                           for t in (self.q, self.k, self.v)), instr,
                    "the gradients do not fit")

    # --- the mask ------------------------------------------------------------------------------

    def _lengths(self, b: _Builder, batch: Expr, which: int) -> tuple[Expr, Expr]:
        """(start, end) of a sequence: cu_seqlens[batch], cu_seqlens[batch + 1]."""
        position = self.q_cu if which == 0 else self.kv_cu
        top = self.B * (self.Sq if which == 0 else self.Skv)
        instr = self.instr.operands[position]
        lo = b.runtime(Interval(0, top), instr, batch)
        hi = b.runtime(Interval(0, top), instr, batch + 1)
        return lo, hi

    def _valid(self, b: _Builder, batch: Expr, index: Expr, which: int) -> None:
        """``index`` < the length of the sequence (0: q, 1: kv) of ``batch``."""
        lo, hi = self._lengths(b, batch, which)
        b.where(index + lo - hi, -self._big(), -1)

    def _big(self) -> int:
        return 2 * self.B * max(self.Sq, self.Skv) + 2 * max(self.Sq, self.Skv) + 2

    def _allowed(self, b: _Builder, batch: Expr, i: Expr, j: Expr, lengths: bool,
                 q_valid: bool = True) -> None:
        """The mask's constraints on query row ``i`` and kv column ``j``; ``lengths``: with
        the run-time sequence lengths of a padding mask (without them, only what holds for
        every length: a superset); ``q_valid``: row ``i`` must be a valid row."""
        padded = lengths and self.padding
        if padded:
            if q_valid:
                self._valid(b, batch, i, 0)
            self._valid(b, batch, j, 1)
        if self.bottom_right:
            if padded:
                qlo, qhi = self._lengths(b, batch, 0)
                klo, khi = self._lengths(b, batch, 1)
                b.where(j - i - khi + klo + qhi - qlo, -self._big(), 0)
            elif not self.padding:
                b.where(j - i, -self._big(), self.Skv - self.Sq)
        elif self.causal:
            b.where(j - i, -self._big(), 0)
        if self.left >= 0:
            b.where(i - j, -self._big(), self.left)
        if self.right >= 0:
            b.where(j - i, -self._big(), min(self.right, 0) if self.causal else self.right)

    @property
    def _every_row(self) -> bool:
        """Without run-time lengths, does the mask leave every query row some kv column?"""
        return all(self._span(i, row=True) for i in range(self.Sq))

    @property
    def _every_column(self) -> bool:
        """Without run-time lengths, does every kv column serve some query row?"""
        return all(self._span(j, row=False) for j in range(self.Skv))

    def _span(self, x: int, row: bool) -> bool:
        """Is some partner of row (or column) ``x`` allowed by the static mask?"""
        if self.padding:
            return False
        inf = max(self.Sq, self.Skv) + 1
        # j - i in [lo, hi]
        lo = -self.left if self.left >= 0 else -inf
        hi = min(self.right if self.right >= 0 else inf,
                 0 if self.causal and not self.bottom_right else inf,
                 self.Skv - self.Sq if self.bottom_right else inf)
        if row:  # j in [0, Skv - 1] and j - x in [lo, hi]
            return max(0, x + lo) <= min(self.Skv - 1, x + hi)
        return max(0, x - hi) <= min(self.Sq - 1, x - lo)

    # --- output-to-input -------------------------------------------------------------------------

    def reads(self, output: int) -> Groups:
        return self._reads(output, padding=True)

    def _reads(self, output: int, padding: bool) -> Groups:
        groups: Groups = [[] for _ in self.ops]
        shape = self.outs[output].dims
        if self.forward and output >= 2:
            if output == 2:
                groups[self.seed].append(every_element(shape, self.ops[self.seed]))
            else:
                groups = [[every_element(shape, dims)] for dims in self.ops]
            return groups
        if not self.forward and output >= 3:
            if output == 4:
                groups = [[every_element(shape, dims)] for dims in self.ops]
            return groups
        if self.forward:
            self._forward_reads(groups, output, shape, padding)
        else:
            self._backward_reads(groups, output, shape, padding)
        return [[m for m in g if not m.is_known_empty] for g in groups]

    def _forward_reads(self, groups: Groups, output: int, shape: Dims, padding: bool) -> None:
        per_group = self.H // self.G
        aux = output == 1  # softmax_aux[b, h, i, 0]
        pad = padding and self.padding

        def start() -> tuple[_Builder, dict[str, Expr]]:
            b = _Builder(shape)
            if aux:
                b.where(dim(3), 0, 0)
                return b, {"b": dim(0), "h": dim(1), "s": dim(2)}
            return b, self.o.logical(b)

        def add(position: int, make: Callable[[_Builder, dict[str, Expr], Expr], list[Expr]]
                ) -> None:
            b, axes = start()
            j = b.var(self.Skv)  # a kv column the row reads
            # the stats of a padded row are unspecified: read as a valid row's
            self._allowed(b, axes["b"], axes["s"], j, padding, q_valid=not aux)
            m = b.map(make(b, axes, j))
            # a column exists for every row: no need to say so (with run-time lengths,
            # kv_len >= 1 must hold: the range variable keeps that condition)
            groups[position].append(_without_first_range(m) if not pad and self._every_row
                                    else m)

        def g(axes: dict[str, Expr]) -> Expr:
            return FloorDiv(axes["h"], per_group) if per_group > 1 else axes["h"]

        add(self.q.position, lambda b, a, j: self.q.place(a["b"], a["s"], a["h"],
                                                         b.var(self.D)))
        add(self.k.position, lambda b, a, j: self.k.place(a["b"], j, g(a), b.var(self.D)))
        if not aux:
            add(self.v.position, lambda b, a, j: self.v.place(a["b"], j, g(a), a["d"]))
        if self.bias:
            bias = self.ops[3]
            add(3, lambda b, a, j: [a["b"] if bias[0] > 1 else Integer(0),
                                    a["h"] if bias[1] > 1 else Integer(0), a["s"], j])
        if self.padding:  # the lengths: q's decide the row, kv's matter for a valid row
            for position, guard in ((self.q_cu, False), (self.kv_cu, not aux)):
                b, axes = start()
                if guard and pad:
                    self._valid(b, axes["b"], axes["s"], 0)
                groups[position].append(b.map([axes["b"] + b.var(2)]))

    def _backward_reads(self, groups: Groups, output: int, shape: Dims, padding: bool) -> None:
        per_group = self.H // self.G
        pad = padding and self.padding
        tensor = (self.q, self.k, self.v)
        # an output leaf may pack several gradients (dkv, dqkv): one set of maps each
        for role, t in enumerate(tensor):
            if t.position != output:
                continue
            self._gradient_reads(groups, role, t, shape, pad, per_group)
        if self.padding:
            for position, which in ((self.q_cu, 0), (self.kv_cu, 1)):
                for role, t in enumerate(tensor):
                    if t.position != output:
                        continue
                    b = _Builder(shape)
                    axes = t.logical(b)
                    own = 0 if role == 0 else 1
                    if which != own and pad:  # the other side's lengths matter for valid rows
                        self._valid(b, axes["b"], axes["s"], own)
                    groups[position].append(b.map([axes["b"] + b.var(2)]))

    def _gradient_reads(self, groups: Groups, role: int, t: _Tensor, shape: Dims, pad: bool,
                        per_group: int) -> None:
        """The maps of gradient ``role`` (0 dq, 1 dk, 2 dv) held in output ``t``."""
        def start() -> tuple[_Builder, Expr, Expr, Expr, Expr, Expr]:
            """builder, batch, q row i, q head h, kv column j, kv head g."""
            b = _Builder(shape)
            axes = t.logical(b)
            if role == 0:
                i, h = axes["s"], axes["h"]
                j = b.var(self.Skv)
                g = FloorDiv(h, per_group) if per_group > 1 else h
            else:
                j, g = axes["s"], axes["h"]
                i = b.var(self.Sq)
                h = g * per_group + b.var(per_group) if per_group > 1 else g
            self._allowed(b, axes["b"], i, j, pad)
            return b, axes["b"], i, h, j, g

        def add(position: int, make: Callable[[_Builder, Expr, Expr, Expr, Expr, Expr],
                                              list[Expr]]) -> None:
            b, batch, i, h, j, g = start()
            m = b.map(make(b, batch, i, h, j, g))
            always = self._every_row if role == 0 else self._every_column
            groups[position].append(_without_first_range(m) if not pad and always else m)

        own = t.logical(_Builder(shape))
        e = own["d"]
        add(self.q.position, lambda b, n, i, h, j, g: self.q.place(n, i, h, b.var(self.D)))
        add(self.k.position, lambda b, n, i, h, j, g: self.k.place(n, j, g, b.var(self.D)))
        add(4, lambda b, n, i, h, j, g: [n, h, i, Integer(0)])
        if role == 2:
            add(7, lambda b, n, i, h, j, g: self.o.place(n, i, h, e))
            return
        add(self.v.position, lambda b, n, i, h, j, g: self.v.place(n, j, g, b.var(self.Dv)))
        add(6, lambda b, n, i, h, j, g: self.o.place(n, i, h, b.var(self.Dv)))
        add(7, lambda b, n, i, h, j, g: self.o.place(n, i, h, b.var(self.Dv)))

    # --- input-to-output: the output-to-input maps inverted --------------------------------------

    def reached(self, operand: int) -> Groups:
        dims = self.ops[operand]
        groups: Groups = []
        for output, shape in enumerate(self.outs):
            if 0 in dims or 0 in shape.dims:
                groups.append([])
                continue
            maps = self._reads(output, padding=False)[operand]
            groups.append([invert(m, dims) for m in maps])
        return groups

    def reason(self, output: int | None, backward: bool = True) -> str | None:
        if output is None:
            found = [r for r in (self.reason(k, backward) for k in range(len(self.outs))) if r]
            return found[0] if found else None
        if self.forward and output == 2:
            return f"custom-call {self.target} rng_state (derived from the seed)"
        if output == len(self.outs) - 1:
            return f"custom-call {self.target} workspace (scratch)"
        if self.forward and output == 1 and self.padding:
            return f"custom-call {self.target} softmax_aux of padded rows (unspecified)"
        if not backward and self.padding:
            return f"custom-call {self.target} padding mask (run-time lengths not applied)"
        return None


def _without_first_range(m: IndexingMap) -> IndexingMap:
    """``m`` without range variable ``s0`` and the constraints on it, when ``s0`` only
    says that some value of it exists (it is in no result) and one always does."""
    first = sym(0)
    if not m.num_ranges or any(first in r.free_symbols for r in m.results):
        return m
    shift = {sym(k): sym(k - 1) for k in range(1, m.num_ranges)}
    results = substitute(list(m.results), shift)
    constraints = [(substitute([e], shift)[0], iv) for e, iv in m.constraints
                   if first not in e.free_symbols]
    return IndexingMap.create(m.dims, results, m.ranges[1:], m.rts, constraints)


def _unpacked(layout: int) -> Template:
    return ("s", "b", "h", "d") if layout < 5 else ("b", "s", "h", "d")


def invert(m: IndexingMap, target: Sequence[int]) -> IndexingMap:
    """The relation of ``m`` read the other way: from an index of ``target`` (the array
    ``m`` points into) to every source index whose image holds it. ``m`` must have no
    runtime variables."""
    if m.num_rts:
        raise ValueError("cannot invert a map with runtime variables")
    n = m.num_dims
    mapping = {dim(i): sym(i) for i in range(n)}
    mapping.update({sym(k): sym(n + k) for k in range(m.num_ranges)})
    results = substitute(list(m.results), mapping)
    constraints = [(substitute([e], mapping)[0], iv) for e, iv in m.constraints]
    constraints += [(r - dim(k), Interval(0, 0)) for k, r in enumerate(results)]
    return IndexingMap.create(target, [sym(i) for i in range(n)],
                              list(m.dims) + list(m.ranges), constraints=constraints)

