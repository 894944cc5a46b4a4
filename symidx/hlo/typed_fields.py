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
T = TypeVar("T")
#: Opcodes with typed fields whatever their attributes, and attributes that fill none: an
#: instruction of another opcode with no other attribute has nothing to fill.
TYPED_OPCODES = frozenset({"dot", "gather", "scatter"})
UNTYPED_KEYS = frozenset({"metadata", "backend_config", "sharding", "frontend_attributes",
                      "to_apply", "calls", "condition", "body", "custom_call_target",
                      "operand_layout_constraints", "api_version", "statistics_viz",
                      "origin", "channel_id", "replica_groups", "use_global_device_ids",
                      "control-predecessors", "is_stable", "largest"})


def fill_typed_fields(instr: HloInstruction) -> None:
    """Fill the typed fields of ``instr`` from its raw attributes. They are read in a fixed
    order (that of :data:`_FILLS`, then the gather or scatter dimension numbers), whatever
    the order of the attributes: of several malformed ones, the same is reported."""
    opcode = instr.opcode
    present = instr.attributes.keys() & _FILLS.keys()
    if opcode in _REQUIRED:  # read when missing too: then the error is said in its turn
        present.add(_REQUIRED[opcode])
    if len(present) == 1:  # (the commonest case: nothing to sort)
        for key in present:
            _FILLS[key](instr, key)
    elif present:
        done = -1
        for key in sorted(present, key=_RANK.__getitem__):
            if _RANK[key] != done:  # (the four keys of the dot numbers fill them once)
                _FILLS[key](instr, key)
                done = _RANK[key]
    if opcode == "gather":
        instr.gather_dimension_numbers = GatherDimensionNumbers(
            _required_list(instr, "offset_dims"),
            _required_list(instr, "collapsed_slice_dims"),
            _required_list(instr, "start_index_map"),
            _required_int(instr, "index_vector_dim"),
            instr.attr_int_list("operand_batching_dims") or (),
            instr.attr_int_list("start_indices_batching_dims") or (),
        )
    elif opcode == "scatter":
        instr.scatter_dimension_numbers = ScatterDimensionNumbers(
            _required_list(instr, "update_window_dims"),
            _required_list(instr, "inserted_window_dims"),
            _required_list(instr, "scatter_dims_to_operand_dims"),
            _required_int(instr, "index_vector_dim"),
            instr.attr_int_list("input_batching_dims") or (),
            instr.attr_int_list("scatter_indices_batching_dims") or (),
        )


_Fill = Callable[[HloInstruction, str], None]


def _int_list_field(instr: HloInstruction, key: str) -> None:
    setattr(instr, key, instr.attr_int_list(key))


def _slice_sizes(instr: HloInstruction, key: str) -> None:
    instr.slice_sizes = (_required_list(instr, key) if instr.opcode == "gather"
                         else _read(instr, key, int_list))  # (a collective permute's: lists)


def _dot_numbers(instr: HloInstruction, key: str) -> None:
    """All four lists, whichever of their keys ``key`` is."""
    instr.dot_dimension_numbers = DotDimensionNumbers(
        *(instr.attr_int_list(name) or () for name in _DOT_KEYS))


def _int_field(field: str) -> _Fill:
    def fill(instr: HloInstruction, key: str) -> None:
        setattr(instr, field, instr.attr_int(key))
    return fill


def _text_field(field: str) -> _Fill:
    def fill(instr: HloInstruction, key: str) -> None:
        setattr(instr, field, instr.attributes[key])
    return fill


def _read_field(reader: Callable[[str], object]) -> _Fill:
    def fill(instr: HloInstruction, key: str) -> None:
        setattr(instr, key, _read(instr, key, reader))
    return fill


#: How each attribute with a typed field of its own fills it, in the order they are read.
_FILLS: dict[str, _Fill] = {
    "dimensions": _int_list_field,
    "dynamic_slice_sizes": _int_list_field,
    "slice_sizes": _slice_sizes,
    "index": _int_field("tuple_index"),
    "feature_group_count": _int_field("feature_group_count"),
    "batch_group_count": _int_field("batch_group_count"),
    "direction": _text_field("comparison_direction"),
    "kind": _text_field("fusion_kind"),
    "slice": _read_field(slice_dims),
    "padding": _read_field(padding),
    "window": _read_field(window),
    "dim_labels": _read_field(dim_labels),
    **dict.fromkeys(_DOT_KEYS, _dot_numbers),
}
# Each key's turn; the dot numbers' four keys share one.
_RANK = {key: rank for rank, key in enumerate(_FILLS)} | dict.fromkeys(_DOT_KEYS, len(_FILLS))
#: The key read for an opcode even when it is missing: a gather's ``slice_sizes`` is
#: required, a dot has dot numbers (empty lists when none is written).
_REQUIRED = {"gather": "slice_sizes", "dot": _DOT_KEYS[0]}


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
