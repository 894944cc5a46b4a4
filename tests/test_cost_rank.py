"""``symidx tile --valid-tilings --device D``: every valid tiling with its cost, cheapest
first, ties in XLA's order -- checked against the unranked list, the search (a separate
path: it keeps a running top-k), and ``--cost`` of single tilings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from symidx.cli import main
from symidx.cost import best, cost, fusion_tiles
from symidx.cost.devices import device
from symidx.cost.search import rank_tilings, xla_order

COST = Path(__file__).parent / "data" / "cost"
TILING = Path(__file__).parent / "data" / "tiling"


def run(capsys: Any, *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["tile", *argv, "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def validate(doc: dict[str, Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from importlib import resources

    schema = json.loads(resources.files("symidx").joinpath("schemas/tiles-1.json")
                        .read_text())
    jsonschema.validate(doc, schema)


@pytest.mark.parametrize("hlo, fusion", [
    (COST / "softmax.hlo", "triton_softmax"),
    (COST / "transpose.hlo", "fusion"),
    (COST / "dot_reduction_loop.hlo", "fusion"),
    (COST / "multi_output.hlo", "fusion"),
    (TILING / "reshape_split.hlo", "fusion"),
])
def test_ranked_is_the_valid_list_sorted(capsys: Any, hlo: Path, fusion: str) -> None:
    code, plain = run(capsys, str(hlo), "--fusion", fusion, "--valid-tilings")
    assert code == 0
    code, ranked = run(capsys, str(hlo), "--fusion", fusion, "--valid-tilings", "--device",
                       "rtx-a6000")
    assert code == 0
    validate(ranked)
    assert sorted(map(tuple, ranked["tilings"])) == sorted(map(tuple, plain["tilings"]))
    assert ranked["count"] == len(plain["tilings"])
    rows = ranked["ranked"]
    assert [r["tiling"] for r in rows] == ranked["tilings"]
    # cheapest first, the infinite ones last
    finite = [r for r in rows if not r["is_infinite"]]
    assert rows[:len(finite)] == finite
    times = [r["exec_time_us"] for r in finite]
    assert times == sorted(times)


def test_ties_keep_xla_order_and_agree_with_the_search() -> None:
    """The transpose has many tilings XLA's model rates equal: among equal times the first
    in XLA's order comes first, and the first rows are what the search picks (with the
    analysis' constraints only, and with Triton's)."""
    ft = fusion_tiles((COST / "transpose.hlo").read_text(), "fusion")
    r = rank_tilings(ft.base, device("rtx-a6000"))
    order = xla_order(ft.base)
    rows = [x for x in r.rows if not x["is_infinite"]]
    for a, b in zip(rows, rows[1:]):
        if a["exec_time_us"] == b["exec_time_us"]:
            assert [a["tiling"][i] for i in order] < [b["tiling"][i] for i in order]
    assert any(a["exec_time_us"] == b["exec_time_us"] for a, b in zip(rows, rows[1:]))
    none = best(ft, emitter="none").best[0]
    assert rows[0]["tiling"] == list(none.tiling)
    triton = best(ft).best[0]
    assert next(x for x in rows if x["emitter_valid"])["tiling"] == list(triton.tiling)


@pytest.mark.parametrize("k", [0, 3, 17, 40])
def test_rows_are_the_cost_of_their_tiling(k: int) -> None:
    ft = fusion_tiles((COST / "softmax.hlo").read_text(), "triton_softmax")
    row = rank_tilings(ft.base, device("h100")).rows[k]
    c = cost(ft, row["tiling"], "h100", flat=True)
    assert row["exec_time_us"] == c.exec_time_us and row["bytes_read"] == c.bytes_read
    assert row["num_warps"] == c.estimated_num_warps
    assert row["output_tile_sizes"] == c.output_tile_sizes


def test_rows_tell_tilings_apart() -> None:
    """Unranked, every valid tiling reports the same elements read; ranked, the bytes each
    tiling reads differ (param_1 is read once per block)."""
    ft = fusion_tiles((COST / "softmax.hlo").read_text(), "triton_softmax")
    rows = rank_tilings(ft.base, device("rtx-a6000")).rows
    assert len({r["bytes_read"] for r in rows if not r["is_infinite"]}) > 10
    assert rows[0]["output_tile_sizes"] == [[4, 911]]


def test_limit_keeps_the_cheapest(capsys: Any) -> None:
    code, full = run(capsys, str(COST / "softmax.hlo"), "--fusion", "triton_softmax",
                     "--valid-tilings", "--device", "rtx-a6000")
    code, top = run(capsys, str(COST / "softmax.hlo"), "--fusion", "triton_softmax",
                    "--valid-tilings", "--device", "rtx-a6000", "--limit", "5")
    assert code == 0 and top["truncated"] is True and top["count"] == full["count"]
    assert top["ranked"] == full["ranked"][:5]


def test_text(capsys: Any) -> None:
    code = main(["tile", str(TILING / "reshape_split.hlo"), "--fusion", "fusion",
                 "--valid-tilings", "--device", "rtx-a6000"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[0] == "2 valid tilings on rtx-a6000, cheapest first:"
    assert sorted(line.split(":")[0] for line in out[1:]) == ["1", "60"]
    sixty = next(line for line in out[1:] if line.startswith("60: exec "))
    assert "not for Triton" in sixty and "bytes read 240" in sixty
