"""The examples in README.md and docs/*.md run, and print what the documents say.

* ```python blocks are executed (each file's blocks share one namespace, in order);
* ```console blocks: each ``$ symidx ...`` line is run through ``symidx.cli.main`` and its
  output compared with the lines that follow it (up to the next ``$`` line).
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from symidx.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(python|console)\n(.*?)^```", re.S | re.M)


def blocks(path: Path, kind: str) -> list[str]:
    """The bodies of a document's blocks of one kind, each padded with blank lines so that
    line numbers in tracebacks (and hypothesis's source lookups) are the document's own."""
    text = path.read_text()
    out = []
    for match in BLOCK.finditer(text):
        if match.group(1) == kind:
            line = text.count("\n", 0, match.start(2))
            out.append("\n" * line + match.group(2))
    return out


def console_examples() -> list[tuple[str, str, str]]:
    out = []
    for path in DOCS:
        for body in blocks(path, "console"):
            current: list[str] | None = None
            for line in body.splitlines():
                if line.startswith("$ "):
                    current = [line[2:], ""]
                    out.append((path.name, current))  # type: ignore[arg-type]
                elif current is not None:
                    current[1] += line + "\n"
    return [(name, cmd, expected) for name, (cmd, expected) in out]


@pytest.mark.parametrize("path", [p for p in DOCS if blocks(p, "python")], ids=lambda p: p.name)
def test_python_examples_run(path, monkeypatch):
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    for body in blocks(path, "python"):
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(body, str(path), "exec"), namespace)  # our own documentation


@pytest.mark.parametrize("name, command, expected", console_examples(),
                         ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None)
def test_console_examples_print_what_the_docs_say(name, command, expected, monkeypatch):
    monkeypatch.chdir(ROOT)
    argv = shlex.split(command)
    assert argv[0] == "symidx"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv[1:])
    assert code == 0
    assert out.getvalue().rstrip() == expected.rstrip(), command


def test_there_are_examples():
    assert console_examples() and any(blocks(p, "python") for p in DOCS)
