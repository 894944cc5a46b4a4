"""Maps as isl integer relations (islpy), and equality decided by isl.

isl implements Presburger arithmetic exactly: a map becomes the relation
``{ [d...] -> [o...] : exists s..., rt... : o = results and the domain }`` (range and
runtime variables existentially quantified), and two relations are equal or isl gives a
point of their difference.

islpy is optional: ``pip install 'symidx[isl]'``.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import pickle
import select
import subprocess
import sys
import threading
from typing import Any

from symidx._budget import POLL, WorkerMeter
from symidx.core.expr import CeilDiv, Expr, FloorDiv, Max, Min, Mod
from symidx.core.indexing_map import IndexingMap
from symidx.core.indexing_map.text import int_text
from symidx.core.verify import isl_worker
from symidx.core.verify.common import Deadline, has_module, non_presburger_reason, optional_module
from symidx.core.verify.enumeration import image_at
from symidx.core.verify.isl_worker import HEADER, difference, message
from symidx.core.verify.verdict import Verdict
from symidx.errors import MapError, SymidxError, Undecided

__all__ = ["has_isl", "isl_module", "isl_text", "isl_expr", "decide_by_isl"]


def has_isl() -> bool:
    """Is islpy (the ``isl`` extra) importable?"""
    return has_module("islpy")


def isl_module() -> Any:
    """The islpy module, or :class:`Undecided` naming the extra to install."""
    return optional_module("islpy", "isl")


def isl_text(m: IndexingMap) -> str:
    """The map as isl text: dimension variables ``d0...``, outputs ``o0...``, range
    variables ``s0...`` and runtime variables ``r0...`` existentially quantified."""
    if m.is_undefined:
        raise MapError("an UNDEFINED map has no relation")
    reason = non_presburger_reason(m)
    if reason is not None:
        raise Undecided(f"isl works in Presburger arithmetic: {reason}")
    return _text(m)


def _text(m: IndexingMap) -> str:
    """:func:`isl_text` of a defined map already known to be Presburger."""
    dims = [f"d{i}" for i in range(m.num_dims)]
    ranges = [f"s{j}" for j in range(m.num_ranges)]
    rts = [f"r{k}" for k in range(m.num_rts)]
    hidden = ranges + rts
    outs = [f"o{i}" for i in range(m.num_results)]
    space = f"[{', '.join(dims)}] -> [{', '.join(outs)}]"
    if m.is_known_empty:
        return f"{{ {space} : false }}"
    names = dict(zip(m.all_vars, dims + ranges + rts))
    memo: dict[Expr, str] = {}
    parts = [f"{o} = {isl_expr(e, names, memo)}" for o, e in zip(outs, m.results)]
    parts += [f"{int_text(b.lo)} <= {names[v]} <= {int_text(b.hi)}"
              for v, b in zip(m.all_vars, m.all_bounds)]
    parts += [f"{int_text(iv.lo)} <= {isl_expr(c, names, memo)} <= {int_text(iv.hi)}"
              for c, iv in m.constraints]
    body = " and ".join(parts) or "true"
    if hidden:
        body = f"exists ({', '.join(hidden)} : {body})"
    return f"{{ {space} : {body} }}"


def isl_expr(e: Expr, names: dict[Any, str], memo: dict[Expr, str] | None = None) -> str:
    """A quasi-affine expression in isl's syntax. isl's ``floor``, ``ceil`` and ``mod`` take
    positive divisors (``mod`` then has floor semantics, as ours); a negative divisor is
    the positive one applied to ``-x``: ``floor(x / -c) = floor(-x / c)``, and
    ``x mod -c = -((-x) mod c)``. ``memo`` keeps the text of shared sub-expressions."""
    if memo is None:
        memo = {}
    got = memo.get(e)
    if got is None:
        got = memo[e] = _isl_expr(e, names, memo)
    return got


def _isl_expr(e: Expr, names: dict[Any, str], memo: dict[Expr, str]) -> str:
    if e.is_Integer:
        return int_text(int(e))
    if e.is_Symbol:
        return names[e]
    if isinstance(e, (FloorDiv, Mod, CeilDiv)):
        x, c = isl_expr(e.args[0], names, memo), int(e.args[1])
        if c < 0:  # the same operation on -x by -c (negated for mod)
            x, c = f"(-{x})", -c
            if isinstance(e, Mod):
                return f"(-({x} mod {int_text(c)}))"
        if isinstance(e, Mod):
            return f"({x} mod {int_text(c)})"
        return f"{'floor' if isinstance(e, FloorDiv) else 'ceil'}({x} / {int_text(c)})"
    args = [isl_expr(a, names, memo) for a in e.args]
    if e.is_Add:
        return "(" + " + ".join(args) + ")"
    if e.is_Mul:
        return "(" + " * ".join(args) + ")"
    if isinstance(e, (Min, Max)):
        return f"{'min' if isinstance(e, Min) else 'max'}({args[0]}, {args[1]})"
    raise Undecided(f"isl has no form for {e}")


def read_map(isl: Any, text: str) -> Any:
    """isl's map for the text (isl normalises it while reading)."""
    try:
        return isl.Map(text)
    except isl.Error as e:  # a translation isl rejects: a bug of ours, said plainly
        raise SymidxError(f"isl rejected the translation {text!r}: {e}") from None


def decide_by_isl(a: IndexingMap, b: IndexingMap, checked: bool = False,
                  deadline: Deadline | None = None) -> Verdict:
    """Equality of two defined maps of the same arity (either may be known empty): equal,
    or a (source, target) pair in one and not the other (isl's sample of the difference;
    its lexicographic minimum can cost seconds). ``checked``: the maps are known to be
    Presburger (:func:`~symidx.core.verify.common.non_presburger_reason` said None).

    isl runs in C and cannot be interrupted from Python, and some maps keep it busy for
    many minutes: with a finite ``deadline`` it runs in a worker process
    (:mod:`symidx.core.verify.isl_worker`, started once and reused), whose CPU time counts in
    the budget (read from ``/proc`` as it works) and which is killed when the budget is
    spent; the answer is then :class:`Undecided` saying so. Without a deadline (or with
    one without limits) isl runs here, unbounded."""
    isl = isl_module()  # Undecided, naming the extra, when islpy is missing
    text = _text if checked else isl_text
    ta, tb = text(a), text(b)
    if deadline is None or math.isinf(deadline.remaining()):
        try:
            found = difference(isl, ta, tb)
        except isl.Error as e:  # a translation isl rejects: a bug of ours, said plainly
            raise SymidxError(f"isl rejected the translation: {e}") from None
    else:
        found = WORKER.ask((ta, tb), deadline)
    if found is None:
        return Verdict(True, "isl")
    point = tuple(found[:b.num_dims if a.is_known_empty else a.num_dims])
    return Verdict(False, "isl", point, image_at(a, point, deadline=deadline),
                   image_at(b, point, deadline=deadline))


class _Worker:
    """The isl worker process: started on first use, asked one question at a time (a
    lock), killed when an answer does not come by the deadline (the next question starts
    a fresh one)."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def ask(self, question: tuple[str, str], deadline: Deadline) -> list[int] | None:
        while not self._lock.acquire(timeout=deadline.wait_slice() or POLL):
            if deadline.spent() is not None:
                raise Undecided(f"{deadline.out_of()} waiting for isl, busy with another "
                                f"decision")
        try:
            return self._ask(question, deadline)
        finally:
            self._lock.release()

    def _ask(self, question: tuple[str, str], deadline: Deadline) -> list[int] | None:
        if deadline.spent() is not None:
            raise Undecided(f"{deadline.out_of()} before isl started")
        try:
            fd = self._send(question)
        except OSError:  # the worker died since its last answer: one fresh start
            self.stop()
            fd = self._send(question)
        assert self._process is not None
        answer = _read_answer(fd, deadline, WorkerMeter(self._process.pid))
        if answer is None or answer is _DIED:
            self.stop()
            if answer is _DIED:
                raise Undecided("the isl worker stopped without an answer")
            raise Undecided(f"{deadline.out_of()} while isl was deciding; it was stopped")
        ok, value = answer
        if not ok:
            raise SymidxError(f"isl could not read or decide the translation: {value}")
        return value

    def _send(self, question: tuple[str, str]) -> int:
        """Write the question to the worker (started if need be); its stdout's fd."""
        process = self._started()
        stdin, stdout = process.stdin, process.stdout
        if stdin is None or stdout is None:
            raise SymidxError("the isl worker has no pipes")
        stdin.write(message(question))
        stdin.flush()
        return stdout.fileno()

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            # run as a script through runpy: neither its folder nor the current one joins
            # sys.path, so nothing here can shadow a module islpy imports
            boot = ("import runpy, sys; sys.path[:] = [p for p in sys.path if p not in "
                    "('', '.')]; runpy.run_path(sys.argv[1], run_name='__main__')")
            self._process = subprocess.Popen(
                [sys.executable, "-c", boot, isl_worker.__file__, str(os.getpid())],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return self._process

    def stop(self) -> None:
        """Kill the worker (if any) and wait for it."""
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


    def forget(self) -> None:
        """In a forked child: the parent's worker and lock are the parent's, not ours."""
        self._process = None
        self._lock = threading.Lock()


WORKER = _Worker()
"""The one isl worker of this process (stopped at exit; a forked child starts its own)."""
atexit.register(WORKER.stop)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=WORKER.forget)


_DIED = object()
"""What :func:`_read_answer` returns when the worker's stdout closed before an answer."""


def _read_answer(fd: int, deadline: Deadline, meter: WorkerMeter) -> Any:
    """One message from the worker, None if the budget is spent first (the worker's CPU,
    from ``meter``, counted in it as it goes), or :data:`_DIED` if the worker's output
    closed (it died: its answer will not come)."""
    data = b""
    size = None
    counted = 0.0
    try:
        while size is None or len(data) < HEADER.size + size:
            if deadline.spent() is not None:
                return None
            ready, _, _ = select.select([fd], [], [], deadline.wait_slice())
            used = meter.used()
            deadline.add_worker_cpu(used - counted)
            counted = used
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return _DIED
            data += chunk
            if size is None and len(data) >= HEADER.size:
                (size,) = HEADER.unpack(data[:HEADER.size])
    finally:
        deadline.add_worker_cpu(meter.used() - counted)
    return pickle.loads(data[HEADER.size:HEADER.size + size])
