"""The tiling's analysis walks the fusion on :class:`symidx.fusion.Analysis`'s indexing
graphs: each instruction's own maps are read from the graph, computed once however many
paths cross the instruction, and an analysis given to :func:`analyze` is the one walked
(a fresh one gives the same tiling)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from symidx.core.indexing_map import print_map
from symidx.fusion import Analysis, graph
from symidx.hlo import parse_hlo
from symidx.ops import output_to_input
from symidx.tiling.analysis import analyze, fusion_computation

# ``x`` is read on two paths with different maps (two halves of it), so the walk visits it
# twice; the nested ``call`` is walked on its own computation's graph.
TWO_HALVES = """HloModule halves
neg {
  q = f32[8] parameter(0)
  ROOT n = f32[8] negate(q)
}
fusion {
  p0 = f32[16] parameter(0)
  x = f32[16] exponential(p0)
  a = f32[8] slice(x), slice={[0:8]}
  b = f32[8] slice(x), slice={[8:16]}
  c = f32[8] call(b), to_apply=neg
  ROOT s = f32[8] add(a, c)
}
ENTRY e {
  p0 = f32[16] parameter(0)
  ROOT fusion = f32[8] fusion(p0), kind=kLoop, calls=fusion
}
"""


def _summary(tiling: Any) -> list[tuple[str, str, str]]:
    return [(ti.name, ti.path, print_map(ti.map, "xla")) for ti in tiling.tiled]


def test_each_instruction_s_own_maps_are_computed_once(monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    calls: Counter[str] = Counter()

    def counted(instr: Any, output: int = 0) -> list[list[Any]]:
        calls[instr.name] += 1
        return output_to_input(instr, output)

    monkeypatch.setattr(graph, "output_to_input", counted)
    comp = fusion_computation(parse_hlo(TWO_HALVES), "fusion")
    analysis = Analysis()
    tiling = analyze(comp, analysis)
    visits = Counter(ti.name for ti in tiling.tiled)
    assert visits["x"] == 2  # two paths, two maps
    # every instruction with operands that the walk crossed (the call's root ``n``
    # included, read on the call's own graph) had its maps computed exactly once
    crossed = {ti.name for ti in tiling.tiled if ti.instr.operands
               and ti.instr.opcode != "call"}
    assert crossed == {"s", "a", "b", "x", "n"}
    assert calls == Counter(dict.fromkeys(crossed, 1))
    # the maps read are the graph's, kept in the analysis given
    x = comp.instruction("x")
    assert analysis.graph(comp).rule_maps(x) == output_to_input(x, 0)
    assert calls["x"] == 1


def test_a_given_analysis_gives_the_tiling_a_fresh_one_gives() -> None:
    comp = fusion_computation(parse_hlo(TWO_HALVES), "fusion")
    shared = Analysis()
    first = _summary(analyze(comp, shared))
    again = _summary(analyze(comp, shared))
    fresh = _summary(analyze(comp))
    assert first == again == fresh
    paths = [p for _, p, _ in fresh]
    assert "roots[0].operand(1).called_root" in paths
    assert any(p.endswith(".caller_operand(0)") for p in paths)
