"""The one writer of ``symidx tile`` documents (schema ``symidx.tiles/1``)."""

from __future__ import annotations

import json  # not at start-up: the command line imports this module
from typing import Any

SCHEMA = "symidx.tiles/1"


def emit(doc: dict[str, Any], fmt: str, text: str) -> None:
    """Print ``doc`` as JSON (with the schema) or ``text``."""
    if fmt == "json":
        print(json.dumps({"schema": SCHEMA, **doc}, indent=2))
    else:
        print(text)
