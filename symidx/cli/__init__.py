"""The ``symidx`` command line.

``main(argv)`` prints to stdout and returns the exit code: 0 success, 1 a negative answer
(``verify`` found the maps different), 2 bad input or usage, 3 undecided or stopped at a
limit (``--timeout``, ``--max-maps``), 130 interrupted (Ctrl-C). Bad input is reported on
stderr as one line with its location (and the offending line with a caret under the spot),
never as a traceback.

Each command lives in its own module here and registers itself through ``register(sub)``.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence

from symidx import __version__
from symidx._gc import YOUNG_COLLECTION
from symidx.cli import batch, bench, corpus, layout, maps, mapverbs, tile
from symidx.cli.common import Parser, UsageError
from symidx.errors import LimitReached, ParseError, SymidxError

__all__ = ["main", "main_entry"]

#: Allocations between young garbage collections in a ``symidx`` process (see main_entry).
_YOUNG_COLLECTION = YOUNG_COLLECTION

COMMAND_MODULES = (mapverbs, maps, bench, layout, batch, corpus, tile)


def build_parser() -> Parser:
    ap = Parser(prog="symidx", description="Symbolic indexing maps for XLA HLO and layouts.")
    ap.add_argument("--version", action="version", version=f"symidx {__version__}")
    # Commands that run other commands (batch) get the command line itself.
    ap.set_defaults(command_line=main)
    sub = ap.add_subparsers(dest="command", required=True, parser_class=Parser)
    for module in COMMAND_MODULES:
        module.register(sub)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
        return int(args.run(args))
    except SystemExit as e:  # --help and --version
        return e.code if isinstance(e.code, int) else 0
    except UsageError as e:
        print((e.usage or _usage_of(parser, argv)).rstrip(), file=sys.stderr)
        print(e, file=sys.stderr)
        return 2
    except LimitReached as e:
        print(f"symidx: stopped: {e}", file=sys.stderr)
        return 3
    except ParseError as e:
        print(f"symidx: error: {e}", file=sys.stderr)
        print(e.excerpt(), file=sys.stderr)
        return 2
    except SymidxError as e:
        print(f"symidx: error: {e}", file=sys.stderr)
        return 2
    except RecursionError:
        print("symidx: error: input nested too deeply", file=sys.stderr)
        return 2


def _usage_of(parser: Parser, argv: Sequence[str] | None) -> str:
    """The usage of the subcommand named in ``argv`` (the whole program's if none)."""
    words = list(sys.argv[1:] if argv is None else argv)
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        choices = getattr(action, "choices", None) or {}
        for word in words:
            if word in choices:
                return str(choices[word].format_usage())
    return parser.format_usage()


def main_entry() -> None:
    """Console-script entry point. A reader that stops early (``| head``) ends the output
    quietly; Ctrl-C ends it with one line on stderr and exit code 130.

    The process collects young garbage every ``_YOUNG_COLLECTION`` allocations instead of
    Python's 700: a command's imports (sympy's above all), its parsed module and its maps
    are long-lived objects that each young collection would traverse again for nothing."""
    gc.set_threshold(_YOUNG_COLLECTION, *gc.get_threshold()[1:])
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback, the shell's code for SIGINT
        print("\nsymidx: interrupted", file=sys.stderr)
        code = 130
    except OSError as e:  # what symidx writes itself says which file; this is stdout
        import os

        print(f"symidx: error: cannot write to stdout: {e.strerror or e}", file=sys.stderr)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 2
    sys.exit(code)
