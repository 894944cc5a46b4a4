"""What a results file says, in a few lines: modules by status, the most common errors,
unsupported and opaque ops by count, the slowest modules; and a report (Markdown or HTML)
with a plot of analysis time against module size (matplotlib: ``symidx[plot]``).

A :class:`Summary` is built by reading the records once (:meth:`Summary.of_file`); it
keeps counters and the few slowest modules, plus one point per module for the plot, never
the records themselves.
"""

from __future__ import annotations

import base64
import heapq
import html
import io
import os
import urllib.parse
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from symidx._display import Rich, Shown, html_table
from symidx._text import lazy_pattern, markdown_safe, terminal_safe
from symidx.corpus.record import STATUSES
from symidx.corpus.results import read_records
from symidx.errors import SymidxError

__all__ = ["Summary", "error_kind", "report_picture", "write_report"]

#: How many errors, ops and slowest modules the summary on a terminal lists (a report lists
#: every kind of failure).
SHOWN = 8

_LOCATION = lazy_pattern(r"^.*?line \d+, column \d+: ")
# Names: HLO names (%add.5), quoted names ('fused_computation.3', "x"), and the numbered
# names XLA gives instructions and computations (add.5, fused_computation.12, while.370).
_NAMES = lazy_pattern(r"%[\w.\-]+|'[^'\n]*'|\"[^\"\n]*\"|(?<![\w.])[A-Za-z_][\w\-]*(?:\.\d+)+\b")
# A limit reached says how far the work got: that part differs from module to module.
_LIMIT = lazy_pattern(r"^(ran out of .*?) after .*$")


def error_kind(message: str, file: str | None = None) -> str:
    """A message without what differs between modules of the same kind of failure -- the
    file (``file``, where the message names it), line and column; the names of
    instructions and computations; how far work that ran out of a limit got -- so that
    equal kinds count together."""
    text = _LOCATION.sub("", message)
    if file:
        text = text.replace(file, "FILE")
    text = _LIMIT.sub(r"\1", text)
    text = _NAMES.sub(lambda m: "%…" if m.group(0)[:1] == "%" else "…", text)
    return text if len(text) <= 120 else text[:119] + "…"


def report_picture(path: str) -> str:
    """The plot a Markdown report at ``path`` writes beside itself (``NAME.png``)."""
    return os.path.splitext(path)[0] + ".png"


def _label(record: dict[str, Any]) -> str:
    return f"{record['file']}#{record['module']}"


@dataclass
class Summary(Rich):
    """Counters over records (see the module docstring). A notebook shows its tables."""

    statuses: Counter[str] = field(default_factory=Counter)
    #: Of the modules analysed (status ``ok``): by what was analysed (``fusions``,
    #: ``entry``, ``computation``; ``unknown`` for records older than the field).
    analysed: Counter[str] = field(default_factory=Counter)
    #: Of the modules analysed: how many gave no map at all (nothing read, or only
    #: unsupported groups).
    mapless: int = 0
    groups: int = 0
    maps: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    unsupported: Counter[str] = field(default_factory=Counter)
    opaque: Counter[str] = field(default_factory=Counter)
    #: (seconds, label, bytes) of the slowest modules, as a min-heap.
    slowest: list[tuple[float, str, int]] = field(default_factory=list)
    #: (bytes, analysis seconds, status) per module whose analysis ran to an end (not
    #: those that did not parse or timed out), for the plot.
    points: list[tuple[int, float, str]] = field(default_factory=list)
    duplicates: int = 0

    @classmethod
    def of_file(cls, path: str) -> Summary:
        found = cls()
        found.add_all(read_records(path))
        return found

    def add_all(self, records: Iterable[dict[str, Any]]) -> None:
        for record in records:
            self.add(record)

    def add(self, record: dict[str, Any]) -> None:
        self.statuses[record["status"]] += 1
        if record["status"] != "ok":  # every failed module, repeats too: counts add up
            kind = error_kind(record.get("message") or "", record.get("file"))
            self.errors[f"{record['status']}: {kind}"] += 1
        if record.get("duplicate_of") is not None:
            self.duplicates += 1
            return
        if record["status"] == "ok":
            self.analysed[record.get("analysed") or "unknown"] += 1
            counts = record.get("counts") or {}
            self.groups += counts.get("groups") or 0
            self.maps += counts.get("maps") or 0
            self.mapless += not counts.get("maps")
        self.unsupported.update(record.get("unsupported") or {})
        self.opaque.update(record.get("opaque") or {})
        seconds = (record.get("parse_seconds") or 0.0) + (record.get("analysis_seconds") or 0.0)
        entry = (seconds, _label(record), record["bytes"])
        if len(self.slowest) < SHOWN:
            heapq.heappush(self.slowest, entry)
        else:
            heapq.heappushpop(self.slowest, entry)
        if record.get("analysis_seconds") is not None:
            self.points.append((record["bytes"], record["analysis_seconds"], record["status"]))

    @property
    def total(self) -> int:
        return sum(self.statuses.values())

    def text(self) -> str:
        """The summary as lines for a terminal (what comes from file names and module text
        shown, never obeyed: see :func:`symidx._text.terminal_safe`)."""
        lines = [f"{self.total} modules: " + ", ".join(
            f"{self.statuses[s]} {s}" for s in STATUSES if self.statuses[s])
            + (f" ({self.duplicates} repeat the text of another)" if self.duplicates else "")]
        if self.analysed:
            lines.append(self.analysed_text())
        if self.errors:
            lines.append(f"failures by kind ({len(self.errors)} kinds, "
                         f"{sum(self.errors.values())} modules):")
            lines += [f"  {n:5d}  {terminal_safe(kind)}"
                      for kind, n in _most_common(self.errors, SHOWN)]
            rest = _most_common(self.errors)[SHOWN:]
            if rest:
                lines.append(f"  and {len(rest)} more kinds ({sum(n for _, n in rest)} "
                             f"modules): every one in --report")
        for title, counter in (("unsupported ops", self.unsupported),
                               ("opaque (over-approximated)", self.opaque)):
            if counter:
                lines.append(f"{title}, by groups of maps: " + ", ".join(
                    f"{terminal_safe(op)} {n}" for op, n in _most_common(counter, SHOWN)))
        if self.slowest:
            lines.append("slowest: " + "; ".join(
                f"{terminal_safe(label)} ({size // 1024} KiB) {seconds:.2f} s"
                for seconds, label, size in sorted(self.slowest, reverse=True)))
        return "\n".join(lines)

    def _shown_(self) -> Shown:
        first = self.text().split("\n", 1)[0]
        parts = [html_table(header, rows, caption) for caption, header, rows in self.tables()
                 if rows]
        return Shown(self.text(), f"<p>{html.escape(first)}</p>\n" + "\n".join(parts))

    def analysed_text(self) -> str:
        """``ok: 144 by their fusions, 313 whole (entry computation, no fusion); 12 gave
        no map; 9876 groups, 12345 maps``."""
        parts = [f"{self.analysed[kind]} {_ANALYSED[kind]}" for kind in _ANALYSED
                 if self.analysed[kind]]
        return (f"ok: {', '.join(parts)}; {self.mapless} gave no map; "
                f"{self.groups} groups, {self.maps} maps")

    def tables(self) -> list[tuple[str, list[str], list[list[str]]]]:
        """The summary as (title, header, rows) tables, for a report."""
        return [
            ("Modules analysed (status ok)", ["what", "modules"],
             [[_ANALYSED[kind], str(self.analysed[kind])] for kind in _ANALYSED
              if self.analysed[kind]]
             + [["gave no map", str(self.mapless)], ["groups of maps", str(self.groups)],
                ["maps", str(self.maps)]] if self.analysed else []),
            ("Modules by status", ["status", "modules"],
             [[s, str(self.statuses[s])] for s in STATUSES]),
            ("Failures by kind", ["modules", "status: failure"],
             [[str(n), kind] for kind, n in _most_common(self.errors)]),
            ("Unsupported ops", ["op", "groups of maps"],
             [[op, str(n)] for op, n in _most_common(self.unsupported)]),
            ("Opaque ops (over-approximated)", ["reason", "groups of maps"],
             [[op, str(n)] for op, n in _most_common(self.opaque)]),
            ("Slowest modules", ["module", "KiB", "seconds"],
             [[label, str(size // 1024), f"{seconds:.2f}"]
              for seconds, label, size in sorted(self.slowest, reverse=True)]),
        ]


def _most_common(counter: Counter[str], n: int | None = None) -> list[tuple[str, int]]:
    """The ``n`` commonest entries, ties in the order of their text: the same whatever
    order the records came in (``Counter.most_common`` keeps the order of arrival)."""
    return sorted(counter.items(), key=lambda item: (-item[1], item[0]))[:n]
#: What a record's ``analysed`` says, as the summary words it.
_ANALYSED = {"fusions": "by their fusions", "entry": "whole (entry computation, no fusion)",
             "computation": "by the computation asked",
             "unknown": "without saying what (older records)"}


def write_report(summary: Summary, path: str, title: str) -> None:
    """A report of ``summary`` at ``path``: Markdown (``.md``, the plot beside it as
    ``NAME.png``) or HTML (``.html``, the plot inside it)."""
    png = _plot(summary)
    if path.endswith((".html", ".htm")):
        picture = base64.b64encode(png).decode("ascii")
        body = [f"<h1>{html.escape(title)}</h1>",
                f'<img alt="analysis time against module size" '
                f'src="data:image/png;base64,{picture}">']
        for caption, header, rows in summary.tables():
            if rows:
                body.append(f"<h2>{html.escape(caption)}</h2>\n" + html_table(header, rows))
        text = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
                f"<title>{html.escape(title)}</title><style>"
                "td,th{padding:2px 8px;text-align:left}</style></head><body>\n"
                + "\n".join(body) + "\n</body></html>\n")
    else:
        image = report_picture(path)
        _write(image, png)
        link = urllib.parse.quote(os.path.basename(image))
        parts = [f"# {markdown_safe(title)}", f"![analysis time against module size]({link})"]
        for caption, header, rows in summary.tables():
            if rows:
                parts.append(f"## {caption}\n\n| " + " | ".join(header) + " |\n|"
                             + "---|" * len(header) + "\n"
                             + "\n".join("| " + " | ".join(markdown_safe(c) for c in row)
                                         + " |" for row in rows))
        text = "\n\n".join(parts) + "\n"
    _write(path, text.encode("utf-8"))


def _write(path: str, data: bytes) -> None:
    """Write ``data`` to ``path``; a failure (a full disk, a read-only file) is an error
    naming the file."""
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise SymidxError(f"cannot write {path}: {e.strerror or e}") from None


def _plot(summary: Summary) -> bytes:
    """A PNG: analysis seconds against module size, one point per module, by status."""
    from matplotlib.figure import Figure  # its own figure: pyplot's backend is left alone

    fig = Figure(figsize=(7, 4.5), dpi=100)
    ax = fig.subplots()
    for status, colour in (("ok", "tab:blue"), ("error", "tab:red")):
        chosen = [(b, max(s, 1e-5)) for b, s, st in summary.points if st == status]
        if chosen:
            ax.scatter([b for b, _ in chosen], [s for _, s in chosen], s=10, alpha=0.7,
                       color=colour, label=f"{status} ({len(chosen)})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("module size (bytes of HLO text)")
    ax.set_ylabel("analysis time (s)")
    ax.set_title("Analysis time against module size")
    if summary.points:
        ax.legend(loc="upper left")
    ax.grid(True, which="major", alpha=0.3)
    out = io.BytesIO()
    fig.tight_layout()
    fig.savefig(out, format="png")
    return out.getvalue()
