"""The arithmetic XLA's cost model does, reproduced: 32-bit floats where XLA keeps
``float``, ``llround``, and ``absl::Duration`` (whole quarter nanoseconds).

XLA's figures are only meaningful to the precision XLA computes them in: a duration is an
integer count of quarter-nanosecond ticks (``absl::Duration``), a conversion from seconds
or nanoseconds rounds to the nearest tick, and ``duration * double`` rounds again; the
bandwidths, utilizations and cost properties are single-precision floats. A model that
keeps doubles gives other answers to the last tick, and XLA's tests compare some figures
for equality (a fused producer and consumer cost exactly what the equivalent fusion
costs).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["TICKS_PER_NS", "Ticks", "f32", "llround", "ticks_from_seconds",
           "ticks_from_ns", "scale_ticks", "ticks_to_us", "ticks_to_ns", "INFINITE"]

#: absl::Duration's resolution: a quarter of a nanosecond.
TICKS_PER_NS = 4
TICKS_PER_SECOND = 1_000_000_000 * TICKS_PER_NS
#: A duration longer than any estimate (XLA's ``absl::InfiniteDuration()``).
INFINITE = math.inf

Ticks = int | float  # an int, or INFINITE


def f32(x: float | int) -> float:
    """``x`` rounded to the nearest single-precision float (C++'s conversion to float)."""
    return float(np.float32(x))


def f32_div(a: float | int, b: float | int) -> float:
    """``a / b`` computed in single precision, both sides converted to float first."""
    return float(np.float32(a) / np.float32(b))


def f32_mul(a: float | int, b: float | int) -> float:
    """``a * b`` in single precision."""
    return float(np.float32(a) * np.float32(b))


def f32_add(a: float | int, b: float | int) -> float:
    """``a + b`` in single precision."""
    return float(np.float32(a) + np.float32(b))


def llround(x: float) -> int:
    """C's ``llround``: to the nearest integer, halves away from zero."""
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


def _round_half_away(x: float) -> int:
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


def ticks_from_seconds(seconds: float) -> Ticks:
    """``absl::Seconds(double)``: whole seconds kept, the fraction rounded to a tick."""
    if seconds != seconds or seconds >= 2.0 ** 63:
        return INFINITE
    if seconds < 0:
        return -ticks_from_seconds(-seconds)
    whole = int(seconds)
    return whole * TICKS_PER_SECOND + _round_half_away((seconds - whole) * TICKS_PER_SECOND)


def ticks_from_ns(ns: float) -> Ticks:
    """``absl::Nanoseconds(floating)`` (``n * Nanoseconds(1)``): rounded to a tick."""
    if ns != ns or math.isinf(ns):
        return INFINITE
    return scale_ticks(TICKS_PER_NS, ns)


def scale_ticks(ticks: Ticks, r: float) -> Ticks:
    """``absl::Duration * double``: the product rounded to the nearest tick."""
    if ticks == INFINITE:
        return INFINITE
    return _round_half_away(ticks * r)


def ticks_to_ns(ticks: Ticks) -> float:
    """``absl::ToDoubleNanoseconds``."""
    return ticks / TICKS_PER_NS


def ticks_to_us(ticks: Ticks) -> float:
    """``absl::ToDoubleMicroseconds``."""
    return ticks / (TICKS_PER_NS * 1000)
