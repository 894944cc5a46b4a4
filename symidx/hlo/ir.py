"""The parsed form of HLO: :class:`HloModule`, :class:`HloComputation`,
:class:`HloInstruction` (what :func:`symidx.hlo.parse_hlo` returns).

An instruction keeps every attribute as raw text and, for the attributes the indexing
rules need, a typed field (:mod:`symidx.hlo.typed_fields` fills them); the ``attr_*``
accessors read the others, with errors located in the text the instruction came from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from symidx._text import lazy_pattern, too_long
from symidx.errors import NotFoundError, ParseError
from symidx.hlo.attributes import (
    ConvolutionDimensionNumbers,
    DotDimensionNumbers,
    GatherDimensionNumbers,
    PaddingDim,
    ScatterDimensionNumbers,
    SliceDim,
    WindowDim,
    clip,
    int_list,
)
from symidx.hlo.lexer import unquote
from symidx.hlo.literal import LiteralValue
from symidx.hlo.shape import ShapeLike

__all__ = ["HloComputation", "HloInstruction", "HloModule", "SourceText"]

_INT_FULL_RE = lazy_pattern(r"\s*-?\d+\s*")
_KV_RE = lazy_pattern(r'([A-Za-z_][\w.\-]*)=("(?:[^"\\]|\\.)*"|[^\s,{}"]+)')


@dataclass(eq=False, slots=True)
class SourceText:
    """The text an instruction came from, for located errors from the ``attr_*`` accessors."""

    text: str
    source: str


@dataclass(eq=False, slots=True, repr=False)
class HloInstruction:
    """One instruction. Identity-compared; ``operands`` are the operand instructions in
    order (the same instruction may appear twice)."""

    name: str
    opcode: str
    shape: ShapeLike
    line: int
    is_root: bool = False
    operands: list[HloInstruction] = field(default_factory=list)
    #: Every attribute as raw text with comments removed, e.g.
    #: ``{"dimensions": "{0,1}", "metadata": "{...}"}``.
    attributes: dict[str, str] = field(default_factory=dict)
    #: For ``parameter(N)``: N.
    parameter_number: int | None = None
    #: For ``constant(...)``: the text inside the parentheses (comments removed), and its
    #: value as nested tuples of bool/int/float/complex (by element type); None for an
    #: elided array (XLA's ``{...}``) and for a tuple-shaped constant.
    literal_text: str | None = None
    literal: LiteralValue | None = None
    #: Computations named by ``to_apply``, ``calls``, ``condition``, ``body``,
    #: ``branch_computations``, ... keyed by the attribute name (inline ``{...}``
    #: computations included).
    called_computations: dict[str, tuple[HloComputation, ...]] = field(default_factory=dict)
    control_predecessors: list[HloInstruction] = field(default_factory=list)
    dimensions: tuple[int, ...] | None = None
    slice: tuple[SliceDim, ...] | None = None
    padding: tuple[PaddingDim, ...] | None = None
    window: tuple[WindowDim, ...] | None = None
    dim_labels: ConvolutionDimensionNumbers | None = None
    dot_dimension_numbers: DotDimensionNumbers | None = None
    gather_dimension_numbers: GatherDimensionNumbers | None = None
    scatter_dimension_numbers: ScatterDimensionNumbers | None = None
    dynamic_slice_sizes: tuple[int, ...] | None = None
    #: ``slice_sizes=`` when it is a list of integers (a gather's; not a collective
    #: permute's list of lists).
    slice_sizes: tuple[int, ...] | None = None
    #: ``index=`` of get-tuple-element.
    tuple_index: int | None = None
    #: ``direction=`` of compare (``EQ``, ``LT``, ...).
    comparison_direction: str | None = None
    #: ``kind=`` of fusion (``kLoop``, ``kInput``, ``kOutput``, ``kCustom``).
    fusion_kind: str | None = None
    feature_group_count: int = 1
    batch_group_count: int = 1
    _offset: int = 0
    _attribute_offsets: dict[str, int] = field(default_factory=dict)
    _document: SourceText | None = None

    @property
    def operand_names(self) -> tuple[str, ...]:
        return tuple(op.name for op in self.operands)

    @property
    def document(self) -> SourceText | None:
        """The text the instruction was read from (None for one built in code)."""
        return self._document

    def offset_of(self, attribute: str | None = None) -> int:
        """Where in :attr:`document` the instruction starts, or its ``attribute`` (the
        instruction's start when it has no such attribute)."""
        if attribute:
            return self._attribute_offsets.get(attribute, self._offset)
        return self._offset

    def attr_str(self, key: str) -> str | None:
        """The raw value of ``key``, without surrounding quotes if quoted; None if absent."""
        raw = self.attributes.get(key)
        if raw is not None and len(raw) >= 2 and raw[0] == raw[-1] == '"':
            return unquote(raw[1:-1])
        return raw

    def attr_int(self, key: str, default: int | None = None) -> int | None:
        """``key=N`` as an int; ``default`` if absent; ParseError if malformed."""
        raw = self.attributes.get(key)
        if raw is None:
            return default
        if not _INT_FULL_RE.fullmatch(raw):
            raise self._attribute_error(key, f"expected an integer for {key}=, found {clip(raw)}")
        reason = too_long(raw)
        if reason is not None:
            raise self._attribute_error(key, f"{key}=: {reason}")
        return int(raw)

    def attr_int_list(self, key: str) -> tuple[int, ...] | None:
        """``key={1,2,3}`` as a tuple of ints; None if absent; ParseError if malformed."""
        raw = self.attributes.get(key)
        if raw is None:
            return None
        try:
            values = int_list(raw)
        except ValueError as err:
            raise self._attribute_error(key, f"{key}=: {err}") from None
        if values is None:
            raise self._attribute_error(key, f"expected a list like {{0,1}} for {key}=, "
                                             f"found {clip(raw)}")
        return values

    def attr_dict(self, key: str) -> dict[str, str]:
        """A ``{k=v k2="v 2"}`` attribute (``metadata``, ``frontend_attributes``) as a dict
        of strings, read tolerantly: pairs that are not ``k=v`` are skipped. Empty if absent."""
        raw = self.attributes.get(key, "")
        return {m.group(1): unquote(m.group(2)[1:-1]) if m.group(2).startswith('"')
                else m.group(2) for m in _KV_RE.finditer(raw)}

    def backend_config_json(self) -> object | None:
        """``backend_config`` decoded as JSON (from ``{...}`` or a quoted string), or None if
        absent or not valid JSON."""
        text = self.attr_str("backend_config")
        if not text:
            return None
        try:
            decoded: object = json.loads(text)
        except ValueError:
            return None
        return decoded

    def _attribute_error(self, key: str, message: str) -> ParseError:
        doc = self._document or SourceText("", "")
        return ParseError(message, doc.text, self._attribute_offsets.get(key, self._offset),
                          source=doc.source)

    def __repr__(self) -> str:
        if self.parameter_number is not None:
            operands = str(self.parameter_number)
        elif self.literal_text is not None:
            operands = self.literal_text if len(self.literal_text) <= 40 else "..."
        else:
            operands = ", ".join(self.operand_names)
        root = "ROOT " if self.is_root else ""
        return f"<HloInstruction {root}{self.name} = {self.shape} {self.opcode}({operands})>"


_new = object.__new__


def parsed_instruction(name: str, opcode: str, shape: ShapeLike, line: int, is_root: bool,
                       offset: int, document: SourceText, attributes: dict[str, str],
                       attribute_offsets: dict[str, int]) -> HloInstruction:
    """What ``HloInstruction(name, opcode, shape, line, is_root=is_root,
    attributes=attributes, _offset=offset, _attribute_offsets=attribute_offsets,
    _document=document)`` builds, without the generated ``__init__``'s keyword handling and
    default factories: the reader makes one per instruction of a module. Every field is
    stored here (a test checks it against the dataclass's own defaults)."""
    instr = _new(HloInstruction)
    instr.name = name
    instr.opcode = opcode
    instr.shape = shape
    instr.line = line
    instr.is_root = is_root
    instr.operands = []
    instr.attributes = attributes
    instr.parameter_number = None
    instr.literal_text = None
    instr.literal = None
    instr.called_computations = {}
    instr.control_predecessors = []
    instr.dimensions = None
    instr.slice = None
    instr.padding = None
    instr.window = None
    instr.dim_labels = None
    instr.dot_dimension_numbers = None
    instr.gather_dimension_numbers = None
    instr.scatter_dimension_numbers = None
    instr.dynamic_slice_sizes = None
    instr.slice_sizes = None
    instr.tuple_index = None
    instr.comparison_direction = None
    instr.fusion_kind = None
    instr.feature_group_count = 1
    instr.batch_group_count = 1
    instr._offset = offset
    instr._attribute_offsets = attribute_offsets
    instr._document = document
    return instr


@dataclass(eq=False, slots=True, repr=False)
class HloComputation:
    """A computation: instructions in text order, its root and its parameters."""

    name: str
    instructions: list[HloInstruction]
    root: HloInstruction
    #: Parameter instructions ordered by parameter number.
    parameters: list[HloInstruction]
    line: int
    is_entry: bool = False
    #: True if some fusion instruction names this computation in ``calls=``.
    is_fusion_computation: bool = False
    #: Attributes after the closing brace (e.g. ``execution_thread``), raw.
    attributes: dict[str, str] = field(default_factory=dict)
    #: Every instruction that calls this computation (through any attribute), with the
    #: computation holding it, in text order; filled in by the parser.
    callers: list[tuple[HloInstruction, HloComputation]] = field(default_factory=list)
    _by_name: dict[str, HloInstruction] = field(default_factory=dict)
    _offset: int = 0
    #: Which instructions hold the same value (:func:`symidx.hlo.same_value.value_numbering`
    #: fills it on first use).
    _same_value: object | None = None
    #: What the resolver of runtime values keeps of this computation, on the floor above
    #: (:func:`symidx.lowering.values.folded` fills it on first use: the values of its
    #: instructions known before the run); opaque to the hlo floor.
    resolver_memo: object | None = None

    def instruction(self, name: str) -> HloInstruction:
        """The instruction called ``name`` (a leading ``%`` is ignored);
        :class:`~symidx.errors.NotFoundError` (a KeyError) if none."""
        return _named(self._by_name, name, "instruction", f"computation {self.name!r}")

    def __repr__(self) -> str:
        return f"<HloComputation {self.name}: {len(self.instructions)} instructions>"


def parsed_computation(name: str, instructions: list[HloInstruction], root: HloInstruction,
                       parameters: list[HloInstruction], line: int, is_entry: bool,
                       by_name: dict[str, HloInstruction], offset: int) -> HloComputation:
    """What ``HloComputation(name, instructions, root, parameters, line, is_entry=is_entry,
    _by_name=by_name, _offset=offset)`` builds, every field stored directly (as
    :func:`parsed_instruction`; a test checks it against the dataclass's own defaults)."""
    comp = _new(HloComputation)
    comp.name = name
    comp.instructions = instructions
    comp.root = root
    comp.parameters = parameters
    comp.line = line
    comp.is_entry = is_entry
    comp.is_fusion_computation = False
    comp.attributes = {}
    comp.callers = []
    comp._by_name = by_name
    comp._offset = offset
    comp._same_value = None
    comp.resolver_memo = None
    return comp


@dataclass(eq=False, slots=True, repr=False)
class HloModule:
    """A parsed module. ``computations`` keeps text order."""

    name: str
    attributes: dict[str, str]
    computations: dict[str, HloComputation]
    entry: HloComputation
    #: The ``FileNames``, ``FunctionNames``, ``FileLocations``, ``StackFrames`` blocks, each
    #: as its raw entry lines.
    debug_info: dict[str, tuple[str, ...]] = field(default_factory=dict)
    source: str = ""

    def computation(self, name: str) -> HloComputation:
        """The computation called ``name`` (a leading ``%`` is ignored);
        :class:`~symidx.errors.NotFoundError` (a KeyError) if none."""
        return _named(self.computations, name, "computation", f"module {self.name!r}")

    def __repr__(self) -> str:
        return (f"<HloModule {self.name}: {len(self.computations)} computations, "
                f"entry {self.entry.name}>")


_T = TypeVar("_T")


def _named(table: Mapping[str, _T], name: str, kind: str, where: str) -> _T:
    """``table[name]``, a leading ``%`` ignored; :class:`NotFoundError` saying that no
    ``kind`` of that name is in ``where``."""
    key = name[1:] if name.startswith("%") else name
    try:
        return table[key]
    except KeyError:
        raise NotFoundError(f"no {kind} {key!r} in {where}") from None
