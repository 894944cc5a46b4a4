"""``symidx maps``: the indexing maps of an HLO instruction (a fusion: through its body)."""

from __future__ import annotations

import argparse

from symidx.cli.common import add_style, read_text_file


def register(sub: argparse._SubParsersAction) -> None:
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
    add_style(p)
    p.add_argument("--physical", action="store_true",
                   help="maps between physical (layout-ordered) indices")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from symidx.analysis import find_instruction, instruction_maps, render_maps
    from symidx.hlo import parse_hlo

    text, source = read_text_file(args.file)
    instr = find_instruction(parse_hlo(text, source=source), args.instruction)
    direction = args.direction.replace("-", "_")
    groups = instruction_maps(instr, direction, operand=args.operand, output=args.output,
                              physical=args.physical)
    print(render_maps(instr, direction, groups, args.format, args.style))
    return 0
