"""The collective an asynchronous ``X-start`` runs (symidx.hlo.asynchronous)."""

from __future__ import annotations

import doctest

import symidx.hlo.asynchronous as asynchronous
from symidx.hlo import HloInstruction, parse_hlo
from symidx.hlo.asynchronous import ASYNC_COLLECTIVE_DONE, keeps_operands, wrapped_collective

MODULE = """
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4,2] parameter(0)
  ags = (f32[4,2], f32[4,4]) all-gather-start(p), replica_groups={{0,1}}, dimensions={1}
  agd = f32[4,4] all-gather-done(ags)
  ars = f32[4,4] all-reduce-start(agd), replica_groups={{0,1}}, to_apply=sum
  ard = f32[4,4] all-reduce-done(ars)
  rss = ((f32[4,4]), f32[2,4], s32[]) reduce-scatter-start(ard), replica_groups={{0,1}}, \
dimensions={0}, to_apply=sum
  ROOT rsd = f32[2,4] reduce-scatter-done(rss)
}
"""


def _instructions() -> dict[str, HloInstruction]:
    return {i.name: i for i in parse_hlo(MODULE).entry.instructions}


def test_the_tuple_form_keeps_the_operands_and_runs_on_element_1() -> None:
    found = _instructions()
    for name, opcode, shape in (("ags", "all-gather", "f32[4,4]"),
                                ("rss", "reduce-scatter", "f32[2,4]")):
        start = found[name]
        assert keeps_operands(start)
        inner = wrapped_collective(start)
        assert (inner.opcode, str(inner.shape), inner.name) == (opcode, shape, name)
        assert inner.operands == start.operands
        assert inner.attributes == start.attributes
        assert start.opcode == f"{opcode}-start"  # unchanged


def test_the_plain_form_is_the_result() -> None:
    start = _instructions()["ars"]
    assert not keeps_operands(start)
    inner = wrapped_collective(start)
    assert (inner.opcode, str(inner.shape)) == ("all-reduce", "f32[4,4]")
    assert "all-reduce-done" in ASYNC_COLLECTIVE_DONE and "async-done" not in ASYNC_COLLECTIVE_DONE


def test_the_module_docstring_example() -> None:
    failed, tried = doctest.testmod(asynchronous)
    assert tried and not failed
