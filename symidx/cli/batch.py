"""symidx batch: many commands in one process, so that scripts pay the start-up once.

Each line of stdin is a JSON object ``{"args": ["maps", "f.hlo", "--all", "--format",
"json"], "id": ANY}`` (``id`` optional, echoed); each answer is one line of JSON on stdout,
in the same order: ``{"id", "exit", "stdout", "stderr"}``, plus ``"result"`` (the parsed
document) when the command printed JSON. Blank lines are skipped; a line that is not such an
object is answered with ``"exit": 2`` and the reason in ``"stderr"``, and so is a command
that would read stdin (an argument ``-``: stdin holds the queries). Every line is answered:
a command that fails in a way symidx did not foresee (a bug) is answered with ``"exit": 70``
and ``"stderr"`` naming the error, and the next line is read; with ``--cpu-limit S`` (CPU
seconds, a budget of work) or ``--timeout S`` (seconds of the wall clock), a command still
running past S is answered with ``"exit": 3`` (``symidx: stopped: ran out of ...``). A
module read from a file is parsed once while the file's contents are unchanged. Progress
is never part of an answer (it goes to a terminal, and an answer's stderr is none).

SIGTERM, SIGINT (Ctrl-C) and SIGHUP end the batch: the line under way is answered with the
exit code of the signal (143, 130, 129) and ``"stderr"`` saying so, no further line is
read, and the batch exits with that code. (A command that handles the signal itself, such
as ``corpus``, which stops its workers and says what it recorded, answers in its own words;
the batch stops all the same.)

    $ echo '{"id": 1, "args": ["simplify", "(d0) -> (d0 mod 8), domain: d0 in [0, 7]"]}' \\
        | symidx batch
    {"id": 1, "exit": 0, "stdout": "(d0) -> (d0),\\ndomain:\\nd0 in [0, 7]\\n", "stderr": ""}
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json  # here, not when the command line starts: only batch needs it
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from symidx.cli.common import add_time_limits
from symidx.cli.signals import exit_code, how, stopped_by_signals
from symidx.errors import LimitReached

#: The exit code of a command that failed in a way symidx did not foresee (sysexits'
#: EX_SOFTWARE).
INTERNAL_ERROR = 70


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("batch", help="answer JSON-lines commands from stdin, one per line",
                       description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_time_limits(p, 0.0, "each line", "it is answered with exit 3 and the next line read",
                    unset="the command's own limits, such as maps' --cpu-limit")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    limits = Limits(getattr(args, "cpu_limit", 0.0) or None,
                    getattr(args, "timeout", 0.0) or None)
    with stopped_by_signals(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as received:
        try:
            for number, line in enumerate(_lines(), 1):
                if isinstance(line, bytes):  # not UTF-8
                    reply = {"id": None, "exit": 2, "stdout": "",
                             "stderr": _not_utf8(line, number)}
                elif not line.strip():
                    continue
                else:
                    reply = answer(line, args.command_line, limits)
                print(json.dumps(reply), flush=True)
                if received:  # a command under way handled the signal: the batch ends too
                    return 128 + received[-1]
        except KeyboardInterrupt as e:  # between two lines: nothing under way to answer
            return exit_code(e)
    return 0


def _lines() -> Iterator[str | bytes]:
    """The lines of stdin: text, or the raw bytes of a line that is not UTF-8."""
    source = getattr(sys.stdin, "buffer", None)
    if source is None:
        yield from sys.stdin
        return
    for raw in source:
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError:
            yield raw


def _not_utf8(raw: bytes, number: int) -> str:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        column = len(raw[:e.start].decode("utf-8", errors="replace")) + 1
        return f"line {number}, column {column}: not UTF-8: byte 0x{raw[e.start]:02x}"
    return f"line {number}: not UTF-8"


class Limits(NamedTuple):
    """The limits of each line (None: none): CPU seconds, seconds of the wall clock."""

    cpu: float | None = None
    wall: float | None = None


def answer(line: str, main: Callable[[Sequence[str]], int],
           limits: Limits | float | None = None) -> dict[str, Any]:
    """The answer to one line of input (see the module docstring), running its command
    with ``main`` (:func:`symidx.cli.main`; passed in, as the command line imports this
    module), within ``limits`` (a number: seconds of the wall clock; see
    :func:`_limited`). An interrupt (Ctrl-C, or a signal :func:`stopped_by_signals` turns
    into one) is answered with its exit code and raised no further: the caller sees it in
    :data:`~symidx.cli.signals.RECEIVED`."""
    if not isinstance(limits, Limits):
        limits = Limits(wall=limits)
    try:
        query = json.loads(line)
    except ValueError as e:
        return {"id": None, "exit": 2, "stdout": "", "stderr": f"not JSON: {e}"}
    argv = query.get("args") if isinstance(query, dict) else None
    ident = query.get("id") if isinstance(query, dict) else None
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv) or not argv:
        return {"id": ident, "exit": 2, "stdout": "",
                "stderr": 'expected {"args": ["verb", ...], "id": ...}'}
    if argv[0] == "batch":
        return {"id": ident, "exit": 2, "stdout": "", "stderr": "batch does not nest"}
    if "-" in argv[1:]:
        return {"id": ident, "exit": 2, "stdout": "",
                "stderr": f"argument {argv.index('-', 1)} is '-' (read stdin), which batch "
                          f"cannot give a command: its stdin holds the queries; put the "
                          f"text in the argument, or in a file"}
    nul = next((k for k, a in enumerate(argv) if "\0" in a), None)
    if nul is not None:  # no command line can hold one: no path, map or name does
        return {"id": ident, "exit": 2, "stdout": "",
                "stderr": f"argument {nul} holds a NUL character (\\u0000), which no "
                          f"command line can"}
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _no_stdin():
        try:
            with _limited(limits):
                code = main(argv)
        except LimitReached as e:  # the line's own time ran out (main answers the others)
            print(f"symidx: stopped: {e}", file=sys.stderr)
            code = 3
        except KeyboardInterrupt as e:  # answered; the batch stops (see run)
            print(f"symidx: {how(e)}", file=sys.stderr)
            code = exit_code(e)
        except Exception as e:  # noqa: BLE001 - a bug: answered, and the next line read
            print(f"symidx: internal error (a bug in symidx, please report it): "
                  f"{type(e).__name__}: {_first_line(e)}", file=sys.stderr)
            code = INTERNAL_ERROR
    reply: dict[str, Any] = {"id": ident, "exit": code, "stdout": out.getvalue(),
                             "stderr": err.getvalue()}
    text = out.getvalue().lstrip()
    if text[:1] in ("{", "["):
        with contextlib.suppress(ValueError):
            reply["result"] = json.loads(text)
    return reply


@contextlib.contextmanager
def _limited(limits: Limits) -> Iterator[None]:
    """Raise :class:`~symidx.errors.LimitReached` in the command once it has used
    ``limits.cpu`` CPU seconds or taken ``limits.wall`` seconds: a budget every analysis,
    decision and enumeration checks where it checks its own
    (:func:`symidx._budget.command_budget`), and a timer signal for other work (the
    process's CPU time, or the wall clock; where there is none, or off the main thread,
    the checks alone apply)."""
    if limits.cpu is None and limits.wall is None:
        yield
        return
    from symidx._budget import TimeBudget, command_budget

    words = [f"CPU time ({limits.cpu:g} s, batch --cpu-limit)"] if limits.cpu else []
    words += [f"time ({limits.wall:g} s, batch --timeout)"] if limits.wall else []
    what = " or ".join(words)
    timers = [(which, sig, after) for which, sig, after in (
        (signal.ITIMER_PROF, signal.SIGPROF, limits.cpu),
        (signal.ITIMER_REAL, signal.SIGALRM, limits.wall)) if after is not None] \
        if hasattr(signal, "setitimer") \
        and threading.current_thread() is threading.main_thread() else []

    def expire(signum: int, frame: object) -> None:
        raise LimitReached(what, "")

    # the analyses check the budget where maps compose; the signal stops other work
    # (its exception is lost if it lands in a finaliser, which the check does not mind)
    saved = [(sig, signal.signal(sig, expire)) for _, sig, _ in timers]
    for which, _, after in timers:
        signal.setitimer(which, after)
    try:
        with command_budget(TimeBudget(cpu=limits.cpu, wall=limits.wall), what):
            yield
    finally:
        for which, _, _ in timers:
            signal.setitimer(which, 0)
        for sig, handler in saved:
            signal.signal(sig, handler)


@contextlib.contextmanager
def _no_stdin() -> Iterator[None]:
    """An empty stdin while a command runs, so that nothing it does can read the queries
    that follow its own."""
    saved = sys.stdin
    sys.stdin = io.StringIO()
    try:
        yield
    finally:
        sys.stdin = saved


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return (text.splitlines() or [""])[0][:500]
