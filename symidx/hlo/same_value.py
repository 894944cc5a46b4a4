"""Value numbering of one computation: which instructions provably hold the same value.

Two instructions hold the same value when, in every execution and for every input (NaN,
infinities and the most negative integer included), their results are equal bit for bit.
:func:`representative` gives, for an instruction of a computation, the first instruction in
:func:`symidx.hlo.graph.topological_order` that is known to hold its value, and otherwise
the instruction itself. A runtime variable names that instruction as its holder
(:mod:`symidx.fusion.runtime`), so that the same index recomputed in two places (every
layer of a model computing the same sequence offsets) is one variable, and the maps that
read with it are one map.

The rules are conservative (an equality missed costs only a map more):

* **see-through**: ``copy``, ``domain``, ``opt-barrier`` (:data:`symidx.hlo.moves.PASSES_WHOLE`)
  and ``add-dependency`` (its operand 0) hold their operand's value, and a
  ``get-tuple-element`` of a ``tuple`` (through any ``opt-barrier``) holds that tuple
  operand's value, where the two shapes are equal, layouts included (a copy that changes
  the layout holds the same array, but a ``bitcast`` of it reads other elements);
* **structural**: two instructions hold the same value when their opcode, shape, the
  attributes that decide the value (all but those of :data:`IGNORED`) and the
  representatives of their operands are equal, for the ops whose result is exactly defined
  by those: data movement and the exact element-wise ops on any element type
  (:data:`EXACT`), integer and ``pred`` arithmetic (:data:`INTEGER_ONLY`: floating-point
  arithmetic may be contracted to an FMA or reassociated, and ``clamp``, ``maximum`` and
  ``minimum`` of floats depend on how NaN is handled), and integer ``reduce`` and
  ``reduce-window`` whose reducer is one associative and commutative op of its two
  parameters (:data:`REDUCERS`: in any order the result is the same) and whose initial
  value is that op's identity (XLA may apply any other initial value more than once);
* **leaves**: a ``parameter`` equals only itself; two constants are equal when their
  shapes and literal texts are (an elided ``{...}`` literal equals nothing); ``iota``,
  ``partition-id`` and ``replica-id`` by opcode, shape and attributes.

Every other op (custom calls, random numbers, collectives, infeed and receives, calls,
loops, conditionals, fusions, ``map``, ``sort``, ``scatter``) equals only itself.

>>> from symidx.hlo import parse_hlo
>>> comp = parse_hlo('''
... HloModule m
... ENTRY e {
...   p = s32[4] parameter(0)
...   one = s32[] constant(1)
...   a = s32[4] add(p, s32[4] broadcast(one))
...   one2 = s32[] constant(1)
...   b = s32[4] add(p, s32[4] broadcast(one2))
...   ROOT t = (s32[4], s32[4]) tuple(a, b)
... }''').entry
>>> representative(comp.instruction("b"), comp).name
'a'
"""

from __future__ import annotations

from symidx.hlo.graph import topological_order
from symidx.hlo.ir import HloComputation, HloInstruction
from symidx.hlo.moves import PASSES_WHOLE
from symidx.hlo.shape import Shape, integer_bounds

__all__ = ["EXACT", "IGNORED", "INTEGER_ONLY", "LEAVES", "REDUCERS", "ValueNumbering",
           "representative", "value_numbering"]

#: Ops whose output is operand 0's whole value (where the shapes are equal).
SEE_THROUGH = PASSES_WHOLE | {"add-dependency"}

#: Deterministic ops whose result is exactly defined by their operands and attributes, on
#: any element type: data movement, selection, comparison, conversion, sign changes.
EXACT = frozenset({
    "abs", "bitcast", "bitcast-convert", "broadcast", "compare", "concatenate", "convert",
    "copy", "dynamic-slice", "dynamic-update-slice", "gather", "get-tuple-element",
    "negate", "pad", "reduce-precision", "reshape", "reverse", "select", "slice", "tuple",
    "transpose",
})

#: Ops exactly defined when their result and operands are integers or ``pred`` (wrapping
#: as the type does; XLA defines division by zero and shifts past the width).
INTEGER_ONLY = frozenset({
    "add", "and", "clamp", "clz", "divide", "maximum", "minimum", "multiply", "not", "or",
    "popcnt", "remainder", "shift-left", "shift-right-arithmetic", "shift-right-logical",
    "sign", "subtract", "xor",
})

#: Leaves equal to another leaf by opcode, shape and attributes (a constant also by its
#: literal text).
LEAVES = frozenset({"constant", "iota", "partition-id", "replica-id"})

#: The reductions taken when integer, with the reducers whose result does not depend on
#: the order of the elements: one op, associative and commutative on the integers (with
#: wrap-around) and on ``pred`` (the bitwise ops and ``maximum``/``minimum`` only).
REDUCTIONS = frozenset({"reduce", "reduce-window"})
REDUCERS = frozenset({"add", "multiply", "maximum", "minimum", "and", "or", "xor"})
_PRED_REDUCERS = {"and": True, "or": False, "xor": False, "maximum": False, "minimum": True}

#: Attributes that do not decide an instruction's value.
IGNORED = frozenset({"metadata", "sharding", "frontend_attributes", "backend_config",
                     "statistics", "control-predecessors"})


class ValueNumbering:
    """The representatives of one computation's instructions (see the module docstring);
    built by :func:`value_numbering`, once per computation."""

    __slots__ = ("_reps",)

    def __init__(self, comp: HloComputation) -> None:
        #: Instruction -> its representative, for the instructions that are not their own.
        self._reps: dict[HloInstruction, HloInstruction] = _numbered(comp)

    def representative(self, instr: HloInstruction) -> HloInstruction:
        """The first instruction known to hold ``instr``'s value (``instr`` itself when
        none is, or when ``instr`` is not of this computation)."""
        return self._reps.get(instr, instr)

    @property
    def merged(self) -> int:
        """How many instructions have another instruction as representative."""
        return len(self._reps)


def value_numbering(comp: HloComputation) -> ValueNumbering:
    """The value numbering of ``comp``, made on first use and kept with the computation
    (it lives as long as the module)."""
    found = comp._same_value
    if not isinstance(found, ValueNumbering):
        found = comp._same_value = ValueNumbering(comp)
    return found


def representative(instr: HloInstruction, comp: HloComputation) -> HloInstruction:
    """The first instruction of ``comp`` (in topological order) that holds the same value
    as ``instr`` in every execution; ``instr`` itself when none is known to, or when
    ``instr`` is not an instruction of ``comp``."""
    return value_numbering(comp).representative(instr)


def _numbered(comp: HloComputation) -> dict[HloInstruction, HloInstruction]:
    reps: dict[HloInstruction, HloInstruction] = {}
    first: dict[tuple[object, ...], HloInstruction] = {}
    for instr in topological_order(comp):
        same = _see_through(instr, reps)
        if same is None:
            key = _key(instr, reps)
            if key is None:
                continue
            same = first.setdefault(key, instr)
        if same is not instr:
            reps[instr] = same
    return reps


def _see_through(instr: HloInstruction, reps: dict[HloInstruction, HloInstruction]
                 ) -> HloInstruction | None:
    """The representative of the operand whose value ``instr`` holds whole, if any."""
    if not instr.operands:
        return None
    if instr.opcode in SEE_THROUGH:
        if instr.opcode != "add-dependency" and len(instr.operands) != 1:
            return None
        held = reps.get(instr.operands[0], instr.operands[0])
    elif instr.opcode == "get-tuple-element" and len(instr.operands) == 1:
        whole = reps.get(instr.operands[0], instr.operands[0])  # an opt-barrier sees through
        k = instr.tuple_index
        if whole.opcode != "tuple" or k is None or not 0 <= k < len(whole.operands):
            return None
        held = reps.get(whole.operands[k], whole.operands[k])
    else:
        return None
    return held if held.shape == instr.shape else None


def _key(instr: HloInstruction, reps: dict[HloInstruction, HloInstruction]
         ) -> tuple[object, ...] | None:
    """What decides ``instr``'s value, for an op whose value it decides exactly; None when
    ``instr`` equals only itself."""
    op = instr.opcode
    reducer = None
    if op in LEAVES:
        if op == "constant" and (instr.literal_text is None or instr.literal is None):
            return None  # an elided literal (or a tuple constant): its value is not known
    elif op in INTEGER_ONLY:
        if not _integral(instr) or not all(_integral(o) for o in instr.operands):
            return None
    elif op in REDUCTIONS:
        reducer = _reducer(instr, reps)
        if reducer is None:
            return None
    elif op not in EXACT:
        return None
    if instr.called_computations and reducer is None:
        return None
    attributes = tuple(sorted((k, v) for k, v in instr.attributes.items()
                              if k not in IGNORED and (reducer is None or k != "to_apply")))
    operands = tuple(reps.get(o, o) for o in instr.operands)
    return (op, instr.shape, attributes, reducer, instr.literal_text, operands)


def _integral(instr: HloInstruction) -> bool:
    shape = instr.shape
    return isinstance(shape, Shape) and (shape.element_type == "pred"
                                         or integer_bounds(shape.element_type) is not None)


def _reducer(instr: HloInstruction, reps: dict[HloInstruction, HloInstruction]
             ) -> str | None:
    """The op of an integer ``reduce`` or ``reduce-window`` of one array whose reducer is
    one op of :data:`REDUCERS` on its two parameters and whose initial value is a constant
    holding that op's identity; None otherwise."""
    shape = instr.shape
    called = instr.called_computations.get("to_apply", ())
    if len(instr.operands) != 2 or len(called) != 1 or len(instr.called_computations) != 1 \
            or not isinstance(shape, Shape) or not _integral(instr) \
            or not _integral(instr.operands[0]):
        return None
    comp = called[0]
    root, params = comp.root, comp.parameters
    if len(comp.instructions) != 3 or len(params) != 2 or root.opcode not in REDUCERS \
            or len(root.operands) != 2 or set(root.operands) != set(params) \
            or not all(_scalar(i, shape.element_type) for i in comp.instructions):
        return None
    init = reps.get(instr.operands[1], instr.operands[1])
    if init.opcode != "constant" or not _scalar(init, shape.element_type) \
            or init.literal is None:
        return None
    identity = _identity(root.opcode, shape.element_type)
    if identity is None or init.literal != identity \
            or isinstance(init.literal, bool) != isinstance(identity, bool):
        return None
    return root.opcode


def _scalar(instr: HloInstruction, element_type: str) -> bool:
    shape = instr.shape
    return isinstance(shape, Shape) and shape.element_type == element_type and not shape.dims


def _identity(op: str, element_type: str) -> int | bool | None:
    """The identity of reducer ``op`` on ``element_type``; None where it is not a reducer
    of that type."""
    if element_type == "pred":
        return _PRED_REDUCERS.get(op)
    bounds = integer_bounds(element_type)
    if bounds is None:
        return None
    lo, hi = bounds
    return {"add": 0, "or": 0, "xor": 0, "multiply": 1, "and": -1 if lo < 0 else hi,
            "maximum": lo, "minimum": hi}.get(op)
