"""The attributes each HLO opcode takes (symidx/hlo/attribute_table.py): every module the
suite reads passes, and the table's twin, XLA's own parser (jaxlib's), which names the
attributes an opcode allows when it refuses one. (An attribute an opcode does not take,
refused where it is written: tests/test_bad_input.py.)"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA
from symidx.cli import main
from symidx.errors import HloValidationError
from symidx.hlo import parse_hlo
from symidx.hlo.attribute_table import COMMON, OTHER_VERSIONS, TAKES, allowed


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_every_module_of_the_test_data_takes_only_attributes_it_may():
    # what XLA accepts must pass: every HLO text the suite reads parses as it did
    read = 0
    for path in sorted(DATA.rglob("*.hlo")):
        text = path.read_text()
        if "ENTRY" not in text:
            continue
        try:
            parse_hlo(text, validate=False)
        except HloValidationError as e:
            assert "unexpected attribute" not in str(e), (path, str(e))
        except Exception:  # noqa: BLE001 -- a module the suite reads as bad input elsewhere
            continue
        read += 1
    assert read > 50


def test_wrapped_asynchronous_forms_take_the_wrapped_ops_attributes():
    start = allowed("reduce-scatter-start")
    assert start is not None and {"to_apply", "dimensions", "async_execution_thread"} <= start
    assert allowed("reduce-scatter-done") == COMMON | {"async_execution_thread"}
    assert allowed("no-such-op") is None and allowed("no-such-op-start") is None


# --------------------------------------------------------------------------- the twin

def _each(opcodes: str, operands: list[str]) -> dict[str, list[str]]:
    return {opcode: operands for opcode in opcodes.split()}


#: Operands that let XLA's parser reach the attributes (the count it expects; a scalar pred
#: or s32 index for a conditional; matrices for the linear algebra). Default: one f32[4].
OPERANDS: dict[str, list[str]] = {
    **_each("add divide multiply subtract atan2 complex maximum minimum power remainder and "
            "or xor shift-left shift-right-arithmetic shift-right-logical stochastic-convert "
            "add-dependency convolution compare pad gather set-dimension-size outfeed send",
            ["f32[4]", "f32[4]"]),
    **_each("clamp select select-and-scatter batch-norm-training", ["f32[4]"] * 3),
    **_each("batch-norm-inference batch-norm-grad", ["f32[4]"] * 5),
    **_each("iota replica-id partition-id rng-get-and-update-state parameter constant", []),
    "cholesky": ["f32[4,4]"],
    "triangular-solve": ["f32[4,4]", "f32[4,4]"],
    "conditional|pred": ["pred[]"],
    "conditional|s32": ["s32[]"],
}
SHAPES = {"tuple": "(f32[4])", "async-start": "((f32[4]), f32[4], s32[])"}
PROBE = Path(__file__).with_name("xla_attributes_probe.py")
#: Attributes of the XLA the table follows (openxla/xla 02f6793) that jaxlib 0.10's XLA
#: does not have yet.
NEWER: dict[str, set[str]] = {"convolution": {"conv_kind"}}


def _cases() -> list[tuple[str, list[str], str]]:
    cases = []
    for opcode in sorted(TAKES):
        keys = [k for k in OPERANDS if k.split("|")[0] == opcode] or [opcode]
        for key in keys:
            cases.append((opcode, OPERANDS.get(key, ["f32[4]"]), SHAPES.get(opcode, "f32[4]")))
    for opcode in ("reduce-scatter-start", "all-to-all-start", "add-start"):
        cases.append((opcode, ["f32[4]"] if opcode != "add-start" else ["f32[4]", "f32[4]"],
                      "((f32[4]), f32[4])"))
    return cases


def test_the_table_is_xla_parsers_own():
    pytest.importorskip("jax")
    cases = _cases()
    # XLA's parser runs in a child process: a check failure in it must not end this one
    done = subprocess.run([sys.executable, str(PROBE), json.dumps(cases)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    found: dict[str, object] = json.loads(done.stdout)
    by_opcode: dict[str, set[str]] = {}
    unknown = []
    for (opcode, _, _), answer in zip(cases, found.values()):
        if not isinstance(answer, list):
            unknown.append((opcode, answer))
            continue
        by_opcode.setdefault(opcode, set()).update(answer)
    # every opcode XLA's parser knows: the table takes every attribute XLA's takes, and
    # more only where another XLA version takes it (OTHER_VERSIONS) or the XLA the table
    # follows is newer than this jaxlib's (NEWER)
    assert len(by_opcode) > 100, unknown
    for opcode, xla in sorted(by_opcode.items()):
        ours = allowed(opcode)
        assert ours is not None, opcode
        assert xla <= ours, (opcode, "refused by symidx:", sorted(xla - ours))
        extra = ours - xla - OTHER_VERSIONS.get(opcode, frozenset()) - NEWER.get(opcode, set())
        assert not extra, (opcode, "taken by symidx only:", sorted(extra))
    # the table's opcodes XLA's parser (this jaxlib's) does not know, with what it said
    assert {opcode for opcode, _ in unknown} <= {"ragged-dot", "scaled-dot", "scan",
                                                  "topk"}, unknown
