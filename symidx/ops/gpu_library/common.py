"""What the GPU library calls share: :class:`LibraryCall` (what each family's call
answers), reading an instruction's operands, outputs and ``backend_config``, the parts of
one map under construction (:class:`MapBuilder`), and :func:`invert`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sympy import Integer

from symidx.core.expr import Expr, dim, rt, substitute, sym
from symidx.core.indexing_map import IndexingMap, RuntimeVar
from symidx.core.interval import Interval
from symidx.hlo import HloInstruction, Shape
from symidx.hlo.leaves import leaves
from symidx.lowering.values import value_source

Groups = list[list[IndexingMap]]
Dims = tuple[int, ...]


class LibraryCall:
    """A recognised library call: per output leaf, the maps to each operand
    (:meth:`reads`); per operand, the maps to each output leaf (:meth:`reached`); and per
    output leaf why its maps over-approximate (:meth:`reason`, None when exact)."""

    target: str

    def reads(self, output: int) -> Groups:
        raise NotImplementedError

    def reached(self, operand: int) -> Groups:
        raise NotImplementedError

    def reason(self, output: int | None, backward: bool = True) -> str | None:
        """Why the maps of output leaf ``output`` (None: any) over-approximate, output-to-
        input (``backward``) or input-to-output."""
        return None


def operand_dims(instr: HloInstruction, k: int) -> Dims:
    shape = instr.operands[k].shape
    assert isinstance(shape, Shape)
    return shape.dims


def output_leaves(instr: HloInstruction) -> list[Shape]:
    return list(leaves(instr.shape))


def backend_config(instr: HloInstruction, key: str) -> dict[str, Any]:
    """``backend_config`` JSON, the part under ``key`` when nested (newer XLA wraps it)."""
    config = instr.backend_config_json()
    if not isinstance(config, dict):
        return {}
    inner = config.get(key)
    return inner if isinstance(inner, dict) else config


def ints(values: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in values or ())


def is_workspace(shape: Shape) -> bool:
    return len(shape.dims) == 1 and shape.element_type in ("s8", "u8")


@dataclass
class MapBuilder:
    """The parts of one map under construction: range variables, runtime variables (with
    their provenance from the map's dims) and constraints."""

    source: Sequence[int | Interval]
    ranges: list[tuple[int, int]] = field(default_factory=list)
    rts: list[RuntimeVar] = field(default_factory=list)
    constraints: list[tuple[Expr, Interval]] = field(default_factory=list)

    def var(self, size: int) -> Expr:
        if size == 1:
            return Integer(0)
        self.ranges.append((0, size - 1))
        return sym(len(self.ranges) - 1)

    def runtime(self, bounds: Interval, instr: HloInstruction, element: Expr) -> Expr:
        self.rts.append(RuntimeVar(bounds, value_source(instr),
                                   IndexingMap.create(self.source, [element])))
        return rt(len(self.rts) - 1)

    def where(self, expr: Expr, lo: int, hi: int) -> None:
        self.constraints.append((expr, Interval(lo, hi)))

    def map(self, results: Sequence[Expr]) -> IndexingMap:
        return IndexingMap.create(self.source, results, self.ranges, self.rts,
                                  self.constraints)


def invert(m: IndexingMap, target: Sequence[int]) -> IndexingMap:
    """The relation of ``m`` read the other way: from an index of ``target`` (the array
    ``m`` points into) to every source index whose image holds it. ``m`` must have no
    runtime variables."""
    if m.num_rts:
        raise ValueError("cannot invert a map with runtime variables")
    n = m.num_dims
    mapping = {dim(i): sym(i) for i in range(n)}
    mapping.update({sym(k): sym(n + k) for k in range(m.num_ranges)})
    results = substitute(list(m.results), mapping)
    constraints = [(substitute([e], mapping)[0], iv) for e, iv in m.constraints]
    constraints += [(r - dim(k), Interval(0, 0)) for k, r in enumerate(results)]
    return IndexingMap.create(target, [sym(i) for i in range(n)],
                              list(m.dims) + list(m.ranges), constraints=constraints)
