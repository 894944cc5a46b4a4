"""A corpus run from end to end: find the modules, skip those already recorded, send the
rest to an engine (largest first, so that the long ones do not come last and keep one
worker busy while the others idle), and append each record as it arrives."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from symidx.corpus.engines import engine
from symidx.corpus.record import Options, duplicate_record
from symidx.corpus.results import ResultsFile
from symidx.corpus.sources import TaskReader, find_files, scan

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
    with ResultsFile(out, resume) as results:
        stats.cut = results.cut
        todo = sorted((r for r in refs if r.sha256 not in results.done), key=lambda r: -r.size)
        stats.skipped = len(refs) - len(todo)
        if ready is not None:
            ready(stats)
        if not todo:
            return stats
        if jobs is not None:
            jobs = min(jobs, len(todo))
        repeats = {(r.file, r.index): r.duplicates for r in todo if r.duplicates}
        for done, record in enumerate(run(TaskReader().tasks(todo), options, jobs, timeout,
                                          address), 1):
            results.write(record)
            for place in repeats.pop((record["file"], record["module"]), ()):
                results.write(duplicate_record(record, *place))
            if progress is not None:
                progress(done, len(todo))
        stats.written = results.written
    return stats
