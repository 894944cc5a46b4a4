"""Every per-op example of seed 002 (XLA's *Indexing analysis*, Hindi edition) reproduces.

Each case is the seed's HLO snippet and the maps the seed prints, in the seed's own text
(``floordiv``, one domain entry a line, runtime variables as symbols with ``hlo:`` lines).
A seed map is parsed with :func:`parse_map` (which does not simplify) and compared with the
rule's map as written, never through the simplifier under test: the two relate the same
(index, runtime values) to the same elements, by enumeration of every point of their
domains (:func:`_relation`, numpy evaluation of the expressions; a dimension neither map
mentions is enumerated at one value, which decides all); they have the same dimension
intervals, as many range variables, and runtime variables naming the seed's instruction
(``parameter(1)`` is part of ``of1 = s32[] parameter(1)``) with the same maps.

Where the seed is wrong the case says so and expects the correct map: the dot example's
``input_2 -> output`` map is printed as ``(d0, s0, d1)``, but rhs dim 1 is the contracting
dim (size 256) and the output's last dim (size 64) is rhs dim 2: ``(d0, s0, d2)``.
"""

from __future__ import annotations

import itertools

import pytest

from helpers import image
from symidx.core.indexing_map import IndexingMap
from symidx.core.syntax import parse_map
from symidx.hlo import parse_hlo
from symidx.ops import input_to_output, output_to_input

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

#: Where the seed reads the update at ``(d0 - s0, d1 - s1)`` for every output index (indices
#: outside the update included), the exact map reads it where the offsets put the output
#: index inside the update window.
DUS_UPDATE = """(d0, d1)[s0, s1] -> (d0 - s0, d1 - s1)
domain:
d0 in [0, 19]
d1 in [0, 29]
s0 in [0, 15]
hlo: of1 = s32[] parameter(2)
(d0, d1) -> ()
s1 in [0, 20]
hlo: of2 = s32[] parameter(3)
(d0, d1) -> ()
d0 - s0 in [0, 4]
d1 - s1 in [0, 9]"""

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
    ("dynamic_update_slice", DUS, "out", 0, [DUS_OPERAND, [DUS_UPDATE], *DUS_OFFSETS]),
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
    # The seed reads every input and init for both outputs; its max_with_index takes the
    # max of each pair apart (m of the values, k of the indices), so each output reads its
    # own input and init only (see test_exact_maps_lie_within_the_seeds_looser_ones).
    ("reduce_output0", REDUCE, "out", 0,
     [[REDUCE_INPUT], ["KNOWN EMPTY"], [REDUCE_INIT], ["KNOWN EMPTY"]]),
    ("reduce_output1", REDUCE, "out", 1,
     [["KNOWN EMPTY"], [REDUCE_INPUT], ["KNOWN EMPTY"], [REDUCE_INIT]]),
    ("reduce_in_input0", REDUCE, "in", 0, [[REDUCE_IN_OUT], ["KNOWN EMPTY"]]),
    ("reduce_in_input1", REDUCE, "in", 1, [["KNOWN EMPTY"], [REDUCE_IN_OUT]]),
    ("reduce_in_init0", REDUCE, "in", 2, [[REDUCE_INIT_OUT], ["KNOWN EMPTY"]]),
    ("reduce_in_init1", REDUCE, "in", 3, [["KNOWN EMPTY"], [REDUCE_INIT_OUT]]),
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


#: Points evaluated at once (a block of values of the first enumerated input).
CHUNK = 1 << 20


def _inputs(m: IndexingMap) -> list:
    """The variables a relation is over: the dimensions and the runtime variables (a map
    holds for every runtime value); range variables are existential."""
    return [*m.dims, *(v.bounds for v in m.rts)]


def _relation(a: IndexingMap, b: IndexingMap) -> None:
    """``a`` and ``b`` send every input point (dims, runtime values) to the same set of
    results, checked on every point of the union of their input boxes. Inputs that occur in
    no result nor constraint of either map are enumerated at one value when their intervals
    agree (both maps are constant along them). Where the two have the same range variables
    the results are compared point by point (enough for equal relations); else, or where
    that fails, as sets of (input, result) rows."""
    import numpy as np

    assert (a.num_dims, len(a.rts), a.num_results) == (b.num_dims, len(b.rts), b.num_results)
    n_in = a.num_dims + len(a.rts)
    used: set[int] = set()  # positions among the inputs
    for m in (a, b):
        position = {v: k for k, v in enumerate(m.all_vars[:m.num_dims])}
        position |= {v: m.num_dims + k
                     for k, v in enumerate(m.all_vars[m.num_dims + m.num_ranges:])}
        for e in (*m.results, *(c for c, _ in m.constraints)):
            used |= {position[v] for v in e.free_symbols if v in position}
    box = []
    for k, (x, y) in enumerate(zip(_inputs(a), _inputs(b), strict=True)):
        lo, hi = min(x.lo, y.lo), max(x.hi, y.hi)
        box.append(range(lo, hi + 1) if k in used or x != y else range(lo, lo + 1))
    inner = 1
    for r in [*box[1:], *(range(v.lo, v.hi + 1) for v in a.ranges)]:
        inner *= len(r)
    first = box[0] if n_in else range(1)
    step = max(1, CHUNK // max(1, inner))

    def grid(block: range, ranges: list) -> list:
        axes = [np.arange(block.start, block.stop, dtype=np.int64)] if n_in else []
        axes += [np.arange(r.start, r.stop, dtype=np.int64) for r in box[1:]]
        axes += [np.arange(v.lo, v.hi + 1, dtype=np.int64) for v in ranges]
        return [g.reshape(-1) for g in np.meshgrid(*axes, indexing="ij")]

    def evaluate(m: IndexingMap, grids: list) -> tuple[list, object]:
        count = grids[0].size if grids else 1
        ins, syms = grids[:n_in], grids[n_in:]
        results, mask = m.evaluate_arrays(ins[:m.num_dims] + syms + ins[m.num_dims:])
        return [np.broadcast_to(r, (count,)) for r in results], np.broadcast_to(mask, (count,))

    def rows(m: IndexingMap, block: range):
        grids = grid(block, list(m.ranges))
        results, mask = evaluate(m, grids)
        cols = [*grids[:n_in], *results]
        table = np.stack(cols, axis=1)[mask] if cols else np.zeros((int(mask.sum()), 0))
        return np.unique(table, axis=0)

    def pointwise(block: range) -> bool:
        """Same range variables: the same results at every (input, range) point is enough."""
        if list(a.ranges) != list(b.ranges):
            return False
        grids = grid(block, list(a.ranges))
        (ra, ma), (rb, mb) = evaluate(a, grids), evaluate(b, grids)
        return bool(np.array_equal(ma, mb)) and all(
            np.array_equal(x[ma], y[ma]) for x, y in zip(ra, rb, strict=True))

    for start in range(first.start, first.stop, step):
        block = range(start, min(start + step, first.stop))
        if pointwise(block):
            continue
        got, want = rows(a, block), rows(b, block)
        assert np.array_equal(got, want), (block, got.shape, want.shape)


def _same(got: IndexingMap, seed: IndexingMap) -> None:
    assert got.is_known_empty == seed.is_known_empty, got
    if seed.is_known_empty:
        return
    assert got.dims == seed.dims and got.num_ranges == seed.num_ranges, (got, seed)
    _relation(got, seed)
    for mine, theirs in zip(got.rts, seed.rts, strict=True):
        assert mine.source and str(mine.source) in str(theirs.source), (mine, theirs)
        _relation(mine.map, theirs.map)


@pytest.mark.parametrize(("name", "body", "direction", "index", "expected"), CASES,
                         ids=[c[0] for c in CASES])
def test_seed_example(name: str, body: str, direction: str, index: int,
                      expected: list[list[str]]) -> None:
    instr = root_of(body)
    groups = output_to_input(instr, index) if direction == "out" \
        else input_to_output(instr, index)
    assert len(groups) == len(expected)
    for group, texts in zip(groups, expected, strict=True):
        assert len(group) == len(texts)
        for got, text in zip(group, texts, strict=True):
            _same(got, parse_map(text))


@pytest.mark.parametrize(("body", "operand", "seed", "unread"), [
    (DUS, 0, "(d0, d1) -> (d0, d1), domain: d0 in [0, 19], d1 in [0, 29]", None),
    (DUS, 1, "(d0, d1){rt0, rt1} -> (d0 - rt0, d1 - rt1), domain: d0 in [0, 19], "
     "d1 in [0, 29], rt0 in [0, 15], rt1 in [0, 20]", None),
    (DUS, 2, "(d0, d1) -> (), domain: d0 in [0, 19], d1 in [0, 29]", None),
    (DYNAMIC_SLICE, 2, "(d0, d1, d2) -> (), domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]",
     (0, 0, 0)),
    (PAD, 1, "(d0, d1) -> (), domain: d0 in [0, 11], d1 in [0, 15]", (1, 5)),
    (REDUCE, 1, "(d0)[s0] -> (s0, d0), domain: d0 in [0, 9], s0 in [0, 255]", (0,))],
    ids=["dus", "dus_update", "dus_offset", "dynamic_slice_offset", "pad", "reduce_indices"])
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
