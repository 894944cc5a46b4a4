"""Swizzles, composed layouts, their maps, contiguity and bank conflicts: each checked
against a brute-force twin written from the definitions (plain loops, no symidx code)."""

from __future__ import annotations

import random
from collections import defaultdict

import layout_props as props
import pytest

from symidx.cli import main
from symidx.errors import MapError, ParseError
from symidx.layout import banks, contiguity, cute, views
from symidx.layout.cute import ComposedLayout, Layout, Swizzle
from symidx.layout.maps import cute_map
from symidx.lowering.layouts.shapes import array_shape


def swizzle_twin(b: int, m: int, s: int, x: int) -> int:
    """Bit z of the result is bit z XOR bit z+s for the B bits from M - min(0, S)."""
    out = x
    for k in range(b):
        z = m - min(0, s) + k
        y = z + s
        out ^= ((x >> y) & 1) << z
    return out


def random_swizzled(rng: random.Random) -> ComposedLayout:
    b = rng.randint(0, 3)
    s = rng.choice([-1, 1]) * rng.randint(max(b, 1), 4)
    m = rng.randint(0, 3)
    rows, cols = rng.choice([2, 4, 8]), rng.choice([4, 8, 16, 32])
    inner = Layout((rows, cols), (cols, 1)) if rng.random() < 0.5 else Layout((rows, cols),
                                                                             (1, rows))
    return ComposedLayout(Swizzle(b, m, s), rng.randint(0, 3) * 8, inner)


# ---------------------------------------------------------------------------------------------
# Swizzle and composed layouts


@pytest.mark.parametrize("seed", range(40))
def test_swizzle_matches_its_twin_and_its_map(seed: int) -> None:
    rng = random.Random(seed)
    layout = random_swizzled(rng)
    sw = layout.outer
    assert isinstance(sw, Swizzle)
    for x in range(4 * sw.size()):
        assert sw(x) == swizzle_twin(sw.bits, sw.base, sw.shift, x)
    m = cute_map(layout)  # exact over the bits: every point
    rows, cols = layout.inner.shape  # type: ignore[misc]
    for r in range(rows):
        for c in range(cols):
            want = swizzle_twin(sw.bits, sw.base, sw.shift,
                                layout.offset + props.crd_offset((r, c), *props.pair(
                                    layout.inner)))
            assert layout(r, c) == want
            assert m.evaluate((r, c)) == (want,)


def test_composed_layout_text() -> None:
    a = cute.parse_any_layout("Sw<3,4,3> o (8,64):(64,1)")
    assert a == ComposedLayout(Swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    assert str(a) == "Sw<3,4,3> o (8,64):(64,1)"
    b = cute.parse_any_layout("Sw<2,0,-2> o _8 o (4,4):(4,1)")
    assert isinstance(b, ComposedLayout) and b.offset == 8
    assert str(b) == "Sw<2,0,-2> o 8 o (4,4):(4,1)"
    c = cute.parse_any_layout("(4,2):(2,1) o (8):(1)")
    assert isinstance(c, ComposedLayout) and c(5) == Layout((4, 2), (2, 1))(5)
    assert cute.parse_any_layout("(4,2):(2,1)") == Layout((4, 2), (2, 1))


@pytest.mark.parametrize(("text", "message", "column"), [
    ("Sw<3,4,2> o (4,8):(8,1)", "shift", 1),
    ("Sw<3,4,3> o (4,8):(8", "expected", 21),
    ("Sw<3,4,3> o x o (4,8):(8,1)", "integer offset", 13),
    ("Sw<1,1,1> o 1 o 2 o (4,8):(8,1)", "OUTER o", 20),
])
def test_composed_layout_errors(text: str, message: str, column: int) -> None:
    with pytest.raises(ParseError, match=message) as err:
        cute.parse_any_layout(text)
    assert err.value.column == column


def test_swizzle_rejects_overlapping_masks() -> None:
    with pytest.raises(MapError, match="shift"):
        Swizzle(3, 0, 2)


# ---------------------------------------------------------------------------------------------
# Algebra results as maps


@pytest.mark.parametrize("seed", range(30))
def test_algebra_results_as_maps_point_by_point(seed: int) -> None:
    rng = random.Random(seed)
    rows = rng.choice([2, 4, 6])
    a = Layout((rows, rng.choice([2, 4, 8])), (1, rows * rng.choice([1, 2])))
    tile = Layout(2, rng.choice([1, 2]))
    for r in (cute.zipped_divide(a, (tile, None)), cute.logical_product(a, Layout(2, 1)),
              cute.blocked_product(a, Layout((2, 2), (1, 2))),
              cute.raked_product(a, Layout((2, 2), (2, 1)))):
        m = cute_map(r)
        sizes = [cute.size(mode) for mode in r.modes()]
        for point in _points(sizes):
            assert m.evaluate(point) == (r(*point),)


def _points(sizes: list[int]) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = [()]
    for n in sizes:
        out = [p + (i,) for p in out for i in range(n)]
    return out


def test_blocked_and_raked_products_as_cute_documents_them() -> None:
    block, tiler = Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3))
    assert str(cute.blocked_product(block, tiler)) == "((2,3),(5,4)):((5,10),(1,30))"
    assert str(cute.raked_product(block, tiler)) == "((3,2),(4,5)):((10,5),(30,1))"


# ---------------------------------------------------------------------------------------------
# Contiguity


def contiguity_twin(grid: list[list[int]], axis: int, bits: int) -> tuple[int, int, int]:
    """(longest, run, vector) along ``axis`` of a 2-D grid of offsets, by the definitions."""
    lines = grid if axis == 1 else [list(col) for col in zip(*grid)]
    n = len(lines[0])
    longest = max(_longest(line) for line in lines)
    run = max(r for r in range(1, n + 1)
              if all(line[j + 1] - line[j] == 1 for line in lines for j in range(n - 1)
                     if (j + 1) % r))
    vector = 1
    while True:
        v = vector * 2
        if v * bits > 128 or run % v or n % v or any(line[j] % v for line in lines
                                                      for j in range(0, n, v)):
            break
        vector = v
    return longest, run, vector


def _longest(line: list[int]) -> int:
    best = current = 1
    for x, y in zip(line, line[1:]):
        current = current + 1 if y - x == 1 else 1
        best = max(best, current)
    return best


@pytest.mark.parametrize("seed", range(40))
def test_contiguity_matches_its_twin(seed: int) -> None:
    rng = random.Random(seed)
    layout: Layout | ComposedLayout
    if rng.random() < 0.4:
        layout = random_swizzled(rng)
    else:
        rows, cols = rng.choice([2, 3, 4, 8]), rng.choice([4, 6, 8, 16])
        tile = rng.choice([1, 2, 4])
        layout = Layout((rows, (tile, cols // tile if cols % tile == 0 else 1)),
                        (rng.choice([cols, cols + 1, 1]), (1, rng.choice([tile, 2 * tile]))))
    bits = rng.choice([8, 16, 32])
    v = views.view(layout, bits)
    inner = layout.inner if isinstance(layout, ComposedLayout) else layout
    rows, cols = cute.size(inner[0]), cute.size(inner[1])
    grid = [[layout(r, c) for c in range(cols)] for r in range(rows)]
    for found in contiguity.contiguity(v):
        assert (found.longest, found.run, found.vector) == contiguity_twin(
            grid, found.dim, bits), (str(layout), found)
        assert found.vector_bytes == found.vector * bits // 8


def test_contiguity_of_xla_layouts() -> None:
    v = views.view(array_shape("f32[3,5]{1,0:T(2,2)}"))
    minor, major = contiguity.contiguity(v)
    assert (minor.dim, minor.longest, minor.run, minor.vector) == (1, 2, 2, 1)
    assert (major.dim, major.longest, major.vector) == (0, 1, 1)
    v = views.view(array_shape("bf16[64,256]{1,0}"))
    assert contiguity.contiguity(v)[0].vector_bytes == 16


# ---------------------------------------------------------------------------------------------
# Bank conflicts


def banks_twin(offsets: list[list[int]], bits: int) -> int:
    """Wavefronts: per phase (128 bytes of lanes), the busiest bank's distinct words."""
    per_lane = len(offsets[0]) * bits
    phases = max(1, -(-per_lane // 32))
    total = 0
    for p in range(phases):
        words = defaultdict(set)
        for lane in range(p * 32 // phases, (p + 1) * 32 // phases):
            for off in offsets[lane]:
                for w in range(off * bits // 32, (off * bits + bits - 1) // 32 + 1):
                    words[w % 32].add(w)
        total += max(len(s) for s in words.values())
    return total


@pytest.mark.parametrize("seed", range(60))
def test_bank_conflicts_match_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    layout: Layout | ComposedLayout
    layout = random_swizzled(rng) if rng.random() < 0.5 else Layout(
        (rng.choice([8, 16, 32]), rng.choice([8, 16, 32, 64])),
        (rng.choice([1, 32, 33, 64, 65]), rng.choice([1, 8, 16, 32])))
    inner = layout.inner if isinstance(layout, ComposedLayout) else layout
    rows, cols = cute.size(inner[0]), cute.size(inner[1])
    bits = rng.choice([8, 16, 32, 64])
    vector = rng.choice([1, 1, 2, 4])
    if rng.random() < 0.5:
        warp = Layout(32, 1) if rows * cols >= 32 else None
    else:  # lane (i, j) reads (i, j * k): the warp maps lanes to row-major indices
        warp = Layout((8, 4), (cols, rng.choice([1, 2])))
    v = views.view(layout, bits)
    try:
        report = banks.bank_conflicts(v, warp, vector)
    except MapError:
        return  # the pattern reads outside the layout
    along_rows = v.minor[0] == 0
    starts = [divmod(int(i), cols) for i in cute.layout_values(warp or Layout(32, 1))]
    offsets = [[layout(r + k, c) if along_rows else layout(r, c + k) for k in range(vector)]
               for r, c in starts]
    assert report.wavefronts == banks_twin(offsets, bits)


def test_classic_conflicts() -> None:
    row_major = views.view(cute.parse_any_layout("(32,32):(32,1)"))
    assert banks.bank_conflicts(row_major, Layout(32, 32)).wavefronts == 32  # a column
    assert banks.bank_conflicts(row_major).wavefronts == 1                   # a row
    padded = views.view(cute.parse_any_layout("(32,32):(33,1)"))
    assert banks.bank_conflicts(padded, Layout(32, 32)).wavefronts == 1
    rows = cute.parse_layout("(8,4):(64,8)")  # lane (i, j) reads (i, 8j): 16-byte rows
    plain = views.view(cute.parse_any_layout("(8,64):(64,1)"), 16)
    assert banks.bank_conflicts(plain, rows, 8).wavefronts == 32
    swizzled = views.view(cute.parse_any_layout("Sw<3,3,3> o (8,64):(64,1)"), 16)
    assert banks.bank_conflicts(swizzled, rows, 8).wavefronts == 4


# ---------------------------------------------------------------------------------------------
# CLI


def test_cli_questions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["layout", "Sw<3,3,3> o (8,64):(64,1)", "--banks", "--warp", "(8,4):(64,8)",
                 "--vector", "8", "--element-bits", "16"]) == 0
    out = capsys.readouterr().out
    assert "4 wavefronts for 4 without conflicts" in out
    assert main(["layout", "f32[100,200]{0,1}", "--contiguity"]) == 0
    out = capsys.readouterr().out
    assert "dim 0 (size 100, minor): runs of 100" in out and "4 elements (16 bytes)" in out
    assert main(["layout", "Sw<1,2,3> o (4,8):(8,1)", "--index", "1,2"]) == 0
    assert capsys.readouterr().out.strip() == "10"


@pytest.mark.parametrize("argv", [
    ["layout", "(4,4):(4,1)", "--warp", "32:1"],
    ["layout", "f32[4,4]", "--contiguity", "--element-bits", "16"],
    ["layout", "(4,4):(4,1)", "--banks"],
    ["layout", "(4,4):(4,1)", "--contiguity", "--banks"],
])
def test_cli_question_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "symidx" in capsys.readouterr().err
