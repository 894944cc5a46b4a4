"""Collectives, per participant, on the local (per-device) shapes.

A collective runs on every participant of a replica group at once; its maps describe one
participant and send a local index to local indices (of the operand of some participant, or
of the output of some participant). Where *which* element is read depends on which
participant runs the map's source side, the participant's rank in its replica group is a
runtime variable with ``hlo`` text ``participant`` (no provenance map) over
``[0, group_size - 1]``: in output-to-input maps the participant owning the output element,
in input-to-output maps the participant owning the operand element. The participant on the
other side is not recorded (it follows from the index, or is every participant).

* ``all-reduce`` (variadic): output ``k`` reads operand ``k`` of every participant at the
  same index.
* ``all-gather`` (variadic) concatenates the participants' operands along ``dimensions={k}``:
  output index ``d`` along it reads local index ``d mod n`` (of participant ``d floordiv n``);
  local operand index ``x`` of participant ``p`` reaches output index ``x + p * n`` (of every
  participant).
* ``reduce-scatter`` (variadic) reduces, then participant ``p`` keeps block ``p`` of size
  ``n`` along ``dimensions={k}``: its output index ``d`` reads operand index ``d + p * n`` of
  every participant; operand index ``x`` (of any participant) reaches output index
  ``x mod n`` of participant ``x floordiv n``.
* ``all-to-all`` with ``dimensions={k}`` splits the operand into ``G`` chunks of ``c`` along
  ``k`` (``G`` the group size): participant ``p``'s output index ``d`` reads chunk ``p`` of
  participant ``d floordiv c``, local index ``p * c + d mod c``; participant ``p``'s operand
  index ``x`` reaches local index ``p * c + x mod c`` of participant ``x floordiv c``.
* ``collective-permute`` and ``collective-broadcast``: output ``k`` reads operand ``k`` at the
  same index (of the source participant, or of the root, the group's first participant).

The group size comes from ``replica_groups`` (``{{0,1},{2,3}}``, or the iota form
``[2,4]<=[8]``: 2 groups of 4), or from the shapes where they imply it (all-gather,
reduce-scatter). Empty ``replica_groups`` means every participant, whose number the
instruction does not say.

Labelled over-approximations (:func:`symidx.ops.opaque_reason` names them):

* ``all-to-all`` of several arrays (no ``dimensions``): output ``i`` of participant ``p`` is
  operand ``p`` of participant ``i``; a map cannot say "only when the participant is ``k``",
  so output ``i`` is given as reading every operand at the same index;
* ``all-to-all`` with ``dimensions`` and an unknown group size: every index along ``k``;
* ``collective-broadcast``: only the root's operand is read, but the input-to-output maps
  cannot say which participant is the root, so they apply to every participant's operand;
* ``collective-permute`` whose ``source_target_pairs`` leave a listed participant without
  a source (it outputs zeros and reads nothing): the identity maps over-approximate there;
* ``ragged-all-to-all``: the rows exchanged depend on offsets and sizes held by every
  participant at run time: an output row reads its own row of the ``output`` operand and
  every row of the input (and every offset and size);
* ``collective-reduce``: not modelled; every output element reads every operand element.
"""

from __future__ import annotations

from collections.abc import Sequence

from symidx._text import lazy_pattern
from symidx.core.expr import Mod, dim, rt, sym
from symidx.core.indexing_map import IndexingMap, RuntimeVar, ValueSource
from symidx.core.interval import Interval
from symidx.hlo import HloInstruction
from symidx.hlo.facts import num_outputs, operand_dims, output_dims
from symidx.ops._common import attribute, require
from symidx.ops.basic import every_element, identity, reaches_everything, reads_everything
from symidx.ops.registry import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, opacity, rule

#: The source of the runtime variable holding the participant's rank in its group.
PARTICIPANT = ValueSource("participant")

_IOTA_GROUPS = lazy_pattern(r"\[\s*(\d+)\s*,\s*(\d+)\s*\]\s*<=\s*\[[\d,\s]*\](?:\s*T\([\d,\s]*\))?")
_GROUP = lazy_pattern(r"\{([^{}]*)\}")
_IDS = lazy_pattern(r"-?\d+(?:,-?\d+)*")


def _id_lists(instr: HloInstruction, key: str, text: str) -> list[list[int]]:
    """``{{0,1},{2,3}}`` as lists of ids (empty inner groups dropped)."""
    require(text.startswith("{") and text.endswith("}"), instr, f"cannot read {key}={text}")
    lists = []
    for group in _GROUP.findall(text[1:-1]):
        body = group.replace(" ", "")
        if body:
            require(_IDS.fullmatch(body) is not None, instr, f"cannot read {key}={text}")
            lists.append([int(v) for v in body.split(",")])
    return lists


def group_size(instr: HloInstruction) -> int | None:
    """The size of each replica group from ``replica_groups``; None when the attribute is
    absent or empty (every participant, a number the instruction does not say)."""
    raw = instr.attributes.get("replica_groups")
    if raw is None:
        return None
    text = raw.strip()
    iota = _IOTA_GROUPS.fullmatch(text)
    if iota is not None:
        return int(iota.group(2))
    groups = _id_lists(instr, "replica_groups", text)
    if not groups:
        return None
    sizes = {len(g) for g in groups}
    require(len(sizes) == 1, instr, "replica groups of different sizes")
    return sizes.pop()


def participant(size: int) -> RuntimeVar:
    """The participant's rank in its group of ``size``."""
    return RuntimeVar(Interval(0, size - 1), PARTICIPANT)


def _one_to_one(instr: HloInstruction) -> None:
    require(num_outputs(instr) == len(instr.operands), instr,
            "expected one output per operand")


def _only(k: int, count: int, m: IndexingMap) -> list[list[IndexingMap]]:
    """Groups for ``count`` operands or outputs where only ``k`` has a map."""
    return [[m] if i == k else [] for i in range(count)]


# --- all-reduce, collective-permute, collective-broadcast: the same index ------------------


def _same_dims(instr: HloInstruction, k: int) -> tuple[int, ...]:
    _one_to_one(instr)
    dims = output_dims(instr, k)
    require(operand_dims(instr, k) == dims, instr, "operand and output differ")
    return dims


@rule(OUTPUT_TO_INPUT, "all-reduce", "collective-permute", "collective-broadcast")
def _same_index_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    return _only(output_index, len(instr.operands),
                 identity(_same_dims(instr, output_index)))


@rule(INPUT_TO_OUTPUT, "all-reduce", "collective-permute", "collective-broadcast")
def _same_index_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    return _only(operand_index, num_outputs(instr), identity(_same_dims(instr, operand_index)))


def _pairs(instr: HloInstruction) -> list[tuple[int, int]]:
    raw = instr.attributes.get("source_target_pairs", "{}").strip()
    pairs = _id_lists(instr, "source_target_pairs", raw)
    require(all(len(p) == 2 for p in pairs), instr, f"cannot read source_target_pairs={raw}")
    return [(p[0], p[1]) for p in pairs]


@opacity("collective-permute")
def _permute_opacity(instr: HloInstruction) -> str | None:
    pairs = _pairs(instr)
    listed = {p for pair in pairs for p in pair}
    if listed - {target for _, target in pairs}:
        return "collective-permute: a participant without a source outputs zeros"
    return None


@opacity("collective-broadcast")
def _broadcast_opacity(instr: HloInstruction) -> str | None:
    if group_size(instr) == 1:
        return None
    return "collective-broadcast: only the root's operand is read"


# --- all-gather -------------------------------------------------------------------------------


def all_gather_operand_map(out: Sequence[int], operand: Sequence[int], axis: int
                           ) -> IndexingMap:
    """Output index -> local operand index (of participant ``d floordiv n``)."""
    return IndexingMap.create(out, [Mod(dim(i), operand[i]) if i == axis else dim(i)
                                    for i in range(len(out))])


def all_gather_output_map(out: Sequence[int], operand: Sequence[int], axis: int
                          ) -> IndexingMap:
    """Local operand index of participant ``rt0`` -> output index (of every participant)."""
    size = out[axis] // operand[axis]
    if size == 1:
        return identity(operand)
    return IndexingMap.create(operand, [dim(i) + rt(0) * operand[i] if i == axis else dim(i)
                                        for i in range(len(out))], rts=[participant(size)])


def _concatenated_axis(instr: HloInstruction, big: Sequence[int], small: Sequence[int]
                       ) -> int:
    """The one ``dimensions=`` axis along which ``big`` is ``G`` copies of ``small``, ``G``
    agreeing with ``replica_groups`` when it says."""
    dims = attribute(instr.dimensions, instr, "dimensions")
    require(len(dims) == 1, instr, "expected one dimension")
    axis: int = dims[0]
    require(len(big) == len(small) and 0 <= axis < len(big)
            and all(a == b for i, (a, b) in enumerate(zip(big, small, strict=True))
                    if i != axis)
            and small[axis] > 0 and big[axis] % small[axis] == 0,
            instr, "the shapes are not a concatenation of blocks along dimensions=")
    size = group_size(instr)
    require(size is None or big[axis] == size * small[axis], instr,
            f"the shapes imply groups of {big[axis] // small[axis]}, replica_groups of {size}")
    return axis


@rule(OUTPUT_TO_INPUT, "all-gather")
def _all_gather_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    _one_to_one(instr)
    out, operand = output_dims(instr, output_index), operand_dims(instr, output_index)
    axis = _concatenated_axis(instr, out, operand)
    return _only(output_index, len(instr.operands), all_gather_operand_map(out, operand, axis))


@rule(INPUT_TO_OUTPUT, "all-gather")
def _all_gather_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    _one_to_one(instr)
    out, operand = output_dims(instr, operand_index), operand_dims(instr, operand_index)
    axis = _concatenated_axis(instr, out, operand)
    return _only(operand_index, num_outputs(instr), all_gather_output_map(out, operand, axis))


# --- reduce-scatter -------------------------------------------------------------------------


def reduce_scatter_operand_map(out: Sequence[int], operand: Sequence[int], axis: int
                               ) -> IndexingMap:
    """Output index of participant ``rt0`` -> operand index (of every participant):
    ``d + rt0 * n`` along the scattered axis."""
    size = operand[axis] // out[axis]
    if size == 1:
        return identity(out)
    return IndexingMap.create(out, [dim(i) + rt(0) * out[i] if i == axis else dim(i)
                                    for i in range(len(out))], rts=[participant(size)])


def reduce_scatter_output_map(out: Sequence[int], operand: Sequence[int], axis: int
                              ) -> IndexingMap:
    """Operand index (of any participant) -> output index ``x mod n`` along the scattered
    axis (of participant ``x floordiv n``)."""
    return all_gather_operand_map(operand, out, axis)


@rule(OUTPUT_TO_INPUT, "reduce-scatter")
def _reduce_scatter_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    _one_to_one(instr)
    out, operand = output_dims(instr, output_index), operand_dims(instr, output_index)
    axis = _concatenated_axis(instr, operand, out)
    return _only(output_index, len(instr.operands),
                 reduce_scatter_operand_map(out, operand, axis))


@rule(INPUT_TO_OUTPUT, "reduce-scatter")
def _reduce_scatter_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    _one_to_one(instr)
    out, operand = output_dims(instr, operand_index), operand_dims(instr, operand_index)
    axis = _concatenated_axis(instr, operand, out)
    return _only(operand_index, num_outputs(instr),
                 reduce_scatter_output_map(out, operand, axis))


# --- all-to-all -------------------------------------------------------------------------------


def all_to_all_map(dims: Sequence[int], axis: int, size: int | None) -> IndexingMap:
    """Either direction (the two are the same function): local index ``d`` of participant
    ``rt0`` -> ``rt0 * c + d mod c`` along ``axis`` (chunks of ``c = n / size``); every
    index along ``axis`` when the group size is unknown."""
    n = dims[axis]
    if size is None:
        return IndexingMap.create(dims, [sym(0) if i == axis else dim(i)
                                         for i in range(len(dims))], [(0, n - 1)])
    if size == 1:
        return identity(dims)
    c = n // size
    return IndexingMap.create(dims, [rt(0) * c + Mod(dim(i), c) if i == axis else dim(i)
                                     for i in range(len(dims))], rts=[participant(size)])


def _split_axis(instr: HloInstruction) -> tuple[int, int | None] | None:
    """The split axis and the group size of an array all-to-all; None for the form that
    exchanges several arrays (no ``dimensions=``)."""
    if instr.dimensions is None:
        return None
    require(len(instr.dimensions) == 1 and len(instr.operands) == 1, instr,
            "expected one operand and one dimension")
    dims, axis = operand_dims(instr, 0), instr.dimensions[0]
    require(output_dims(instr) == dims and 0 <= axis < len(dims), instr,
            "operand and output differ")
    size = group_size(instr)
    require(size is None or dims[axis] % size == 0, instr,
            f"dimension {axis} does not split into {size} chunks")
    return axis, size


@rule(OUTPUT_TO_INPUT, "all-to-all")
def _all_to_all_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    split = _split_axis(instr)
    if split is None:  # output i of participant p is operand p of participant i
        dims = _exchanged_dims(instr)
        return [[identity(dims)] for _ in instr.operands]
    return [[all_to_all_map(operand_dims(instr, 0), *split)]]


@rule(INPUT_TO_OUTPUT, "all-to-all")
def _all_to_all_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    split = _split_axis(instr)
    if split is None:  # operand k of participant p is output p of participant k
        dims = _exchanged_dims(instr)
        return [[identity(dims)] for _ in range(num_outputs(instr))]
    return [[all_to_all_map(operand_dims(instr, 0), *split)]]


def _exchanged_dims(instr: HloInstruction) -> tuple[int, ...]:
    _one_to_one(instr)
    dims = operand_dims(instr, 0)
    require(all(operand_dims(instr, k) == dims and output_dims(instr, k) == dims
                for k in range(len(instr.operands))), instr,
            "the exchanged arrays differ in shape")
    size = group_size(instr)
    require(size is None or size == len(instr.operands), instr,
            f"{len(instr.operands)} arrays for groups of {size}")
    return dims


@opacity("all-to-all")
def _all_to_all_opacity(instr: HloInstruction) -> str | None:
    if instr.dimensions is None:
        if len(instr.operands) == 1:
            return None
        return "all-to-all of several arrays: which operand an output reads depends on " \
               "the participant"
    if group_size(instr) is None:
        return "all-to-all: replica_groups={} does not give the group size"
    return None


# --- ragged-all-to-all --------------------------------------------------------------------


def _ragged_checks(instr: HloInstruction) -> tuple[int, ...]:
    require(len(instr.operands) == 6 and num_outputs(instr) == 1, instr,
            "expected input, output, input_offsets, send_sizes, output_offsets, recv_sizes")
    out = output_dims(instr)
    source = operand_dims(instr, 0)
    require(operand_dims(instr, 1) == out and len(source) == len(out) >= 1
            and source[1:] == out[1:], instr,
            "the input and output differ beyond the leading dimension")
    return out


def any_row_map(source: Sequence[int], rows: int) -> IndexingMap:
    """``(d0, d1, ..)[s0] -> (s0, d1, ..)``: any of ``rows`` rows, the same place in it."""
    return IndexingMap.create(source, [sym(0)] + [dim(i) for i in range(1, len(source))],
                              [(0, rows - 1)])


@rule(OUTPUT_TO_INPUT, "ragged-all-to-all")
def _ragged_out(instr: HloInstruction, output_index: int) -> list[list[IndexingMap]]:
    out = _ragged_checks(instr)
    sizes = [[every_element(out, operand_dims(instr, k))] for k in range(2, 6)]
    return [[any_row_map(out, operand_dims(instr, 0)[0])], [identity(out)]] + sizes


@rule(INPUT_TO_OUTPUT, "ragged-all-to-all")
def _ragged_in(instr: HloInstruction, operand_index: int) -> list[list[IndexingMap]]:
    out = _ragged_checks(instr)
    source = operand_dims(instr, operand_index)
    if operand_index == 0:
        return [[any_row_map(source, out[0])]]
    if operand_index == 1:
        return [[identity(out)]]
    return [[every_element(source, out)]]


@opacity("ragged-all-to-all")
def _ragged_opacity(instr: HloInstruction) -> str | None:
    return "ragged-all-to-all: the rows exchanged depend on offsets and sizes at run time"


# --- collective-reduce: not modelled ----------------------------------------------------------

rule(OUTPUT_TO_INPUT, "collective-reduce")(reads_everything)
rule(INPUT_TO_OUTPUT, "collective-reduce")(reaches_everything)


@opacity("collective-reduce")
def _collective_reduce_opacity(instr: HloInstruction) -> str | None:
    return "collective-reduce: its semantics are not modelled"
