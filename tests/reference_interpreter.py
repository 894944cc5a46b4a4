"""A numpy reference interpreter for HLO computations: which output elements read which
parameter elements, found by running the computation on concrete arguments.

:func:`execute` walks the computation in order. Every instruction output keeps, per element
(row-major linear index), the set of parameter elements it reads, directly or through the
instructions it reads; an op's own reads come from :mod:`reference_hlo` (one loop per output
element, written from the ops' definitions, independent of :mod:`symidx.ops`). Integer
values (offsets, gather indices, and everything they are computed from) are computed too,
so data-dependent ops read what they really read. Floating-point values never decide an
index, so they are not computed.

Two documented conventions of indexing maps (SPEC §2, ``symidx.ops.slicing``) replace the
op definitions here, so that exact maps compare equal: a pad's value is read by every
output element, and a dynamic-update-slice's operand at every index.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from reference_hlo import Index, box, dependencies, out_dims, ravel
from symidx.hlo import HloComputation, HloInstruction, Shape, topological_order
from symidx.indexing_map import IndexingMap, RuntimeVar
from symidx.ops import num_outputs
from symidx.ops._common import hlo_reference

Key = tuple[str, int]
Reads = list[frozenset[int]]  # per linear output index: codes of parameter elements

NO_READS: frozenset[int] = frozenset()
INTEGER = re.compile(r"(pred|[su][0-9]+)")


def is_integer(instr_or_shape: HloInstruction | Shape) -> bool:
    """Integer or pred element type (values the interpreter computes)."""
    shape = instr_or_shape.shape if isinstance(instr_or_shape, HloInstruction) \
        else instr_or_shape
    return isinstance(shape, Shape) and INTEGER.fullmatch(shape.element_type) is not None


def size(dims: Sequence[int]) -> int:
    return int(np.prod(dims, dtype=np.int64)) if dims else 1


@dataclass
class Execution:
    """One run: per instruction output, the reads of each element and (integer outputs) the
    values. Parameter ``p``'s element ``i`` has code ``offsets[p] + i``."""

    comp: HloComputation
    offsets: list[int]
    reads: dict[Key, Reads] = field(default_factory=dict)
    values: dict[Key, np.ndarray] = field(default_factory=dict)

    def relation(self, parameter: int, output: int = 0) -> np.ndarray:
        """Sorted pair codes ``out * P + i``: output element ``out`` (linear) of the root
        reads element ``i`` of parameter ``parameter`` (``P`` its size)."""
        lo = self.offsets[parameter]
        param_size = size(self.comp.parameters[parameter].shape.dims)
        pairs = [out * param_size + (c - lo)
                 for out, codes in enumerate(self.reads[(self.comp.root.name, output)])
                 for c in codes if lo <= c < lo + param_size]
        return np.unique(np.asarray(pairs, dtype=np.int64))

    def value_of(self, hlo: str) -> np.ndarray | None:
        """The values of the instruction a runtime variable names (``parameter(N)``, a
        name, ``constant(...)``), or None when this run does not know it."""
        for instr in self.comp.instructions:
            if hlo_reference(instr) == hlo:
                return self.values.get((instr.name, 0))
        return None


def execute(comp: HloComputation, arguments: Sequence[np.ndarray | None]) -> Execution:
    """Run ``comp``; ``arguments[p]`` holds parameter ``p``'s values (needed for integer
    parameters only)."""
    offsets, start = [], 0
    for p in comp.parameters:
        offsets.append(start)
        start += size(p.shape.dims)
    run = Execution(comp, offsets)
    params = [(list(map(frozenset, (np.arange(size(p.shape.dims)) + o)[:, None].tolist())),
               arguments[k]) for k, (p, o) in enumerate(zip(comp.parameters, offsets))]
    _run(comp, params, run.reads, run.values)
    return run


def _run(comp: HloComputation, params: Sequence[tuple[Reads, np.ndarray | None]],
         reads: dict[Key, Reads], values: dict[Key, np.ndarray]) -> None:
    for instr in topological_order(comp):
        if instr.opcode == "parameter":
            r, v = params[instr.parameter_number]
            reads[(instr.name, 0)] = r
            if v is not None:
                values[(instr.name, 0)] = np.asarray(v)
            continue
        if instr.opcode in ("fusion", "call"):
            _run_called(instr, reads, values)
            continue
        int_values = {k: values[_key(instr, op)] for k, op in enumerate(instr.operands)
                      if _key(instr, op) in values}
        for out in range(num_outputs(instr)):
            deps = _dependencies(instr, int_values, out)
            dims = out_dims(instr, out)
            reads[(instr.name, out)] = [_union(instr, deps[o], reads) for o in box(dims)]
            if _output_is_integer(instr, out):
                values[(instr.name, out)] = _value(instr, out, int_values, deps)


def _key(user: HloInstruction, op: HloInstruction) -> Key:
    if user.opcode == "get-tuple-element":
        return op.name, user.tuple_index or 0
    return op.name, 0


def _run_called(instr: HloInstruction, reads: dict[Key, Reads],
                values: dict[Key, np.ndarray]) -> None:
    key = "calls" if instr.opcode == "fusion" else "to_apply"
    (inner,) = instr.called_computations[key]
    params = [(reads[(op.name, 0)], values.get((op.name, 0))) for op in instr.operands]
    inner_reads: dict[Key, Reads] = {}
    inner_values: dict[Key, np.ndarray] = {}
    _run(inner, params, inner_reads, inner_values)
    for out in range(num_outputs(instr)):
        reads[(instr.name, out)] = inner_reads[(inner.root.name, out)]
        if (inner.root.name, out) in inner_values:
            values[(instr.name, out)] = inner_values[(inner.root.name, out)]


#: Elementwise ops the op-rule references do not list (they read each operand at the same
#: index, a scalar operand at ``()``).
MORE_ELEMENTWISE = frozenset({
    "divide", "rsqrt", "sqrt", "cbrt", "log", "log-plus-one", "exponential-minus-one",
    "logistic", "minimum", "or", "xor", "sign", "floor", "ceil", "round-nearest-even",
    "round-nearest-afz", "cosine", "sine", "tan", "is-finite", "real", "imag",
    "shift-left", "shift-right-logical", "shift-right-arithmetic", "popcnt", "erf",
})


def _dependencies(instr: HloInstruction, int_values: dict[int, np.ndarray], out: int
                  ) -> dict[Index, list[set[Index]]]:
    dims = out_dims(instr, out)
    if not instr.operands:
        return {o: [] for o in box(dims)}
    if instr.opcode in MORE_ELEMENTWISE:
        return {o: [{o} if out_dims(op) else {()} for op in instr.operands] for o in box(dims)}
    deps = dependencies(instr, int_values, out)
    convention = CONVENTIONS.get(instr.opcode)
    return deps if convention is None else convention(instr, deps)


def _pad_value_everywhere(instr: HloInstruction, deps: dict[Index, list[set[Index]]]
                          ) -> dict[Index, list[set[Index]]]:
    return {o: [groups[0], {()}] for o, groups in deps.items()}


def _operand_everywhere(instr: HloInstruction, deps: dict[Index, list[set[Index]]]
                        ) -> dict[Index, list[set[Index]]]:
    return {o: [{o}, *groups[1:]] for o, groups in deps.items()}


CONVENTIONS: dict[str, Callable[[HloInstruction, dict[Index, list[set[Index]]]],
                                dict[Index, list[set[Index]]]]] = {
    "pad": _pad_value_everywhere,
    "dynamic-update-slice": _operand_everywhere,
}


def _union(instr: HloInstruction, groups: list[set[Index]], reads: dict[Key, Reads]
           ) -> frozenset[int]:
    parts: list[frozenset[int]] = []
    for op, read in zip(instr.operands, groups, strict=True):
        source = reads[_key(instr, op)]
        dims = _array_dims(op, instr)
        parts.extend(source[ravel(j, dims)] for j in read)
    if not parts:
        return NO_READS
    if len(parts) == 1:
        return parts[0]
    return frozenset().union(*parts)


def _array_dims(op: HloInstruction, user: HloInstruction) -> tuple[int, ...]:
    if user.opcode == "get-tuple-element":
        return out_dims(op, user.tuple_index or 0)
    return out_dims(op)


# --- integer values ---------------------------------------------------------------------------

ELEMENTWISE: dict[str, Callable[..., np.ndarray]] = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply,
    "maximum": np.maximum, "minimum": np.minimum, "negate": np.negative, "abs": np.abs,
    "and": np.logical_and, "or": np.logical_or, "not": np.logical_not, "xor": np.logical_xor,
    "copy": lambda a: a,
    "select": lambda p, a, b: np.where(p, a, b),
    "clamp": lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi),
}
COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
           "GT": np.greater, "GE": np.greater_equal}
#: Operands whose elements an op's output elements are copies of.
DATA_OPERANDS = {"dynamic-slice": (0,), "gather": (0,), "dynamic-update-slice": (0, 1),
                 "pad": (0, 1)}


def out_shape(instr: HloInstruction, out: int) -> Shape:
    shape = instr.shape if isinstance(instr.shape, Shape) else instr.shape.elements[out]
    assert isinstance(shape, Shape)
    return shape


def _output_is_integer(instr: HloInstruction, out: int) -> bool:
    return is_integer(out_shape(instr, out))


def _value(instr: HloInstruction, out: int, int_values: dict[int, np.ndarray],
           deps: dict[Index, list[set[Index]]]) -> np.ndarray:
    dims = out_dims(instr, out)
    if instr.opcode == "constant":
        return np.asarray(instr.literal, dtype=np.int64).reshape(dims)
    if instr.opcode == "iota":
        axis = instr.attr_int("iota_dimension", 0)
        return np.indices(dims, dtype=np.int64)[axis]
    operands = [_operand_value(instr, k, int_values) for k in range(len(instr.operands))]
    if instr.opcode == "convert":  # wraps around as the narrower type does
        element = out_shape(instr, out).element_type
        dtype = bool if element == "pred" else np.dtype(element.replace("s", "int").replace(
            "u", "uint"))
        return operands[0].astype(dtype).astype(np.int64)
    if instr.opcode in ELEMENTWISE or instr.opcode == "compare":
        fn = COMPARE[instr.comparison_direction or ""] if instr.opcode == "compare" \
            else ELEMENTWISE[instr.opcode]
        return np.broadcast_to(fn(*operands), dims).astype(np.int64)
    # Data movement: every output element is a copy of one element of one data operand.
    data = DATA_OPERANDS.get(instr.opcode, range(len(instr.operands)))
    result = np.zeros(dims, dtype=np.int64)
    for o in box(dims):
        k, j = next((k, next(iter(deps[o][k]))) for k in data if deps[o][k])
        result[o] = operands[k][j]
    return result


def _operand_value(instr: HloInstruction, k: int, int_values: dict[int, np.ndarray]
                   ) -> np.ndarray:
    if k not in int_values:
        raise NotImplementedError(f"{instr.name} needs the values of {instr.operands[k].name}")
    return int_values[k]


# --- the relation a set of maps gives ----------------------------------------------------------


def map_relation(maps: Sequence[IndexingMap], source_dims: Sequence[int],
                 target_dims: Sequence[int], run: Execution | None = None) -> np.ndarray:
    """Sorted pair codes ``out * T + i`` of every (source element, target element) the maps
    relate (``T`` the target's size). Runtime variables range over their whole interval,
    or, given ``run``, take the value their provenance holds in that run, where that lies
    in the interval (see :func:`held_outside`). Raises AssertionError for a target outside
    ``target_dims``."""
    codes = [_map_codes(m, source_dims, target_dims, run) for m in maps
             if not m.is_known_empty]
    if not codes:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.concatenate(codes))


def held_outside(maps: Sequence[IndexingMap], run: Execution) -> bool:
    """Does a runtime variable's provenance hold a value outside the variable's interval?
    Then HLO clamps it, to an interval the map may no longer record (the simplifier narrows
    intervals), so ``map_relation(..., run)`` gives only part of what is read."""
    for var in _runtime_vars(maps):
        for held, mask, _ in _held_values(var, run):
            values = held[mask]
            if values.size and (values.min() < var.bounds.lo or values.max() > var.bounds.hi):
                return True
    return False


def provenance_known(maps: Sequence[IndexingMap]) -> bool:
    """Does every runtime variable, at any depth, say where its value comes from? (A
    provenance map's own variables may have lost theirs in a composition.)"""
    return all(var.map is not None for var in _runtime_vars(maps))


def _runtime_vars(maps: Sequence[IndexingMap]) -> Iterator[RuntimeVar]:
    """Every runtime variable of the maps and, recursively, of their provenance maps."""
    for m in maps:
        for var in m.rts:
            yield var
            if var.map is not None:
                yield from _runtime_vars([var.map])


def _map_codes(m: IndexingMap, source_dims: Sequence[int], target_dims: Sequence[int],
               run: Execution | None) -> np.ndarray:
    found = []
    for point in m.points():
        results, mask = m.evaluate_arrays(point)
        if run is not None:
            for i in range(m.num_rts):
                mask = mask & _allowed(m, i, point, source_dims, run)
        source = _linear(point[:m.num_dims], source_dims, mask.shape)
        target = _linear(results, target_dims, mask.shape)
        for r, n in zip(results, target_dims, strict=True):
            assert np.all((r[mask] >= 0) & (r[mask] < n)), f"target outside {target_dims}: {m}"
        found.append(source[mask] * size(target_dims) + target[mask])
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def _linear(index: Sequence[np.ndarray], dims: Sequence[int], shape: tuple[int, ...]
            ) -> np.ndarray:
    linear = np.zeros(shape, dtype=np.int64)
    for i, n in zip(index, dims, strict=True):
        linear = linear * n + np.broadcast_to(np.asarray(i, dtype=np.int64), shape)
    return linear


def _held_values(var: RuntimeVar, run: Execution
                 ) -> Iterator[tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]]:
    """Per chunk of the provenance map's domain: the values held, where the map is defined
    (its own runtime variables, if any, taking the values their provenance holds), and the
    domain points."""
    element_map = var.map
    assert element_map is not None, "runtime variable without provenance"
    holder = run.value_of(var.hlo)
    assert holder is not None, f"no values for {var.hlo}"
    dims = [b.hi + 1 for b in element_map.dims]
    for element_point in element_map.points():
        elements, mask = element_map.evaluate_arrays(element_point)
        for j in range(element_map.num_rts):
            mask = mask & _allowed(element_map, j, element_point, dims, run)
        held = holder[tuple(np.broadcast_to(e, mask.shape) for e in elements)] \
            if elements else np.broadcast_to(holder, mask.shape)
        yield held, mask, element_point


def _allowed(m: IndexingMap, i: int, point: Sequence[np.ndarray], dims: Sequence[int],
             run: Execution) -> np.ndarray:
    """Where runtime variable ``i`` takes a value its provenance holds at that point."""
    var = m.rts[i]
    pairs = set()
    for held, mask, element_point in _held_values(var, run):
        source = _linear(element_point[:var.map.num_dims], dims, mask.shape)  # type: ignore
        pairs.update(zip(source[mask].tolist(), held[mask].tolist()))
    source = _linear(point[:m.num_dims], dims, np.shape(point[0]) if point else ())
    value = np.broadcast_to(point[m.num_dims + m.num_ranges + i], source.shape)
    return np.fromiter(((s, v) in pairs for s, v in zip(source.ravel().tolist(),
                                                          value.ravel().tolist())),
                       dtype=bool, count=source.size).reshape(source.shape)
