"""What the corpus tests share: running ``symidx corpus`` in-process, reading its records,
the record's JSON Schema, and the test-only hook that makes a worker misbehave
(:data:`HOOK`, in ``corpus_faults.py``: a worker given a module whose text holds one of the
markers hangs, exits or is killed by a signal)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

from corpus_faults import EXIT, HANG, KILL, SPIN  # noqa: F401 - the tests import them from here

from symidx.cli import main

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
DATA = TESTS / "data" / "corpus"
EXAMPLES = ROOT / "symidx" / "examples"
#: The hook's ``MODULE:FUNCTION``: the workers import ``corpus_faults`` from this folder,
#: which is on their path (pytest's, or ``PYTHONPATH`` for a driver run as a process).
HOOK = "corpus_faults:misbehave"

#: The fields that differ from run to run.
TIMING = ("parse_seconds", "analysis_seconds")


def corpus(*argv: str) -> tuple[int, str, str]:
    """``symidx corpus ARGV``: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["corpus", *argv])
    return code, out.getvalue(), err.getvalue()


def main_run(*argv: str) -> tuple[int, str, str]:
    """``symidx ARGV`` in-process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
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
