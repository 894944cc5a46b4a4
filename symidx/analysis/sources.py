"""The user's code behind a map: the ``op_name`` and source file and line
(:func:`symidx.hlo.locations.source_of`) of the instruction a group names and of the
instructions along the path that produces a map.

A path names instructions; :class:`SourceFinder` looks each name up where the path is: in
the computation the analysis swept, and for a step taken through a called computation, in
the computations that instruction calls (then anywhere in the module, first in text order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from symidx.fusion import Path
from symidx.hlo import HloComputation, HloInstruction, HloModule

if TYPE_CHECKING:
    from symidx.hlo.locations import SourceLocation

__all__ = ["SourceFinder"]


class SourceFinder:
    """Finds the source locations of a module's instructions by name."""

    def __init__(self, module: HloModule) -> None:
        self.module = module
        self._anywhere: dict[str, HloInstruction] | None = None

    def instruction(self, name: str, where: HloComputation | None = None
                    ) -> HloInstruction | None:
        """The instruction ``name`` of ``where``, else the first so named in the module."""
        if where is not None:
            try:
                return where.instruction(name)
            except KeyError:
                pass
        if self._anywhere is None:
            self._anywhere = {}
            for comp in self.module.computations.values():
                for instr in comp.instructions:
                    self._anywhere.setdefault(instr.name, instr)
        return self._anywhere.get(name)

    def location(self, name: str, where: HloComputation | None = None
                 ) -> SourceLocation | None:
        instr = self.instruction(name, where)
        return None if instr is None else _source_of(instr, self.module)

    def group_json(self, name: str, where: HloComputation | None) -> dict[str, Any] | None:
        found = self.location(name, where)
        return None if found is None else found.to_dict()

    def along(self, path: Path, where: HloComputation | None
              ) -> list[tuple[str, SourceLocation]]:
        """The distinct locations of the instructions along ``path`` (with the first
        instruction that has each), in path order, the steps inside called computations
        in their place."""
        out: list[tuple[str, SourceLocation]] = []
        seen: set[SourceLocation] = set()
        self._walk(path, where, out, seen)
        return out

    def _walk(self, path: Path, where: HloComputation | None,
              out: list[tuple[str, SourceLocation]], seen: set[SourceLocation]) -> None:
        for step in path.steps():
            instr = self.instruction(step.name, where)
            found = None if instr is None else _source_of(instr, self.module)
            if found is not None and found not in seen:
                seen.add(found)
                out.append((step.name, found))
            if step.via is not None:
                self._walk(step.via, _callee(instr, step.via), out, seen)


def _callee(instr: HloInstruction | None, inner: Path) -> HloComputation | None:
    """The computation ``instr`` calls that holds the first step of ``inner``."""
    if instr is None:
        return None
    first = inner.steps()[0].name
    for called in instr.called_computations.values():
        for comp in called:
            try:
                comp.instruction(first)
            except KeyError:
                continue
            return comp
    return None


def _source_of(instr: HloInstruction, module: HloModule) -> SourceLocation | None:
    """:func:`symidx.hlo.locations.source_of`, imported on first use (start-up: text
    output without --explain asks for no location)."""
    from symidx.hlo.locations import source_of

    return source_of(instr, module)
