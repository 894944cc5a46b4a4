"""Parse HLO module text into :class:`HloModule`, :class:`HloComputation`, :class:`HloInstruction`.

Reads what XLA's parser reads (``xla/hlo/parser/hlo_parser.cc``): what XLA prints
(``hlo_module.ToString()``, ``jax.jit(f).lower(..).as_text("hlo")``,
``.compile().as_text()``) and the hand-written modules of XLA's tests::

    HloModule name, key=value, ...          optional header; attributes kept as raw text
    FileNames / FunctionNames /             debug tables of compiled JAX dumps: kept raw
    FileLocations / StackFrames
    [ENTRY] %name [(p: shape, ...) -> shape] {
      [ROOT] %name = [shape] opcode(operands), key=value, ...
    } [, execution_thread="..."]

or a single instruction (``add = f32[2] add(f32[2] x, f32[2] y)``), whose undefined
operands become parameters, as in XLA. Whitespace and comments (``/* */``, ``//``) may
separate any two tokens. Names may carry a leading ``%``; it is dropped.

* Operands may carry their shape (``add(f32[10] %a, %b)``), and may be instructions written
  inline (``reshape(f32[1,8] parameter(0))``, ``add(x, multiply(y, z))``): each becomes an
  instruction of its own, placed before its user, named as XLA names it
  (``parameter.anon``, ``multiply.anon.1``, ...) and unique in its computation.
* The shape may be omitted (``ROOT out = add(p0, p1)``) except for ``constant`` and
  ``parameter``: it is inferred by :func:`symidx.hlo.infer.infer_shape` once the operands
  and called computations are known.
* Computation attributes (``to_apply``, ``calls``, ...) name a computation or hold one
  inline: ``to_apply={ p = f32[] parameter(0) ... }``.
* Every attribute is kept as raw text in :attr:`HloInstruction.attributes` (comments
  removed); the ones the indexing rules need are also parsed into typed fields
  (``dimensions``, ``slice``, ``padding``, ``window``, ``dim_labels``,
  dot/gather/scatter dimension numbers, ``dynamic_slice_sizes``, ``slice_sizes``,
  ``index``, ``direction``, ``kind``, group counts, called computations, control
  predecessors); others can be read with the ``attr_*`` accessors. Unknown attributes and
  opcodes are never rejected. An attribute with one of the typed names must have that name's
  syntax (:mod:`symidx.hlo.attributes`). Constants are read as :mod:`symidx.hlo.literal`
  says.

Operands may be defined after their users (cycles are rejected). Shapes are immutable and
may be shared between instructions. The parser is hand-written over regular expressions;
nothing in the text is evaluated. It is linear in the text; only inline instructions and
inline computations recurse, at most :data:`~symidx.hlo.shape.MAX_NESTING` deep. Every
malformed input raises :class:`~symidx.errors.ParseError` with the line and column of the
offending token in the original text.

This module reads the module's structure (header, debug tables, computations, calls, the
shapes left out); :mod:`symidx.hlo.instructions` reads instructions, operands and
attributes over the token readers of :mod:`symidx.hlo.reader`;
:mod:`symidx.hlo.typed_fields` fills the typed fields; the result is the IR of
:mod:`symidx.hlo.ir`. On a long text, :mod:`symidx.hlo.plain` reads and builds a plain
computation in one loop; any other is read here.
"""

from __future__ import annotations

import re

from symidx._gc import long_lived
from symidx._text import lazy_pattern
from symidx.errors import HloShapeError, ParseError, expect_type
from symidx.hlo.attributes import (
    ConvolutionDimensionNumbers,
    DotDimensionNumbers,
    GatherDimensionNumbers,
    PaddingDim,
    ScatterDimensionNumbers,
    SliceDim,
    WindowDim,
)
from symidx.hlo.infer import infer_shape
from symidx.hlo.instructions import (
    ATTRIBUTES_END_RE,
    Inline,
    Operand,
    Pending,
    Ref,
)
from symidx.hlo.ir import HloComputation, HloInstruction, HloModule
from symidx.hlo.lexer import (
    BLANK_START,
    NAME_RE,
    describe,
    end_of_string,
    scan_balanced,
    skip,
    strip_comments,
)
from symidx.hlo.literal import LiteralValue
from symidx.hlo.mlir import looks_like_mlir, mlir_hint
from symidx.hlo.order import callees_first, find_cycle, operands_first, unique_name
from symidx.hlo.plain import ComputationReader
from symidx.hlo.reader import PLAIN_SHAPE, name_end
from symidx.hlo.shape import ShapeLike, can_start_shape
from symidx.hlo.validate import check_operand_counts, validate_module

__all__ = [
    "ConvolutionDimensionNumbers",
    "DotDimensionNumbers",
    "GatherDimensionNumbers",
    "HloComputation",
    "HloInstruction",
    "HloModule",
    "LiteralValue",
    "PaddingDim",
    "ScatterDimensionNumbers",
    "SliceDim",
    "WindowDim",
    "parse_hlo",
]

#: The start of an HloModuleProto in protobuf text format, which is not HLO text: its
#: ``hlo_module {`` after comment lines that start with ``#``.
# A parameter of a signature in its common spelling, ``name: shape`` then ',' or ')'
# (group: the shape's text).
_SIGNATURE_PARAMETER_RE = lazy_pattern(r"[ \t]*%?[A-Za-z_][A-Za-z0-9_.\-]*[ \t]*:[ \t]*("
                                       + PLAIN_SHAPE + r")(?=[ \t]*[,)])")
# A computation's start in its common spelling, ``[ENTRY] name`` before its signature or body
# (groups: ENTRY, the name).
_HEADER_RE = lazy_pattern(r"(ENTRY[ \t]+)?%?([A-Za-z_][A-Za-z0-9_.\-]*)(?=[ \t]*[({])")
# An entry of a debug table in its common spelling: blanks, the number, blanks, then a
# string on one line or a {...} without brackets, quotes or '/' inside (so without comments,
# and ending where the general reading's balanced scan ends it) (groups: the number, the
# value). Elsewhere the general reading decides.
_DEBUG_ENTRY = (r'[ \t\r\n]*(\d{1,20})[ \t]+("[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'
                r"""|\{[^{}()\[\]"'/]*\})""")
_DEBUG_ENTRY_RE = lazy_pattern(_DEBUG_ENTRY)
# A run of such entries, one after the other (built from the text: compiled on first use too).
_DEBUG_ENTRIES_RE = lazy_pattern(f"(?:{_DEBUG_ENTRY})+")
_PROTO_RE = lazy_pattern(r"(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*hlo_module[ \t]*\{")


def parse_hlo(text: str, source: str = "", *, validate: bool = True) -> HloModule:
    """Parse HLO module text (or a single instruction). ``source`` (e.g. a file name)
    prefixes error messages.

    Raises :class:`~symidx.errors.ParseError` with line and column for malformed text,
    undefined or duplicate names, cycles, calls to unknown computations, shapes that cannot
    be inferred and operand counts that do not fit the opcode (as XLA's parser); and, with
    ``validate``, :class:`~symidx.errors.HloValidationError` for what XLA's verifier rejects
    (see :mod:`symidx.hlo.validate`). ``validate=False`` accepts what XLA's parser accepts:
    an analysis then checks each instruction it goes through
    (:class:`symidx.fusion.Analysis`).
    """
    expect_type(text, str, "text", "parse_hlo")
    expect_type(source, str, "source", "parse_hlo")
    if looks_like_mlir(text):
        raise ParseError(mlir_hint(), text, len(text) - len(text.lstrip()), source=source)
    with long_lived():  # many long-lived allocations: young collections would only slow it
        module = _Parser(text, source).module()
        if validate:
            validate_module(module, parsed=True)
        else:
            check_operand_counts(module)
        return module


_DEBUG_BLOCKS = frozenset({"FileNames", "FunctionNames", "FileLocations", "StackFrames"})


class _Parser(ComputationReader):
    """Reads a module (or a single instruction): its computations, then resolves calls and
    infers the shapes left out."""

    def __init__(self, text: str, source: str) -> None:
        super().__init__(text, source)
        #: Computation name -> the names of the computations it calls (after resolve_calls).
        self.calls: dict[str, list[str]] = {}

    # -- module

    def module(self) -> HloModule:
        name = ""
        attributes: dict[str, str] = {}
        if self.word_here() == "HloModule":
            self.pos += len("HloModule")
            name, _ = self.name("a module name after 'HloModule'")
            attributes, _ = self.attributes(None)
        elif self.at_single_instruction():
            return self.single_instruction_module()
        debug_info: dict[str, tuple[str, ...]] = {}
        computations: dict[str, HloComputation] = {}
        top_level: list[tuple[HloComputation, list[Inline]]] = []
        entry: HloComputation | None = None
        text = self.text
        while self.skip() < len(text):
            if text[self.pos] != "%":  # (a name with its '%' never starts a debug table)
                word = self.word_here()
                after = skip(text, self.pos + len(word), self.source)
                if word in _DEBUG_BLOCKS and text[after: after + 1] not in ("{", "(", ":"):
                    self.pos += len(word)
                    debug_info[word] = self.debug_block(word)
                    continue
            start = self.pos
            first_inline = len(self.inline)
            comp = self.computation()
            if comp.name in computations:
                raise self.error(f"duplicate computation name {comp.name!r}", start)
            if comp.is_entry:
                if entry is not None:
                    raise self.error(f"second ENTRY computation {comp.name!r} "
                                     f"(the first is {entry.name!r})", start)
                entry = comp
            computations[comp.name] = comp
            top_level.append((comp, self.inline[first_inline:]))
        if not computations:
            what = f"module {name!r}" if name else "the text"
            raise self.error(f"{what} has no computations", len(self.text))
        if entry is None:
            entry = top_level[-1][0]
            entry.is_entry = True
        return self.finish(name, attributes, top_level, entry, debug_info)

    def finish(self, name: str, attributes: dict[str, str],
               top_level: list[tuple[HloComputation, list[Inline]]], entry: HloComputation,
               debug_info: dict[str, tuple[str, ...]]) -> HloModule:
        """Name the inline computations, resolve calls, infer the omitted shapes."""
        taken = {comp.name for comp, _ in top_level}
        computations: dict[str, HloComputation] = {}
        for comp, inline in top_level:
            for item in inline:  # XLA's order: a nested computation before its user
                item.computation.name = unique_name(f"{item.owner.name}.{item.key}", taken)
                computations[item.computation.name] = item.computation
            computations[comp.name] = comp
        self.resolve_calls(computations)
        self.infer_shapes(computations)
        return HloModule(name, attributes, computations, entry, debug_info, self.source)

    def debug_block(self, block: str) -> tuple[str, ...]:
        """The entries of a debug table: ``N "string"`` or ``N {key=value ...}``, each kept as
        ``N <value>`` with comments removed."""
        lines: list[str] = []
        text = self.text
        fast = None if self.one_match is None else _DEBUG_ENTRIES_RE.match
        while True:
            entries = None if fast is None else fast(text, self.pos)
            if entries is not None:  # what the general reading below gives, one match each
                lines += [f"{number} {value}" for number, value
                          in _DEBUG_ENTRY_RE.findall(text, self.pos, entries.end())]
                self.pos = entries.end()
                continue
            start = self.skip()
            number = re.match(r"\d+", self.text[start: start + 20])
            if number is None:
                return tuple(lines)
            self.pos = start + number.end()
            value = self.skip()
            if self.text[value: value + 1] in ('"', "'"):
                end = end_of_string(self.text, value, self.source)
            elif self.text.startswith("{", value):
                end = scan_balanced(self.text, value, self.source)
            else:
                raise self.error(f"expected a string or {{...}} after {number.group()} in "
                                 f"{block}, found {describe(self.text, value)}", value)
            lines.append(f"{number.group()} {strip_comments(self.text[value:end])}")
            self.pos = end

    def resolve_calls(self, computations: dict[str, HloComputation]) -> None:
        calls: dict[str, list[str]] = {name: [] for name in computations}
        for item in self.call_sites:
            instr = item.instr
            assert item.caller is not None
            caller = item.caller.name
            for key, refs in item.computations:
                called: list[HloComputation] = []
                for ref in refs:
                    target = ref if isinstance(ref, HloComputation) else self.called(
                        computations, ref, key, instr)
                    called.append(target)
                    calls[caller].append(target.name)
                    target.callers.append((instr, item.caller))
                    if key == "calls" and instr.opcode == "fusion":
                        target.is_fusion_computation = True
                instr.called_computations[key] = tuple(called)
        cycle = find_cycle(list(computations), calls)
        if cycle is not None:
            comp = computations[cycle]
            raise self.error(f"computation {cycle!r} calls itself (directly or through "
                             f"other computations)", comp._offset)
        self.calls = calls

    def called(self, computations: dict[str, HloComputation], ref: Ref, key: str,
               instr: HloInstruction) -> HloComputation:
        target = computations.get(ref[0])
        if target is None:
            raise self.error(f"unknown computation {ref[0]!r} in {key}= of {instr.name!r}",
                             ref[1])
        return target

    # -- shape inference

    def infer_shapes(self, computations: dict[str, HloComputation]) -> None:
        """Give every instruction written without a shape its inferred shape: callees before
        callers, operands before users."""
        if not self.unshaped:
            return
        unshaped = {id(instr) for instr in self.unshaped}
        for name in callees_first(list(computations), self.calls):
            comp = computations[name]
            if any(id(instr) in unshaped for instr in comp.instructions):
                for instr in operands_first(comp.instructions):
                    if id(instr) in unshaped:
                        instr.shape = self.inferred_shape(instr)

    def inferred_shape(self, instr: HloInstruction) -> ShapeLike:
        """The shape :func:`symidx.hlo.infer.infer_shape` gives ``instr``, or a ParseError at
        the instruction."""
        try:
            return infer_shape(instr)
        except ParseError:
            raise  # a malformed attribute, already located
        except (HloShapeError, ValueError) as err:
            raise self.error(f"cannot infer the shape of {instr.opcode} {instr.name!r} (write "
                             f"it out): {err}", instr._offset) from None

    # -- a single instruction

    def at_single_instruction(self) -> bool:
        """Whether the text is one instruction rather than computations: it starts with a
        shape, ``ROOT``, or a name followed by ``=``."""
        start = self.skip()
        if can_start_shape(self.text, start, self.source):
            return True
        match = NAME_RE.match(self.text, start)
        if match is None:
            return False
        return match.group() == "ROOT" or self.text.startswith(
            "=", skip(self.text, name_end(self.text, match), self.source))

    def single_instruction_module(self) -> HloModule:
        """A module of one computation holding the instruction; its undefined operands become
        parameters (numbered in text order), as XLA's ``ParseSingleInstruction`` does."""
        self.single = True
        start = self.skip()
        pendings: list[Pending] = []
        if can_start_shape(self.text, start, self.source):
            self.rhs("", start, pendings, is_root=True)
        else:
            self.instruction(pendings)
        if self.skip() < len(self.text):
            raise self.error(f"expected the end of the text after a single instruction, found "
                             f"{describe(self.text, self.pos)}", self.pos)
        comp = self.build_computation("entry", start, self.line_of(start), True, pendings)
        return self.finish("", {}, [(comp, self.inline)], comp, {})

    # -- computations

    def computation(self) -> HloComputation:
        start = self.skip()
        line = self.line_of(start)
        comp = self.plain_computation_at(start, line) or self.general_computation(start, line)
        end = None if self.one_match is None else ATTRIBUTES_END_RE.match(self.text, self.pos)
        if end is not None:  # blanks, then no ',' nor comment: no attributes, as below
            self.pos = end.end()
        else:
            comp.attributes, _ = self.attributes(None)
        return comp

    def general_computation(self, start: int, line: int) -> HloComputation:
        """The computation at ``start`` (on ``line``), up to its ``}``, token by token where
        one match does not read it."""
        head = None if self.one_match is None else _HEADER_RE.match(self.text, start)
        if head is not None and (head.group(1) is not None or head.group(2) != "ENTRY"):
            is_entry, name = head.group(1) is not None, head.group(2)  # as read below
            self.pos = head.end()
        else:
            is_entry = self.word_here() == "ENTRY"
            if is_entry:
                self.pos += len("ENTRY")
            try:
                name, _ = self.name("a computation name (or 'HloModule', 'ENTRY')")
            except ParseError:
                if _PROTO_RE.match(self.text, start):
                    raise self.error("this is an HloModuleProto in protobuf text format "
                                     "('hlo_module { ... }'), not HLO text: symidx reads HLO "
                                     "text, as XLA prints it (--xla_dump_hlo_as_text)",
                                     start) from None
                raise
        ch = self.text[self.pos: self.pos + 1]
        if (ch if ch not in BLANK_START else self.peek()) == "(":
            self.signature(name)
        return self.instruction_list(name, start, line, is_entry)

    def signature(self, name: str) -> None:
        """``(p: shape, ...) -> shape``: checked for syntax; parameters come from the body."""
        if self.known_signature():
            return
        self.pos += 1
        if self.peek() != ")":
            while True:
                fast = _SIGNATURE_PARAMETER_RE.match(self.text, self.pos)
                if fast is not None and fast.group(1) in self._plain_shapes:
                    self.pos = fast.end()  # a shape read before: nothing more to check
                else:
                    self.name(f"a parameter name in the signature of {name!r}", colon=False)
                    self.expect(":", "after a parameter name in the signature")
                    self.required_shape("the shape of a parameter in the signature")
                if self.peek() != ",":
                    break
                self.pos += 1
        self.expect(")", f"to close the signature of {name!r}")
        self.expect("->", f"after the parameters of {name!r}")
        self.required_shape(f"the result shape of {name!r}")

    def known_signature(self) -> bool:
        """Read the signature at ``self.pos`` with one match (for a long text) if every shape
        in it is one read before or is plainly spelled (:func:`~symidx.hlo.shape.plain_shape`):
        then it is well formed. False (nothing read) otherwise."""
        one = self.one_match
        whole = None if one is None else one.signature.match(self.text, self.pos)
        if whole is None:
            return False
        if not self.known_signature_text(whole.group(), whole.group(1), whole.group(2)):
            return False
        self.pos = whole.end()
        return True

    def instruction_list(self, name: str, start: int, line: int,
                         is_entry: bool) -> HloComputation:
        """``{ instruction ... }`` as a computation called ``name``."""
        self.expect("{", f"to open computation {name!r}")
        open_brace = self.pos - 1
        pendings: list[Pending] = []
        text = self.text
        while True:
            ch = text[self.pos: self.pos + 1]
            if ch in BLANK_START:
                ch = self.peek()
            if ch == "}":
                self.pos += 1
                break
            if not ch:
                raise self.error(f"unexpected end of input: computation {name!r} opened at line "
                                 f"{self.line_of(open_brace)} is not closed", self.pos)
            if not self.fast_instruction(self.pos, pendings, many=True):
                self.instruction(pendings)
        return self.build_computation(name, start, line, is_entry, pendings)

    def build_computation(self, name: str, start: int, line: int, is_entry: bool,
                          pendings: list[Pending]) -> HloComputation:
        if not pendings:
            raise self.error(f"computation {name!r} has no instructions (missing ROOT)", start)
        if self.one_match is not None and not self.single:
            plain = self.plain_computation(name, start, line, is_entry, pendings)
            if plain is not None:
                return plain
        by_name = ({item.instr.name: item.instr for item in pendings}
                   if self.one_match is not None else {})
        if len(by_name) != len(pendings) or "" in by_name:  # a name twice, or inline ones
            by_name = self.names(name, pendings)
        instructions = self.missing_operands(pendings, by_name) if self.single else []
        root: HloInstruction | None = None
        # The names of the instructions before the current one (names are unique by now):
        # some instruction uses one written after it if an operand is not among them.
        done = {param.name for param in instructions}
        forward = False
        get = by_name.get
        callers: list[Pending] = []
        for item in pendings:
            instr = item.instr
            written = item.operands
            if written:
                found = (list(map(get, written)) if isinstance(written[0], str)
                         else [operand.instr or get(operand.name)
                               for operand in written])
                if None in found:
                    k = found.index(None)
                    missing = written[k]
                    self.lookup(by_name, Operand(
                        missing if isinstance(missing, str) else missing.name,
                        item.operand_offset(self.text, k)), instr, name)
                instr.operands = found  # type: ignore[assignment]  # (no None: checked above)
                if not forward:
                    forward = not done.issuperset(written if isinstance(written[0], str)
                                                  else [o.name for o in instr.operands])
            if item.control_predecessors:
                for ref, offset in item.control_predecessors:
                    instr.control_predecessors.append(
                        self.lookup(by_name, Operand(ref, offset), instr, name))
                forward = forward or not done.issuperset(
                    [o.name for o in instr.control_predecessors])
            done.add(instr.name)
            if instr.is_root:
                if root is not None:
                    raise self.error(f"second ROOT {instr.name!r} in computation {name!r} "
                                     f"(the first is {root.name!r})", instr._offset)
                root = instr
            if item.computations:
                callers.append(item)
            instructions.append(instr)
        if root is None:
            root = instructions[-1]
            root.is_root = True
        cyclic = find_cycle(
            list(by_name),
            {i.name: [o.name for o in i.operands + i.control_predecessors] for i in instructions},
        ) if forward else None
        if cyclic is not None:
            raise self.error(f"instruction {cyclic!r} depends on itself in computation "
                             f"{name!r}", by_name[cyclic]._offset)
        return self.computation_of(name, start, line, is_entry, instructions, root, by_name,
                                   callers)

    def computation_of(self, name: str, start: int, line: int, is_entry: bool,
                       instructions: list[HloInstruction], root: HloInstruction | None,
                       by_name: dict[str, HloInstruction],
                       callers: list[Pending]) -> HloComputation:
        """The computation of ``instructions`` (its root the last one unless one is
        ``root``); the instructions in ``callers`` call computations from it."""
        if root is None:
            root = instructions[-1]
            root.is_root = True
        comp = HloComputation(name, instructions, root,
                              self.ordered_parameters(instructions, name), line,
                              is_entry=is_entry, _by_name=by_name, _offset=start)
        for item in callers:
            item.caller = comp
        self.call_sites.extend(callers)
        return comp

    def plain_computation(self, name: str, start: int, line: int, is_entry: bool,
                          pendings: list[Pending]) -> HloComputation | None:
        """The computation :meth:`build_computation` builds, in one pass, when it is plain:
        every operand written by name (as :meth:`fast_instruction` reads it) after the
        instruction defining it, every name written once, at most one ROOT, no control
        predecessors. Then there is nothing to report and no cycle. None otherwise, leaving
        nothing that the general pass does not set again (it then finds what is wrong)."""
        by_name: dict[str, HloInstruction] = {}
        get = by_name.get
        instructions: list[HloInstruction] = []
        callers: list[Pending] = []
        root: HloInstruction | None = None
        for item in pendings:
            instr = item.instr
            written = item.operands
            if written:
                if not isinstance(written[0], str):
                    return None
                found = list(map(get, written))  # the instructions before this one
                if None in found:
                    return None  # written later, or nowhere
                instr.operands = found  # type: ignore[assignment]  # (no None: checked)
            if item.control_predecessors or item.anonymous or instr.name in by_name:
                return None
            by_name[instr.name] = instr
            if instr.is_root:
                if root is not None:
                    return None
                root = instr
            if item.computations:
                callers.append(item)
            instructions.append(instr)
        return self.computation_of(name, start, line, is_entry, instructions, root, by_name,
                                   callers)

    def names(self, comp: str, pendings: list[Pending]) -> dict[str, HloInstruction]:
        """The instructions of computation ``comp`` by name, inline ones named as XLA names
        them; a ParseError for a name written twice."""
        by_name: dict[str, HloInstruction] = {}
        anonymous = False
        for item in pendings:
            if item.anonymous:
                anonymous = True
                continue
            instr = item.instr
            if instr.name in by_name:
                raise self.error(f"duplicate instruction name {instr.name!r} in computation "
                                 f"{comp!r} (first defined at line {by_name[instr.name].line})",
                                 instr._offset)
            by_name[instr.name] = instr
        if anonymous:
            taken = set(by_name)
            for item in pendings:
                if item.anonymous:  # XLA's names for inline instructions, unique here
                    item.instr.name = unique_name(f"{item.instr.opcode}.anon", taken)
                    by_name[item.instr.name] = item.instr
        return by_name

    def missing_operands(self, pendings: list[Pending],
                         by_name: dict[str, HloInstruction]) -> list[HloInstruction]:
        """In a single instruction: a parameter for each operand not defined in it -- named
        as written (``_0``, ``_1``, ... for a shape alone) and numbered in text order."""
        # (a single instruction is read on the general path: its operands are all records)
        missing = sorted((op for item in pendings for op in item.operands
                          if isinstance(op, Operand) and op.instr is None
                          and op.name not in by_name),
                         key=lambda op: op.offset)
        parameters: list[HloInstruction] = []
        for op in missing:
            if op.name in by_name:  # a second use of a name made a parameter just now
                continue
            if op.shape is None:
                raise self.error(f"operand {op.name!r} is not defined and has no shape to make "
                                 f"it a parameter of the single instruction", op.offset)
            name = op.name or unique_name(f"_{len(parameters)}", set(by_name))
            param = HloInstruction(name, "parameter", op.shape, self.line_of(op.offset),
                                   parameter_number=len(parameters), _offset=op.offset,
                                   _document=self.document)
            parameters.append(param)
            by_name[name] = param
            if not op.name:
                op.instr = param
        return parameters

    def lookup(self, by_name: dict[str, HloInstruction], ref: Operand,
               user: HloInstruction, comp: str) -> HloInstruction:
        target = by_name.get(ref.name)
        if target is None:
            raise self.error(f"unknown operand {ref.name!r} of {user.name!r}: no instruction of "
                             f"that name in computation {comp!r}", ref.offset)
        return target
