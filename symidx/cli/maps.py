"""symidx maps: the indexing maps of an HLO instruction (a fusion: through its fused
computation), of every fusion of a module (--all), or of a whole computation analysed as
one fusion (--computation NAME, ENTRY for the entry computation: from its root's outputs to
its parameters, fused or not, through calls, loops, conditionals and collectives).

Text output: each operand's group is headed "operand K" ("output K" for input-to-output),
maps separated by a blank line. With --all, each fusion's groups are headed "fusion NAME"
("fusion NAME output K" for one output of a multi-output fusion, "fusion NAME input K"
input-to-output), fusions separated by a blank line. --explain prints under each map
"path: a -> b -> p0", one path of instructions that produces it (a step through a nested
fusion or call shows the path inside it in brackets), and "(one of N paths)" when several
do.

JSON output: {"instruction", "direction", "operands": [{"operand", "name", "maps"}]}; a
group with unknown indexing adds "unsupported": OPCODE; --explain adds "origins":
[{"path": [...], "paths": N}] beside "maps", a step through a nested fusion being
{"name": NAME, "via": [...]}. With --all: {"module": NAME, "direction": ..., "fusions":
[...]}, one object per fusion and output (per input, for input-to-output) with
"instruction", "computation" (where the fusion is), "calls" (its fused computation),
"kind", "output": K (or "input": K) and "operands" as above. With --computation:
{"module": NAME, "direction": ..., "computations": [...]}, one object per output of the
root analysed (output 0 unless --output K or --output all; input-to-output: parameter 0
unless --operand K or --operand all) with "computation", "output": K (or "input": K) and
"operands", one group per parameter (per output, input-to-output). A root with many
outputs (a training step's updated parameters): --output all sweeps them together, once
(they read the parameters through one backward pass), then writes them one after another;
a progress line on a terminal's stderr tells how far the sweep is. Each output's maps are
those --output K gives. With --explain (each map's path is per output), and when the joint
sweep stops (the --max-maps budget, an instruction XLA's verifier rejects), each output is
a sweep of its own, written as soon as it is computed; when it runs out of time, it says
how far it got.

Every module XLA's parser accepts is read. Each instruction the analysis goes through is
checked as XLA's verifier checks it: one whose shapes do not fit its attributes stops the
analysis with its line and column (exit 2), or, with --no-verify, is read as a labelled
over-approximation. Such instructions the analysis did not need are reported as warnings
on stderr.

Semantics: by default (reads) an output element reads an input element when some value of
it, NaN and infinities included, changes the output element: a convolution reads its whole
kernel window even over padding (0 * inf is NaN). --assume-finite gives the reads that
matter when every input is finite (a Jacobian's sparsity): the kernel element over padding
or a base-dilation hole drops out. JSON says which in "semantics"; text under
--assume-finite starts with a line saying so.

A group whose maps over-approximate what is read (an opaque custom-call, a loop-carried
value) says so: in text, a line "over-approximation (REASON)" under its header; in JSON,
"opaque": REASON. A leaf of a tuple-shaped operand or parameter is its own group
("operand K, leaf L"; "leaf": L in JSON).

Each module's analysis stops at --cpu-limit CPU seconds (default 600: a budget of work,
so that the answer is the same on a busy machine as on an idle one), at --max-maps
distinct maps held, or at --timeout seconds of the wall clock when given, whichever comes
first: "symidx: stopped: ran out of ..." on stderr says how far it got, and the exit code
is 3. With --format json the document on stdout is then still whole: what was finished,
and "stopped": the same message (jsonl: a last line {"stopped": ...}). Progress goes to a
terminal only, never into the output or a log.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from symidx._text import terminal_safe
from symidx.cli.common import UsageError, add_limits, add_style
from symidx.errors import LimitReached, SymidxError

if TYPE_CHECKING:
    from symidx.core.indexing_map.direction import Direction
    from symidx.hlo import HloComputation, HloModule

#: The first line of text output under --assume-finite (the default, reads, has none).
SEMANTICS_HEADER = "semantics: finite (every input assumed finite)"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("maps", help="the indexing maps of one HLO instruction, or of every "
                                    "fusion of a module",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="HLO or StableHLO/MHLO (MLIR) text files (.gz too), XLA dump "
                        "folders, or - to read one from stdin; with several modules, each "
                        "one's output is headed 'file PATH' ('file PATH#K' for section K of "
                        "a file split by '// -----'; JSON: a list of documents, each with "
                        "\"file\"); a module that fails is reported and the others still "
                        "analysed (exit 2)")
    p.add_argument("--jax", metavar="MODULE:FUNCTION",
                   help="instead of FILE: compile a JAX function on the CPU and analyse the "
                        "optimised module (every fusion, unless --instruction). Its example "
                        "arguments come from --jax-args, else from FUNCTION_example_args or "
                        "example_args in the same module (a tuple, or a callable returning "
                        "one). Needs the jax extra.")
    p.add_argument("--jax-args", metavar="MODULE:NAME",
                   help="the example arguments for --jax: a tuple, or a callable returning one")
    p.add_argument("--instruction", help="instruction name (default: the entry root)")
    p.add_argument("--computation", metavar="NAME",
                   help="analyse computation NAME (ENTRY: the entry computation) as one "
                        "fusion, root outputs to parameters; --operand K is parameter K")
    p.add_argument("--all", action="store_true",
                   help="the maps of every fusion of the module (not with --instruction)")
    p.add_argument("--direction", choices=("output-to-input", "input-to-output"),
                   default="output-to-input",
                   help="output-to-input (default): the operand elements an output element "
                        "reads; input-to-output: the output elements an input element reaches")
    p.add_argument("--operand", type=_index_or_all, default=None, metavar="K",
                   help="output-to-input: only operand K; input-to-output: input K (default 0;"
                        " with --all: every input; with --computation, K is a parameter "
                        "number, and 'all' takes every parameter)")
    p.add_argument("--output", type=_output_spec, default=None, metavar="K",
                   help="output K of a multi-output instruction (default 0; with --all, "
                        "output-to-input: every output; with --computation, 'all' takes "
                        "every output of the root, and K may also be a tuple path like "
                        "{2,1} or the name of an instruction the root returns)")
    p.add_argument("--format", choices=("text", "json", "jsonl"), default="text",
                   help="text (default; maps printed in --style), json (the versioned "
                        "schema of docs/json.md, maps as objects whatever --style) or jsonl "
                        "(one such document per line: with --computation, one per output "
                        "as soon as it is computed)")
    add_style(p)
    p.add_argument("--physical", action="store_true",
                   help="maps between physical (layout-ordered) indices")
    p.add_argument("--no-verify", dest="verify", action="store_false",
                   help="do not apply the checks of XLA's verifier (shapes against "
                        "attributes) to the instructions analysed: one whose shapes do not "
                        "fit is then read as a labelled over-approximation instead of an "
                        "error")
    p.add_argument("--assume-finite", action="store_true",
                   help="the finite semantics: an element is read when some finite value of "
                        "it changes the output, every input finite (a kernel element over "
                        "padding, a factor of a known zero drop out). Default: the reads "
                        "semantics, NaN and infinities included; text output under "
                        "--assume-finite starts with 'semantics: finite'")
    p.add_argument("--explain", action="store_true",
                   help="show, for each map, a path of instructions that produces it")
    add_limits(p)
    p.add_argument("--coalescing", action="store_true",
                   help="for a fusion (--instruction, default the entry root): whether each "
                        "operand's reads are coalesced, in XLA's IsReadCoalescedPerOperand "
                        "sense (loop-emitter thread mapping; see symidx.analysis.coalescing)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    chosen = [flag for flag, value in (("--all", args.all), ("--instruction", args.instruction),
                                       ("--computation", args.computation)) if value]
    if len(chosen) > 1:
        raise UsageError(f"symidx maps: {' and '.join(chosen)} exclude each other")
    if args.computation is not None and args.physical:
        raise UsageError("symidx maps: --physical is for --instruction and --all")
    if args.computation is None and "all" in (args.operand, args.output):
        raise UsageError("symidx maps: 'all' as --operand or --output is for --computation")
    if args.computation is None and isinstance(args.output, str) and args.output != "all":
        raise UsageError(f"symidx maps: --output {args.output!r}: a tuple path or an "
                         f"instruction name is for --computation")
    if bool(args.files) == (args.jax is not None):
        raise UsageError("symidx maps: give either FILE ... or --jax MODULE:FUNCTION")
    if args.jax is not None:
        module = _jax_module(args.jax, args.jax_args)
        # a JAX program's fusions, all of them unless one instruction is asked for
        _emit_one(module_output(module, args, every_fusion=args.instruction is None),
                  args.format)
        return 0
    from symidx.cli.inputs import module_sources, report_failure

    sources = module_sources(args.files)
    if len(sources) == 1:
        module = sources[0].load()
        if args.computation is not None and not args.coalescing:
            stream_computation(module, args)
        else:
            _emit_one(module_output(module, args), args.format)
        return 0
    outputs, failed = [], 0
    for source in sources:  # one bad module is reported, and the others still analysed
        try:
            outputs.append((source.label, module_output(source.load(), args)))
        except UsageError:  # the command line's fault, not the module's: reported once
            raise
        except SymidxError as e:
            failed += 1
            report_failure(e)
            outputs.append((source.label, e))
    if args.format in ("json", "jsonl"):
        from symidx.analysis.documents import dumps, dumps_line

        documents = [{"file": label, "error": str(out)} if isinstance(out, SymidxError)
                     else {"file": label, **out} for label, out in outputs]
        if args.format == "jsonl":
            for document in documents:
                print(dumps_line(document))
        else:
            print(dumps(documents))
    else:
        print("\n\n".join(f"file {label}\nerror: {out}" if isinstance(out, SymidxError)
                           else f"file {label}\n{out}" if out else f"file {label}"
                           for label, out in outputs))
    if failed:
        print(f"symidx: {failed} of {len(sources)} modules failed", file=sys.stderr)
    return 2 if failed else 0


def module_output(module: HloModule, args: argparse.Namespace,
                  every_fusion: bool | None = None) -> Any:
    """What ``symidx maps`` prints for one module: text, or a JSON document (a dict).
    ``every_fusion`` (default ``--all``) asks for every fusion's maps."""
    from symidx.analysis import (
        documents,
        find_instruction,
        instruction_maps,
        module_fusion_maps,
    )
    from symidx.cli.progress import Progress
    from symidx.cli.render import render_computations, render_fusions, render_maps
    from symidx.core.indexing_map.direction import OUTPUT_TO_INPUT, Direction

    if args.coalescing:
        return _coalescing(module, args)
    finite = getattr(args, "assume_finite", False)
    analysis = _analysis(args)
    direction = Direction.parse(args.direction)
    as_json = args.format in ("json", "jsonl")
    if args.computation is not None:
        comp, records = _computation_records(module, args, analysis,
                                             Progress(f"computation {args.computation}"))
        found = list(records)
        output = documents.computations_document(module, direction, found, args.explain,
                                                 finite) \
            if as_json else render_computations(module, direction, found, args.style,
                                                args.explain)
    elif args.all if every_fusion is None else every_fusion:
        found = module_fusion_maps(module, direction, operand=args.operand, output=args.output,
                                   physical=args.physical, analysis=analysis,
                                   progress=Progress(f"module {module.name}"))
        if not found:
            print(f"symidx: note: module {module.name or '(unnamed)'} has no fusions; "
                  f"--computation ENTRY analyses its entry computation whole", file=sys.stderr)
        output = documents.fusions_document(module, direction, found, args.explain, finite) \
            if as_json else render_fusions(module, direction, found, args.style,
                                                  args.explain)
    else:
        instr = find_instruction(module, args.instruction)
        groups = instruction_maps(instr, direction, operand=args.operand, output=args.output,
                                  physical=args.physical, analysis=analysis)
        index = (args.output if direction == OUTPUT_TO_INPUT else args.operand) or 0
        output = documents.instruction_document(module, instr, direction, groups, index,
                                             args.explain, finite) \
            if as_json else render_maps(module, instr, direction, groups, index,
                                               args.style, args.explain)
    if args.verify:
        _warn_about_the_rest(module)
    if finite and not as_json:
        output = f"{SEMANTICS_HEADER}\n{output}" if output else SEMANTICS_HEADER
    return output


def _analysis(args: argparse.Namespace) -> Any:
    """The analysis the options ask for: its semantics and limits."""
    from symidx.fusion import Analysis

    return Analysis(verify=args.verify, assume_finite=getattr(args, "assume_finite", False),
                    cpu_limit=args.cpu_limit or None, timeout=args.timeout or None,
                    max_maps=args.max_maps or None)


def _computation_records(module: HloModule, args: argparse.Namespace, analysis: Any,
                         progress: Any) -> tuple[HloComputation, Iterator[Any]]:
    """The computation ``--computation`` names and its entries, one at a time (notes on
    what was chosen go to stderr first)."""
    from symidx.analysis import find_computation, iter_computation_maps, select_entries
    from symidx.core.indexing_map.direction import OUTPUT_TO_INPUT, Direction

    comp = find_computation(module, args.computation)
    direction = Direction.parse(args.direction)
    backward = direction == OUTPUT_TO_INPUT
    chosen = select_entries(comp, direction, args.output, args.operand)
    _note_the_rest(comp, direction, args)
    if not chosen.has_any:
        what = "root has no outputs" if backward else "computation has no parameters"
        print(f"symidx: note: the {what}: {comp.name} reads nothing", file=sys.stderr)
    return comp, iter_computation_maps(
        comp, direction, operand=chosen.operand, outputs=chosen.outputs, analysis=analysis,
        progress=progress, jointly=not args.explain)


def stream_computation(module: HloModule, args: argparse.Namespace) -> None:
    """``--computation``: each entry (output, or parameter input-to-output) written as
    soon as it is computed -- a text block, an element of the JSON document's
    ``computations``, or (jsonl) a document of its own on one line -- with a progress line
    on stderr when it is a terminal (nothing otherwise). Memory holds one
    entry's maps at a time."""
    import json
    import textwrap

    from symidx.analysis import documents
    from symidx.analysis.sources import SourceFinder
    from symidx.cli.progress import Progress
    from symidx.cli.render import render_computation_text
    from symidx.core.indexing_map.direction import Direction

    direction = Direction.parse(args.direction)
    progress = Progress(f"computation {args.computation}", delay=2.0)
    finite = getattr(args, "assume_finite", False)
    analysis = _analysis(args)
    analysis.limits.watch = progress.during  # how far a long output is, between outputs
    _, records = _computation_records(module, args, analysis, progress)
    finder = SourceFinder(module)
    try:
        if args.format == "jsonl":
            try:
                for c in records:
                    line = documents.dumps_line(documents.computations_document(
                        module, direction, [c], args.explain, finite))
                    print(line, flush=True)
            except (SymidxError, KeyboardInterrupt) as e:
                # a last document that says so: every line stays a whole document
                stop = documents.computations_document(module, direction, [], args.explain,
                                                       finite)
                stop["stopped"] = _stopped_by(e)
                print(documents.dumps_line(stop), flush=True)
                raise
        elif args.format == "json":
            marker = "\u0000computations\u0000"
            frame = documents.computations_document(module, direction, [], args.explain,
                                                    finite)
            frame["computations"] = marker
            head, tail = documents.dumps(frame).split(json.dumps(marker))
            print(head + "[", end="")
            count = 0
            try:
                for c in records:
                    entry = documents.dumps(documents.computation_json(c, direction,
                                                                       args.explain, finder))
                    print(("," if count else "") + "\n" + textwrap.indent(entry, "    "),
                          end="", flush=True)
                    count += 1
            except (SymidxError, KeyboardInterrupt) as e:
                # the document closed, valid, saying it stopped and why
                print(("\n  ]" if count else "]") + ",\n  \"stopped\": "
                      + json.dumps(_stopped_by(e)) + tail, flush=True)
                raise
            print(("\n  ]" if count else "]") + tail)
        else:
            if finite:
                print(SEMANTICS_HEADER, flush=True)
            for count, c in enumerate(records):
                text = render_computation_text(c, direction, args.style, args.explain,
                                               finder if args.explain else None)
                print(("\n" if count else "") + text, flush=True)
    finally:
        progress.close()
    if args.verify:
        _warn_about_the_rest(module)


def _stopped_by(error: BaseException) -> str:
    """What a document that stopped says (as the command line says it on stderr)."""
    if isinstance(error, LimitReached):
        return f"stopped: {error}"
    if isinstance(error, KeyboardInterrupt):
        return "interrupted"
    return f"error: {error}"


def _emit_one(output: Any, fmt: str) -> None:
    if fmt == "json":
        from symidx.analysis.documents import dumps

        print(dumps(output))
    elif fmt == "jsonl":
        from symidx.analysis.documents import dumps_line

        print(dumps_line(output))
    elif output:
        print(output)


_WARNINGS_SHOWN = 5


def _warn_about_the_rest(module: HloModule) -> None:
    """Instructions XLA's verifier rejects that the analysis did not go through (it would
    have stopped there): a located warning each, on stderr."""
    from symidx.hlo.validate import violations

    found = violations(module)
    for error in found[:_WARNINGS_SHOWN]:
        print(f"symidx: warning: {terminal_safe(str(error))} (XLA's verifier rejects this "
              f"instruction; the maps above do not go through it)", file=sys.stderr)
    if len(found) > _WARNINGS_SHOWN:
        print(f"symidx: warning: and {len(found) - _WARNINGS_SHOWN} more such instructions",
              file=sys.stderr)


def _jax_module(spec: str, args_spec: str | None) -> HloModule:
    """The optimised module JAX compiles for the function ``spec`` on its example arguments."""
    from symidx.jax_support import compiled_hlo, example_args, load_function

    fn = load_function(spec)
    text = compiled_hlo(fn, *example_args(spec, args_spec))
    from symidx.hlo import parse_hlo

    return parse_hlo(text, source=f"<jax: {spec}>")


def _index_or_all(text: str) -> int | str:
    if text == "all":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'all', found {text!r}"
                                         ) from None


def _output_spec(text: str) -> int | str:
    """--output: a number, or the text as given ('all', a tuple path, an instruction name:
    checked where it is used)."""
    try:
        return int(text)
    except ValueError:
        return text


def _note_the_rest(comp: HloComputation, direction: Direction, args: argparse.Namespace) -> None:
    """Say on stderr when the default analysed one output (or parameter) of several."""
    from symidx.core.indexing_map.direction import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT
    from symidx.hlo.leaves import leaf_count

    if direction == OUTPUT_TO_INPUT and args.output is None:
        count, flag, what = leaf_count(comp.root.shape), "--output", "outputs of the root"
    elif direction == INPUT_TO_OUTPUT and args.operand is None:
        count, flag, what = len(comp.parameters), "--operand", "parameters"
    else:
        return
    if count > 1:
        print(f"symidx: note: {comp.name} has {count} {what}; this is the first ({flag} K "
              f"for another, {flag} all for every one)", file=sys.stderr)


def _coalescing(module: HloModule, args: argparse.Namespace) -> Any:
    """--coalescing: one verdict per operand of the fusion (text, or a JSON document)."""
    from symidx.analysis import find_instruction
    from symidx.analysis.coalescing import coalescing_json, coalescing_text, fusion_coalescing

    if args.all or args.computation is not None:
        raise UsageError("symidx maps: --coalescing is for one fusion (--instruction)")
    instr = find_instruction(module, args.instruction)
    found = fusion_coalescing(instr)
    if args.format == "json":
        return coalescing_json(instr, found)
    return coalescing_text(instr, found)
