"""The registry of per-op rules: one decorator, :func:`rule`, registers a rule for a
direction and some opcodes; :func:`opacity` registers why an op's maps are a labelled
over-approximation; :func:`output_to_input` / :func:`input_to_output` look a rule up, check
the index and finish (simplify) the maps. The rule families (:mod:`symidx.ops`) import this
module; it imports each of them on first use of one of its opcodes, by the table
:data:`~symidx.ops.families.FAMILY` (opcode -> module), so that a command loads only the
families its module's ops need. :class:`Direction` (on the floor of maps,
:mod:`symidx.core.indexing_map.direction`) and :func:`finish` (on the simplifier's,
:mod:`symidx.core.simplify.finish`) are re-exported here for the old import paths.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import import_module

from symidx.core.indexing_map import IndexingMap
from symidx.core.indexing_map.direction import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, Direction
from symidx.core.simplify.finish import finish
from symidx.errors import UnsupportedOpError, expect_type
from symidx.hlo.facts import check_index, num_outputs
from symidx.hlo.ir import HloInstruction
from symidx.ops.families import FAMILIES, FAMILY, family_of

__all__ = [
    "Direction",
    "OUTPUT_TO_INPUT",
    "INPUT_TO_OUTPUT",
    "rule",
    "output_to_input",
    "input_to_output",
    "finish",
    "supported_opcodes",
    "opacity",
    "output_opacity",
    "opaque_reason",
    "HANDLED_BY_FUSION",
    "FAMILIES",
    "load_family",
    "load_all_families",
    "registered_by",
]

#: The opcodes whose maps :mod:`symidx.fusion` gives itself (the keys of its one table of
#: steps, :data:`symidx.fusion.steps.STEPS`), rather than a per-op rule:
#:
#: * ops that run called computations (while, scan, conditional, call, fusion, async-*);
#: * ops split into a start and a done: copy-start/-done, send/recv and their done, and the
#:   asynchronous collectives: XLA's own all-gather/all-reduce/collective-permute
#:   ``-start``/``-done`` opcodes, and the ``X-start``/``X-done`` that XLA prints for an
#:   ``async-start``/``async-done`` wrapping the collective ``X`` (all-to-all,
#:   reduce-scatter, collective-broadcast, ragged-all-to-all: names of XLA's text, not of
#:   its opcode list);
#: * ops that move tuple leaves or tokens: tuple, get-tuple-element, opt-barrier, domain,
#:   add-dependency, after-all, infeed, outfeed. tuple, get-tuple-element and after-all
#:   also have a per-op rule, for an array element, but a sweep follows tuples leaf by
#:   leaf (a tuple of tuples), which a rule cannot.
HANDLED_BY_FUSION = frozenset({
    "while", "conditional", "call", "fusion", "async-start", "async-update", "async-done",
    "all-gather-start", "all-gather-done", "all-reduce-start", "all-reduce-done",
    "collective-permute-start", "collective-permute-done",
    "all-to-all-start", "all-to-all-done", "reduce-scatter-start", "reduce-scatter-done",
    "collective-broadcast-start", "collective-broadcast-done",
    "ragged-all-to-all-start", "ragged-all-to-all-done",
    "copy-start", "copy-done", "send", "send-done", "recv", "recv-done",
    "tuple", "get-tuple-element", "opt-barrier", "domain", "add-dependency", "after-all",
    "infeed", "outfeed", "scan",
})

#: A rule: (instruction, output index or operand index) -> a list of maps per operand
#: (output-to-input) or per output (input-to-output).
Rule = Callable[[HloInstruction, int], list[list[IndexingMap]]]


@dataclass(frozen=True, slots=True)
class _Entry:
    fn: Rule
    fold_point_dims: bool
    #: The rule takes ``assume_finite`` (its maps differ between the two semantics).
    semantics: bool = False
    #: The rule takes ``known`` (operands whose values another instruction holds).
    known_operands: bool = False


_RULES: dict[tuple[Direction, str], _Entry] = {}


def rule(direction: Direction, *opcodes: str, fold_point_dims: bool = False,
         semantics: bool = False, known_operands: bool = False) -> Callable[[Rule], Rule]:
    """Register ``fn`` as the ``direction`` rule of every opcode in ``opcodes``.

    The rule receives the instruction and the output index (output-to-input) or the operand
    index (input-to-output); indices are checked before it is called. It returns raw maps;
    :func:`finish` simplifies them. A rule registered with ``semantics=True`` also receives
    ``assume_finite`` (keyword): its maps under the ``reads`` semantics (False: an element
    is read when some IEEE value of it, NaN and infinities included, changes the output)
    and under the ``finite`` semantics (True: when some finite value does, every input
    finite) differ; every other rule's maps hold under both. A rule registered with
    ``known_operands=True`` reads the values of some operand (a scatter's indices) and
    also receives ``known`` (keyword, when the caller gives it): per operand position, the
    instruction that holds that operand's values, known before the run, when it is not the
    operand itself (a sweep follows a parameter to the instruction outside its computation
    that fills it); the rule reads the values there, and its runtime variables name it.
    """
    if direction not in (OUTPUT_TO_INPUT, INPUT_TO_OUTPUT):
        raise ValueError(f"unknown direction {direction!r}")

    def register(fn: Rule) -> Rule:
        for opcode in opcodes:
            if (direction, opcode) in _RULES:
                raise ValueError(f"two {direction} rules for {opcode!r}")
            _RULES[(direction, opcode)] = _Entry(fn, fold_point_dims, semantics,
                                                 known_operands)
        _record_owner(opcodes, sys._getframe(1).f_globals.get("__name__", "?"))
        return fn

    return register


#: Per opcode: a function telling why an instruction's maps over-approximate what it reads.
Opacity = Callable[[HloInstruction], "str | None"]
#: The same per output leaf and direction: ``fn(instr, output, direction)``, None meaning
#: "some output" or "either direction".
OutputOpacity = Callable[[HloInstruction, "int | None", "Direction | None"], "str | None"]
_OPACITY: dict[str, OutputOpacity] = {}


def opacity(*opcodes: str) -> Callable[[Opacity], Opacity]:
    """Register ``fn(instr) -> reason | None`` for ``opcodes``: the rules of an instruction
    for which it returns a reason (``"custom-call TopK"``) give a sound over-approximation
    of what it reads (every element of an operand, say), not the exact maps; None means the
    rules are exact for that instruction."""

    def register(fn: Opacity) -> Opacity:
        _register_opacity(opcodes, lambda instr, output, direction: fn(instr))
        _record_owner(opcodes, sys._getframe(1).f_globals.get("__name__", "?"))
        return fn

    return register


def output_opacity(*opcodes: str) -> Callable[[OutputOpacity], OutputOpacity]:
    """As :func:`opacity`, per output leaf and direction: ``fn(instr, output, direction)``
    tells why the maps of output leaf ``output`` in ``direction`` over-approximate (a library
    call whose workspace output is scratch, say, while its result is exact); None asks about
    any output, or either direction."""

    def register(fn: OutputOpacity) -> OutputOpacity:
        _register_opacity(opcodes, fn)
        _record_owner(opcodes, sys._getframe(1).f_globals.get("__name__", "?"))
        return fn

    return register


def _register_opacity(opcodes: tuple[str, ...], fn: OutputOpacity) -> None:
    for opcode in opcodes:
        if opcode in _OPACITY:
            raise ValueError(f"two opacity functions for {opcode!r}")
        _OPACITY[opcode] = fn


#: Per opcode, the modules whose import registered a rule or an opacity function for it
#: (what :data:`symidx.ops.families.FAMILY` must say; tests/test_architecture.py checks).
_OWNERS: dict[str, set[str]] = {}
#: The opcodes whose families are imported (their rules and opacity are registered).
_LOADED: set[str] = set()


def _record_owner(opcodes: tuple[str, ...], module: str) -> None:
    for opcode in opcodes:
        _OWNERS.setdefault(opcode, set()).add(module)


def registered_by() -> dict[str, frozenset[str]]:
    """Per opcode, the modules that registered its rules or opacity so far (imported ones)."""
    return {opcode: frozenset(modules) for opcode, modules in _OWNERS.items()}


def load_family(opcode: str) -> None:
    """Import the rule family that registers ``opcode`` (:data:`FAMILY`), once: the rules
    are loaded by opcode on first use, so a command imports only the families its module's
    ops need."""
    if opcode in _LOADED:
        return
    for module in family_of(opcode):
        import_module(module)
    _LOADED.add(opcode)


def load_all_families() -> None:
    """Import every rule family (what :func:`supported_opcodes` answers from)."""
    for module in FAMILIES:
        import_module(module)
    _LOADED.update(FAMILY)


def opaque_reason(instr: HloInstruction, output: int | None = None,
                  direction: Direction | None = None) -> str | None:
    """Why the maps of ``instr`` (of its output leaf ``output`` in ``direction``; None: of
    any output, in either direction) are a labelled over-approximation, or None when exact."""
    if instr.opcode not in _LOADED:
        load_family(instr.opcode)
    fn = _OPACITY.get(instr.opcode)
    return None if fn is None else fn(instr, output, direction)


def supported_opcodes(direction: Direction = OUTPUT_TO_INPUT) -> frozenset[str]:
    """The opcodes with a rule in ``direction``."""
    load_all_families()
    return frozenset(op for d, op in _RULES if d == direction)


def _call(entry: _Entry, instr: HloInstruction, index: int, assume_finite: bool,
          known: Mapping[int, HloInstruction] | None) -> list[list[IndexingMap]]:
    options: dict[str, object] = {}
    if entry.semantics:
        options["assume_finite"] = assume_finite
    if entry.known_operands and known:
        options["known"] = known
    return entry.fn(instr, index, **options)


def _lookup(direction: Direction, instr: HloInstruction) -> _Entry:
    entry = _RULES.get((direction, instr.opcode))
    if entry is None and instr.opcode not in _LOADED:
        load_family(instr.opcode)
        entry = _RULES.get((direction, instr.opcode))
    if entry is None:
        raise UnsupportedOpError(instr.opcode)
    return entry


def output_to_input(instr: HloInstruction, output_index: int = 0, *,
                    assume_finite: bool = False, known: Mapping[int, HloInstruction] | None = None
                    ) -> list[list[IndexingMap]]:
    """For output ``output_index`` of ``instr``: per operand, the maps from an output index
    to the operand elements it reads (``assume_finite``: under the ``finite`` semantics;
    ``known``: per operand position, the instruction holding its values, for a rule that
    reads them; see :func:`rule`). Raises :class:`UnsupportedOpError` for an op without a rule,
    :class:`SymidxError` for a bad index."""
    expect_type(instr, HloInstruction, "instr", "output_to_input")
    entry = _lookup(OUTPUT_TO_INPUT, instr)
    check_index(output_index, num_outputs(instr), instr.name, "output")
    groups = _call(entry, instr, output_index, assume_finite, known)
    return [[finish(m, entry.fold_point_dims) for m in group] for group in groups]


def input_to_output(instr: HloInstruction, operand_index: int, *,
                    assume_finite: bool = False, known: Mapping[int, HloInstruction] | None = None
                    ) -> list[list[IndexingMap]]:
    """For operand ``operand_index`` of ``instr``: per output, the maps from an operand index
    to the output elements that read it (``assume_finite``, ``known``: see
    :func:`output_to_input`).
    Raises :class:`UnsupportedOpError` for an op without a rule, :class:`SymidxError` for a
    bad index."""
    expect_type(instr, HloInstruction, "instr", "input_to_output")
    entry = _lookup(INPUT_TO_OUTPUT, instr)
    check_index(operand_index, len(instr.operands), instr.name, "operand")
    groups = _call(entry, instr, operand_index, assume_finite, known)
    return [[finish(m, entry.fold_point_dims) for m in group] for group in groups]
