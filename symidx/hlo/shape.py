"""HLO shapes and layouts as frozen value types, and their text syntax.

The syntax is the one XLA prints::

    f32[]                                   scalar
    bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)S(1)}
    (f32[10]{0}, s32[10])                   tuple (may nest, may be empty: ``()``)
    f32[<=10]                               bounded dynamic dimension (bound 10)
    f32[?]                                  unbounded dynamic dimension (size UNBOUNDED)
    b(f32[8,16]{1,0})                       a buffer holding an array (``Shape.is_buffer``)

Whitespace and comments (``/* */``, ``//``) may separate any two tokens, as in
``(f32[], f32[], /*index=2*/s32[])``.

A layout is ``{minor_to_major[:fields]}``. The fields this module reads are ``T(..)(..)``
(tiles; ``*`` in a tile is stored as :data:`COMBINE_DIMENSION`), ``L(n)`` (tail padding
alignment in elements), ``E(n)`` (element size in bits) and ``S(n)`` (memory space). Every
other field XLA may print (``D(..)`` dimension level types, ``#(..)`` index type, ``*(..)``
pointer type, ``SC(..)`` split configs, ``P(..)`` physical shape, ``M(n)`` dynamic-shape
metadata bytes, or anything newer) is kept verbatim in :attr:`HloLayout.extra` so that printing
gives the text back.

:func:`parse_shape` reads a whole string; :func:`parse_shape_at` reads one shape inside a
larger text (the HLO parser uses it so that errors point into the module text). Neither
recurses: tuples are read with an explicit stack bounded by :data:`MAX_NESTING`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from symidx._text import lazy_pattern, too_long
from symidx.errors import HloShapeError, ParseError
from symidx.hlo.lexer import describe, scan_balanced, skip, strip_comments

__all__ = [
    "COMBINE_DIMENSION",
    "ELEMENT_BIT_WIDTHS",
    "MAX_NESTING",
    "UNBOUNDED_SIZE",
    "integer_bounds",
    "HloLayout",
    "Shape",
    "ShapeLike",
    "Tile",
    "TupleShape",
    "can_start_shape",
    "parse_shape",
    "parse_shape_at",
    "plain_shape",
]

#: Bit width of every HLO element type, as XLA's ``primitive_util::BitWidth`` gives it
#: (``pred`` is stored in 8 bits; ``token`` and ``opaque`` have no data).
ELEMENT_BIT_WIDTHS: Mapping[str, int] = MappingProxyType({
    "pred": 8,
    "s1": 1, "s2": 2, "s4": 4, "s8": 8, "s16": 16, "s32": 32, "s64": 64,
    "u1": 1, "u2": 2, "u4": 4, "u8": 8, "u16": 16, "u32": 32, "u64": 64,
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64,
    "c64": 64, "c128": 128,
    "f8e5m2": 8, "f8e4m3": 8, "f8e4m3fn": 8, "f8e4m3b11fnuz": 8, "f8e5m2fnuz": 8,
    "f8e4m3fnuz": 8, "f8e3m4": 8, "f8e8m0fnu": 8,
    "f6e2m3fn": 6, "f6e3m2fn": 6, "f4e2m1fn": 4,
    "token": 0, "opaque": 0,
})

_INTEGER_TYPE = lazy_pattern(r"([su])([0-9]+)")


def integer_bounds(element_type: str) -> tuple[int, int] | None:
    """The least and the greatest value of an integer element type (``s8``: ``(-128,
    127)``, ``u4``: ``(0, 15)``); None for other types."""
    match = _INTEGER_TYPE.fullmatch(element_type)
    if match is None:
        return None
    bits = int(match.group(2))
    if match.group(1) == "u":
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1

#: The size stored for an unbounded dynamic dimension (``?``).
UNBOUNDED_SIZE = -1
#: The value stored for ``*`` in a tile (combine with the next more-minor dimension).
COMBINE_DIMENSION = -1
#: Deepest nesting of tuple shapes (and of literals, in the parser) accepted before a
#: :class:`ParseError`; protects against hostile input without recursion.
MAX_NESTING = 64

# Print order of layout fields, as XLA's Layout::Print emits them; unknown tags go last.
_FIELD_ORDER = {"D": 0, "T": 1, "L": 2, "#": 3, "*": 4, "E": 5, "S": 6, "SC": 7, "P": 8, "M": 9}


@dataclass(frozen=True, slots=True)
class Tile:
    """One tile of a tiled layout: ``T(8,128)`` is ``Tile((8, 128))``; ``*`` is -1."""

    dims: tuple[int, ...]

    def __str__(self) -> str:
        return "(" + ",".join("*" if d == COMBINE_DIMENSION else str(d) for d in self.dims) + ")"


@dataclass(frozen=True, slots=True)
class HloLayout:
    """An XLA layout: ``minor_to_major`` (fastest-varying dimension first) plus fields.

    ``extra`` holds the fields this module does not interpret, verbatim, each with its tag
    (e.g. ``"#(s32)"``, ``"SC(0:1)"``, ``"P(f32[4]{0})"``).
    """

    minor_to_major: tuple[int, ...]
    tiles: tuple[Tile, ...] = ()
    element_size_in_bits: int = 0
    memory_space: int = 0
    tail_padding_alignment_in_elements: int = 1
    extra: tuple[str, ...] = ()

    @classmethod
    def default(cls, rank: int) -> HloLayout:
        """The default (row-major) layout: ``minor_to_major = (rank-1, ..., 0)``."""
        return cls(tuple(range(rank - 1, -1, -1)))

    def __str__(self) -> str:
        fields: list[tuple[int, str]] = []
        if self.tiles:
            fields.append((_FIELD_ORDER["T"], "T" + "".join(str(t) for t in self.tiles)))
        if self.tail_padding_alignment_in_elements != 1:
            fields.append((_FIELD_ORDER["L"], f"L({self.tail_padding_alignment_in_elements})"))
        if self.element_size_in_bits != 0:
            fields.append((_FIELD_ORDER["E"], f"E({self.element_size_in_bits})"))
        if self.memory_space != 0:
            fields.append((_FIELD_ORDER["S"], f"S({self.memory_space})"))
        for raw in self.extra:
            tag = _TAG_RE.match(raw)
            fields.append((_FIELD_ORDER.get(tag.group() if tag else "", len(_FIELD_ORDER)), raw))
        fields.sort(key=lambda item: item[0])  # stable: extras keep their order
        body = ",".join(str(d) for d in self.minor_to_major)
        if fields:
            body += ":" + "".join(text for _, text in fields)
        return "{" + body + "}"


@dataclass(frozen=True, slots=True)
class Shape:
    """An array shape. ``dynamic[i]`` marks a dynamic dimension whose ``dims[i]`` is its
    bound (``<=n``) or :data:`UNBOUNDED_SIZE` (``?``). ``dynamic`` defaults to all False.
    ``layout`` is None when the text gives none (use :attr:`layout_or_default`).
    ``is_buffer`` marks XLA's buffer shape ``b(f32[8,16])``: a buffer holding that array."""

    element_type: str
    dims: tuple[int, ...] = ()
    dynamic: tuple[bool, ...] = ()
    layout: HloLayout | None = None
    is_buffer: bool = False

    def __post_init__(self) -> None:
        if self.element_type not in ELEMENT_BIT_WIDTHS:
            raise HloShapeError(f"unknown element type {self.element_type!r}")
        if not self.dynamic:
            object.__setattr__(self, "dynamic", (False,) * len(self.dims))
        if len(self.dynamic) != len(self.dims):
            raise HloShapeError(f"{len(self.dims)} dims but {len(self.dynamic)} dynamic flags")
        for size, is_dynamic in zip(self.dims, self.dynamic, strict=True):
            if size < 0 and not (is_dynamic and size == UNBOUNDED_SIZE):
                raise HloShapeError(f"negative dimension size {size}")
        if self.layout is not None and self.layout.minor_to_major and (
            sorted(self.layout.minor_to_major) != list(range(len(self.dims)))
        ):
            raise HloShapeError(
                f"minor_to_major {list(self.layout.minor_to_major)} is not a permutation "
                f"of the {len(self.dims)} dimensions"
            )

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def bit_width(self) -> int:
        """Bits per element of the element type (see :data:`ELEMENT_BIT_WIDTHS`)."""
        return ELEMENT_BIT_WIDTHS[self.element_type]

    @property
    def num_elements(self) -> int:
        """Product of the dimension sizes (bounds, for bounded dynamic dimensions)."""
        if UNBOUNDED_SIZE in self.dims:
            raise HloShapeError(f"{self} has an unbounded dimension")
        count = 1
        for size in self.dims:
            count *= size
        return count

    @property
    def layout_or_default(self) -> HloLayout:
        """The layout, or :meth:`HloLayout.default` when the shape has none."""
        return self.layout if self.layout is not None else HloLayout.default(self.rank)

    def __str__(self) -> str:
        dims = ",".join(
            ("?" if size == UNBOUNDED_SIZE else f"<={size}") if is_dynamic else str(size)
            for size, is_dynamic in zip(self.dims, self.dynamic, strict=True)
        )
        layout = "" if self.layout is None else str(self.layout)
        text = f"{self.element_type}[{dims}]{layout}"
        return f"b({text})" if self.is_buffer else text

    def _repr_html_(self) -> str:
        # a notebook shows the HLO text (the picture: symidx.layout.pictures.xla_picture)
        import html  # notebooks only

        return f"<code>{html.escape(str(self))}</code>"


@dataclass(frozen=True, slots=True)
class TupleShape:
    """A tuple shape; elements are shapes or tuple shapes.

    A tuple keeps the leaf offsets of its elements (how many array leaves come before each
    element), computed once when it is built, and its hash, computed once when first asked
    (a parsed tuple may never be): a training step's loop state is a tuple of hundreds of
    elements, looked up in caches and indexed by leaf millions of times.
    """

    elements: tuple[ShapeLike, ...] = field(default=())
    _hash: int | None = field(init=False, repr=False, compare=False)  # None until asked
    _offsets: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        offsets = [0]
        for element in self.elements:
            count = element.leaf_count if isinstance(element, TupleShape) else 1
            offsets.append(offsets[-1] + count)
        object.__setattr__(self, "_offsets", tuple(offsets))
        object.__setattr__(self, "_hash", None)

    def __hash__(self) -> int:
        value = self._hash
        if value is None:  # the first time
            value = hash(self.elements)
            object.__setattr__(self, "_hash", value)
        return value

    def __reduce__(self) -> tuple[type[TupleShape], tuple[tuple[ShapeLike, ...]]]:
        # rebuilt from its elements: a string's hash differs between processes
        return (TupleShape, (self.elements,))

    @property
    def leaf_count(self) -> int:
        """How many array leaves the tuple has, at any depth."""
        return self._offsets[-1]

    @property
    def leaf_offsets(self) -> tuple[int, ...]:
        """Entry ``i``: the number of array leaves before element ``i``; one more entry at
        the end, the leaf count."""
        return self._offsets

    def __str__(self) -> str:
        return "(" + ", ".join(str(e) for e in self.elements) + ")"

    def _repr_html_(self) -> str:
        import html  # notebooks only

        return f"<code>{html.escape(str(self))}</code>"


ShapeLike = Shape | TupleShape

_INT_RE = lazy_pattern(r"-?\d+")
_ELEMENT_RE = lazy_pattern(r"[a-z][a-z0-9]*")
_TAG_RE = lazy_pattern(r"[A-Za-z#*]+")


def can_start_shape(text: str, pos: int, source: str = "") -> bool:
    """Whether a shape starts at ``pos``: ``(`` (a tuple), a lower-case word followed by
    ``[`` (an array; the word should be an element type), or ``b(`` (a buffer). Nowhere else
    in HLO does a word meet a ``[``."""
    if text.startswith("(", pos):
        return True
    match = _ELEMENT_RE.match(text, pos)
    if match is None:
        return False
    after = skip(text, match.end(), source)
    return text.startswith("[", after) or (match.group() == "b" and text.startswith("(", after))


# An array in its plainest spelling, ``f32[8,128]{1,0}`` (groups: element type, dims, layout),
# and a tuple of such, maybe with ``/*index=5*/`` comments (group: the elements).
_PLAIN_ARRAY_RE = lazy_pattern(r"([a-z][a-z0-9]*)\[([0-9,]{0,200})\](?:\{([0-9,]{0,200})\})?")
_PLAIN_ELEMENT = r"(?:/\*[^*]*\*/)?[a-z][a-z0-9]*\[[0-9,]{0,200}\](?:\{[0-9,]{0,200}\})?"
_PLAIN_TUPLE_RE = lazy_pattern(r"\(((?:" + _PLAIN_ELEMENT + r"(?:, ?" + _PLAIN_ELEMENT
                               + r")*)?)\)")
_PLAIN_ELEMENT_RE = lazy_pattern(r"(?:/\*[^*]*\*/)?([a-z][a-z0-9]*\[[0-9,]*\](?:\{[0-9,]*\})?)")


def plain_shape(text: str, known: dict[str, ShapeLike] | None = None) -> ShapeLike | None:
    """The shape ``text`` spells, when it is an array in its plainest spelling
    (``f32[8,128]{1,0}``: no blank, no dynamic dimension, no layout field) or a tuple of
    such, and is one :func:`parse_shape_at` accepts -- as it reads it when no ``{`` follows;
    None for anything else (read it with :func:`parse_shape_at`). Builds the shape without
    going token by token.

    ``known``: shapes already read, by their text (a reader's memo, holding only what
    :func:`parse_shape_at` reads each text as): a tuple's elements are looked up there, and
    those built are added."""
    if text.startswith("("):
        whole = _PLAIN_TUPLE_RE.fullmatch(text)
        if whole is None:
            return None
        elements = []
        for element in _PLAIN_ELEMENT_RE.findall(whole.group(1)):
            array = None if known is None else known.get(element)
            if array is None:
                array = plain_shape(element)
                if array is None:
                    return None
                if known is not None:
                    known[element] = array
            elements.append(array)
        return TupleShape(tuple(elements))
    match = _PLAIN_ARRAY_RE.fullmatch(text)
    if match is None:
        return None
    element_type, dims_text, layout_text = match.groups()
    if element_type not in ELEMENT_BIT_WIDTHS:
        return None
    if ",," in text or ",]" in text or "[," in text or ",}" in text or "{," in text:
        return None  # a missing number: the token reader says where
    dims = tuple(map(int, dims_text.split(","))) if dims_text else ()
    layout = None
    if layout_text is not None:
        minor_to_major = tuple(map(int, layout_text.split(","))) if layout_text else ()
        if minor_to_major and sorted(minor_to_major) != list(range(len(dims))):
            return None
        layout = HloLayout(minor_to_major)
    # Shape(element_type, dims, (False,) * len(dims), layout), without checking again what is
    # checked above (a known element type, sizes >= 0, a permutation for the layout).
    shape = _new(Shape)
    _set(shape, "element_type", element_type)
    _set(shape, "dims", dims)
    _set(shape, "dynamic", (False,) * len(dims))
    _set(shape, "layout", layout)
    _set(shape, "is_buffer", False)
    return shape


_new = object.__new__
_set = object.__setattr__  # as a frozen dataclass's own __init__ sets its fields


def parse_shape(text: str) -> ShapeLike:
    """Parse one shape, e.g. ``f32[3,5]{1,0:T(2,2)}`` or ``(f32[10], s32[])``.

    Raises :class:`ParseError` (with line/column) for anything else, including trailing text.
    """
    shape, end = parse_shape_at(text, 0)
    end = skip(text, end)
    if end != len(text):
        raise ParseError(f"unexpected {describe(text, end)} after the shape", text, end)
    return shape


def parse_shape_at(text: str, pos: int, source: str = "") -> tuple[ShapeLike, int]:
    """Read one shape starting at ``pos`` (leading whitespace and comments allowed).

    Returns the shape and the offset just past it. Whitespace and comments may separate any
    two tokens. As in XLA, a ``{`` after the dimensions opens a layout only if the next
    token is an integer or ``:`` -- so that in a computation signature ``-> f32[2] {`` the
    brace opens the body, not a layout; ``{}`` is an empty layout when it follows ``]``
    directly, or follows a scalar.
    """
    stack: list[list[ShapeLike]] = []
    while True:
        pos = skip(text, pos, source)
        if text.startswith("(", pos):
            if len(stack) >= MAX_NESTING:
                raise ParseError(
                    f"tuple shapes nested deeper than {MAX_NESTING}", text, pos, source=source
                )
            stack.append([])
            pos = skip(text, pos + 1, source)
            if not text.startswith(")", pos):
                continue
            pos += 1
            value: ShapeLike = TupleShape(tuple(stack.pop()))
        else:
            value, pos = _read_array_or_buffer(text, pos, source)
        # Attach the finished value to the enclosing tuples, closing those that end here.
        while stack:
            stack[-1].append(value)
            pos = skip(text, pos, source)
            if text.startswith(",", pos):
                pos += 1
                break
            if text.startswith(")", pos):
                pos += 1
                value = TupleShape(tuple(stack.pop()))
                continue
            raise ParseError(
                f"expected ',' or ')' in tuple shape, found {describe(text, pos)}",
                text, pos, source=source,
            )
        else:
            return value, pos


def _read_int(text: str, pos: int, what: str, source: str) -> tuple[int, int]:
    match = _INT_RE.match(text, pos)
    if match is None:
        raise ParseError(f"expected {what}, found {describe(text, pos)}", text, pos, source=source)
    reason = too_long(match.group())
    if reason is not None:
        raise ParseError(f"{what}: {reason}", text, pos, source=source)
    return int(match.group()), match.end()


def _expect(text: str, pos: int, token: str, what: str, source: str) -> int:
    """The offset past ``token`` at ``pos`` (after whitespace and comments), or ParseError."""
    pos = skip(text, pos, source)
    if not text.startswith(token, pos):
        raise ParseError(f"expected {token!r} {what}, found {describe(text, pos)}", text, pos,
                         source=source)
    return pos + len(token)


def _read_array_or_buffer(text: str, pos: int, source: str) -> tuple[Shape, int]:
    """An array shape, or a buffer ``b(array)``, at ``pos``."""
    match = _ELEMENT_RE.match(text, pos)
    if match is None or match.group() != "b" or not text.startswith(
            "(", after := skip(text, match.end(), source)):
        return _read_array(text, pos, source)
    shape, end = _read_array(text, skip(text, after + 1, source), source)
    end = _expect(text, end, ")", "to close the buffer shape", source)
    return Shape(shape.element_type, shape.dims, shape.dynamic, shape.layout, is_buffer=True), end


def _read_array(text: str, pos: int, source: str) -> tuple[Shape, int]:
    match = _ELEMENT_RE.match(text, pos)
    bracket = skip(text, match.end(), source) if match else pos
    if match is None or not text.startswith("[", bracket):
        raise ParseError(f"expected a shape, found {describe(text, pos)}", text, pos, source=source)
    element_type = match.group()
    if element_type not in ELEMENT_BIT_WIDTHS:
        raise ParseError(f"unknown element type {element_type!r}", text, pos, source=source)
    dims: list[int] = []
    dynamic: list[bool] = []
    pos = skip(text, bracket + 1, source)
    if text.startswith("]", pos):
        pos += 1
    else:
        while True:
            pos = skip(text, pos, source)
            if text.startswith("?", pos):
                dims.append(UNBOUNDED_SIZE)
                dynamic.append(True)
                pos += 1
            else:
                bounded = text.startswith("<=", pos)
                if bounded:
                    pos = skip(text, pos + 2, source)
                size_pos = pos
                size, pos = _read_int(text, pos, "a dimension size", source)
                if size < 0:
                    raise ParseError(
                        f"negative dimension size {size}", text, size_pos, source=source
                    )
                dims.append(size)
                dynamic.append(bounded)
            pos = skip(text, pos, source)
            if text.startswith(",", pos):
                pos += 1
            elif text.startswith("]", pos):
                pos += 1
                break
            else:
                raise ParseError(
                    f"expected ',' or ']' in dimensions, found {describe(text, pos)}",
                    text, pos, source=source,
                )
    layout = None
    brace = skip(text, pos, source)
    if text.startswith("{", brace) and _opens_layout(text, brace, brace == pos or not dims,
                                                      source):
        layout, pos = _read_layout(text, brace, source)
        if layout.minor_to_major and sorted(layout.minor_to_major) != list(range(len(dims))):
            raise ParseError(
                f"layout {{{','.join(map(str, layout.minor_to_major))}}} is not a permutation "
                f"of the {len(dims)} dimensions of {element_type}[...]",
                text, brace, source=source,
            )
    return Shape(element_type, tuple(dims), tuple(dynamic), layout), pos


def _opens_layout(text: str, brace: int, empty_ok: bool, source: str) -> bool:
    """Whether the ``{`` at ``brace`` opens a layout: the next token is an integer or ``:``
    (XLA's rule), or -- when ``empty_ok`` -- ``}`` (the empty layout this module prints,
    read when written right after the dimensions or after a scalar)."""
    after = skip(text, brace + 1, source)
    if after >= len(text):
        return False
    ch = text[after]
    return (ch.isdigit() or ch == ":" or (ch == "-" and text[after + 1: after + 2].isdigit())
            or (ch == "}" and empty_ok))


def _read_layout(text: str, pos: int, source: str) -> tuple[HloLayout, int]:
    pos = skip(text, pos + 1, source)  # past '{'
    minor_to_major: list[int] = []
    while pos < len(text) and text[pos] not in ":}":
        value, pos = _read_int(text, pos, "a dimension number in the layout", source)
        minor_to_major.append(value)
        pos = skip(text, pos, source)
        if text.startswith(",", pos):
            pos = skip(text, pos + 1, source)
        elif pos < len(text) and text[pos] not in ":}":
            raise ParseError(
                f"expected ',', ':' or '}}' in layout, found {describe(text, pos)}",
                text, pos, source=source,
            )
    tiles: tuple[Tile, ...] = ()
    ints = {"L": 1, "E": 0, "S": 0}  # tail padding, element size, memory space (defaults)
    extra: list[str] = []
    if text.startswith(":", pos):
        pos += 1
        while True:
            pos = skip(text, pos, source)
            if text.startswith("}", pos) or pos >= len(text):
                break
            tag = _TAG_RE.match(text, pos)
            groups = skip(text, tag.end(), source) if tag else pos
            if tag is None or not text.startswith("(", groups):
                raise ParseError(
                    f"expected a layout field such as T(8,128), found {describe(text, pos)}",
                    text, pos, source=source,
                )
            name, pos = tag.group(), groups
            if name == "T":
                tiles, pos = _read_tiles(text, pos, source)
            elif name in ints:
                value, pos = _read_int(text, skip(text, pos + 1, source),
                                       f"an integer in {name}(..)", source)
                pos = _expect(text, pos, ")", f"to close {name}(..)", source)
                ints[name] = value
            else:
                pieces = [name]
                while text.startswith("(", pos):
                    end = scan_balanced(text, pos, source)
                    pieces.append(strip_comments(text[pos:end]))
                    pos = skip(text, end, source)
                extra.append("".join(pieces))
    if not text.startswith("}", pos):
        raise ParseError(f"expected '}}' to close the layout, found {describe(text, pos)}",
                         text, pos, source=source)
    layout = HloLayout(tuple(minor_to_major), tiles, element_size_in_bits=ints["E"],
                    memory_space=ints["S"], tail_padding_alignment_in_elements=ints["L"],
                    extra=tuple(extra))
    return layout, pos + 1


def _read_tiles(text: str, pos: int, source: str) -> tuple[tuple[Tile, ...], int]:
    """``(8,128)(2,1)...`` at ``pos`` (a ``(``); tiles may be separated by whitespace."""
    tiles: list[Tile] = []
    while text.startswith("(", pos):
        pos = skip(text, pos + 1, source)
        dims: list[int] = []
        while not text.startswith(")", pos):
            if text.startswith("*", pos):
                dims.append(COMBINE_DIMENSION)
                pos += 1
            else:
                value, pos = _read_int(text, pos, "a tile size or '*'", source)
                dims.append(value)
            pos = skip(text, pos, source)
            if text.startswith(",", pos):
                pos = skip(text, pos + 1, source)
            elif not text.startswith(")", pos):
                raise ParseError(f"expected ',' or ')' in tile, found {describe(text, pos)}",
                                 text, pos, source=source)
        tiles.append(Tile(tuple(dims)))
        end = pos + 1
        pos = skip(text, end, source)
        if not text.startswith("(", pos):
            pos = end
    return tuple(tiles), pos
