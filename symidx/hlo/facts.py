"""Facts about one HLO instruction that every floor above the parser asks: its outputs
and their dimensions, its operands' dimensions, the value of a constant, how XLA names it
as the holder of a runtime value, the computation it runs on its operands, and which
parameters each result of a called computation (a reducer, a comparator, a combiner) is
computed from.

>>> from symidx.hlo import parse_hlo
>>> module = parse_hlo('''
... HloModule m
... ENTRY e {
...   p0 = f32[4,6]{1,0} parameter(0)
...   t = f32[6,4]{1,0} transpose(p0), dimensions={1,0}
...   ROOT r = (f32[6,4]{1,0}, f32[4,6]{1,0}) tuple(t, p0)
... }''')
>>> root = module.entry.root
>>> num_outputs(root), output_dims(root, 0), operand_dims(root, 1)
(2, (6, 4), (4, 6))
>>> hlo_reference(root.operands[1])
'parameter(0)'
"""

from __future__ import annotations

from typing import TypeVar

from symidx.errors import HloShapeError, SymidxError
from symidx.hlo.ir import HloComputation, HloInstruction
from symidx.hlo.leaves import leaf_count, leaves
from symidx.hlo.shape import Shape, ShapeLike

__all__ = [
    "Dims",
    "array_dims",
    "attribute",
    "branch_attributes",
    "branch_of",
    "check_index",
    "called_computation",
    "hlo_reference",
    "num_outputs",
    "operand_dims",
    "output_dims",
    "output_shape",
    "require",
    "result_reads",
]

Dims = tuple[int, ...]
T = TypeVar("T")


def check_index(index: int, count: int, owner: str, what: str) -> None:
    """Raise :class:`SymidxError` unless ``index`` is one of ``count`` ``what``s of
    ``owner`` (e.g. an output of an instruction, a parameter of a computation)."""
    if not 0 <= index < count:
        raise SymidxError(f"{owner} has {count} {what}(s); there is no {what} {index}")


def require(condition: bool, instr: HloInstruction, message: str) -> None:
    """Raise :class:`HloShapeError` naming ``instr`` unless ``condition`` holds."""
    if not condition:
        raise HloShapeError(f"{instr.opcode} {instr.name}: {message}")


def attribute(value: T | None, instr: HloInstruction, name: str) -> T:
    """``value``, or :class:`HloShapeError` when the attribute is missing."""
    if value is None:
        raise HloShapeError(f"{instr.opcode} {instr.name}: missing attribute {name}=")
    return value


def num_outputs(instr: HloInstruction) -> int:
    """How many outputs the instruction has: one per array leaf of its shape (see
    :mod:`symidx.hlo.leaves`; a flat tuple has one per element)."""
    return leaf_count(instr.shape)


def array_dims(shape: ShapeLike, what: str) -> Dims:
    """The dimension sizes of an array shape (a tuple shape is an error)."""
    if not isinstance(shape, Shape):
        raise HloShapeError(f"{what} has tuple shape {shape}, expected an array")
    return shape.dims


def output_shape(instr: HloInstruction, output_index: int = 0) -> Shape:
    """Output ``output_index`` of ``instr``: the array leaf of that number (see
    :mod:`symidx.hlo.leaves`), or the array itself."""
    found = leaves(instr.shape)
    if not 0 <= output_index < len(found):
        raise HloShapeError(f"{instr.name} has {len(found)} output(s); there is no output "
                            f"{output_index}")
    return found[output_index]


def output_dims(instr: HloInstruction, output_index: int = 0) -> Dims:
    """The dimension sizes of output ``output_index`` (see :func:`output_shape`)."""
    return output_shape(instr, output_index).dims


def operand_dims(instr: HloInstruction, k: int) -> Dims:
    """The dimension sizes of operand ``k``, an array (a tuple is an error)."""
    return array_dims(instr.operands[k].shape, f"operand {k} of {instr.name}")


def hlo_reference(instr: HloInstruction) -> str:
    """How XLA names the instruction holding a runtime value: ``parameter(N)``,
    ``constant(<value>)`` for a short literal, otherwise the instruction's name."""
    if instr.opcode == "parameter" and instr.parameter_number is not None:
        return f"parameter({instr.parameter_number})"
    if instr.opcode == "constant" and instr.literal_text is not None \
            and len(instr.literal_text) <= 40:
        return f"constant({instr.literal_text})"
    return instr.name


#: The attribute naming the computation an opcode runs on its operands, one parameter per
#: operand.
_RUNS_ON_OPERANDS = {"fusion": "calls", "call": "to_apply", "async-start": "calls"}


def branch_attributes(instr: HloInstruction) -> tuple[str, ...]:
    """The attributes naming a conditional's branches, the branches in order:
    ``("branch_computations",)`` (every computation it names), or ``("true_computation",
    "false_computation")`` (branch 0 is the true one); ``()`` when neither form is given.
    The one place that knows where a conditional's branches are."""
    called = instr.called_computations
    if "branch_computations" in called:
        return ("branch_computations",)
    pair = ("true_computation", "false_computation")
    return pair if all(key in called for key in pair) else ()


def branch_of(index: ShapeLike, value: int, count: int) -> int:
    """The branch a ``conditional`` of ``count`` branches runs when its branch index (of
    shape ``index``) holds ``value``: a ``pred`` runs branch 0 (the true computation) when
    true, 1 when false; an integer index outside ``[0, count - 1]`` runs the last branch."""
    if isinstance(index, Shape) and index.element_type == "pred":
        return 0 if value else 1
    return value if 0 <= value < count else count - 1


def called_computation(instr: HloInstruction) -> HloComputation | None:
    """The computation a ``fusion`` (``calls=``), ``call`` (``to_apply=``) or
    ``async-start`` (``calls=``) runs on the instruction's operands; None for other
    instructions. :class:`~symidx.errors.SymidxError` when such an instruction does not call
    one computation with one parameter per operand."""
    key = _RUNS_ON_OPERANDS.get(instr.opcode)
    if key is None:
        return None
    called = instr.called_computations.get(key, ())
    if len(called) != 1 or len(called[0].parameters) != len(instr.operands):
        raise SymidxError(f"{instr.opcode} {instr.name} does not call one computation with "
                          f"one parameter per operand")
    return called[0]


def result_reads(instr: HloInstruction, key: str, results: int
                 ) -> list[frozenset[int]] | None:
    """Per result of the computation ``instr`` names by ``key`` (a reduce's reducer, a
    sort's comparator, a scatter's combiner: the root itself when ``results`` is 1, else
    the elements of a root ``tuple`` of that many operands): the numbers of the parameters
    it is computed from, following the dataflow of the computation's instructions. A
    ``get-tuple-element`` of a ``tuple`` is its element; any other instruction is computed
    from all of its operands (a call from all of its arguments), so the sets hold whatever
    values the parameters take, NaN and infinities included. None when there is no such
    computation or root."""
    called = instr.called_computations.get(key, ())
    if len(called) != 1:
        return None
    root = called[0].root
    if results == 1:
        starts = [root]
    elif root.opcode == "tuple" and len(root.operands) == results:
        starts = list(root.operands)
    else:
        return None
    memo: dict[HloInstruction, frozenset[int]] = {}
    for start in starts:
        stack = [start]
        while stack:  # operands first, without recursion
            x = stack[-1]
            if x in memo:
                stack.pop()
                continue
            sources = _sources(x)
            waiting = [o for o in sources if o not in memo]
            if waiting:
                stack.extend(waiting)
                continue
            stack.pop()
            own = frozenset({x.parameter_number}) if x.opcode == "parameter" \
                and x.parameter_number is not None else frozenset()
            memo[x] = own.union(*(memo[o] for o in sources))
    return [memo[start] for start in starts]


def _sources(instr: HloInstruction) -> list[HloInstruction]:
    """The instructions ``instr``'s value is computed from: the element a
    ``get-tuple-element`` of a ``tuple`` takes, else every operand."""
    if instr.opcode == "get-tuple-element" and instr.operands \
            and instr.operands[0].opcode == "tuple" and instr.tuple_index is not None \
            and 0 <= instr.tuple_index < len(instr.operands[0].operands):
        return [instr.operands[0].operands[instr.tuple_index]]
    return list(instr.operands)
