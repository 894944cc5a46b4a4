"""A notebook, executed (nbclient, the ``notebook`` extra; skipped without it): every object a
user holds displays as an image or an HTML table -- never as a dataclass repr or a bare
matplotlib Figure -- and its plain text stays short."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "symidx" / "examples"

SETUP = f"""
from pathlib import Path
from symidx.analysis import computation_maps, module_fusion_maps
from symidx.corpus.summary import Summary
from symidx.hlo import parse_hlo
from symidx.layout import banks, cute, views
from symidx.layout.pictures import cute_picture, tv_figure, xla_picture
from symidx.layout.triton import SwizzledShared
from symidx.layout.ttgir import linear_layout
from symidx.layout.tv import mma_sm80_16x8x16
module = parse_hlo(Path({str(EXAMPLES / "attention.hlo")!r}).read_text())
"""

IMAGE = {"image/png", "image/svg+xml", "text/plain"}
TABLE = {"text/html", "text/plain"}

# (what, the cell's last expression, the MIME types its display has)
CELLS = [
    ("a swizzled layout", 'cute.parse_layout("S<3,3,3> o 0 o (8,64):(64,1)")', IMAGE),
    ("a layout", 'cute.parse_layout("((4,2),(4,3)):((4,16),(1,32))")', IMAGE),
    ("a TV layout", 'mma_sm80_16x8x16("A")', IMAGE),
    ("tv_figure", 'tv_figure(mma_sm80_16x8x16("C"))', IMAGE),
    ("a picture", 'xla_picture("f32[3,5]{1,0:T(2,2)}")', IMAGE),
    ("a fusion's maps from an HLO file", 'module_fusion_maps(module, "output_to_input")[0]',
     TABLE),
    ("a computation's maps",
     'computation_maps(module.entry, "output_to_input")[0]', TABLE),
    ("a bank report", 'banks.bank_conflicts(views.view(cute.parse_layout("(32,32):(32,1)")), '
                      'cute.Layout(32, 32))', IMAGE),
    ("a corpus summary", "_summary", TABLE),
    ("a Triton linear layout", 'linear_layout("tensor<32x32xf16, #ttg.blocked<{sizePerThread '
                               '= [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order '
                               '= [1, 0]}>>")', IMAGE),
    ("a Triton shared layout", 'SwizzledShared(8, 1, 8, (1, 0)).to_linear([8, 64])', IMAGE),
    ("a Triton encoding", 'SwizzledShared(8, 1, 8, (1, 0))', {"text/html", "text/plain"}),
]

SUMMARY = """
_summary = Summary()
_summary.add({"status": "ok", "file": "a.hlo", "module": "m", "bytes": 2048,
              "analysed": "fusions", "counts": {"groups": 3, "maps": 4},
              "parse_seconds": 0.1, "analysis_seconds": 0.2})
_summary.add({"status": "parse_error", "file": "b.hlo", "module": "n", "bytes": 10,
              "message": "line 1, column 2: expected a shape"})
"""


def test_every_object_displays_as_an_image_or_a_table() -> None:
    for module in ("nbclient", "nbformat", "ipykernel"):
        pytest.importorskip(module)
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("the pictures need matplotlib")
    import nbclient
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(SETUP + SUMMARY)] + [
        nbformat.v4.new_code_cell(expression) for _, expression, _ in CELLS]
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3")
    client.execute()
    for cell, (what, _, expected) in zip(notebook.cells[1:], CELLS):
        results = [o for o in cell.outputs if o.output_type == "execute_result"]
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, f"{what}: {errors[0].ename}: {errors[0].evalue}"
        assert len(results) == 1, what
        data = results[0].data
        assert set(data) == expected, f"{what}: {sorted(data)}"
        plain = data["text/plain"]   # what the object says, not a dataclass's fields
        assert len(plain) < 6000 and "<Figure" not in plain, f"{what}: {plain[:200]}"
        assert not re.match(r"[A-Z]\w*\(", plain), f"{what}: {plain[:200]}"
        if "image/png" in data:
            assert data["image/png"]  # base64 of the picture
        if "text/html" in data and "image/png" not in data:
            assert data["text/html"].strip(), what
