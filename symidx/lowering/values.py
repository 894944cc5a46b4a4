"""What an index operand holds: the one place that answers it for the floors above.

An op rule (:mod:`symidx.ops`) and a sweep (:mod:`symidx.fusion`) both meet integer values
that decide where an op reads: a dynamic slice's offsets, a gather's or a scatter's
indices, a loop's counter. This module says, from the HLO alone, what such an operand
holds, in these pieces:

* **where it is held**: :func:`value_source`, the typed reference
  (:class:`symidx.core.indexing_map.ValueSource`) a runtime variable keeps to its holder;
* **constants and iotas**: :func:`held_at`, the value an op rule may write into its map
  (a known value at a fixed element, an integer iota that does not wrap: its index);
  :func:`leaf_value`, the value a walk over values reads off a leaf (an iota, a constant
  at a fixed element or with all elements equal), the walk checking the range itself;
* **tables**: :func:`known_values`, the values folded before the run by
  :mod:`symidx.hlo.fold` (constants, iotas, integer arithmetic on them, calls);
  :func:`constant_table`, :func:`table_span` and :func:`table_runs`, a constant table read
  along a map; and one policy for splitting a map by a table, :data:`SPLIT_LIMIT`;
* **a caller's fill**: :class:`Scope`, :func:`cross` and :func:`filling`, a parameter
  followed to the operand of the call that fills it;
* **moves**: :func:`preserves_integers`, an op that passes an integer on unchanged (the ops
  of :data:`symidx.hlo.moves.MOVES_ELEMENTS`, and a widening ``convert``), and
  :func:`integer_range` / :func:`exact_range`, the integers a type holds.

* **loop counters**: :func:`evaluator`, the values of a computation's instructions given
  its parameters' (a loop's state: :mod:`symidx.fusion.loops` computes the counters state
  after state with it, and the trip count from the condition), and :func:`counter_dtype`;
  what a counter holds in a state, a :class:`KnownValue` (the values, with the shape and
  the name of the instruction holding them), then replaces the runtime variables naming it
  like any other known value: :func:`known_value_at` reads it as :func:`leaf_value` reads
  a constant, and :func:`table_span` and :func:`table_runs` read it as a constant table.

numpy is imported only by the functions that fold or read tables, so importing this module
stays cheap.

>>> from sympy import Integer
>>> from symidx.core.expr import dim
>>> from symidx.hlo import parse_hlo
>>> e = parse_hlo('''
... HloModule m
... ENTRY e {
...   c = s32[3] constant({4, 0, 2})
...   ROOT i = s32[3,5] iota(), iota_dimension=1
... }''').entry
>>> held_at(e.instructions[0], [dim(0)]), held_at(e.instructions[0], [Integer(2)])
(None, 2)
>>> held_at(e.root, [dim(0), dim(1)])
d1
>>> str(value_source(e.instructions[0]))
'constant({4, 0, 2})'
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from sympy import Integer

from symidx._arith import int_array
from symidx.core.expr import Expr, evaluate_exact
from symidx.core.indexing_map import IndexingMap, ValueSource
from symidx.core.interval import Interval
from symidx.errors import NotFoundError, SymidxError
from symidx.hlo.facts import called_computation, hlo_reference
from symidx.hlo.ir import HloComputation, HloInstruction
from symidx.hlo.moves import MOVES_ELEMENTS
from symidx.hlo.shape import Shape, integer_bounds

if TYPE_CHECKING:  # numpy is imported when a table is read, not at start-up
    import numpy as np

    from symidx.hlo.fold import Evaluator, Value

__all__ = ["SPLIT_LIMIT", "SCATTER_SPLIT_LIMIT", "SPAN_LIMIT", "READ_LIMIT", "MAX_DEPTH",
           "value_source", "held_at", "leaf_value", "literal_at", "literal_elements",
           "integral", "known_values", "constant_table", "table_span", "table_runs",
           "splits", "Scope", "cross", "filling", "runs_computation", "evaluator", "folded",
           "known_in", "known_leaves", "reads_input", "WALK_LIMIT",
           "counter_dtype", "KnownValue", "Holder", "known_value_at", "preserves_integers",
           "integer_range", "exact_range"]

#: **The table-splitting policy.** A map that reads a runtime value from a table known
#: before the run (a constant, or values folded from constants and iotas) is split into
#: one map per run of equal values along the dimension that reads it, each holding its
#: value exactly, when that takes at most this many maps; past it the map stays whole and
#: the value's interval is narrowed to the values the table holds (an over-approximation
#: in place of a union of exact maps: precision is lost, never soundness). 64 maps keep a
#: sweep's composition cheap while covering the index tables programs write as literals.
SPLIT_LIMIT = 64
#: A scatter's rule splits its maps per scatter position (each then holds its whole index
#: vector) under the same policy; a position multiplies the maps of every operand, the
#: indices and the untouched part, so it may take a quarter of :data:`SPLIT_LIMIT`.
SCATTER_SPLIT_LIMIT = SPLIT_LIMIT // 4
#: The most positions of the dimension along which a table is read to split a map.
SPAN_LIMIT = 4096
#: The most elements of a constant table read to bound the values it holds.
READ_LIMIT = 1 << 16
#: How many instructions back a value is followed (moves, parameters, calls, arithmetic).
MAX_DEPTH = 24

#: The largest magnitude below which every integer is exact, per floating-point type.
_FLOAT_EXACT = {"f64": 1 << 53, "f32": 1 << 24, "f16": 1 << 11, "bf16": 1 << 8}


# --- where a value is held ----------------------------------------------------------------


def value_source(instr: HloInstruction, computation: HloComputation | None = None
                 ) -> ValueSource:
    """The typed reference to ``instr`` as the holder of a runtime value: printed as XLA
    names it (:func:`symidx.hlo.facts.hlo_reference`), with the instruction's name, its
    parameter number (a parameter) and, when given, its computation's name."""
    return ValueSource(hlo_reference(instr),
                       computation=None if computation is None else computation.name,
                       instruction=instr.name,
                       parameter=instr.parameter_number if instr.opcode == "parameter"
                       else None)


# --- types --------------------------------------------------------------------------------


def integer_range(element_type: str) -> Interval | None:
    """The values of an integer element type (``s8``: ``[-128, 127]``); None for others."""
    bounds = integer_bounds(element_type)
    return None if bounds is None else Interval(*bounds)


def exact_range(element_type: str) -> Interval | None:
    """The integers ``element_type`` holds exactly: an integer type's range, a
    floating-point type's exactly representable integers (``f32``: ``[-2^24, 2^24]``);
    None for ``pred`` and other types."""
    found = integer_range(element_type)
    if found is not None:
        return found
    limit = _FLOAT_EXACT.get(element_type)
    return None if limit is None else Interval(-limit, limit)


def _shape_range(instr: HloInstruction) -> Interval | None:
    return integer_range(instr.shape.element_type) if isinstance(instr.shape, Shape) else None


def preserves_integers(instr: HloInstruction) -> bool:
    """Does every output element of ``instr`` hold an element of its one operand's integer
    unchanged? An op of :data:`symidx.hlo.moves.MOVES_ELEMENTS`, or a ``convert`` that
    widens (or keeps) the integer type."""
    if (instr.opcode not in MOVES_ELEMENTS and instr.opcode != "convert") \
            or len(instr.operands) != 1:
        return False
    before, after = _shape_range(instr.operands[0]), _shape_range(instr)
    return before is not None and after is not None and before in after


# --- constants and iotas ------------------------------------------------------------------


def held_at(instr: HloInstruction, element: Sequence[Expr],
            table: np.ndarray | None = None) -> Expr | None:
    """The value ``instr`` holds at ``element`` when a map can hold it exactly, for an op
    rule: at a fixed element, the element of ``table`` (``instr``'s values folded before
    the run, :func:`known_values`) or of an integer constant; an integer ``iota`` whose
    type holds its length (it does not wrap): the element's index along
    ``iota_dimension``. None otherwise."""
    if all(e.is_Integer for e in element):
        at = [int(e) for e in element]
        if table is not None:
            return Integer(int(table[tuple(at)]))
        if instr.opcode == "constant" and instr.literal is not None:
            value = literal_at(instr.literal, at)
            if isinstance(value, int) and not isinstance(value, bool):
                return Integer(value)
    shape = instr.shape
    if instr.opcode != "iota" or not isinstance(shape, Shape):
        return None
    axis = instr.attr_int("iota_dimension", 0)
    holds = integer_range(shape.element_type)
    if axis is None or not 0 <= axis < len(element) or not 0 <= axis < len(shape.dims) \
            or holds is None or shape.dims[axis] - 1 > holds.hi:
        return None
    return element[axis]


def leaf_value(instr: HloInstruction, element: Sequence[Expr]) -> Expr | None:
    """The value a walk over values reads off a leaf at ``element``: an ``iota``'s index
    along ``iota_dimension``; a constant's integral value read at a fixed element, or the
    one value of a constant whose elements are all equal. None otherwise (whether the
    element type holds the value is the walk's to check: :func:`exact_range`)."""
    if instr.opcode == "iota":
        axis = instr.attr_int("iota_dimension", 0)
        return element[axis] if axis is not None and 0 <= axis < len(element) else None
    if instr.opcode != "constant" or instr.literal is None:
        return None
    if all(e.is_Integer for e in element):
        return integral(literal_at(instr.literal, tuple(int(e) for e in element)))
    found = set(literal_elements(instr.literal))
    return integral(found.pop()) if len(found) == 1 else None


def literal_at(literal: object, position: Sequence[int]) -> object:
    """The element of a (nested tuple) literal at ``position``; None outside it."""
    for i in position:
        if not isinstance(literal, tuple) or not 0 <= i < len(literal):
            return None
        literal = literal[i]
    return literal


def literal_elements(literal: object) -> list[object]:
    """A literal's elements, in order."""
    if isinstance(literal, tuple):
        return [x for item in literal for x in literal_elements(item)]
    return [literal]


def integral(value: object) -> Expr | None:
    """An integer literal element, or a float one with an integral value, as an
    expression; None for anything else (a ``pred`` too)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Integer(value)
    if isinstance(value, float) and value.is_integer():
        return Integer(int(value))
    return None


# --- tables -------------------------------------------------------------------------------


def known_values(instr: HloInstruction) -> np.ndarray | None:
    """The values array instruction ``instr`` holds whatever the run, when they fold from
    constants and iotas (:func:`symidx.hlo.fold.integer_values`); None otherwise."""
    from symidx.hlo.fold import integer_values

    return integer_values(instr)


class _Folded:
    """What a computation keeps of the values known before the run (see :func:`folded`):
    the evaluator, made on first use, and per instruction whether its value depends on an
    input (a parameter no single caller fills), found without evaluating anything."""

    __slots__ = ("comp", "evaluator", "inputs")

    def __init__(self, comp: HloComputation) -> None:
        self.comp = comp
        self.evaluator: Evaluator | None = None
        self.inputs: dict[HloInstruction, bool] = {}


def _kept(comp: HloComputation) -> _Folded:
    found = comp.resolver_memo
    if found is None:
        found = comp.resolver_memo = _Folded(comp)
    return cast(_Folded, found)


def folded(comp: HloComputation) -> Evaluator:
    """The values of ``comp``'s instructions known before the run, as
    :class:`symidx.hlo.fold.Evaluator` computes them: from constants and iotas, and from its
    parameters where the one instruction that calls it runs it on its operands (a
    ``fusion`` or a ``call``) and their values are known there, followed caller after
    caller. A pure function of the module, kept in the computation (filled on first use,
    as :mod:`symidx.hlo.same_value` keeps its table)."""
    kept = _kept(comp)
    if kept.evaluator is None:
        from symidx.hlo.fold import Evaluator

        kept.evaluator = Evaluator(_FilledByCaller(comp))
    return kept.evaluator


def reads_input(instr: HloInstruction, comp: HloComputation) -> bool:
    """Does the value of ``instr`` (an instruction of ``comp``) depend on an input: a
    parameter of ``comp`` that no single caller fills (see :func:`folded`), or, followed to
    the caller, one of the caller's? Found by walking operands, no value computed; True
    when the walk passes :data:`WALK_LIMIT` instructions (then nothing is known)."""
    memo = _kept(comp).inputs
    if instr in memo:
        return memo[instr]
    seen: set[HloInstruction] = set()
    todo = [instr]
    found = False
    while todo and not found:
        x = todo.pop()
        if x in seen:
            continue
        seen.add(x)
        known = memo.get(x)
        if known is not None:
            found = known
        elif len(seen) > WALK_LIMIT:
            found = True
        elif x.opcode == "parameter":
            fill = _FilledByCaller(comp).caller
            k = x.parameter_number
            found = fill is None or k is None or not 0 <= k < len(fill[0].operands) \
                or reads_input(fill[0].operands[k], fill[1])
        else:
            todo.extend(x.operands)
    memo[instr] = found
    return found


#: The most instructions :func:`reads_input` walks for one question.
WALK_LIMIT = 4096


def known_in(instr: HloInstruction, comp: HloComputation | None) -> np.ndarray | None:
    """The integer values ``instr`` holds whatever the run (an ``int64`` array of its dims),
    where ``comp`` is the computation holding it: what :func:`folded` knows there, its
    parameters followed to their caller; without ``comp`` (or for an instruction that is
    not ``comp``'s), :func:`known_values`. None at once, without evaluating, when the
    value depends on an input (:func:`reads_input`)."""
    if comp is None or not _holds(comp, instr):
        return known_values(instr)
    if reads_input(instr, comp):
        return None
    from symidx.hlo.fold import as_integers

    return as_integers(folded(comp).value(instr))


def known_leaves(instr: HloInstruction, comp: HloComputation | None
                 ) -> tuple[Value | None, ...]:
    """The value of each leaf of ``instr`` known before the run (None: unknown), as
    :func:`known_in` finds them (a loop's initial state)."""
    if comp is None or not _holds(comp, instr):
        return evaluator({}).leaves(instr)
    return folded(comp).leaves(instr)


def _holds(comp: HloComputation, instr: HloInstruction) -> bool:
    try:
        return comp.instruction(instr.name) is instr
    except NotFoundError:
        return False


class _FilledByCaller(Mapping[int, Sequence["Value | None"]]):
    """The values of a computation's parameters known before the run (see :func:`folded`),
    each found when first asked: the one caller running it on its operands evaluated in
    the caller's own computation; nothing for any other computation."""

    def __init__(self, comp: HloComputation) -> None:
        self.comp = comp
        caller = comp.callers[0] if len(comp.callers) == 1 else None
        self.caller = caller if caller is not None \
            and runs_computation(caller[0]) is comp else None

    def __getitem__(self, n: int) -> Sequence[Value | None]:
        if self.caller is None or not 0 <= n < len(self.caller[0].operands):
            raise KeyError(n)
        instr, holder = self.caller
        return folded(holder).leaves(instr.operands[n])

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.caller[0].operands) if self.caller is not None else 0))

    def __len__(self) -> int:
        return len(self.caller[0].operands) if self.caller is not None else 0


def constant_table(instr: HloInstruction) -> np.ndarray | None:
    """The integer array a ``constant`` holds, shaped as it is declared; None for any
    other instruction or literal."""
    if instr.opcode != "constant" or instr.literal is None or not isinstance(instr.shape, Shape):
        return None
    import numpy as np

    table = np.asarray(instr.literal)
    return table if table.dtype.kind in "iu" and table.shape == instr.shape.dims else None


def _table_of(holder: Holder, comp: HloComputation | None = None) -> np.ndarray | None:
    """The integer table ``holder`` holds: a constant's (:func:`constant_table`), the
    values of a :class:`KnownValue` when they are integers shaped as its shape, or the
    values an instruction holds whatever the run (:func:`known_in`, in ``comp``: indices
    computed from constants only, ``jnp.triu_indices``); None otherwise."""
    if not isinstance(holder, KnownValue):
        table = constant_table(holder)
        if table is None and holder.opcode not in ("parameter", "constant") \
                and integer_range(_element_type(holder)) is not None:
            table = known_in(holder, comp)
        return table
    values = holder.values
    return values if values.dtype.kind in "iu" and values.shape == holder.shape.dims else None


def _element_type(instr: HloInstruction) -> str:
    return instr.shape.element_type if isinstance(instr.shape, Shape) else ""


def table_span(instr: Holder, element: IndexingMap, comp: HloComputation | None = None
               ) -> Interval | None:
    """The smallest and largest values the constant table ``instr`` (or a
    :class:`KnownValue`, or values known before the run in ``comp``: :func:`_table_of`)
    holds at the elements ``element`` reaches (at most :data:`READ_LIMIT` points); None
    when it is not a small integer table, an element falls outside it, or nothing is
    reached."""
    table = _table_of(instr, comp)
    if table is None or not table.ndim or element.domain_size() > READ_LIMIT:
        return None
    lo = hi = None
    for point in element.points(limit=READ_LIMIT):
        results, mask = element.evaluate_arrays(point)
        if len(results) != table.ndim or not all(
                ((r[mask] >= 0) & (r[mask] < n)).all() for r, n in zip(results, table.shape)):
            return None
        values = table[tuple(r[mask] for r in results)]
        if values.size:
            lo = int(values.min()) if lo is None else min(lo, int(values.min()))
            hi = int(values.max()) if hi is None else max(hi, int(values.max()))
    return None if lo is None or hi is None else Interval(lo, hi)


Run = tuple[int, int, int]  # first position, last position, the value held along them


def table_runs(instr: Holder, element: Sequence[Expr], x: Expr, span: Interval,
               comp: HloComputation | None = None) -> list[Run] | None:
    """The runs of equal values that the constant table ``instr`` (or a
    :class:`KnownValue`, or values known before the run in ``comp``: :func:`_table_of`)
    holds at ``element`` (expressions of the one variable ``x``) as ``x`` walks ``span``:
    (first, last position, value) each. None when ``instr`` is not an integer table,
    ``span`` is longer than :data:`SPAN_LIMIT`, an element falls outside the table, or the
    runs are more than the policy allows (:func:`splits`)."""
    table = _table_of(instr, comp)
    if table is None or span.size > SPAN_LIMIT:
        return None
    import numpy as np

    positions = np.arange(span.lo, span.hi + 1, dtype=np.int64)
    # exactly: an element past int64 is outside the table, never wrapped into it
    got, defined = evaluate_exact(list(element), [x], [positions])
    if defined is not None and not defined.all():
        return None  # a divisor is 0 somewhere along the span
    index = [np.broadcast_to(int_array(i), positions.shape) for i in got]
    if not all(((i >= 0) & (i < n)).all() for i, n in zip(index, table.shape)):
        return None
    values = table[tuple(int_array(i) for i in index)]
    starts = [0] + [k for k in range(1, len(values)) if values[k] != values[k - 1]]
    if not splits(len(starts)):
        return None
    ends = starts[1:] + [len(values)]
    return [(int(positions[a]), int(positions[b - 1]), int(values[a]))
            for a, b in zip(starts, ends)]


def splits(pieces: int, limit: int = SPLIT_LIMIT) -> bool:
    """Does the policy split a map into ``pieces`` maps, one per run of a table (at most
    ``limit``: :data:`SPLIT_LIMIT`, or :data:`SCATTER_SPLIT_LIMIT` per scatter position)?"""
    return pieces <= limit


# --- loop counters ------------------------------------------------------------------------


def evaluator(arguments: Mapping[int, Sequence[Value | None]]) -> Evaluator:
    """The values of the instructions of one computation, given per parameter number the
    value of each of its leaves (None, or a missing parameter: unknown), as
    :class:`symidx.hlo.fold.Evaluator` computes them: a loop's state gives its body the
    counters, the body gives the next state, the condition the trip count."""
    from symidx.hlo.fold import Evaluator

    return Evaluator(arguments)


def counter_dtype(shape: object) -> np.dtype | None:
    """The numpy type of the values of an integer or ``pred`` array shape (a counter's),
    as :mod:`symidx.hlo.fold` holds them; None for a shape it does not evaluate."""
    from symidx.hlo.fold import integer_dtype

    return integer_dtype(shape)


@dataclass(frozen=True, eq=False)
class KnownValue:
    """Values known before the run in place of the instruction that holds them at run
    time (a loop counter in one state of the loop, as :func:`evaluator` computes it): the
    name the runtime variables give that holder (``source``), its ``shape`` (whose element
    type says which integers it holds exactly) and its ``values``, an array of the shape's
    dims. The resolver reads it as a constant holding those values, and a runtime variable
    it cannot replace keeps naming ``source``."""

    source: ValueSource
    shape: Shape
    values: np.ndarray


#: What holds a runtime value for the resolver: an instruction, or values known in its place.
Holder = HloInstruction | KnownValue


def known_value_at(known: KnownValue, element: Sequence[Expr]) -> Expr | None:
    """The value ``known`` holds at ``element`` as :func:`leaf_value` reads a constant's
    (at a fixed element, or the one value of an array whose elements are all equal), when
    its element type holds that integer exactly (:func:`exact_range`); None otherwise (a
    ``pred``, an element outside the array)."""
    values = known.values
    if all(e.is_Integer for e in element):
        at = tuple(int(e) for e in element)
        if len(at) != values.ndim or not all(0 <= i < n for i, n in zip(at, values.shape)):
            return None
        value = integral(values[at].item())
    else:
        found = set(values.ravel().tolist())
        value = integral(found.pop()) if len(found) == 1 else None
    limit = exact_range(known.shape.element_type)
    return None if value is None or limit is None or int(value) not in limit else value


# --- a caller's fill ----------------------------------------------------------------------


@dataclass(frozen=True)
class Scope:
    """The computation a walk is in (None: unknown), and when the walk entered it through
    a call, the caller's operands that fill its parameters, in the caller's scope
    (``outer``). Without them, a parameter is followed to the one instruction that calls the
    computation, if there is one (:attr:`HloComputation.callers`).

    ``fixed``: what an enclosing loop knows, at one of its states, of instructions of the
    computation (the one analysis of it then serves that state): per instruction, named by
    the names of the calls leading to it from ``comp`` and then its own, a conditional's
    branch or a loop's initial state (:mod:`symidx.fusion.loops` fills it; the steps of
    :mod:`symidx.fusion.steps` read it)."""

    comp: HloComputation | None
    filled: tuple[HloInstruction, ...] | None = None
    outer: Scope | None = None
    fixed: tuple[tuple[tuple[str, ...], Hashable], ...] = ()

    def fixed_at(self, name: str) -> Hashable | None:
        """What ``fixed`` says of the instruction ``name`` of ``comp``; None: nothing."""
        return next((v for path, v in self.fixed if path == (name,)), None)

    def fixed_inside(self, call: str) -> tuple[tuple[tuple[str, ...], Hashable], ...]:
        """What ``fixed`` says of the instructions of the computation the call ``call``
        runs (their paths without the call's name)."""
        return tuple((path[1:], v) for path, v in self.fixed
                     if len(path) > 1 and path[0] == call)


def cross(instr: HloInstruction, scope: Scope) -> tuple[HloInstruction, Scope] | None:
    """Where the value of a parameter or of a call's output comes from: the instruction
    holding it and its scope; None when that is not known."""
    if instr.opcode == "parameter":
        k = instr.parameter_number
        if k is None:
            return None
        if scope.filled is not None and scope.outer is not None:
            return (scope.filled[k], scope.outer) if k < len(scope.filled) else None
        comp = scope.comp
        if comp is None or len(comp.callers) != 1:
            return None
        caller, holder = comp.callers[0]
        if runs_computation(caller) is not comp or k >= len(caller.operands):
            return None
        return caller.operands[k], Scope(holder)
    callee = runs_computation(instr)
    if callee is None or not isinstance(instr.shape, Shape):
        return None
    return callee.root, Scope(callee, tuple(instr.operands), scope)


def filling(instr: HloInstruction, scope: Scope) -> HloInstruction | None:
    """The instruction outside the computation that fills the parameter ``instr`` (through
    parameters of enclosing computations too), as ``scope`` knows it; None when ``instr`` is
    not a parameter or the filling instruction is not known."""
    found = None
    for _ in range(MAX_DEPTH):
        if instr.opcode != "parameter":
            return found
        crossed = cross(instr, scope)
        if crossed is None:
            return found
        instr, scope = crossed
        found = instr
    return None


def runs_computation(instr: HloInstruction) -> HloComputation | None:
    """The computation a ``fusion`` or ``call`` runs on its operands, if well formed."""
    try:
        return called_computation(instr) if instr.opcode in ("fusion", "call") else None
    except SymidxError:
        return None
