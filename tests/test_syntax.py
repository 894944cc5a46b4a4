"""Map text: parsing every spelling, printing in three styles, round trips, hostile input."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import DATA
from helpers import assert_same_function, mlir_affine
from symidx.core.expr import CeilDiv, FloorDiv, Mod, dim, max_of, min_of, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.syntax import MAX_DEPTH, STYLES, parse_expr, parse_map, print_expr, print_map
from symidx.errors import MapError, ParseError
from symidx.strategies import indexing_maps

XLA_TEXTS = json.loads((DATA / "xla_map_texts.json").read_text())


def strip_sections(text: str) -> str:
    return re.split(r"runtime variables:|replica id:", text)[0].strip().rstrip(",")


@pytest.mark.parametrize("case", XLA_TEXTS, ids=lambda c: c["id"].split("/")[-1])
def test_every_xla_map_text_parses_prints_and_round_trips(case):
    m = parse_map(case["text"])
    for style in ("doc", "xla", "mlir"):
        if style == "mlir" and not mlir_affine(m):  # MLIR could not read it: refused
            with pytest.raises(MapError, match="not an affine map"):
                print_map(m, style)
            continue
        printed = print_map(m, style)
        again = parse_map(printed)
        assert again == m, style
        assert print_map(again, style) == printed  # printing is idempotent
        assert_same_function(again, parse_map(strip_sections(case["text"])))
        if again.num_rts:
            break  # the same map again: evaluation was checked once


PARSE_PRINT = [
    "() -> ()",
    "(d0, d1) -> (d0 mod 2 + d1), domain: d0 in [0, 3], d1 in [-4, 4]",
    "(){r0, r1} -> (r0), domain: r0 in [1, 1], r1 in [0, 1]",
    "(d0){r0, r1} -> (d0 / r0 + r1), domain: d0 in [0, 3], r0 in [1, 1], r1 in [0, 1]",
    "(d0, d1)[s0, s1, s2]{r0} -> (s2, d0 + d1, s1, s0, r0), domain: d0 in [0, 3], "
    "d1 in [0, 4], s0 in [0, 1], s1 in [0, 1], s2 in [0, 3], r0 in [0, 100], "
    "(r0 + 1) mod 5 in [1, 1], d0 mod 4 in [0, 0], d1 + s0 in [0, 45]",
    "(bl_x) -> (bl_x / 100663296), domain: bl_x in [0, 2415919103]",
    "(d0, d1)[s0] -> (min(d0, 5), max(d1, s0)), domain: d0 in [0, 9], d1 in [0, 9], "
    "s0 in [0, 9]",
    "(th_x, bl_x)[s0, vector_elem, s2]{gpu} -> (s2, th_x * gpu + bl_x, vector_elem, s0), "
    "domain: th_x in [0, 3], bl_x in [0, 4], s0 in [0, 1], vector_elem in [0, 1], "
    "s2 in [0, 3], gpu in [0, 1], (th_x * gpu) mod 4 in [0, 0], bl_x + s0 in [0, 45]",
]


@pytest.mark.parametrize("text", PARSE_PRINT)
def test_xla_style_reproduces_xla_text(text):
    # XLA's ParseAndCheck cases: canonical text prints back exactly
    assert print_map(parse_map(text), "xla") == text


def test_doc_style_is_the_seed_layout():
    m = parse_map("(d0, d1, d2) -> (d0 - 5, (d1 - 3) floordiv 7, d2 floordiv 2), domain: "
                  "d0 in [5, 9], d1 in [3, 17], d2 in [0, 48], (d1 - 3) mod 7 in [0, 0], "
                  "d2 mod 2 in [0, 0]")
    assert print_map(m) == (
        "(d0, d1, d2) -> (d0 - 5, (d1 - 3) floordiv 7, d2 floordiv 2),\n"
        "domain:\n"
        "d0 in [5, 9],\n"
        "d1 in [3, 17],\n"
        "d2 in [0, 48],\n"
        "(d1 - 3) mod 7 in [0, 0],\n"
        "d2 mod 2 in [0, 0]")


def test_seed_spellings():
    # juxtaposed coefficients, floorDiv, newline-separated domain without commas
    m = parse_map("(d0, d1, d2) -> ((100d0 + 10d1 + d2) floorDiv 100, d2 mod 10)\n"
                  "domain:\nd0 in [0, 9]\nd1 in [0, 9]\nd2 in [0, 9]")
    assert m.results[0] == FloorDiv(100 * dim(0) + 10 * dim(1) + dim(2), 100)
    assert print_map(m, "xla").startswith("(d0, d1, d2) -> ((d0 * 100 + d1 * 10 + d2) / 100")


def test_seed_runtime_variables_with_hlo_lines():
    m = parse_map("""(d0, d1)[s0, s1] -> (d0 - s0, d1 - s1)
domain:
d0 in [0, 19]
d1 in [0, 29]
s0 in [0, 15]
hlo: of1 = s32[] parameter(2)
(d0, d1) -> ()
s1 in [0, 20]
hlo: of2 = s32[] parameter(3)
(d0, d1) -> ()""")
    assert m.num_ranges == 0 and m.num_rts == 2
    assert m.rts[0].bounds == Interval(0, 15)
    assert str(m.rts[0].source) == "of1 = s32[] parameter(2)"
    assert m.rts[1].map == parse_map("(d0, d1) -> (), domain: d0 in [0, 19], d1 in [0, 29]")
    text = print_map(m, "xla")
    assert text.startswith("(d0, d1){rt0, rt1} -> (")
    assert "runtime variables:\nrt0: of1 = s32[] parameter(2); (d0, d1) -> ()" in text
    assert parse_map(text) == m
    assert parse_map(print_map(m, "doc")) == m


def test_equal_sub_expressions_are_read_as_one_object():
    """The memos downstream go by identity: a sub-expression written twice is read once."""
    m = parse_map("(d0, d1) -> ((d0 * 20 + d1) floordiv 100, ((d0 * 20 + d1) mod 100) "
                  "floordiv 10), domain: d0 in [0, 49], d1 in [0, 19], d0 * 20 + d1 in [0, 999]")
    linear = m.results[0].args[0]
    assert linear == 20 * dim(0) + dim(1)
    assert m.results[1].args[0].args[0] is linear
    assert m.constraints[0][0] is linear


def test_ceildiv_min_max_and_unary_minus():
    m = parse_map("(d0) -> (d0 ceildiv 4, -d0 mod 3, -(d0 mod 3), max(d0, 2)), "
                  "domain: d0 in [0, 9]")
    assert m.results[1] == Mod(-dim(0), 3)  # unary minus binds tightest
    assert m.results[2] == -Mod(dim(0), 3)
    # XLA prints a negated variable bare on the left of mod (indexing_map_test's
    # ModWithNegativeMultiplierDoesNotGetSimplified); the doc style keeps the parentheses
    assert print_map(m, "xla") == ("(d0) -> (d0 ceildiv 4, -d0 mod 3, -(d0 mod 3), "
                                   "max(d0, 2)), domain: d0 in [0, 9]")
    assert "(-d0) mod 3" in print_map(m, "doc")
    assert parse_map(print_map(m, "xla")) == m
    for point in range(10):
        assert m.evaluate([point]) == (-(-point // 4), -point % 3, -(point % 3), max(point, 2))


def test_seed_fourth_example_means_negated_quotient():
    m = parse_map("(d0, d1) -> (-((-11d0 - d1 + 109) floordiv 11) + 9), "
                  "domain: d0 in [0, 9], d1 in [0, 10]")
    assert m.evaluate([3, 4]) == (-((-33 - 4 + 109) // 11) + 9,)


def test_special_maps_and_known_empty():
    assert print_map(parse_map("KNOWN EMPTY")) == "KNOWN EMPTY"
    assert parse_map("UNDEFINED").is_undefined
    assert parse_map("(d0) -> (), domain: d0 in [1, 0]").is_known_empty
    assert parse_map("(d0) -> (d0), domain: d0 in [0, 9], 3 in [5, 6]").is_known_empty


def test_is_simplified_lines_and_affine_map_form():
    m = parse_map("(d0) -> (d0), domain: d0 in [0, 3], is_simplified: true")
    assert m == IndexingMap.create([4], [dim(0)])
    a = parse_map("affine_map<(d0)[s0, rt0] -> (d0 floordiv 8 + s0 + rt0)>\n"
                  "domain: d0 in [0, 31], s0 in [0, 3], rt0 in [0, 1]")
    assert (a.num_ranges, a.num_rts) == (1, 1)
    assert print_map(a, "mlir").startswith("affine_map<(d0)[s0, rt0] -> (")


def test_custom_names_print_back_and_do_not_affect_equality():
    a = parse_map("(x, y)[k] -> (x + k), domain: x in [0, 3], y in [0, 1], k in [0, 2]")
    b = parse_map("(d0, d1)[s0] -> (d0 + s0), domain: d0 in [0, 3], d1 in [0, 1], "
                  "s0 in [0, 2]")
    assert a == b and hash(a) == hash(b)
    assert print_map(a, "xla").startswith("(x, y)[k] -> (x + k)")


def test_print_is_canonical_whatever_the_build_order():
    a = IndexingMap.create([4, 8], [dim(1) + 8 * dim(0) + Mod(dim(1), 3)],
                           constraints=[(dim(0) + dim(1), (0, 5)), (Mod(dim(0), 2), (0, 0))])
    b = IndexingMap.create([4, 8], [Mod(dim(1), 3) + dim(1) + dim(0) * 8],
                           constraints=[(Mod(dim(0), 2), (0, 0)), (dim(1) + dim(0), (0, 5))])
    assert print_map(a, "xla") == print_map(b, "xla") == (
        "(d0, d1) -> (d0 * 8 + d1 mod 3 + d1), domain: d0 in [0, 3], d1 in [0, 7], "
        "d0 + d1 in [0, 5], d0 mod 2 in [0, 0]")


def test_parse_expr_and_print_expr():
    e = parse_expr("(d0 * 2 + s0 floordiv 64) floordiv 3")
    assert e == FloorDiv(2 * dim(0) + FloorDiv(sym(0), 64), 3)
    assert print_expr(e) == "(d0 * 2 + s0 / 64) / 3"
    assert print_expr(e, style="doc") == "(d0 * 2 + s0 floordiv 64) floordiv 3"


# --- errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize("text, line, column, message", [
    ("(d0) -> (d0 +), domain: d0 in [0, 3]", 1, 14, "expected an expression"),
    ("(d0) -> (d1), domain: d0 in [0, 3]", 1, 10, "unknown variable 'd1'"),
    ("(d0) -> (d0),\ndomain:\nd0 in [0, x]", 3, 11, "expected an integer"),
    ("(d0) -> (d0 floordiv 0), domain: d0 in [0, 3]", 1, 22, "floordiv by zero"),
    ("(d0, d0) -> (d0), domain: d0 in [0, 3]", 1, 6, "declared twice"),
    ("(d0)[s0] -> (d0), domain: d0 in [0, 3]", 1, 6, "'s0' has no interval"),
    ("(d0) -> (d0 é 2), domain: d0 in [0, 3]", 1, 13, "unexpected character 'é'"),
    ("(d0) -> (d0), domain: (d0 + 1 in [0, 3]", 1, 23, "missing ')'"),
    ("(d0) -> ((d0 + 1), domain: d0 in [0, 3]", 1, 20, "expected an expression"),
    ("(d0) -> (d0) garbage", 1, 14, "unexpected 'garbage'"),
    # the text after hlo: is read raw (any character); the tokens resume after it
    ("(d0)[s0] -> (d0 + s0)\ndomain:\nd0 in [0, 3]\ns0 in [0, 1]\nhlo: %p.1 = s32[] @(0)\n"
     "(d0) -> ()\nd0 mod 2 in [0, 0] %", 7, 20, "unexpected character '%'"),
])
def test_errors_have_line_column_and_message(text, line, column, message):
    with pytest.raises(ParseError) as info:
        parse_map(text)
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert message in str(err)
    caret_line = err.excerpt().splitlines()[-1]
    assert caret_line.index("^") == column - 1


def test_hostile_text_is_never_executed(tmp_path):
    marker = tmp_path / "pwned"
    for text in [f"__import__('os').system('touch {marker}')",
                 f"(d0) -> (__import__('os').system('touch {marker}'))",
                 "(d0) -> (d0), domain: d0 in [0, eval('1')]"]:
        with pytest.raises(ParseError):
            parse_map(text)
    assert not marker.exists()


def test_deep_nesting_is_a_parse_error_not_a_recursion_error():
    deep = "(d0) -> (" + "(" * 10_000 + "d0" + ")" * 10_000 + "), domain: d0 in [0, 3]"
    assert parse_map(deep) == parse_map("(d0) -> (d0), domain: d0 in [0, 3]")
    chain = "(d0) -> (d0" + " floordiv 2" * 10_000 + "), domain: d0 in [0, 3]"
    with pytest.raises(ParseError, match=f"nested more than {MAX_DEPTH}"):
        parse_map(chain)
    nested = "(d0) -> (" + "(d0 + " * 10_000 + "1" + ")" * 10_000 + ")"
    with pytest.raises(ParseError):
        parse_map(nested + ", domain: d0 in [0, 3]")


def test_huge_sums_and_integers():
    text = "(d0) -> (" + " + ".join(["d0"] * 100_000) + "), domain: d0 in [0, 3]"
    assert parse_map(text).results[0] == 100_000 * dim(0)
    big = 10**300
    m = parse_map(f"(d0) -> (d0 * {big} + 1), domain: d0 in [0, {big}]")
    assert m.evaluate([2]) == (2 * big + 1,)
    assert parse_map(print_map(m, "xla")) == m


# --- properties ------------------------------------------------------------------------------
@given(indexing_maps(negative_divisors=True))
def test_round_trip_in_every_style(m):
    for style in STYLES:
        if style == "mlir" and not mlir_affine(m):  # MLIR could not read it: refused
            with pytest.raises(MapError, match="not an affine map"):
                print_map(m, style)
            continue
        text = print_map(m, style)
        assert parse_map(text) == m, text
        assert print_map(parse_map(text), style) == text


# --- division by variables (XLA's newer text: `s0 / s1`) ---------------------------------------
def test_division_by_variables_reads_prints_and_evaluates():
    text = "()[s0, s1] -> (s0 / s1, s0 mod s1, s0 ceildiv (s1 * 2)), domain: s0 in [0, 9], " \
           "s1 in [1, 3]"
    m = parse_map(text)
    assert print_map(m, "xla") == text
    assert parse_map(print_map(m, "doc")) == m
    assert parse_map(print_map(m, "mlir")) == m
    assert m.evaluate([], [7, 2]) == (3, 1, 2)


@pytest.mark.parametrize("text, outside, inside", [
    ("()[s0, s1] -> (s0 / s1), domain: s0 in [0, 9], s1 in [0, 3]",
     ((), (5, 0)), ((), (5, 2))),
    ("(d0)[s0] -> (d0 mod (s0 - 2)), domain: d0 in [0, 9], s0 in [0, 4]",
     ((7,), (2,)), ((7,), (4,))),
    ("(d0)[s0] -> (d0), domain: d0 in [0, 9], s0 in [-1, 1], d0 floordiv s0 in [0, 3]",
     ((3,), (0,)), ((3,), (1,))),
])
def test_a_divisor_that_can_be_zero_parses_as_xla_accepts_it(text, outside, inside):
    # XLA accepts ``s0 floordiv s1`` with ``s1 in [0, 4]``; where the divisor is 0 the map
    # has no value: the point is outside its definition (issue 22, item 5)
    m = parse_map(text)
    assert parse_map(print_map(m, "xla")) == m
    assert m.zero_divisors()
    assert not m.constraints_hold(*outside)
    assert m.constraints_hold(*inside)


def test_a_constraint_can_keep_a_divisor_away_from_zero():
    m = parse_map("(d0)[s0] -> (d0 floordiv (s0 - 2)), domain: d0 in [0, 9], s0 in [0, 4], "
                  "s0 - 2 in [1, 2]")
    assert m.image((7,)) == {(7,), (3,)}


def _reference_tokens(text: str) -> list[tuple[str, str, int]]:
    """The map syntax's tokens, read a character at a time (what the reader's single
    regular expression must give)."""
    out, i = [], 0
    while i < len(text):
        c, start = text[i], i
        if c in " \t\r\n":
            i += 1
            continue
        if c.isascii() and c.isdigit():
            while i < len(text) and text[i].isascii() and text[i].isdigit():
                i += 1
            out.append(("int", text[start:i], start))
        elif c.isascii() and (c.isalpha() or c == "_"):
            while i < len(text) and text[i].isascii() and (text[i].isalnum() or text[i] == "_"):
                i += 1
            out.append(("ident", text[start:i], start))
        elif text.startswith("->", i):
            i += 2
            out.append(("punct", "->", start))
        elif c in "()[]{},:;+-*/<>":
            i += 1
            out.append(("punct", c, start))
        else:
            i += 1
            out.append(("bad", c, start))
    return out + [("eof", "", len(text))]


_PIECES = [*"d0s1rt_9 \t\r\n()[]{},:;+-*/<>=#\u00e9$", "floordiv", "mod", "in", "domain", "->",
           "- >"]


@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_tokens_are_plain_tuples_as_read_a_character_at_a_time(text):
    from symidx.core.syntax.parser import _Lexer

    tokens = _Lexer(text).tokens
    assert tokens == _reference_tokens(text)
    assert all(type(t) is tuple for t in tokens)


# --- the reader's fast paths read as the general steps do ----------------------------------
def _text_and_value(draw, depth: int) -> tuple[str, object]:
    """A random expression written with random spacing, parentheses, signs and juxtaposed
    coefficients, and its value built with sympy's operators and ours (no parser)."""
    sp = draw(st.sampled_from(["", " ", "  "]))
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            n = draw(st.integers(0, 12))
            signs = draw(st.sampled_from(["", "-", "--", "+", "-+-"]))
            return f"{signs}{sp}{n}", (-1) ** signs.count("-") * n
        name = draw(st.sampled_from(["d0", "d1", "s0"]))
        v = {"d0": dim(0), "d1": dim(1), "s0": sym(0)}[name]
        return name, v
    kind = draw(st.sampled_from(["+", "-", "*", "k*", "floordiv", "/", "mod", "ceildiv", "neg",
                                 "min", "max", "()", "+k", "chain"]))
    a, va = _text_and_value(draw, depth - 1)
    k = draw(st.integers(1, 9))
    if kind == "+k":  # a juxtaposed coefficient after a sum's operator: "(a) - 3d1"
        sign = draw(st.sampled_from(["+", "-"]))
        return f"({a}){sp}{sign}{sp}{k}d1", va + (k if sign == "+" else -k) * dim(1)
    if kind == "chain":  # precedence and left associativity without parentheses
        b, vb = _text_and_value(draw, depth - 1)
        return (f"({a}) - ({b}) mod {k} * 2 + 3 * ({a}) floordiv {k}",
                va - Mod(vb, k) * 2 + FloorDiv(3 * va, k))
    if kind == "()":
        return f"({sp}{a}{sp})", va
    if kind == "neg":
        return f"-({a})", -va
    if kind == "k*":  # juxtaposed: "3d0", "3(d0 + 1)"
        return f"{k}({a})", k * va
    if kind in ("floordiv", "/", "mod", "ceildiv"):
        c = draw(st.integers(1, 9)) * draw(st.sampled_from([1, -1]))
        op = {"floordiv": FloorDiv, "/": FloorDiv, "mod": Mod, "ceildiv": CeilDiv}[kind]
        gap = sp if kind == "/" else sp + " "
        return f"({a}){gap}{kind}{gap}{c}", op(va, c)
    b, vb = _text_and_value(draw, depth - 1)
    if kind in ("min", "max"):
        return f"{kind}({a},{sp}{b})", (min_of if kind == "min" else max_of)(va, vb)
    value = {"+": lambda: va + vb, "-": lambda: va - vb, "*": lambda: va * vb}[kind]()
    return f"({a}){sp}{kind}{sp}({b})", value


@given(st.data())
def test_random_expressions_read_as_built_with_operators(data):
    text, value = _text_and_value(data.draw, 4)
    assert parse_expr(text) == value, text
    assert parse_map(f"(d0, d1)[s0] -> ({text}), domain: d0 in [0, 3], d1 in [-2, 2], "
                     f"s0 in [1, 5]").results == (value,)


def test_a_negated_integer_has_the_depth_and_place_of_its_negation():
    for operand in ("7", "d0"):
        ok = "(d0) -> (" + "-" * (MAX_DEPTH - 1) + operand + "), domain: d0 in [0, 3]"
        assert parse_map(ok).results[0] == (-1) ** (MAX_DEPTH - 1) * parse_expr(operand)
        with pytest.raises(ParseError, match=f"nested more than {MAX_DEPTH}") as info:
            parse_map("(d0) -> (" + "-" * MAX_DEPTH + operand + "), domain: d0 in [0, 3]")
        assert info.value.column == 10  # the outermost sign
    for op in ("floordiv", "mod", "ceildiv"):
        with pytest.raises(ParseError, match=f"{op} by zero") as info:
            parse_map(f"(d0) -> (d0 {op} -0), domain: d0 in [0, 3]")
        assert info.value.column == 14 + len(op)  # the sign


@given(st.lists(st.tuples(st.integers(-3, 12), st.integers(-3, 12), st.booleans()),
                min_size=2, max_size=2), st.booleans(),
       st.sampled_from(["s0", "s0", "d7", "min", "hlo"]))
def test_a_variable_interval_reads_as_the_general_steps_read_it(bounds, allow_empty, second):
    """``d0 in [lo, hi]`` (read at once; and a whole domain of them, read without tokens)
    against ``(d0)in [lo, hi]`` (read by the general steps: the same columns), with a sign
    before the bound, and with a line the general steps read after the domain."""
    def text(general: bool) -> str:
        entries = []
        for name, (lo, hi, plus) in zip(("d0", second), bounds):
            var = f"({name})in" if general else f" {name} in"
            lo_text = f"+{lo}" if plus and general and lo >= 0 else f"{lo}"
            entries.append(f"{var} [{lo_text}, {hi}]")
        return "(d0)[s0] -> (d0 + s0), domain: " + ", ".join(entries)

    def read(t: str) -> object:
        try:
            return parse_map(t, allow_empty=allow_empty)
        except ParseError as e:
            return (str(e).split(":")[-1], e.column)

    fast, general = read(text(False)), read(text(True))
    assert read(text(False) + ", is_simplified: false") == fast
    plus_shift = any(plus and lo >= 0 for lo, _, plus in bounds)
    if isinstance(fast, tuple) and plus_shift:
        assert isinstance(general, tuple) and general[0] == fast[0]
    else:
        assert fast == general


@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_tokens_before_the_first_bad_one_are_read_without_a_check(text):
    from symidx.core.syntax.parser import _Lexer

    lexer = _Lexer(text)
    kinds = [kind for kind, _, _ in lexer.tokens]
    assert lexer._clear_to == (kinds.index("bad") if "bad" in kinds else len(kinds) - 1)
