"""Which attributes each HLO opcode takes, as XLA's HLO parser knows them.

XLA's parser (``xla/hlo/parser/hlo_parser.cc``: ``ParseInstructionRhs`` and
``CreateInstruction``) gives every instruction a few attributes (:data:`COMMON`), each
opcode its own (:data:`TAKES`), and refuses any other one: ``add(p0, p1), dimensions={0}``
is "unexpected attribute". :func:`unexpected_attribute` says the same here; the HLO reader
asks it of every instruction (:func:`symidx.hlo.validate.check_attributes`), whether or not
the module is validated, as XLA's parser does.

An opcode the table does not know (one of another XLA version) is let through: what XLA
may accept must pass. The asynchronous forms of an opcode it knows (``fusion-start``,
``reduce-scatter-done``) take what :func:`allowed` says. :data:`OTHER_VERSIONS` lists
attributes other XLA versions' parsers take (earlier or later than the one :data:`TAKES`
follows, openxla/xla at 02f6793), which HLO text from those versions carries.
``tests/test_hlo_attributes.py`` holds the table against XLA's own parser (jaxlib's, which
names the attributes an opcode allows when it refuses one).
"""

from __future__ import annotations

__all__ = ["COMMON", "TAKES", "OTHER_VERSIONS", "allowed", "own_attributes",
           "unexpected_attribute"]

COMMON = frozenset({"sharding", "frontend_attributes", "statistics", "parameter_replication",
                    "control-predecessors", "origin", "metadata", "backend_config"})
"""The attributes every instruction may carry."""

_NONE: frozenset[str] = frozenset()
_ACCURACY = frozenset({"result_accuracy"})
_DOT_DIMS = frozenset({"lhs_contracting_dims", "rhs_contracting_dims", "lhs_batch_dims",
                       "rhs_batch_dims", "operand_precision"})
_CHANNEL = frozenset({"channel_id", "is_host_transfer"})
_ALL_GATHER = frozenset({"replica_groups", "channel_id", "dimensions", "constrain_layout",
                         "use_global_device_ids"})
_ALL_REDUCE = frozenset({"to_apply", "replica_groups", "channel_id", "constrain_layout",
                         "use_global_device_ids", "mode"})
_PERMUTE = frozenset({"source_target_pairs", "channel_id", "slice_sizes"})
_BATCH_NORM = frozenset({"epsilon", "feature_index"})
_ASYNC = frozenset({"async_execution_thread", "calls"})


def _each(opcodes: str, attributes: frozenset[str]) -> dict[str, frozenset[str]]:
    return dict.fromkeys(opcodes.split(), attributes)


TAKES: dict[str, frozenset[str]] = {
    "parameter": _NONE,
    "constant": _NONE,
    "iota": frozenset({"iota_dimension"}),
    "topk": frozenset({"k", "largest"}),
    # unary ops with a result accuracy
    **_each("acos acosh asin asinh atanh exponential-minus-one log log-plus-one logistic "
            "sqrt cbrt rsqrt tanh erf sine sinh cosine cosh tan exponential", _ACCURACY),
    # unary, binary and ternary ops without attributes of their own
    **_each("abs all-gather-done all-reduce-done round-nearest-afz round-nearest-even "
            "bitcast ceil count-leading-zeros collective-permute-done copy copy-done "
            "opt-barrier imag is-finite floor not negate popcnt real sign", _NONE),
    **_each("add divide multiply subtract atan2 complex maximum minimum power remainder and "
            "or xor shift-left shift-right-arithmetic shift-right-logical stochastic-convert",
            _NONE),
    **_each("clamp select convert bitcast-convert replica-id partition-id dynamic-reshape "
            "after-all add-dependency tuple dynamic-update-slice", _NONE),
    # collectives
    **_each("all-gather all-gather-start", _ALL_GATHER),
    **_each("all-reduce all-reduce-start", _ALL_REDUCE),
    "reduce-scatter": _ALL_REDUCE | {"dimensions"},
    "all-to-all": frozenset({"replica_groups", "channel_id", "dimensions",
                             "constrain_layout"}),
    "ragged-all-to-all": frozenset({"replica_groups", "channel_id", "dimensions"}),
    "collective-broadcast": frozenset({"replica_groups", "channel_id"}),
    **_each("collective-permute collective-permute-start", _PERMUTE),
    # asynchronous wrappers (of a computation named by calls=)
    "async-start": _ASYNC | {"output_to_operand_aliasing"},
    **_each("async-update async-done", _ASYNC),
    "copy-start": frozenset({"cross_program_prefetch_index"}),
    **_each("send send-done recv recv-done", _CHANNEL),
    # shapes, slices, data movement
    "reshape": frozenset({"inferred_dimension"}),
    "broadcast": frozenset({"dimensions"}),
    **_each("concatenate reverse transpose get-dimension-size set-dimension-size",
            frozenset({"dimensions"})),
    "slice": frozenset({"slice"}),
    "dynamic-slice": frozenset({"dynamic_slice_sizes"}),
    "pad": frozenset({"padding"}),
    "get-tuple-element": frozenset({"index"}),
    "gather": frozenset({"offset_dims", "collapsed_slice_dims", "start_index_map",
                         "index_vector_dim", "slice_sizes", "indices_are_sorted",
                         "operand_batching_dims", "start_indices_batching_dims"}),
    "scatter": frozenset({"update_window_dims", "inserted_window_dims",
                          "scatter_dims_to_operand_dims", "index_vector_dim", "to_apply",
                          "indices_are_sorted", "unique_indices", "input_batching_dims",
                          "scatter_indices_batching_dims"}),
    # computations called
    "sort": frozenset({"dimensions", "is_stable", "to_apply"}),
    "while": frozenset({"condition", "body"}),
    "call": frozenset({"to_apply", "is_composite"}),
    "map": frozenset({"to_apply", "dimensions"}),
    "reduce": frozenset({"to_apply", "dimensions"}),
    "reduce-window": frozenset({"window", "to_apply"}),
    "select-and-scatter": frozenset({"select", "scatter", "window"}),
    "scan": frozenset({"to_apply", "dimensions", "num_carries", "is_reverse",
                       "is_associative"}),
    # a pred index takes the two computations, an s32 index the list
    "conditional": frozenset({"true_computation", "false_computation",
                              "branch_computations"}),
    "fusion": frozenset({"calls", "kind", "output_to_operand_aliasing"}),
    "custom-call": frozenset({"custom_call_target", "window", "dim_labels",
                              "feature_group_count", "batch_group_count",
                              "operand_layout_constraints", "custom_call_has_side_effect",
                              "to_apply", "called_computations",
                              "output_to_operand_aliasing", "padding_type", "literal",
                              "operand_precision", "schedule", "api_version"}),
    # linear algebra
    "dot": _DOT_DIMS | {"algorithm"},
    "ragged-dot": _DOT_DIMS | {"lhs_ragged_dims", "rhs_group_dims"},
    "scaled-dot": _DOT_DIMS | {"algorithm"},
    "convolution": frozenset({"window", "dim_labels", "feature_group_count",
                              "batch_group_count", "conv_kind", "operand_precision"}),
    "fft": frozenset({"fft_type", "fft_length"}),
    # read as the fields of XLA's TriangularSolveOptions and CholeskyOptions
    "triangular-solve": frozenset({"left_side", "lower", "unit_diagonal", "transpose_a"}),
    "cholesky": frozenset({"lower"}),
    "compare": frozenset({"direction", "type"}),
    **_each("batch-norm-training batch-norm-inference batch-norm-grad", _BATCH_NORM),
    "reduce-precision": frozenset({"exponent_bits", "mantissa_bits"}),
    "domain": frozenset({"domain"}),
    # the outside world and random numbers
    "infeed": frozenset({"infeed_config"}),
    "outfeed": frozenset({"outfeed_config", "outfeed_shape"}),
    "rng": frozenset({"distribution"}),
    "rng-get-and-update-state": frozenset({"delta"}),
    "rng-bit-generator": frozenset({"algorithm"}),
}
"""Each opcode's own attributes (beyond :data:`COMMON`), as XLA's parser lists them."""

OTHER_VERSIONS: dict[str, frozenset[str]] = {
    # a dot's sparse operand, before XLA moved sparsity to its own op
    "dot": frozenset({"sparsity"}),
    # copy-start's flag before cross_program_prefetch_index replaced it
    "copy-start": frozenset({"is_cross_program_prefetch"}),
    # XLA's CPU benchmarks write a stable top-k (topk_logits_k10_1x50000_bf16.hlo)
    "topk": frozenset({"is_stable"}),
    # a convolution's kind and sparsity, as the XLA of jaxlib 0.10 spells them (conv_kind
    # in later versions)
    "convolution": frozenset({"convolution_kind", "sparsity_config"}),
}
"""Attributes other XLA versions' parsers take, which HLO text they wrote holds."""

_ALLOWED = {op: COMMON | own | OTHER_VERSIONS.get(op, frozenset()) for op, own in TAKES.items()}


def allowed(opcode: str) -> frozenset[str] | None:
    """Every attribute an instruction of ``opcode`` may carry, or None when the table does
    not know the opcode (then anything is let through). ``X-start`` of an opcode ``X``
    the table knows (an op run asynchronously, XLA's wrapped form: ``reduce-scatter-start``)
    takes ``X``'s attributes and the asynchronous start's; ``X-update`` and ``X-done``
    the asynchronous ones alone."""
    got = _ALLOWED.get(opcode)
    if got is not None:
        return got
    for suffix, extra in _WRAPPED:
        if opcode.endswith(suffix):
            wrapped = _ALLOWED.get(opcode[:-len(suffix)])
            if wrapped is None:
                return None
            return (wrapped | extra) if suffix == "-start" else (COMMON | extra)
    return None


_WRAPPED = (("-start", frozenset({"async_execution_thread", "output_to_operand_aliasing"})),
            ("-update", frozenset({"async_execution_thread"})),
            ("-done", frozenset({"async_execution_thread"})))


def unexpected_attribute(opcode: str, attributes: dict[str, str]) -> str | None:
    """The first attribute (in the order written) that ``opcode`` does not take, or None."""
    ok = _ALLOWED.get(opcode)
    if ok is None:
        if not attributes:
            return None
        ok = allowed(opcode)
    if ok is None or ok.issuperset(attributes):
        return None
    return next(a for a in attributes if a not in ok)


def own_attributes(opcode: str) -> frozenset[str]:
    """The attributes ``opcode`` takes beyond :data:`COMMON` (for messages)."""
    return (allowed(opcode) or COMMON) - COMMON
