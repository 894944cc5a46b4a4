"""TVM's arith suite (``tvm_arith_cases.json``: 310 checks from apache/tvm's
``tests/python/arith/``, converted by ``benchmarks/tvm_arith_convert.py``) through symidx.

Every check's answer keeps the input's meaning, by brute force on the points of its domain
(every point of a small domain; of a wide one, the part near 0 and a few hundred more,
ends included), and TVM's own expected expression means the input too (the data is read
right). How many answers take TVM's form (``benchmarks/tvm_arith.py`` says what that
means) is held at the count reached, so a rule that stops firing fails here."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import DATA
from symidx.core.interval import Interval
from symidx.core.syntax import parse_map

CASES = json.loads((DATA / "tvm_arith_cases.json").read_text())
#: TVM's form (exact or as simple), and exactly TVM's expression, at least this often
FORM_FLOOR = 309
EXACT_FLOOR = 251


def _scoreboard() -> Any:
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "tvm_arith.py"
    spec = importlib.util.spec_from_file_location("tvm_arith_scoreboard", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


BOARD = _scoreboard()


def test_the_table_holds_tvm_checks_of_both_kinds():
    kinds = {c["kind"] for c in CASES}
    assert kinds == {"expr", "range"} and len(CASES) == 310
    assert all(c["source"].startswith("apache/tvm tests/python/arith/") for c in CASES)
    assert len({c["id"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_every_answer_keeps_the_meaning(case):
    source = parse_map(case["map"], syntax="tvm")
    ours = BOARD.answer(case)
    if case["kind"] == "range":
        assert isinstance(ours, Interval) and not ours.is_empty
        assert BOARD.within_on_samples(source, ours), ours
        return
    assert BOARD.same_on_samples(ours, source), str(ours)
    assert BOARD.same_on_samples(parse_map(case["expected"], syntax="tvm"), source)


def test_the_answers_take_tvms_form_as_often_as_they_did():
    forms = [BOARD.judge(c, BOARD.answer(c)).form for c in CASES]
    taken = sum(f in ("exact", "as simple") for f in forms)
    assert taken >= FORM_FLOOR, taken
    assert forms.count("exact") >= EXACT_FLOOR, forms.count("exact")


def test_the_form_judgement_counts_divisions_min_max_and_operations():
    case = {"kind": "expr", "map": "floordiv(x * 8 + 7, 16), domain: x in [-99, 99]",
            "expected": "floordiv(x, 2), domain: x in [-99, 99]"}
    same = parse_map("floordiv(x, 2), domain: x in [-99, 99]", syntax="tvm")
    assert BOARD.judge(case, same).form == "exact"
    shorter = parse_map("x // 2 + 0, domain: x in [-99, 99]", syntax="tvm")
    assert BOARD.judge(case, shorter).form == "exact"  # printing differs, the form does not
    longer = parse_map("floordiv(x * 8 + 7, 16), domain: x in [-99, 99]", syntax="tvm")
    assert BOARD.judge(case, longer).form == "miss"  # as many divisions, more operations
    case = {"kind": "expr", "map": "min(x * 3, 9), domain: x in [-99, 99]",
            "expected": "min(x, 3) * 3, domain: x in [-99, 99]"}
    other = parse_map("min(x * 3, 9), domain: x in [-99, 99]", syntax="tvm")
    assert BOARD.judge(case, other).form == "as simple"
    case = {"kind": "range", "map": "floormod(x, 8), domain: x in [0, 99]", "lo": 0, "hi": 7}
    assert BOARD.judge(case, Interval(0, 7)).form == "exact"
    assert BOARD.judge(case, Interval(1, 7)).form == "as simple"  # tighter
    assert BOARD.judge(case, Interval(0, 8)).form == "miss"
