"""The ``symidx`` command line.

``main(argv)`` prints to stdout and returns the exit code: 0 success, 1 a negative answer
(``verify`` found the maps different; ``corpus``: some modules failed), 2 bad input or
usage, 3 undecided or stopped at a limit (``--cpu-limit``, ``--timeout``, ``--max-maps``),
4 (``corpus``) no module analysed ok, 130 interrupted (Ctrl-C; 143 SIGTERM, 129 SIGHUP where
a command handles them). Bad input is reported on
stderr as one line with its location (and the offending line with a caret under the spot),
never as a traceback.

Each command lives in its own module here and registers itself through ``register(sub)``.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from symidx import __version__
from symidx._gc import YOUNG_COLLECTION
from symidx._text import terminal_safe
from symidx.cli.common import Parser, UsageError
from symidx.errors import LimitReached, ParseError, SymidxError

__all__ = ["main", "main_entry"]

#: Allocations between young garbage collections in a ``symidx`` process (see main_entry).
_YOUNG_COLLECTION = YOUNG_COLLECTION

#: The commands (``symidx COMMAND``) and the module of ``symidx.cli`` that registers each: a
#: command line that starts with one imports and builds the parser of its module alone, the
#: others' imports and arguments being of no use to read it (start-up).
#: ``tests/test_cli_daily.py`` checks the table against what each module registers.
COMMANDS: dict[str, str] = {
    **dict.fromkeys(("format", "simplify", "compose", "verify"), "mapverbs"),
    **{name: name for name in ("maps", "bench", "layout", "batch", "corpus", "tile", "pallas")},
}
#: The modules that register commands, in the order of the full parser.
COMMAND_MODULES = tuple(dict.fromkeys(COMMANDS.values()))


def command_module(name: str) -> ModuleType:
    """The module ``symidx.cli.NAME`` (a name of :data:`COMMAND_MODULES`), imported now."""
    return importlib.import_module(f"symidx.cli.{name}")


def build_parser(command: str | None = None) -> Parser:
    """The command line's parser: of every command, or of ``command``'s module alone (a
    name of :data:`COMMANDS`; the parser then reads only command lines that start with it)."""
    ap = Parser(prog="symidx", description="Symbolic indexing maps for XLA HLO and layouts.")
    ap.add_argument("--version", action="version", version=f"symidx {__version__}")
    # Commands that run other commands (batch) get the command line itself.
    ap.set_defaults(command_line=main)
    only = COMMANDS.get(command) if command is not None else None
    # Alone, a module's commands are not every command: the program's usage (printed for an
    # argument no command takes) still names them all, in their order of registration.
    names = None if only is None else "{" + ",".join(COMMANDS) + "}"
    sub = ap.add_subparsers(dest="command", required=True, parser_class=Parser, metavar=names)
    for module in COMMAND_MODULES if only is None else (only,):
        command_module(module).register(sub)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    # The first word names the command, if any: the program's own options (--help,
    # --version) come before it and take no value.
    parser = build_parser(words[0] if words else None)
    try:
        args = parser.parse_args(words)
        return int(args.run(args))
    except SystemExit as e:  # --help and --version
        return e.code if isinstance(e.code, int) else 0
    except UsageError as e:
        print((e.usage or _usage_of(parser, argv)).rstrip(), file=sys.stderr)
        print(e, file=sys.stderr)
        return 2
    except LimitReached as e:
        print(f"symidx: stopped: {terminal_safe(str(e))}", file=sys.stderr)
        return 3
    except ParseError as e:  # the message and the excerpt quote the input: made safe to show
        print(f"symidx: error: {terminal_safe(str(e))}", file=sys.stderr)
        print(e.excerpt(), file=sys.stderr)
        return 2
    except SymidxError as e:
        print(f"symidx: error: {terminal_safe(str(e))}", file=sys.stderr)
        return 2
    except RecursionError:
        print("symidx: error: input nested too deeply", file=sys.stderr)
        return 2
    except MemoryError:  # a limit the machine set (ulimit, a container): said, as one
        print("symidx: stopped: ran out of memory (a smaller --max-maps holds fewer maps "
              "at once)", file=sys.stderr)
        return 3


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
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback, the shell's code for SIGINT
        print("\nsymidx: interrupted", file=sys.stderr)
        code = 130
    except OSError as e:  # what symidx writes itself says which file; this is stdout
        print(f"symidx: error: cannot write to stdout: {e.strerror or e}", file=sys.stderr)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 2
    # At exit, the interpreter's last collections would traverse every object left (sympy's
    # alone: about a sixth of a `maps` run's CPU) only to find that reference counting frees
    # them: the objects are taken out of the collector's view instead. The exit handlers
    # (worker pools, progress bars) still run; only cycles left as garbage are not collected.
    gc.freeze()
    sys.exit(code)
