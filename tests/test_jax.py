"""symidx.from_jax: compile with JAX on the CPU, and every fusion of the optimised module gets
its maps (skipped when JAX is not installed); load_function resolves ``module:function``."""

from __future__ import annotations

import json
import os.path
import textwrap
from types import ModuleType

import pytest

from symidx import parse_map
from symidx.core.verify import equal
from symidx.errors import SymidxError
from symidx.jax_support import JaxAnalysis, load_function


@pytest.fixture(scope="module")
def jax() -> ModuleType:
    return pytest.importorskip("jax")


def softmax(x):
    import jax

    return jax.nn.softmax(x, axis=-1)


def attention(q, k, v):
    import jax
    import jax.numpy as jnp

    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(q.shape[-1])
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)


@pytest.fixture(scope="module")
def softmax_maps(jax) -> JaxAnalysis:
    from symidx import from_jax

    return from_jax(softmax, jax.ShapeDtypeStruct((4, 16), "float32"))


@pytest.fixture(scope="module")
def attention_maps(jax) -> JaxAnalysis:
    from symidx import from_jax

    q = jax.ShapeDtypeStruct((2, 4, 16, 32), "float32")
    kv = jax.ShapeDtypeStruct((2, 4, 24, 32), "float32")
    return from_jax(attention, q, kv, kv)


def all_maps(analysis: JaxAnalysis) -> list:
    return [m for f in analysis.fusions for g in f.groups for m in g.maps]


@pytest.mark.parametrize("name", ["softmax_maps", "attention_maps"])
def test_every_fusion_gets_maps_for_every_operand(name, request):
    analysis = request.getfixturevalue(name)
    assert analysis.fusions, "the optimised module has fusions"
    assert analysis.module.entry.root.name in analysis.hlo_text
    fusions = {i.name for c in analysis.module.computations.values() for i in c.instructions
               if i.opcode == "fusion"}
    assert {f.instr.name for f in analysis.fusions} == fusions
    for fusion in analysis.fusions:
        assert len(fusion.groups) == len(fusion.instr.operands)
        for group in fusion.groups:
            assert group.unsupported is None, (fusion.instr.name, group)
            assert group.maps, (fusion.instr.name, group.index)


def _has(maps, text: str) -> bool:
    want = parse_map(text)
    return any(m.num_dims == want.num_dims and m.num_results == want.num_results
               and equal(m, want) for m in maps)


def test_softmax_reduction_reads_a_whole_row(softmax_maps):
    # The max (and the sum) over the last axis: each of the 4 outputs reads all 16 elements
    # of its row, through a range variable over the reduced dimension.
    assert _has(all_maps(softmax_maps), "(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], "
                                        "s0 in [0, 15]")
    # The normalisation broadcasts the per-row value back over the row.
    assert _has(all_maps(softmax_maps), "(d0, d1) -> (d0), domain: d0 in [0, 3], d1 in [0, 15]")


def test_attention_contracts_over_the_head_dimension(attention_maps):
    maps = all_maps(attention_maps)
    # scores[b, h, q, k] reads q[b, h, q, :] and k[b, h, k, :] (32 head features)
    assert _has(maps, "(d0, d1, d2, d3)[s0] -> (d0, d1, d2, s0), domain: d0 in [0, 1], "
                      "d1 in [0, 3], d2 in [0, 15], d3 in [0, 23], s0 in [0, 31]")
    assert _has(maps, "(d0, d1, d2, d3)[s0] -> (d0, d1, d3, s0), domain: d0 in [0, 1], "
                      "d1 in [0, 3], d2 in [0, 15], d3 in [0, 23], s0 in [0, 31]")
    # out[b, h, q, d] reads v[b, h, :, d] (24 keys)
    assert _has(maps, "(d0, d1, d2, d3)[s0] -> (d0, d1, s0, d3), domain: d0 in [0, 1], "
                      "d1 in [0, 3], d2 in [0, 15], d3 in [0, 31], s0 in [0, 23]")


def test_fusion_lookup_by_name(softmax_maps):
    first = softmax_maps.fusions[0]
    assert softmax_maps.fusion(first.instr.name) is first
    with pytest.raises(SymidxError, match="no fusion named 'nope'"):
        softmax_maps.fusion("nope")


def test_input_to_output_maps_broadcast_the_row_maximum(jax):
    from symidx import from_jax

    analysis = from_jax(softmax, jax.ShapeDtypeStruct((4, 16), "float32"),
                        direction="input_to_output")
    assert analysis.direction == "input_to_output"
    # the per-row value (operand 1 of the exponential fusion) reaches its whole row
    assert _has(all_maps(analysis), "(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], "
                                    "s0 in [0, 15]")


def test_a_function_jax_cannot_compile_is_a_symidx_error(jax):
    from symidx import from_jax

    def bad(x):
        return x @ x  # a (2, 3) by (2, 3) matrix product

    with pytest.raises(SymidxError, match="JAX could not compile bad"):
        from_jax(bad, jax.ShapeDtypeStruct((2, 3), "float32"))


def test_load_function_by_module_and_by_file(tmp_path):
    assert load_function("json:dumps") is json.dumps
    assert load_function("os.path:join") is os.path.join
    source = tmp_path / "model.py"
    source.write_text(textwrap.dedent("""
        def double(x):
            return 2 * x
        class Net:
            @staticmethod
            def apply(x):
                return x + 1
    """))
    assert load_function(f"{source}:double")(3) == 6
    assert load_function(f"{source}:Net.apply")(3) == 4


@pytest.mark.parametrize("spec, message", [
    ("no_colon", "expected module:function"),
    ("json:", "expected module:function"),
    ("symidx_no_such_module:f", "cannot import 'symidx_no_such_module'"),
    ("json:no_such_function", "has no attribute 'no_such_function'"),
    ("symidx:__version__", "is not callable"),
    ("missing_file.py:f", "no Python file"),
])
def test_load_function_errors(spec, message):
    with pytest.raises(SymidxError, match=message):
        load_function(spec)


MODELS = '''
import jax
import jax.numpy as jnp


def softmax(x):
    return jax.nn.softmax(x, axis=-1)


softmax_example_args = (jnp.ones((2, 65, 125), jnp.float32),)


def attention(q, k, v):
    s = jnp.einsum("bqd,bkd->bqk", q, k) / 8.0
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s, axis=-1), v)


def example_args():
    x = jnp.ones((2, 16, 8), jnp.float32)
    return (x, x, x)
'''


def test_maps_dash_dash_jax_on_softmax_and_attention(tmp_path, monkeypatch):
    import contextlib
    import io

    pytest.importorskip("jax")
    from symidx.cli import main
    from symidx.core.syntax import parse_map

    (tmp_path / "models_for_symidx_test.py").write_text(MODELS)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["maps", "--jax", "models_for_symidx_test:softmax", "--style", "xla"]) == 0
    # the seed's softmax maps for parameter 0: the row read whole, and the element itself
    texts = [line for line in out.getvalue().splitlines() if " -> " in line]
    assert parse_map("(d0, d1, d2)[s0] -> (d0, d1, s0), domain: d0 in [0, 1], d1 in [0, 64], "
                     "d2 in [0, 124], s0 in [0, 124]") in [parse_map(t) for t in texts]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["maps", "--jax", "models_for_symidx_test:attention", "--format",
                     "json"]) == 0
    assert '"maps"' in out.getvalue() and "unknown indexing" not in out.getvalue()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["maps", "--jax", "models_for_symidx_test:missing"]) == 2
    assert "has no attribute 'missing'" in err.getvalue()
