"""A test-only hook that makes a corpus worker misbehave, loaded by the worker by its
module name (``SYMIDX_CORPUS_TEST_HOOK=corpus_faults:misbehave``, with this folder on the
workers' path): a worker given a module whose text holds one of the markers below hangs,
exits or is killed by a signal, as real modules sometimes make a worker do, so that the
tests can check that the run records it and goes on. Kept apart from ``corpus_helpers``
so that a worker imports nothing else of the tests."""

from __future__ import annotations

import os
import signal
import time

HANG = "CORPUS-TEST: hang"
SPIN = "CORPUS-TEST: spin"
EXIT = "CORPUS-TEST: exit"
KILL = "CORPUS-TEST: kill"


def misbehave(task: object) -> None:
    text = getattr(task, "text", "")
    if HANG in text:
        started = os.environ.get("CORPUS_TEST_STARTED")
        if started:  # tell the test the worker is on the module
            with open(started, "w"):
                pass
        time.sleep(3600)
    if SPIN in text:  # busy, using CPU, never answering (a loop in C, say)
        while True:
            pass
    if EXIT in text:
        os._exit(70)
    if KILL in text:
        os.kill(os.getpid(), signal.SIGKILL)
