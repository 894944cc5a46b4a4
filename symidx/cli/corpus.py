"""symidx corpus: analyse many modules, one JSON record each, resumable, on a pool of warm
processes or a Ray or Dask cluster.

PATH is a file, a folder (searched recursively for *.hlo, *.txt and *.mlir, each also
.gz, and *.hlo.pb) or a glob. A module is HLO text, StableHLO/MHLO text (MLIR, as
jax.jit(f).lower(x).as_text() prints it) or binary HLO (.hlo.pb, as XLA dumps it with
--xla_dump_hlo_as_proto), the last two converted with jaxlib (the jax extra; without it
.hlo.pb files are passed over and counted). In an XLA dump folder (--xla_dump_to), the
reports XLA writes beside each module (buffer assignment, live ranges, memory usage) are
skipped and counted, not read. Only regular files are read: a FIFO, a device (a symlink
to /dev/zero), a socket is passed over and counted. Every file is read by a worker
process, never by this one, so that no file can stop the run; a file whose text has more
than --max-bytes bytes (decompressed: a small .gz may inflate to gigabytes) is recorded as
too-large, one that cannot be read as an error, and an empty file gets a record too. A file holding
several modules split by '// -----' lines (XLA's lit tests) gives one module per
section, numbered from 0 (FILE#K). Each module is analysed as `symidx maps FILE --all`
does (every fusion; a module without a fusion: its entry computation whole, as
`--computation ENTRY`), or with --computation NAME as `symidx maps FILE --computation
NAME` does, and one line of JSON is appended to RESULTS for it (schema
symidx.corpus/1, docs/corpus.md): its SHA-256, file, status (ok, parse-error, error,
timeout), message with location, parse and analysis seconds, counts, unsupported and
opaque ops, and with --maps the symidx.maps/1 document itself.

Records are written and flushed as they arrive: a run that is stopped loses only the
modules in flight, and --resume carries on, skipping every module whose SHA-256 is
already in RESULTS. At the end a summary goes to stderr; --report writes it as Markdown
or HTML with a plot of analysis time against module size (needs matplotlib), every kind
of failure with its count. --out, --report and the plot beside a Markdown report must be
three different files (checked before anything is written).

Limits count work, so that a module's record does not depend on how busy the machine is:
a module may use --cpu-limit CPU seconds (default 300, reading and parsing included);
--timeout adds seconds of the wall clock, only when given. A local worker that gives no
answer is stopped a little past its CPU budget (its CPU read from /proc), or when it has
used no CPU for 60 s (it waits for what will not come).

Exit codes (of what RESULTS holds, resumed runs included): 0 every module recorded ok;
1 some modules failed (status parse-error, error, timeout or too-large; the others are
ok); 4 no module is ok (every one failed, or there was none); 2 the run could not be made
(bad usage, a results file that cannot be written); 130, 143, 129 stopped by Ctrl-C,
SIGTERM, SIGHUP.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from typing import TYPE_CHECKING

from symidx._text import terminal_safe
from symidx.cli.common import (
    DEFAULT_MAX_MAPS,
    UsageError,
    add_time_limits,
    check_writable,
    count,
)
from symidx.cli.signals import exit_code, how, stopped_by_signals
from symidx.corpus.sources import DEFAULT_MAX_BYTES
from symidx.errors import SymidxError

if TYPE_CHECKING:
    from symidx.corpus import RunStats, Summary

#: The engines, and the module and extra each needs.
ENGINES = {"local": None, "ray": ("ray", "ray"), "dask": ("distributed", "dask")}
#: The test-only hook (``MODULE:FUNCTION``, a module on the workers' path), from the
#: environment: see :class:`symidx.corpus.record.Options`.
HOOK_VARIABLE = "SYMIDX_CORPUS_TEST_HOOK"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("corpus", help="analyse many modules into a JSON-lines results file "
                                      "(resumable; local processes, Ray or Dask)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, folders or globs")
    p.add_argument("--out", required=True, metavar="RESULTS.jsonl",
                   help="the results file: one JSON record per module")
    p.add_argument("--jobs", type=_positive_int, default=None, metavar="N",
                   help="modules analysed at once (default: local, the processors here; "
                        "ray and dask, the cluster's)")
    p.add_argument("--engine", choices=tuple(ENGINES), default="local",
                   help="local: a pool of processes here (default); ray, dask: a cluster "
                        "(extras symidx[ray], symidx[dask])")
    p.add_argument("--address", metavar="ADDR",
                   help="ray: the cluster to join (auto, HOST:PORT, ray://HOST:PORT; "
                        "default $RAY_ADDRESS); dask: the scheduler (tcp://HOST:8786; default "
                        "$DASK_SCHEDULER_ADDRESS); without either: a new local cluster for "
                        "the run")
    add_time_limits(p, 300.0, "a module (reading and parsing included)",
                    "it is stopped and recorded as timeout")
    p.add_argument("--max-bytes", type=byte_count, default=DEFAULT_MAX_BYTES, metavar="N",
                   help=f"the most bytes a file's text may have, decompressed, before it is "
                        f"recorded as too-large without being read further (default "
                        f"{DEFAULT_MAX_BYTES >> 20}M; suffixes K, M, G; 0: no limit)")
    p.add_argument("--max-maps", type=count, default=DEFAULT_MAX_MAPS, metavar="N",
                   help=f"distinct maps the analysis of a module may hold before it is "
                        f"stopped and recorded as an error saying so (default "
                        f"{DEFAULT_MAX_MAPS:,}; 0: no limit)")
    p.add_argument("--resume", action="store_true",
                   help="carry on a run: skip the modules already in RESULTS (without it, "
                        "RESULTS must not hold records yet)")
    p.add_argument("--direction", choices=("output-to-input", "input-to-output"),
                   default="output-to-input")
    p.add_argument("--computation", metavar="NAME",
                   help="analyse computation NAME (ENTRY: the entry computation) whole, "
                        "instead of every fusion")
    p.add_argument("--assume-finite", action="store_true",
                   help="the finite semantics: the reads that matter when every input is "
                        "finite (default: reads, NaN and infinities included)")
    p.add_argument("--maps", action="store_true",
                   help="put the maps themselves in each record (the symidx.maps/1 document)")
    p.add_argument("--report", metavar="FILE.html|FILE.md",
                   help="write the summary with a plot of analysis time against module size "
                        "(needs matplotlib: pip install 'symidx[plot]')")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    _check(args)
    from symidx.cli.progress import Progress
    from symidx.corpus import Options, Summary, run_corpus, write_report

    options = Options(direction=args.direction, computation=args.computation, maps=args.maps,
                      hook=os.environ.get(HOOK_VARIABLE) or None,
                      assume_finite=args.assume_finite, max_maps=args.max_maps or None,
                      max_bytes=args.max_bytes or None)
    progress = Progress("corpus", unit="module")

    def ready(stats: RunStats) -> None:
        _announce(stats)
        progress.start = time.monotonic()  # the rate is that of the analysis alone

    try:
        with stopped_by_signals():
            stats = run_corpus(args.paths, args.out, options, engine_name=args.engine,
                               jobs=args.jobs, address=args.address,
                               timeout=args.timeout or None, cpu_limit=args.cpu_limit or None,
                               resume=args.resume, progress=progress, ready=ready)
    except KeyboardInterrupt as e:
        progress.close()
        print(f"symidx: {how(e)}: {terminal_safe(args.out)} holds every module finished "
              f"so far; --resume carries on", file=sys.stderr)
        return exit_code(e)
    finally:
        progress.close()
    if stats.passed:
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(stats.passed.items()))
        print(f"symidx: passed over {sum(stats.passed.values())} files that are not regular "
              f"files or cannot be read here ({terminal_safe(kinds)})", file=sys.stderr)
    if stats.reports:
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(stats.reports.items()))
        print(f"symidx: skipped {sum(stats.reports.values())} XLA dump reports, not modules "
              f"({kinds})", file=sys.stderr)
    summary = Summary.of_file(args.out)
    print(f"symidx: {stats.written} records written to {terminal_safe(args.out)}"
          + (f", {stats.skipped} modules already there" if stats.skipped else "")
          + f"; it holds {summary.total}", file=sys.stderr)
    print(summary.text(), file=sys.stderr)
    if args.report:
        write_report(summary, args.report, f"symidx corpus: {args.out}")
        print(f"symidx: report written to {terminal_safe(args.report)}", file=sys.stderr)
    return exit_status(summary)


#: Some modules failed; no module is ok (every one failed, or there was none).
SOME_FAILED, NONE_OK = 1, 4


def exit_status(summary: Summary) -> int:
    """The exit code a results file's summary gives (see the command's description)."""
    if not summary.statuses["ok"]:
        return NONE_OK
    return SOME_FAILED if summary.total > summary.statuses["ok"] else 0


def _announce(stats: RunStats) -> None:
    if stats.cut:
        print(f"symidx: note: cut a partial last line ({stats.cut} bytes) off the results "
              f"file: its module is done again", file=sys.stderr)
    repeats = stats.modules - stats.distinct
    print(f"symidx: {stats.modules} modules"
          + (f" ({repeats} repeating another's text)" if repeats else "")
          + (f", {stats.skipped} already recorded" if stats.skipped else "")
          + f", {stats.distinct - stats.skipped} to analyse", file=sys.stderr)


def _check(args: argparse.Namespace) -> None:
    """Usage errors found before any work starts."""
    if args.address is not None and args.engine == "local":
        raise UsageError("symidx corpus: --address is for --engine ray or dask")
    from symidx.corpus.summary import report_picture

    outputs = [("--out", args.out)]
    if args.report is not None:
        outputs.append(("--report", args.report))
        if args.report.endswith(".md"):
            outputs.append(("the plot beside the --report", report_picture(args.report)))
    _distinct(outputs)
    needs = ENGINES[args.engine]
    if needs is not None and importlib.util.find_spec(needs[0]) is None:
        raise SymidxError(f"the {args.engine} engine needs {needs[0]}: "
                          f"pip install 'symidx[{needs[1]}]'")
    if args.report is not None:
        if not args.report.endswith((".html", ".htm", ".md")):
            raise UsageError("symidx corpus: --report writes FILE.html or FILE.md")
        if importlib.util.find_spec("matplotlib") is None:
            raise UsageError("symidx corpus: --report needs matplotlib: "
                             "pip install 'symidx[plot]'")
        check_writable(args.report)  # before the run, not after it
        if args.report.endswith(".md"):
            check_writable(report_picture(args.report))


def _distinct(outputs: list[tuple[str, str]]) -> None:
    """Refuse outputs that are one file (whatever the spelling: a relative path, a
    symlink, a hard link), so that no output overwrites another."""
    seen: dict[object, tuple[str, str]] = {}
    for what, path in outputs:
        key = _identity(path)
        if key in seen:
            first, other = seen[key]
            same = f"{terminal_safe(path)}" if path == other else \
                f"{terminal_safe(other)} and {terminal_safe(path)}"
            raise UsageError(f"symidx corpus: {first} and {what} are the same file ({same}): "
                             f"one would overwrite the other; give them different files")
        seen[key] = (what, path)


def _identity(path: str) -> object:
    """What makes a file itself: its device and inode when it exists (through symlinks and
    hard links), else its real path."""
    try:
        found = os.stat(path)
    except OSError:
        return os.path.realpath(path)
    return (found.st_dev, found.st_ino)


def byte_count(text: str) -> int:
    """A number of bytes, with an optional suffix K, M or G (powers of 1024); 0: none."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    body, unit = (text[:-1], text[-1].upper()) if text[-1:].upper() in "KMG" and text[-1:] \
        else (text, "")
    try:
        value = int(body) * units[unit]
    except (ValueError, KeyError):
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of bytes (like 256M; 0: no "
                                         f"limit), found {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, found {text!r}")
    return value
