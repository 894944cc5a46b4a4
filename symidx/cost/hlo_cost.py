"""XLA's GPU HLO cost analysis (``GpuHloCostAnalysis`` on top of ``HloCostAnalysis``):
per instruction, the flops, the bytes it writes, the bytes it reads of each operand and how
much of each operand it uses.

What it counts (the facts of ``hlo_cost_analysis.cc`` and ``gpu_hlo_cost_analysis.cc``):

* **Defaults**: an instruction writes its whole output and reads each whole operand,
  using each operand once (utilization 1).
* **Flops**: an elementwise op costs the device's cycles per element for its opcode and
  output type (the op profile, 3 when it has no entry) times its elements; a reduce its
  reducer's flops times (input elements - output elements); a concatenate 6 per output
  element (400 when the concatenated dimension is not the first and the first operand's
  extent along it is not a multiple of 32); a dot 2 per multiply-add; a map its
  computation's flops per element; data movement none.
* **Bytes**: a bitcast, a get-tuple-element, a parameter and a constant move nothing; a
  slice, a dynamic-slice and a gather read and write their output's size; a
  dynamic-update-slice writes its update (operand 0 is aliased: read 0 bytes, used for the
  part not overwritten); a broadcast reads its output's size (every output element reads
  an operand element) and uses its operand output/operand times; a reduce reads its inputs
  whole and its init values once per output element; a tuple writes its pointer table.
* **A fusion**: its flops are each fused instruction's flops times how often the fusion
  evaluates it (its *utilization*); it reads ``size(parameter) * utilization(parameter)``
  of each operand and writes its outputs (a dynamic-update-slice root: its update).
  Utilizations flow from the root (utilization 1) towards the parameters: an elementwise
  op, a tuple, a get-tuple-element and a bitcast that keeps the shape pass their users'
  *elementwise roots* on; any other op makes its operand a new root, used ``utilization
  * operand utilization`` times, rounded up to whole elements. Two instructions share the
  utilization of their common elementwise roots (``CommonElementwiseUtilization``).

XLA keeps these properties in single-precision floats; so does this module.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from symidx.cost.constants import (
    CONCATENATE_FLOPS,
    CONCATENATE_MISALIGNED_FLOPS,
    DEFAULT_FLOPS_PER_ELEMENT,
)
from symidx.cost.numbers import f32, f32_add, f32_div, f32_mul, llround
from symidx.cost.shapes import (
    bits,
    element_bytes,
    elements,
    elements_recursive,
    equal_ignoring_element_type,
    shape_size,
    transpose_is_bitcast,
)
from symidx.errors import SymidxError
from symidx.hlo import HloComputation, HloInstruction, Shape, TupleShape
from symidx.hlo.facts import called_computation
from symidx.hlo.leaves import leaves
from symidx.ops.elementwise import ELEMENTWISE_OPCODES

__all__ = ["CostAnalysis", "Properties", "UnsupportedByCostModel", "is_elementwise",
           "post_order"]

#: ``HloCostAnalysis::kFmaFlops``: a multiply-add counts as two flops.
FMA_FLOPS = 2

_ELEMENTWISE = frozenset(ELEMENTWISE_OPCODES) | {"bitcast-convert"}
#: Ops XLA's cost analysis cannot price (or prices as unknown, -1): the model refuses them.
_UNPRICED = frozenset({
    "custom-call", "while", "conditional", "call", "async-start", "async-update", "async-done",
    "all-reduce", "all-reduce-start", "all-reduce-done", "all-gather", "all-gather-start",
    "all-gather-done", "all-to-all", "collective-permute", "collective-permute-start",
    "collective-permute-done", "reduce-scatter", "send", "send-done", "recv", "recv-done",
    "infeed", "outfeed", "ragged-all-to-all", "collective-broadcast",
})


class UnsupportedByCostModel(SymidxError):
    """The cost model has no price for this instruction (XLA's cost analysis leaves it
    unknown, or it is not a kernel). ``instr`` is the instruction, when one is to blame."""

    def __init__(self, message: str, instr: HloInstruction | None = None) -> None:
        super().__init__(message)
        self.instr = instr


def is_elementwise(instr: HloInstruction) -> bool:
    """``HloInstruction::IsElementwise``: an elementwise opcode (a bitcast-convert between
    types of one width), or a fusion all of whose fused instructions are."""
    if instr.opcode == "bitcast-convert":
        a, b = instr.shape, instr.operands[0].shape
        return isinstance(a, Shape) and isinstance(b, Shape) and bits(a) == bits(b)
    if instr.opcode == "fusion":
        comp = called_computation(instr)
        return comp is not None and all(
            i.opcode == "parameter" or is_elementwise(i) for i in comp.instructions)
    return instr.opcode in _ELEMENTWISE


@dataclass
class Properties:
    """One instruction's cost properties (XLA's keys), as single-precision floats."""

    flops: float = 0.0
    #: bytes written (XLA's output bytes accessed at the shape index ``{}``)
    output_bytes: float = 0.0
    operand_bytes: dict[int, float] = field(default_factory=dict)
    operand_utilization: dict[int, float] = field(default_factory=dict)
    #: for a fused instruction: how many times the fusion evaluates it per output
    utilization: float = 0.0
    #: for a fused instruction: how many times its code is emitted (XLA's IR size)
    ir_size: float = 0.0


def post_order(comp: HloComputation) -> list[HloInstruction]:
    """Every instruction after its operands, as ``MakeInstructionPostOrder`` walks them: a
    depth-first walk over operands from each instruction no other uses, in text order."""
    used = {id(op) for instr in comp.instructions for op in instr.operands}
    order: list[HloInstruction] = []
    seen: set[int] = set()
    for start in comp.instructions:
        if id(start) in used and start is not comp.root:
            continue
        stack: list[tuple[HloInstruction, int]] = [(start, 0)]
        while stack:
            instr, k = stack.pop()
            if k == 0 and id(instr) in seen:
                continue
            if k < len(instr.operands):
                stack.append((instr, k + 1))
                op = instr.operands[k]
                if id(op) not in seen:
                    stack.append((op, 0))
                continue
            if id(instr) not in seen:
                seen.add(id(instr))
                order.append(instr)
    # instructions only reachable through a used-but-unreached chain (none in a valid
    # computation) keep text order
    for instr in comp.instructions:
        if id(instr) not in seen:
            seen.add(id(instr))
            order.append(instr)
    return order


class CostAnalysis:
    """The cost properties of every instruction of the computations it is given, on one
    device's op profile. ``analyze(comp)`` visits a computation (and the computations its
    fusions and reducers call)."""

    def __init__(self, op_profile: Mapping[str, int],
                 default_flops: int = DEFAULT_FLOPS_PER_ELEMENT) -> None:
        self.op_profile = op_profile
        self.default_flops = default_flops
        self.props: dict[HloInstruction, Properties] = {}
        #: per fused instruction: the elementwise roots it is used from
        self.elementwise_roots: dict[HloInstruction, set[HloInstruction]] = {}
        #: per fused instruction that is a root: the utilization of its subtree
        self.root_utilization: dict[HloInstruction, float] = {}
        self._computation_flops: dict[int, float] = {}

    # ------------------------------------------------------------------ queries
    def properties(self, instr: HloInstruction) -> Properties:
        return self.ensure(instr)

    def flop_count(self, instr: HloInstruction) -> int:
        return _to_int64(self.properties(instr).flops)

    def output_bytes_accessed(self, instr: HloInstruction) -> int:
        return _to_int64(self.properties(instr).output_bytes)

    def operand_bytes_accessed(self, instr: HloInstruction, k: int) -> int:
        return _to_int64(self.properties(instr).operand_bytes.get(k, 0.0))

    def operand_utilization(self, instr: HloInstruction, k: int) -> float:
        return self.properties(instr).operand_utilization.get(k, 0.0)

    def common_elementwise_utilization(self, a: HloInstruction, b: HloInstruction) -> float:
        """The summed utilization of the elementwise roots ``a`` and ``b`` (two fused
        instructions of one fusion) are both used from."""
        roots_b = self.elementwise_roots.get(b, set())
        total = 0.0
        for root in _stable(self.elementwise_roots.get(a, set())):
            if root in roots_b:
                total = f32_add(total, self.root_utilization.get(root, 0.0))
        return total

    # ------------------------------------------------------------------ visiting
    def ensure(self, instr: HloInstruction) -> Properties:
        """The properties of ``instr``, visiting it (and the computations it calls) on
        first use: an instruction's costs depend on its operands' shapes only."""
        if instr not in self.props:
            self.props[instr] = self._visit(instr)
        return self.props[instr]

    def analyze(self, comp: HloComputation) -> float:
        """Visit every instruction of ``comp``; return the sum of their flops (XLA's
        ``properties_sum_`` of a subcomputation)."""
        key = id(comp)
        if key in self._computation_flops:
            return self._computation_flops[key]
        total = 0.0
        for instr in post_order(comp):
            total = f32_add(total, self.ensure(instr).flops)
        self._computation_flops[key] = total
        return total

    def _visit(self, instr: HloInstruction) -> Properties:
        p = Properties(output_bytes=f32(shape_size(instr.shape)))
        for k, op in enumerate(instr.operands):
            p.operand_bytes[k] = f32(shape_size(op.shape))
            p.operand_utilization[k] = 1.0
        handler = _HANDLERS.get(instr.opcode)
        if handler is not None:
            handler(self, instr, p)
        elif is_elementwise(instr):
            self._elementwise(instr, p)
        elif instr.opcode in _UNPRICED:
            raise UnsupportedByCostModel(
                f"{instr.opcode} {instr.name}: the cost model has no price for a "
                f"{instr.opcode}", instr)
        return p

    def flops_per_element(self, opcode: str, element_type: str) -> int:
        return int(self.op_profile.get(f"{opcode}/{element_type}", self.default_flops))

    def _elementwise(self, instr: HloInstruction, p: Properties) -> None:
        shape = instr.shape
        element_type = shape.element_type if isinstance(shape, Shape) else \
            _first_leaf_type(shape)
        p.flops = f32(self.flops_per_element(instr.opcode, element_type)
                      * elements_recursive(shape))

    def _subcomputation_flops(self, instr: HloInstruction, key: str) -> float:
        comps = instr.called_computations.get(key, ())
        if len(comps) != 1:
            raise UnsupportedByCostModel(f"{instr.opcode} {instr.name}: expected one "
                                         f"{key}= computation", instr)
        return self.analyze(comps[0])

    # ------------------------------------------------------------------ fusions
    def _fusion(self, instr: HloInstruction, p: Properties) -> None:
        comp = called_computation(instr)
        if comp is None:
            raise UnsupportedByCostModel(f"fusion {instr.name} calls no computation", instr)
        self.analyze(comp)
        root = comp.root
        p.output_bytes = self._fusion_output_bytes(instr, root)
        p.flops = self._fusion_utilizations(comp)
        for k, param in enumerate(comp.parameters):
            if isinstance(param.shape, TupleShape):
                raise UnsupportedByCostModel(
                    f"fusion {instr.name}: parameter {k} has a tuple shape", instr)
            util = self.props[param].utilization
            p.operand_bytes[k] = f32(llround(f32_mul(shape_size(param.shape), util)))
            p.operand_utilization[k] = util

    def _fusion_output_bytes(self, fusion: HloInstruction, root: HloInstruction) -> float:
        """The bytes a fusion writes: each output leaf, a dynamic-update-slice output only
        its update (whose operand 0 is then no longer used)."""
        if isinstance(fusion.shape, TupleShape):
            total = 0.0
            for k, element in enumerate(fusion.shape.elements):
                if isinstance(element, TupleShape):
                    total = f32_add(total, shape_size(element))
                    continue
                out = root.operands[k] if root.opcode == "tuple" else None
                if out is not None and out.opcode == "dynamic-update-slice":
                    total = f32_add(total, shape_size(out.operands[1].shape))
                    self.props[out].operand_utilization[0] = 0.0
                else:
                    total = f32_add(total, shape_size(element))
            return total
        if root.opcode == "dynamic-update-slice":
            self.props[root].operand_utilization[0] = 0.0
            return f32(shape_size(root.operands[1].shape))
        return f32(shape_size(fusion.shape))

    def _fusion_utilizations(self, comp: HloComputation) -> float:
        """XLA's ``GpuHloCostAnalysis::FusionCalculateUtilizations``: each fused
        instruction's utilization and IR size; returns the fusion's flops."""
        order = list(reversed(post_order(comp)))
        root_ir: dict[HloInstruction, float] = {}
        for instr in order:
            self.props[instr].utilization = 0.0
            self.props[instr].ir_size = 0.0
            self.elementwise_roots[instr] = set()
            self.root_utilization[instr] = 0.0
        root = comp.root
        self.root_utilization[root] = 1.0
        root_ir[root] = 1.0
        self.elementwise_roots[root] = {root}
        flops = 0.0
        for instr in order:
            props = self.props[instr]
            for r in _stable(self.elementwise_roots[instr]):
                props.utilization = f32_add(props.utilization, self.root_utilization[r])
                props.ir_size = f32_add(props.ir_size, root_ir.get(r, 0.0))
            util = props.utilization
            flops = f32_add(flops, f32_mul(util, props.flops))
            passes_roots = (is_elementwise(instr) or instr.opcode in ("tuple",
                                                                      "get-tuple-element")
                            or (instr.opcode == "bitcast" and equal_ignoring_element_type(
                                instr.operands[0].shape, instr.shape)))
            for k, operand in enumerate(instr.operands):
                if passes_roots:
                    self.elementwise_roots[operand] |= self.elementwise_roots[instr]
                    continue
                self.elementwise_roots[operand].add(operand)
                used = f32_mul(util, props.operand_utilization.get(k, 0.0))
                count = elements_recursive(operand.shape)
                used = 0.0 if count == 0 else f32_div(
                    math.ceil(f32_mul(used, count)), count)
                self.root_utilization[operand] = f32_add(self.root_utilization[operand],
                                                         used)
                root_ir[operand] = f32_add(root_ir.get(operand, 0.0), props.ir_size)
        return flops


# ---------------------------------------------------------------------- handlers
def _zero_bytes(_: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    p.output_bytes = 0.0
    for k in p.operand_bytes:
        p.operand_bytes[k] = 0.0


def _no_change(_: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    """Defaults only: data movement without flops (copy, reshape, pad, iota, ...)."""


def _tuple(_: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    for k in p.operand_bytes:
        p.operand_bytes[k] = 0.0


def _transpose(a: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    if transpose_is_bitcast(instr):
        _zero_bytes(a, instr, p)


def _slice_like(_: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    """A slice, dynamic-slice or gather: reads and writes its output's size."""
    out = f32(shape_size(instr.shape))
    p.output_bytes = out
    p.operand_bytes[0] = out
    p.operand_utilization[0] = f32(elements(instr.shape) / elements(instr.operands[0].shape))


def _dynamic_update_slice(_: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    update = f32(shape_size(instr.operands[1].shape))
    p.output_bytes = update
    p.operand_bytes[0] = 0.0
    p.operand_bytes[1] = update
    total = elements(instr.shape)
    p.operand_utilization[0] = f32((total - elements(instr.operands[1].shape)) / total)


def _scatter(a: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    n = len(instr.operands) // 2
    total = 0
    for i in range(n):
        size = shape_size(instr.operands[n + 1 + i].shape)
        p.operand_bytes[i] = f32(size)
        p.operand_bytes[n + 1 + i] = f32(size)
        total += size
    p.operand_bytes[n] = f32(shape_size(instr.operands[n].shape))
    p.output_bytes = f32(total)
    sub = a._subcomputation_flops(instr, "to_apply")
    p.flops = f32_mul(sub, elements(instr.operands[n + 1].shape))


def _broadcast(_: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    # the GPU model counts every input access (``count_multiple_input_accesses``)
    p.operand_bytes[0] = f32(shape_size(instr.shape))
    p.operand_utilization[0] = f32(elements(instr.shape)
                                   / max(1, elements(instr.operands[0].shape)))


def _reduce(a: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    sub = a._subcomputation_flops(instr, "to_apply")
    out_shape = instr.shape if isinstance(instr.shape, Shape) else _first_leaf(instr.shape)
    count = elements(instr.operands[0].shape) - elements(out_shape)
    p.flops = f32_mul(sub, count)
    out_elems = elements(out_shape)
    p.output_bytes = f32(sum(shape_size(leaf) for leaf in _leaves(instr.shape)))
    inputs = len(instr.operands) // 2
    for k in range(inputs, len(instr.operands)):
        p.operand_bytes[k] = f32(out_elems * shape_size(instr.operands[k].shape))
        p.operand_utilization[k] = f32(out_elems)


def _reduce_window(a: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    sub = a._subcomputation_flops(instr, "to_apply")
    window = instr.window or ()
    window_elements = math.prod(w.size for w in window) if window else 1
    out_shape = instr.shape if isinstance(instr.shape, Shape) else _first_leaf(instr.shape)
    out_elems = elements(out_shape)
    count = (window_elements - 1) * out_elems
    reduced = [w for w in window if w.size != 1]
    padded = [w for w in window if w.padding_low != 0 or w.padding_high != 0]
    if len(reduced) == 1 and len(padded) == 1 and isinstance(instr.shape, Shape):
        for d, w in enumerate(window):
            if (w.size != 1 and w.padding_low != 0 and w.padding_high != 0
                    and w.padding_low == w.padding_high and w.size == 2 * w.padding_low + 1):
                if w.padding_low == instr.shape.dims[d] - 1:
                    window_elements = instr.shape.dims[d]
                    count = out_elems // window_elements + window_elements - 1
                break
    in_elems = elements(instr.operands[0].shape)
    p.operand_utilization[0] = f32(out_elems * window_elements / max(1, in_elems))
    p.operand_bytes[0] = f32(out_elems * window_elements
                             * element_bytes(_first_leaf_type(instr.operands[0].shape)))
    p.flops = f32_mul(sub, count)


def _concatenate(_: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    per_element = CONCATENATE_FLOPS
    dim = instr.dimensions[0] if instr.dimensions else 0
    first = instr.operands[0].shape
    if dim > 0 and isinstance(first, Shape) and first.dims[dim] & 31:
        per_element = CONCATENATE_MISALIGNED_FLOPS
    p.flops = f32(per_element * elements_recursive(instr.shape))


def _dot(_: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    dnums = instr.dot_dimension_numbers
    lhs = instr.operands[0].shape
    width = 1
    if dnums is not None and isinstance(lhs, Shape):
        for d in dnums.lhs_contracting_dims:
            width *= lhs.dims[d]
    p.flops = f32(FMA_FLOPS * elements(instr.shape) * width)


def _map(a: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    sub = a._subcomputation_flops(instr, "to_apply")
    p.flops = f32_mul(sub, elements(instr.shape))


def _sort(_: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    n = elements(instr.operands[0].shape)
    p.flops = f32(n * max(0, (n - 1).bit_length()))


def _select_and_scatter(a: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    select = a._subcomputation_flops(instr, "select")
    scatter = a._subcomputation_flops(instr, "scatter")
    source = elements(instr.operands[1].shape)
    window = math.prod(w.size for w in (instr.window or ()))
    p.flops = f32_add(f32_mul(select, source * (window - 1)), f32_mul(scatter, source))


def _fusion(a: CostAnalysis, instr: HloInstruction, p: Properties) -> None:
    a._fusion(instr, p)


_HANDLERS = {
    "parameter": _zero_bytes, "constant": _zero_bytes, "get-tuple-element": _zero_bytes,
    "bitcast": _zero_bytes, "after-all": _zero_bytes, "add-dependency": _zero_bytes,
    "domain": _zero_bytes,
    "copy": _no_change, "reshape": _no_change, "dynamic-reshape": _no_change,
    "reverse": _no_change, "pad": _no_change, "iota": _no_change,
    "optimization-barrier": _no_change, "rng": _no_change, "rng-bit-generator": _no_change,
    "partition-id": _no_change, "replica-id": _no_change,
    "tuple": _tuple, "transpose": _transpose,
    "slice": _slice_like, "dynamic-slice": _slice_like,
    "dynamic-update-slice": _dynamic_update_slice,
    "gather": _slice_like, "scatter": _scatter, "broadcast": _broadcast,
    "reduce": _reduce, "reduce-window": _reduce_window, "concatenate": _concatenate,
    "dot": _dot, "map": _map, "sort": _sort, "select-and-scatter": _select_and_scatter,
    "fusion": _fusion,
}


def _leaves(shape: Shape | TupleShape) -> list[Shape]:
    return list(leaves(shape))


def _first_leaf(shape: Shape | TupleShape) -> Shape:
    return _leaves(shape)[0]


def _first_leaf_type(shape: Shape | TupleShape) -> str:
    return _first_leaf(shape).element_type


def _to_int64(value: float) -> int:
    """A float property read back as XLA's ``int64_t`` (truncated)."""
    if math.isinf(value) or value != value:
        raise SymidxError("a cost property is not finite")
    return int(value)


def _stable(instrs: Iterable[HloInstruction]) -> list[HloInstruction]:
    """A deterministic order for a set of instructions (XLA iterates a hash set)."""
    return sorted(instrs, key=lambda i: (i.line, i.name))
