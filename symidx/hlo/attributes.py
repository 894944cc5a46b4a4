"""Attribute values of HLO instructions: where a value ends in the text, and the typed
readings of the attributes the indexing rules need.

A value is one of the forms XLA's parser accepts (``ParseAttributeHelper`` in
``xla/hlo/parser/hlo_parser.cc``): a single token (``-5``, ``kLoop``, ``%comp``,
``"a \\"quoted\\" string"``, ``0_1x2_3``, ``b01f_01io->b01f``), a bracketed group
(``{...}``, ``[...]``, ``(...)``) that may nest and hold anything (shardings, metadata,
lists of lists), or a run of those written without spaces (``mesh['a'=2]``,
``[2,4]<=[8]``). A ``backend_config`` in braces is read as XLA reads a JSON dict: only its
braces and double-quoted strings count. Three attributes take several tokens that may be spaced
apart: ``replica_groups`` (``{{0,1},{2,3}}``, the iota form ``[4,2]<=[2,4]T(1,0)``, or
``mesh[...] {...}``), a custom call's ``literal`` (``s32[2]{0} {1, 2}``, ``f32[] 0.1``,
``( ... )``) and ``outfeed_shape`` (a shape). The typed readers take the value's text with
its comments removed and raise ValueError with a message; the parser locates the error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from symidx._text import lazy_pattern, too_long
from symidx.errors import ParseError
from symidx.hlo.lexer import WORD_RE, end_of_string, scan_balanced, skip
from symidx.hlo.shape import parse_shape_at

__all__ = [
    "OWN_SCANNER_KEYS",
    "ConvolutionDimensionNumbers",
    "DotDimensionNumbers",
    "GatherDimensionNumbers",
    "PaddingDim",
    "ScatterDimensionNumbers",
    "SliceDim",
    "WindowDim",
    "clip",
    "dim_labels",
    "int_list",
    "padding",
    "scan_value",
    "slice_dims",
    "window",
]

# A run of characters that can neither end a value nor open a group, string or comment.
_CHAIN_CHUNK_RE = lazy_pattern(r"[^\s,(){}\[\]\"'/]+")
_JSON_CHUNK_RE = lazy_pattern(r'[^{}"]+')
_SCALAR_RE = lazy_pattern(r"-?[A-Za-z0-9_.+\-]+(?:\(0x[0-9a-fA-F]+\))?")
_INT_LIST_RE = lazy_pattern(r"\{\s*(?:-?\d+\s*(?:,\s*-?\d+\s*)*)?\}")
_INT_RE = lazy_pattern(r"-?\d+")
_SLICE_RE = lazy_pattern(
    r"\{\s*(?:\[\s*-?\d+\s*:\s*-?\d+\s*(?::\s*-?\d+\s*)?\]\s*"
    r"(?:,\s*\[\s*-?\d+\s*:\s*-?\d+\s*(?::\s*-?\d+\s*)?\]\s*)*)?\}"
)
_SLICE_ITEM_RE = lazy_pattern(r"\[\s*(-?\d+)\s*:\s*(-?\d+)\s*(?::\s*(-?\d+)\s*)?\]")
_PAD_DIM_RE = lazy_pattern(r"(-?\d+)_(-?\d+)(?:_(-?\d+))?")
# One ``key=value`` field of a window; blanks may follow the '=' (XLA reads ``size=`` as one
# token, then the value).
_WINDOW_FIELD_RE = lazy_pattern(r"\s*([A-Za-z_][A-Za-z0-9_]*)=\s*([^\s=]+)\s*")
_WINDOW_KEYS = frozenset({"size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal"})


# --------------------------------------------------------------------------- attribute types


@dataclass(frozen=True, slots=True)
class SliceDim:
    """One dimension of ``slice={[start:limit:stride], ...}`` (stride defaults to 1)."""

    start: int
    limit: int
    stride: int = 1


@dataclass(frozen=True, slots=True)
class PaddingDim:
    """One dimension of ``padding=lo_hi[_interior]x...``; ``low``/``high`` may be negative."""

    low: int
    high: int
    interior: int = 0


@dataclass(frozen=True, slots=True)
class WindowDim:
    """One dimension of ``window={size=.. stride=.. pad=lo_hi lhs_dilate=.. rhs_dilate=..
    rhs_reversal=..}``, with XLA's field names: ``lhs_dilate`` is ``base_dilation``,
    ``rhs_dilate`` is ``window_dilation``, ``rhs_reversal`` is ``window_reversal``."""

    size: int
    stride: int = 1
    padding_low: int = 0
    padding_high: int = 0
    base_dilation: int = 1
    window_dilation: int = 1
    window_reversal: bool = False


@dataclass(frozen=True, slots=True)
class DotDimensionNumbers:
    """``lhs_batch_dims``, ``rhs_batch_dims``, ``lhs_contracting_dims``,
    ``rhs_contracting_dims`` of a dot (each empty when absent)."""

    lhs_batch_dims: tuple[int, ...] = ()
    rhs_batch_dims: tuple[int, ...] = ()
    lhs_contracting_dims: tuple[int, ...] = ()
    rhs_contracting_dims: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ConvolutionDimensionNumbers:
    """``dim_labels=b01f_01io->b01f``: which dimension of the input (lhs), kernel (rhs) and
    output plays which role. ``*_spatial_dimensions[k]`` is the dimension labelled ``k``."""

    input_batch_dimension: int
    input_feature_dimension: int
    input_spatial_dimensions: tuple[int, ...]
    kernel_input_feature_dimension: int
    kernel_output_feature_dimension: int
    kernel_spatial_dimensions: tuple[int, ...]
    output_batch_dimension: int
    output_feature_dimension: int
    output_spatial_dimensions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GatherDimensionNumbers:
    """The dimension numbers of a gather (the slice sizes are ``instr.slice_sizes``)."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    index_vector_dim: int
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ScatterDimensionNumbers:
    """The dimension numbers of a scatter."""

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    index_vector_dim: int
    input_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


# --------------------------------------------------------------------------- where values end


def scan_value(text: str, pos: int, key: str, source: str = "") -> int:
    """The offset just past the value of attribute ``key`` that starts at ``pos``."""
    scanner = _SCANNERS.get(key, _scan_chain)
    return scanner(text, pos, source)


def _scan_chain(text: str, pos: int, source: str) -> int:
    """Tokens and groups written without spaces; stops at whitespace, a comment, a ',' or a
    closer outside any group."""
    n = len(text)
    while pos < n:
        match = _CHAIN_CHUNK_RE.match(text, pos)
        if match is not None:
            pos = match.end()
            continue
        ch = text[pos]
        if ch in "({[":
            pos = scan_balanced(text, pos, source)
        elif ch in "\"'":
            pos = end_of_string(text, pos, source)
        elif ch == "/" and text[pos + 1: pos + 2] not in ("*", "/"):
            pos += 1
        else:
            break
    return pos


def _then(text: str, pos: int, opener: str, source: str) -> int | None:
    """If the next token after ``pos`` is the bracket ``opener``, the offset past its group."""
    after = skip(text, pos, source)
    return scan_balanced(text, after, source) if text.startswith(opener, after) else None


def _scan_device_list(text: str, pos: int, source: str) -> int:
    """``replica_groups``: ``{{..},..}``, ``[a,b]<=[c,d]`` with an optional ``T(perm)``, or
    ``mesh[...]`` with an optional ``{axes}``; whitespace may separate the parts."""
    if text.startswith("[", pos):
        end = scan_balanced(text, pos, source)
        arrow = skip(text, end, source)
        if not text.startswith("<=", arrow):
            return end
        reshape = _then(text, arrow + 2, "[", source)
        if reshape is None:
            return _scan_chain(text, pos, source)
        letter = WORD_RE.match(text, skip(text, reshape, source))
        if letter is not None and letter.group() == "T":
            perm = _then(text, letter.end(), "(", source)
            if perm is not None:
                return perm
        return reshape
    word = WORD_RE.match(text, pos)
    if word is not None:
        axes = _then(text, word.end(), "[", source)
        if axes is not None:
            groups = _then(text, axes, "{", source)
            return axes if groups is None else groups
    return _scan_chain(text, pos, source)


def _scan_literal(text: str, pos: int, source: str) -> int:
    """A custom call's ``literal``: ``( shape literal, ... )`` or ``shape literal``."""
    if text.startswith("(", pos):
        return scan_balanced(text, pos, source)
    _, end = parse_shape_at(text, pos, source)
    value = skip(text, end, source)
    if value < len(text) and text[value] in "{(":
        return scan_balanced(text, value, source)
    scalar = _SCALAR_RE.match(text, value)
    return scalar.end() if scalar else end


def _scan_shape(text: str, pos: int, source: str) -> int:
    return parse_shape_at(text, pos, source)[1]


def _scan_json_dict(text: str, pos: int, source: str) -> int:
    """``backend_config``: a string, or a ``{...}`` read as XLA reads a JSON dict -- only
    braces count and only double-quoted strings are skipped (``{key: it's [1}`` is one)."""
    if not text.startswith("{", pos):
        return _scan_chain(text, pos, source)
    start, depth, n = pos, 0, len(text)
    while pos < n:
        match = _JSON_CHUNK_RE.match(text, pos)
        pos = match.end() if match else pos
        if pos >= n:
            break
        ch = text[pos]
        if ch == '"':
            pos = end_of_string(text, pos, source)
            continue
        depth += 1 if ch == "{" else -1
        pos += 1
        if depth == 0:
            return pos
    raise ParseError("'{' is never closed", text, start, source=source)


_SCANNERS: dict[str, Callable[[str, int, str], int]] = {
    "replica_groups": _scan_device_list,
    "literal": _scan_literal,
    "outfeed_shape": _scan_shape,
    "backend_config": _scan_json_dict,
}
#: The attributes whose values are not ended as a run of tokens and groups is.
OWN_SCANNER_KEYS = frozenset(_SCANNERS)


# --------------------------------------------------------------------------- typed readings

# The same few values (``{0}``, ``{1,0}``, a window) recur on thousands of instructions: each
# reading is remembered by its text (the results are immutable; a ValueError is not kept).
_MEMO = 4096


@lru_cache(maxsize=_MEMO)
def int_list(raw: str) -> tuple[int, ...] | None:
    """``{1, 2, 3}`` as a tuple of ints; None if ``raw`` is not such a list; ValueError
    (saying why) for an integer too long to read."""
    if not _INT_LIST_RE.fullmatch(raw):
        return None
    values = _INT_RE.findall(raw)
    for v in values:
        reason = too_long(v)
        if reason is not None:
            raise ValueError(reason)
    return tuple(int(v) for v in values)


@lru_cache(maxsize=_MEMO)
def slice_dims(raw: str) -> tuple[SliceDim, ...]:
    """``{[start:limit:stride], ...}``, one :class:`SliceDim` per dimension."""
    if not _SLICE_RE.fullmatch(raw):
        raise ValueError(f"expected slice={{[start:limit:stride], ...}}, found {clip(raw)}")
    return tuple(SliceDim(int(start), int(limit), int(stride) if stride else 1)
                 for start, limit, stride in _SLICE_ITEM_RE.findall(raw))


@lru_cache(maxsize=_MEMO)
def padding(raw: str) -> tuple[PaddingDim, ...]:
    """``lo_hi[_interior]x...``, one :class:`PaddingDim` per dimension; low and high may be
    negative."""
    dims: list[PaddingDim] = []
    for part in raw.split("x") if raw else []:
        match = _PAD_DIM_RE.fullmatch(part)
        if match is None:
            raise ValueError(f"expected padding=lo_hi[_interior]x..., found {clip(raw)}")
        low, high, interior = match.groups()
        dims.append(PaddingDim(int(low), int(high), int(interior or 0)))
    return tuple(dims)


@lru_cache(maxsize=_MEMO)
def window(raw: str) -> tuple[WindowDim, ...]:
    """``{size=3x3 stride=2x1 pad=0_1x1_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}``, one
    :class:`WindowDim` per dimension. Fields come in any order, separated by spaces; ``size``
    is required when any field is given; every field has as many dimensions as ``size``."""
    if not (raw.startswith("{") and raw.endswith("}")):
        raise ValueError(f"expected window={{size=...}}, found {clip(raw)}")
    fields: dict[str, list[str]] = {}
    pos, body = 0, raw[1:-1]
    while (item := _WINDOW_FIELD_RE.match(body, pos)) is not None and item.end() > pos:
        key, value = item.group(1), item.group(2)
        if key not in _WINDOW_KEYS or key in fields:
            raise ValueError(f"bad window field {item.group().strip()!r} in {clip(raw)}")
        fields[key] = value.split("x")
        pos = item.end()
    if body[pos:].strip():
        raise ValueError(f"bad window field {body[pos:].split()[0]!r} in {clip(raw)}")
    if fields and "size" not in fields:
        raise ValueError(f"window without size= in {clip(raw)}")
    rank = len(fields.get("size", []))
    for key, values in fields.items():
        if len(values) != rank:
            raise ValueError(f"window field {key}= has {len(values)} dimensions, size= has "
                             f"{rank}: {clip(raw)}")
    try:
        return tuple(_window_dim(fields, i) for i in range(rank))
    except ValueError:
        raise ValueError(f"bad number in window {clip(raw)}") from None


def _window_dim(fields: dict[str, list[str]], i: int) -> WindowDim:
    """Dimension ``i`` of a window given its fields split per dimension (ValueError if bad)."""
    low = high = 0
    if "pad" in fields:
        match = _PAD_DIM_RE.fullmatch(fields["pad"][i])
        if match is None or match.group(3) is not None:
            raise ValueError(fields["pad"][i])
        low, high = int(match.group(1)), int(match.group(2))
    reversal = fields.get("rhs_reversal", ["0"] * (i + 1))[i]
    if reversal not in ("0", "1"):
        raise ValueError(reversal)
    return WindowDim(
        size=int(fields["size"][i]),
        stride=int(fields["stride"][i]) if "stride" in fields else 1,
        padding_low=low,
        padding_high=high,
        base_dilation=int(fields["lhs_dilate"][i]) if "lhs_dilate" in fields else 1,
        window_dilation=int(fields["rhs_dilate"][i]) if "rhs_dilate" in fields else 1,
        window_reversal=reversal == "1",
    )


@lru_cache(maxsize=_MEMO)
def dim_labels(raw: str) -> ConvolutionDimensionNumbers | None:
    """``b01f_01io->b01f`` as :class:`ConvolutionDimensionNumbers`. None when the labels
    hold ``?`` (dimensions XLA leaves out of the numbers, as custom calls print them), which
    the class cannot represent."""
    lhs, sep1, rest = raw.partition("_")
    rhs, sep2, out = rest.partition("->")
    if sep1 and sep2 and "?" in raw and re.fullmatch(r"[0-9bfio?_>\-]+", raw):
        return None
    decoded: list[tuple[int, int, tuple[int, ...]]] = []
    for labels, (first, second) in zip((lhs, rhs, out), (("b", "f"), ("i", "o"), ("b", "f")),
                                       strict=True):
        spatial = sorted((c, i) for i, c in enumerate(labels) if c.isdigit())
        ok = (bool(sep1) and bool(sep2)
              and labels.count(first) == 1 and labels.count(second) == 1
              and len(spatial) == len(labels) - 2
              and [c for c, _ in spatial] == [str(k) for k in range(len(spatial))])
        if not ok or len(spatial) != len(lhs) - 2:
            raise ValueError(f"expected dim_labels like b01f_01io->b01f, found {clip(raw)}")
        decoded.append((labels.index(first), labels.index(second),
                        tuple(i for _, i in spatial)))
    (ib, iff, isp), (ki, ko, ksp), (ob, of, osp) = decoded
    return ConvolutionDimensionNumbers(ib, iff, isp, ki, ko, ksp, ob, of, osp)


def clip(raw: str, limit: int = 40) -> str:
    """``raw`` quoted for a message, shortened to ``limit`` characters."""
    return repr(raw if len(raw) <= limit else raw[: limit - 3] + "...")
