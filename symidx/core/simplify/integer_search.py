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
row in its interval; a variable that narrows brings its other rows back), then splits the
variable in the most rows, depth first, until every variable has one value (a witness) or
an interval is empty. Splitting the most linked variable first matters: a window's sums
and quotients tie many offsets together, and once they are fixed the offsets follow, where
splitting the offsets first tries their combinations one by one. So does trying a
variable's middle values first: the running sums of stacked windows are bounded on both
sides, and offsets at their low ends fail only deep in the search. Narrowing drops no
solution and the splits cover every point, so the answer is exact; after
:data:`SEARCH_LIMIT` narrowings of a row it is None (unknown).
"""

from __future__ import annotations

from collections.abc import Sequence

from symidx.core.expr import ONE, CeilDiv, Expr, FloorDiv, Mod, terms
from symidx.core.interval import Interval

#: Linear constraints as numbers: per constraint its coefficients (one per variable of the
#: box, in order), its constant and its interval's ends.
Rows = tuple[tuple[tuple[int, ...], int, int, int], ...]

#: Narrowings of a row that :func:`solve` makes before it gives up (a cycle of rows can
#: narrow a wide interval by one value at a time).
SEARCH_LIMIT = 200_000
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
    :data:`SEARCH_LIMIT` narrowings of a row."""
    return _Search(rows, len(los)).run(list(los), list(his))


class _Search:
    """The state of one :func:`solve`: the rows by their nonzero terms, the rows each
    variable is in, and the work done."""

    __slots__ = ("terms", "consts", "lows", "highs", "rows_of", "work")

    def __init__(self, rows: Rows, variables: int):
        self.terms = [tuple((k, c) for k, c in enumerate(coeffs) if c)
                      for coeffs, _, _, _ in rows]
        self.consts = [row[1] for row in rows]
        self.lows = [row[2] for row in rows]
        self.highs = [row[3] for row in rows]
        self.rows_of: list[list[int]] = [[] for _ in range(variables)]
        for r, terms_ in enumerate(self.terms):
            for k, _ in terms_:
                self.rows_of[k].append(r)
        self.work = 0

    def run(self, low: list[int], high: list[int]) -> bool | None:
        """Depth first: narrow, then split the variable in the most rows (the narrowest
        of those) into its values if it has few, the middle ones first, else in
        halves."""
        rows_of = self.rows_of
        stack = [(low, high, list(range(len(self.terms))))]
        while stack:
            low, high, queue = stack.pop()
            narrowed = self._narrowed(low, high, queue)
            if narrowed is None:
                return None
            if not narrowed:
                continue
            best, score = -1, (0, 0)
            for k, (a, b) in enumerate(zip(low, high)):
                if b > a and (best < 0 or (-len(rows_of[k]), b - a) < score):
                    best, score = k, (-len(rows_of[k]), b - a)
            if best < 0:  # every variable has one value, where every row holds
                return True
            a, b = low[best], high[best]
            if b - a < _SPLIT_INTO_VALUES:  # the middle values first (popped last)
                parts = [(v, v) for v in sorted(range(a, b + 1),
                                                key=lambda v: (-abs(2 * v - a - b), -v))]
            else:
                middle = (a + b) // 2
                parts = [(middle + 1, b), (a, middle)]
            for lo, hi in parts:
                low2, high2 = list(low), list(high)
                low2[best], high2[best] = lo, hi
                stack.append((low2, high2, list(rows_of[best])))
        return False

    def _narrowed(self, low: list[int], high: list[int], queue: list[int]) -> bool | None:
        """Narrow ``low`` and ``high`` (in place) by the rows in ``queue`` and, whenever a
        variable narrows, by the other rows it is in, until nothing changes; False when a
        row cannot hold, None when the work runs out. With every variable at one value,
        True means every row holds."""
        terms_, consts, lows, highs, rows_of = (self.terms, self.consts, self.lows,
                                                self.highs, self.rows_of)
        queued = set(queue)
        while queue:
            self.work += 1
            if self.work > SEARCH_LIMIT:
                return None
            r = queue.pop()
            queued.discard(r)
            row, lo, hi = terms_[r], lows[r], highs[r]
            least = greatest = consts[r]
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
                if new_low <= low[k] and new_high >= high[k]:
                    continue
                low[k] = max(low[k], new_low)
                high[k] = min(high[k], new_high)
                if low[k] > high[k]:
                    return False
                for other in rows_of[k]:  # this row too: its other terms moved
                    if other not in queued:
                        queued.add(other)
                        queue.append(other)
        return True
