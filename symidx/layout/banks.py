"""Shared-memory (NVIDIA) and LDS (AMD) bank conflicts of one warp's (wave's) request.

**The model.** Memory is ``banks`` banks of 4-byte words: the word at byte address ``a`` is
in bank ``(a // 4) mod banks``. A request touches a set of words; a bank serves one word per
cycle, and lanes reading the same word share it (a broadcast), so one *phase* of the request
takes as many cycles (*wavefronts*) as the busiest bank has distinct words, and the phases
add up. A phase is the lanes whose bytes fill the banks once (``banks * 4`` bytes): on
NVIDIA (32 banks, 32 lanes) 32-bit accesses are one phase, 64-bit two phases of 16 lanes,
128-bit four of 8; on AMD CDNA3 LDS (32 banks, wave64) a ``ds_read_b128`` is 8 phases of 8
lanes (lanes 0-7, 8-15, ...); on a 64-bank LDS (CDNA4, :data:`AMD_LDS`) 4 phases of 16.

**Access models** (``access=``):

* ``"lanes"`` (default): each lane reads ``vector`` elements starting at the element the
  warp pattern gives it, along the memory-minor dimension (32-bit scalars, 64/128-bit
  vectors, ``ds_read_b64``/``ds_read_b128``);
* ``"ldmatrix"``: ``ldmatrix .x{matrices}`` -- lanes ``0 .. 8*matrices-1`` each give the
  start of a 16-byte row; the 8 rows of one 8x8 matrix are one phase;
* ``"tma"``: a TMA copy's shared-memory side -- the whole view (the box) is moved in
  128-byte lines along the memory-minor dimension, one line per phase (a swizzle mode or
  layout that sends two 16-byte pieces of a line to the same banks shows up here).

**One lane convention for every input kind.** The warp pattern (``--warp``) is a
``shape:stride`` layout from the lane id to the *row-major* (C-order) linear index of the
logical element the lane reads: ``r * cols + c`` for element ``(r, c)`` of a 2-D view,
whether the view is a CuTe layout (whose own linear index is colexicographic) or an XLA
shape. So ``--warp 32:32`` on any 32x32 matrix has lane ``i`` read element ``(i, 0)`` (a
column), and ``32:1`` reads row 0. (A pattern with basis strides, ``E(i)``, gives the
coordinate directly.) The default is lane ``i`` -> linear index ``i * vector`` (the
``i``-th vector of the row-major order); for ``ldmatrix``, lane ``i`` -> the start of row
``i`` (element ``(i, 0)``, rows along the non-minor dimension).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from symidx._arith import ceil_div
from symidx._display import Rich, Shown
from symidx.errors import MapError, TooLargeError
from symidx.layout import cute
from symidx.layout.pictures import banks_figure
from symidx.layout.views import LayoutView

__all__ = [
    "AMD_LDS",
    "AMD_LDS_CDNA3",
    "BANKS",
    "LANES",
    "MACHINES",
    "NVIDIA_SMEM",
    "TMA_LINE_BYTES",
    "TMA_LIMIT",
    "WORD_BYTES",
    "Access",
    "BankReport",
    "Machine",
    "bank_conflicts",
    "banks_text",
    "describe",
    "per_bank_text",
    "serve",
]

BANKS = 32
LANES = 32
WORD_BYTES = 4
TMA_LINE_BYTES = 128
TMA_LIMIT = 1 << 16
"""Most 128-byte lines the TMA model walks."""

Access = Literal["lanes", "ldmatrix", "tma"]


@dataclass(frozen=True, slots=True)
class Machine:
    """``banks`` banks of ``word_bytes``-byte words, requests of ``lanes`` lanes."""

    name: str
    banks: int
    lanes: int
    word_bytes: int = WORD_BYTES

    def lanes_per_phase(self, bytes_per_lane: int) -> int:
        """The lanes whose bytes fill the banks once (at least 1, at most all)."""
        phases = max(1, min(self.lanes, ceil_div(self.lanes * max(bytes_per_lane, 1),
                                                 self.banks * self.word_bytes)))
        return ceil_div(self.lanes, phases)


NVIDIA_SMEM = Machine("nvidia", 32, 32)
AMD_LDS_CDNA3 = Machine("cdna3", 32, 64)
AMD_LDS = Machine("cdna4", 64, 64)
MACHINES = {m.name: m for m in (NVIDIA_SMEM, AMD_LDS_CDNA3, AMD_LDS)}


@dataclass(frozen=True)
class BankReport(Rich):
    """``words[b]``: the distinct words of bank ``b`` touched, per phase;
    ``lanes[(phase, word)]``: the lanes that touch that word; ``wavefronts``: the cycles
    the request takes (the sum over phases of the busiest bank); ``ideal``: with no
    conflict (one per phase); ``title``: what was asked (the command line's first line).
    A notebook shows the request drawn, the summary in its title."""

    phases: int
    words: dict[int, list[set[int]]] = field(default_factory=dict)
    lanes: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    banks: int = BANKS
    access: str = "lanes"
    machine: str = "nvidia"
    title: str = ""

    def summary(self) -> str:
        """``4 wavefronts for 4 without conflicts`` (and the conflict's degree)."""
        return (f"{self.wavefronts} wavefront{'s' if self.wavefronts != 1 else ''} for "
                f"{self.ideal} without conflicts"
                + ("" if self.wavefronts == self.ideal else
                   f" ({self.degree:g}-way bank conflict)"))

    def _shown_(self) -> Shown:
        title = self.title or f"a request on {self.machine} ({self.banks} banks)"

        def draw() -> object:
            return banks_figure(title, self)

        return Shown(f"{title}:\n{self.summary()}", draw=draw, drawable=bool(self.lanes))

    @property
    def wavefronts(self) -> int:
        return sum(max((len(per_phase[p]) for per_phase in self.words.values()), default=0)
                   for p in range(self.phases))

    @property
    def ideal(self) -> int:
        return self.phases

    @property
    def degree(self) -> float:
        """``wavefronts / ideal``: 1 without conflicts, ``n`` for an n-way conflict."""
        return self.wavefronts / self.ideal

    def per_bank(self) -> list[int]:
        """Distinct words per bank, summed over phases (the conflicting accesses)."""
        return [sum(len(s) for s in self.words.get(b, [])) for b in range(self.banks)]

    def as_json(self) -> dict[str, Any]:
        return {"wavefronts": self.wavefronts, "ideal": self.ideal, "phases": self.phases,
                "banks": self.banks, "access": self.access, "machine": self.machine,
                "words_per_bank": self.per_bank()}


def serve(requests: Sequence[Sequence[tuple[int, Sequence[int]]]], element_bits: int,
          machine: Machine = NVIDIA_SMEM, access: str = "lanes") -> BankReport:
    """The banks a request touches: ``requests[p]`` is phase ``p``, a list of ``(lane,
    element offsets)``; each element is ``element_bits`` wide."""
    report = BankReport(len(requests), banks=machine.banks, access=access,
                        machine=machine.name)
    word_bits = 8 * machine.word_bytes
    for phase, members in enumerate(requests):
        for lane, offsets in members:
            for off in offsets:
                start_bit = int(off) * element_bits
                if start_bit < 0:
                    raise MapError(f"lane {lane} reads offset {int(off)}, below 0")
                for word in range(start_bit // word_bits,
                                  (start_bit + element_bits - 1) // word_bits + 1):
                    per_phase = report.words.setdefault(
                        word % machine.banks, [set() for _ in range(len(requests))])
                    per_phase[phase].add(word)
                    lanes = report.lanes.setdefault((phase, word), [])
                    if lane not in lanes:
                        lanes.append(lane)
    return report


def lane_starts(v: LayoutView, warp: cute.Layout | None, lanes: int, default_row: bool = False,
                vector: int = 1) -> np.ndarray:
    """The view's own linear index of the element each lane starts at, under the one lane
    convention (see the module docstring); without a pattern, lane ``i`` starts at row-major
    index ``i * vector`` (the ``i``-th vector), or for ldmatrix at row ``i``."""
    if warp is None:
        if default_row:
            minor = v.minor[0]
            others = [k for k in range(len(v.dims)) if k != minor]
            if not others:
                raise MapError(f"{v.title} has one dimension: no rows for ldmatrix")
            row_dim = others[-1]
            if v.dims[row_dim] < lanes:
                raise MapError(f"{lanes} lanes need {lanes} rows along dimension {row_dim} "
                               f"of {v.title}, which has {v.dims[row_dim]}")
            index = [np.zeros(lanes, dtype=np.int64) for _ in v.dims]
            index[row_dim] = np.arange(lanes, dtype=np.int64)
            return v.linear(index)
        warp = cute.Layout(lanes, vector)
    if cute.size(warp) != lanes:
        raise MapError(f"a warp pattern maps the {lanes} lanes, {warp} has size "
                       f"{cute.size(warp)}")
    if warp.has_basis:
        coords: list[tuple[int, ...]] = []
        for lane in range(lanes):
            value: Any = warp(lane)
            c = tuple(value)
            coords.append(c + (0,) * (len(v.dims) - len(c)))
        if any(len(c) != len(v.dims) for c in coords):
            raise MapError(f"the warp pattern {warp} gives coordinates of more than "
                           f"{len(v.dims)} dimensions")
        index = [np.array([c[k] for c in coords], dtype=np.int64) for k in range(len(v.dims))]
        for k, n in enumerate(v.dims):
            if (index[k] < 0).any() or (index[k] >= n).any():
                raise MapError(f"the warp pattern {warp} reads outside dimension {k} (size "
                               f"{n}) of {v.title}")
        return v.linear(index)
    row_major = cute.layout_values(warp)
    if (row_major < 0).any() or (row_major >= v.size).any():
        raise MapError(f"the warp pattern {warp} reads outside the {v.size} elements of "
                       f"{v.title}")
    index = list(np.unravel_index(row_major, v.dims))
    return v.linear([np.asarray(i, dtype=np.int64) for i in index])


def _runs(v: LayoutView, starts: np.ndarray, count: int) -> np.ndarray:
    """Offsets of ``count`` consecutive elements along the memory-minor dimension from each
    start: shape ``(len(starts), count)``."""
    minor = v.minor[0]
    if (v.coordinate(starts, minor) + count > v.dims[minor]).any():
        raise MapError(f"{count} elements per lane run past the end of dimension {minor} "
                       f"(size {v.dims[minor]}) of {v.title}")
    index = (starts[:, None] + v.linear_stride(minor) * np.arange(count)[None, :]).reshape(-1)
    return v.offsets(index).reshape(len(starts), count)


def bank_conflicts(v: LayoutView, warp: cute.Layout | None = None, vector: int = 1, *,
                   access: Access = "lanes", machine: Machine = NVIDIA_SMEM,
                   matrices: int = 4) -> BankReport:
    """The banks one request touches (see the module docstring for the model, the access
    kinds and the lane convention)."""
    found = _conflicts(v, warp, vector, access, machine, matrices)
    return replace(found, title=describe(v, warp, vector, found))


def _conflicts(v: LayoutView, warp: cute.Layout | None, vector: int, access: Access,
               machine: Machine, matrices: int) -> BankReport:
    bits = v.element_bits
    if access == "tma":
        if warp is not None or vector != 1:
            raise MapError("a TMA copy moves the whole box: no warp pattern or vector")
        return _tma(v, machine)
    if access == "ldmatrix":
        if machine is not NVIDIA_SMEM:
            raise MapError("ldmatrix is an NVIDIA instruction; use access='lanes' with a "
                           "vector for AMD ds_read")
        if matrices not in (1, 2, 4):
            raise MapError(f"ldmatrix loads 1, 2 or 4 matrices, not {matrices}")
        if (16 * 8) % bits != 0 or vector != 1:
            raise MapError(f"ldmatrix rows are 16 bytes of {bits}-bit elements; no vector")
        lanes = 8 * matrices
        per_row = 128 // bits
        offsets = _runs(v, lane_starts(v, warp, lanes, default_row=True), per_row)
        requests = [[(lane, offsets[lane]) for lane in range(8 * m, 8 * m + 8)]
                    for m in range(matrices)]
        return serve(requests, bits, machine, f"ldmatrix.x{matrices}")
    if access != "lanes":
        raise MapError(f"unknown access {access!r}: 'lanes', 'ldmatrix' or 'tma'")
    if vector < 1:
        raise MapError(f"a lane reads at least one element, got {vector}")
    offsets = _runs(v, lane_starts(v, warp, machine.lanes, vector=vector), vector)
    per_phase = machine.lanes_per_phase(ceil_div(vector * bits, 8))
    requests = [[(lane, offsets[lane]) for lane in range(p, min(p + per_phase, machine.lanes))]
                for p in range(0, machine.lanes, per_phase)]
    return serve(requests, bits, machine, "lanes")


def _tma(v: LayoutView, machine: Machine) -> BankReport:
    bits = v.element_bits
    minor = v.minor[0]
    per_line = max(1, TMA_LINE_BYTES * 8 // bits)
    run = min(per_line, v.dims[minor])
    lines_per_row = ceil_div(v.dims[minor], run)
    rows = v.size // v.dims[minor]
    if rows * lines_per_row > TMA_LIMIT:
        raise TooLargeError(f"{v.title}: {rows * lines_per_row} 128-byte lines; the limit is "
                            f"{TMA_LIMIT}")
    index = [np.zeros(rows, dtype=np.int64) for _ in v.dims]
    rest = np.arange(rows, dtype=np.int64)
    for k in reversed(range(len(v.dims))):
        if k == minor:
            continue
        rest, index[k] = np.divmod(rest, v.dims[k])
    starts = v.linear(index)
    requests = []
    for line in range(lines_per_row):
        first = line * run
        count = min(run, v.dims[minor] - first)
        offsets = _runs(v, starts + first * v.linear_stride(minor), count)
        for r in range(rows):
            requests.append([(0, offsets[r])])
    return serve(requests, bits, machine, "tma")


def describe(v: LayoutView, warp: cute.Layout | None, vector: int, r: BankReport) -> str:
    """What was asked: ``banks of LAYOUT (16-bit elements), lanes, warp ..., on nvidia (32
    banks)``."""
    if r.access == "tma":
        what = "a TMA copy of the whole box in 128-byte lines"
    else:
        lanes = MACHINES[r.machine].lanes if r.machine in MACHINES else LANES
        default = "row i" if r.access.startswith("ldmatrix") else f"{lanes}:{vector}"
        warp_text = default if warp is None else str(warp)
        what = (f"{r.access}, warp {warp_text}" + (
            f", {vector} element{'s' if vector != 1 else ''} per lane"
            if r.access == "lanes" else ""))
    return (f"banks of {v.title} ({v.element_bits}-bit elements), {what}, on {r.machine} "
            f"({r.banks} banks)")


def banks_text(v: LayoutView, warp: cute.Layout | None, vector: int, r: BankReport) -> str:
    """A summary, then per bank the distinct words it serves and which lanes read them."""
    return f"{describe(v, warp, vector, r)}:\n{r.summary()}\n" + per_bank_text(r)


def per_bank_text(r: BankReport) -> str:
    """Per bank, the distinct words it serves and which lanes read them."""
    lines: list[str] = []
    by_bank: dict[int, list[str]] = defaultdict(list)
    for (phase, word), readers in sorted(r.lanes.items()):
        prefix = f"phase {phase} " if r.phases > 1 else ""
        who = "" if r.access == "tma" else ": lanes " + ",".join(str(x) for x in readers)
        by_bank[word % r.banks].append(f"{prefix}word {word}{who}")
    shown = 0
    for bank in range(r.banks):
        words = r.per_bank()[bank]
        if words:
            if shown == 64:
                lines.append("... (further banks left out)")
                break
            detail = by_bank[bank] if len(by_bank[bank]) <= 16 else by_bank[bank][:16] + [
                f"... {len(by_bank[bank]) - 16} more"]
            lines.append(f"bank {bank:2d}: {words} word{'s' if words != 1 else ''} "
                         f"({'; '.join(detail)})")
            shown += 1
    return "\n".join(lines)
