"""The Dask engine (``pip install 'symidx[dask]'``): each module a task of ``distributed``.

``address`` is a scheduler's (``tcp://HOST:8786``; default: the environment's
``DASK_SCHEDULER_ADDRESS``, as Dask's own tools read it); without one, a ``LocalCluster`` of
``jobs`` single-threaded worker processes starts and stops with the run. The cluster's
workers need symidx installed (the same version): each imports it once, before the run
starts, and stays warm.

At most ``jobs`` tasks are in flight (default: the cluster's threads), so each starts on
submission and the time limit, counted from submission, is the module's own. Python
cannot stop a thread, so a task over the limit is cancelled and the worker running it is
restarted by its nanny (give workers one thread each, ``--nthreads 1``, so that no other
module is lost with it). A task whose worker dies is recorded as ``error``: at once on the
local cluster, which allows no retry; after the scheduler's
``distributed.scheduler.allowed-failures`` retries on another cluster.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import uuid
import warnings
from collections.abc import Iterable, Iterator
from typing import Any

import symidx.corpus.record  # noqa: F401
from symidx.corpus.engines import Stops, require
from symidx.corpus.local import default_jobs
from symidx.corpus.record import Options, analyse, failure_record, timed_out, worker_died
from symidx.corpus.sources import Task
from symidx.errors import SymidxError

__all__ = ["run_dask", "local_cluster"]

#: The scheduler settings of the local cluster: no retry of a task that killed a worker,
#: and no more tasks sent to a worker than it has threads (so that the time limit of a
#: module runs from when it starts).
LOCAL_SETTINGS = {
    "distributed.scheduler.allowed-failures": 0,
    "distributed.scheduler.worker-saturation": 1.0,
}


def local_cluster(jobs: int | None) -> Any:
    """A ``LocalCluster`` of ``jobs`` single-threaded worker processes (default: one per
    processor), quiet, without a dashboard."""
    dask = require("dask", "dask")
    distributed = require("distributed", "dask")
    with dask.config.set(LOCAL_SETTINGS), warnings.catch_warnings():
        # No dashboard; its HTTP server says so when the default port is taken.
        warnings.filterwarnings("ignore", message="Port .* is already in use")
        return distributed.LocalCluster(n_workers=jobs or default_jobs(), threads_per_worker=1,
                                        processes=True, dashboard_address=None,
                                        silence_logs=logging.CRITICAL)


def run_dask(tasks: Iterable[Task], options: Options, jobs: int | None,
             stops: Stops, address: str | None = None) -> Iterator[dict[str, Any]]:
    """The records of ``tasks`` as they complete (see the module docstring)."""
    distributed = require("distributed", "dask")
    timeout = stops.cluster_wall()
    why = stops.why("wall")
    address = address or os.environ.get("DASK_SCHEDULER_ADDRESS") or None
    cluster = None if address is not None else local_cluster(jobs)
    try:
        client = distributed.Client(address if cluster is None else cluster, timeout=30)
    except (OSError, TimeoutError) as e:
        if cluster is not None:
            cluster.close()
        raise SymidxError(f"cannot reach the Dask scheduler at {address}: {e}") from None
    in_flight: dict[Any, tuple[Task, float]] = {}
    try:
        client.run(_warm)
        slots = jobs or max(1, sum(client.nthreads().values()))
        pending = iter(tasks)
        while True:
            while len(in_flight) < slots and (task := next(pending, None)) is not None:
                future = client.submit(analyse, task, options, pure=False, retries=0,
                                       key=f"symidx-corpus-{uuid.uuid4().hex}")
                in_flight[future] = (task, time.monotonic())
            if not in_flight:
                return
            limit = None if timeout is None else max(
                0.0, min(t for _, t in in_flight.values()) + timeout - time.monotonic())
            with contextlib.suppress(TimeoutError):
                distributed.wait(list(in_flight), timeout=limit, return_when="FIRST_COMPLETED")
            for future in [f for f in in_flight if f.done()]:
                task, _ = in_flight.pop(future)
                yield _outcome(future, task, options)
            expired = [f for f, (_, since) in in_flight.items()
                       if timeout is not None and time.monotonic() - since >= timeout]
            if expired:
                _stop(client, expired)
                for future in expired:
                    task, _ = in_flight.pop(future)
                    yield timed_out(task, options, why)
    finally:
        if in_flight:
            _stop(client, list(in_flight))
        client.close()
        if cluster is not None:
            cluster.close()


def _stop(client: Any, futures: list[Any]) -> None:
    """Cancel ``futures`` and restart the workers running them (which alone stops them)."""
    keys = {f.key for f in futures}
    workers = [w for w, running in client.processing().items() if keys & set(running)]
    client.cancel(futures, force=True)
    if workers:
        client.restart_workers(workers, raise_for_error=False)
        client.run(_warm)


def _warm() -> None:
    """Import the analysis (on every worker, before the clock of any module starts)."""

def _outcome(future: Any, task: Task, options: Options) -> dict[str, Any]:
    """The task's record, or an ``error`` record when its worker died or it failed."""
    if future.status == "finished":
        record: dict[str, Any] = future.result()
        return record
    try:
        error = future.exception()
    except Exception as e:  # noqa: BLE001 - cancelled by someone else: recorded as such
        error = e
    if type(error).__name__ == "KilledWorker":
        return worker_died(task, options)
    first = (str(error).strip().splitlines() or [""])[0]
    return failure_record(task, options, "error",
                          f"the task failed: {type(error).__name__}: {first}")
