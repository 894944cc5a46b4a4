"""Convolution, with every attribute HLO has: ``dim_labels`` (any order of batch, feature and
spatial dims on each side), window ``size``, ``stride``, ``pad`` (negative too),
``lhs_dilate`` (base dilation), ``rhs_dilate`` (window dilation), ``rhs_reversal``,
``feature_group_count`` and ``batch_group_count``.

Semantics (StableHLO's definition): output ``(b, o, x...)`` sums over window positions ``w``
and kernel input features ``i``; along each spatial dim the window behaves as in
reduce-window (see :mod:`symidx.ops._window`). With ``feature_group_count = G`` the input
features and output features are split in ``G`` groups: output feature ``o`` is in group
``g = o floordiv (O / G)`` and reads input feature ``g * C_g + i``. With
``batch_group_count = B`` the input batch is split instead: output ``(b, o)`` reads input
batch ``g * (N / B) + b`` with ``g = o floordiv (O / B)`` — exact, where XLA uses a range
variable over all groups.

Output-to-input range variables: one per spatial window dim of size > 1, then the kernel
input feature (if its size is > 1). Window position ``w`` reads the input element under it
only where it lands on a real input element: padding and the holes of base (lhs) dilation
are no element. It multiplies the kernel element ``(i, o, w)`` -- or ``size - 1 - w`` with
window reversal -- by that element, or by the zero of padding or of a hole:

* under the ``reads`` semantics (the default) the kernel element is read at every window
  position, as XLA's kernel map says: ``0 * inf`` and ``0 * NaN`` are NaN, so a kernel
  element over padding changes the output when it is not finite;
* under the ``finite`` semantics (``assume_finite=True``) a finite kernel element times zero
  adds nothing, so the kernel map carries the input map's window constraints (the
  dependences of a Jacobian: exact). A zero times a finite kernel element is ``+0`` or
  ``-0`` by the kernel's sign; the finite semantics counts the two as one value.
"""

from __future__ import annotations

from dataclasses import dataclass

from sympy import Integer

from symidx.core.expr import Expr, FloorDiv, Mod, dim
from symidx.core.indexing_map import IndexingMap
from symidx.hlo import ConvolutionDimensionNumbers, HloInstruction, WindowDim
from symidx.hlo.facts import operand_dims, output_dims
from symidx.ops._common import attribute, require, var_or_zero
from symidx.ops._window import operand_term, output_term
from symidx.ops.registry import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, rule


@dataclass(frozen=True)
class ConvGeometry:
    """A convolution's shapes and attributes."""

    lhs: tuple[int, ...]
    rhs: tuple[int, ...]
    out: tuple[int, ...]
    window: tuple[WindowDim, ...]
    dn: ConvolutionDimensionNumbers
    feature_groups: int = 1
    batch_groups: int = 1

    @property
    def spatial(self) -> range:
        return range(len(self.dn.input_spatial_dimensions))

    @property
    def input_features_per_group(self) -> int:
        return self.rhs[self.dn.kernel_input_feature_dimension]

    @property
    def output_features(self) -> int:
        return self.out[self.dn.output_feature_dimension]

    @property
    def batch_per_group(self) -> int:
        return self.lhs[self.dn.input_batch_dimension] // self.batch_groups


def convolution_operand_maps(g: ConvGeometry, assume_finite: bool = False
                             ) -> tuple[IndexingMap, IndexingMap]:
    """Output index -> lhs (input) index and rhs (kernel) index (the kernel at every window
    position, or with ``assume_finite`` only over input elements)."""
    dn = g.dn
    ranges: list[tuple[int, int]] = []
    positions = [var_or_zero(g.window[k].size, ranges) for k in g.spatial]
    feature = var_or_zero(g.input_features_per_group, ranges)
    out_b, out_f = dim(dn.output_batch_dimension), dim(dn.output_feature_dimension)

    lhs: list[Expr] = [Integer(0)] * len(g.lhs)
    lhs[dn.input_batch_dimension] = out_b
    if g.batch_groups > 1:
        group = FloorDiv(out_f, g.output_features // g.batch_groups)
        lhs[dn.input_batch_dimension] = group * g.batch_per_group + out_b
    lhs[dn.input_feature_dimension] = feature
    if g.feature_groups > 1:
        group = FloorDiv(out_f, g.output_features // g.feature_groups)
        lhs[dn.input_feature_dimension] = group * g.input_features_per_group + feature
    constraints = []
    for k in g.spatial:
        i = dn.input_spatial_dimensions[k]
        lhs[i], cs = operand_term(dim(dn.output_spatial_dimensions[k]), positions[k],
                                  g.window[k], g.lhs[i])
        constraints += cs

    rhs: list[Expr] = [Integer(0)] * len(g.rhs)
    rhs[dn.kernel_input_feature_dimension] = feature
    rhs[dn.kernel_output_feature_dimension] = out_f
    for k in g.spatial:
        w = g.window[k]
        rhs[dn.kernel_spatial_dimensions[k]] = (Integer(w.size - 1) - positions[k]
                                                if w.window_reversal else positions[k])
    return (IndexingMap.create(g.out, lhs, ranges, constraints=constraints),
            IndexingMap.create(g.out, rhs, ranges,
                               constraints=constraints if assume_finite else ()))


def convolution_lhs_output_map(g: ConvGeometry) -> IndexingMap:
    """Input index -> output index: the output windows covering it, every output feature
    of its group."""
    dn = g.dn
    ranges: list[tuple[int, int]] = []
    positions = [var_or_zero(g.window[k].size, ranges) for k in g.spatial]
    in_b, in_f = dim(dn.input_batch_dimension), dim(dn.input_feature_dimension)
    out: list[Expr] = [Integer(0)] * len(g.out)
    out[dn.output_batch_dimension] = in_b
    features = g.output_features
    if g.batch_groups > 1:
        out[dn.output_batch_dimension] = Mod(in_b, g.batch_per_group)
        per_group = features // g.batch_groups
        out[dn.output_feature_dimension] = (FloorDiv(in_b, g.batch_per_group) * per_group
                                            + var_or_zero(per_group, ranges))
    elif g.feature_groups > 1:
        per_group = features // g.feature_groups
        out[dn.output_feature_dimension] = (FloorDiv(in_f, g.input_features_per_group)
                                            * per_group + var_or_zero(per_group, ranges))
    else:
        out[dn.output_feature_dimension] = var_or_zero(features, ranges)
    constraints = []
    for k in g.spatial:
        o = dn.output_spatial_dimensions[k]
        out[o], cs = output_term(dim(dn.input_spatial_dimensions[k]), positions[k],
                                 g.window[k], g.out[o])
        constraints += cs
    return IndexingMap.create(g.lhs, out, ranges, constraints=constraints)


def convolution_rhs_output_map(g: ConvGeometry, assume_finite: bool = False) -> IndexingMap:
    """Kernel index -> output index: every batch and spatial position of its output feature
    (with ``assume_finite``, the spatial positions whose window puts this kernel element on
    a real input element)."""
    dn = g.dn
    ranges: list[tuple[int, int]] = []
    out: list[Expr] = [Integer(0)] * len(g.out)
    out[dn.output_batch_dimension] = var_or_zero(g.out[dn.output_batch_dimension], ranges)
    out[dn.output_feature_dimension] = dim(dn.kernel_output_feature_dimension)
    constraints = []
    for k in g.spatial:
        w = g.window[k]
        o = dn.output_spatial_dimensions[k]
        out[o] = var_or_zero(g.out[o], ranges)
        kernel = dim(dn.kernel_spatial_dimensions[k])
        position = Integer(w.size - 1) - kernel if w.window_reversal else kernel
        i = dn.input_spatial_dimensions[k]
        if assume_finite:
            constraints += operand_term(out[o], position, w, g.lhs[i])[1]
    return IndexingMap.create(g.rhs, out, ranges, constraints=constraints)


def conv_geometry(instr: HloInstruction) -> ConvGeometry:
    dn: ConvolutionDimensionNumbers = attribute(instr.dim_labels, instr,
                                                "dim_labels")
    lhs, rhs, out = operand_dims(instr, 0), operand_dims(instr, 1), output_dims(instr)
    window = instr.window or ()
    g = ConvGeometry(lhs, rhs, out, window, dn, instr.feature_group_count,
                     instr.batch_group_count)
    fg, bg = g.feature_groups, g.batch_groups
    require(len(lhs) == len(rhs) == len(out) == len(dn.input_spatial_dimensions) + 2,
            instr, "operand ranks do not fit dim_labels")
    require(len(window) == len(dn.input_spatial_dimensions), instr,
            "window= does not have one entry per spatial dimension")
    require(all(w.size == rhs[dn.kernel_spatial_dimensions[k]] for k, w in enumerate(window)),
            instr, "window sizes differ from the kernel's spatial dims")
    require(fg >= 1 and bg >= 1 and (fg == 1 or bg == 1), instr, "bad group counts")
    require(lhs[dn.input_feature_dimension] == g.input_features_per_group * fg, instr,
            "input features do not match the kernel's input features")
    require(g.output_features == rhs[dn.kernel_output_feature_dimension]
            and g.output_features % (fg * bg) == 0
            and lhs[dn.input_batch_dimension] % bg == 0
            and out[dn.output_batch_dimension] == g.batch_per_group,
            instr, "feature or batch dims do not fit the group counts")
    return g


@rule(OUTPUT_TO_INPUT, "convolution", fold_point_dims=True, semantics=True)
def _conv_out(instr: HloInstruction, output_index: int, *, assume_finite: bool = False
              ) -> list[list[IndexingMap]]:
    lhs_map, rhs_map = convolution_operand_maps(conv_geometry(instr), assume_finite)
    return [[lhs_map], [rhs_map]]


@rule(INPUT_TO_OUTPUT, "convolution", fold_point_dims=True, semantics=True)
def _conv_in(instr: HloInstruction, operand_index: int, *, assume_finite: bool = False
             ) -> list[list[IndexingMap]]:
    g = conv_geometry(instr)
    if operand_index == 0:
        return [[convolution_lhs_output_map(g)]]
    return [[convolution_rhs_output_map(g, assume_finite)]]


__all__ = ["ConvGeometry", "conv_geometry", "convolution_operand_maps",
           "convolution_lhs_output_map", "convolution_rhs_output_map"]
