"""Timing, rows and output: the part of the benchmark suite that does not know the cases.

Every figure is CPU time (:func:`cpu_seconds`: this process's, and that of the child
processes it has waited for), never wall time, which other processes on a busy machine
would inflate. A row's engines are interleaved: every repetition runs each engine once (in
an order that rotates), so a slow phase of the machine falls on all of them alike. The
garbage collector stays on -- it is a real cost of a sympy engine. A row reports each
engine's median and its spread (half the interquartile range); an engine that fails leaves
its error in the row, and the table goes on.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from symidx.bench.backends import Backend, NotExpressible
from symidx.core.expr import clear_caches
from symidx.core.indexing_map import IndexingMap
from symidx.errors import SymidxError

__all__ = ["Timing", "Row", "Operation", "measure_row", "measure_symidx", "format_table",
           "plot", "ENGINES", "cpu_seconds", "row_dict"]

ENGINES = ("symidx", "islpy", "MLIR")
"""The table's columns, in order."""

Operation = Callable[[Backend, list[Any]], object]


def cpu_seconds() -> float:
    """CPU seconds (user and system) of this process and of the child processes it has
    waited for. The suite times every engine in this process (symidx's isl proofs too:
    its backend asks for them without a deadline, so isl runs here rather than in a
    worker process); the children's share counts any process an engine starts and
    reaps."""
    return time.process_time() + _children_seconds()


def _children_seconds() -> float:
    """CPU seconds of the child processes waited for (0 where there is no ``resource``)."""
    try:
        import resource
    except ImportError:  # not a Unix
        return 0.0
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def _timed(fn: Callable[[], object]) -> float:
    """CPU seconds :func:`cpu_seconds` counts while ``fn()`` runs; the children's share is
    read outside this process's clock, so that reading it is not timed."""
    children = _children_seconds()
    start = time.process_time()
    fn()
    elapsed = time.process_time() - start
    return elapsed + (_children_seconds() - children)


@dataclass(frozen=True)
class Timing:
    """One engine's figures for one row, in seconds: the median and half the
    interquartile range of its samples."""

    median: float
    spread: float
    samples: int

    @classmethod
    def of(cls, samples: Sequence[float]) -> Timing:
        if len(samples) >= 2:
            q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
            spread = (q3 - q1) / 2
        else:
            spread = 0.0
        return cls(statistics.median(samples), spread, len(samples))


@dataclass(frozen=True)
class Row:
    """One line of the table: a case at one size; per engine its :class:`Timing`, or no
    entry (missing, or it cannot express the case); ``errors`` per engine that failed.
    ``detail`` tells rows of one case apart beyond their size (e.g. which sample)."""

    case: str
    size: int
    unit: str
    times: dict[str, Timing] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    detail: str = ""

    def median(self, engine: str) -> float | None:
        t = self.times.get(engine)
        return None if t is None else t.median

    @property
    def symidx(self) -> float | None:
        return self.median("symidx")

    @property
    def isl(self) -> float | None:
        return self.median("islpy")

    @property
    def mlir(self) -> float | None:
        return self.median("MLIR")


def measure_row(case: str, size: int, unit: str, backends: Sequence[Backend],
                build: Callable[[], Sequence[IndexingMap]], operation: Operation,
                repeats: int, warmup: int = 1, detail: str = "",
                from_text: bool = False) -> Row:
    """The row of one case at one size: ``repeats`` timed samples per engine after
    ``warmup`` untimed ones, the engines interleaved. Each engine's inputs are made
    untimed: the maps as its own objects (``prepare``), or with ``from_text`` as its own
    text (``prepare_text``), which the operation then reads (timed, on every side alike).
    Never raises: an engine that fails has its error in the row."""
    samples: dict[str, list[float]] = {b.name: [] for b in backends}
    errors: dict[str, str] = {}
    dropped: set[str] = set()
    for rep in range(warmup + repeats):
        shift = rep % max(1, len(backends))
        for b in [*backends[shift:], *backends[:shift]]:
            if b.name in errors or b.name in dropped:
                continue
            try:
                inputs = b.prepare_text(build) if from_text else b.prepare(build)
                elapsed = _timed(partial(operation, b, inputs))
            except NotExpressible:
                dropped.add(b.name)
                continue
            except Exception as e:  # a failing engine is reported, the table goes on
                errors[b.name] = _error_text(e)
                continue
            if rep >= warmup:
                samples[b.name].append(elapsed)
    times = {name: Timing.of(s) for name, s in samples.items()
             if s and name not in errors and name not in dropped}
    return Row(case, size, unit, times, errors, detail)


def measure_symidx(case: str, size: int, unit: str, fn: Callable[[], object], repeats: int,
                   detail: str = "") -> Row:
    """A symidx-only row: ``fn()`` timed ``repeats`` times after an untimed call, caches
    cleared (untimed) before each. Never raises."""
    samples = []
    try:
        for rep in range(repeats + 1):
            clear_caches()
            elapsed = _timed(fn)
            if rep:
                samples.append(elapsed)
    except Exception as e:  # reported in the row
        return Row(case, size, unit, errors={"symidx": _error_text(e)}, detail=detail)
    return Row(case, size, unit, {"symidx": Timing.of(samples)}, detail=detail)


def _error_text(e: Exception) -> str:
    text = str(e).splitlines()[0] if str(e) else ""
    kind = "" if isinstance(e, SymidxError) else f"{type(e).__name__}: "
    return (kind + text)[:160]


# --- output ---------------------------------------------------------------------------------


def _seconds(t: float) -> str:
    if t < 1e-3:
        return f"{t * 1e6:.0f} us"
    if t < 1:
        return f"{t * 1e3:.2f} ms"
    return f"{t:.2f} s"


def _cell(row: Row, engine: str) -> str:
    if engine in row.errors:
        return "error"
    t = row.times.get(engine)
    if t is None:
        return "-"
    spread = f" ±{100 * t.spread / t.median:.0f}%" if t.median > 0 and t.samples > 1 else ""
    return _seconds(t.median) + spread


def _ratio(row: Row, other: str) -> str:
    ratio = _ratio_value(row, other)
    return "-" if ratio is None else f"{ratio:.2f}"


def _size(n: int, unit: str) -> str:
    text = f"1e{len(str(n)) - 1}" if n >= 10**5 and str(n).rstrip("0") == "1" else str(n)
    return f"{text} {unit}"


def _ratio_value(row: Row, other: str) -> float | None:
    a, b = row.symidx, row.median(other)
    return None if a is None or b is None or b == 0 else a / b


def row_dict(row: Row) -> dict[str, Any]:
    """A row as a JSON-able dict (``symidx bench --json``): case, size, unit, detail, per
    engine its median and spread in CPU seconds and its sample count, the errors, and the
    ratios symidx / engine."""
    return {
        "case": row.case, "size": row.size, "unit": row.unit, "detail": row.detail,
        "times": {name: {"median": t.median, "spread": t.spread, "samples": t.samples}
                  for name, t in row.times.items()},
        "errors": dict(row.errors),
        "ratios": {other: _ratio_value(row, other) for other in ENGINES[1:]},
    }


def format_table(rows: Sequence[Row]) -> str:
    """The rows as a fixed-width table: each engine's median ± spread, the symidx/islpy
    and symidx/MLIR ratios of medians, and the errors of engines that failed."""
    header = ("case", "size", *ENGINES, "/islpy", "/MLIR")
    body = [(f"{r.case} ({r.detail})" if r.detail else r.case, _size(r.size, r.unit),
             *(_cell(r, e) for e in ENGINES), _ratio(r, "islpy"), _ratio(r, "MLIR"))
            for r in rows]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i < 2 else cell.rjust(w)
                       for i, (cell, w) in enumerate(zip(line, widths))).rstrip()
             for line in [header, *body]]
    for k, r in enumerate(rows):
        if r.errors:
            lines[k + 1] += "  ! " + "; ".join(f"{e}: {msg}" for e, msg in r.errors.items())
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def plot(rows: Sequence[Row], path: str) -> bool:
    """Write a PNG of cost against size: one panel per case measured at several sizes,
    a line per engine; False (and no file) if no case has several sizes. Requires
    matplotlib (the ``plot`` extra)."""
    try:
        from matplotlib.figure import Figure  # a figure of its own: no global backend
    except ImportError:
        raise SymidxError("matplotlib is not installed: pip install 'symidx[plot]'") from None

    series: dict[str, list[Row]] = {}
    for r in rows:
        series.setdefault(r.case, []).append(r)
    panels = {case: rs for case, rs in series.items() if len(rs) > 1}
    if not panels:
        return False
    columns = min(3, len(panels))
    count = (len(panels) + columns - 1) // columns
    fig = Figure(figsize=(4.5 * columns, 3.6 * count))
    axes = fig.subplots(count, columns, squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, (case, unsorted) in zip(axes.flat, panels.items()):
        rs = sorted(unsorted, key=lambda r: r.size)
        joined = not any(r.detail for r in rs)  # separate samples are points, not a line
        for engine, style in zip(ENGINES, ("o-", "s--", "^:")):
            points = [(r.size, r.median(engine)) for r in rs if r.median(engine) is not None]
            if points:
                xs, ys = zip(*points)
                ax.plot(xs, ys, style if joined else style[0], label=engine)
        sizes = [r.size for r in rs]
        ax.set_xscale("log" if sizes[-1] >= 100 * sizes[0] else "linear")
        ax.set_yscale("log")
        ax.set_title(case)
        ax.set_xlabel(rs[0].unit)
        ax.set_ylabel("seconds")
        ax.legend()
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=100)
    except OSError as e:
        raise SymidxError(f"cannot write {path}: {e.strerror or e}") from None
    return True
