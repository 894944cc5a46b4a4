"""A fusion's tiling as its backend config states it (XLA's ``BlockLevelParameters``).

XLA writes the tiling a Triton fusion was given into the fusion's ``backend_config``::

    backend_config={"fusion_backend_config": {"kind": "__triton",
        "block_level_fusion_config": {"output_tiles": [{"sizes": ["1", "911"]}],
                                      "num_warps": "2", "num_stages": "1"}}}

and a dot's contracting tile into the dot's own (``backend_config={sizes:[64]}``). Both are
protobuf messages printed as JSON, often with bare keys (``kind: "..."``, ``sizes:[64]``),
which :func:`read_config` reads: JSON objects, arrays, strings, numbers, ``true``/``false``/
``null``, and keys that are bare identifiers. Nothing is evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from symidx.errors import ParseError, SymidxError

__all__ = ["BlockLevelParameters", "read_config", "block_level_parameters", "dot_block_k",
           "ConfigError"]


class ConfigError(SymidxError):
    """A backend config that is not the JSON-like text XLA prints."""


class _Reader:
    def __init__(self, text: str):
        self.text = text
        self.i = 0

    def fail(self, what: str) -> ConfigError:
        return ConfigError(f"backend_config, character {self.i + 1}: {what}")

    def ws(self) -> None:
        t, n = self.text, len(self.text)
        while self.i < n and t[self.i] in " \t\r\n,":
            self.i += 1

    def value(self) -> Any:
        self.ws()
        if self.i >= len(self.text):
            raise self.fail("unexpected end")
        c = self.text[self.i]
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c in "\"'":
            return self.string()
        return self.atom()

    def obj(self) -> dict[str, Any]:
        self.i += 1
        out: dict[str, Any] = {}
        while True:
            self.ws()
            if self.i >= len(self.text):
                raise self.fail("unclosed {")
            if self.text[self.i] == "}":
                self.i += 1
                return out
            key = self.string() if self.text[self.i] in "\"'" else self.word()
            self.ws()
            if self.i < len(self.text) and self.text[self.i] == ":":
                self.i += 1
            elif not (self.i < len(self.text) and self.text[self.i] in "{["):
                raise self.fail(f"expected ':' after key {key!r}")
            out[key] = self.value()

    def arr(self) -> list[Any]:
        self.i += 1
        out: list[Any] = []
        while True:
            self.ws()
            if self.i >= len(self.text):
                raise self.fail("unclosed [")
            if self.text[self.i] == "]":
                self.i += 1
                return out
            out.append(self.value())

    def string(self) -> str:
        quote = self.text[self.i]
        self.i += 1
        out = []
        while self.i < len(self.text):
            c = self.text[self.i]
            if c == "\\" and self.i + 1 < len(self.text):
                out.append(self.text[self.i + 1])
                self.i += 2
                continue
            if c == quote:
                self.i += 1
                return "".join(out)
            out.append(c)
            self.i += 1
        raise self.fail("unclosed string")

    def word(self) -> str:
        start = self.i
        while self.i < len(self.text) and (self.text[self.i].isalnum() or
                                           self.text[self.i] in "_-.+"):
            self.i += 1
        if self.i == start:
            raise self.fail(f"unexpected {self.text[self.i]!r}")
        return self.text[start:self.i]

    def atom(self) -> Any:
        w = self.word()
        if w in ("true", "false"):
            return w == "true"
        if w == "null":
            return None
        try:
            return int(w)
        except ValueError:
            pass
        try:
            return float(w)
        except ValueError:
            return w


def read_config(text: str) -> dict[str, Any]:
    """A backend config's text as a dict (see the module docstring)."""
    r = _Reader(text)
    v = r.value()
    r.ws()
    if r.i != len(text):
        raise r.fail("text after the value")
    if not isinstance(v, dict):
        raise ConfigError("backend_config is not an object")
    return v


@dataclass(frozen=True)
class BlockLevelParameters:
    """XLA's ``BlockLevelParameters``: the output tile of each root, warps, stages."""

    output_tile_sizes: tuple[tuple[int, ...], ...]
    num_warps: int = 1
    num_stages: int = 1
    num_ctas: int = 1
    is_tma_allowed: bool = False


def _int(v: Any, what: str) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: not an integer: {v!r}") from None


def _config(instr: Any) -> dict[str, Any] | None:
    """The instruction's backend config, read; a bad one is a :class:`ParseError` at the
    attribute in the module's text."""
    text = instr.attributes.get("backend_config") if hasattr(instr, "attributes") else None
    if not text:
        return None
    try:
        return read_config(text.strip())
    except ConfigError as e:
        doc = getattr(instr, "document", None)
        if doc is None:
            raise
        raise ParseError(f"{instr.name}: {e}", doc.text, instr.offset_of("backend_config"),
                         source=doc.source) from None


def block_level_parameters(instr: Any) -> BlockLevelParameters | None:
    """The ``block_level_fusion_config`` of a fusion instruction, or None when it has none."""
    cfg = _config(instr)
    if cfg is None:
        return None
    fb = cfg.get("fusion_backend_config")
    if not isinstance(fb, dict):
        return None
    blc = fb.get("block_level_fusion_config")
    if not isinstance(blc, dict):
        return None
    tiles = []
    for t in blc.get("output_tiles") or []:
        sizes = t.get("sizes", []) if isinstance(t, dict) else []
        tiles.append(tuple(_int(s, "output_tiles sizes") for s in sizes))
    # a stage count the config does not give is the proto's default, 0 (XLA's
    # FromBlockLevelFusionConfig copies it; the dot model then runs its loop unpipelined)
    tma = blc.get("is_tma_allowed", False)
    return BlockLevelParameters(tuple(tiles), _int(blc.get("num_warps", 1), "num_warps"),
                                _int(blc.get("num_stages", 0), "num_stages"),
                                _int(blc.get("num_ctas", 1), "num_ctas"),
                                tma is True or str(tma).lower() == "true")


def dot_block_k(instr: Any) -> int | None:
    """A dot's contracting tile from its backend config (``{sizes:[64]}``), or None."""
    cfg = _config(instr)
    if cfg is None:
        return None
    sizes = cfg.get("sizes")
    if isinstance(sizes, list) and sizes:
        return _int(sizes[0], "dot backend_config sizes")
    return None
