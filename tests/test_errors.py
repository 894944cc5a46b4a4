"""One base error class: every exception class symidx defines derives from
:class:`symidx.errors.SymidxError` -- the classes of :mod:`symidx.errors`, and every
exception class anywhere under ``symidx/``, found twice: by importing each module (the
classes a module holds at its top level), and by reading each file's ``class`` statements
(classes nested in functions or classes too, and modules whatever they import).

An error is an :class:`Exception`; an interrupt is not one (``symidx corpus`` turns
SIGTERM into a :class:`KeyboardInterrupt`, which no ``except Exception`` may swallow)."""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import pkgutil
from pathlib import Path

import symidx
import symidx.errors
from symidx.errors import SymidxError

ROOT = Path(symidx.__file__).parent
BUILTIN_EXCEPTIONS = {name for name, value in vars(builtins).items()
                      if inspect.isclass(value) and issubclass(value, Exception)}


def _exception_classes(module_name: str) -> list[type]:
    module = importlib.import_module(module_name)
    return [c for c in vars(module).values()
            if inspect.isclass(c) and c.__module__ == module_name
            and issubclass(c, Exception)]


def test_every_class_of_symidx_errors_derives_from_the_base() -> None:
    classes = _exception_classes("symidx.errors")
    names = {c.__name__ for c in classes}
    assert {"SymidxError", "ParseError", "HloShapeError", "NotFoundError", "MapError",
            "Undecided", "LimitReached"} <= names
    assert [c.__name__ for c in classes if not issubclass(c, SymidxError)] == []


def test_every_exception_class_under_symidx_derives_from_the_base() -> None:
    found: list[str] = []
    outside: list[str] = []
    for info in pkgutil.walk_packages(symidx.__path__, "symidx."):
        if info.name.endswith("__main__"):  # runs the command line when imported
            continue
        for cls in _exception_classes(info.name):  # the extras are imported lazily
            found.append(cls.__name__)
            if not issubclass(cls, SymidxError):
                outside.append(f"{info.name}.{cls.__qualname__}")
    assert outside == []
    from symidx.cli.signals import Signalled  # the one interrupt: not an error

    assert issubclass(Signalled, KeyboardInterrupt) and not issubclass(Signalled, Exception)
    # the walk reaches the floors above symidx.errors (and the private signals)
    assert {"UsageError", "KnownEmpty", "_TooMuch", "InferenceError", "TileRefusal"} \
        <= set(found)


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def test_every_exception_class_statement_names_a_symidx_base() -> None:
    """By the text: a class whose bases lead (by name, through the classes defined under
    ``symidx/``) to a built-in exception also leads to ``SymidxError``."""
    bases: dict[str, list[list[str]]] = {}
    where: dict[str, list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases.setdefault(node.name, []).append([_base_name(b) for b in node.bases])
                where.setdefault(node.name, []).append(str(path.relative_to(ROOT)))

    def leads_to(names: list[str], goal: set[str], seen: frozenset[str]) -> bool:
        for name in names:
            if name in goal:
                return True
            if name in bases and name not in seen and any(
                    leads_to(b, goal, seen | {name}) for b in bases[name]):
                return True
        return False

    exceptions: set[str] = set()
    outside = 0
    bad = []
    for name, definitions in bases.items():
        for k, names in enumerate(definitions):
            if name == "SymidxError" or not leads_to(names, BUILTIN_EXCEPTIONS, frozenset()):
                continue
            exceptions.add(name)
            if not leads_to(names, {"SymidxError"}, frozenset({name})):
                outside += 1
                bad.append(f"{where[name][k]}: class {name}({', '.join(names)})")
    assert bad == [] and outside == 0
    # the text walk sees the error classes it checks, on every floor
    assert {"ParseError", "HloValidationError", "UsageError", "KnownEmpty", "_TooMuch",
            "InferenceError", "TileRefusal", "UnreadableFile"} <= exceptions
