"""Bank conflicts: one lane convention for every kind of layout, and the access models
(32-bit scalar, 64/128-bit vectors, ldmatrix, TMA lines, AMD LDS with 32 or 64 banks and
wave64), each against a brute-force twin written here from the hardware's rules: a phase is
the lanes whose bytes fill the banks once; per phase, the busiest bank's distinct 4-byte
words are its wavefronts."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable

import pytest

from symidx.cli import main
from symidx.errors import MapError
from symidx.layout import banks, cute, views
from symidx.layout.banks import AMD_LDS, AMD_LDS_CDNA3, NVIDIA_SMEM
from symidx.layout.cute import E, Layout
from symidx.lowering.layouts.shapes import array_shape


def twin(phases: list[list[list[int]]], bits: int, n_banks: int) -> int:
    """phases[p][lane] = element offsets; the sum over phases of the busiest bank."""
    total = 0
    for lanes in phases:
        words: dict[int, set[int]] = defaultdict(set)
        for offsets in lanes:
            for off in offsets:
                for w in range(off * bits // 32, (off * bits + bits - 1) // 32 + 1):
                    words[w % n_banks].add(w)
        total += max(len(s) for s in words.values())
    return total


def lane_twin(offset: Callable[[int, int], int], starts: list[tuple[int, int]], vector: int,
              bits: int, n_banks: int) -> int:
    """Lanes reading ``vector`` elements along the row from ``starts``; a phase holds the
    lanes whose bytes fill ``n_banks * 4`` bytes."""
    lanes = len(starts)
    lane_bytes = max(1, vector * bits // 8)
    per_phase = max(1, min(lanes, n_banks * 4 // lane_bytes))
    rows = [[offset(r, c + k) for k in range(vector)] for r, c in starts]
    return twin([rows[p:p + per_phase] for p in range(0, lanes, per_phase)], bits, n_banks)


# ---------------------------------------------------------------------------------------------
# One lane convention


def test_the_issue_case_agrees_across_kinds() -> None:
    """--warp 32:32 on a 32x32 row-major matrix: lane i reads (i, 0), a column: 32-way."""
    cute_view = views.view(cute.parse_any_layout("(32,32):(32,1)"))
    xla_view = views.view(array_shape("f32[32,32]{1,0}"))
    warp = Layout(32, 32)
    a = banks.bank_conflicts(cute_view, warp)
    b = banks.bank_conflicts(xla_view, warp)
    assert a.wavefronts == b.wavefronts == 32
    assert banks.bank_conflicts(cute_view).wavefronts == 1  # 32:1 reads row 0
    assert banks.bank_conflicts(xla_view).wavefronts == 1


@pytest.mark.parametrize("seed", range(40))
def test_every_kind_gives_the_same_answer(seed: int) -> None:
    rng = random.Random(seed)
    rows, cols = rng.choice([(32, 32), (16, 64), (64, 16), (8, 128)])
    col_major = rng.random() < 0.5
    xla = array_shape(f"f32[{rows},{cols}]{{{'0,1' if col_major else '1,0'}}}")
    layout = Layout((rows, cols), (1, rows) if col_major else (cols, 1))
    warp = Layout((8, 4), (rng.choice([1, cols]), rng.choice([cols * 8, 8, 1])))
    vector = 1 if col_major else rng.choice([1, 2, 4])
    try:
        got = [banks.bank_conflicts(views.view(x), warp, vector).wavefronts
               for x in (layout, xla)]
    except MapError:
        return
    starts = [divmod(int(i), cols) for i in cute.layout_values(warp)]

    def offset(r: int, c: int) -> int:
        return r + rows * c if col_major else r * cols + c

    if col_major:
        want = lane_twin(lambda r, c: offset(r, c), starts, 1, 32, 32)
    else:
        want = lane_twin(offset, starts, vector, 32, 32)
    assert got == [want, want]


def test_a_basis_pattern_gives_coordinates() -> None:
    v = views.view(cute.parse_any_layout("(32,32):(32,1)"))
    column = Layout(32, E(0))  # lane i -> (i, 0)
    assert banks.bank_conflicts(v, column).wavefronts == 32
    row = Layout(32, E(1))
    assert banks.bank_conflicts(v, row).wavefronts == 1


# ---------------------------------------------------------------------------------------------
# Access models


@pytest.mark.parametrize(("bits", "vector"), [(32, 1), (32, 2), (32, 4), (16, 4), (16, 8),
                                              (8, 16), (64, 1), (64, 2)])
def test_vector_widths_against_the_twin(bits: int, vector: int) -> None:
    rng = random.Random(bits * 100 + vector)
    for _ in range(10):
        stride = rng.choice([64, 72, 68, 128, 32])
        layout = Layout((32, 128), (stride, 1))
        v = views.view(layout, bits)
        warp = Layout((8, 4), (128 * rng.choice([1, 2]), vector * rng.choice([1, 2])))
        try:
            got = banks.bank_conflicts(v, warp, vector).wavefronts
        except MapError:
            continue
        starts = [divmod(int(i), 128) for i in cute.layout_values(warp)]
        assert got == lane_twin(lambda r, c, s=stride: r * s + c, starts, vector, bits, 32)


@pytest.mark.parametrize("matrices", [1, 2, 4])
@pytest.mark.parametrize("text", ["(32,64):(64,1)", "Sw<3,3,3> o (32,64):(64,1)",
                                  "(32,64):(72,1)"])
def test_ldmatrix_against_the_twin(matrices: int, text: str) -> None:
    """ldmatrix.x{n}: lane i < 8n gives the start of row i (16 bytes, 8 bf16); a phase is
    one 8x8 matrix: lanes 8j .. 8j+7."""
    layout = cute.parse_any_layout(text)
    v = views.view(layout, 16)
    got = banks.bank_conflicts(v, access="ldmatrix", matrices=matrices)
    phases = [[[layout(r, c) for c in range(8)] for r in range(8 * j, 8 * j + 8)]
              for j in range(matrices)]
    assert got.wavefronts == twin(phases, 16, 32)
    assert got.ideal == matrices


def test_ldmatrix_classic_numbers() -> None:
    plain = views.view(cute.parse_any_layout("(32,64):(64,1)"), 16)
    swizzled = views.view(cute.parse_any_layout("Sw<3,3,3> o (32,64):(64,1)"), 16)
    assert banks.bank_conflicts(plain, access="ldmatrix").wavefronts == 32  # 8-way
    assert banks.bank_conflicts(swizzled, access="ldmatrix").wavefronts == 4


@pytest.mark.parametrize(("text", "want"), [
    ("(8,64):(64,1)", 8),                 # each row one contiguous 128-byte line
    ("(8,(8,8)):(8,(1,64))", 64),         # 16-byte pieces 128 bytes apart: 8-way per line
    ("Sw<3,3,3> o (8,(8,8)):(8,(1,64))", 8),
])
def test_tma_lines(text: str, want: int) -> None:
    layout = cute.parse_any_layout(text)
    v = views.view(layout, 16)
    got = banks.bank_conflicts(v, access="tma")
    phases = [[[layout(r, c) for c in range(64)]] for r in range(8)]
    assert got.wavefronts == twin(phases, 16, 32) == want


@pytest.mark.parametrize(("machine", "per_phase"), [(AMD_LDS_CDNA3, 8), (AMD_LDS, 16)])
def test_amd_ds_read_b128_phases(machine: banks.Machine, per_phase: int) -> None:
    """wave64, 16 bytes per lane: CDNA3 (32 banks) serves 8 lanes a phase, CDNA4's 64
    banks 16 lanes."""
    assert machine.lanes_per_phase(16) == per_phase
    rng = random.Random(per_phase)
    for _ in range(10):
        stride = rng.choice([64, 128, 136, 256])
        layout = Layout((64, 256), (stride, 1))
        v = views.view(layout, 16)
        warp = Layout((8, 8), (256 * rng.choice([1, 2, 4]), 8 * rng.choice([1, 2])))
        got = banks.bank_conflicts(v, warp, 8, machine=machine)
        starts = [divmod(int(i), 256) for i in cute.layout_values(warp)]
        assert got.wavefronts == lane_twin(lambda r, c, s=stride: r * s + c, starts, 8, 16,
                                           machine.banks)
        assert got.ideal == 64 // per_phase


def test_amd_b32_is_two_half_waves_on_32_banks() -> None:
    v = views.view(Layout(64, 1), 32)
    assert banks.bank_conflicts(v, Layout(64, 1), machine=AMD_LDS_CDNA3).ideal == 2
    assert banks.bank_conflicts(v, Layout(64, 1), machine=AMD_LDS).ideal == 1
    assert NVIDIA_SMEM.lanes_per_phase(16) == 8


def test_model_errors() -> None:
    v = views.view(cute.parse_any_layout("(8,64):(64,1)"), 16)
    with pytest.raises(MapError, match="32 rows"):
        banks.bank_conflicts(v, access="ldmatrix")
    with pytest.raises(MapError, match="NVIDIA instruction"):
        banks.bank_conflicts(v, access="ldmatrix", machine=AMD_LDS)
    with pytest.raises(MapError, match="whole box"):
        banks.bank_conflicts(v, Layout(32, 1), access="tma")
    with pytest.raises(MapError, match="maps the 64 lanes"):
        banks.bank_conflicts(v, Layout(32, 1), machine=AMD_LDS)


def test_cli_access_models(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["layout", "Sw<3,3,3> o (32,64):(64,1)", "--banks", "--access", "ldmatrix",
                 "--element-bits", "16"]) == 0
    out = capsys.readouterr().out
    assert "ldmatrix.x4" in out and "4 wavefronts for 4 without conflicts" in out
    assert main(["layout", "bf16[64,256]{1,0}", "--banks", "--warp", "(8,8):(256,8)",
                 "--vector", "8", "--machine", "cdna4"]) == 0
    out = capsys.readouterr().out
    assert "on cdna4 (64 banks)" in out and "(8-way bank conflict)" in out
    assert main(["layout", "(8,(8,8)):(8,(1,64))", "--banks", "--access", "tma",
                 "--element-bits", "16"]) == 0
    assert "64 wavefronts for 8 without conflicts" in capsys.readouterr().out
    assert main(["layout", "(4,4):(4,1)", "--access", "tma"]) == 2
