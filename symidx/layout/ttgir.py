"""Triton's layout text (TTGIR), read to the encodings of :mod:`symidx.layout.triton`.

Read: an attribute ``#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4],
warpsPerCTA = [4, 1], order = [1, 0]}>`` (and ``slice``, ``nvidia_mma``, ``amd_mfma``,
``dot_op``, ``linear``, ``swizzled_shared``, ``nvmma_shared``, ``shared_linear``), alone,
as an alias definition (``#blocked = #ttg.blocked<...>``), or inside the type that gives
the shape: ``tensor<32x64xf16, #ttg.blocked<...>>``, ``!ttg.memdesc<64x64xf16,
#ttg.nvmma_shared<...>, #ttg.shared_memory, mutable>``. A parent or an encoding may be an
alias (``#blocked``) defined in ``aliases`` -- :func:`aliases` collects them from a TTGIR
module's text. Errors are :class:`~symidx.errors.ParseError` s with the line and column.

>>> found = parse_ttgir("tensor<32x64xf16, #ttg.blocked<{sizePerThread = [1, 4], "
...                     "threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>>")
>>> found.shape, found.element_bits, found.encoding.to_linear(found.shape)(
...     register=1, lane=4, warp=0, block=0)
((32, 64), 16, (1, 1))
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from symidx._text import lazy_pattern, too_long
from symidx.errors import MapError, ParseError
from symidx.layout.linear import LinearLayout
from symidx.layout.triton import (
    AmdMfma,
    Blocked,
    DotOperand,
    Encoding,
    Linear,
    NvidiaMma,
    NVMMAShared,
    SharedLinear,
    Slice,
    SwizzledShared,
    cga_bases,
)

__all__ = ["Parsed", "aliases", "is_ttgir", "linear_layout", "parse_ttgir"]

#: Bits of the element types a TTGIR type names.
ELEMENT_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i1": 8, "i8": 8, "i16": 16,
                "i32": 32, "i64": 64, "f8E4M3FN": 8, "f8E5M2": 8, "f8E4M3FNUZ": 8,
                "f8E5M2FNUZ": 8, "tf32": 32}

_NAME = lazy_pattern(r"[A-Za-z_][\w.$-]*")
_TYPE = lazy_pattern(r"\s*(tensor|!ttg\.memdesc)\s*<")


@dataclass(frozen=True)
class Parsed:
    """What the text said: the encoding, and the shape and element size when a type gave
    them."""

    encoding: Encoding
    shape: tuple[int, ...] | None = None
    element_bits: int | None = None


def is_ttgir(text: str) -> bool:
    """Whether ``text`` looks like Triton's layout text (an attribute, alias or type)."""
    return bool(re.match(r"\s*(#|tensor\s*<|!ttg\.)", text))


def aliases(module_text: str) -> dict[str, str]:
    """The alias definitions (``#name = #ttg...<...>``, one a line) of a TTGIR module."""
    found = {}
    for line in module_text.splitlines():
        m = re.match(r"\s*#([\w.$-]+)\s*=\s*(#ttg\..*\S)\s*$", line)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def parse_ttgir(text: str, defined: Mapping[str, str] | None = None) -> Parsed:
    """Read an encoding, an alias definition or a ``tensor``/``!ttg.memdesc`` type."""
    reader = _Reader(text, dict(defined or {}))
    reader.space()
    m = re.match(r"#([\w.$-]+)\s*=\s*", text[reader.pos:])
    if m and not m.group(1).startswith("ttg."):
        reader.pos += m.end()
    found = reader.top()
    reader.space()
    if reader.pos != len(text):
        raise ParseError("unexpected text after the layout", text, reader.pos)
    return found


def linear_layout(text: str, shape: Sequence[int] | None = None,
                  defined: Mapping[str, str] | None = None) -> LinearLayout:
    """The linear layout Triton converts the layout text to: ``shape`` from the argument or
    from the type the text is (``tensor<32x64xf16, ...>``); a ``#ttg.linear`` without
    either takes the smallest shape holding its bases."""
    found = parse_ttgir(text, defined)
    if shape is None:
        shape = found.shape
    if shape is None:
        if isinstance(found.encoding, (Linear, SharedLinear)):
            ll = LinearLayout.create([(n, [list(b) for b in bs])
                                      for n, bs in found.encoding.bases],
                                     [f"dim{k}" for k in range(found.encoding.rank)],
                                     require_surjective=False)
            return ll
        raise MapError(f"{found.encoding.text()[:60]}...: a shape is needed (give one, or "
                       f"the tensor type)")
    return found.encoding.to_linear(shape)


class _Reader:
    def __init__(self, text: str, defined: dict[str, str]) -> None:
        self.text, self.pos, self.defined = text, 0, defined
        self.seen: list[str] = []

    def error(self, message: str, at: int | None = None) -> ParseError:
        return ParseError(message, self.text, self.pos if at is None else at)

    def space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, s: str) -> bool:
        self.space()
        return self.text.startswith(s, self.pos)

    def expect(self, s: str) -> None:
        if not self.peek(s):
            raise self.error(f"expected {s!r}")
        self.pos += len(s)

    def name(self) -> str:
        self.space()
        m = _NAME.match(self.text, self.pos)
        if m is None:
            raise self.error("expected a name")
        self.pos = m.end()
        return m.group(0)

    def integer(self) -> int:
        self.space()
        m = re.compile(r"-?\d+").match(self.text, self.pos)
        if m is None:
            raise self.error("expected an integer")
        reason = too_long(m.group(0).lstrip("-"))
        if reason is not None:
            raise self.error(reason)
        self.pos = m.end()
        return int(m.group(0))

    def top(self) -> Parsed:
        m = _TYPE.match(self.text, self.pos)
        if m is None:
            return Parsed(self.encoding())
        self.pos = m.end()
        self.space()
        dims_at = self.pos
        shape_text = re.compile(r"((?:\d+x)+)(\w+)").match(self.text, self.pos)
        if shape_text is None:
            raise self.error("expected a shape and element type, e.g. 32x64xf16")
        self.pos = shape_text.end()
        shape = tuple(int(d) for d in shape_text.group(1).split("x")[:-1])
        bits = ELEMENT_BITS.get(shape_text.group(2))
        if bits is None:
            raise self.error(f"unknown element type {shape_text.group(2)!r}",
                             dims_at + len(shape_text.group(1)))
        self.expect(",")
        encoding = self.encoding()
        depth = 1
        while depth:  # the rest of the type: memory space, mutability
            if self.pos >= len(self.text):
                raise self.error("expected '>' closing the type")
            c = self.text[self.pos]
            depth += (c == "<") - (c == ">")
            self.pos += 1
        return Parsed(encoding, shape, bits)

    def encoding(self) -> Encoding:
        self.space()
        at = self.pos
        if not self.peek("#"):
            raise self.error("expected a layout: '#ttg.NAME<{...}>' or an alias '#name'")
        self.pos += 1
        name = self.name()
        if not name.startswith("ttg."):
            return self.alias(name, at)
        kind = name[4:]
        self.expect("<")
        self.expect("{")
        fields = self.fields()
        extra: dict[str, Any] = {}
        if kind == "shared_linear":
            self.expect(",")
            key = self.name()
            if key != "alignment":
                raise self.error("expected 'alignment = N'")
            self.expect("=")
            extra["alignment"] = self.integer()
        self.expect(">")
        try:
            return _build(kind, fields, extra)
        except MapError as e:
            raise ParseError(str(e), self.text, at) from None
        except KeyError as e:
            raise ParseError(f"#ttg.{kind} needs the field {e.args[0]}", self.text,
                             at) from None

    def alias(self, name: str, at: int) -> Encoding:
        if name not in self.defined:
            raise self.error(f"#{name} is not defined (give the module's alias "
                             f"definitions)", at)
        if name in self.seen:
            raise self.error(f"#{name} is defined through itself", at)
        inner = _Reader(self.defined[name], self.defined)
        inner.seen = self.seen + [name]
        try:
            found = inner.encoding()
        except ParseError as e:
            raise ParseError(f"in #{name} = {self.defined[name][:60]}: {e.message}",
                             self.text, at) from None
        return found

    def fields(self) -> dict[str, tuple[Any, int]]:
        out: dict[str, tuple[Any, int]] = {}
        if self.peek("}"):
            self.pos += 1
            return out
        while True:
            self.space()
            at = self.pos
            key = self.name()
            if key in out:
                raise self.error(f"field {key!r} given twice", at)
            self.expect("=")
            self.space()
            out[key] = (self.value(), self.pos)
            if self.peek(","):
                self.pos += 1
                continue
            self.expect("}")
            return out

    def value(self) -> Any:
        self.space()
        if self.peek("["):
            self.pos += 1
            items: list[Any] = []
            if self.peek("]"):
                self.pos += 1
                return items
            while True:
                items.append(self.value())
                if self.peek(","):
                    self.pos += 1
                    continue
                self.expect("]")
                return items
        if self.peek("#"):
            return self.encoding()
        for word, value in (("true", True), ("false", False)):
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return value
        return self.integer()


def _ints(fields: dict[str, tuple[Any, int]], key: str) -> tuple[int, ...]:
    value = fields[key][0]
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool)
                                              for v in value):
        raise MapError(f"{key} is a list of integers")
    return tuple(value)


def _bases(value: Any, key: str) -> tuple[tuple[int, ...], ...]:
    if not isinstance(value, list) or not all(
            isinstance(b, list) and all(isinstance(v, int) and v >= 0 for v in b)
            for b in value):
        raise MapError(f"{key} is a list of bases, lists of non-negative integers")
    return tuple(tuple(b) for b in value)


def _cga(fields: dict[str, tuple[Any, int]]) -> tuple[tuple[int, ...], ...]:
    if "CGALayout" in fields:
        return _bases(fields["CGALayout"][0], "CGALayout")
    if "CTAsPerCGA" in fields:
        return cga_bases(_ints(fields, "CTAsPerCGA"), _ints(fields, "CTASplitNum"),
                         _ints(fields, "CTAOrder"))
    return ()


def _flag(fields: dict[str, tuple[Any, int]], key: str, default: bool = False) -> bool:
    value = fields[key][0] if key in fields else default
    if not isinstance(value, bool):
        raise MapError(f"{key} is true or false")
    return value


def _int(fields: dict[str, tuple[Any, int]], key: str) -> int:
    value = fields[key][0]
    if not isinstance(value, int) or isinstance(value, bool):
        raise MapError(f"{key} is an integer")
    return value


def _parent(fields: dict[str, tuple[Any, int]]) -> Encoding:
    value = fields["parent"][0]
    if not isinstance(value, Encoding):
        raise MapError("parent is a layout")
    return value


_KNOWN = ("blocked", "slice", "nvidia_mma", "amd_mfma", "dot_op", "linear", "swizzled_shared",
          "nvmma_shared", "shared_linear")


def _build(kind: str, fields: dict[str, tuple[Any, int]], extra: dict[str, Any]) -> Encoding:
    if kind == "blocked":
        return Blocked(_ints(fields, "sizePerThread"), _ints(fields, "threadsPerWarp"),
                       _ints(fields, "warpsPerCTA"), _ints(fields, "order"), _cga(fields))
    if kind == "slice":
        return Slice(_int(fields, "dim"), _parent(fields))
    if kind == "nvidia_mma":
        return NvidiaMma((_int(fields, "versionMajor"), _int(fields, "versionMinor")),
                         _ints(fields, "warpsPerCTA"), _ints(fields, "instrShape"),
                         _cga(fields))
    if kind == "amd_mfma":
        for key in ("tilesPerWarp",):
            if key in fields and any(v != 1 for v in _ints(fields, key)):
                raise MapError(f"amd_mfma with {key} other than 1 is not supported")
        if "elementBitWidth" in fields and _int(fields, "elementBitWidth") == 64:
            raise MapError("amd_mfma of 64-bit elements is not supported")
        return AmdMfma(_int(fields, "version"), _ints(fields, "warpsPerCTA"),
                       _ints(fields, "instrShape"), _flag(fields, "isTransposed"),
                       _cga(fields))
    if kind == "dot_op":
        return DotOperand(_int(fields, "opIdx"), _parent(fields), _int(fields, "kWidth"))
    if kind == "linear":
        return Linear(tuple((k, _bases(v, k)) for k, (v, _) in fields.items()))
    if kind == "shared_linear":
        return SharedLinear(tuple((k, _bases(v, k)) for k, (v, _) in fields.items()),
                            extra.get("alignment", 16))
    if kind == "swizzled_shared":
        return SwizzledShared(_int(fields, "vec"), _int(fields, "perPhase"),
                              _int(fields, "maxPhase"), _ints(fields, "order"), _cga(fields))
    if kind == "nvmma_shared":
        rank = _int(fields, "rank") if "rank" in fields else 2
        return NVMMAShared(_int(fields, "swizzlingByteWidth"), _int(fields, "elementBitWidth"),
                           _flag(fields, "transposed"), _flag(fields, "fp4Padded"), rank,
                           _cga(fields))
    raise MapError(f"#ttg.{kind} is not a layout symidx reads; it reads "
                   f"{', '.join('#ttg.' + k for k in _KNOWN)}")
