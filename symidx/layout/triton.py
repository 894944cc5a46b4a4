"""Triton's layout encodings, as Triton converts them to linear layouts
(triton-lang/triton ``lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp``, version 3.8:
its semantics, written here from the definitions; checked against the expectations of its
``LinearLayoutConversionsTest.cpp`` in ``tests/test_layout_triton.py``).

Each encoding is a frozen value with Gluon's field names, its TTGIR text
(:meth:`~Encoding.text`) and :meth:`~Encoding.to_linear`, the
:class:`~symidx.layout.linear.LinearLayout` of a tensor ``shape``:

* distributed (``register``, ``lane``, ``warp``, ``block`` -> ``dim0, dim1, ...``):
  :class:`Blocked` (``#ttg.blocked``), :class:`Slice` (``#ttg.slice``), :class:`NvidiaMma`
  (``#ttg.nvidia_mma``, versions 2 and 3), :class:`DotOperand` (``#ttg.dot_op`` of an
  ``nvidia_mma`` version 2 or an ``amd_mfma``), :class:`AmdMfma` (``#ttg.amd_mfma``,
  32x32 and 16x16 tiles), :class:`Linear` (``#ttg.linear``);
* shared (``offset``, ``block`` -> ``dim0, ...``): :class:`SwizzledShared`
  (``#ttg.swizzled_shared``), :class:`NVMMAShared` (``#ttg.nvmma_shared``),
  :class:`SharedLinear` (``#ttg.shared_linear``).

The CTA tile of an encoding is repeated by more registers (or offsets) until it covers the
shape, dimensions in the encoding's own order, and cut down where it is larger (a register
basis past the shape is dropped, a lane or warp basis there broadcasts: becomes zero); the
blocks of a cluster (``CGALayout = [[...]]``, or the older ``CTAsPerCGA``, ``CTASplitNum``,
``CTAOrder``) split the shape first.

:meth:`SwizzledShared.to_cute` is the CuTe swizzle of the same function (``Sw<B,M,S> o
(rows,cols):(cols,1)``) where one exists; :mod:`symidx.layout.holders` draws the layouts
and gives the vector width Triton picks for a copy between a register layout and a shared
one, with its banks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from symidx._display import Rich, Shown
from symidx.errors import MapError
from symidx.layout.linear import LinearLayout
from symidx.layout.nested import Layout
from symidx.layout.swizzle import ComposedLayout, Swizzle

__all__ = ["AmdMfma", "Blocked", "DotOperand", "Encoding", "Linear", "NVMMAShared",
           "NvidiaMma", "SharedLinear", "Slice", "SwizzledShared", "cga_bases"]

Bases = tuple[tuple[int, ...], ...]


def _log2(n: int) -> int:
    if n < 1 or n & (n - 1):
        raise MapError(f"{n} is not a power of 2")
    return n.bit_length() - 1


def _names(rank: int) -> list[str]:
    return [f"dim{k}" for k in range(rank)]


def _identity(size: int, in_dim: str, out_dim: str) -> LinearLayout:
    return LinearLayout.identity1d(size, in_dim, out_dim)


def _zeros(size: int, in_dim: str, out_dim: str) -> LinearLayout:
    return LinearLayout.zeros1d(size, in_dim, out_dim)


def _identity_nd(in_dim: str, sizes: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """``in_dim`` over the dims of ``sizes``, the most minor (``order[0]``) first; outputs
    in ``order``."""
    out = LinearLayout.empty()
    for d in order:
        out = out * _identity(sizes[d], in_dim, f"dim{d}")
    return out


def _with_outs(layout: LinearLayout, names: Sequence[str]) -> LinearLayout:
    """``layout`` with exactly the outputs ``names`` in that order (missing ones of size
    1)."""
    for n in names:
        if n not in layout.out_dims:
            layout = layout * LinearLayout((), ((n, 1),))
    return layout.transpose_outs(list(names))


def _not_smaller(layout: LinearLayout, shape: dict[str, int]) -> LinearLayout:
    """Repeat along the first input dimension until every output is at least ``shape``
    (dimensions in the layout's own order)."""
    first = layout.in_dims[0]
    for o in layout.out_dims:
        have, want = layout.out_dim_size(o), shape[o]
        if want > have:
            layout = layout * _identity(want // have, first, o)
    return layout


def _not_larger(layout: LinearLayout, shape: dict[str, int]) -> LinearLayout:
    """Cut every output down to ``shape``: a basis's value past it becomes 0 (the input
    bit then holds a copy: a broadcast)."""
    bases = tuple((n, tuple(tuple(0 if v >= shape[o] else v for v, o in zip(b, layout.out_dims))
                            for b in bs)) for n, bs in layout.bases)
    return LinearLayout(bases, tuple((o, min(s, shape[o])) for o, s in layout.outs))


def _per_cta(cga: Bases, shape: Sequence[int]) -> tuple[int, ...]:
    """The shape one block holds: ``shape`` divided by the blocks that split each dim."""
    split = [1] * len(shape)
    for b in cga:
        for k, v in enumerate(b):
            if v:
                split[k] = max(split[k], 2 * v)
    return tuple(max(1, s // n) for s, n in zip(shape, split))


def cga_bases(ctas_per_cga: Sequence[int], split_num: Sequence[int],
              cta_order: Sequence[int]) -> Bases:
    """The block bases (in CTA tiles per dim) of the older ``CTAsPerCGA``, ``CTASplitNum``,
    ``CTAOrder``: per dim, most minor first, the split blocks, then the blocks that hold
    copies (zero bases)."""
    rank = len(cta_order)
    out: list[tuple[int, ...]] = []
    for d in cta_order:
        if ctas_per_cga[d] % split_num[d]:
            raise MapError(f"CTAsPerCGA {list(ctas_per_cga)} is not a multiple of "
                           f"CTASplitNum {list(split_num)}")
        for k in range(_log2(split_num[d])):
            out.append(tuple((1 << k) if j == d else 0 for j in range(rank)))
        out += [(0,) * rank] * _log2(ctas_per_cga[d] // split_num[d])
    return tuple(out)


def _combine(cta: LinearLayout, cga: Bases, shape: Sequence[int]) -> LinearLayout:
    """The CTA layout tiled or cut to the shape one block holds, times the blocks; outputs
    ``dim0, dim1, ...``."""
    names = _names(len(shape))
    cta = _with_outs(cta, [n for n in cta.out_dims] + [n for n in names
                                                       if n not in cta.out_dims])
    for b in cga:
        if len(b) != len(shape):
            raise MapError(f"CGA basis {list(b)} has {len(b)} values for rank {len(shape)}")
    labelled = dict(zip(names, (int(s) for s in shape)))
    blocks = LinearLayout.create([("block", [list(b) for b in cga])], names,
                                 require_surjective=False)
    blocks = _not_larger(blocks, labelled).transpose_outs(list(cta.out_dims))
    per_cta = {n: max(1, labelled[n] // blocks.out_dim_size(n)) for n in names}
    cta = _not_larger(_not_smaller(cta, per_cta), per_cta)
    out = (cta * blocks).transpose_outs(names)
    for n in names:
        if out.out_dim_size(n) != labelled[n]:
            raise MapError(f"the layout covers {out.out_dim_size(n)} of {n}, the shape has "
                           f"{labelled[n]}")
    return _ordered_ins(out)


def _ordered_ins(layout: LinearLayout) -> LinearLayout:
    """The input dimensions in Triton's order, each present."""
    kinds = ("offset", "block") if "offset" in layout.in_dims else (
        "register", "lane", "warp", "block")
    for k in kinds:
        if k not in layout.in_dims:
            layout = layout * LinearLayout(((k, ()),), ())
    return layout.transpose_ins(list(kinds))


def _check_shape(shape: Sequence[int], rank: int, what: str) -> tuple[int, ...]:
    shape = tuple(int(s) for s in shape)
    if len(shape) != rank:
        raise MapError(f"{what} is rank {rank}; the shape {list(shape)} has rank {len(shape)}")
    for s in shape:
        _log2(s)
    return shape


def _list(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _cga_text(cga: Bases) -> str:
    return "" if not cga else ", CGALayout = [" + ", ".join(_list(b) for b in cga) + "]"


class Encoding(Rich):
    """A Triton layout encoding: :meth:`to_linear` of a shape, its TTGIR :meth:`text` (what
    a notebook shows: a picture needs a shape, :meth:`to_linear`'s layout draws)."""

    __slots__ = ()

    def _shown_(self) -> Shown:
        return Shown(self.text())
    #: ``"distributed"`` (register, lane, warp, block) or ``"shared"`` (offset, block).
    kind = "distributed"

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError

    @property
    def rank(self) -> int:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.text()


@dataclass(frozen=True, slots=True)
class Blocked(Encoding):
    """``#ttg.blocked``: each thread holds ``size_per_thread`` elements, a warp
    ``threads_per_warp`` threads, a CTA ``warps_per_cta`` warps, dims from the most minor
    (``order[0]``)."""

    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]
    cga_layout: Bases = ()

    def __post_init__(self) -> None:
        n = len(self.order)
        if sorted(self.order) != list(range(n)):
            raise MapError(f"order {list(self.order)} is not a permutation of 0..{n - 1}")
        for name in ("size_per_thread", "threads_per_warp", "warps_per_cta"):
            values = getattr(self, name)
            if len(values) != n:
                raise MapError(f"{name} {list(values)} has {len(values)} values, order {n}")
            for v in values:
                _log2(v)

    @property
    def rank(self) -> int:
        return len(self.order)

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        shape = _check_shape(shape, self.rank, "the blocked layout")
        cta = (_identity_nd("register", self.size_per_thread, self.order)
               * _identity_nd("lane", self.threads_per_warp, self.order)
               * _identity_nd("warp", self.warps_per_cta, self.order))
        return _combine(cta, self.cga_layout, shape)

    def text(self) -> str:
        return (f"#ttg.blocked<{{sizePerThread = {_list(self.size_per_thread)}, "
                f"threadsPerWarp = {_list(self.threads_per_warp)}, warpsPerCTA = "
                f"{_list(self.warps_per_cta)}, order = {_list(self.order)}"
                f"{_cga_text(self.cga_layout)}}}>")


@dataclass(frozen=True, slots=True)
class Slice(Encoding):
    """``#ttg.slice``: the parent layout with dimension ``dim`` removed (the parent laid
    over the shape with a 1 inserted there; register bases that become zero dropped)."""

    dim: int
    parent: Encoding

    def __post_init__(self) -> None:
        if self.parent.kind != "distributed":
            raise MapError("a slice's parent is a distributed layout")
        if not 0 <= self.dim < self.parent.rank:
            raise MapError(f"slice dim {self.dim} is outside the parent's rank "
                           f"{self.parent.rank}")

    @property
    def rank(self) -> int:
        return self.parent.rank - 1

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        shape = _check_shape(shape, self.rank, "the slice")
        parent = self.parent.to_linear(shape[:self.dim] + (1,) + shape[self.dim:])
        bases = []
        for name, bs in parent.bases:
            kept = [b[:self.dim] + b[self.dim + 1:] for b in bs]
            if name == "register":
                kept = [b for b in kept if any(b)]
            bases.append((name, tuple(kept)))
        outs = tuple((f"dim{k}", s) for k, s in enumerate(shape))
        return LinearLayout(tuple(bases), outs)

    def text(self) -> str:
        return f"#ttg.slice<{{dim = {self.dim}, parent = {self.parent.text()}}}>"


def _mma_tile(tile: Sequence[int], k_width: int, order: Sequence[int],
              rep_order: Sequence[int]) -> LinearLayout:
    """The registers and lanes of one NVIDIA MMA tile (``tile`` = rows, cols of the
    operand or result): ``k_width`` registers along the inner dim, 4 lanes along it, 8
    lanes along the outer dim, then registers repeating the outer, then the inner."""
    rank = len(rep_order)
    inner, outer = order[0], order[1]
    m, n = tile[outer], tile[inner]
    if m % 8 or n % (k_width * 4):
        raise MapError(f"an MMA tile {list(tile)} is not made of 8 x {4 * k_width} pieces")
    layout = _identity_nd("register", [1] * rank, rep_order)
    layout = _with_outs(layout, [f"dim{d}" for d in rep_order])
    return (layout * _identity(k_width, "register", f"dim{inner}")
            * _identity(4, "lane", f"dim{inner}") * _identity(8, "lane", f"dim{outer}")
            * _identity(m // 8, "register", f"dim{outer}")
            * _identity(n // (k_width * 4), "register", f"dim{inner}"))


def _broadcast_warps(in_dim: str, warps: Sequence[int], order: Sequence[int],
                     k_dim: int) -> LinearLayout:
    """Warps over the dims, in ``order``; along ``k_dim`` they hold copies."""
    out = LinearLayout.empty()
    for d in order:
        out = out * (_zeros(warps[d], in_dim, f"dim{d}") if d == k_dim
                     else _identity(warps[d], in_dim, f"dim{d}"))
    return _with_outs(out, [f"dim{d}" for d in order])


def _row_major(rank: int) -> list[int]:
    return list(range(rank - 1, -1, -1))


@dataclass(frozen=True, slots=True)
class NvidiaMma(Encoding):
    """``#ttg.nvidia_mma``: the result of ``mma.sync`` (version 2, ``instr_shape`` = M, N)
    or ``wgmma`` (version 3, M, N, K), per warp, warps over the tile."""

    version: tuple[int, int]
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, ...]
    cga_layout: Bases = ()

    def __post_init__(self) -> None:
        if self.version[0] not in (2, 3):
            raise MapError(f"nvidia_mma version {self.version[0]} is not supported (2, 3)")

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    def tile(self) -> list[int]:
        if self.version[0] == 3:
            return [1] * (self.rank - 2) + list(self.instr_shape[:2])
        return [1] * (self.rank - len(self.instr_shape)) + list(self.instr_shape)

    def warp_order(self) -> list[int]:
        return list(range(self.rank)) if self.version[0] == 3 else _row_major(self.rank)

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        shape = _check_shape(shape, self.rank, "the MMA layout")
        order = _row_major(self.rank)
        cta = _mma_tile(self.tile(), 2, order, order)
        warps = _identity_nd("warp", self.warps_per_cta, self.warp_order())
        cta = cta * _with_outs(warps, list(cta.out_dims))
        return _combine(cta, self.cga_layout, shape)

    def text(self) -> str:
        return (f"#ttg.nvidia_mma<{{versionMajor = {self.version[0]}, versionMinor = "
                f"{self.version[1]}, warpsPerCTA = {_list(self.warps_per_cta)}"
                f"{_cga_text(self.cga_layout)}, instrShape = {_list(self.instr_shape)}}}>")


@dataclass(frozen=True, slots=True)
class AmdMfma(Encoding):
    """``#ttg.amd_mfma``: the result of AMD's MFMA (``instr_shape`` M, N, K; 32x32 and
    16x16 tiles), ``is_transposed`` giving each lane a row instead of a column."""

    version: int
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, ...]
    is_transposed: bool
    cga_layout: Bases = ()

    def __post_init__(self) -> None:
        if tuple(self.instr_shape[:2]) not in ((32, 32), (16, 16)):
            raise MapError(f"amd_mfma with instrShape {list(self.instr_shape)}: only 32x32 "
                           f"and 16x16 tiles are supported")

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        shape = _check_shape(shape, self.rank, "the MFMA layout")
        order = _row_major(self.rank)
        inner, outer = f"dim{order[0]}", f"dim{order[1]}"
        if self.instr_shape[0] == 32:
            regs = [(0, 1), (0, 2), (0, 8), (0, 16)]
            lanes = [(1, 0), (2, 0), (4, 0), (8, 0), (16, 0), (0, 4)]
        else:
            regs = [(0, 1), (0, 2)]
            lanes = [(1, 0), (2, 0), (4, 0), (8, 0), (0, 4), (0, 8)]
        if self.is_transposed:
            regs = [(b, a) for a, b in regs]
            lanes = [(b, a) for a, b in lanes]
        tile = LinearLayout.create([("register", [list(r) for r in regs]),
                                    ("lane", [list(v) for v in lanes])], [inner, outer])
        tile = _with_outs(tile, [f"dim{d}" for d in order])
        warps = _identity_nd("warp", self.warps_per_cta, order)
        return _combine(tile * warps, self.cga_layout, shape)

    def text(self) -> str:
        return (f"#ttg.amd_mfma<{{version = {self.version}, warpsPerCTA = "
                f"{_list(self.warps_per_cta)}, instrShape = {_list(self.instr_shape)}, "
                f"isTransposed = {'true' if self.is_transposed else 'false'}"
                f"{_cga_text(self.cga_layout)}}}>")


@dataclass(frozen=True, slots=True)
class DotOperand(Encoding):
    """``#ttg.dot_op``: operand ``operand_index`` (0: A, M x K; 1: B, K x N) of a dot whose
    result has the layout ``parent`` (``nvidia_mma`` version 2, or ``amd_mfma``), each
    thread holding ``k_width`` consecutive elements along K."""

    operand_index: int
    parent: Encoding
    k_width: int

    def __post_init__(self) -> None:
        if self.operand_index not in (0, 1):
            raise MapError(f"opIdx is 0 or 1, not {self.operand_index}")
        if isinstance(self.parent, NvidiaMma):
            if self.parent.version[0] != 2:
                raise MapError("a dot operand of nvidia_mma is supported for version 2")
        elif not isinstance(self.parent, AmdMfma):
            raise MapError("a dot operand's parent is nvidia_mma (version 2) or amd_mfma")
        _log2(self.k_width)

    @property
    def rank(self) -> int:
        return self.parent.rank

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        shape = _check_shape(shape, self.rank, "the dot operand")
        rank = self.rank
        k_dim = rank - 1 if self.operand_index == 0 else rank - 2
        # operand A is K-minor (order [rank-1, rank-2, ...]), operand B too along K
        order = _row_major(rank) if self.operand_index == 0 else \
            [rank - 2, rank - 1] + list(range(rank - 3, -1, -1))
        if isinstance(self.parent, NvidiaMma):
            tile = [1] * rank
            if self.operand_index == 0:
                tile[rank - 2], tile[rank - 1] = 16, self.k_width * 8
            else:
                tile[rank - 2], tile[rank - 1] = self.k_width * 8, 8
            cta = _mma_tile(tile, self.k_width, order, order)
            warps = _broadcast_warps("warp", self.parent.warps_per_cta, _row_major(rank),
                                     k_dim)
            cta = cta * _with_outs(warps, list(cta.out_dims))
            return _combine(cta, self.parent.cga_layout, shape)
        return self._mfma(shape, k_dim, order)

    def _mfma(self, shape: tuple[int, ...], k_dim: int, order: list[int]) -> LinearLayout:
        mfma = self.parent
        assert isinstance(mfma, AmdMfma)
        k = self.k_width
        regs = [[e, 0] for e in _powers(1, k)]
        if mfma.instr_shape[0] == 32:
            lanes = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [k, 0]]
            k_tile = 2 * k
        else:
            lanes = [[0, 1], [0, 2], [0, 4], [0, 8], [k, 0], [2 * k, 0]]
            k_tile = 4 * k
        regs += [[e, 0] for e in _powers(k_tile, shape[k_dim])]
        names = [f"dim{order[0]}", f"dim{order[1]}"]
        tile = LinearLayout.create([("register", regs), ("lane", lanes)], names,
                                   require_surjective=False)
        tile = _with_outs(tile, _names(self.rank))
        warps = _broadcast_warps("warp", mfma.warps_per_cta, _row_major(self.rank), k_dim)
        cta = tile * _with_outs(warps, _names(self.rank))
        return _combine(cta, mfma.cga_layout, shape)

    def text(self) -> str:
        return (f"#ttg.dot_op<{{opIdx = {self.operand_index}, parent = {self.parent.text()}, "
                f"kWidth = {self.k_width}}}>")


def _powers(start: int, stop: int) -> list[int]:
    out, e = [], start
    while e < stop:
        out.append(e)
        e *= 2
    return out


@dataclass(frozen=True, slots=True)
class SwizzledShared(Encoding):
    """``#ttg.swizzled_shared``: rows of the two most minor dims (``order[0]`` the
    columns); row ``r``'s columns are XORed, in units of ``vec`` elements, with ``(r //
    per_phase) % max_phase``."""

    vec: int
    per_phase: int
    max_phase: int
    order: tuple[int, ...]
    cga_layout: Bases = ()
    kind = "shared"

    def __post_init__(self) -> None:
        for v in (self.vec, self.per_phase, self.max_phase):
            _log2(v)
        if sorted(self.order) != list(range(len(self.order))):
            raise MapError(f"order {list(self.order)} is not a permutation")

    @property
    def rank(self) -> int:
        return len(self.order)

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        shape = _check_shape(shape, self.rank, "the shared layout")
        if self.rank == 1:
            return _combine(_identity(shape[0], "offset", "dim0"), self.cga_layout, shape)
        own = _per_cta(self.cga_layout, shape)
        col, row = self.order[0], self.order[1]
        cols, rows = own[col], own[row]
        bases = [[0, 1 << k] for k in range(_log2(cols))]
        for k in range(_log2(rows)):
            r = 1 << k
            bases.append([r, (self.vec * ((r // self.per_phase) % self.max_phase)) % cols])
        cta = LinearLayout.create([("offset", bases)], [(f"dim{row}", rows),
                                                        (f"dim{col}", cols)],
                                  require_surjective=False)
        for d in self.order[2:]:
            cta = cta * _identity(own[d], "offset", f"dim{d}")
        return _combine(cta, self.cga_layout, shape)

    def to_cute(self, shape: Sequence[int]) -> object:
        """The CuTe layout of the same function, element ``(row, col)`` -> offset, for a
        rank-2 row-major (``order = [1, 0]``) tile: ``Sw<B,M,S> o (rows,cols):(cols,1)``
        with ``B = log2(max_phase)``, ``M = log2(vec)``, ``S = log2(cols * per_phase /
        vec)``. Raises :class:`MapError` where none is: when ``vec * max_phase`` exceeds
        the row (Triton wraps the XOR around the row; a swizzle would reach the next row)
        or one phase is wider than the rows."""
        rows, cols = _check_shape(shape, 2, "to_cute")
        if tuple(self.order) != (1, 0):
            raise MapError("to_cute is for a row-major (order [1, 0]) shared layout")
        if self.vec * self.max_phase > cols:
            raise MapError(f"vec * maxPhase = {self.vec * self.max_phase} is wider than a "
                           f"row of {cols}: Triton wraps the XOR around the row, a swizzle "
                           f"does not")
        inner = Layout((rows, cols), (cols, 1))
        if self.max_phase == 1 or self.per_phase >= rows:
            return inner
        b, m = _log2(self.max_phase), _log2(self.vec)
        s = _log2(cols) + _log2(self.per_phase) - m
        return ComposedLayout(Swizzle(b, m, s), 0, inner)

    def text(self) -> str:
        return (f"#ttg.swizzled_shared<{{vec = {self.vec}, perPhase = {self.per_phase}, "
                f"maxPhase = {self.max_phase}, order = {_list(self.order)}"
                f"{_cga_text(self.cga_layout)}}}>")


@dataclass(frozen=True, slots=True)
class NVMMAShared(Encoding):
    """``#ttg.nvmma_shared``: the shared-memory layout of TMA and ``wgmma``: 8 rows of
    ``swizzling_byte_width`` bytes, each row's 16-byte pieces XORed with its phase (0:
    no swizzle); ``transposed``: dim 0 is the minor one."""

    swizzling_byte_width: int
    element_bitwidth: int
    transposed: bool = False
    fp4_padded: bool = False
    rank: int = 2
    cga_layout: Bases = ()
    kind = "shared"

    def __post_init__(self) -> None:
        if self.swizzling_byte_width not in (0, 32, 64, 128):
            raise MapError(f"swizzlingByteWidth is 0, 32, 64 or 128, not "
                           f"{self.swizzling_byte_width}")
        _log2(self.element_bitwidth)

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        full = _check_shape(shape, self.rank, "the NVMMA shared layout")
        if self.rank == 1:
            return _combine(_identity(full[0], "offset", "dim0"), self.cga_layout, full)
        shape = _per_cta(self.cga_layout, full)
        width = self.swizzling_byte_width
        col, row = (0, 1) if self.transposed else (1, 0)
        pack = 2 if self.fp4_padded else 1
        vec = 128 // self.element_bitwidth
        per_phase, max_phase = {0: (1, 1), 32: (4, 2), 64: (2, 4), 128: (1, 8)}[width]
        tile_rows = 8
        tile_cols = 8 * width // self.element_bitwidth if width else shape[col] * pack
        if shape[col] * pack < tile_cols or shape[row] < tile_rows:
            raise MapError(f"an NVMMA shared layout of {width} bytes needs at least "
                           f"[{tile_rows}, {tile_cols}] elements, the shape is "
                           f"[{shape[row]}, {shape[col]}]")

        def packed(c: int) -> int:
            return c // 16 * 8 + c % 8 if self.fp4_padded else c

        bases = [[0, packed(1 << k)] for k in range(_log2(tile_cols))]
        for k in range(_log2(tile_rows)):
            r = 1 << k
            bases.append([r, packed(vec * ((r // per_phase) % max_phase)) if width else 0])
        tile = LinearLayout.create([("offset", bases)], [f"dim{row}", f"dim{col}"],
                                   require_surjective=False)
        tile = LinearLayout(tile.bases, ((f"dim{row}", tile_rows),
                                         (f"dim{col}", max(tile_cols // pack, 1))))
        for d in range(2, self.rank):
            name = d if self.transposed else 1 - d
            tile = tile * _identity(shape[name], "offset", f"dim{name}")
        return _combine(tile, self.cga_layout, full)

    def text(self) -> str:
        extra = ", fp4Padded = true" if self.fp4_padded else ""
        rank = f", rank = {self.rank}" if self.rank != 2 else ""
        return (f"#ttg.nvmma_shared<{{swizzlingByteWidth = {self.swizzling_byte_width}, "
                f"transposed = {'true' if self.transposed else 'false'}, elementBitWidth = "
                f"{self.element_bitwidth}{extra}{rank}{_cga_text(self.cga_layout)}}}>")


class _GivenBases(Encoding):
    """An encoding given by its linear layout's bases (``#ttg.linear``,
    ``#ttg.shared_linear``)."""

    __slots__ = ()
    bases: tuple[tuple[str, Bases], ...]
    _what = "the linear layout"

    @property
    def rank(self) -> int:
        return max((len(b) for _, bs in self.bases for b in bs), default=0)

    def smallest_shape(self) -> tuple[int, ...]:
        """The smallest power-of-two shape holding every element the bases reach: along
        each dimension, two to the number of bits the bases' components use there (a
        combination of bases XORs components, so it never sets a higher bit)."""
        used = [0] * self.rank
        for _, bs in self.bases:
            for b in bs:
                for k, component in enumerate(b):
                    used[k] |= component
        return tuple(1 << bits.bit_length() for bits in used)

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        shape = _check_shape(shape, self.rank, self._what)
        return LinearLayout.create([(n, [list(b) for b in bs]) for n, bs in self.bases],
                                   [(f"dim{k}", s) for k, s in enumerate(shape)],
                                   require_surjective=False)


@dataclass(frozen=True, slots=True)
class Linear(_GivenBases):
    """``#ttg.linear``: a distributed layout given by its bases."""

    bases: tuple[tuple[str, Bases], ...]

    def text(self) -> str:
        return LinearLayout(self.bases, ()).to_text() if not self.bases else \
            "#ttg.linear<{" + ", ".join(
                f"{n} = [" + ", ".join(_list(b) for b in bs) + "]" for n, bs in self.bases
            ) + "}>"


@dataclass(frozen=True, slots=True)
class SharedLinear(_GivenBases):
    """``#ttg.shared_linear``: a shared layout given by its bases (``offset``, ``block``)."""

    bases: tuple[tuple[str, Bases], ...]
    alignment: int = 16
    kind = "shared"
    _what = "the shared linear layout"

    def text(self) -> str:
        return ("#ttg.shared_linear<{" + ", ".join(
            f"{n} = [" + ", ".join(_list(b) for b in bs) + "]" for n, bs in self.bases)
            + f"}}, alignment = {self.alignment}>")
