"""The ``symidx`` command line.

``main(argv)`` prints to stdout and returns the exit code: 0 success, 1 a negative answer
(``verify`` found the maps different), 2 bad input or usage. Bad input is reported on
stderr as one line with its location (and the offending line with a caret under the spot),
never as a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from symidx.errors import ParseError, SymidxError
from symidx.indexing_map import IndexingMap, compose
from symidx.syntax import STYLES, parse_map, print_expr, print_map

__all__ = ["main", "main_entry"]


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(f"{self.prog}: {message}")


def _add_style(p: argparse.ArgumentParser) -> None:
    p.add_argument("--style", choices=STYLES, default="doc",
                   help="doc: the seeds' multi-line form (default); xla: one line as current "
                        "XLA prints; mlir: affine_map<...>")


def _build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="symidx", description="Symbolic indexing maps for XLA HLO and layouts.")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("format", help="parse a map and print it in canonical text, unchanged")
    p.add_argument("map", help="map text, or - to read it from stdin")
    _add_style(p)

    p = sub.add_parser("simplify", help="print the simplified map")
    p.add_argument("map", help="map text, or - to read it from stdin")
    p.add_argument("--explain", action="store_true",
                   help="also print each rewrite step (rule, before, after)")
    _add_style(p)

    p = sub.add_parser("compose", help="second ∘ first (first applied first), simplified")
    p.add_argument("first")
    p.add_argument("second")
    p.add_argument("--no-simplify", action="store_true", help="print the raw composition")
    _add_style(p)

    p = sub.add_parser("verify", help="are two maps the same function on the same domain?")
    p.add_argument("a")
    p.add_argument("b")

    p = sub.add_parser("maps", help="the indexing maps of one HLO instruction")
    p.add_argument("file", help="HLO module text file, or - to read it from stdin")
    p.add_argument("--instruction", help="instruction name (default: the entry root)")
    p.add_argument("--direction", choices=("output-to-input", "input-to-output"),
                   default="output-to-input")
    p.add_argument("--operand", type=int, default=None,
                   help="output-to-input: only operand K; input-to-output: input K (default 0)")
    p.add_argument("--output", type=int, default=None,
                   help="output K of a multi-output instruction (default 0)")
    p.add_argument("--format", choices=("text", "json", "mlir"), default="text",
                   help="text (default), json, or text with affine_map<...> maps")
    _add_style(p)
    p.add_argument("--physical", action="store_true",
                   help="maps between physical (layout-ordered) indices")
    return ap


def _read(arg: str, label: str) -> IndexingMap:
    text = sys.stdin.read() if arg == "-" else arg
    return parse_map(text, source=label)


def _cmd_format(args: argparse.Namespace) -> int:
    print(print_map(_read(args.map, "map"), args.style))
    return 0


def _cmd_simplify(args: argparse.Namespace) -> int:
    from symidx.simplify import simplify

    m = _read(args.map, "map")
    if args.explain:
        result = simplify(m, trace=True)
        names = dict(zip(m.all_vars, m.display_names()))
        style = "xla" if args.style == "xla" else "doc"
        for step in result.trace:
            before = print_expr(step.before, names, style)
            after = print_expr(step.after, names, style)
            print(f"{step.rule}: {before}  =>  {after}")
        print(f"{len(result.trace)} rewrite step(s)")
        print()
        m = result.map
    else:
        m = simplify(m)
    print(print_map(m, args.style))
    return 0


def _cmd_compose(args: argparse.Namespace) -> int:
    from symidx.simplify import simplify

    first, second = _read(args.first, "first"), _read(args.second, "second")
    composed = compose(first, second)
    print(print_map(composed if args.no_simplify else simplify(composed), args.style))
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from symidx.verify import equal

    verdict = equal(_read(args.a, "a"), _read(args.b, "b"))
    print(verdict.describe())
    return 0 if verdict.equal else 1


def _cmd_maps(args: argparse.Namespace) -> int:
    from symidx.analysis import find_instruction, instruction_maps, render_maps
    from symidx.hlo import parse_hlo

    if args.file == "-":
        text, source = sys.stdin.read(), "<stdin>"
    else:
        try:
            with open(args.file, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise SymidxError(f"cannot read {args.file}: {getattr(e, 'strerror', None) or e}"
                              ) from None
        source = args.file
    instr = find_instruction(parse_hlo(text, source=source), args.instruction)
    direction = args.direction.replace("-", "_")
    groups = instruction_maps(instr, direction, operand=args.operand, output=args.output,
                              physical=args.physical)
    print(render_maps(instr, direction, groups, args.format, args.style))
    return 0


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "format": _cmd_format,
    "simplify": _cmd_simplify,
    "compose": _cmd_compose,
    "verify": _cmd_verify,
    "maps": _cmd_maps,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    parser = _build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
        return _COMMANDS[args.command](args)
    except SystemExit as e:  # --help and --version
        return e.code if isinstance(e.code, int) else 0
    except _UsageError as e:
        print(parser.format_usage().rstrip(), file=sys.stderr)
        print(e, file=sys.stderr)
        return 2
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


def main_entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
