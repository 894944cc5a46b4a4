"""Map text in other compilers' syntaxes (MLIR, Inductor, TVM, isl) read into maps, and maps
printed as isl and Inductor text, checked by evaluation: against Python's own integer
arithmetic for the expressions written here, against islpy for the isl text printed, and
by round trips over random maps."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given

from symidx.cli import main
from symidx.core.interval import Interval
from symidx.core.syntax import detect_syntax, parse_map, print_map
from symidx.core.syntax.foreign import INDEX
from symidx.errors import MapError, ParseError
from symidx.strategies import indexing_maps


def points(m):
    return itertools.product(*(range(b.lo, b.hi + 1) for b in m.dims))


def same_function(a, b) -> None:
    """Equal dims and the same image at every point of the dims' box."""
    assert a.dims == b.dims
    for p in points(a):
        assert a.image(p) == b.image(p), p


# -- reading, against Python's arithmetic (// and % are floor division and modulus)

CASES = [
    ("inductor", "ModularIndexing(x, 4, 8) + 8*FloorDiv(x, 32), domain: x in [0, 127]",
     lambda x: ((x // 4) % 8 + 8 * (x // 32),)),
    ("inductor", "(x0 // 4) % 8 - 3*x1, domain: {x0: 64, x1: 3}",
     lambda x0, x1: ((x0 // 4) % 8 - 3 * x1,)),
    ("inductor", "(CleanDiv(x, 2), PythonMod(x - 7, 3), Min(x, 5, 9 - x)), domain: x in [-6, 9]",
     lambda x: (x // 2, (x - 7) % 3, min(x, 5, 9 - x))),
    ("inductor", "x // 4, -x % 4, CeilDiv(x, 3), domain: x in [-9, 9]",
     lambda x: (x // 4, -x % 4, -((-x) // 3))),
    ("inductor", "Max(y, 2*x) + IndexingDiv(y, 2), domain: y in [0, 7], x in [-2, 3]",
     lambda y, x: (max(y, 2 * x) + y // 2,)),
    ("tvm", "(floordiv(i, 4), floormod(i - 5, 4)), domain: i in [-8, 15]",
     lambda i: (i // 4, (i - 5) % 4)),
    ("tvm", "T.floordiv(i, 3) * 2 + tir.floormod(j, 5) + min(i, j), domain: i in [0, 9], "
            "j in [-3, 4]",
     lambda i, j: ((i // 3) * 2 + j % 5 + min(i, j),)),
    ("tvm", "i // 4 + i % 4 * 8, domain: i in [-4, 15]",  # TVMScript's // and %
     lambda i: (i // 4 + (i % 4) * 8,)),
    ("isl", "{ [i, j] -> [i + j, floor(i / 4), ceil((j - 1)/3), i mod 3, 2i - j] : "
            "0 <= i < 16 and -3 <= j <= 3 }",
     lambda i, j: (i + j, i // 4, -((1 - j) // 3), i % 3, 2 * i - j)),
    ("isl", "{ [i] -> [o, p] : o = i mod 4 and p = max(i, 3) and 0 <= i <= 15 }",
     lambda i: (i % 4, max(i, 3))),
    ("mlir", "#map = affine_map<(d0, d1) -> (d0 floordiv 4 + d1, d0 mod 3)>\n"
             "domain: d0 in [0, 11], d1 in [0, 2]",
     lambda d0, d1: (d0 // 4 + d1, d0 % 3)),
]


@pytest.mark.parametrize("syntax, text, reference", CASES, ids=[c[1][:40] for c in CASES])
def test_each_syntax_reads_what_python_computes(syntax, text, reference):
    m = parse_map(text, syntax=syntax)
    # '//' and '%' alone mean the same in Inductor and TVMScript: either is right
    found = detect_syntax(text)
    assert found == syntax or {found, syntax} == {"inductor", "tvm"}
    assert parse_map(text, syntax="auto") == m
    for p in points(m):
        assert m.image(p) == {reference(*p)}, p


def test_isl_exists_and_constraints():
    m = parse_map("{ [i] -> [o] : exists (e : o = i + e and 0 <= e <= 2) and 0 <= i <= 9 "
                  "and i + 1 <= 8 and 2i >= i - 3 and i - 1 < 2i }", syntax="isl")
    for i in range(-2, 12):
        inside = 0 <= i <= 7 and i >= -3 and i > -1
        assert m.image((i,)) == ({(i + e,) for e in range(3)} if inside else set())


def test_without_a_range_a_variable_takes_every_index_value():
    m = parse_map("affine_map<(d0)[s0] -> (d0 floordiv 4 + s0)>", syntax="mlir")
    assert m.dims == (INDEX,) and m.ranges == (INDEX,)
    assert m.evaluate((-9,), (5,)) == (-9 // 4 + 5,)
    m = parse_map("x // 4, domain: y in [0, 3]", syntax="inductor")  # y first: the domain's
    assert m.dims == (Interval(0, 3), INDEX)
    assert m.evaluate((2, -7)) == (-7 // 4,)


@pytest.mark.parametrize("syntax, text, message", [
    ("inductor", "x / 4", "true division in Inductor"),
    ("tvm", "floordiv(i, 4) + i / 2", "truncdiv"),
    ("tvm", "truncmod(i, 4)", "rounds toward zero"),
    ("inductor", "FloorDiv(x, y), domain: x in [0, 3], y in [1, 2]", "not a constant"),
    ("inductor", "ModularIndexing(x, 2)", "takes 3 arguments"),
    ("inductor", "x // 0", "floordiv by zero"),
    ("inductor", "x +", "expected an expression"),
    ("inductor", "x, domain: x in [0, 3] y", "expected"),
    ("isl", "[N] -> { [i] -> [i] : 0 <= i < N }", "parameters"),
    ("isl", "{ [i] -> [i + N] : 0 <= i < 4 }", "'N' is neither an input"),
    ("isl", "{ [i] -> [o] : 0 <= i < 4 }", "output 'o' is not defined"),
    ("isl", "{ [i] -> [i] : i = 0 or i = 1 }", "disjunctions"),
    ("mlir", "#a = affine_map<(d0) -> (d0)>\n#b = affine_map<(d0) -> (d0)>", "2 map"),
])
def test_bad_text_is_located(syntax, text, message):
    with pytest.raises(ParseError, match=message) as caught:
        parse_map(text, syntax=syntax, source="arg")
    assert caught.value.line >= 1 and str(caught.value).startswith("arg:line")


def test_auto_detection_tells_the_syntaxes_apart():
    assert detect_syntax("(d0) -> (d0 floordiv 4), domain: d0 in [0, 3]") == "xla"
    assert detect_syntax("(d0, d1)[s0] -> (d0)") == "xla"
    assert detect_syntax("(x // 4) % 8") == "inductor"
    assert detect_syntax("floordiv(i, 4)") == "tvm"
    assert detect_syntax("  { [i] -> [i] }") == "isl"
    assert detect_syntax("#map1 = affine_map<(d0) -> (d0)>") == "mlir"
    assert detect_syntax("KNOWN EMPTY") == "xla"
    assert detect_syntax("x + 1, domain: x in [0, 3]") == "inductor"
    assert detect_syntax("nonsense") == "xla"  # a typo is not taken for an expression


# -- printing, read back and by islpy


@given(indexing_maps(max_rts=0))
def test_isl_text_reads_back_to_the_same_function(m):
    if m.is_known_empty:
        return
    same_function(parse_map(print_map(m, "isl"), syntax="isl"), m)


@given(indexing_maps(max_ranges=0, max_rts=0))
def test_inductor_text_reads_back_to_the_same_function(m):
    if m.is_known_empty:
        return
    back = parse_map(print_map(m, "inductor"), syntax="inductor")
    same_function(back, m)


@given(indexing_maps(max_dims=2, max_ranges=1, max_rts=1, max_results=2))
def test_islpy_reads_the_isl_text_as_the_same_relation(m):
    islpy = pytest.importorskip("islpy")
    if m.is_known_empty:
        return
    relation = islpy.Map(print_map(m, "isl"))
    found: set[tuple[int, ...]] = set()
    n_in, n_out = m.num_dims, len(m.results)

    def add(point):
        found.add(tuple(point.get_coordinate_val(islpy.dim_type.set, i).to_python()
                        for i in range(n_in + n_out)))

    relation.wrap().foreach_point(add)
    expected = {tuple(p) + out for p in points(m) for out in m.image(p)}
    assert found == expected


def test_a_map_with_range_variables_has_no_inductor_form():
    with pytest.raises(MapError, match="no Inductor form"):
        print_map(parse_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1]"),
                  "inductor")


# -- the command line


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_proves_an_inductor_index_and_refutes_a_wrong_one(capsys):
    textbook = "x // 4, domain: x in [0, 1023]"
    code, out, _ = run(capsys, "verify", "ModularIndexing(x, 4, 8) + 8*FloorDiv(x, 32), "
                       "domain: x in [0, 1023]", textbook)
    assert code == 0 and out.startswith("equal")
    code, out, _ = run(capsys, "verify", "ModularIndexing(x, 4, 8) + 8*FloorDiv(x, 16), "
                       "domain: x in [0, 1023]", textbook)
    assert code == 1 and out.startswith("different at (")
    point = int(out.split("(")[1].split(")")[0])
    assert (point // 4) % 8 + 8 * (point // 16) != point // 4  # a true counterexample


def test_format_and_simplify_take_syntax_and_style(capsys):
    code, out, _ = run(capsys, "simplify", "--style", "inductor",
                       "ModularIndexing(x, 4, 8) + 8*FloorDiv(x, 32), domain: x in [0, 1023]")
    assert code == 0 and out.strip() == "FloorDiv(x, 4), domain: x in [0, 1023]"
    code, out, _ = run(capsys, "format", "--syntax", "isl", "--style", "xla",
                       "{ [i] -> [o] : o = i mod 4 and 0 <= i <= 15 }")
    assert code == 0 and out.strip() == "(i) -> (i mod 4), domain: i in [0, 15]"
    code, out, _ = run(capsys, "format", "--style", "isl",
                       "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1]")
    assert out.strip() == ("{ [d0] -> [o0] : 0 <= d0 <= 3 and exists (s0 : o0 = d0 + s0 "
                           "and 0 <= s0 <= 1) }")
    code, _, err = run(capsys, "format", "--syntax", "tvm", "i / 2")
    assert code == 2 and "truncdiv" in err and "^" in err


@pytest.mark.parametrize("syntax, template", [
    ("isl", "{{[i] -> [{} + i]}}"), ("inductor", "{} + x0"), ("tvm", "{} + i")])
def test_foreign_integers_past_pythons_digit_limit(syntax: str, template: str) -> None:
    """Integers longer than Python's 4,300-digit limit are read as the XLA reader reads
    them; past MAX_DIGITS they are a located error, never a bare ValueError."""
    from symidx.core.syntax.tokens import MAX_DIGITS

    big = "7" * 5000
    m = parse_map(template.format(big), syntax=syntax)
    (result,) = m.results
    assert result.subs(result.free_symbols.pop(), 0) == int("7" * 4000) * 10**1000 + int("7" * 1000)
    with pytest.raises(ParseError, match=f"at most {MAX_DIGITS}"):
        parse_map(template.format("7" * (MAX_DIGITS + 1)), syntax=syntax)
