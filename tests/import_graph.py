"""The import graph of a package, read from its source with :mod:`ast`, and the house rules
checked on it: no import cycle, no import from a higher floor, no private module of another
package.

Every ``import`` statement counts wherever it sits: at module level, inside a function, under
``if TYPE_CHECKING:``. Relative imports are resolved; ``from pkg import name`` imports the
submodule ``pkg.name`` when there is one, else ``pkg``. A package's ``__init__`` and its
submodules are separate modules. Each check returns a list of messages that name the
offending import by file and line; an empty list means the rule holds.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import networkx as nx


@dataclass(frozen=True)
class Import:
    """``source`` imports ``target`` (both modules of the package) at ``file:line``."""

    source: str
    target: str
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.source} imports {self.target}"


def find_modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` (the folder ``root / package``) by dotted name; a
    package's ``__init__.py`` is the module named after the package."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _known_prefix(dotted: str, known: Iterable[str]) -> str | None:
    """The longest of ``known`` that is ``dotted`` or a package holding it; None when
    ``dotted`` is outside the package."""
    parts = dotted.split(".")
    names = set(known)
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in names:
            return ".".join(parts[:n])
    return None


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The dotted name ``from ... import`` reads from, relative levels resolved."""
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    base = parts[:len(parts) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def read_imports(module: str, path: Path, known: Mapping[str, Path], root: Path,
                 tree: ast.Module | None = None) -> list[Import]:
    """The imports of package modules that ``module`` (the file ``path``, parsed as
    ``tree`` when given) makes anywhere in its source, once per statement and target, in
    source order."""
    if tree is None:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    file = path.relative_to(root).as_posix()
    found = set()
    for node in ast.walk(tree):
        targets: list[str | None] = []
        if isinstance(node, ast.Import):
            targets = [_known_prefix(alias.name, known) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, path.name == "__init__.py")
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.append(sub if sub in known else _known_prefix(base, known))
        else:
            continue
        found |= {Import(module, t, file, node.lineno) for t in targets if t is not None}
    return sorted(found, key=lambda i: (i.line, i.target))


def import_graph(root: Path, package: str,
                 trees: Mapping[str, ast.Module] | None = None) -> nx.DiGraph:
    """Modules as nodes, an edge ``a -> b`` when ``a`` imports ``b`` (not itself), with the
    list of those imports in the edge's ``imports``. ``trees``: the files already parsed,
    by path from ``root`` (``pkg/sub/mod.py``), so that the tree is parsed once."""
    known = find_modules(root, package)
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for module, path in known.items():
        tree = None if trees is None else trees.get(path.relative_to(root).as_posix())
        for imp in read_imports(module, path, known, root, tree):
            if imp.target == module:
                continue
            if not graph.has_edge(module, imp.target):
                graph.add_edge(module, imp.target, imports=[])
            graph.edges[module, imp.target]["imports"].append(imp)
    return graph


def _imports(graph: nx.DiGraph, exempt: str) -> list[Import]:
    return [imp for a, b, data in graph.edges(data=True) if exempt not in (a, b)
            for imp in data["imports"]]


def floor_of(module: str, floors: Mapping[str, int]) -> int | None:
    """The floor of the most specific entry of ``floors`` that is ``module`` or a package
    holding it; None when there is none."""
    prefix = _known_prefix(module, floors)
    return None if prefix is None else floors[prefix]


def cycles(graph: nx.DiGraph, exempt: str) -> list[str]:
    """Per tangle (a strongly connected set of modules, ``exempt`` left out): its modules
    and one cycle through them, import by import."""
    core = graph.subgraph(n for n in graph if n != exempt)
    found = []
    for tangle in sorted(sorted(c) for c in nx.strongly_connected_components(core)
                          if len(c) > 1):
        cycle = nx.find_cycle(core.subgraph(tangle), source=tangle[0])
        steps = "\n".join(f"    {core.edges[a, b]['imports'][0]}" for a, b in cycle)
        found.append(f"import cycle among {', '.join(tangle)}:\n{steps}")
    return found


def unassigned(graph: nx.DiGraph, floors: Mapping[str, int], exempt: str,
               where: str) -> list[str]:
    """A message per module (but ``exempt``) with no floor."""
    return [f"{module} has no floor: add it to {where}" for module in sorted(graph)
            if module != exempt and floor_of(module, floors) is None]


def upward(graph: nx.DiGraph, floors: Mapping[str, int], exempt: str) -> list[str]:
    """A message per import of a module on a higher floor than the importer's."""
    found = []
    for imp in _imports(graph, exempt):
        mine, theirs = floor_of(imp.source, floors), floor_of(imp.target, floors)
        if mine is not None and theirs is not None and theirs > mine:
            found.append(f"{imp} (floor {mine} imports floor {theirs})")
    return found


def _private_owner(module: str) -> str | None:
    """The package a private module (a name part ``_x``, not ``__x__``) belongs to."""
    parts = module.split(".")
    for k, part in enumerate(parts):
        if part.startswith("_") and not part.endswith("__"):
            return ".".join(parts[:k])
    return None


def private(graph: nx.DiGraph, exempt: str) -> list[str]:
    """A message per import of a private module from outside the package that owns it."""
    found = []
    for imp in _imports(graph, exempt):
        owner = _private_owner(imp.target)
        if owner is not None and imp.source != owner \
                and not imp.source.startswith(owner + "."):
            found.append(f"{imp}, a private module of {owner}")
    return found


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def apart(graph: nx.DiGraph, pairs: Iterable[tuple[str, str]], exempt: str) -> list[str]:
    """A message per import of a module of package ``b`` by a module of package ``a``, for
    each ``(a, b)`` in ``pairs``: packages kept apart whatever their floors."""
    return [f"{imp} ({a} does not import {b})" for imp in _imports(graph, exempt)
            for a, b in pairs if _within(imp.source, a) and _within(imp.target, b)]
