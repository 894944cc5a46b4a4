"""Every JSON ``symidx maps`` prints validates against its published schema
(``symidx/schemas/maps-1.json``, documented in ``docs/json.md``): single instructions,
``--all``, ``--computation``, both directions, ``--explain``, several files at once."""

from __future__ import annotations

import contextlib
import io
import json
from importlib import resources
from pathlib import Path

import pytest

from symidx.cli import main

jsonschema = pytest.importorskip("jsonschema")

DATA = Path(__file__).parent / "data"
MODULES = sorted((DATA / "hlo").glob("*.compiled.hlo")) + sorted((DATA / "flow").glob("*.hlo")) \
    + [DATA / "fusion" / "unsupported.hlo", DATA / "fusion" / "nested.hlo"]
VARIANTS = [
    [], ["--all"], ["--all", "--direction", "input-to-output"], ["--all", "--explain"],
    ["--computation", "ENTRY", "--output", "all"],
    ["--computation", "ENTRY", "--direction", "input-to-output", "--operand", "all"],
]


def schema() -> dict:
    text = resources.files("symidx").joinpath("schemas/maps-1.json").read_text()
    found = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(found)
    return found


SCHEMA = schema()


def maps_json(*argv: str) -> object:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["maps", *argv, "--format", "json"])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_every_output_validates(path: Path) -> None:
    for variant in VARIANTS:
        document = maps_json(str(path), *variant)
        jsonschema.validate(document, SCHEMA)
        assert document["schema"] == "symidx.maps/1"


def test_several_files_give_a_list_of_documents() -> None:
    first, second = MODULES[0], MODULES[1]
    documents = maps_json(str(first), str(second), "--all")
    assert [d["file"] for d in documents] == [str(first), str(second)]
    for document in documents:
        jsonschema.validate(document, SCHEMA)


def test_the_schema_rejects_what_it_should() -> None:
    document = maps_json(str(DATA / "flow" / "while_loop.hlo"), "--computation", "ENTRY")
    jsonschema.validate(document, SCHEMA)
    group = document["computations"][0]["operands"][1]
    bad = json.loads(json.dumps(document))
    bad["computations"][0]["operands"][1]["maps"] = ["a map as a string"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA)
    bad = json.loads(json.dumps(document))
    del bad["computations"][0]["operands"][1]["opaque"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA)
    assert group["opaque"] == "while loop (loop-carried)"
