"""The symbolic tile of an indexing map (XLA's ``SymbolicTile::FromIndexingMap``).

Given a map from an output index to an operand index, and a tile of the output that starts
at the origin and has size ``ts_i`` along output dimension ``i``, the symbolic tile says
which operand elements the tile reads, as a strided box per operand dimension:

* ``offset``: the operand index of output index 0 (the map at dims = 0 and range
  variables = 0); runtime variables stay in it;
* ``size``: how many distinct values the result takes over the tile, an expression of the
  tile sizes (the map's dims, renamed: dimension ``d_i`` of the tile map *is* ``ts_i``);
* ``stride``: the distance between consecutive values;
* ``constraints`` on the tile sizes under which that strided box is exact.

The rules follow XLA's (facts from ``size_and_stride_expression.cc``): a dimension is
``(ts, 1)``; a range variable in ``[0, n-1]`` is ``(n, 1)``; a constant ``(1, 0)``;
``e * c`` scales the stride; ``d floordiv c`` is ``(ceil(ts / c), 1)``; ``d mod c`` and
``(d floordiv k) mod c`` give ``n - ((n - 1) floordiv c) * c`` with ``n`` the size of the
dividend, under ``c mod n == 0 || n mod c == 0``; a sum of strided terms (a reshape or
bitcast collapsing dimensions) is the product of the sizes with one stride, chosen by a
nest of "size != 1" tests, under a disjunction saying the tile is ``(1*, partial?, full*,
1*)`` in decreasing stride order. Anything else is refused with the sub-expression that
is not strided (:class:`TileRefusal`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from sympy import Add, Integer, Mul, Symbol

from symidx.core.expr import (
    Expr,
    FloorDiv,
    Mod,
    as_expr,
    dim,
    free_vars,
    rt,
    var_index,
    var_kind,
)
from symidx.core.indexing_map import IndexingMap
from symidx.core.indexing_map.text import print_expr
from symidx.core.interval import Interval
from symidx.core.simplify import simplify, simplify_expr
from symidx.errors import SymidxError
from symidx.tiling.constraints import DNF, FALSE, TRUE, Constraints, atom, dnf_and, dnf_or

__all__ = ["SymbolicTile", "TileRefusal", "symbolic_tile", "SizeAndStride"]


class TileRefusal(SymidxError):
    """No symbolic tile: ``reason`` says why, ``subexpr`` names the part that is not a
    strided expression (or None)."""

    def __init__(self, reason: str, subexpr: str | None = None):
        super().__init__(reason + (f": {subexpr}" if subexpr else ""))
        self.reason = reason
        self.subexpr = subexpr


@dataclass(frozen=True)
class SizeAndStride:
    """How many values an expression takes over the tile (``size``), XLA's ``stride``
    (signed: a reversed dimension steps down from the origin), and the same values as an
    ascending box: ``shift`` (the least value minus the value at the origin, <= 0) and
    ``box_stride`` (>= 0). ``mixed``: strides of both signs were summed, so XLA's offset
    and stride describe no box."""

    size: Expr
    stride: Expr
    constraints: Constraints = field(default_factory=Constraints.always)
    shift: Expr = Integer(0)
    box_stride: Expr | None = None
    mixed: bool = False
    # the most values the expression takes over any tile (None: not known), for a sum
    extent: int | None = None

    @property
    def ascending(self) -> Expr:
        return self.stride if self.box_stride is None else self.box_stride


@dataclass(frozen=True)
class SymbolicTile:
    """Offsets, sizes and strides per operand dimension, as expressions of the tile sizes
    ``d0..d{n-1}`` (bounds ``size_bounds``) and, for offsets, the runtime variables
    ``rt0..`` (bounds ``rt_bounds``)."""

    offsets: tuple[Expr, ...]
    sizes: tuple[Expr, ...]
    strides: tuple[Expr, ...]
    size_bounds: tuple[Interval, ...]
    rt_bounds: tuple[Interval, ...]
    constraints: Constraints
    dim_names: tuple[str, ...] = ()
    # The box each result's values fill (an ascending strided interval): the offset is
    # ``offsets[j] + box_shifts[j]``, the stride ``box_strides[j]`` (>= 0). ``mixed[j]``:
    # XLA's offset and stride of result j are no box (strides of both signs summed).
    box_shifts: tuple[Expr, ...] = ()
    box_strides: tuple[Expr, ...] = ()
    mixed: tuple[bool, ...] = ()

    @property
    def rank(self) -> int:
        return len(self.offsets)

    def _names(self) -> dict[Symbol, str]:
        names = {dim(i): n for i, n in enumerate(self.dim_names or
                                                 [f"d{i}" for i in range(len(self.size_bounds))])}
        names.update({rt(k): f"s{k}" for k in range(len(self.rt_bounds))})
        return names

    def _head(self, with_rts: bool) -> str:
        names = self._names()
        head = "(" + ", ".join(names[dim(i)] for i in range(len(self.size_bounds))) + ")"
        if with_rts and self.rt_bounds:
            head += "[" + ", ".join(f"s{k}" for k in range(len(self.rt_bounds))) + "]"
        return head

    def _map(self, exprs: Sequence[Expr], with_rts: bool) -> str:
        names = self._names()
        return f"{self._head(with_rts)} -> (" + ", ".join(print_expr(e, names)
                                                         for e in exprs) + ")"

    @property
    def offset_map(self) -> str:
        return self._map(self.offsets, True)

    @property
    def size_map(self) -> str:
        return self._map(self.sizes, False)

    @property
    def stride_map(self) -> str:
        return self._map(self.strides, False)

    def rt_var_texts(self) -> list[str]:
        return [f"s{k} in [{b.lo}, {b.hi}]" for k, b in enumerate(self.rt_bounds)]

    def constraints_text(self) -> str:
        return self.constraints.text(self._names())

    @property
    def is_mixed(self) -> bool:
        return any(self.mixed)

    def _env(self) -> dict[Symbol, Interval]:
        """The tile sizes' intervals (and the runtime variables'), to simplify with."""
        env = {dim(i): b for i, b in enumerate(self.size_bounds)}
        env.update({rt(k): b for k, b in enumerate(self.rt_bounds)})
        return env

    def box_offsets(self) -> tuple[Expr, ...]:
        env = self._env()
        return tuple(simplify_expr(as_expr(o) + as_expr(s), env)
                     for o, s in zip(self.offsets, self.box_shifts or
                                     [Integer(0)] * len(self.offsets)))

    @property
    def box_offset_map(self) -> str:
        return self._map(self.box_offsets(), True)

    @property
    def box_stride_map(self) -> str:
        return self._map(self.box_strides or self.strides, False)

    def to_text(self) -> str:
        """XLA's ``SymbolicTile::ToString`` layout; where strides of both signs are summed
        (XLA's offset and stride are then no box), a last line gives the box."""
        lines = ["Symbolic tile with", f"offset_map: {self.offset_map}",
                 f"size_map: {self.size_map}", f"stride_map: {self.stride_map}"]
        if self.rt_bounds:
            lines.append("rt_vars: " + "".join(t + ", " for t in self.rt_var_texts()))
        if not self.constraints.is_always:
            lines.append("constraints: " + self.constraints_text())
        if self.is_mixed:
            lines.append("box (strides of both signs are summed: the offset and stride above "
                         f"are XLA's, not a box): offset_map: {self.box_offset_map}, "
                         f"stride_map: {self.box_stride_map}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "offset_map": self.offset_map, "size_map": self.size_map,
            "stride_map": self.stride_map, "rt_vars": self.rt_var_texts(),
            "constraints": self.constraints_text(),
            "constraint_groups": self.constraints.factored_text(self._names())}
        if self.is_mixed:
            out["box"] = {"offset_map": self.box_offset_map,
                          "stride_map": self.box_stride_map,
                          "mixed": [bool(x) for x in self.mixed]}
        return out

    def at_unit_sizes(self, dims: Sequence[int]) -> SymbolicTile:
        """The tile when the tile size along each of ``dims`` is 1 (a gather's rows: each
        position along them is a tile of its own): sizes, strides, box and constraints
        with those sizes set to 1."""
        if not dims:
            return self
        ones = {dim(i): Integer(1) for i in dims}
        env = self._env()

        def sub(xs: Sequence[Expr]) -> tuple[Expr, ...]:
            return tuple(simplify_expr(as_expr(x).xreplace(ones), env) for x in xs)
        return replace(self, sizes=sub(self.sizes), strides=sub(self.strides),
                       box_shifts=sub(self.box_shifts), box_strides=sub(self.box_strides),
                       constraints=self.constraints.substitute(ones))

    def evaluate(self, tile_sizes: Sequence[int], rt_values: Sequence[int] = ()
                 ) -> tuple[list[int], list[int], list[int]]:
        env = {dim(i): Integer(v) for i, v in enumerate(tile_sizes)}
        env.update({rt(k): Integer(v) for k, v in enumerate(rt_values)})
        def ev(e: Expr) -> int:
            v = as_expr(e).xreplace(env)
            if not v.is_Integer:
                raise SymidxError(f"cannot evaluate {print_expr(e)} at {list(tile_sizes)}")
            return int(v)
        return ([ev(e) for e in self.offsets], [ev(e) for e in self.sizes],
                [ev(e) for e in self.strides])

    def evaluate_box(self, tile_sizes: Sequence[int], rt_values: Sequence[int] = ()
                     ) -> tuple[list[int], list[int], list[int]]:
        """The box at these tile sizes: per result the least offset, the size and a stride
        >= 0 (the same values as :meth:`evaluate`, ascending)."""
        flipped = replace(self, offsets=self.box_offsets(),
                          strides=self.box_strides or self.strides)
        return flipped.evaluate(tile_sizes, rt_values)


# --------------------------------------------------------------------------- extraction
def _is_dim(e: Expr) -> bool:
    return e.is_Symbol and var_kind(e) == "d"


class _Extractor:
    def __init__(self, m: IndexingMap, hulls: bool = False, aligned: bool = False):
        self.m = m
        self.hulls = hulls
        self.aligned = aligned

    def alignment(self, d: Expr, c: int) -> Constraints:
        """With ``aligned``: a floordiv by ``c`` of a dimension tiled by ``d`` takes
        ``ceil(d / c)`` values at every tile (origins multiples of ``d``) only when one
        divides the other; otherwise a tile may straddle one more block. XLA's rule has no
        such constraint (its tests expect none): the map-level tile stays XLA's."""
        if not self.aligned or c <= 1:
            return Constraints.always()
        return Constraints.of(dnf_or(atom(Mod(c, d), 0, 0), atom(Mod(d, c), 0, 0)))

    def refuse(self, why: str, e: Expr) -> TileRefusal:
        names = dict(zip(self.m.all_vars, self.m.display_names()))
        return TileRefusal(why, print_expr(e, names))

    def dim_range_size(self, size: Expr) -> int | None:
        """The most values a size expression takes: a constant, or a dimension's extent
        (its index interval must start at 0)."""
        if size.is_Integer:
            return int(size)
        if _is_dim(size):
            b = self.m.dims[var_index(size)]
            return b.hi + 1 if b.lo == 0 else None
        return None

    def extract(self, e: Expr) -> SizeAndStride:
        if e.is_Integer:
            return SizeAndStride(Integer(1), Integer(0), extent=1)
        if e.is_Symbol:
            kind = var_kind(e)
            if kind == "d":
                return SizeAndStride(e, Integer(1), extent=self.dim_range_size(e))
            if kind == "s":
                b = self.m.ranges[var_index(e)]
                if b.lo != 0:
                    raise self.refuse("a range variable whose interval does not start at 0", e)
                return SizeAndStride(Integer(b.hi + 1), Integer(1), extent=b.hi + 1)
            raise self.refuse("a runtime variable that is not an additive offset", e)
        if isinstance(e, Mul):
            coeff, rest = e.as_coeff_Mul()
            if not coeff.is_Integer or isinstance(rest, Mul):
                raise self.refuse("a product of variables is not a strided expression", e)
            inner = self.extract(rest)
            c = int(coeff)
            shift = inner.shift * c
            if c < 0:   # the values run down: the least is at the last position
                shift = shift + inner.ascending * c * (inner.size - 1)
            return SizeAndStride(inner.size, inner.stride * coeff, inner.constraints,
                                 shift, inner.ascending * abs(c), inner.mixed, inner.extent)
        if isinstance(e, Mod):
            return self.extract_mod(e)
        if isinstance(e, FloorDiv):
            num, den = e.args
            if not den.is_Integer:
                raise self.refuse("a division by a non-constant", e)
            if self.hulls and (not _is_dim(num) or self.aligned):
                # as a box: a tile straddling blocks holds one more, no constraint needed
                return self.hull_floordiv(num, int(den), e)
            if not _is_dim(num):
                raise self.refuse("a floordiv of something other than a dimension", e)
            n = self.dim_range_size(num)
            return SizeAndStride(FloorDiv(num + (int(den) - 1), den), Integer(1),
                                 self.alignment(num, int(den)),
                                 extent=None if n is None else -(-n // int(den)))
        if isinstance(e, Add):
            return self.combine([self.extract(t) for t in e.args], e)
        raise self.refuse("not a strided expression", e)

    def extract_mod(self, e: Expr) -> SizeAndStride:
        lhs, c = e.args
        if not c.is_Integer:
            raise self.refuse("a modulus that is not a constant", e)
        if _is_dim(lhs):
            dividend = lhs
        elif isinstance(lhs, FloorDiv) and _is_dim(lhs.args[0]) and lhs.args[1].is_Integer:
            k = int(lhs.args[1])
            dividend = FloorDiv(lhs.args[0] + (k - 1), k)
        else:
            raise self.refuse("a mod of something other than a dimension or a dimension's "
                              "floordiv (a non-unit stride under mod)", e)
        size = dividend - FloorDiv(dividend - 1, c) * c
        cons = dnf_or(atom(Mod(c, dividend), 0, 0), atom(Mod(dividend, c), 0, 0))
        if not _is_dim(lhs):
            cons = dnf_and(cons, self.alignment(lhs.args[0], int(lhs.args[1])).flat())
        n = self.dim_range_size(lhs if _is_dim(lhs) else lhs.args[0])
        if n is not None and not _is_dim(lhs):
            n = -(-n // int(lhs.args[1]))
        extent = int(c) if n is None else min(int(c), n)
        return SizeAndStride(size, Integer(1), Constraints.of(cons), extent=extent)

    def combine(self, parts: list[SizeAndStride], e: Expr) -> SizeAndStride:
        """A sum of strided parts (a reshape or bitcast merging dimensions, or a split's
        pieces merged back): the strides must nest (each part's number of values times its
        stride is the next larger stride), then the sum takes the product of the sizes with
        one stride, under the (1*, partial?, full*, 1*) disjunction. A part is a dimension,
        a range variable, a constant, or a dimension's floordiv or mod by a constant; its
        ``extent`` (the most values it takes) says when it is full."""
        cons = Constraints.always()
        for p in parts:
            cons = cons.and_(p.constraints)
        size: Expr = Integer(1)
        for p in parts:
            size = size * p.size
        for p in parts:
            if not p.stride.is_Integer:
                raise self.refuse("a summand with a non-constant stride", e)
        try:
            for p in parts:
                if p.extent is None:
                    raise self.refuse("a summand over a dimension that does not start at "
                                      "0", e)
            # decreasing strides; of two equal strides, a term over one value (a dimension
            # of extent 1) goes after: it nests inside any term (size 1 x its stride)
            ordered = sorted(parts, key=lambda p: (-abs(int(p.stride)), p.extent == 1))
            for k in range(1, len(ordered)):
                n = ordered[k].extent
                assert n is not None
                if n * abs(int(ordered[k].stride)) != abs(int(ordered[k - 1].stride)):
                    raise self.refuse("the strides of a sum do not nest (size x stride of "
                                      "one term is not the next stride)", e)
        except TileRefusal:
            if not self.hulls:
                raise
            return self.hull(parts, cons, e)
        stride: Expr = Integer(0)
        box_stride: Expr = Integer(0)
        for p in ordered:
            b = p.extent
            assert b is not None
            cond = FloorDiv(b + 1 - p.size, b)
            stride = cond * stride + (1 - cond) * p.stride
            box_stride = cond * box_stride + (1 - cond) * p.ascending
        cons = cons.and_dnf(self.sum_constraints(ordered))
        signs = {int(p.stride) > 0 for p in parts if int(p.stride) != 0}
        mixed = len(signs) > 1 or any(p.mixed for p in parts)
        shift: Expr = Integer(0)
        extent = 1
        for p in parts:
            shift = shift + p.shift
            extent *= p.extent or 1
        return SizeAndStride(size, stride, cons, shift, box_stride, mixed, extent)

    def hull_floordiv(self, num: Expr, k: int, e: Expr) -> SizeAndStride:
        """``(a d + b) floordiv k`` (a padded operand's rows, ``(d - 1) floordiv 2``): over
        a tile of ``ts`` positions it takes at most ``(a (ts - 1) + k - 1) floordiv k + 1``
        consecutive values, whatever the alignment (a labelled over-approximation)."""
        coeff, rest = num.as_coeff_Add()
        a, d = (rest.as_coeff_Mul() if isinstance(rest, Mul) else (Integer(1), rest))
        if not (coeff.is_Integer and a.is_Integer and int(a) > 0 and _is_dim(d) and k > 0):
            raise self.refuse("a floordiv of something other than a dimension", e)
        size = FloorDiv(int(a) * (d - 1) + (k - 1), k) + 1
        return SizeAndStride(size, Integer(1), box_stride=Integer(1))

    def hull(self, parts: list[SizeAndStride], cons: Constraints, e: Expr) -> SizeAndStride:
        """The box around a sum whose strides do not nest (a window ``d + s``, a sum of
        overlapping terms): from the least value to the largest, stepping by the greatest
        common divisor of the strides. Sound: it holds every value the tile takes, and
        more where the terms do not tile the range (a labelled over-approximation)."""
        from math import gcd

        g = 0
        for p in parts:
            if not p.ascending.is_Integer:
                raise self.refuse("a summand whose stride depends on the tile sizes, in a "
                                  "sum whose strides do not nest", e)
            g = gcd(g, abs(int(p.ascending)))
        g = g or 1
        span: Expr = Integer(0)
        shift: Expr = Integer(0)
        for p in parts:
            span = span + p.ascending * (p.size - 1)
            shift = shift + p.shift
        size = FloorDiv(span, g) + 1
        signs = {int(p.stride) > 0 for p in parts if int(p.stride) != 0}
        # XLA's fields: the offset at the origin, the stride g (or -g, all terms down)
        stride = Integer(-g) if signs == {False} else Integer(g)
        return SizeAndStride(size, stride, cons, shift, Integer(g), len(signs) > 1 or
                             signs == {False} or any(p.mixed for p in parts), None)

    def sum_constraints(self, ordered: list[SizeAndStride]) -> DNF:
        """(1*, partial?, full*, 1*) in decreasing stride order, as a DNF."""
        n = len(ordered)
        out = FALSE
        for partial in range(n):
            for full in range(n - partial):
                conj = TRUE
                ok = True
                for k, p in enumerate(ordered):
                    if k == partial:
                        continue
                    if partial < k <= partial + full:
                        top = p.extent
                        if top is None:
                            ok = False
                            break
                        piece = atom(p.size, top, top)
                    else:
                        piece = atom(p.size, 1, 1)
                    conj = dnf_and(conj, piece)
                if ok:
                    out = dnf_or(out, conj)
        return out


def constraints_ignorable(m: IndexingMap) -> Expr | None:
    """None when every constraint of ``m`` only cuts high values of one of its results
    (high padding, which a tile may overrun); else the first constraint that does not."""
    for e, interval in m.constraints:
        if interval.lo == 0 and e in m.results:
            continue
        return e
    return None


def symbolic_tile(m: IndexingMap, *, simplified: bool = False,
                  constant_stride: int | None = 1, masks: bool = False,
                  hulls: bool = False, aligned: bool = False) -> SymbolicTile:
    """The symbolic tile of ``m`` (see the module docstring); :class:`TileRefusal` when
    XLA's rules give none. A result that is a constant has one element; its stride is
    ``constant_stride`` (None: 0, XLA's stride of a constant expression). With ``masks``,
    a constraint that is no high-padding bound (low or interior padding, a concatenate's
    interleaved operand) is a mask instead of a refusal: the tile is the box around what
    the map reads without it, a sound over-approximation. With ``hulls``, a sum whose
    strides do not nest (a window) is the box around its values (:meth:`_Extractor.hull`),
    another labelled over-approximation. With ``aligned`` (a fusion's tiles, which start
    at every multiple of the tile size, not only at the origin), a floordiv of a
    dimension is constrained as a mod is: its divisor and the tile size divide one
    another, or a tile may straddle one more block than the size says."""
    if m.is_undefined:
        raise TileRefusal("the map is undefined")
    if m.is_known_empty and m.num_results == 0:   # a scalar read nowhere: the empty tile
        m = IndexingMap.create(m.dims, ())
    if m.is_known_empty:
        raise TileRefusal("the map is known empty (it reads nothing)")
    if not simplified:
        m = simplify(m, replace_point_dims=False)
    # A constraint on runtime variables is a data-dependent mask (a dynamic-update-slice
    # reads its update only inside the window): the tile is the box around it, a sound
    # over-approximation of what is read, as XLA's maps (which carry no such constraint).
    masked = [(e, i) for e, i in m.constraints
              if any(var_kind(v) == "rt" for v in free_vars(e))]
    if masked:
        m = m.replace(constraints=tuple(c for c in m.constraints if c not in masked))
    bad = constraints_ignorable(m)
    if bad is not None and masks:
        m = m.replace(constraints=())
        bad = None
    if bad is not None:
        names = dict(zip(m.all_vars, m.display_names()))
        raise TileRefusal("the map has a constraint that is not a high-padding bound on a "
                          "result (e.g. low or interior padding)", print_expr(bad, names))
    env = m.variable_bounds()
    zero = {v: Integer(0) for v in m.dim_vars + m.range_vars}
    ex = _Extractor(m, hulls, aligned)
    offsets, sizes, strides = [], [], []
    shifts, box_strides, mixed = [], [], []
    size_env = {dim(i): Interval(b.lo + 1, b.hi + 1) for i, b in enumerate(m.dims)}
    cons = Constraints.always()
    for r in m.results:
        off = simplify_expr(as_expr(r).xreplace(zero), env)
        strided = simplify_expr(as_expr(r) - off, env)
        if any(var_kind(v) == "s" for v in free_vars(off)):
            raise ex.refuse("a range variable left in the offset", off)
        part = ex.extract(strided)
        if strided.is_Integer and constant_stride is not None:
            # One element: its stride is arbitrary. XLA's own maps keep a reshape's size-1
            # dimension as a floordiv (stride 1) where symidx folds it to a constant.
            part = SizeAndStride(part.size, Integer(constant_stride), part.constraints)
        offsets.append(off)
        sizes.append(part.size)
        strides.append(part.stride)
        shifts.append(simplify_expr(as_expr(part.shift), size_env))
        box_strides.append(part.stride if part.box_stride is None or strided.is_Integer
                           else part.box_stride)
        mixed.append(part.mixed)
        cons = cons.and_(part.constraints)
    for e in sizes + strides:
        if any(var_kind(v) != "d" for v in free_vars(e)):
            raise TileRefusal("a size or stride depends on a runtime or range variable",
                              print_expr(e))
    # Runtime variables the offsets do not use are dropped, the others renumbered.
    used = sorted({var_index(v) for e in offsets for v in free_vars(e) if var_kind(v) == "rt"})
    renumber = {rt(k): rt(i) for i, k in enumerate(used)}
    offsets = [as_expr(e).xreplace(renumber) for e in offsets]
    size_bounds = tuple(Interval(b.lo + 1, b.hi + 1) for b in m.dims)
    dim_names = m.display_names()[:m.num_dims]
    return SymbolicTile(tuple(offsets), tuple(sizes), tuple(strides), size_bounds,
                        tuple(m.rts[k].bounds for k in used), cons, tuple(dim_names),
                        tuple(shifts), tuple(box_strides), tuple(mixed))
