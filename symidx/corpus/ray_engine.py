"""The Ray engine (``pip install 'symidx[ray]'``): each module a Ray task.

``address`` joins an existing cluster (``auto``, ``HOST:PORT``, or ``ray://HOST:PORT`` for
Ray Client; default: the environment's ``RAY_ADDRESS``, which Ray Jobs set), as it is,
without asking for resources; without one, a connection made earlier in this process is
used, or a local cluster of ``jobs`` processors starts and stops with the run: always a new
one (``address="local"``), never a cluster an earlier ``ray start`` left recorded on the
machine, which may be gone. The cluster's workers need
symidx installed (the same version): they import it once and stay warm.

At most ``jobs`` tasks are in flight (default: the cluster's processors), so each starts on
submission and the time limit (:meth:`~symidx.corpus.engines.Stops.cluster_wall`), counted
from submission, is the module's own. A task over
the limit is cancelled with ``force``, which kills its worker process (Ray starts another);
a task whose worker dies is not retried (``max_retries=0``) and is recorded as ``error``.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

from symidx.corpus import reaper
from symidx.corpus.engines import Stops, require
from symidx.corpus.record import Options, analyse, failure_record, timed_out, worker_died
from symidx.corpus.sources import Task
from symidx.errors import SymidxError

__all__ = ["run_ray", "start_local"]


def start_local(jobs: int | None) -> None:
    """Start a local Ray cluster of ``jobs`` processors (default: all) in this process.
    Ray replaces the SIGTERM handler; the caller's is put back, so that the caller stops
    the run (and the cluster) its own way."""
    ray = require("ray", "ray")
    main = threading.current_thread() is threading.main_thread()
    handler = signal.getsignal(signal.SIGTERM) if main else None
    ray.init(address="local", num_cpus=jobs, include_dashboard=False, log_to_driver=False,
             logging_level=logging.CRITICAL)
    if main:
        signal.signal(signal.SIGTERM, handler)


def run_ray(tasks: Iterable[Task], options: Options, jobs: int | None, stops: Stops,
            address: str | None = None) -> Iterator[dict[str, Any]]:
    """The records of ``tasks`` as they complete (see the module docstring)."""
    ray = require("ray", "ray")
    timeout = stops.cluster_wall()
    why = stops.why("wall")
    address = address or os.environ.get("RAY_ADDRESS") or None
    started = not ray.is_initialized()
    watcher = None
    if started and address is not None:
        _check_reachable(address)
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.CRITICAL)
        except (ConnectionError, ValueError, RuntimeError) as e:
            raise SymidxError(f"cannot join the Ray cluster at {address}: {e}") from None
    elif started:
        watcher = reaper.start()  # what Ray starts here ends with this process, however
        start_local(jobs)
    in_flight: dict[Any, tuple[Task, float]] = {}
    try:
        slots = jobs or max(1, int(ray.cluster_resources().get("CPU", 1)))
        remote = ray.remote(num_cpus=1, max_retries=0)(analyse)
        pending = iter(tasks)
        while True:
            while len(in_flight) < slots and (task := next(pending, None)) is not None:
                in_flight[remote.remote(task, options)] = (task, time.monotonic())
            if not in_flight:
                return
            refs = list(in_flight)
            limit = None if timeout is None else max(
                0.0, min(t for _, t in in_flight.values()) + timeout - time.monotonic())
            ready, _ = ray.wait(refs, num_returns=1, timeout=limit)
            if ready:
                ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
            for ref in ready:
                task, _ = in_flight.pop(ref)
                yield _outcome(ray, ref, task, options)
            for ref, (task, since) in list(in_flight.items()):
                if timeout is not None and time.monotonic() - since >= timeout:
                    ray.cancel(ref, force=True)
                    del in_flight[ref]
                    yield timed_out(task, options, why)
    finally:
        for ref in in_flight:
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()
            reaper.stop(watcher)


def _check_reachable(address: str) -> None:
    """Fail at once, naming ``address``, when nothing listens there (Ray itself would retry
    for minutes). ``auto`` and other forms without a port are left to Ray."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as e:
        raise SymidxError(f"cannot join the Ray cluster at {address}: "
                          f"{e.strerror or e}") from None


def _outcome(ray: Any, ref: Any, task: Task, options: Options) -> dict[str, Any]:
    """The task's record, or an ``error`` record when its worker died or it failed."""
    try:
        record: dict[str, Any] = ray.get(ref)
        return record
    except ray.exceptions.WorkerCrashedError:
        return worker_died(task, options)
    except ray.exceptions.RayError as e:
        cause = getattr(e, "cause", None) or e
        first = (str(cause).strip().splitlines() or [""])[0]
        return failure_record(task, options, "error",
                              f"the task failed: {type(cause).__name__}: {first}")
