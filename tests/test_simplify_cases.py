"""Other projects' own simplifier expectations, as table data (``other_simplifier_cases.json``).

The cases come from XLA's ``symbolic_expr_test.cc``, MLIR's ``affine-map.mlir`` and
``simplify-with-bounds.mlir`` and PyTorch Inductor's ``test_indexing.py``, rewritten as
indexing maps (their variables become ``d``/``s``; range-free expressions get wide
intervals; Inductor's ``ModularIndexing(x, d, m)`` is ``(x floordiv d) mod m``). Each case
states symidx's expected result; where it differs on purpose from the other project's,
``theirs`` holds theirs and ``differs`` says why, and the two are checked to be the same
function (so only the form differs) -- except where ``same_function`` is false: there the
operation itself means another thing (XLA's mod by a negative divisor is never negative).
"""

from __future__ import annotations

import json

import pytest

from conftest import DATA
from helpers import assert_same_function
from symidx.core.simplify import simplify
from symidx.core.syntax import parse_map, print_map

CASES = json.loads((DATA / "other_simplifier_cases.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_other_projects_expectations(case):
    source = parse_map(case["input"])
    got = simplify(source)
    expected = parse_map(case["expected"])
    assert_same_function(got, source)
    assert_same_function(expected, source)
    assert got == expected, print_map(got)
    assert simplify(got) == got
    if "theirs" in case:
        assert case["differs"]
        theirs = parse_map(case["theirs"])
        if case.get("same_function", True):  # False: their operation means another thing
            assert_same_function(theirs, source)
        assert theirs != expected


def test_every_source_is_represented():
    sources = {c["source"].split()[1] for c in CASES}
    assert sources == {
        "xla/hlo/analysis/symbolic_expr_test.cc", "mlir/test/IR/affine-map.mlir",
        "mlir/test/Dialect/Affine/simplify-with-bounds.mlir",
        "test/inductor/test_indexing.py",
    }


def test_deliberate_differences_are_listed_with_a_reason():
    differing = [c for c in CASES if "theirs" in c]
    assert differing and all(len(c["differs"]) > 40 for c in differing)
