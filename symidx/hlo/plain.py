"""Reading a plain computation of a long text in one loop, for :mod:`symidx.hlo.parser`.

A computation is plain when its header (``[ENTRY] name [(p: shape, ...) -> shape] {``) and
each of its instructions have the spellings the one-match patterns of
:mod:`symidx.hlo.instructions` read, and when it is a computation the general pass would
build without a word: every operand named after the instruction defining it, every name
written once, at most one ROOT, no control predecessors. Such a computation is read in one
pass: each operand is found as it is read, and the computation is built as its ``}`` is
read. Anything else -- an instruction not read with one match, a forward or unknown
operand, a name twice -- leaves everything as it was: the general reading then reads the
computation from its start, and finds what is wrong. What this reading accepts, it reads as
the general one does (``tests/test_hlo_reader_paths.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from symidx.hlo.instructions import (
    ATTRIBUTES_END_RE,
    PARAMETER_NUMBER_RE,
    READ_APART,
    InstructionReader,
    Pending,
)
from symidx.hlo.ir import (
    HloComputation,
    HloInstruction,
    parsed_computation,
    parsed_instruction,
)
from symidx.hlo.lexer import skip
from symidx.hlo.literal import parse_literal
from symidx.hlo.shape import plain_shape
from symidx.hlo.typed_fields import TYPED_OPCODES, UNTYPED_KEYS, fill_typed_fields

__all__ = ["ComputationReader"]


class ComputationReader(InstructionReader):
    """The instruction reader, plus the computations read so far that call others (their
    instructions that do, as :class:`Pending` records), the signatures read, and the reading
    of a plain computation in one loop (:meth:`plain_computation_at`)."""

    def __init__(self, text: str, source: str) -> None:
        super().__init__(text, source)
        self.call_sites: list[Pending] = []
        #: The signatures :meth:`known_signature_text` has found well formed, as written.
        self.signatures: set[str] = set()

    def known_signature_text(self, signature: str, parameters: str, result: str) -> bool:
        """Whether every shape of a signature (its text, the text of its parameters and of its
        result shape) is one read before or is plainly spelled
        (:func:`~symidx.hlo.shape.plain_shape`): then it is well formed."""
        if signature in self.signatures:  # read (and found well formed) before
            return True
        known = self._plain_shapes
        one = self.one_match
        assert one is not None
        for text in (*one.signature_shapes.findall(parameters), result):
            if text not in known:
                shape = plain_shape(text, known)
                if shape is None:
                    return False
                known[text] = shape
        self.signatures.add(signature)
        return True

    def plain_computation_at(self, start: int, line: int) -> HloComputation | None:
        """The computation whose header starts at ``start`` (on ``line``), read in one loop
        and built, if it is plain (see the module's docstring); else None, with nothing read
        and nothing left behind."""
        one = self.one_match
        if one is None or self.single:
            return None
        header = one.header.match(self.text, start)
        if header is None:
            return None
        entry, name, signature, parameters, result = header.groups()
        if entry is None and name == "ENTRY":  # 'ENTRY {': the general reading decides
            return None
        if signature is not None and not self.known_signature_text(signature, parameters,
                                                                    result):
            return None
        saved = (self._line, self._line_offset, len(self.inline), len(self.call_sites),
                 len(self.unshaped))
        comp = self.plain_body(name, start, line, entry is not None, header.end())
        if comp is None:  # forget what the attempt read
            self._line, self._line_offset = saved[0], saved[1]
            del self.inline[saved[2]:], self.call_sites[saved[3]:], self.unshaped[saved[4]:]
            self.pos = start
        return comp

    def plain_body(self, name: str, start: int, line: int, is_entry: bool,
                   pos: int) -> HloComputation | None:
        """The instructions from ``pos`` (after the ``{``) to the ``}``, as the computation
        :meth:`plain_computation_at` reads; None where the computation is not plain."""
        one = self.one_match
        assert one is not None
        text = self.text
        known = self._plain_shapes
        document = self.document
        instruction = one.plain_instruction.match
        attribute = one.plain_attribute.match
        attributes_end = ATTRIBUTES_END_RE.match
        by_name: dict[str, HloInstruction] = {}
        get = by_name.get
        instructions: list[HloInstruction] = []
        parameters: list[HloInstruction] = []
        callers: list[Pending] = []
        root: HloInstruction | None = None
        # (self.line_of, inline: the line at line_offset; stored back wherever it is read)
        line_at, line_offset = self._line, self._line_offset
        while True:
            head = instruction(text, pos)
            if head is None:  # a spelling the one match does not take: the token readers
                self._line, self._line_offset = line_at, line_offset
                apart = self.instruction_apart(pos, get, parameters, callers)
                if apart is None:
                    return None
                pos, line_at, line_offset = self.pos, self._line, self._line_offset
                by_name[apart.name] = apart
                instructions.append(apart)
                if apart.is_root:
                    if root is not None:
                        return None
                    root = apart
                if text[pos: pos + 1] == "}":
                    break
                continue
            is_root, instr_name, shape_text, opcode, operands, other, blanks = head.groups()
            shape = known.get(shape_text)
            if shape is None:
                shape = plain_shape(shape_text, known)
                if shape is None:
                    return None
                known[shape_text] = shape
            found: list[HloInstruction | None] | None = None
            number = literal = None
            if operands is not None:
                if opcode == "constant":
                    literal = operands
                elif opcode == "parameter":
                    return None
                else:
                    if "[" in operands or "(" in operands:  # some operand has its shape
                        shaped = one.shaped_operands.findall(operands)
                        for shaped_text, _ in shaped:
                            if shaped_text and shaped_text not in known:
                                shaped_shape = plain_shape(shaped_text, known)
                                if shaped_shape is None:
                                    return None
                                known[shaped_text] = shaped_shape
                        written = [operand for _, operand in shaped]
                    elif "/" in operands:  # a comment: /*index=5*/
                        written = one.operand_names.findall(operands)
                    else:  # names alone, ", ?" between them: none holds a '%', ' ' or ','
                        written = operands.replace("%", "").replace(" ", "").split(",")
                    found = list(map(get, written))  # the instructions before this one
                    if None in found:
                        return None  # written later, or nowhere
            elif opcode == "parameter":
                if PARAMETER_NUMBER_RE.match(other) is None:
                    return None
                number = int(other)
            elif opcode == "constant":
                literal = other
            elif other:
                return None
            line_at += text.count("\n", line_offset, pos)
            line_offset = pos
            values: dict[str, str] = {}
            offsets: dict[str, int] = {}
            instr = parsed_instruction(instr_name, opcode, shape, line_at, is_root is not None,
                                       pos, document, values, offsets)
            if found is not None:
                instr.operands = found  # type: ignore[assignment]  # (no None: checked)
            if number is not None:
                instr.parameter_number = number
                parameters.append(instr)
            elif literal is not None:
                at = head.start(5) if operands is not None else head.start(6)
                if "/" in literal:
                    return None
                instr.literal, after = parse_literal(text, at, shape, self.source)
                if skip(text, after, self.source) != at + len(literal):
                    return None  # not all of it: the general reader says what is wrong
                instr.literal_text = literal.strip()
            pos = head.end()
            if blanks is not None:  # no attribute
                if opcode in TYPED_OPCODES:
                    fill_typed_fields(instr)
            else:
                item: Pending | None = None
                end = None
                while (whole := attribute(text, pos)) is not None:
                    key, value, blanks = whole.groups()
                    if key in READ_APART or key in values:  # as fast_attribute reads the rest
                        if item is None:
                            item = Pending(instr)
                        if not self.fast_attribute(whole, item, values, offsets):
                            break
                    else:
                        values[key] = value
                        offsets[key] = whole.start(2)
                    if blanks is not None:  # the last one
                        end = whole
                        break
                    pos = whole.end()
                else:
                    end = attributes_end(text, pos)
                if end is not None:
                    pos = end.end()
                else:
                    if item is None:
                        item = Pending(instr)
                    self.pos = pos
                    self._line, self._line_offset = line_at, line_offset
                    self.attributes(item, values, offsets)
                    line_at, line_offset = self._line, self._line_offset
                    pos = self.pos
                if opcode in TYPED_OPCODES or not values.keys() <= UNTYPED_KEYS:
                    fill_typed_fields(instr)
                if item is not None:
                    if item.control_predecessors:
                        return None
                    if item.computations:
                        callers.append(item)
            by_name[instr_name] = instr
            instructions.append(instr)
            if is_root is not None:
                if root is not None:
                    return None
                root = instr
            if text[pos: pos + 1] == "}":
                break
        if len(by_name) != len(instructions):  # a name written twice
            return None
        self._line, self._line_offset = line_at, line_offset
        self.pos = pos + 1
        if root is None:
            root = instructions[-1]
            root.is_root = True
        for k, param in enumerate(parameters):
            if param.parameter_number != k:  # out of order: sorted, or the error said
                parameters = self.ordered_parameters(instructions, name)
                break
        comp = parsed_computation(name, instructions, root, parameters, line, is_entry, by_name,
                                  start)
        for item in callers:
            item.caller = comp
        self.call_sites.extend(callers)
        return comp

    def instruction_apart(self, pos: int, get: Callable[[str], HloInstruction | None],
                          parameters: list[HloInstruction],
                          callers: list[Pending]) -> HloInstruction | None:
        """The instruction at ``pos`` read by the token readers (:meth:`instruction`), its
        operands found with ``get``, appended to ``parameters`` or ``callers`` if it is one;
        None (the general pass decides) if the computation ends here, or the instruction has
        inline instructions, an operand not found or control predecessors."""
        self.pos = pos
        if self.peek() in ("}", ""):
            return None
        pendings: list[Pending] = []
        self.instruction(pendings)
        if len(pendings) != 1:  # inline instructions
            return None
        item = pendings[0]
        found = []
        for operand in item.operands:
            target = get(operand) if isinstance(operand, str) else (
                None if operand.instr is not None else get(operand.name))
            if target is None:
                return None
            found.append(target)
        if item.control_predecessors:
            return None
        instr = item.instr
        instr.operands = found
        if instr.parameter_number is not None:
            parameters.append(instr)
        if item.computations:
            callers.append(item)
        return instr

    def ordered_parameters(self, instructions: list[HloInstruction],
                           comp: str) -> list[HloInstruction]:
        """The parameters of ``instructions`` by number; a ParseError for a number used
        twice or out of range."""
        in_order = [i for i in instructions if i.parameter_number is not None]
        if [i.parameter_number for i in in_order] == list(range(len(in_order))):
            return in_order  # numbered 0, 1, ... in text order: nothing to check or sort
        params = [(i.parameter_number, i) for i in instructions if i.parameter_number is not None]
        by_number: dict[int, HloInstruction] = {}
        for number, param in params:
            if number in by_number:
                raise self.error(f"parameter number {number} of {param.name!r} is already used "
                                 f"by {by_number[number].name!r} in {comp!r}", param._offset)
            if not 0 <= number < len(params):
                raise self.error(f"parameter number {number} of {param.name!r} is out of range: "
                                 f"{comp!r} has {len(params)} parameters", param._offset)
            by_number[number] = param
        return [by_number[k] for k in range(len(params))]
