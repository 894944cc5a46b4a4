"""The tiled computation in a notebook (``symidx.cost.tile``): tiles per instruction --
the same tiles ``symidx tile --sizes`` prints -- and the cost when a device is given; the
search's and the ranking's tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from symidx.cli import main
from symidx.cost import best, fusion_tiles, rank, tile
from symidx.errors import SymidxError

DATA = Path(__file__).parent / "data" / "cost"
SOFTMAX = (DATA / "softmax.hlo").read_text()


def test_tiles_are_the_command_lines(capsys: Any) -> None:
    """Every tile matches ``symidx tile --sizes 4,911`` (sizes, strides, offsets map)."""
    t = tile(fusion_tiles(SOFTMAX, "triton_softmax"), [[4, 911]])
    assert main(["tile", str(DATA / "softmax.hlo"), "--fusion", "triton_softmax", "--sizes",
                 "4,911", "--format", "json"]) == 0
    cli = json.loads(capsys.readouterr().out)["tiled"]
    assert [(x["name"], x["path"], x["tile_sizes"], x["tile_strides"],
             x["tile_offsets_indexing"]) for x in cli] == \
        [(x["name"], x["path"], x["sizes"], x["strides"], x["offsets"]) for x in t.tiles]
    p0 = next(x for x in t.tiles if x["name"] == "param_0")
    assert p0["offsets"] == "(pid_0) -> (pid_0 * 4, 0), domain: pid_0 in [0, 127]"
    assert t.cost is None and t.output_tile_sizes == [[4, 911]]


def test_html_with_and_without_a_device() -> None:
    ft = fusion_tiles(SOFTMAX, "triton_softmax")
    bare = tile(ft, [[4, 911]])._repr_html_()
    assert "<th>offsets</th>" in bare and "(pid_0) -&gt; (pid_0 * 4, 0)" in bare
    assert "tiled cost" not in bare
    t = tile(ft, [[4, 911]], "rtx-a6000")
    html = t._repr_html_()
    assert "<th>tiled cost</th>" in html and "rtx-a6000" in html
    assert t.cost is not None and t.cost.output_tile_sizes == [[4, 911]]
    assert f"{t.cost.exec_time_us:.4g}" in html
    assert bare.count("<tr><td>param_0</td>") == 2      # two paths read param_0
    assert html.count("<tr><td>param_0</td>") == 3      # and the cost's operand row
    assert t._shown_().text == t.text()
    assert t.to_json()["cost"]["bytes_read"] == 512 * 911 * 4 + 128 * 911 * 4


def test_config_tiling_and_experimental_tiles() -> None:
    t = tile(fusion_tiles(SOFTMAX, "triton_softmax"), device="h100")
    assert t.tiling == [1, 911] and t.cost is not None and t.cost.num_warps == 2
    e = tile(fusion_tiles(SOFTMAX, "triton_softmax", tiler="experimental"), [[4, 911]])
    assert e.output_tile_sizes == [[4, 1024]]
    p1 = next(x for x in e.tiles if x["name"] == "param_1")
    assert p1["sizes"] == ["1024"] and p1["upper_bounds"] == ["911"]
    assert "<th>upper bounds</th>" in e._repr_html_()
    assert "param_1: sizes ['1024']" in e.text()


def test_refused_tiling() -> None:
    with pytest.raises(SymidxError, match="no tiling"):
        tile(fusion_tiles((DATA.parent / "tiling" / "reshape_split.hlo").read_text(),
                           "fusion"), [[4]])


def test_search_and_ranking_tables() -> None:
    ft = fusion_tiles(SOFTMAX, "triton_softmax")
    s = best(ft, top=3)._repr_html_()
    assert s is not None and s.count("<tr><td>") == 3 and "[[4, 911]]" in s
    r = rank(ft, limit=5)
    html = r._repr_html_()
    assert html is not None and html.count("<tr><td>") == 5 and "110 valid tilings" in html
