"""``symidx bench``: run the benchmark suite, print the table, write the plot."""

from __future__ import annotations

import argparse
import json

from symidx.cli.common import check_writable, need
from symidx.errors import SymidxError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bench", help="time composition, simplification and verification, "
                                     "beside islpy and MLIR where installed",
                       description="Prints a table: per case and size, each engine's median "
                                   "± half the interquartile range over interleaved "
                                   "repetitions, in CPU time (this process and the ones "
                                   "it waited for, never wall time), the ratios, and the "
                                   "error of any engine that failed (the table always "
                                   "completes).")
    p.add_argument("--quick", action="store_true",
                   help="fewer sizes and samples (well under a minute)")
    p.add_argument("--json", metavar="FILE",
                   help="also write the rows as JSON (schema symidx.bench/1, "
                        "symidx/schemas/bench-1.json): per engine the median and spread "
                        "in CPU seconds, the samples, errors and ratios")
    p.add_argument("--png", metavar="FILE", default="symidx-bench.png",
                   help="where to write the plot of cost against size "
                        "(default: %(default)s; needs matplotlib)")
    p.add_argument("--no-plot", action="store_true", help="do not write the plot")
    p.add_argument("--case", action="append", dest="cases", metavar="NAME",
                   help="run only this case: compose, chain, seeds, ladder, fusions, equal "
                        "or layouts (repeatable; default: all)")
    p.set_defaults(run=run_bench)


def run_bench(args: argparse.Namespace) -> int:
    from symidx.bench import (
        NOTES,
        available_backends,
        document,
        format_table,
        has_z3,
        plot,
        run,
    )
    if not args.no_plot and args.png != "symidx-bench.png":
        need("matplotlib", "plot", "--png")  # asked for by name: say so before the work
    if args.json is not None:
        check_writable(args.json)  # before the run, not after it

    backends = available_backends()
    missing = {"islpy", "MLIR"} - {b.name for b in backends}
    from symidx.cli.progress import Progress

    rows = run(quick=args.quick, cases=args.cases, backends=backends,
               progress=Progress("symidx bench", unit="case"))
    print(format_table(rows))
    if args.json is not None:
        text = json.dumps(document(rows, args.quick, backends), indent=1) + "\n"
        try:
            with open(args.json, "w", encoding="utf-8") as out:
                out.write(text)
        except OSError as e:
            raise SymidxError(f"cannot write {args.json}: {e.strerror or e}") from None
    print()
    for note in NOTES:
        print(f"* {note}")
    for name in sorted(missing):
        package = "jaxlib (MLIR's bindings)" if name == "MLIR" else name
        extra = "isl" if name == "islpy" else "bench"
        print(f"* {package} is not installed (pip install 'symidx[{extra}]'): "
              f"the {name} column is empty")
    if not has_z3():
        print("* z3 is not installed (pip install 'symidx[proofs]'): no (z3) rows")
    if not args.no_plot:
        try:
            written = plot(rows, args.png)
        except SymidxError as e:  # matplotlib missing
            print(f"* no plot: {e}")
        else:
            print(f"* plot written to {args.png}" if written
                  else "* no case was measured at several sizes: no plot")
    if args.json is not None:
        print(f"* rows written as JSON to {args.json}")
    return 0
