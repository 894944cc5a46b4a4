"""Shape inference for HLO instructions: the output shape XLA gives an instruction from its
operands' shapes, its attributes and the computations it calls.

>>> from symidx.hlo import parse_hlo
>>> module = parse_hlo('''
... ENTRY e {
...   p = f32[2,3] parameter(0)
...   ROOT t = f32[3,2] transpose(p), dimensions={1,0}
... }''')
>>> from symidx.hlo.infer import infer_shape
>>> str(infer_shape(module.entry.root))
'f32[3,2]'

The rules restate the facts of XLA's shape inference (``xla/service/shape_inference.cc``) and
of its HLO verifier (``xla/service/hlo_verifier.cc``) for HLO, where operands are never
broadcast implicitly. Where XLA's versions differ, the rule takes the one that accepts more
(clamp and select take scalar bounds and predicates; ``cbrt`` takes complex numbers).

Some outputs are not determined by the operands: ``iota``, ``reshape``, ``convert``,
``bitcast-convert``, ``rng``, ``custom-call``, ``parameter``, ``constant``, ``infeed`` and
unknown opcodes, a ``broadcast`` of a non-scalar, an ``all-gather`` or ``reduce-scatter``
without ``replica_groups``. For those :func:`infer_shape` raises :class:`InferenceError`
saying that the shape must be written. ``dot`` and ``convolution`` get the element type XLA
infers without a ``preferred_element_type`` (the wider of the operands' types).

The parser calls :func:`infer_shape` for instructions written without a shape, and
:mod:`symidx.hlo.validate` compares it with the shapes that are written.

Every error is an :class:`InferenceError` (an :class:`~symidx.errors.HloShapeError`) whose
message names the opcode and the instruction (``transpose %t: ...``), says what is wrong and
gives the expected and actual shapes or values; :attr:`InferenceError.attribute` names the
attribute at fault, if one is.

The rules live by family in this package (``elementwise``, ``shape_ops``, ``slicing``,
``reduction``, ``linalg``, ``collectives``, ``control``), each registered for its opcodes
in ``common``'s table; importing this package loads them all.
"""

from symidx.hlo.infer import (  # noqa: F401  (each module registers its rules on import)
    collectives,
    control,
    elementwise,
    linalg,
    reduction,
    shape_ops,
    slicing,
)
from symidx.hlo.infer.collectives import all_gather_shape, reduce_scatter_shape, shard_count
from symidx.hlo.infer.common import (
    ARITY,
    InferenceError,
    braced,
    check_arity,
    compatible,
    has_rule,
    infer_shape,
    instruction_error,
    operand_array,
    same_dims,
    same_element_type,
    shape_text,
)
from symidx.hlo.infer.elementwise import bitcast_convert_shape
from symidx.hlo.infer.linalg import window_output_size

__all__ = [
    "ARITY",
    "InferenceError",
    "all_gather_shape",
    "bitcast_convert_shape",
    "braced",
    "check_arity",
    "compatible",
    "has_rule",
    "infer_shape",
    "instruction_error",
    "operand_array",
    "reduce_scatter_shape",
    "same_dims",
    "same_element_type",
    "shape_text",
    "shard_count",
    "window_output_size",
]
