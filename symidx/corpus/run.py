"""A corpus run from end to end: find the modules, skip those already recorded, send the
rest to an engine (largest first, so that the long ones do not come last and keep one
worker busy while the others idle), and append each record as it arrives."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from symidx.corpus.engines import engine
from symidx.corpus.record import Options, duplicate_record
from symidx.corpus.results import ResultsFile
from symidx.corpus.sources import ModuleRef, TaskReader, find_files, scan

__all__ = ["RunStats", "run_corpus"]


@dataclass
class RunStats:
    """What a run did: modules found (``distinct`` texts among them), already recorded
    (``skipped``), recorded now (``written``), files that could not be read, the reports of
    XLA dump folders passed over (``reports``, by kind) and the bytes of a partial last line
    cut off the results file."""

    modules: int = 0
    distinct: int = 0
    skipped: int = 0
    written: int = 0
    unreadable: list[str] = field(default_factory=list)
    reports: Counter[str] = field(default_factory=Counter)
    cut: int = 0


def run_corpus(paths: Sequence[str], out: str, options: Options, *, engine_name: str = "local",
               jobs: int | None = None, address: str | None = None,
               timeout: float | None = 300.0, resume: bool = False,
               progress: Callable[[int, int], None] | None = None,
               ready: Callable[[RunStats], None] | None = None) -> RunStats:
    """Record every module of ``paths`` in the results file ``out`` (see
    :mod:`symidx.corpus`). ``progress(done, total)`` is called after each module;
    ``ready(stats)`` once the modules are known, before the work starts."""
    run = engine(engine_name)
    stats = RunStats()
    refs = scan(find_files(paths, stats.reports), stats.unreadable)
    stats.distinct = len(refs)
    stats.modules = len(refs) + sum(len(r.duplicates) for r in refs)
    if timeout is not None:  # the analysis stops itself first, saying how far it got
        options = replace(options, timeout=timeout)
    with ResultsFile(out, resume, options) as results:
        stats.cut = results.cut
        todo = sorted((r for r in refs if r.sha256 not in results.done), key=lambda r: -r.size)
        stats.skipped = len(refs) - len(todo)
        if ready is not None:
            ready(stats)
        for ref in refs:  # texts recorded, at places not yet recorded: copies
            if ref.sha256 in results.done and any(
                    (file, index) not in results.places for file, index, _ in _places(ref)):
                _copies(results, results.record_of(ref.sha256), _places(ref))
        if not todo:
            stats.written = results.written
            return stats
        if jobs is not None:
            jobs = min(jobs, len(todo))
        repeats = {(r.file, r.index): _places(r) for r in todo}
        for done, record in enumerate(run(TaskReader().tasks(todo), options, jobs,
                                          _hard_limit(timeout), address), 1):
            results.write(record)
            _copies(results, record, repeats.pop((record["file"], record["module"]), ()))
            if progress is not None:
                progress(done, len(todo))
        stats.written = results.written
    return stats


def _places(ref: ModuleRef) -> list[tuple[str, int, int]]:
    return [(ref.file, ref.index, ref.line), *ref.duplicates]


def _copies(results: ResultsFile, record: dict[str, Any],
            places: Iterable[tuple[str, int, int]]) -> None:
    """Record ``record``'s module at each of ``places`` not yet recorded (a copy that says
    which record it repeats)."""
    for file, index, line in places:
        if (file, index) not in results.places:
            results.write(duplicate_record(record, file, index, line))


def _hard_limit(timeout: float | None) -> float | None:
    """When an engine stops a worker that has not answered: a little after the analysis
    should have stopped itself (at ``timeout``), so that a module that hangs outside the
    analysis (or in a C extension) is still stopped."""
    return None if timeout is None else timeout + min(5.0, max(1.0, timeout / 10))
