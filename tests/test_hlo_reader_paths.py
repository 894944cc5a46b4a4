"""The HLO reader's one-match readings against its token readers: the same text read either
way gives the same module -- every name, shape, operand, attribute, typed field, line and
offset -- or the same located error.

A long text (``ONE_MATCH_MIN_CHARS``) is read with one match per instruction, per attribute
and per signature where the spelling is the common one (:class:`symidx.hlo.instructions
._OneMatch`), a plain shape with one match (:func:`symidx.hlo.shape.plain_shape`) and a plain
vector of integers in a constant with one match; everything else token by token. Here the
threshold is set to 0 (one match wherever it applies) and above any text (tokens only).
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symidx.hlo.instructions as instructions
import symidx.hlo.reader as reader
from symidx.errors import ParseError
from symidx.hlo import HloModule, parse_hlo, parse_shape
from symidx.hlo.attributes import scan_value
from symidx.hlo.ir import (
    HloComputation,
    HloInstruction,
    SourceText,
    parsed_computation,
    parsed_instruction,
)
from symidx.hlo.shape import Shape, ShapeLike, TupleShape, plain_shape

DATA = Path(__file__).parent / "data"
FILES = sorted(DATA.rglob("*.hlo")) + sorted((Path(__file__).parent.parent / "symidx" / "examples")
                                             .glob("*.hlo"))
CONFORMANCE = [case["hlo"] for case in
               json.loads((DATA / "hlo" / "conformance_modules.json").read_text())]


@contextmanager
def one_match(on: bool) -> Iterator[None]:
    saved = instructions.ONE_MATCH_MIN_CHARS
    instructions.ONE_MATCH_MIN_CHARS = 0 if on else 1 << 62
    try:
        yield
    finally:
        instructions.ONE_MATCH_MIN_CHARS = saved


def _instruction(i: HloInstruction) -> tuple[object, ...]:
    return (i.name, i.opcode, repr(i.shape), i.line, i.is_root, [o.name for o in i.operands],
            sorted(i.attributes.items()), i.parameter_number, i.literal_text, repr(i.literal),
            sorted((k, [c.name for c in v]) for k, v in i.called_computations.items()),
            [c.name for c in i.control_predecessors], i.dimensions, i.slice, i.padding, i.window,
            i.dim_labels, i.dot_dimension_numbers, i.gather_dimension_numbers,
            i.scatter_dimension_numbers, i.dynamic_slice_sizes, i.slice_sizes, i.tuple_index,
            i.comparison_direction, i.fusion_kind, i.feature_group_count, i.batch_group_count,
            i._offset, sorted(i._attribute_offsets.items()))


def _module(module: HloModule) -> list[object]:
    return [module.name, sorted(module.attributes.items()), module.entry.name,
            sorted(module.debug_info.items())] + [
        [c.name, c.line, c.is_entry, c.is_fusion_computation, sorted(c.attributes.items()),
         [(a.name, b.name) for a, b in c.callers], c.root.name, [p.name for p in c.parameters],
         c._offset, [_instruction(i) for i in c.instructions]]
        for c in module.computations.values()]


def read(text: str, *, fast: bool) -> list[object]:
    """What ``text`` reads as (the module, or the error with its location)."""
    with one_match(fast):
        try:
            return _module(parse_hlo(text, source="t.hlo", validate=False))
        except ParseError as err:
            return ["error", str(err), err.offset]


def assert_same(text: str) -> None:
    assert read(text, fast=True) == read(text, fast=False)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_files_read_the_same_either_way(path: Path) -> None:
    text = path.read_text()
    assert read(text, fast=True)[0] != "error"
    assert_same(text)


def test_conformance_modules_read_the_same_either_way() -> None:
    for text in CONFORMANCE:
        assert_same(text)


# Spellings at the edges of the one-match readings: each must read as the token readers read
# it (a module, or the same error at the same place).
HEAD = "HloModule m\n\nENTRY e {\n  p0 = f32[4]{0} parameter(0)\n  p1 = s32[] parameter(1)\n"
EDGES = [
    "  ROOT c = u8[4] custom-call(p0), custom_call_target=\"x\", backend_config={}{a=1}\n",
    "  ROOT c = u8[4] custom-call(p0), backend_config={\"a\":'}'}\n",
    "  ROOT c = u8[4] custom-call(p0), backend_config={\"a\": [1, {\"b\": 2}]}\n",
    "  ROOT c = f32[4] all-reduce(p0), replica_groups=[1,1]<=[1]\n    T(1,0), to_apply=%s\n",
    "  ROOT c = f32[4] all-reduce(p0), replica_groups=[1,1]<=[1]T, to_apply=%s\n",
    "  ROOT c = f32[4] all-reduce(p0), replica_groups=[2]x<=[4], to_apply=%s\n",
    "  ROOT c = f32[4] all-reduce(p0), replica_groups={{0}}, to_apply=s:\n",
    "  ROOT c = f32[4] all-reduce(p0), replica_groups={{0}}, to_apply={%s}\n",
    "  ROOT c = f32[4] all-reduce(p0), replica_groups={{0}}{1}, to_apply=%s\n",
    "  ROOT c = f32[4] all-reduce(p0), replica_groups={{0},{}}x\"y\", to_apply=%s\n",
    "  ROOT c = f32[4] all-reduce(p0), replica_groups={}, to_apply=%s\n",
    "  ROOT c = f32[4] all-reduce(p0), replica_groups=[2,2]<=[4], to_apply=%s\n",
    "  ROOT c = f32[4] all-reduce(p0), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=%s\n",
    "  ROOT c = f32[4] all-reduce(p0), replica_groups=[2,2]<=[2,2]T(1,0)T(0,1), to_apply=%s\n",
    "  ROOT c = f32[4] all-reduce(p0), to_apply=%s, replica_groups=[2,2]<=[4]\n",
    "  ROOT c = f32[4] all-reduce(p0), to_apply=%s, replica_groups=[2,2]<=[4]\n  T(1,0)\n",
    "  ROOT c = f32[4] all-reduce(p0), replica_groups=[2,2]<=[4]T, to_apply=%s\n",
    "  ROOT c = f32[4] all-reduce(p0), replica_groups=[2,2]<=[4]T(a), to_apply=%s\n",
    "  ROOT c = f32[4] all-reduce(p0), replica_groups={{0}} , to_apply=%s\n",
    "  ROOT c = f32[4] negate(f32[4]{0} p0), metadata={op_name=\"a/b\" source_file=\"//x\"}\n",
    "  ROOT c = f32[4] negate(f32[4]{1} p0)\n",
    "  ROOT c = f32[4] negate(q32[4] p0)\n",
    "  ROOT c = f32[4] negate(/*index=0*/p0)\n",
    "  ROOT c = f32[4] add(p0, /*index=1*/p0), sharding={{devices=[2]<=[2]}, {replicated}}\n",
    "  ROOT c = f32[4] add(p0, p9)\n",
    "  p0 = f32[4] add(p0, p0)\n  ROOT c = f32[4] negate(p0)\n",
    "  ROOT c = f32[4] add(p0, negate(p0))\n",
    "  c = f32[4] add(p0, negate(p0))\n  ROOT d = f32[4] add(c, negate(c))\n",
    "  ROOT c = f32[4] add(p0, /*index=1*/p9)\n",
    "  ROOT c = f32[4] add(f32[4] p0, f32[4] p9)\n",
    "  ROOT c = f32[4] add(p0, p0), dimensions={0}, dimensions={0}\n",
    "  ROOT c = f32[4] add(p0, p0), dimensions={[}]\n",
    "  ROOT c = f32[4] add(p0, p0), dimensions={0} // a comment\n",
    "  ROOT c = f32[4] add(p0, p0), dimensions={0}/*x*/, foo=1\n",
    "  ROOT c = f32[4] add(p0, p0), dimensions= {0}\n",
    "  ROOT c = f32[4] add(p0, p0)\n  , foo=1\n",
    "  ROOT c = f32[4] add(p0, p0), control-predecessors={p1}\n",
    "  ROOT c = f32[4] add(p0, p0), control-predecessors={p7}\n",
    "  ROOT c = f32[4] add(p0, p0), slice={[0:4:1]}, window={size=2 stride=1}\n",
    "  ROOT c = f32[4] add(p0, p0), literal=s32[2]{0} {1, 2}\n",
    "  ROOT c = f32[4] parameter(2)\n",
    "  ROOT c = f32[4] parameter(p0)\n",
    "  ROOT c = f32[4] add(1)\n",
    "  ROOT c = f32[4] iota(), iota_dimension=0\n",
    "  ROOT c = s32[4]{0} constant({1, 2, 3, 4})\n",
    "  ROOT c = s8[4]{0} constant({1, 2, 3, 128})\n",
    "  ROOT c = u8[4]{0} constant({1, 2, -3, 4})\n",
    "  ROOT c = s32[4]{0} constant({1, 2, 3})\n",
    "  ROOT c = s32[4]{0} constant({1, 2, 3, 4, 5})\n",
    "  ROOT c = u64[2]{0} constant({18446744073709551615, 0})\n",
    "  ROOT c = s64[2]{0} constant({-9223372036854775808, 9223372036854775807})\n",
    "  ROOT c = s32[2]{0} constant({1 2})\n",
    "  ROOT c = pred[] constant(true)\n",
    "  ROOT c = f32[] constant(1, 2)\n",
    "  ROOT c = (f32[], s32[]) constant((1, 2))\n",
    "  ROOT c = f32[2,0]{1,0} broadcast(p1), dimensions={}\n",
    "  ROOT c = f32[2,,0] broadcast(p1), dimensions={}\n",
    "  ROOT c = f32[2]{0,} broadcast(p1), dimensions={}\n",
    "  ROOT c = f32[2]{} broadcast(p1), dimensions={}\n",
    "  ROOT c = (f32[2]{0}, /*index=1*/s32[]) tuple(p0, p1)\n",
    "  ROOT c = (f32[2]{0}, (s32[])) tuple(p0, p1)\n",
    "  ROOT c = f32[4] add(p0, p0), x=\"a\\\"b\"\n",
    "  ROOT c = f32[4] add(p0, p0), x='a'\n",
]
TAIL = "}\n\n%s (a: f32[], b: f32[]) -> f32[] {\n  a = f32[] parameter(0)\n" \
       "  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n"


@pytest.mark.parametrize("line", EDGES)
def test_edge_spellings_read_the_same_either_way(line: str) -> None:
    assert_same(HEAD + line + TAIL)


# A module's first computation, up to its closing '}'.
ADDER = ("HloModule m\n\n%s (a: f32[], b: f32[]) -> f32[] {\n  a = f32[] parameter(0)\n"
         "  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}")

# What may follow a computation's '}': its attributes, blanks, comments.
COMPUTATION_TAILS = ["", " ", "\n\n", " /* c */\n", " // c\n", ", execution_thread=\"x\"",
                     "\n, execution_thread=\"x\"\n", " , a=1 ", "\n\n, a=1, b={2}\n", ",\n"]


@pytest.mark.parametrize("tail", COMPUTATION_TAILS)
def test_computation_tails_read_the_same_either_way(tail: str) -> None:
    text = f"{ADDER}{tail}\nENTRY e {{\n  ROOT p = f32[] parameter(0)\n}}{tail}"
    assert_same(text)


# How a computation may start: ENTRY or not, blanks, comments, names like keywords.
HEADERS = ["ENTRY %e {", "ENTRY e{", "ENTRY\te (p: f32[]) -> f32[] {", "ENTRY\ne {",
           "ENTRY /*c*/ e {", "%ENTRY {", "ENTRY {", "ENTRY (p: f32[]) -> f32[] {", "e: {",
           "ENTRY e: {", "ENTRYe {", "e\n{", "e /*c*/ {", "ENTRY ENTRY {", "HloModule {",
           "ENTRY e (p: f32[])\n  -> f32[] {", "hlo_module {"]


@pytest.mark.parametrize("header", HEADERS)
def test_computation_headers_read_the_same_either_way(header: str) -> None:
    text = f"{ADDER}\n\n{header}\n  ROOT p = f32[] parameter(0)\n}}\n"
    assert_same(text)


SIGNATURES = [
    "(a: f32[], b: f32[]) -> f32[]", "(a: f32[], b: f32[]) -> f32[] {0}", "() -> f32[]",
    "(a: f32[2]{0}, b: (f32[], /*x*/s32[])) -> (f32[], s32[])", "(a: f32[], b: g32[]) -> f32[]",
    "(a: f32[],b:f32[]) -> f32[]", "(a f32[]) -> f32[]", "(a: f32[]) -> f32[1]{1}",
]


@pytest.mark.parametrize("signature", SIGNATURES)
def test_signatures_read_the_same_either_way(signature: str) -> None:
    text = (f"HloModule m\n\n%s {signature} {{\n  a = f32[] parameter(0)\n"
            f"  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}}\n\n"
            "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    assert_same(text)


# Computation bodies the one-pass build takes (plain) or leaves to the general pass: forward
# operands, unknown ones, names written twice, two ROOTs, cycles, control predecessors,
# parameters out of order or numbered twice.
BODIES = [
    "p = f32[] parameter(0)\n  q = f32[] parameter(1)\n  ROOT r = f32[] add(p, q)",
    "ROOT r = f32[] add(p, q)\n  p = f32[] parameter(0)\n  q = f32[] parameter(1)",
    "p = f32[] parameter(0)\n  ROOT r = f32[] add(p, x)",
    "p = f32[] parameter(0)\n  p = f32[] parameter(1)\n  ROOT r = f32[] add(p, p)",
    "p = f32[] parameter(0)\n  ROOT a = f32[] negate(p)\n  ROOT b = f32[] negate(p)",
    "p = f32[] parameter(0)\n  a = f32[] add(p, b)\n  ROOT b = f32[] add(p, a)",
    "p = f32[] parameter(0)\n  a = f32[] negate(p)\n"
    "  ROOT b = f32[] negate(p), control-predecessors={a}",
    "q = f32[] parameter(1)\n  p = f32[] parameter(0)\n  ROOT r = f32[] add(p, q)",
    "p = f32[] parameter(0)\n  q = f32[] parameter(0)\n  ROOT r = f32[] add(p, q)",
    "p = f32[] parameter(0)\n  q = f32[] parameter(2)\n  ROOT r = f32[] add(p, q)",
    "p = f32[] parameter(0)\n  a = f32[] negate(p)",
    "p = f32[] parameter(0)\n  ROOT r = f32[] add(p, f32[] negate(p))",
    # read apart (by the token readers) inside the one-loop reading, which goes on
    "p = c64[] parameter(0)\n  c = c64[] constant((0, 1))\n  ROOT r = c64[] add(p, c)",
    "p = f32[] parameter(0)\n  /* c */ a = f32[] negate(p)\n  ROOT r = f32[] add(p, a)",
    "p = f32[] parameter(0)\n  a = f32[] negate(%p )\n  ROOT r = f32[] add(p, a)",
    "p = f32[] parameter(0)\n  c = c64[] constant((0, 1))\n  ROOT r = f32[] add(p, x)",
    "p = f32[] parameter(0)\n  a = f32[] negate(p) /* c */\n  ROOT r = f32[] add(p, a)",
    # an inline computation read, then left behind with the rest (a forward operand after it)
    "p = f32[] parameter(0)\n  s = f32[] reduce(p, p), dimensions={}, to_apply={\n"
    "    x = f32[] parameter(0)\n    y = f32[] parameter(1)\n    ROOT z = f32[] add(x, y)\n  }\n"
    "  ROOT r = f32[] add(s, later)\n  later = f32[] negate(p)",
    "p = f32[] parameter(0)\n  s = f32[] reduce(p, p), dimensions={}, to_apply={\n"
    "    x = f32[] parameter(0)\n    y = f32[] parameter(1)\n    ROOT z = f32[] add(x, y)\n  }\n"
    "  ROOT r = f32[] add(s, p)",
]


@pytest.mark.parametrize("body", BODIES)
def test_computation_bodies_read_the_same_either_way(body: str) -> None:
    assert_same(f"HloModule m\n\nENTRY e {{\n  {body}\n}}\n")


# Entries of the debug tables of a compiled JAX dump, in common and uncommon spellings.
DEBUG_ENTRIES = [
    '1 "a/b.py"', '2 "x\\"y"', "3 {file_name_id=1 line=6}", "4\t{a=1}", '5  "\u00e9"',
    '6 "two\nlines"', '7 "split\\\n"', "8 {a={b=1}}", "9 {a=1 /* c */ b=2}", "10 {a='q'}",
    "11 {a=\"}\"}", '12"glued"', "13{glued=1}", "123456789012345678901 {a=1}",
    "00014 {a=1}", "15 /*c*/ {a=1}", "16 'single'", '17 "unterminated', "18 {a=1",
    "19 f32[]", "20 {a=1} // c", "\u0661 {a=1}", "21 {[a=1}", "22 {a=(1}", "23 {a=[1]}",
]


@pytest.mark.parametrize("entry", DEBUG_ENTRIES)
def test_debug_tables_read_the_same_either_way(entry: str) -> None:
    for block in ("FileNames", "StackFrames"):
        text = (f"HloModule m\n\n{block}\n1 \"first\"\n{entry}\n2 {{k=v}}\n\n"
                "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
        assert_same(text)


def test_debug_tables_keep_each_entry_as_written() -> None:
    """The values as written, comments removed, whichever way they are read."""
    text = ('HloModule m\n\nFileNames\n1 "a/b.py"\n2 "x\\"y"\n\nStackFrames\n'
            "1 {file_location_id=1 parent_frame_id=1}\n2\t{a=1 /* c */}\n\n"
            "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    for fast in (True, False):
        with one_match(fast):
            module = parse_hlo(text)
        assert module.debug_info == {
            "FileNames": ('1 "a/b.py"', '2 "x\\"y"'),
            "StackFrames": ("1 {file_location_id=1 parent_frame_id=1}", "2 {a=1 }"),
        }


# Mutations that hit the places the one-match readings decide: around brackets, commas,
# equal signs, comments and numbers.
_FRAGMENTS = list("{}[]()<>=,:%\"'/\\*? \n0123456789T") + [
    "/*index=5*/", ", ", "/* x */", "//c\n", "T(1,0)", "<=[8]", ", calls=%x", ", to_apply={",
    ", control-predecessors={%a}", ", literal=s32[] 1", ", replica_groups=[2]<=[2]",
    ", replica_groups={{0,1}}", ", x=",
    "{}", "%p0", "f32[] ", "{0}", "{1,0}", "s32[2] ", "(f32[], s32[])", "-1",
]
_SOURCES = [p.read_text() for p in FILES if p.stat().st_size < 20_000]


@st.composite
def _mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(_SOURCES))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):  # near a character the readings decide on
            while at < len(text) and text[at] not in ",=()%{}[]":
                at += 1
            at = min(len(text), at + draw(st.integers(0, 1)))
        kind = draw(st.sampled_from(["delete", "insert", "replace"]))
        if kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 8)):]
        elif kind == "insert":
            text = text[:at] + draw(st.sampled_from(_FRAGMENTS)) + text[at:]
        else:
            text = text[:at] + draw(st.sampled_from(_FRAGMENTS)) + text[at + 1:]
    return text


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_mutated())
def test_mutated_texts_read_the_same_either_way(text: str) -> None:
    assert_same(text)


def _backtracking(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` with its possessive ``*+`` runs written as backtracking ``*`` runs."""
    return re.compile(pattern.pattern.replace("*+", "*"))


_ONE_MATCH = instructions._one_match()
_POSSESSIVE = {name: (pattern, _backtracking(pattern)) for name, pattern in
               [*vars(_ONE_MATCH).items(), ("plain shape", reader._PLAIN_SHAPE_RE)]
               if hasattr(pattern, "match") and "attribute" not in name}  # lazy ones too


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_mutated())
def test_possessive_runs_match_as_backtracking_ones(text: str) -> None:
    """The one-match patterns take runs possessively (``*+``) only where what follows a run
    can never be in it, so that giving some of it back would never help: each matches
    where, and as, the same pattern with backtracking runs does (only faster)."""
    assert {"instruction", "plain_instruction", "plain shape"} <= set(_POSSESSIVE)
    starts = {0} | {m.end() for m in re.finditer(r"[\n(,=:] ?[ \t]*", text)}
    for name, (fast, slow) in _POSSESSIVE.items():
        for at in starts:
            one, other = fast.match(text, at), slow.match(text, at)
            assert (one and (one.span(), one.groups())) == \
                (other and (other.span(), other.groups())), (name, text[at: at + 60])


_ELEMENT_TYPES = ["f32", "s32", "pred", "bf16", "u8", "q32", "b", "token"]


@st.composite
def _plainish_shapes(draw: st.DrawFn) -> str:
    def array() -> str:
        dims = draw(st.lists(st.sampled_from(["0", "1", "2", "3", "007", "", "12"]), max_size=3))
        text = f"{draw(st.sampled_from(_ELEMENT_TYPES))}[{','.join(dims)}]"
        if draw(st.booleans()):
            order = draw(st.lists(st.sampled_from(["0", "1", "2", ""]), max_size=3))
            text += "{" + ",".join(order) + "}"
        return text
    if draw(st.booleans()):
        return array()
    comment = draw(st.sampled_from(["", "/*index=1*/"]))
    count = draw(st.integers(0, 3))
    return "(" + draw(st.sampled_from([", ", ","])).join(
        (comment if k else "") + array() for k in range(count)) + ")"


@given(_plainish_shapes())
def test_plain_shapes_read_as_the_token_reader_reads_them(text: str) -> None:
    shape = plain_shape(text)
    try:
        expected = parse_shape(text)
    except ParseError:
        assert shape is None
        return
    assert shape is None or (shape == expected and repr(shape) == repr(expected)
                             and hash(shape) == hash(expected))
    # With a memo of element readings (as the reader keeps one): the same shape, and the
    # elements it built are memoised as the token reader reads them.
    known: dict[str, ShapeLike] = {}
    again = plain_shape(text, known)
    assert again == shape and repr(again) == repr(shape)
    assert plain_shape(text, known) == shape
    for element, reading in known.items():
        assert reading == parse_shape(element) and repr(reading) == repr(parse_shape(element))


def test_plain_arrays_have_every_field_the_constructor_gives() -> None:
    for text in ("f32[8,128]{1,0}", "s32[]", "pred[0]{0}", "bf16[2,3,4]", "u8[]{}"):
        built = plain_shape(text)
        assert isinstance(built, Shape)
        again = Shape(built.element_type, built.dims, layout=built.layout)  # its own checks
        for each in fields(Shape):
            assert getattr(built, each.name) == getattr(again, each.name), (text, each.name)
        assert hash(built) == hash(again)


def test_tuple_hashes_are_computed_once_asked() -> None:
    elements = (parse_shape("f32[2]{0}"), parse_shape("(s32[], u8[3])"))
    first, second = TupleShape(elements), TupleShape(elements)
    assert hash(first) == hash(elements) == hash(second) == hash(first)
    assert {first: 1}[second] == 1


def test_plain_shapes_are_read_with_one_match() -> None:
    assert plain_shape("f32[8,128]{1,0}") == parse_shape("f32[8,128]{1,0}")
    assert plain_shape("(s32[], /*index=1*/f32[2]{0})") == parse_shape("(s32[], f32[2]{0})")
    for other in ("f32[<=8]", "f32[8]{0:T(8)}", "b(f32[8])", "f32[ 8]", "f32[8]{1}"):
        assert plain_shape(other) is None


def test_parsing_files_the_module_in_the_oldest_generation_and_keeps_freezes() -> None:
    assert gc.get_freeze_count() == 0
    parse_hlo(FILES[0].read_text())
    assert gc.isenabled() and gc.get_freeze_count() == 0
    mine = [object() for _ in range(3)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        parse_hlo(FILES[0].read_text())
        assert gc.get_freeze_count() == frozen  # the program's own freeze is left alone
    finally:
        gc.unfreeze()
    del mine


def test_parsed_instruction_builds_what_the_dataclass_builds() -> None:
    document = SourceText("x", "t.hlo")
    shape = parse_shape("f32[2]{0}")
    values, offsets = {"k": "v"}, {"k": 3}
    fast = parsed_instruction("a", "add", shape, 7, True, 5, document, values, offsets)
    slow = HloInstruction("a", "add", shape, 7, is_root=True, attributes={"k": "v"},
                          _offset=5, _attribute_offsets={"k": 3}, _document=document)
    for each in fields(HloInstruction):  # every field, so a new one must be added there too
        assert getattr(fast, each.name) == getattr(slow, each.name), each.name
    assert fast.attributes is values and fast._attribute_offsets is offsets
    other = parsed_instruction("b", "add", shape, 8, False, 6, document, {}, {})
    for name in ("operands", "called_computations", "control_predecessors"):  # not shared
        assert getattr(fast, name) is not getattr(other, name)


def test_parsed_computation_builds_what_the_dataclass_builds() -> None:
    shape = parse_shape("f32[2]{0}")
    p = parsed_instruction("p", "parameter", shape, 2, False, 5, SourceText("x", ""), {}, {})
    by_name = {"p": p}
    fast = parsed_computation("c", [p], p, [p], 1, True, by_name, 4)
    slow = HloComputation("c", [p], p, [p], 1, is_entry=True, _by_name=by_name, _offset=4)
    for each in fields(HloComputation):  # every field, so a new one must be added there too
        assert getattr(fast, each.name) == getattr(slow, each.name), each.name
    other = parsed_computation("d", [p], p, [p], 1, False, {}, 0)
    for name in ("attributes", "callers"):  # not shared
        assert getattr(fast, name) is not getattr(other, name)


@given(st.lists(st.sampled_from(["[", "]", "{", "}", "(", ")", "<=", "T", "0", "2", ",", " ",
                                 "\n", "x", "/*c*/"]), max_size=14),
       st.sampled_from([",", "\n", " ,", "\n T(1,0)", " T(0)", ""]))
def test_replica_groups_taken_whole_only_where_their_scanner_ends(parts: list[str],
                                                                  after: str) -> None:
    text = ", replica_groups=" + "".join(parts) + after
    whole = instructions._one_match().attribute.match(text)
    if whole is not None and instructions._plain_replica_groups(whole.group(2), text,
                                                                 whole.end()):
        assert scan_value(text, whole.start(2), "replica_groups") == whole.end()
