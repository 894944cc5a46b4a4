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
    body = sections()["symidx.core.interval"]
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


# --- the README's table of the code ----------------------------------------------------------

FILE_NAME = re.compile(r"`([\w/]+(?:\.py|/))`")


def readme_rows(text: str) -> list[tuple[list[str], list[str]]]:
    """Per row of the README's "Layout of the code" table: the paths of its first cell and
    the files and folders (``x.py``, ``x/``) its second cell names."""
    section = text.split("## Layout of the code", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = line.split(" | ")
        if line.startswith("| `") and len(cells) == 2:
            rows.append((FILE_NAME.findall(cells[0]), FILE_NAME.findall(cells[1])))
    return rows


def misplaced(root: Path, rows: list[tuple[list[str], list[str]]]) -> list[str]:
    """Each file or folder a row names that is neither a path from ``root`` nor found (as a
    path suffix) in one of the folders of the row's first cell."""
    problems = []
    for heads, names in rows:
        folders = [root / h if h.endswith("/") else (root / h).parent for h in heads]
        for name in names:
            stem = name.rstrip("/")
            if (root / stem).exists() or any(
                    (f / stem).exists() or any(p.as_posix().endswith("/" + stem)
                                               for p in f.rglob("*")) for f in folders):
                continue
            problems.append(f"{', '.join(heads)}: {name} is not there")
    return problems


def test_the_readme_table_has_a_row_per_package() -> None:
    heads = {h.rstrip("/").removesuffix(".py").replace("/", ".")
             for row_heads, _ in readme_rows((ROOT / "README.md").read_text())
             for h in row_heads}
    wanted = {name for name in FLOORS if not name.split(".")[-1].startswith("_")}
    assert wanted - heads == set()


def test_every_file_the_readme_table_names_is_there() -> None:
    rows = readme_rows((ROOT / "README.md").read_text())
    assert len(rows) >= 15 and sum(len(names) for _, names in rows) > 100
    problems = misplaced(ROOT, rows)
    assert not problems, "\n".join(problems)


def test_the_readme_table_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "real.py").write_text("")
    (tmp_path / "pkg" / "top.py").write_text("")
    text = ("## Layout of the code\n\n| a | b |\n|---|---|\n"
            "| `pkg/` | `real.py`, `sub/`, `gone.py`, `ghost/` |\n"
            "| `pkg/top.py`, `pkg/sub/` | `real.py` and `top.py` |\n\n## Next\n| `x/` | `y.py` |\n")
    rows = readme_rows(text)
    assert rows == [(["pkg/"], ["real.py", "sub/", "gone.py", "ghost/"]),
                    (["pkg/top.py", "pkg/sub/"], ["real.py", "top.py"])]
    assert misplaced(tmp_path, rows) == ["pkg/: gone.py is not there", "pkg/: ghost/ is not there"]
