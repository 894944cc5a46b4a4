"""A corpus run from end to end: find the files, read each in a worker process (its
sections, their SHA-256 and size: :func:`~symidx.corpus.sources.outline`), record the files
that cannot be read, skip the modules already recorded, send the rest to an engine (largest
first, so that the long ones do not come last and keep one worker busy while the others
idle), and append each record as it arrives.

The driver itself reads no file: a file that would stop the process that reads it (a gzip
bomb, a device, a crash in a library) stops a worker, which is replaced, and the file is
recorded as what it is (``too-large``; ``error``: unreadable, or the worker died under it).
On the local engine the workers that read the files analyse the modules, reading each
module's text again themselves; for a cluster, a local worker reads the text that is sent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from symidx.corpus.engines import STUCK, Stops, engine
from symidx.corpus.local import Died, Pool, Stopped, default_jobs, run_local
from symidx.corpus.record import Options, duplicate_record, file_record
from symidx.corpus.results import ResultsFile
from symidx.corpus.sources import (
    ModuleRef,
    Outline,
    Section,
    Task,
    TaskReader,
    find_files,
    outline,
    read_sections,
    refs_of,
)

__all__ = ["RunStats", "run_corpus"]


@dataclass
class RunStats:
    """What a run did: modules found (``distinct`` texts among them), already recorded
    (``skipped``), recorded now (``written``), the files that could not be read (their
    messages: each has a record), the reports of XLA dump folders passed over (``reports``,
    by kind), the files that are not regular files or cannot be read here (``passed``, by
    kind: a FIFO, a device, a socket; binary HLO without jaxlib) and the bytes of a partial
    last line cut off the results file."""

    modules: int = 0
    distinct: int = 0
    skipped: int = 0
    written: int = 0
    unreadable: list[str] = field(default_factory=list)
    reports: Counter[str] = field(default_factory=Counter)
    passed: Counter[str] = field(default_factory=Counter)
    cut: int = 0


def run_corpus(paths: Sequence[str], out: str, options: Options, *, engine_name: str = "local",
               jobs: int | None = None, address: str | None = None,
               timeout: float | None = None, resume: bool = False,
               progress: Callable[[int, int], None] | None = None,
               ready: Callable[[RunStats], None] | None = None,
               cpu_limit: float | None = 300.0, stuck: float | None = STUCK) -> RunStats:
    """Record every module of ``paths`` in the results file ``out`` (see
    :mod:`symidx.corpus`). ``cpu_limit``: CPU seconds a module (or the reading of a file)
    may take; ``timeout``: seconds of the wall clock besides, when asked for; ``stuck``:
    seconds a local worker may use no CPU (see :class:`~symidx.corpus.engines.Stops`).
    ``progress(done, total)`` is called after each module; ``ready(stats)`` once the
    modules are known, before the work starts."""
    run = engine(engine_name)
    stats = RunStats()
    files = find_files(paths, stats.reports, stats.passed)
    # the analysis stops itself first, saying how far it got; a worker that does not is
    # stopped a little later
    options = replace(options, timeout=timeout, cpu_limit=cpu_limit)
    stops = Stops(cpu_limit, timeout, stuck)
    with ResultsFile(out, resume, options) as results, \
            Pool(min(jobs or default_jobs(), max(1, len(files)))
                 if engine_name == "local" else min(default_jobs(), max(1, len(files)))
                 ) as pool:
        stats.cut = results.cut
        outlines = _scan(pool, files, options, stops)
        failed = []
        for found in outlines:
            if found.failure is None:
                continue
            status, message = found.failure
            if status == "not-regular":
                stats.passed[message] += 1
            else:
                stats.unreadable.append(message)
                failed.append(file_record(found.file, status, message, found.size, options))
        refs = refs_of(outlines)
        stats.distinct = len(refs) + len(failed)
        stats.modules = stats.distinct + sum(len(r.duplicates) for r in refs)
        todo = sorted((r for r in refs if r.sha256 not in results.done), key=lambda r: -r.size)
        fresh = [r for r in failed if r["sha256"] not in results.done]
        stats.skipped = stats.distinct - len(todo) - len(fresh)
        if ready is not None:
            ready(stats)
        for record in fresh:
            results.write(record)
        for ref in refs:  # texts recorded, at places not yet recorded: copies
            if ref.sha256 in results.done and any(
                    (file, index) not in results.places for file, index, _ in _places(ref)):
                _copies(results, results.record_of(ref.sha256), _places(ref))
        if todo:
            if jobs is not None:
                jobs = min(jobs, len(todo))
            repeats = {(r.file, r.index): _places(r) for r in todo}
            if engine_name == "local":
                records = run_local((Task.of(r) for r in todo), options, jobs, stops,
                                    pool=pool)
            else:
                reader = TaskReader(read=lambda path: _read_in(pool, path, options, stops))
                records = run(reader.tasks(todo), options, jobs, stops, address)
            for done, record in enumerate(records, 1):
                results.write(record)
                _copies(results, record, repeats.pop((record["file"], record["module"]), ()))
                if progress is not None:
                    progress(done, len(todo))
        stats.written = results.written
    return stats


def _scan(pool: Pool, files: list[str], options: Options, stops: Stops) -> list[Outline]:
    """The outline of each file, read in the pool's workers, in the order of ``files`` (a
    file whose worker died or was stopped is a failure saying so)."""
    found: dict[str, Outline] = {}
    for (path, _), outcome in pool.map(outline, ((f, options.max_bytes) for f in files), stops):
        if isinstance(outcome, Died):
            outcome = Outline(path, failure=("error", f"cannot read {path}: the worker "
                                                      f"process died while reading it"))
        elif isinstance(outcome, Stopped):
            outcome = Outline(path, failure=("timeout", f"cannot read {path}: {outcome.why} "
                                                        f"while reading it"))
        found[path] = outcome
    return [found[f] for f in files]


def _read_in(pool: Pool, path: str, options: Options, stops: Stops) -> dict[int, Section]:
    """The sections of ``path``, read in a worker of ``pool`` (none if it gave none)."""
    found = pool.call(read_sections, path, options.max_bytes, stops=stops)
    return found if isinstance(found, dict) else {}


def _places(ref: ModuleRef) -> list[tuple[str, int, int]]:
    return [(ref.file, ref.index, ref.line), *ref.duplicates]


def _copies(results: ResultsFile, record: dict[str, Any],
            places: Iterable[tuple[str, int, int]]) -> None:
    """Record ``record``'s module at each of ``places`` not yet recorded (a copy that says
    which record it repeats)."""
    for file, index, line in places:
        if (file, index) not in results.places:
            results.write(duplicate_record(record, file, index, line))
