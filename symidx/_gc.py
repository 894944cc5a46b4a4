"""Context managers that pause Python's cyclic garbage collector or make its young
collections rarer."""

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


@contextmanager
def long_lived() -> Iterator[None]:
    """Pause the cyclic garbage collector while the block builds objects that will live long
    (a parsed module), then file what it built -- and whatever else is tracked -- in the
    oldest generation, as if it had survived the young collections. Without this, the first
    collection after the block traverses every object built in it, only to keep them all.

    The filing happens before the collector is enabled again: once enabled, the next tracked
    allocation (even the StopIteration that ends a nested context manager) would start that
    very collection. Objects so filed are still collected (by the next full collection) once
    unreachable. When the program has frozen objects of its own (:func:`gc.freeze`), only the
    pause is done: moving ours would unfreeze theirs.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if was_enabled and gc.get_freeze_count() == 0:
            gc.freeze()  # every tracked object to the permanent generation ...
            gc.unfreeze()  # ... and back, into the oldest one
    finally:
        if was_enabled:
            gc.enable()


#: Allocations between young garbage collections while maps are computed (and in a
#: ``symidx`` process: see ``symidx.cli.main_entry``), instead of Python's 700.
YOUNG_COLLECTION = 10_000


@contextmanager
def young_collections(every: int = YOUNG_COLLECTION) -> Iterator[None]:
    """Collect young garbage at most every ``every`` allocations in the block (a higher
    threshold already set is kept), then restore the threshold found, unless the block
    changed it. An analysis builds memos and maps that live as long as it does: each young
    collection traverses them again only to keep them. Collections still run, so cycles
    made in the block are still collected."""
    before = gc.get_threshold()
    if before[0] >= every or before[0] == 0:  # 0: automatic collection is off
        yield
        return
    raised = (every, *before[1:])
    gc.set_threshold(*raised)
    try:
        yield
    finally:
        if gc.get_threshold() == raised:
            gc.set_threshold(*before)
