"""Progress on stderr for work that can take more than a second: a bar (tqdm, when
installed: ``pip install 'symidx[progress]'``; a line rewritten in place otherwise), shown
only when stderr is a terminal and only once the work has run for a while. Nothing is
written anywhere else -- a pipe, a log file, the stderr of a ``batch`` answer: progress
says how fast the machine is today, and an answer must not (issue 35)."""

from __future__ import annotations

import sys
import time
from typing import Any

__all__ = ["Progress"]


class Progress:
    """Call with ``(done, total)`` as the work advances; :meth:`close` when it ends.

    Nothing is shown before ``delay`` seconds, nor when stderr is not a terminal."""

    def __init__(self, description: str, unit: str = "item", delay: float = 1.0,
                 stream: Any = None, bar: bool = True) -> None:
        self.description = description
        self.unit = unit
        self.delay = delay
        self.stream = sys.stderr if stream is None else stream
        self.start = time.monotonic()
        self.last = 0.0
        self.bar: Any = None
        self.shown = False
        self.width = 0
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.use_bar = bar
        self.state: tuple[int, int, str | None] = (0, 0, None)
        #: When the first item was done, and how many were then: the rate is measured from
        #: there, so that items that all come at once after long shared work (the outputs
        #: of one joint sweep) do not count that work as each one's
        self.first: tuple[int, float] | None = None

    def during(self, detail: str) -> None:
        """How far the work on the next item is (``detail``), between two calls: shown in
        the line, or after the bar's count (on a terminal only)."""
        done, total, what = self.state
        now = time.monotonic()
        if not self.enabled or not total or now - self.start < self.delay:
            return
        where = f"{what or self.unit} {done} of {total} done; "
        if self.bar is None and now - self.last >= 0.2:
            self.last, self.shown = now, True
            line = f"{self.description}: {where}{detail}"
            print(f"\r{line.ljust(self.width)}", end="", file=self.stream, flush=True)
            self.width = len(line)
        elif self.bar is not None:
            self.bar.set_postfix_str(detail, refresh=True)

    def __call__(self, done: int, total: int, what: str | None = None) -> None:
        self.state = (done, total, what)
        if done and self.first is None:
            self.first = (done, time.monotonic())
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.delay:
            return
        if self.bar is None and not self.shown:
            self.bar = self._tqdm(total, what)
        if self.bar is not None:
            self.bar.total = total
            self.bar.n = done
            self.bar.refresh()
        elif now - self.last >= 0.2 or done == total:
            self.last = now
            line = (f"{self.description}: {what or self.unit} {done} of {total} "
                    f"({self._pace(done, total, now)})")
            print(f"\r{line.ljust(self.width)}", end="", file=self.stream, flush=True)
            self.width = len(line)
        self.shown = True
        if done == total:
            self.close()

    def _tqdm(self, total: int, what: str | None) -> Any:
        if not self.use_bar:
            return None
        try:
            from tqdm import tqdm
        except ImportError:
            return None
        return tqdm(total=total, desc=self.description, unit=what or self.unit,
                    file=self.stream, leave=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        elif self.shown and self.enabled:
            print(file=self.stream, flush=True)
        self.enabled = False

    def _pace(self, done: int, total: int, now: float) -> str:
        """``12 s, 3.4/s, 25 s left``: time so far, rate and an estimate of the time left
        (once there is a rate to go by: from the start to the first item done, then from
        the first item done on)."""
        text = f"{now - self.start:.0f} s"
        if not done or self.first is None:
            return text
        first, when = self.first
        count, seconds = (done, now - self.start) if done == first \
            else (done - first, now - when)
        if seconds <= 0:
            return text
        rate = count / seconds
        shown = f"{rate:.0f}" if rate >= 100 else f"{rate:.3g}"
        return text + f", {shown}/s, {_duration((total - done) / rate)} left"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
