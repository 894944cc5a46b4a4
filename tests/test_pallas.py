"""symidx.pallas_report: Pallas block specs checked without running the kernel.

Twins: the block indices symidx computes from its indexing map are compared with JAX's own
evaluation of each index map's jaxpr at every grid point; the verdicts on written-twice and
never-written output blocks with a brute-force walk of the grid written here; and, in TPU
interpret mode (which runs the kernel on the CPU, as jax-ml/jax#31707 and #31825 made it
check), the blocks the kernel actually receives are recorded and compared, and an
out-of-bounds block raises exactly where the report says one is."""

from __future__ import annotations

import contextlib
import functools
import io
import itertools
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
pl = pytest.importorskip("jax.experimental.pallas")

from symidx import pallas_report  # noqa: E402
from symidx.cli import main  # noqa: E402
from symidx.core.syntax import print_map  # noqa: E402
from symidx.errors import SymidxError, TooLargeError  # noqa: E402

DATA = Path(__file__).parent / "data"


def add_one(x_ref, o_ref):  # type: ignore[no-untyped-def]
    o_ref[...] = x_ref[...] + 1


def one_input(imap: Any, *, rows: int = 32, block: tuple[int, int] = (8, 128), grid: Any = (4,),
              omap: Any = None, out_rows: int | None = None, **extra: Any) -> Any:
    omap = omap or (lambda *g: (g[0], 0))
    out_rows = rows if out_rows is None else out_rows

    def f(x):  # type: ignore[no-untyped-def]
        return pl.pallas_call(
            add_one, out_shape=jax.ShapeDtypeStruct((out_rows, 128), x.dtype), grid=grid,
            in_specs=[pl.BlockSpec(block, imap)], out_specs=pl.BlockSpec(block, omap),
            **extra)(x)

    return f


def rows(n: int) -> Any:
    return jax.ShapeDtypeStruct((n, 128), jnp.float32)


# ---------------------------------------------------------------------------------------------
# The issue's example and jax-ml/jax#31707 / #31825


def test_an_index_map_past_the_end_is_named() -> None:
    """``lambda i: (i + 1, 0)`` on a 4-step grid over 32 rows of 8-row blocks: the block at
    grid point 3 is block 4, rows 32-39 of 32."""
    ok = pallas_report(one_input(lambda i: (i, 0)), rows(32))
    assert ok.ok and ok.problems == []
    bad = pallas_report(one_input(lambda i: (i + 1, 0)), rows(32))
    assert not bad.ok and len(bad.problems) == 1
    problem = bad.problems[0]
    assert "input 0 'x_ref'" in problem and "add_one" in problem
    assert "block index (4, 0) at grid point (3,) is out of bounds" in problem
    assert "elements 32-39 of dimension 0, which has 32" in problem
    assert "test_pallas.py" in problem  # located: the pallas_call's source line
    spec = bad.kernels[0].operands[0]
    assert print_map(spec.spec.map, "xla").startswith("(d0) -> (d0 + 1, 0)")
    assert spec.oob_count == 1 and spec.out_of_bounds == [((3,), (4, 0))]


@pytest.mark.parametrize(("function", "role"), [("shifted_input", "input 0 'x_ref'"),
                                                 ("shifted_output", "output 0 'o_ref'")])
def test_the_out_of_bounds_examples_of_the_jax_issues_are_caught(function: str, role: str
                                                                  ) -> None:
    kernels = _load_kernels()
    report = pallas_report(getattr(kernels, function), *kernels.example_args())
    assert not report.ok
    oob = [p for p in report.problems if "out of bounds" in p]
    assert oob and all(role in p for p in oob)
    if function == "shifted_output":  # blocks 4 and 5 at grid points 2 and 3; 0, 1 unwritten
        assert "block index (4, 0) at grid point (2,)" in oob[0]
        assert any("(0, 0), (1, 0) of the 4 are never written" in p for p in report.problems)
    assert pallas_report(kernels.in_bounds, *kernels.example_args()).ok


def _load_kernels() -> ModuleType:
    sys.path.insert(0, str(DATA))
    try:
        import pallas_kernels
    finally:
        sys.path.remove(str(DATA))
    return pallas_kernels


# ---------------------------------------------------------------------------------------------
# The kernels Pallas's documentation and JAX's Pallas ops show come out ok


def test_the_documentation_matmul_is_ok() -> None:
    """The quickstart's matmul: x by (512, 1024) row blocks, y by (1024, 512) column blocks,
    z by (512, 512) tiles on a 2x2 grid."""
    def matmul(x, y):  # type: ignore[no-untyped-def]
        return pl.pallas_call(
            lambda x_ref, y_ref, z_ref: None,
            out_shape=jax.ShapeDtypeStruct((x.shape[0], y.shape[1]), x.dtype), grid=(2, 2),
            in_specs=[pl.BlockSpec((512, 1024), lambda i, j: (i, 0)),
                      pl.BlockSpec((1024, 512), lambda i, j: (0, j))],
            out_specs=pl.BlockSpec((512, 512), lambda i, j: (i, j)))(x, y)

    report = pallas_report(matmul, jax.ShapeDtypeStruct((1024, 1024), jnp.float32),
                           jax.ShapeDtypeStruct((1024, 1024), jnp.float32))
    assert report.ok, report.problems
    x, y, z = report.kernels[0].operands
    assert (x.copies, y.copies, z.copies) == (2, 4, 4)  # x's block stays for j = 0, 1
    assert x.elements == y.elements == z.elements == 1024 * 1024


def test_the_tpu_matmul_op_accumulates_over_k_and_is_ok() -> None:
    from jax.experimental.pallas.ops.tpu import matmul

    f = functools.partial(matmul.matmul, block_shape=(128, 128), block_k=256)
    report = pallas_report(f, jax.ShapeDtypeStruct((512, 1024), jnp.float32),
                           jax.ShapeDtypeStruct((1024, 256), jnp.float32))
    assert report.ok, report.problems
    out = report.kernels[0].operands[2]
    assert print_map(out.spec.map, "xla").startswith("(d0, d1, d2) -> (d0, d1)")
    assert out.copies == 4 * 2 and not out.written_twice  # one write-back per tile


def test_the_softmax_op_is_ok() -> None:
    from jax.experimental.pallas.ops.gpu import softmax

    report = pallas_report(softmax.softmax, jax.ShapeDtypeStruct((64, 100), jnp.float32))
    assert report.ok, report.problems
    assert report.kernels[0].call.grid == (64,)  # the vmapped kernel: one row per step


@pytest.mark.parametrize("which", ["gpu", "tpu"])
def test_the_flash_attention_ops_are_ok(which: str) -> None:
    if which == "gpu":
        from jax.experimental.pallas.ops.gpu import attention

        f = functools.partial(attention.mha, segment_ids=None)
        q = jax.ShapeDtypeStruct((2, 256, 4, 64), jnp.float16)
    else:
        from jax.experimental.pallas.ops.tpu import flash_attention

        f = functools.partial(flash_attention.flash_attention, causal=True)
        q = jax.ShapeDtypeStruct((2, 4, 256, 128), jnp.float32)
    report = pallas_report(f, q, q, q)
    assert report.ok, report.problems
    assert all(o.elements == o.total_elements for k in report.kernels for o in k.operands
               if not o.spec.unchecked)


def test_a_head_dim_padded_to_a_power_of_two_is_a_partial_edge_block() -> None:
    from jax.experimental.pallas.ops.gpu import attention

    q = jax.ShapeDtypeStruct((1, 128, 2, 72), jnp.float16)
    report = pallas_report(functools.partial(attention.mha, segment_ids=None), q, q, q)
    assert report.ok
    notes = [n for n in report.notes if "partial edge block along dimension 3" in n]
    assert notes and "covers 0-127 of 72" in notes[0]


# ---------------------------------------------------------------------------------------------
# Output blocks written twice, by racing cores, or never


def test_output_blocks_written_twice_and_never() -> None:
    report = pallas_report(one_input(lambda i: (i, 0), omap=lambda i: (i % 2, 0)), rows(32))
    out = report.kernels[0].operands[1]
    assert out.written_twice == {(0, 0): [(0,), (2,)], (1, 0): [(1,), (3,)]}
    assert out.never_written == [(2, 0), (3, 0)]
    assert len(report.problems) == 3


def test_consecutive_revisits_accumulate_but_parallel_ones_race() -> None:
    from jax.experimental.pallas import tpu as pltpu

    def f(semantics):  # type: ignore[no-untyped-def]
        return one_input(lambda i, k: (i, 0), grid=(4, 3), omap=lambda i, k: (i, 0),
                         compiler_params=pltpu.CompilerParams(dimension_semantics=semantics))

    assert pallas_report(f(("parallel", "arbitrary")), rows(32)).ok
    racing = pallas_report(f(("parallel", "parallel")), rows(32))
    assert not racing.ok
    assert "differ along a 'parallel' dimension" in racing.problems[0]
    assert "(0, 0) and (0, 1)" in racing.problems[0]


def test_an_aliased_output_may_leave_blocks_unwritten() -> None:
    f = one_input(lambda i: (i, 0), grid=(2,), input_output_aliases={0: 0})
    report = pallas_report(f, rows(32))
    assert report.ok
    assert any("aliased to an input" in n for n in report.notes)


# ---------------------------------------------------------------------------------------------
# Scalar prefetch, index maps without a map, what is not checked


def test_scalar_prefetch_is_checked_with_the_example_values() -> None:
    from jax.experimental.pallas import tpu as pltpu

    def k(idx_ref, x_ref, o_ref):  # type: ignore[no-untyped-def]
        o_ref[...] = x_ref[...]

    def f(idx, x):  # type: ignore[no-untyped-def]
        return pl.pallas_call(k, out_shape=jax.ShapeDtypeStruct((32, 128), x.dtype),
                              grid_spec=pltpu.PrefetchScalarGridSpec(
                                  num_scalar_prefetch=1, grid=(4,),
                                  in_specs=[pl.BlockSpec((8, 128), lambda i, p: (p[i], 0))],
                                  out_specs=pl.BlockSpec((8, 128), lambda i, p: (i, 0))))(idx, x)

    x = jnp.zeros((32, 128), jnp.float32)
    good = pallas_report(f, jnp.array([3, 2, 1, 0], jnp.int32), x)
    assert good.ok
    spec = good.kernels[0].operands[0]
    assert spec.spec.map is None and "scalar-prefetch" in spec.spec.map_note
    assert spec.spec.indices[:, 0].tolist() == [3, 2, 1, 0]
    assert good.kernels[0].operands[1].spec.map is not None  # the output's map is a map
    bad = pallas_report(f, jnp.array([0, 1, 7, 2], jnp.int32), x)
    assert "block index (7, 0) at grid point (2,) is out of bounds" in bad.problems[0]
    unknown = pallas_report(f, jax.ShapeDtypeStruct((4,), jnp.int32), x)
    assert unknown.ok and "not checked" in str(unknown)


def test_memory_space_any_is_not_a_window() -> None:
    def f(x):  # type: ignore[no-untyped-def]
        return pl.pallas_call(lambda x_ref, o_ref: None,
                              out_shape=jax.ShapeDtypeStruct((32, 128), x.dtype), grid=(4,),
                              in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                              out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x)

    report = pallas_report(f, rows(32))
    assert report.ok
    assert report.kernels[0].operands[0].spec.unchecked.startswith("memory space any")


def test_errors_are_precise() -> None:
    with pytest.raises(SymidxError, match="binds no pallas_call"):
        pallas_report(lambda x: x + 1, rows(8))
    with pytest.raises(SymidxError, match="could not trace"):
        pallas_report(lambda x: x.nope, rows(8))
    with pytest.raises(TooLargeError, match="the limit is 8"):
        pallas_report(one_input(lambda i: (0, 0), grid=(16,)), rows(8), limit=8)


def test_display() -> None:
    report = pallas_report(one_input(lambda i: (i + 1, 0)), rows(32))
    html = report._repr_html_()
    assert html.count("<table>") == 1 and "d0 + 1" in html and "color:#b00" in html
    text = str(report)
    assert "map: (d0) -> (d0 + 1, 0)" in text and text.endswith("1 problem")
    doc = report.to_dict()
    assert doc["schema"] == "symidx.pallas/1" and doc["ok"] is False
    first = doc["kernels"][0]["operands"][0]
    assert first["out_of_bounds"] == [{"grid_point": [3], "block": [4, 0]}]
    json.dumps(doc)


# ---------------------------------------------------------------------------------------------
# Twins


INDEX_MAPS = [
    ("i", (4,), lambda i: (i, 0)),
    ("i + 1", (4,), lambda i: (i + 1, 0)),
    ("3 - i", (4,), lambda i: (3 - i, 0)),
    ("i - 1", (4,), lambda i: (i - 1, 0)),
    ("i // 2", (8,), lambda i: (i // 2, 0)),
    ("2 i", (4,), lambda i: (2 * i, 0)),
    ("min(i + 1, 3)", (4,), lambda i: (jnp.minimum(i + 1, 3), 0)),
    ("i % 3", (6,), lambda i: (i % 3, 0)),
    ("where(i < 2, i, 3 - i)", (4,), lambda i: (jnp.where(i < 2, i, 3 - i), 0)),
    ("(i + j) % 4", (4, 2), lambda i, j: ((i + j) % 4, 0)),
    ("j * 2 + i // 2", (4, 2), lambda i, j: (j * 2 + i // 2, 0)),
]


def _jax_indices(fn: Any, x: Any) -> list[np.ndarray]:
    """Each block spec's block indices at every grid point (row-major), as JAX evaluates the
    index map's jaxpr point by point."""
    closed = jax.make_jaxpr(fn)(x)
    eqn = next(e for e in closed.jaxpr.eqns if e.primitive.name == "pallas_call")
    gm = eqn.params["grid_mapping"]
    found = []
    for bm in gm.block_mappings:
        f = jax.extend.core.jaxpr_as_fun(bm.index_map_jaxpr)
        found.append(np.array([[int(v) for v in f(*(jnp.int32(p) for p in point))]
                               for point in itertools.product(*(range(n) for n in gm.grid))]))
    return found


@pytest.mark.parametrize(("label", "grid", "imap"), INDEX_MAPS, ids=[m[0] for m in INDEX_MAPS])
def test_block_indices_match_jax_at_every_grid_point(label: str, grid: tuple[int, ...],
                                                      imap: Any) -> None:
    fn = one_input(imap, grid=grid)
    report = pallas_report(fn, rows(32))
    want = _jax_indices(fn, rows(32))
    for operand, expected in zip(report.kernels[0].operands, want):
        if label.startswith("where"):  # a select the grid point decides piecewise: no map
            assert operand.spec.map is None or operand.spec.role == "output"
        else:
            assert operand.spec.map is not None, (label, operand.spec.map_note)
        assert (operand.spec.indices == expected).all(), label
        oob = [(tuple(int(v) for v in p), tuple(int(v) for v in b))
               for p, b in zip(itertools.product(*(range(n) for n in grid)), expected)
               if not 0 <= b[0] < 4]
        assert operand.oob_count == len(oob)
        assert operand.out_of_bounds == oob[:3]


@pytest.mark.parametrize(("label", "grid", "omap"), [
    ("i % 2", (4,), lambda i: (i % 2, 0)),
    ("i // 2", (8,), lambda i: (i // 2, 0)),
    ("(i + j) % 4", (4, 2), lambda i, j: ((i + j) % 4, 0)),
    ("3 - i", (4,), lambda i: (3 - i, 0)),
    ("j", (3, 2), lambda i, j: (j, 0)),
])
def test_written_twice_and_never_match_a_walk_of_the_grid(label: str, grid: tuple[int, ...],
                                                          omap: Any) -> None:
    fn = one_input(lambda *g: (0, 0), grid=grid, omap=omap)
    report = pallas_report(fn, rows(32))
    out = report.kernels[0].operands[1]
    blocks = [tuple(int(v) for v in b) for b in _jax_indices(fn, rows(32))[1]]
    points = list(itertools.product(*(range(n) for n in grid)))
    writes: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    for step, (point, block) in enumerate(zip(points, blocks)):
        if step == 0 or blocks[step - 1] != block:  # a new residency: one more write-back
            writes.setdefault(block, []).append(point)
    assert out.written_twice == {b: p for b, p in writes.items() if len(p) > 1}, label
    missing = [(r, 0) for r in range(4) if (r, 0) not in writes]
    assert out.never_count == len(missing) and out.never_written == missing[:3], label


def _interpret_reads(fn_maker: Any, grid: tuple[int, ...], n: int) -> Any:
    """Run the kernel in TPU interpret mode, recording at each grid point the first element
    of the input block it receives (x holds its own row number) -- or the IndexError."""
    from jax.experimental.pallas import tpu as pltpu

    points = int(np.prod(grid))

    def kernel(x_ref, o_ref, rec_ref):  # type: ignore[no-untyped-def]
        o_ref[...] = x_ref[...]
        rec_ref[...] = jnp.full(rec_ref.shape, x_ref[0, 0])

    flat = (lambda *g: (g[0] * grid[1] + g[1], 0, 0)) if len(grid) == 2 else (
        lambda i: (i, 0, 0))
    imap = fn_maker

    def f(x):  # type: ignore[no-untyped-def]
        return pl.pallas_call(
            kernel, grid=grid,
            out_shape=[jax.ShapeDtypeStruct((32, 128), x.dtype),
                       jax.ShapeDtypeStruct((points, 8, 128), x.dtype)],
            in_specs=[pl.BlockSpec((8, 128), imap)],
            out_specs=[pl.BlockSpec((8, 128), lambda *g: (0, 0)),
                       pl.BlockSpec((None, 8, 128), flat)],
            interpret=pltpu.InterpretParams())(x)

    x = jnp.broadcast_to(jnp.arange(n, dtype=jnp.float32)[:, None], (n, 128))
    try:
        _, rec = f(x)
    except Exception as e:  # noqa: BLE001 -- the interpreter's out-of-bounds error
        pltpu.reset_tpu_interpret_mode_state()
        return e
    return np.asarray(rec)[:, 0, 0].astype(np.int64)


@pytest.mark.parametrize(("label", "grid", "imap"), [m for m in INDEX_MAPS if m[0] in (
    "i", "i + 1", "3 - i", "i - 1", "2 i", "min(i + 1, 3)", "(i + j) % 4")],
    ids=lambda m: m if isinstance(m, str) else "")
def test_interpret_mode_reads_the_blocks_the_report_says(label: str, grid: tuple[int, ...],
                                                         imap: Any) -> None:
    report = pallas_report(one_input(imap, grid=grid), rows(32))
    x_spec = report.kernels[0].operands[0]
    got = _interpret_reads(imap, grid, 32)
    if x_spec.oob_count:
        assert isinstance(got, Exception), label
        point = x_spec.out_of_bounds[0][0]
        assert "Out-of-bounds block index" in str(got)
        assert f"in iteration {point}" in str(got) or f"iteration ({point[0]},)" in str(got)
    else:
        assert not isinstance(got, Exception), (label, got)
        assert (got == x_spec.spec.indices[:, 0] * 8).all(), label


@pytest.mark.parametrize(("grid", "step"), [(5, 6), (6, 6)])
def test_element_windows_must_fit_as_interpret_mode_says(grid: int, step: int) -> None:
    """``pl.Element(8)``: the index is the window's first row; a window that runs past the
    end is out of bounds (TPU interpret mode raises), unlike a partial edge block."""
    from jax.experimental.pallas import tpu as pltpu

    def make(interpret: Any = None) -> Any:
        def f(x):  # type: ignore[no-untyped-def]
            return pl.pallas_call(
                lambda x_ref, o_ref: o_ref.__setitem__(..., x_ref[...]),
                out_shape=jax.ShapeDtypeStruct((8 * grid, 128), x.dtype), grid=(grid,),
                in_specs=[pl.BlockSpec((pl.Element(8), 128), lambda i: (i * step, 0))],
                out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)), interpret=interpret)(x)
        return f

    x = jnp.broadcast_to(jnp.arange(32, dtype=jnp.float32)[:, None], (32, 128))
    report = pallas_report(make(), x)
    operand = report.kernels[0].operands[0]
    assert operand.spec.indices[:, 0].tolist() == [step * i for i in range(grid)]
    assert operand.elements == 32 * 128  # overlapping windows counted once
    try:
        got = np.asarray(make(pltpu.InterpretParams())(x))[::8, 0].tolist()
    except Exception as e:  # noqa: BLE001 -- the interpreter's out-of-bounds error
        pltpu.reset_tpu_interpret_mode_state()
        assert not report.ok and "Out-of-bounds block index (30, 0)" in str(e)
        assert "block index (30, 0) at grid point (5,) is out of bounds: elements 30-37" in (
            report.problems[0])
    else:
        assert report.ok and got == [step * i for i in range(grid)]


# ---------------------------------------------------------------------------------------------
# The command line


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["pallas", *argv])
    return code, out.getvalue(), err.getvalue()


def test_the_pallas_verb() -> None:
    kernels = str(DATA / "pallas_kernels.py")
    code, out, _ = run(f"{kernels}:shifted_input")
    assert code == 1
    assert "problem: block index (4, 0) at grid point (3,) is out of bounds" in out
    assert "map: (d0) -> (d0 + 1, 0)" in out
    code, out, _ = run(f"{kernels}:in_bounds", "--format", "json")
    assert code == 0 and json.loads(out)["ok"] is True
    code, _, err = run(f"{kernels}:missing")
    assert code == 2 and "has no attribute 'missing'" in err
    code, _, err = run(f"{kernels}:in_bounds", "--limit", "2")
    assert code == 2 and "the limit is 2" in err
    code, _, err = run(f"{kernels}:in_bounds", "--limit", "zero")
    assert code == 2 and "--limit takes a positive integer" in err


def test_no_grid_and_an_empty_grid() -> None:
    def whole(x):  # type: ignore[no-untyped-def]
        return pl.pallas_call(lambda x_ref, o_ref: o_ref.__setitem__(..., x_ref[...]),
                              out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    report = pallas_report(whole, rows(8))
    assert report.ok and report.kernels[0].call.grid == ()
    assert [o.copies for o in report.kernels[0].operands] == [1, 1]
    empty = pallas_report(one_input(lambda i: (i, 0), grid=(0,)), rows(32))
    assert not empty.ok and "no block of the output is written" in empty.problems[0]
