"""The best-tiling search: its pick is the minimum, over every candidate tiling enumerated
here independently (each parameter's powers of two below its extent and the extent), of
the costs computed one tiling at a time; ties go to the first tiling in XLA's order; XLA's
own picks; ``--top``, ``--smem`` and the work limits."""

from __future__ import annotations

from itertools import product
from pathlib import Path

import pytest

from symidx.cost import best, cost, emitter_check, fusion_tiles
from symidx.cost.devices import device
from symidx.tiling.concrete import live_shared_bytes

DATA = Path(__file__).parent / "data" / "cost"


def ft(name: str, fusion: str, **kw):
    return fusion_tiles((DATA / name).read_text(), fusion, **kw)


def cands(n: int) -> list[int]:
    out, p = [], 1
    while p < n:
        out.append(p)
        p *= 2
    return out + [n]


def p2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def independent_best(f, dev: str = "rtx-a6000", smem: int | None = None,
                     pad: bool = False) -> tuple[float, tuple[int, ...], int]:
    """(exec time, tiling, valid count) of the cheapest valid tiling: every candidate of the
    product, checked and costed one by one."""
    extents = [int(x) for x in f.base.extents]
    if f.tiler == "experimental":
        # a reduction's dimension takes its extent; every size is padded to a power of 2
        seq = {d for (_, kind, _i), d in f.space.seq.items() if kind == "reduce"}
        lists = [[p2(n)] if i in seq else [p2(c) for c in cands(n)]
                 for i, n in enumerate(extents)]
    else:
        lists = [cands(n) for n in extents]
    found: list[tuple[float, tuple[int, ...]]] = []
    for tiling in product(*lists):
        try:
            if not emitter_check(f, tiling, dev, flat=True).valid:
                continue
        except Exception:
            continue
        c = cost(f, tiling, dev, flat=True)
        if c.is_infinite:
            continue
        if smem is not None:
            ts = f.tiles_for(tiling)
            if int(live_shared_bytes(ts, ts.one(list(tiling)))[0]) > smem:
                continue
        found.append((c.exec_time_us, xla_key(f, tiling), tuple(tiling)))
    found.sort()
    return found[0][0], found[0][2], len(found)


def xla_key(f, tiling) -> tuple[int, ...]:
    """A tiling in XLA's flat order: the root's output dimensions first (symidx lists a dot
    root's contracting dimensions before them)."""
    if f.tiler != "legacy":
        return tuple(tiling)
    out = list(f.space.output_params)
    return tuple(tiling[p] for p in out + [p for p in range(len(tiling)) if p not in out])


@pytest.mark.parametrize("name, fusion", [
    ("softmax.hlo", "triton_softmax"),
    ("multi_output.hlo", "fusion"),
    ("reshape.hlo", "fusion"),
    ("concatenate.hlo", "fusion"),
    ("dot_reduction_loop.hlo", "fusion"),
    ("broadcast_reduce.hlo", "input_reduce_fusion"),
])
def test_pick_is_the_minimum_of_every_valid_tiling(name: str, fusion: str) -> None:
    f = ft(name, fusion)
    res = best(f, top=3)
    want_time, want_tiling, n_valid = independent_best(f)
    assert res.complete and res.valid == n_valid
    assert res.best[0].tiling == want_tiling
    assert res.best[0].exec_time_us == want_time
    times = [c.exec_time_us for c in res.best]
    assert times == sorted(times)


def test_experimental_pick_is_the_minimum() -> None:
    f = ft("softmax.hlo", "triton_softmax", tiler="experimental")
    res = best(f)
    want_time, want_tiling, _ = independent_best(f)
    assert res.best[0].tiling == want_tiling and res.best[0].exec_time_us == want_time


def test_xla_picks() -> None:
    """XLA's EstimateBestTiling tests on the RTX A6000."""
    soft = best(ft("softmax.hlo", "triton_softmax")).best[0]
    assert soft.output_tile_sizes == [[4, 911]] and soft.estimated_num_warps == 4
    assert soft.bytes_read == 512 * 911 * 4 + 128 * 911 * 4
    exp = best(ft("softmax.hlo", "triton_softmax", tiler="experimental")).best[0]
    assert exp.output_tile_sizes == [[4, 1024]] and exp.estimated_num_warps == 4
    multi = best(ft("multi_output.hlo", "fusion")).best[0]
    assert multi.output_tile_sizes == [[1, 4], [16]] and multi.estimated_num_warps == 1


def test_ties_go_to_the_first_tiling_in_xlas_order() -> None:
    """Equal costs: a fusion symmetric in its two dimensions gives [a, b] and [b, a] the
    same time; the lexicographically smaller (met first) is kept."""
    text = """HloModule m
f {
  a = f32[64,64] parameter(0)
  ROOT n = f32[64,64] negate(a)
}
ENTRY e {
  a = f32[64,64] parameter(0)
  ROOT r = f32[64,64] fusion(a), kind=kCustom, calls=f
}"""
    f = fusion_tiles(text, "r")
    res = best(f, top=50)
    for a, b in zip(res.best, res.best[1:]):
        assert (a.exec_time_us, a.tiling) < (b.exec_time_us, b.tiling)


def test_smem_limit_keeps_the_parameter_tiles_under_it() -> None:
    f = ft("softmax.hlo", "triton_softmax")
    free = best(f).best[0]
    ts = f.tiles_for(free.tiling)
    live = int(live_shared_bytes(ts, ts.one(list(free.tiling)))[0])
    # [4, 911] loads [4, 911] of param_0 and [911] of param_1, padded: 4 x 1024 + 1024 floats
    assert live == (4 * 1024 + 1024) * 4
    limited = best(f, smem=live - 1).best[0]
    want_time, want_tiling, _ = independent_best(f, smem=live - 1)
    assert limited.tiling == want_tiling and limited.exec_time_us == want_time
    ts = f.tiles_for(limited.tiling)
    assert int(live_shared_bytes(ts, ts.one(list(limited.tiling)))[0]) <= live - 1


def test_work_limit_stops_and_says_so() -> None:
    f = ft("softmax.hlo", "triton_softmax")
    res = best(f, max_tilings=5)
    assert not res.complete and res.considered == 5 and "5" in res.stopped
    assert res.best[0].tiling[0] == 1      # the first five tilings all have a row tile of 1


def test_rank12_contraction_is_searched_whole() -> None:
    """A dot with ten batch dimensions (output rank 12): every candidate is considered
    (2^5 x 3^5 over the batch dims, 6 x 7 over m and n, 7 over k) and the pick is no worse
    than a sample of tilings costed one by one."""
    f = ft("rank12_contraction.hlo", "contraction")
    res = best(f)
    assert res.complete
    assert res.considered == 2 ** 5 * 3 ** 5 * 6 * 7 * 7
    pick = res.best[0].exec_time_us
    import random

    rng = random.Random(0)
    extents = f.base.extents
    for _ in range(40):
        tiling = [rng.choice(cands(n)) for n in extents]
        if not emitter_check(f, tiling, flat=True).valid:
            continue
        c = cost(f, tiling, flat=True)
        assert c.is_infinite or c.exec_time_us >= pick


def test_other_devices() -> None:
    f = ft("softmax.hlo", "triton_softmax")
    for dev in ("a100", "h100", "b200", "mi300x"):
        c = best(f, device(dev)).best[0]
        assert c.device == dev and c.exec_time_us > 0


def test_tensor_network_rank12() -> None:
    """openxla/xla#41173's rank-12 contraction (bitcasts to rank 12, six contracting
    dimensions): the search considers exactly the analysis' valid tilings (counted per
    constraint group), and its pick is no worse than a sample costed one by one."""
    from symidx.tiling.valid import count_valid

    f = ft("tensor_network_rank12.hlo", "fusion")
    res = best(f, top=40)
    assert res.complete and res.considered == count_valid(f.space)[0]
    pick = res.best[0].exec_time_us
    for c in res.best[1:]:
        again = cost(f, c.tiling, flat=True)
        assert again.exec_time_us == c.exec_time_us >= pick
    assert "<table>" in res._repr_html_()
