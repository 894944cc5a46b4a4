"""``custom-call``: exact maps for targets whose meaning is public and fixed, a labelled
over-approximation for every other target.

Exact targets (checked against XLA's sources):

* pass-through annotations, output = operand: ``Sharding`` (a sharding annotation, removed
  by SPMD partitioning), ``xla.sdy.FuncResultSharding`` (Shardy's annotation of a function
  result), ``annotate_device_placement`` (a memory placement annotation, turned into
  ``MoveToHost``/``MoveToDevice``), ``MoveToHost`` and ``MoveToDevice`` (host offloading:
  the call is removed and its operand used in its place), ``LayoutConstraint`` (pins a
  layout; the logical index is unchanged). Output index ``d`` reads operand index ``d``.
* ``TopK`` (``(values, indices)`` of the last dimension, as the ``topk`` op): an output
  element reads its whole last-dimension row.
* ``SliceToDynamic`` (an array and one scalar size per dimension: the array with those
  dynamic sizes, as ``set-dimension-size`` on every dimension) reads the element at its own
  index and every size; ``PadToStatic`` (a dynamic array: the same buffer at its static
  bounds, then one size per dimension) reads its operand at the same index, and its sizes,
  like ``get-dimension-size``, read no element.
* GPU library calls (cuBLAS gemms, cuDNN convolutions, TransformerEngine fused attention):
  :mod:`symidx.ops.gpu_library`, exact per output leaf except the leaves it labels
  (workspaces, an RNG state).
* ``xla_builder.math.*`` (XLA's math library: ``Acosh``, ``Asin``, ``NextAfter``,
  ``RandomGammaGrad``, ...): elementwise functions of their operands, exact when every
  operand has the output's shape. An ``xla_builder.*`` call that carries its computation
  (``called_computations=`` or ``to_apply=``, as XLA's builder expands it) is that
  computation run on its operands: :func:`library_computation` names it, and the sweep
  analyses through it as through a ``call``.

Any other target (``SPMDFullToShardShape`` and ``SPMDShardToFullShape`` included: their
maps depend on the device's tile, which the instruction does not give per participant), and
an exact target whose shapes do not fit its pattern, gets the sound over-approximation:
every output element reads every element of every operand. :func:`symidx.ops.opaque_reason`
then returns ``"custom-call <target>"``. A tuple-shaped operand cannot be named by a map to
one array: the rules raise :class:`~symidx.errors.UnsupportedOpError` for it.
"""

from __future__ import annotations

from collections.abc import Callable

from symidx.core.indexing_map import IndexingMap
from symidx.hlo import HloComputation, HloInstruction, Shape
from symidx.hlo.facts import num_outputs
from symidx.ops.basic import (
    array_operand_dims,
    from_scalar,
    identity,
    reaches_everything,
    reads_everything,
    to_scalar,
)
from symidx.ops.gpu_library import library_call
from symidx.ops.linalg import topk_in, topk_out
from symidx.ops.registry import (
    INPUT_TO_OUTPUT,
    OUTPUT_TO_INPUT,
    Direction,
    output_opacity,
    rule,
)

#: Targets whose output is their one operand, unchanged.
PASS_THROUGH_TARGETS = frozenset({
    "Sharding", "xla.sdy.FuncResultSharding", "annotate_device_placement", "MoveToHost",
    "MoveToDevice", "LayoutConstraint",
})
TOPK_TARGET = "TopK"
#: XLA's builder library: its math functions are elementwise.
BUILDER_PREFIX, BUILDER_MATH_PREFIX = "xla_builder.", "xla_builder.math."


def target(instr: HloInstruction) -> str:
    return instr.attr_str("custom_call_target") or ""


def _pass_through(instr: HloInstruction) -> bool:
    if target(instr) not in PASS_THROUGH_TARGETS or len(instr.operands) != 1:
        return False
    operand, out = instr.operands[0].shape, instr.shape
    return isinstance(operand, Shape) and isinstance(out, Shape) and operand.dims == out.dims


def _topk(instr: HloInstruction) -> bool:
    if target(instr) != TOPK_TARGET or len(instr.operands) != 1:
        return False
    operand = instr.operands[0].shape
    if not isinstance(operand, Shape) or not operand.dims:
        return False
    outs = instr.shape.elements if not isinstance(instr.shape, Shape) else (instr.shape,)
    return all(isinstance(o, Shape) and o.dims[:-1] == operand.dims[:-1] and o.dims
               and 0 <= o.dims[-1] <= operand.dims[-1] for o in outs) \
        and len({o.dims for o in outs if isinstance(o, Shape)}) == 1


def _slice_to_dynamic(instr: HloInstruction) -> bool:
    if target(instr) != "SliceToDynamic" or not isinstance(instr.shape, Shape) \
            or len(instr.operands) != len(instr.shape.dims) + 1:
        return False
    shapes = [op.shape for op in instr.operands]
    arrays = [sh for sh in shapes if isinstance(sh, Shape)]
    return len(arrays) == len(shapes) and arrays[0].dims == instr.shape.dims \
        and all(sh.dims == () for sh in arrays[1:])


def _pad_to_static(instr: HloInstruction) -> bool:
    if target(instr) != "PadToStatic" or len(instr.operands) != 1 \
            or isinstance(instr.shape, Shape):
        return False
    operand = instr.operands[0].shape
    outs = [o for o in instr.shape.elements if isinstance(o, Shape)]
    return isinstance(operand, Shape) and len(outs) == len(instr.shape.elements) \
        == len(operand.dims) + 1 and outs[0].dims == operand.dims \
        and all(o.dims == () for o in outs[1:])


def _dynamic_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    if _pad_to_static(instr):
        dims = array_operand_dims(instr, 0)
        return [[identity(dims)] if output_index == 0 else []]
    dims = array_operand_dims(instr, 0)
    return [[identity(dims)]] + [[to_scalar(dims)] for _ in instr.operands[1:]]


def _dynamic_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    dims = array_operand_dims(instr, 0)
    if _pad_to_static(instr):
        return [[identity(dims)]] + [[] for _ in dims]
    return [[identity(dims) if operand_index == 0 else from_scalar(dims)]]


def _builder_elementwise(instr: HloInstruction) -> bool:
    if not target(instr).startswith(BUILDER_MATH_PREFIX) or not isinstance(instr.shape, Shape):
        return False
    return all(isinstance(op.shape, Shape) and op.shape.dims == instr.shape.dims
               for op in instr.operands)


def library_computation(instr: HloInstruction) -> HloComputation | None:
    """The computation an ``xla_builder.*`` custom-call carries and computes (one
    parameter per operand, the call's shape at its root), or None."""
    if instr.opcode != "custom-call" or not target(instr).startswith(BUILDER_PREFIX):
        return None
    called = [c for key in ("called_computations", "to_apply")
              for c in instr.called_computations.get(key, ())]
    if len(called) != 1:
        return None
    comp = called[0]
    if len(comp.parameters) != len(instr.operands) or str(comp.root.shape) != str(instr.shape):
        return None
    if any(str(p.shape) != str(op.shape) for p, op in zip(comp.parameters, instr.operands,
                                                            strict=True)):
        return None
    return comp


Maps = Callable[[HloInstruction, int], list[list[IndexingMap]]]


def _dynamic(instr: HloInstruction) -> bool:
    return _slice_to_dynamic(instr) or _pad_to_static(instr)


def _operand_unchanged(instr: HloInstruction, index: int) -> list[list[IndexingMap]]:
    return [[identity(array_operand_dims(instr, 0))]]


def _elementwise_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    return [[identity(array_operand_dims(instr, k))] for k in range(len(instr.operands))]


def _elementwise_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    return [[identity(array_operand_dims(instr, operand_index))]]


#: The custom-calls modelled here, as (recognise, output-to-input maps, input-to-output maps);
#: their targets differ, so at most one recognises a call.
_MODELLED: tuple[tuple[Callable[[HloInstruction], bool], Maps, Maps], ...] = (
    (_pass_through, _operand_unchanged, _operand_unchanged),
    (_topk, topk_out, topk_in),
    (_dynamic, _dynamic_out, _dynamic_in),
    (_builder_elementwise, _elementwise_out, _elementwise_in),
)


def _modelled(instr: HloInstruction) -> tuple[Maps, Maps] | None:
    """The (output-to-input, input-to-output) maps of a custom-call modelled here, or None."""
    for recognise, out, in_ in _MODELLED:
        if recognise(instr):
            return out, in_
    return None


@rule(OUTPUT_TO_INPUT, "custom-call")
def _custom_call_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    return _custom_call(instr, output_index, backward=True)


@rule(INPUT_TO_OUTPUT, "custom-call")
def _custom_call_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    return _custom_call(instr, operand_index, backward=False)


def _custom_call(instr: HloInstruction, index: int, backward: bool) -> list[list[IndexingMap]]:
    """The maps of output ``index`` (``backward``: output-to-input) or operand ``index``: a
    call modelled here, a GPU library's, or else every element reads everything."""
    maps = _modelled(instr)
    if maps is not None:
        return maps[0 if backward else 1](instr, index)
    call = library_call(instr)
    if call is not None:
        return call.reads(index) if backward else call.reached(index)
    return reads_everything(instr, index) if backward else reaches_everything(instr, index)


@output_opacity("custom-call")
def _custom_call_opacity(instr: HloInstruction, output: int | None,
                         direction: Direction | None) -> str | None:
    if _modelled(instr) is not None or not instr.operands or not num_outputs(instr):
        return None
    call = library_call(instr)
    if call is not None:
        return call.reason(output, direction != INPUT_TO_OUTPUT)
    return f"custom-call {target(instr)}"

