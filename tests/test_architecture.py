"""The house rules of symidx's imports (docs/architecture.md), read from the source:

* every module stands on a floor, and imports only modules on its own floor or lower;
* no import cycle between modules (the lazy façade ``symidx/__init__.py`` aside);
* no module imports another package's private module (``symidx.ops._common`` from fusion);
* no module is longer than :data:`MAX_LINES` lines (a longer one is split along a seam).

Imports inside functions and under ``if TYPE_CHECKING:`` count. Run on their own with
``python -m pytest tests/test_architecture.py``. The checker itself is tested on small module
trees, so that each rule can fail.
"""

from __future__ import annotations

from pathlib import Path

import import_graph as ig
import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
FAÇADE = "symidx"

#: The floors, lowest first. A package's floor holds all of its modules.
FLOORS: dict[str, int] = {
    "symidx.errors": 0, "symidx._gc": 0, "symidx._arith": 0, "symidx._text": 0,
    "symidx.interval": 1,
    "symidx.expr": 2,
    "symidx.indexing_map": 3,
    "symidx.syntax": 4,
    "symidx.simplify": 5,
    "symidx.verify": 6, "symidx.pointsets": 6,
    "symidx.hlo": 7, "symidx.layout": 7,
    "symidx.ops": 8,
    "symidx.fusion": 9,
    "symidx.layout.coalescing": 10, "symidx.analysis": 10, "symidx.jax_support": 10,
    "symidx.bench": 10, "symidx.strategies": 10, "symidx.corpus": 10, "symidx.tiling": 10,
    "symidx.cli": 11, "symidx.__main__": 11,
}
WHERE = "FLOORS in tests/test_architecture.py (and the table in docs/architecture.md)"

#: The most lines a module under symidx/ may have.
MAX_LINES = 900


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    return ig.import_graph(ROOT, "symidx")


def _report(problems: list[str]) -> str:
    return f"{len(problems)} violation(s):\n" + "\n".join(problems)


def test_every_module_has_a_floor(graph: nx.DiGraph) -> None:
    problems = ig.unassigned(graph, FLOORS, FAÇADE, WHERE)
    assert not problems, _report(problems)


def test_no_upward_import(graph: nx.DiGraph) -> None:
    problems = ig.upward(graph, FLOORS, FAÇADE)
    assert not problems, _report(problems)


def test_no_import_cycle(graph: nx.DiGraph) -> None:
    problems = ig.cycles(graph, FAÇADE)
    assert not problems, _report(problems)


def test_no_private_module_of_another_package(graph: nx.DiGraph) -> None:
    problems = ig.private(graph, FAÇADE)
    assert not problems, _report(problems)


def long_modules(root: Path, limit: int) -> list[str]:
    """A message per ``.py`` file below ``root`` with more than ``limit`` lines."""
    found = []
    for path in sorted(root.rglob("*.py")):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > limit:
            found.append(f"{path.relative_to(root.parent)}: {n} lines (at most {limit})")
    return found


def test_no_module_over_the_line_limit() -> None:
    problems = long_modules(ROOT / "symidx", MAX_LINES)
    assert not problems, _report(problems)


def test_the_graph_sees_the_package(graph: nx.DiGraph) -> None:
    """A guard against a checker that reads nothing: known modules and known imports."""
    assert {"symidx.expr", "symidx.hlo.parser", "symidx.ops", "symidx.cli"} <= set(graph)
    assert graph.has_edge("symidx.indexing_map.map", "symidx.interval")
    assert graph.has_edge("symidx.cli.maps", "symidx.hlo")


# --- the checker, on small trees -------------------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> nx.DiGraph:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return ig.import_graph(tmp_path, "pkg")


TINY_FLOORS = {"pkg.low": 0, "pkg.mid": 1, "pkg.high": 2}


def test_checker_finds_a_cycle_through_a_function_level_import(tmp_path: Path) -> None:
    g = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "def f():\n    from pkg import mid\n    return mid\n",
        "pkg/mid.py": "from pkg.low import f\n",
    })
    (problem,) = ig.cycles(g, "pkg")
    assert "pkg.low, pkg.mid" in problem
    assert "pkg/low.py:2: pkg.low imports pkg.mid" in problem
    assert "pkg/mid.py:1: pkg.mid imports pkg.low" in problem
    assert ig.upward(g, TINY_FLOORS, "pkg") == [
        "pkg/low.py:2: pkg.low imports pkg.mid (floor 0 imports floor 1)"]


def test_checker_finds_an_upward_import_under_type_checking(tmp_path: Path) -> None:
    g = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "",
        "pkg/mid.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                       "    from pkg.high.deep import X\n"),
        "pkg/high/__init__.py": "",
        "pkg/high/deep.py": "from ..mid import *\nfrom .. import low\n",
    })
    assert ig.upward(g, TINY_FLOORS, "pkg") == [
        "pkg/mid.py:3: pkg.mid imports pkg.high.deep (floor 1 imports floor 2)"]
    assert ig.cycles(g, "pkg")  # relative imports resolved: high.deep -> mid -> high.deep
    assert g.has_edge("pkg.high.deep", "pkg.low")  # `from .. import low` is the submodule


def test_checker_finds_a_private_module_of_another_package(tmp_path: Path) -> None:
    g = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/_util.py": "",
        "pkg/mid/__init__.py": "from . import _impl\n",
        "pkg/mid/_impl.py": "import pkg._util\n",
        "pkg/high.py": "import pkg.mid._impl\nfrom pkg.mid import _impl as again\n",
    })
    assert ig.private(g, "pkg") == [
        "pkg/high.py:1: pkg.high imports pkg.mid._impl, a private module of pkg.mid",
        "pkg/high.py:2: pkg.high imports pkg.mid._impl, a private module of pkg.mid"]


def test_checker_names_a_module_without_a_floor(tmp_path: Path) -> None:
    g = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/low.py": "", "pkg/new.py": "",
                         "pkg/mid/__init__.py": "", "pkg/mid/any.py": ""})
    assert ig.unassigned(g, TINY_FLOORS, "pkg", "FLOORS") == ["pkg.new has no floor: add it "
                                                              "to FLOORS"]


def test_checker_exempts_the_facade_and_keeps_init_apart(tmp_path: Path) -> None:
    """The façade may import anything and be imported; a package's ``__init__`` importing
    its submodule is no cycle unless the submodule imports the ``__init__`` back."""
    g = _tree(tmp_path, {
        "pkg/__init__.py": "from pkg.high import x\n",
        "pkg/low.py": "from pkg import __version__\n",
        "pkg/mid/__init__.py": "from pkg.mid.a import y\n",
        "pkg/mid/a.py": "from pkg.mid.b import z\n",
        "pkg/mid/b.py": "",
        "pkg/high.py": "",
    })
    assert ig.cycles(g, "pkg") == []
    assert ig.upward(g, TINY_FLOORS, "pkg") == []


def test_checker_finds_a_submodule_importing_its_package_init(tmp_path: Path) -> None:
    g = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/mid/__init__.py": "REGISTRY = {}\nfrom pkg.mid import a\n",
        "pkg/mid/a.py": "from pkg.mid import REGISTRY\n",
    })
    (problem,) = ig.cycles(g, "pkg")
    assert "pkg/mid/__init__.py:2: pkg.mid imports pkg.mid.a" in problem
    assert "pkg/mid/a.py:1: pkg.mid.a imports pkg.mid" in problem


def test_checker_finds_a_long_module(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "short.py").write_text("x = 1\n" * 3)
    (tmp_path / "pkg" / "sub" / "long.py").write_text("x = 1\n" * 4)
    assert long_modules(tmp_path / "pkg", 3) == ["pkg/sub/long.py: 4 lines (at most 3)"]
    assert long_modules(tmp_path / "pkg", 4) == []
