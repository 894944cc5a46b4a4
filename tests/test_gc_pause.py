"""symidx._gc: the collector pauses, and a long-lived block ends without a collection."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from symidx._gc import gc_paused, long_lived


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generations collected while the test runs (gc.callbacks)."""
    seen: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.collect()
    gc.callbacks.append(record)
    try:
        yield seen
    finally:
        gc.callbacks.remove(record)


def test_gc_paused_restores_the_state() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_long_lived_files_objects_without_a_young_collection(collections: list[int]) -> None:
    if gc.get_freeze_count():
        pytest.skip("the process has frozen objects: long_lived only pauses")
    with long_lived():
        built = [[k] for k in range(50_000)]  # far past the young generation's threshold
        assert not gc.isenabled()
    assert gc.isenabled()
    # Enabled again, tracked allocations must not start a collection of all that was built:
    # it is in the oldest generation already.
    more = [[k] for k in range(100)]
    assert collections == []
    assert gc.get_count()[0] < 1_000
    oldest = {id(obj) for obj in gc.get_objects(generation=2)}
    assert all(id(item) in oldest for item in built[::997])
    del built, more


def test_long_lived_restores_a_disabled_collector() -> None:
    gc.disable()
    try:
        with long_lived():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_long_lived_reenables_after_an_error() -> None:
    with pytest.raises(ValueError), long_lived():
        raise ValueError("boom")
    assert gc.isenabled()
