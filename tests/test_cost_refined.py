"""``--objective symidx`` (symidx/cost/refined.py): the contiguous run of a tile against its
enumerated addresses, the staged tile's bank wavefronts against the layout bank model
asked directly, the shared-memory time by hand, and the picks that change while XLA's
default stays XLA's."""

from __future__ import annotations

import json
from itertools import product
from math import prod
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from symidx.cli import main
from symidx.cost import best, cost, fusion_tiles
from symidx.cost.refined import bank_wavefronts, contiguous_rate
from symidx.hlo.shape import parse_shape
from symidx.layout import banks
from symidx.layout.nested import parse_layout
from symidx.layout.views import view

DATA = Path(__file__).parent / "data" / "cost"


# ---------------------------------------------------------------- contiguous runs
def brute_run(sizes: list[int], strides: list[int], dims: list[int], mtm: list[int]) -> int:
    """The length of the shortest maximal run of consecutive addresses a box tile reads:
    every address enumerated (pitch by the layout), runs split where a gap is. (Rows that
    only touch by accident -- a stride of 2 inside a reversed dimension -- make some runs
    longer; the shortest is what every transaction can count on.)"""
    pitch = [0] * len(dims)
    p = 1
    for d in mtm:
        pitch[d] = p
        p *= dims[d]
    addrs = set()
    for ks in product(*[range(min(s, n)) for s, n in zip(sizes, dims)]):
        addrs.add(sum(k * t * q for k, t, q in zip(ks, strides, pitch)))
    a = sorted(addrs)
    runs, cur = [], 1
    for x, y in zip(a, a[1:]):
        if y == x + 1:
            cur += 1
        else:
            runs.append(cur)
            cur = 1
    runs.append(cur)
    return min(runs)


@st.composite
def tiles(draw):  # type: ignore[no-untyped-def]
    rank = draw(st.integers(1, 3))
    dims = [draw(st.integers(1, 6)) for _ in range(rank)]
    sizes = [draw(st.integers(1, n + 2)) for n in dims]          # may run past (masked)
    strides = [draw(st.sampled_from([-1, 1, 2])) if s > 1 else draw(st.sampled_from([0, 1]))
               for s in sizes]
    mtm = draw(st.permutations(list(range(rank))))
    return sizes, strides, dims, list(mtm)


@given(tiles(), st.sampled_from([1, 2, 4]))
def test_contiguous_rate_is_the_run_of_addresses(t, elem) -> None:  # type: ignore[no-untyped-def]
    sizes, strides, dims, mtm = t
    run = brute_run(sizes, strides, dims, mtm)
    want = run * elem / (64 * -(-(run * elem) // 64))
    got = contiguous_rate(np.array([sizes]), np.array([strides]), tuple(dims), mtm, elem, 64)
    assert got[0] == pytest.approx(want)


def test_reversed_tile_is_coalesced_for_symidx_not_for_xla(capsys) -> None:  # type: ignore[no-untyped-def]
    """negate(reverse(p, dims={1})): the tile of p runs backwards along its minor
    dimension. XLA's heuristic counts one float of 64 bytes (rate 1/16, a read 16 times
    slower); symidx counts the 64 floats of the row, and --check proves the first warp's
    read coalesced."""
    ft = fusion_tiles((DATA / "flip.hlo").read_text(), "fusion")
    xla = cost(ft, [[4, 64]])
    own = cost(ft, [[4, 64]], objective="symidx")
    assert xla.operands[0]["coalescing_rate"] == pytest.approx(4 / 64)
    assert own.operands[0]["coalescing_rate"] == 1.0
    assert own.read_time_us < xla.read_time_us / 8
    code = main(["tile", str(DATA / "flip.hlo"), "--fusion", "fusion", "--sizes", "4,64",
                 "--check", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    p = next(e for e in doc["check"]["instructions"] if e["name"] == "p")
    assert p["coalescing"]["coalesced"] is True


# ---------------------------------------------------------------- banks
@pytest.mark.parametrize("shape, lanes, warp, want", [
    # a [16, 16] f32 tile stored row-major, read down its columns: 8-way conflicts
    ("f32[16,16]", (0, 1), "(16,2):(16,1)", 8),
    # [32, 32]: every lane of a column in bank 0
    ("f32[32,32]", (0, 1), "32:32", 32),
    # [16, 2]: a column of 16 rows of 2 words covers all 32 banks
    ("f32[16,2]", (0, 1), "(16,2):(2,1)", 1),
    # bf16 [32, 32]: rows of 16 words
    ("bf16[32,32]", (0, 1), "32:32", 16),
    # along the rows: conflict-free
    ("f32[16,16]", (1, 0), "32:1", 1),
])
def test_bank_wavefronts_agree_with_the_bank_model(shape: str, lanes: tuple[int, ...],
                                                   warp: str, want: int) -> None:
    """The staged buffer's first request, as refined.py forms it (lanes along
    ``lanes[0]`` first, the buffer row-major), against ``banks.bank_conflicts`` on the XLA
    shape's view with the warp pattern written as a layout."""
    s = parse_shape(shape)
    bits = 16 if shape.startswith("bf16") else 32
    got, ideal = bank_wavefronts(tuple(s.dims), (1, 0), lanes, bits, "nvidia")
    report = banks.bank_conflicts(view(s), parse_layout(warp))
    assert got == report.wavefronts == want
    assert ideal == report.ideal == 1


def test_shared_memory_time_by_hand() -> None:
    """transpose(p) of f32[1024, 1024] tiled [16, 16]: 4096 blocks, each staging a
    [16, 16] tile in 8 warp requests, written in 1 wavefront and read in 8 (8-way
    conflicts) each: 4096 x 8 x 9 SM cycles over 84 SMs at 1.41 GHz."""
    ft = fusion_tiles((DATA / "transpose.hlo").read_text(), "fusion")
    c = cost(ft, [[16, 16]], objective="symidx")
    want_us = 4096 * 8 * (1 + 8) / (84 * 1.41e9) * 1e6
    assert c.smem_time_us == pytest.approx(want_us, abs=1e-3)
    assert c.shared_memory == [{"name": "t", "requests": 8, "write_wavefronts": 1,
                                "read_wavefronts": 8, "ideal_wavefronts": 1}]
    x = cost(ft, [[16, 16]])
    assert x.smem_time_us is None and x.compute_time_us == 0
    assert c.compute_time_us == pytest.approx(want_us, abs=1e-3)


def test_no_staging_without_a_change_of_minor_dimension() -> None:
    """A transpose that keeps the minor dimension (a batch swap) stages nothing."""
    text = """HloModule m
fused {
  p = f32[8,16,32]{2,1,0} parameter(0)
  ROOT t = f32[16,8,32]{2,1,0} transpose(p), dimensions={1,0,2}
}
ENTRY e {
  p = f32[8,16,32]{2,1,0} parameter(0)
  ROOT f = f32[16,8,32]{2,1,0} fusion(p), kind=kCustom, calls=fused
}
"""
    c = cost(fusion_tiles(text, "f"), [[4, 4, 32]], objective="symidx")
    assert c.shared_memory == [] and c.smem_time_us == 0


# ---------------------------------------------------------------- picks
def test_transformer_gradient_pick_changes() -> None:
    """A physical transpose from a JAX transformer's backward pass (copy_bitcast_fusion.10
    of jax_transformer4_train_step): XLA's model sees [128, 16] and [16, 16] almost alike
    and picks [128, 16]; staged through shared memory its [128, 16] tile is read with
    16-way bank conflicts, [16, 16] with 8-way, so symidx picks [16, 16] and says so, with
    both costs. The default objective still picks XLA's."""
    ft = fusion_tiles((DATA / "transformer_transpose_grad.hlo").read_text(),
                      "copy_bitcast_fusion.10")
    assert best(ft).best[0].output_tile_sizes == [[128, 16]]
    pick = best(ft, objective="symidx").best[0]
    assert pick.output_tile_sizes == [[16, 16]] and pick.xla_compatible is False
    x = pick.xla_pick
    assert x is not None and x["output_tile_sizes"] == [[128, 16]]
    assert x["exec_time_us_symidx"] > pick.exec_time_us
    assert x["this_pick_exec_time_us_xla"] >= x["exec_time_us"]
    ours, theirs = pick.shared_memory[0], cost(ft, [[128, 16]], objective="symidx")
    assert ours["read_wavefronts"] == 8 and theirs.shared_memory[0]["read_wavefronts"] == 16


def test_departure_is_said_in_text(capsys) -> None:  # type: ignore[no-untyped-def]
    code = main(["tile", str(DATA / "transformer_transpose_grad.hlo"), "--fusion",
                 "copy_bitcast_fusion.10", "--best", "--objective", "symidx"])
    out = capsys.readouterr().out
    assert code == 0
    assert "departs from XLA's pick [[128, 16]]" in out
    code = main(["tile", str(DATA / "softmax.hlo"), "--fusion", "triton_softmax", "--best",
                 "--objective", "symidx"])
    assert code == 0 and "the same pick as XLA's" in capsys.readouterr().out


def test_staged_elements_match_the_tile() -> None:
    """The requests of a staged tile cover its padded elements, 32 lanes each."""
    ft = fusion_tiles((DATA / "transformer_transpose_grad.hlo").read_text(),
                      "copy_bitcast_fusion.10")
    c = cost(ft, [[128, 16]], objective="symidx")
    assert c.shared_memory[0]["requests"] == prod([128, 16]) // 32
