"""Corpus scale: many modules analysed by warm workers, one JSON record each, resumable.

``symidx corpus PATH... --out RESULTS.jsonl`` (:mod:`symidx.cli.corpus`) is the front;
the parts are:

* :mod:`~symidx.corpus.sources` — files, folders and globs (regular files only, read up to
  a limit of bytes, decompressed; binary HLO through jaxlib); files split into modules at
  ``// -----`` lines; each module known by the SHA-256 of its text;
* :mod:`~symidx.corpus.record` — the work of one module (:func:`analyse`): a record of
  the schema ``symidx.corpus/1`` (``docs/corpus.md``, ``symidx/schemas/corpus-1.json``);
* :mod:`~symidx.corpus.engines` — who does the work: ``local`` (a pool of warm processes,
  which read the files too, each stopped by its CPU time), ``ray`` and ``dask`` (extras of
  the same names), and when an engine stops a worker (:class:`~symidx.corpus.engines.Stops`);
* :mod:`~symidx.corpus.results` — the results file, appended and flushed per record, read
  back to resume;
* :mod:`~symidx.corpus.run` — the run from end to end (:func:`run_corpus`);
* :mod:`~symidx.corpus.summary` — the summary and the report.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from symidx.corpus.record import SCHEMA, STATUSES, Options, analyse
    from symidx.corpus.run import RunStats, run_corpus
    from symidx.corpus.sources import ModuleRef, Section, Task, find_files, scan, split_sections
    from symidx.corpus.summary import Summary, write_report

# Each name is imported from its module when first used, so that reading files
# (symidx.corpus.sources, used by every verb) does not import the analysis (start-up).
_HOMES = {
    "SCHEMA": "record", "STATUSES": "record", "Options": "record", "analyse": "record",
    "RunStats": "run", "run_corpus": "run",
    "ModuleRef": "sources", "Section": "sources", "Task": "sources", "find_files": "sources",
    "scan": "sources", "split_sections": "sources",
    "Summary": "summary", "write_report": "summary",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'symidx.corpus' has no attribute {name!r}")
    value = getattr(import_module(f"symidx.corpus.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "SCHEMA",
    "STATUSES",
    "Options",
    "analyse",
    "RunStats",
    "run_corpus",
    "ModuleRef",
    "Section",
    "Task",
    "find_files",
    "scan",
    "split_sections",
    "Summary",
    "write_report",
]
