"""Integer arithmetic shared by every floor of the package (it imports nothing of symidx)."""

from __future__ import annotations


def ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` for integers of any sign (``b`` nonzero), exactly: ``-((-a) // b)``,
    with no float on the way."""
    return -(-a // b)
