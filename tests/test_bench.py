"""The benchmark suite computes what it claims to (no timing is asserted): the maps it
times are right, the islpy and MLIR translations mean the same, and ``symidx bench`` runs."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools

import pytest
from hypothesis import given, settings

from symidx import IndexingMap, compose, equal
from symidx.analysis import instruction_maps
from symidx.bench import (
    MlirBackend,
    Row,
    SymidxBackend,
    bitcast_maps,
    chain_maps,
    compose_chain,
    compose_step_maps,
    cute_maps,
    format_table,
    identity_pair,
    ladder_hlo,
    plot,
    to_isl,
)
from symidx.cli import main
from symidx.hlo import parse_hlo
from symidx.layout import cute
from symidx.strategies import indexing_maps
from symidx.verify import relation


def test_the_reshape_chain_ends_at_the_identity():
    maps = [IndexingMap.identity([8, 16, 4]), *reversed(chain_maps(16))]
    assert compose_chain(SymidxBackend(), maps) == IndexingMap.identity([8, 16, 4])


def test_the_compose_step_is_a_round_trip():
    first, second = compose_step_maps()
    assert equal(compose(first, second), IndexingMap.identity([10, 10, 10]))


def test_a_ladder_of_forty_diamonds_has_one_map():
    fusion = parse_hlo(ladder_hlo(40)).entry.root
    (group,) = instruction_maps(fusion, "output_to_input")
    assert group.maps == (IndexingMap.identity([16, 32]),)


def test_the_equality_pairs_are_equal_and_the_layout_pairs_compose():
    assert equal(*identity_pair(10, 100))
    bitcast = compose(*bitcast_maps(64, 256))
    assert bitcast.num_dims == 4 and bitcast.num_results == 4
    tile, flat = cute_maps(8)
    expected = cute.composition(cute.Layout(((4, 8),), ((8, 1),)), cute.Layout((4, 8), (8, 1)))
    composed = compose(tile, flat)
    for point in itertools.product(range(4), range(8)):
        assert composed.evaluate(point) == (expected(*point),)


@pytest.mark.skipif(importlib.util.find_spec("islpy") is None, reason="islpy not installed")
@settings(max_examples=40, deadline=None)
@given(indexing_maps(max_rts=0, min_max=False))
def test_to_isl_gives_the_same_relation(m):
    import islpy as isl

    rows = relation(m)
    points = " ; ".join(f"[{', '.join(map(str, r[:m.num_dims]))}] -> "
                        f"[{', '.join(map(str, r[m.num_dims:]))}]" for r in rows.tolist())
    space = f"[{', '.join(f'd{i}' for i in range(m.num_dims))}] -> " \
            f"[{', '.join(f'o{i}' for i in range(m.num_results))}]"
    explicit = isl.Map(f"{{ {points} }}") if points else isl.Map(f"{{ {space} : false }}")
    assert isl.Map(to_isl(m)).is_equal(explicit), to_isl(m)


def test_mlir_composes_the_reshape_round_trip():
    ir = pytest.importorskip("jaxlib.mlir.ir")
    backend = MlirBackend(ir)
    first, second = backend.prepare(compose_step_maps)
    composed = backend.simplify(backend.compose(first, second))
    assert (composed.n_dims, len(composed.results)) == (3, 3)
    assert str(composed).startswith("(d0, d1, d2) -> (")


def test_the_table_leaves_missing_backends_empty():
    table = format_table([Row("compose step", 3, "results", 2e-5, 1e-5, None),
                          Row("equal z3", 10**12, "points", 0.5)])
    lines = table.splitlines()
    assert lines[0].split() == ["case", "size", "symidx", "islpy", "MLIR", "/islpy", "/MLIR"]
    assert lines[2].split()[-6:] == ["us", "10", "us", "-", "2.00", "-"]
    assert "1e12 points" in lines[3] and lines[3].split()[-4:] == ["-"] * 4


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    rows = [Row("chain", n, "reshapes", n * 1e-4, n * 1e-5) for n in (8, 64)]
    assert plot(rows, str(tmp_path / "bench.png"))
    assert (tmp_path / "bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plot(rows[:1], str(tmp_path / "none.png"))


def test_symidx_bench_quick_on_one_case():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["bench", "--quick", "--case", "compose", "--no-plot"]) == 0
    assert "compose step" in out.getvalue()


def test_symidx_bench_rejects_an_unknown_case(capsys):
    assert main(["bench", "--case", "nope", "--no-plot"]) == 2
    assert "unknown benchmark case(s) nope" in capsys.readouterr().err
