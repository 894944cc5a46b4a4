"""Where an instruction comes from in the user's program: its ``metadata``.

XLA keeps, per instruction, ``metadata={op_name="jit(f)/transpose" source_file="f.py"
source_line=12 ...}``; JAX 0.4.36 and later write ``stack_frame_id=N`` instead of the file
and line, pointing into the module's ``StackFrames`` table, whose frame names a
``FileLocations`` entry (file name and function name ids, line, column) of the
``FileNames`` and ``FunctionNames`` tables. :func:`source_of` reads both forms.

>>> from symidx.hlo import parse_hlo
>>> module = parse_hlo('''
... HloModule m
... FileNames
... 1 "model.py"
... FunctionNames
... 1 "f"
... FileLocations
... 1 {file_name_id=1 function_name_id=1 line=12 end_line=12 column=4 end_column=9}
... StackFrames
... 1 {file_location_id=1 parent_frame_id=0}
... ENTRY e {
...   p = f32[4] parameter(0), metadata={op_name="x"}
...   ROOT n = f32[4] negate(p), metadata={op_name="jit(f)/neg" stack_frame_id=1}
... }''')
>>> str(source_of(module.entry.root, module))
'jit(f)/neg (model.py:12)'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from symidx._text import lazy_pattern
from symidx.hlo.ir import HloInstruction, HloModule

__all__ = ["SourceLocation", "metadata_fields", "source_of"]

# key=value in a metadata attribute: a quoted string (with escapes) or a bare word.
_FIELD_RE = lazy_pattern(r'([A-Za-z_]\w*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,}]+))')
_ENTRY_RE = lazy_pattern(r'^(\d+)\s+(?:"((?:[^"\\]|\\.)*)"|\{(.*)\})\s*$', re.S)


@dataclass(frozen=True)
class SourceLocation:
    """An instruction's ``op_name`` and the file, line (and function) of the user's code
    that made it; any may be None when the metadata leaves it out."""

    op_name: str | None = None
    file: str | None = None
    line: int | None = None
    function: str | None = None

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file if self.line is None else f"{self.file}:{self.line}"
        if self.op_name and where:
            return f"{self.op_name} ({where})"
        return self.op_name or where

    def to_dict(self) -> dict[str, Any]:
        """As JSON: ``{"op_name", "file", "line"}`` (each may be null)."""
        return {"op_name": self.op_name, "file": self.file, "line": self.line}


def metadata_fields(text: str) -> dict[str, str]:
    """The fields of a raw ``metadata={...}`` attribute value (strings unescaped)."""
    out: dict[str, str] = {}
    for found in _FIELD_RE.finditer(text):
        quoted, bare = found.group(2), found.group(3)
        out[found.group(1)] = _unescape(quoted) if quoted is not None else bare
    return out


def source_of(instr: HloInstruction, module: HloModule | None = None
              ) -> SourceLocation | None:
    """Where ``instr`` comes from, by its metadata (``stack_frame_id`` is read in
    ``module``'s tables); None when it has none of op_name, file and line."""
    raw = instr.attributes.get("metadata")
    if not raw:
        return None
    fields = metadata_fields(raw)
    op_name = fields.get("op_name") or None
    file = fields.get("source_file") or None
    line = _int(fields.get("source_line"))
    function = None
    frame = _int(fields.get("stack_frame_id"))
    if frame and module is not None and (file is None or line is None):
        found = _tables(module).frame(frame)
        if found is not None:
            file, line, function = file or found[0], line or found[1], found[2]
    if op_name is None and file is None and line is None:
        return None
    return SourceLocation(op_name, file, line, function)


class _Tables:
    """A module's debug tables, read once."""

    def __init__(self, module: HloModule) -> None:
        info = module.debug_info
        self.files = {k: v for k, v in map(_entry, info.get("FileNames", ())) if k}
        self.functions = {k: v for k, v in map(_entry, info.get("FunctionNames", ())) if k}
        self.locations = {k: metadata_fields(v) for k, v in
                          map(_entry, info.get("FileLocations", ())) if k}
        self.frames = {k: metadata_fields(v) for k, v in
                       map(_entry, info.get("StackFrames", ())) if k}

    def frame(self, number: int) -> tuple[str | None, int | None, str | None] | None:
        frame = self.frames.get(number)
        if frame is None:
            return None
        location = self.locations.get(_int(frame.get("file_location_id")) or 0)
        if location is None:
            return None
        return (self.files.get(_int(location.get("file_name_id")) or 0),
                _int(location.get("line")),
                self.functions.get(_int(location.get("function_name_id")) or 0))


# The tables of the modules asked about last, by identity (the module is kept with them,
# so that its id is not reused while it is here).
_TABLES: dict[int, tuple[HloModule, _Tables]] = {}


def _tables(module: HloModule) -> _Tables:
    found = _TABLES.get(id(module))
    if found is not None and found[0] is module:
        return found[1]
    if len(_TABLES) >= 8:
        _TABLES.pop(next(iter(_TABLES)))
    tables = _Tables(module)
    _TABLES[id(module)] = (module, tables)
    return tables


def _entry(line: str) -> tuple[int, str]:
    """``N "string"`` or ``N {fields}`` -> (N, string or fields text); (0, '') otherwise."""
    found = _ENTRY_RE.match(line.strip())
    if found is None:
        return 0, ""
    quoted = found.group(2)
    return int(found.group(1)), _unescape(quoted) if quoted is not None else found.group(3)


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)
