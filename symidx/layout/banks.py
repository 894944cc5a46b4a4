"""Shared-memory bank conflicts of one warp's access to a layout.

Shared memory is 32 banks of 4-byte words: the word at byte address ``a`` is in bank
``(a // 4) mod 32``. A warp's request touches a set of words; a bank serves one word per
cycle, and lanes reading the same word share it (a broadcast), so the request takes, per
bank, as many cycles (*wavefronts*) as the distinct words it holds. A request wider than 4
bytes per lane is served in phases of 128 bytes -- 16 lanes at a time for 8-byte accesses,
8 lanes for 16-byte ones -- and the wavefronts of the phases add up.

The warp's access pattern (``--warp``) is a ``shape:stride`` layout from the lane id
(``0..31``) to the linear index of the element the lane reads (colexicographic for a
nested layout, row-major for an XLA array); with ``vector`` elements per lane, a lane reads
that element and the ``vector - 1`` next ones along the memory-minor dimension (a 16-byte
``ld.shared.v4`` of a row). The default pattern ``32:1`` has lane ``i`` read element ``i``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from symidx._arith import ceil_div
from symidx.errors import MapError
from symidx.layout import cute
from symidx.layout.views import LayoutView

__all__ = ["BANKS", "LANES", "WORD_BYTES", "BankReport", "bank_conflicts", "banks_text"]

BANKS = 32
LANES = 32
WORD_BYTES = 4


@dataclass(frozen=True)
class BankReport:
    """``words[b]``: the distinct words of bank ``b`` the warp touches, per phase;
    ``lanes[(phase, word)]``: the lanes that touch that word; ``wavefronts``: the cycles the
    request takes (the sum over phases of the busiest bank); ``ideal``: what it takes with
    no conflict (one per phase)."""

    phases: int
    words: dict[int, list[set[int]]] = field(default_factory=dict)
    lanes: dict[tuple[int, int], list[int]] = field(default_factory=dict)

    @property
    def wavefronts(self) -> int:
        return sum(max((len(per_phase[p]) for per_phase in self.words.values()), default=0)
                   for p in range(self.phases))

    @property
    def ideal(self) -> int:
        return self.phases

    def per_bank(self) -> list[int]:
        """Distinct words per bank, summed over phases (the conflicting accesses)."""
        return [sum(len(s) for s in self.words.get(b, [])) for b in range(BANKS)]

    def as_json(self) -> dict[str, Any]:
        return {"wavefronts": self.wavefronts, "ideal": self.ideal, "phases": self.phases,
                "words_per_bank": self.per_bank()}


def bank_conflicts(v: LayoutView, warp: cute.Layout | None = None, vector: int = 1
                   ) -> BankReport:
    """The banks one warp's request touches (see the module docstring)."""
    warp = cute.Layout(LANES, 1) if warp is None else warp
    if cute.size(warp) != LANES:
        raise MapError(f"a warp pattern maps the {LANES} lanes, {warp} has size "
                       f"{cute.size(warp)}")
    if vector < 1:
        raise MapError(f"a lane reads at least one element, got {vector}")
    first = cute.layout_values(warp)
    if (first < 0).any() or (first >= v.size).any():
        raise MapError(f"the warp pattern {warp} reads outside the {v.size} elements of "
                       f"{v.title}")
    minor = v.minor[0]
    if (v.coordinate(first, minor) + vector > v.dims[minor]).any():
        raise MapError(f"{vector} elements per lane run past the end of dimension {minor} "
                       f"(size {v.dims[minor]}) of {v.title}")
    index = (first[:, None] + v.linear_stride(minor) * np.arange(vector)[None, :]).reshape(-1)
    offsets = v.offsets(index).reshape(LANES, vector)
    bits = v.element_bits
    phases = max(1, min(LANES, ceil_div(vector * bits, 8 * WORD_BYTES)))
    lanes_per_phase = LANES // phases
    report = BankReport(phases)
    for lane in range(LANES):
        phase = lane // lanes_per_phase
        for off in offsets[lane]:
            start_bit = int(off) * bits
            for word in range(start_bit // 32, (start_bit + bits - 1) // 32 + 1):
                per_phase = report.words.setdefault(word % BANKS,
                                                    [set() for _ in range(phases)])
                per_phase[phase].add(word)
                lanes = report.lanes.setdefault((phase, word), [])
                if lane not in lanes:
                    lanes.append(lane)
    return report


def banks_text(v: LayoutView, warp: cute.Layout | None, vector: int, r: BankReport) -> str:
    """A summary, then per bank the distinct words it serves and which lanes read them."""
    warp_text = str(cute.Layout(LANES, 1) if warp is None else warp)
    degree = r.wavefronts / r.ideal
    lines = [f"banks of {v.title} ({v.element_bits}-bit elements), warp {warp_text}, "
             f"{vector} element{'s' if vector != 1 else ''} per lane:",
             f"{r.wavefronts} wavefront{'s' if r.wavefronts != 1 else ''} for "
             f"{r.ideal} without conflicts"
             + ("" if r.wavefronts == r.ideal else f" ({degree:g}-way bank conflict)")]
    by_bank: dict[int, list[str]] = defaultdict(list)
    for (phase, word), lanes in sorted(r.lanes.items()):
        prefix = f"phase {phase} " if r.phases > 1 else ""
        by_bank[word % BANKS].append(f"{prefix}word {word}: lanes "
                                     + ",".join(str(x) for x in lanes))
    for bank in range(BANKS):
        words = r.per_bank()[bank]
        if words:
            lines.append(f"bank {bank:2d}: {words} word{'s' if words != 1 else ''} "
                         f"({'; '.join(by_bank[bank])})")
    return "\n".join(lines)
