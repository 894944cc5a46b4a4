"""Tiling through nested fusions (XLA's nested GEMM fusions): the maps the analysis
composes through a nested fusion's computation equal, as point sets, symidx's fusion
analysis of the nested fusion composed with the map to its output; --check proves the
tiles; the tile-executing twin covers the module (tests/test_tiling_twin.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from symidx.analysis import instruction_maps
from symidx.cli import main
from symidx.cli.inputs import load_module
from symidx.core.indexing_map import IndexingMap
from symidx.core.simplify import compose
from symidx.tiling import analysis

DATA = Path(__file__).parent / "data" / "tiling"


def image(m: IndexingMap) -> set[tuple[int, ...]]:
    """Every index the map reads, by enumeration of its domain."""
    out: set[tuple[int, ...]] = set()
    for values in m.points():
        results, mask = m.evaluate_arrays(list(values))
        cols = [np.broadcast_to(np.asarray(r), np.shape(mask))[mask] for r in results]
        out |= set(zip(*[c.tolist() for c in cols]))
    return out


def test_nested_maps_equal_the_fusion_analysis() -> None:
    module = load_module(str(DATA / "nested_gemm.hlo"))
    comp = analysis.fusion_computation(module, "fusion")
    t = analysis.analyze(comp)
    by_path = {ti.path: ti for ti in t.tiled}
    checked = 0
    for nested in (i for i in comp.instructions if i.opcode == "fusion"):
        outer = next(ti for ti in t.tiled if ti.instr is nested)
        groups = instruction_maps(nested, "output_to_input")
        assert [g.index for g in groups] == list(range(len(nested.operands)))
        for k, group in enumerate(groups):
            assert group.unsupported is None and len(group.maps) == 1
            expected = image(compose(outer.map, group.maps[0]))
            crossed = [ti for p, ti in by_path.items()
                       if p.startswith(outer.path + ".called_root")
                       and p.endswith(f".caller_operand({k})")]
            assert len(crossed) == 1 and crossed[0].instr is nested.operands[k]
            assert image(crossed[0].map) == expected
            checked += 1
    assert checked == 2


def test_nested_fusion_is_tiled_and_proven(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["tile", str(DATA / "nested_gemm.hlo"), "--fusion", "fusion", "--sizes",
                 "16,4,8", "--check", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["check"]["ok"]
    names = {(i["name"], i["path"]) for i in doc["tiled"]}
    # the nested computations' instructions and the outer operands they read
    assert ("t", "roots[0].operand(1).called_root") in names
    assert ("p1", "roots[0].operand(1).called_root.operand(0).caller_operand(0)") in names
    p1 = next(i for i in doc["tiled"] if i["name"] == "p1")
    # rhs = transpose(p1): p1's tile is the transposed [8, 16] box
    assert p1["tile_sizes"] == [8, 16]


def test_multi_output_nested_fusion_is_refused(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    text = (DATA / "nested_gemm.hlo").read_text().replace(
        "  ROOT n = f32[8,32] negate(p0)\n",
        "  n = f32[8,32] negate(p0)\n  ROOT tu = (f32[8,32], f32[8,32]) tuple(n, n)\n").replace(
        "  a = f32[8,32] fusion(p0), kind=kCustom, calls=lhs\n",
        "  a2 = (f32[8,32], f32[8,32]) fusion(p0), kind=kCustom, calls=lhs\n"
        "  a = f32[8,32] get-tuple-element(a2), index=0\n")
    path = tmp_path / "multi.hlo"
    path.write_text(text)
    code = main(["tile", str(path), "--fusion", "fusion"])
    err = capsys.readouterr().err
    assert code == 2 and "nested fusion a2 has several outputs" in err


def test_a_root_nested_fusion_is_refused_as_xla_does(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    path = tmp_path / "root.hlo"
    path.write_text("HloModule m\n\nnested {\n  q = f32[4] parameter(0)\n  ROOT n = f32[4] "
                    "negate(q)\n}\n\nfusion {\n  p = f32[4] parameter(0)\n  ROOT f = f32[4] "
                    "fusion(p), kind=kLoop, calls=nested\n}\n\nENTRY main {\n  p = f32[4] "
                    "parameter(0)\n  ROOT r = f32[4] fusion(p), kind=kLoop, calls=fusion\n}\n")
    code = main(["tile", str(path), "--fusion", "r"])
    err = capsys.readouterr().err
    assert code == 2 and "the root f is a nested fusion" in err
