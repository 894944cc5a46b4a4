"""Shape rules of ops that call computations (call, fusion, while, scan, conditional) and
of tokens, device ids and dimension sizes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from symidx.hlo.facts import branch_attributes
from symidx.hlo.infer.common import (
    _TOKEN,
    _array,
    _called,
    _count,
    _expect_scalar,
    _expect_token,
    _fail,
    _in_range,
    _infers,
    _is_pred_scalar,
    _operand_shape,
    _param_shapes,
    _plain,
    _root_shape,
    _scalar,
    _single_dimension,
    braced,
    compatible,
    operand_array,
    shape_text,
)
from symidx.hlo.shape import Shape, ShapeLike, TupleShape

if TYPE_CHECKING:
    from symidx.hlo.ir import HloComputation, HloInstruction


# --------------------------------------------------------------------------- control flow

def _check_parameters(instr: HloInstruction, key: str, comp: HloComputation,
                      args: Sequence[ShapeLike]) -> None:
    """``comp`` (named by ``key=``) takes exactly ``args``."""
    params = _param_shapes(comp)
    if len(params) != len(args):
        raise _fail(instr, f"{key}=%{comp.name} takes {_count(len(params), 'parameter')}, but "
                           f"is given {len(args)}", key)
    for k, (param, arg) in enumerate(zip(params, args, strict=True)):
        if not compatible(param, arg):
            raise _fail(instr, f"{key}=%{comp.name}: parameter {k} is {shape_text(param)}, "
                               f"but is given {shape_text(arg)}", key)


@_infers("call")
def _call(instr: HloInstruction) -> ShapeLike:
    comp = _called(instr, "to_apply")
    _check_parameters(instr, "to_apply", comp, [o.shape for o in instr.operands])
    return _plain(_root_shape(comp))


@_infers("fusion")
def _fusion(instr: HloInstruction) -> ShapeLike:
    comp = _called(instr, "calls")
    params = _param_shapes(comp)
    if len(params) > len(instr.operands):
        raise _fail(instr, f"calls=%{comp.name} takes {_count(len(params), 'parameter')}, but "
                           f"the fusion has {_count(len(instr.operands), 'operand')}", "calls")
    for k, param in enumerate(params):
        arg = _operand_shape(instr, k)
        if not compatible(param, arg):
            raise _fail(instr, f"calls=%{comp.name}: parameter {k} is {shape_text(param)}, but "
                               f"operand {k} is {shape_text(arg)}", "calls")
    return _plain(_root_shape(comp))


@_infers("while")
def _while(instr: HloInstruction) -> ShapeLike:
    init = _operand_shape(instr, 0)
    condition, body = _called(instr, "condition"), _called(instr, "body")
    _check_parameters(instr, "condition", condition, [init])
    _check_parameters(instr, "body", body, [init])
    result = _root_shape(condition)
    if not _is_pred_scalar(result):
        raise _fail(instr, f"condition=%{condition.name} must return pred[], but returns "
                           f"{shape_text(result)}", "condition")
    if not compatible(_root_shape(body), init):
        raise _fail(instr, f"body=%{body.name} returns {shape_text(_root_shape(body))}, but the "
                           f"loop state is {shape_text(init)}", "body")
    return _plain(init)


@_infers("scan")
def _scan(instr: HloInstruction) -> ShapeLike:
    """XLA's ``kScan``: ``scan(inputs.., inits..), dimensions={a}, num_carries=C,
    to_apply=body``. The body takes one slice of each input (dimension ``a`` removed) and
    the carries (shaped as the inits), and returns one slice of each output and the next
    carries; the result is the outputs (dimension ``a``, the inputs' length, put back) and
    the final carries. A single result may be written as an array or a 1-tuple."""
    dims = instr.dimensions
    if dims is None or len(dims) != 1:
        raise _fail(instr, f"dimensions={braced(dims or ())} must name one dimension",
                    "dimensions" if dims is not None else None)
    axis = dims[0]
    carries = instr.attr_int("num_carries")
    if carries is None:
        raise _fail(instr, "is missing attribute num_carries=")
    if not 0 <= carries <= len(instr.operands):
        raise _fail(instr, f"num_carries={carries} must be between 0 and the "
                           f"{_count(len(instr.operands), 'operand')}", "num_carries")
    for flag in ("is_reverse", "is_associative"):
        value = instr.attr_str(flag)
        if value is not None and value.lower() not in ("true", "false"):
            raise _fail(instr, f"{flag}={value} must be true or false", flag)
    body = _called(instr, "to_apply")
    n_in = len(instr.operands) - carries
    inputs = [operand_array(instr, k) for k in range(n_in)]
    inits = [_operand_shape(instr, k) for k in range(n_in, len(instr.operands))]
    for k, x in enumerate(inputs):
        if not 0 <= axis < x.rank:
            raise _fail(instr, f"dimensions={{{axis}}} is not a dimension of input {k} "
                               f"{shape_text(x)}", "dimensions")
    lengths = sorted({x.dims[axis] for x in inputs})
    if len(lengths) > 1:
        raise _fail(instr, f"the inputs disagree on the length of dimension {axis}: "
                           f"{', '.join(map(str, lengths))}", "dimensions")
    slices = [Shape(x.element_type, x.dims[:axis] + x.dims[axis + 1:]) for x in inputs]
    _check_parameters(instr, "to_apply", body, [*slices, *inits])
    root = _root_shape(body)
    results = list(root.elements) if isinstance(root, TupleShape) else [root]
    if len(results) < carries:
        raise _fail(instr, f"to_apply=%{body.name} returns {_count(len(results), 'result')}, "
                           f"fewer than num_carries={carries}", "to_apply")
    n_out = len(results) - carries
    for k, (final, init) in enumerate(zip(results[n_out:], inits, strict=True)):
        if not compatible(final, init):
            raise _fail(instr, f"to_apply=%{body.name} returns carry {k} as "
                               f"{shape_text(final)}, but its init is {shape_text(init)}",
                        "to_apply")
    outputs = []
    for k, y in enumerate(results[:n_out]):
        if not isinstance(y, Shape) or not 0 <= axis <= y.rank:
            raise _fail(instr, f"to_apply=%{body.name} returns output {k} as "
                               f"{shape_text(y)}, which cannot take dimension {axis}",
                        "to_apply")
        length = lengths[0] if lengths else _declared_length(instr, k, axis)
        outputs.append(Shape(y.element_type, y.dims[:axis] + (length,) + y.dims[axis:]))
    shapes = [*outputs, *(_plain(s) for s in results[n_out:])]
    if len(shapes) == 1 and not isinstance(instr.shape, TupleShape):
        return shapes[0]
    return TupleShape(tuple(shapes))


def _declared_length(instr: HloInstruction, k: int, axis: int) -> int:
    """A scan without inputs: the length of output ``k``'s scanned dimension, as written
    (nothing else says how many steps it takes)."""
    declared = instr.shape
    shapes = declared.elements if isinstance(declared, TupleShape) else (declared,)
    output = shapes[k] if k < len(shapes) else None
    if isinstance(output, Shape) and axis < output.rank:
        return output.dims[axis]
    raise _fail(instr, "the length of the scanned dimension cannot be inferred without "
                       "inputs; write the shape")


def _branches(instr: HloInstruction) -> list[tuple[str, HloComputation]]:
    """The branch computations of a conditional, each with the attribute naming it."""
    keys = branch_attributes(instr)
    if keys == ("branch_computations",):
        return [(keys[0], comp) for comp in instr.called_computations[keys[0]]]
    if keys:
        return [(key, _called(instr, key)) for key in keys]
    raise _fail(instr, "is missing branch_computations= (or true_computation= and "
                       "false_computation=)")


@_infers("conditional")
def _conditional(instr: HloInstruction) -> ShapeLike:
    branches = _branches(instr)
    selector = _expect_scalar(instr, 0, "the branch selector")
    if selector.element_type == "pred" and len(branches) != 2:
        raise _fail(instr, f"a pred selector needs 2 branches, but there are {len(branches)}",
                    branches[0][0] if branches else None)
    if selector.element_type not in ("pred", "s32"):
        raise _fail(instr, f"the branch selector must be pred[] or s32[], but is "
                           f"{shape_text(selector)}")
    if not branches or len(instr.operands) != len(branches) + 1:
        raise _fail(instr, f"takes {len(branches) + 1} operands (the selector and one per "
                           f"branch), but has {len(instr.operands)}")
    first = _root_shape(branches[0][1])
    for j, (key, branch) in enumerate(branches):
        _check_parameters(instr, key, branch, [instr.operands[j + 1].shape])
        if not compatible(_root_shape(branch), first):
            raise _fail(instr, f"branch {j} (%{branch.name}) returns "
                               f"{shape_text(_root_shape(branch))}, but branch 0 returns "
                               f"{shape_text(first)}", key)
    return _plain(first)


# --------------------------------------------------------------------------- tokens, ids

@_infers("after-all", "outfeed", "send-done")
def _token(instr: HloInstruction) -> ShapeLike:
    if instr.opcode == "outfeed":
        _expect_token(instr, 1)
    return _TOKEN


@_infers("add-dependency")
def _add_dependency(instr: HloInstruction) -> ShapeLike:
    _expect_token(instr, 1)
    return _plain(_operand_shape(instr, 0))


@_infers("partition-id", "replica-id")
def _device_id(instr: HloInstruction) -> ShapeLike:
    return _scalar("u32")


@_infers("rng-get-and-update-state")
def _rng_state(instr: HloInstruction) -> ShapeLike:
    return _array("u64", [2])


@_infers("get-dimension-size")
def _get_dimension_size(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    _in_range(instr, "dimensions", (_single_dimension(instr),), operand.rank, operand)
    return _scalar("s32")


@_infers("set-dimension-size")
def _set_dimension_size(instr: HloInstruction) -> ShapeLike:
    operand = operand_array(instr, 0)
    axis = _single_dimension(instr)
    _in_range(instr, "dimensions", (axis,), operand.rank, operand)
    size = _expect_scalar(instr, 1, "the size")
    if size.element_type != "s32":
        raise _fail(instr, f"the size must be s32[], but is {shape_text(size)}")
    return _array(operand.element_type, operand.dims,
                  [d == axis or dyn for d, dyn in enumerate(operand.dynamic)])
