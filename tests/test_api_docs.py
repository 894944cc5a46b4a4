"""The generated documents are current and cover the code: docs/api.md has a section for
every public module of symidx (found here by walking the package's files, so a new module
cannot be left out) with an entry for each name of its ``__all__``, and the floors table of
docs/architecture.md lists ``FLOORS`` of the architecture test. Regenerate both with
``python docs/gen_api.py``."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from test_architecture import FLOORS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_api", DOCS / "gen_api.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    return generator


def public_modules() -> list[str]:
    """Every module file under symidx/ whose dotted name has no part starting with ``_``
    (a package's ``__init__.py`` stands for the package)."""
    names = set()
    for path in (ROOT / "symidx").rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if not any(p.startswith("_") for p in parts):
            names.add(".".join(parts))
    return sorted(names)


SECTION = re.compile(r"^## `([\w.]+)`\n(.*?)(?=^## |\Z)", re.S | re.M)


@functools.cache
def sections() -> dict[str, str]:
    return {name: body for name, body in SECTION.findall((DOCS / "api.md").read_text())}


def documented(body: str, name: str) -> bool:
    return re.search(rf"^- `(class )?{re.escape(name)}[(`= ]", body, re.M) is not None


def test_the_generated_documents_are_current() -> None:
    generator = _generator()
    assert (DOCS / "api.md").read_text() == generator.render(), "run python docs/gen_api.py"
    text = (DOCS / "architecture.md").read_text()
    assert text == generator.with_floors(text), "run python docs/gen_api.py"


def test_the_reference_has_a_section_per_public_module() -> None:
    documented_modules = list(sections())
    assert sorted(documented_modules) == public_modules()
    assert documented_modules[0] == "symidx"
    assert {"symidx.tiling", "symidx.layout.linear", "symidx.layout.tv",
            "symidx.layout.swizzle", "symidx.layout.views", "symidx.layout.tensor",
            "symidx.cli.tile"} <= set(documented_modules)


@pytest.mark.parametrize("module_name", [m for m in public_modules()])
def test_every_name_of_all_has_an_entry(module_name: str) -> None:
    module = importlib.import_module(module_name)
    body = sections().get(module_name, "")
    missing = [n for n in getattr(module, "__all__", ()) if not documented(body, n)]
    assert not missing, f"docs/api.md lacks {missing} in {module_name}: run docs/gen_api.py"


def test_a_module_without_all_lists_what_it_defines() -> None:
    body = sections()["symidx.interval"]
    assert documented(body, "Interval") and not documented(body, "annotations")


def test_the_floors_table_lists_the_floors() -> None:
    text = (DOCS / "architecture.md").read_text()
    rows = re.findall(r"^\| (\d+) \| `([\w.]+)` \|", text, re.M)
    assert {name: int(floor) for floor, name in rows} == FLOORS
    assert len(rows) == len(FLOORS)


def test_the_walk_finds_a_new_module_and_leaves_out_private_ones(tmp_path: Path) -> None:
    for name in ("pkg/__init__.py", "pkg/new.py", "pkg/_private.py", "pkg/sub/__init__.py",
                 "pkg/sub/deep.py", "pkg/_hidden/visible.py", "pkg/__main__.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert _generator().module_names(tmp_path, "pkg") == [
        "pkg", "pkg.new", "pkg.sub", "pkg.sub.deep"]
