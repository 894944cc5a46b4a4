"""What a ``pallas_call``'s block specs do at every grid point, checked: blocks out of bounds,
partial edge blocks, output blocks written back twice or never (or by two cores), and the
footprint read.

**The model** (Pallas's, ``docs/pallas/grid_blockspec.md``): the grid is run in row-major
order, the last dimension fastest. At each grid point, each operand's block index (from its
``index_map``) selects the window ``[i b, i b + b)`` of each blocked dimension (the element
``i`` of a ``None`` dimension, ``[i, i + b)`` of a ``pl.Element(b)`` one). Input windows are
copied in before the kernel runs and output windows copied out after -- except that a block
whose index does not change from one grid point to the next stays where it is: an input is
not fetched again, an output is written back once, when its index changes or the grid ends
(so consecutive grid points may accumulate into one output block). A block that starts past
the end of the array (or before its start) is **out of bounds**: what Mosaic reads or
writes there is undefined (TPU interpret mode raises ``IndexError``); a blocked window that
starts inside but runs past the end is a **partial edge block**, padded with unspecified
values on input and cut on output (a note, not a problem). An output block written back at
two separate times -- its index left and came back -- loses the first write (outputs are not
read back); one that no grid point writes keeps whatever the output buffer held (unless the
output is aliased to an input); one shared by grid points that differ along a ``parallel``
dimension is written by cores that may run at once.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from symidx.pallas.trace import Call, Spec

__all__ = ["KernelReport", "OperandReport", "PallasReport", "check_call"]

#: Problems of one kind listed per operand; past it, a count.
_SHOWN = 3
#: Most elements an overlapping (``pl.Element``) footprint is counted on.
_MASK_LIMIT = 1 << 24


@dataclass
class OperandReport:
    """One operand: its :class:`~symidx.pallas.trace.Spec`, the grid points whose block is
    out of bounds (``out_of_bounds``, in iteration order, with the block index), the partial
    edge blocks visited (per dimension), output blocks written back more than once
    (``written_twice``, block -> the grid points that start each write), never written
    (``never_written``) or shared across a parallel dimension (``races``), and the
    footprint: distinct elements covered (``elements``), block copies made (``copies``) and
    the bytes they move (``bytes_moved``)."""

    spec: Spec
    out_of_bounds: list[tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=list)
    oob_count: int = 0
    partial: dict[int, int] = field(default_factory=dict)
    written_twice: dict[tuple[int, ...], list[tuple[int, ...]]] = field(default_factory=dict)
    never_written: list[tuple[int, ...]] = field(default_factory=list)
    never_count: int = 0
    races: list[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = field(
        default_factory=list)
    elements: int | None = None
    copies: int = 0
    bytes_moved: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def total_elements(self) -> int:
        return math.prod(self.spec.shape)

    def as_json(self) -> dict[str, Any]:
        s = self.spec
        return {
            "role": s.role, "position": s.position, "name": s.name, "origin": s.origin,
            "shape": list(s.shape), "dtype": s.dtype, "block": [str(d) for d in s.dims],
            "map": None if s.map is None else _map_text(s.map), "map_note": s.map_note,
            "checked": not s.unchecked, "unchecked": s.unchecked or None,
            "out_of_bounds": [{"grid_point": list(p), "block": list(b)}
                              for p, b in self.out_of_bounds],
            "out_of_bounds_count": self.oob_count,
            "partial_blocks": {str(k): v for k, v in self.partial.items()},
            "written_twice": [{"block": list(b), "grid_points": [list(p) for p in ps]}
                              for b, ps in self.written_twice.items()],
            "never_written": [list(b) for b in self.never_written],
            "never_written_count": self.never_count,
            "races": [{"block": list(b), "grid_points": [list(p), list(q)]}
                      for b, p, q in self.races],
            "elements": self.elements, "total_elements": self.total_elements,
            "copies": self.copies, "bytes_moved": self.bytes_moved,
            "problems": list(self.problems), "notes": list(self.notes),
        }


@dataclass
class KernelReport:
    """One ``pallas_call``: its :class:`~symidx.pallas.trace.Call` and one
    :class:`OperandReport` per block spec, inputs first."""

    call: Call
    operands: list[OperandReport]

    @property
    def problems(self) -> list[str]:
        return [p for o in self.operands for p in o.problems]

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        c = self.call
        return {"name": c.name, "where": c.where, "grid": list(c.grid),
                "dimension_semantics": None if c.semantics is None else list(c.semantics),
                "ok": self.ok, "operands": [o.as_json() for o in self.operands],
                "notes": list(c.notes)}


@dataclass
class PallasReport:
    """What :func:`symidx.pallas_report` found: one :class:`KernelReport` per
    ``pallas_call``. ``ok`` when no block spec has a problem; ``problems`` lists them, each
    located (the call, its source line, the operand, the grid point)."""

    kernels: list[KernelReport]

    @property
    def problems(self) -> list[str]:
        return [p for k in self.kernels for p in k.problems]

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def notes(self) -> list[str]:
        return [n for k in self.kernels for o in k.operands for n in o.notes] + [
            n for k in self.kernels for n in k.call.notes]

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-able data (``symidx pallas --format json``)."""
        return {"schema": "symidx.pallas/1", "ok": self.ok, "problems": self.problems,
                "kernels": [k.as_json() for k in self.kernels]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def __str__(self) -> str:
        lines = []
        for k in self.kernels:
            lines.append(f"{k.call.label}: {'ok' if k.ok else 'PROBLEMS'}")
            for o in k.operands:
                s = o.spec
                lines.append(f"  {s.label}")
                if s.unchecked:
                    lines.append(f"    not checked: {s.unchecked}")
                    continue
                computed = ("; block indices computed from the index map at every grid "
                            "point" if s.indices is not None and len(s.indices) else "")
                lines.append("    map: " + (_map_text(s.map) if s.map is not None else
                                            f"none ({s.map_note}){computed}"))
                lines.append(f"    {_footprint(o)}")
                lines.extend(f"    problem: {_short(p)}" for p in o.problems)
                lines.extend(f"    note: {n}" for n in o.notes)
        lines.append("ok" if self.ok else f"{len(self.problems)} problem"
                     f"{'s' if len(self.problems) != 1 else ''}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<PallasReport: {len(self.kernels)} pallas_call(s), "
                f"{'ok' if self.ok else f'{len(self.problems)} problem(s)'}>")

    def _repr_html_(self) -> str:
        """A table per ``pallas_call``: operand, block, map, footprint, problems and notes
        (what a notebook shows)."""
        parts = []
        for k in self.kernels:
            verdict = "ok" if k.ok else f"{len(k.problems)} problem(s)"
            parts.append(f"<p><b>{html.escape(k.call.label)}</b>: {html.escape(verdict)}</p>")
            parts.append("<table><tr><th>operand</th><th>map (grid point &rarr; block)</th>"
                         "<th>footprint</th><th>problems and notes</th></tr>")
            for o in k.operands:
                s = o.spec
                if s.unchecked:
                    mapped, foot, issues = "", "", [f"not checked: {s.unchecked}"]
                else:
                    mapped = _map_text(s.map) if s.map is not None else (
                        f"none ({s.map_note})")
                    foot = _footprint(o)
                    issues = [_short(p) for p in o.problems] + o.notes
                cells = "<br>".join(
                    (f"<span style='color:#b00'>{html.escape(i)}</span>"
                     if n < len(o.problems) else html.escape(i))
                    for n, i in enumerate(issues))
                parts.append(f"<tr><td>{html.escape(s.label)}</td><td><code>"
                             f"{html.escape(mapped)}</code></td><td>{html.escape(foot)}</td>"
                             f"<td>{cells}</td></tr>")
            parts.append("</table>")
        return "\n".join(parts)


def _map_text(m: Any) -> str:
    from symidx.core.syntax import print_map

    return print_map(m, "xla").split(", domain:")[0]


def _short(problem: str) -> str:
    """A problem without its location prefix (the text output shows the operand above)."""
    return problem.split(": ", 2)[-1]


def _footprint(o: OperandReport) -> str:
    s = o.spec
    verb = "reads" if s.role == "input" else "writes"
    covered = ("?" if o.elements is None else
               f"{o.elements} of {o.total_elements} elements "
               f"({100 * o.elements / max(o.total_elements, 1):.0f}%)")
    return (f"{verb} {covered}; {o.copies} block cop{'y' if o.copies == 1 else 'ies'}, "
            f"{o.bytes_moved} bytes moved")


def check_call(call: Call) -> KernelReport:
    """Check every block spec of ``call``."""
    points = call.points()
    return KernelReport(call, [_check(call, s, points) for s in call.specs])


def _check(call: Call, spec: Spec, points: np.ndarray) -> OperandReport:
    report = OperandReport(spec)
    where = f"{call.label}: {spec.label}"
    if spec.unchecked or spec.indices is None:
        if not spec.unchecked:
            spec.unchecked = "no block indices"
        return report
    idx = spec.indices
    if not len(idx):
        report.elements = 0
        if spec.role == "output" and spec.position not in call.aliased_outputs:
            report.never_count = math.prod(
                -(-n // d.size) for n, d in zip(spec.shape, spec.dims))
            report.problems.append(f"{where}: the grid has no points, so no block of the "
                                   f"output is written: it keeps whatever the buffer held")
        else:
            report.notes.append("the grid has no points: the kernel never runs")
        return report
    if spec.map is None and spec.map_note:  # (an empty grid returned above)
        report.notes.append(f"no indexing map: {spec.map_note}; the block indices were "
                            f"computed by running the index map alone at each grid point"
                            + (" with the example values of the scalar-prefetch operands"
                               if "prefetch" in spec.map_note else ""))
    starts = np.stack([d.start(idx[:, k]) for k, d in enumerate(spec.dims)], axis=1) \
        if spec.dims else idx
    sizes = np.array([d.size for d in spec.dims], dtype=np.int64)
    shape = np.array(spec.shape, dtype=np.int64)
    _bounds(report, where, points, idx, starts, sizes, shape)
    _footprints(report, idx, starts, sizes, shape)
    if spec.role == "output":
        _writes(report, where, call, points, idx, starts, shape)
    return report


def _bounds(report: OperandReport, where: str, points: np.ndarray, idx: np.ndarray,
            starts: np.ndarray, sizes: np.ndarray, shape: np.ndarray) -> None:
    spec = report.spec
    element = np.array([d.kind == "element" for d in spec.dims], dtype=bool)
    ends = starts + sizes
    outside = (starts < 0) | (starts >= shape) | (element & (ends > shape))
    bad = np.nonzero(outside.any(axis=1))[0] if len(spec.dims) else np.array([], dtype=int)
    report.oob_count = int(len(bad))
    for row in bad[:_SHOWN]:
        point, block = tuple(int(x) for x in points[row]), tuple(int(x) for x in idx[row])
        report.out_of_bounds.append((point, block))
        k = int(np.nonzero(outside[row])[0][0])
        lo, hi = int(starts[row, k]), int(ends[row, k]) - 1
        what = "element" if spec.dims[k].kind == "squeezed" else "elements"
        span = f"{lo}" if lo == hi else f"{lo}-{hi}"
        report.problems.append(
            f"{where}: block index {_tuple(block)} at grid point {_tuple(point)} is out of "
            f"bounds: {what} {span} of dimension {k}, which has {int(shape[k])}")
    if report.oob_count > _SHOWN:
        report.problems.append(f"{where}: and {report.oob_count - _SHOWN} more grid points "
                               f"with a block out of bounds")
    blocked = np.array([d.kind == "blocked" for d in spec.dims], dtype=bool)
    partial = blocked & (starts >= 0) & (starts < shape) & (ends > shape)
    for k in range(len(spec.dims)):
        rows = np.nonzero(partial[:, k])[0]
        if len(rows):
            blocks = np.unique(idx[rows, k])
            report.partial[k] = int(len(blocks))
            first = int(starts[rows[0], k])
            report.notes.append(
                f"partial edge block along dimension {k}: block {int(blocks[0])} covers "
                f"{first}-{first + int(sizes[k]) - 1} of {int(shape[k])} "
                + ("(the rows past the end read unspecified values: mask them)"
                   if spec.role == "input" else "(the part past the end is not written)"))


def _footprints(report: OperandReport, idx: np.ndarray, starts: np.ndarray,
                sizes: np.ndarray, shape: np.ndarray) -> None:
    spec = report.spec
    n = len(idx)
    changed = np.ones(n, dtype=bool)
    if n > 1:
        changed[1:] = (idx[1:] != idx[:-1]).any(axis=1) if idx.shape[1] else False
    report.copies = int(changed.sum())
    report.bytes_moved = report.copies * int(np.prod(sizes)) * spec.itemsize
    lo = np.clip(starts, 0, shape)
    hi = np.clip(starts + sizes, 0, shape)
    if all(d.kind != "element" for d in spec.dims):  # distinct blocks are disjoint
        _, first = np.unique(_keys(idx), return_index=True)
        report.elements = int(np.prod(hi[first] - lo[first], axis=1).sum())
    elif math.prod(spec.shape) <= _MASK_LIMIT:
        mask = np.zeros(spec.shape, dtype=bool)
        windows = np.concatenate([lo, hi], axis=1)
        _, first = np.unique(_keys(windows), return_index=True)
        for a, b in windows[first].reshape(-1, 2, len(spec.dims)):
            mask[tuple(slice(int(x), int(y)) for x, y in zip(a, b))] = True
        report.elements = int(mask.sum())
    else:
        report.notes.append("footprint not counted: overlapping windows on an array past "
                            f"{_MASK_LIMIT} elements")


def _writes(report: OperandReport, where: str, call: Call, points: np.ndarray,
            idx: np.ndarray, starts: np.ndarray, shape: np.ndarray) -> None:
    spec = report.spec
    n = len(idx)
    if not n or not len(spec.dims):
        return
    begins = np.ones(n, dtype=bool)
    begins[1:] = (idx[1:] != idx[:-1]).any(axis=1)
    rows = np.nonzero(begins)[0]  # each a residency's first grid point: one write-back
    _, block_of, counts = np.unique(_keys(idx[rows]), return_inverse=True,
                                    return_counts=True)
    again = np.nonzero(counts[block_of] > 1)[0]  # the write-backs of blocks written twice
    for r in again[np.argsort(block_of[again], kind="stable")]:
        block = tuple(int(x) for x in idx[rows[r]])
        report.written_twice.setdefault(block, []).append(
            tuple(int(x) for x in points[rows[r]]))
    twice = sorted(report.written_twice.items(), key=lambda item: item[1][0])
    report.written_twice = dict(twice)
    for block, at in twice[:_SHOWN]:
        report.problems.append(
            f"{where}: output block {_tuple(block)} is written back {len(at)} times, from "
            f"grid points {', '.join(_tuple(p) for p in at[:4])}"
            f"{', ...' if len(at) > 4 else ''}: its index leaves and comes back, so each "
            f"write-back replaces the last (outputs are not read back)")
    if len(twice) > _SHOWN:
        report.problems.append(f"{where}: and {len(twice) - _SHOWN} more "
                               f"output blocks written back more than once")
    _races(report, where, call, points, idx)
    if any(d.kind != "blocked" and d.kind != "squeezed" for d in spec.dims):
        return
    counts_per_dim = [-(-int(shape[k]) // d.size) for k, d in enumerate(spec.dims)]
    total = math.prod(counts_per_dim)
    if total > _MASK_LIMIT:
        report.notes.append(f"never-written blocks not counted: {total} blocks is past "
                            f"{_MASK_LIMIT}")
        return
    inside = ((idx >= 0) & (idx < np.array(counts_per_dim))).all(axis=1)
    seen = np.zeros(total, dtype=bool)
    seen[np.ravel_multi_index(tuple(idx[inside].T), counts_per_dim)] = True
    missing = np.nonzero(~seen)[0]
    report.never_count = int(len(missing))
    report.never_written = [tuple(int(x) for x in np.unravel_index(int(b), counts_per_dim))
                            for b in missing[:_SHOWN]]
    if len(missing):
        text = (f"output block{'s' if len(missing) > 1 else ''} "
                f"{', '.join(_tuple(b) for b in report.never_written)}"
                f"{f' and {len(missing) - _SHOWN} more' if len(missing) > _SHOWN else ''} "
                f"of the {total} {'is' if len(missing) == 1 else 'are'} never written")
        if spec.position in call.aliased_outputs:
            report.notes.append(f"{text}: the output is aliased to an input, so they keep "
                                f"its values")
        else:
            report.problems.append(f"{where}: {text}: those elements keep whatever the "
                                   f"output buffer held")


def _races(report: OperandReport, where: str, call: Call, points: np.ndarray,
           idx: np.ndarray) -> None:
    """Output blocks that grid points differing along a ``parallel`` dimension share: the
    first grid point (in iteration order) of each such block, and the first that differs
    from it along the parallel dimensions."""
    if call.semantics is None:
        return
    parallel = [k for k, s in enumerate(call.semantics) if s == "parallel"]
    if not parallel:
        return
    _, block_of = np.unique(_keys(idx), return_inverse=True)
    key_of = _keys(points[:, parallel])
    first_row = np.full(int(block_of.max()) + 1, len(idx), dtype=np.int64)
    np.minimum.at(first_row, block_of, np.arange(len(idx)))
    differs = np.nonzero(key_of != key_of[first_row[block_of]])[0]
    shown: set[int] = set()
    for row in differs:
        b = int(block_of[row])
        if b in shown:
            continue
        shown.add(b)
        report.races.append((tuple(int(x) for x in idx[row]),
                             tuple(int(x) for x in points[first_row[b]]),
                             tuple(int(x) for x in points[row])))
        if len(report.races) == _SHOWN:
            break
    for block, p, q in report.races:
        report.problems.append(
            f"{where}: output block {_tuple(block)} is written at grid points {_tuple(p)} "
            f"and {_tuple(q)}, which differ along a 'parallel' dimension: cores running "
            f"them at once race on it")


def _keys(rows: np.ndarray) -> np.ndarray:
    """One int64 per row, equal exactly when the rows are (rows of small ints: block
    indices, grid points), so that 1-D ``np.unique`` groups them fast."""
    if rows.shape[1] == 0:
        return np.zeros(len(rows), dtype=np.int64)
    lo = rows.min(axis=0)
    spans = rows.max(axis=0) - lo + 1
    if math.prod(int(x) for x in spans) >= 1 << 62:
        _, inverse = np.unique(rows, axis=0, return_inverse=True)
        return inverse.reshape(-1).astype(np.int64)
    return np.ravel_multi_index(tuple((rows - lo).T), tuple(int(x) for x in spans)).astype(
        np.int64)


def _tuple(t: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(x) for x in t) + ("," if len(t) == 1 else "") + ")"
