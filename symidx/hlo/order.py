"""Orders and cycles of the two graphs a module holds -- computations calling computations,
instructions using instructions -- and fresh names; iterative and linear, for the parser
(networkx is not needed to read a module).
"""

from __future__ import annotations

from symidx.hlo.ir import HloInstruction

__all__ = ["callees_first", "find_cycle", "operands_first", "unique_name"]


def unique_name(base: str, taken: set[str]) -> str:
    """``base``, or ``base.1``, ``base.2``, ... -- the first not in ``taken``, which it joins."""
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}.{k}"
    taken.add(name)
    return name


def find_cycle(nodes: list[str], edges: dict[str, list[str]]) -> str | None:
    """A node on a cycle of ``edges`` (node -> nodes it depends on), or None. Kahn's
    algorithm: iterative, linear."""
    pending = {node: 0 for node in nodes}
    users: dict[str, list[str]] = {node: [] for node in nodes}
    for node in nodes:
        for dep in edges.get(node, []):
            pending[node] += 1
            users[dep].append(node)
    ready = [node for node, count in pending.items() if count == 0]
    done = 0
    while ready:
        node = ready.pop()
        done += 1
        for user in users[node]:
            pending[user] -= 1
            if pending[user] == 0:
                ready.append(user)
    if done == len(nodes):
        return None
    # Every unfinished node waits on an unfinished dependency: walk those until one repeats.
    node = next(n for n in nodes if pending[n] > 0)
    seen: set[str] = set()
    while node not in seen:
        seen.add(node)
        node = next(dep for dep in edges[node] if pending[dep] > 0)
    return node


def callees_first(nodes: list[str], calls: dict[str, list[str]]) -> list[str]:
    """``nodes`` ordered so that every computation comes after the ones it calls (the call
    graph is acyclic); iterative depth-first post-order, text order among equals."""
    order: list[str] = []
    done: set[str] = set()
    for root in nodes:
        stack = [(root, iter(calls.get(root, ())))]
        if root in done:
            continue
        done.add(root)
        while stack:
            node, callees = stack[-1]
            callee = next((c for c in callees if c not in done), None)
            if callee is None:
                stack.pop()
                order.append(node)
            else:
                done.add(callee)
                stack.append((callee, iter(calls.get(callee, ()))))
    return order


def operands_first(instructions: list[HloInstruction]) -> list[HloInstruction]:
    """``instructions`` ordered so that every operand comes before its users (the graph is
    acyclic); iterative depth-first post-order."""
    order: list[HloInstruction] = []
    done: set[int] = set()
    for root in instructions:
        if id(root) in done:
            continue
        done.add(id(root))
        stack = [(root, iter(root.operands))]
        while stack:
            node, operands = stack[-1]
            operand = next((o for o in operands if id(o) not in done), None)
            if operand is None:
                stack.pop()
                order.append(node)
            else:
                done.add(id(operand))
                stack.append((operand, iter(operand.operands)))
    return order

