"""What the corpus tests share: running ``symidx corpus`` in-process, reading its records,
the record's JSON Schema, and a test-only hook that makes a worker misbehave.

The hook (``SYMIDX_CORPUS_TEST_HOOK=<this file>:misbehave``): a worker given a module whose
text holds one of the markers below hangs, exits or is killed by a signal, as real modules
sometimes make a worker do, so that the tests can check that the run records it and goes
on."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import time
from importlib import resources
from pathlib import Path
from typing import Any

from symidx.cli import main

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
DATA = TESTS / "data" / "corpus"
EXAMPLES = ROOT / "symidx" / "examples"
HOOK = f"{Path(__file__).resolve()}:misbehave"

HANG = "CORPUS-TEST: hang"
EXIT = "CORPUS-TEST: exit"
KILL = "CORPUS-TEST: kill"

#: The fields that differ from run to run.
TIMING = ("parse_seconds", "analysis_seconds")


def misbehave(task: object) -> None:
    text = getattr(task, "text", "")
    if HANG in text:
        time.sleep(3600)
    if EXIT in text:
        os._exit(70)
    if KILL in text:
        os.kill(os.getpid(), signal.SIGKILL)


def corpus(*argv: str) -> tuple[int, str, str]:
    """``symidx corpus ARGV``: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["corpus", *argv])
    return code, out.getvalue(), err.getvalue()


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def by_place(found: list[dict[str, Any]], timing: bool = False) -> dict[tuple[str, int], Any]:
    """Records keyed by (file, module), without the timing fields unless ``timing``."""
    return {(r["file"], r["module"]): r if timing else
            {k: v for k, v in r.items() if k not in TIMING} for r in found}


def validator() -> Any:
    """A validator of ``symidx/schemas/corpus-1.json`` (which refers to maps-1.json)."""
    import jsonschema
    from referencing import Registry, Resource

    schemas = {name: json.loads(resources.files("symidx").joinpath(f"schemas/{name}")
                                .read_text()) for name in ("corpus-1.json", "maps-1.json")}
    for schema in schemas.values():
        jsonschema.Draft202012Validator.check_schema(schema)
    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values())
    return jsonschema.Draft202012Validator(schemas["corpus-1.json"], registry=registry)


def examples_copy(folder: Path, names: tuple[str, ...] = ()) -> Path:
    """The bundled examples (or those named) copied into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted(EXAMPLES.glob("*.hlo")):
        if not names or path.stem in names:
            shutil.copy(path, folder / path.name)
    return folder


def misbehaving(folder: Path, marker: str, example: str) -> Path:
    """A module that makes its worker misbehave: an example with ``marker`` in a comment."""
    path = folder / f"{marker.split()[-1]}.hlo"
    path.write_text(f"// {marker}\n" + (EXAMPLES / f"{example}.hlo").read_text())
    return path
