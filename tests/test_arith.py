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


def test_int_array_is_int64_exactly_when_every_value_fits() -> None:
    import numpy as np
    import pytest

    from symidx._arith import INT64_MAX, INT64_MIN, int_array, narrowest, python_ints

    assert int_array([INT64_MIN, INT64_MAX]).dtype == np.int64
    for past in (2**63, -(2**63) - 1, 2**64):
        wide = int_array([0, past])  # numpy alone: uint64, or a float beside an int64
        assert wide.dtype == object and wide.tolist() == [0, past]
        assert all(type(v) is int for v in wide.tolist())
        assert int_array(past).dtype == object and int(int_array(past)) == past
    assert int_array(np.array([2**63], dtype=np.uint64)).tolist() == [2**63]
    assert int_array(np.array([5], dtype=np.uint64)).dtype == np.int64
    assert int_array([(1, 2**70), (3, 4)]).shape == (2, 2)
    with pytest.raises(TypeError):
        int_array(np.array([1.0]))
    with pytest.raises(TypeError):
        int_array([1, 2.5])
    # numpy scalars inside an array of Python integers become Python integers (no wrap)
    mixed = narrowest(np.array([np.int64(2**62), 2**64], dtype=object))
    assert (mixed * 4).tolist() == [2**64, 2**66]
    assert python_ints(np.arange(3)).dtype == object
    assert (python_ints(np.array([2**62])) * 4).tolist() == [2**64]
