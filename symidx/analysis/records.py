"""What the analysis returns: the maps of one operand or output (a
:class:`symidx.fusion.Reached` placed there), of one fusion (:class:`FusionMaps`) and of a
whole computation (:class:`ComputationMaps`)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from symidx.errors import SymidxError
from symidx.fusion import Origin, Reached
from symidx.hlo import HloComputation, HloInstruction
from symidx.indexing_map import IndexingMap

__all__ = ["ComputationMaps", "FusionMaps"]


@dataclass(frozen=True)
class FusionMaps:
    """The map groups of one fusion instruction for one of its outputs (output-to-input) or
    inputs (input-to-output): ``index``. ``computation`` is the computation holding it."""

    instr: HloInstruction
    computation: str
    index: int
    groups: tuple[Reached, ...]


@dataclass(frozen=True)
class ComputationMaps:
    """A whole computation analysed as one fusion, for one output leaf of its root
    (output-to-input; groups per parameter leaf) or one parameter leaf (input-to-output;
    groups per root output leaf): ``index`` is the output or parameter number, ``leaf``
    the parameter's leaf when it is a tuple."""

    computation: HloComputation
    index: int
    groups: tuple[Reached, ...]
    leaf: int | None = None


def group_index(group: Reached) -> int:
    """The operand (or parameter, or output) number ``group`` is placed at: set in every
    group the analysis returns, an error for a sweep's unplaced result."""
    if group.index is None:
        raise SymidxError("a group of maps placed at no operand or output")
    return group.index


def _map_group(index: int, name: str, maps: tuple[IndexingMap, ...] = (),
               unsupported: str | None = None, origins: tuple[Origin, ...] = (),
               leaf: int | None = None, opaque: str | None = None, shape: str = ""
               ) -> Reached:
    """The old ``MapGroup(index, name, maps, unsupported, origins, leaf, opaque, shape)``,
    in its own field order: the :class:`Reached` it describes."""
    return Reached(maps, origins, unsupported, opaque, index=index, name=name, leaf=leaf,
                   shape=shape)


def deprecated_name(module: str, name: str) -> Any:
    """``MapGroup``, the old name of :class:`symidx.fusion.Reached` placed at an operand or
    output, with a :class:`DeprecationWarning`: called with its old fields (positional in
    their old order, or by keyword) it builds the :class:`Reached` they describe. An
    :class:`AttributeError` for any other ``name`` (a module's ``__getattr__``)."""
    if name == "MapGroup":
        warnings.warn(f"{module}.MapGroup is deprecated: the analysis returns "
                      f"symidx.fusion.Reached (MapGroup(...) still builds one from the old "
                      f"fields)", DeprecationWarning, stacklevel=3)
        return _map_group
    raise AttributeError(f"module {module!r} has no attribute {name!r}")


def __getattr__(name: str) -> Any:
    return deprecated_name(__name__, name)
