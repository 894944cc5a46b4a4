"""Several outputs swept together (``Analysis.backward_outputs``, ``--output all``) give each
output the maps and labels its own sweep gives, except that a bounding box made for the
outputs that have too many maps spans all of theirs (with the limits lowered so that they
bite: the box holds what each reads, and says so); and maps that depend on no index of the
start are swept without their dims, so that sweeps from different outputs share their
compositions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from reference_interpreter import map_relation

from symidx.fusion import Analysis, called_computation, sets
from symidx.hlo import HloComputation, parse_hlo
from symidx.hlo.leaves import leaf_count, leaves
from symidx.strategies import HLO_OPCODES, INDEX_OPCODES, hlo_modules

DATA = Path(__file__).parent / "data"
MODULES = [p for p in sorted([*DATA.glob("flow/**/*.hlo"), *DATA.glob("loops/*.hlo"),
                               *DATA.glob("hlo/*.hlo"), *DATA.glob("fusion/*.hlo")])
           if leaf_count(parse_hlo(p.read_text()).entry.root.shape) > 1]


def _alone(comp: HloComputation, outputs: list[int]) -> list[dict]:
    analysis = Analysis()
    return [analysis.parameters_of(comp, k) for k in outputs]


def _same(alone: dict, joint: dict) -> None:
    """``joint`` (one output's share of a joint sweep) is what ``alone`` (its own sweep)
    found: the same maps, the same labels, no origins."""
    assert set(alone) == set(joint)
    for key, single in alone.items():
        together = joint[key]
        assert together.unsupported == single.unsupported, key
        assert together.opaque == single.opaque, key
        assert set(together.maps) == set(single.maps), key
        assert together.origins == ()


def _same_or_boxed(comp: HloComputation, output: int, alone: dict, joint: dict) -> None:
    """As :func:`_same`, except where the joint sweep made a bounding box: there the box is
    labelled and holds what the output's own sweep found (which a box, if any, labels)."""
    assert set(alone) == set(joint)
    source = leaves(comp.root.shape)[output].dims
    for key, single in alone.items():
        together = joint[key]
        if together.opaque is None or "bounding box" not in together.opaque:
            _same({key: single}, {key: together})
            continue
        target = leaves(comp.parameters[key[0]].shape)[key[1]].dims
        exact = set(map_relation(single.maps, source, target).tolist())
        assert exact <= set(map_relation(together.maps, source, target).tolist()), key


@pytest.mark.parametrize("path", MODULES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_outputs_swept_together_give_what_each_gives_alone(path: Path) -> None:
    module = parse_hlo(path.read_text())
    comp = module.entry
    outputs = list(range(leaf_count(comp.root.shape)))
    joint = Analysis().parameters_of_outputs(comp, outputs)
    for alone, together in zip(_alone(comp, outputs), joint, strict=True):
        _same(alone, together)


TUPLES = hlo_modules(max_ops=6, fused=True, max_inputs=3, shared=True, tuple_root=True,
                     max_elements=48, opcodes=INDEX_OPCODES + HLO_OPCODES)


@settings(max_examples=60)
@given(TUPLES)
def test_random_outputs_swept_together_give_what_each_gives_alone(text: str) -> None:
    module = parse_hlo(text)
    comp = called_computation(module.entry.root)
    outputs = list(range(leaf_count(comp.root.shape)))
    joint = Analysis().parameters_of_outputs(comp, outputs)
    for alone, together in zip(_alone(comp, outputs), joint, strict=True):
        _same(alone, together)


# x read with strides 1 to 5: five maps no constant offset merges. Output 0 reads all five,
# output 1 two of them, output 2 the five again through a negate.
STRIDES = """HloModule strides
ENTRY e {
  x = f32[40] parameter(0)
SLICE_OPS
  a2 = f32[4] add(s1, s2)
  a3 = f32[4] add(a2, s3)
  a4 = f32[4] add(a3, s4)
  a5 = f32[4] add(a4, s5)
  n = f32[4] negate(a5)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(a5, a2, n)
}
""".replace("SLICE_OPS", "\n".join(f"  s{k} = f32[4] slice(x), slice={{[{k}:{k + 4 * k}:{k}]}}"
                                   for k in range(1, 6)))


@pytest.mark.parametrize("text", [STRIDES, *(p.read_text() for p in MODULES)],
                         ids=["strides", *(p.name for p in MODULES)])
def test_with_lower_limits_each_output_still_gets_what_it_gets_alone(
        text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bounding box is made for the outputs whose own maps are too many, and only for
    them: the other outputs keep their exact maps."""
    monkeypatch.setattr(sets, "MERGE_LIMIT", 1)
    monkeypatch.setattr(sets, "HULL_LIMIT", 3)
    comp = parse_hlo(text).entry
    outputs = list(range(leaf_count(comp.root.shape)))
    joint = Analysis().parameters_of_outputs(comp, outputs)
    alone = _alone(comp, outputs)
    for k, (single, together) in enumerate(zip(alone, joint, strict=True)):
        _same_or_boxed(comp, k, single, together)
        for key, reached in single.items():  # an output boxed alone is boxed together
            if reached.opaque is not None and "bounding box" in reached.opaque:
                assert "bounding box" in (together[key].opaque or ""), key
    if text is STRIDES:
        boxed = [r[(0, 0)].opaque for r in joint]
        assert "bounding box" in boxed[0] and "bounding box" in boxed[2] and boxed[1] is None
        reads = [set(map_relation(r[(0, 0)].maps, [4], [40]).tolist()) for r in joint]
        exact = {o * 40 + k + k * o for o in range(4) for k in (1, 2)}
        assert reads[1] == exact
        assert exact <= reads[0]  # the box holds what output 0 reads, and says so


def test_an_op_without_a_rule_makes_only_the_outputs_above_it_unknown() -> None:
    comp = parse_hlo("""HloModule u
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  f = f32[4] frobnicate(x, y)
  n = f32[4] negate(x)
  m = f32[4] multiply(n, y)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(f, n, m)
}
""").entry
    alone = _alone(comp, [0, 1, 2])
    assert alone[0][(0, 0)].unsupported == "frobnicate"
    assert alone[1][(0, 0)].unsupported is None and alone[2][(1, 0)].unsupported is None
    joint = Analysis().parameters_of_outputs(comp, [0, 1, 2])
    for single, together in zip(alone, joint, strict=True):
        _same(single, together)


CHAIN = """HloModule chain
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY e {
  x = f32[30,8] parameter(0)
CHAIN_OPS
  zero = f32[] constant(0)
  r = f32[] reduce(n19, zero), dimensions={0,1}, to_apply=%add
  a = f32[3] broadcast(r), dimensions={}
  b = f32[5,2] broadcast(r), dimensions={}
  ROOT t = (f32[3], f32[5,2]) tuple(a, b)
}
""".replace("CHAIN_OPS", "\n".join(
    f"  n{i} = f32[{29 - i},8] slice({'x' if i == 0 else f'n{i - 1}'}), "
    f"slice={{[0:{29 - i}],[0:8]}}" for i in range(20)))


def test_a_second_output_reading_through_the_same_pass_composes_nothing_again() -> None:
    comp = parse_hlo(CHAIN).entry
    analysis = Analysis()
    first = analysis.parameters_of(comp, 0)
    composed = len(analysis.memo.composed)
    assert composed >= 20  # the first output composed its way down the chain
    second = analysis.parameters_of(comp, 1)
    # the second output's own steps (the broadcast, the reduce) are new; the chain is not
    assert len(analysis.memo.composed) - composed <= 2
    for found, dims in ((first, 1), (second, 2)):
        (m,) = found[(0, 0)].maps
        assert m.num_dims == dims  # the maps come back with their output's dims
        dims = [3] if dims == 1 else [5, 2]
        rows = {o * 240 + i for o in range(int(np.prod(dims))) for i in range(10 * 8)}
        assert set(map_relation([m], dims, [30, 8]).tolist()) == rows  # x[0:10, :]


@pytest.mark.parametrize("width", [3, 70, 130])
def test_a_long_root_tuple_is_wired_as_a_short_one(width: int) -> None:
    """The root tuple of a training step (hundreds of leaves, some of them tuples, one
    operand twice) is looked up in an index built once (``steps._indexed_wiring``); each
    output leaf and each operand leaf gets the steps the plain wiring gives
    (``steps._connected``), in both directions."""
    from symidx.core.indexing_map.direction import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT
    from symidx.fusion import steps

    params = [f"  p{i} = f32[{1 + i % 3}] parameter({i})" for i in range(width)]
    params.append(f"  q = (f32[2], s32[]) parameter({width})")
    operands = [f"p{i}" for i in range(width)] + ["q", "p0"]
    shapes = [f"f32[{1 + i % 3}]" for i in range(width)] + ["(f32[2], s32[])", "f32[1]"]
    text = ("HloModule m\nENTRY e {\n" + "\n".join(params)
            + f"\n  ROOT t = ({', '.join(shapes)}) tuple({', '.join(operands)})\n}}\n")
    root = parse_hlo(text).entry.root
    wiring = steps._operand_leaves(root)
    assert len(wiring) == width + 3

    for k in range(width + 3):
        plain = steps._connected(root, wiring, OUTPUT_TO_INPUT, k, 0)
        assert len(plain) == 1
        assert [(s.output, s.position, s.leaf) for s in plain] == \
            [(k, *wiring[k][1:])]
        assert steps._moved_steps(root, OUTPUT_TO_INPUT, k, 0, None) == plain
    for p, op in enumerate(root.operands):
        for lf in range(leaf_count(op.shape)):
            plain = steps._connected(root, wiring, INPUT_TO_OUTPUT, p, lf)
            assert len(plain) == 1
            assert steps._moved_steps(root, INPUT_TO_OUTPUT, p, lf, None) == plain
