"""``symidx pallas MODULE:FUNCTION``: the block specs of every ``pallas_call`` a JAX function
binds, checked without running the kernel (:func:`symidx.pallas.pallas_report`): per operand,
the index map as an indexing map (grid point -> block index), blocks out of bounds (with the
grid point), partial edge blocks, output blocks written back twice, by racing cores or
never, and the footprint read.

The function is traced on its example arguments, found as for ``symidx maps --jax``:
``--jax-args MODULE:NAME``, else ``FUNCTION_example_args`` or ``example_args`` in the
function's module (a tuple, or a callable returning one; arrays or
``jax.ShapeDtypeStruct`` s). Exit code 0 when every block spec is fine, 1 when one has a
problem, 2 on bad input. Needs the jax extra.
"""

from __future__ import annotations

import argparse
import sys

from symidx.cli.common import UsageError

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("pallas", help="check the block specs of a JAX function's pallas_calls "
                                      "(bounds, edge blocks, output blocks written twice or "
                                      "never, footprint) without running the kernel",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("function", metavar="MODULE:FUNCTION",
                   help="the JAX function (package.module:function, or path/to/file.py:"
                        "function); importing it runs its module")
    p.add_argument("--jax-args", metavar="MODULE:NAME",
                   help="its example arguments: a tuple, or a callable returning one")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text (default) or json (the symidx.pallas/1 document)")
    p.add_argument("--limit", type=_positive, default=None, metavar="N",
                   help="most grid points a pallas_call is checked at (default 2^20)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from symidx.jax_support import example_args, load_function
    from symidx.pallas import GRID_LIMIT, pallas_report

    fn = load_function(args.function)
    example = example_args(args.function, args.jax_args)
    report = pallas_report(fn, *example, limit=args.limit or GRID_LIMIT)
    if args.format == "json":
        sys.stdout.write(report.to_json() + "\n")
    else:
        print(report)
    return 0 if report.ok else 1


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(f"--limit takes a positive integer, not {text!r}")
    return value
