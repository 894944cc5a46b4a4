"""Imports inside functions only where start-up needs them (issue 38).

An ``import`` inside a function is there to keep a module out of a start-up that does not
need it. So each one must either import an optional extra (imported when it is used, so
that symidx runs without it), or keep out a module that some start-up would otherwise load:
a command of the ``symidx`` CLI, run in a fresh process, loads the importing module but not
the imported one. Every other import belongs at the top of its module, where a reader sees
what the module uses.

The start-ups are measured, not listed: each command of :data:`STARTS` runs in its own
process and reports ``sys.modules`` at exit.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "symidx" / "examples"
MAP = "(d0, d1) -> (d0 * 4 + d1 floordiv 2), domain: d0 in [0, 7], d1 in [0, 7]"

#: Optional extras (pyproject's extras and their parts): always imported where used.
EXTRAS = frozenset({"matplotlib", "jax", "jaxlib", "islpy", "z3", "ray", "dask",
                    "distributed", "tqdm", "pycute", "triton", "nbformat", "nbclient",
                    "IPython", "cutlass", "torch"})

VERBS = ("format", "simplify", "compose", "verify", "maps", "bench", "layout", "batch",
         "corpus", "tile", "pallas")

#: What a user starts: every verb's help, and the common verbs on small inputs.
STARTS: tuple[tuple[str, ...], ...] = (
    ("--help",),
    *((verb, "--help") for verb in VERBS),
    ("format", MAP),
    ("simplify", MAP),
    ("compose", MAP, "(d0) -> (d0 mod 8), domain: d0 in [0, 31]"),
    ("verify", MAP, MAP),
    ("maps", str(EXAMPLES / "layernorm.hlo")),
    ("maps", str(EXAMPLES / "embedding.hlo"), "--format", "json"),
    ("layout", "(4,8):(8,1)"),
    ("tile", MAP),
    ("tile", str(EXAMPLES / "layernorm.hlo"), "--fusion", "broadcast_add_fusion",
     "--sizes", "1,1,33"),
)

_PROBE = """
import atexit, json, sys
atexit.register(lambda: print("@@" + json.dumps(sorted(sys.modules)), file=sys.stderr))
sys.argv = ["symidx", *json.loads(sys.argv[1])]
from symidx.cli import main
sys.exit(main())
"""


@dataclass(frozen=True)
class FunctionImport:
    """Module ``module`` imports ``target`` inside a function, at ``file:line``."""

    module: str
    target: str
    file: str
    line: int


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def function_imports(root: Path, package: str) -> list[FunctionImport]:
    """Every ``import`` statement inside a function of ``package`` (but those in a ``try``
    that catches ``ImportError``: a module some platform lacks), with the module it
    imports (``from a.b import c`` imports the submodule ``a.b.c`` if there is one, else
    ``a.b``, or what the package ``a.b`` gives on first use as ``c``)."""
    paths = sorted((root / package).rglob("*.py"))
    known = {module_name(path, root) for path in paths}
    trees = {path: ast.parse(path.read_text(), str(path)) for path in paths}
    lazy = {module_name(path, root) for path, tree in trees.items()
            if any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__"
                   for n in tree.body)}

    def imported(module: str, name: str) -> str:
        """What ``from module import name`` loads: the submodule ``module.name`` if there is
        one; a name a package gives on first use (its ``__getattr__``) loads a module not
        known here, ``module:name``; any other name, ``module``."""
        if f"{module}.{name}" in known:
            return f"{module}.{name}"
        return f"{module}:{name}" if module in lazy else module

    found = []
    for path, tree in trees.items():
        module = module_name(path, root)
        guarded = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try)
                   and any(_catches_import_error(h) for h in t.handlers) for n in t.body}
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if id(node) in guarded:  # what a platform may lack: resource, fcntl
                    continue
                if isinstance(node, ast.Import):
                    targets = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    targets = list(dict.fromkeys(imported(node.module, a.name)
                                                 for a in node.names))
                else:
                    continue
                found += [FunctionImport(module, t, path.relative_to(root).as_posix(),
                                         node.lineno) for t in targets]
    return found


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name) and n.id in {"ImportError", "ModuleNotFoundError"}
               for n in names)


def needless(imports: Iterable[FunctionImport],
             starts: Mapping[str, frozenset[str]]) -> list[str]:
    """Each import of ``imports`` that no start-up needs: not of an extra, and every start-up
    (``starts``: a name -> the modules it loaded) that loads the importing module loads the
    imported one too, or none loads the importing module."""
    problems = []
    for i in imports:
        if i.target.split(".")[0] in EXTRAS:
            continue
        if not any(i.module in loaded and i.target not in loaded
                   for loaded in starts.values()):
            problems.append(f"{i.file}:{i.line}: {i.module} imports {i.target} inside a "
                            "function, but no start-up it is part of goes without it: "
                            "import it at the top of the module")
    return problems


def _loaded(args: tuple[str, ...]) -> frozenset[str]:
    run = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(list(args))],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    reports = [line for line in run.stderr.splitlines() if line.startswith("@@")]
    assert run.returncode == 0 and reports, f"symidx {' '.join(args)}: {run.stderr[-800:]}"
    return frozenset(json.loads(reports[-1][2:]))


@pytest.fixture(scope="module")
def starts() -> dict[str, frozenset[str]]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        loaded = list(pool.map(_loaded, STARTS))
    return {" ".join(args): modules for args, modules in zip(STARTS, loaded)}


def test_every_import_inside_a_function_is_needed_by_a_start_up(
        starts: dict[str, frozenset[str]]) -> None:
    problems = needless(function_imports(ROOT, "symidx"), starts)
    assert not problems, f"{len(problems)} import(s):\n" + "\n".join(problems)


def test_the_start_ups_are_measured(starts: dict[str, frozenset[str]]) -> None:
    """A guard against a probe that measures nothing: help loads the CLI but not sympy;
    simplifying a map loads sympy."""
    assert "symidx.cli" in starts["--help"] and "sympy" not in starts["--help"]
    assert "sympy" in starts[f"simplify {MAP}"]


def test_the_rule_can_fail(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text(
        "def f():\n    import json\n    import numpy\n    import matplotlib\n"
        "    from pkg.b import g\n    from pkg import b\n"
        "    try:\n        import fcntl\n    except ImportError:\n        pass\n")
    (package / "b.py").write_text("def g():\n    pass\n")
    (package / "__init__.py").write_text("def __getattr__(name):\n    return name\n")
    (package / "c.py").write_text("def h():\n    from pkg import anything\n")
    found = function_imports(tmp_path, "pkg")
    assert [(i.target, i.line) for i in found] == [
        ("json", 2), ("numpy", 3), ("matplotlib", 4), ("pkg.b", 5), ("pkg.b", 6),
        ("pkg:anything", 2)]
    found = found[:-1]  # pkg.c: a name the package gives on first use is never loaded
    starts = {"light": frozenset({"pkg", "pkg.a", "json"}),
              "heavy": frozenset({"pkg", "pkg.a", "json", "numpy"})}
    problems = needless(found, starts)
    # json: every start-up loading pkg.a loads json; pkg.b: loaded by none, kept out of
    # both; numpy: kept out of "light"; matplotlib: an extra.
    assert [p.split(" imports ")[1].split()[0] for p in problems] == ["json"]
    assert needless(found, {"other": frozenset({"pkg"})}) == [
        f"pkg/a.py:{line}: pkg.a imports {target} inside a function, but no start-up it is "
        "part of goes without it: import it at the top of the module"
        for target, line in (("json", 2), ("numpy", 3), ("pkg.b", 5), ("pkg.b", 6))]
