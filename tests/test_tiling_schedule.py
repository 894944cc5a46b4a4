"""Schedules of the tiled computation: every program id visits one tile, every tile is
visited once (brute force over the program ids), under major-to-minor and transposed-dot;
the transposed-dot offsets of XLA's test; its refusals."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from sympy import Integer

from symidx.cli import main
from symidx.core.expr import dim
from symidx.hlo import parse_module
from symidx.tiling.analysis import AnalysisRefusal, analyze, fusion_computation
from symidx.tiling.tiled import program_id_origin, schedule_dims, tiled_computation

DATA = Path(__file__).parent / "data" / "tiling"


def _tiling(name: str):  # type: ignore[no-untyped-def]
    module = parse_module((DATA / name).read_text())
    return analyze(fusion_computation(module, "fusion"))


CASES = [("dot.hlo", sizes) for sizes in ([16, 4, 8], [64, 8, 16], [32, 2, 4], [8, 8, 2])] + \
        [("batched_dot.hlo", sizes) for sizes in ([8, 1, 2, 8], [4, 2, 1, 4], [8, 1, 4, 16])]


@pytest.mark.parametrize("schedule", ["major-to-minor", "transposed-dot"])
@pytest.mark.parametrize("name, sizes", CASES)
def test_every_tile_is_visited_exactly_once(name: str, sizes: list[int], schedule: str) -> None:
    t = _tiling(name)
    flat = t.flat_sizes
    for ti in t.tiled:
        order = schedule_dims(t, ti, schedule)
        origin, total = program_id_origin(order, flat, sizes)
        visited = [tuple(int(origin[dim(i)].xreplace({dim(0): Integer(p)}))
                         for i in range(len(flat))) for p in range(total)]
        grid = set(itertools.product(*[
            range(0, flat[i], sizes[i]) if i in order else [0] for i in range(len(flat))]))
        assert len(visited) == len(set(visited)) == len(grid)
        assert set(visited) == grid
        # the instruction's offsets over all program ids: one tile per program id
        r = next(r for r in tiled_computation(t, sizes, schedule=schedule)
                 if r.path == ti.path)
        assert r.offsets_map.dims[0].hi == total - 1


def test_transposed_dot_walks_m_fastest() -> None:
    """Consecutive program ids of the dot root move along m under transposed-dot, along n
    under major-to-minor; both cover the same output tiles."""
    t = _tiling("dot.hlo")        # dot f32[8,16]: m = 8, n = 16
    sizes = [16, 4, 8]            # 2 x 2 output tiles
    offsets = {}
    for schedule in ("major-to-minor", "transposed-dot"):
        root = tiled_computation(t, sizes, schedule=schedule)[0]
        offsets[schedule] = [root.offsets_map.evaluate([p]) for p in range(4)]
    assert offsets["major-to-minor"] == [(0, 0), (0, 8), (4, 0), (4, 8)]
    assert offsets["transposed-dot"] == [(0, 0), (4, 0), (0, 8), (4, 8)]


def test_transposed_dot_offsets_are_xla_s(capsys: pytest.CaptureFixture[str]) -> None:
    """XLA's DotIndexingWorksAsExpectedWithTransposedDotSchedule (expected maps as data)."""
    code = main(["tile", str(DATA / "batched_dot.hlo"), "--fusion", "fusion", "--sizes",
                 "8,1,2,8", "--schedule", "transposed-dot"])
    out = capsys.readouterr().out
    assert code == 0
    assert ("dot (roots[0]): sizes [1, 2, 8] strides [1, 1, 1] offsets (pid_0) -> "
            "(pid_0 / 4, (pid_0 mod 2) * 2, ((pid_0 / 2) mod 2) * 8), domain: pid_0 in [0, 7]"
            ) in out
    assert "(pid_0) -> (pid_0 / 4, (pid_0 mod 2) * 2, 0), domain: pid_0 in [0, 7]" in out
    assert "(pid_0) -> (pid_0 / 4, 0, ((pid_0 / 2) mod 2) * 8), domain: pid_0 in [0, 7]" in out


def test_transposed_dot_needs_a_dot_root(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["tile", str(DATA / "diamond.hlo"), "--fusion", "fusion", "--sizes", "4,128",
                 "--schedule", "transposed-dot"])
    err = capsys.readouterr().err
    assert code == 2 and "needs a dot root; subtract is a subtract" in err
    with pytest.raises(AnalysisRefusal, match="unknown schedule"):
        tiled_computation(_tiling("dot.hlo"), [16, 4, 8], schedule="sideways")
