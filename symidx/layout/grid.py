"""Text pictures of layouts: a grid of offsets drawn as CuTe's ``print_layout`` and the
CATLASS TLA seed draw them::

    (2,3):(3,1)
          0   1   2
        +---+---+---+
     0  | 0 | 1 | 2 |
        +---+---+---+
     1  | 3 | 4 | 5 |
        +---+---+---+
"""

from __future__ import annotations

from collections.abc import Sequence

from symidx.errors import MapError

__all__ = ["draw_grid"]


def draw_grid(title: str, values: Sequence[Sequence[int]]) -> str:
    """``title``, a header of column numbers, then one boxed row of ``values`` per row,
    labelled with its number. Every cell has the width of the widest offset (at least the
    number of digits of one past the largest, as CuTe sizes them)."""
    if not values or not values[0] or any(len(row) != len(values[0]) for row in values):
        raise MapError("a grid needs at least one row, all rows of one non-zero length")
    n_cols = len(values[0])
    biggest = max(abs(v) for row in values for v in row) + 1
    width = max([len(str(biggest))] + [len(str(v)) for row in values for v in row])
    label = max(2, len(str(len(values) - 1)))
    margin = " " * (label + 2)
    rule = margin + ("+" + "-" * (width + 2)) * n_cols + "+"
    lines = [title, margin + "".join(f"  {n:>{width}} " for n in range(n_cols)).rstrip()]
    for m, row in enumerate(values):
        lines.append(rule)
        lines.append(f"{m:>{label}}  " + "".join(f"| {v:>{width}} " for v in row) + "|")
    lines.append(rule)
    return "\n".join(lines)
