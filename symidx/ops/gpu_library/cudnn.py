"""**cuDNN convolutions** (``__cudnn$convForward``, ``__cudnn$convBiasActivationForward``,
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
"""

from __future__ import annotations

from sympy import Integer

from symidx.core.expr import Expr, FloorDiv, Mod, dim, sym
from symidx.core.indexing_map import IndexingMap
from symidx.hlo import HloInstruction
from symidx.hlo.facts import require
from symidx.ops._window import operand_term, output_term
from symidx.ops.basic import every_element, identity
from symidx.ops.convolution import (
    ConvGeometry,
    convolution_lhs_output_map,
    convolution_operand_maps,
    convolution_rhs_output_map,
)
from symidx.ops.gpu_library.common import (
    Groups,
    LibraryCall,
    MapBuilder,
    is_workspace,
    operand_dims,
    output_leaves,
)

FORWARD, FUSED, BACKWARD_INPUT, BACKWARD_FILTER = "forward", "fused", "input", "filter"
CONV_TARGETS = {"__cudnn$convForward": FORWARD, "__cudnn$convBiasActivationForward": FUSED,
                "__cudnn$convBackwardInput": BACKWARD_INPUT,
                "__cudnn$convBackwardFilter": BACKWARD_FILTER}


class Convolution(LibraryCall):
    def __init__(self, instr: HloInstruction, target: str) -> None:
        self.target = target
        self.kind = CONV_TARGETS[target]
        dn = instr.dim_labels
        require(dn is not None and instr.window is not None, instr,
                "expected window= and dim_labels=")
        assert dn is not None and instr.window is not None
        outs = output_leaves(instr)
        require(len(outs) >= 1 and all(is_workspace(s) for s in outs[1:]), instr,
                "expected (result, scratch) outputs")
        self.outs = outs
        result = outs[0].dims
        ops = [operand_dims(instr, k) for k in range(len(instr.operands))]
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


def _feature_group(g: ConvGeometry, out_feature: Expr) -> Expr:
    return FloorDiv(out_feature, g.output_features // g.feature_groups) \
        if g.feature_groups > 1 else Integer(0)


def _kernel_position(w_size: int, reversal: bool, position: Expr) -> Expr:
    return Integer(w_size - 1) - position if reversal else position


def _grad_input_reads(g: ConvGeometry) -> tuple[IndexingMap, IndexingMap]:
    """d_in index -> d_out and filter: the outputs whose windows cover it."""
    dn, b = g.dn, MapBuilder(g.lhs)
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
    dn, b = g.dn, MapBuilder(g.rhs)
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
        b = MapBuilder(g.out)
        positions = [b.var(w.size) for w in g.window]
        of = dim(dn.output_feature_dimension)
        batch = dim(dn.output_batch_dimension)
        outs = [dim(o) for o in dn.output_spatial_dimensions]
        ci = b.var(cg)
    else:
        b = MapBuilder(g.rhs)
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
        b = MapBuilder(g.lhs)
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
        b = MapBuilder(g.out)
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
