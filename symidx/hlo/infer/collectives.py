"""Shape rules of collectives: all-gather, reduce-scatter, all-reduce, all-to-all,
collective-permute, and the shard count they are computed with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from symidx._text import lazy_pattern
from symidx.hlo.infer.common import (
    _array,
    _arrays,
    _fail,
    _infers,
    _operand_shape,
    _plain,
    _single_dimension,
    _tuple_or_single,
    compatible,
    operand_array,
    shape_text,
)
from symidx.hlo.shape import Shape, ShapeLike, TupleShape

if TYPE_CHECKING:
    from symidx.hlo.ir import HloInstruction


# --------------------------------------------------------------------------- collectives

_IOTA_GROUPS_RE = lazy_pattern(r"\[\s*(\d+)\s*,\s*(\d+)\s*\]\s*<=")
_GROUP_RE = lazy_pattern(r"\{([^{}]*)\}")


def _replica_group_size(instr: HloInstruction) -> int | None:
    """The size of the first group in ``replica_groups`` (``{{0,1},{2,3}}`` or the iota form
    ``[2,2]<=[4]``), or None when the attribute is absent or empty (all replicas, a number
    the instruction does not hold)."""
    raw = instr.attributes.get("replica_groups")
    if raw is None:
        return None
    iota = _IOTA_GROUPS_RE.match(raw.strip())
    if iota:
        return int(iota.group(2))
    inner = raw.strip()[1:-1] if raw.strip().startswith("{") else ""
    first = _GROUP_RE.search(inner)
    if first is None:
        return None
    return len([v for v in first.group(1).split(",") if v.strip()])


def _collective_axis(instr: HloInstruction, shapes: Sequence[Shape]) -> int:
    axis = _single_dimension(instr)
    for shape in shapes:
        if not 0 <= axis < shape.rank:
            raise _fail(instr, f"dimensions={{{axis}}} is out of range for operand "
                               f"{shape_text(shape)}", "dimensions")
    return axis


def all_gather_shape(instr: HloInstruction, shard_count: int) -> ShapeLike:
    """The output of ``all-gather``: each operand with its ``dimensions={k}`` multiplied by
    ``shard_count``."""
    shapes = _arrays(instr)
    axis = _collective_axis(instr, shapes)
    out = []
    for shape in shapes:
        dims = list(shape.dims)
        dims[axis] *= shard_count
        out.append(_array(shape.element_type, dims, shape.dynamic))
    return _tuple_or_single(out)


def reduce_scatter_shape(instr: HloInstruction, shard_count: int) -> ShapeLike:
    """The output of ``reduce-scatter``: each operand with ``dimensions={k}`` divided by
    ``shard_count`` (which must divide it)."""
    shapes = _arrays(instr)
    axis = _collective_axis(instr, shapes)
    out = []
    for shape in shapes:
        dims = list(shape.dims)
        if dims[axis] % shard_count:
            raise _fail(instr, f"dimension {axis} of {shape_text(shape)} is not divisible by "
                               f"the {shard_count} shards")
        dims[axis] //= shard_count
        out.append(_array(shape.element_type, dims, shape.dynamic))
    return _tuple_or_single(out)


def shard_count(instr: HloInstruction) -> int | None:
    """How many shards an ``all-gather`` or ``reduce-scatter`` gathers or scatters, when the
    instruction says: the size of its replica groups, unless it has a ``channel_id`` without
    ``use_global_device_ids=true`` (XLA's cross-replica-and-partition mode, where the count
    is also multiplied by the module's number of partitions). None otherwise."""
    size = _replica_group_size(instr)
    if size is None or ("channel_id" in instr.attributes
                        and instr.attributes.get("use_global_device_ids") != "true"):
        return None
    return size


def _known_shard_count(instr: HloInstruction) -> int:
    count = shard_count(instr)
    if count is None:
        raise _fail(instr, "the shard count depends on the module's replica or partition "
                           "count (replica_groups= does not give it); write the shape")
    return count


@_infers("all-gather")
def _all_gather(instr: HloInstruction) -> ShapeLike:
    return all_gather_shape(instr, _known_shard_count(instr))


@_infers("reduce-scatter")
def _reduce_scatter(instr: HloInstruction) -> ShapeLike:
    return reduce_scatter_shape(instr, _known_shard_count(instr))


@_infers("all-reduce", "collective-broadcast")
def _all_reduce(instr: HloInstruction) -> ShapeLike:
    shapes = _arrays(instr)
    if not shapes:
        raise _fail(instr, "needs at least one operand")
    return _tuple_or_single([_plain(s) for s in shapes])


@_infers("all-to-all")
def _all_to_all(instr: HloInstruction) -> ShapeLike:
    shapes = _arrays(instr)
    if not shapes:
        raise _fail(instr, "needs at least one operand")
    if "dimensions" in instr.attributes:
        if len(shapes) != 1:
            raise _fail(instr, f"with dimensions= takes 1 operand, but has {len(shapes)}")
        _collective_axis(instr, shapes)
        return _plain(shapes[0])
    for shape in shapes[1:]:
        if not compatible(shape, shapes[0]):
            raise _fail(instr, f"operands {shape_text(shapes[0])} and {shape_text(shape)} "
                               f"must have the same shape")
    return TupleShape(tuple(_plain(s) for s in shapes))


@_infers("collective-permute")
def _collective_permute(instr: HloInstruction) -> ShapeLike:
    if len(instr.operands) == 4:  # in-place form: input, output buffer, offsets
        return _plain(_operand_shape(instr, 1))
    if len(instr.operands) != 1:
        raise _fail(instr, "the shape of a combined collective-permute cannot be inferred; "
                           "write it")
    return _plain(operand_array(instr, 0))
