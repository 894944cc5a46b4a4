"""A context manager that pauses Python's cyclic garbage collector."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block, then restore its previous state.

    Used where a burst of long-lived allocations would otherwise trigger collections that
    traverse everything built so far (parsing a large module), and while timing (as
    :mod:`timeit` does, so that a collection falling inside one sample does not count).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
