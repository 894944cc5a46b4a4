"""What the analysis returns: the maps of one operand or output (a
:class:`symidx.fusion.Reached` placed there), of one fusion (:class:`FusionMaps`) and of a
whole computation (:class:`ComputationMaps`)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from symidx._display import Rich, Shown, html_table
from symidx.core.indexing_map import IndexingMap
from symidx.errors import SymidxError
from symidx.fusion import Origin, Reached
from symidx.hlo import HloComputation, HloInstruction

__all__ = ["ComputationMaps", "FusionMaps", "group_rows"]


def group_rows(place: str, index: object, groups: tuple[Reached, ...]) -> list[list[str]]:
    """One table row per group: where (``place``, ``index``), the group's operand or
    output (number, leaf, instruction), its maps (HTML: XLA's one-line form, one a line)
    and what is unknown or over-approximated."""
    import html  # notebooks only

    from symidx.core.syntax import print_map

    rows = []
    for g in groups:
        leaf = "" if g.leaf is None else f", leaf {g.leaf}"
        maps = "<br>".join(html.escape(print_map(m, "xla")) for m in g.maps)
        note = (f"unsupported op: {g.unsupported}" if g.unsupported is not None
                else f"over-approximation ({g.opaque})" if g.opaque is not None
                else "" if g.maps else "not read")
        rows.append([place, str(index), f"{g.index}{leaf} ({g.name})", maps, note])
    return rows


def _text(title: str, groups: tuple[Reached, ...]) -> str:
    from symidx.core.syntax import print_map

    lines = [title]
    for g in groups:
        leaf = "" if g.leaf is None else f", leaf {g.leaf}"
        lines.append(f"  {g.index}{leaf} ({g.name} {g.shape})".rstrip())
        lines += [f"    {print_map(m, 'xla')}" for m in g.maps]
        if g.unsupported is not None:
            lines.append(f"    unsupported op: {g.unsupported}")
        elif g.opaque is not None:
            lines.append(f"    over-approximation ({g.opaque})")
    return "\n".join(lines)


@dataclass(frozen=True)
class FusionMaps(Rich):
    """The map groups of one fusion instruction for one of its outputs (output-to-input) or
    inputs (input-to-output): ``index``. ``computation`` is the computation holding it.
    A notebook shows a table of the groups."""

    instr: HloInstruction
    computation: str
    index: int
    groups: tuple[Reached, ...]

    def _shown_(self) -> Shown:
        title = (f"fusion {self.instr.name} (in {self.computation}), index {self.index}: "
                 f"{len(self.groups)} group{'s' if len(self.groups) != 1 else ''} of maps")
        return Shown(_text(title, self.groups), html_table(
            ["fusion", "index", "group", "maps", "note"],
            group_rows(self.instr.name, self.index, self.groups), title, raw=(3,)))


@dataclass(frozen=True)
class ComputationMaps(Rich):
    """A whole computation analysed as one fusion, for one output leaf of its root
    (output-to-input; groups per parameter leaf) or one parameter leaf (input-to-output;
    groups per root output leaf): ``index`` is the output or parameter number, ``leaf``
    the parameter's leaf when it is a tuple. A notebook shows a table of the groups."""

    computation: HloComputation
    index: int
    groups: tuple[Reached, ...]
    leaf: int | None = None

    def _shown_(self) -> Shown:
        at = f"{self.index}" + ("" if self.leaf is None else f", leaf {self.leaf}")
        title = (f"computation {self.computation.name}, index {at}: {len(self.groups)} "
                 f"group{'s' if len(self.groups) != 1 else ''} of maps")
        return Shown(_text(title, self.groups), html_table(
            ["computation", "index", "group", "maps", "note"],
            group_rows(self.computation.name, at, self.groups), title, raw=(3,)))


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
