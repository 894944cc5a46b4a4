"""GPU library calls: the ``custom-call`` targets XLA's GPU compiler and TransformerEngine
emit for matmuls, convolutions and attention, read from their ``backend_config`` and the
instruction's own attributes. :mod:`symidx.ops.custom_call` dispatches to
:func:`library_call`; a call whose shapes or configuration do not fit what is described
here stays a labelled over-approximation (every output element reads everything).

One module per family: :mod:`~symidx.ops.gpu_library.cublas` (matmuls),
:mod:`~symidx.ops.gpu_library.cudnn` (convolutions), :mod:`~symidx.ops.gpu_library.attention`
(TransformerEngine's fused attention); what they share (:class:`LibraryCall`, reading the
configuration, a map's parts under construction, :func:`invert`) in
:mod:`~symidx.ops.gpu_library.common`.
"""

from __future__ import annotations

from functools import lru_cache

from symidx.errors import HloShapeError
from symidx.hlo import HloInstruction, Shape
from symidx.ops.gpu_library.attention import ATTENTION_TARGETS, Attention, mlir_attributes
from symidx.ops.gpu_library.common import LibraryCall, invert
from symidx.ops.gpu_library.cublas import GEMM_TARGETS, Gemm
from symidx.ops.gpu_library.cudnn import CONV_TARGETS, Convolution

__all__ = ["LibraryCall", "library_call", "GEMM_TARGETS", "CONV_TARGETS", "ATTENTION_TARGETS",
           "invert", "mlir_attributes"]


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
            return Gemm(instr, target)
        if target in CONV_TARGETS:
            return Convolution(instr, target)
        return Attention(instr, target)
    except (HloShapeError, KeyError, TypeError, ValueError):
        return None
