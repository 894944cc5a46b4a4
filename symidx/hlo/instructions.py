"""Reading instructions: the right-hand side ``[shape] opcode(operands)``, operands written
by name or inline, and ``key=value`` attributes (computation attributes and control
predecessors read as references), for :mod:`symidx.hlo.parser`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from symidx._text import lazy_pattern
from symidx.hlo.attributes import OWN_SCANNER_KEYS, scan_value
from symidx.hlo.ir import HloComputation, HloInstruction, parsed_instruction
from symidx.hlo.lexer import BLANK_START, NAME_RE, WORD_RE, describe, skip, strip_comments
from symidx.hlo.literal import parse_literal
from symidx.hlo.reader import PLAIN_SHAPE, Cursor, name_end
from symidx.hlo.shape import ShapeLike, TupleShape, plain_shape
from symidx.hlo.typed_fields import TYPED_OPCODES, UNTYPED_KEYS, fill_typed_fields

__all__ = [
    "ATTRIBUTES_END_RE", "CALLING_ATTRIBUTES", "PARAMETER_NUMBER_RE", "READ_APART", "CallRef",
    "Inline", "InstructionReader", "Operand", "Pending", "Ref",
]

# Fast paths for the common spellings; anything else takes the general path. An instruction's
# start, ``[ROOT] name =`` (groups: ROOT, name)...
_LHS_RE = lazy_pattern(r"(ROOT[ \t]+)?%?([A-Za-z_][A-Za-z0-9_.\-]*)[ \t]*=[ \t]*")
# ... its right-hand side up to the '(', ``shape opcode(`` (groups: shape, opcode), taken only
# when the shape's text is one the cursor has read before ...
_RHS_RE = lazy_pattern(r"(" + PLAIN_SHAPE + r")[ \t]+([A-Za-z_][A-Za-z0-9_.\-]*)\(")
# ... and an operand, ``[shape] name`` then ',' or ')' (groups: shape, name, ',' or ')').
_OPERAND_RE = lazy_pattern(r"(?:(" + PLAIN_SHAPE + r")[ \t]+)?(%?[A-Za-z_][A-Za-z0-9_.\-]*)"
                           r"[ \t]*([,)])")
# ... and the commonest operand list of all: names only, ``%a, %b)`` (each name then found
# with NAME_RE, from its '%').
_NAME_LIST_RE = lazy_pattern(r"%?[A-Za-z_][A-Za-z0-9_.\-]*(?:, ?%?[A-Za-z_][A-Za-z0-9_.\-]*)*\)")
# A parameter's number and ')' (group: the number).
_PARAMETER_RE = lazy_pattern(r"([0-9]{1,9})\)")
# An attribute's start, ``, key=`` (group: key).
_KEY_RE = lazy_pattern(r", ?([A-Za-z_][A-Za-z0-9_.\-]*)=")
#: Texts at least this long are read with the one-match patterns of :class:`_OneMatch`, which
#: take some 15 ms to compile; shorter ones (a test, one fusion) only with the token readers.
ONE_MATCH_MIN_CHARS = 50_000
_NAME_PATTERN = r"%?[A-Za-z_][A-Za-z0-9_.\-]*"
_COMMENT_PATTERN = r"/\*[^*]*\*/"
# A double-quoted string on one line, its escapes taken whole (written as a loop over runs of
# plain characters: the regex engine then goes a run at a time, not a character at a time).
_QUOTED = r'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'
# In a bracketed group of an attribute value: characters that are neither brackets, quotes
# nor '/', and double-quoted strings.
_GROUP_INNER = r"""(?:[^(){}\[\]"'/]++|""" + _QUOTED + ")"


def _group_pattern(depth: int) -> str:
    inner = _GROUP_INNER if depth == 0 else f"(?:{_GROUP_INNER}|{_group_pattern(depth - 1)})"
    return rf"\{{{inner}*+\}}|\[{inner}*+\]|\({inner}*+\)"


def _attribute_pattern() -> str:
    return (r", ?([A-Za-z_][A-Za-z0-9_.\-]*)=((?:[^\s,(){}\[\]\"'/]++|" + _QUOTED + "|"
            + _group_pattern(3) + r")++)(?=,|[ \t]*(?:[\r\n]|\Z))")


class _OneMatch:
    """The patterns that read an instruction, or an attribute, in its commonest spelling with
    one match; compiled once, on first use (:func:`_one_match`).

    ``attribute``: ``, key=value`` whose value is a run of plain characters, double-quoted
    strings and bracketed groups (nested at most four deep, holding no comment, no '/' and no
    single quote outside double-quoted strings), followed by ',' or the end of the line.
    Where the value ends is then where :mod:`symidx.hlo.attributes` ends a value it reads
    token by token (the keys with scanners of their own are checked apart), and the value
    has no comment to remove (groups: key, value).

    ``plain_attribute``: ``attribute``, then the blanks that end the attributes when no other
    follows, as ATTRIBUTES_END_RE takes them (group 3: those blanks).

    ``instruction``: ``[ROOT] name = shape opcode(`` as _LHS_RE then _RHS_RE read it; then
    operands -- names, each maybe after a shape and a comment (``/*index=5*/``) -- or other
    text without parentheses, comments or line breaks (a parameter number, a literal,
    nothing); then ``)`` (groups: ROOT, name, shape, opcode, operands, other). Its
    attributes are then read one after the other with ``attribute``.

    ``plain_instruction``: ``instruction``, then the blanks that end it when no attribute
    follows (group 7: those blanks).

    ``operand_names``: in such operands, each operand's name without its '%' (or its shape
    and name); ``operand_at``: each operand's name with its '%' (group 1), for its offset.

    ``signature``: a computation's ``(name: shape, ...) -> shape`` before the ``{`` of its
    body (groups: the parameters, the result shape); ``signature_shapes``: the shapes of such
    parameters.

    ``header``: a computation's start up to its first instruction, ``[ENTRY] name
    [signature] {`` then blanks and the start of a name (a '{' before anything else is the
    result shape's layout), as :mod:`symidx.hlo.plain` reads it (groups: ENTRY, the name, the
    signature, its parameters, its result shape).
    """

    def __init__(self) -> None:
        # (the commonest operand, a name with its '%', tried first; each run of name
        # characters, and the list, taken possessively: what follows is never one of them)
        name = r"[A-Za-z_][A-Za-z0-9_.\-]*+"
        operand = rf"(?:%{name}|(?:(?:{PLAIN_SHAPE})[ \t]+)?%?{name})"
        self.attribute = re.compile(_attribute_pattern())
        self.plain_attribute = re.compile(
            self.attribute.pattern + r"([ \t\n\r\f\v]+(?=[^ \t\n\r\f\v,/]))?")
        self.instruction = re.compile(
            r"(ROOT[ \t]+)?%?(" + name + r")[ \t]*=[ \t]*(" + PLAIN_SHAPE + r")[ \t]+("
            + name + r")\((?:(" + operand + r"(?:, ?(?:" + _COMMENT_PATTERN + r")?"
            + operand + r")*+)|([^()/\n]*))\)")
        # ... then, when no attribute follows, the blanks up to the next instruction (or '}'),
        # as ATTRIBUTES_END_RE takes them (group: those blanks)
        self.plain_instruction = re.compile(
            self.instruction.pattern + r"([ \t\n\r\f\v]+(?=[^ \t\n\r\f\v,/]))?")
        self.operand_names = re.compile(rf"(?:{_COMMENT_PATTERN})?%?([A-Za-z_][A-Za-z0-9_.\-]*)")
        self.shaped_operands = re.compile(
            rf"(?:{_COMMENT_PATTERN})?(?:({PLAIN_SHAPE})[ \t]+)?%?([A-Za-z_][A-Za-z0-9_.\-]*)")
        self.operand_at = re.compile(
            rf"(?:{_COMMENT_PATTERN})?(?:(?:{PLAIN_SHAPE})[ \t]+)?({_NAME_PATTERN})")
        parameter = rf"{_NAME_PATTERN}[ \t]*:[ \t]*(?:{PLAIN_SHAPE})"
        self.signature = re.compile(
            rf"\(((?:{parameter}(?:, ?{parameter})*)?)\)[ \t]*->[ \t]*({PLAIN_SHAPE})"
            r"(?=[ \t]*\{[ \t\r\n]*[%A-Za-z_])")
        self.signature_shapes = re.compile(rf":[ \t]*({PLAIN_SHAPE})")
        self.header = re.compile(
            r"(ENTRY[ \t]+)?%?([A-Za-z_][A-Za-z0-9_.\-]*)[ \t]*"
            rf"(?:(\(((?:{parameter}(?:, ?{parameter})*)?)\)[ \t]*->[ \t]*({PLAIN_SHAPE}))"
            r"[ \t]*)?\{[ \t\r\n]*(?=[%A-Za-z_])")


@cache
def _one_match() -> _OneMatch:
    return _OneMatch()


_FULL_NAME_RE = lazy_pattern(r"%?([A-Za-z_][A-Za-z0-9_.\-]*)\Z")
#: A parameter's number as the one-match reading takes it.
PARAMETER_NUMBER_RE = lazy_pattern(r"[0-9]{1,9}\Z")
#: Blanks then what cannot continue the attributes (not ',', no comment): where they end.
ATTRIBUTES_END_RE = lazy_pattern(r"[ \t\n\r\f\v]+(?=[^ \t\n\r\f\v,/])")
#: Attributes naming one computation; ``_COMPUTATION_LIST_KEYS`` name several, ``{a, b}``.
_COMPUTATION_KEYS = frozenset({
    "to_apply", "calls", "condition", "body", "true_computation", "false_computation",
    "select", "scatter", "comparator",
})
_COMPUTATION_LIST_KEYS = frozenset({"branch_computations", "called_computations"})
#: The attributes naming computations: an instruction's are read as references, and become
#: the keys of its ``called_computations``.
CALLING_ATTRIBUTES = _COMPUTATION_KEYS | _COMPUTATION_LIST_KEYS
#: Attributes whose value is more than its text (:meth:`InstructionReader.fast_attribute`).
READ_APART = OWN_SCANNER_KEYS | CALLING_ATTRIBUTES | {"control-predecessors"}
#: Opcodes whose shape must be written: what follows the opcode is read by the shape.
_SHAPE_REQUIRED = frozenset({"constant", "parameter"})
# Where a list of instructions does not go on with one right here: a blank (or comment), its
# end, the end of the text.
_NOT_AN_INSTRUCTION = BLANK_START | {"}", ""}
# Stands for an omitted shape until infer_shape() replaces it; never seen outside.
_UNKNOWN_SHAPE: ShapeLike = TupleShape(())


# replica_groups as an iota list with a transpose, or without one (group: the transpose).
_IOTA_GROUPS_RE = lazy_pattern(r"\[[0-9,]*\]<=\[[0-9,]*\](T\([0-9,]*\))?")


def _plain_replica_groups(value: str, text: str, end: int) -> bool:
    """Whether the device-list scanner of :mod:`symidx.hlo.attributes` ends the
    ``replica_groups`` value ``value`` (as the one-match reading took it, ending at ``end``
    in ``text``) where it ends: ``{...}`` it scans as a plain value; ``[2,4]<=[8]T(1,0)``
    ends with its transpose; without one, only a ',' right after it keeps a transpose on a
    later line from continuing it."""
    if value.startswith("{"):
        return True
    iota = _IOTA_GROUPS_RE.fullmatch(value)
    return iota is not None and (iota.group(1) is not None or text.startswith(",", end))


@dataclass(eq=False, slots=True)
class Operand:
    """An operand as written: a name (with the shape written before it, if any), an inline
    instruction (``instr``), or -- in a single instruction -- a shape alone."""

    name: str
    offset: int
    shape: ShapeLike | None = None
    instr: HloInstruction | None = None


Ref = tuple[str, int]  # a name and where it is written
CallRef = Ref | HloComputation  # a computation by name, or one written inline


class Pending:
    """What an instruction refers to, resolved once its scope (computation or module) is
    complete: its operands -- :class:`Operand` records, or (read on the fast path) names
    alone, whose offsets are found again from ``operands_at`` only for an error -- its control
    predecessors and the computations it calls. A plain class with slots: one is made per
    instruction."""

    __slots__ = ("anonymous", "caller", "computations", "control_predecessors", "instr",
                 "operands", "operands_at")

    def __init__(self, instr: HloInstruction, anonymous: bool = False,
                 operands: list[Operand] | list[str] | None = None, operands_at: int = 0) -> None:
        self.instr = instr
        self.anonymous = anonymous
        #: The computation the instruction is in, once built.
        self.caller: HloComputation | None = None
        self.operands: list[Operand] | list[str] = [] if operands is None else operands
        #: Where the operand list starts (after its '('), when ``operands`` holds names.
        self.operands_at = operands_at
        # (shared empty tuples until an attribute gives some: most instructions have none)
        self.control_predecessors: Sequence[Ref] = ()
        self.computations: Sequence[tuple[str, list[CallRef]]] = ()

    def operand_offset(self, text: str, index: int) -> int:
        """Where operand ``index`` is written."""
        operand = self.operands[index]
        if isinstance(operand, Operand):
            return operand.offset
        for k, match in enumerate(_one_match().operand_at.finditer(text, self.operands_at)):
            if k == index:
                return match.start(1)
        raise AssertionError(f"operand {index} of {self.instr.name!r} not found again")


@dataclass(eq=False, slots=True)
class Inline:
    """A computation written inside an attribute: named once the module is read."""

    computation: HloComputation
    owner: HloInstruction
    key: str


class InstructionReader(Cursor):
    """Reads instructions -- ``[ROOT] name = [shape] opcode(operands), attributes`` -- their
    operands (inline instructions included) and their attributes (computations named or
    written inline, control predecessors). What they refer to is kept in :class:`Pending`
    records, resolved once the computation (or module) is read."""

    def __init__(self, text: str, source: str) -> None:
        super().__init__(text, source)
        #: True while reading a single instruction: undefined operands become parameters.
        self.single = False
        self.inline: list[Inline] = []
        self.unshaped: list[HloInstruction] = []
        #: The one-match patterns, for a text long enough to pay for compiling them.
        self.one_match = _one_match() if len(text) >= ONE_MATCH_MIN_CHARS else None

    def instruction_list(self, name: str, start: int, line: int,
                         is_entry: bool) -> HloComputation:
        """``{ instruction ... }`` as a computation called ``name``: the module reader
        (:mod:`symidx.hlo.parser`) builds computations; an inline one is read here."""
        raise NotImplementedError

    def instruction(self, pendings: list[Pending]) -> None:
        """``[ROOT] name = rhs``; appends it (after any inline operands) to ``pendings``."""
        start = self.skip()
        if self.fast_instruction(start, pendings):
            return
        lhs = _LHS_RE.match(self.text, start)
        if lhs is not None:
            self.pos = lhs.end()
            self.rhs(lhs.group(2), start, pendings, is_root=lhs.group(1) is not None)
            return
        is_root = False
        if self.word_here() == "ROOT":
            after = skip(self.text, start + 4, self.source)
            if not self.text.startswith("=", after):
                is_root = True
                self.pos = after
        name, _ = self.name("an instruction name")
        self.expect("=", f"after instruction name {name!r}")
        self.rhs(name, start, pendings, is_root=is_root)

    def fast_instruction(self, start: int, pendings: list[Pending], *,
                         many: bool = False) -> bool:
        """The instruction at ``start`` read with one match (:class:`_OneMatch`), as
        :meth:`rhs` would read it, if it has that spelling, its shape's text is one read
        before and its operands are what its opcode takes here; False (nothing read)
        otherwise. Not in a single instruction, whose undefined operands are parameters.

        ``many``: then go on with the instructions that follow right after it (after the
        blanks that end its attributes) while each has that spelling; False if one was tried
        and not read (``self.pos`` is where it starts), True if reading stopped before a blank,
        a '}' or the end of the text."""
        one = self.one_match
        if one is None or self.single:
            return False
        text = self.text
        known = self._plain_shapes
        document = self.document
        instruction = one.instruction.match
        attribute = one.attribute.match
        while True:
            head = instruction(text, start)
            if head is None:
                return False
            root, name, shape_text, opcode, operands, other = head.groups()
            shape = known.get(shape_text)
            if shape is None:
                shape = plain_shape(shape_text, known)
                if shape is None:
                    return False
                known[shape_text] = shape
            written: list[str] = []
            number = literal = None
            if operands is not None:
                if opcode == "constant":
                    literal = operands
                elif opcode == "parameter":
                    return False
                elif "[" in operands or "(" in operands:  # some operand has its shape written
                    shaped = one.shaped_operands.findall(operands)
                    for shaped_text, _ in shaped:
                        if shaped_text and shaped_text not in known:
                            shaped_shape = plain_shape(shaped_text, known)
                            if shaped_shape is None:
                                return False
                            known[shaped_text] = shaped_shape
                    written = [name for _, name in shaped]
                elif "/" in operands:  # a comment: /*index=5*/
                    written = one.operand_names.findall(operands)
                else:  # names alone, ", ?" between them: none holds a '%', ' ' or ','
                    written = operands.replace("%", "").replace(" ", "").split(",")
            elif opcode == "parameter":
                if PARAMETER_NUMBER_RE.match(other) is None:
                    return False
                number = int(other)
            elif opcode == "constant":
                literal = other
            elif other:
                return False
            if start >= self._line_offset:  # self.line_of(start), inline: once per instruction
                self._line += text.count("\n", self._line_offset, start)
                self._line_offset = start
                line = self._line
            else:
                line = self.line_of(start)
            values: dict[str, str] = {}
            offsets: dict[str, int] = {}
            instr = parsed_instruction(name, opcode, shape, line, root is not None, start,
                                       document, values, offsets)
            item = Pending(instr, False, written, head.start(5)) if written else Pending(instr)
            if number is not None:
                instr.parameter_number = number
            elif literal is not None:
                at = head.start(5) if operands is not None else head.start(6)
                if "/" in literal:
                    return False
                instr.literal, after = parse_literal(text, at, shape, self.source)
                if skip(text, after, self.source) != at + len(literal):
                    return False  # not all of it: the general reader says what is wrong
                instr.literal_text = literal.strip()
            pos = head.end()
            while (whole := attribute(text, pos)) is not None:
                key = whole.group(1)
                if key in READ_APART or key in values:  # as fast_attribute reads the rest
                    if not self.fast_attribute(whole, item, values, offsets):
                        break
                else:
                    values[key] = whole.group(2)
                    offsets[key] = whole.start(2)
                pos = whole.end()
            end = ATTRIBUTES_END_RE.match(text, pos)
            if end is not None:
                self.pos = start = end.end()
            else:
                self.pos = pos
                self.attributes(item, values, offsets)
                start = self.pos
            if opcode in TYPED_OPCODES or not values.keys() <= UNTYPED_KEYS:
                fill_typed_fields(instr)
            pendings.append(item)
            if not many or text[start: start + 1] in _NOT_AN_INSTRUCTION:
                return True

    def rhs(self, name: str, start: int, pendings: list[Pending], *, is_root: bool = False,
            inline: bool = False) -> HloInstruction:
        """``[shape] opcode(operands)`` and, unless ``inline``, ``, key=value ...``. An
        instruction without a name (``name == ""``) gets one when its computation is built."""
        label = repr(name) if name else "an inline instruction"
        pos = self.pos
        fast = _RHS_RE.match(self.text, pos if self.text[pos: pos + 1] not in BLANK_START
                             else self.skip())
        shape = self._plain_shapes.get(fast.group(1)) if fast is not None else None
        if shape is not None:
            assert fast is not None
            opcode, op_start = fast.group(2), fast.start(2)
            self.pos = fast.end() - 1
        else:
            shape = self.shape()
            op_start = self.skip()
            match = WORD_RE.match(self.text, op_start)
            if match is None:
                raise self.error(f"expected {'the opcode of ' + label if name else 'an opcode'}"
                                 f", found {describe(self.text, op_start)}", op_start)
            opcode = match.group()
            self.pos = match.end()
            if self.peek() != "(":
                raise self.error(f"expected '(' after opcode {opcode!r}, found "
                                 f"{describe(self.text, self.pos)}", self.pos)
        if shape is None and opcode in _SHAPE_REQUIRED:
            raise self.error(f"{opcode} {label} needs its shape written", op_start)
        instr = parsed_instruction(name, opcode, shape or _UNKNOWN_SHAPE, self.line_of(start),
                                   is_root, start, self.document, {}, {})
        item = Pending(instr, anonymous=not name)
        if opcode == "constant":
            assert shape is not None
            open_paren = self.pos
            instr.literal, end = parse_literal(self.text, open_paren + 1, shape, self.source)
            self.pos = end
            self.expect(")", "to close the constant")
            instr.literal_text = strip_comments(self.text[open_paren + 1: self.pos - 1]).strip()
        elif opcode == "parameter":
            number = _PARAMETER_RE.match(self.text, self.pos + 1)
            if number is not None:
                instr.parameter_number, self.pos = int(number.group(1)), number.end()
            else:
                self.pos += 1
                instr.parameter_number = self.integer("a parameter number")
                self.expect(")", "after the parameter number")
        else:
            self.pos += 1
            item.operands = self.operands(label, pendings)
        if not inline:
            instr.attributes, instr._attribute_offsets = self.attributes(item)
        fill_typed_fields(instr)
        if shape is None:
            self.unshaped.append(instr)
        pendings.append(item)
        return instr

    def operands(self, user: str, pendings: list[Pending]) -> list[Operand]:
        """``(operand, ...)`` after the ``(``: names (maybe after a shape) and inline
        instructions, which are appended to ``pendings`` before their user."""
        refs: list[Operand] = []
        names = _NAME_LIST_RE.match(self.text, self.pos)
        if names is not None:
            self.pos = end = names.end()
            for each in NAME_RE.finditer(self.text, names.start(), end):
                refs.append(Operand(each.group(1), each.start(), None))
            return refs
        if self.peek() == ")":
            self.pos += 1
            return refs
        while True:
            start = self.skip()
            fast = _OPERAND_RE.match(self.text, start)
            if fast is not None and (fast.group(1) is None or fast.group(1) in self._plain_shapes):
                shape = self._plain_shapes[fast.group(1)] if fast.group(1) else None
                refs.append(Operand(fast.group(2).lstrip("%"), fast.start(2), shape))
                self.pos = fast.end()
                if fast.group(3) == ")":
                    return refs
                continue
            shape = self.shape()
            at = self.skip()
            match = NAME_RE.match(self.text, at)
            if match is not None and self.text[at] != "%" and self.text.startswith(
                    "(", skip(self.text, match.end(), self.source)):
                self.nest(start)
                self.pos = start
                refs.append(Operand("", start, instr=self.rhs("", start, pendings, inline=True)))
                self.depth -= 1
            elif match is not None:
                name, offset = self.name("an operand name")
                refs.append(Operand(name, offset, shape))
            elif shape is not None and self.single:
                refs.append(Operand("", start, shape))
            else:
                raise self.error(f"expected an operand name or an inline instruction in the "
                                 f"operands of {user}, found {describe(self.text, at)}", at)
            ch = self.peek()
            self.pos += 1
            if ch == ")":
                return refs
            if ch != ",":
                raise self.error(f"expected ',' or ')' in the operands of {user}, found "
                                 f"{describe(self.text, self.pos - 1)}", self.pos - 1)

    def attributes(self, item: Pending | None, values: dict[str, str] | None = None,
                   offsets: dict[str, int] | None = None,
                   ) -> tuple[dict[str, str], dict[str, int]]:
        """``, key=value`` pairs while a ',' follows; values raw, comments removed. For an
        instruction (``item``), computation attributes and control predecessors are also
        read as references. ``values`` and ``offsets``: those read already, added to."""
        values = {} if values is None else values
        offsets = {} if offsets is None else offsets
        text = self.text
        one = self.one_match
        while True:
            whole = None if one is None else one.attribute.match(text, self.pos)
            if whole is not None:
                if self.fast_attribute(whole, item, values, offsets):
                    continue
            elif one is not None and (done := ATTRIBUTES_END_RE.match(text, self.pos)):
                self.pos = done.end()
                break
            fast = _KEY_RE.match(self.text, self.pos)
            if fast is not None:
                key, key_pos = fast.group(1), fast.start(1)
                if key in values:
                    raise self.error(f"duplicate attribute {key!r}", key_pos)
                self.pos = fast.end()
            else:
                if self.peek() != ",":
                    break
                self.pos += 1
                key_pos = self.skip()
                match = WORD_RE.match(self.text, key_pos)
                if match is None:
                    raise self.error(f"expected an attribute name, found "
                                     f"{describe(self.text, key_pos)}", key_pos)
                key = match.group()
                if key in values:
                    raise self.error(f"duplicate attribute {key!r}", key_pos)
                self.pos = match.end()
                self.expect("=", f"after attribute name {key!r}")
            start = self.skip()
            if item is not None and key in CALLING_ATTRIBUTES:
                item.computations = [*item.computations,
                                     (key, self.computation_refs(item.instr, key))]
                end = self.pos
            else:
                end = scan_value(self.text, start, key, self.source)
                if item is not None and key == "control-predecessors":
                    item.control_predecessors = self.name_list(key, start, end)
            if end == start:
                raise self.error(f"expected a value for attribute {key!r}, found "
                                 f"{describe(self.text, start)}", start)
            values[key], offsets[key] = strip_comments(self.text[start:end]), start
            self.pos = end
        return values, offsets

    def fast_attribute(self, whole: re.Match[str], item: Pending | None, values: dict[str, str],
                       offsets: dict[str, int]) -> bool:
        """The attribute ``whole`` (:class:`_OneMatch`) matched, read into ``values`` and
        ``offsets`` as the general path reads it; False (nothing read) where that path must
        decide."""
        key, value = whole.group(1), whole.group(2)
        start, end = whole.span(2)  # (where the whole match ends, but for blanks after it)
        if key in values:
            raise self.error(f"duplicate attribute {key!r}", whole.start(1))
        if key in OWN_SCANNER_KEYS:  # where its own scanner ends it, as the general path does
            if not (key == "replica_groups" and _plain_replica_groups(value, self.text,
                                                                       end)) \
                    and scan_value(self.text, start, key, self.source) != end:
                return False
        elif item is not None:
            if key in CALLING_ATTRIBUTES:
                name = _FULL_NAME_RE.match(value)
                if name is None:
                    return False
                item.computations = [*item.computations, (key, [(name.group(1), start)])]
            elif key == "control-predecessors":
                item.control_predecessors = self.name_list(key, start, end)
        values[key] = value
        offsets[key] = start
        self.pos = end
        return True

    def computation_refs(self, owner: HloInstruction, key: str) -> list[CallRef]:
        """The value of a computation attribute at ``self.pos``: a name, ``{a, b, ...}``, a
        computation written inline ``{ instructions }``, or a list mixing names and inline
        computations."""
        start = self.pos
        if not self.text.startswith("{", start):
            name, offset = self.name(f"a computation name in {key}=")
            return [(name, offset)]
        if self.starts_instruction(start + 1):
            return [self.inline_computation(owner, key)]
        refs: list[CallRef] = []
        self.pos = start + 1
        if self.peek() == "}":
            self.pos += 1
            return refs
        while True:
            if self.peek() == "{":
                refs.append(self.inline_computation(owner, key))
            else:
                refs.append(self.name(f"a computation name in {key}="))
            ch = self.peek()
            self.pos += 1
            if ch == "}":
                return refs
            if ch != ",":
                raise self.error(f"expected ',' or '}}' in {key}=, found "
                                 f"{describe(self.text, self.pos - 1)}", self.pos - 1)

    def starts_instruction(self, pos: int) -> bool:
        """Whether an instruction (``[ROOT] name =``) starts at ``pos``."""
        pos = skip(self.text, pos, self.source)
        match = NAME_RE.match(self.text, pos)
        if match is None:
            return False
        return match.group() == "ROOT" or self.text.startswith(
            "=", skip(self.text, name_end(self.text, match), self.source))

    def inline_computation(self, owner: HloInstruction, key: str) -> HloComputation:
        """``{ instruction ... }`` at ``self.pos`` (after blanks), as a computation named when
        the module is complete."""
        start = self.skip()
        self.nest(start)
        name = f"{owner.name or owner.opcode}.{key}"
        single, self.single = self.single, False  # its operands must be its own, as in XLA
        comp = self.instruction_list(name, start, self.line_of(start), False)
        self.single = single
        self.depth -= 1
        self.inline.append(Inline(comp, owner, key))
        return comp

    def name_list(self, key: str, start: int, end: int) -> list[Ref]:
        """``%a`` or ``{%a, %b}`` in ``text[start:end]`` as (name, offset) pairs."""
        text = self.text
        pos = start
        if text.startswith("{", pos):
            pos = skip(text, pos + 1, self.source)
            if pos == end - 1 and text[pos] == "}":
                return []
            end -= 1
        names: list[Ref] = []
        while True:
            pos = skip(text, pos, self.source)
            match = NAME_RE.match(text, pos, end)
            if match is None:
                raise self.error(f"expected a computation or instruction name in {key}=, "
                                 f"found {describe(text[:end], pos)}", pos)
            names.append((match.group(1), pos))
            pos = skip(text, match.end(), self.source)
            if pos >= end:
                return names
            if text[pos] != ",":
                raise self.error(f"expected ',' in {key}=, found {describe(text, pos)}", pos)
            pos += 1
