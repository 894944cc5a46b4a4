"""Every per-op example of seed 002 (XLA's *Indexing analysis*, Hindi edition) reproduces.

Each case is the seed's HLO snippet and the maps the seed prints, in the seed's own text
(``floordiv``, one domain entry a line, runtime variables as symbols with ``hlo:`` lines).
A seed map is parsed with :func:`parse_map`, canonicalised by the same simplification the
rules apply (:func:`symidx.ops.finish`), and compared with the rule's map by equality; the
two are also checked to be the same function on every point (the brute-force twin), and
runtime variables must name the seed's instruction (``parameter(1)`` is part of
``of1 = s32[] parameter(1)``).

Where the seed is wrong the case says so and expects the correct map: the dot example's
``input_2 -> output`` map is printed as ``(d0, s0, d1)``, but rhs dim 1 is the contracting
dim (size 256) and the output's last dim (size 64) is rhs dim 2: ``(d0, s0, d2)``.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from helpers import assert_same_function, image
from symidx.hlo import parse_hlo
from symidx.indexing_map import IndexingMap
from symidx.ops import finish, input_to_output, output_to_input
from symidx.syntax import parse_map

ADD = """
p0 = f32[10, 20] parameter(0)
p1 = f32[10, 20] parameter(1)
ROOT add = f32[10, 20] add(p0, p1)
"""
IDENTITY_10_20 = """(d0, d1) -> (d0, d1)
domain:
d0 in [0, 9]
d1 in [0, 19]"""

BROADCAST = """
p0 = f32[20] parameter(0)
ROOT bc0 = f32[10, 20, 30] broadcast(p0), dimensions={1}
"""

DYNAMIC_SLICE = """
src = s32[2,2,258] parameter(0)
of1 = s32[] parameter(1)
of2 = s32[] parameter(2)
of3 = s32[] parameter(3)
ROOT ds = s32[1,2,32] dynamic-slice(s32[2,2,258] src, s32[] of1, s32[] of2, s32[] of3),
  dynamic_slice_sizes={1, 2, 32}
"""
DS_OFFSET = """(d0, d1, d2) -> ()
domain:
d0 in [0, 0]
d1 in [0, 1]
d2 in [0, 31]"""

DUS = """
src = s32[20,30] parameter(0)
upd = s32[5,10] parameter(1)
of1 = s32[] parameter(2)
of2 = s32[] parameter(3)
ROOT dus = s32[20,30] dynamic-update-slice(
  s32[20,30] src, s32[5,10] upd, s32[] of1, s32[] of2)
"""
#: Where the seed reads the operand at every index (``(d0, d1) -> (d0, d1)``), the exact
#: maps read it outside the updated window only: before or after it along each dimension,
#: for the runtime offset of that dimension.
DUS_OPERAND = [f"""(d0, d1){{rt0}} -> (d0, d1)
domain:
d0 in [0, 19]
d1 in [0, 29]
rt0 in [0, {last}]
{var} - rt0 in {side}
runtime variables:
rt0: {offset}; (d0, d1) -> (), domain: d0 in [0, 19], d1 in [0, 29]"""
               for var, last, offset, sides in (
                   ("d0", 15, "of1 = s32[] parameter(2)", ("[-15, -1]", "[5, 19]")),
                   ("d1", 20, "of2 = s32[] parameter(3)", ("[-20, -1]", "[10, 29]")))
               for side in sides]
#: Where the seed reads each offset at every index, the exact maps read it where some value
#: of it puts the index inside the window: any row for of1, within the window's columns
#: (from the runtime of2), and the mirror image for of2.
DUS_OFFSETS = [[f"""(d0, d1){{rt0}} -> ()
domain:
d0 in [0, 19]
d1 in [0, 29]
rt0 in [0, {last}]
{var} - rt0 in [0, {size}]
runtime variables:
rt0: {offset}; (d0, d1) -> (), domain: d0 in [0, 19], d1 in [0, 29]"""]
               for var, last, size, offset in (
                   ("d1", 20, 9, "of2 = s32[] parameter(3)"),
                   ("d0", 15, 4, "of1 = s32[] parameter(2)"))]

GATHER = """
operand = f32[33,76,70] parameter(0)
indices = s32[1806,2] parameter(1)
ROOT gather = f32[1806,7,8,4] gather(operand, indices),
  offset_dims={1,2,3},
  collapsed_slice_dims={},
  start_index_map={0,1},
  index_vector_dim=1,
  slice_sizes={7,8,4}
"""

TRANSPOSE = """
p0 = f32[3, 12288, 6, 128] parameter(0)
ROOT transpose = f32[3, 6, 128, 12288] transpose(p0), dimensions={0, 2, 3, 1}
"""

REVERSE = """
p0 = f32[1, 17, 9, 9] parameter(0)
ROOT reverse = f32[1, 17, 9, 9] reverse(p0), dimensions={1, 2}
"""
REVERSE_MAP = """(d0, d1, d2, d3) -> (d0, -d1 + 16, -d2 + 8, d3)
domain:
d0 in [0, 0]
d1 in [0, 16]
d2 in [0, 8]
d3 in [0, 8]"""

REDUCE = """
p0 = f32[256,10] parameter(0)
p0_init = f32[] constant(-inf)
p1 = s32[256,10] parameter(1)
p1_init = s32[] constant(0)
ROOT reduce = (f32[10], s32[10]) reduce(p0, p1, p0_init, p1_init),
  dimensions={0}, to_apply=max_with_index
"""
REDUCE_INPUT = """(d0)[s0] -> (s0, d0)
domain:
d0 in [0, 9]
s0 in [0, 255]"""
REDUCE_INIT = """(d0) -> ()
domain:
d0 in [0, 9]"""
REDUCE_IN_OUT = """(d0, d1) -> (d1)
domain:
d0 in [0, 255]
d1 in [0, 9]"""
REDUCE_INIT_OUT = """()[s0] -> (s0)
domain:
s0 in [0, 9]"""

SLICE = """
p0 = f32[10, 20, 50] parameter(0)
ROOT slice = f32[5, 3, 25] slice(f32[10, 20, 50] p0), slice={[5:10:1], [3:20:7], [0:50:2]}
"""

COLLAPSE = """
p0 = f32[4,8] parameter(0)
ROOT reshape = f32[32] reshape(p0)
"""
EXPAND = """
p0 = f32[32] parameter(0)
ROOT reshape = f32[4, 8] reshape(p0)
"""
GENERIC_2D_3D = """
p0 = f32[4,8] parameter(0)
ROOT reshape = f32[2, 4, 4] reshape(p0)
"""
GENERIC_3D_3D = """
p0 = f32[4, 8, 12] parameter(0)
ROOT reshape = f32[32, 3, 4] reshape(p0)
"""

CONCAT = """
p0 = f32[2, 5, 7] parameter(0)
p1 = f32[2, 11, 7] parameter(1)
p2 = f32[2, 17, 7] parameter(2)
ROOT concat = f32[2, 33, 7] concatenate(f32[2, 5, 7] p0, f32[2, 11, 7] p1,
  f32[2, 17, 7] p2), dimensions={1}
"""

DOT = """
p0 = f32[4, 128, 256] parameter(0)
p1 = f32[4, 256, 64] parameter(1)
ROOT dot = f32[4, 128, 64] dot(p0, p1),
  lhs_batch_dims={0}, rhs_batch_dims={0},
  lhs_contracting_dims={2}, rhs_contracting_dims={1}
"""

PAD = """
p0 = f32[4, 4] parameter(0)
p1 = f32[] parameter(1)
ROOT pad = f32[12, 16] pad(p0, p1), padding=1_4_1x4_8_0
"""

#: Where the seed reads the pad value at every index (``(d0, d1) -> ()``), the exact maps
#: read it where the output holds padding: rows 0 (low), 8-11 (high) and the even rows
#: 2-6 between the operand's rows (interior), columns 0-3 (low) and 8-15 (high).
PAD_VALUE = [f"""(d0, d1) -> ()
domain:
d0 in {rows}
d1 in {columns}{extra}""" for rows, columns, extra in (
    ("[0, 0]", "[0, 15]", ""), ("[8, 11]", "[0, 15]", ""),
    ("[2, 6]", "[0, 15]", "\n(d0 - 1) mod 2 in [1, 1]"),
    ("[0, 11]", "[0, 3]", ""), ("[0, 11]", "[8, 15]", ""))]

REDUCE_WINDOW = """
c_inf = f32[] constant(-inf)
p0 = f32[1024, 514] parameter(0)
ROOT reduce-window = f32[1024, 3] reduce-window(p0, c_inf),
  window={size=1x512 pad=0_0x0_0}, to_apply=max
"""

#: (name, HLO body, direction, operand/output index, expected per group)
#: output_to_input: index = output, groups = operands; input_to_output: index = operand.
CASES: list[tuple[str, str, str, int, list[list[str]]]] = [
    ("elementwise", ADD, "out", 0, [[IDENTITY_10_20], [IDENTITY_10_20]]),
    ("elementwise_in0", ADD, "in", 0, [[IDENTITY_10_20]]),
    ("elementwise_in1", ADD, "in", 1, [[IDENTITY_10_20]]),
    ("broadcast", BROADCAST, "out", 0, [["""(d0, d1, d2) -> (d1)
domain:
d0 in [0, 9]
d1 in [0, 19]
d2 in [0, 29]"""]]),
    ("broadcast_in", BROADCAST, "in", 0, [["""(d0)[s0, s1] -> (s0, d0, s1)
domain:
d0 in [0, 19]
s0 in [0, 9]
s1 in [0, 29]"""]]),
    ("dynamic_slice", DYNAMIC_SLICE, "out", 0, [[
        "(d0, d1, d2)[s0, s1, s2] -> (d0 + s0, d1 + s1, d2 + s2)\n" """domain:
d0 in [0, 0]
d1 in [0, 1]
d2 in [0, 31]
s0 in [0, 1]
hlo: of1 = s32[] parameter(1)
(d0, d1, d2) -> ()
s1 in [0, 0]
hlo: of2 = s32[] parameter(2)
(d0, d1, d2) -> ()
s2 in [0, 226]
hlo: of3 = s32[] parameter(3)
(d0, d1, d2) -> ()"""], [DS_OFFSET],
        # the seed reads of2 everywhere, but the slice spans dim 1: its clamped value is
        # always 0 (s1 in [0, 0] above), so nothing depends on it
        ["KNOWN EMPTY"], [DS_OFFSET]]),
    ("dynamic_update_slice", DUS, "out", 0, [DUS_OPERAND, ["""(d0, d1)[s0, s1] -> (d0 - s0, d1 - s1)
domain:
d0 in [0, 19]
d1 in [0, 29]
s0 in [0, 15]
hlo: of1 = s32[] parameter(2)
(d0, d1) -> ()
s1 in [0, 20]
hlo: of2 = s32[] parameter(3)
(d0, d1) -> ()"""], *DUS_OFFSETS]),
    ("gather", GATHER, "out", 0, [["""(d0, d1, d2, d3)[s0, s1] -> (d1 + s0, d2 + s1, d3)
domain:
d0 in [0, 1805]
d1 in [0, 6]
d2 in [0, 7]
d3 in [0, 3]
s0 in [0, 26]
hlo: indices = s32[1806,2]{1,0} parameter(1)
(d0, d1, d2, d3) -> (d0, 0)
s1 in [0, 68]
hlo: indices = s32[1806,2]{1,0} parameter(1)
(d0, d1, d2, d3) -> (d0, 1)"""], ["""(d0, d1, d2, d3)[s0] -> (d0, s0)
domain:
d0 in [0, 1805]
d1 in [0, 6]
d2 in [0, 7]
d3 in [0, 3]
s0 in [0, 1]"""]]),
    ("transpose", TRANSPOSE, "out", 0, [["""(d0, d1, d2, d3) -> (d0, d3, d1, d2)
domain:
d0 in [0, 2]
d1 in [0, 5]
d2 in [0, 127]
d3 in [0, 12287]"""]]),
    ("transpose_in", TRANSPOSE, "in", 0, [["""(d0, d1, d2, d3) -> (d0, d2, d3, d1)
domain:
d0 in [0, 2]
d1 in [0, 12287]
d2 in [0, 5]
d3 in [0, 127]"""]]),
    ("reverse", REVERSE, "out", 0, [[REVERSE_MAP]]),
    ("reverse_in", REVERSE, "in", 0, [[REVERSE_MAP]]),
    ("reduce_output0", REDUCE, "out", 0,
     [[REDUCE_INPUT], [REDUCE_INPUT], [REDUCE_INIT], [REDUCE_INIT]]),
    ("reduce_output1", REDUCE, "out", 1,
     [[REDUCE_INPUT], [REDUCE_INPUT], [REDUCE_INIT], [REDUCE_INIT]]),
    ("reduce_in_input0", REDUCE, "in", 0, [[REDUCE_IN_OUT], [REDUCE_IN_OUT]]),
    ("reduce_in_input1", REDUCE, "in", 1, [[REDUCE_IN_OUT], [REDUCE_IN_OUT]]),
    ("reduce_in_init0", REDUCE, "in", 2, [[REDUCE_INIT_OUT], [REDUCE_INIT_OUT]]),
    ("reduce_in_init1", REDUCE, "in", 3, [[REDUCE_INIT_OUT], [REDUCE_INIT_OUT]]),
    ("slice", SLICE, "out", 0, [["""(d0, d1, d2) -> (d0 + 5, d1 * 7 + 3, d2 * 2)
domain:
d0 in [0, 4]
d1 in [0, 2]
d2 in [0, 24]"""]]),
    ("slice_in", SLICE, "in", 0, [["""(d0, d1, d2) -> (d0 - 5, (d1 - 3) floordiv 7, d2 floordiv 2)
domain:
d0 in [5, 9]
d1 in [3, 17]
d2 in [0, 48]
(d1 - 3) mod 7 in [0, 0]
d2 mod 2 in [0, 0]"""]]),
    ("reshape_collapse", COLLAPSE, "out", 0, [["""(d0) -> (d0 floordiv 8, d0 mod 8)
domain:
d0 in [0, 31]"""]]),
    ("reshape_collapse_in", COLLAPSE, "in", 0, [["""(d0, d1) -> (d0 * 8 + d1)
domain:
d0 in [0, 3]
d1 in [0, 7]"""]]),
    ("reshape_expand", EXPAND, "out", 0, [["""(d0, d1) -> (d0 * 8 + d1)
domain:
d0 in [0, 3]
d1 in [0, 7]"""]]),
    ("reshape_expand_in", EXPAND, "in", 0, [["""(d0) -> (d0 floordiv 8, d0 mod 8)
domain:
d0 in [0, 31]"""]]),
    ("reshape_generic", GENERIC_2D_3D, "out", 0,
     [["""(d0, d1, d2) -> (d0 * 2 + d1 floordiv 2, d2 + (d1 mod 2) * 4)
domain:
d0 in [0, 1]
d1 in [0, 3]
d2 in [0, 3]"""]]),
    ("reshape_generic_in", GENERIC_2D_3D, "in", 0,
     [["""(d0, d1) -> (d0 floordiv 2, d1 floordiv 4 + (d0 mod 2) * 2, d1 mod 4)
domain:
d0 in [0, 3]
d1 in [0, 7]"""]]),
    ("reshape_subshapes", GENERIC_3D_3D, "out", 0,
     [["""(d0, d1, d2) -> (d0 floordiv 8, d0 mod 8, d1 * 4 + d2)
domain:
d0 in [0, 31]
d1 in [0, 2]
d2 in [0, 3]"""]]),
    ("reshape_subshapes_in", GENERIC_3D_3D, "in", 0,
     [["""(d0, d1, d2) -> (d0 * 8 + d1, d2 floordiv 4, d2 mod 4)
domain:
d0 in [0, 3]
d1 in [0, 7]
d2 in [0, 11]"""]]),
    ("concatenate", CONCAT, "out", 0, [["""(d0, d1, d2) -> (d0, d1, d2)
domain:
d0 in [0, 1]
d1 in [0, 4]
d2 in [0, 6]"""], ["""(d0, d1, d2) -> (d0, d1 - 5, d2)
domain:
d0 in [0, 1]
d1 in [5, 15]
d2 in [0, 6]"""], ["""(d0, d1, d2) -> (d0, d1 - 16, d2)
domain:
d0 in [0, 1]
d1 in [16, 32]
d2 in [0, 6]"""]]),
    ("concatenate_in0", CONCAT, "in", 0, [["""(d0, d1, d2) -> (d0, d1, d2)
domain:
d0 in [0, 1]
d1 in [0, 4]
d2 in [0, 6]"""]]),
    ("concatenate_in1", CONCAT, "in", 1, [["""(d0, d1, d2) -> (d0, d1 + 5, d2)
domain:
d0 in [0, 1]
d1 in [0, 10]
d2 in [0, 6]"""]]),
    ("concatenate_in2", CONCAT, "in", 2, [["""(d0, d1, d2) -> (d0, d1 + 16, d2)
domain:
d0 in [0, 1]
d1 in [0, 16]
d2 in [0, 6]"""]]),
    ("dot", DOT, "out", 0, [["""(d0, d1, d2)[s0] -> (d0, d1, s0)
domain:
d0 in [0, 3]
d1 in [0, 127]
d2 in [0, 63]
s0 in [0, 255]"""], ["""(d0, d1, d2)[s0] -> (d0, s0, d2)
domain:
d0 in [0, 3]
d1 in [0, 127]
d2 in [0, 63]
s0 in [0, 255]"""]]),
    ("dot_in_lhs", DOT, "in", 0, [["""(d0, d1, d2)[s0] -> (d0, d1, s0)
domain:
d0 in [0, 3]
d1 in [0, 127]
d2 in [0, 255]
s0 in [0, 63]"""]]),
    # The seed prints (d0, s0, d1): wrong, see the module docstring.
    ("dot_in_rhs_corrected", DOT, "in", 1, [["""(d0, d1, d2)[s0] -> (d0, s0, d2)
domain:
d0 in [0, 3]
d1 in [0, 255]
d2 in [0, 63]
s0 in [0, 127]"""]]),
    ("pad", PAD, "out", 0, [["""(d0, d1) -> ((d0 - 1) floordiv 2, d1 - 4)
domain:
d0 in [1, 7]
d1 in [4, 7]
(d0 - 1) mod 2 in [0, 0]"""], PAD_VALUE]),
    ("reduce_window", REDUCE_WINDOW, "out", 0, [["""(d0, d1)[s0] -> (d0, d1 + s0)
domain:
d0 in [0, 1023]
d1 in [0, 2]
s0 in [0, 511]"""], ["""(d0, d1) -> ()
domain:
d0 in [0, 1023]
d1 in [0, 2]"""]]),
]

MAX = """
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

max_with_index {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  m = f32[] maximum(a, b)
  k = s32[] maximum(i, j)
  ROOT r = (f32[], s32[]) tuple(m, k)
}
"""


def root_of(body: str):
    return parse_hlo("HloModule m\n" + MAX + "ENTRY e {\n" + body + "\n}\n").entry.root


def _without_hlo(m: IndexingMap) -> IndexingMap:
    """The map with runtime-variable instruction texts blanked (they are compared apart)."""
    if not m.rts:
        return m
    return IndexingMap.create(m.dims, m.results, m.ranges,
                              [replace(v, source=None) for v in m.rts], m.constraints)


def _same(got: IndexingMap, seed: IndexingMap, fold: bool) -> None:
    expected = finish(seed, fold)
    assert _without_hlo(got) == _without_hlo(expected), f"{got!r} != {expected!r}"
    for mine, theirs in zip(got.rts, seed.rts, strict=True):
        assert mine.source and str(mine.source) in str(theirs.source), (mine, theirs)
    assert_same_function(_without_hlo(got), _without_hlo(seed))


@pytest.mark.parametrize(("name", "body", "direction", "index", "expected"), CASES,
                         ids=[c[0] for c in CASES])
def test_seed_example(name: str, body: str, direction: str, index: int,
                      expected: list[list[str]]) -> None:
    instr = root_of(body)
    groups = output_to_input(instr, index) if direction == "out" \
        else input_to_output(instr, index)
    assert len(groups) == len(expected)
    fold = instr.opcode in ("reduce-window", "convolution")
    for group, texts in zip(groups, expected, strict=True):
        assert len(group) == len(texts)
        for got, text in zip(group, texts, strict=True):
            _same(got, parse_map(text), fold)


@pytest.mark.parametrize(("body", "operand", "seed", "unread"), [
    (DUS, 0, "(d0, d1) -> (d0, d1), domain: d0 in [0, 19], d1 in [0, 29]", None),
    (DUS, 2, "(d0, d1) -> (), domain: d0 in [0, 19], d1 in [0, 29]", None),
    (DYNAMIC_SLICE, 2, "(d0, d1, d2) -> (), domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]",
     (0, 0, 0)),
    (PAD, 1, "(d0, d1) -> (), domain: d0 in [0, 11], d1 in [0, 15]", (1, 5))],
    ids=["dus", "dus_offset", "dynamic_slice_offset", "pad"])
def test_exact_maps_lie_within_the_seeds_looser_ones(body: str, operand: int, seed: str,
                                                     unread: tuple[int, ...] | None) -> None:
    """Where the seed over-approximates (every index reads), the exact union reads a part
    of what it reads at every output index (runtime variables over their intervals), and
    nothing at an element copied from the operand (``unread``)."""
    loose = parse_map(seed)
    group = output_to_input(root_of(body))[operand]
    for point in itertools.product(*(range(b.lo, b.hi + 1) for b in loose.dims)):
        found = set().union(*(image(m, point) for m in group))
        assert found <= image(loose, point), point
        assert not (found and point == unread), point


def test_seed_runtime_variable_provenance() -> None:
    """The gather operand map's runtime variables read (d0, 0) and (d0, 1) of the indices."""
    (operand_map,), _ = output_to_input(root_of(GATHER))
    assert [str(v.source) for v in operand_map.rts] == ["parameter(1)", "parameter(1)"]
    domain = "domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3]"
    assert [v.map for v in operand_map.rts] == [
        parse_map(f"(d0, d1, d2, d3) -> (d0, {k}), {domain}") for k in (0, 1)]
