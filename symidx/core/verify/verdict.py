"""The answer of an equality check, and how it prints."""

from __future__ import annotations

from dataclasses import dataclass

from symidx.core.indexing_map.text import int_text

Point = tuple[int, ...]
Image = frozenset[Point]


@dataclass(frozen=True)
class Verdict:
    """What :func:`symidx.core.verify.decide` found: ``equal``, the ``method`` that decided
    (``identical``, ``exhaustive``, ``z3 proof``/``z3``, ``isl``, ``shape``, ...), and for
    different maps a source ``point`` and each map's image there (``None``: too large to
    list), or a ``reason`` when no single point shows the difference. ``note`` says what
    the answer took as given (points where a divisor is 0 are outside a map's
    definition)."""

    equal: bool
    method: str
    point: Point | None = None
    left: Image | None = None
    right: Image | None = None
    reason: str = ""
    note: str = ""

    def __bool__(self) -> bool:
        return self.equal

    def describe(self) -> str:
        """``equal (<method>)``, or ``different at <point>: <A's image> vs <B's image>``."""
        if self.equal:
            text = f"equal ({self.method})"
        elif self.point is None:
            text = f"different: {self.reason}"
        else:
            text = (f"different at {tuple_text(self.point)}: {image_text(self.left)} vs "
                    f"{image_text(self.right)}")
        return f"{text}; {self.note}" if self.note else text


def tuple_text(t: Point) -> str:
    return "(" + ", ".join(int_text(v) for v in t) + ")"


def image_text(image: Image | None) -> str:
    """An image as the message shows it: one tuple, a set of up to four, or a phrase."""
    if image is None:
        return "(an image too large to list)"
    if not image:
        return "outside the domain"
    items = sorted(image)
    if len(items) == 1:
        return tuple_text(items[0])
    shown = ", ".join(tuple_text(t) for t in items[:4])
    return "{" + shown + (", ..." if len(items) > 4 else "") + "}"
