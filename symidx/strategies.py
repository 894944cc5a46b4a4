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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from sympy import Integer

from symidx.expr import Expr, FloorDiv, Max, Min, Mod, dim, rt, sym
from symidx.hlo import HloLayout, Shape, Tile
from symidx.indexing_map import IndexingMap, RuntimeVar
from symidx.interval import Interval
from symidx.layout import cute

__all__ = ["intervals", "expressions", "indexing_maps", "affine_expressions", "xla_shapes",
           "cute_layouts", "hlo_modules", "HLO_OPCODES"]


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
"""The opcodes :func:`hlo_modules` draws from (an op that does not apply to the current
array, e.g. a broadcast at the highest rank, becomes a ``negate``)."""

_SUM = """%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
"""


Dims = tuple[int, ...]
Draw = Callable[[st.SearchStrategy[Any]], Any]


@dataclass(frozen=True)
class _Op:
    """One drawn op: its output dims and its text after ``= f32[...] ``, with ``$x`` for
    the previous value and ``$p`` for a new parameter of dims ``param`` (if any)."""

    dims: Dims
    text: str
    param: Dims | None = None


def _array(dims: Sequence[int]) -> str:
    return f"f32[{','.join(map(str, dims))}]"


def _ints(values: Sequence[int]) -> str:
    return "{" + ",".join(map(str, values)) + "}"


def _elementwise(opcode: str) -> Callable[[Draw, Dims, int, int], _Op | None]:
    def draw_op(draw: Draw, dims: Dims, max_rank: int, max_dim: int) -> _Op | None:
        if opcode in ("add", "multiply"):
            return _Op(dims, f"{opcode}($x, $p)", dims)
        return _Op(dims, f"{opcode}($x)")

    return draw_op


def _transpose(draw: Draw, dims: Dims, max_rank: int, max_dim: int) -> _Op | None:
    perm = draw(st.permutations(range(len(dims))))
    return _Op(tuple(dims[p] for p in perm), f"transpose($x), dimensions={_ints(perm)}")


def _reverse(draw: Draw, dims: Dims, max_rank: int, max_dim: int) -> _Op | None:
    which = sorted(draw(st.sets(st.integers(0, len(dims) - 1), min_size=1)))
    return _Op(dims, f"reverse($x), dimensions={_ints(which)}")


def _broadcast(draw: Draw, dims: Dims, max_rank: int, max_dim: int) -> _Op | None:
    if len(dims) >= max_rank:
        return None
    at = draw(st.integers(0, len(dims)))
    out = dims[:at] + (draw(st.integers(1, max_dim)),) + dims[at:]
    kept = [i if i < at else i + 1 for i in range(len(dims))]
    return _Op(out, f"broadcast($x), dimensions={_ints(kept)}")


def _reshape(draw: Draw, dims: Dims, max_rank: int, max_dim: int) -> _Op | None:
    size = 1
    for n in dims:
        size *= n
    options = [(size,), tuple(draw(st.permutations(dims)))]
    if len(dims) < max_rank:
        at = draw(st.integers(0, len(dims)))
        options.append(dims[:at] + (1,) + dims[at:])
    return _Op(draw(st.sampled_from(options)), "reshape($x)")


def _slice(draw: Draw, dims: Dims, max_rank: int, max_dim: int) -> _Op | None:
    parts, out = [], []
    for n in dims:
        start = draw(st.integers(0, n - 1))
        limit = draw(st.integers(start + 1, n))
        stride = draw(st.integers(1, 2))
        parts.append(f"[{start}:{limit}:{stride}]")
        out.append(-(-(limit - start) // stride))
    return _Op(tuple(out), f"slice($x), slice={{{', '.join(parts)}}}")


def _pad(draw: Draw, dims: Dims, max_rank: int, max_dim: int) -> _Op | None:
    """Low and high padding from -1 to 2, interior 0 or 1 (none on a dimension where that
    would leave it empty or longer than ``2 * max_dim``)."""
    parts, out = [], []
    for n in dims:
        lo, hi, interior = (draw(st.integers(-1, 2)), draw(st.integers(-1, 2)),
                            draw(st.integers(0, 1)))
        size = lo + hi + n + (n - 1) * interior
        if not 1 <= size <= 2 * max_dim:
            lo = hi = interior = 0
            size = n
        parts.append(f"{lo}_{hi}_{interior}")
        out.append(size)
    return _Op(tuple(out), f"pad($x, %zero), padding={'x'.join(parts)}")


def _reduce(draw: Draw, dims: Dims, max_rank: int, max_dim: int) -> _Op | None:
    if len(dims) < 2:
        return None
    which = sorted(draw(st.sets(st.integers(0, len(dims) - 1), min_size=1,
                                max_size=len(dims) - 1)))
    out = tuple(n for i, n in enumerate(dims) if i not in which)
    return _Op(out, f"reduce($x, %zero), dimensions={_ints(which)}, to_apply=%sum")


def _concatenate(draw: Draw, dims: Dims, max_rank: int, max_dim: int) -> _Op | None:
    axis = draw(st.integers(0, len(dims) - 1))
    extra = draw(st.integers(1, max_dim))
    if dims[axis] + extra > 2 * max_dim:
        return None
    param = dims[:axis] + (extra,) + dims[axis + 1:]
    out = dims[:axis] + (dims[axis] + extra,) + dims[axis + 1:]
    return _Op(out, f"concatenate($x, $p), dimensions={{{axis}}}", param)


_DRAW_OP: dict[str, Callable[[Draw, Dims, int, int], _Op | None]] = {
    **{op: _elementwise(op) for op in ("negate", "exponential", "add", "multiply")},
    "transpose": _transpose, "reverse": _reverse, "broadcast": _broadcast,
    "reshape": _reshape, "slice": _slice, "pad": _pad, "reduce": _reduce,
    "concatenate": _concatenate,
}
"""Per opcode: draw the op on an array of the given dims; None where it does not apply
(rank limits, or a dimension would grow past ``2 * max_dim``)."""


def hlo_modules(max_ops: int = 3, fused: bool = False, max_rank: int = 3, max_dim: int = 4,
                opcodes: Sequence[str] = HLO_OPCODES) -> st.SearchStrategy[str]:
    """The text of a valid HLO module: a parameter of rank 1 to ``max_rank`` (sizes 1 to
    ``max_dim``), then a chain of 1 to ``max_ops`` ops drawn from ``opcodes``, each reading
    the previous value (binary ops and concatenate also read a new parameter). The chain is
    the entry computation, or, with ``fused``, a fused computation that the entry's root
    ``fusion`` calls. ``max_ops=1`` gives single ops."""
    unknown = set(opcodes) - set(HLO_OPCODES)
    if unknown:
        raise ValueError(f"hlo_modules cannot draw {sorted(unknown)}")

    @st.composite
    def build(draw: Any) -> str:
        dims = tuple(draw(st.lists(st.integers(1, max_dim), min_size=1, max_size=max_rank)))
        params = [dims]
        body = []
        for k in range(1, draw(st.integers(1, max_ops)) + 1):
            opcode = draw(st.sampled_from(list(opcodes)))
            op = _DRAW_OP[opcode](draw, dims, max_rank, max_dim) or _Op(dims, "negate($x)")
            text = op.text.replace("$x", f"%v{k - 1}" if k > 1 else "%p0")
            text = text.replace("$p", f"%p{len(params)}")
            if op.param is not None:
                params.append(op.param)
            body.append(f"%v{k} = {_array(op.dims)} {text}")
            dims = op.dims
        return _module(params, body, dims, fused)

    return build()


def _module(params: list[tuple[int, ...]], body: list[str], out: tuple[int, ...],
            fused: bool) -> str:
    """The module text around a chain ``body`` whose last line is the result."""
    decls = [f"%p{k} = {_array(d)} parameter({k})" for k, d in enumerate(params)]
    if any("%zero" in line for line in body):
        decls.append("%zero = f32[] constant(0)")
    chain = decls + body[:-1] + ["ROOT " + body[-1]]
    lines = ["HloModule random", "", _SUM]
    if fused:
        lines += ["%fused {", *(f"  {line}" for line in chain), "}", "", "ENTRY %main {"]
        lines += [f"  %a{k} = {_array(d)} parameter({k})" for k, d in enumerate(params)]
        operands = ", ".join(f"%a{k}" for k in range(len(params)))
        lines += [f"  ROOT %fusion = {_array(out)} fusion({operands}), kind=kLoop, "
                  "calls=%fused", "}"]
    else:
        lines += ["ENTRY %main {", *(f"  {line}" for line in chain), "}"]
    return "\n".join(lines) + "\n"
