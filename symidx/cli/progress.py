"""Progress on stderr for work that can take more than a second: a bar (tqdm, when
installed: ``pip install 'symidx[progress]'``; a plain line otherwise), shown only when
stderr is a terminal and only once the work has run for a while, so that scripts and pipes
see nothing."""

from __future__ import annotations

import sys
import time
from typing import Any

__all__ = ["Progress"]


class Progress:
    """Call with ``(done, total)`` as the work advances; :meth:`close` when it ends.

    Nothing is shown before ``delay`` seconds, nor when stderr is not a terminal."""

    def __init__(self, description: str, unit: str = "item", delay: float = 1.0,
                 stream: Any = None) -> None:
        self.description = description
        self.unit = unit
        self.delay = delay
        self.stream = sys.stderr if stream is None else stream
        self.start = time.monotonic()
        self.last = 0.0
        self.bar: Any = None
        self.shown = False
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, done: int, total: int, what: str | None = None) -> None:
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
            print(f"\r{self.description}: {what or self.unit} {done} of {total} "
                  f"({now - self.start:.0f} s)", end="", file=self.stream, flush=True)
        self.shown = True
        if done == total:
            self.close()

    def _tqdm(self, total: int, what: str | None) -> Any:
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
