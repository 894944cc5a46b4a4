"""A corpus run survives hostile folders (issue 35, items 2 to 4): only regular files are
read, each by a worker process, up to a limit of bytes decompressed; every file gets a
record, empty ones too; binary HLO is read through jaxlib; outputs that are one file are
refused before anything is written; the exit code says whether modules failed, and the
report lists every kind of failure, messages that differ only in names counted together."""

from __future__ import annotations

import gzip
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_helpers import (
    DATA,
    EXAMPLES,
    HANG,
    HOOK,
    ROOT,
    corpus,
    examples_copy,
    misbehaving,
    records,
    validator,
)
from symidx.corpus import Options, run_corpus

POSIX = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def _bomb(path: Path, inflated: int, member: int = 1 << 24) -> None:
    """A gzip file that inflates to ``inflated`` bytes of zeros: one member of ``member``
    zeros, repeated (a gzip file may hold several), so that making it costs little."""
    one = gzip.compress(b"\0" * member, compresslevel=9)
    with open(path, "wb") as f:
        for _ in range(inflated // member):
            f.write(one)


def _hostile(folder: Path) -> Path:
    """Two good modules, a FIFO, a symlink to /dev/zero and a socket, as they may sit in a
    folder; a gzip bomb is added by the tests that want one."""
    examples_copy(folder, ("mlp", "cumsum"))
    os.mkfifo(folder / "fifo.hlo")
    (folder / "zero.hlo").symlink_to("/dev/zero")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(folder / "socket.hlo"))
    listener.close()
    return folder


# --- reading one file ------------------------------------------------------------------------


@POSIX
def test_only_regular_files_are_read(tmp_path: Path) -> None:
    from symidx.corpus.sources import file_kind, outline

    folder = _hostile(tmp_path / "in")
    assert file_kind(str(folder / "fifo.hlo")) == "FIFO"
    assert file_kind(str(folder / "zero.hlo")) == "character device"
    assert file_kind(str(folder / "socket.hlo")) == "socket"
    assert file_kind(str(folder / "mlp.hlo")) is None
    found = outline(str(folder / "fifo.hlo"))  # returns at once: never opened to block
    assert found.failure == ("not-regular", "FIFO") and found.sections == ()


def test_a_gzip_bomb_is_read_no_further_than_the_limit(tmp_path: Path) -> None:
    from symidx.corpus.sources import TooLarge, outline, read_file

    bomb = tmp_path / "bomb.hlo.gz"
    _bomb(bomb, 64 << 20)
    with pytest.raises(TooLarge, match=r"more than 1,048,576 bytes decompressed"):
        read_file(str(bomb), 1 << 20)
    found = outline(str(bomb), 1 << 20)
    assert found.failure is not None and found.failure[0] == "too-large"
    assert found.size == bomb.stat().st_size
    # under the limit, every member of a multi-member gzip file is read
    small = tmp_path / "two.hlo.gz"
    small.write_bytes(gzip.compress(b"HloModule a\n") + gzip.compress(b"// b\n"))
    assert read_file(str(small)) == "HloModule a\n// b\n"
    cut = tmp_path / "cut.hlo.gz"
    cut.write_bytes(gzip.compress((EXAMPLES / "mlp.hlo").read_bytes())[:200])
    assert outline(str(cut)).failure == (
        "error", f"cannot read {cut}: the compressed file ends before its end-of-stream "
                 f"marker")


# --- a whole run -----------------------------------------------------------------------------


@POSIX
def test_a_hostile_folder_records_its_good_modules_and_passes_over_the_rest(
        tmp_path: Path) -> None:
    folder = _hostile(tmp_path / "in")
    _bomb(folder / "bomb.hlo.gz", 64 << 20)
    (folder / "empty.hlo").write_text("")
    (folder / "comments.hlo").write_text("// nothing but a comment\n")
    out = tmp_path / "r.jsonl"
    code, _, err = corpus(str(folder), "--out", str(out), "--jobs", "2", "--max-bytes", "1M")
    assert code == 1, err
    assert "Traceback" not in err
    found = {Path(r["file"]).name: r for r in records(out)}
    assert set(found) == {"mlp.hlo", "cumsum.hlo", "bomb.hlo.gz", "empty.hlo", "comments.hlo"}
    assert found["mlp.hlo"]["status"] == found["cumsum.hlo"]["status"] == "ok"
    assert found["bomb.hlo.gz"]["status"] == "too-large"
    # every file gets a record: an empty one, one of comments only (as a module: its text)
    assert found["empty.hlo"]["status"] == "parse-error"
    assert found["comments.hlo"]["status"] == "parse-error"
    assert found["comments.hlo"]["bytes"] == len("// nothing but a comment\n")
    for record in found.values():
        validator().validate(record)
    assert ("passed over 3 files that are not regular files or cannot be read here "
            "(FIFO 1, character device 1, socket 1)") in err
    # resumed: every file is recorded already, nothing is read again into a record
    code, _, err = corpus(str(folder), "--out", str(out), "--resume", "--max-bytes", "1M")
    assert code == 1 and len(records(out)) == 5


def _limited_run(folder: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``symidx corpus FOLDER`` in a process limited to 3 GB of address space."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")])}

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    return subprocess.run([sys.executable, "-m", "symidx", "corpus", str(folder), "--out",
                           str(out), "--jobs", "1", *extra], env=env, cwd=ROOT,
                          capture_output=True, text=True, preexec_fn=limited, timeout=900)


@POSIX
@pytest.mark.skipif(not hasattr(resource, "RLIMIT_AS"), reason="needs RLIMIT_AS")
@pytest.mark.parametrize("extra, status", [
    ([], "too-large"),  # the default limit of bytes: read no further than 256 MB
    pytest.param(["--max-bytes", "0"], "error", marks=pytest.mark.slow),  # out of memory
], ids=["default-limit", "no-limit"])
def test_a_4_gb_gzip_bomb_under_a_3_gb_memory_limit(tmp_path: Path, extra: list[str],
                                                     status: str) -> None:
    """The issue's folder: a .gz that inflates to 4 GB, a FIFO, a /dev/zero link and two
    good modules, the run limited to 3 GB of memory (address space): both good modules
    recorded, no traceback. With the default limit of bytes the bomb is too large; with no
    limit the worker reading it runs out of memory, and the file is recorded as an error."""
    folder = _hostile(tmp_path / "in")
    _bomb(folder / "bomb.hlo.gz", 4 << 30, member=1 << 26)
    out = tmp_path / "r.jsonl"
    done = _limited_run(folder, out, *extra)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    found = {Path(r["file"]).name: r for r in records(out)}
    assert found["mlp.hlo"]["status"] == found["cumsum.hlo"]["status"] == "ok"
    assert found["bomb.hlo.gz"]["status"] == status, found["bomb.hlo.gz"]
    assert set(found) == {"mlp.hlo", "cumsum.hlo", "bomb.hlo.gz"}


def test_a_worker_that_waits_for_nothing_is_stopped_using_no_cpu(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker asleep on a module (blocked on what will not come) uses no CPU: no CPU
    budget would ever stop it, so a worker that uses none for ``stuck`` seconds is."""
    inputs = examples_copy(tmp_path / "in", ("mlp",))
    misbehaving(inputs, HANG, "cumsum")
    out = tmp_path / "r.jsonl"
    stats = run_corpus([str(inputs)], str(out), Options(hook=HOOK), jobs=2, stuck=1.0)
    assert stats.written == 2
    found = {Path(r["file"]).stem: r for r in records(out)}
    assert found["mlp"]["status"] == "ok"
    assert found["hang"]["status"] == "timeout"
    assert found["hang"]["message"] == ("no CPU used for 1 s (waiting for what did not come): "
                                        "the worker was stopped")


# --- binary HLO ------------------------------------------------------------------------------


#: Binary HLO as jax 0.10 wrote it for ``jax.jit(lambda x: jnp.sin(x) * 2)`` on ``f32[4]``
#: (``.compiler_ir("hlo").as_serialized_hlo_module_proto()``): the HloModuleProto alone,
#: and wrapped as XLA's dumps hold it, an HloProto whose field 1 is the module (and a field
#: 3, an empty buffer assignment).
PROTOS = (DATA / "module_0001.jit_f.before_optimizations.hlo.pb", DATA / "jit_f.module.hlo.pb")


def test_binary_hlo_in_a_dump_folder_is_read_through_jaxlib(tmp_path: Path) -> None:
    pytest.importorskip("jaxlib")
    dump = tmp_path / "dump"
    dump.mkdir()
    for proto in PROTOS:
        shutil.copy(proto, dump / proto.name)
    (dump / "module_0001.jit_f.before_optimizations.debug_options.pb").write_bytes(b"\x08\x01")
    out = tmp_path / "r.jsonl"
    code, _, err = corpus(str(dump), "--out", str(out))
    assert code == 0, err
    found = records(out)
    assert len(found) == 2 and {r["status"] for r in found} == {"ok"}
    assert {r["name"] for r in found} == {"jit__lambda"}
    assert found[0]["counts"]["instructions"] >= 3
    # and symidx maps reads the dump folder alike
    out_text = subprocess.run([sys.executable, "-m", "symidx", "maps", str(dump),
                               "--computation", "ENTRY"], capture_output=True, text=True,
                              cwd=ROOT, timeout=300)
    assert out_text.returncode == 0, out_text.stderr
    assert out_text.stdout.count("computation main") == 2


def test_binary_hlo_without_jaxlib_is_passed_over_and_counted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import symidx.hlo.proto

    dump = examples_copy(tmp_path / "dump", ("mlp",))
    (dump / "module_0001.jit_f.hlo.pb").write_bytes(b"\x0a\x00")
    monkeypatch.setattr(symidx.hlo.proto, "has_jaxlib", lambda: False)
    out = tmp_path / "r.jsonl"
    code, _, err = corpus(str(dump), "--out", str(out))
    assert code == 0, err
    assert [Path(r["file"]).name for r in records(out)] == ["mlp.hlo"]
    assert "(binary HLO (.hlo.pb: needs jaxlib) 1)" in err


# --- outputs that cannot destroy each other (item 3) -----------------------------------------


def _same_files(tmp_path: Path) -> list[tuple[list[str], str]]:
    """Pairs of outputs that are one file, spelt in different ways."""
    (tmp_path / "real.md").write_text("")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    os.link(tmp_path / "real.md", tmp_path / "hard.md")
    r = str(tmp_path / "r.md")
    return [
        (["--out", r, "--report", r], "--out and --report are the same file"),
        (["--out", r, "--report", str(tmp_path / "." / "r.md")],
         "--out and --report are the same file"),
        (["--out", str(tmp_path / "r.png"), "--report", r],
         "--out and the plot beside the --report are the same file"),
        (["--out", str(tmp_path / "link.md"), "--report", str(tmp_path / "real.md")],
         "--out and --report are the same file"),
        (["--out", str(tmp_path / "hard.md"), "--report", str(tmp_path / "real.md")],
         "--out and --report are the same file"),
    ]


def test_outputs_that_are_one_file_are_refused_before_anything_is_written(
        tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    inputs = examples_copy(tmp_path / "in", ("mlp",))
    for argv, message in _same_files(tmp_path):
        before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
        code, _, err = corpus(str(inputs), *argv)
        assert code == 2 and message in err, (argv, err)
        after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
        assert after == before, argv  # nothing written, nothing made


# --- exit codes and failure kinds (item 4) ---------------------------------------------------


def test_the_exit_code_tells_all_ok_some_failed_and_none_ok(tmp_path: Path) -> None:
    good = examples_copy(tmp_path / "good", ("mlp",))
    assert corpus(str(good), "--out", str(tmp_path / "a.jsonl"))[0] == 0
    bad = tmp_path / "bad"
    bad.mkdir()
    for k in range(3):
        (bad / f"b{k}.hlo").write_text(f"HloModule b{k}\nENTRY e {{ oops }}\n")
    code, _, err = corpus(str(bad), "--out", str(tmp_path / "b.jsonl"))
    assert code == 4, err
    examples_copy(bad, ("mlp",))
    code, _, err = corpus(str(bad), "--out", str(tmp_path / "c.jsonl"))
    assert code == 1, err


def test_the_report_lists_every_kind_of_failure_names_counted_together(tmp_path: Path) -> None:
    """120 modules that fail the same way, each naming its own instruction, are one kind;
    20 kinds are 20 rows (the table used to stop at 16)."""
    pytest.importorskip("matplotlib")
    inputs = tmp_path / "in"
    inputs.mkdir()
    for k in range(120):  # one kind: an operand that does not exist, named differently
        (inputs / f"same{k:03d}.hlo").write_text(
            f"HloModule m{k}\nENTRY e {{\n  p = f32[4] parameter(0)\n"
            f"  ROOT n.{k} = f32[4] negate(missing.{k})\n}}\n")
    for k in range(20):  # twenty kinds: shapes that do not fit, each its own (not names)
        (inputs / f"kind{k:02d}.hlo").write_text(
            f"HloModule k{k}\nENTRY e {{\n  p = f32[{k + 1}] parameter(0)\n"
            f"  ROOT n = f32[{k + 2}] negate(p)\n}}\n")
    out, report = tmp_path / "r.jsonl", tmp_path / "report.md"
    code, _, err = corpus(str(inputs), "--out", str(out), "--report", str(report))
    assert code == 4, err
    found = records(out)
    assert len(found) == 140
    text = report.read_text()
    table = text.split("## Failures by kind")[1].split("##")[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "modules" not in line]
    counts = sorted(int(row.split("|")[1]) for row in rows)
    assert sum(counts) == 140
    assert counts[-1] == 120 and counts[:-1] == [1] * 20
    assert "and 13 more kinds (13 modules): every one in --report" in err


def test_error_kinds_group_messages_that_differ_only_in_names() -> None:
    from symidx.corpus.summary import error_kind

    assert error_kind("f.hlo:line 3, column 4: no instruction named 'add.5' in 'fused.12'") \
        == error_kind("g.hlo:line 9, column 1: no instruction named 'mul.77' in 'fused.3'")
    assert error_kind("ran out of CPU time (300 s) after holding 1,234 distinct maps (12 of "
                      "40 instructions of main swept)") == "ran out of CPU time (300 s)"
    assert error_kind("cannot read /a/b.hlo.gz: not a gzip file", "/a/b.hlo.gz") \
        == "cannot read FILE: not a gzip file"
    # what is not a name stays: two shapes are two kinds
    assert error_kind("operands f32[2] and f32[3] differ") \
        != error_kind("operands f32[2] and f32[4] differ")


def test_a_results_file_of_only_failures_summarises_them(tmp_path: Path) -> None:
    from symidx.corpus.summary import Summary

    out = tmp_path / "r.jsonl"
    base = json.loads(json.dumps({
        "schema": "symidx.corpus/1", "sha256": "0" * 64, "file": "f.hlo", "module": 0,
        "line": 1, "name": None, "bytes": 1, "status": "timeout", "message": "m",
        "parse_seconds": None, "analysis_seconds": None, "counts": None, "unsupported": {},
        "opaque": {}, "warnings": [], "maps": None, "duplicate_of": None}))
    out.write_text("".join(json.dumps(base | {"message": f"ran out of CPU time (9 s) after "
                                                         f"holding {k} distinct maps"}) + "\n"
                           for k in range(30)))
    summary = Summary.of_file(str(out))
    assert dict(summary.errors) == {"timeout: ran out of CPU time (9 s)": 30}


@POSIX
def test_maps_on_a_dump_folder_passes_over_what_is_not_a_regular_file(tmp_path: Path) -> None:
    from corpus_helpers import main_run

    folder = _hostile(tmp_path / "dump")
    code, out, err = main_run("maps", str(folder), "--all")
    assert code == 0, err
    assert out.count("file ") == 2  # mlp and cumsum, each headed by its file
    assert ("note: passed over 3 files that are not regular files or cannot be read here "
            "(FIFO 1, character device 1, socket 1)") in err


def test_the_names_of_binary_hlo_are_one_list() -> None:
    from symidx.corpus import sources
    from symidx.hlo.proto import PROTO_SUFFIXES

    assert sources._PROTO_SUFFIXES == PROTO_SUFFIXES
    assert set(PROTO_SUFFIXES) <= set(sources.SUFFIXES)
