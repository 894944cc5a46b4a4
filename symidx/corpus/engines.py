"""The engines that run the work of a corpus, by name, each imported only when chosen.

An engine is a function ``run(tasks, options, jobs, stops, address)`` that yields one
record per task as the records arrive, in any order, with at most about ``jobs`` modules in
flight (so that memory stays bounded): ``local`` (:mod:`symidx.corpus.local`), ``ray``
(:mod:`symidx.corpus.ray_engine`) and ``dask`` (:mod:`symidx.corpus.dask_engine`).
``stops`` (:class:`Stops`) says when an engine stops a worker that has not answered (the
analysis stops itself first, at its own limits, saying how far it got).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from symidx.errors import SymidxError

__all__ = ["ENGINES", "Engine", "STUCK", "Stops", "engine", "require"]

#: Seconds of the wall clock a busy local worker may go without using any CPU before it is
#: taken as stuck (waiting for something that does not come: not a matter of load, as a
#: worker at work gets some CPU every second however busy the machine is).
STUCK = 60.0


@dataclass(frozen=True)
class Stops:
    """When an engine stops a worker busy on one module (or file): a little past ``cpu``
    seconds of the worker's CPU (the local engine, which reads it from ``/proc``), a little
    past ``wall`` seconds of the wall clock (when asked for) -- the work stops itself at
    those limits, saying how far it got: these stops are for a worker that does not -- or,
    on the local engine, when it has used no CPU for ``stuck`` seconds. A cluster's workers
    are out of sight: their engines stop a task past :meth:`cluster_wall`."""

    cpu: float | None = None
    wall: float | None = None
    stuck: float | None = STUCK

    def cpu_stop(self) -> float | None:
        """The worker's CPU seconds at which it is stopped."""
        return _grace(self.cpu)

    def wall_stop(self) -> float | None:
        """The seconds of the wall clock at which a worker is stopped."""
        return _grace(self.wall)

    def cluster_wall(self) -> float | None:
        """When a task on a cluster is stopped: past :meth:`wall_stop`, else past three
        times the CPU limit and a minute (a task gets its CPU on a busy cluster too: this
        stops a hang, not slow work)."""
        if self.wall is not None:
            return self.wall_stop()
        return None if self.cpu is None else 3 * self.cpu + 60

    @property
    def active(self) -> bool:
        return self.cpu is not None or self.wall is not None or self.stuck is not None

    def why(self, which: str) -> str:
        """The words of a stop, with the limit as given: ``no result after 300 s of CPU``,
        ``no result after 30 s``, ``no CPU used for 60 s``."""
        if which == "cpu":
            return f"no result after {self.cpu or 0:g} s of CPU"
        if which == "stuck":
            return f"no CPU used for {self.stuck or 0:g} s (waiting for what did not come)"
        if which == "wall" or self.wall is not None:
            return f"no result after {self.wall or 0:g} s"
        return f"no result after {self.cluster_wall() or 0:g} s"


def _grace(limit: float | None) -> float | None:
    """A little after the work should have stopped itself (at ``limit``), so that a module
    that hangs outside the analysis (or in a C extension) is still stopped."""
    return None if limit is None else limit + min(5.0, max(1.0, limit / 10))


#: The engines, and the function of each (module, name).
ENGINES = {
    "local": ("symidx.corpus.local", "run_local"),
    "ray": ("symidx.corpus.ray_engine", "run_ray"),
    "dask": ("symidx.corpus.dask_engine", "run_dask"),
}

Engine = Callable[[Iterable[Any], Any, "int | None", Stops, "str | None"],
                  Iterator[dict[str, Any]]]


def engine(name: str) -> Engine:
    """The run function of the engine called ``name``."""
    try:
        module, function = ENGINES[name]
    except KeyError:
        raise SymidxError(f"unknown engine {name!r} (one of {', '.join(ENGINES)})") from None
    found: Engine = getattr(importlib.import_module(module), function)
    return found


def require(module: str, extra: str) -> ModuleType:
    """``module`` imported, or an error that names the extra which installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise SymidxError(f"the {extra} engine needs {module} ({e}): "
                          f"pip install 'symidx[{extra}]'") from None
