"""``symidx format | simplify | compose | verify``: commands on map text."""

from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from symidx.cli.common import UsageError, add_style, add_syntax, read_map

if TYPE_CHECKING:  # the map core (sympy) loads when a command runs, not for --help
    from sympy import Symbol

    from symidx.core.expr import Expr
    from symidx.core.indexing_map import IndexingMap
    from symidx.core.interval import Interval


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("format", help="parse a map and print it in canonical text, unchanged")
    p.add_argument("map", help="map text, or - to read it from stdin")
    add_style(p)
    add_syntax(p)
    p.set_defaults(run=run_format)

    p = sub.add_parser("simplify", help="print the simplified map")
    p.add_argument("map", help="map text, or - to read it from stdin")
    p.add_argument("--explain", action="store_true",
                   help="also print each rewrite step (rule, before, after), how often each "
                        "pass and rule was tried and fired, and whether the budget ran out")
    p.add_argument("--max-steps", type=int, default=None, metavar="N",
                   help="rewrite steps allowed per pass of a round (default: 2000); when "
                        "they run out the map printed is correct but less simple, and a "
                        "note on stderr says so")
    add_style(p)
    add_syntax(p)
    p.set_defaults(run=run_simplify)

    p = sub.add_parser("compose", help="second ∘ first (first applied first), simplified")
    p.add_argument("first", help="the map applied first")
    p.add_argument("second", help="the map applied to first's results")
    p.add_argument("--no-simplify", action="store_true", help="print the raw composition")
    add_style(p)
    add_syntax(p)
    p.set_defaults(run=run_compose)

    p = sub.add_parser(
        "verify", help="are two maps the same function on the same domain?",
        description="Prints 'equal (<method>)' (exit 0), 'different at <point>: <A's image> vs "
                    "<B's image>' (exit 1), or 'undecided: <reason>' (exit 3); bad input exits "
                    "2. Presburger maps (+, * by constants, floordiv/mod/ceildiv by constants, "
                    "min, max) are decided whatever their size; others are enumerated while "
                    "small enough. With --trace and one map: simplify it and decide every "
                    "rewrite step and the whole chain.")
    p.add_argument("a", help="map A")
    p.add_argument("b", nargs="?", help="map B (left out with --trace)")
    p.add_argument("--trace", action="store_true",
                   help="check every step of the simplifier's trace of map A, and A against "
                        "its simplified form")
    p.add_argument("--cpu-limit", type=float, metavar="S", default=None,
                   help="CPU seconds allowed, of this process and of the isl worker "
                        "(default: 60, a budget of work: the same answer on a busy machine "
                        "as on an idle one): for the decision, or with --trace for the "
                        "whole run (simplifying and every check); past it the answer is "
                        "'undecided' (exit 3)")
    p.add_argument("--timeout", type=float, metavar="S", default=None,
                   help="seconds of the wall clock allowed besides (default: no such limit; "
                        "on a busy machine it stops sooner in work done)")
    p.add_argument("--method", choices=("auto", "enumerate", "smt", "isl"), default="auto",
                   help="auto (default): enumerate a small domain, else prove with isl where "
                        "islpy is installed, else z3; enumerate: numpy over the domain box; "
                        "smt: z3; isl: islpy")
    add_syntax(p)
    p.set_defaults(run=run_verify)


def run_format(args: argparse.Namespace) -> int:
    from symidx.core.syntax import print_map

    print(print_map(read_map(args.map, "map", args.syntax), args.style))
    return 0


def run_simplify(args: argparse.Namespace) -> int:
    from symidx.core.simplify import Budget, simplify
    from symidx.core.syntax import print_expr, print_map

    budget = Budget()
    if args.max_steps is not None:
        if args.max_steps < 0:
            raise UsageError("--max-steps must be 0 or more")
        budget = Budget(steps=args.max_steps)
    m = read_map(args.map, "map", args.syntax)
    result = simplify(m, trace=True, budget=budget)
    if args.explain:
        names = dict(zip(m.all_vars, m.display_names()))
        style = "xla" if args.style == "xla" else "doc"
        for step in result.trace:
            before = print_expr(step.before, names, style)
            after = print_expr(step.after, names, style)
            print(f"{step.rule}: {before}  =>  {after}")
        print("\n".join(result.stats.report()))
        print()
    elif result.stats.exhausted:  # said without --explain too: the answer is not final
        print(f"symidx: note: the simplifier's budget ran out "
              f"({'; '.join(result.stats.exhausted)}): the map is correct, but may be less "
              f"simple than it could be (--max-steps N allows more)", file=sys.stderr)
    print(print_map(result.map, args.style))
    return 0


def run_compose(args: argparse.Namespace) -> int:
    from symidx.core.simplify import compose, simplify
    from symidx.core.syntax import print_map

    first = read_map(args.first, "first", args.syntax)
    second = read_map(args.second, "second", args.syntax)
    composed = compose(first, second)
    print(print_map(composed if args.no_simplify else simplify(composed), args.style))
    return 0


def run_verify(args: argparse.Namespace) -> int:
    from symidx.core.verify import decide
    from symidx.errors import Undecided

    for flag in ("timeout", "cpu_limit"):
        value = getattr(args, flag, None)
        if value is not None and not value > 0:
            raise UsageError(f"--{flag.replace('_', '-')} must be a positive number of seconds")
    cpu_limit = getattr(args, "cpu_limit", None)
    if args.trace:
        if args.b is not None:
            raise UsageError("verify --trace takes one map")
        return _verify_trace(read_map(args.a, "a", args.syntax), args.timeout, args.method,
                             cpu_limit)
    if args.b is None:
        raise UsageError("verify takes two maps (or one with --trace)")
    a, b = read_map(args.a, "a", args.syntax), read_map(args.b, "b", args.syntax)
    with ProgressLine("symidx verify") as progress:
        try:
            verdict = decide(a, b, args.timeout, args.method, progress=progress.tell,
                             cpu_limit=cpu_limit)
        except Undecided as e:
            print(f"undecided: {e.reason}")
            return 3
    print(verdict.describe())
    return 0 if verdict.equal else 1


def _step_side(e: Expr, interval: Interval | None, names: dict[Symbol, str]) -> str:
    from symidx.core.syntax import print_expr

    text = print_expr(e, names, "xla")
    return text if interval is None else f"{text} in {interval}"


def _verify_trace(m: IndexingMap, timeout: float | None, method: str,
                  cpu_limit: float | None = None) -> int:
    """Simplify ``m``; decide each recorded step and the whole chain. Exit 1 if any is
    different, else 3 if any is undecided or the time ran out, else 0."""
    from symidx.core.verify import StepCheck, check_trace

    names = dict(zip(m.all_vars, m.display_names()))
    count = [0]

    def report(k: int, check: StepCheck) -> None:
        if k == 0:
            print(f"{count[0]} step(s); simplified map: {check.describe()}")
            return
        count[0] = k
        step: Any = check.step
        print(f"step {k} {step.rule}: {_step_side(step.before, step.before_interval, names)}"
              f"  =>  {_step_side(step.after, step.after_interval, names)}: "
              f"{check.describe()}", flush=True)

    with ProgressLine("symidx verify --trace") as progress:
        result = check_trace(m, timeout, method, on_step=report, progress=progress.tell,
                             cpu_limit=cpu_limit)
    for why in result.stopped:
        print(f"the simplifier stopped early: its budget of {why} ran out")
    if result.refuted:
        return 1
    out_of_time = any(w.startswith("time") for w in result.stopped)
    return 0 if result.holds and not out_of_time else 3


class ProgressLine:
    """A context manager that, once the work inside has run for ``after`` seconds, prints
    what it is doing (the last thing it was told) on stderr, and again every ``every``
    seconds: a long proof is never silent on a terminal. Where stderr is not a terminal
    (a pipe, a log, a ``batch`` answer) it prints nothing: progress never enters an
    answer."""

    def __init__(self, label: str, after: float = 1.0, every: float = 10.0):
        self.label = label
        self.after = after
        self.every = every
        self.doing = "working"
        self._start = 0.0
        self._stream: Any = sys.stderr
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def tell(self, doing: str) -> None:
        self.doing = doing

    def __enter__(self) -> ProgressLine:
        self._start = time.monotonic()
        self._stream = sys.stderr
        if getattr(self._stream, "isatty", lambda: False)():
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()

    def _watch(self) -> None:
        wait = self.after
        while not self._done.wait(wait):
            elapsed = time.monotonic() - self._start
            print(f"{self.label}: {self.doing} ({elapsed:.0f} s so far)", file=self._stream,
                  flush=True)
            wait = self.every
