"""Instructions alike (same opcode, shapes and attributes, for ops that read nothing
else) share their steps in a graph: the shared steps are those each instruction's own
rule gives, every instruction is still validated, and ops that read values (a select's
mask; a product's factors under ``finite``) or carry runtime values compute their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from symidx.fusion import Analysis
from symidx.fusion.steps import backward_steps, forward_steps
from symidx.hlo import parse_hlo
from symidx.hlo.leaves import leaf_count

DATA = Path(__file__).parent / "data" / "hlo"

LAYERS = """
HloModule m

ENTRY e {
  p = f32[4,8] parameter(0)
  q = f32[8] parameter(1)
  i = s32[] parameter(2)
  b1 = f32[4,8] broadcast(q), dimensions={1}, metadata={op_name="one"}
  m1 = f32[4,8] multiply(p, b1)
  b2 = f32[4,8] broadcast(q), dimensions={1}, metadata={op_name="two"}
  m2 = f32[4,8] multiply(m1, b2)
  b3 = f32[8,4] broadcast(q), dimensions={0}
  t = f32[4,8] transpose(b3), dimensions={1,0}
  c = pred[4,8] compare(m2, t), direction=GT
  s1 = f32[4,8] select(c, m2, t)
  s2 = f32[4,8] select(c, t, m2)
  d1 = f32[2,8] dynamic-slice(s1, i, i), dynamic_slice_sizes={2,8}
  d2 = f32[2,8] dynamic-slice(s2, i, i), dynamic_slice_sizes={2,8}
  ROOT r = (f32[2,8], f32[2,8], f32[4,8]) tuple(d1, d2, s2)
}
"""


def _modules() -> list[Path]:
    return sorted(DATA.glob("*.hlo")) + sorted((DATA / "real").glob("*.hlo"))


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.name)
@pytest.mark.parametrize("finite", [False, True])
def test_shared_steps_are_each_instructions_own(path: Path, finite: bool) -> None:
    """Every instruction of every computation of the module: the graph's steps (shared
    among instructions alike) equal the steps of the instruction's own rule."""
    module = parse_hlo(path.read_text())
    analysis = Analysis(verify=False, assume_finite=finite)
    for comp in module.computations.values():
        graph = analysis.graph(comp)
        for instr in comp.instructions:
            if not instr.operands:
                continue
            for k in range(leaf_count(instr.shape)):
                assert graph.backward(instr, k) == backward_steps(
                    instr, k, analysis, scope=graph.scope), instr.name
            for j, op in enumerate(instr.operands):
                for lf in range(leaf_count(op.shape)):
                    assert graph.forward(instr, j, lf) == forward_steps(
                        instr, j, lf, analysis, scope=graph.scope), instr.name


def test_instructions_alike_share_steps_and_others_do_not() -> None:
    comp = parse_hlo(LAYERS).entry
    graph = Analysis().graph(comp)
    steps = {i.name: graph.backward(i, 0) for i in comp.instructions if i.operands
             and i.opcode != "tuple"}
    assert steps["b1"] is steps["b2"]  # only the source position differs
    assert steps["m1"] is steps["m2"]
    assert steps["b3"] is not steps["b1"]  # another shape and dimensions
    assert steps["s1"] is not steps["s2"]  # a select reads its mask
    assert steps["d1"] is not steps["d2"]  # runtime values name their instruction
    finite = Analysis(assume_finite=True).graph(comp)
    assert finite.backward(comp.instruction("m1"), 0) is not \
        finite.backward(comp.instruction("m2"), 0)  # a factor read by the other's zeros


def test_an_instruction_alike_is_still_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each instruction goes through XLA's verifier checks, also one whose steps are
    another's."""
    from symidx.fusion import sweep

    checked: list[str] = []
    real = sweep.validate_instruction
    monkeypatch.setattr(sweep, "validate_instruction",
                        lambda instr: (checked.append(instr.name), real(instr))[1])
    comp = parse_hlo(LAYERS).entry
    graph = Analysis().graph(comp)
    assert graph.backward(comp.instruction("m1"), 0) is graph.backward(comp.instruction("m2"), 0)
    assert {"m1", "m2"} <= set(checked)
