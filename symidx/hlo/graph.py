"""Computations as networkx graphs, and the fusions of a module.

:func:`computation_graph` gives a :class:`networkx.DiGraph` whose nodes are instruction
names (node attribute ``instr``: the :class:`HloInstruction`) and whose edges run from an
operand to its user. An instruction may use the same operand more than once
(``multiply(x, x)``); a DiGraph keeps one edge per pair, so each edge carries

* ``operand_indices``: every operand position of the user that the source fills, ascending;
* ``operand_index``: the first of them (the common, single-use case).

Only data dependencies are edges; ``control-predecessors`` are not.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from symidx.hlo.ir import HloComputation, HloInstruction, HloModule

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "computation_graph",
    "fusion_instructions",
    "topological_order",
    "users",
]


def computation_graph(comp: HloComputation) -> nx.DiGraph:
    """The data-flow graph of ``comp`` (see the module docstring for its attributes)."""
    import networkx as nx
    graph = nx.DiGraph(name=comp.name)
    for instr in comp.instructions:
        graph.add_node(instr.name, instr=instr)
    for instr in comp.instructions:
        for index, operand in enumerate(instr.operands):
            if graph.has_edge(operand.name, instr.name):
                graph.edges[operand.name, instr.name]["operand_indices"] += (index,)
            else:
                graph.add_edge(operand.name, instr.name, operand_index=index,
                               operand_indices=(index,))
    return graph


def topological_order(comp: HloComputation) -> list[HloInstruction]:
    """Instructions with every operand before its users; ties keep text order, so the result
    is deterministic (and is the text order when the text defines operands first): among
    the instructions whose operands are all placed, the earliest in the text comes next
    (networkx's ``lexicographical_topological_sort`` keyed by text position, written out
    so that analysing a module does not wait for networkx to load)."""
    instructions = comp.instructions
    position = {id(instr): i for i, instr in enumerate(instructions)}
    waiting = [len({id(op) for op in instr.operands}) for instr in instructions]
    users: list[list[int]] = [[] for _ in instructions]
    for i, instr in enumerate(instructions):
        for key in {id(op) for op in instr.operands}:
            users[position[key]].append(i)
    ready = [i for i, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    order: list[HloInstruction] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(instructions[i])
        for user in users[i]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, user)
    if len(order) != len(instructions):
        raise ValueError(f"computation {comp.name!r} has a cycle")
    return order


def users(comp: HloComputation, name: str) -> list[HloInstruction]:
    """The instructions of ``comp`` that use instruction ``name`` as an operand, each once,
    in text order. KeyError if ``comp`` has no instruction ``name``."""
    target = comp.instruction(name)
    return [instr for instr in comp.instructions
            if any(operand is target for operand in instr.operands)]


def fusion_instructions(module: HloModule) -> list[HloInstruction]:
    """Every fusion instruction of the module, computation by computation in text order."""
    return [instr for comp in module.computations.values() for instr in comp.instructions
            if instr.opcode == "fusion"]
