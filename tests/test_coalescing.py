"""XLA's coalescing-analysis test expectations (tests/data/coalescing), reproduced by
symidx.analysis.coalescing and by ``symidx maps --coalescing``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from symidx.analysis import find_instruction
from symidx.analysis.coalescing import fusion_coalescing
from symidx.cli import main
from symidx.hlo import parse_hlo

DATA = Path(__file__).parent / "data" / "coalescing" / "xla_coalescing_test.txt"


def _cases() -> list[tuple[str, str, list[bool]]]:
    out = []
    for chunk in DATA.read_text().split("// -----")[0:]:
        name = re.search(r"// TEST: (\w+)", chunk)
        expect = re.search(r"// EXPECT: ([a-z, ]+)", chunk)
        if name and expect:
            verdicts = [v.strip() == "true" for v in expect.group(1).split(",")]
            out.append((name.group(1), chunk, verdicts))
    return out


CASES = _cases()


def test_every_xla_test_is_here() -> None:
    assert len(CASES) == 18


@pytest.mark.parametrize(("name", "text", "want"), CASES, ids=[c[0] for c in CASES])
def test_xla_expectation(name: str, text: str, want: list[bool]) -> None:
    instr = find_instruction(parse_hlo(text))
    found = fusion_coalescing(instr)
    assert [c.coalesced for c in found] == want, [(c.name, c.reason, c.maps) for c in found]


def test_cli_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name, text, want = next(c for c in CASES if c[0] == "RhsTransposedLayout")
    path = tmp_path / "m.hlo"
    path.write_text(text)
    assert main(["maps", str(path), "--coalescing", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(o["operand"], o["name"], o["coalesced"]) for o in out["operands"]] == [
        (0, "p0", True), (1, "p1", False)]
    assert out["operands"][1]["maps"] == ["(d0) -> (d0 * 100), domain: d0 in [0, 31]"]


def test_cli_text_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, text, _ = next(c for c in CASES if c[0] == "Transpose")
    path = tmp_path / "m.hlo"
    path.write_text(text)
    assert main(["maps", str(path), "--coalescing"]) == 0
    assert "operand 0 input: coalesced, transpose emitter" in capsys.readouterr().out
    assert main(["maps", str(path), "--coalescing", "--instruction", "input"]) == 2
    assert "is for a fusion" in capsys.readouterr().err
