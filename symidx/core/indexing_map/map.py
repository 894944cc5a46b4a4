"""IndexingMap: a map from the index of one tensor to indices of another, and its text.

``f(d, s, rt) -> (e_1, ..., e_k)`` where the dimension variables ``d`` range over
intervals, the range variables ``s`` and runtime variables ``rt`` over theirs, and every
constraint ``expr in [lo, hi]`` must hold. For a source index ``d`` the map's image is
``{ results(d, s, rt) : s, rt in their intervals, every constraint holds }``.

Maps are frozen values: every operation returns a new map. Equality and hashing are on a
canonical form that ignores display names. A map prints itself (:func:`print_map`, with
the expressions printed by :mod:`symidx.core.indexing_map.text`); the parser is in
:mod:`symidx.core.syntax`, simplification in :mod:`symidx.core.simplify`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from types import MappingProxyType
from typing import Any

import sympy
from sympy import Integer, Symbol

from symidx._arith import int_array
from symidx.core.expr import (
    Expr,
    Max,
    as_expr,
    compile_expr,
    constrained_bounds,
    dim,
    evaluate_exact,
    rt,
    scan,
    substitute,
    sym,
    variable_divisions,
)
from symidx.core.indexing_map.order import sorted_constraints as _sorted_constraints
from symidx.core.indexing_map.points import box_points
from symidx.core.indexing_map.text import STYLES, ExprPrinter, Style, int_text, print_expr
from symidx.core.interval import Interval
from symidx.errors import MapError, TooLargeError, expect_type

__all__ = ["IndexingMap", "RuntimeVar", "ValueSource", "MapKind", "Constraint", "print_map"]


class MapKind(Enum):
    """What a map is: an ordinary map, one whose domain is known to be empty (it reads
    nothing), or one we know nothing about (every element may be read)."""

    NORMAL = "normal"
    KNOWN_EMPTY = "known_empty"
    UNDEFINED = "undefined"


# the members as plain globals: reading an Enum member off its class is slow on Python 3.11,
# and every equality test and simplifier round asks a map its kind
_NORMAL, _KNOWN_EMPTY, _UNDEFINED = MapKind.NORMAL, MapKind.KNOWN_EMPTY, MapKind.UNDEFINED


@dataclass(frozen=True, slots=True)
class ValueSource:
    """Where a runtime value is held: a typed reference to an instruction.

    ``text`` is how it prints, as XLA names the holder (``parameter(1)``, ``constant({1, 3})``
    for a short literal, otherwise the instruction's name; or free text read from a map,
    e.g. ``of1 = s32[] parameter(1)``). The other fields name it as :mod:`symidx.lowering.values`
    found it: the ``computation`` and the ``instruction`` holding the value, and its
    ``parameter`` number when it is a parameter (None when not known: text read from a
    map names no computation). Two sources are equal when they print the same, so maps
    that differ only in which of two like-named holders they name stay one map.
    """

    text: str
    computation: str | None = field(default=None, compare=False)
    instruction: str | None = field(default=None, compare=False)
    parameter: int | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class RuntimeVar:
    """A value known only at run time: its feasible interval and where it comes from.

    ``source`` names the instruction that holds the value (:class:`ValueSource`; None:
    not known); ``map`` sends this map's dimension variables to the
    element of that instruction that holds the value (``(d0, d1) -> ()`` for a scalar).
    ``clamped`` says what the op does with a held value outside ``bounds``: clamps it into
    them (dynamic-slice, gather: True) or reads nothing (scatter skips the window: False).
    It guides folding a known value; it takes no part in equality or text.
    """

    bounds: Interval
    source: ValueSource | None = None
    map: IndexingMap | None = None
    clamped: bool = field(default=True, compare=False)


Constraint = tuple[Expr, Interval]


@dataclass(frozen=True, slots=True, eq=False)
class IndexingMap:
    """An indexing map. Build one with :meth:`IndexingMap.create` (or parse text with
    :func:`symidx.core.syntax.parse_map`); the fields are already canonical.

    ``names`` holds an optional display name per variable (dims, then range variables, then
    runtime variables; ``None`` for the default ``d0``/``s0``/``rt0``). Names never take
    part in equality.
    """

    dims: tuple[Interval, ...]
    results: tuple[Expr, ...]
    ranges: tuple[Interval, ...] = ()
    rts: tuple[RuntimeVar, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    names: tuple[str | None, ...] | None = None
    kind: MapKind = MapKind.NORMAL
    # Memoised pure functions of the fields above (canonical key, hash, compiled results).
    # Not an init field: every new map -- also one made by ``dataclasses.replace`` -- starts
    # with a fresh cache, so a derived map never answers with its source's results.
    _cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False,
                                   compare=False)
    # The hash, once computed (None before): a slot of its own, read by every dict and set
    # that holds the map, so without a lookup in ``_cache``.
    _hash: int | None = field(default=None, init=False, repr=False, compare=False)

    # --- pickling: the fields, never the cache (it holds compiled functions) -------------
    def __getstate__(self) -> tuple[Any, ...]:
        return (self.dims, self.results, self.ranges, self.rts, self.constraints,
                self.names, self.kind)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(("dims", "results", "ranges", "rts", "constraints", "names",
                                "kind"), state):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_cache", {})
        object.__setattr__(self, "_hash", None)

    # --- construction ------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        dims: Iterable[Interval | int | tuple[int, int]],
        results: Iterable[Expr | int],
        ranges: Iterable[Interval | tuple[int, int]] = (),
        rts: Iterable[RuntimeVar | Interval | tuple[int, int]] = (),
        constraints: Mapping[Expr, Interval] | Iterable[tuple[Expr, Interval | tuple[int, int]]]
        = (),
        names: Sequence[str | None] | None = None,
        *,
        check: bool = True,
        constant_divisors: bool | None = None,
    ) -> IndexingMap:
        """A map from its parts. A dimension given as an int ``n`` means ``[0, n - 1]``;
        constraints on the same expression are intersected; a constraint that is a
        constant is checked at once; any empty interval makes the map known empty.

        ``check=False`` skips the walk that checks every variable used is declared: for
        callers whose expressions use nothing else (the parser, which resolves every name
        against the declared ones; maps renamed from checked ones). Such a caller may say
        whether every divisor is a constant (``constant_divisors``), which that walk would
        otherwise have found."""
        dim_t = tuple([d if type(d) is Interval else _interval(d, size=True) for d in dims])
        range_t = tuple([r if type(r) is Interval else _interval(r) for r in ranges])
        rt_t = tuple([r if isinstance(r, RuntimeVar) else RuntimeVar(_interval(r))
                      for r in rts])
        result_t = tuple([r if isinstance(r, Expr) else as_expr(r) for r in results])
        pairs = constraints if isinstance(constraints, (list, tuple)) else \
            constraints.items() if isinstance(constraints, Mapping) else constraints
        merged: dict[Expr, Interval] = {}
        empty = False
        var_bounds: dict[int, Interval] = {}
        variables: Mapping[Symbol, int] | None = None  # made when a constraint needs it
        for expr, interval in pairs:
            if not isinstance(expr, Expr):
                expr = as_expr(expr)
            if type(interval) is not Interval:
                interval = _interval(interval)
            if expr.is_Symbol and variables is None:
                variables = _variables(len(dim_t), len(range_t), len(rt_t))
            if expr.is_Integer:
                empty |= int(expr) not in interval
            elif variables is not None and expr in variables:  # a bare variable: its interval
                i = variables[expr]
                var_bounds[i] = var_bounds[i].intersect(interval) if i in var_bounds \
                    else interval
            else:
                merged[expr] = merged[expr].intersect(interval) if expr in merged else interval
        if var_bounds:
            dim_t, range_t, rt_t = _narrow(dim_t, range_t, rt_t, var_bounds)
        name_t = _normal_names(names, len(dim_t) + len(range_t) + len(rt_t))
        built = cls(dim_t, result_t, range_t, rt_t, _sorted_constraints(merged), name_t)
        if check:
            constant_divisors = not built._check_variables()
        if constant_divisors is not None:
            built._cache["constant_divisors"] = constant_divisors
            if constant_divisors:
                built._cache["zeros"] = ()
        if empty or _any_empty(dim_t) or (range_t and _any_empty(range_t)) or (
                rt_t and _any_empty([r.bounds for r in rt_t])) or (
                merged and _any_empty(merged.values())):
            return built.as_known_empty()
        return built

    @classmethod
    def identity(cls, shape: Sequence[int]) -> IndexingMap:
        return cls.create(shape, [dim(i) for i in range(len(shape))])

    @classmethod
    def undefined(cls, num_dims: int = 0, num_results: int = 0) -> IndexingMap:
        """A map we know nothing about ("every element may be needed")."""
        return cls(tuple(Interval(0, 0) for _ in range(num_dims)),
                   tuple(Integer(0) for _ in range(num_results)), kind=MapKind.UNDEFINED)

    @classmethod
    def known_empty(cls, dims: Sequence[Interval] = (), results: Sequence[Expr] = ()
                    ) -> IndexingMap:
        """A map whose domain is empty: it reads nothing. ``dims`` and ``results`` only
        give its arity (they take no part in equality)."""
        return cls(tuple(dims), tuple(results), kind=MapKind.KNOWN_EMPTY)

    def as_known_empty(self) -> IndexingMap:
        """The map with the same arity and an empty domain."""
        return IndexingMap.known_empty(self.dims, self.results)

    def _check_variables(self) -> bool:
        """Every variable used is declared. (A divisor that is not a constant may be 0
        somewhere: those points are outside the map's definition, see
        :meth:`zero_divisors`.) Says whether some divisor is not a constant."""
        exprs = list(itertools.chain(self.results, (c for c, _ in self.constraints)))
        used, divides = scan(exprs)
        stray = used - set(self.all_vars)
        if stray:
            culprit = next(e for e in exprs if e.free_symbols & stray)
            raise MapError(f"expression {culprit} uses {sorted(map(str, stray))}, which the "
                           f"map does not declare")
        return divides

    def zero_divisors(self) -> list[tuple[Expr, Expr, Interval]]:
        """Each (division, divisor, the divisor's interval) where the divisor is not a
        constant and may be 0 where the variables lie in their intervals and the
        constraints hold (XLA accepts ``s0 floordiv s1`` with ``s1 in [0, 4]``). A
        division by 0 has no value: the points where a divisor is 0 are outside the map's
        definition, as if a constraint failed there (:meth:`evaluate` says so, the
        enumerations and :meth:`image` leave them out)."""
        got = self._cache.get("zeros")
        if got is None:
            got = self._cache["zeros"] = self._zero_divisors()
        return list(got)

    def _zero_divisors(self) -> tuple[tuple[Expr, Expr, Interval], ...]:
        if self.kind is not _NORMAL:
            return ()
        if self.divides_by_constants:
            return ()
        exprs = list(itertools.chain(self.results, (c for c, _ in self.constraints)))
        env, known = self.variable_bounds(), dict(self.constraints)
        found, seen = [], set()
        for e in exprs:
            for node in variable_divisions(e):
                divisor = node.args[1]
                if divisor in seen:
                    continue
                seen.add(divisor)
                span = constrained_bounds(divisor, env, known)
                if 0 in span:
                    found.append((node, divisor, span))
        return tuple(found)

    def with_divisors_nonzero(self) -> IndexingMap:
        """The same map (the same points defined, the same images) with "every divisor is
        nonzero" written as constraints: ``D in [1, hi]`` for a divisor ranging over
        ``[0, hi]``, ``D in [lo, -1]`` over ``[lo, 0]``, and ``max(D, -D) in [1, ...]``
        when it ranges on both sides of 0. A map whose divisors are nonzero already is
        returned as it is. The simplifier starts from this form, so that no rule can
        assume a divisor nonzero that is not."""
        zeros = self._cache.get("zeros")
        if zeros is None:
            zeros = self._cache["zeros"] = self._zero_divisors()
        if not zeros:
            return self
        added: list[Constraint] = []
        for _, divisor, span in zeros:
            if span.lo == 0:
                added.append((divisor, Interval(1, span.hi)))
            elif span.hi == 0:
                added.append((divisor, Interval(span.lo, -1)))
            else:
                added.append((Max(divisor, -divisor), Interval(1, max(-span.lo, span.hi))))
        return self.replace(constraints=self.constraints + tuple(added))

    # --- identity ----------------------------------------------------------------------
    @property
    def divides_by_constants(self) -> bool:
        """Is every divisor in the map's expressions a constant? Known without a walk for
        a map made by :meth:`create` with its checks (which walk the expressions once) and
        for a composition of two such maps (:func:`compose_with` says so)."""
        got = self._cache.get("constant_divisors")
        if got is None:
            got = self._cache["constant_divisors"] = not scan(list(itertools.chain(
                self.results, (c for c, _ in self.constraints))))[1]
        return got

    @property
    def key(self) -> tuple[Any, ...]:
        """The canonical form that equality and hashing use (names excluded)."""
        cached = self._cache.get("key")
        if cached is None:
            if self.kind is not _NORMAL:  # "KNOWN EMPTY" / "UNDEFINED": no arity
                cached = (self.kind,)
            else:
                cached = (self.dims, self.results, self.ranges, self.rts,
                          frozenset(self.constraints))
            self._cache["key"] = cached
        return cached

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IndexingMap):
            return NotImplemented
        if self is other:
            return True
        if (self.kind is _NORMAL and other.kind is _NORMAL and self._hash is None
                and (self.results != other.results or self.dims != other.dims)):
            return False  # told apart without hashing a map not hashed yet (a fresh one)
        return hash(self) == hash(other) and self.key == other.key

    def __hash__(self) -> int:
        cached = self._hash
        if cached is None:
            cached = hash(self.key)
            object.__setattr__(self, "_hash", cached)
        return cached

    # --- notebooks and JSON (map_dict, map_html, map_latex below) --------------------------------
    def _repr_html_(self) -> str:
        return map_html(self)

    def _repr_latex_(self) -> str:
        return map_latex(self)

    def to_dict(self) -> dict[str, Any]:
        """The map as a JSON-able dict: the map object of ``docs/json.md``."""
        return map_dict(self)

    def __str__(self) -> str:
        return print_map(self)

    def __repr__(self) -> str:
        return f"IndexingMap({print_map(self, style='xla')!r})"

    # --- variables ---------------------------------------------------------------------
    @property
    def is_known_empty(self) -> bool:
        return self.kind is _KNOWN_EMPTY

    @property
    def is_undefined(self) -> bool:
        return self.kind is _UNDEFINED

    @property
    def num_dims(self) -> int:
        return len(self.dims)

    @property
    def num_ranges(self) -> int:
        return len(self.ranges)

    @property
    def num_rts(self) -> int:
        return len(self.rts)

    @property
    def num_results(self) -> int:
        return len(self.results)

    @property
    def dim_vars(self) -> tuple[Symbol, ...]:
        return self.all_vars[:len(self.dims)]

    @property
    def range_vars(self) -> tuple[Symbol, ...]:
        nd = len(self.dims)
        return self.all_vars[nd:nd + len(self.ranges)]

    @property
    def rt_vars(self) -> tuple[Symbol, ...]:
        return self.all_vars[len(self.dims) + len(self.ranges):]

    @property
    def symbol_vars(self) -> tuple[Symbol, ...]:
        """Range variables then runtime variables: what is enumerated per source index."""
        return self.range_vars + self.rt_vars

    @property
    def all_vars(self) -> tuple[Symbol, ...]:
        got = self._cache.get("vars")
        if got is None:
            got = self._cache["vars"] = _all_vars(len(self.dims), len(self.ranges),
                                                  len(self.rts))
        return got

    @property
    def all_bounds(self) -> tuple[Interval, ...]:
        got = self._cache.get("bounds")
        if got is None:
            got = self._cache["bounds"] = (self.dims + self.ranges
                                           + tuple(r.bounds for r in self.rts))
        return got

    def variable_bounds(self) -> dict[Symbol, Interval]:
        return dict(zip(self.all_vars, self.all_bounds))

    def display_names(self) -> list[str]:
        """The name each variable prints as (custom names kept, unless they clash)."""
        default = ([f"d{i}" for i in range(self.num_dims)]
                   + [f"s{i}" for i in range(self.num_ranges)]
                   + [f"rt{i}" for i in range(self.num_rts)])
        if not self.names:
            return default
        chosen = [n or d for n, d in zip(self.names, default)]
        return chosen if len(set(chosen)) == len(chosen) else default

    # --- transformations -----------------------------------------------------------------
    def replace(self, **changes: Any) -> IndexingMap:
        """A copy with fields changed, re-canonicalised (like :meth:`create`)."""
        parts: dict[str, Any] = {
            "dims": self.dims, "results": self.results, "ranges": self.ranges,
            "rts": self.rts, "constraints": self.constraints, "names": self.names,
        }
        parts.update(changes)
        return IndexingMap.create(**parts)

    def with_constraint(self, expr: Expr | int, interval: Interval | tuple[int, int]
                        ) -> IndexingMap:
        return self.replace(constraints=self.constraints + ((as_expr(expr), _interval(interval)),))

    def substitute(self, mapping: Mapping[Symbol, Expr]) -> tuple[tuple[Expr, ...],
                                                                   tuple[Constraint, ...]]:
        """Results and constraints with variables replaced (simultaneously)."""
        done = substitute(list(self.results) + [c for c, _ in self.constraints], mapping)
        n = len(self.results)
        return tuple(done[:n]), tuple(zip(done[n:], (i for _, i in self.constraints)))

    # --- evaluation ----------------------------------------------------------------------
    def evaluate(self, dims: Sequence[int], symbols: Sequence[int] = (),
                 rts: Sequence[int] = ()) -> tuple[int, ...]:
        """The results at one point, ignoring the domain (as XLA's ``Evaluate``)."""
        self._require_defined()
        values = list(dims) + list(symbols) + list(rts)
        if len(values) != len(self.all_vars):
            raise MapError(f"the map has {self.num_dims} dims, {self.num_ranges} range and "
                           f"{self.num_rts} runtime variables; got {len(values)} values")
        try:
            return tuple(int(f(values)) for f in self._compiled_results)
        except ZeroDivisionError:
            raise MapError(f"division by zero at {tuple(values)}: a divisor is 0 there, so "
                           f"the map has no value (the point is outside its "
                           f"definition)") from None

    def constraints_hold(self, dims: Sequence[int], symbols: Sequence[int] = (),
                         rts: Sequence[int] = ()) -> bool:
        """Is the point in the map's domain: do the variable intervals and every
        constraint hold, and is every divisor nonzero?"""
        self._require_defined()
        values = list(dims) + list(symbols) + list(rts)
        if len(values) != len(self.all_vars):
            raise MapError("wrong number of values for this map's variables")
        if not all(v in b for v, b in zip(values, self.all_bounds)):
            return False
        try:
            if not all(int(f(values)) in interval for f, (_, interval)
                       in zip(self._compiled_constraints, self.constraints)):
                return False
            if self.zero_divisors():  # a result's divisor may be 0: outside the definition
                for f in self._compiled_results:
                    f(values)
            return True
        except ZeroDivisionError:  # a divisor is 0: the point is outside the definition
            return False

    def image(self, point: Sequence[int]) -> set[tuple[int, ...]]:
        """Every target of the source index ``point`` (empty outside the domain)."""
        self._require_defined()
        if self.is_known_empty:
            return set()
        if len(point) != self.num_dims:
            raise MapError(f"the map has {self.num_dims} dims, the point has {len(point)}")
        if not all(v in b for v, b in zip(point, self.dims)):
            return set()
        symbol_ranges = [range(b.lo, b.hi + 1) for b in self.all_bounds[self.num_dims:]]
        out = set()
        for values in itertools.product(*symbol_ranges):
            full = list(point) + list(values)
            try:
                if all(int(f(full)) in interval for f, (_, interval)
                       in zip(self._compiled_constraints, self.constraints)):
                    out.add(tuple(int(f(full)) for f in self._compiled_results))
            except ZeroDivisionError:  # a divisor is 0: outside the map's definition
                continue
        return out

    def evaluate_arrays(self, values: Sequence[Any]) -> tuple[list[Any], Any]:
        """Vectorised evaluation: ``values`` holds one broadcastable numpy integer array per
        variable (dims, range, runtime; int64, or of Python integers for huge values).
        Returns (results, mask) where ``mask`` says where every variable interval and
        constraint holds and every divisor is nonzero (where one is 0 the map has no
        value). The arithmetic is exact (:func:`symidx.core.expr.evaluate_exact`): int64 where
        every value on the way provably fits, Python integers elsewhere."""
        import numpy as np

        self._require_defined()
        if len(values) != len(self.all_vars):
            raise MapError("wrong number of value arrays for this map's variables")
        arrays = [int_array(v) for v in values]
        shape = np.broadcast_shapes(*(a.shape for a in arrays)) if arrays else ()
        mask = np.ones(shape, dtype=bool)
        for a, b in zip(arrays, self.all_bounds):
            mask &= (a >= b.lo) & (a <= b.hi)
        exprs = [*self.results, *(c for c, _ in self.constraints)]
        got, defined = evaluate_exact(exprs, self.all_vars, arrays)
        if defined is not None:
            mask &= defined
        for v, (_, interval) in zip(got[len(self.results):], self.constraints):
            mask &= (v >= interval.lo) & (v <= interval.hi)
        # a result that is a constant past int64 is a Python integer: int_array keeps it
        # one (np.asarray would make 2**63 a uint64, and a table of it a float64)
        results = [np.broadcast_to(int_array(r), shape) for r in got[:len(self.results)]]
        return results, mask

    def domain_size(self) -> int:
        """How many (dims, symbols) points the box of variable intervals holds."""
        size = 1
        for b in self.all_bounds:
            size *= b.size
        return size

    def points(self, limit: int = 10_000_000, chunk: int = 1 << 20
               ) -> Iterator[tuple[Any, ...]]:
        """The domain box (dims, range and runtime variables) as flat numpy coordinate
        arrays, in chunks of about ``chunk`` points (the first variable is split). A
        variable whose values do not all fit in int64 comes as an array of Python integers
        (as :meth:`evaluate_arrays` takes them)."""
        if self.domain_size() > limit:
            raise TooLargeError(f"domain of {self.domain_size()} points exceeds {limit}")
        yield from box_points(self.all_bounds, chunk)

    @property
    def _compiled_results(self) -> list[Any]:
        got = self._cache.get("results")
        if got is None:
            variables = self.all_vars
            got = self._cache["results"] = [compile_expr(r, variables) for r in self.results]
        return got

    @property
    def _compiled_constraints(self) -> list[Any]:
        got = self._cache.get("constraints")
        if got is None:
            variables = self.all_vars
            got = self._cache["constraints"] = [compile_expr(c, variables)
                                                for c, _ in self.constraints]
        return got

    def _require_defined(self) -> None:
        if self.is_undefined:
            raise MapError("the map is UNDEFINED: nothing is known about it")


# --- text ---------------------------------------------------------------------------------
def print_map(m: IndexingMap, style: str = "doc") -> str:
    """The map as text in one of :data:`~symidx.core.indexing_map.text.STYLES`: ``doc`` (the
    seeds' multi-line form, ``floordiv``), ``xla`` (one line, ``/``, as current XLA
    prints), ``mlir`` (``affine_map<...>`` and a ``domain:`` line). Constraints are sorted
    by their text, so equal maps print equal text whatever order they were built in."""
    expect_type(m, IndexingMap, "m", "print_map")
    Style.among(style, STYLES)
    if m.is_known_empty:
        return "KNOWN EMPTY"
    if m.is_undefined:
        return "UNDEFINED"
    names = m.display_names()
    if style == "mlir":
        names = _mlir_names(m, names)
    variables = m.all_vars
    table = dict(zip(variables, names))
    printer = ExprPrinter(table, style)
    if style == "mlir":
        _require_affine(m, printer)
    nd, nr = m.num_dims, m.num_ranges
    dims, ranges, rts = names[:nd], names[nd:nd + nr], names[nd + nr:]
    results = ", ".join(printer.top(r) for r in m.results)
    domain = [f"{n} in {_interval_text(b)}" for n, b in zip(names, m.all_bounds)]
    domain += sorted(f"{printer.top(c)} in {_interval_text(i)}" for c, i in m.constraints)
    if style == "mlir":
        symbols = f"[{', '.join(ranges + rts)}]" if ranges or rts else ""
        text = f"affine_map<({', '.join(dims)}){symbols} -> ({results})>"
        text += f"\ndomain: {', '.join(domain)}" if domain else ""
        return text + _provenance_text(m, rts, style)
    head = f"({', '.join(dims)})"
    if ranges:
        head += f"[{', '.join(ranges)}]"
    if rts:
        head += "{" + ", ".join(rts) + "}"
    head += f" -> ({results})"
    if style == "xla":
        text = head + (f", domain: {', '.join(domain)}" if domain else "")
    else:
        text = head + (",\ndomain:\n" + ",\n".join(domain) if domain else "")
    return text + _provenance_text(m, rts, style)


def _require_affine(m: IndexingMap, printer: ExprPrinter) -> None:
    """A :class:`MapError` naming the part of a result an MLIR ``affine_map`` cannot
    write (:mod:`symidx.core.indexing_map.affine`), if any: the style must not print a map that
    MLIR would refuse to read."""
    from symidx.core.indexing_map.affine import non_affine_reason

    found = non_affine_reason(m.results, frozenset(m.all_vars[:m.num_dims]),
                              m.variable_bounds())
    if found is not None:
        node, reason = found
        raise MapError(f"not an affine map, so the mlir style cannot print it: "
                       f"{printer.top(node)} is {reason} (the doc and xla styles print "
                       f"any map)")


def _interval_text(b: Interval) -> str:
    """``[lo, hi]``, as :class:`Interval` prints itself, for ends of any length."""
    return f"[{int_text(b.lo)}, {int_text(b.hi)}]"


def _map_line(m: IndexingMap) -> str:
    """A provenance map in one line, without sections of its own (as XLA prints them)."""
    return print_map(m, "xla").split("\nruntime variables:")[0]


def _provenance_text(m: IndexingMap, rt_names: list[str], style: str) -> str:
    lines = [f"{name}: {_source_text(v) or '?'}; "
             + (_map_line(v.map) if v.map else "UNDEFINED")
             for name, v in zip(rt_names, m.rts) if v.map is not None or _source_text(v)]
    if not lines:
        return ""
    return "\nruntime variables:\n" + "\n".join(lines)


def _source_text(v: RuntimeVar) -> str:
    """How ``v``'s source prints ("" when there is none)."""
    return "" if v.source is None else v.source.text


def _mlir_names(m: IndexingMap, names: list[str]) -> list[str]:
    """affine_map has no runtime-variable list: runtime symbols print as ``rtN``, which is
    how the parser tells them apart (no custom name can look like that)."""
    fixed = m.num_dims + m.num_ranges
    return names[:fixed] + [f"rt{k}" for k in range(m.num_rts)]


# --- helpers ------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4096)
def _all_vars(nd: int, nr: int, nt: int) -> tuple[Symbol, ...]:
    """The variables of a map with ``nd`` dims, ``nr`` range and ``nt`` runtime
    variables, in order."""
    return (tuple(dim(i) for i in range(nd)) + tuple(sym(i) for i in range(nr))
            + tuple(rt(i) for i in range(nt)))


def _variables(nd: int, nr: int, nt: int) -> Mapping[Symbol, int]:
    """Each variable of a map with ``nd`` dims, ``nr`` range and ``nt`` runtime variables,
    with its position (one read-only table per shape)."""
    return _positions(nd, nr, nt)


@functools.lru_cache(maxsize=4096)
def _positions(nd: int, nr: int, nt: int) -> Mapping[Symbol, int]:
    return MappingProxyType({v: i for i, v in enumerate(_all_vars(nd, nr, nt))})


def _narrow(dims: tuple[Interval, ...], ranges: tuple[Interval, ...],
            rts: tuple[RuntimeVar, ...], narrow: dict[int, Interval]
            ) -> tuple[tuple[Interval, ...], tuple[Interval, ...], tuple[RuntimeVar, ...]]:
    nd, nr = len(dims), len(ranges)
    new_dims = tuple(b.intersect(narrow[i]) if i in narrow else b for i, b in enumerate(dims))
    new_ranges = tuple(b.intersect(narrow[nd + i]) if nd + i in narrow else b
                       for i, b in enumerate(ranges))
    new_rts = tuple(replace(v, bounds=v.bounds.intersect(narrow[nd + nr + i]))
                    if nd + nr + i in narrow else v for i, v in enumerate(rts))
    return new_dims, new_ranges, new_rts


def _any_empty(intervals: Iterable[Interval]) -> bool:
    """Is one of the intervals empty?"""
    return any(b.lo > b.hi for b in intervals)


def _interval(value: Interval | int | tuple[int, int], size: bool = False) -> Interval:
    if isinstance(value, Interval):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Interval.of_size(value) if size else Interval.point(value)
    if isinstance(value, tuple) and len(value) == 2:
        return Interval(int(value[0]), int(value[1]))
    raise MapError(f"not an interval: {value!r}")


def _normal_names(names: Sequence[str | None] | None, count: int
                  ) -> tuple[str | None, ...] | None:
    if names is None:
        return None
    names = tuple(names)
    if len(names) != count:
        raise MapError(f"{len(names)} names given for {count} variables")
    return names if any(n is not None for n in names) else None


# --- notebooks and JSON ------------------------------------------------------------------
def map_dict(m: IndexingMap) -> dict[str, Any]:
    """The map as a JSON object: ``text`` (XLA's one-line form), ``dims``, ``symbols``,
    ``runtime`` (with each variable's ``source``), ``results``, ``constraints`` and
    ``special``."""
    names = m.display_names()
    env = dict(zip(m.all_vars, names))
    nd, nr = m.num_dims, m.num_ranges
    special = {MapKind.KNOWN_EMPTY: "known-empty", MapKind.UNDEFINED: "undefined"}.get(m.kind)
    return {
        "text": print_map(m, "xla"),
        "dims": [_var(names[i], b) for i, b in enumerate(m.dims)],
        "symbols": [_var(names[nd + i], b) for i, b in enumerate(m.ranges)],
        "runtime": [{**_var(names[nd + nr + i], v.bounds),
                     "source": {"instruction": _source_text(v) or None,
                                "map": None if v.map is None else print_map(v.map, "xla")}}
                    for i, v in enumerate(m.rts)],
        "results": [print_expr(r, env, "xla") for r in m.results] if special is None else [],
        # sorted by text, as printed maps are: the map's own order is by hash, which
        # PYTHONHASHSEED changes from one process to the next
        "constraints": sorted(({"expr": print_expr(e, env, "xla"), "lo": iv.lo, "hi": iv.hi}
                               for e, iv in m.constraints),
                              key=lambda c: (c["expr"], c["lo"], c["hi"])),
        "special": special,
    }


def _var(name: str, bounds: Any) -> dict[str, Any]:
    return {"name": name, "lo": bounds.lo, "hi": bounds.hi}


def map_html(m: IndexingMap) -> str:
    """The map's ``doc`` text in a ``<pre>`` block."""
    import html  # here: only a notebook asks

    return f"<pre>{html.escape(print_map(m, 'doc'))}</pre>"


def map_latex(m: IndexingMap) -> str:
    r"""``$(d_0, d_1) \mapsto (\ldots)$`` with the domain as a condition below it."""
    if m.is_known_empty or m.is_undefined:
        return f"$\\text{{{print_map(m)}}}$"
    names = m.display_names()
    symbol_names = {v: _latex_name(n) for v, n in zip(m.all_vars, names)}

    def tex(e: Any) -> str:
        return str(sympy.latex(e, symbol_names=symbol_names))

    nd, nr = m.num_dims, m.num_ranges
    head = f"\\left({', '.join(_latex_name(n) for n in names[:nd])}\\right)"
    if nr:
        head += f"\\left[{', '.join(_latex_name(n) for n in names[nd:nd + nr])}\\right]"
    if m.num_rts:
        head += f"\\left\\{{{', '.join(_latex_name(n) for n in names[nd + nr:])}\\right\\}}"
    results = ", ".join(tex(r) for r in m.results)
    domain = [f"{_latex_name(n)} \\in [{b.lo}, {b.hi}]" for n, b in zip(names, m.all_bounds)]
    domain += sorted(f"{tex(c)} \\in [{i.lo}, {i.hi}]" for c, i in m.constraints)
    body = f"{head} \\mapsto \\left({results}\\right)"
    if domain:
        separator = ",\\ "
        body = f"\\begin{{array}}{{l}}{body},\\\\ {separator.join(domain)}\\end{{array}}"
    return f"${body}$"


def _latex_name(name: str) -> str:
    """``d0`` as ``d_{0}``, ``rt1`` as ``rt_{1}``; other names in ``\\mathrm``."""
    head = name.rstrip("0123456789")
    tail = name[len(head):]
    if head and tail and head.isalpha():
        return f"{head}_{{{tail}}}"
    return f"\\mathrm{{{name.replace('_', chr(92) + '_')}}}"
