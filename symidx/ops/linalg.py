"""Linear-algebra and normalisation ops: topk, fft, batch-norm-training/-inference/-grad,
cholesky, triangular-solve, ragged-dot.

Each output element reads what the op's defining formula makes it depend on:

* ``topk`` (output ``(values, indices)``, ``k`` per row of the last dimension): an output
  element reads the whole last-dimension row of its operand.
* ``fft``: an output element reads every element of the transformed trailing dimensions
  (``len(fft_length)`` of them) of its batch position.
* batch norm, ``feature_index=f``: the mean and variance of a feature are taken over every
  other dimension, so an element that depends on them reads the whole *feature slice* (every
  operand element with the same index along ``f``); per-feature operands (scale, offset,
  mean, variance) are read at the feature. ``batch-norm-inference`` reads its operand at the
  same index.
* ``cholesky``: the result is defined only for a positive-definite operand; for any other
  (a NaN or an infinity in the triangle read, or a finite value that breaks definiteness)
  StableHLO leaves it undefined, and XLA's CPU returns NaN everywhere. So under the
  ``reads`` semantics every element of the factor reads the whole triangle the op reads.
  Under ``finite``, which also takes the op's precondition (a positive-definite operand) as
  given, with ``lower=true``, element ``(i, j)``, ``j <= i``, of the factor reads
  ``a[p, q]`` for ``q <= p``, ``q <= j`` and ``p <= j`` or ``p == i`` (the recurrence
  ``L[i][j] = (a[i][j] - sum_k<j L[i][k] L[j][k]) / L[j][j]``); ``lower=false`` is the
  transpose. The other triangle of the output is implementation-defined: it is said to read
  the whole triangle the op reads (a labelled over-approximation).
* ``triangular-solve`` (``op(a) x = b`` or ``x op(a) = b``): substitution makes ``x[i][j]``
  read the right-hand side up to (or from) its row (left side) or column (right side), and
  the triangle of ``op(a)`` up to it; the diagonal is not read with ``unit_diagonal=true``.
* ``ragged-dot`` (``lhs, rhs, group_sizes``): which rows (or contracting positions) form a
  group depends on ``group_sizes`` at run time, so the maps are a labelled
  over-approximation: a dot where the ragged group is any group, and every group size read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sympy import Integer

from symidx.core.expr import Expr, dim, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.hlo import HloInstruction
from symidx.hlo.facts import Dims, num_outputs, operand_dims, output_dims
from symidx.ops._common import attribute, require
from symidx.ops.basic import every_element, identity
from symidx.ops.registry import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, opacity, rule

Constraint = tuple[Expr, Interval]

# --- topk ---------------------------------------------------------------------------------


def row_map(source: Sequence[int], row: int) -> IndexingMap:
    """``(d0, .., dn)[s0] -> (d0, .., d(n-1), s0)``, ``s0`` over a row of ``row``: every
    element of the last-dimension row (either direction)."""
    return IndexingMap.create(source, [dim(i) for i in range(len(source) - 1)] + [sym(0)],
                              [(0, row - 1)])


def topk_dims(instr: HloInstruction) -> tuple[Dims, int]:
    """The operand's dims and ``k``; the outputs (values, indices) are the operand with
    ``k`` in the last dimension."""
    require(len(instr.operands) == 1, instr, "expected one operand")
    operand = operand_dims(instr, 0)
    require(len(operand) >= 1, instr, "expected an operand of rank >= 1")
    outs = {output_dims(instr, j) for j in range(num_outputs(instr))}
    require(len(outs) == 1, instr, "the outputs differ in shape")
    (out,) = outs
    k = out[-1] if out else -1
    require(out[:-1] == operand[:-1] and 0 <= k <= operand[-1], instr,
            f"output {list(out)} is not the top k of {list(operand)}")
    return operand, k


def topk_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    operand, _ = topk_dims(instr)
    return [[row_map(output_dims(instr, output_index), operand[-1])]]


def topk_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    operand, k = topk_dims(instr)
    return [[row_map(operand, k)] for _ in range(num_outputs(instr))]


rule(OUTPUT_TO_INPUT, "topk")(topk_out)
rule(INPUT_TO_OUTPUT, "topk")(topk_in)


# --- fft ----------------------------------------------------------------------------------


def block_map(source: Sequence[int], target: Sequence[int], batch: int) -> IndexingMap:
    """``(b.., t..)[s..] -> (b.., s..)``: the first ``batch`` dims kept, every element of the
    trailing dims of ``target``."""
    trailing = target[batch:]
    return IndexingMap.create(source, [dim(i) for i in range(batch)]
                              + [sym(i) for i in range(len(trailing))],
                              [(0, n - 1) for n in trailing])


def _fft_batch(instr: HloInstruction) -> int:
    lengths = attribute(instr.attr_int_list("fft_length"), instr, "fft_length")
    kind = attribute(instr.attr_str("fft_type"), instr, "fft_type")
    operand, out = operand_dims(instr, 0), output_dims(instr)
    batch = len(operand) - len(lengths)
    require(1 <= len(lengths) <= len(operand) == len(out) and operand[:batch] == out[:batch],
            instr, "fft_length does not fit the shapes")
    last = lengths[-1]
    expect = {"FFT": (lengths, lengths), "IFFT": (lengths, lengths),
              "RFFT": (lengths, lengths[:-1] + (last // 2 + 1,)),
              "IRFFT": (lengths[:-1] + (last // 2 + 1,), lengths)}
    require(kind in expect, instr, f"unknown fft_type={kind}")
    require((operand[batch:], out[batch:]) == expect[kind], instr,
            f"{kind} of fft_length={list(lengths)} does not fit the shapes")
    return batch


@rule(OUTPUT_TO_INPUT, "fft")
def _fft_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    return [[block_map(output_dims(instr), operand_dims(instr, 0), _fft_batch(instr))]]


@rule(INPUT_TO_OUTPUT, "fft")
def _fft_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    return [[block_map(operand_dims(instr, 0), output_dims(instr), _fft_batch(instr))]]


# --- batch norm -------------------------------------------------------------------------------

ARRAY, FEATURE = "array", "feature"
SAME, SLICE = "same", "slice"  # the same element; every element of the same feature


@dataclass(frozen=True)
class BatchNormKind:
    """The operands' and outputs' kinds (the normalised array or a per-feature vector) and,
    per output, how it reads each operand (``SAME``, ``SLICE`` or not at all)."""

    operands: tuple[str, ...]
    outputs: tuple[str, ...]
    reads: tuple[tuple[str | None, ...], ...]


BATCH_NORM = {
    # (operand, scale, offset) -> (output, batch_mean, batch_var)
    "batch-norm-training": BatchNormKind(
        (ARRAY, FEATURE, FEATURE), (ARRAY, FEATURE, FEATURE),
        ((SLICE, SLICE, SLICE), (SLICE, None, None), (SLICE, None, None))),
    # (operand, scale, offset, mean, variance) -> output
    "batch-norm-inference": BatchNormKind(
        (ARRAY, FEATURE, FEATURE, FEATURE, FEATURE), (ARRAY,),
        ((SAME, SLICE, SLICE, SLICE, SLICE),)),
    # (operand, scale, mean, variance, grad_output) -> (grad_operand, grad_scale, grad_offset)
    "batch-norm-grad": BatchNormKind(
        (ARRAY, FEATURE, FEATURE, FEATURE, ARRAY), (ARRAY, FEATURE, FEATURE),
        ((SLICE, SLICE, SLICE, SLICE, SLICE), (SLICE, None, SLICE, SLICE, SLICE),
         (None, None, None, None, SLICE))),
}


def feature_map(source_kind: str, target_kind: str, shape: Sequence[int], f: int
                ) -> IndexingMap:
    """Every element with the same feature as the source index (either direction): an array
    index ``(d..)`` has feature ``d_f``, a per-feature index ``(c)`` is the feature."""
    if source_kind == ARRAY and target_kind == FEATURE:
        return IndexingMap.create(shape, [dim(f)])
    if source_kind == FEATURE and target_kind == FEATURE:
        return identity([shape[f]])
    feature = dim(f) if source_kind == ARRAY else dim(0)
    ranges: list[tuple[int, int]] = []
    results: list[Expr] = []
    for i, n in enumerate(shape):
        if i == f:
            results.append(feature)
        else:
            ranges.append((0, n - 1))
            results.append(sym(len(ranges) - 1))
    return IndexingMap.create(shape if source_kind == ARRAY else [shape[f]], results, ranges)


def _batch_norm(instr: HloInstruction) -> tuple[BatchNormKind, Dims, int]:
    kind = BATCH_NORM[instr.opcode]
    require(len(instr.operands) == len(kind.operands) and num_outputs(instr) == len(
        kind.outputs), instr, f"expected {len(kind.operands)} operands and "
                              f"{len(kind.outputs)} outputs")
    shape = operand_dims(instr, 0)
    f = attribute(instr.attr_int("feature_index"), instr, "feature_index")
    require(0 <= f < len(shape), instr, f"feature_index={f} out of range")
    dims = [operand_dims(instr, k) for k in range(len(kind.operands))] \
        + [output_dims(instr, j) for j in range(len(kind.outputs))]
    kinds = kind.operands + kind.outputs
    require(all(d == (shape if k == ARRAY else (shape[f],)) for d, k in zip(dims, kinds,
                                                                             strict=True)),
            instr, "the operands and outputs do not fit the feature dimension")
    return kind, shape, f


def _batch_norm_map(read: str | None, source: str, target: str, shape: Dims, f: int
                    ) -> list[IndexingMap]:
    if read is None:
        return []
    if read == SAME:
        return [identity(shape)]
    return [feature_map(source, target, shape, f)]


@rule(OUTPUT_TO_INPUT, *BATCH_NORM)
def _batch_norm_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    kind, shape, f = _batch_norm(instr)
    out = kind.outputs[output_index]
    return [_batch_norm_map(read, out, operand, shape, f)
            for read, operand in zip(kind.reads[output_index], kind.operands, strict=True)]


@rule(INPUT_TO_OUTPUT, *BATCH_NORM)
def _batch_norm_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    kind, shape, f = _batch_norm(instr)
    operand = kind.operands[operand_index]
    return [_batch_norm_map(reads[operand_index], operand, out, shape, f)
            for reads, out in zip(kind.reads, kind.outputs, strict=True)]


# --- cholesky ---------------------------------------------------------------------------------


def _matrix_dims(instr: HloInstruction, k: int) -> Dims:
    dims = operand_dims(instr, k)
    require(len(dims) >= 2 and dims[-1] == dims[-2], instr,
            f"operand {k} is not a batch of square matrices")
    return dims


def _matrix_map(source: Sequence[int], rank: int, row: Expr, col: Expr,
                ranges: Sequence[tuple[int, int]], constraints: Sequence[Constraint],
                batch: Sequence[Expr] | None = None) -> IndexingMap:
    """A map whose target is element ``(row, col)`` of the matrix at the source's batch
    position (the first ``rank - 2`` dims, or ``batch``)."""
    lead = list(batch) if batch is not None else [dim(i) for i in range(rank - 2)]
    return IndexingMap.create(source, lead + [row, col], ranges, constraints=constraints)


def _le(a: Expr, b: Expr, n: int) -> Constraint:
    """``a <= b`` as a constraint, for ``a`` and ``b`` in ``[0, n]``."""
    return b - a, Interval(0, n)


def cholesky_operand_maps(dims: Sequence[int], lower: bool) -> list[IndexingMap]:
    """Output index -> the elements of ``a`` it reads. With ``lower``, for the factor's
    ``(i, j)``, ``j <= i``: ``a[p, q]`` with ``q <= p <= j`` (map A) or ``p = i, q <= j``
    (map B); the other triangle reads the whole lower triangle (map C). Without ``lower``
    the same with rows and columns swapped on both sides."""
    r, n = len(dims), dims[-1]
    i, j = (dim(r - 2), dim(r - 1)) if lower else (dim(r - 1), dim(r - 2))

    def element(p: Expr, q: Expr) -> tuple[Expr, Expr]:
        return (p, q) if lower else (q, p)

    square = [(0, n - 1), (0, n - 1)]
    factor = [_le(j, i, n)]
    a = _matrix_map(dims, r, *element(sym(0), sym(1)), square,
                    factor + [_le(sym(1), sym(0), n), _le(sym(0), j, n)])
    b = _matrix_map(dims, r, *element(i, sym(0)), [(0, n - 1)], factor + [_le(sym(0), j, n)])
    c = _matrix_map(dims, r, *element(sym(0), sym(1)), square,
                    [_le(i + 1, j, n), _le(sym(1), sym(0), n)])
    return [a, b, c]


def cholesky_output_maps(dims: Sequence[int], lower: bool) -> list[IndexingMap]:
    """Element ``a[p, q]`` -> the outputs that read it (the inverse of
    :func:`cholesky_operand_maps`)."""
    r, n = len(dims), dims[-1]
    p, q = (dim(r - 2), dim(r - 1)) if lower else (dim(r - 1), dim(r - 2))

    def element(i: Expr, j: Expr) -> tuple[Expr, Expr]:
        return (i, j) if lower else (j, i)

    read = [_le(q, p, n)]
    square = [(0, n - 1), (0, n - 1)]
    # A: outputs (i, j) with p <= j <= i
    a = _matrix_map(dims, r, *element(sym(0), sym(1)), square,
                    read + [_le(p, sym(1), n), _le(sym(1), sym(0), n)])
    # B: outputs (p, j) with q <= j <= p
    b = _matrix_map(dims, r, *element(p, sym(0)), [(0, n - 1)],
                    read + [_le(q, sym(0), n), _le(sym(0), p, n)])
    # C: every output of the other triangle, i < j
    c = _matrix_map(dims, r, *element(sym(0), sym(1)), square,
                    read + [_le(sym(0) + 1, sym(1), n)])
    return [a, b, c]


def _lower(instr: HloInstruction) -> bool:
    value = (instr.attr_str("lower") or "false").lower()
    require(value in ("true", "false"), instr, f"lower={value}")
    return value == "true"


def _cholesky_dims(instr: HloInstruction) -> Dims:
    dims = _matrix_dims(instr, 0)
    require(output_dims(instr) == dims, instr, "operand and output differ")
    return dims


def cholesky_triangle_maps(dims: Sequence[int], lower: bool
                           ) -> tuple[IndexingMap, IndexingMap]:
    """Under ``reads``: output index -> every element of the triangle of ``a`` the op reads
    (``q <= p`` for ``a[p, q]`` with ``lower``, ``p <= q`` without), and back: an element
    of that triangle -> every output of its matrix."""
    r, n = len(dims), dims[-1]
    square = [(0, n - 1), (0, n - 1)]
    rows, cols = sym(0), sym(1)
    within = _le(cols, rows, n) if lower else _le(rows, cols, n)
    p, q = dim(r - 2), dim(r - 1)
    held = _le(q, p, n) if lower else _le(p, q, n)
    return (_matrix_map(dims, r, rows, cols, square, [within]),
            _matrix_map(dims, r, rows, cols, square, [held]))


@rule(OUTPUT_TO_INPUT, "cholesky", semantics=True)
def _cholesky_out(instr: HloInstruction, output_index: int, *, assume_finite: bool = False
                  ) -> list[list[IndexingMap]]:
    return _cholesky(instr, assume_finite, backward=True)


@rule(INPUT_TO_OUTPUT, "cholesky", semantics=True)
def _cholesky_in(instr: HloInstruction, operand_index: int, *, assume_finite: bool = False
                 ) -> list[list[IndexingMap]]:
    return _cholesky(instr, assume_finite, backward=False)


def _cholesky(instr: HloInstruction, assume_finite: bool, backward: bool
              ) -> list[list[IndexingMap]]:
    """A cholesky's maps, output-to-input (``backward``) or input-to-output: under the
    ``reads`` semantics the triangle's, under ``finite`` the factorisation's."""
    dims, lower = _cholesky_dims(instr), _lower(instr)
    if not assume_finite:
        return [[cholesky_triangle_maps(dims, lower)[0 if backward else 1]]]
    return [(cholesky_operand_maps if backward else cholesky_output_maps)(dims, lower)]


@opacity("cholesky")
def _cholesky_opacity(instr: HloInstruction) -> str | None:
    return "cholesky: the other triangle of the output is implementation-defined"


# --- triangular-solve -----------------------------------------------------------------------


@dataclass(frozen=True)
class Solve:
    """A triangular solve as ``N y = c`` on the *position* axis: for ``left_side`` the rows
    of ``x`` (``N = op(a)``), otherwise its columns (``N = op(a)^T``, ``y = x^T``).

    ``swap``: ``N[p][q]`` is ``a[q][p]`` (else ``a[p][q]``). ``lower``: ``N`` is lower
    triangular, so position ``t`` reads positions ``<= t`` (else ``>= t``)."""

    left: bool
    swap: bool
    lower: bool
    unit: bool


def _solve(instr: HloInstruction) -> tuple[Solve, Dims]:
    require(len(instr.operands) == 2, instr, "expected a and b")
    a, b = _matrix_dims(instr, 0), operand_dims(instr, 1)
    require(output_dims(instr) == b and len(b) == len(a) and a[:-2] == b[:-2], instr,
            "a, b and the output do not fit")
    flags = {}
    for key in ("left_side", "lower", "unit_diagonal"):
        value = (instr.attr_str(key) or "false").lower()
        require(value in ("true", "false"), instr, f"{key}={value}")
        flags[key] = value == "true"
    transpose = instr.attr_str("transpose_a") or "NO_TRANSPOSE"
    require(transpose in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"), instr,
            f"transpose_a={transpose}")
    left = flags["left_side"]
    require(a[-1] == (b[-2] if left else b[-1]), instr, "a does not fit b")
    swap = (transpose != "NO_TRANSPOSE") != (not left)
    return Solve(left, swap, flags["lower"] != swap, flags["unit_diagonal"]), b


def _reach(s: Solve, position: Expr, t: Expr, n: int) -> Constraint:
    """``t`` is a position that ``position`` reads: ``t <= position`` for a lower ``N``
    (positions in ``[0, n - 1]``)."""
    return _le(t, position, n) if s.lower else _le(position, t, n)


def solve_operand_maps(s: Solve, b: Sequence[int]) -> tuple[list[IndexingMap],
                                                           list[IndexingMap]]:
    """Output index -> the elements of ``a`` and of ``b`` it reads."""
    r = len(b)
    row, col = dim(r - 2), dim(r - 1)
    position, size = (row, b[-2]) if s.left else (col, b[-1])

    def a_element(p: Expr, q: Expr) -> tuple[Expr, Expr]:
        return (q, p) if s.swap else (p, q)

    rhs = _matrix_map(b, r, *((sym(0), col) if s.left else (row, sym(0))), [(0, size - 1)],
                      [_reach(s, position, sym(0), size)])
    # strict triangle N[p][q]: q < p <= position (lower), position <= p < q (upper)
    strict = [_reach(s, position, sym(0), size),
              (sym(0) - sym(1), Interval(1, size) if s.lower else Interval(-size, -1))]
    maps = [_matrix_map(b, r, *a_element(sym(0), sym(1)), [(0, size - 1)] * 2, strict)]
    if not s.unit:
        maps.append(_matrix_map(b, r, *a_element(sym(0), sym(0)), [(0, size - 1)],
                                [_reach(s, position, sym(0), size)]))
    return maps, [rhs]


def solve_output_maps(s: Solve, a: Sequence[int], b: Sequence[int], operand: int
                      ) -> list[IndexingMap]:
    """Element of ``a`` (operand 0) or of ``b`` (operand 1) -> the outputs that read it."""
    r = len(b)
    size, other = (b[-2], b[-1]) if s.left else (b[-1], b[-2])

    def output(position: Expr, free: Expr) -> tuple[Expr, Expr]:
        return (position, free) if s.left else (free, position)

    ranges = [(0, size - 1), (0, other - 1)]
    if operand == 1:  # b[t, j] (left) or b[i, t] (right): outputs at positions reading t
        t, free = (dim(r - 2), dim(r - 1)) if s.left else (dim(r - 1), dim(r - 2))
        return [_matrix_map(b, r, *output(sym(0), free), ranges[:1],
                            [_reach(s, sym(0), t, size)])]
    u, v = dim(r - 2), dim(r - 1)
    p, q = (v, u) if s.swap else (u, v)
    maps = [_matrix_map(a, r, *output(sym(0), sym(1)), ranges,
                        [_reach(s, sym(0), p, size),
                         (p - q, Interval(1, size) if s.lower else Interval(-size, -1))])]
    if not s.unit:
        maps.append(_matrix_map(a, r, *output(sym(0), sym(1)), ranges,
                                [_reach(s, sym(0), p, size), (p - q, Interval(0, 0))]))
    return maps


@rule(OUTPUT_TO_INPUT, "triangular-solve")
def _solve_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    s, b = _solve(instr)
    a_maps, b_maps = solve_operand_maps(s, b)
    return [a_maps, b_maps]


@rule(INPUT_TO_OUTPUT, "triangular-solve")
def _solve_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    s, b = _solve(instr)
    return [solve_output_maps(s, operand_dims(instr, 0), b, operand_index)]


# --- ragged-dot -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RaggedDot:
    """A ragged dot's dims. ``group``: the rhs group dim (ragged lhs free dim), else None.
    ``leading``: the output starts with a group dim (ragged contracting dim)."""

    lhs: Dims
    rhs: Dims
    lhs_batch: tuple[int, ...]
    rhs_batch: tuple[int, ...]
    lhs_contracting: tuple[int, ...]
    rhs_contracting: tuple[int, ...]
    group: int | None
    groups: int
    leading: bool

    def free(self, side: int) -> list[int]:
        dims, batch, contracting = ((self.lhs, self.lhs_batch, self.lhs_contracting)
                                    if side == 0 else
                                    (self.rhs, self.rhs_batch, self.rhs_contracting))
        return [i for i in range(len(dims))
                if i not in batch and i not in contracting and (side == 0 or i != self.group)]

    @property
    def out(self) -> Dims:
        lead = (self.groups,) if self.leading else ()
        return lead + tuple(self.lhs[i] for i in self.lhs_batch) \
            + tuple(self.lhs[i] for i in self.free(0)) + tuple(self.rhs[i] for i in self.free(1))


def ragged_dot(instr: HloInstruction) -> RaggedDot:
    require(len(instr.operands) == 3, instr, "expected lhs, rhs, group_sizes")
    dn = attribute(instr.dot_dimension_numbers, instr, "dot dimension numbers")
    ragged = attribute(instr.attr_int_list("lhs_ragged_dims"), instr, "lhs_ragged_dims")
    group = instr.attr_int_list("rhs_group_dims") or ()
    lhs, rhs, sizes = operand_dims(instr, 0), operand_dims(instr, 1), operand_dims(instr, 2)
    require(len(ragged) == 1 and len(group) <= 1 and len(sizes) >= 1, instr,
            "expected one ragged dim, at most one group dim")
    g = sizes[-1]
    leading = ragged[0] in dn.lhs_contracting_dims
    free_ragged = ragged[0] not in dn.lhs_contracting_dims + dn.lhs_batch_dims
    require(free_ragged == bool(group) and (not group or rhs[group[0]] == g), instr,
            "a ragged lhs free dim needs an rhs group dim of the group count")
    rd = RaggedDot(lhs, rhs, dn.lhs_batch_dims, dn.rhs_batch_dims, dn.lhs_contracting_dims,
                   dn.rhs_contracting_dims, group[0] if group else None, g, leading)
    pairs = [(rd.lhs_batch, rd.rhs_batch), (rd.lhs_contracting, rd.rhs_contracting)]
    require(all(len(a) == len(b) and all(lhs[i] == rhs[j] for i, j in zip(a, b, strict=True))
                for a, b in pairs) and rd.out == output_dims(instr), instr,
            "the dimension numbers do not fit the shapes")
    return rd


def ragged_operand_maps(rd: RaggedDot) -> tuple[IndexingMap, IndexingMap]:
    """Output index -> lhs and rhs elements: a dot, the group dim any group."""
    first = 1 if rd.leading else 0
    nb, lfree, rfree = len(rd.lhs_batch), rd.free(0), rd.free(1)
    ranges = [(0, rd.lhs[i] - 1) for i in rd.lhs_contracting]

    def side(dims: Dims, batch: Sequence[int], contracting: Sequence[int], free: list[int],
             first_free: int, group: int | None) -> IndexingMap:
        """The operand's index; its ``group`` dim (if any) a last range variable."""
        results: list[Expr] = [Integer(0)] * len(dims)
        for t, i in enumerate(batch):
            results[i] = dim(first + t)
        for k, i in enumerate(contracting):
            results[i] = sym(k)
        for f, i in enumerate(free):
            results[i] = dim(first_free + f)
        if group is None:
            return IndexingMap.create(rd.out, results, ranges)
        results[group] = sym(len(ranges))
        return IndexingMap.create(rd.out, results, ranges + [(0, rd.groups - 1)])

    lhs = side(rd.lhs, rd.lhs_batch, rd.lhs_contracting, lfree, first + nb, None)
    rhs = side(rd.rhs, rd.rhs_batch, rd.rhs_contracting, rfree, first + nb + len(lfree),
               rd.group)
    return lhs, rhs


def ragged_output_map(rd: RaggedDot, operand: int) -> IndexingMap:
    """lhs or rhs index -> output index: batch and own free dims kept, the other side's
    free dims (and the leading group dim) any value."""
    dims, batch = (rd.lhs, rd.lhs_batch) if operand == 0 else (rd.rhs, rd.rhs_batch)
    ranges: list[tuple[int, int]] = []

    def any_of(size: int) -> Expr:
        ranges.append((0, size - 1))
        return sym(len(ranges) - 1)

    results: list[Expr] = [any_of(rd.groups)] if rd.leading else []
    results += [dim(i) for i in batch]
    for side in (0, 1):
        source = rd.lhs if side == 0 else rd.rhs
        results += [dim(i) if side == operand else any_of(source[i]) for i in rd.free(side)]
    return IndexingMap.create(dims, results, ranges)


@rule(OUTPUT_TO_INPUT, "ragged-dot")
def _ragged_dot_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    rd = ragged_dot(instr)
    lhs, rhs = ragged_operand_maps(rd)
    return [[lhs], [rhs], [every_element(rd.out, operand_dims(instr, 2))]]


@rule(INPUT_TO_OUTPUT, "ragged-dot")
def _ragged_dot_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    rd = ragged_dot(instr)
    if operand_index == 2:
        return [[every_element(operand_dims(instr, 2), rd.out)]]
    return [[ragged_output_map(rd, operand_index)]]


@opacity("ragged-dot")
def _ragged_dot_opacity(instr: HloInstruction) -> str | None:
    return "ragged-dot: the groups depend on group_sizes at run time"
