"""The house rules of symidx's imports (docs/architecture.md), read from the source:

* every module stands on a floor, and imports only modules on its own floor or lower;
* no import cycle between modules (the lazy façade ``symidx/__init__.py`` aside);
* no module imports another package's private module (``symidx.ops._common`` from fusion);
* no module is longer than :data:`MAX_LINES` lines (a longer one is split along a seam);
* no module reads or writes a private attribute (``x._name``) that a class of another
  package defines (the owner gives a public method or property instead).

Imports inside functions and under ``if TYPE_CHECKING:`` count. Run on their own with
``python -m pytest tests/test_architecture.py``. The checker itself is tested on small module
trees, so that each rule can fail.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import import_graph as ig
import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
FAÇADE = "symidx"

#: The floors, lowest first. A package's floor holds all of its modules.
FLOORS: dict[str, int] = {
    "symidx.errors": 0, "symidx._gc": 0, "symidx._arith": 0, "symidx._text": 0,
    "symidx._display": 0, "symidx._budget": 0,
    "symidx.hlo": 1,
    "symidx.core": 2, "symidx.core.interval": 2,
    "symidx.core.expr": 3,
    "symidx.core.indexing_map": 4,
    "symidx.core.syntax": 5,
    "symidx.core.simplify": 6,
    "symidx.core.verify": 7, "symidx.core.pointsets": 7,
    "symidx.lowering": 8,
    "symidx.ops": 9, "symidx.layout": 9,
    "symidx.fusion": 10,
    "symidx.analysis": 11, "symidx.jax_support": 11, "symidx.pallas": 11,
    "symidx.bench": 11, "symidx.strategies": 11, "symidx.corpus": 11, "symidx.tiling": 11,
    "symidx.cost": 12,
    "symidx.cli": 13, "symidx.__main__": 13,
}
WHERE = ("FLOORS in tests/test_architecture.py (then python docs/gen_api.py writes the "
         "table in docs/architecture.md)")

#: Packages that import nothing of each other, whatever their floors: the op rules read the
#: XLA layouts of HLO shapes from the lowering floor (``symidx.lowering.layouts``, which a
#: bitcast needs), never the layouts library, and the layouts library needs no op rule.
APART = (("symidx.ops", "symidx.layout"), ("symidx.layout", "symidx.ops"))

#: The map core: what a map is and what is done with one (its text, its simplification,
#: its comparison, its image), knowing nothing of HLO.
#: One folder, ``symidx/core/``: the rules below name the package, so a module added to the
#: core is held to them without a list to keep.
MAP_CORE = ("symidx.core",)
#: The HLO front end (the module text read, facts about instructions, values folded before
#: the run), which knows nothing of maps; and the floor that turns HLO into maps (the
#: resolver of runtime values, XLA's layouts as maps), between the two and below their users.
FRONT_END, LOWERING = "symidx.hlo", "symidx.lowering"
MAP_USERS = ("symidx.ops", "symidx.layout", "symidx.fusion")

#: The most lines a module under symidx/ may have (issue 38).
MAX_LINES = 800


@functools.cache
def _python_files(root: Path, package: str) -> dict[str, ast.Module]:
    """Every file of ``package`` (the folder ``root / package``) parsed, by path from
    ``root``: parsed once per run, for all the rules (parsing the tree is most of their
    cost)."""
    return {p.relative_to(root).as_posix(): ast.parse(p.read_text(), str(p))
            for p in sorted((root / package).rglob("*.py"))}


_WALKED: dict[int, tuple[ast.AST, list[ast.AST]]] = {}


def _nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` in ``ast.walk``'s order, walked once per tree (the tree is
    kept with its nodes, so that its ``id`` is not reused)."""
    if id(tree) not in _WALKED:
        _WALKED[id(tree)] = (tree, list(ast.walk(tree)))
    return _WALKED[id(tree)][1]


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    return ig.import_graph(ROOT, "symidx", _python_files(ROOT, "symidx"))


def _report(problems: list[str]) -> str:
    return f"{len(problems)} violation(s):\n" + "\n".join(problems)


def test_every_module_has_a_floor(graph: nx.DiGraph) -> None:
    problems = ig.unassigned(graph, FLOORS, FAÇADE, WHERE)
    assert not problems, _report(problems)


def test_no_upward_import(graph: nx.DiGraph) -> None:
    problems = ig.upward(graph, FLOORS, FAÇADE)
    assert not problems, _report(problems)


def test_ops_and_layout_are_apart(graph: nx.DiGraph) -> None:
    problems = ig.apart(graph, APART, FAÇADE)
    assert not problems, _report(problems)


def imports_between(graph: nx.DiGraph, importers: tuple[str, ...],
                    imported: tuple[str, ...], exempt: str) -> list[str]:
    """Each import by a module of one of the packages ``importers`` of a module of one of
    the packages ``imported``, at any depth (inside a function and under
    ``if TYPE_CHECKING:`` too)."""
    return ig.apart(graph, [(a, b) for a in importers for b in imported], exempt)


def test_the_hlo_front_end_imports_nothing_of_the_map_core(graph: nx.DiGraph) -> None:
    problems = imports_between(graph, (FRONT_END,), MAP_CORE, FAÇADE)
    assert not problems, _report(problems)


def test_the_map_core_imports_nothing_of_hlo(graph: nx.DiGraph) -> None:
    problems = imports_between(graph, MAP_CORE, (FRONT_END, LOWERING), FAÇADE)
    assert not problems, _report(problems)


def misplaced_floors(floors: dict[str, int], stack: list[tuple[str, ...]]) -> list[str]:
    """Each module of ``stack`` (groups of packages, lowest first) with a floor not above
    every floor of the group below it (a package's floors are its own and those of the
    modules listed under it)."""
    def within(group: tuple[str, ...]) -> dict[str, int]:
        return {m: f for m, f in floors.items()
                if any(m == g or m.startswith(g + ".") for g in group)}

    problems = []
    for below, above in zip(stack, stack[1:]):
        top = max(within(below).values())
        problems += [f"{m} is on floor {f}, not above {', '.join(below)} (up to floor {top})"
                     for m, f in within(above).items() if f <= top]
    return problems


def test_the_floors_stack_front_end_core_lowering_users() -> None:
    """The HLO front end under the map core, the lowering floor above the core and under
    the op rules, the layouts and the fusion that use it."""
    problems = misplaced_floors(FLOORS, [(FRONT_END,), MAP_CORE, (LOWERING,), MAP_USERS])
    assert not problems, _report(problems)


def test_the_front_end_checks_can_fail(tmp_path: Path) -> None:
    g = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/hlo/__init__.py": "",
        "pkg/hlo/parser.py": "import pkg.errors\n",
        "pkg/hlo/values.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    from pkg.expr.nodes import Expr\n"
                              "def f():\n    from pkg import simplify\n"),
        "pkg/errors.py": "",
        "pkg/expr/__init__.py": "", "pkg/expr/nodes.py": "",
        "pkg/simplify.py": "from pkg.hlo import parser\n",
        "pkg/lowering.py": "from pkg.expr import nodes\nfrom pkg.hlo import parser\n",
    })
    assert imports_between(g, ("pkg.hlo",), ("pkg.expr", "pkg.simplify"), "pkg") == [
        "pkg/hlo/values.py:3: pkg.hlo.values imports pkg.expr.nodes (pkg.hlo does not import "
        "pkg.expr)",
        "pkg/hlo/values.py:5: pkg.hlo.values imports pkg.simplify (pkg.hlo does not import "
        "pkg.simplify)"]
    assert imports_between(g, ("pkg.expr", "pkg.simplify"), ("pkg.hlo",), "pkg") == [
        "pkg/simplify.py:1: pkg.simplify imports pkg.hlo.parser (pkg.simplify does not import "
        "pkg.hlo)"]
    floors = {"pkg.hlo": 2, "pkg.expr": 1, "pkg.simplify": 3, "pkg.lowering": 3}
    assert misplaced_floors(floors, [("pkg.hlo",), ("pkg.expr", "pkg.simplify"),
                                     ("pkg.lowering",)]) == [
        "pkg.expr is on floor 1, not above pkg.hlo (up to floor 2)",
        "pkg.lowering is on floor 3, not above pkg.expr, pkg.simplify (up to floor 3)"]
    nested = {"pkg.core": 1, "pkg.core.simplify": 4, "pkg.lowering": 3}
    assert misplaced_floors(nested, [("pkg.core",), ("pkg.lowering",)]) == [
        "pkg.lowering is on floor 3, not above pkg.core (up to floor 4)"]


def strangers_on_core_floors(floors: dict[str, int], core: str) -> list[str]:
    """Each module outside the package ``core`` on a floor from the core's lowest to its
    highest: the core's floors hold the core's folder and nothing else."""
    mine = [f for m, f in floors.items() if m == core or m.startswith(core + ".")]
    return [f"{m} (floor {f}) is not under {core} but on one of its floors"
            for m, f in floors.items()
            if min(mine) <= f <= max(mine) and not (m == core or m.startswith(core + "."))]


def test_the_map_core_is_one_folder() -> None:
    assert not strangers_on_core_floors(FLOORS, MAP_CORE[0])
    assert strangers_on_core_floors({"pkg.core": 2, "pkg.core.verify": 4, "pkg.pointsets": 3},
                                    "pkg.core") == [
        "pkg.pointsets (floor 3) is not under pkg.core but on one of its floors"]


def reexport_shims(files: dict[str, ast.Module]) -> list[str]:
    """Each module (a package's ``__init__.py`` aside) that defines nothing: its body is a
    docstring, imports and ``__all__``, a second address for another module's names.
    Importers import from the module that defines the names; a package's ``__init__`` may
    gather its modules' names under the package's."""
    def plumbing(node: ast.stmt) -> bool:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return True
        if isinstance(node, ast.Expr):
            return isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        return bool(targets) and all(isinstance(t, ast.Name) and t.id == "__all__"
                                     for t in targets)

    return [f"{path}: defines nothing, only re-exports (import from where the names are)"
            for path, tree in files.items()
            if not path.endswith("/__init__.py")
            and any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body)
            and all(plumbing(n) for n in tree.body)]


def test_no_module_only_re_exports() -> None:
    problems = reexport_shims(_python_files(ROOT, "symidx"))
    assert not problems, _report(problems)


def test_the_re_export_check_can_fail() -> None:
    trees = {path: ast.parse(text) for path, text in {
        "pkg/layout/xla.py": '"""Shim."""\nfrom pkg.hlo.xla import *\n'
                             'from pkg.hlo.xla import __all__\n',
        "pkg/layout/old.py": "from pkg.low import f as g\n__all__: list[str] = ['g']\n",
        "pkg/layout/__init__.py": "from pkg.hlo import xla\n__all__ = ['xla']\n",
        "pkg/layout/maps.py": "from pkg.hlo.maps import f\ndef g():\n    return f\n",
        "pkg/layout/empty.py": '"""Nothing yet."""\n',
    }.items()}
    assert reexport_shims(trees) == [
        "pkg/layout/xla.py: defines nothing, only re-exports (import from where the names are)",
        "pkg/layout/old.py: defines nothing, only re-exports (import from where the names are)"]


def test_the_layouts_library_gives_the_xla_layouts_under_its_name() -> None:
    """``from symidx.layout import xla, shapes`` (the documented spelling) gives the modules
    of the lowering floor, ``shapes`` loaded on first use; ``symidx.layout.maps`` keeps the
    XLA maps beside CuTe's."""
    import subprocess
    import sys

    probe = """
import sys
import symidx.layout as layout
print("symidx.lowering.layouts.shapes" in sys.modules, "symidx.core.simplify" in sys.modules)
from symidx.layout import shapes, xla
from symidx.layout.maps import xla_offset_map
from symidx.lowering.layouts import maps
print(xla.__name__, shapes.__name__, xla_offset_map is maps.xla_offset_map)
"""
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.splitlines()
    assert out == ["False False",
                   "symidx.lowering.layouts.xla symidx.lowering.layouts.shapes True"]


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
    assert {"symidx.core.expr", "symidx.hlo.parser", "symidx.ops", "symidx.cli"} <= set(graph)
    assert graph.has_edge("symidx.core.indexing_map.map", "symidx.core.interval")
    assert graph.has_edge("symidx.cli.maps", "symidx.hlo")


# --- the fusion floor: one dispatch, while in loops.py, no fake instructions ------------------


def test_the_fusion_dispatches_through_one_table() -> None:
    """The fusion's table of steps names exactly the opcodes ``HANDLED_BY_FUSION`` says it
    handles, and an opcode in it takes its steps from its entry (no dispatch around it)."""
    import inspect

    from symidx.fusion import loops, steps
    from symidx.hlo import parse_hlo
    from symidx.ops import HANDLED_BY_FUSION

    assert set(steps.STEPS) == HANDLED_BY_FUSION
    assert steps.handled_opcodes() == HANDLED_BY_FUSION
    assert inspect.unwrap(steps.STEPS["while"]) is loops.while_steps  # while whole in loops.py
    module = parse_hlo("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                       "  ROOT t = (f32[2], f32[2]) tuple(p, p)\n}\n")
    tuple_instr = module.entry.root
    marker = steps.Step(7, 7, 7)

    class Callee:
        assume_finite = False

        def misfit(self, instr: object) -> None:
            return None

    original = steps.STEPS["tuple"]
    try:
        steps.STEPS["tuple"] = lambda *args: [marker]
        assert steps.backward_steps(tuple_instr, 0, Callee()) == [marker]  # type: ignore[arg-type]
        assert steps.forward_steps(tuple_instr, 1, 0, Callee()) == [marker]  # type: ignore[arg-type]
    finally:
        steps.STEPS["tuple"] = original
    assert [s.position for s in steps.backward_steps(tuple_instr, 1, Callee())] == [1]  # type: ignore[arg-type]


def _functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in _nodes(tree) if isinstance(n, ast.FunctionDef)]


def test_loops_live_in_loops_py() -> None:
    """Neither half of ``while`` is written in steps.py (the exact and the inexact one are in
    symidx/fusion/loops.py)."""
    tree = _python_files(ROOT, "symidx")["symidx/fusion/steps.py"]
    found = [f"steps.py:{f.lineno}: {f.name}" for f in _functions(tree)
             if "while" in f.name or "loop" in f.name]
    assert not found, _report(found)


#: The fields of an HloInstruction that make a different instruction when replaced (a
#: record's ``name``, ``shape`` or ``line`` are common field names, left out).
_INSTRUCTION_FIELDS = frozenset({
    "opcode", "operands", "attributes", "parameter_number", "literal_text", "literal",
    "called_computations", "tuple_index", "dimensions", "is_root"})

def _fakes(root: Path, package: str) -> dict[tuple[str, str], list[str]]:
    """Per (file, enclosing function): each construction of an ``HloInstruction``, and each
    ``replace(...)`` of one of an instruction's own fields, outside ``symidx/hlo``."""
    found: dict[tuple[str, str], list[str]] = {}
    for rel, tree in _python_files(root, package).items():
        if rel.startswith(f"{package}/hlo/"):
            continue
        for function in [tree, *_functions(tree)]:
            where = getattr(function, "name", "<module>")
            body = function.body if isinstance(function, ast.FunctionDef) else [
                n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.ClassDef))]
            for node in (n for stmt in body for n in ast.walk(stmt)):
                if not isinstance(node, ast.Call):
                    continue
                name = node.func.id if isinstance(node.func, ast.Name) else \
                    node.func.attr if isinstance(node.func, ast.Attribute) else ""
                fields = {k.arg for k in node.keywords} & _INSTRUCTION_FIELDS
                if name == "HloInstruction" or (name == "replace" and node.args and fields):
                    found.setdefault((rel, where), []).append(f"{rel}:{node.lineno}: {name}")
    return found


def test_no_fake_instructions_outside_hlo() -> None:
    """A step passes what it needs (operands, shapes, attributes, known values) instead of
    building an instruction that is not in the module (``HloInstruction(...)``, or
    ``dataclasses.replace(instr, opcode=..., operands=...)``) outside ``symidx/hlo``: a
    scatter's known indices go to its rule as ``known`` (the instruction holding them), a
    loop counter's value to the resolver as a ``KnownValue``."""
    found = _fakes(ROOT, "symidx")
    assert not found, _report([line for lines in found.values() for line in lines])


def test_the_fake_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "hlo").mkdir(parents=True)
    (tmp_path / "pkg" / "hlo" / "ir.py").write_text("x = HloInstruction(name='a')\n")
    (tmp_path / "pkg" / "step.py").write_text(
        "from dataclasses import replace\n"
        "def f(instr, g):\n"
        "    a = replace(instr, opcode='add')\n"
        "    b = replace(g, shape='f32[2]')\n"
        "    return HloInstruction(name='c', opcode='constant')\n")
    assert _fakes(tmp_path, "pkg") == {
        ("pkg/step.py", "f"): ["pkg/step.py:3: replace", "pkg/step.py:5: HloInstruction"]}


def _package_of(rel: str) -> str:
    """``symidx/hlo/ir.py`` -> ``symidx/hlo``; a top-level module is its own package."""
    parts = rel.removesuffix(".py").split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else "/".join(parts)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _class_private_names(cls: ast.ClassDef) -> set[str]:
    """The private attributes ``cls`` defines: its methods, class-level (annotated)
    assignments (dataclass fields), ``__slots__`` entries and ``self._x = ...`` stores."""
    names: set[str] = set()
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            targets = {t.id for t in node.targets if isinstance(t, ast.Name)}
            names |= targets
            if "__slots__" in targets:
                names |= {e.value for e in ast.walk(node.value)
                          if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    names |= {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute)
              and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)
              and n.value.id == "self"}
    return {n for n in names if _is_private(n)}


def _foreign_private(root: Path, package: str) -> list[str]:
    """Each access ``x._name`` (``x`` not ``self`` or ``cls``, ``_name`` not a dunder) in a
    module of ``package`` where ``_name`` is a private attribute defined by a class of
    another package. The check goes by name: a name that a class of the accessing package
    defines too counts as that package's own."""
    trees = _python_files(root, package)
    owners: dict[str, set[str]] = {}
    for rel, tree in trees.items():
        for cls in (n for n in _nodes(tree) if isinstance(n, ast.ClassDef)):
            for name in _class_private_names(cls):
                owners.setdefault(name, set()).add(_package_of(rel))
    found = []
    for rel, tree in trees.items():
        here = _package_of(rel)
        for node in _nodes(tree):
            if not isinstance(node, ast.Attribute) or not _is_private(node.attr):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            defined = owners.get(node.attr, set())
            if defined and here not in defined:
                found.append(f"{rel}:{node.lineno}: .{node.attr} belongs to "
                             f"{', '.join(sorted(defined))}")
    return found


def test_no_private_attribute_of_another_package() -> None:
    """Code reads and writes only its own package's private fields (``IndexingMap._cache``
    is the indexing map's; an instruction's source text is ``instr.document``)."""
    found = _foreign_private(ROOT, "symidx")
    assert not found, _report(found)


def test_the_private_attribute_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "low").mkdir(parents=True)
    (tmp_path / "pkg" / "high").mkdir(parents=True)
    (tmp_path / "pkg" / "low" / "m.py").write_text(
        "class Map:\n"
        "    __slots__ = ('_slot',)\n"
        "    _field: int = 0\n"
        "    def _helper(self):\n"
        "        self._memo = {}\n"
        "        return other._field, self._field, self.__class__\n")
    (tmp_path / "pkg" / "high" / "use.py").write_text(
        "def f(m, n):\n"
        "    m._memo['k'] = 1\n"
        "    n._field, n._slot = 2, 3\n"
        "    return m._helper(), m._unknown, m.__dict__\n"
        "class Own:\n"
        "    def g(self, x):\n"
        "        return self._memo, x._mine\n"
        "    def _mine(self):\n"
        "        pass\n")
    assert _foreign_private(tmp_path, "pkg") == [
        "pkg/high/use.py:2: ._memo belongs to pkg/low",
        "pkg/high/use.py:3: ._field belongs to pkg/low",
        "pkg/high/use.py:3: ._slot belongs to pkg/low",
        "pkg/high/use.py:4: ._helper belongs to pkg/low"]


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


def test_checker_finds_an_import_between_packages_kept_apart(tmp_path: Path) -> None:
    g = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "",
        "pkg/mid/__init__.py": "",
        "pkg/mid/rule.py": "def f():\n    from pkg.middle.shapes import g\n",
        "pkg/middle/__init__.py": "",
        "pkg/middle/shapes.py": "from pkg import low\n",
    })
    assert ig.apart(g, [("pkg.mid", "pkg.middle")], "pkg") == [
        "pkg/mid/rule.py:2: pkg.mid.rule imports pkg.middle.shapes (pkg.mid does not import "
        "pkg.middle)"]
    assert ig.apart(g, [("pkg.middle", "pkg.mid")], "pkg") == []


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


# --- runtime values: one owner, one table of moves (docs/architecture.md) --------------------

#: The module that resolves runtime values, and the one table of ops that move values.
RESOLVER, MOVES_TABLE = "symidx/lowering/values.py", "symidx/hlo/moves.py"


def _type_checking_lines(tree: ast.Module) -> set[int]:
    """The lines of the statements under ``if TYPE_CHECKING:`` (imports of types only)."""
    lines: set[int] = set()
    for node in _nodes(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return lines


def _imported(node: ast.AST) -> set[str]:
    """The modules (or module attributes) an import statement names; none for any other
    node."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names}
    if isinstance(node, ast.ImportFrom) and node.module:
        return {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return set()


def value_owners(files: dict[str, ast.Module], owners: tuple[str, ...], fold: str
                 ) -> list[str]:
    """Outside ``owners`` (path prefixes: the hlo front end, which folds values, and the
    resolver, which asks it), the places that resolve a runtime
    value themselves: a call of ``hlo_reference`` (the text of a holder: a runtime
    variable's source comes from the resolver's ``value_source``) or an import of the
    folding module ``fold`` other than for its types (under ``if TYPE_CHECKING:``)."""
    problems = []
    for path, tree in files.items():
        if path.startswith(owners):
            continue
        types_only = _type_checking_lines(tree)
        for node in _nodes(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else \
                    f.attr if isinstance(f, ast.Attribute) else None
                if name == "hlo_reference":
                    problems.append(f"{path}:{node.lineno}: calls hlo_reference (ask the "
                                    f"resolver: value_source)")
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and fold in _imported(node) \
                    and node.lineno not in types_only:
                problems.append(f"{path}:{node.lineno}: imports {fold} (ask the resolver)")
    return problems


def move_tables(files: dict[str, ast.Module], table: str, moves: set[str]) -> list[str]:
    """Literal collections of opcode names outside ``table`` that list three or more of
    ``moves``, which make at least half of them: another copy of the table of ops that
    move values unchanged (a table of another fact, such as every opcode's arity, lists
    them among many others)."""
    problems = []
    for path, tree in files.items():
        if path == table:
            continue
        for node in _nodes(tree):
            if not isinstance(node, (ast.Set, ast.List, ast.Tuple)):
                continue
            names = {e.value for e in node.elts
                     if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            listed = names & moves
            if len(listed) >= 3 and 2 * len(listed) >= len(names):
                problems.append(f"{path}:{node.lineno}: lists {sorted(listed)}: use "
                                f"{table}")
    return problems


def test_runtime_values_have_one_owner() -> None:
    problems = value_owners(_python_files(ROOT, "symidx"), ("symidx/hlo/", RESOLVER),
                            "symidx.hlo.fold")
    assert not problems, _report(problems)


def test_one_table_of_the_ops_that_move_values() -> None:
    from symidx.hlo.moves import MOVES_VALUES

    problems = move_tables(_python_files(ROOT, "symidx"), MOVES_TABLE, set(MOVES_VALUES))
    assert not problems, _report(problems)


def test_checker_finds_values_resolved_outside_the_resolver(tmp_path: Path) -> None:
    files = {
        "pkg/hlo/facts.py": "from pkg.hlo.fold import fold\nhlo_reference(x)\n",
        "pkg/lowering/values.py": "from pkg.hlo.fold import fold\nhlo_reference(x)\n",
        "pkg/lowering/layouts.py": "from pkg.hlo.fold import fold\n",
        "pkg/ops/a.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                         "    from pkg.hlo.fold import Value\n"),
        "pkg/ops/b.py": "from pkg.hlo.facts import hlo_reference\nname = hlo_reference(i)\n",
        "pkg/fusion/c.py": "def f():\n    from pkg.hlo.fold import Evaluator\n",
        "pkg/fusion/d.py": "from pkg.hlo import fold\nimport pkg.hlo.fold\n",
    }
    trees = {path: ast.parse(text) for path, text in files.items()}
    assert value_owners(trees, ("pkg/hlo/", "pkg/lowering/values.py"), "pkg.hlo.fold") == [
        "pkg/lowering/layouts.py:1: imports pkg.hlo.fold (ask the resolver)",
        "pkg/ops/b.py:2: calls hlo_reference (ask the resolver: value_source)",
        "pkg/fusion/c.py:2: imports pkg.hlo.fold (ask the resolver)",
        "pkg/fusion/d.py:1: imports pkg.hlo.fold (ask the resolver)",
        "pkg/fusion/d.py:2: imports pkg.hlo.fold (ask the resolver)"]


def test_checker_finds_a_copy_of_the_moves_table() -> None:
    moves = {"bitcast", "copy", "reshape", "transpose", "slice"}
    trees = {
        "pkg/hlo/moves.py": ast.parse('T = {"bitcast", "copy", "reshape"}\n'),
        "pkg/a.py": ast.parse('_MOVES = frozenset({"copy", "reshape", "transpose"})\n'),
        "pkg/b.py": ast.parse('ARITY = ("copy", "reshape", "slice", "add", "dot", "tanh", '
                              '"abs")\n'),
        "pkg/c.py": ast.parse('OPS = ["slice", "copy", "bitcast", "add"]\n'),
    }
    assert move_tables(trees, "pkg/hlo/moves.py", moves) == [
        "pkg/a.py:1: lists ['copy', 'reshape', 'transpose']: use pkg/hlo/moves.py",
        "pkg/c.py:1: lists ['bitcast', 'copy', 'slice']: use pkg/hlo/moves.py"]
def test_checker_finds_a_long_module(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "short.py").write_text("x = 1\n" * 3)
    (tmp_path / "pkg" / "sub" / "long.py").write_text("x = 1\n" * 4)
    assert long_modules(tmp_path / "pkg", 3) == ["pkg/sub/long.py: 4 lines (at most 3)"]
    assert long_modules(tmp_path / "pkg", 4) == []


# --- one table per fact about opcodes ------------------------------------------------------
# A fact about opcodes (operand counts, shape rules, the verifier's special checks, the ops
# that move values) is written in one place; the others ask it by the opcode's name.


def _opcodes() -> set[str]:
    from symidx.hlo.infer.common import _RULES, ARITY
    from symidx.ops.registry import supported_opcodes

    return set(_RULES) | set(ARITY) | supported_opcodes() | supported_opcodes("input_to_output")


def test_no_two_opcode_tables_hold_the_same_opcodes() -> None:
    import opcode_tables as ot

    found = ot.repeated(ot.opcode_tables(ROOT / "symidx", _opcodes(),
                                         _python_files(ROOT, "symidx")))
    assert not found, _report([f"{a} and {b} hold the same opcodes" for a, b in found])


def test_the_opcode_table_checker_finds_a_repeat(tmp_path: Path) -> None:
    import opcode_tables as ot

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text('X = frozenset({"copy", "domain"})\n'
                                           'N = {"x": 1, "y": 2}\n')
    (tmp_path / "pkg" / "b.py").write_text('Y = {**dict.fromkeys(("domain", "copy"), 1)}\n'
                                           'Z = ("copy", "add")\n')
    tables = ot.opcode_tables(tmp_path / "pkg", {"copy", "domain", "add"})
    assert set(tables) == {"pkg/a.py:X", "pkg/b.py:Y", "pkg/b.py:Z"}
    assert ot.repeated(tables) == [("pkg/a.py:X", "pkg/b.py:Y")]


def test_the_table_of_rule_families_says_what_each_family_registers() -> None:
    """symidx/ops/families.py names, for every opcode with a rule or an opacity function, the
    one module that registers them (the registry loads a family by this table, on first use
    of one of its opcodes), and names no opcode that its module does not register."""
    from symidx.ops.families import FAMILIES, FAMILY
    from symidx.ops.registry import load_all_families, registered_by

    load_all_families()
    owners = registered_by()
    wrong = sorted(f"{op}: registered by {sorted(owners.get(op, ()))}, table says "
                   f"{FAMILY.get(op)}" for op in set(owners) | set(FAMILY)
                   if owners.get(op) != {f"symidx.ops.{FAMILY.get(op)}"})
    assert not wrong, _report(wrong)
    assert all((ROOT / (name.replace(".", "/") + ".py")).is_file() for name in FAMILIES)


def test_a_rule_family_is_imported_on_first_use_of_its_opcodes() -> None:
    """In a fresh process the ops package imports no rule family; asking for an opcode's rule
    or opacity imports its family alone, which registers it."""
    import subprocess
    import sys

    probe = """
import sys
from symidx.hlo import parse_hlo
from symidx.ops import opaque_reason, output_to_input, registry
from symidx.ops.families import FAMILIES, FAMILY
loaded = lambda: sorted(m for m in FAMILIES if m in sys.modules)
print(loaded())
module = parse_hlo("HloModule m\\nENTRY e {\\n  p = f32[4] parameter(0)\\n"
                   "  ROOT n = f32[4] negate(p)\\n}\\n")
print(len(output_to_input(module.entry.root)), opaque_reason(module.entry.root), loaded())
for opcode, family in sorted(FAMILY.items()):
    registry.load_family(opcode)
    assert f"symidx.ops.{family}" in sys.modules and opcode in registry.registered_by(), opcode
print("all", loaded() == sorted(FAMILIES))
"""
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.splitlines()
    assert out == ["[]", "1 None ['symidx.ops.elementwise']", "all True"]


def test_an_opcode_has_one_shape_rule_and_one_verifier_check() -> None:
    """Registering a second shape rule, or a second special check of the verifier, for an
    opcode is an error, not a silent replacement of the first."""
    from symidx.hlo import validate
    from symidx.hlo.infer import common

    with pytest.raises(RuntimeError, match="two shape rules for add"):
        common._infers("add")(lambda instr: instr.shape)
    with pytest.raises(RuntimeError, match="two verifier checks for broadcast"):
        validate._checks("broadcast")(lambda instr: None)


# --- one result type for a group of maps -----------------------------------------------------
# A group of maps with where each comes from is one class, symidx.fusion.Reached: the sweeps
# return it, and the analysis places it at an operand or output (it used to have a twin,
# analysis.MapGroup, and a tuple alias for a step's maps).


def map_group_classes(root: Path, package: str) -> list[str]:
    """``file:line: Name`` for each class below ``package`` that declares both a ``maps``
    and an ``origins`` field (a class-level annotation): a type for a group of maps."""
    found = []
    for rel, tree in _python_files(root, package).items():
        for cls in (n for n in _nodes(tree) if isinstance(n, ast.ClassDef)):
            fields = {n.target.id for n in cls.body
                      if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
            if {"maps", "origins"} <= fields:
                found.append(f"{rel}:{cls.lineno}: {cls.name}")
    return found


def exported_map_groups(modules: dict[str, object]) -> dict[str, object]:
    """Per ``module.name`` in a module's ``__all__``: each exported dataclass with ``maps``
    and ``origins`` fields."""
    import dataclasses

    found = {}
    for module_name, module in modules.items():
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if isinstance(obj, type) and dataclasses.is_dataclass(obj) and \
                    {"maps", "origins"} <= {f.name for f in dataclasses.fields(obj)}:
                found[f"{module_name}.{name}"] = obj
    return found


def test_one_result_type_for_a_group_of_maps() -> None:
    import importlib
    import importlib.util

    from symidx.fusion import Reached

    (only,) = map_group_classes(ROOT, "symidx")
    assert only.startswith("symidx/fusion/reached.py:") and only.endswith(": Reached"), only
    spec = importlib.util.spec_from_file_location("gen_api", ROOT / "docs" / "gen_api.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    public = {name: importlib.import_module(name) for name in generator.module_names()}
    found = exported_map_groups(public)  # the package exports its module's class
    assert found == {"symidx.fusion.Reached": Reached,
                     "symidx.fusion.reached.Reached": Reached}, found
    with pytest.warns(DeprecationWarning, match="MapGroup is deprecated"):
        from symidx.analysis import MapGroup  # the old name, kept importable
    # Called in its old field order (index, name, maps, unsupported, origins, leaf, ...),
    # it builds the Reached those fields describe: no field lands in the wrong place.
    old = MapGroup(2, "p2", (), "custom-call TopK", (), 1)
    assert isinstance(old, Reached)
    assert (old.index, old.name, old.unsupported, old.leaf, old.maps) == (
        2, "p2", "custom-call TopK", 1, ())


def test_the_map_group_checks_can_fail(tmp_path: Path) -> None:
    import dataclasses
    import types

    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text(
        "class Reached:\n    maps: tuple = ()\n    origins: tuple = ()\n")
    (tmp_path / "pkg" / "sub" / "b.py").write_text(
        "class Group:\n    index: int\n    maps: tuple = ()\n    origins: tuple = ()\n"
        "class Step:\n    maps: tuple = ()\n")
    assert map_group_classes(tmp_path, "pkg") == ["pkg/a.py:1: Reached",
                                                  "pkg/sub/b.py:1: Group"]

    @dataclasses.dataclass
    class Group:
        maps: tuple = ()
        origins: tuple = ()

    @dataclasses.dataclass
    class Step:
        maps: tuple = ()

    low = types.SimpleNamespace(__all__=["Group", "Step"], Group=Group, Step=Step)
    high = types.SimpleNamespace(__all__=["Alias"], Alias=Group)
    assert exported_map_groups({"low": low, "high": high}) == {"low.Group": Group,
                                                               "high.Alias": Group}
