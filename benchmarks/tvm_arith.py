"""TVM's arith suite through symidx: how many answers mean the same, how many take TVM's form.

The checks are TVM's own (``tests/data/tvm_arith_cases.json``, written by
``benchmarks/tvm_arith_convert.py`` from apache/tvm's ``tests/python/arith/``), each read
by symidx's TVM reader (``parse_map(text, syntax="tvm")``):

* an ``expr`` check is an input expression over a domain and the expression TVM's
  simplifier turns it into; symidx's answer is ``simplify`` of the input map;
* a ``range`` check is an expression over a domain and the bounds TVM's ``const_int_bound``
  or ``int_set`` gives; symidx's answer is ``result_ranges`` of the simplified map,
  intersected with that of the input map (both hold every value, so their intersection
  does).

**Meaning** (every answer must keep it): an ``expr`` answer is the same function as the
input on the input's domain, and a ``range`` answer holds every value the expression takes
there. Decided by ``symidx.core.verify.decide`` (isl or z3 where installed, whatever the
domain's size; enumeration where the domain is small); where no method decides (products
of variables are outside Presburger arithmetic), checked on sampled points
(:func:`sample`) and counted apart. TVM's own expected expression is checked the same way,
against the input: a converter that misread a test would show there.

**TVM's form.** Printing differs (``floordiv(x, 4)`` and ``x floordiv 4``, ``(y + 10) * x``
and ``x * y + x * 10``, the order of a sum's terms), so the comparison is made after both
are brought to one canonical form: each is read into a symidx map (sympy orders sums and
products and folds constants) and its results are expanded (``sympy.expand``: products of
sums multiplied out, inside ``floordiv``/``mod``/``min``/``max`` too). An ``expr`` answer
takes TVM's form when, so normalised,

* it *is* TVM's expression (counted as ``exact``), or
* it is as simple as TVM's by every count, each on its own: no more ``floordiv``/``ceildiv``
  /``mod`` nodes, no more ``min``/``max`` nodes, and no more operations in all
  (:func:`operations`: each ``+``, ``*``, negation, division, remainder, ``min`` and
  ``max`` of the canonical form) than TVM's expected expression (counted as ``as
  simple``).

The second clause accepts a different spelling of an equally simple expression
(``min(x * 3, 9)`` for TVM's ``min(x, 3) * 3``; ``(x - 1) floordiv 2`` for TVM's
``floordiv(x * 8 - 1, 16)``, which is simpler) and never one with one more division,
remainder, min or max than TVM's, whatever else it saves. A ``range`` answer takes TVM's
form when it is TVM's interval or inside it (``exact`` when equal): a tighter interval
that still holds every value is a better answer, not a miss. The counts of the two clauses
are printed apart, so what the second accepts stays visible, and so is how many answers
it accepts as their input, unchanged (where TVM trades the input for a form of the same
size: ``min(x, y) - x`` for ``min(0, y - x)``).

    python benchmarks/tvm_arith.py [--misses] [--cases FILE]

prints the meaning and form counts, and with ``--misses`` each check that misses TVM's
form with both answers.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sympy

from symidx.core.expr import CeilDiv, FloorDiv, Max, Min, Mod
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.core.simplify import result_ranges, simplify
from symidx.core.syntax import parse_map, print_map
from symidx.core.verify import decide
from symidx.errors import SymidxError, Undecided

CASES = Path(__file__).resolve().parent.parent / "tests" / "data" / "tvm_arith_cases.json"
DIVISIONS = (FloorDiv, CeilDiv, Mod)
MINMAX = (Min, Max)


def load(path: Path = CASES) -> list[dict[str, Any]]:
    return json.loads(path.read_text())


def normal(e: sympy.Expr) -> sympy.Expr:
    """The canonical form both sides are compared in: sympy's, products of sums expanded."""
    return sympy.expand(e)


def operations(e: sympy.Expr) -> int:
    """The operations of ``e`` as written in the canonical form: a sum of ``n`` terms has
    ``n - 1`` additions, a product of ``n`` factors (a constant factor too, so ``-x`` and
    ``x * 4`` are one each) ``n - 1`` multiplications, ``x**n`` has ``n - 1``, and each
    ``floordiv``, ``ceildiv``, ``mod``, ``min`` and ``max`` is one."""
    if e.is_Atom:
        return 0
    inner = sum(operations(a) for a in e.args)
    if isinstance(e, sympy.Add | sympy.Mul):
        return len(e.args) - 1 + inner
    if isinstance(e, sympy.Pow):
        return int(e.args[1]) - 1 + inner
    return 1 + inner


def shape(e: sympy.Expr) -> tuple[int, int, int]:
    """(division and remainder nodes, min and max nodes, operations) of ``e``."""
    return (sum(1 for n in sympy.preorder_traversal(e) if isinstance(n, DIVISIONS)),
            sum(1 for n in sympy.preorder_traversal(e) if isinstance(n, MINMAX)),
            operations(e))


@dataclass(frozen=True)
class Judgement:
    """One check's answer: its form ("exact", "as simple" or "miss") and what it is."""
    form: str
    ours: str
    theirs: str


def answer(case: dict[str, Any]) -> IndexingMap | Interval:
    """symidx's answer to a check: the simplified map, or the result's range."""
    m = parse_map(case["map"], syntax="tvm")
    got = simplify(m)
    if case["kind"] == "expr":
        return got
    if got.is_known_empty:
        return Interval(1, 0)
    return result_ranges(got)[0].intersect(result_ranges(m)[0])


def judge(case: dict[str, Any], ours: IndexingMap | Interval) -> Judgement:
    """Whether ``ours`` takes TVM's form (see the module docstring)."""
    if case["kind"] == "range":
        assert isinstance(ours, Interval)
        lo, hi = case["lo"], case["hi"]
        inside = (lo is None or ours.lo >= lo) and (hi is None or ours.hi <= hi)
        equal = (lo is None or ours.lo == lo) and (hi is None or ours.hi == hi)
        form = "exact" if equal else "as simple" if inside else "miss"
        return Judgement(form, f"[{ours.lo}, {ours.hi}]", f"[{lo}, {hi}]")
    assert isinstance(ours, IndexingMap)
    expected = parse_map(case["expected"], syntax="tvm")
    mine = [normal(r) for r in ours.results]
    theirs = [normal(r) for r in expected.results]
    text = print_map(ours, style="xla").split(", domain")[0]
    their_text = case["expected"].split(", domain")[0]
    if mine == theirs:
        return Judgement("exact", text, their_text)
    a = [shape(r) for r in mine]
    b = [shape(r) for r in theirs]
    simple = len(a) == len(b) and all(x <= y for p, q in zip(a, b) for x, y in zip(p, q))
    return Judgement("as simple" if simple else "miss", text, their_text)


def as_written(case: dict[str, Any], ours: IndexingMap | Interval) -> bool:
    """Whether an ``expr`` answer is its input, as read (in the canonical form)."""
    if not isinstance(ours, IndexingMap):
        return False
    source = parse_map(case["map"], syntax="tvm")
    return [normal(r) for r in ours.results] == [normal(r) for r in source.results]


def sample(m: IndexingMap, count: int = 300, seed: int = 0) -> list[Any]:
    """Points of ``m``'s dimension box, one numpy array per dimension: every point when the
    box has at most 4,096; otherwise every point of the box's part in ``[-4, 4]`` per
    dimension, and ``count`` more, each coordinate an end of its interval, next to one, or
    anywhere in it (seeded)."""
    import itertools
    import random

    import numpy as np

    box = m.dims
    if m.domain_size() <= 4096:
        points = list(itertools.product(*(range(b.lo, b.hi + 1) for b in box)))
    else:
        near = [range(max(b.lo, -4), min(b.hi, 4) + 1) for b in box]
        points = list(itertools.product(*near))
        rng = random.Random(seed)

        def pick(lo: int, hi: int) -> int:
            return rng.choice([lo, min(lo + 1, hi), max(hi - 1, lo), hi,
                               rng.randint(lo, hi), rng.randint(lo, hi)])

        points += [tuple(pick(b.lo, b.hi) for b in box) for _ in range(count)]
    if not points or not box:
        return [np.zeros(1, dtype=np.int64) for _ in box]
    return [np.array([p[i] for p in points], dtype=object) for i in range(len(box))]


def same_on_samples(a: IndexingMap, b: IndexingMap) -> bool:
    """Whether ``a`` and ``b`` (maps of dimensions only, the same box) have the same domain
    and the same results on every point :func:`sample` gives."""
    points = sample(b)
    ra, ma = a.evaluate_arrays(points)
    rb, mb = b.evaluate_arrays(points)
    if not (ma == mb).all():
        return False
    return all((x[mb] == y[mb]).all() for x, y in zip(ra, rb))


def within_on_samples(m: IndexingMap, bounds: Interval) -> bool:
    """Whether the result of ``m`` lies in ``bounds`` on every point :func:`sample` gives."""
    points = sample(m)
    (r,), mask = m.evaluate_arrays(points)
    values = r[mask]
    return bool(((values >= bounds.lo) & (values <= bounds.hi)).all())


def keeps_meaning(case: dict[str, Any], ours: IndexingMap | Interval,
                  timeout: float = 20.0) -> str:
    """Whether the answer keeps the input's meaning: "proved", "sampled" (no method
    decides, as for products of variables: checked on :func:`sample`'s points) or
    "CHANGED"."""
    m = parse_map(case["map"], syntax="tvm")
    if case["kind"] == "range":
        assert isinstance(ours, Interval)
        # the range holds every value: adding "result in range" leaves the domain as it is
        other = m.replace(constraints=(*m.constraints, (m.results[0], ours)))
    else:
        assert isinstance(ours, IndexingMap)
        other = ours
    try:
        return "proved" if decide(other, m, timeout=timeout).equal else "CHANGED"
    except Undecided:
        if case["kind"] == "range":
            assert isinstance(ours, Interval)
            return "sampled" if within_on_samples(m, ours) else "CHANGED"
        return "sampled" if same_on_samples(other, m) else "CHANGED"


def tvm_expected_keeps_meaning(case: dict[str, Any], timeout: float = 20.0) -> str | None:
    """Whether TVM's expected answer means the input, as converted ("proved", "sampled" or
    "different"; None for a range)."""
    if case["kind"] == "range":
        return None
    theirs = parse_map(case["expected"], syntax="tvm")
    source = parse_map(case["map"], syntax="tvm")
    try:
        return "proved" if decide(theirs, source, timeout=timeout).equal else "different"
    except Undecided:
        return "sampled" if same_on_samples(theirs, source) else "different"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=Path, default=CASES)
    ap.add_argument("--misses", action="store_true", help="print each check that misses")
    ap.add_argument("--no-proofs", action="store_true",
                    help="count forms only (skip the meaning proofs)")
    args = ap.parse_args(argv)
    cases = load(args.cases)
    forms: Counter[str] = Counter()
    meaning: Counter[str] = Counter()
    theirs: Counter[str] = Counter()
    misses: list[tuple[str, Judgement]] = []
    cpu = 0.0
    for case in cases:
        try:
            start = time.process_time()
            ours = answer(case)
            cpu += time.process_time() - start
        except SymidxError as e:
            forms["error"] += 1
            misses.append((case["id"], Judgement("error", str(e), "")))
            continue
        j = judge(case, ours)
        forms[j.form] += 1
        if j.form == "as simple" and as_written(case, ours):
            forms["as written"] += 1
        if j.form == "miss":
            misses.append((case["id"], j))
        if not args.no_proofs:
            kept = keeps_meaning(case, ours)
            meaning[kept] += 1
            if kept == "CHANGED":
                misses.append((case["id"], Judgement("MEANING CHANGED", j.ours, j.theirs)))
            same = tvm_expected_keeps_meaning(case)
            if same is not None:
                theirs[same] += 1
    n = len(cases)
    taken = forms["exact"] + forms["as simple"]
    if not args.no_proofs:
        print(f"meaning: {meaning['proved'] + meaning['sampled']}/{n} kept "
              f"({meaning['proved']} proved, {meaning['sampled']} on samples: no method "
              f"decides products of variables)"
              + (f", {meaning['CHANGED']} CHANGED" if meaning["CHANGED"] else ""))
        print(f"TVM's expected expressions: {theirs['proved'] + theirs['sampled']}/"
              f"{sum(theirs.values())} the same function as their input "
              f"({theirs['proved']} proved, {theirs['sampled']} on samples)" +
              (f", {theirs['different']} different" if theirs["different"] else ""))
    errors = f", {forms['error']} errors" if forms["error"] else ""
    print(f"TVM's form: {taken}/{n} ({forms['exact']} exact, {forms['as simple']} as simple, "
          f"{forms['as written']} of them the input as written: TVM rewrites it to another "
          f"form of the same size){errors}")
    kinds = Counter(c["kind"] for c in cases)
    print(f"checks: {dict(kinds)}; simplification CPU {cpu:.2f} s")
    if args.misses:
        for cid, j in misses:
            print(f"{j.form.upper()} {cid}\n  symidx: {j.ours}\n  TVM:    {j.theirs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
