"""Does a point of a box satisfy some constraints? An exact search over integers.

The constraints of a composed window are sums of window variables, and floor divisions and
remainders of such sums by constants, each in an interval. Each division ``a floordiv c``
(``c > 0``) becomes a variable ``q`` of its own with one more linear constraint,
``a - c*q in [0, c - 1]``; ``a mod c`` is then ``a - c*q`` and ``a ceildiv c`` is
``-((-a) floordiv c)``. That makes every constraint linear over the box's variables and the
quotients, with nothing lost: a point of the box satisfies the constraints exactly when it
extends to a point of the new system.

The search (:func:`solve`) narrows the variables' intervals by each row (the least and
greatest values the other terms can take leave a variable only the values that keep the
row in its interval), then splits the smallest interval left, depth first, until every
variable has one value (a witness) or an interval is empty. Narrowing drops no solution and
the splits cover every point, so the answer is exact; after :data:`SEARCH_LIMIT` nodes it
is None (unknown).
"""

from __future__ import annotations

from collections.abc import Sequence

from symidx.core.expr import ONE, CeilDiv, Expr, FloorDiv, Mod, terms
from symidx.core.interval import Interval

#: Linear constraints as numbers: per constraint its coefficients (one per variable of the
#: box, in order), its constant and its interval's ends.
Rows = tuple[tuple[tuple[int, ...], int, int, int], ...]

#: Nodes :func:`solve` visits before it gives up.
SEARCH_LIMIT = 20_000
#: Passes over the rows that narrowing makes at one node before it splits instead (a cycle
#: of rows can narrow a wide interval by one value per pass).
NARROWING_PASSES = 32
#: Below this many values, an interval is split into its values rather than in halves.
_SPLIT_INTO_VALUES = 8

_Linear = tuple[dict[int, int], int]  # coefficients by variable position, constant


def linear_rows(constraints: Sequence[tuple[Expr, Interval]], order: Sequence[Expr]
                ) -> Rows | None:
    """``constraints`` as rows of :data:`Rows` over the variables ``order``, or None if
    one is not a sum of integer multiples of them and a constant."""
    index = {v: i for i, v in enumerate(order)}
    rows = []
    for e, iv in constraints:
        coeffs = [0] * len(order)
        const = 0
        for c, x in terms(e):
            if x is ONE:
                const += c
            elif x in index:
                coeffs[index[x]] += c
            else:
                return None
        rows.append((tuple(coeffs), const, iv.lo, iv.hi))
    return tuple(rows)


def division_rows(constraints: Sequence[tuple[Expr, Interval]],
                  box: Sequence[tuple[Expr, Interval]]
                  ) -> tuple[Rows, list[int], list[int]] | None:
    """``constraints`` over ``box`` as linear rows over the box's variables followed by
    one quotient variable per distinct division (``floordiv``, ``mod`` or ``ceildiv`` by a
    positive constant), with the quotients' defining rows; and the low and high ends of
    every variable. None if a constraint holds anything else (a product of variables, a
    division by a variable, a min or max)."""
    index = {v: i for i, (v, _) in enumerate(box)}
    los = [iv.lo for _, iv in box]
    his = [iv.hi for _, iv in box]
    quotients: dict[tuple[tuple[tuple[int, int], ...], int, int], int] = {}
    defining: list[tuple[dict[int, int], int, int, int]] = []

    def quotient(a: Expr, divisor: int, negate: bool) -> tuple[int, _Linear] | None:
        """The quotient variable of ``a // divisor`` (of ``-a`` if ``negate``) and the
        linear form of its numerator."""
        numerator = linear(a)
        if numerator is None:
            return None
        coeffs, const = numerator
        if negate:
            coeffs, const = {k: -c for k, c in coeffs.items()}, -const
        key = (tuple(sorted(coeffs.items())), const, divisor)
        q = quotients.get(key)
        if q is None:
            lo = const + sum(min(c * los[k], c * his[k]) for k, c in coeffs.items())
            hi = const + sum(max(c * los[k], c * his[k]) for k, c in coeffs.items())
            q = quotients[key] = len(los)
            los.append(lo // divisor)
            his.append(hi // divisor)
            row = dict(coeffs)
            row[q] = -divisor
            defining.append((row, const, 0, divisor - 1))
        return q, (coeffs, const)

    def linear(e: Expr) -> _Linear | None:
        coeffs: dict[int, int] = {}
        const = 0
        for c, x in terms(e):
            if x is ONE:
                const += c
                continue
            i = index.get(x)
            if i is not None:
                coeffs[i] = coeffs.get(i, 0) + c
                continue
            kind = type(x)
            if kind is not FloorDiv and kind is not Mod and kind is not CeilDiv:
                return None
            a, b = x.args
            if not b.is_Integer or b.p <= 0:
                return None
            found = quotient(a, b.p, kind is CeilDiv)
            if found is None:
                return None
            q, (numerator, shift) = found
            if kind is Mod:  # a mod b = a - b*q
                for k, v in numerator.items():
                    coeffs[k] = coeffs.get(k, 0) + c * v
                const += c * shift
                coeffs[q] = coeffs.get(q, 0) - c * b.p
            else:  # a floordiv b = q; a ceildiv b = -((-a) floordiv b)
                coeffs[q] = coeffs.get(q, 0) + (c if kind is FloorDiv else -c)
        return coeffs, const

    sparse = []
    for e, iv in constraints:
        form = linear(e)
        if form is None:
            return None
        sparse.append((form[0], form[1], iv.lo, iv.hi))
    n = len(los)
    rows = []
    for coeffs, const, lo, hi in sparse + defining:
        dense = [0] * n
        for k, c in coeffs.items():
            dense[k] += c
        rows.append((tuple(dense), const, lo, hi))
    return tuple(rows), los, his


def solve(rows: Rows, los: Sequence[int], his: Sequence[int]) -> bool | None:
    """Does a point with each variable ``k`` in ``[los[k], his[k]]`` satisfy every row
    (``lo <= const + sum(coeffs[k] * x[k]) <= hi``)? Exact; None after
    :data:`SEARCH_LIMIT` nodes."""
    sparse = tuple((tuple((k, c) for k, c in enumerate(coeffs) if c), const, lo, hi)
                   for coeffs, const, lo, hi in rows)
    stack = [(list(los), list(his))]
    visited = 0
    while stack:
        visited += 1
        if visited > SEARCH_LIMIT:
            return None
        low, high = stack.pop()
        if not _narrowed(sparse, low, high):
            continue
        best, width = -1, 0
        for k, (a, b) in enumerate(zip(low, high)):
            if b > a and (best < 0 or b - a < width):
                best, width = k, b - a
        if best < 0:
            return True  # every variable has one value, and every row holds there
        a, b = low[best], high[best]
        if width < _SPLIT_INTO_VALUES:
            parts = [(v, v) for v in range(b, a - 1, -1)]  # popped from a upwards
        else:
            middle = (a + b) // 2
            parts = [(middle + 1, b), (a, middle)]
        for lo, hi in parts:
            low2, high2 = list(low), list(high)
            low2[best], high2[best] = lo, hi
            stack.append((low2, high2))
    return False


def _narrowed(rows: tuple[tuple[tuple[tuple[int, int], ...], int, int, int], ...],
              low: list[int], high: list[int]) -> bool:
    """Narrow ``low`` and ``high`` (in place) by every row, pass after pass until nothing
    changes (or :data:`NARROWING_PASSES`); False when a row cannot hold. With every
    variable at one value, True means every row holds."""
    for _ in range(NARROWING_PASSES):
        changed = False
        for row, const, lo, hi in rows:
            least = greatest = const
            for k, c in row:
                if c > 0:
                    least += c * low[k]
                    greatest += c * high[k]
                else:
                    least += c * high[k]
                    greatest += c * low[k]
            if least > hi or greatest < lo:
                return False
            if least >= lo and greatest <= hi:
                continue
            for k, c in row:
                # the other terms' least and greatest values leave c*x in
                # [lo - others_greatest, hi - others_least]
                if c > 0:
                    others_least = least - c * low[k]
                    others_greatest = greatest - c * high[k]
                    new_low = -((others_greatest - lo) // c)
                    new_high = (hi - others_least) // c
                else:
                    others_least = least - c * high[k]
                    others_greatest = greatest - c * low[k]
                    new_low = -((hi - others_least) // -c)
                    new_high = (others_greatest - lo) // -c
                if new_low > low[k]:
                    low[k] = new_low
                    changed = True
                if new_high < high[k]:
                    high[k] = new_high
                    changed = True
                if low[k] > high[k]:
                    return False
        if not changed:
            return True
    # stopped narrowing early: a point with every variable fixed must still be checked
    return all(lo <= const + sum(c * low[k] for k, c in row) <= hi
               for row, const, lo, hi in rows) if low == high else True
