"""Every opcode of XLA's ``xla/hlo/ir/hlo_opcode.h`` has an indexing rule in both
directions, or is one of the opcodes :mod:`symidx.fusion` handles
(:data:`symidx.ops.HANDLED_BY_FUSION`)."""

from __future__ import annotations

from symidx.ops import HANDLED_BY_FUSION, INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, supported_opcodes

#: The opcode names of ``HLO_OPCODE_LIST`` in openxla/xla ``xla/hlo/ir/hlo_opcode.h``.
XLA_OPCODES = (
    "abs", "acos", "acosh", "add", "add-dependency", "after-all", "all-gather", "all-gather-done",
    "all-gather-start", "all-reduce", "all-reduce-done", "all-reduce-start", "all-to-all", "and",
    "asin", "asinh", "async-done", "async-start", "async-update", "atan", "atan2", "atanh",
    "batch-norm-grad", "batch-norm-inference", "batch-norm-training", "bitcast", "bitcast-convert",
    "broadcast", "call", "cbrt", "ceil", "cholesky", "clamp", "count-leading-zeros",
    "collective-broadcast", "collective-permute", "collective-permute-done",
    "collective-permute-start", "collective-reduce", "compare", "complex", "concatenate",
    "conditional", "constant", "convert", "convolution", "copy", "copy-done", "copy-start",
    "cosine", "cosh", "custom-call", "divide", "domain", "dot", "dynamic-reshape", "dynamic-slice",
    "dynamic-update-slice", "erf", "exponential", "exponential-minus-one", "fft", "floor",
    "fusion", "gather", "get-dimension-size", "get-tuple-element", "imag", "infeed", "iota",
    "is-finite", "log", "log-plus-one", "logistic", "map", "maximum", "minimum", "mulhi",
    "multiply", "negate", "not", "opt-barrier", "or", "outfeed", "pad", "parameter",
    "partition-id", "popcnt", "power", "ragged-all-to-all", "ragged-dot", "real", "recv",
    "recv-done", "reduce", "reduce-precision", "reduce-scatter", "reduce-window", "remainder",
    "replica-id", "reshape", "reverse", "rng", "rng-bit-generator", "rng-get-and-update-state",
    "round-nearest-afz", "round-nearest-even", "rsqrt", "scaled-dot", "scan", "scatter", "select",
    "select-and-scatter", "send", "send-done", "set-dimension-size", "shift-left",
    "shift-right-arithmetic", "shift-right-logical", "shuffle", "sign", "sine", "sinh", "slice",
    "sort", "sqrt", "stochastic-convert", "subtract", "tan", "tanh", "topk", "transpose",
    "triangular-solve", "tuple", "while", "xor",
)


def test_the_list_is_xlas() -> None:
    assert len(XLA_OPCODES) == len(set(XLA_OPCODES)) == 136


def test_every_opcode_has_rules_or_is_handled_by_fusion() -> None:
    both = supported_opcodes(OUTPUT_TO_INPUT) & supported_opcodes(INPUT_TO_OUTPUT)
    missing = [op for op in XLA_OPCODES if op not in both and op not in HANDLED_BY_FUSION]
    assert missing == []


def test_no_rule_for_a_name_xla_does_not_have() -> None:
    assert supported_opcodes(OUTPUT_TO_INPUT) <= set(XLA_OPCODES)
    # HANDLED_BY_FUSION names XLA's opcodes, and the X-start/X-done XLA's text prints for an
    # async-start/-done wrapping a collective X that has no start/done opcode of its own
    sugar = {f"{x}-{part}" for x in ("all-to-all", "reduce-scatter", "collective-broadcast",
                                     "ragged-all-to-all") for part in ("start", "done")}
    assert not sugar & set(XLA_OPCODES)
    assert {x.rsplit("-", 1)[0] for x in sugar} <= set(XLA_OPCODES)
    assert set(XLA_OPCODES) | sugar >= HANDLED_BY_FUSION
    assert sugar <= HANDLED_BY_FUSION
