"""What a sweep finds for one instruction output: its distinct maps, where each comes from
(a path of instructions, and how many paths give the same map: ``symidx maps --explain``),
and whether they are unknown (an op without a rule on the way) or a labelled
over-approximation (an opaque op on the way); and what one step of a sweep gives
(:class:`Step`: the maps between an instruction's output leaf and an operand leaf), which
every step of :mod:`symidx.fusion.steps` and :mod:`symidx.fusion.loops` returns."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

from symidx.core.indexing_map import IndexingMap
from symidx.errors import HloShapeError
from symidx.hlo import HloInstruction
from symidx.hlo.leaves import leaves

__all__ = ["Path", "Origin", "Reached", "Traced", "Step", "identity_step"]


@dataclass(frozen=True, slots=True)
class Path:
    """A path of instructions from the start of a sweep to a producer (or user), stored as a
    linked list from its last step back: ``name`` is the last instruction, ``previous`` the
    path before it. ``via`` is set when the last step was taken through a called computation
    (a fusion, ``call``, loop body, branch, ...; ``previous`` ends with the caller): the
    path inside it, from its root to the parameter (or from the parameter to the root,
    forwards)."""

    name: str
    previous: Path | None = None
    via: Path | None = None

    def steps(self) -> list[Path]:
        """Every step from the first to this one."""
        out: list[Path] = []
        step: Path | None = self
        while step is not None:
            out.append(step)
            step = step.previous
        return out[::-1]

    def names(self) -> list[str]:
        """The instruction names from the start, without the paths inside calls."""
        return [step.name for step in self.steps()]

    def __str__(self) -> str:
        """``a0 -> fusion.1 [root.2 -> param_0] -> p0``: a step's inner path follows the
        fusion or call it went through, in brackets."""
        parts: list[str] = []
        for step in self.steps():
            if step.via is not None and parts:
                parts[-1] += f" [{step.via}]"
            parts.append(step.name)
        return " -> ".join(parts)


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a map comes from: one path that produces it, and how many do."""

    path: Path
    count: int = 1


@dataclass(frozen=True, slots=True)
class Reached:
    """What a sweep found for one instruction output: its distinct maps, each with its
    :class:`Origin` (``origins[i]`` belongs to ``maps[i]``; none at all when the sweep did
    not track them: several outputs swept together,
    :meth:`symidx.fusion.Analysis.backward_outputs`), or, when ``unsupported`` names
    an op without a rule on the way, no maps (unknown indexing). The one result type of a
    group of maps: the sweeps of :mod:`symidx.fusion` return it keyed by where it is, and
    :mod:`symidx.analysis` places it at an operand or output of an instruction (``index``,
    ``name``, ``leaf``, ``shape``: what ``symidx maps`` prints).

    ``opaque`` is set when some map was composed through an op whose maps over-approximate
    what it reads (``"custom-call TopK"``, ``"while loop.3 (loop-carried)"``): the maps are
    then a sound over-approximation, not exact.

    A producer that is never read on any path has no maps. Known-empty maps (the producer
    is read on no index along some path) appear only when nothing else reaches it: then
    there is exactly one.

    Where :mod:`symidx.analysis` placed it (keyword-only; None or empty in a sweep's
    result, which its key places): ``index``, the operand (or parameter, or output) number;
    ``name``, the operand's instruction (for an output: the instruction itself); ``leaf``,
    the array leaf of a tuple-shaped operand or parameter (None for an array); ``shape``,
    the operand's (or output's) shape as HLO text, e.g. ``f32[96]{0}``."""

    maps: tuple[IndexingMap, ...] = ()
    origins: tuple[Origin, ...] = ()
    unsupported: str | None = None
    opaque: str | None = None
    _: KW_ONLY
    index: int | None = None
    name: str = ""
    leaf: int | None = None
    shape: str = ""


@dataclass(frozen=True, slots=True)
class Traced:
    """One map of a :class:`Step`: ``map``, the path inside a called computation that gives
    it (``via``; None for an op's own map), and how many paths give it (``count``). A sweep
    turns the traced maps of its steps into a :class:`Reached`'s ``maps`` and ``origins``."""

    map: IndexingMap
    via: Path | None = None
    count: int = 1


@dataclass(frozen=True, slots=True)
class Step:
    """The maps between output leaf ``output`` of an instruction and leaf ``leaf`` of its
    operand at ``position`` (see :mod:`symidx.fusion.steps`); or the op without a rule on
    the way (``unsupported``); ``opaque`` labels maps that over-approximate."""

    output: int
    position: int
    leaf: int
    maps: tuple[Traced, ...] = ()
    unsupported: str | None = None
    opaque: str | None = None


def identity_step(instr: HloInstruction, output: int, position: int, leaf: int) -> Step:
    """The step of an output leaf that holds operand leaf ``leaf`` of operand ``position``
    unchanged: the identity (an error naming ``instr`` when the two differ in shape)."""
    dims = leaves(instr.shape)[output].dims
    other = leaves(instr.operands[position].shape)[leaf].dims
    if dims != other:
        raise HloShapeError(f"{instr.opcode} {instr.name}: output {output} is "
                            f"{list(dims)} but the leaf it passes on is {list(other)}")
    return Step(output, position, leaf, (Traced(IndexingMap.identity(dims)),))
