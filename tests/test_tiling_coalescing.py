"""The coalescing of a tile's reads (``symidx tile --check``) against brute force: the first
warp's offsets enumerated element by element, then XLA's transaction estimate on them."""

from __future__ import annotations

import itertools
import json
from math import ceil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symidx.cli import main
from symidx.core.expr import dim
from symidx.core.indexing_map import IndexingMap
from symidx.hlo.shape import parse_shape
from symidx.lowering.layouts.xla import linear_index
from symidx.tiling.coalescing import tile_coalescing, tile_read_map

DATA = Path(__file__).parent / "data" / "tiling"


def first_warp_offsets(shape_dims: list[int], m2m: list[int], offsets: list[int],
                       sizes: list[int], strides: list[int]) -> list[int]:
    """Thread t reads tile element t (numbered in the layout's physical order, dropping the
    elements past the operand's end): the linear offsets of threads 0..31."""
    inb = [min(s, max(0, ceil((n - o) / st_))) for s, n, o, st_ in
           zip(sizes, shape_dims, offsets, strides)]
    order = list(reversed(m2m))                       # major to minor
    elements = []
    for digits in itertools.product(*[range(inb[d]) for d in order]):
        idx = [0] * len(shape_dims)
        for d, k in zip(order, digits):
            idx[d] = offsets[d] + strides[d] * k
        elements.append(linear_index(shape_dims, m2m, idx))
        if len(elements) == 32:
            break
    return elements


def brute_force_coalesced(elements: list[int], esize: int) -> bool:
    """The distinct offsets form runs, each costing ceil(bytes / 128) transactions;
    coalesced when one stream's count exceeds 90% of that."""
    values = sorted(set(elements))
    runs: list[list[int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    transactions = sum(ceil((hi - lo + 1) * esize / 128) for lo, hi in runs)
    if transactions == 0:
        return True
    ideal = ceil(len(values) * esize / 128)
    return ideal > 0.9 * transactions


@st.composite
def tiles(draw: st.DrawFn) -> tuple[str, list[int], list[int], list[int], list[int], list[int],
                                    int]:
    rank = draw(st.integers(1, 3))
    dims = [draw(st.integers(1, 40)) for _ in range(rank)]
    m2m = draw(st.permutations(range(rank)))
    sizes = [draw(st.integers(1, n)) for n in dims]
    strides = [draw(st.sampled_from([1, 1, 2, 3])) for _ in dims]
    offsets = [draw(st.integers(0, n - 1)) for n in dims]
    etype, esize = draw(st.sampled_from([("f32", 4), ("f16", 2), ("f64", 8), ("s8", 1)]))
    text = f"{etype}[{','.join(map(str, dims))}]{{{','.join(map(str, m2m))}}}"
    return text, dims, list(m2m), offsets, sizes, strides, esize


@given(tiles())
def test_tile_coalescing_matches_brute_force(t: tuple) -> None:  # type: ignore[type-arg]
    text, dims, m2m, offsets, sizes, strides, esize = t
    # program id p's tile starts at offsets + p * sizes (the first one is what is judged)
    om = IndexingMap.create([(0, 3)], [o + s * dim(0) for o, s in zip(offsets, sizes)])
    expected = first_warp_offsets(dims, m2m, offsets, sizes, strides)
    read = tile_read_map(om, sizes, strides, parse_shape(text))
    threads = [t for t in range(32) if read.constraints_hold([t, 0])]
    assert [read.evaluate([t, 0])[0] for t in threads] == expected
    got = tile_coalescing(om, sizes, strides, parse_shape(text))
    assert got["coalesced"] == brute_force_coalesced(expected, esize), got


def test_row_tile_is_coalesced_and_column_tile_is_not() -> None:
    """A tile along the minor dimension reads one run; across it, 32 runs."""
    shape = parse_shape("f32[64,64]{1,0}")
    om = IndexingMap.create([(0, 1)], [dim(0) * 32, 0])
    assert tile_coalescing(om, [1, 32], [1, 1], shape)["coalesced"] is True
    column = tile_coalescing(om, [32, 1], [1, 1], shape)
    assert column["coalesced"] is False and "32 separate" in column["reason"]
    # the same column tile under a column-major layout is one run
    assert tile_coalescing(om, [32, 1], [1, 1], parse_shape("f32[64,64]{0,1}"))["coalesced"]


def test_check_reports_coalescing_per_parameter(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["tile", str(DATA / "dot.hlo"), "--fusion", "fusion", "--sizes", "16,4,8",
                 "--check", "--format", "json"])
    out = capsys.readouterr().out
    assert code == 0
    by_name = {i["name"]: i for i in json.loads(out)["check"]["instructions"]}
    # p1 f32[64,16], tile [16, 8]: the first warp reads 4 rows of 8 (4 runs of 32 bytes)
    assert by_name["p1"]["coalescing"]["coalesced"] is False
    assert by_name["p1"]["contiguous_elements"] == 8          # the existing field is kept
    assert "coalescing" not in by_name["dot"]                  # not a load from memory
    main(["tile", str(DATA / "dot.hlo"), "--fusion", "fusion", "--sizes", "16,4,8", "--check"])
    text = capsys.readouterr().out
    assert "p1 (roots[0].operand(1)): covers True exact True" in text
    assert "not coalesced (4 separate interval(s)" in text
