"""``scan``: a loop over one dimension of its inputs, with carries (XLA's ``kScan``).

``scan(x_0, .., x_{n-1}, init_0, .., init_{C-1}), dimensions={a}, num_carries=C,
is_reverse=.., to_apply=body`` runs ``body`` once per position of dimension ``a`` (length
``N``), in increasing order of position (decreasing when ``is_reverse=true``). Step ``t``
passes the body the slices of the inputs at its position (dimension ``a`` removed) and the
carries, which start as the inits; the body returns ``(y_0, .., y_{m-1}, c_0, .., c_{C-1})``
(a single array when there is one result): each ``y_o`` is stored at that position of output
``o`` (dimension ``a`` inserted), the ``c`` become the next carries. The scan's result is
``(outputs.., final carries..)``. These facts are XLA's ``ScanExpander`` (how it lowers a
scan to a while loop) and the operand and result order of ``HloScanInstruction``.

**The exact maps.** Over one step, each body result reads each body parameter either not at
all, at the same index (the identity: same shape), or every element -- call these kinds
none < identity < all. Composing two reads is none if either is none and otherwise the
larger kind; a union of reads is the larger kind. Those rules are exact (for non-empty
arrays), so the reads of a whole scan follow from the ``(C x C)`` carry-to-carry kinds by
walking the steps: output position ``p`` reads input ``j`` at the position ``l`` steps back
(forward in a reversed scan) with the kind of the paths of ``l - 1`` carry steps between
them, and init ``c`` with the kind of the paths of exactly ``t`` carry steps (``t`` the step
of ``p``). The steps with each kind form a set that is written as a few arithmetic
progressions (a carry that alternates between two slots is read every other step): one map
per progression, with the lag as a constraint ``d - s in [lo, hi]`` (and ``mod``).

When the body's reads are not of those three kinds (a slice of a per-step array, a
dynamic index), when an array is empty, or when the steps do not form a few progressions,
the rule keeps the sound over-approximation -- every output element reads every operand
element -- labelled with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product

from sympy import Integer

from symidx.core.expr import Expr, Mod, dim, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.indexing_map.direction import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT
from symidx.core.interval import Interval
from symidx.core.simplify.finish import finish
from symidx.fusion.reached import Reached
from symidx.hlo import HloComputation, HloInstruction
from symidx.hlo.facts import Dims, array_dims, attribute, check_index, num_outputs, require
from symidx.hlo.leaves import leaves
from symidx.ops.basic import reaches_everything, reads_everything

__all__ = ["NONE", "SAME", "ALL", "Progression", "progressions", "ScanParts", "scan_parts",
           "read_kind", "body_kinds", "ScanReads", "scan_reads", "BodyReads",
           "scan_output_to_input", "scan_input_to_output", "over_approximation"]

#: How one array reads another over a step: not at all, at the same index, every element.
NONE, SAME, ALL = 0, 1, 2

#: The most progressions one set of steps may take before the rule gives up on exactness.
MAX_PROGRESSIONS = 8
#: The largest step tried when writing a set of steps as progressions.
MAX_STEP = 8
#: Body maps no structural test classifies are enumerated up to this many pairs.
MAX_ENUMERATED_PAIRS = 1 << 14


def compose(first: int, second: int) -> int:
    """The kind of a read made of two reads (none stays none; otherwise the larger)."""
    return NONE if NONE in (first, second) else max(first, second)


# --- progressions ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Progression:
    """The integers ``lo, lo + step, .., hi`` (``hi - lo`` a multiple of ``step``)."""

    lo: int
    hi: int
    step: int = 1

    def values(self) -> range:
        return range(self.lo, self.hi + 1, self.step)


def _runs(values: Sequence[int], step: int) -> list[Progression]:
    """``values`` (sorted, distinct) as maximal progressions of one step."""
    found: list[Progression] = []
    for residue in range(step):
        run: list[int] = []
        for v in (v for v in values if v % step == residue):
            if run and v != run[-1] + step:
                found.append(Progression(run[0], run[-1], step if len(run) > 1 else 1))
                run = []
            run.append(v)
        if run:
            found.append(Progression(run[0], run[-1], step if len(run) > 1 else 1))
    return found


def progressions(values: Sequence[int]) -> list[Progression] | None:
    """The sorted distinct ``values`` as the fewest progressions of one step (at most
    :data:`MAX_STEP`), or None when that takes more than :data:`MAX_PROGRESSIONS`."""
    if not values:
        return []
    best = min((_runs(values, step) for step in range(1, MAX_STEP + 1)), key=len)
    return best if len(best) <= MAX_PROGRESSIONS else None


# --- the instruction ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ScanParts:
    """A scan's attributes and shapes, checked against each other and its body."""

    axis: int
    length: int | None  # N; None when no input or output has the scanned dimension
    inputs: tuple[Dims, ...]
    inits: tuple[Dims, ...]
    outputs: tuple[Dims, ...]  # the stacked outputs (with the scanned dimension)
    reverse: bool
    body: HloComputation

    def slice_of(self, dims: Dims) -> Dims:
        """``dims`` without the scanned dimension (what one step sees)."""
        return dims[:self.axis] + dims[self.axis + 1:]

    def full(self, inner: int) -> int:
        """The dimension of a stacked array holding inner dimension ``inner`` of a step."""
        return inner if inner < self.axis else inner + 1


def _flag(instr: HloInstruction, key: str) -> bool:
    value = (instr.attr_str(key) or "false").lower()
    require(value in ("true", "false"), instr, f"{key}={value}")
    return value == "true"


def scan_parts(instr: HloInstruction) -> ScanParts:
    """The checked parts of ``instr``; :class:`HloShapeError` when they do not fit."""
    dims = attribute(instr.dimensions, instr, "dimensions")
    require(len(dims) == 1, instr, f"dimensions={list(dims)} must name one dimension")
    carries = attribute(instr.attr_int("num_carries"), instr, "num_carries")
    require(0 <= carries <= len(instr.operands), instr,
            f"num_carries={carries} with {len(instr.operands)} operand(s)")
    called = instr.called_computations.get("to_apply", ())
    require(len(called) == 1, instr, "needs one to_apply= computation")
    body = called[0]
    operands = [array_dims(op.shape, f"operand {k} of {instr.name}")
                for k, op in enumerate(instr.operands)]
    n_in = len(operands) - carries
    results = [s.dims for s in leaves(instr.shape)]
    require(len(results) >= carries, instr, f"{len(results)} result(s), {carries} carries")
    n_out = len(results) - carries
    inputs, inits = tuple(operands[:n_in]), tuple(operands[n_in:])
    outputs = tuple(results[:n_out])
    axis = dims[0]
    require(all(0 <= axis < len(d) for d in inputs + outputs), instr,
            f"dimensions={{{axis}}} is not a dimension of every input and output")
    lengths = {d[axis] for d in inputs + outputs}
    require(len(lengths) <= 1, instr, f"inputs and outputs disagree on the length of "
                                      f"dimension {axis}: {sorted(lengths)}")
    require(tuple(results[n_out:]) == inits, instr, "the final carries' shapes differ from "
                                                    "the inits'")
    parts = ScanParts(axis, lengths.pop() if lengths else None, inputs, inits, outputs,
                      _flag(instr, "is_reverse"), body)
    _check_body(instr, parts)
    return parts


def _check_body(instr: HloInstruction, parts: ScanParts) -> None:
    """The body takes (input slices.., carries..) and returns (outputs' slices.., carries..)."""
    params = [array_dims(p.shape, f"parameter {k} of {parts.body.name}")
              for k, p in enumerate(parts.body.parameters)]
    want = [parts.slice_of(d) for d in parts.inputs] + list(parts.inits)
    require(params == want, instr, f"{parts.body.name} takes {params}, expected {want}")
    got = [s.dims for s in leaves(parts.body.root.shape)]
    want = [parts.slice_of(d) for d in parts.outputs] + list(parts.inits)
    require(got == want, instr, f"{parts.body.name} returns {got}, expected {want}")


# --- the body's reads -----------------------------------------------------------------------
def _is_same(m: IndexingMap, source: Dims, target: Dims) -> bool:
    """``m`` is the identity on the whole of ``source`` (= ``target``)."""
    return (source == target and not m.ranges and not m.rts and not m.constraints
            and m.results == tuple(dim(i) for i in range(len(source)))
            and m.dims == tuple(Interval(0, n - 1) for n in source))


def _is_all(m: IndexingMap, source: Dims, target: Dims) -> bool:
    """``m`` sends every index of ``source`` to every element of ``target``."""
    return (not m.rts and not m.constraints
            and m.dims == tuple(Interval(0, n - 1) for n in source)
            and m.results == tuple(sym(i) for i in range(len(target)))
            and m.ranges == tuple(Interval(0, n - 1) for n in target))


def _enumerated_kind(maps: Sequence[IndexingMap], source: Dims, target: Dims) -> int | None:
    """The kind of the union of ``maps`` found by enumerating its pairs (small arrays)."""
    boxes = [list(product(*(range(n) for n in d))) for d in (source, target)]
    if len(boxes[0]) * len(boxes[1]) > MAX_ENUMERATED_PAIRS or any(m.rts for m in maps):
        return None
    inside = set(boxes[1])
    pairs = {(o, i) for o in boxes[0] for m in maps for i in m.image(o) if i in inside}
    if not pairs:
        return NONE
    if len(pairs) == len(boxes[0]) * len(boxes[1]):
        return ALL
    if source == target and pairs == {(o, o) for o in boxes[0]}:
        return SAME
    return None


def read_kind(maps: Sequence[IndexingMap], source: Dims, target: Dims) -> int | None:
    """The kind of the reads the union of ``maps`` (``source`` index -> ``target``
    elements) makes, or None when it is none of the three."""
    live = [m for m in maps if not m.is_known_empty]
    if any(m.is_undefined for m in live):
        return None
    if not live:
        return NONE
    if any(_is_all(m, source, target) for m in live):
        return ALL
    if all(_is_same(m, source, target) for m in live):
        return SAME
    return _enumerated_kind(live, source, target)


#: What the analysis of a called computation gives: from root leaf ``output`` of ``comp``
#: to each (parameter number, leaf) it reads (:meth:`symidx.fusion.steps.Callee.parameters_of`).
BodyReads = Callable[[HloComputation, int], Mapping[tuple[int, int], Reached]]


def body_kinds(parts: ScanParts, body_reads: BodyReads) -> list[list[int]] | str:
    """Per body result, per body parameter: the kind of read over one step; or why the
    body's reads are not all of the three kinds."""
    params = [parts.slice_of(d) for d in parts.inputs] + list(parts.inits)
    results = [parts.slice_of(d) for d in parts.outputs] + list(parts.inits)
    kinds: list[list[int]] = []
    for r, result in enumerate(results):
        row = []
        found = body_reads(parts.body, r)
        for p in range(len(params)):
            reached = found.get((p, 0), Reached())
            why = reached.unsupported or reached.opaque
            if why is not None:
                return f"scan: its body {parts.body.name} reads through {why}"
            kind = read_kind(reached.maps, result, params[p])
            if kind is None:
                return (f"scan: result {r} of its body {parts.body.name} reads part of "
                        f"parameter {p}")
            row.append(kind)
        kinds.append(row)
    return kinds


# --- the recurrence -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ScanReads:
    """What one result of a scan reads, by kind.

    For a stacked output: ``lags[j][kind]`` are the lags ``l`` (position ``p`` reads input
    ``j`` at ``p - l``, ``p + l`` reversed) and ``steps[c][kind]`` the steps ``t`` (the
    positions ``t``, ``N - 1 - t`` reversed) at which init ``c`` is read. For a final
    carry: ``lags[j][kind]`` are the positions of input ``j`` read, and ``steps[c][kind]``
    is ``[0]`` when init ``c`` is read with that kind."""

    lags: list[dict[int, list[int]]]
    steps: list[dict[int, list[int]]]


def _advance(row: Sequence[int], carry_kinds: Sequence[Sequence[int]]) -> list[int]:
    """The kinds of the reads of the carries one step earlier: ``row`` (kinds of the reads
    of each carry) composed with the body's carry-to-carry kinds."""
    count = len(row)
    return [max((compose(row[c], carry_kinds[c][c2]) for c in range(count)), default=NONE)
            for c2 in range(count)]


def _input_kinds(row: Sequence[int], carry_reads: Sequence[Sequence[int]], n_in: int
                 ) -> list[int]:
    """The kinds of the reads of each step input through carries read with ``row``."""
    return [max((compose(row[c], carry_reads[c][j]) for c in range(len(row))), default=NONE)
            for j in range(n_in)]


def scan_reads(parts: ScanParts, kinds: Sequence[Sequence[int]], result: int) -> ScanReads:
    """What result ``result`` of the scan reads (see :class:`ScanReads`)."""
    n_in, n_out, carries = len(parts.inputs), len(parts.outputs), len(parts.inits)
    length = parts.length or 0
    carry_rows = [kinds[n_out + c] for c in range(carries)]
    to_carry = [row[n_in:] for row in carry_rows]  # carry result -> carry parameter
    to_input = [row[:n_in] for row in carry_rows]  # carry result -> input parameter
    lags: list[dict[int, list[int]]] = [{SAME: [], ALL: []} for _ in range(n_in)]
    steps: list[dict[int, list[int]]] = [{SAME: [], ALL: []} for _ in range(carries)]
    if result < n_out:
        direct = kinds[result]
        for j in range(n_in):
            if direct[j] != NONE and length > 0:
                lags[j][direct[j]].append(0)
        row = list(direct[n_in:])  # the kinds of the reads of the carries at step t
        for lag in range(length):
            for c in range(carries):
                if row[c] != NONE:
                    steps[c][row[c]].append(lag)
            if lag + 1 < length:
                for j, kind in enumerate(_input_kinds(row, to_input, n_in)):
                    if kind != NONE:
                        lags[j][kind].append(lag + 1)
            row = _advance(row, to_carry)
        return ScanReads(lags, steps)
    row = [SAME if c == result - n_out else NONE for c in range(carries)]
    for back in range(1, length + 1):  # the final carry reads step N - back
        for j, kind in enumerate(_input_kinds(row, to_input, n_in)):
            if kind != NONE:
                lags[j][kind].append(back - 1 if parts.reverse else length - back)
        row = _advance(row, to_carry)
    for c in range(carries):
        if row[c] != NONE:
            steps[c][row[c]].append(0)
    return ScanReads([{k: sorted(v) for k, v in d.items()} for d in lags], steps)


# --- pieces of a relation, as maps ----------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Piece:
    """A set of (output index, operand index) pairs: ``equal`` output and operand
    dimensions hold the same value; ``link = (out, operand, sign, lags)`` relates two
    dimensions by ``sign * (out - operand)`` in ``lags``; ``out_at`` / ``operand_at``
    restrict one dimension to a progression; every other dimension is free."""

    equal: tuple[tuple[int, int], ...] = ()
    link: tuple[int, int, int, Progression] | None = None
    out_at: tuple[int, Progression] | None = None
    operand_at: tuple[int, Progression] | None = None


def _multiple(expr: Expr, p: Progression) -> list[tuple[Expr, Interval]]:
    """``expr`` in ``p``: its bounds, and a ``mod`` constraint for a step above 1."""
    found = [(expr, Interval(p.lo, p.hi))]
    if p.step > 1:
        found.append((Mod(expr - p.lo, p.step), Interval(0, 0)))
    return found


def piece_map(piece: Piece, out: Dims, operand: Dims, direction: str) -> IndexingMap:
    """The map of ``piece`` from output indices to operand elements (output-to-input) or
    from operand indices to output elements (input-to-output)."""
    backward = direction == OUTPUT_TO_INPUT
    source, target = (out, operand) if backward else (operand, out)
    # (source dim, target dim) pairs, and the restrictions, as seen from the source
    equal = {(o, i) if backward else (i, o) for o, i in piece.equal}
    source_at, target_at = (piece.out_at, piece.operand_at) if backward \
        else (piece.operand_at, piece.out_at)
    results: list[Expr] = []
    ranges: list[Interval] = []
    constraints: list[tuple[Expr, Interval]] = []
    link_dims = None
    if piece.link is not None:
        o, i, sign, lags = piece.link
        link_dims = (o, i) if backward else (i, o)
    for y, size in enumerate(target):
        match = [x for x, t in equal if t == y]
        if match:
            results.append(dim(match[0]))
        elif link_dims is not None and link_dims[1] == y and lags.lo == lags.hi:
            # target = source - sign * lag (output to input), source + sign * lag (inverse)
            shift = sign * lags.lo
            expr = dim(link_dims[0]) - shift if backward else dim(link_dims[0]) + shift
            results.append(expr)
            constraints.append((expr, Interval(0, size - 1)))
        else:
            window = Interval(0, size - 1)
            if target_at is not None and target_at[0] == y:
                window = Interval(max(0, target_at[1].lo), min(size - 1, target_at[1].hi))
                if target_at[1].step > 1:
                    constraints.append((Mod(sym(len(ranges)) - target_at[1].lo,
                                            target_at[1].step), Interval(0, 0)))
            results.append(sym(len(ranges)))
            ranges.append(window)
    if link_dims is not None and lags.lo != lags.hi:
        x, y = link_dims
        source_value, target_value = dim(x), results[y]
        out_value, in_value = (source_value, target_value) if backward \
            else (target_value, source_value)
        constraints += _multiple(sign * (out_value - in_value), lags)
    if source_at is not None:
        constraints += _multiple(dim(source_at[0]), source_at[1])
    if any(w.lo > w.hi for w in ranges):
        return IndexingMap.create(source, [Integer(0)] * len(target)).as_known_empty()
    return IndexingMap.create(source, results, ranges, constraints=constraints)


def _same_pairs(out_inner: Sequence[int], operand_inner: Sequence[int]
                ) -> tuple[tuple[int, int], ...]:
    return tuple(zip(out_inner, operand_inner, strict=True))


def pieces(parts: ScanParts, reads: ScanReads, result: int, operand: int
           ) -> list[Piece] | None:
    """The pieces of what result ``result`` reads of operand ``operand``; None when a set of
    steps takes too many progressions."""
    n_in, n_out = len(parts.inputs), len(parts.outputs)
    stacked = result < n_out
    axis = parts.axis
    out_rank = len(parts.outputs[result]) if stacked else len(parts.inits[result - n_out])
    inner_out = [parts.full(i) for i in range(out_rank - 1)] if stacked \
        else list(range(out_rank))
    found: list[Piece] = []
    if operand < n_in:
        inner_in = [parts.full(i) for i in range(len(parts.inputs[operand]) - 1)]
        for kind, values in reads.lags[operand].items():
            progs = progressions(values)
            if progs is None:
                return None
            equal = _same_pairs(inner_out, inner_in) if kind == SAME else ()
            for p in progs:
                if stacked:
                    sign = -1 if parts.reverse else 1
                    found.append(Piece(equal, link=(axis, axis, sign, p)))
                else:
                    found.append(Piece(equal, operand_at=(axis, p)))
        return found
    c = operand - n_in
    inner_init = list(range(len(parts.inits[c])))
    length = parts.length or 0
    for kind, values in reads.steps[c].items():
        equal = _same_pairs(inner_out, inner_init) if kind == SAME else ()
        if not stacked:
            found += [Piece(equal)] if values else []
            continue
        positions = sorted(length - 1 - t for t in values) if parts.reverse else values
        progs = progressions(positions)
        if progs is None:
            return None
        found += [Piece(equal, out_at=(axis, p)) for p in progs]
    return found


# --- the rules ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Exact:
    parts: ScanParts
    kinds: list[list[int]]


def _analysis(instr: HloInstruction, body_reads: BodyReads) -> _Exact | str:
    """The parts and body kinds of an exactly analysable scan, or why it is not."""
    parts = scan_parts(instr)
    if parts.length is None and parts.inits:
        return "scan: no input or output gives the number of steps"
    arrays = [parts.slice_of(d) for d in parts.inputs + parts.outputs] + list(parts.inits)
    if any(0 in d for d in arrays):
        return "scan: an empty per-step array"
    kinds = body_kinds(parts, body_reads)
    if isinstance(kinds, str):
        return kinds
    for r in range(len(parts.outputs) + len(parts.inits)):
        reads = scan_reads(parts, kinds, r)
        if any(pieces(parts, reads, r, k) is None for k in range(len(instr.operands))):
            return "scan: the steps read through the carries are irregular"
    return _Exact(parts, kinds)


def _result_dims(parts: ScanParts, result: int) -> Dims:
    n_out = len(parts.outputs)
    return parts.outputs[result] if result < n_out else parts.inits[result - n_out]


def _maps(exact: _Exact, result: int, operand: int, direction: str) -> list[IndexingMap]:
    parts = exact.parts
    reads = scan_reads(parts, exact.kinds, result)
    found = pieces(parts, reads, result, operand)
    assert found is not None  # _analysis checked every piece
    out = _result_dims(parts, result)
    operand_dims = (parts.inputs + parts.inits)[operand]
    maps = [finish(piece_map(p, out, operand_dims, direction)) for p in found]
    if maps:
        return maps
    source, target = (out, operand_dims) if direction == OUTPUT_TO_INPUT \
        else (operand_dims, out)
    return [IndexingMap.create(source, [Integer(0)] * len(target)).as_known_empty()]


def over_approximation(instr: HloInstruction, body_reads: BodyReads) -> str | None:
    """Why the maps of the scan ``instr`` over-approximate (every element), or None when
    they are exact. A malformed scan raises its error."""
    exact = _analysis(instr, body_reads)
    return exact if isinstance(exact, str) else None


def scan_output_to_input(instr: HloInstruction, output_index: int, body_reads: BodyReads
                         ) -> tuple[list[list[IndexingMap]], str | None]:
    """For output ``output_index`` of the scan ``instr``: per operand, the maps from an
    output index to the operand elements it reads; and why they over-approximate (every
    element), or None when they are exact."""
    check_index(output_index, num_outputs(instr), instr.name, "output")
    exact = _analysis(instr, body_reads)
    if isinstance(exact, str):
        return reads_everything(instr, output_index), exact
    return [_maps(exact, output_index, k, OUTPUT_TO_INPUT)
            for k in range(len(instr.operands))], None


def scan_input_to_output(instr: HloInstruction, operand_index: int, body_reads: BodyReads
                         ) -> tuple[list[list[IndexingMap]], str | None]:
    """For operand ``operand_index`` of the scan ``instr``: per output, the maps from an
    operand index to the output elements that read it; and why they over-approximate, or
    None when they are exact."""
    check_index(operand_index, len(instr.operands), instr.name, "operand")
    exact = _analysis(instr, body_reads)
    if isinstance(exact, str):
        return reaches_everything(instr, operand_index), exact
    results = len(exact.parts.outputs) + len(exact.parts.inits)
    return [_maps(exact, r, operand_index, INPUT_TO_OUTPUT) for r in range(results)], None
