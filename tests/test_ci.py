"""CI, the README's quick start and the pre-commit hooks say the same thing: `.ci/run` runs
the README's test command (its own environment directory aside) and, before it, the ruff and
mypy that the `dev` extra installs and that `.pre-commit-config.yaml` runs as hooks."""

from __future__ import annotations

import re
import shlex
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CI = (ROOT / ".ci" / "run").read_text()


def quick_start() -> list[str]:
    """The command lines of the README's quick start block."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line.strip()]


def extras(command: str) -> set[str]:
    """The extras of the first ``pip install -e '.[...]'`` in a shell command."""
    found = re.search(r"pip install (?:--quiet )?-e '\.\[([\w,]+)\]'", command)
    assert found is not None, command
    return set(found.group(1).split(","))


def commands(script: str) -> list[str]:
    """The commands a script runs, comments and blank lines left out."""
    return [line.strip() for line in script.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_the_quick_start_is_two_commands() -> None:
    first, second = quick_start()
    assert "symidx maps symidx/examples/layernorm.hlo" in first
    assert second.endswith("&& .venv/bin/python -m pytest -n auto --dist loadgroup")


def test_ci_installs_and_runs_the_readme_test_command() -> None:
    _, readme = quick_start()
    install = [c for c in commands(CI) if "pip install" in c and "-e" in c]
    assert len(install) == 1
    assert extras(install[0]) == extras(readme)
    pytest_args = readme.split("&& .venv/bin/python -m pytest", 1)[1]
    assert f".venv-ci/bin/python -m pytest -q{pytest_args}" in commands(CI)


def test_ci_runs_ruff_and_mypy_from_the_dev_extra_and_fails_with_them() -> None:
    ci = commands(CI)
    assert ".venv-ci/bin/python -m ruff check . || failed+=(ruff)" in ci
    assert ".venv-ci/bin/python -m mypy || failed+=(mypy)" in ci
    assert "exit 1" in ci and 'if [ "${#failed[@]}" -ne 0 ]; then' in ci
    assert "dev" in extras(quick_start()[1])
    dev = {re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0].lower()
           for r in metadata.requires("symidx") or [] if 'extra == "dev"' in r}
    assert {"ruff", "mypy"} <= dev


def test_the_pre_commit_hooks_are_local_and_run_what_ci_runs() -> None:
    text = (ROOT / ".pre-commit-config.yaml").read_text()
    repos = re.findall(r"^\s*- repo: (\S+)", text, re.M)
    assert repos == ["local"]
    assert re.findall(r"^\s*language: (\S+)", text, re.M) == ["system", "system"]
    entries = [shlex.split(e) for e in re.findall(r"^\s*entry: (.+)$", text, re.M)]
    assert entries == [["python", "-m", "ruff", "check", "--force-exclude"],
                       ["python", "-m", "mypy"]]
