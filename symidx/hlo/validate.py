"""Validation of a parsed HLO module, as XLA's HLO verifier checks one.

:func:`~symidx.hlo.parse_hlo` calls :func:`validate_module` on every module it builds (unless
``validate=False``). Each instruction is checked for:

* its operand count, for the opcodes of fixed arity (:data:`~symidx.hlo.infer.ARITY`);
* its attributes: only those its opcode takes (:func:`check_attributes`, from the table
  :mod:`symidx.hlo.attribute_table`; checked without ``validate`` too, as XLA's parser
  checks them);
* its declared shape against the shape :func:`~symidx.hlo.infer.infer_shape` gives it, and
  the attributes and called computations that inference reads (permutations, broadcast and
  reduce dimensions, slice bounds, windows, gather/scatter dimension numbers, parameters of
  fused, called, mapped, reducing, loop and branch computations, tuple indices);
* for the opcodes whose output the operands do not determine, what XLA still requires:
  ``broadcast`` maps operand dimensions onto output dimensions of the same size, ``reshape``
  keeps the element count, ``convert`` the dimensions, ``bitcast-convert`` the bits, ``iota``
  has an ``iota_dimension`` inside its rank, collectives gather or scatter whole shards.

Shapes are compared as XLA compares them when it verifies without layouts: layouts and the
dynamic flags of bounded dimensions (``<=N``) are ignored, the bounds are compared, an
unbounded dimension (``?``) matches any size, and floating-point element types may differ in
precision (XLA's ``allow_mixed_precision``). ``dot`` and ``convolution`` may declare any
element type (``preferred_element_type``), ``convert`` and friends any target type.

:func:`~symidx.hlo.parse_hlo` checks each kind of instruction once (``validate_module(module,
parsed=True)``): an instruction alike to one that passed -- in all that the checks read --
passes too; the first that fails is still found, with its own message.

What XLA accepts must pass, so anything this module cannot judge is let through:
``custom-call``, unknown opcodes, asynchronous wrappers, sparse dots, ``rng``, send/receive,
infeed, and shapes that depend on module-wide settings (a collective without
``replica_groups`` is checked against the shard count its own shapes imply).

A failure raises :class:`~symidx.errors.HloValidationError` (a
:class:`~symidx.errors.ParseError`) located at the instruction, or at the attribute at fault::

    f.hlo:line 4, column 3: transpose %t: dimensions={1,0} of f32[2,3] give f32[3,2], but
    the instruction says f32[2,3]
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from operator import itemgetter
from typing import TYPE_CHECKING

from symidx._arith import ceil_div
from symidx.errors import HloValidationError
from symidx.hlo.attribute_table import COMMON, TAKES, own_attributes, unexpected_attribute
from symidx.hlo.facts import branch_attributes
from symidx.hlo.infer import (
    ARITY,
    InferenceError,
    all_gather_shape,
    bitcast_convert_shape,
    braced,
    check_arity,
    compatible,
    has_rule,
    infer_shape,
    operand_array,
    reduce_scatter_shape,
    same_dims,
    same_element_type,
    shape_text,
    shard_count,
)
from symidx.hlo.infer import instruction_error as _fail
from symidx.hlo.instructions import CALLING_ATTRIBUTES
from symidx.hlo.shape import UNBOUNDED_SIZE, Shape, ShapeLike, TupleShape

if TYPE_CHECKING:
    from symidx.hlo.ir import HloComputation, HloInstruction, HloModule

__all__ = ["check_attributes", "check_operand_counts", "located", "validate_instruction",
           "validate_module", "violations"]


def validate_module(module: HloModule, *, parsed: bool = False) -> None:
    """Check every instruction of every computation of ``module`` (in text order; one pass,
    linear in the module's size). Raises :class:`~symidx.errors.HloValidationError` at the
    first instruction XLA's verifier would reject.

    ``parsed``: the module is as :func:`~symidx.hlo.parse_hlo` built it, every typed field
    read from its attribute's text. Then an instruction alike to one checked before passes
    without being checked again: alike is the same opcode, the same shape objects (its own
    and its operands'), the same attributes (the values of those no check reads aside:
    :data:`_UNREAD_VALUES`) and called computations with the same parameter and root shape
    objects (all a check reads of them). The checks read nothing else, so it passes as that
    one did. A large module repeats a few thousand kinds of instructions in tens of
    thousands. An instruction that fails is never alike to one that passed: the first is
    still found, and fails with its own message. An instruction without attributes whose
    check reads nothing else (a parameter, a constant...) is not compared at all: it
    passes."""
    if not parsed:
        for computation in module.computations.values():
            for instr in computation.instructions:
                validate_instruction(instr)
        return
    passed: set[tuple[object, ...]] = set()
    # The values compared of an instruction's attributes, by the names of its attributes.
    compared: dict[tuple[str, ...], Callable[[dict[str, str]], object]] = {}
    for computation in module.computations.values():
        for instr in computation.instructions:
            attributes = instr.attributes
            if not attributes and instr.opcode in _ATTRIBUTES_ONLY:
                continue  # (nothing to check: every parameter(N) and most constants)
            operands = instr.operands
            count = len(operands)
            if count == 2:  # (the commonest counts without a comprehension)
                first, second = operands
                shapes: tuple[int, ...] = (id(first.shape), id(second.shape))
            elif count == 1:
                shapes = (id(operands[0].shape),)
            elif count == 0:
                shapes = ()
            else:
                shapes = tuple([id(o.shape) for o in operands])
            if not attributes:  # (then nothing is called either; a key of three items)
                key: tuple[object, ...] = (instr.opcode, id(instr.shape), shapes)
            else:
                names = tuple(attributes)
                values = compared.get(names)
                if values is None:
                    values = compared[names] = _compared_values(names)
                key = (instr.opcode, id(instr.shape), shapes, names, values(attributes))
                called = instr.called_computations
                if called:
                    key += tuple([(k, *map(_interface, comps)) for k, comps in called.items()])
            if key not in passed:
                validate_instruction(instr)
                passed.add(key)


#: Attributes whose values no check reads (the checks read their presence only, through the
#: keys): left out of :func:`validate_module`'s comparison of instructions. They are the ones
#: most often different on every instruction. (A called computation's name is left out too:
#: its parameter and root shapes stand for it.)
_UNREAD_VALUES = frozenset({"metadata", "backend_config", "frontend_attributes", "sharding",
                            "statistics_viz", "origin", "channel_id"})


def _compared_values(names: tuple[str, ...]) -> Callable[[dict[str, str]], object]:
    """What :func:`validate_module` compares of attributes with these ``names``: the values
    of those a check reads, all but :data:`_UNREAD_VALUES` and those naming computations.
    (Those are the keys of ``called_computations`` in a module as
    :func:`~symidx.hlo.parse_hlo` builds it; their interfaces are compared instead.)"""
    read = [name for name in names if name not in _UNREAD_VALUES
            and name not in CALLING_ATTRIBUTES]
    return itemgetter(*read) if read else _nothing


def _nothing(attributes: dict[str, str]) -> None:
    return None


def _interface(computation: HloComputation) -> tuple[int, ...]:
    """What a check reads of a called computation: its parameters' shapes, in order, and
    its root's (as object identities, for :func:`validate_module`)."""
    return (id(computation.root.shape), *[id(p.shape) for p in computation.parameters])


def check_operand_counts(module: HloModule) -> None:
    """What XLA's parser itself checks beyond syntax: each opcode of fixed arity has that
    many operands (``add(p0)`` is refused), and carries only attributes the opcode takes
    (``add(p0, p1), dimensions={0}`` is refused: :func:`check_attributes`). Raises a
    located :class:`~symidx.errors.HloValidationError` at the first that does not."""
    arity = ARITY.get
    for computation in module.computations.values():
        for instr in computation.instructions:
            check_attributes(instr)
            expected = arity(instr.opcode)  # check_arity's own test first: it is most often met
            if expected is None or len(instr.operands) == expected:
                continue
            try:
                check_arity(instr)
            except InferenceError as err:
                raise _located(instr, str(err), err.attribute) from None


def check_attributes(instr: HloInstruction) -> None:
    """Raise a :class:`~symidx.errors.HloValidationError` at the first attribute of
    ``instr`` its opcode does not take, as XLA's parser refuses it (the table is
    :mod:`symidx.hlo.attribute_table`; an opcode it does not know is let through)."""
    if not instr.attributes:
        return
    bad = unexpected_attribute(instr.opcode, instr.attributes)
    if bad is None:
        return
    own = sorted(own_attributes(instr.opcode))
    takes = f"takes {', '.join(own)}" if own else "takes no attribute of its own"
    raise _located(instr, f"{instr.opcode} %{instr.name}: unexpected attribute {bad}= "
                          f"({instr.opcode} {takes}, besides those every instruction may "
                          f"carry: {', '.join(sorted(COMMON))})", bad)


def violations(module: HloModule) -> list[HloValidationError]:
    """Every instruction of ``module`` XLA's verifier would reject, each with its located
    error, in text order (:func:`validate_module` stops at the first)."""
    found = []
    for computation in module.computations.values():
        for instr in computation.instructions:
            try:
                validate_instruction(instr)
            except HloValidationError as e:
                found.append(e)
    return found


def validate_instruction(instr: HloInstruction) -> None:
    """Check one instruction as :func:`validate_module` does (operand count, declared shape
    against the inferred one, attributes, called computations); raises
    :class:`~symidx.errors.HloValidationError` located at it."""
    try:
        _check(instr)
    except InferenceError as err:
        raise _located(instr, str(err), err.attribute) from None


def located(instr: HloInstruction, message: str, attribute: str | None = None
            ) -> HloValidationError:
    """An error about ``instr`` at its line and column (or at ``attribute``'s)."""
    return _located(instr, message, attribute)


def _located(instr: HloInstruction, message: str, attribute: str | None) -> HloValidationError:
    document = instr.document
    text, source = (document.text, document.source) if document is not None else ("", "")
    return HloValidationError(message, text, instr.offset_of(attribute), source=source)


def _check(instr: HloInstruction) -> None:
    check_attributes(instr)
    special = _CHECKS.get(instr.opcode)
    if special is not None:
        special(instr)
    elif has_rule(instr.opcode):
        _compare(instr, infer_shape(instr))  # infer_shape checks the operand count first
    else:
        check_arity(instr)


# --------------------------------------------------------------------------- comparison

#: The attributes that shape each opcode's output, quoted in mismatch messages.
_SHAPING_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("transpose", "reverse", "reduce", "concatenate", "sort", "all-to-all",
                     "get-dimension-size", "set-dimension-size"), ("dimensions",)),
    **dict.fromkeys(("all-gather", "reduce-scatter"),
                    ("dimensions", "replica_groups")),
    "slice": ("slice",),
    "pad": ("padding",),
    "dynamic-slice": ("dynamic_slice_sizes",),
    "get-tuple-element": ("index",),
    "dot": ("lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims", "rhs_contracting_dims"),
    "convolution": ("window", "dim_labels", "feature_group_count", "batch_group_count"),
    **dict.fromkeys(("reduce-window", "select-and-scatter"), ("window",)),
    "gather": ("offset_dims", "collapsed_slice_dims", "start_index_map", "index_vector_dim",
               "slice_sizes", "operand_batching_dims", "start_indices_batching_dims"),
    "fft": ("fft_type", "fft_length"),
    "scan": ("dimensions", "num_carries"),
    "topk": ("k",),
    **dict.fromkeys(("batch-norm-training", "batch-norm-inference", "batch-norm-grad"),
                    ("feature_index",)),
}
#: Opcodes whose output is the root of a called computation, by the attribute naming it.
_ROOT_SHAPED = {"fusion": "calls", "call": "to_apply", "while": "body"}
_MAX_LISTED_OPERANDS = 6


def _basis(instr: HloInstruction) -> tuple[str, bool]:
    """What the inferred shape comes from, for a message, and whether that is plural:
    ``dimensions={1,0} of f32[2,3]``, ``operands f32[2], f32[2]``, ``the root of %c``."""
    key = _ROOT_SHAPED.get(instr.opcode)
    if key is None and instr.opcode == "conditional":
        key = next(iter(branch_attributes(instr)), None)
    if key is not None and instr.called_computations.get(key):
        return f"the root of %{instr.called_computations[key][0].name}", False
    shapes = [shape_text(o.shape) for o in instr.operands[:_MAX_LISTED_OPERANDS]]
    if len(instr.operands) > _MAX_LISTED_OPERANDS:
        shapes.append("...")
    operands = ", ".join(shapes)
    attributes = [f"{k}={instr.attributes[k]}" for k in _SHAPING_ATTRIBUTES.get(instr.opcode, ())
                  if k in instr.attributes]
    if attributes:
        return f"{', '.join(attributes)} of {operands}", True
    if len(instr.operands) == 1:
        return f"operand {operands}", False
    return f"operands {operands}", True


def _compare(instr: HloInstruction, inferred: ShapeLike, *, dims_only: bool = False,
             basis: str | None = None) -> None:
    """Raise unless the declared shape is ``inferred`` (up to layout, dynamic flags and
    floating-point precision; up to element type with ``dims_only``). ``basis`` (singular)
    says where ``inferred`` comes from, if not from the operands and shaping attributes."""
    declared = instr.shape
    if not compatible(declared, inferred, ignore_element_type=dims_only):
        text, plural = _basis(instr) if basis is None else (basis, False)
        raise _fail(instr, f"{text} {'give' if plural else 'gives'} "
                           f"{_shown(inferred, dims_only)}, but the instruction says "
                           f"{shape_text(declared)}"
                    + (" (the element type may differ, the dimensions may not)"
                       if dims_only else ""))


def _shown(shape: ShapeLike, dims_only: bool) -> str:
    if dims_only and isinstance(shape, Shape):
        return "[" + ",".join(str(d) for d in shape.dims) + "]"
    return shape_text(shape)


def _declared_array(instr: HloInstruction) -> Shape:
    shape = instr.shape
    if not isinstance(shape, Shape) or shape.element_type == "token":
        raise _fail(instr, f"must have an array shape, but the instruction says "
                           f"{shape_text(shape)}")
    return shape


# --------------------------------------------------------------------------- special checks

_Check = Callable[["HloInstruction"], None]
_CHECKS: dict[str, _Check] = {}


def _checks(*opcodes: str) -> Callable[[_Check], _Check]:
    def register(fn: _Check) -> _Check:
        for opcode in opcodes:
            if opcode in _CHECKS:
                raise RuntimeError(f"two verifier checks for {opcode}: "
                                   f"{_CHECKS[opcode].__name__} and {fn.__name__}")
            _CHECKS[opcode] = fn
        return fn
    return register


@_checks("broadcast")
def _broadcast(instr: HloInstruction) -> None:
    """Operand dimension ``i`` becomes output dimension ``dimensions[i]``, of equal size."""
    check_arity(instr)
    operand, out = operand_array(instr, 0), _declared_array(instr)
    dims = instr.dimensions
    if dims is None:
        if operand.rank:
            raise _fail(instr, "is missing attribute dimensions= (its operand is not a scalar)")
        dims = ()
    if not same_element_type(operand.element_type, out.element_type):
        raise _fail(instr, f"broadcasting {shape_text(operand)} keeps its element type, but the "
                           f"instruction says {shape_text(out)}")
    if len(dims) != operand.rank:
        raise _fail(instr, f"dimensions={braced(dims)} must name one output dimension per "
                           f"dimension of the operand {shape_text(operand)}", "dimensions")
    for i, d in enumerate(dims):
        if not 0 <= d < out.rank:
            raise _fail(instr, f"dimensions={braced(dims)} names dimension {d}, but the output "
                               f"{shape_text(out)} has rank {out.rank}", "dimensions")
        if not same_dims((operand.dims[i],), (out.dims[d],)):
            raise _fail(instr, f"dimensions={braced(dims)} maps dimension {i} of "
                               f"{shape_text(operand)} (size {operand.dims[i]}) to dimension {d} "
                               f"of {shape_text(out)} (size {out.dims[d]}); they must be equal",
                        "dimensions")


@_checks("reshape")
def _reshape(instr: HloInstruction) -> None:
    """The element count and element type are kept."""
    check_arity(instr)
    operand, out = operand_array(instr, 0), _declared_array(instr)
    if not same_element_type(operand.element_type, out.element_type):
        raise _fail(instr, f"reshaping {shape_text(operand)} keeps its element type, but the "
                           f"instruction says {shape_text(out)}")
    if UNBOUNDED_SIZE in operand.dims or UNBOUNDED_SIZE in out.dims:
        return
    before, after = prod(operand.dims), prod(out.dims)
    if before != after:
        raise _fail(instr, f"the operand {shape_text(operand)} has {before} elements, but the "
                           f"instruction says {shape_text(out)} ({after} elements)")


@_checks("convert", "stochastic-convert")
def _convert(instr: HloInstruction) -> None:
    """Any element type, the operand's dimensions."""
    check_arity(instr)
    operand, out = operand_array(instr, 0), _declared_array(instr)
    inferred = Shape(out.element_type, operand.dims, operand.dynamic)
    _compare(instr, inferred, basis=f"converting {shape_text(operand)} to {out.element_type}")


@_checks("bitcast-convert")
def _bitcast_convert(instr: HloInstruction) -> None:
    check_arity(instr)
    operand, out = operand_array(instr, 0), _declared_array(instr)
    inferred = bitcast_convert_shape(operand, out.element_type)
    if isinstance(inferred, str):
        raise _fail(instr, inferred)
    _compare(instr, inferred, basis=f"bitcasting {shape_text(operand)} to {out.element_type}")


@_checks("iota")
def _iota(instr: HloInstruction) -> None:
    check_arity(instr)
    out = _declared_array(instr)
    axis = instr.attr_int("iota_dimension")
    if axis is None:
        raise _fail(instr, "is missing attribute iota_dimension=")
    if out.rank == 0 or not 0 <= axis < out.rank:
        raise _fail(instr, f"iota_dimension={axis} must name a dimension of {shape_text(out)}",
                    "iota_dimension")
    if out.element_type == "pred":
        raise _fail(instr, f"needs an integral, floating-point or complex shape, but the "
                           f"instruction says {shape_text(out)}")


@_checks("dot")
def _dot(instr: HloInstruction) -> None:
    """Any element type (``preferred_element_type``); sparse dots are not judged."""
    if "sparsity" not in instr.attributes:
        _compare(instr, infer_shape(instr), dims_only=True)


@_checks("convolution")
def _convolution(instr: HloInstruction) -> None:
    """Any element type; a convolution of a special kind (a ``*kind*`` attribute, e.g. a
    gradient convolution whose operands play other roles) is not judged."""
    if any("kind" in key for key in instr.attributes):
        return
    _compare(instr, infer_shape(instr), dims_only=True)


def _first_array(shape: ShapeLike) -> Shape | None:
    if isinstance(shape, TupleShape):
        return _first_array(shape.elements[0]) if shape.elements else None
    return shape


def _implied_shards(instr: HloInstruction, *, gather: bool) -> int:
    """The shard count of an ``all-gather`` (``gather``) or ``reduce-scatter``: what the
    instruction says (:func:`~symidx.hlo.infer.shard_count`), or else, as XLA's verifier
    does, the ratio of its first operand's and its output's sizes along ``dimensions``."""
    count = shard_count(instr)
    if count is not None and count > 1:
        return count
    operand, out = operand_array(instr, 0), _first_array(instr.shape)
    axis = instr.dimensions[0] if instr.dimensions else -1
    if out is None or not (0 <= axis < operand.rank and axis < out.rank):
        return 1
    whole, part = (out.dims[axis], operand.dims[axis]) if gather \
        else (operand.dims[axis], out.dims[axis])
    return max(1, ceil_div(whole, part)) if part > 0 else 1


@_checks("all-gather")
def _all_gather(instr: HloInstruction) -> None:
    _compare(instr, all_gather_shape(instr, _implied_shards(instr, gather=True)))


@_checks("reduce-scatter")
def _reduce_scatter(instr: HloInstruction) -> None:
    _compare(instr, reduce_scatter_shape(instr, _implied_shards(instr, gather=False)))


@_checks("collective-permute")
def _collective_permute(instr: HloInstruction) -> None:
    """The plain and in-place forms; a combined collective-permute is not judged."""
    if len(instr.operands) in (1, 4):
        _compare(instr, infer_shape(instr))


@_checks("rng-bit-generator")
def _rng_bit_generator(instr: HloInstruction) -> None:
    """A tuple output is (new state, random bits); the state keeps the operand's shape."""
    check_arity(instr)
    declared = instr.shape
    if isinstance(declared, TupleShape):
        state = operand_array(instr, 0)
        if len(declared.elements) != 2 or not compatible(declared.elements[0], state):
            raise _fail(instr, f"a tuple shape must be (state {shape_text(state)}, bits), but "
                               f"the instruction says {shape_text(declared)}")


@_checks("rng")
def _rng(instr: HloInstruction) -> None:
    """Two scalar parameters of the distribution; the output shape is free."""
    if len(instr.operands) != 2 or not all(isinstance(o.shape, Shape) and o.shape.rank == 0
                                           for o in instr.operands):
        raise _fail(instr, f"takes 2 scalar operands, but has "
                           f"{', '.join(shape_text(o.shape) for o in instr.operands) or 'none'}")


#: Ops whose output (or its first element) is one tuple element of their operand:
#: opcode -> (that element's index in the operand, whether the output wraps it as element 0).
_PASSED_ELEMENT = {"copy-done": (0, False), "async-done": (1, False), "recv-done": (0, True)}


@_checks(*_PASSED_ELEMENT)
def _passes_element(instr: HloInstruction) -> None:
    """``copy-done`` gives element 0 of its ``copy-start`` (destination, source, context),
    ``async-done`` element 1 of its ``async-start`` (operands, result, context...), and
    ``recv-done`` element 0 of its ``recv`` (data, context, token) as its own element 0."""
    check_arity(instr)
    index, wrapped = _PASSED_ELEMENT[instr.opcode]
    operand = instr.operands[0].shape
    if not isinstance(operand, TupleShape) or len(operand.elements) <= index:
        raise _fail(instr, f"its operand must be a tuple with an element {index}, but is "
                           f"{shape_text(operand)}")
    declared = instr.shape
    if wrapped:
        if not isinstance(declared, TupleShape) or not declared.elements:
            raise _fail(instr, f"must have a tuple shape (data, token), but the instruction "
                               f"says {shape_text(declared)}")
        declared = declared.elements[0]
    if not compatible(declared, operand.elements[index]):
        raise _fail(instr, f"element {index} of its operand is "
                           f"{shape_text(operand.elements[index])}, but the instruction "
                           f"{'gives its data as' if wrapped else 'says'} "
                           f"{shape_text(declared)}")


#: The opcodes (of the attribute table) whose check, as :func:`_check` makes it, reads only
#: the instruction's attributes (:func:`check_attributes`): no verifier check of their own,
#: no inference rule, any number of operands -- ``parameter``, ``constant``,
#: ``custom-call``... Without attributes such an instruction passes.
_ATTRIBUTES_ONLY = frozenset(opcode for opcode in TAKES if opcode not in _CHECKS
                             and not has_rule(opcode) and opcode not in ARITY)
