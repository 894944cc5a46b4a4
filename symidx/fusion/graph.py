"""A computation as an indexing graph: a networkx MultiDiGraph with the maps on its edges.

Nodes are instruction names (node attribute ``instr``: the :class:`HloInstruction`); one
edge runs from each user to each operand it reads, keyed by the operand position (so
``multiply(x, x)`` has two). Edges point the way output-to-input maps go: the producers of
an instruction are its descendants. An edge's ``steps`` attribute holds the maps of that
step (:class:`symidx.fusion.steps.Step`), computed the first time a sweep crosses it and
kept: ``steps[("backward", output leaf)]`` and ``steps[("forward", operand leaf)]``, each a
list of steps. The networkx object is built when first asked for (sweeps walk the same
nodes and edges in topological order without loading networkx).

Sweeps (:mod:`symidx.fusion.sweep`) walk the graph in topological order; graph queries
(:meth:`IndexingGraph.between`) narrow a sweep to the instructions on some path.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING

from symidx.core.indexing_map import IndexingMap
from symidx.errors import SymidxError
from symidx.fusion.reached import Traced
from symidx.fusion.steps import PRODUCTS, Callee, Step, backward_steps, forward_steps
from symidx.fusion.values import Scope
from symidx.hlo import HloComputation, HloInstruction
from symidx.hlo.graph import topological_order
from symidx.hlo.moves import MOVES_ELEMENTS
from symidx.ops import output_to_input
from symidx.ops.elementwise import ELEMENTWISE_OPCODES

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["IndexingGraph"]


class IndexingGraph:
    """The indexing graph of ``comp`` (see the module docstring). ``callee`` analyses the
    computations its instructions call."""

    def __init__(self, comp: HloComputation, callee: Callee, scope: Scope | None = None,
                 intern: Callable[[IndexingMap], IndexingMap] | None = None) -> None:
        self.comp = comp
        self.callee = callee
        #: The one object kept for equal maps (an analysis's
        #: :meth:`~symidx.fusion.sweep.Memo.interned_map`): steps hold it, so that the
        #: memo of compositions finds a step's map by identity, not by comparing keys.
        self.intern = intern
        #: What the steps may learn of values outside ``comp`` (see
        #: :class:`symidx.fusion.values.Scope`): its caller, or the call that runs it.
        self.scope = scope if scope is not None else Scope(comp)
        #: Instructions with every operand before its users (ties in text order).
        self.order: list[HloInstruction] = topological_order(comp)
        self._backward: dict[tuple[str, int], list[Step]] = {}
        self._forward: dict[tuple[str, int, int], list[Step]] = {}
        self._rules: dict[tuple[str, int], list[list[IndexingMap]]] = {}
        # steps of instructions alike (see :meth:`_alike_steps`)
        self._alike: dict[tuple[Hashable, ...], list[Step]] = {}
        # Per edge (user, operand position): the steps crossed so far, by label. The
        # networkx graph's edges hold these very dicts.
        self._edges: dict[tuple[str, int], dict[tuple[str, int], list[Step]]] = {}
        self._graph: nx.MultiDiGraph | None = None

    @property
    def graph(self) -> nx.MultiDiGraph:
        """The networkx graph (built on first use; a sweep does not need networkx loaded,
        only the edges' steps, which the graph's ``steps`` attributes are)."""
        if self._graph is None:
            import networkx as nx

            graph = nx.MultiDiGraph(name=self.comp.name)
            for instr in self.comp.instructions:
                graph.add_node(instr.name, instr=instr)
            for instr in self.comp.instructions:
                for position, op in enumerate(instr.operands):
                    graph.add_edge(instr.name, op.name, key=position,
                                   steps=self._edges.setdefault((instr.name, position), {}))
            self._graph = graph
        return self._graph

    def backward(self, instr: HloInstruction, output: int) -> list[Step]:
        """The steps from output leaf ``output`` of ``instr`` to its operands' leaves."""
        key = (instr.name, output)
        steps = self._backward.get(key)
        if steps is None:
            steps = self._backward[key] = self._alike_steps(
                instr, ("backward", output),
                lambda: backward_steps(instr, output, self.callee, scope=self.scope))
            self._record(instr, steps, lambda s: ("backward", s.output))
        return steps

    def forward(self, instr: HloInstruction, position: int, leaf: int) -> list[Step]:
        """The steps from leaf ``leaf`` of operand ``position`` of ``instr`` to its
        outputs."""
        key = (instr.name, position, leaf)
        steps = self._forward.get(key)
        if steps is None:
            steps = self._forward[key] = self._alike_steps(
                instr, ("forward", position, leaf),
                lambda: forward_steps(instr, position, leaf, self.callee, scope=self.scope))
            self._record(instr, steps, lambda s: ("forward", s.leaf))
        return steps

    def _alike_steps(self, instr: HloInstruction, where: tuple[str | int, ...],
                     make: Callable[[], list[Step]]) -> list[Step]:
        """The steps ``make`` gives (interned), or those of an instruction alike (same
        opcode, shapes and attributes) when ``instr``'s op reads nothing else: a model's
        layers repeat the same elementwise ops, broadcasts and reshapes (7,442 instructions
        of gemma3's entry, 471 alike groups). ``instr`` is still checked on its own
        (:meth:`Callee.misfit`); steps that are labelled or carry runtime values are
        not shared. A graph without an ``intern`` keeps plain steps, each its own."""
        alike = None if self.intern is None else _alike_key(instr, self.callee.assume_finite)
        if alike is not None:
            found = self._alike.get(where + alike)
            if found is not None and self.callee.misfit(instr) is None:
                return found
        steps = self._interned(make())
        if alike is not None and _shareable(steps):
            self._alike[where + alike] = steps
        return steps

    def rule_maps(self, instr: HloInstruction, output: int = 0) -> list[list[IndexingMap]]:
        """Per operand of ``instr``, the maps of its op's own rule from output leaf
        ``output`` (:func:`symidx.ops.output_to_input`: runtime variables name the operands,
        nothing resolved), computed once: what a walk that composes its own maps per path
        (:func:`symidx.tiling.analysis.analyze`) reads at each instruction. Raises
        :class:`~symidx.errors.UnsupportedOpError` for an op without a rule."""
        key = (instr.name, output)
        found = self._rules.get(key)
        if found is None:
            found = self._rules[key] = output_to_input(instr, output)
        return found

    def reads(self, name: str) -> set[str]:
        """``name`` and every instruction it reads, directly or not (:meth:`producers`)."""
        return self.producers(name) | {self.node(name).name}

    def _interned(self, steps: list[Step]) -> list[Step]:
        """``steps`` with each map replaced by the one object :attr:`intern` keeps for it
        (the same steps without an ``intern``)."""
        intern = self.intern
        if intern is None:
            return steps
        found = []
        for s in steps:
            kept = [intern(t.map) for t in s.maps]
            if any(k is not t.map for k, t in zip(kept, s.maps)):  # (``replace`` is slow)
                s = Step(s.output, s.position, s.leaf,
                         tuple(t if k is t.map else Traced(k, t.via, t.count)
                               for k, t in zip(kept, s.maps)), s.unsupported, s.opaque)
            found.append(s)
        return found

    def _record(self, instr: HloInstruction, steps: list[Step],
                label: Callable[[Step], tuple[str, int]]) -> None:
        for step in steps:
            edge = self._edges.setdefault((instr.name, step.position), {})
            edge.setdefault(label(step), []).append(step)

    def node(self, name: str) -> HloInstruction:
        """The instruction called ``name`` (a leading ``%`` is ignored)."""
        try:
            return self.comp.instruction(name)
        except KeyError:
            raise SymidxError(f"no instruction named {name.lstrip('%')!r} in computation "
                              f"{self.comp.name!r}") from None

    def producers(self, name: str) -> set[str]:
        """Every instruction ``name`` reads, directly or not."""
        import networkx as nx

        return set(nx.descendants(self.graph, self.node(name).name))

    def users(self, name: str) -> set[str]:
        """Every instruction that reads ``name``, directly or not."""
        import networkx as nx

        return set(nx.ancestors(self.graph, self.node(name).name))

    def between(self, source: str, target: str) -> set[str]:
        """The instructions on some path from ``source`` down to its producer ``target``
        (both included); empty when ``source`` does not read ``target``."""
        first, last = self.node(source).name, self.node(target).name
        if first == last:
            return {first}
        inner = self.producers(first) & self.users(last)
        if last not in self.producers(first):
            return set()
        return inner | {first, last}

    def subgraph(self, names: Iterable[str]) -> nx.MultiDiGraph:
        """A view of the graph on ``names``."""
        return self.graph.subgraph(names)


#: Ops whose steps follow from the opcode, the shapes (element types and layouts too) and
#: the attributes alone: no operand's values (a select's mask, a product's zeros under the
#: ``finite`` semantics: see :func:`_alike_key`), no called computation, no runtime value.
_ALIKE = (frozenset(ELEMENTWISE_OPCODES) - {"select", "map", "copy"}) | (
    MOVES_ELEMENTS - {"bitcast", "copy"}) | {"concatenate", "pad", "dot"}


def _alike_key(instr: HloInstruction, assume_finite: bool) -> tuple[Hashable, ...] | None:
    """What the steps of ``instr`` depend on, when that is its opcode, shapes and
    attributes (those of :data:`_ALIKE`; the source position in ``metadata`` aside);
    None otherwise."""
    if instr.opcode not in _ALIKE or assume_finite and instr.opcode in PRODUCTS:
        return None
    attributes = tuple(sorted(item for item in instr.attributes.items()
                              if item[0] != "metadata"))
    return (instr.opcode, instr.shape, tuple(op.shape for op in instr.operands), attributes)


def _shareable(steps: list[Step]) -> bool:
    """Do ``steps`` hold exact maps without runtime values (nothing that names an
    instruction)?"""
    return all(s.opaque is None and s.unsupported is None
               and all(t.via is None and not t.map.rts for t in s.maps) for s in steps)
