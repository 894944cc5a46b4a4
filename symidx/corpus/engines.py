"""The engines that run the work of a corpus, by name, each imported only when chosen.

An engine is a function ``run(tasks, options, jobs, timeout, address)`` that yields one
record per task as the records arrive, in any order, with at most about ``jobs`` modules in
flight (so that memory stays bounded): ``local`` (:mod:`symidx.corpus.local`), ``ray``
(:mod:`symidx.corpus.ray_engine`) and ``dask`` (:mod:`symidx.corpus.dask_engine`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from types import ModuleType
from typing import Any

from symidx.errors import SymidxError

__all__ = ["ENGINES", "Engine", "engine", "require"]

#: The engines, and the function of each (module, name).
ENGINES = {
    "local": ("symidx.corpus.local", "run_local"),
    "ray": ("symidx.corpus.ray_engine", "run_ray"),
    "dask": ("symidx.corpus.dask_engine", "run_dask"),
}

Engine = Callable[[Iterable[Any], Any, "int | None", "float | None", "str | None"],
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
