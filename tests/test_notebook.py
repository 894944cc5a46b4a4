"""symidx in a notebook: rich displays (maps, pictures, analyses), JSON-able dicts, sympy's
code printers (lambdify, pycode, ccode, latex) on symidx's FloorDiv/Mod/CeilDiv/Min/Max
checked against evaluation, and `//`/`%` on symidx's variables."""

from __future__ import annotations

import ctypes
import importlib.util
import itertools
import json
import math
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from symidx import FloorDiv, IndexingMap, Mod, dim, parse_map
from symidx.core.expr import compile_expr
from symidx.errors import MapError
from symidx.strategies import expressions

D0, D1 = dim(0), dim(1)
GRID = list(itertools.product(range(-7, 8), range(-5, 6)))


def reference(e):
    """symidx's own evaluator of an expression (floor semantics)."""
    f = compile_expr(e, [D0, D1])
    return [int(f([a, b])) for a, b in GRID]


# -- variables: // and % build symidx's functions, sympy's are refused with advice


def test_floordiv_and_mod_on_variables_build_symidx_functions():
    assert FloorDiv(D1, 4) == D1 // 4 and Mod(D1, 4) == D1 % 4
    assert FloorDiv(12, D1) == 12 // D1 and Mod(12, D1) == 12 % D1
    assert FloorDiv(D0 + 1, D1) == (D0 + 1) // D1  # reaches the variable's method
    assert FloorDiv(D0, 2) % 3 == Mod(FloorDiv(D0, 2), 3)
    m = IndexingMap.create([16, 8], [D0 // 4, D1 % 4])
    assert m.image((13, 7)) == {(3, 3)}


@pytest.mark.parametrize("build, advice", [
    (lambda: (D0 + 1) // 4, r"sympy's floor.*symidx\.FloorDiv"),
    (lambda: sympy.floor(D0 / 3), r"sympy's floor"),
    (lambda: sympy.Mod(D0 + 1, 4), r"sympy's Mod.*symidx\.Mod"),
    (lambda: sympy.ceiling(D0 / 3), r"symidx\.CeilDiv"),
    (lambda: D0 / 4, r"not an integer.*FloorDiv"),
])
def test_create_refuses_sympys_own_division_with_advice(build, advice):
    with pytest.raises(MapError, match=advice):
        IndexingMap.create([16], [build()])


# -- sympy's printers, against symidx's evaluation

EXPRESSIONS = expressions([D0, D1])


@given(EXPRESSIONS)
def test_lambdify_with_numpy_computes_what_symidx_computes(e):
    import numpy as np

    f = sympy.lambdify([D0, D1], e, "numpy")
    a = np.array([p[0] for p in GRID], dtype=np.int64)
    b = np.array([p[1] for p in GRID], dtype=np.int64)
    got = np.broadcast_to(f(a, b), a.shape)
    assert [int(v) for v in got] == reference(e)


@given(EXPRESSIONS)
def test_lambdify_with_math_and_pycode_compute_what_symidx_computes(e):
    f = sympy.lambdify([D0, D1], e, "math")  # printed by sympy's PythonCodePrinter
    assert [int(f(a, b)) for a, b in GRID] == reference(e)
    text = sympy.pycode(e)
    assert "floor" not in text and "Mod(" not in text


def test_pycode_spells_floor_division():
    assert sympy.pycode(FloorDiv(D0 - 7, 3) + Mod(D1, 4)) == \
        "((d0 - 7) // (3)) + ((d1) % (4))"


@pytest.fixture(scope="module")
def c_compiler() -> str:
    found = shutil.which("cc") or shutil.which("gcc")
    if found is None:
        pytest.skip("no C compiler")
    return found


@settings(max_examples=20)
@given(st.lists(EXPRESSIONS, min_size=1, max_size=6))
def test_ccode_computes_what_symidx_computes(c_compiler, tmp_path_factory, exprs):
    folder = tmp_path_factory.mktemp("ccode")
    functions = "\n".join(f"long f{i}(long d0, long d1) {{ return {sympy.ccode(e)}; }}"
                          for i, e in enumerate(exprs))
    (folder / "f.c").write_text(functions + "\n")
    subprocess.run([c_compiler, "-shared", "-fPIC", "-O0", "-o", str(folder / "f.so"),
                    str(folder / "f.c")], check=True, capture_output=True)
    library = ctypes.CDLL(str(folder / "f.so"))
    for i, e in enumerate(exprs):
        f = getattr(library, f"f{i}")
        f.restype = ctypes.c_long
        f.argtypes = [ctypes.c_long, ctypes.c_long]
        assert [f(a, b) for a, b in GRID] == reference(e), sympy.ccode(e)


def test_latex_of_the_functions():
    assert sympy.latex(FloorDiv(D0, 8)) == r"\left\lfloor \frac{d_{0}}{8} \right\rfloor"
    assert sympy.latex(Mod(D1, 4)) == r"\left(d_{1} \bmod 4\right)"


# -- rich displays and dicts


def test_a_map_shows_as_html_and_latex_and_is_json_data():
    m = parse_map("(d0, d1)[s0] -> (d0 floordiv 8 + s0, d1 mod 4), domain: d0 in [0, 31], "
                  "d1 in [0, 7], s0 in [0, 3], d0 + d1 in [0, 20]")
    assert m._repr_html_() == ("<pre>(d0, d1)[s0] -&gt; (d0 floordiv 8 + s0, d1 mod 4),\n"
                               "domain:\nd0 in [0, 31],\nd1 in [0, 7],\ns0 in [0, 3],\n"
                               "d0 + d1 in [0, 20]</pre>")
    latex = m._repr_latex_()
    assert latex.startswith("$") and latex.endswith("$")
    assert r"\left(d_{0}, d_{1}\right)\left[s_{0}\right] \mapsto" in latex
    assert r"\left\lfloor \frac{d_{0}}{8} \right\rfloor" in latex
    assert r"d_{0} + d_{1} \in [0, 20]" in latex
    data = json.loads(json.dumps(m.to_dict()))
    assert parse_map(data["text"]) == m
    assert data["symbols"] == [{"name": "s0", "lo": 0, "hi": 3}]


def test_a_picture_draws_without_touching_pyplots_backend(tmp_path):
    pytest.importorskip("matplotlib")
    script = textwrap.dedent(f"""
        import sys, matplotlib
        def backend():  # as set; reading rcParams["backend"] would import pyplot itself
            return dict.__getitem__(matplotlib.rcParams, "backend")
        before = backend()
        from symidx.layout import cute
        from symidx.layout.pictures import cute_picture, save_png
        picture = cute_picture(cute.parse_layout("(4,2):(2,1)"))
        png = picture._repr_png_()
        svg = picture._repr_svg_()
        save_png(picture, {str(tmp_path / "p.png")!r})
        print(png[:8] == b"\\x89PNG\\r\\n\\x1a\\n", "<svg" in svg,
              "matplotlib.pyplot" in sys.modules, backend() == before)
    """)
    found = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True, timeout=120)
    assert found.stdout.split() == ["True", "True", "False", "True"], found.stderr
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_a_picture_without_matplotlib_shows_its_text_grid(monkeypatch):
    from symidx.layout import cute
    from symidx.layout.pictures import cute_picture, grid_text

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    picture = cute_picture(cute.parse_layout("(2,3):(3,1)"))
    assert picture._repr_png_() is None and picture._repr_svg_() is None
    assert picture._repr_html_() == f"<pre>{grid_text(picture)}</pre>"


def test_an_analysis_is_a_table_of_groups_and_json_data():
    from symidx.analysis import module_fusion_maps
    from symidx.hlo import parse_hlo
    from symidx.jax_support import JaxAnalysis

    text = (Path(__file__).resolve().parent.parent / "symidx/examples/attention.hlo"
            ).read_text()
    module = parse_hlo(text)
    analysis = JaxAnalysis(text, module, "output_to_input",
                           tuple(module_fusion_maps(module, "output_to_input")))
    assert "HloModule" not in repr(analysis)  # not the module's text
    table = analysis._repr_html_()
    rows = [r for r in table.splitlines() if r.startswith("<tr><td>")]
    assert len(rows) == sum(len(f.groups) for f in analysis.fusions)
    assert rows[0].startswith("<tr><td>ynn_fusion.1</td><td>0</td><td>0 (q.1)</td>")
    document = json.loads(json.dumps(analysis.to_dict()))
    assert [f["instruction"] for f in document["fusions"]] == \
        [f.instr.name for f in analysis.fusions]
    assert math.isfinite(len(document["fusions"]))


@pytest.mark.parametrize("text", ["((2,2),(2,3)):((1,8),(2,4))", "8:2", "(2,3,2):(1,2,6)",
                                  "((4,2),(4,3)):((4,16),(1,32))"])
def test_a_nested_layout_shows_its_grid(text):
    import html

    from symidx.layout import cute
    from symidx.layout.pictures import cute_picture, grid_text

    layout = cute.parse_layout(text)
    picture = cute_picture(layout)  # drawn by the picture code, independently
    assert layout.grid_values() == picture.values()
    if importlib.util.find_spec("matplotlib") is not None:  # the picture, not the text
        assert layout._repr_html_() is None
        assert layout._repr_png_()[:4] == b"\x89PNG"
        assert "<svg" in layout._repr_svg_()
    with pytest.MonkeyPatch.context() as patch:             # no matplotlib: the text grid
        patch.setitem(sys.modules, "matplotlib", None)
        assert layout._repr_html_() == f"<pre>{html.escape(grid_text(picture))}</pre>"
        assert layout._repr_png_() is None


def test_variables_sort_and_pickle_as_plain_symbols():
    import pickle

    plain = [sympy.Symbol(f"d{i}", integer=True) for i in range(3)]
    ours = [dim(i) for i in range(3)]
    for build in (lambda a, b, c: b - a, lambda a, b, c: 3 * c - 2 * a + b,
                  lambda a, b, c: a * b - c):
        assert [str(t) for t in build(*ours).args] == [str(t) for t in build(*plain).args]
    assert pickle.loads(pickle.dumps(D0)) is D0
    m = parse_map("(d0)[s0] -> (d0 floordiv 4 + s0), domain: d0 in [0, 7], s0 in [0, 1]")
    assert pickle.loads(pickle.dumps(m)) == m


def test_hlo_shapes_show_as_their_text_in_a_notebook() -> None:
    """A shape (with its layout) displays as its HLO text, not as a dataclass repr; its
    picture is :func:`symidx.layout.pictures.xla_picture`, which displays too."""
    from symidx.hlo import parse_shape
    from symidx.layout.pictures import xla_picture

    shape = parse_shape("f32[3,5]{1,0:T(2,2)}")
    assert shape._repr_html_() == "<code>f32[3,5]{1,0:T(2,2)}</code>"
    assert parse_shape("(f32[2], s32[])")._repr_html_() == "<code>(f32[2], s32[])</code>"
    picture = xla_picture(shape)
    if importlib.util.find_spec("matplotlib") is not None:
        assert picture._repr_html_() is None and picture._repr_png_()[:4] == b"\x89PNG"
    else:
        assert "<pre>" in picture._repr_html_()
