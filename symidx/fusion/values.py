"""Values that an output index decides: iotas, constants and integer arithmetic on them.

A causal mask, ``select(compare(iota(dim 0), iota(dim 1), GE), scores, -inf)``, reads
``scores`` only where ``d0 >= d1``, and the ``-inf`` only elsewhere, whatever values the
program runs on. The per-op rule of ``select`` cannot know that (it sees one instruction),
but a sweep can: it follows the predicate back to the instructions that compute it, and when
those compute it from the output index alone, each branch's map gets the predicate as
constraints (:func:`select_constraints`). Masks like these -- causal attention, sliding
windows, ``jnp.tril``, the diagonal of ``jnp.diag`` -- are how real models keep a branch to
a part of an array.

**Values.** :func:`index_value` gives the value an instruction holds at an index as an
integer expression of the index, when it is one of:

* an ``iota`` (the index along ``iota_dimension``), a constant read at a fixed element or a
  constant whose elements are all equal (an integral value), as the resolver reads them
  (:func:`symidx.lowering.values.leaf_value`);
* an op that moves elements (``broadcast``, ``reshape``, ``transpose``, ``slice``,
  ``reverse``, ``copy``, ``bitcast``): the value of its operand at the element its map reads;
* ``add``, ``subtract``, ``negate``, ``abs``, ``multiply`` by a constant, ``maximum``,
  ``minimum``, ``clamp``, ``convert``; integer ``divide``/``remainder`` by a positive
  constant and shifts by a constant, of a value that is never negative (so C's truncation
  is the floor);
* ``sign`` (of an integer: ``min(max(v, -1), 1)``), bitwise ``and`` with ``2^k - 1`` of a
  value that is never negative (``v mod 2^k``);
* a ``select`` whose predicate is the same at every index the element reaches, shown by
  the simplifier (JAX's ``where(i < 0, i + n, i)``, which normalises negative indices, and
  its integer ``floor_divide``, on an iota);
* a ``fusion`` or ``call`` (the value of its computation's root), and a parameter (the
  operand that fills it: the call the walk came through, the call a computation analysed
  per call runs in, or the single caller), followed between computations by a
  :class:`Scope` (the resolver's: :mod:`symidx.lowering.values`).

Every value must be held exactly by the element type at every index: an integer type's
range, a floating-point type's exactly representable integers (``2^24`` for ``f32``).
The same values fold a gather's or a dynamic slice's runtime indices
(:mod:`symidx.fusion.runtime`). Otherwise, or for anything else (a parameter whose filler
is not known, a value read at a varying element of a table), there is no value and the
maps stay as the rule gives them.

**Predicates.** :func:`index_predicate` gives where a ``pred`` holds, as a union of
conjunctions of constraints ``expr in [lo, hi]`` over the index: ``compare`` of two values
(``a - b`` in an interval; ``NE`` is two; not a ``TOTALORDER`` compare of floats, which
orders ``-0.0`` before ``+0.0``), of a value with a small constant table read at a varying
element (the union over its entries, as ``jax.nn.one_hot`` compares its classes with an
iota), or of two predicates (``EQ``, ``NE``),
``and``/``or``/``xor``/``not``, ``select`` of predicates, a constant, and the
element-moving ops above. Negation complements each constraint within the bounds of its
expression, so the false branch's constraints are exact too. The number of conjunctions is
bounded (:data:`MAX_TERMS`); past it, no predicate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from itertools import product
from typing import TypeVar

from sympy import Symbol

from symidx.core.expr import Expr, FloorDiv, Mod, bounds, dim, max_of, min_of, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.simplify import simplify
from symidx.hlo import HloInstruction, Shape
from symidx.hlo.moves import MOVES_ELEMENTS as _MOVES
from symidx.lowering.values import (
    MAX_DEPTH,
    Scope,
    cross,
    exact_range,
    filling,
    integer_range,
    integral,
    leaf_value,
    literal_at,
    literal_elements,
)
from symidx.ops import output_to_input

#: ``Scope`` and ``filling`` are the resolver's (:mod:`symidx.lowering.values`), named here too
#: for the sweeps that walk values with them.
__all__ = ["index_value", "index_predicate", "select_constraints",
           "nonzero_where", "filling",
           "Scope",
           "MAX_TERMS"]

#: A constraint ``expr in interval``; a conjunction of them; a union of conjunctions.
Atom = tuple[Expr, Interval]
Conjunction = tuple[Atom, ...]
Predicate = tuple[Conjunction, ...]

TRUE: Predicate = ((),)
FALSE: Predicate = ()
#: At most this many conjunctions in a predicate.
MAX_TERMS = 16


Env = Mapping[Symbol, Interval]
_T = TypeVar("_T")

#: Where a walk leaves one computation for another: a parameter (to what fills it) and a
#: call (to the root of the computation it runs).
_CROSSINGS = frozenset({"parameter", "fusion", "call"})
#: Instructions that pass on a value held elsewhere (:func:`_source`).
_PASSES = _CROSSINGS | _MOVES | {"concatenate"}


def _source(instr: HloInstruction, element: tuple[Expr, ...], scope: Scope,
            env: Env | None = None
            ) -> tuple[HloInstruction, tuple[Expr, ...], Scope] | None:
    """Where an instruction of :data:`_PASSES` gets the value it holds at ``element``: the
    instruction, element and scope holding it; None when that is not known. A
    ``concatenate`` passes on the value of the one operand whose part holds every element
    ``element`` reaches over ``env`` (a fixed element without it): an iota column of a
    vmapped scatter's or gather's indices, ``concatenate(iota, indices)``."""
    if instr.opcode in _MOVES:
        inner = _moved(instr, element)
        return None if inner is None else (instr.operands[0], inner, scope)
    if instr.opcode == "concatenate":
        part = _concatenated(instr, element, env or {})
        return None if part is None else (part[0], part[1], scope)
    crossed = cross(instr, scope)
    return None if crossed is None else (crossed[0], element, crossed[1])


def _concatenated(instr: HloInstruction, element: tuple[Expr, ...], env: Env
                  ) -> tuple[HloInstruction, tuple[Expr, ...]] | None:
    """The operand of a ``concatenate`` holding its elements at ``element``, and the
    element of it, when every value of ``element``'s coordinate along the concatenated
    dimension over ``env`` lies in that operand's part; None otherwise."""
    if not instr.dimensions or len(instr.dimensions) != 1 or not instr.operands:
        return None
    axis = instr.dimensions[0]
    if not 0 <= axis < len(element) or not element[axis].free_symbols <= set(env):
        return None
    span = bounds(element[axis], env)
    start = 0
    for op in instr.operands:
        if not isinstance(op.shape, Shape) or len(op.shape.dims) != len(element):
            return None
        size = op.shape.dims[axis]
        if start <= span.lo and span.hi < start + size:
            inner = list(element)
            inner[axis] = element[axis] - start
            return op, tuple(inner)
        start += size
    return None


def select_constraints(select: HloInstruction, env: Env, scope: Scope | None = None
                       ) -> tuple[Predicate | None, Predicate | None]:
    """Where ``select`` takes its on-true and its on-false operand, as predicates over its
    output index (``dim(i)`` for output dimension ``i``, ``env`` their intervals); None for
    a branch whose predicate the index does not decide, or that takes more than
    :data:`MAX_TERMS` conjunctions to write. ``scope`` (the computation holding ``select``,
    and the call running it, if known) lets the walk follow a parameter to the instruction
    that fills it."""
    if select.opcode != "select" or len(select.operands) != 3:
        return None, None
    pred = select.operands[0]
    if not isinstance(pred.shape, Shape) or not isinstance(select.shape, Shape):
        return None, None
    element: tuple[Expr, ...] = () if not pred.shape.dims else tuple(
        dim(i) for i in range(len(select.shape.dims)))
    where = index_predicate(pred, element, env, scope=scope)
    if where is None:
        return None, None
    return where, _not(where, env)


# --- values -------------------------------------------------------------------------------


def index_value(instr: HloInstruction, element: Sequence[Expr], env: Env,
                depth: int = MAX_DEPTH, scope: Scope | None = None) -> Expr | None:
    """The value ``instr`` holds at ``element`` (expressions over the variables of ``env``),
    as an integer expression, or None (see the module docstring)."""
    if depth <= 0 or not isinstance(instr.shape, Shape):
        return None
    value = _value(instr, tuple(element), env, depth - 1, scope or Scope(None))
    if value is None:
        return None
    limit = exact_range(instr.shape.element_type)
    if limit is None or bounds(value, env) not in limit:
        return None
    return value


def _value(instr: HloInstruction, element: tuple[Expr, ...], env: Env, depth: int,
           scope: Scope) -> Expr | None:
    op = instr.opcode
    if op in _PASSES:
        source = _source(instr, element, scope, env)
        return None if source is None else index_value(source[0], source[1], env, depth,
                                                       source[2])
    if op in ("iota", "constant"):
        return leaf_value(instr, element)
    if op == "convert":
        return index_value(instr.operands[0], element, env, depth, scope)
    if op == "select" and len(instr.operands) == 3:  # a predicate the index decides
        chosen = _chosen(instr, element, env, depth, scope)
        return None if chosen is None else index_value(chosen, element, env, depth, scope)
    values = _each_operand(instr, element,
                           lambda o, at: index_value(o, at, env, depth, scope))
    return None if values is None else _arithmetic(instr, values, env)


def _chosen(select: HloInstruction, element: tuple[Expr, ...], env: Env, depth: int,
            scope: Scope) -> HloInstruction | None:
    """The operand a ``select`` takes at every index ``element`` reaches, when its
    predicate is the same there (JAX's ``where(i < 0, i + n, i)`` on a non-negative
    ``i``)."""
    pred = select.operands[0]
    at = () if isinstance(pred.shape, Shape) and not pred.shape.dims else element
    where = index_predicate(pred, at, env, depth, scope)
    if where is None:
        return None
    if _never(where, env):
        return select.operands[2]
    otherwise = _not(where, env)
    if otherwise is not None and _never(otherwise, env):
        return select.operands[1]
    return None


def _never(p: Predicate, env: Env) -> bool:
    """Is ``p`` false at every point of ``env``'s box? Each conjunction, as the constraints
    of a map over the box, must simplify to KNOWN EMPTY (so False may be a failure to
    prove it)."""
    dims = _numbered(env, dim)
    ranges = _numbered(env, sym)
    if dims is None or ranges is None or len(dims) + len(ranges) != len(env):
        return False
    for conjunction in p:
        m = IndexingMap.create(dims, (), ranges, (), conjunction)
        if not simplify(m).is_known_empty:
            return False
    return True


def _numbered(env: Env, kind: Callable[[int], Symbol]) -> list[Interval] | None:
    """The intervals of ``kind(0), kind(1), ...`` in ``env``, in order; None when the
    numbers have a gap."""
    found = [i for i in range(len(env)) if kind(i) in env]
    if found != list(range(len(found))):
        return None
    return [env[kind(i)] for i in found]


def _arithmetic(instr: HloInstruction, values: list[Expr], env: Env) -> Expr | None:
    op = instr.opcode
    if op == "add" and len(values) == 2:
        return values[0] + values[1]
    if op == "subtract" and len(values) == 2:
        return values[0] - values[1]
    if op == "negate" and len(values) == 1:
        return -values[0]
    if op == "abs" and len(values) == 1:
        return max_of(values[0], -values[0])
    if op == "multiply" and len(values) == 2:
        if values[0].is_Integer or values[1].is_Integer:
            return values[0] * values[1]
        return None
    if op == "maximum" and len(values) == 2:
        return max_of(*values)
    if op == "minimum" and len(values) == 2:
        return min_of(*values)
    if op == "clamp" and len(values) == 3:
        return min_of(max_of(values[1], values[0]), values[2])
    if op == "sign" and len(values) == 1:  # of an integer
        return min_of(max_of(values[0], -1), 1)
    if not _is_integer_type(instr) or len(values) != 2 or not values[1].is_Integer:
        return None
    a, b = values[0], int(values[1])
    if bounds(a, env).lo < 0:  # C's truncation differs from the floor
        return None
    if op == "divide" and b > 0:
        return FloorDiv(a, b)
    if op == "remainder" and b > 0:
        return Mod(a, b)
    if op in ("shift-right-logical", "shift-right-arithmetic") and 0 <= b < 63:
        return FloorDiv(a, 1 << b)
    if op == "shift-left" and 0 <= b < 63:
        return a * (1 << b)
    if op == "and" and b > 0 and b & (b + 1) == 0:  # the low bits: 2^k - 1
        return Mod(a, b + 1)
    return None


def _is_integer_type(instr: HloInstruction) -> bool:
    return isinstance(instr.shape, Shape) and integer_range(instr.shape.element_type) is not None


def _moved(instr: HloInstruction, element: tuple[Expr, ...]) -> tuple[Expr, ...] | None:
    """The element of operand 0 that an element-moving op reads at ``element``."""
    try:
        groups = output_to_input(instr, 0)
    except Exception:  # noqa: BLE001 -- no rule, or shapes that do not fit: no value
        return None
    if not groups or len(groups[0]) != 1:
        return None
    m = groups[0][0]
    if m.is_known_empty or m.is_undefined or m.num_ranges or m.num_rts or m.constraints \
            or m.num_dims != len(element):
        return None
    results, _ = m.substitute(dict(zip(m.dim_vars, element)))
    return tuple(results)


def _each_operand(instr: HloInstruction, element: tuple[Expr, ...],
                  evaluate: Callable[[HloInstruction, tuple[Expr, ...]], _T | None]
                  ) -> list[_T] | None:
    """``evaluate`` of each operand of an elementwise op at the element it reads at
    ``element``: the same, or ``()`` for a scalar operand (XLA's implicit scalar
    broadcast). None when an operand is neither, there is none, or ``evaluate`` knows
    nothing of one."""
    found = []
    for op in instr.operands:
        if not isinstance(op.shape, Shape) or len(op.shape.dims) not in (0, len(element)):
            return None
        result = evaluate(op, element if op.shape.dims else ())
        if result is None:
            return None
        found.append(result)
    return found or None


# --- predicates ---------------------------------------------------------------------------


def index_predicate(instr: HloInstruction, element: Sequence[Expr], env: Env,
                    depth: int = MAX_DEPTH, scope: Scope | None = None) -> Predicate | None:
    """Where the ``pred`` instruction ``instr`` holds at ``element``: a union of
    conjunctions of constraints over the variables of ``env``; None when the index does not
    decide it (see the module docstring)."""
    if depth <= 0 or not isinstance(instr.shape, Shape) or instr.shape.element_type != "pred":
        return None
    found = _predicate(instr, tuple(element), env, depth - 1, scope or Scope(None))
    if found is None or len(found) > MAX_TERMS:
        return None
    return found


def _predicate(instr: HloInstruction, element: tuple[Expr, ...], env: Env, depth: int,
               scope: Scope) -> Predicate | None:
    op = instr.opcode
    if op in _PASSES:
        source = _source(instr, element, scope, env)
        return None if source is None else index_predicate(source[0], source[1], env, depth,
                                                           source[2])
    if op == "constant":
        return _constant_predicate(instr, element)
    if op == "compare":
        return _compare(instr, element, env, depth, scope)
    if op == "convert":
        held = instr.operands[0]
        if isinstance(held.shape, Shape) and held.shape.element_type == "pred":
            return index_predicate(held, element, env, depth, scope)
        value = index_value(held, element, env, depth, scope)
        return None if value is None else _interval_predicate(value, "NE", env)
    parts = _each_operand(instr, element,
                          lambda o, at: index_predicate(o, at, env, depth, scope))
    return None if parts is None else _logic(op, parts, env)


def _logic(op: str, parts: list[Predicate], env: Env) -> Predicate | None:
    if op == "not" and len(parts) == 1:
        return _not(parts[0], env)
    if op == "and" and len(parts) == 2:
        return _and(parts[0], parts[1])
    if op == "or" and len(parts) == 2:
        return _or(parts[0], parts[1])
    if op == "xor" and len(parts) == 2:
        a, b = parts
        not_a, not_b = _not(a, env), _not(b, env)
        if not_a is None or not_b is None:
            return None
        left, right = _and(a, not_b), _and(not_a, b)
        return None if left is None or right is None else _or(left, right)
    if op == "select" and len(parts) == 3:
        p, a, b = parts
        not_p = _not(p, env)
        if not_p is None:
            return None
        left, right = _and(p, a), _and(not_p, b)
        return None if left is None or right is None else _or(left, right)
    return None


def _constant_predicate(instr: HloInstruction, element: tuple[Expr, ...]) -> Predicate | None:
    literal = instr.literal
    if literal is None:
        return None
    if all(e.is_Integer for e in element):  # None: outside the literal
        values: set[object] = {literal_at(literal, [int(i) for i in element])}
    else:
        values = set(literal_elements(literal))
    if values == {True}:
        return TRUE
    if values == {False}:
        return FALSE
    return None


#: The interval of ``a - b`` where ``compare(a, b, direction)`` holds (``NE``: see
#: :func:`_interval_predicate`), in terms of the difference's bounds ``lo``, ``hi``.
_DIRECTIONS: dict[str, Callable[[int, int], tuple[int, int]]] = {
    "EQ": lambda lo, hi: (0, 0),
    "LT": lambda lo, hi: (lo, -1),
    "LE": lambda lo, hi: (lo, 0),
    "GT": lambda lo, hi: (1, hi),
    "GE": lambda lo, hi: (0, hi),
}


def _compare(instr: HloInstruction, element: tuple[Expr, ...], env: Env, depth: int,
             scope: Scope) -> Predicate | None:
    direction = instr.comparison_direction
    if direction not in (*_DIRECTIONS, "NE") or len(instr.operands) != 2:
        return None
    if (instr.attr_str("type") or "").upper() == "TOTALORDER":
        return None  # orders -0.0 before +0.0, which integer values do not tell apart
    if all(isinstance(o.shape, Shape) and o.shape.element_type == "pred"
           for o in instr.operands):  # two predicates: differ (NE) or agree (EQ)
        if direction not in ("EQ", "NE"):
            return None
        parts = _each_operand(instr, element,
                              lambda o, at: index_predicate(o, at, env, depth, scope))
        differ = None if parts is None else _logic("xor", parts, env)
        return differ if direction == "NE" or differ is None else _not(differ, env)
    values = _each_operand(instr, element,
                           lambda o, at: index_value(o, at, env, depth, scope))
    if values is None:
        return _table_compare(instr, element, env, depth, scope)
    return _interval_predicate(values[0] - values[1], direction, env)


def _table_compare(instr: HloInstruction, element: tuple[Expr, ...], env: Env, depth: int,
                   scope: Scope) -> Predicate | None:
    """A ``compare`` one of whose operands reads a small constant table of integral values at
    an element that varies (``jax.nn.one_hot`` compares the table of classes with an
    iota), the other a value: the union, over the table's entries, of "the element is that
    entry, and the comparison holds with its value". None when it is not that, or takes
    more than :data:`MAX_TERMS` conjunctions."""
    direction = instr.comparison_direction or ""
    for k in (0, 1):
        op = instr.operands[k]
        other = instr.operands[1 - k]
        if not isinstance(op.shape, Shape) or not isinstance(other.shape, Shape) \
                or len(op.shape.dims) not in (0, len(element)) \
                or len(other.shape.dims) not in (0, len(element)):
            continue
        table = _held_table(op, element if op.shape.dims else (), scope)
        value = index_value(other, element if other.shape.dims else (), env, depth, scope)
        if table is None or value is None:
            continue
        constant, at = table
        dims = constant.shape.dims if isinstance(constant.shape, Shape) else ()
        if math.prod(dims) > MAX_TERMS:
            continue
        found: Predicate = FALSE
        for p, last in _runs_of_equal_entries(constant.literal, dims):
            entry = integral(literal_at(constant.literal, p))
            if entry is None:
                return None
            here: Predicate | None = TRUE
            for e, v, w in zip(at, p, last, strict=True):
                here = None if here is None else _and(here, _atom(e, Interval(v, w),
                                                                  bounds(e, env)))
            diff = entry - value if k == 0 else value - entry
            here = None if here is None else _and(here, _interval_predicate(diff, direction,
                                                                           env))
            if here is None:
                return None
            found = _or(found, here)
        return found if len(found) <= MAX_TERMS else None
    return None


def _runs_of_equal_entries(literal: object, dims: Sequence[int]
                           ) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The positions of a table as boxes (first, last position) of equal entries: runs
    along the last dimension, so ``{0, 0, 0, 1}`` is two boxes, not four terms."""
    boxes: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
    for p in product(*(range(n) for n in dims)):
        if boxes and p[:-1] == boxes[-1][1][:-1] and p[-1] == boxes[-1][1][-1] + 1 \
                and literal_at(literal, p) == literal_at(literal, boxes[-1][0]):
            boxes[-1] = (boxes[-1][0], p)
        else:
            boxes.append((p, p))
    return boxes


def _held_table(instr: HloInstruction, element: tuple[Expr, ...], scope: Scope
                ) -> tuple[HloInstruction, tuple[Expr, ...]] | None:
    """The constant ``instr`` passes on at ``element`` (through element-moving ops,
    parameters and calls), with the element of it; None when it is not a constant."""
    for _ in range(MAX_DEPTH):
        if instr.opcode == "constant":
            held = isinstance(instr.shape, Shape) and len(instr.shape.dims) == len(element)
            return (instr, element) if held and instr.literal is not None else None
        if instr.opcode not in _PASSES:
            return None
        source = _source(instr, element, scope)
        if source is None:
            return None
        instr, element, scope = source
    return None


def _interval_predicate(diff: Expr, direction: str, env: Env) -> Predicate:
    """Where ``diff`` compares with 0 as ``direction`` says, as a predicate (``NE``: the
    two sides of 0)."""
    if direction == "NE":
        return _or(_interval_predicate(diff, "LT", env), _interval_predicate(diff, "GT", env))
    span = bounds(diff, env)
    lo, hi = _DIRECTIONS[direction](span.lo, span.hi)
    return _atom(diff, Interval(max(lo, span.lo), min(hi, span.hi)), span)


def _atom(expr: Expr, interval: Interval, span: Interval) -> Predicate:
    """``expr in interval`` where ``expr`` takes values in ``span``: FALSE when the two do
    not meet, TRUE when ``interval`` holds all of ``span``. The expression is kept with a
    positive leading coefficient (``d1 - d0 in [0, 0]`` is ``d0 - d1 in [0, 0]``), so that
    constraints on the same expression meet in :func:`_and`."""
    if interval.lo > interval.hi:
        return FALSE
    if interval.lo <= span.lo and span.hi <= interval.hi:
        return TRUE
    if expr.is_Integer:
        return TRUE if interval.lo <= int(expr) <= interval.hi else FALSE
    if _leading_sign(expr) < 0:
        expr, interval = -expr, Interval(-interval.hi, -interval.lo)
    shift, rest = expr.as_coeff_Add()
    if shift and shift.is_Integer and not rest.is_Number:  # d1 - 1 in [-1, -1]: d1 in [0, 0]
        expr, interval = rest, Interval(interval.lo - int(shift), interval.hi - int(shift))
    return (((expr, interval),),)


def _leading_sign(expr: Expr) -> int:
    """The sign of the coefficient of the first non-constant term of ``expr``."""
    for term in expr.as_ordered_terms() if expr.is_Add else [expr]:
        if not term.is_Number:
            return -1 if term.as_coeff_Mul()[0] < 0 else 1
    return 1


def _or(a: Predicate, b: Predicate) -> Predicate:
    if TRUE[0] in a or TRUE[0] in b:
        return TRUE
    return tuple(dict.fromkeys(a + b))


def _and(a: Predicate, b: Predicate) -> Predicate | None:
    if len(a) * len(b) > MAX_TERMS * MAX_TERMS:
        return None
    terms = [c for c in (_conjoin(x + y) for x, y in product(a, b)) if c is not None]
    result = tuple(dict.fromkeys(terms))
    return result if len(result) <= MAX_TERMS else None


def _conjoin(atoms: Conjunction) -> Conjunction | None:
    """The constraints of ``atoms``, those on the same expression met; None when two of
    them cannot both hold."""
    met: dict[Expr, Interval] = {}
    for expr, interval in atoms:
        if expr in met:
            old = met[expr]
            interval = Interval(max(old.lo, interval.lo), min(old.hi, interval.hi))
            if interval.lo > interval.hi:
                return None
        met[expr] = interval
    return tuple(met.items())


def _not(p: Predicate, env: Env) -> Predicate | None:
    """The complement: no conjunction holds, i.e. every conjunction has a constraint that
    fails, each failing constraint split into the parts of its expression's bounds below and
    above its interval."""
    result: Predicate = TRUE
    for conjunction in p:
        fails: Predicate = FALSE
        for expr, interval in conjunction:
            span = bounds(expr, env)
            below = _atom(expr, Interval(span.lo, min(interval.lo - 1, span.hi)), span)
            above = _atom(expr, Interval(max(interval.hi + 1, span.lo), span.hi), span)
            fails = _or(fails, _or(below, above))
        anded = _and(result, fails)
        if anded is None:
            return None
        result = anded
    return result


# --- zeros (the finite semantics) ---------------------------------------------------------

#: Element types whose conversion keeps a zero a zero, an infinity an infinity and a NaN a
#: NaN.
_FLOATS = frozenset({"f64", "f32", "f16", "bf16"})
#: The two classes of values followed: ``ZERO`` is +0, -0 or NaN; ``NEG_INF`` is -inf or
#: NaN. (NaN belongs to both: an operation on it gives NaN again.)
ZERO, NEG_INF = "zero", "-inf"


def nonzero_where(instr: HloInstruction, element: Sequence[Expr], env: Env,
                  scope: Scope | None = None) -> Predicate | None:
    """Where ``instr`` may hold a value other than a zero (``+0``, ``-0``) or NaN at
    ``element``: a union of conjunctions over the variables of ``env``, an
    over-approximation; None when that may be everywhere. Used by the ``finite``
    semantics, to drop the other factor of a product where this one is zero or NaN: a finite
    factor times zero is zero, and anything times NaN is NaN, so the other factor changes
    nothing there.

    What is followed, for each class (zero-or-NaN, and -inf-or-NaN, which ``exp`` turns into
    zero): a constant's elements of the class (all of them, or a table with at most
    :data:`MAX_TERMS` others); the padding of a ``pad`` whose pad value is of the class, and
    its operand's elements; a ``select``'s branch where its predicate picks it (both
    branches' common ones otherwise); the element-moving ops, parameters and calls as
    :func:`index_value` follows them; and

    * zero or NaN: ``multiply`` where a factor is (``0 * x`` is ``±0`` or NaN whatever
      ``x``), ``divide`` where the dividend is, ``exponential`` where its operand is -inf or
      NaN, ``negate``, a conversion to a floating-point type, a conversion of a ``pred``
      (where it is false);
    * -inf or NaN: ``subtract`` where the minuend is (``-inf - x`` is -inf or NaN),
      ``add`` where either is, ``maximum`` where both are, ``minimum`` where either is, a
      conversion to a floating-point type.

    This is how a masked softmax's probabilities, ``exp(where(mask, s, -inf) - max) / sum``,
    are zero (or NaN, for a row the mask empties) where the mask is false."""
    found = _may(instr, tuple(element), env, MAX_DEPTH, scope or Scope(None), ZERO)
    return None if found == TRUE else found


def _may(instr: HloInstruction, element: tuple[Expr, ...], env: Env, depth: int,
         scope: Scope, kind: str) -> Predicate:
    """Where ``instr`` may hold a value outside the class ``kind`` at ``element``; TRUE for
    everywhere."""
    if depth <= 0 or not isinstance(instr.shape, Shape):
        return TRUE
    found = _may_of(instr, element, env, depth - 1, scope, kind)
    return found if len(found) <= MAX_TERMS else TRUE


def _may_of(instr: HloInstruction, element: tuple[Expr, ...], env: Env, depth: int,
            scope: Scope, kind: str) -> Predicate:
    op, n = instr.opcode, len(instr.operands)

    def operand(k: int, of: str = kind) -> Predicate:
        return _operand_may(instr, k, element, env, depth, scope, of)

    if op in _PASSES:
        source = _source(instr, element, scope, env)
        return TRUE if source is None else _may(source[0], source[1], env, depth, source[2],
                                                kind)
    if op == "constant":
        return _constant_may(instr, element, env, kind)
    if op == "pad" and n == 2:
        return _pad_may(instr, element, env, depth, scope, kind)
    if op == "select" and n == 3:
        pred = instr.operands[0]
        at = () if isinstance(pred.shape, Shape) and not pred.shape.dims else element
        where = index_predicate(pred, at, env, depth, scope)
        otherwise = None if where is None else _not(where, env)
        if where is None or otherwise is None:
            return _or(operand(1), operand(2))
        return _union(_and(where, operand(1)), _and(otherwise, operand(2)))
    if op == "convert" and n == 1:
        held = instr.operands[0]
        if kind == ZERO and isinstance(held.shape, Shape) and held.shape.element_type == "pred":
            where = index_predicate(held, element if held.shape.dims else (), env, depth,
                                    scope)
            return TRUE if where is None else where
        if isinstance(instr.shape, Shape) and instr.shape.element_type in _FLOATS:
            return operand(0)
        return TRUE
    if kind == ZERO:
        if op == "multiply" and n == 2:
            return _intersection(operand(0), operand(1))
        if op == "divide" and n == 2:
            return operand(0)
        if op == "negate" and n == 1:
            return operand(0)
        if op == "exponential" and n == 1:
            return operand(0, NEG_INF)
        return TRUE
    if op == "subtract" and n == 2:
        return operand(0)
    if op in ("add", "minimum") and n == 2:
        return _intersection(operand(0), operand(1))
    if op == "maximum" and n == 2:
        return _or(operand(0), operand(1))
    return TRUE


def _union(a: Predicate | None, b: Predicate | None) -> Predicate:
    """``a or b`` where None (too many terms to write) stands for TRUE."""
    return TRUE if a is None or b is None else _or(a, b)


def _intersection(a: Predicate, b: Predicate) -> Predicate:
    """``a and b``; TRUE (a superset) when that takes too many terms."""
    both = _and(a, b)
    return TRUE if both is None else both


def _operand_may(instr: HloInstruction, k: int, element: tuple[Expr, ...], env: Env,
                 depth: int, scope: Scope, kind: str) -> Predicate:
    """:func:`_may` of operand ``k`` of an elementwise op at ``element`` (``()`` for a
    scalar operand)."""
    op = instr.operands[k]
    if not isinstance(op.shape, Shape) or len(op.shape.dims) not in (0, len(element)):
        return TRUE
    return _may(op, element if op.shape.dims else (), env, depth, scope, kind)


def _in_class(value: object, kind: str) -> bool:
    """Is a literal element of the class ``kind``?"""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if value != value:  # NaN
        return True
    return value == 0 if kind == ZERO else value == float("-inf")


def _constant_may(instr: HloInstruction, element: tuple[Expr, ...], env: Env, kind: str
                  ) -> Predicate:
    literal = instr.literal
    if literal is None:
        return TRUE
    if all(e.is_Integer for e in element):
        return FALSE if _in_class(literal_at(literal, tuple(int(e) for e in element)), kind) \
            else TRUE
    values = literal_elements(literal)
    if all(_in_class(v, kind) for v in values):
        return FALSE
    dims = instr.shape.dims if isinstance(instr.shape, Shape) else ()
    if len(values) > 4096 or len(dims) != len(element):
        return TRUE
    positions = [p for p in product(*(range(n) for n in dims))
                 if not _in_class(literal_at(literal, p), kind)]
    if len(positions) > MAX_TERMS:
        return TRUE
    found: Predicate = FALSE
    for p in positions:
        term: Predicate | None = TRUE
        for e, v in zip(element, p, strict=True):
            term = None if term is None else _and(term, _atom(e, Interval(v, v), bounds(e, env)))
        found = _union(found, term)
    return found


def _pad_may(instr: HloInstruction, element: tuple[Expr, ...], env: Env, depth: int,
             scope: Scope, kind: str) -> Predicate:
    """A ``pad`` holds its operand's values where it holds operand elements, its pad value
    elsewhere."""
    operand = instr.operands[0]
    padding = instr.padding
    if not isinstance(operand.shape, Shape) or padding is None \
            or not len(padding) == len(element) == len(operand.shape.dims):
        return TRUE
    over: Predicate | None = TRUE
    inner = []
    for e, n, p in zip(element, operand.shape.dims, padding, strict=True):
        step = p.interior + 1
        offset = e - p.low
        over = None if over is None else _and(over, _atom(
            offset, Interval(0, (n - 1) * step), bounds(offset, env)))
        span = bounds(offset, env)
        if step > 1 and over is not None:  # on the grid; Mod is the offset when it is small
            m = offset if span.lo >= 0 and span.hi < step else Mod(offset, step)
            over = _and(over, _atom(m, Interval(0, 0), bounds(m, env)))
        inner.append(FloorDiv(offset, step) if step > 1 else offset)
    outside = None if over is None else _not(over, env)
    if over is None or outside is None:
        return TRUE
    held = _and(over, _may(operand, tuple(inner), env, depth, scope, kind))
    padded = _and(outside, _may(instr.operands[1], (), env, depth, scope, kind))
    return _union(held, padded)
