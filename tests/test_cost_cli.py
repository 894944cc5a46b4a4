"""``symidx tile --cost / --best / --emitter / --flops-per-element``: the documents COST.md
asks for (validated against ``symidx/schemas/cost-1.json``), the backend-config tiling, and
errors as one line with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from symidx.cli import main
from symidx.tiling.block_config import ConfigError, block_level_parameters, read_config

DATA = Path(__file__).parent / "data" / "cost"
SOFTMAX = str(DATA / "softmax.hlo")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def schema() -> dict:
    from importlib import resources

    return json.loads(resources.files("symidx").joinpath("schemas/cost-1.json").read_text())


def validate(doc: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(schema())
    jsonschema.validate(doc, schema())


COST_KEYS = {"bytes_read", "bytes_written", "flops", "exec_time_us", "read_time_us",
             "write_time_us", "compute_time_us", "estimated_num_warps", "is_infinite"}


def test_cost_from_the_block_level_config(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "tile", SOFTMAX, "--fusion", "triton_softmax", "--cost",
                         "--device", "rtx-a6000", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    validate(doc)
    assert set(doc) >= COST_KEYS
    assert doc["output_tile_sizes"] == [[1, 911]] and doc["num_warps"] == 2
    assert doc["bytes_read"] == 2 * 512 * 911 * 4


def test_cost_sizes_per_root(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "tile", str(DATA / "multi_output.hlo"), "--fusion", "fusion",
                         "--cost", "--sizes", "1,4;16", "--num-warps", "1", "--format",
                         "json")
    assert code == 0, err
    doc = json.loads(out)
    validate(doc)
    assert doc["output_tile_sizes"] == [[1, 4], [16]]


def test_infinite_cost_has_no_time(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tile", str(DATA / "broadcast_reduce.hlo"), "--fusion",
                       "input_reduce_fusion", "--cost", "--sizes", "8,4", "--num-warps", "8",
                       "--format", "json")
    doc = json.loads(out)
    validate(doc)
    assert code == 0 and doc["is_infinite"] and doc["exec_time_us"] is None


def test_best_and_top(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "tile", SOFTMAX, "--fusion", "triton_softmax", "--best",
                         "--top", "3", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    validate(doc)
    assert doc["best"]["output_tile_sizes"] == [[4, 911]] and doc["best"]["num_warps"] == 4
    assert len(doc["top"]) == 3 and doc["top"][0] == doc["best"]
    assert doc["complete"] and "xla_compatible" not in doc["best"]


def test_best_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tile", SOFTMAX, "--fusion", "triton_softmax", "--best")
    assert code == 0 and "#1: tiling [4, 911]" in out


def test_emitter(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tile", str(DATA / "reshape.hlo"), "--fusion", "fusion",
                       "--emitter", "triton", "--sizes", "1,3", "--format", "json")
    doc = json.loads(out)
    validate(doc)
    assert code == 0 and doc["valid"] is False and "power of 2" in doc["reason"]
    code, out, _ = run(capsys, "tile", str(DATA / "reshape.hlo"), "--fusion", "fusion",
                       "--emitter", "triton", "--tiler", "experimental", "--space-sizes",
                       "2,1", "--format", "json")
    assert json.loads(out)["valid"] is True


def test_flops_per_element(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tile", str(DATA / "reduce_window.hlo"), "--fusion",
                       "reduce-window", "--flops-per-element", "--format", "json")
    doc = json.loads(out)
    validate(doc)
    assert code == 0 and doc["flops_per_element"] == 18


@pytest.mark.parametrize("argv, words", [
    (["--cost", "--device", "v100"], "known devices: rtx-a6000"),
    (["--cost", "--sizes", "1,x"], "integers"),
    (["--cost", "--sizes", "1,2,3"], "3 tile sizes"),
    (["--emitter", "triton"], "--sizes"),
    (["--cost", "--space-sizes", "1,2"], "--space-sizes is for --emitter"),
])
def test_errors_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str],
                             words: str) -> None:
    code, out, err = run(capsys, "tile", SOFTMAX, "--fusion", "triton_softmax", *argv)
    assert code == 2 and words in err and "Traceback" not in err


def test_no_block_level_config(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "tile", str(DATA / "reshape.hlo"), "--fusion", "fusion",
                       "--cost")
    assert code == 2 and "block_level_fusion_config" in err


# --------------------------------------------------------------------------- backend config
def test_read_config_takes_bare_keys() -> None:
    assert read_config('{sizes:[64]}') == {"sizes": [64]}
    cfg = read_config('{"fusion_backend_config": {kind: "__triton", '
                      '"block_level_fusion_config": {"output_tiles": [{"sizes": ["1", "8"]}],'
                      ' "num_warps": "2"}}}')
    assert cfg["fusion_backend_config"]["kind"] == "__triton"
    for bad in ('{sizes:[64}', '{"a" 1}', '[1]', '{"a": "b'):
        with pytest.raises(ConfigError):
            read_config(bad)


def test_block_level_parameters() -> None:
    from symidx.hlo import parse_module

    m = parse_module((DATA / "gemm_broadcasts.hlo").read_text())
    p = block_level_parameters(m.entry.root)
    assert p is not None and p.output_tile_sizes == ((64, 64),)
    assert (p.num_warps, p.num_stages, p.num_ctas) == (4, 3, 1)


def test_bad_backend_config_is_located(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    text = (DATA / "softmax.hlo").read_text().replace('"num_warps":"2"', '"num_warps"::"2"')
    path = tmp_path / "bad.hlo"
    path.write_text(text)
    code, _, err = run(capsys, "tile", str(path), "--fusion", "triton_softmax", "--cost")
    assert code == 2 and "Traceback" not in err
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "backend_config" in t)
    assert f"line {line}, column" in err and "bad.hlo" in err


def test_symidx_objective_says_whether_it_agrees(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "tile", SOFTMAX, "--fusion", "triton_softmax", "--best",
                         "--objective", "symidx", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    validate(doc)
    assert doc["best"]["objective"] == "symidx"
    assert doc["best"]["xla_compatible"] is True and "xla_pick" not in doc["best"]
