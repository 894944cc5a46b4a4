"""A runtime variable names the representative of its value (symidx.hlo.same_value): two
places computing the same index name one holder, and the maps that read with it become one
map. Brute-force twins: the reference interpreter runs each module for several values of
its integer parameter, and the maps must give exactly the elements read in that run (the
runtime variables taking the values their holders hold in it)."""

from __future__ import annotations

import numpy as np
from reference_interpreter import execute, held_outside, map_relation
from test_fusion_exact import check_exact, module

from symidx.fusion import called_computation, parameter_maps
from symidx.hlo import HloComputation, Shape, parse_hlo

#: Values of the index parameter: with them each chain's offset takes every value of the
#: slice's clamping interval [0, 12] (and some outside it).
VALUES = [np.array(v, dtype=np.int64) for v in range(-3, 16)]


def chain(tag: str, start: str, factor: int = 1) -> list[str]:
    """``(start + 1) * factor``, then a dynamic slice of 4 of ``q0`` there."""
    return [f"one{tag} = s32[] constant(1)", f"a{tag} = s32[] add({start}, one{tag})",
            f"k{tag} = s32[] constant({factor})", f"m{tag} = s32[] multiply(a{tag}, k{tag})",
            f"ds{tag} = f32[4] dynamic-slice(q0, m{tag}), dynamic_slice_sizes={{4}}"]


def fusion_maps(text: str) -> list[str]:
    """The maps of the fusion's parameter 0, checked exact against the interpreter."""
    comp = check_exact(text, 1, VALUES)
    (x, _) = parameter_maps(comp)
    return sorted(str(m) for m in x.maps)


def test_two_equal_index_chains_give_one_map() -> None:
    text = module(["f32[16]", "s32[]"],
                  chain("0", "q1") + chain("1", "q1") + ["r = f32[4] add(ds0, ds1)"],
                  "f32[4]")
    (got,) = fusion_maps(text)
    assert "rt0 in [0, 12]" in got and "rt0: m0;" in got  # the first chain holds the value


def test_two_different_index_chains_keep_two_maps() -> None:
    text = module(["f32[16]", "s32[]"],
                  chain("0", "q1") + chain("1", "q1", factor=2) + ["r = f32[4] add(ds0, ds1)"],
                  "f32[4]")
    got = fusion_maps(text)
    assert len(got) == 2 and any("rt0: m0;" in m for m in got) \
        and any("rt0: m1;" in m for m in got)


def test_an_index_through_an_opt_barrier_is_the_value_it_holds() -> None:
    """The second chain starts from ``q1`` passed through ``opt-barrier(tuple(...))``."""
    text = module(["f32[16]", "s32[]"], [
        *chain("0", "q1"), "t = (s32[], f32[16]) tuple(q1, q0)",
        "ob = (s32[], f32[16]) opt-barrier(t)", "g = s32[] get-tuple-element(ob), index=0",
        *chain("1", "g"), "r = f32[4] add(ds0, ds1)"], "f32[4]")
    (got,) = fusion_maps(text)
    assert "rt0: m0;" in got


def entry_maps(text: str) -> tuple[HloComputation, list[str]]:
    """The entry's maps from its output to parameter 0, against runs of the entry with
    parameter 1 taking each of :data:`VALUES`: exact per run (where a holder's value lies
    outside the variable's interval, HLO clamps it and the run's values give a part of
    what is read), and exact over all runs."""
    comp = parse_hlo(text).entry
    x = parameter_maps(comp)[0]
    assert x.unsupported is None and x.opaque is None
    out_shape, shape = comp.root.shape, comp.parameters[0].shape
    assert isinstance(out_shape, Shape) and isinstance(shape, Shape)
    out, dims = out_shape.dims, shape.dims
    reads = []
    for value in VALUES:
        run = execute(comp, [None, value])
        got, read = map_relation(x.maps, out, dims, run), run.relation(0)
        reads.append(read)
        if held_outside(x.maps, run):
            assert np.isin(got, read).all(), f"unsound at {value}"
        else:
            assert np.array_equal(got, read), f"not exact at {value}"
    whole = map_relation(x.maps, out, dims)
    assert np.array_equal(whole, np.unique(np.concatenate(reads))), "not exact over all runs"
    return comp, sorted(str(m) for m in x.maps)


def test_a_caller_computing_one_index_twice_gives_one_map() -> None:
    """The entry computes ``(p1 + 1) * 1`` twice and passes both to a fusion that slices
    at each: inside, two parameters; followed out, one holder."""
    def caller(factor: int) -> str:
        return (
            "HloModule twice\nf {\n  q0 = f32[16] parameter(0)\n  i = s32[] parameter(1)\n"
            "  j = s32[] parameter(2)\n"
            "  x = f32[4] dynamic-slice(q0, i), dynamic_slice_sizes={4}\n"
            "  y = f32[4] dynamic-slice(q0, j), dynamic_slice_sizes={4}\n"
            "  ROOT r = f32[4] add(x, y)\n}\n"
            "ENTRY e {\n  p0 = f32[16] parameter(0)\n  p1 = s32[] parameter(1)\n"
            "  one = s32[] constant(1)\n  a = s32[] add(p1, one)\n  k = s32[] constant(1)\n"
            "  m = s32[] multiply(a, k)\n  one2 = s32[] constant(1)\n"
            "  a2 = s32[] add(p1, one2)\n"
            f"  k2 = s32[] constant({factor})\n  m2 = s32[] multiply(a2, k2)\n"
            "  ROOT fusion = f32[4] fusion(p0, m, m2), kind=kLoop, calls=f\n}\n")
    comp, same = entry_maps(caller(1))
    assert len(same) == 1 and "rt0: m;" in same[0]
    inner = called_computation(comp.root)
    assert inner is not None
    assert len(parameter_maps(inner)[0].maps) == 2  # inside, two parameters: two maps
    _, apart = entry_maps(caller(2))
    assert len(apart) == 2


LOOP = """HloModule loop
body {
  s = (s32[], f32[16], s32[], s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[16] get-tuple-element(s), index=1
  a = s32[] get-tuple-element(s), index=2
  b = s32[] get-tuple-element(s), index=3
  acc = f32[4] get-tuple-element(s), index=4
  dx = f32[4] dynamic-slice(x, a), dynamic_slice_sizes={4}
  dy = f32[4] dynamic-slice(x, b), dynamic_slice_sizes={4}
  sum = f32[4] add(dx, dy)
  acc2 = f32[4] add(acc, sum)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[16], s32[], s32[], f32[4]) tuple(i2, x, a, b, acc2)
}
cond {
  s = (s32[], f32[16], s32[], s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  p0 = f32[16] parameter(0)
  p1 = s32[] parameter(1)
  zero = s32[] constant(0)
  one = s32[] constant(1)
  m = s32[] add(p1, one)
  one2 = s32[] constant(1)
  m2 = s32[] add(p1, one2)
  z = f32[] constant(0)
  acc = f32[4] broadcast(z), dimensions={}
  t = (s32[], f32[16], s32[], s32[], f32[4]) tuple(zero, p0, m, M2)
  w = (s32[], f32[16], s32[], s32[], f32[4]) while(t), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=4
}
"""


def test_a_loop_reading_at_two_equal_invariant_indices_gives_one_map() -> None:
    """The loop carries ``p1 + 1`` twice, unchanged, and slices at each: both values are
    held outside the loop, by one instruction."""
    _, same = entry_maps(LOOP.replace("M2", "m2, acc"))
    assert len(same) == 1 and "rt0: m;" in same[0]
    _, apart = entry_maps(LOOP.replace("M2", "p1, acc"))
    assert len(apart) == 2

