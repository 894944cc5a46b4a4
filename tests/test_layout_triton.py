"""Triton's layout encodings as Triton converts them to linear layouts
(``symidx.layout.triton``, read from TTGIR by ``symidx.layout.ttgir``):

* Triton's own conversion tests (``LinearLayoutConversionsTest.cpp``) as a table of TTGIR
  text, shape and expected bases (``tests/data/layouts/triton_conversion_cases.json``);
* twins written from the encodings' definitions, not from Triton's conversion code: a
  blocked layout's owner of each element by the classic formula, a swizzled shared layout's
  offset by its XOR, and CuTe's swizzle of the same parameters;
* with Triton installed (``pip install triton``; skipped without it), random encodings
  converted by Triton itself, compared basis for basis.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from symidx.errors import MapError, ParseError
from symidx.layout.holders import vector_width
from symidx.layout.triton import Blocked, NVMMAShared, SwizzledShared
from symidx.layout.ttgir import aliases, linear_layout, parse_ttgir

CASES = json.loads((Path(__file__).parent / "data" / "layouts" /
                    "triton_conversion_cases.json").read_text())["cases"]


def bases_of(ll):
    return {n: [list(b) for b in bs] for n, bs in ll.bases}


@pytest.mark.parametrize("case", CASES, ids=[c["test"] for c in CASES])
def test_tritons_conversion_cases(case) -> None:
    ll = linear_layout(case["text"], case["shape"])
    assert bases_of(ll) == case["bases"]
    assert [s for _, s in ll.outs] == case["shape"]


# -- twins from the definitions


def blocked_owner(spt, tpw, wpc, order, shape, reg, lane, warp):
    """The classic definition of a blocked layout (one CTA): per dim, most minor first, the
    thread and warp ids split into coordinates; a thread's element ``reg`` is split over
    its ``spt`` block, then over the repetitions of the CTA tile across the tensor. A
    coordinate past the tensor wraps around it (the copies of a smaller tensor)."""
    rank = len(shape)
    lane_c, warp_c = [0] * rank, [0] * rank
    t, w = lane, warp
    for d in order:
        lane_c[d], t = t % tpw[d], t // tpw[d]
        warp_c[d], w = w % wpc[d], w // wpc[d]
    tile = [spt[d] * tpw[d] * wpc[d] for d in range(rank)]
    reps = [max(1, shape[d] // tile[d]) for d in range(rank)]
    inner, r = [0] * rank, reg
    for d in order:
        inner[d], r = r % spt[d], r // spt[d]
    rep = [0] * rank
    for d in order:
        rep[d], r = r % reps[d], r // reps[d]
    return tuple((rep[d] * tile[d] + (warp_c[d] * tpw[d] + lane_c[d]) * spt[d] + inner[d])
                 % shape[d] for d in range(rank))


@pytest.mark.parametrize("seed", range(40))
def test_blocked_layouts_against_their_definition(seed) -> None:
    rng = random.Random(seed)
    rank = rng.choice([1, 2, 3])
    spt = [1 << rng.randint(0, 2) for _ in range(rank)]
    tpw = [1] * rank
    for _ in range(5):
        tpw[rng.randrange(rank)] *= 2
    wpc = [1] * rank
    for _ in range(rng.randint(0, 3)):
        wpc[rng.randrange(rank)] *= 2
    order = list(range(rank))
    rng.shuffle(order)
    tile = [spt[d] * tpw[d] * wpc[d] for d in range(rank)]
    shape = [t << rng.randint(0, 2) for t in tile]  # whole tiles: no register dropped
    enc = Blocked(tuple(spt), tuple(tpw), tuple(wpc), tuple(order))
    ll = linear_layout(enc.text(), shape)
    assert ll == enc.to_linear(shape)
    regs = ll.in_dim_size("register")
    for reg, lane, warp in itertools.product(range(regs), range(32), range(ll.in_dim_size("warp"))):
        assert ll(register=reg, lane=lane, warp=warp, block=0) == blocked_owner(
            spt, tpw, wpc, order, shape, reg, lane, warp)


def swizzled_offset(vec, per_phase, max_phase, rows, cols, r, c):
    """The definition: element (r, c) of a row-major tile is stored at row r, column
    ``c XOR (vec * ((r // per_phase) % max_phase))`` (the XOR wrapped to the row)."""
    return r * cols + (c ^ ((vec * ((r // per_phase) % max_phase)) % cols))


@pytest.mark.parametrize(("vec", "per_phase", "max_phase", "rows", "cols"),
                         [(8, 1, 8, 8, 64), (4, 2, 4, 16, 32), (1, 1, 8, 8, 8),
                          (8, 2, 4, 32, 64), (2, 4, 2, 16, 16), (8, 1, 8, 16, 32)])
def test_swizzled_shared_against_its_definition(vec, per_phase, max_phase, rows, cols) -> None:
    enc = SwizzledShared(vec, per_phase, max_phase, (1, 0))
    ll = enc.to_linear([rows, cols])
    for offset in range(rows * cols):
        r, c = ll(offset=offset, block=0)
        assert swizzled_offset(vec, per_phase, max_phase, rows, cols, r, c) == offset


@pytest.mark.parametrize(("vec", "per_phase", "max_phase", "rows", "cols"),
                         [(8, 1, 8, 8, 64), (4, 2, 4, 16, 32), (8, 2, 4, 32, 64),
                          (2, 4, 2, 16, 16), (1, 1, 8, 8, 8), (4, 1, 2, 4, 8)])
def test_cutes_swizzle_of_the_same_parameters_agrees_everywhere(vec, per_phase, max_phase,
                                                                  rows, cols) -> None:
    """Where a swizzle exists (vec * maxPhase within a row), ``to_cute`` gives it, and it
    sends every element to the offset Triton's layout stores it at."""
    enc = SwizzledShared(vec, per_phase, max_phase, (1, 0))
    cute = enc.to_cute([rows, cols])
    ll = enc.to_linear([rows, cols])
    for offset in range(rows * cols):
        r, c = ll(offset=offset, block=0)
        assert cute(r, c) == offset


def test_the_hand_translation_trap_is_caught() -> None:
    """Triton's ``vec=8, perPhase=1, maxPhase=8`` on a 16-bit 8x64 tile is CuTe's
    ``Sw<3,3,3>``; the often-written ``Sw<3,4,3>`` (the 128-byte swizzle counted in bytes,
    applied to element offsets) agrees at a quarter of the offsets only."""
    from symidx.layout.cute import parse_layout

    enc = SwizzledShared(8, 1, 8, (1, 0))
    assert str(enc.to_cute([16, 64])) == "Sw<3,3,3> o (16,64):(64,1)"
    wrong = parse_layout("Sw<3,4,3> o (16,64):(64,1)")
    ll = enc.to_linear([16, 64])
    agree = sum(wrong(*ll(offset=o, block=0)) == o for o in range(1024))
    assert agree == 256


def test_no_swizzle_where_triton_wraps_the_xor_around_the_row() -> None:
    enc = SwizzledShared(8, 1, 8, (1, 0))          # vec * maxPhase = 64 > a row of 32
    with pytest.raises(MapError, match="wraps the XOR around the row"):
        enc.to_cute([8, 32])
    ll = enc.to_linear([8, 32])                   # Triton's answer is still a layout
    for offset in range(256):
        r, c = ll(offset=offset, block=0)
        assert swizzled_offset(8, 1, 8, 8, 32, r, c) == offset


def test_nvmma_shared_is_the_128_byte_swizzle() -> None:
    """``#ttg.nvmma_shared<{swizzlingByteWidth = 128, elementBitWidth = 16}>``: 8 rows of
    128 bytes, each row's 16-byte pieces XORed with the row (a swizzled_shared with vec 8,
    perPhase 1, maxPhase 8, repeated)."""
    nv = NVMMAShared(128, 16).to_linear([64, 64])
    sw = SwizzledShared(8, 1, 8, (1, 0)).to_linear([64, 64])
    assert nv.bases == sw.bases


# -- reading the text


BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], "
           "warpsPerCTA = [4, 1], order = [1, 0]}>")


def test_types_aliases_and_round_trips() -> None:
    found = parse_ttgir(f"tensor<32x64xf16, {BLOCKED}>")
    assert (found.shape, found.element_bits) == ((32, 64), 16)
    assert found.encoding.text() == BLOCKED
    assert parse_ttgir(found.encoding.text()).encoding == found.encoding
    module = f"#blocked = {BLOCKED}\n#shared = #ttg.swizzled_shared<{{vec = 8, perPhase = 1, " \
             "maxPhase = 8, order = [1, 0]}>\nmodule {}\n"
    defined = aliases(module)
    sliced = parse_ttgir("#ttg.slice<{dim = 1, parent = #blocked}>", defined).encoding
    assert sliced.parent == found.encoding
    ll = linear_layout("!ttg.memdesc<8x64xbf16, #shared, #ttg.shared_memory, mutable>",
                       defined=defined)
    assert ll(offset=64 + 8, block=0) == (1, 0)   # row 1's first 8 columns moved by 8


@pytest.mark.parametrize(("text", "message", "column"), [
    ("#ttg.blocked<{sizePerThread = [1, 4]}>", "needs the field threadsPerWarp", 1),
    ("#ttg.blocked<{sizePerThread = [1, 4] order = [1, 0]}>", "expected '}'", 38),
    ("#ttg.blocked<{sizePerThread = [1, 3], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], "
     "order = [1, 0]}>", "not a power of 2", 1),
    ("#ttg.slice<{dim = 1, parent = #blocked}>", "#blocked is not defined", 31),
    ("#ttg.wmma<{}>", "not a layout symidx reads", 1),
    ("tensor<32x64xq7, #blocked>", "unknown element type", 14),
    (f"{BLOCKED} x", "unexpected text", len(BLOCKED) + 2),
])
def test_errors_are_located(text, message, column) -> None:
    with pytest.raises(ParseError) as found:
        parse_ttgir(text)
    assert message in found.value.message
    assert found.value.column == column


def test_vector_width_is_the_run_of_registers_on_consecutive_offsets() -> None:
    """A blocked layout with 4 consecutive registers along the rows, stored row-major
    without a swizzle: 4 elements an access (8 bytes of f16); with 8 registers 8 (16
    bytes), 16 capped at 128 bits; the swizzle of vec 2 cuts runs to 2."""
    def regs(n):
        return Blocked((1, n), (8, 4), (4, 1), (1, 0)).to_linear([64, 64])
    plain = SwizzledShared(1, 1, 1, (1, 0)).to_linear([64, 64])
    assert vector_width(regs(4), plain, 16) == 4
    assert vector_width(regs(8), plain, 16) == 8
    assert vector_width(regs(16), plain, 16) == 8
    assert vector_width(regs(8), SwizzledShared(2, 1, 8, (1, 0)).to_linear([64, 64]), 16) == 2


# -- against Triton itself (optional)


def _gluon():
    pytest.importorskip("triton")
    try:
        from triton._C.libtriton import gluon_ir, ir
    except ImportError:
        pytest.skip("this Triton has no Gluon builder")
    ctx = ir.context()
    ir.load_dialects(ctx)
    return ctx, gluon_ir.GluonOpBuilder(ctx)  # the builder needs its context alive


def test_random_encodings_agree_with_triton() -> None:
    """Random encodings of every kind, built by Triton, printed by Triton as TTGIR, read by
    symidx and converted by both."""
    _context, builder = _gluon()
    rng = random.Random(7)

    def p2(lo, hi):
        return 1 << rng.randint(lo, hi)

    def text_of(attr, shape, shared=False, bits=16):
        element = {8: builder.get_int8_ty(), 16: builder.get_half_ty(),
                   32: builder.get_float_ty()}[bits]
        found = str(builder.get_shared_mem_desc_ty(element, shape, attr, shape) if shared
                    else builder.get_distributed_ty(element, shape, attr))
        return found

    def blocked(rank):
        tpw, wpc = [1] * rank, [1] * rank
        for _ in range(5):
            tpw[rng.randrange(rank)] *= 2
        for _ in range(rng.randint(0, 3)):
            wpc[rng.randrange(rank)] *= 2
        order = list(range(rank))
        rng.shuffle(order)
        return builder.get_blocked_layout([p2(0, 2) for _ in range(rank)], tpw, wpc, order, [])

    checked = 0
    for _ in range(240):
        kind = rng.choice(["blocked", "slice", "swizzled", "nvmma", "mma2", "mma3", "mfma",
                           "dot"])
        shape = [p2(3, 6), p2(3, 6)]
        shared, bits = False, 16
        if kind in ("blocked", "slice"):
            rank = rng.choice([1, 2, 3]) if kind == "blocked" else rng.choice([2, 3])
            shape = [p2(0, 6) for _ in range(rank)]
            attr = blocked(rank)
            if kind == "slice":
                dim = rng.randrange(rank)
                attr = builder.get_slice_layout(dim, attr)
                shape = shape[:dim] + shape[dim + 1:]
        elif kind == "swizzled":
            order = [0, 1]
            rng.shuffle(order)
            attr = builder.get_swizzled_shared_layout(p2(0, 3), p2(0, 2), p2(0, 3), order, [])
            shared = True
        elif kind == "nvmma":
            bits, width = rng.choice([8, 16, 32]), rng.choice([0, 32, 64, 128])
            transposed = rng.random() < 0.5
            attr = builder.get_nvmma_shared_layout(width, bits, transposed, False, [], 2)
            minor = max(width * 8 // bits, 8) << rng.randint(0, 2)  # Triton's TMA box rules
            shape = [minor, p2(3, 6)] if transposed else [p2(3, 6), minor]
            shared = True
        elif kind in ("mma2", "mma3", "dot"):
            v3 = kind == "mma3"
            attr = builder.get_mma_layout([3 if v3 else 2, 0],
                                          [rng.choice([4, 8]) if v3 else p2(0, 2), p2(0, 1)],
                                          [], [16, p2(3, 7), 16] if v3 else [16, 8])
            shape = [p2(4, 7), p2(3, 7)]
            if kind == "dot":
                attr = builder.get_dot_operand_layout(rng.randrange(2), attr,
                                                      rng.choice([1, 2, 4, 8]))
                shape = [p2(4, 7), p2(4, 7)]
        else:
            m = rng.choice([16, 32])
            attr = builder.get_amd_mfma_layout(rng.choice([2, 3]), [p2(0, 2), p2(0, 2)],
                                               [m, m, 8 if m == 32 else 16],
                                               rng.random() < 0.5, [], [], 32)
            shape = [p2(4, 7), p2(4, 7)]
            if rng.random() < 0.5:
                attr = builder.get_dot_operand_layout(rng.randrange(2), attr,
                                                      rng.choice([4, 8]))
        if shared and max(shape) == 1:
            continue  # (Triton refuses a one-element shared layout)
        theirs = builder.to_linear_layout(attr, shape)
        ours = linear_layout(text_of(attr, shape, shared, bits))
        expected = ({"offset": theirs.offset_bases, "block": theirs.block_bases} if shared
                    else {"register": theirs.reg_bases, "lane": theirs.lane_bases,
                          "warp": theirs.warp_bases, "block": theirs.block_bases})
        assert bases_of(ours) == expected, text_of(attr, shape, shared, bits)
        checked += 1
    assert checked > 200


# -- the command line


def run_cli(*argv: str) -> tuple[int, str, str]:
    import contextlib
    import io

    from symidx.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["layout", *argv])
    return code, out.getvalue(), err.getvalue()


SWIZZLED = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
READER = ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = "
          "[4, 1], order = [1, 0]}>")


def test_the_command_line_reads_ttgir_and_draws(tmp_path) -> None:
    code, out, _ = run_cli(f"tensor<32x64xf16, {BLOCKED}>")
    assert code == 0
    # a 32x16 tile (4 registers, 8x4 lanes, 4x1 warps) repeated 4 times along the columns
    assert out.startswith("distributed layout of a 32x64 tensor: 16 registers x 32 lanes x "
                          "4 warps x 1 block\n")
    ll = linear_layout(f"tensor<32x64xf16, {BLOCKED}>")
    assert ll.to_text() in out
    code, out, _ = run_cli(SWIZZLED, "--shape", "8,64", "--index", "1,0")
    assert (code, out) == (0, f"{swizzled_offset(8, 1, 8, 8, 64, 1, 0)}\n")
    code, out, _ = run_cli(f"tensor<32x64xf16, {BLOCKED}>", "--index", "2,5")
    assert out == "register 1, lane 9, warp 0, block 0\n"
    assert blocked_owner((1, 4), (8, 4), (4, 1), (1, 0), (32, 64), 1, 9, 0) == (2, 5)
    linear = "#ttg.linear<{register = [[0, 1]], lane = [[1, 0], [2, 0]], warp = [], block = []}>"
    code, out, _ = run_cli(linear, "--shape", "4,2")
    assert code == 0 and "4 lanes" in out
    pytest.importorskip("matplotlib")
    path = tmp_path / "blocked.png"
    assert run_cli(f"tensor<32x64xf16, {BLOCKED}>", "--png", str(path),
                   "--highlight", "0:8,0:16")[0] == 0
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_banks_at_the_vector_width_triton_picks() -> None:
    code, out, _ = run_cli(f"!ttg.memdesc<64x64xf16, {SWIZZLED}, #ttg.shared_memory>",
                           "--banks", "--warp", READER)
    assert code == 0
    first, second = out.splitlines()[:2]
    assert "8 elements per lane (the vector Triton picks)" in first
    assert second == "4 wavefronts for 4 without conflicts"
    plain = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
    code, out, _ = run_cli(f"!ttg.memdesc<64x64xf16, {plain}, #ttg.shared_memory>",
                           "--banks", "--warp", READER.replace("[4, 8]", "[32, 1]"))
    # 8 lanes of a phase read rows 0..7 at column 0: 8 rows of 128 bytes, one bank group
    assert out.splitlines()[1] == "32 wavefronts for 4 without conflicts (8-way bank conflict)"


@pytest.mark.parametrize(("argv", "message"), [
    ([SWIZZLED], "needs the tensor's shape"),
    ([SWIZZLED, "--shape", "8,6x"], "--shape expects integers"),
    ([f"tensor<32x64xf16, {BLOCKED}>", "--banks"], "are for a shared layout"),
    ([f"tensor<32x64xf16, {BLOCKED}>", "--shape", "32,32"], "differs from the type's shape"),
    (["#ttg.blocked<{sizePerThread = [1, 8] order = [1, 0]}>", "--shape", "8,8"],
     "column 38: expected '}'"),
    (["#ttg.slice<{dim = 0, parent = #blocked}>", "--shape", "8"], "#blocked is not defined"),
])
def test_command_line_errors_exit_2(argv, message) -> None:
    code, out, err = run_cli(*argv)
    assert code == 2 and out == "" and message in err


def test_aliases_from_a_ttgir_file(tmp_path) -> None:
    module = tmp_path / "kernel.ttgir"
    module.write_text(f"#blocked = {BLOCKED}\nmodule attributes {{}} {{\n}}\n")
    code, out, _ = run_cli("#ttg.slice<{dim = 0, parent = #blocked}>", "--shape", "64",
                           "--ttgir", str(module))
    assert code == 0 and out.startswith("distributed layout of a 64 tensor")


def test_a_linear_layout_without_a_shape_takes_the_smallest_its_bases_reach() -> None:
    # lanes walk rows 1, 2, 4, 8, 16 and registers columns 1, 2: 32 rows of 4 columns
    linear = ("#ttg.linear<{register = [[0, 1], [0, 2]], lane = [[1, 0], [2, 0], [4, 0], "
              "[8, 0], [16, 0]], warp = [], block = []}>")
    code, out, _ = run_cli(linear)
    assert code == 0 and out.startswith("distributed layout of a 32x4 tensor")
    assert "smallest shape the bases reach" in out
    code, out, _ = run_cli(linear, "--index", "3,1")
    assert (code, out) == (0, "register 1, lane 3, warp 0, block 0\n")
    # a basis of zeros broadcasts: it widens no dimension; 3 = 0b11 uses two bits
    code, out, _ = run_cli("#ttg.linear<{register = [[0, 0], [3, 0]], lane = [], warp = [], "
                           "block = []}>")
    assert code == 0 and out.startswith("distributed layout of a 4x1 tensor")
