"""A numpy reference interpreter for HLO computations: which output elements read which
parameter elements, found by running the computation on concrete arguments.

:func:`execute` walks the computation in order. Every instruction output keeps, per element
(row-major linear index), the set of parameter elements it reads, directly or through the
instructions it reads; an op's own reads come from :mod:`reference_hlo` (one loop per output
element, written from the ops' definitions, independent of :mod:`symidx.ops`). Integer
values (offsets, gather indices, and everything they are computed from) are computed too,
so data-dependent ops read what they really read. Floating-point values never decide an
index, so they are not computed. Every op reads what its definition says it reads, no
more: a pad's value only where the output holds padding, a dynamic-update-slice's operand
only outside the updated window, a convolution's kernel only where its window lands on a
real input element.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from reference_hlo import (
    COLLECTIVE,
    Index,
    _scatter_parts,
    _scatter_target,
    _vector_elements,
    _window_reads,
    box,
    collective_dependencies,
    dependencies,
    out_dims,
    ravel,
    reduced_elements,
)
from symidx.core.indexing_map import IndexingMap, RuntimeVar
from symidx.hlo import (
    HloComputation,
    HloInstruction,
    Shape,
    ShapeLike,
    TupleShape,
    topological_order,
)
from symidx.hlo.facts import hlo_reference
from symidx.hlo.leaves import element_leaves, leaf_count, leaves
from symidx.ops import num_outputs

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
    """One run: per instruction output leaf, the reads of each element and (integer leaves)
    the values. Leaf ``l`` of parameter ``p`` has its element ``i`` coded
    ``offsets[(p, l)] + i``."""

    comp: HloComputation
    offsets: dict[tuple[int, int], int]
    reads: dict[Key, Reads] = field(default_factory=dict)
    values: dict[Key, np.ndarray] = field(default_factory=dict)

    def relation(self, parameter: int, output: int = 0, leaf: int = 0) -> np.ndarray:
        """Sorted pair codes ``out * P + i``: output element ``out`` (linear) of root leaf
        ``output`` reads element ``i`` of leaf ``leaf`` of parameter ``parameter`` (``P``
        its size)."""
        lo = self.offsets[(parameter, leaf)]
        param_size = size(leaves(self.comp.parameters[parameter].shape)[leaf].dims)
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


Leaf = tuple[Reads, "np.ndarray | None"]  # one leaf: reads per element, values if integer


def execute(comp: HloComputation, arguments: Sequence[object]) -> Execution:
    """Run ``comp``; ``arguments[p]`` holds parameter ``p``'s values (needed for integer
    parameters only; a list per leaf for a tuple parameter)."""
    offsets, start = {}, 0
    params: list[list[Leaf]] = []
    for p, param in enumerate(comp.parameters):
        given = arguments[p] if p < len(arguments) else None
        per_leaf = given if isinstance(param.shape, TupleShape) and given is not None \
            else [given] * leaf_count(param.shape)
        leaf_args: list[Leaf] = []
        for lf, leaf in enumerate(leaves(param.shape)):
            offsets[(p, lf)] = start
            n = size(leaf.dims)
            codes = [frozenset((start + i,)) for i in range(n)]
            value = per_leaf[lf]
            leaf_args.append((codes, None if value is None else np.asarray(value)))
            start += n
        params.append(leaf_args)
    run = Execution(comp, offsets)
    _run(comp, params, run.reads, run.values)
    return run


def _run(comp: HloComputation, params: Sequence[Sequence[Leaf]],
         reads: dict[Key, Reads], values: dict[Key, np.ndarray]) -> None:
    for instr in topological_order(comp):
        if instr.opcode == "parameter":
            for lf, (r, v) in enumerate(params[instr.parameter_number]):
                reads[(instr.name, lf)] = r
                if v is not None:
                    values[(instr.name, lf)] = v
            continue
        moved = structural_leaves(instr, reads, values)
        if moved is not None:
            for lf, (r, v) in enumerate(moved):
                reads[(instr.name, lf)] = r
                if v is not None:
                    values[(instr.name, lf)] = v
            continue
        int_values = {k: values[_key(instr, op)] for k, op in enumerate(instr.operands)
                      if _key(instr, op) in values}
        for out in range(num_outputs(instr)):
            deps = _dependencies(instr, int_values, out)
            dims = out_dims(instr, out)
            reads[(instr.name, out)] = [_union(instr, deps[o], reads) for o in box(dims)]
            if (_output_is_integer(instr, out) or _float_known(instr, out, int_values)) \
                    and instr.opcode not in DEVICE_DEPENDENT:
                value = _value(instr, out, int_values, deps)
                if value is not None:
                    values[(instr.name, out)] = value


def _key(user: HloInstruction, op: HloInstruction) -> Key:
    if user.opcode == "get-tuple-element":
        return op.name, element_leaves(op.shape, user.tuple_index or 0).start
    return op.name, 0


def _leaves_of(op: HloInstruction, reads: dict[Key, Reads], values: dict[Key, np.ndarray],
               span: Iterable[int] | None = None) -> list[Leaf]:
    chosen = range(leaf_count(op.shape)) if span is None else span
    return [(reads[(op.name, lf)], values.get((op.name, lf))) for lf in chosen]


def _nothing(shape: ShapeLike) -> list[Leaf]:
    """Leaves that read no parameter (data from outside, contexts, tokens)."""
    return [([NO_READS] * size(leaf.dims), None) for leaf in leaves(shape)]


def _called(comp: HloComputation, params: Sequence[Sequence[Leaf]]) -> list[Leaf]:
    inner_reads: dict[Key, Reads] = {}
    inner_values: dict[Key, np.ndarray] = {}
    _run(comp, params, inner_reads, inner_values)
    return [(inner_reads[(comp.root.name, lf)], inner_values.get((comp.root.name, lf)))
            for lf in range(leaf_count(comp.root.shape))]


#: The collective each asynchronous ``X-start`` runs.
ASYNC_COLLECTIVES = {f"{op}-start": op for op in (
    "all-gather", "all-reduce", "collective-permute", "all-to-all", "reduce-scatter",
    "collective-broadcast", "ragged-all-to-all")}
LOOP_LIMIT = 256
#: Integer values that depend on which device runs the computation: not computed.
DEVICE_DEPENDENT = frozenset({"partition-id", "replica-id", "rng", "rng-bit-generator"})


def structural_leaves(instr: HloInstruction, reads: dict[Key, Reads],
                      values: dict[Key, np.ndarray]) -> list[Leaf] | None:
    """The leaves of an op that moves tuples or calls computations, from the ops'
    definitions; None for the other ops (run element by element)."""
    op, ops = instr.opcode, instr.operands

    def of(k: int, span: Iterable[int] | None = None) -> list[Leaf]:
        return _leaves_of(ops[k], reads, values, span)

    def element(k: int, index: int) -> list[Leaf]:
        return of(k, element_leaves(ops[k].shape, index))

    if op == "tuple":
        return [leaf for k in range(len(ops)) for leaf in of(k)]
    if op == "get-tuple-element":
        return element(0, instr.tuple_index or 0)
    if op in ("opt-barrier", "domain", "async-update", "add-dependency") or (
            op == "copy" and isinstance(instr.shape, TupleShape)):
        return of(0)
    if op == "copy-start":  # (destination, source, context)
        return of(0) + of(0) + _nothing(instr.shape.elements[2])  # type: ignore[union-attr]
    if op == "copy-done":
        return element(0, 0)
    if op == "async-done":
        return element(0, 1)
    if op in ("fusion", "call", "async-start"):
        key = "to_apply" if op == "call" else "calls"
        (comp,) = instr.called_computations[key]
        result = _called(comp, [of(k) for k in range(len(ops))])
        if op != "async-start":
            return result
        shape = instr.shape
        assert isinstance(shape, TupleShape)
        context = [leaf for e in shape.elements[2:] for leaf in _nothing(e)]
        return [leaf for k in range(len(ops)) for leaf in of(k)] + result + context
    if op == "send":  # (data, context, token)
        return of(0) + _nothing(TupleShape(instr.shape.elements[1:]))  # type: ignore
    if op == "recv-done":  # (data, token)
        return element(0, 0) + _nothing(instr.shape.elements[1])  # type: ignore[union-attr]
    if op in ("recv", "infeed", "after-all", "send-done", "outfeed",
              "rng-get-and-update-state"):
        return _nothing(instr.shape)
    if op == "conditional":
        return _conditional(instr, of)
    if op == "while":
        return _while(instr, of(0))
    if op in ASYNC_COLLECTIVES or (op.endswith("-done")
                                   and op.removesuffix("-done") in ASYNC_COLLECTIVES.values()):
        return _async_collective(instr, of, reads, values)
    return None


def _conditional(instr: HloInstruction, of) -> list[Leaf]:  # type: ignore[no-untyped-def]
    """When the branch index (or predicate) reads no parameter element (its value is known
    before the run: constants, iotas, loop counters), the branch it picks runs (a pred
    runs branch 0 when true; an index outside the branches, the last). Otherwise every
    branch may run, as over every value of an index that is a runtime value. Each output
    element reads what the branches that may run read, and the branch index."""
    called = instr.called_computations
    branches = called.get("branch_computations") or (
        called["true_computation"] + called["false_computation"])
    (index_reads, index_value), = of(0)
    chosen = index_reads[0]
    runs = range(len(branches))
    if index_value is not None and not chosen:
        v = int(np.asarray(index_value).reshape(-1)[0])
        if out_shape(instr.operands[0], 0).element_type == "pred":
            runs = range(0, 1) if v else range(1, 2)
        else:
            runs = range(v, v + 1) if 0 <= v < len(branches) else range(len(branches) - 1,
                                                                         len(branches))
    outputs = [_called(branches[b], [of(b + 1)]) for b in runs]
    merged = []
    for lf in range(leaf_count(instr.shape)):
        per_element = zip(*(branch[lf][0] for branch in outputs), strict=True)
        merged.append(([frozenset().union(chosen, *parts) for parts in per_element], None))
    return merged


def _while(instr: HloInstruction, state: list[Leaf]) -> list[Leaf]:
    """Run the loop on the values the condition needs (integer leaves). A leaf whose reads
    and values never change keeps them; every other leaf's elements also read what the
    condition read over the iterations (the trip count decides their value)."""
    body, cond = instr.called_computations["body"][0], instr.called_computations["condition"][0]
    changed = [False] * len(state)
    control: frozenset[int] = NO_READS
    for _ in range(LOOP_LIMIT):
        (go_reads, go_value), = _called(cond, [state])
        control = control.union(*go_reads)
        if go_value is None:
            raise NotImplementedError(f"{instr.name}: the condition's value is not an integer")
        if not bool(np.asarray(go_value).reshape(-1)[0]):
            break
        after = _called(body, [state])
        for lf, ((r0, v0), (r1, v1)) in enumerate(zip(state, after, strict=True)):
            if r0 != r1 or (v0 is None) != (v1 is None) or (
                    v0 is not None and not np.array_equal(v0, v1)):
                changed[lf] = True
        state = after
    else:
        raise NotImplementedError(f"{instr.name}: more than {LOOP_LIMIT} iterations")
    return [([codes | control for codes in r], v) if changed[lf] else (r, v)
            for lf, (r, v) in enumerate(state)]


def _async_collective(instr: HloInstruction, of, reads: dict[Key, Reads],  # type: ignore
                      values: dict[Key, np.ndarray]) -> list[Leaf]:
    """``X-start`` returns the collective's result, or (operands, result, context...);
    ``X-done`` its result."""
    op = instr.opcode
    if op.endswith("-done"):
        start = instr.operands[0]
        shape = start.shape
        if isinstance(shape, TupleShape) and len(shape.elements) >= 2 and [
                s.dims for s in leaves(shape.elements[0])] == [
                s.dims for o in start.operands for s in leaves(o.shape)]:
            return of(0, element_leaves(shape, 1))
        return of(0)
    shape = instr.shape
    keeps = isinstance(shape, TupleShape) and len(shape.elements) >= 2 and [
        s.dims for s in leaves(shape.elements[0])] == [
        s.dims for o in instr.operands for s in leaves(o.shape)]
    inner = replace(instr, opcode=ASYNC_COLLECTIVES[op],
                    shape=shape.elements[1] if keeps else shape)  # type: ignore[union-attr]
    int_values = {k: values[_key(inner, o)] for k, o in enumerate(inner.operands)
                  if _key(inner, o) in values}
    result = []
    for out in range(num_outputs(inner)):
        deps = _dependencies(inner, int_values, out)
        result.append(([_union(inner, deps[o], reads) for o in box(out_dims(inner, out))],
                       None))
    if not keeps:
        return result
    context = [leaf for e in shape.elements[2:] for leaf in _nothing(e)]  # type: ignore
    return [leaf for k in range(len(instr.operands)) for leaf in of(k)] + result + context


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
    if instr.opcode == "select" and 0 in int_values:  # the branch the predicate picks
        pred = np.broadcast_to(int_values[0], dims)
        return {o: [{o} if out_dims(instr.operands[0]) else {()},
                    {o} if pred[o] else set(), set() if pred[o] else {o}] for o in box(dims)}
    if instr.opcode in COLLECTIVE:
        return _local_collective(instr, int_values, out)
    return dependencies(instr, int_values, out)


def _local_collective(instr: HloInstruction, int_values: dict[int, np.ndarray], out: int
                      ) -> dict[Index, list[set[Index]]]:
    """What a collective's output element reads, on any participant, of the operands of
    any participant: the local indices (a map over one device's shapes does not say which
    participant holds them; its ``participant`` variable ranges over the group)."""
    size = group_size(instr)
    if instr.opcode == "ragged-all-to-all":  # its reference takes every participant's
        # offsets and sizes: here each holds this one's (one of the runs a map covers)
        int_values = {k: np.stack([v] * size) for k, v in int_values.items()}
    per_participant = collective_dependencies(instr, size, int_values, out)
    local: dict[Index, list[set[Index]]] = {}
    for (_, o), groups in per_participant.items():
        mine = local.setdefault(o, [set() for _ in instr.operands])
        for k, read in enumerate(groups):
            mine[k] |= {index for _, index in read}
    return local


def group_size(instr: HloInstruction) -> int:
    """How many take part in a collective, from its text: the first replica group
    (``{{0,1},{2,3}}`` or ``[2,2]<=[4]``), the participants of ``source_target_pairs``, or
    the shard count an all-gather or reduce-scatter's shapes imply."""
    groups = instr.attributes.get("replica_groups", "")
    explicit = re.match(r"\{\s*\{([^}]*)\}", groups)
    if explicit and explicit.group(1).strip():
        return len(explicit.group(1).split(","))
    iota = re.match(r"\[\s*\d+\s*,\s*(\d+)\s*\]\s*<=", groups)
    if iota:
        return int(iota.group(1))
    pairs = instr.attributes.get("source_target_pairs")
    if pairs:
        return len(set(re.findall(r"\d+", pairs)))
    if instr.opcode in ("all-gather", "reduce-scatter") and instr.dimensions:
        axis = instr.dimensions[0]
        a, b = out_dims(instr)[axis], out_dims(instr.operands[0])[axis]
        return max(a, b) // max(1, min(a, b))
    return 1


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
    return leaves(op.shape)[_key(user, op)[1]].dims


# --- integer values ---------------------------------------------------------------------------

ELEMENTWISE: dict[str, Callable[..., np.ndarray]] = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply,
    "maximum": np.maximum, "minimum": np.minimum, "negate": np.negative, "abs": np.abs,
    # bitwise on integers, logical on pred (numpy's bitwise ops are logical on booleans)
    "and": np.bitwise_and, "or": np.bitwise_or, "not": np.invert, "xor": np.bitwise_xor,
    "sign": np.sign, "shift-left": np.left_shift, "shift-right-arithmetic": np.right_shift,
    "shift-right-logical": np.right_shift,  # replaced by the type's width in _value
    "copy": lambda a: a,
    "select": lambda p, a, b: np.where(p, a, b),
    "clamp": lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi),
    # C's division truncates toward zero; the remainder takes the dividend's sign
    "divide": lambda a, b: np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b)),
    "remainder": lambda a, b: np.sign(a) * (np.abs(a) % np.abs(b)),
}
COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
           "GT": np.greater, "GE": np.greater_equal}
#: Operands whose elements an op's output elements are copies of.
DATA_OPERANDS = {"dynamic-slice": (0,), "gather": (0,), "dynamic-update-slice": (0, 1),
                 "pad": (0, 1)}


def out_shape(instr: HloInstruction, out: int) -> Shape:
    return leaves(instr.shape)[out]


def _output_is_integer(instr: HloInstruction, out: int) -> bool:
    return is_integer(out_shape(instr, out))


def _float_known(instr: HloInstruction, out: int, int_values: dict[int, np.ndarray]) -> bool:
    """Is a floating-point output computed: an iota, a constant, or an op whose operands'
    values are all known (masks compare such values; float64 holds the small integral values
    of the tests exactly)."""
    element = out_shape(instr, out).element_type
    if not (element.startswith("f") or element == "bf16") or num_outputs(instr) != 1:
        return False
    if instr.opcode in ("iota", "constant"):
        return True
    return bool(instr.operands) and len(int_values) == len(instr.operands) and (
        instr.opcode in ELEMENTWISE or instr.opcode in ("convert", "broadcast", "reshape",
                                                        "transpose", "slice", "reverse"))


def _value(instr: HloInstruction, out: int, int_values: dict[int, np.ndarray],
           deps: dict[Index, list[set[Index]]]) -> np.ndarray | None:
    dims = out_dims(instr, out)
    result_type = np.int64 if _output_is_integer(instr, out) else np.float64
    if instr.opcode == "constant":
        return np.asarray(instr.literal, dtype=result_type).reshape(dims)
    if instr.opcode == "iota":
        axis = instr.attr_int("iota_dimension", 0)
        return np.indices(dims, dtype=np.int64)[axis]
    if instr.opcode in ("reduce", "reduce-window", "scatter"):
        if len(int_values) != len(instr.operands):
            return None  # a float operand: not computed
        return _reduced_value(instr, out, [int_values[k] for k in range(len(instr.operands))])
    operands = [_operand_value(instr, k, int_values) for k in range(len(instr.operands))]
    if instr.opcode == "convert":  # wraps around as the narrower type does
        element = out_shape(instr, out).element_type
        if result_type is np.float64:
            return operands[0].astype(np.float64)
        dtype = bool if element == "pred" else np.dtype(element.replace("s", "int").replace(
            "u", "uint"))
        return operands[0].astype(dtype).astype(np.int64)
    if instr.opcode in ELEMENTWISE or instr.opcode == "compare":
        fn = COMPARE[instr.comparison_direction or ""] if instr.opcode == "compare" \
            else ELEMENTWISE[instr.opcode]
        if instr.opcode == "not" and out_shape(instr, out).element_type == "pred":
            fn = np.logical_not  # pred values are held as 0 and 1
        if instr.opcode == "shift-right-logical":  # the bits as unsigned, of the type's width
            bits = int(out_shape(instr, out).element_type[1:])
            fn = lambda a, b: np.right_shift(np.mod(a, 1 << bits), b)  # noqa: E731
        return np.broadcast_to(fn(*operands), dims).astype(result_type)
    if instr.opcode not in MOVES_DATA:
        return None  # not computed: whatever needs it fails, never a wrong value
    # Data movement: every output element is a copy of one element of one data operand.
    data = DATA_OPERANDS.get(instr.opcode, range(len(instr.operands)))
    result = np.zeros(dims, dtype=result_type)
    for o in box(dims):
        k, j = next((k, next(iter(deps[o][k]))) for k in data if deps[o][k])
        result[o] = operands[k][j]
    return result


#: Ops each of whose output elements is a copy of one element of one operand.
MOVES_DATA = frozenset({"bitcast", "broadcast", "copy", "reshape", "reverse", "slice",
                        "transpose", "concatenate", "pad", "dynamic-slice",
                        "dynamic-update-slice", "gather"})


def _apply(comp: HloComputation, *scalars: object) -> object:
    """The value of the reducer ``comp`` on scalar arguments, run by this interpreter."""
    params = [[([NO_READS], np.asarray(v))] for v in scalars]
    ((_, value),) = _called(comp, params)
    assert value is not None, f"{comp.name}: no value"
    return np.asarray(value).reshape(()).item()


def _reduced_value(instr: HloInstruction, out: int, operands: list[np.ndarray]
                   ) -> np.ndarray | None:
    """The values of a ``reduce`` or ``reduce-window`` of one input (the reducer run from
    the init over the elements each output element combines, a window position on padding
    or a hole combining the init), or of a ``scatter`` of one operand (the reducer run
    on each element an update lands on, in the updates' order); None for more operands."""
    (comp,) = instr.called_computations["to_apply"]
    dims = out_dims(instr, out)
    result = np.zeros(dims, dtype=np.int64)
    if instr.opcode == "scatter":
        if len(operands) != 3:
            return None
        parts = _scatter_parts(instr)
        result = operands[0].astype(np.int64).copy()
        d = parts[4]
        for u in box(out_dims(instr.operands[2])):
            position = {q: u[parts[5][t]] for t, q in enumerate(parts[6])}
            vector = [int(operands[1][e]) for e in _vector_elements(d, parts[2], position)]
            target = _scatter_target(parts, u, vector)
            if target is not None:
                result[target] = _apply(comp, result[target], operands[2][u])
        return result
    if len(operands) != 2:
        return None
    x, init = operands[0], operands[1].reshape(()).item()
    src = out_dims(instr.operands[0])
    for o in box(dims):
        acc = init
        if instr.opcode == "reduce":
            for i in reduced_elements(instr, o):
                acc = _apply(comp, acc, x[i])
        else:
            under = dict(_window_reads(o, instr.window, src))
            for w in box([wd.size for wd in instr.window]):
                acc = _apply(comp, acc, x[under[w]] if w in under else init)
        result[o] = acc
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
    holder = run.value_of(str(var.source))
    assert holder is not None, f"no values for {var.source}"
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
