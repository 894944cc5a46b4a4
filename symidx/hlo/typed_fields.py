"""The typed fields of an instruction (``dimensions``, ``slice``, ``window``, dot, gather
and scatter dimension numbers, ...), read from its raw attributes as
:mod:`symidx.hlo.attributes` says; a malformed or missing one is a located ParseError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from symidx.hlo.attributes import (
    DotDimensionNumbers,
    GatherDimensionNumbers,
    ScatterDimensionNumbers,
    dim_labels,
    int_list,
    padding,
    slice_dims,
    window,
)
from symidx.hlo.ir import HloInstruction

__all__ = ["TYPED_OPCODES", "UNTYPED_KEYS", "fill_typed_fields"]

_DOT_KEYS = ("lhs_batch_dims", "rhs_batch_dims", "lhs_contracting_dims", "rhs_contracting_dims")
_INT_FIELDS = {"index": "tuple_index", "feature_group_count": "feature_group_count",
               "batch_group_count": "batch_group_count"}
T = TypeVar("T")
#: Opcodes with typed fields whatever their attributes, and attributes that fill none: an
#: instruction of another opcode with no other attribute has nothing to fill.
TYPED_OPCODES = frozenset({"dot", "gather", "scatter"})
UNTYPED_KEYS = frozenset({"metadata", "backend_config", "sharding", "frontend_attributes",
                      "to_apply", "calls", "condition", "body", "custom_call_target",
                      "operand_layout_constraints", "api_version", "statistics_viz",
                      "origin", "channel_id", "replica_groups", "use_global_device_ids",
                      "control-predecessors", "is_stable", "largest"})


def fill_typed_fields(instr: HloInstruction) -> None:  # noqa: C901 (a flat table)
    """Fill the typed fields of ``instr`` from its raw attributes."""
    attrs = instr.attributes
    opcode = instr.opcode
    if opcode not in TYPED_OPCODES and attrs.keys() <= UNTYPED_KEYS:
        return
    for key in ("dimensions", "dynamic_slice_sizes"):
        if key in attrs:
            setattr(instr, key, instr.attr_int_list(key))
    if opcode == "gather":
        instr.slice_sizes = _required_list(instr, "slice_sizes")
    elif "slice_sizes" in attrs:  # a collective permute's is a list of lists
        instr.slice_sizes = _read(instr, "slice_sizes", int_list)
    for key, attribute in _INT_FIELDS.items():
        if key in attrs:
            setattr(instr, attribute, instr.attr_int(key))
    if "direction" in attrs:
        instr.comparison_direction = attrs["direction"]
    if "kind" in attrs:
        instr.fusion_kind = attrs["kind"]
    if "slice" in attrs:
        instr.slice = _read(instr, "slice", slice_dims)
    if "padding" in attrs:
        instr.padding = _read(instr, "padding", padding)
    if "window" in attrs:
        instr.window = _read(instr, "window", window)
    if "dim_labels" in attrs:
        instr.dim_labels = _read(instr, "dim_labels", dim_labels)
    if opcode == "dot" or not attrs.keys().isdisjoint(_DOT_KEYS):
        instr.dot_dimension_numbers = DotDimensionNumbers(
            *(instr.attr_int_list(key) or () for key in _DOT_KEYS))
    if opcode == "gather":
        instr.gather_dimension_numbers = GatherDimensionNumbers(
            _required_list(instr, "offset_dims"),
            _required_list(instr, "collapsed_slice_dims"),
            _required_list(instr, "start_index_map"),
            _required_int(instr, "index_vector_dim"),
            instr.attr_int_list("operand_batching_dims") or (),
            instr.attr_int_list("start_indices_batching_dims") or (),
        )
    if opcode == "scatter":
        instr.scatter_dimension_numbers = ScatterDimensionNumbers(
            _required_list(instr, "update_window_dims"),
            _required_list(instr, "inserted_window_dims"),
            _required_list(instr, "scatter_dims_to_operand_dims"),
            _required_int(instr, "index_vector_dim"),
            instr.attr_int_list("input_batching_dims") or (),
            instr.attr_int_list("scatter_indices_batching_dims") or (),
        )

def _read(instr: HloInstruction, key: str, reader: Callable[[str], T]) -> T:
    """``reader`` applied to the raw value of ``key``; its ValueError becomes a
    ParseError at the value."""
    try:
        return reader(instr.attributes[key])
    except ValueError as err:
        raise instr._attribute_error(key, str(err)) from None

def _required_list(instr: HloInstruction, key: str) -> tuple[int, ...]:
    values = instr.attr_int_list(key)
    if values is None:
        raise instr._attribute_error(key, f"{instr.opcode} {instr.name!r} is missing "
                                         f"attribute {key}=")
    return values

def _required_int(instr: HloInstruction, key: str) -> int:
    value = instr.attr_int(key)
    if value is None:
        raise instr._attribute_error(key, f"{instr.opcode} {instr.name!r} is missing "
                                         f"attribute {key}=")
    return value
