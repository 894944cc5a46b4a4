"""What ``symidx layout``'s routes share: integer lists (``--index``, ``--tile``,
``--shape``), ``--highlight``, and a grid or the note saying why none is drawn."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from symidx._text import lazy_pattern, too_long
from symidx.cli.common import UsageError
from symidx.errors import MapError, ParseError, TooLargeError

if TYPE_CHECKING:
    from symidx.layout import pictures

_INT = lazy_pattern(r"\s*(-?\d+)\s*")


def parse_ints(text: str, option: str) -> tuple[int, ...]:
    """``"2,3"`` -> ``(2, 3)``; the empty string is ``()`` (a scalar's index)."""
    if not text.strip():
        return ()
    values = []
    pos = 0
    while True:
        match = _INT.match(text, pos)
        if match is None:
            raise ParseError(f"{option} expects integers separated by commas", text, pos)
        reason = too_long(match.group(1))
        if reason is not None:
            raise ParseError(f"{option}: {reason}", text, pos)
        values.append(int(match.group(1)))
        pos = match.end()
        if pos == len(text):
            return tuple(values)
        if text[pos] != ",":
            raise ParseError(f"{option} expects integers separated by commas", text, pos)
        pos += 1


def highlight(args: argparse.Namespace) -> pictures.Highlight | None:
    """``--highlight``, read (None without it)."""
    from symidx.layout import pictures

    return None if args.highlight is None else pictures.parse_highlight(args.highlight)


def grid_or_note(draw: Callable[[], str]) -> str:
    """The grid, or a note saying why it is not drawn (too large, or no elements)."""
    try:
        return draw()
    except (TooLargeError, MapError) as e:
        return f"(no grid: {e})"


def answer(v: Any, args: argparse.Namespace) -> int:
    """``--contiguity`` or ``--banks`` of a layout view (:mod:`symidx.layout.views`), under
    the lane convention of ``--warp`` (a shape:stride layout)."""
    from symidx.layout import banks, contiguity, cute

    vector = 1 if args.vector is None else args.vector
    if args.contiguity:
        if args.warp is not None or args.vector is not None:
            raise UsageError("symidx layout: --warp and --vector are for --banks")
        if args.png:
            raise UsageError("symidx layout: --png draws a layout or, with --banks, its "
                             "banks")
        print(contiguity.contiguity_text(v, contiguity.contiguity(v)))
        return 0
    warp = None if args.warp is None else cute.parse_layout(args.warp)
    if warp is not None and not isinstance(warp, cute.Layout):
        raise UsageError("symidx layout: --warp is a shape:stride layout (lane -> element), "
                         "not a composed one")
    report = banks.bank_conflicts(v, warp, vector, access=args.access,
                                  machine=banks.MACHINES[args.machine],
                                  matrices=args.matrices)
    print(banks.banks_text(v, warp, vector, report))
    if args.png:
        from symidx.layout import pictures

        default = f"{banks.MACHINES[args.machine].lanes}:{vector}"
        pictures.save_banks_png(f"{v.title}, warp {warp or default}", report, args.png)
    return 0
