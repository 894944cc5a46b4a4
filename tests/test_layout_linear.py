"""Triton's linear layouts: Triton's own unit-test cases (tests/data/layouts/
triton_linear_layout_cases.json, transcribed from triton-lang/triton
unittest/Tools/LinearLayoutTest.cpp) with a twin -- a brute-force evaluator written here
(XOR of the bases of the set bits, no symidx code) that checks every composition, product
and (pseudo-)inverse point by point -- plus the text forms and the conversions to and from
CuTe layouts and indexing maps."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from symidx.errors import MapError, ParseError
from symidx.layout.cute import ComposedLayout, Layout, Swizzle
from symidx.layout.linear import LinearLayout, from_cute, parse_linear_layout, supremum

DATA = json.loads((Path(__file__).parent / "data" / "layouts" /
                   "triton_linear_layout_cases.json").read_text())
CASES = DATA["cases"]


def build(spec: Any) -> LinearLayout:
    if "empty" in spec:
        return LinearLayout.empty()
    if "identity1d" in spec:
        return LinearLayout.identity1d(*spec["identity1d"])
    if "zeros1d" in spec:
        return LinearLayout.zeros1d(*spec["zeros1d"])
    if "mul" in spec:
        parts = [build(s) for s in spec["mul"]]
        out = parts[0]
        for p in parts[1:]:
            out = out * p
        return out
    if "compose" in spec:
        a, b = (build(s) for s in spec["compose"])
        return a.compose(b)
    outs = [o if isinstance(o, str) else tuple(o) for o in spec["outs"]]
    return LinearLayout.create([(n, bs) for n, bs in spec["bases"]], outs,
                               require_surjective=spec.get("surjective", True))


# ---------------------------------------------------------------------------------------------
# The twin: a linear layout as plain data, evaluated by brute force.


def twin_apply(layout: LinearLayout, ins: dict[str, int]) -> dict[str, int]:
    out = dict.fromkeys(layout.out_dims, 0)
    for name, bases in layout.bases:
        for k, b in enumerate(bases):
            if ins[name] >> k & 1:
                for o, v in zip(layout.out_dims, b):
                    out[o] ^= v
    return out


def points(layout: LinearLayout, limit: int = 1 << 12) -> list[dict[str, int]]:
    sizes = [1 << len(bs) for _, bs in layout.bases]
    pts = [dict(zip(layout.in_dims, p)) for p in itertools.product(*(range(s) for s in sizes))]
    step = max(1, len(pts) // limit)
    return pts[::step]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_triton_case(case: dict[str, Any]) -> None:
    op, args, want = case["op"], case["args"], case["want"]
    if op == "supremum":
        if want == "error":
            with pytest.raises(MapError, match="no supremum"):
                supremum(*args)
        else:
            assert supremum(*args) == want
        return
    a = build(args[0])
    if op == "equal":
        assert a == build(want)
    elif op == "equal_bool":
        b = build(args[1])
        assert (a == b) is want and (a != b) is not want
    elif op == "equal_ignoring_sizes":
        assert a.equal_ignoring_out_dim_sizes(build(args[1])) is want
    elif op == "in_size_log2":
        assert a.in_dim_size_log2(args[1]) == want
    elif op == "out_size_log2":
        assert a.out_dim_size_log2(args[1]) == want
    elif op == "total_out_size":
        assert a.total_out_dim_size() == want
    elif op == "is_surjective":
        assert a.is_surjective() is want
    elif op == "transpose_outs":
        assert a.transpose_outs(args[1]) == build(want)
    elif op == "transpose_ins":
        assert a.transpose_ins(args[1]) == build(want)
    elif op == "apply":
        assert [list(p) for p in a.apply(args[1])] == want
        assert twin_apply(a, args[1]) == dict(want)
    elif op == "compose":
        b = build(args[1])
        got = a.compose(b)
        assert got == build(want)
        for p in points(a):  # twin: b(a(x)) point by point
            assert twin_apply(got, p) == twin_apply(b, twin_apply(a, p))
    elif op in ("reshape_ins", "reshape_outs"):
        got = getattr(a, op)([tuple(x) for x in args[1]])
        assert got == build(want)
    elif op in ("flatten_ins", "flatten_outs"):
        assert getattr(a, op)() == build(want)
    elif op == "invert_and_compose":
        _check_invert_and_compose(case, a, build(args[1]))
    elif op == "num_consecutive":
        assert a.num_consecutive_in_out() == want
    elif op == "sublayout":
        assert a.sublayout(args[1], args[2]) == build(want)
    elif op == "sublayout_is_zero":
        assert a.sublayout_is_zero(args[1], args[2]) is want
    elif op == "free_variable_masks":
        assert [list(p) for p in a.free_variable_masks()] == want
    else:
        raise AssertionError(f"unknown op {op}")


def _check_invert_and_compose(case: dict[str, Any], a: LinearLayout, b: LinearLayout) -> None:
    c = a.invert_and_compose(b)
    if case["want"] is not None:
        assert c == build(case["want"])
    back = c.compose(b)
    if case["back"] == "equal":
        assert back == a
    elif case["back"] == "equal_ignoring_sizes":
        assert back.equal_ignoring_out_dim_sizes(a)
    elif case["back"] == "transposed":
        assert back == a.transpose_outs(b.out_dims)
    elif case["back"] == "point":
        k = case["point"]
        assert twin_apply(a, k) == twin_apply(b, twin_apply(c, k))
    for p in points(a):  # twin: b(c(x)) == a(x) everywhere
        assert twin_apply(b, twin_apply(c, p)) == twin_apply(a, p)


# ---------------------------------------------------------------------------------------------
# Triton's pseudoinvert cases (BlackwellMixedPrecisionDotScaledSMEM*), built from their
# formulas: packed fp4 pairs in 8-of-16-byte rows.


def packed_to_padded(m: int, k_packed: int, i: int, j: int) -> int:
    linear = i * k_packed + j
    return (linear // 8) * 16 + linear % 8


def test_pseudoinvert_packed_smem() -> None:
    m, elems = 16, 128
    k_packed, k_padded = elems // m // 2, elems // m
    bases = []
    for b in range(int.bit_length(m * k_padded) - 1):
        off = 1 << b
        packed = off // 16 * 8 + off % 8
        bases.append([packed // k_packed, packed % k_packed])
    layout = LinearLayout.create([("offset", bases)], ["row", "col"])
    inv = layout.pseudo_invert()
    for i, j in itertools.product(range(m), range(k_packed)):
        (_, off), = inv.apply({"row": i, "col": j})
        assert off == packed_to_padded(m, k_packed, i, j)
        assert twin_apply(layout, {"offset": off}) == {"row": i, "col": j}


def test_pseudoinvert_packed_smem_swizzled() -> None:
    m, k_padded = 16, 128
    k_packed = k_padded // 2
    tile_rows, tile_cols, vec = 8, 8 * 128 // 8, 16
    bases = []
    for lc in range(int.bit_length(tile_cols) - 1):
        padded = 1 << lc
        bases.append([0, padded // 16 * 8 + padded % 8])
    for lr in range(int.bit_length(tile_rows) - 1):
        row = 1 << lr
        padded = vec * (row % 8)
        bases.append([row, padded // 16 * 8 + padded % 8])
    layout = LinearLayout.create([("offset", bases)], ["row", "col"])
    layout = layout.ensure_not_smaller_than([("row", m), ("col", k_packed)])
    inv = layout.pseudo_invert()
    for i, j in itertools.product(range(m), range(k_packed)):
        plain = packed_to_padded(m, k_packed, i, j)
        row, col = plain // k_padded, plain % k_padded
        (_, off), = inv.apply({"row": i, "col": j})
        assert off == row * k_padded + ((col // 16) ^ (row % 8)) * 16 + col % 16


# ---------------------------------------------------------------------------------------------
# Text, Gluon, and the other worlds


def test_parse_and_write_ttgir_text() -> None:
    text = ("#ttg.linear<{register = [[0, 1], [0, 2]], lane = [[1, 0], [2, 0], [4, 0], "
            "[8, 0], [16, 0]], warp = [[0, 4], [0, 8]], block = []}>")
    ll = parse_linear_layout(text, shape=[32, 16])
    assert ll.out_dims == ("dim0", "dim1") and ll.in_dims == ("register", "lane", "warp",
                                                              "block")
    assert ll(register=3, lane=5, warp=1, block=0) == (5, 3 + 4)
    assert ll.to_text() == text
    assert parse_linear_layout(ll.to_text(), shape=[32, 16]) == ll
    assert ll.is_invertible()
    shared = parse_linear_layout(
        "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 2], [2, 0]], block = []}, "
        "alignment = 16>", shape=[4, 4])
    assert shared(offset=4, block=0) == (1, 2)
    assert shared.to_shared_text(16).startswith("#ttg.shared_linear<{offset = [[0, 1]")


@pytest.mark.parametrize(("text", "message", "column"), [
    ("#ttg.blocked<{}>", "expected '#ttg.linear", 0),
    ("#ttg.linear<{register = [[0, -1]]}>", "non-negative", 29),
    ("#ttg.linear<{register = [[0, 1], [1]]}>", "different lengths", 13),
    ("#ttg.linear<{register = [[0, 1]] lane = []}>", "expected ',' or '}'", 33),
    ("#ttg.linear<{register = [], register = []}>", "given twice", 28),
])
def test_bad_text_is_a_parse_error(text: str, message: str, column: int) -> None:
    with pytest.raises(ParseError, match=message) as e:
        parse_linear_layout(text)
    assert e.value.offset == column


def test_gluon_fields() -> None:
    ll = LinearLayout.from_gluon([4, 8], reg_bases=[[0, 1]], lane_bases=[[0, 2], [0, 4],
                                 [1, 0], [2, 0]], warp_bases=[], block_bases=[])
    assert ll.outs == (("dim0", 4), ("dim1", 8))
    for reg, lane in itertools.product(range(2), range(16)):
        assert ll(register=reg, lane=lane, warp=0, block=0) == (lane >> 2, reg + 2 * (lane & 3))


def test_from_cute_swizzled_shared_layout() -> None:
    """Sw<3,4,3> o (8,64):(64,1): a 128-byte swizzle of f16 rows -- F2-linear; its linear
    layout agrees with CuTe on every offset, and with symidx's map of it."""
    cute = ComposedLayout(Swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    flat = Layout(512, 1)
    ll = from_cute(ComposedLayout(Swizzle(3, 4, 3), 0, flat))
    for i in range(512):
        assert ll(offset=i) == (cute.outer(i),)
    tile = from_cute(cute, shape=[8, 64], order="row")
    for r, c in itertools.product(range(8), range(64)):
        off = cute(r, c)
        assert tile(offset=r + 8 * c) == (off // 64, off % 64)
    inv = tile.invert()
    for r, c in itertools.product(range(8), range(64)):
        (_, i), = inv.apply({"dim0": r, "dim1": c})
        assert tile(offset=i) == (r, c)


def test_from_cute_refuses_what_is_not_linear() -> None:
    with pytest.raises(MapError, match="not a power of 2"):
        from_cute(Layout((3, 4), (4, 1)))
    with pytest.raises(MapError, match="not linear over F2"):
        from_cute(Layout((2, 2), (1, 1)))  # 1 + 1 = 2, but 1 XOR 1 = 0


def test_to_cute_where_xor_is_a_sum() -> None:
    ll = LinearLayout.create([("in", [[1], [8], [2], [4]])], ["out"])
    cute = ll.to_cute()
    assert isinstance(cute, Layout)
    assert all(cute(i) == ll(**{"in": i})[0] for i in range(16))
    swizzled = LinearLayout.create([("in", [[1], [2], [6]])], ["out"])
    with pytest.raises(MapError, match="a swizzle"):
        swizzled.to_cute()


@pytest.mark.parametrize("case", [c for c in CASES if c["op"] in ("equal", "compose",
                                                                  "invert_and_compose")],
                         ids=lambda c: c["name"])
def test_to_map_is_exact(case: dict[str, Any]) -> None:
    layout = build(case["args"][0])
    if not layout.bases or not layout.outs:
        return
    m = layout.to_map()
    for p in points(layout, 256):
        want = twin_apply(layout, p)
        assert m.evaluate(tuple(p[n] for n in layout.in_dims)) == tuple(want.values())


def test_invert_refuses_what_is_not_bijective() -> None:
    with pytest.raises(MapError, match="not invertible"):
        LinearLayout.zeros1d(4, "in", "out").invert()
    with pytest.raises(MapError, match="not reached"):
        LinearLayout.identity1d(4, "in", "out").invert_and_compose(
            LinearLayout.create([("x", [[1], [0]])], [("out", 4)], require_surjective=False))
    with pytest.raises(MapError, match="not surjective"):
        LinearLayout.create([("in", [[1], [4]])], ["out"])
