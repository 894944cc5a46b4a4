"""hypothesis strategies for indexing maps, layouts and HLO, for symidx's tests and for yours.

    from hypothesis import given
    from symidx.strategies import indexing_maps

    @given(indexing_maps())
    def test_my_rewrite(m): ...

* maps: :func:`intervals`, :func:`affine_expressions`, :func:`expressions`,
  :func:`indexing_maps` -- every map drawn is valid and small enough to check by
  enumeration (domain boxes of at most a few thousand points);
* layouts: :func:`xla_shapes` (array shapes with random ``minor_to_major`` and tiles),
  :func:`cute_layouts` (nested ``shape:stride`` layouts);
* HLO: :func:`hlo_modules` -- the text of a small valid module, a chain of random ops
  (optionally inside a fusion), with at most a few hundred elements per array.

Requires hypothesis (the ``test`` extra).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from sympy import Integer

from symidx._arith import ceil_div
from symidx.core.expr import Expr, FloorDiv, Max, Min, Mod, dim, rt, sym
from symidx.core.indexing_map import IndexingMap, RuntimeVar
from symidx.core.interval import Interval
from symidx.hlo import HloLayout, Shape, Tile
from symidx.layout import cute

__all__ = ["intervals", "expressions", "indexing_maps", "affine_expressions", "xla_shapes",
           "cute_layouts", "hlo_modules", "HLO_OPCODES", "INDEX_OPCODES"]


def intervals(min_value: int = -8, max_value: int = 12, max_size: int = 8
              ) -> st.SearchStrategy[Interval]:
    """Non-empty intervals inside ``[min_value, max_value]`` of at most ``max_size`` values."""
    @st.composite
    def build(draw: Any) -> Interval:
        lo = draw(st.integers(min_value, max_value))
        size = draw(st.integers(1, max_size))
        return Interval(lo, min(max_value, lo + size - 1))

    return build()


def affine_expressions(variables: list[Any], max_coeff: int = 16, max_terms: int = 3
                       ) -> st.SearchStrategy[Expr]:
    """``c0 + c1*v1 + ...`` over some of ``variables``."""
    @st.composite
    def build(draw: Any) -> Expr:
        expr: Expr = Integer(draw(st.integers(-max_coeff, max_coeff)))
        if not variables:
            return expr
        for v in draw(st.lists(st.sampled_from(variables), max_size=max_terms)):
            coeff = draw(st.integers(-max_coeff, max_coeff).filter(bool))
            expr = expr + coeff * v
        return expr

    return build()


def expressions(variables: list[Any], max_depth: int = 3, negative_divisors: bool = False,
                min_max: bool = True) -> st.SearchStrategy[Expr]:
    """Random index expressions: sums, products by constants, floordiv and mod by
    constants, min and max, over ``variables``."""
    leaves: st.SearchStrategy[Expr] = st.integers(-12, 12).map(Integer)
    if variables:
        leaves = st.one_of(leaves, st.sampled_from(variables), st.sampled_from(variables))
    divisors = st.integers(1, 9)
    if negative_divisors:
        divisors = st.one_of(divisors, st.integers(-9, -1))

    def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        options = [
            st.tuples(children, children).map(lambda ab: ab[0] + ab[1]),
            st.tuples(children, children).map(lambda ab: ab[0] - ab[1]),
            st.tuples(children, st.integers(-8, 8)).map(lambda ac: ac[0] * ac[1]),
            st.tuples(children, divisors).map(lambda ac: FloorDiv(ac[0], ac[1])),
            st.tuples(children, divisors).map(lambda ac: Mod(ac[0], ac[1])),
        ]
        if min_max:
            options += [st.tuples(children, children).map(lambda ab: Min(*ab)),
                        st.tuples(children, children).map(lambda ab: Max(*ab))]
        return st.one_of(*options)

    return st.recursive(leaves, extend, max_leaves=2 ** max_depth)


def indexing_maps(max_dims: int = 3, max_ranges: int = 2, max_rts: int = 1,
                  max_results: int = 3, max_constraints: int = 2,
                  negative_divisors: bool = False, min_max: bool = True
                  ) -> st.SearchStrategy[IndexingMap]:
    """Random valid maps with small domains."""
    @st.composite
    def build(draw: Any) -> IndexingMap:
        nd = draw(st.integers(0, max_dims))
        nr = draw(st.integers(0, max_ranges))
        nt = draw(st.integers(0, max_rts))
        variables = ([dim(i) for i in range(nd)] + [sym(i) for i in range(nr)]
                     + [rt(i) for i in range(nt)])
        exprs = expressions(variables, negative_divisors=negative_divisors, min_max=min_max)
        dims = [draw(intervals(-4, 12, 8)) for _ in range(nd)]
        ranges = [draw(intervals(-4, 8, 5)) for _ in range(nr)]
        rts = [RuntimeVar(draw(intervals(0, 6, 4))) for _ in range(nt)]
        results = draw(st.lists(exprs, max_size=max_results))
        constraints = draw(st.lists(st.tuples(exprs, intervals(-20, 30, 30)),
                                    max_size=max_constraints))
        return IndexingMap.create(dims, results, ranges, rts, constraints)

    return build()


# --- layouts ---------------------------------------------------------------------------------


def xla_shapes(max_rank: int = 3, max_dim: int = 6, max_tiles: int = 2,
               element_types: Sequence[str] = ("f32", "bf16", "s8", "pred")
               ) -> st.SearchStrategy[Shape]:
    """Array shapes (rank 1 to ``max_rank``, sizes 1 to ``max_dim``) with a random
    ``minor_to_major`` and up to ``max_tiles`` tiles, e.g. ``f32[3,5]{0,1:T(2,2)(2,1)}``.
    A tile has 1 to rank + 1 sizes from 1 to 4; any but its last may be ``*`` (-1)."""
    @st.composite
    def build(draw: Any) -> Shape:
        rank = draw(st.integers(1, max_rank))
        dims = tuple(draw(st.lists(st.integers(1, max_dim), min_size=rank, max_size=rank)))
        order = tuple(draw(st.permutations(range(rank))))
        tiles = tuple(Tile(draw(_tile(rank))) for _ in range(draw(st.integers(0, max_tiles))))
        element = draw(st.sampled_from(list(element_types)))
        return Shape(element, dims, layout=HloLayout(order, tiles))

    return build()


def _tile(rank: int) -> st.SearchStrategy[tuple[int, ...]]:
    @st.composite
    def build(draw: Any) -> tuple[int, ...]:
        length = draw(st.integers(1, rank + 1))
        head = draw(st.lists(st.sampled_from([1, 2, 3, 4, -1]), min_size=length - 1,
                             max_size=length - 1))
        return (*head, draw(st.integers(1, 4)))

    return build()


def cute_layouts(max_rank: int = 3, max_depth: int = 2, max_extent: int = 4,
                 max_stride: int = 16) -> st.SearchStrategy[cute.Layout]:
    """Nested ``shape:stride`` layouts (CuTe / CATLASS TLA): up to ``max_rank`` modes per
    level, nested up to ``max_depth`` levels, extents 1 to ``max_extent``, strides 0 to
    ``max_stride``, e.g. ``((4,2),3):((1,8),16)``."""
    def mode(depth: int) -> st.SearchStrategy[tuple[Any, Any]]:
        leaf = st.tuples(st.integers(1, max_extent), st.integers(0, max_stride))
        if depth >= max_depth:
            return leaf
        nested = st.lists(mode(depth + 1), min_size=1, max_size=max_rank).map(
            lambda modes: (tuple(m[0] for m in modes), tuple(m[1] for m in modes)))
        return st.one_of(leaf, nested)

    return mode(0).map(lambda pair: cute.Layout(*pair))


# --- HLO ------------------------------------------------------------------------------------

HLO_OPCODES = ("negate", "exponential", "add", "multiply", "transpose", "reverse",
               "broadcast", "reshape", "slice", "pad", "reduce", "concatenate")
"""The opcodes :func:`hlo_modules` draws from by default."""

INDEX_OPCODES = ("dynamic-slice", "dynamic-update-slice", "gather", "fusion")
"""Opcodes :func:`hlo_modules` also draws when asked: ops whose offsets are integer values
(the module's ``s32[]`` start index, or integer constants, out of range at times: HLO clamps
them), a gather of ``iota`` or constant indices, and a nested fusion (a dynamic-slice,
reversed, at a start index the outer computation passes in)."""

_SUM = """%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
"""

Dims = tuple[int, ...]
Draw = Callable[[st.SearchStrategy[Any]], Any]


def _array(dims: Sequence[int], element: str = "f32") -> str:
    return f"{element}[{','.join(map(str, dims))}]"


def _ints(values: Sequence[int]) -> str:
    return "{" + ",".join(map(str, values)) + "}"


@dataclass
class _Builder:
    """The computation being drawn: its lines, the float arrays later ops may read (name,
    dims), its parameters' types, and the limits every array keeps to."""

    max_rank: int
    max_dim: int
    max_elements: int | None
    shared: bool
    lines: list[str] = field(default_factory=list)
    values: list[tuple[str, Dims]] = field(default_factory=list)
    params: list[str] = field(default_factory=list)
    #: The ``s32[]`` start index parameter, while no op has read it yet (one reader only,
    #: so that no two runtime variables hold the same value: maps cannot say they are equal).
    index: str | None = None
    #: Computations the drawn ops call (nested fusions).
    computations: list[str] = field(default_factory=list)

    def emit(self, dims: Dims, text: str, element: str = "f32", value: bool = True) -> str:
        """Add ``%vN = element[dims] text``; ``value``: a float array later ops may read."""
        name = f"%v{len(self.lines)}"
        self.lines.append(f"{name} = {_array(dims, element)} {text}")
        if value:
            self.values.append((name, dims))
        return name

    def parameter(self, type_text: str, dims: Dims | None = None) -> str:
        """A new parameter of the computation; a float array later ops may read if
        ``dims`` is given."""
        name = f"%p{len(self.params)}"
        self.lines.append(f"{name} = {type_text} parameter({len(self.params)})")
        self.params.append(type_text)
        if dims is not None:
            self.values.append((name, dims))
        return name

    def budget(self, dims: Dims, axis: int, now: int = 0) -> int:
        """The largest size dimension ``axis`` of an array with the other ``dims`` may take:
        ``2 * max_dim`` (or ``now``, its size before the op, if larger: a reshape may have
        flattened the array), within ``max_elements``."""
        cap = max(2 * self.max_dim, now)
        if self.max_elements is not None:
            cap = min(cap, self.max_elements // math.prod(dims[:axis] + dims[axis + 1:]))
        return cap

    def operand(self, draw: Draw, fits: Callable[[Dims], bool], new: Callable[[], Dims]
                ) -> tuple[str, Dims]:
        """A second operand and its dims: an earlier array whose dims ``fits`` (when arrays
        are shared), or a new parameter of the dims ``new()`` draws."""
        earlier = [(name, d) for name, d in self.values if fits(d)] if self.shared else []
        choice: tuple[str, Dims] | None = draw(st.sampled_from([None, *earlier]))
        if choice is not None:
            return choice
        dims = new()
        return self.parameter(_array(dims), dims), dims

    def zero(self) -> str:
        return self.emit((), "constant(0)", value=False)

    def start_index(self, draw: Draw, last: int) -> str:
        """A scalar start index up to ``last``: the start index parameter (once), or a
        constant from -2 to ``last + 2`` (HLO clamps it)."""
        if self.index is not None and draw(st.booleans()):
            name, self.index = self.index, None
            return name
        return self.emit((), f"constant({draw(st.integers(-2, last + 2))})", "s32", False)


def _draw_dims(draw: Draw, b: _Builder, rank: int) -> Dims:
    """Dims of ``rank`` sizes from 1 to ``max_dim``, within ``max_elements``."""
    dims: Dims = ()
    for _ in range(rank):
        room = b.max_dim if b.max_elements is None else min(
            b.max_dim, b.max_elements // math.prod(dims))
        dims += (draw(st.integers(1, room)),)
    return dims


# Each op: (whether it applies to an array of these dims, draw it reading ``x``).
Applies = Callable[[_Builder, Dims], bool]
Build = Callable[[Draw, _Builder, str, Dims], None]


def _always(b: _Builder, dims: Dims) -> bool:
    return True


def _unary(opcode: str) -> Build:
    def build(draw: Draw, b: _Builder, x: str, dims: Dims) -> None:
        b.emit(dims, f"{opcode}({x})")

    return build


def _binary(opcode: str) -> Build:
    def build(draw: Draw, b: _Builder, x: str, dims: Dims) -> None:
        y, _ = b.operand(draw, lambda d: d == dims, lambda: dims)
        b.emit(dims, f"{opcode}({x}, {y})")

    return build


def _transpose(draw: Draw, b: _Builder, x: str, dims: Dims) -> None:
    perm = draw(st.permutations(range(len(dims))))
    b.emit(tuple(dims[p] for p in perm), f"transpose({x}), dimensions={_ints(perm)}")


def _reverse(draw: Draw, b: _Builder, x: str, dims: Dims) -> None:
    which = sorted(draw(st.sets(st.integers(0, len(dims) - 1), min_size=1)))
    b.emit(dims, f"reverse({x}), dimensions={_ints(which)}")


def _broadcast_applies(b: _Builder, dims: Dims) -> bool:
    return len(dims) < b.max_rank


def _broadcast(draw: Draw, b: _Builder, x: str, dims: Dims) -> None:
    at = draw(st.integers(0, len(dims)))
    room = min(b.max_dim, b.budget((*dims, 1), len(dims)))
    out = dims[:at] + (draw(st.integers(1, room)),) + dims[at:]
    kept = [i if i < at else i + 1 for i in range(len(dims))]
    b.emit(out, f"broadcast({x}), dimensions={_ints(kept)}")


def _reshape(draw: Draw, b: _Builder, x: str, dims: Dims) -> None:
    """To one dimension, to the dims in another order, with a unit dimension inserted, or
    (one dimension) split in two."""
    total = math.prod(dims)
    kinds = ["flat", "permuted"]
    factors = [f for f in range(2, total) if total % f == 0]
    if len(dims) < b.max_rank:
        kinds += ["unit"] + (["split"] if len(dims) == 1 and factors else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "flat":
        out: Dims = (total,)
    elif kind == "permuted":
        out = tuple(draw(st.permutations(dims)))
    elif kind == "unit":
        at = draw(st.integers(0, len(dims)))
        out = dims[:at] + (1,) + dims[at:]
    else:
        f = draw(st.sampled_from(factors))
        out = (f, total // f)
    b.emit(out, f"reshape({x})")


def _slice(draw: Draw, b: _Builder, x: str, dims: Dims) -> None:
    parts, out = [], []
    for n in dims:
        start = draw(st.integers(0, n - 1))
        limit = draw(st.integers(start + 1, n))
        stride = draw(st.integers(1, 2))
        parts.append(f"[{start}:{limit}:{stride}]")
        out.append(ceil_div(limit - start, stride))
    b.emit(tuple(out), f"slice({x}), slice={{{', '.join(parts)}}}")


def _pad(draw: Draw, b: _Builder, x: str, dims: Dims) -> None:
    """Low and high padding from -1 to 2, interior 0 or 1, every dimension left with 1 to
    its budget of elements (the dimensions not padded yet counted at their least)."""
    parts: list[str] = []
    out: list[int] = []
    for k, n in enumerate(dims):
        least = tuple(max(1, m - 2) for m in dims[k + 1:])
        cap = b.budget(tuple(out) + (1,) + least, k, n)
        interior = draw(st.integers(0, 1)) if 2 * n - 3 <= cap else 0  # else too long
        base = n + (n - 1) * interior
        lo = draw(st.integers(-1, min(2, cap - base + 1)))
        hi = draw(st.integers(max(-1, 1 - base - lo), min(2, cap - base - lo)))
        parts.append(f"{lo}_{hi}_{interior}")
        out.append(base + lo + hi)
    b.emit(tuple(out), f"pad({x}, {b.zero()}), padding={'x'.join(parts)}")


def _reduce_applies(b: _Builder, dims: Dims) -> bool:
    return len(dims) >= 2


def _reduce(draw: Draw, b: _Builder, x: str, dims: Dims) -> None:
    which = sorted(draw(st.sets(st.integers(0, len(dims) - 1), min_size=1,
                                max_size=len(dims) - 1)))
    out = tuple(n for i, n in enumerate(dims) if i not in which)
    b.emit(out, f"reduce({x}, {b.zero()}), dimensions={_ints(which)}, to_apply=%sum")


def _concatenate_axes(b: _Builder, dims: Dims) -> list[int]:
    return [k for k in range(len(dims)) if b.budget(dims, k) > dims[k]]


def _concatenate(draw: Draw, b: _Builder, x: str, dims: Dims) -> None:
    axis = draw(st.sampled_from(_concatenate_axes(b, dims)))
    room = b.budget(dims, axis) - dims[axis]

    def fits(d: Dims) -> bool:
        return (len(d) == len(dims) and d[:axis] + d[axis + 1:] == dims[:axis] + dims[axis + 1:]
                and d[axis] <= room)

    def new() -> Dims:
        return dims[:axis] + (draw(st.integers(1, min(b.max_dim, room))),) + dims[axis + 1:]

    y, ydims = b.operand(draw, fits, new)
    out = dims[:axis] + (dims[axis] + ydims[axis],) + dims[axis + 1:]
    b.emit(out, f"concatenate({x}, {y}), dimensions={{{axis}}}")


def _dynamic_slice(draw: Draw, b: _Builder, x: str, dims: Dims) -> None:
    sizes = tuple(draw(st.integers(1, n)) for n in dims)
    starts = [b.start_index(draw, n - s) for n, s in zip(dims, sizes)]
    b.emit(sizes, f"dynamic-slice({x}, {', '.join(starts)}), "
                  f"dynamic_slice_sizes={_ints(sizes)}")


def _dynamic_update_slice(draw: Draw, b: _Builder, x: str, dims: Dims) -> None:
    update, udims = b.operand(
        draw, lambda d: len(d) == len(dims) and all(u <= n for u, n in zip(d, dims)),
        lambda: tuple(draw(st.integers(1, n)) for n in dims))
    starts = [b.start_index(draw, n - u) for n, u in zip(dims, udims)]
    b.emit(dims, f"dynamic-update-slice({x}, {update}, {', '.join(starts)})")


def _gather(draw: Draw, b: _Builder, x: str, dims: Dims) -> None:
    """Rows of ``x`` along dimension 0 at ``iota`` indices, or at constant ones (all the
    same, or each drawn, from -2 to past the end: HLO clamps them)."""
    rest = dims[1:]
    rows = draw(st.integers(1, min(6, b.budget((1,) + rest, 0))))
    kind = draw(st.sampled_from(["iota", "same", "each"]))
    if kind == "iota":
        indices = b.emit((rows, 1), "iota(), iota_dimension=0", "s32", False)
    else:
        entry = st.integers(-2, dims[0] + 2)
        table = [draw(entry)] * rows if kind == "same" else [draw(entry) for _ in range(rows)]
        literal = ",".join(f"{{{v}}}" for v in table)
        indices = b.emit((rows, 1), f"constant({{{literal}}})", "s32", False)
    offset_dims = _ints(range(1, len(dims)))
    b.emit((rows,) + rest, f"gather({x}, {indices}), offset_dims={offset_dims}, "
                           f"collapsed_slice_dims={{0}}, start_index_map={{0}}, "
                           f"index_vector_dim=1, slice_sizes={_ints((1,) + rest)}")


def _nested_fusion(draw: Draw, b: _Builder, x: str, dims: Dims) -> None:
    """A fusion inside: a dynamic-slice along dimension 0 at a start index that is a
    parameter of the inner computation, reversed along dimension 0."""
    rows = draw(st.integers(1, dims[0]))
    out = (rows,) + dims[1:]
    inner = f"%nested{len(b.computations)}"
    starts = ", ".join(["%o"] + ["%z"] * (len(dims) - 1))
    b.computations.append(
        f"{inner} {{\n  %x = {_array(dims)} parameter(0)\n  %o = s32[] parameter(1)\n"
        f"  %z = s32[] constant(0)\n  %ds = {_array(out)} dynamic-slice(%x, {starts}), "
        f"dynamic_slice_sizes={_ints(out)}\n"
        f"  ROOT %r = {_array(out)} reverse(%ds), dimensions={{0}}\n}}\n")
    start = b.start_index(draw, dims[0] - rows)
    b.emit(out, f"fusion({x}, {start}), kind=kLoop, calls={inner}")


_OPS: dict[str, tuple[Applies, Build]] = {
    **{op: (_always, _unary(op)) for op in ("negate", "exponential")},
    **{op: (_always, _binary(op)) for op in ("add", "multiply")},
    "transpose": (_always, _transpose),
    "reverse": (_always, _reverse),
    "broadcast": (_broadcast_applies, _broadcast),
    "reshape": (_always, _reshape),
    "slice": (_always, _slice),
    "pad": (_always, _pad),
    "reduce": (_reduce_applies, _reduce),
    "concatenate": (lambda b, dims: bool(_concatenate_axes(b, dims)), _concatenate),
    "dynamic-slice": (_always, _dynamic_slice),
    "dynamic-update-slice": (_always, _dynamic_update_slice),
    "gather": (_always, _gather),
    "fusion": (_always, _nested_fusion),
}


def hlo_modules(max_ops: int = 3, fused: bool = False, max_rank: int = 3, max_dim: int = 4,
                opcodes: Sequence[str] = HLO_OPCODES, *, max_inputs: int = 1,
                shared: bool = False, tuple_root: bool = False,
                max_elements: int | None = None) -> st.SearchStrategy[str]:
    """The text of a valid HLO module: 1 to ``max_inputs`` array parameters of rank 1 to
    ``max_rank`` (sizes 1 to ``max_dim``), then 1 to ``max_ops`` ops, each drawn from the
    ``opcodes`` that apply to the array it reads (:data:`HLO_OPCODES`, and
    :data:`INDEX_OPCODES`), e.g. broadcast only below ``max_rank`` (a negate where none
    does).

    Each op reads the previous array; binary ops, concatenate and dynamic-update-slice also
    read a new parameter. With ``shared``, an op reads any earlier array, and its second
    operand is an earlier array that fits or a new parameter (shared operands, diamonds).
    With ``tuple_root``, the root may be a tuple of the last array and an earlier one. With
    an index opcode among ``opcodes``, parameter 0 is an ``s32[]`` start index that at most
    one op reads. No op but a flattening reshape makes a dimension longer than
    ``2 * max_dim``, and no array has more than ``max_elements`` elements. The ops are the
    entry computation, or, with ``fused``, a fused computation that the entry's root
    ``fusion`` calls. ``max_ops=1`` gives single ops."""
    unknown = set(opcodes) - set(_OPS)
    if unknown:
        raise ValueError(f"hlo_modules cannot draw {sorted(unknown)}")
    if max_elements is not None and max_elements < 1:
        raise ValueError(f"hlo_modules: max_elements must be at least 1, not {max_elements}")

    @st.composite
    def build(draw: Any) -> str:
        b = _Builder(max_rank, max_dim, max_elements, shared)
        if set(opcodes) & set(INDEX_OPCODES):
            b.index = b.parameter("s32[]")
        for _ in range(draw(st.integers(1, max_inputs))):
            dims = _draw_dims(draw, b, draw(st.integers(1, max_rank)))
            b.parameter(_array(dims), dims)
        for _ in range(draw(st.integers(1, max_ops))):
            x, dims = draw(st.sampled_from(b.values)) if shared else b.values[-1]
            applicable = [op for op in opcodes if _OPS[op][0](b, dims)]
            opcode = draw(st.sampled_from(applicable)) if applicable else "negate"
            _OPS[opcode][1](draw, b, x, dims)
        root, root_dims = b.values[-1]
        out = _array(root_dims)
        if tuple_root and len(b.values) > 1 and draw(st.booleans()):
            other, other_dims = draw(st.sampled_from(b.values[:-1]))
            out = f"({out}, {_array(other_dims)})"
            b.lines.append(f"%t = {out} tuple({root}, {other})")
        return _module(b, out, fused)

    return build()


def _module(b: _Builder, out: str, fused: bool) -> str:
    """The module text around the drawn computation (its last line is the root), of type
    ``out``."""
    chain = b.lines[:-1] + ["ROOT " + b.lines[-1]]
    lines = ["HloModule random", "", _SUM, *b.computations]
    if fused:
        lines += ["%fused {", *(f"  {line}" for line in chain), "}", "", "ENTRY %main {"]
        lines += [f"  %a{k} = {t} parameter({k})" for k, t in enumerate(b.params)]
        operands = ", ".join(f"%a{k}" for k in range(len(b.params)))
        lines += [f"  ROOT %fusion = {out} fusion({operands}), kind=kLoop, calls=%fused", "}"]
    else:
        lines += ["ENTRY %main {", *(f"  {line}" for line in chain), "}"]
    return "\n".join(lines) + "\n"
