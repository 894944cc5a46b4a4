"""Shape rules of ops that run a reducer or comparator: reduce, reduce-window,
select-and-scatter, sort and map."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from symidx.hlo.infer.common import (
    _array,
    _arrays,
    _called,
    _count,
    _expect_scalar,
    _fail,
    _in_range,
    _infers,
    _is_pred_scalar,
    _list,
    _param_shapes,
    _plain,
    _root_shape,
    _scalar,
    _single_dimension,
    _tuple_or_single,
    _unique,
    _with_type,
    compatible,
    operand_array,
    same_dims,
    same_element_type,
    shape_text,
)
from symidx.hlo.infer.linalg import _window_shape
from symidx.hlo.shape import Shape, ShapeLike, TupleShape

if TYPE_CHECKING:
    from symidx.hlo.ir import HloInstruction


# --------------------------------------------------------------------------- reductions

def _check_reducer(instr: HloInstruction, key: str, init_types: Sequence[str],
                   input_types: Sequence[str]) -> tuple[list[str], bool]:
    """Check that ``key=`` names a reducer for ``len(input_types)`` inputs: parameters
    (accumulators..., elements...), scalar (or tuple of scalars) result compatible with the
    init values and inputs. Returns the result's element types, and whether the result is a
    tuple (a reduction then gives a tuple, even of one element)."""
    comp = _called(instr, key)
    n = len(input_types)
    params = _param_shapes(comp)
    name = f"{key}=%{comp.name}"
    if len(params) != 2 * n:
        raise _fail(instr, f"{name} takes {_count(len(params), 'parameter')}, but needs {2 * n} "
                           f"(an accumulator and an element per input)", key)
    root = _root_shape(comp)
    results = root.elements if isinstance(root, TupleShape) else (root,)
    if len(results) != n or not all(isinstance(r, Shape) and r.rank == 0 for r in results):
        wanted = "a scalar" if n == 1 else f"a tuple of {n} scalars"
        raise _fail(instr, f"{name} must return {wanted}, but returns {shape_text(root)}", key)
    types = []
    for i, result in enumerate(results):
        assert isinstance(result, Shape)
        t = result.element_type
        for shape, role in ((params[i], f"parameter {i}"), (params[n + i], f"parameter {n + i}")):
            if not isinstance(shape, Shape) or shape.rank != 0 or \
                    not same_element_type(shape.element_type, t):
                raise _fail(instr, f"{name}: {role} is {shape_text(shape)}, but the result "
                                   f"is {t}[]", key)
        for actual, role in ((init_types[i], "init value"), (input_types[i], "input")):
            if not same_element_type(actual, t):
                raise _fail(instr, f"{name} reduces {t}, but {role} {i} has element type "
                                   f"{actual}", key)
        types.append(t)
    return types, isinstance(root, TupleShape)


def _inputs_and_inits(instr: HloInstruction) -> tuple[list[Shape], list[Shape]]:
    shapes = _arrays(instr)
    if not shapes or len(shapes) % 2:
        raise _fail(instr, f"needs an even number of operands (inputs, then init values), but "
                           f"has {len(shapes)}")
    n = len(shapes) // 2
    inputs, inits = shapes[:n], shapes[n:]
    for shape in inputs[1:]:
        if not same_dims(shape.dims, inputs[0].dims):
            raise _fail(instr, f"inputs {shape_text(inputs[0])} and {shape_text(shape)} must "
                               f"have the same dimensions")
    for k, shape in enumerate(inits):
        if shape.rank != 0:
            raise _fail(instr, f"init value {k} must be a scalar, but is {shape_text(shape)}")
    return inputs, inits


@_infers("reduce")
def _reduce(instr: HloInstruction) -> ShapeLike:
    inputs, inits = _inputs_and_inits(instr)
    dims = _list(instr, "dimensions")
    first = inputs[0]
    _in_range(instr, "dimensions", dims, first.rank, first)
    _unique(instr, "dimensions", dims)
    types, as_tuple = _check_reducer(instr, "to_apply", [s.element_type for s in inits],
                                     [s.element_type for s in inputs])
    kept = [d for d in range(first.rank) if d not in dims]
    sizes, dynamic = [first.dims[d] for d in kept], [first.dynamic[d] for d in kept]
    outputs = tuple(_array(t, sizes, dynamic) for t in types)
    return TupleShape(outputs) if as_tuple else outputs[0]


@_infers("reduce-window")
def _reduce_window(instr: HloInstruction) -> ShapeLike:
    inputs, inits = _inputs_and_inits(instr)
    _, as_tuple = _check_reducer(instr, "to_apply", [s.element_type for s in inits],
                                 [s.element_type for s in inputs])
    outputs = tuple(_window_shape(instr, shape.dims, init.element_type, shape.dynamic, shape)
                    for shape, init in zip(inputs, inits, strict=True))
    return TupleShape(outputs) if as_tuple else outputs[0]


@_infers("select-and-scatter")
def _select_and_scatter(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    source = operand_array(instr, 1, "the source")
    init = _expect_scalar(instr, 2, "the init value")
    select = _called(instr, "select")
    params, root = _param_shapes(select), _root_shape(select)
    if len(params) != 2 or not _is_pred_scalar(root):
        raise _fail(instr, f"select=%{select.name} must take 2 parameters and return pred[], "
                           f"but takes {len(params)} and returns {shape_text(root)}", "select")
    for k, param in enumerate(params):
        if not compatible(param, _scalar(operand.element_type)):
            raise _fail(instr, f"select=%{select.name}: parameter {k} is {shape_text(param)}, "
                               f"but the operand's elements are {operand.element_type}[]",
                        "select")
    _check_reducer(instr, "scatter", [init.element_type], [source.element_type])
    windows = _window_shape(instr, operand.dims, operand.element_type, operand.dynamic,
                            operand)
    if not same_dims(source.dims, windows.dims):
        raise _fail(instr, f"the source {shape_text(source)} must have one element per window "
                           f"position: {shape_text(_with_type(windows, source.element_type))}")
    return _plain(operand)


# --------------------------------------------------------------------------- other ops

@_infers("sort")
def _sort(instr: HloInstruction) -> ShapeLike:
    shapes = _arrays(instr)
    if not shapes:
        raise _fail(instr, "needs at least one operand")
    for shape in shapes[1:]:
        if not same_dims(shape.dims, shapes[0].dims):
            raise _fail(instr, f"keys {shape_text(shapes[0])} and values {shape_text(shape)} "
                               f"must have the same dimensions")
    axis = _single_dimension(instr)
    if axis >= shapes[0].rank:
        raise _fail(instr, f"dimensions={{{axis}}} is out of range for rank {shapes[0].rank}",
                    "dimensions")
    comparator = _called(instr, "to_apply")
    params, root = _param_shapes(comparator), _root_shape(comparator)
    if not _is_pred_scalar(root):
        raise _fail(instr, f"to_apply=%{comparator.name} must return pred[], but returns "
                           f"{shape_text(root)}", "to_apply")
    if len(params) != 2 * len(shapes):
        raise _fail(instr, f"to_apply=%{comparator.name} takes "
                           f"{_count(len(params), 'parameter')}, but "
                           f"needs {2 * len(shapes)} (two per operand)", "to_apply")
    for k, param in enumerate(params):
        if not compatible(param, _scalar(shapes[k // 2].element_type)):
            raise _fail(instr, f"to_apply=%{comparator.name}: parameter {k} is "
                               f"{shape_text(param)}, but operand {k // 2} has elements "
                               f"{shapes[k // 2].element_type}[]", "to_apply")
    return _tuple_or_single([_plain(s) for s in shapes])


@_infers("map")
def _map(instr: HloInstruction) -> ShapeLike:
    shapes = _arrays(instr)
    if not shapes:
        raise _fail(instr, "needs at least one operand")
    full = max(shapes, key=lambda s: s.rank)
    for shape in shapes:
        if not same_dims(shape.dims, full.dims) and shape.rank != 0:
            raise _fail(instr, f"operands {shape_text(full)} and {shape_text(shape)} must have "
                               f"the same dimensions")
    comp = _called(instr, "to_apply")
    params, root = _param_shapes(comp), _root_shape(comp)
    if len(params) != len(shapes):
        raise _fail(instr, f"to_apply=%{comp.name} takes {_count(len(params), 'parameter')}, "
                           f"but map has {_count(len(shapes), 'operand')}", "to_apply")
    if not isinstance(root, Shape) or root.rank != 0:
        raise _fail(instr, f"to_apply=%{comp.name} must return a scalar, but returns "
                           f"{shape_text(root)}", "to_apply")
    for k, (param, shape) in enumerate(zip(params, shapes, strict=True)):
        if not compatible(param, _scalar(shape.element_type)):
            raise _fail(instr, f"to_apply=%{comp.name}: parameter {k} is {shape_text(param)}, "
                               f"but operand {k} has elements {shape.element_type}[]",
                        "to_apply")
    return _array(root.element_type, full.dims, full.dynamic)
