"""Flops per output element of an HLO instruction, as XLA's tiled cost model counts them
(``GpuPerformanceModelWithIndexingAnalysis::FlopsPerElement``).

* **Data movement** costs nothing: bitcast, broadcast, constant, dynamic-slice,
  dynamic-update-slice, gather, iota, pad, parameter, slice, transpose, tuple (and
  get-tuple-element, reshape, reverse and copy-start/done, which XLA's cost analysis also
  counts as 0 flops).
* **Concatenate**: 6 per element, 400 when it concatenates along a dimension other than
  the first and its first operand's size there is not a multiple of 32
  (``GpuHloCostAnalysis::HandleConcatenate``).
* **Elementwise** ops: the device's op profile, clock cycles per element by opcode and
  element type of the result (``hlo_op_profiles_data.h``); 3 for an op the profile does
  not list (``kDefaultFlopsPerElement``).
* **Reduce**: ``(R - 1) * f`` with ``R`` the product of the reduced dimensions, each padded
  to a power of two, and ``f`` the flops of one application of the reducer (the sum over
  its instructions).
* **Reduce-window**: ``(W - 1) * f``, ``W`` the window's elements (``HloCostAnalysis``).
* **Dot**: ``2 * K`` (one multiply-add per element of the contracted dimensions;
  ``HloCostAnalysis::GetDotFlops``), 8 K for complex types.

Anything else is outside the model: :func:`flops_per_element` says so with
:class:`UnmodelledOp`.
"""

from __future__ import annotations

from math import prod
from typing import Any

from symidx.cost.constants import (
    CONCATENATE_FLOPS,
    CONCATENATE_MISALIGNED_FLOPS,
    DEFAULT_FLOPS_PER_ELEMENT,
)
from symidx.cost.devices import Device
from symidx.errors import SymidxError
from symidx.ops.elementwise import ELEMENTWISE_OPCODES

__all__ = ["flops_per_element", "UnmodelledOp", "next_pow2", "ZERO_FLOP_OPCODES"]

#: Ops that only move data (XLA's list, and the ops its cost analysis gives 0 flops).
ZERO_FLOP_OPCODES = frozenset((
    "bitcast", "broadcast", "constant", "dynamic-slice", "dynamic-update-slice", "gather",
    "iota", "pad", "parameter", "slice", "transpose", "tuple", "get-tuple-element",
    "reshape", "reverse", "copy-start", "copy-done", "after-all", "add-dependency",
    "optimization-barrier"))
_ELEMENTWISE = frozenset(ELEMENTWISE_OPCODES)


class UnmodelledOp(SymidxError):
    """An instruction XLA's tiled cost model has no flop count for in symidx."""


def next_pow2(n: int) -> int:
    """The least power of two at or above ``n`` (``llvm::PowerOf2Ceil``; 0 for 0)."""
    if n <= 0:
        return 0
    return 1 << (int(n) - 1).bit_length()


def _dims(shape: Any) -> tuple[int, ...]:
    if hasattr(shape, "elements"):
        return _dims(shape.elements[0])
    return tuple(shape.dims)


def _element_type(shape: Any) -> str:
    if hasattr(shape, "elements"):
        return _element_type(shape.elements[0])
    return str(shape.element_type)


def flops_per_element(instr: Any, dev: Device) -> int:
    """Flops per element of ``instr``'s output on ``dev`` (see the module docstring)."""
    op = instr.opcode
    if op in ZERO_FLOP_OPCODES:
        return 0
    if op == "concatenate":
        cut = (instr.dimensions or (0,))[0]
        first = _dims(instr.operands[0].shape)
        if cut > 0 and first[cut] % 32:
            return CONCATENATE_MISALIGNED_FLOPS
        return CONCATENATE_FLOPS
    if op in _ELEMENTWISE:
        cycles = dev.op_cycles(op, _element_type(instr.shape))
        return DEFAULT_FLOPS_PER_ELEMENT if cycles is None else cycles
    if op == "reduce":
        comps = [c for cs in instr.called_computations.values() for c in cs]
        if not comps:
            raise UnmodelledOp(f"{instr.name}: a reduce without a reducer computation")
        per_application = sum(flops_per_element(i, dev) for i in comps[0].instructions)
        operand = _dims(instr.operands[0].shape)
        padded = prod(next_pow2(operand[d]) for d in (instr.dimensions or ()))
        return (padded - 1) * per_application
    if op == "reduce-window" and instr.window is not None:
        comps = [c for cs in instr.called_computations.values() for c in cs]
        if not comps:
            raise UnmodelledOp(f"{instr.name}: a reduce-window without a reducer computation")
        per_application = sum(flops_per_element(i, dev) for i in comps[0].instructions)
        return (prod(w.size for w in instr.window) - 1) * per_application
    if op in ("dot", "scaled-dot") and instr.dot_dimension_numbers is not None:
        lhs = _dims(instr.operands[0].shape)
        k = prod(lhs[d] for d in instr.dot_dimension_numbers.lhs_contracting_dims)
        complex_ = _element_type(instr.shape).startswith("c")
        return (8 if complex_ else 2) * k
    raise UnmodelledOp(f"{instr.name}: no flop count for {op} in XLA's tiled cost model")
