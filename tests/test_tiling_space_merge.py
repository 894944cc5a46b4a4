"""The experimental space's tile through a reshape that merges dimensions (output tile ->
operand tile, for concrete tile sizes), against brute force: for every tiling and every
tile id, the operand elements the propagated tile denotes (``offset + k * stride`` for
``k < size``, below the upper bound) are exactly those the output tile's elements read
through the reshape (row-major linearization), and a tiling the rule cannot express is
refused rather than answered."""

from __future__ import annotations

from itertools import product

import pytest

from symidx.core.expr import as_expr, dim
from symidx.hlo import parse_module
from symidx.tiling.space import SpaceRefusal, build_space


def hlo(out_dims: tuple[int, ...]) -> str:
    n = 1
    for d in out_dims:
        n *= d
    shape = ",".join(map(str, out_dims))
    return f"""HloModule m
f {{
  p = f32[{n}] parameter(0)
  ROOT r = f32[{shape}] reshape(p)
}}
ENTRY e {{
  p = f32[{n}] parameter(0)
  ROOT fusion = f32[{shape}] fusion(p), kind=kLoop, calls=f
}}"""


def candidates(n: int) -> list[int]:
    return sorted({1 << k for k in range(n.bit_length())} | {n})


def strides(dims: tuple[int, ...]) -> list[int]:
    out, acc = [], 1
    for d in reversed(dims):
        out.append(acc)
        acc *= d
    return out[::-1]


@pytest.mark.parametrize("out_dims", [(6, 6), (3, 4), (2, 3, 4), (4, 1, 8)])
def test_merged_reshape_tiles_are_exact(out_dims: tuple[int, ...]) -> None:
    comp = parse_module(hlo(out_dims)).computations["f"]
    lin = strides(out_dims)
    checked = 0
    for sizes in product(*[candidates(d) for d in out_dims]):
        space = build_space(comp, list(sizes))
        root = space.root_tile(0)
        try:
            (tile,) = space.to_input(comp.root, root)
        except SpaceRefusal:
            continue                      # a pattern the rule does not express: refused
        counts = [-(-d // s) for d, s in zip(out_dims, sizes)]
        for tids in product(*[range(c) for c in counts]):
            env = {dim(i): t for i, t in enumerate(tids)}
            off, size, stride, ub = (int(as_expr(x).subs(env)) for x in
                                     (tile.offsets[0], tile.sizes[0], tile.strides[0],
                                      tile.upper_bounds[0]))
            got = {off + k * stride for k in range(size) if off + k * stride < ub}
            want = set()
            for idx in product(*[range(t * s, min((t + 1) * s, d))
                                 for t, s, d in zip(tids, sizes, out_dims)]):
                want.add(sum(i * w for i, w in zip(idx, lin)))
            assert got == want, (sizes, tids)
        checked += 1
    assert checked > 0
