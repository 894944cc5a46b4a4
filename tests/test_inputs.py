"""Inputs as users have them: StableHLO text from ``jax.jit(f).lower(x).as_text()``, XLA dump
folders written by XLA, ``.gz`` and multi-module files, one bad module among several, and
modules captured in process from JAX (the tests that need JAX skip without it)."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from corpus_helpers import corpus, records
from symidx.cli import main
from symidx.core.syntax import parse_map
from symidx.core.verify import equal
from symidx.errors import ParseError, SymidxError
from symidx.hlo import parse_hlo, parse_module
from symidx.hlo.mlir import looks_like_mlir

EXAMPLES = Path(__file__).resolve().parent.parent / "symidx" / "examples"

#: Hand-written StableHLO (what JAX prints, without debug locations): x[4,8] -> sum over
#: axis 0 of x.T, so out[j] reads x[j, 0..7].
STABLEHLO = """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32>) -> (tensor<4xf32>) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0]
        : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
"""
#: What out[d0] reads of x, from the definition of transpose and reduce.
READS_X = parse_map("(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 7]")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def jax() -> ModuleType:
    return pytest.importorskip("jax")


def f(x):
    import jax.numpy as jnp

    return jnp.sum(x.T * 2, axis=0)


# -- MLIR text: recognised without jax


@pytest.mark.parametrize("text", [
    STABLEHLO,
    "#loc1 = loc(\"x\")\nmodule @jit_f {\n}",
    "// a comment\nmodule {\n  func.func @main() {\n  }\n}",
    '"builtin.module"() ({\n}) : () -> ()',
    "func.func public @main(%arg0: tensor<f32>) -> tensor<f32> {\n}",
])
def test_mlir_text_is_recognised(text):
    assert looks_like_mlir(text)


@pytest.mark.parametrize("text", [
    (EXAMPLES / "mlp.hlo").read_text(),
    "module {\n  x.1 = f32[] parameter(0)\n  ROOT n = f32[] negate(x.1)\n}",
    "add = f32[2] add(f32[2] x, f32[2] y)",
])
def test_hlo_text_is_not_taken_for_mlir(text):
    assert not looks_like_mlir(text)
    parse_hlo(text)  # and it still parses: a computation may be called 'module'


def test_the_hlo_parser_says_what_mlir_text_is_and_what_to_do():
    with pytest.raises(ParseError) as caught:
        parse_hlo("\n" + STABLEHLO, source="f.mlir")
    message = str(caught.value)
    assert message.startswith("f.mlir:line 2, column 1: this is MLIR text (StableHLO")
    assert "as_text(dialect='hlo')" in message and "symidx.parse_module" in message


def test_without_jaxlib_the_error_says_how_to_install_it(monkeypatch, tmp_path):
    with contextlib.suppress(ImportError):
        import jax._src.lib  # noqa: F401 - loaded whole first, so that only jaxlib is hidden
    monkeypatch.setitem(sys.modules, "jaxlib", None)  # import jaxlib fails
    with pytest.raises(SymidxError, match=r"pip install 'symidx\[jax\]'"):
        parse_module(STABLEHLO, source="f.mlir")
    path = tmp_path / "f.mlir"
    path.write_text(STABLEHLO)
    code, out, err = run("maps", str(path))
    assert code == 2 and out == ""
    assert "f.mlir: this is MLIR text" in err and "symidx[jax]" in err
    assert "Traceback" not in err


# -- MLIR text: converted with jaxlib


def test_stablehlo_from_jax_gets_its_maps_with_the_users_names(jax, tmp_path):
    lowered = jax.jit(f).lower(jax.ShapeDtypeStruct((4, 8), "float32"))
    path = tmp_path / "f.mlir"
    path.write_text(lowered.as_text(debug_info=True))
    code, out, err = run("maps", str(path), "--computation", "ENTRY", "--format", "json")
    assert code == 0, err
    group, = json.loads(out)["computations"][0]["operands"]
    assert group["name"] == "x.1"  # the argument's name, from MLIR's loc("x")
    found, = group["maps"]
    assert equal(parse_map(found["text"]), READS_X)
    # the same maps as the HLO JAX prints for the same function
    hlo = tmp_path / "f.hlo"
    hlo.write_text(lowered.as_text(dialect="hlo"))
    code, out_hlo, _ = run("maps", str(hlo), "--computation", "ENTRY")
    code, out_mlir, _ = run("maps", str(path), "--computation", "ENTRY")
    assert code == 0 and out_mlir == out_hlo


def test_stablehlo_without_debug_locations_is_located_in_the_mlir_file(jax, tmp_path):
    path = tmp_path / "g.mlir"
    path.write_text(STABLEHLO)
    module = parse_module(STABLEHLO, source=str(path))
    assert module.source.endswith("(StableHLO/MHLO, converted by jaxlib)")
    reduce = module.entry.root
    assert reduce.opcode == "reduce"
    # jaxlib locates the op at its line of the MLIR text (line 5), in this file
    assert f'source_file="{path}"' in reduce.attributes["metadata"]
    assert "source_line=5" in reduce.attributes["metadata"]


def test_mlir_that_jaxlib_rejects_is_located(jax, tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text("module @m {\n  func.func @main( -> }\n")
    code, out, err = run("maps", str(path))
    assert code == 2 and out == ""
    assert f"{path}:line 2, column" in err and "(MLIR, read by jaxlib)" in err
    assert "Traceback" not in err


def test_from_jax_reads_the_lowered_module(jax):
    from symidx.analysis import computation_maps
    from symidx.jax_support import from_jax

    analysis = from_jax(f, jax.ShapeDtypeStruct((4, 8), "float32"), stage="lowered")
    assert analysis.fusions == ()  # nothing is fused before XLA optimises
    assert [p.name for p in analysis.module.entry.parameters] == ["x.1"]
    record, = computation_maps(analysis.module.entry, "output_to_input", output=0)
    found, = record.groups[0].maps
    assert equal(found, READS_X)


# -- files and folders as they come


def test_maps_reads_gz_and_multi_module_files_and_goes_on_past_a_bad_one(tmp_path):
    good = (EXAMPLES / "rearrange.hlo").read_text()
    gz = tmp_path / "r.hlo.gz"
    gz.write_bytes(gzip.compress(good.encode()))
    lit = tmp_path / "lit.hlo"
    broken = "HloModule broken\nENTRY e {\n  ROOT x = f32[2 parameter(0)\n}"
    lit.write_text(f"{good}\n// -----\n{broken}\n// -----\n{good}")
    code, out, err = run("maps", str(gz), str(lit), "--all")
    single = run("maps", str(EXAMPLES / "rearrange.hlo"), "--all")[1].rstrip("\n")
    assert code == 2
    assert out.count(single) == 3  # the gzipped file and the two good sections
    assert f"file {gz}\n" in out and f"file {lit}#0\n" in out and f"file {lit}#2\n" in out
    assert f"file {lit}#1\nerror: {lit}:line " in out
    assert f"symidx: error: {lit}:line " in err and "1 of 4 modules failed" in err
    # one file: as before, no heading
    code, out, _ = run("maps", str(gz), "--all")
    assert code == 0 and out.rstrip("\n") == single


def test_maps_json_of_several_files_marks_the_failed_one(tmp_path):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY e {\n")
    code, out, _ = run("maps", str(EXAMPLES / "mlp.hlo"), str(bad), str(tmp_path / "none.hlo"),
                       "--all", "--format", "json")
    assert code == 2
    documents = json.loads(out)
    assert [d["file"] for d in documents] == [str(EXAMPLES / "mlp.hlo"), str(bad),
                                              str(tmp_path / "none.hlo")]
    assert "fusions" in documents[0]
    assert documents[1]["error"].startswith(f"{bad}:line ")
    assert "No such file" in documents[2]["error"]


@pytest.fixture(scope="module")
def dump_folder(jax, tmp_path_factory) -> Path:
    """A folder XLA itself wrote, for a small JAX program, with modules as text."""
    folder = tmp_path_factory.mktemp("dump")
    program = textwrap.dedent("""
        import jax, jax.numpy as jnp
        x = jnp.arange(32.0).reshape(4, 8)
        print(jax.jit(lambda x: jnp.sum(x.T * 2, axis=0))(x))
        print(jax.jit(lambda x: jnp.tanh(x)[:, ::2] + 1)(x))
    """)
    env = {**os.environ, "XLA_FLAGS": f"--xla_dump_to={folder} --xla_dump_hlo_as_text",
           "JAX_PLATFORMS": "cpu"}
    subprocess.run([sys.executable, "-c", program], env=env, check=True, capture_output=True,
                   timeout=300)
    return folder


def _module_files(folder: Path) -> list[Path]:
    """The modules XLA dumped: HLO before and after optimisation, and the StableHLO it was
    given (``module_0004.jit_f/module.mlir``)."""
    return [p for p in folder.rglob("*") if p.name == "module.mlir"
            or p.name.endswith(("before_optimizations.txt", "after_optimizations.txt"))]


def test_corpus_reads_an_xla_dump_folder_and_skips_its_reports(dump_folder, tmp_path):
    modules = _module_files(dump_folder)
    reports = [p for p in dump_folder.iterdir() if "-buffer-assignment" in p.name
               or "-memory-usage-report" in p.name or "-live-range" in p.name]
    assert modules and reports  # what XLA wrote: both kinds
    out = tmp_path / "r.jsonl"
    code, _, err = corpus(str(dump_folder), "--out", str(out), "--jobs", "1")
    assert code == 0, err
    found = records(out)
    assert sorted(r["file"] for r in found) == sorted(str(p) for p in modules)
    assert all(r["status"] == "ok" for r in found), [r["message"] for r in found]
    assert any(r["file"].endswith(".mlir") for r in found)
    assert f"skipped {len(reports)} XLA dump reports" in err
    assert "buffer-assignment" in err


def test_maps_reads_an_xla_dump_folder(dump_folder):
    code, out, err = run("maps", str(dump_folder), "--all")
    assert code == 0, err
    assert out.count("file ") == len(_module_files(dump_folder))
    assert "XLA dump reports, not modules" in err
    assert "fusion " in out  # the optimised modules have fusions, with their maps


# -- capture in process


def test_capture_yields_every_module_compiled_ready_for_analysis(jax):
    import jax.numpy as jnp

    from symidx import capture

    x = jnp.ones((4, 8))

    def g(x):
        return jnp.sum(x.T * 3, axis=0)

    with capture() as modules:
        jax.jit(g)(x)
    assert modules and all(m.stage == "optimized" for m in modules)
    last = modules[-1]
    assert last.name.startswith("jit_g")
    (fusion,) = last.analyse().fusions
    (found,) = fusion.groups[0].maps
    assert equal(found, READS_X)
    count = len(modules)
    jax.jit(lambda x: x - 1)(x)  # after the block: not captured
    assert len(modules) == count


@pytest.mark.parametrize("stage", ["lowered", "scheduled"])
def test_capture_takes_the_stage_asked_for(jax, stage):
    import jax.numpy as jnp

    from symidx import capture

    with capture(stage) as modules:
        jax.jit(lambda x: jnp.sum(x.T * 4, axis=0))(jnp.ones((4, 8)))
    assert modules and all(m.stage == stage for m in modules)
    last = modules[-1].module
    if stage == "lowered":  # as lowered: nothing fused, the user's names and op_names
        assert not any(i.opcode == "fusion" for i in last.entry.instructions)
        assert [p.name for p in last.entry.parameters] == ["x.1"]
        assert 'op_name="jit(<lambda>)/transpose"' in \
            next(i for i in last.entry.instructions if i.opcode == "transpose"
                 ).attributes["metadata"]
    else:
        assert last.attributes.get("is_scheduled") == "true"


def test_capture_rejects_an_unknown_stage(jax):
    from symidx import capture

    with pytest.raises(SymidxError, match="stage must be one of"), capture("early"):
        pass


# -- source locations


def _validator():
    jsonschema = pytest.importorskip("jsonschema")
    from importlib import resources

    schema = json.loads(resources.files("symidx").joinpath("schemas/maps-1.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def test_groups_and_paths_carry_op_name_and_source_line_from_stack_frames():
    # attention.hlo: JAX's stack_frame_id metadata; ynn_fusion.1 is the first einsum, made
    # on line 26 of the generating script (FileLocations 4), reduce_max on line 27.
    code, out, err = run("maps", str(EXAMPLES / "attention.hlo"), "--all", "--explain",
                         "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    _validator().validate(document)
    fusion = next(f for f in document["fusions"] if f["instruction"] == "multiply_reduce_fusion")
    assert fusion["source"] == {"op_name": "jit(attention)/reduce_max",
                                "file": "gen_hlo_samples.py", "line": 27}
    group, = fusion["operands"]
    assert group["name"] == "ynn_fusion.1"
    assert group["source"] == {"op_name": "jit(attention)/bhqd,bhkd->bhqk/dot_general",
                               "file": "gen_hlo_samples.py", "line": 26}
    origin, = group["origins"]
    assert origin["sources"][0] == {"instruction": "reduce_max.0",
                                    "op_name": "jit(attention)/reduce_max",
                                    "file": "gen_hlo_samples.py", "line": 27}
    code, text, _ = run("maps", str(EXAMPLES / "attention.hlo"), "--instruction",
                        "multiply_reduce_fusion", "--explain")
    assert text.splitlines()[1] == ("source: jit(attention)/bhqd,bhkd->bhqk/dot_general "
                                    "(gen_hlo_samples.py:26)")
    assert "\nat: jit(attention)/reduce_max (gen_hlo_samples.py:27)\n" in text


def test_source_file_and_line_metadata_and_no_metadata():
    text = textwrap.dedent("""\
        HloModule m
        ENTRY e {
          p = f32[4,8] parameter(0), metadata={op_name="x"}
          q = f32[4,8] parameter(1)
          t = f32[8,4] transpose(p), dimensions={1,0},
            metadata={op_name="jit(f)/transpose" source_file="a \\"b\\".py" source_line=7}
          u = f32[8,4] transpose(q), dimensions={1,0}
          ROOT s = f32[8,4] add(t, u),
            metadata={op_name="jit(f)/add" source_file="f.py" source_line=9}
        }
    """)
    from symidx.hlo.locations import SourceLocation, source_of

    module = parse_hlo(text)
    assert source_of(module.entry.root, module) == SourceLocation("jit(f)/add", "f.py", 9)
    assert source_of(module.entry.instruction("u"), module) is None
    from symidx.analysis import find_instruction, instruction_maps
    from symidx.analysis.documents import instruction_document

    root = find_instruction(module, "s")
    groups = instruction_maps(root, "output_to_input")
    document = instruction_document(module, root, "output_to_input", groups, 0, explain=True)
    _validator().validate(document)
    assert document["source"]["line"] == 9
    first, second = document["operands"]
    assert first["source"] == {"op_name": "jit(f)/transpose", "file": 'a "b".py', "line": 7}
    assert "source" not in second  # no metadata: the document is as before
    # the path through u has the add's location only
    assert [s["instruction"] for s in second["origins"][0]["sources"]] == ["s"]


def test_stablehlo_from_jax_is_tied_to_the_users_lines(jax, tmp_path):
    import inspect

    lowered = jax.jit(f).lower(jax.ShapeDtypeStruct((4, 8), "float32"))
    path = tmp_path / "f.mlir"
    path.write_text(lowered.as_text(debug_info=True))
    code, out, err = run("maps", str(path), "--computation", "ENTRY", "--explain")
    assert code == 0, err
    lines, first = inspect.getsourcelines(f)
    line = first + next(i for i, s in enumerate(lines) if "jnp.sum" in s)
    assert f"at: jit(f)/reduce_sum ({__file__}:{line})" in out
    assert f"at: jit(f)/transpose ({__file__}:{line})" in out
