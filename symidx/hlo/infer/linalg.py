"""Shape rules of dot, convolution (and the window arithmetic reduce-window shares),
cholesky, triangular-solve, fft, the batch-norm ops and topk."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from symidx.hlo.infer.common import (
    _COMPLEX,
    _COMPONENT,
    _FLOATING,
    _array,
    _fail,
    _in_range,
    _infers,
    _int,
    _list,
    _plain,
    _strip,
    _wider,
    braced,
    compatible,
    operand_array,
    same_dims,
    shape_text,
)
from symidx.hlo.shape import UNBOUNDED_SIZE, Shape, ShapeLike, TupleShape

if TYPE_CHECKING:
    from symidx.hlo.ir import HloInstruction


# --------------------------------------------------------------------------- dot, convolution

@_infers("dot")
def _dot(instr: HloInstruction) -> ShapeLike:
    if "sparsity" in instr.attributes:
        raise _fail(instr, "the shape of a sparse dot cannot be inferred; write it")
    lhs, rhs = operand_array(instr, 0, "lhs"), operand_array(instr, 1, "rhs")
    dn = instr.dot_dimension_numbers
    assert dn is not None
    for key, dims, shape in (("lhs_batch_dims", dn.lhs_batch_dims, lhs),
                             ("lhs_contracting_dims", dn.lhs_contracting_dims, lhs),
                             ("rhs_batch_dims", dn.rhs_batch_dims, rhs),
                             ("rhs_contracting_dims", dn.rhs_contracting_dims, rhs)):
        _in_range(instr, key, dims, shape.rank, shape)
    for key, dims in (("lhs", dn.lhs_batch_dims + dn.lhs_contracting_dims),
                      ("rhs", dn.rhs_batch_dims + dn.rhs_contracting_dims)):
        if len(set(dims)) != len(dims):
            raise _fail(instr, f"the {key} batch and contracting dimensions repeat a dimension")
    for kind, lhs_dims, rhs_dims in (("contracting", dn.lhs_contracting_dims,
                                      dn.rhs_contracting_dims),
                                     ("batch", dn.lhs_batch_dims, dn.rhs_batch_dims)):
        if len(lhs_dims) != len(rhs_dims):
            raise _fail(instr, f"lhs has {len(lhs_dims)} {kind} dimensions, rhs "
                               f"{len(rhs_dims)}", f"lhs_{kind}_dims")
        lhs_sizes = [lhs.dims[d] for d in lhs_dims]
        rhs_sizes = [rhs.dims[d] for d in rhs_dims]
        if not same_dims(lhs_sizes, rhs_sizes):
            raise _fail(instr, f"the {kind} dimensions of lhs {shape_text(lhs)} (sizes "
                               f"{lhs_sizes}) and rhs {shape_text(rhs)} (sizes {rhs_sizes}) "
                               f"differ", f"lhs_{kind}_dims")
    lhs_kept = [*dn.lhs_batch_dims, *(d for d in range(lhs.rank) if d not in
                                      dn.lhs_batch_dims + dn.lhs_contracting_dims)]
    rhs_kept = [d for d in range(rhs.rank) if d not in dn.rhs_batch_dims + dn.rhs_contracting_dims]
    sizes = [lhs.dims[d] for d in lhs_kept] + [rhs.dims[d] for d in rhs_kept]
    dynamic = [lhs.dynamic[d] for d in lhs_kept] + [rhs.dynamic[d] for d in rhs_kept]
    return _array(_wider(lhs.element_type, rhs.element_type), sizes, dynamic)


def _dilated(size: int, dilation: int) -> int:
    return 0 if size == 0 else (size - 1) * dilation + 1


def window_output_size(size: int, window: int, stride: int = 1, padding_low: int = 0,
                       padding_high: int = 0, base_dilation: int = 1,
                       window_dilation: int = 1) -> int:
    """How many positions a window of ``window`` elements (dilated by ``window_dilation``)
    takes with ``stride`` over a dimension of ``size`` elements dilated by ``base_dilation``
    and padded by ``padding_low``/``padding_high`` (XLA's ``StridedBound``). Raises
    ValueError if the padded dimension is negative."""
    bound = padding_low + _dilated(size, base_dilation) + padding_high
    if bound < 0:
        raise ValueError(f"the padded dimension has negative size {bound}")
    span = _dilated(window, window_dilation)
    return 0 if bound == 0 or span > bound else (bound - span) // stride + 1


def _window_shape(instr: HloInstruction, base: Sequence[int], element_type: str,
                  dynamic: Sequence[bool], of: Shape | str) -> Shape:
    """The shape a window (``window=``, or none) gives over dimensions ``base`` (those of
    ``of``, a shape or words naming one)."""
    window = instr.window or ()
    if len(window) != len(base):
        what = shape_text(of) if isinstance(of, Shape) else of
        raise _fail(instr, f"window= has {len(window)} dimensions, but {what} has "
                           f"{len(base)}", "window")
    sizes = []
    for d, (w, size) in enumerate(zip(window, base, strict=True)):
        if w.size <= 0 or w.stride <= 0 or w.base_dilation < 1 or w.window_dilation < 1:
            raise _fail(instr, f"window dimension {d} needs a positive size and stride and "
                               f"dilations of at least 1", "window")
        if size == UNBOUNDED_SIZE:
            sizes.append(UNBOUNDED_SIZE)
            continue
        try:
            sizes.append(window_output_size(size, w.size, w.stride, w.padding_low,
                                            w.padding_high, w.base_dilation, w.window_dilation))
        except ValueError as e:
            raise _fail(instr, f"window dimension {d}: {e}", "window") from None
    return _array(element_type, sizes, dynamic)


@_infers("convolution")
def _convolution(instr: HloInstruction) -> ShapeLike:
    lhs, rhs = operand_array(instr, 0, "lhs"), operand_array(instr, 1, "rhs")
    dn = instr.dim_labels
    if dn is None:
        raise _fail(instr, "is missing attribute dim_labels=")
    fgc, bgc = instr.feature_group_count, instr.batch_group_count
    if fgc <= 0 or bgc <= 0 or (fgc > 1 and bgc > 1):
        raise _fail(instr, f"feature_group_count={fgc} and batch_group_count={bgc} must be "
                           f"positive, and not both above 1")
    rank = len(dn.input_spatial_dimensions) + 2
    for role, shape in (("lhs", lhs), ("rhs", rhs)):
        if shape.rank != rank:
            raise _fail(instr, f"dim_labels= needs operands of rank {rank}, but {role} is "
                               f"{shape_text(shape)}", "dim_labels")
    batch, features = lhs.dims[dn.input_batch_dimension], lhs.dims[dn.input_feature_dimension]
    kernel_in = rhs.dims[dn.kernel_input_feature_dimension]
    kernel_out = rhs.dims[dn.kernel_output_feature_dimension]
    if features % fgc or features // fgc != kernel_in:
        raise _fail(instr, f"the input features ({features}) divided by feature_group_count "
                           f"({fgc}) must equal the kernel input features ({kernel_in})")
    if kernel_out % fgc or kernel_out % bgc:
        raise _fail(instr, f"the kernel output features ({kernel_out}) must be a multiple of "
                           f"feature_group_count ({fgc}) and batch_group_count ({bgc})")
    if batch % bgc:
        raise _fail(instr, f"the input batch ({batch}) must be a multiple of batch_group_count "
                           f"({bgc})")
    kernel_spatial = [rhs.dims[d] for d in dn.kernel_spatial_dimensions]
    window_sizes = [w.size for w in instr.window or ()]
    if kernel_spatial != window_sizes:
        raise _fail(instr, f"the window sizes {window_sizes} must equal the kernel's spatial "
                           f"dimensions {kernel_spatial}", "window")
    spatial = _window_shape(instr, [lhs.dims[d] for d in dn.input_spatial_dimensions],
                            lhs.element_type, (), "the input's spatial part")
    dims = [0] * rank
    dims[dn.output_batch_dimension] = batch // bgc
    dims[dn.output_feature_dimension] = kernel_out
    dynamic = [False] * rank
    dynamic[dn.output_batch_dimension] = lhs.dynamic[dn.input_batch_dimension]
    for k, d in enumerate(dn.output_spatial_dimensions):
        dims[d] = spatial.dims[k]
        dynamic[d] = lhs.dynamic[dn.input_spatial_dimensions[k]] or \
            rhs.dynamic[dn.kernel_spatial_dimensions[k]]
    return _array(_wider(lhs.element_type, rhs.element_type), dims, dynamic)
@_infers("cholesky")
def _cholesky(instr: HloInstruction) -> ShapeLike:
    a = operand_array(instr, 0)
    if a.element_type not in _FLOATING | _COMPLEX or a.rank < 2 or a.dims[-1] != a.dims[-2]:
        raise _fail(instr, f"needs a floating-point or complex operand of rank >= 2 with "
                           f"square minor dimensions, but has {shape_text(a)}")
    return _plain(a)


@_infers("triangular-solve")
def _triangular_solve(instr: HloInstruction) -> ShapeLike:
    a, b = operand_array(instr, 0, "a"), operand_array(instr, 1, "b")
    left = (instr.attr_str("left_side") or "false") == "true"
    shared = b.dims[-2 if left else -1] if b.rank >= 2 else None
    if a.element_type not in _FLOATING | _COMPLEX or a.element_type != b.element_type \
            or a.rank < 2 or b.rank != a.rank or a.dims[-1] != a.dims[-2] \
            or a.dims[-1] != shared or a.dims[:-2] != b.dims[:-2]:
        raise _fail(instr, f"needs a square a and b of one floating-point or complex type, "
                           f"equal batch dimensions and a shared dimension, but has a="
                           f"{shape_text(a)} and b={shape_text(b)} (left_side="
                           f"{str(left).lower()})")
    return _plain(b)


@_infers("fft")
def _fft(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    kind = instr.attr_str("fft_type")
    lengths = _list(instr, "fft_length")
    t, n = operand.element_type, len(lengths)
    if kind not in ("FFT", "IFFT", "RFFT", "IRFFT"):
        raise _fail(instr, f"fft_type={kind} is not FFT, IFFT, RFFT or IRFFT", "fft_type")
    if not 1 <= n <= 3 or operand.rank < n:
        raise _fail(instr, f"fft_length={braced(lengths)} needs 1 to 3 lengths and an "
                           f"operand of at least that rank, but the operand is "
                           f"{shape_text(operand)}", "fft_length")
    inner = list(operand.dims[-n:])
    if kind in ("FFT", "IFFT"):
        if t not in _COMPLEX:
            raise _fail(instr, f"{kind} needs a complex operand, but has {shape_text(operand)}")
        return _plain(operand)
    dims = list(operand.dims)
    if kind == "RFFT":
        if t not in ("f32", "f64") or inner != list(lengths):
            raise _fail(instr, f"RFFT needs an f32 or f64 operand whose minor dimensions are "
                               f"fft_length={braced(lengths)}, but has {shape_text(operand)}")
        if lengths[-1]:
            dims[-1] = lengths[-1] // 2 + 1
        return _array("c64" if t == "f32" else "c128", dims, operand.dynamic)
    expected_last = lengths[-1] // 2 + 1
    if t not in _COMPLEX or inner[:-1] != list(lengths[:-1]) or (
            (inner[-1] or lengths[-1]) and inner[-1] != expected_last):
        raise _fail(instr, f"IRFFT needs a complex operand whose minor dimensions are "
                           f"{list(lengths[:-1]) + [expected_last]}, but has "
                           f"{shape_text(operand)}")
    dims[-1] = lengths[-1]
    return _array(_COMPONENT[t], dims, operand.dynamic)


def _feature_index(instr: HloInstruction, operand: Shape) -> int:
    index = _int(instr, "feature_index")
    if not 0 <= index < operand.rank:
        raise _fail(instr, f"feature_index={index} is out of range for {shape_text(operand)}",
                    "feature_index")
    return index


def _batch_norm_features(instr: HloInstruction, roles: Sequence[str]) -> tuple[Shape, Shape]:
    """The operand and the per-feature shape, after checking the per-feature operands
    (``roles``: operands 1.. in order) against the feature dimension."""
    operand = operand_array(instr, 0)
    if operand.element_type not in _FLOATING:
        raise _fail(instr, f"the operand must be floating-point, but is {shape_text(operand)}")
    count = operand.dims[_feature_index(instr, operand)]
    feature = _array(operand.element_type, [count])
    for k, role in enumerate(roles, start=1):
        shape = operand_array(instr, k, role)
        if not compatible(shape, feature):
            raise _fail(instr, f"{role} must be {shape_text(feature)} (one per feature), but "
                               f"is {shape_text(shape)}")
    return _strip(operand), feature


@_infers("batch-norm-training")
def _batch_norm_training(instr: HloInstruction) -> ShapeLike:
    operand, feature = _batch_norm_features(instr, ("scale", "offset"))
    return TupleShape((operand, feature, feature))


@_infers("batch-norm-inference")
def _batch_norm_inference(instr: HloInstruction) -> ShapeLike:
    operand, _ = _batch_norm_features(instr, ("scale", "offset", "mean", "variance"))
    return operand


@_infers("batch-norm-grad")
def _batch_norm_grad(instr: HloInstruction) -> ShapeLike:
    operand, feature = _batch_norm_features(instr, ("scale", "mean", "variance"))
    grad = operand_array(instr, 4, "the output gradient")
    if not compatible(grad, operand):
        raise _fail(instr, f"the output gradient {shape_text(grad)} must have the shape of "
                           f"the operand {shape_text(operand)}")
    return TupleShape((operand, feature, feature))


@_infers("topk")
def _topk(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    k = _int(instr, "k")
    if operand.rank < 1 or k < 0 or (operand.dims[-1] != UNBOUNDED_SIZE and k > operand.dims[-1]):
        raise _fail(instr, f"k={k} must be at most the last dimension of "
                           f"{shape_text(operand)}", "k")
    dims = (*operand.dims[:-1], k)
    dynamic = (*operand.dynamic[:-1], False)
    return TupleShape((_array(operand.element_type, dims, dynamic), _array("s32", dims, dynamic)))
