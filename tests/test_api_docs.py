"""docs/api.md documents every public name: each name of ``symidx.__all__`` (and of the
other modules it covers) has an entry in its module's section. Regenerate the page with
``python docs/gen_api.py``."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _generator_modules() -> tuple[str, ...]:
    """The modules docs/gen_api.py documents."""
    spec = importlib.util.spec_from_file_location("gen_api", DOCS / "gen_api.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    return tuple(generator.MODULES)


MODULES = _generator_modules()

SECTION = re.compile(r"^## `([\w.]+)`\n(.*?)(?=^## |\Z)", re.S | re.M)


def sections() -> dict[str, str]:
    return {name: body for name, body in SECTION.findall((DOCS / "api.md").read_text())}


def documented(body: str, name: str) -> bool:
    return re.search(rf"^- `(class )?{re.escape(name)}[(`= ]", body, re.M) is not None


def test_the_reference_has_a_section_per_module():
    assert list(sections()) == list(MODULES)


@pytest.mark.parametrize("module_name", MODULES)  # "symidx": every name of symidx.__all__
def test_every_public_name_has_an_entry(module_name):
    body = sections().get(module_name, "")
    missing = [n for n in importlib.import_module(module_name).__all__
               if not documented(body, n)]
    assert not missing, f"docs/api.md lacks {missing} in {module_name}: run docs/gen_api.py"
