"""The module-level tables of opcode names in a source tree, read with ``ast`` (for the
architecture rule "one table per fact about opcodes", tests/test_architecture.py).

A table is a module-level assignment of a set, frozenset, tuple, list or dict literal (a
``dict.fromkeys((...), v)`` spread counts) whose string entries (a dict's keys) are mostly
opcode names. Two tables in different places that hold the same opcodes state one fact twice.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from itertools import combinations
from pathlib import Path

#: What share of a table's names must be opcodes for it to count as an opcode table.
SHARE = 0.8
#: Tables this small say too little to be compared ({"fusion"}).
SMALLEST = 2


def _strings(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant)
            and isinstance(n.value, str)}


def _names(value: ast.expr) -> set[str] | None:
    """The names a table literal holds, or None when ``value`` is no table literal."""
    if isinstance(value, ast.Dict):
        names: set[str] = set()
        for key, item in zip(value.keys, value.values, strict=True):
            if key is None:  # **dict.fromkeys((...), v)
                if isinstance(item, ast.Call) and item.args:
                    names |= _strings(item.args[0])
            elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                names.add(key.value)
        return names
    if isinstance(value, (ast.Set, ast.Tuple, ast.List)):
        return _strings(value)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
            and value.func.id in ("frozenset", "set") and value.args:
        return _strings(value.args[0])
    return None


def opcode_tables(root: Path, opcodes: Iterable[str],
                  trees: Mapping[str, ast.Module] | None = None) -> dict[str, frozenset[str]]:
    """``path:NAME`` -> opcodes, for every opcode table at module level under ``root``.
    ``trees``: the files already parsed, by path from ``root``'s parent (``pkg/mod.py``)."""
    known = set(opcodes)
    tables: dict[str, frozenset[str]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        tree = trees[rel] if trees is not None and rel in trees else \
            ast.parse(path.read_text(), str(path))
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target, value = stmt.targets[0], stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                target, value = stmt.target, stmt.value
            else:
                continue
            names = _names(value) if isinstance(target, ast.Name) else None
            if names and len(names) >= SMALLEST and \
                    len(names & known) >= SHARE * len(names):
                where = f"{path.relative_to(root.parent).as_posix()}:{target.id}"  # type: ignore[union-attr]
                tables[where] = frozenset(names)
    return tables


def repeated(tables: dict[str, frozenset[str]]) -> list[tuple[str, str]]:
    """The pairs of tables, in different modules, that hold the same opcodes."""
    return [(a, b) for a, b in combinations(sorted(tables), 2)
            if tables[a] == tables[b] and a.split(":")[0] != b.split(":")[0]]
