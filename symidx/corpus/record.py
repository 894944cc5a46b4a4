"""The work of one module, as every engine runs it: parse, analyse, and describe the outcome
as one JSON record of the schema ``symidx.corpus/1`` (``docs/corpus.md``; the JSON Schema is
``symidx/schemas/corpus-1.json``).

:func:`analyse` is a pure function of the module's text and the :class:`Options` (timing
fields aside), so that the local pool, Ray and Dask give the same records. It never raises
for a bad module: a parse failure is status ``parse-error``, a failure of the analysis
(an instruction XLA's verifier rejects, located; an internal error, named) is ``error``.
The engines add the two outcomes a worker cannot report itself: ``timeout`` and a worker
that died (:func:`failure_record`). A task may come without its text (the local engine's):
the worker then reads the module from its file itself (:func:`symidx.corpus.sources.read_sections`),
so that no file can stop the run; a file that could not be read at all has a record made by
the run itself (:func:`file_record`: ``error``, or ``too-large``).

This module imports the analysis at its top, so that a worker process that imports it once
is warm for every module it is given.
"""

from __future__ import annotations

import importlib
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from symidx._budget import TimeBudget
from symidx._text import lazy_pattern
from symidx.analysis import (
    find_computation,
    iter_computation_maps,
    module_fusion_maps,
    select_entries,
    semantics_name,
)
from symidx.analysis.documents import computations_document, fusions_document
from symidx.core.indexing_map.direction import Direction
from symidx.corpus.sources import DEFAULT_MAX_BYTES, Task, read_sections, sha256_of
from symidx.errors import LimitReached, ParseError, SymidxError
from symidx.fusion import Analysis
from symidx.hlo import HloModule, parse_module
from symidx.hlo.validate import violations

__all__ = ["SCHEMA", "STATUSES", "Options", "analyse", "failure_record", "duplicate_record",
           "file_record", "timed_out", "worker_died"]

#: The name and version of a corpus record.
SCHEMA = "symidx.corpus/1"
#: Every status a record can have.
STATUSES = ("ok", "parse-error", "error", "timeout", "too-large")
#: How many of a module's verifier warnings a record quotes (``counts.invalid`` has them all).
WARNINGS_QUOTED = 10


@dataclass(frozen=True)
class Options:
    """What is asked of every module.

    ``computation`` None: every fusion (as ``symidx maps --all``), or for a module without
    a fusion its entry computation whole; a name (``ENTRY``: the entry computation): that
    computation analysed whole (as ``symidx maps --computation``: output 0 to every
    parameter, or parameter 0 to every output input-to-output).
    ``maps``: put the ``symidx.maps/1`` document in the record. ``assume_finite``: the
    ``finite`` semantics instead of ``reads`` (:class:`symidx.fusion.Analysis`; the record
    says which in ``semantics``). ``hook``: for tests only,
    ``MODULE:FUNCTION``, a function of an importable module (imported by name, never
    loaded from a file) called with each :class:`~symidx.corpus.sources.Task` before it is
    analysed (to make a worker hang or crash). ``cpu_limit`` (CPU seconds of the worker,
    reading and parsing included), ``timeout`` (seconds of the wall clock, when asked for)
    and ``max_maps`` (distinct maps held) are the limits of a module's work
    (:class:`symidx.fusion.Limits`): past them the module is recorded as ``timeout`` (or
    ``error``, for the maps) with how far it got. ``max_bytes``: the most bytes a file's
    text may have, decompressed (past it, ``too-large``). They are how the work is done,
    not what is asked: ``--resume`` ignores them."""

    direction: str = "output-to-input"
    computation: str | None = None
    maps: bool = False
    hook: str | None = None
    assume_finite: bool = False
    timeout: float | None = None
    max_maps: int | None = None
    cpu_limit: float | None = None
    max_bytes: int | None = DEFAULT_MAX_BYTES


def analyse(task: Task, options: Options) -> dict[str, Any]:
    """The record of one module (see the module docstring)."""
    budget = TimeBudget(cpu=options.cpu_limit, wall=options.timeout)
    if task.text is None:  # read here, in the worker: a file that stops it stops nothing else
        section = read_sections(task.file, options.max_bytes).get(task.index)
        task = Task(task.file, task.index, task.line, "" if section is None else section.text)
    record = _base(task, options)
    if options.hook is not None:
        _hook(options.hook)(task)
    start = time.perf_counter()
    try:
        module = parse_module("\n" * (task.line - 1) + (task.text or ""), source=task.file,
                              validate=False)
    except (SymidxError, RecursionError) as e:
        return _failed(record, "parse-error", _message(e), parse=time.perf_counter() - start)
    except Exception as e:  # noqa: BLE001 - any other exception is a bug, recorded as such
        return _failed(record, "error", _internal(e, "parsing"),
                       parse=time.perf_counter() - start)
    record["parse_seconds"] = _seconds(time.perf_counter() - start)
    record["name"] = module.name or None
    record["counts"] = _module_counts(module)
    start = time.perf_counter()
    try:
        document, record["analysed"] = _document(module, options, budget)
        found = violations(module)
    except LimitReached as e:
        status = "error" if e.budget else "timeout"
        return _failed(record, status, _message(e), analysis=time.perf_counter() - start)
    except (SymidxError, RecursionError) as e:
        return _failed(record, "error", _message(e), analysis=time.perf_counter() - start)
    except Exception as e:  # noqa: BLE001
        return _failed(record, "error", _internal(e, "analysing"),
                       analysis=time.perf_counter() - start)
    record["analysis_seconds"] = _seconds(time.perf_counter() - start)
    groups = list(_groups(document))
    record["counts"].update(groups=len(groups), maps=sum(len(g["maps"]) for g in groups),
                            invalid=len(found))
    record["unsupported"] = _tally(g["unsupported"] for g in groups)
    record["opaque"] = _tally(g["opaque"] for g in groups)
    record["warnings"] = [str(e) for e in found[:WARNINGS_QUOTED]]
    if options.maps:
        record["maps"] = document
    return record


def failure_record(task: Task, options: Options, status: str, message: str) -> dict[str, Any]:
    """The record of a module whose worker gave no answer: ``timeout``, or ``error`` when
    the worker died (every engine says so in the same words: :func:`timed_out`,
    :func:`worker_died`)."""
    return _failed(_base(task, options), status, message)


def timed_out(task: Task, options: Options, why: str | float | None = None
              ) -> dict[str, Any]:
    """The record of a module whose worker was stopped: ``why`` says at what
    (``no result after 300 s of CPU``; a number: seconds of the wall clock)."""
    if not isinstance(why, str):
        why = f"no result after {why or 0:g} s"
    return failure_record(task, options, "timeout", f"{why}: the worker was stopped")


def worker_died(task: Task, options: Options) -> dict[str, Any]:
    """The record of a module whose worker died under it (a crash, an out-of-memory kill)."""
    return failure_record(task, options, "error", "the worker process died")


def file_record(file: str, status: str, message: str, size: int, options: Options
                ) -> dict[str, Any]:
    """The record of a file that could not be read (``error``) or is too large to
    (``too-large``): module 0 at line 1, and, for an identity, the SHA-256 of what stood in
    for its text (the status, the file and the message): a later run that can read it
    analyses it; one that still cannot, with ``--resume``, leaves it as it is."""
    record = _base(Task(file, 0, 1, ""), options)
    record["sha256"] = sha256_of(f"{status}\0{file}\0{message}")
    record["bytes"] = size
    return _failed(record, status, message)


def duplicate_record(record: dict[str, Any], file: str, index: int, line: int
                     ) -> dict[str, Any]:
    """The record of the same module text standing at another place: ``record`` with that
    place, and which record it repeats."""
    return {**record, "file": file, "module": index, "line": line,
            "duplicate_of": {"file": record["file"], "module": record["module"]}}


def _base(task: Task, options: Options) -> dict[str, Any]:
    record: dict[str, Any] = {
        "schema": SCHEMA, "sha256": task.sha256, "file": task.file,
        "module": task.index, "line": task.line, "name": None,
        "bytes": task.bytes, "status": "ok", "message": None,
        "direction": options.direction, "computation": options.computation,
        "semantics": semantics_name(options.assume_finite),
        "parse_seconds": None, "analysis_seconds": None, "counts": None,
        "unsupported": {}, "opaque": {}, "warnings": [], "maps": None, "duplicate_of": None,
        "analysed": None,
    }
    return record


def _failed(record: dict[str, Any], status: str, message: str, parse: float | None = None,
            analysis: float | None = None) -> dict[str, Any]:
    record["status"], record["message"] = status, message
    if parse is not None:
        record["parse_seconds"] = _seconds(parse)
    if analysis is not None:
        record["analysis_seconds"] = _seconds(analysis)
    return record


def _seconds(value: float) -> float:
    return round(value, 6)


def _message(error: BaseException) -> str:
    if isinstance(error, RecursionError):
        return "input nested too deeply"
    if isinstance(error, ParseError):
        return str(error)
    return str(error) or type(error).__name__


def _internal(error: Exception, doing: str) -> str:
    return f"internal error while {doing}: {type(error).__name__}: {error}"


def _module_counts(module: HloModule) -> dict[str, int]:
    instructions = [i for c in module.computations.values() for i in c.instructions]
    return {"computations": len(module.computations), "instructions": len(instructions),
            "fusions": sum(i.opcode == "fusion" for i in instructions)}


def _document(module: HloModule, options: Options, budget: TimeBudget
              ) -> tuple[dict[str, Any], str]:
    """The ``symidx.maps/1`` document ``symidx maps FILE --all`` (or ``--computation
    NAME``) prints for the module, in ``options.direction``, and what was analysed:
    ``"fusions"``; ``"entry"``, the entry computation whole, for a module without a fusion
    when every fusion was asked; ``"computation"`` for ``--computation NAME``."""
    direction = Direction.parse(options.direction)
    analysis = Analysis(verify=True, assume_finite=options.assume_finite,
                        max_maps=options.max_maps)
    analysis.limits.budget = budget  # the module's: reading and parsing count too
    fused = any(i.opcode == "fusion" for c in module.computations.values()
                for i in c.instructions)
    if options.computation is None and fused:
        found = module_fusion_maps(module, direction, analysis=analysis)
        return fusions_document(module, direction, found,
                                assume_finite=options.assume_finite), "fusions"
    analysed = "entry" if options.computation is None else "computation"
    comp = find_computation(module, options.computation or "ENTRY")
    chosen = select_entries(comp, direction)
    records = list(iter_computation_maps(comp, direction, operand=chosen.operand,
                                         outputs=chosen.outputs, analysis=analysis))
    return computations_document(module, direction, records,
                                 assume_finite=options.assume_finite), analysed


def _groups(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for entry in [*document.get("fusions", ()), *document.get("computations", ())]:
        yield from entry["operands"]


def _tally(values: Any) -> dict[str, int]:
    return dict(sorted(Counter(v for v in values if v is not None).items()))


_HOOKS: dict[str, Callable[[Task], None]] = {}
#: A hook names a function of an importable module, never a file.
_HOOK_SPEC = lazy_pattern(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):([A-Za-z_]\w*)")


def _hook(spec: str) -> Callable[[Task], None]:
    """The function ``MODULE:NAME`` of the module ``MODULE``, imported by name from the
    worker's ``sys.path`` (once per process): a module the tests put there, not a file."""
    found = _HOOKS.get(spec)
    if found is None:
        match = _HOOK_SPEC.fullmatch(spec)
        if match is None:
            raise SymidxError(f"the test hook {spec!r} is not MODULE:FUNCTION")
        try:
            found = getattr(importlib.import_module(match.group(1)), match.group(2))
        except (ImportError, AttributeError) as e:
            raise SymidxError(f"cannot import the test hook {spec!r}: {e}") from None
        _HOOKS[spec] = found
    return found
