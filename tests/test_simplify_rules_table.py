"""One table row per simplifier rule (``simplifier_rule_cases.json``): a map the rule must
fire on, and the simplified map written out by hand. Each row is checked three ways: the
rule fired (by the simplifier's own counters), the result is the expected map, and input,
result and expected map are the same function on every point of the domain (brute force).
A rule without a row fails :func:`test_every_rule_has_a_row`."""

from __future__ import annotations

import json

import pytest

from conftest import DATA
from helpers import assert_same_function
from symidx.core.simplify import simplify
from symidx.core.simplify.constraints import CONSTRAINT_RULES, VARIABLE_RULES
from symidx.core.simplify.table import RULES
from symidx.core.syntax import parse_map, print_map

CASES = json.loads((DATA / "simplifier_rule_cases.json").read_text())


def _id(case: dict[str, str]) -> str:
    return case["rule"] + (f"-{case['id']}" if "id" in case else "")


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_rule_fires_and_gives_the_expected_map(case):
    source = parse_map(case["input"])
    expected = parse_map(case["expected"])
    result = simplify(source, trace=True)
    counts = result.stats.rules.get(case["rule"])
    assert counts is not None and counts.fired >= 1, sorted(result.stats.rules)
    assert case["rule"] in {step.rule for step in result.trace}
    assert result.complete
    assert result.map == expected, print_map(result.map)
    assert_same_function(result.map, source)
    assert_same_function(expected, source)
    assert simplify(expected) == expected  # the expected map is itself simplified


def test_every_rule_has_a_row():
    names = {rule.__name__ for rules in RULES.values() for rule in rules}
    names |= {rule.__name__ for rule in (*CONSTRAINT_RULES, *VARIABLE_RULES)}
    assert names == {case["rule"] for case in CASES}
