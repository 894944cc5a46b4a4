"""Which module of :mod:`symidx.ops` holds the rules of each opcode: the table by which the
registry (:mod:`symidx.ops.registry`) imports a rule family on first use of one of its
opcodes, so that a command loads only the families its module's ops need (start-up,
issue 25).

The family named for an opcode registers, when imported, its rules in either direction and,
if it has one, its opacity function (:func:`~symidx.ops.registry.opacity`). The table is
data only; ``tests/test_architecture.py`` checks that it says exactly what the families
register. A new rule family, or a new opcode in one, is added here too.
"""

from __future__ import annotations

__all__ = ["FAMILY", "FAMILIES", "family_of"]

#: Opcode -> the module of :mod:`symidx.ops` that registers its rules (and opacity).
FAMILY: dict[str, str] = {
    "all-gather": "collectives", "all-reduce": "collectives", "all-to-all": "collectives",
    "collective-broadcast": "collectives", "collective-permute": "collectives",
    "collective-reduce": "collectives", "ragged-all-to-all": "collectives",
    "reduce-scatter": "collectives",
    "convolution": "convolution",
    "custom-call": "custom_call",
    "abs": "elementwise", "acos": "elementwise", "acosh": "elementwise", "add": "elementwise",
    "and": "elementwise", "asin": "elementwise", "asinh": "elementwise", "atan": "elementwise",
    "atan2": "elementwise", "atanh": "elementwise", "bitcast-convert": "elementwise",
    "cbrt": "elementwise", "ceil": "elementwise", "clamp": "elementwise", "compare": "elementwise",
    "complex": "elementwise", "convert": "elementwise", "copy": "elementwise",
    "cosh": "elementwise", "cosine": "elementwise", "count-leading-zeros": "elementwise",
    "divide": "elementwise", "erf": "elementwise", "exponential": "elementwise",
    "exponential-minus-one": "elementwise", "floor": "elementwise", "imag": "elementwise",
    "is-finite": "elementwise", "log": "elementwise", "log-plus-one": "elementwise",
    "logistic": "elementwise", "map": "elementwise", "maximum": "elementwise",
    "minimum": "elementwise", "mulhi": "elementwise", "multiply": "elementwise",
    "negate": "elementwise", "not": "elementwise", "or": "elementwise", "popcnt": "elementwise",
    "power": "elementwise", "real": "elementwise", "reduce-precision": "elementwise",
    "remainder": "elementwise", "round-nearest-afz": "elementwise",
    "round-nearest-even": "elementwise", "rsqrt": "elementwise", "select": "elementwise",
    "shift-left": "elementwise", "shift-right-arithmetic": "elementwise",
    "shift-right-logical": "elementwise", "sign": "elementwise", "sine": "elementwise",
    "sinh": "elementwise", "sqrt": "elementwise", "stochastic-convert": "elementwise",
    "subtract": "elementwise", "tan": "elementwise", "tanh": "elementwise", "xor": "elementwise",
    "batch-norm-grad": "linalg", "batch-norm-inference": "linalg", "batch-norm-training": "linalg",
    "cholesky": "linalg", "fft": "linalg", "ragged-dot": "linalg", "topk": "linalg",
    "triangular-solve": "linalg",
    "shuffle": "opaque",
    "dot": "reduction", "reduce": "reduction", "reduce-window": "reduction",
    "scaled-dot": "reduction", "sort": "reduction",
    "rng": "rng", "rng-bit-generator": "rng",
    "scatter": "scatter", "select-and-scatter": "scatter",
    "bitcast": "shape_ops", "broadcast": "shape_ops", "dynamic-reshape": "shape_ops",
    "get-dimension-size": "shape_ops", "reshape": "shape_ops", "reverse": "shape_ops",
    "set-dimension-size": "shape_ops", "transpose": "shape_ops",
    "concatenate": "slicing", "dynamic-slice": "slicing", "dynamic-update-slice": "slicing",
    "gather": "slicing", "pad": "slicing", "slice": "slicing",
    "after-all": "structural", "constant": "structural", "get-tuple-element": "structural",
    "iota": "structural", "parameter": "structural", "partition-id": "structural",
    "replica-id": "structural", "rng-get-and-update-state": "structural", "tuple": "structural",
}

#: The rule families, by full module name.
FAMILIES: tuple[str, ...] = tuple(sorted({f"symidx.ops.{name}" for name in FAMILY.values()}))


def family_of(opcode: str) -> tuple[str, ...]:
    """The modules to import for the rules and opacity of ``opcode`` (none: no rule)."""
    name = FAMILY.get(opcode)
    return () if name is None else (f"symidx.ops.{name}",)
