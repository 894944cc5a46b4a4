"""Every command and every flag of the command line says what it does: a walk over the
whole parser (every subcommand's every argument) finds no empty help."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from symidx.cli import build_parser


def undocumented(parser: argparse.ArgumentParser, path: str) -> Iterator[str]:
    """``path: argument`` for each argument of ``parser`` and its subparsers, and each
    subcommand, without help (help hidden on purpose, ``argparse.SUPPRESS``, is help)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helped = {choice.dest for choice in action._choices_actions if choice.help}
            for name, sub in action.choices.items():
                if name not in helped:
                    yield f"{path} {name} (the command)"
                yield from undocumented(sub, f"{path} {name}")
        elif not action.help:
            yield f"{path}: {'/'.join(action.option_strings) or action.dest}"


def test_every_command_and_flag_has_help() -> None:
    missing = list(undocumented(build_parser(), "symidx"))
    assert not missing, "no help for:\n" + "\n".join(missing)


def test_the_walk_sees_every_command_and_finds_a_missing_help() -> None:
    parser = build_parser()
    commands = {name for action in parser._actions
                if isinstance(action, argparse._SubParsersAction) for name in action.choices}
    assert {"maps", "tile", "verify", "corpus", "layout", "batch", "pallas"} <= commands
    probe = argparse.ArgumentParser(prog="probe")
    probe.add_argument("--said", help="x")
    sub = probe.add_subparsers()
    verb = sub.add_parser("verb", help="a verb")
    verb.add_argument("--silent")
    verb.add_argument("where")
    sub.add_parser("mute")
    assert list(undocumented(probe, "probe")) == [
        "probe verb: --silent", "probe verb: where",
        "probe mute (the command)"]
