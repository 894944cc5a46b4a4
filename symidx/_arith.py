"""Integer arithmetic shared by every floor of the package (it imports nothing of symidx).

Exact integers in numpy: every array of index values that symidx makes from Python integers
goes through :func:`int_array`, and every array handed back as Python integers through
:func:`python_ints`. numpy left to itself turns ``2**63`` into a ``uint64``, a column of
``uint64`` beside one of ``int64`` into ``float64``, and ``float64`` back into ``int64`` as
``INT64_MIN``: an answer about one index silently becomes an answer about another. Here an
array is ``int64`` only when every value it holds fits, and an array of Python integers
(``dtype=object``) otherwise; nothing is ever a float or an unsigned type. numpy is imported
inside the functions: most commands never need it.
"""

from __future__ import annotations

from typing import Any

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

__all__ = ["ceil_div", "INT64_MIN", "INT64_MAX", "fits_int64", "int_array", "python_ints",
           "narrowest"]


def ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` for integers of any sign (``b`` nonzero), exactly: ``-((-a) // b)``,
    with no float on the way."""
    return -(-a // b)


def fits_int64(lo: int, hi: int) -> bool:
    """Do all integers in ``[lo, hi]`` fit in an ``int64``?"""
    return lo >= INT64_MIN and hi <= INT64_MAX


def int_array(values: Any) -> Any:
    """``values`` -- a Python integer, a (nested) sequence of them, or a numpy array of
    integers -- as a numpy array of the same integers: ``int64`` when every value fits,
    else an array of Python integers. Raises :class:`TypeError` on anything that is not an
    integer (a float above all: it would not be exact)."""
    import numpy as np

    if isinstance(values, np.ndarray):
        kind = values.dtype.kind
        if values.dtype == np.int64:
            return values
        if kind in "iub":
            if kind == "u" and values.size and int(values.max()) > INT64_MAX:
                return values.astype(object)
            return values.astype(np.int64)
        if kind != "O":
            raise TypeError(f"an array of {values.dtype} is not one of exact integers")
        return narrowest(values)
    if isinstance(values, (int, np.integer)) and not isinstance(values, bool):
        v = int(values)
        return np.asarray(v, dtype=np.int64 if INT64_MIN <= v <= INT64_MAX else object)
    array = np.array(values, dtype=object)
    return narrowest(array)


def narrowest(array: Any) -> Any:
    """An array of integers as ``int64`` when every value fits, else as an array of Python
    integers (each element checked to be an integer; numpy integer scalars made Python
    integers, whose arithmetic cannot wrap); an ``int64`` array unchanged."""
    import numpy as np

    if array.dtype != object:
        return int_array(array)
    flat = array.reshape(-1).tolist()
    for v in flat:
        if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{v!r} is not an integer")
    if not flat or fits_int64(min(flat), max(flat)):
        return array.astype(np.int64)
    out = np.empty(len(flat), dtype=object)
    out[:] = [int(v) for v in flat]  # Python integers, never numpy scalars that could wrap
    return out.reshape(array.shape)


def python_ints(array: Any) -> Any:
    """An array of integers (``int64``, or Python integers as :func:`int_array` makes
    them) as an array of Python integers, on which arithmetic cannot wrap."""
    import numpy as np

    a = np.asarray(array) if not isinstance(array, np.ndarray) else array
    if a.dtype == object:
        return a
    if a.dtype.kind not in "iu":
        raise TypeError(f"an array of {a.dtype} is not one of exact integers")
    return a.astype(object)
