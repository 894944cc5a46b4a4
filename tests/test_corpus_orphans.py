"""No process outlives a ``symidx corpus`` driver that is killed (issue 23, item 3): CI and
``timeout(1)`` send SIGTERM, then SIGKILL; a worker busy on a module that hangs must not
be left running, re-parented to PID 1, bounded by no time limit.

The driver runs in a session of its own; every process it starts (the fork server, the
workers) stays in that session, so the session's members are found in /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from corpus_helpers import HANG, HOOK, ROOT, examples_copy, misbehaving

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                                reason="needs Linux's /proc")


def _session_members(sid: int) -> list[int]:
    """Live (not zombie) processes of session ``sid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        state, session = fields[0], int(fields[3])
        if session == sid and state != "Z":
            found.append(int(entry))
    return found


def _wait_for(condition, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


SIGNALS = pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP],
                                  ids=["SIGKILL", "SIGTERM", "SIGHUP"])


@SIGNALS
def test_a_killed_driver_leaves_no_worker_behind(tmp_path: Path, sig: int) -> None:
    _kill_and_look(tmp_path, sig, [])


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_driver_leaves_no_ray_process_behind(tmp_path: Path, sig: int) -> None:
    pytest.importorskip("ray")
    _kill_and_look(tmp_path, sig, ["--engine", "ray"])


def test_a_killed_driver_leaves_no_dask_process_behind(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    _kill_and_look(tmp_path, signal.SIGKILL, ["--engine", "dask"])


def _kill_and_look(tmp_path: Path, sig: int, extra: list[str]) -> None:
    inputs = examples_copy(tmp_path / "in", ("mlp",))
    misbehaving(inputs, HANG, "cumsum")
    out = tmp_path / "r.jsonl"
    env = {**os.environ, "SYMIDX_CORPUS_TEST_HOOK": HOOK,
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests"),
                                          os.environ.get("PYTHONPATH", "")])}
    driver = subprocess.Popen(
        [sys.executable, "-m", "symidx", "corpus", str(inputs), "--out", str(out),
         "--jobs", "2", "--timeout", "0", *extra],
        cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE)
    try:
        # mlp recorded: both modules were handed out, and the other one hangs
        assert _wait_for(lambda: out.exists() and out.read_text().count("\n") >= 1
                         or driver.poll() is not None, 300), "the run did not start"
        assert driver.poll() is None, driver.stderr.read().decode() if driver.stderr else ""
        assert len(_session_members(driver.pid)) >= 3  # driver, fork server, workers
        os.kill(driver.pid, sig)
        driver.wait(60)
        if sig != signal.SIGKILL:  # a clean stop, said in one line
            assert driver.returncode == 128 + sig
            assert f"stopped by {signal.Signals(sig).name}" in driver.stderr.read().decode()
        _wait_for(lambda: not _session_members(driver.pid), 60)
        left = _session_members(driver.pid)
        assert not left, f"left running after {signal.Signals(sig).name}: " + ", ".join(
            f"{pid} {_cmdline(pid)}" for pid in left)
    finally:
        for pid in _session_members(driver.pid):
            os.kill(pid, signal.SIGKILL)
        if driver.poll() is None:
            driver.kill()
        driver.wait()


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:120]
    except OSError:
        return "?"
