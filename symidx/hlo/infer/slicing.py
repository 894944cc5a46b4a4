"""Shape rules of ops with start indices: dynamic-slice, dynamic-update-slice, gather
and scatter."""

from __future__ import annotations

from typing import TYPE_CHECKING

from symidx.hlo.infer.common import (
    _INTEGRAL,
    _array,
    _fail,
    _in_range,
    _infers,
    _list,
    _plain,
    _sorted,
    _tuple_or_single,
    _unique,
    braced,
    operand_array,
    same_dims,
    same_element_type,
    shape_text,
)
from symidx.hlo.infer.reduction import _check_reducer
from symidx.hlo.shape import UNBOUNDED_SIZE, Shape, ShapeLike

if TYPE_CHECKING:
    from symidx.hlo.ir import HloInstruction


# --------------------------------------------------------------------------- slicing

def _start_indices(instr: HloInstruction, first: int, rank: int) -> None:
    """Check the start indices from operand ``first`` on: ``rank`` integral scalars, or (an
    older form) one integral vector of ``rank`` elements."""
    shapes = [operand_array(instr, k) for k in range(first, len(instr.operands))]
    if len(shapes) == 1 and shapes[0].rank == 1:
        if shapes[0].dims[0] != rank or shapes[0].element_type not in _INTEGRAL:
            raise _fail(instr, f"the start indices {shape_text(shapes[0])} must be {rank} "
                               f"integers")
        return
    if len(shapes) != rank:
        raise _fail(instr, f"needs {rank} start indices (one per operand dimension), but has "
                           f"{len(shapes)}")
    for shape in shapes:
        if shape.rank != 0 or shape.element_type not in _INTEGRAL \
                or shape.element_type != shapes[0].element_type:
            raise _fail(instr, f"start indices must be integral scalars of one type, but are "
                               f"{', '.join(shape_text(s) for s in shapes)}")


@_infers("dynamic-slice")
def _dynamic_slice(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    _start_indices(instr, 1, operand.rank)
    sizes = _list(instr, "dynamic_slice_sizes")
    if len(sizes) != operand.rank:
        raise _fail(instr, f"dynamic_slice_sizes={braced(sizes)} must have one size per "
                           f"dimension of {shape_text(operand)}", "dynamic_slice_sizes")
    for size, bound in zip(sizes, operand.dims, strict=True):
        if size < 0 or (bound != UNBOUNDED_SIZE and size > bound):
            raise _fail(instr, f"dynamic_slice_sizes={braced(sizes)} does not fit in "
                               f"{shape_text(operand)}", "dynamic_slice_sizes")
    return _array(operand.element_type, sizes)


@_infers("dynamic-update-slice")
def _dynamic_update_slice(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    update = operand_array(instr, 1, "the update")
    _start_indices(instr, 2, operand.rank)
    if update.rank != operand.rank or not same_element_type(update.element_type,
                                                            operand.element_type) or any(
            u > o for u, o in zip(update.dims, operand.dims, strict=True)
            if UNBOUNDED_SIZE not in (u, o)):
        raise _fail(instr, f"the update {shape_text(update)} does not fit in the operand "
                           f"{shape_text(operand)}")
    dynamic = [o or (u and us == os) for o, u, us, os in
               zip(operand.dynamic, update.dynamic, update.dims, operand.dims, strict=True)]
    return _array(operand.element_type, operand.dims, dynamic)


def _expanded_indices(instr: HloInstruction, indices: Shape, index_vector_dim: int
                      ) -> list[int]:
    """The indices' dimensions, with a trailing 1 when ``index_vector_dim`` is the rank."""
    if indices.element_type not in _INTEGRAL:
        raise _fail(instr, f"the indices {shape_text(indices)} must be integral")
    if not 0 <= index_vector_dim <= indices.rank:
        raise _fail(instr, f"index_vector_dim={index_vector_dim} must be in [0, "
                           f"{indices.rank}] for indices {shape_text(indices)}",
                    "index_vector_dim")
    dims = list(indices.dims)
    if index_vector_dim == indices.rank:
        dims.append(1)
    return dims


@_infers("gather")
def _gather(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    indices = operand_array(instr, 1, "the indices")
    g = instr.gather_dimension_numbers
    assert g is not None
    expanded = _expanded_indices(instr, indices, g.index_vector_dim)
    out_rank = len(g.offset_dims) + len(expanded) - 1
    _sorted(instr, "offset_dims", g.offset_dims)
    _unique(instr, "offset_dims", g.offset_dims)
    _in_range(instr, "offset_dims", g.offset_dims, out_rank, "the output")
    if len(g.start_index_map) != expanded[g.index_vector_dim]:
        raise _fail(instr, f"start_index_map={braced(g.start_index_map)} has "
                           f"{len(g.start_index_map)} entries, but the index vectors of "
                           f"{shape_text(indices)} have {expanded[g.index_vector_dim]}",
                    "start_index_map")
    for key, dims in (("start_index_map", g.start_index_map),
                      ("collapsed_slice_dims", g.collapsed_slice_dims),
                      ("operand_batching_dims", g.operand_batching_dims)):
        _in_range(instr, key, dims, operand.rank, operand)
        _unique(instr, key, dims)
    _sorted(instr, "collapsed_slice_dims", g.collapsed_slice_dims)
    sizes = _list(instr, "slice_sizes")
    skipped = set(g.collapsed_slice_dims) | set(g.operand_batching_dims)
    if len(sizes) != operand.rank or \
            len(g.offset_dims) + len(g.collapsed_slice_dims) + len(g.operand_batching_dims) \
            != operand.rank:
        raise _fail(instr, f"slice_sizes={braced(sizes)} must have one size per operand "
                           f"dimension ({operand.rank}), each an offset, collapsed or batching "
                           f"dimension", "slice_sizes")
    for d, (size, bound) in enumerate(zip(sizes, operand.dims, strict=True)):
        if size < 0 or (bound != UNBOUNDED_SIZE and size > bound) or \
                (d in skipped and size > 1):
            raise _fail(instr, f"slice_sizes={braced(sizes)}: size {size} of dimension {d} "
                               f"does not fit {shape_text(operand)}"
                               + (" (a collapsed or batching dimension takes at most 1)"
                                  if d in skipped else ""), "slice_sizes")
    # Output dimension i is the next offset (window) or the next batch (index) dimension.
    window = iter([(sizes[d], operand.dynamic[d] and sizes[d] == operand.dims[d])
                   for d in range(operand.rank) if d not in skipped])
    batch = iter([(n, indices.dynamic[d] if d < indices.rank else False)
                  for d, n in enumerate(expanded) if d != g.index_vector_dim])
    out = [next(window) if i in g.offset_dims else next(batch) for i in range(out_rank)]
    return _array(operand.element_type, [n for n, _ in out], [dyn for _, dyn in out])


@_infers("scatter")
def _scatter(instr: HloInstruction) -> ShapeLike:
    count = len(instr.operands)
    if count % 2 == 0:
        raise _fail(instr, f"needs 2N+1 operands (N operands, the indices, N updates), but has "
                           f"{count}")
    n = count // 2
    operands = [operand_array(instr, k) for k in range(n)]
    indices = operand_array(instr, n, "the indices")
    updates = [operand_array(instr, k) for k in range(n + 1, count)]
    s = instr.scatter_dimension_numbers
    assert s is not None
    expanded = _expanded_indices(instr, indices, s.index_vector_dim)
    scatter_sizes = [size for d, size in enumerate(expanded) if d != s.index_vector_dim]
    for operand, update in zip(operands, updates, strict=True):
        rank = len(expanded) - 1 + len(s.update_window_dims)
        if update.rank != rank:
            raise _fail(instr, f"updates {shape_text(update)} must have rank {rank}")
        _sorted(instr, "update_window_dims", s.update_window_dims)
        _unique(instr, "update_window_dims", s.update_window_dims)
        _in_range(instr, "update_window_dims", s.update_window_dims, update.rank, update)
        for key, dims in (("inserted_window_dims", s.inserted_window_dims),
                          ("input_batching_dims", s.input_batching_dims),
                          ("scatter_dims_to_operand_dims", s.scatter_dims_to_operand_dims)):
            _in_range(instr, key, dims, operand.rank, operand)
            _unique(instr, key, dims)
        _sorted(instr, "inserted_window_dims", s.inserted_window_dims)
        if len(s.update_window_dims) + len(s.inserted_window_dims) + \
                len(s.input_batching_dims) != operand.rank:
            raise _fail(instr, f"update_window_dims, inserted_window_dims and "
                               f"input_batching_dims must cover the {operand.rank} dimensions "
                               f"of {shape_text(operand)}", "update_window_dims")
        if len(s.scatter_dims_to_operand_dims) != expanded[s.index_vector_dim]:
            raise _fail(instr, f"scatter_dims_to_operand_dims has "
                               f"{len(s.scatter_dims_to_operand_dims)} entries, but the index "
                               f"vectors of {shape_text(indices)} have "
                               f"{expanded[s.index_vector_dim]}", "scatter_dims_to_operand_dims")
        skipped = set(s.inserted_window_dims) | set(s.input_batching_dims)
        window_bounds = [operand.dims[d] for d in range(operand.rank) if d not in skipped]
        for k, d in enumerate(s.update_window_dims):
            if UNBOUNDED_SIZE not in (update.dims[d], window_bounds[k]) and \
                    update.dims[d] > window_bounds[k]:
                raise _fail(instr, f"update window dimension {d} of {shape_text(update)} "
                                   f"exceeds the operand's {window_bounds[k]}")
        update_scatter = [update.dims[d] for d in range(update.rank)
                          if d not in s.update_window_dims]
        if not same_dims(update_scatter, scatter_sizes):
            raise _fail(instr, f"the scatter dimensions of the updates {shape_text(update)} "
                               f"({update_scatter}) must equal those of the indices "
                               f"{shape_text(indices)} ({scatter_sizes})")
    _check_reducer(instr, "to_apply", [o.element_type for o in operands],
                   [u.element_type for u in updates])
    return _tuple_or_single([_plain(o) for o in operands])
