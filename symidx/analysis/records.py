"""What the analysis returns: the maps of one operand or output (:class:`MapGroup`), of
one fusion (:class:`FusionMaps`) and of a whole computation (:class:`ComputationMaps`)."""

from __future__ import annotations

from dataclasses import dataclass

from symidx.fusion import Origin
from symidx.hlo import HloComputation, HloInstruction
from symidx.indexing_map import IndexingMap

__all__ = ["ComputationMaps", "FusionMaps", "MapGroup"]


@dataclass(frozen=True)
class MapGroup:
    """The maps of one operand (output-to-input) or one output (input-to-output): a
    :class:`symidx.fusion.Reached` placed at that operand or output.

    ``index`` is the operand (or parameter, or output) number, ``name`` the operand's
    instruction (for an output: the instruction itself). ``leaf`` is the array leaf of a
    tuple-shaped operand or parameter (None for an array). ``maps``, ``unsupported``,
    ``origins`` and ``opaque`` are those of :class:`symidx.fusion.Reached`.
    """

    index: int
    name: str
    maps: tuple[IndexingMap, ...] = ()
    unsupported: str | None = None
    origins: tuple[Origin, ...] = ()
    leaf: int | None = None
    opaque: str | None = None
    #: The operand's (or output's) shape as HLO text, e.g. ``f32[96]{0}``.
    shape: str = ""


@dataclass(frozen=True)
class FusionMaps:
    """The map groups of one fusion instruction for one of its outputs (output-to-input) or
    inputs (input-to-output): ``index``. ``computation`` is the computation holding it."""

    instr: HloInstruction
    computation: str
    index: int
    groups: tuple[MapGroup, ...]


@dataclass(frozen=True)
class ComputationMaps:
    """A whole computation analysed as one fusion, for one output leaf of its root
    (output-to-input; groups per parameter leaf) or one parameter leaf (input-to-output;
    groups per root output leaf): ``index`` is the output or parameter number, ``leaf``
    the parameter's leaf when it is a tuple."""

    computation: HloComputation
    index: int
    groups: tuple[MapGroup, ...]
    leaf: int | None = None
