"""Interval: a closed range of integers ``[lo, hi]``, frozen, with interval arithmetic.

Bounds are Python integers, so there is no overflow or saturation (XLA saturates at the
int64 limits; we need not). An interval with ``lo > hi`` is empty; all empty intervals
compare equal to :data:`Interval.EMPTY`. Every operation returns an interval that contains
every value the operation can take on its operands (and no more, where that is cheap).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True, slots=True)
class Interval:
    lo: int
    hi: int

    EMPTY: ClassVar[Interval]

    def __post_init__(self) -> None:
        if self.lo > self.hi and (self.lo, self.hi) != (1, 0):
            object.__setattr__(self, "lo", 1)
            object.__setattr__(self, "hi", 0)

    # --- construction -----------------------------------------------------------------
    @classmethod
    def point(cls, value: int) -> Interval:
        return cls(value, value)

    @classmethod
    def of_size(cls, size: int) -> Interval:
        """``[0, size - 1]``: the index range of a dimension of ``size`` elements."""
        return cls(0, size - 1)

    # --- queries ----------------------------------------------------------------------
    @property
    def is_empty(self) -> bool:
        return self.lo > self.hi

    @property
    def is_point(self) -> bool:
        return self.lo == self.hi

    @property
    def size(self) -> int:
        """Number of integers in the interval (0 when empty)."""
        return max(0, self.hi - self.lo + 1)

    def __contains__(self, value: object) -> bool:
        if isinstance(value, Interval):
            return value.is_empty or (self.lo <= value.lo and value.hi <= self.hi)
        return isinstance(value, int) and self.lo <= value <= self.hi

    def contains(self, other: Interval | int) -> bool:
        return other in self

    def __str__(self) -> str:
        return f"[{self.lo}, {self.hi}]"

    # --- lattice ----------------------------------------------------------------------
    def intersect(self, other: Interval) -> Interval:
        return Interval(max(self.lo, other.lo), min(self.hi, other.hi))

    def union(self, other: Interval) -> Interval:
        """The smallest interval containing both (the convex hull)."""
        if self.is_empty:
            return other
        if other.is_empty:
            return self
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))

    # --- arithmetic -------------------------------------------------------------------
    def __add__(self, other: Interval | int) -> Interval:
        o = _as_interval(other)
        if self.is_empty or o.is_empty:
            return EMPTY
        return Interval(self.lo + o.lo, self.hi + o.hi)

    __radd__ = __add__

    def __neg__(self) -> Interval:
        return EMPTY if self.is_empty else Interval(-self.hi, -self.lo)

    def __sub__(self, other: Interval | int) -> Interval:
        return self + (-_as_interval(other))

    def __rsub__(self, other: int) -> Interval:
        return _as_interval(other) - self

    def __mul__(self, other: Interval | int) -> Interval:
        o = _as_interval(other)
        if self.is_empty or o.is_empty:
            return EMPTY
        products = (self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi)
        return Interval(min(products), max(products))

    __rmul__ = __mul__

    def floordiv(self, other: Interval | int) -> Interval:
        """``{a // b}``: exact for a nonzero constant divisor; for an interval divisor,
        zero is excluded (division by zero is undefined, not a value)."""
        o = _as_interval(other)
        if self.is_empty or o.is_empty:
            return EMPTY
        if o.lo == o.hi == 0:
            return EMPTY
        divisors = [d for d in (o.lo, o.hi, -1, 1) if d != 0 and o.lo <= d <= o.hi]
        quotients = [a // d for a in (self.lo, self.hi) for d in divisors]
        return Interval(min(quotients), max(quotients))

    __floordiv__ = floordiv

    def ceildiv(self, other: Interval | int) -> Interval:
        return -((-self).floordiv(other))

    def mod(self, other: Interval | int) -> Interval:
        """``{a mod b}`` with Python semantics (result has the divisor's sign)."""
        o = _as_interval(other)
        if self.is_empty or o.is_empty or (o.lo == o.hi == 0):
            return EMPTY
        if o.is_point:
            m = o.lo
            if self.lo // m == self.hi // m:  # one period: a mod m = a - m * q, increasing
                return Interval(self.lo % m, self.hi % m)
            return Interval(0, m - 1) if m > 0 else Interval(m + 1, 0)
        hull = Interval(0, 0)
        if o.hi > 0:
            # a positive divisor b gives [0, b - 1], and never more than a when a >= 0
            top = o.hi - 1 if self.lo < 0 else min(o.hi - 1, self.hi)
            hull = hull.union(Interval(0, top))
        if o.lo < 0:
            bottom = o.lo + 1 if self.hi > 0 else max(o.lo + 1, self.lo)
            hull = hull.union(Interval(bottom, 0))
        return hull

    __mod__ = mod

    def min(self, other: Interval | int) -> Interval:
        o = _as_interval(other)
        if self.is_empty or o.is_empty:
            return EMPTY
        return Interval(min(self.lo, o.lo), min(self.hi, o.hi))

    def max(self, other: Interval | int) -> Interval:
        o = _as_interval(other)
        if self.is_empty or o.is_empty:
            return EMPTY
        return Interval(max(self.lo, o.lo), max(self.hi, o.hi))


def _as_interval(value: Interval | int) -> Interval:
    return value if isinstance(value, Interval) else Interval(value, value)


EMPTY = Interval(1, 0)
Interval.EMPTY = EMPTY
