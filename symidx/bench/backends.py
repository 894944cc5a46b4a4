"""The engines a benchmark runs its operations on: symidx, islpy, MLIR's affine maps.

Each engine gets the same work. ``prepare`` (untimed, afresh for every sample) turns
freshly built maps into the engine's inputs: symidx gets :class:`IndexingMap` values (its
caches cleared), isl gets its objects read from the maps' text. Reading is parsing, on both
sides, and neither side's parse is timed; the timed operation starts from the parsed maps.
Or, for the cases timed from text, ``prepare_text`` gives each engine the maps as its own
text (symidx's, isl's), and the timed operation reads them (``read``) on both sides.

* **symidx**: :func:`compose`, :func:`simplify`, :func:`symidx.core.verify.equal` (without a
  deadline: isl then decides in this process, where its time is counted, not in the
  worker process a deadline needs).
* **islpy**: simplify = the map (read untimed) in explicit form where it is
  single-valued (as symidx's results are), ``gist`` by its own domain (keeping the
  domain, as symidx does), then ``coalesce``; compose = ``pullback`` of explicit piecewise
  affine forms (or ``apply_range`` of relations when a map is set-valued, turned back into
  explicit form where it is single-valued); equal = ``is_equal`` of the two relations
  (read untimed).
* **MLIR** (jaxlib's bindings): affine maps have no domain; compose, and
  ``simplify_affine_expr``; no equality on a domain.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from symidx.core.expr import CeilDiv, Expr, FloorDiv, Mod, clear_caches
from symidx.core.indexing_map import IndexingMap, print_map
from symidx.core.simplify import compose, simplify
from symidx.core.syntax import parse_map
from symidx.core.verify import equal, isl_text
from symidx.errors import SymidxError, Undecided

__all__ = ["NotExpressible", "Backend", "SymidxBackend", "IslBackend", "MlirBackend",
           "available_backends"]


class NotExpressible(SymidxError):
    """A backend cannot express these maps or this operation."""


class Backend:
    """One way of running the operations the cases time."""

    name = ""

    def prepare(self, build: Callable[[], Sequence[IndexingMap]]) -> list[Any]:
        """The backend's inputs for the maps ``build()`` returns (called untimed)."""
        raise NotImplementedError

    def prepare_text(self, build: Callable[[], Sequence[IndexingMap]]) -> list[str]:
        """The maps ``build()`` returns as the backend's own text (called untimed)."""
        raise NotExpressible(f"{self.name} reads no text")

    def read(self, text: str) -> Any:
        """A map from the text :meth:`prepare_text` gave (timed)."""
        raise NotExpressible(f"{self.name} reads no text")

    def compose(self, first: Any, second: Any) -> Any:
        """``second ∘ first``: first applied first."""
        raise NotExpressible(f"{self.name} cannot compose")

    def simplify(self, m: Any) -> Any:
        raise NotExpressible(f"{self.name} cannot simplify")

    def equal(self, a: Any, b: Any) -> bool:
        raise NotExpressible(f"{self.name} cannot decide equality on a domain")


class SymidxBackend(Backend):
    """symidx itself; ``method`` is how :func:`symidx.core.verify.equal` decides."""

    name = "symidx"

    def __init__(self, method: str = "auto"):
        self.method = method

    def prepare(self, build: Callable[[], Sequence[IndexingMap]]) -> list[Any]:
        clear_caches()
        return list(build())

    def prepare_text(self, build: Callable[[], Sequence[IndexingMap]]) -> list[str]:
        texts = [print_map(m, "xla") for m in build()]
        clear_caches()
        return texts

    def read(self, text: str) -> Any:
        return parse_map(text)

    def compose(self, first: Any, second: Any) -> Any:
        return compose(first, second)

    def simplify(self, m: Any) -> Any:
        return simplify(m)

    def equal(self, a: Any, b: Any) -> bool:
        return equal(a, b, timeout=math.inf, method=self.method)


@dataclass(frozen=True)
class IslInput:
    """A map as isl gets it: its text, and (read untimed, for compositions) its relation
    and, if single-valued, its explicit piecewise affine form."""

    text: str
    relation: Any
    explicit: Any | None


class IslBackend(Backend):
    """islpy: maps as integer relations (range and runtime variables existential)."""

    name = "islpy"

    def __init__(self, isl: Any):
        self.isl = isl

    def prepare(self, build: Callable[[], Sequence[IndexingMap]]) -> list[Any]:
        inputs = []
        for m in build():
            try:
                text = isl_text(m)
            except Undecided as e:
                raise NotExpressible(str(e)) from None
            relation = self.isl.Map(text)
            inputs.append(IslInput(text, relation, self._explicit(relation)))
        return inputs

    def prepare_text(self, build: Callable[[], Sequence[IndexingMap]]) -> list[str]:
        try:
            return [isl_text(m) for m in build()]
        except Undecided as e:
            raise NotExpressible(str(e)) from None

    def read(self, text: str) -> Any:
        return self.isl.Map(text)

    def _explicit(self, relation: Any) -> Any | None:
        """The explicit (piecewise multi-affine) form, or None for a set-valued map."""
        if not relation.is_single_valued():
            return None
        return self.isl.PwMultiAff.from_map(relation)

    def compose(self, first: Any, second: Any) -> Any:
        f, s = self._as_explicit(first), self._as_explicit(second)
        if f is not None and s is not None:
            return s.pullback_pw_multi_aff(f)
        joined = self._as_relation(first).apply_range(self._as_relation(second))
        explicit = self._explicit(joined)
        return joined if explicit is None else explicit

    def simplify(self, m: Any) -> Any:
        if isinstance(m, IslInput):  # read (untimed) in prepare, like symidx's map; the
            # explicit form, which symidx's results are, is part of the timed work
            explicit = self._explicit(m.relation)
            m = m.relation if explicit is None else explicit
        domain = m.domain()  # gist drops what the domain implies; the domain is kept
        if isinstance(m, self.isl.PwMultiAff):
            return m.gist(domain).intersect_domain(domain).coalesce()
        return m.gist_domain(domain).intersect_domain(domain).coalesce()

    def equal(self, a: Any, b: Any) -> bool:
        return bool(self._as_relation(a).is_equal(self._as_relation(b)))

    def _as_explicit(self, m: Any) -> Any | None:
        if isinstance(m, IslInput):
            return m.explicit
        return m if isinstance(m, self.isl.PwMultiAff) else None

    def _as_relation(self, m: Any) -> Any:
        if isinstance(m, IslInput):
            return m.relation
        return self.isl.Map.from_pw_multi_aff(m) if isinstance(m, self.isl.PwMultiAff) else m


class MlirBackend(Backend):
    """MLIR affine maps (jaxlib's bindings): results only, no domain, no range awareness."""

    name = "MLIR"

    def __init__(self, ir: Any):
        self.ir = ir
        self.context: Any = None

    def prepare(self, build: Callable[[], Sequence[IndexingMap]]) -> list[Any]:
        self.context = self.ir.Context()
        with self.context:
            return [self._affine_map(m) for m in build()]

    def _affine_map(self, m: IndexingMap) -> Any:
        if m.is_known_empty or m.is_undefined:
            raise NotExpressible("MLIR has no empty or undefined affine map")
        ir = self.ir
        num_symbols = m.num_ranges + m.num_rts
        leaves = {v: ir.AffineExpr.get_dim(i) if i < m.num_dims
                  else ir.AffineExpr.get_symbol(i - m.num_dims)
                  for i, v in enumerate(m.all_vars)}
        results = [self._affine_expr(e, leaves) for e in m.results]
        return ir.AffineMap.get(m.num_dims, num_symbols, results)

    def _affine_expr(self, e: Expr, leaves: dict[Any, Any]) -> Any:
        A = self.ir.AffineExpr
        if e.is_Integer:
            return A.get_constant(int(e))
        if e.is_Symbol:
            return leaves[e]
        args = [self._affine_expr(a, leaves) for a in e.args]
        if e.is_Add:
            return _fold(A.get_add, args)
        if e.is_Mul:
            return _fold(A.get_mul, args)
        builder = {FloorDiv: A.get_floor_div, CeilDiv: A.get_ceil_div, Mod: A.get_mod}.get(
            type(e))
        if builder is None or not e.args[1].is_Integer or int(e.args[1]) <= 0:
            raise NotExpressible(f"no affine form for {e}")
        return builder(*args)

    def compose(self, first: Any, second: Any) -> Any:
        with self.context:
            shifted = [r.shift_symbols(second.n_symbols, first.n_symbols).compose(first)
                       for r in second.results]
            return self.ir.AffineMap.get(first.n_dims, first.n_symbols + second.n_symbols,
                                         shifted)

    def simplify(self, m: Any) -> Any:
        with self.context:
            simplify_expr = self.ir.AffineExpr.simplify_affine_expr
            return self.ir.AffineMap.get(m.n_dims, m.n_symbols, [
                simplify_expr(r, m.n_dims, m.n_symbols) for r in m.results])


def _fold(op: Callable[[Any, Any], Any], args: list[Any]) -> Any:
    acc = args[0]
    for a in args[1:]:
        acc = op(acc, a)
    return acc


def available_backends(method: str = "auto") -> list[Backend]:
    """symidx, then islpy and MLIR where installed."""
    backends: list[Backend] = [SymidxBackend(method)]
    try:
        import islpy
    except ImportError:
        pass
    else:
        backends.append(IslBackend(islpy))
    try:
        from jaxlib.mlir import ir
    except ImportError:
        pass
    else:
        backends.append(MlirBackend(ir))
    return backends
