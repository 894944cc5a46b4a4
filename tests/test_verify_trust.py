"""Verdicts to trust (issues 22 and 23): enumeration and point sets compute exactly where
int64 would wrap; every decision is bounded by a deadline and says "undecided" past it;
divisors that can be 0 are accepted, their zeros outside the map's definition; a map
pickles after a decision used it; integers of any length in map text."""

from __future__ import annotations

import contextlib
import io
import itertools
import pickle
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sympy import Integer

from symidx import IndexingMap, Undecided, compose, equal, parse_map, simplify
from symidx.cli import main
from symidx.core import pointsets
from symidx.core.expr import CeilDiv, FloorDiv, Max, Min, Mod, dim
from symidx.core.syntax import print_map
from symidx.core.verify import check_trace, decide, has_isl, has_z3, relation
from symidx.core.verify.common import Deadline
from symidx.errors import ParseError, SymidxError

ISL = pytest.mark.skipif(not has_isl(), reason="islpy not installed")
Z3 = pytest.mark.skipif(not has_z3(), reason="z3 not installed")

# --- issue 23, item 1: int64 wrapped inside sub-expressions --------------------------------
WIDE = ("(d0) -> ((d0 * 4611686018427387904) floordiv 4611686018427387904), "
        "domain: d0 in [0, 3]")  # d0 * 2^62 leaves int64 at d0 = 2; the result is d0
BITS = "(d0) -> (d0 mod 2 - (d0 floordiv 2) mod 2 * 2), domain: d0 in [0, 3]"  # 0, 1, -2, -1
IDENTITY = "(d0) -> (d0), domain: d0 in [0, 3]"
BOX = "domain: d0 in [4000, 4100], d1 in [4000, 4100]"
PRODUCT_2_40 = f"(d0, d1) -> ((d0 * d1 * 1099511627776) floordiv 1099511627776), {BOX}"
PRODUCT = f"(d0, d1) -> (d0 * d1), {BOX}"


def run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue()


def test_a_product_past_int64_is_not_wrapped_in_verify():
    # was: "equal (exhaustive)", exit 0 (d0 * 2^62 wrapped in numpy's int64)
    assert run(["verify", WIDE, BITS]) == (1, "different at (2): (2) vs (-2)\n")
    # was: "different at (2): (2) vs (2)", exit 1
    assert run(["verify", WIDE, IDENTITY]) == (0, "equal (exhaustive)\n")


def test_a_product_of_variables_times_2_40_is_exact():
    # was: "different at (4000, 4000): (16000000) vs (16000000)"
    assert run(["verify", PRODUCT_2_40, PRODUCT]) == (0, "equal (exhaustive)\n")
    off_by_one = PRODUCT_2_40.replace("* 1099511627776)", "* 1099511627776 + 1099511627776)")
    assert run(["verify", off_by_one, PRODUCT]) == (
        1, "different at (4000, 4000): (16000001) vs (16000000)\n")


@pytest.mark.parametrize("backend", ["explicit", pytest.param("isl", marks=ISL)])
def test_the_image_of_a_wide_product_is_exact(backend):
    # was (explicit): [(-2,), (-1,), (0,), (1,)]
    assert pointsets.image(parse_map(WIDE), backend).points() == [(0,), (1,), (2,), (3,)]


def test_values_past_int64_are_kept_as_python_integers():
    m = parse_map("(d0)[s0] -> (d0 * 1180591620717411303424 + s0), "
                  "domain: d0 in [0, 2], s0 in [0, 1]")  # 2^70
    rows = sorted(tuple(int(v) for v in row) for row in relation(m))
    assert rows == [(d, d * 2**70 + s) for d in range(3) for s in range(2)]
    assert decide(m, m.replace(ranges=[(0, 2)]), method="enumerate").describe() == (
        "different at (0): {(0), (1)} vs {(0), (1), (2)}")
    # the explicit point sets hold them exactly too (they were refused before)
    assert pointsets.image(m, "explicit").points() == sorted(
        (d * 2**70 + s,) for d in range(3) for s in range(2))


def test_a_bound_past_2_63_is_answered_not_a_traceback():
    top = 2**63
    a = f"(d0) -> (d0), domain: d0 in [0, {top - 1}]"
    b = f"(d0) -> (d0 + 0), domain: d0 in [0, {top}]"
    # was: OverflowError in the probe (a traceback)
    assert run(["verify", a, b]) == (1, f"different at ({top}): outside the domain vs "
                                        f"({top})\n")
    near = f"(d0) -> (d0 * 2 - d0), domain: d0 in [{top - 1}, {top + 1}]"
    assert decide(parse_map(near), parse_map(near.replace("d0 * 2 - d0", "d0")),
                  method="enumerate").equal


# a pure-Python evaluator, written from the operations' definitions, to check against
def py_eval(e, values: dict) -> int | None:
    """``e`` at one point in Python integers; None where a divisor is 0."""
    if e.is_Integer:
        return int(e)
    if e.is_Symbol:
        return values[e]
    args = [py_eval(a, values) for a in e.args]
    if any(a is None for a in args):
        return None
    if e.is_Add:
        return sum(args)
    if e.is_Mul:
        out = 1
        for a in args:
            out *= a
        return out
    if e.is_Pow:
        return args[0] ** int(e.args[1])
    a, b = args
    if isinstance(e, (FloorDiv, Mod, CeilDiv)) and b == 0:
        return None
    if isinstance(e, FloorDiv):
        return a // b
    if isinstance(e, CeilDiv):
        return -((-a) // b)
    if isinstance(e, Mod):
        return a - b * (a // b)
    return min(a, b) if isinstance(e, Min) else max(a, b)


HUGE = st.integers(-2**80, 2**80)
D0, D1 = dim(0), dim(1)


@st.composite
def huge_exprs(draw, depth: int = 3):
    """Expressions over d0, d1 with coefficients and divisors up to 2^80 (the divisor of
    a division is a constant, or d1, which can be 0)."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from([D0, D1])) if draw(st.booleans()) else Integer(draw(HUGE))
    kind = draw(st.sampled_from(["add", "scale", "mul", "floordiv", "mod", "ceildiv",
                                 "min", "max", "by_var"]))
    x = draw(huge_exprs(depth - 1))
    if kind == "scale":
        return x * draw(HUGE)
    if kind in ("floordiv", "mod", "ceildiv"):
        c = draw(HUGE.filter(lambda v: v != 0))
        return {"floordiv": FloorDiv, "mod": Mod, "ceildiv": CeilDiv}[kind](x, c)
    if kind == "by_var":
        return FloorDiv(x, D1) if draw(st.booleans()) else Mod(x, D1)
    y = draw(huge_exprs(depth - 1))
    return {"add": x + y, "mul": x * y, "min": Min(x, y), "max": Max(x, y)}[kind]


@given(huge_exprs(), huge_exprs())
def test_exact_evaluation_agrees_with_python_integers(e, f):
    from symidx.core.expr import evaluate_exact

    grid = np.meshgrid(np.arange(-3, 4), np.arange(-2, 3), indexing="ij")
    coords = [g.reshape(-1) for g in grid]
    values, defined = evaluate_exact([e, f], [D0, D1], coords)
    for k, (x, y) in enumerate(zip(*(c.tolist() for c in coords))):
        want = [py_eval(g, {D0: x, D1: y}) for g in (e, f)]
        ok = defined is None or bool(defined[k])
        assert ok == (want[0] is not None and want[1] is not None)
        if ok:
            got = [int(np.broadcast_to(v, coords[0].shape)[k]) for v in values]
            assert got == want


@given(huge_exprs(), huge_exprs())
def test_enumeration_decides_as_python_integers_do(e, f):
    box = [(-3, 3), (1, 3)]  # d1 >= 1: both are functions, defined everywhere
    a, b = IndexingMap.create(box, [e]), IndexingMap.create(box, [f])
    points = list(itertools.product(range(-3, 4), range(1, 4)))
    same = all(py_eval(e, {D0: x, D1: y}) == py_eval(f, {D0: x, D1: y}) for x, y in points)
    verdict = decide(a, b, method="enumerate")
    assert verdict.equal == same
    if not same:
        x, y = verdict.point
        assert verdict.left == {(py_eval(e, {D0: x, D1: y}),)}
        assert verdict.right == {(py_eval(f, {D0: x, D1: y}),)}
        assert verdict.left != verdict.right


# --- issue 22, item 4: every decision bounded ---------------------------------------------
# XLA's indexing_map_test SymbolicMapSimplification_ExtractFromMod: a map and the form XLA
# simplifies it to (equal); isl ran more than 22 minutes on the pair
EXTRACT_FROM_MOD = (
    "()[s0, s1, s2, s3] -> ((s0 * 458752 + s1 + s2 * 4 + s3 * 512) mod 20000), "
    "domain: s0 in [0, 871], s1 in [0, 3], s2 in [0, 127], s3 in [0, 895]")
EXTRACT_FROM_MOD_SIMPLIFIED = (
    "()[s0, s1, s2, s3] -> (((s0 * 114688 + s3 * 128 + s2) mod 5000) * 4 + s1), "
    "domain: s0 in [0, 871], s1 in [0, 3], s2 in [0, 127], s3 in [0, 895]")


@pytest.mark.parametrize("method", ["auto", pytest.param("isl", marks=ISL),
                                    pytest.param("smt", marks=Z3)])
def test_the_extract_from_mod_pair_answers_or_says_undecided_within_its_deadline(method):
    a, b = parse_map(EXTRACT_FROM_MOD), parse_map(EXTRACT_FROM_MOD_SIMPLIFIED)
    try:
        verdict = decide(a, b, cpu_limit=1, method=method)
    except Undecided as e:
        assert "out of CPU time (1 s)" in e.reason or "could not decide" in e.reason, e.reason
    else:
        assert verdict.equal, verdict.describe()


def test_equal_on_the_pair_returns_or_raises_undecided():
    a, b = parse_map(EXTRACT_FROM_MOD), parse_map(EXTRACT_FROM_MOD_SIMPLIFIED)
    with contextlib.suppress(Undecided):
        assert equal(a, b, cpu_limit=1)


def test_verify_timeout_bounds_the_isl_path_on_the_cli():
    code, out = run(["verify", EXTRACT_FROM_MOD, EXTRACT_FROM_MOD_SIMPLIFIED, "--cpu-limit",
                     "1"])
    assert (code, out.startswith("undecided: out of CPU time (1 s)")) == (3, True) or \
        (code, out) == (0, "equal (isl)\n"), out


@ISL
def test_the_isl_worker_past_its_deadline_is_stopped_and_the_next_question_answered():
    from symidx.core.verify.isl import WORKER, isl_text

    hard = (isl_text(parse_map(EXTRACT_FROM_MOD)),
            isl_text(parse_map(EXTRACT_FROM_MOD_SIMPLIFIED)))
    WORKER.ask(("{ [d0] -> [d0] }", "{ [d0] -> [d0] }"), Deadline(60))
    process = WORKER._process
    with pytest.raises(Undecided, match=r"out of CPU time \(0.5 s\) while isl was deciding"):
        WORKER.ask(hard, Deadline(0.5))
    assert process is not None and process.poll() is not None  # killed, and waited for
    assert WORKER.ask(("{ [d0] -> [d0] : 0 <= d0 <= 3 }", "{ [d0] -> [d0 + 1] }"),
                      Deadline(60)) is not None
    with pytest.raises(SymidxError, match="isl could not read"):
        WORKER.ask(("{ [d0] -> [", "{ }"), Deadline(60))
    killed = WORKER._process
    assert killed is not None
    killed.kill()
    killed.wait()  # a worker that died between questions is started afresh
    assert WORKER.ask(("{ [d0] -> [d0] }", "{ [d0] -> [d0] }"), Deadline(60)) is None
    assert WORKER._process is not killed


@pytest.mark.parametrize("method", [pytest.param("isl", marks=ISL),
                                    pytest.param("smt", marks=Z3)])
def test_an_infinite_limit_means_no_limit(method):
    a = parse_map("(d0) -> (d0 floordiv 2 * 2 + d0 mod 2), domain: d0 in [0, 99999]")
    b = parse_map("(d0) -> (d0), domain: d0 in [0, 99999]")
    assert decide(a, b, cpu_limit=float("inf"), method=method).equal
    wrong = parse_map("(d0) -> (d0 floordiv 2 * 2), domain: d0 in [0, 99999]")
    verdict = decide(wrong, b, cpu_limit=float("inf"), timeout=float("inf"), method=method)
    x = verdict.point[0]
    assert verdict.left == {(x - x % 2,)} and verdict.right == {(x,)} and x % 2 == 1


def test_enumeration_stops_at_its_deadline():
    a = parse_map("(d0, d1) -> (d0 * d1), domain: d0 in [0, 999], d1 in [0, 999]")
    b = parse_map("(d0, d1) -> (d1 * d0 + 0 * d0), domain: d0 in [0, 999], d1 in [0, 998]")
    with pytest.raises(Undecided, match="out of wall-clock time .* while enumerating"):
        decide(a, b, timeout=1e-9, method="enumerate")
    with pytest.raises(Undecided, match="out of CPU time .* while enumerating"):
        decide(a, b, cpu_limit=1e-9, method="enumerate")


def test_the_simplifier_stops_its_rounds_at_a_deadline():
    m = parse_map("(d0) -> ((d0 * 4 + 2) floordiv 4), domain: d0 in [0, 9]")
    done = simplify(m, trace=True, deadline=time.monotonic() - 1)
    assert done.map == m and done.stats.exhausted == ["time (the deadline passed)"]
    assert not simplify(m, trace=True).stats.exhausted
    assert simplify(m) != m  # the budget, not the rule, stopped it above


def test_a_trace_shares_one_deadline():
    m = parse_map("(d0) -> ((d0 * 4 + 2) floordiv 4), domain: d0 in [0, 9]")
    result = check_trace(m, timeout=1e-9)
    assert result.whole.verdict is None and "out of wall-clock time" in result.whole.undecided
    assert "time: wall-clock time (1e-09 s)" in result.stopped
    result = check_trace(m, cpu_limit=1e-9)
    assert result.whole.verdict is None and "out of CPU time" in result.whole.undecided
    assert "time: CPU time (1e-09 s)" in result.stopped
    code, out = run(["verify", "--trace", "--cpu-limit", "1e-9", str(m)])
    assert code == 3 and "undecided (out of CPU time" in out
    assert "the simplifier stopped early: its budget of time" in out


# --- issue 22, item 5: divisors whose range includes 0 ------------------------------------
ZERO_DIVISOR = "()[s0, s1] -> (s0 floordiv s1), domain: s0 in [0, 10], s1 in [0, 4]"


def test_the_divisor_zero_map_of_xla_parses_prints_and_evaluates():
    m = parse_map(ZERO_DIVISOR)  # was: a located parse error
    assert print_map(m, "xla") == ZERO_DIVISOR.replace("floordiv", "/")
    assert parse_map(print_map(m)) == m
    assert m.evaluate([], [7, 2]) == (3,)
    with pytest.raises(SymidxError, match=r"division by zero at \(7, 0\): a divisor is 0"):
        m.evaluate([], [7, 0])


def test_verify_treats_zero_divisor_points_as_outside_and_says_so():
    nonzero = ZERO_DIVISOR.replace("s1 in [0, 4]", "s1 in [1, 4]")
    code, out = run(["verify", ZERO_DIVISOR, nonzero])
    assert code == 0 and out.startswith("equal (exhaustive); a divisor can be 0 (s1 in s0 / s1)")
    assert "outside its definition" in out
    a = parse_map("(d0, d1) -> (d0 floordiv d1), domain: d0 in [0, 5], d1 in [0, 3]")
    b = parse_map("(d0, d1) -> (d0 floordiv max(d1, 1)), domain: d0 in [0, 5], d1 in [0, 3]")
    verdict = decide(a, b)
    assert (verdict.equal, verdict.point, verdict.left, verdict.right) == (
        False, (0, 0), frozenset(), {(0,)})


def brute_image(m: IndexingMap, point: tuple[int, ...]) -> set[tuple[int, ...]]:
    """The image of a source point from py_eval (no symidx evaluation involved)."""
    out = set()
    for symbols in itertools.product(*(range(b.lo, b.hi + 1) for b in m.ranges)):
        values = dict(zip(m.all_vars, (*point, *symbols)))
        if not all(b.lo <= v <= b.hi for v, b in zip(values.values(), m.all_bounds)):
            continue
        checks = [(py_eval(c, values), iv) for c, iv in m.constraints]
        results = [py_eval(r, values) for r in m.results]
        if any(v is None or v not in iv for v, iv in checks) or None in results:
            continue
        out.add(tuple(results))
    return out


@pytest.mark.parametrize("text", [
    ZERO_DIVISOR,
    "(d0, d1) -> ((d0 * d1) floordiv d1, d0 mod d1), domain: d0 in [0, 5], d1 in [-2, 3]",
    "(d0)[s0] -> ((d0 * s0) floordiv s0), domain: d0 in [0, 5], s0 in [0, 0]",
    "(d0, d1) -> (((d0 * (d1 - 1)) floordiv (d1 - 1)) mod 4), domain: d0 in [0, 5], "
    "d1 in [0, 3]",
])
def test_simplifying_and_composing_keep_zero_divisor_points_outside(text):
    m = parse_map(text)
    box = list(itertools.product(*(range(b.lo, b.hi + 1) for b in m.dims)))
    simplified = simplify(m)
    for point in box:
        assert simplified.image(point) == brute_image(m, point), point
    spread = IndexingMap.create([(0, 7)], [Mod(dim(0), b.hi + 1) for b in m.dims])
    if m.num_dims:
        composed = compose(spread, m)
        for x in range(8):
            inner = tuple(x % (b.hi + 1) for b in m.dims)
            inside = all(b.lo <= v for v, b in zip(inner, m.dims))
            assert composed.image((x,)) == (brute_image(m, inner) if inside else set())


def test_point_sets_leave_zero_divisor_points_out():
    # at s1 = 0 numpy's s0 // 0 is 0, so the 10 would appear if the zeros were kept
    m = parse_map("()[s0, s1] -> (s0 floordiv s1 + (1 - s1) * 10), "
                  "domain: s0 in [0, 3], s1 in [0, 1]")
    assert pointsets.image(m, "explicit").points() == [(0,), (1,), (2,), (3,)]


# --- issue 23, items 7 and 9: pickling, long integers --------------------------------------
def test_a_map_pickles_after_a_decision_used_it():
    a = parse_map("(d0)[s0] -> (d0 floordiv 2 + s0), domain: d0 in [0, 9], s0 in [0, 1]")
    b = parse_map("(d0)[s0] -> (d0 floordiv 2 + s0), domain: d0 in [0, 9], s0 in [0, 2]")
    assert not equal(a, b) and a.evaluate([3], [1]) == (2,)
    copy = pickle.loads(pickle.dumps(a))  # was: "Can't pickle local object"
    assert copy == a and copy.evaluate([3], [1]) == (2,) and not equal(copy, b)


def test_integers_past_4300_digits_read_print_and_verify():
    from symidx.core.indexing_map.text import int_of_digits

    big = 10**5000 - 1
    digits = "9" * 5000
    text = f"(d0) -> (d0 + {digits}), domain: d0 in [0, 3]"
    m = parse_map(text)  # was: ValueError from int()
    assert m.evaluate([1]) == (big + 1,)
    assert parse_map(print_map(m, "xla")) == m and print_map(m, "xla") == text
    code, out = run(["verify", f"(d0) -> (d0), domain: d0 in [0, {digits}]",
                     f"(d0) -> (d0 * d0), domain: d0 in [0, {digits}]"])
    assert code == 1 and out.startswith("different at (")
    point = int_of_digits(out[len("different at ("):out.index(")")])
    assert point != point * point and 0 <= point <= big


def test_an_integer_past_the_digit_limit_is_a_located_error():
    text = "(d0) -> (d0 + " + "7" * 100_001 + "), domain: d0 in [0, 3]"
    with pytest.raises(ParseError, match="100001 digits") as info:
        parse_map(text)
    assert (info.value.line, info.value.column) == (1, text.index("7") + 1)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@ISL
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux's /proc")
def test_the_isl_worker_dies_with_the_process_that_started_it():
    script = ("import sys; from symidx import parse_map; from symidx.core.verify import decide; "
              "decide(parse_map(sys.argv[1]), parse_map(sys.argv[2]), timeout=600, "
              "method='isl')")
    parent = subprocess.Popen([sys.executable, "-c", script, EXTRACT_FROM_MOD,
                               EXTRACT_FROM_MOD_SIMPLIFIED])
    try:
        workers: list[int] = []
        for _ in range(600):  # until the worker is up (bounded: a minute)
            workers = _children(parent.pid)
            if workers or parent.poll() is not None:
                break
            time.sleep(0.1)
        assert len(workers) == 1, "the decision should be running in one worker"
        time.sleep(0.5)  # let the worker reach isl
    finally:
        parent.kill()
        parent.wait()
    for _ in range(600):  # until the kernel has killed it (bounded: a minute)
        if not _alive(workers[0]):
            break
        time.sleep(0.1)
    assert not _alive(workers[0]), "the isl worker outlived the process that started it"
