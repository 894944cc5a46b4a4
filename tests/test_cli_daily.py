"""The command line for daily use: --version, subcommand usage, batch mode, a reader that
stops early, progress only on a terminal, and start-up without the heavy libraries."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

from symidx.cli import main
from symidx.cli.batch import answer
from symidx.cli.progress import Progress

ROOT = Path(__file__).resolve().parent.parent
TINY = str(Path(__file__).parent / "data" / "tiny_slice.hlo")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_version() -> None:
    import symidx

    code, out, _ = run("--version")
    assert code == 0 and out.strip() == f"symidx {symidx.__version__}"


def test_a_subcommand_usage_error_shows_that_subcommand_usage() -> None:
    code, out, err = run("maps", TINY, "--operand", "x")
    assert code == 2 and out == ""
    assert err.startswith("usage: symidx maps ")
    assert "argument --operand: expected a number or 'all', found 'x'" in err
    code, _, err = run("simplify")
    assert code == 2 and err.startswith("usage: symidx simplify ")


def test_batch_answers_each_line() -> None:
    simplified = answer(json.dumps({"id": 7, "args": [
        "simplify", "(d0) -> (d0 mod 8), domain: d0 in [0, 7]", "--style", "xla"]}), main)
    assert simplified == {"id": 7, "exit": 0, "stderr": "",
                          "stdout": "(d0) -> (d0), domain: d0 in [0, 7]\n"}
    maps = answer(json.dumps({"args": ["maps", TINY, "--format", "json"]}), main)
    assert maps["exit"] == 0 and maps["result"]["schema"] == "symidx.maps/1"
    assert maps["result"]["operands"][0]["maps"][0]["results"] == ["d0 * 2 + 1"]
    assert answer("not json", main)["exit"] == 2
    assert answer(json.dumps({"args": "maps"}), main)["exit"] == 2
    assert answer(json.dumps({"args": ["batch"]}), main)["stderr"] == "batch does not nest"
    missing = answer(json.dumps({"id": "m", "args": ["maps", "/nowhere.hlo"]}), main)
    assert missing["exit"] == 2 and "cannot read /nowhere.hlo" in missing["stderr"]
    for args in (["maps", "a\0b.hlo"], ["corpus", "x", "--out", "o\0.jsonl"]):
        nul = answer(json.dumps({"args": args}), main)  # JSON may hold what argv cannot
        assert nul["exit"] == 2 and nul["stderr"].startswith(
            f"argument {len(args) - 1} holds a NUL character")


def test_batch_reads_stdin_lines(monkeypatch) -> None:
    lines = [json.dumps({"id": k, "args": ["format", f"(d0) -> (d0 + {k}), domain: d0 in [0, 3]"]})
             for k in range(3)]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines + [""]) + "\n"))
    code, out, _ = run("batch")
    replies = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [r["id"] for r in replies] == [0, 1, 2]
    assert all(r["exit"] == 0 for r in replies)


def test_a_reader_that_stops_early_leaves_no_traceback() -> None:
    sample = str(ROOT / "tests" / "data" / "hlo" / "attention.compiled.hlo")
    command = [sys.executable, "-m", "symidx", "maps", sample, "--all", "--explain"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert first.startswith(b"fusion ")
    assert "Traceback" not in err and "BrokenPipe" not in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal() -> None:
    quiet = io.StringIO()
    shown = Progress("work", delay=0, stream=quiet)
    for k in range(1, 4):
        shown(k, 3)
    assert quiet.getvalue() == ""
    terminal = _Terminal()
    bar = Progress("work", delay=0, stream=terminal)
    for k in range(1, 4):
        bar(k, 3, "output")
    assert "work" in terminal.getvalue()
    late = _Terminal()
    waits = Progress("work", delay=60, stream=late)
    waits(1, 3)
    assert late.getvalue() == ""


def test_help_and_argument_errors_load_no_heavy_library() -> None:
    probe = ("import sys, contextlib, io\n"
             "from symidx.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()), "
             "contextlib.redirect_stderr(io.StringIO()):\n"
             "    main(['--help']); main(['maps', '--output', 'x']); main(['frob'])\n"
             "print(sorted(m for m in ('sympy', 'numpy', 'networkx', 'z3', 'matplotlib')"
             " if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert out.strip() == "[]"


def test_a_missing_extra_is_named_before_the_work(monkeypatch, tmp_path) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    code, out, err = run("layout", "(4,8):(8,1)", "--png", str(tmp_path / "x.png"))
    assert code == 2 and out == ""
    assert "--png needs matplotlib, which is not installed: pip install 'symidx[plot]'" in err
    code, out, err = run("bench", "--case", "compose", "--png", str(tmp_path / "b.png"))
    assert code == 2 and out == "" and "pip install 'symidx[plot]'" in err


def test_maps_on_a_small_module_loads_neither_numpy_nor_the_optional_libraries() -> None:
    # Start-up (issue 25): numpy is imported only when a constant is folded (hlo.fold).
    sample = ROOT / "symidx" / "examples" / "layernorm.hlo"
    probe = ("import sys, contextlib, io\n"
             "from symidx.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
             f"    code = main(['maps', {str(sample)!r}])\n"
             "print(code, 'd0' in out.getvalue(), sorted(m for m in ('numpy', 'networkx', "
             "'z3', 'matplotlib', 'jsonschema', 'jax') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert out.strip() == "0 True []"


def _commands(parser) -> dict:
    """The parser's commands: name -> subparser, in their order of registration."""
    import argparse

    return next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def test_the_table_of_commands_says_what_each_module_registers() -> None:
    """cli.COMMANDS lists every command in the order the full parser registers them, each
    with the module whose register() adds it (the parser of a command line that names one
    registers that module alone)."""
    from symidx import cli

    full = _commands(cli.build_parser())
    assert list(full) == list(cli.COMMANDS)
    for module in cli.COMMAND_MODULES:
        alone = _commands(cli.build_parser(next(c for c, m in cli.COMMANDS.items()
                                                if m == module)))
        assert set(alone) == {c for c, m in cli.COMMANDS.items() if m == module}


def test_a_command_read_by_its_own_parser_reads_as_with_every_command() -> None:
    """The parser of one command's module gives that command the same help and usage as the
    full parser, and the program the same usage (printed for an argument no command takes)."""
    from symidx import cli

    full = cli.build_parser()
    for command, sub in _commands(full).items():
        alone = cli.build_parser(command)
        assert _commands(alone)[command].format_help() == sub.format_help()
        assert alone.format_usage() == full.format_usage()
    code, _, err = run("maps", TINY, "--bogus")
    assert code == 2 and err.startswith(full.format_usage().rstrip())
    assert "{format,simplify,compose,verify,maps,bench,layout,batch,corpus,tile,pallas}" in err


def test_at_exit_the_collector_no_longer_traverses_what_the_command_built() -> None:
    """main_entry takes the objects left out of the collector's view before the interpreter
    exits (its last collections would traverse them all only to free nothing), and exit
    handlers still run after it."""
    sample = ROOT / "symidx" / "examples" / "layernorm.hlo"
    probe = ("import atexit, gc, sys\n"
             "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 10000))\n"
             f"sys.argv = ['symidx', 'maps', {str(sample)!r}]\n"
             "from symidx.cli import main_entry\n"
             "main_entry()\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0 and done.stderr == ""
    assert "d0" in done.stdout and done.stdout.rstrip().endswith("frozen True")
