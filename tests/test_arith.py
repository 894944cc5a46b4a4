"""symidx._arith: integer ceiling division against exact rational arithmetic."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from symidx._arith import ceil_div


@given(st.integers(-10**30, 10**30), st.integers(-10**6, 10**6).filter(bool))
def test_ceil_div_is_the_ceiling_of_the_exact_quotient(a: int, b: int) -> None:
    assert ceil_div(a, b) == math.ceil(Fraction(a, b))


def test_ceil_div_examples() -> None:
    assert [ceil_div(a, 4) for a in (-5, -4, -3, 0, 1, 4, 5)] == [-1, -1, 0, 0, 1, 1, 2]
    assert [ceil_div(a, -4) for a in (-5, 3, 4, 5)] == [2, 0, -1, -1]
