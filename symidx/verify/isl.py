"""Maps as isl integer relations (islpy), and equality decided by isl.

isl implements Presburger arithmetic exactly: a map becomes the relation
``{ [d...] -> [o...] : exists s..., rt... : o = results and the domain }`` (range and
runtime variables existentially quantified), and two relations are equal or isl gives a
point of their difference.

islpy is optional: ``pip install 'symidx[isl]'``.
"""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import select
import signal
from collections.abc import Callable
from typing import Any

from symidx.errors import MapError, SymidxError, Undecided
from symidx.expr import CeilDiv, Expr, FloorDiv, Max, Min, Mod
from symidx.indexing_map import IndexingMap
from symidx.indexing_map.text import int_text
from symidx.verify.common import Deadline, non_presburger_reason
from symidx.verify.enumeration import image_at
from symidx.verify.verdict import Verdict

__all__ = ["has_isl", "isl_module", "isl_text", "isl_expr", "decide_by_isl"]


def has_isl() -> bool:
    """Is islpy (the ``isl`` extra) importable?"""
    try:
        import islpy  # noqa: F401
    except ImportError:
        return False
    return True


def isl_module() -> Any:
    """The islpy module, or :class:`Undecided` naming the extra to install."""
    try:
        import islpy
    except ImportError:
        raise Undecided("islpy is not installed (pip install 'symidx[isl]')") from None
    return islpy


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
    Presburger (:func:`~symidx.verify.common.non_presburger_reason` said None).

    isl runs in C and cannot be interrupted from Python, and some maps keep it busy for
    many minutes: with a ``deadline`` (and where the platform can fork) it runs in a child
    process that is killed when the time is up, and the answer is :class:`Undecided`
    saying so. Without a deadline (or with an infinite one) isl runs here, unbounded,
    without the cost of a fork (tens of milliseconds for a large process)."""
    isl_module()  # Undecided, naming the extra, when islpy is missing
    text = _text if checked else isl_text
    ta, tb = text(a), text(b)
    if deadline is None or math.isinf(deadline.seconds) or not hasattr(os, "fork"):
        found = _isl_difference(ta, tb)
    else:
        found = _bounded(_isl_difference, (ta, tb), deadline, "isl was deciding")
    if found is None:
        return Verdict(True, "isl")
    point = tuple(found[:b.num_dims if a.is_known_empty else a.num_dims])
    return Verdict(False, "isl", point, image_at(a, point, deadline=deadline),
                   image_at(b, point, deadline=deadline))


def _isl_difference(ta: str, tb: str) -> list[int] | None:
    """None if the two isl maps are equal, else the coordinates (source then target) of a
    pair in one and not the other."""
    isl = isl_module()
    ia, ib = read_map(isl, ta), read_map(isl, tb)
    if ia.is_equal(ib):
        return None
    extra = ia.subtract(ib) if not ia.is_subset(ib) else ib.subtract(ia)
    first = extra.wrap().sample_point()
    return [first.get_coordinate_val(isl.dim_type.set, i).to_python()
            for i in range(first.get_space().dim(isl.dim_type.set))]


def _bounded(work: Callable[..., Any], args: tuple[Any, ...], deadline: Deadline,
             doing: str) -> Any:
    """``work(*args)`` in a forked child process, its answer pickled back through a pipe;
    the child is killed (SIGKILL) when ``deadline`` passes first, and the answer is then
    :class:`Undecided`. An exception in the child is raised again here."""
    remaining = deadline.remaining()
    if remaining <= 0:
        raise Undecided(f"out of time ({deadline.seconds:g} s) before {doing.split()[0]} "
                        f"started")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, leave without running the parent's cleanup
        code = 0
        try:
            os.close(read_end)
            try:
                payload = pickle.dumps((True, work(*args)))
            except BaseException as e:  # noqa: BLE001 -- carried to the parent whole
                payload = pickle.dumps((False, _portable(e)))
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
        except BaseException:  # noqa: BLE001 -- nothing may escape a forked child
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    try:
        data = _read_until(read_end, deadline)
    finally:
        os.close(read_end)
        if data is None:
            _kill(pid)
        else:
            os.waitpid(pid, 0)
    if data is None:
        raise Undecided(f"out of time ({deadline.seconds:g} s) while {doing}; it was "
                        f"stopped")
    if not data:
        raise Undecided(f"the process in which {doing} stopped without an answer")
    ok, value = pickle.loads(data)
    if not ok:
        raise value
    return value


def _read_until(fd: int, deadline: Deadline) -> bytes | None:
    """Everything written to the pipe until the writer closes it, or None if the deadline
    passes first."""
    chunks: list[bytes] = []
    while True:
        remaining = deadline.remaining()
        if remaining <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            return None
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _portable(e: BaseException) -> BaseException:
    """The exception itself if it pickles, else a :class:`SymidxError` with its text."""
    try:
        pickle.loads(pickle.dumps(e))
    except Exception:  # noqa: BLE001 -- any failure to round-trip
        return SymidxError(f"{type(e).__name__}: {e}")
    return e
