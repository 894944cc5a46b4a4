"""Triton's linear layouts: maps over F2 (bits, added by XOR) from named input dimensions
(``register``, ``lane``, ``warp``, ``block`` of a distributed layout; ``offset`` and
``block`` of a shared one) to named output dimensions (``dim0``, ``dim1``, ...).

Each input dimension of size ``2^n`` has ``n`` *bases*, one vector of output values per bit:
the image of an input is the XOR of the bases of its set bits (triton-lang/triton
``include/triton/Tools/LinearLayout.h``; its semantics, not its code). A zero basis
*broadcasts*: that input bit changes nothing.

:class:`LinearLayout` is a frozen value: ``apply``, product (``*``: the second layout's
bases after the first's), ``compose``, ``invert_and_compose`` and ``pseudo_invert`` (a zero
or dependent basis is skipped: the solution keeps the earliest independent bases, as
Triton's does), ``invert`` (bijective only), transposes, reshapes and flattens, sublayouts,
free-variable masks, and equality (order of dimensions and output sizes included;
:meth:`LinearLayout.equal_ignoring_out_dim_sizes` drops the sizes).

Text: :func:`parse_linear_layout` reads TTGIR's ``#ttg.linear<{register = [[0, 1]], lane =
..., warp = ..., block = []}>`` and ``#ttg.shared_linear<{offset = [...], block = []},
alignment = 16>``; :meth:`LinearLayout.to_text` writes them; :meth:`LinearLayout.from_gluon`
takes Gluon's ``DistributedLinearLayout`` / ``SharedLinearLayout`` fields.

Between worlds: :meth:`LinearLayout.to_map` is the exact quasi-affine
:class:`~symidx.core.indexing_map.IndexingMap` (each output bit a sum of input bits mod 2);
:func:`from_cute` reads a CuTe layout (swizzled or not) whose sizes are powers of two and
whose function is F2-linear; :meth:`LinearLayout.to_cute` gives the ``shape:stride`` layout
when XOR never carries (every point is checked).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from symidx._display import Rich, Shown
from symidx._text import lazy_pattern
from symidx.core.expr import Expr, FloorDiv, Mod, add, dim, scale
from symidx.core.indexing_map import IndexingMap
from symidx.core.simplify import simplify
from symidx.errors import MapError, ParseError, TooLargeError
from symidx.layout.algebra import coalesce
from symidx.layout.foreign import as_layout
from symidx.layout.holders import drawing
from symidx.layout.nested import Layout, layout_values
from symidx.layout.nested import size as layout_size
from symidx.layout.swizzle import ComposedLayout, composed_values

__all__ = [
    "CHECK_LIMIT",
    "LinearLayout",
    "from_cute",
    "parse_linear_layout",
    "supremum",
]

CHECK_LIMIT = 1 << 20
"""Most points a conversion checks one by one."""

Vector = tuple[int, ...]
BasesT = tuple[tuple[str, tuple[Vector, ...]], ...]


def _pow2(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def _log2(n: int) -> int:
    return n.bit_length() - 1


def supremum(x: Sequence[str], y: Sequence[str]) -> list[str]:
    """The shortest list holding ``x`` and ``y`` as subsequences, ``x``'s elements first
    where free (Triton's ``supremum``); raises :class:`MapError` when their orders
    conflict."""
    out: list[str] = []
    i = j = 0
    while i < len(x) and j < len(y):
        if x[i] == y[j]:
            out.append(x[i])
            i, j = i + 1, j + 1
        elif x[i] not in y[j:]:
            out.append(x[i])
            i += 1
        elif y[j] not in x[i:]:
            out.append(y[j])
            j += 1
        else:
            raise MapError(f"no supremum of {list(x)} and {list(y)}: {x[i]!r} and {y[j]!r} "
                           f"come in opposite orders")
    return out + list(x[i:]) + list(y[j:])


@dataclass(frozen=True, slots=True)
class LinearLayout(Rich):
    """``bases``: per input dimension (in order), one output vector per bit; ``outs``: the
    output dimensions (in order) with their sizes (powers of two)."""

    bases: BasesT
    outs: tuple[tuple[str, int], ...]

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def create(cls, bases: Mapping[str, Sequence[Sequence[int]]] |
               Iterable[tuple[str, Sequence[Sequence[int]]]],
               outs: Sequence[str] | Sequence[tuple[str, int]] | Mapping[str, int],
               require_surjective: bool = True) -> LinearLayout:
        """Triton's constructor. ``outs`` as names infers each size (the smallest power of
        two above every basis value); as ``(name, size)`` pairs or a mapping gives them.
        ``require_surjective`` raises unless every output is reached."""
        pairs = list(bases.items()) if isinstance(bases, Mapping) else list(bases)
        out_list = list(outs.items()) if isinstance(outs, Mapping) else list(outs)
        names: list[str] = [o if isinstance(o, str) else str(o[0]) for o in out_list]
        if len(set(names)) != len(names) or len({n for n, _ in pairs}) != len(pairs):
            raise MapError(f"repeated dimension names: ins {[n for n, _ in pairs]}, "
                           f"outs {names}")
        vectors = {n: tuple(tuple(int(v) for v in b) for b in bs) for n, bs in pairs}
        for n, bs in vectors.items():
            for b in bs:
                if len(b) != len(names):
                    raise MapError(f"basis {list(b)} of {n!r} has {len(b)} values for "
                                   f"{len(names)} output dimensions {names}")
                if any(v < 0 for v in b):
                    raise MapError(f"basis {list(b)} of {n!r} has a negative value")
        sizes = []
        for k, o in enumerate(out_list):
            if isinstance(o, str):
                top = max((b[k] for bs in vectors.values() for b in bs), default=0)
                sizes.append(1 << top.bit_length())
            else:
                sizes.append(int(o[1]))
        layout = cls(tuple((n, vectors[n]) for n, _ in pairs), tuple(zip(names, sizes)))
        if require_surjective and not layout.is_surjective():
            raise MapError(f"the layout is not surjective:\n{layout}")
        return layout

    def __post_init__(self) -> None:
        for name, size in self.outs:
            if not _pow2(size):
                raise MapError(f"output dimension {name!r} has size {size}, not a power of 2")
        for name, bs in self.bases:
            for b in bs:
                for (o, size), v in zip(self.outs, b):
                    if not 0 <= v < size:
                        raise MapError(f"basis {list(b)} of {name!r}: {v} is outside "
                                       f"{o!r} of size {size}")

    @classmethod
    def identity1d(cls, size: int, in_dim: str, out_dim: str) -> LinearLayout:
        """``x -> x`` on ``[0, size)`` (size a power of two; 0 counts as 1, as in Triton)."""
        size = max(size, 1)
        if not _pow2(size):
            raise MapError(f"identity1d needs a power of 2, got {size}")
        return cls(((in_dim, tuple((1 << k,) for k in range(_log2(size)))),),
                   ((out_dim, size),))

    @classmethod
    def zeros1d(cls, size: int, in_dim: str, out_dim: str) -> LinearLayout:
        """Every ``x`` in ``[0, size)`` to 0 (a broadcast)."""
        if not _pow2(size):
            raise MapError(f"zeros1d needs a power of 2, got {size}")
        return cls(((in_dim, tuple((0,) for _ in range(_log2(size)))),), ((out_dim, 1),))

    @classmethod
    def empty(cls) -> LinearLayout:
        return cls((), ())

    # -- shape -----------------------------------------------------------------------------

    @property
    def in_dims(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.bases)

    @property
    def out_dims(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.outs)

    def in_dim_size(self, name: str) -> int:
        return 1 << len(self._bases_of(name))

    def out_dim_size(self, name: str) -> int:
        for n, s in self.outs:
            if n == name:
                return s
        raise MapError(f"no output dimension {name!r} in {list(self.out_dims)}")

    def in_dim_size_log2(self, name: str) -> int:
        return len(self._bases_of(name))

    def out_dim_size_log2(self, name: str) -> int:
        return _log2(self.out_dim_size(name))

    def total_in_dim_size(self) -> int:
        return 1 << sum(len(bs) for _, bs in self.bases)

    def total_out_dim_size(self) -> int:
        return 1 << sum(_log2(s) for _, s in self.outs)

    def _bases_of(self, name: str) -> tuple[Vector, ...]:
        for n, bs in self.bases:
            if n == name:
                return bs
        raise MapError(f"no input dimension {name!r} in {list(self.in_dims)}")

    # -- F2 arithmetic on flattened vectors ----------------------------------------------------

    def _flat(self, vector: Sequence[int]) -> int:
        out, shift = 0, 0
        for v, (_, size) in zip(vector, self.outs):
            out |= v << shift
            shift += _log2(size)
        return out

    def _unflat(self, value: int) -> Vector:
        out = []
        for _, size in self.outs:
            out.append(value & (size - 1))
            value >>= _log2(size)
        return tuple(out)

    def _columns(self) -> list[int]:
        """Every basis, flattened, in order of input dimension then bit."""
        return [self._flat(b) for _, bs in self.bases for b in bs]

    def apply(self, ins: Mapping[str, int] | Iterable[tuple[str, int]]) -> tuple[tuple[str, int],
                                                                                  ...]:
        """The outputs ``((name, value), ...)`` of the inputs ``{name: value}`` (every input
        dimension given once, each value inside its size)."""
        given = dict(ins.items() if isinstance(ins, Mapping) else ins)
        if set(given) != set(self.in_dims):
            raise MapError(f"apply needs values for {list(self.in_dims)}, got {list(given)}")
        acc = 0
        for name, bs in self.bases:
            x = given[name]
            if not 0 <= x < 1 << len(bs):
                raise MapError(f"{name}={x} is outside [0, {1 << len(bs)})")
            for k, b in enumerate(bs):
                if x >> k & 1:
                    acc ^= self._flat(b)
        return tuple(zip(self.out_dims, self._unflat(acc)))

    def __call__(self, **ins: int) -> tuple[int, ...]:
        """``layout(register=3, lane=5, ...)``: the output values, in order."""
        return tuple(v for _, v in self.apply(ins))

    def is_surjective(self) -> bool:
        return _rank(self._columns()) == sum(_log2(s) for _, s in self.outs)

    def is_injective(self) -> bool:
        cols = self._columns()
        return _rank(cols) == len(cols)

    def is_invertible(self) -> bool:
        return self.is_surjective() and self.is_injective()

    # -- combining ------------------------------------------------------------------------

    def __mul__(self, other: LinearLayout) -> LinearLayout:
        """Triton's product: input and output dimensions merged (:func:`supremum`); an input
        dimension in both gets ``self``'s bases, then ``other``'s with each output value
        scaled by ``self``'s size of that output; output sizes multiply."""
        ins = supremum(self.in_dims, other.in_dims)
        outs = supremum(self.out_dims, other.out_dims)
        mine, theirs = dict(self.outs), dict(other.outs)
        sizes = [(o, mine.get(o, 1) * theirs.get(o, 1)) for o in outs]

        def lift(layout: LinearLayout, b: Vector, scale_by: Mapping[str, int]) -> Vector:
            values = dict(zip(layout.out_dims, b))
            return tuple(values.get(o, 0) * scale_by.get(o, 1) for o in outs)

        bases = []
        for name in ins:
            here: list[Vector] = []
            if name in self.in_dims:
                here += [lift(self, b, {}) for b in self._bases_of(name)]
            if name in other.in_dims:
                here += [lift(other, b, mine) for b in other._bases_of(name)]
            bases.append((name, tuple(here)))
        return LinearLayout(tuple(bases), tuple(sizes))

    def compose(self, outer: LinearLayout) -> LinearLayout:
        """``outer(self(x))``: ``self``'s output dimensions are ``outer``'s inputs (by name,
        each no larger there). Keeps ``outer``'s output sizes (not required surjective)."""
        self._outputs_fit("compose", outer.in_dims, outer.in_dim_size)
        bases = tuple((name, tuple(tuple(v for _, v in outer.apply(zip(self.out_dims, b)))
                                   for b in bs)) for name, bs in self.bases)
        return LinearLayout(bases, outer.outs)

    def _outputs_fit(self, op: str, names: Sequence[str], size_of: Any) -> None:
        """Raise unless this layout's outputs are exactly ``names``, each no larger than
        ``size_of(name)``."""
        if set(self.out_dims) != set(names):
            raise MapError(f"{op}: outputs {list(self.out_dims)} do not match {list(names)}")
        for o, size in self.outs:
            if size > size_of(o):
                raise MapError(f"{op}: {o!r} has size {size}, the other layout takes "
                               f"{size_of(o)}")

    def invert_and_compose(self, other: LinearLayout) -> LinearLayout:
        """``C`` with ``other(C(x)) == self(x)``: ``other``'s (pseudo-)inverse after
        ``self``. ``self`` and ``other`` have the same output dimensions (any order); the
        result's outputs are ``other``'s inputs, sizes kept. Where ``other`` is not
        injective (zero or dependent bases), the solution uses the earliest independent
        bases; raises :class:`MapError` where ``self`` reaches what ``other`` cannot."""
        self._outputs_fit("invert_and_compose", other.out_dims, other.out_dim_size)
        solver = _Solver(other._columns())
        ins = [(n, len(bs)) for n, bs in other.bases]
        bases = []
        for name, bs in self.bases:
            row = []
            for b in bs:
                target = other._flat(tuple(dict(zip(self.out_dims, b))[o]
                                           for o in other.out_dims))
                x = solver.solve(target)
                if x is None:
                    raise MapError(f"invert_and_compose: {name} basis {list(b)} is not "
                                   f"reached by the second layout")
                vec = []
                for _, n in ins:
                    vec.append(x & ((1 << n) - 1))
                    x >>= n
                row.append(tuple(vec))
            bases.append((name, tuple(row)))
        return LinearLayout(tuple(bases), tuple((n, 1 << k) for n, k in ins))

    def pseudo_invert(self) -> LinearLayout:
        """Outputs -> inputs: for each output a preimage (zero and dependent bases skipped);
        ``self(pseudo_invert()(y)) == y`` wherever ``y`` is reached. Raises unless every
        output is reached (surjective)."""
        if not self.is_surjective():
            raise MapError(f"pseudo_invert needs a surjective layout:\n{self}")
        ident = LinearLayout.empty()
        for o, size in self.outs:
            ident = ident * LinearLayout.identity1d(size, o, o)
        return ident.invert_and_compose(self)

    def invert(self) -> LinearLayout:
        """The inverse of a bijective layout."""
        if not self.is_invertible():
            raise MapError(f"the layout is not invertible (injective and surjective):\n{self}")
        return self.pseudo_invert()

    # -- rearranging -----------------------------------------------------------------------

    def transpose_outs(self, order: Sequence[str]) -> LinearLayout:
        if sorted(order) != sorted(self.out_dims):
            raise MapError(f"transpose_outs: {list(order)} is not an order of "
                           f"{list(self.out_dims)}")
        pos = [self.out_dims.index(o) for o in order]
        return LinearLayout(tuple((n, tuple(tuple(b[p] for p in pos) for b in bs))
                                  for n, bs in self.bases),
                            tuple(self.outs[p] for p in pos))

    def transpose_ins(self, order: Sequence[str]) -> LinearLayout:
        if sorted(order) != sorted(self.in_dims):
            raise MapError(f"transpose_ins: {list(order)} is not an order of "
                           f"{list(self.in_dims)}")
        return LinearLayout(tuple((n, self._bases_of(n)) for n in order), self.outs)

    def reshape_ins(self, new: Sequence[tuple[str, int]]) -> LinearLayout:
        """The input bits, in order, regrouped into dimensions of the given sizes."""
        flat = [b for _, bs in self.bases for b in bs]
        if 1 << len(flat) != _prod(s for _, s in new):
            raise MapError(f"reshape_ins: sizes {[s for _, s in new]} do not hold "
                           f"{1 << len(flat)} inputs")
        out, k = [], 0
        for name, size in new:
            if not _pow2(size):
                raise MapError(f"reshape_ins: {size} is not a power of 2")
            out.append((name, tuple(flat[k:k + _log2(size)])))
            k += _log2(size)
        return LinearLayout(tuple(out), self.outs)

    def flatten_ins(self) -> LinearLayout:
        if not self.bases:
            return self
        return self.reshape_ins([(self.in_dims[0], self.total_in_dim_size())])

    def reshape_outs(self, new: Sequence[tuple[str, int]]) -> LinearLayout:
        """The output bits, in order (first dimension lowest), regrouped."""
        total = _prod(s for _, s in new)
        if total != self.total_out_dim_size():
            raise MapError(f"reshape_outs: sizes {[s for _, s in new]} do not hold "
                           f"{self.total_out_dim_size()} outputs")
        target = LinearLayout((), tuple((n, s) for n, s in new))
        return LinearLayout(tuple((n, tuple(target._unflat(self._flat(b)) for b in bs))
                                  for n, bs in self.bases), target.outs)

    def flatten_outs(self) -> LinearLayout:
        if not self.outs:
            return self
        return self.reshape_outs([(self.out_dims[0], self.total_out_dim_size())])

    def sublayout(self, ins: Iterable[str], outs: Iterable[str]) -> LinearLayout:
        """Only the given input and output dimensions (kept in this layout's order)."""
        ins_set, outs_set = set(ins), set(outs)
        keep = [k for k, o in enumerate(self.out_dims) if o in outs_set]
        return LinearLayout(tuple((n, tuple(tuple(b[k] for k in keep) for b in bs))
                                  for n, bs in self.bases if n in ins_set),
                            tuple(self.outs[k] for k in keep))

    def sublayout_is_zero(self, ins: Iterable[str], outs: Iterable[str]) -> bool:
        sub = self.sublayout(ins, outs)
        return all(not any(b) for _, bs in sub.bases for b in bs)

    def free_variable_masks(self) -> tuple[tuple[str, int], ...]:
        """Per input dimension, the bits that change no output beyond what earlier bits
        (in order of dimension, then bit) already reach: zero and dependent bases."""
        solver = _Solver([])
        out = []
        for name, bs in self.bases:
            mask = 0
            for k, b in enumerate(bs):
                if not solver.add(self._flat(b)):
                    mask |= 1 << k
            out.append((name, mask))
        return tuple(out)

    def num_consecutive_in_out(self) -> int:
        """How many consecutive values of the first input dimension land on consecutive
        values of the first output dimension, with no other basis touching those low bits
        (a thread's vector width in Triton)."""
        if not self.bases or not self.outs:
            return 1
        first = self.bases[0][1]
        k = 0
        while k < len(first) and first[k] == (1 << k,) + (0,) * (len(self.outs) - 1):
            k += 1
        rest = list(first[k:]) + [b for _, bs in self.bases[1:] for b in bs]
        for b in rest:
            low = b[0] & -b[0]  # lowest set bit (0 if none)
            if b[0] and low < 1 << k:
                k = _log2(low)
        return 1 << k

    def ensure_not_smaller_than(self, shape: Sequence[tuple[str, int]]) -> LinearLayout:
        """Each output at least as large as ``shape`` says: a smaller output grows by the
        identity on more bits of the first input dimension (Triton's
        ``ensureLayoutNotSmallerThan``, used to cover a tile by repetition)."""
        result = self
        for name, want in shape:
            have = self.out_dim_size(name)
            if want > have:
                result = result * LinearLayout.identity1d(want // have, self.in_dims[0], name)
        return result

    def equal_ignoring_out_dim_sizes(self, other: LinearLayout) -> bool:
        return self.bases == other.bases and self.out_dims == other.out_dims

    # -- other worlds ---------------------------------------------------------------------

    def to_map(self) -> IndexingMap:
        """The exact :class:`IndexingMap`: one dimension per input, one result per output;
        output bit ``j`` is the sum mod 2 of the input bits whose bases have bit ``j``."""
        terms: list[Expr] = []
        bits = [(d, k) for d, (_, bs) in enumerate(self.bases) for k in range(len(bs))]
        cols = self._columns()
        results = []
        shift = 0
        for _, size in self.outs:
            value: list[Expr] = []
            for j in range(shift, shift + _log2(size)):
                used = [_bit(dim(d), k) for (d, k), c in zip(bits, cols) if c >> j & 1]
                if not used:
                    continue
                one = used[0] if len(used) == 1 else Mod(add(used), 2)
                value.append(scale(1 << (j - shift), one))
            shift += _log2(size)
            results.append(add(value) if value else add(terms))
        return simplify(IndexingMap.create([1 << len(bs) for _, bs in self.bases], results,
                                           names=list(self.in_dims)))

    def to_cute(self) -> object:
        """A CuTe ``shape:stride`` layout of the same function, for one input and one output
        dimension where XOR never carries (each basis a stride of the flattened input);
        raises :class:`MapError` (a swizzle: XOR mixes bits) otherwise."""
        if len(self.bases) != 1 or len(self.outs) != 1:
            raise MapError("to_cute needs one input and one output dimension (flatten_ins, "
                           "flatten_outs first)")
        bs = self.bases[0][1]
        if not bs:
            return Layout(1, 0)
        cute = Layout(tuple(2 for _ in bs), tuple(b[0] for b in bs))
        n = 1 << len(bs)
        if n > CHECK_LIMIT:
            raise TooLargeError(f"to_cute: {n} points to check; the limit is {CHECK_LIMIT}")
        xor = _xor_values([b[0] for b in bs])
        if not np.array_equal(layout_values(cute), xor):
            raise MapError("to_cute: the bases share bits, so XOR differs from a sum (a "
                           "swizzle); no shape:stride layout computes it")
        return coalesce(cute)

    def to_text(self, kind: str = "linear") -> str:
        """TTGIR's ``#ttg.linear<{register = [[...]], ...}>`` (``kind="shared"``:
        ``#ttg.shared_linear<{offset = ..., block = ...}, alignment = 16>`` is not
        guessed: pass the alignment with :meth:`to_shared_text`)."""
        body = ", ".join(f"{n} = [" + ", ".join("[" + ", ".join(map(str, b)) + "]" for b in bs)
                         + "]" for n, bs in self.bases)
        if kind != "linear":
            raise MapError(f"kind is 'linear'; for shared layouts use to_shared_text, not "
                           f"{kind!r}")
        return f"#ttg.linear<{{{body}}}>"

    def to_shared_text(self, alignment: int) -> str:
        body = ", ".join(f"{n} = [" + ", ".join("[" + ", ".join(map(str, b)) + "]" for b in bs)
                         + "]" for n, bs in self.bases)
        return f"#ttg.shared_linear<{{{body}}}, alignment = {alignment}>"

    @classmethod
    def from_gluon(cls, shape: Sequence[int], *, reg_bases: Sequence[Sequence[int]] = (),
                   lane_bases: Sequence[Sequence[int]] = (),
                   warp_bases: Sequence[Sequence[int]] = (),
                   block_bases: Sequence[Sequence[int]] = (),
                   offset_bases: Sequence[Sequence[int]] | None = None) -> LinearLayout:
        """Gluon's ``DistributedLinearLayout(reg_bases, lane_bases, warp_bases, block_bases,
        shape)`` -- or, with ``offset_bases``, ``SharedLinearLayout`` -- over ``dim0 ..``
        of the tensor ``shape``."""
        outs = [(f"dim{k}", int(s)) for k, s in enumerate(shape)]
        if offset_bases is not None:
            bases = [("offset", offset_bases), ("block", block_bases)]
        else:
            bases = [("register", reg_bases), ("lane", lane_bases), ("warp", warp_bases),
                     ("block", block_bases)]
        return cls.create(bases, outs, require_surjective=False)

    def _shown_(self) -> Shown:
        """A notebook shows who holds each element (a distributed layout) or each
        element's offset (a shared one), drawn (:mod:`symidx.layout.holders`); its text
        without matplotlib or past rank 2."""
        if len(self.outs) > 2 or not ({"lane", "offset"} & set(self.in_dims)) or \
                self.total_in_dim_size() > 1 << 14:
            return Shown(str(self))

        def draw() -> object:
            return drawing(self)

        return Shown(str(self), draw=draw)

    def __str__(self) -> str:
        if not self.bases and not self.outs:
            return "(empty layout)"
        lines = [f" - {n} is a size {1 << len(bs)} dimension" for n, bs in self.bases]
        for name, bs in self.bases:
            for k, b in enumerate(bs):
                lines.append(f"   {name}={1 << k} -> (" + ", ".join(map(str, b)) + ")")
        lines.append("where out dims are: [" + ", ".join(f"{n} (size {s})"
                                                        for n, s in self.outs) + "]")
        return "\n".join(lines)


def _prod(xs: Iterable[int]) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def _bit(e: Expr, k: int) -> Expr:
    return Mod(FloorDiv(e, 1 << k) if k else e, 2)


def _xor_values(bases: Sequence[int]) -> np.ndarray:
    values = np.zeros(1, dtype=np.int64)
    for b in bases:
        values = np.concatenate([values, values ^ b])
    return values


def _rank(columns: Sequence[int]) -> int:
    solver = _Solver([])
    return sum(solver.add(c) for c in columns)


class _Solver:
    """Gaussian elimination over F2 on int bit-vectors, columns kept in order: ``solve(y)``
    writes ``y`` as a XOR of the earliest independent columns (None if it cannot)."""

    def __init__(self, columns: Sequence[int]) -> None:
        self.pivots: dict[int, tuple[int, int]] = {}  # leading bit -> (vector, combination)
        self.count = 0
        for c in columns:
            self.add(c)

    def add(self, column: int) -> bool:
        """Add the next column; True when it is independent of the earlier ones."""
        combo = 1 << self.count
        self.count += 1
        v = column
        while v:
            top = v.bit_length() - 1
            if top not in self.pivots:
                self.pivots[top] = (v, combo)
                return True
            pv, pc = self.pivots[top]
            v ^= pv
            combo ^= pc
        return False

    def solve(self, target: int) -> int | None:
        combo = 0
        v = target
        while v:
            top = v.bit_length() - 1
            if top not in self.pivots:
                return None
            pv, pc = self.pivots[top]
            v ^= pv
            combo ^= pc
        return combo


def from_cute(layout: object, shape: Sequence[int] | None = None, in_dim: str = "offset",
              order: str = "col") -> LinearLayout:
    """A CuTe layout (``shape:stride``, or swizzled ``Sw o offset o layout``) as a linear
    layout from its 1-D index ``in_dim`` to its offset (``"offset"`` out dimension), or,
    given the tile ``shape``, to the coordinate ``dim0, dim1, ...`` of that offset (numbered
    ``order``: ``"col"`` first dimension fastest, ``"row"`` last fastest). Raises
    :class:`MapError` when the size is not a power of two or the function is not
    F2-linear (checked at every point)."""
    lay = as_layout(layout)
    if not isinstance(lay, (Layout, ComposedLayout)):
        raise MapError(f"from_cute needs a layout, got {lay}")
    inner = lay.inner if isinstance(lay, ComposedLayout) else lay
    n = layout_size(inner)
    if not _pow2(n):
        raise MapError(f"{lay}: size {n} is not a power of 2")
    if n > CHECK_LIMIT:
        raise TooLargeError(f"{lay}: {n} points to check; the limit is {CHECK_LIMIT}")
    values = composed_values(lay, np.arange(n, dtype=np.int64))
    if values.min() < 0:
        raise MapError(f"{lay} has negative offsets")
    bases = [int(values[1 << k]) for k in range(_log2(n))]
    if values[0] != 0 or not np.array_equal(values, _xor_values(bases)):
        raise MapError(f"{lay} is not linear over F2: its offsets are not the XOR of the "
                       f"offsets of its index bits")
    if shape is None:
        top = int(values.max())
        return LinearLayout(((in_dim, tuple((b,) for b in bases)),),
                            (("offset", 1 << top.bit_length()),))
    if not all(_pow2(s) for s in shape):
        raise MapError(f"tile shape {list(shape)} must be powers of 2")
    dims = list(shape) if order == "col" else list(reversed(shape))
    target = LinearLayout((), tuple((f"d{k}", s) for k, s in enumerate(dims)))
    if int(values.max()) >= _prod(shape):
        raise MapError(f"{lay} reaches offset {int(values.max())}, outside the tile "
                       f"{list(shape)}")
    vecs = [target._unflat(b) for b in bases]
    if order != "col":
        vecs = [tuple(reversed(v)) for v in vecs]
    return LinearLayout(((in_dim, tuple(vecs)),),
                        tuple((f"dim{k}", s) for k, s in enumerate(shape)))


_TTG = lazy_pattern(r"\s*#ttg\.(linear|shared_linear)\s*<\s*\{", re.S)


def parse_linear_layout(text: str, shape: Sequence[int] | None = None) -> LinearLayout:
    """Read TTGIR's ``#ttg.linear<{register = [[0, 1], ...], lane = [...], warp = [...],
    block = []}>`` or ``#ttg.shared_linear<{offset = [...], block = []}, alignment = N>``.

    Output dimensions are ``dim0, dim1, ...`` (one per value of a basis); their sizes come
    from ``shape`` (the tensor's) when given, else are inferred. Errors carry the column."""
    m = _TTG.match(text)
    if not m:
        raise ParseError("expected '#ttg.linear<{' or '#ttg.shared_linear<{'", text, 0)
    p = _ListParser(text, m.end())
    bases: list[tuple[str, list[list[int]]]] = []
    while True:
        p.space()
        if p.peek() == "}":
            p.pos += 1
            break
        p.space()
        name_at = p.pos
        name = p.name()
        if name in {n for n, _ in bases}:
            raise ParseError(f"input dimension {name!r} given twice", text, name_at)
        p.expect("=")
        bases.append((name, p.vectors()))
        p.space()
        if p.peek() == ",":
            p.pos += 1
        elif p.peek() != "}":
            raise ParseError("expected ',' or '}'", text, p.pos)
    if m.group(1) == "shared_linear":
        p.space()
        p.expect(",")
        p.space()
        if p.name() != "alignment":
            raise ParseError("expected 'alignment = N'", text, p.pos)
        p.expect("=")
        p.integer()
    p.expect(">")
    p.space()
    if p.pos != len(text):
        raise ParseError("unexpected text after the layout", text, p.pos)
    widths = {len(b) for _, bs in bases for b in bs}
    if len(widths) > 1:
        raise ParseError(f"bases have different lengths {sorted(widths)}", text, m.end())
    width = widths.pop() if widths else (len(shape) if shape is not None else 0)
    if shape is not None and len(shape) != width:
        raise ParseError(f"bases have {width} values, the shape {list(shape)} has "
                         f"{len(shape)} dimensions", text, m.end())
    outs: list[str] | list[tuple[str, int]]
    outs = ([f"dim{k}" for k in range(width)] if shape is None else
            [(f"dim{k}", int(s)) for k, s in enumerate(shape)])
    try:
        return LinearLayout.create(bases, outs, require_surjective=False)
    except MapError as e:
        raise ParseError(str(e), text, m.end()) from None


class _ListParser:
    def __init__(self, text: str, pos: int) -> None:
        self.text, self.pos = text, pos

    def space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, c: str) -> None:
        if self.peek() != c:
            raise ParseError(f"expected {c!r}", self.text, self.pos)
        self.pos += 1

    def token(self, pattern: str, what: str) -> re.Match[str]:
        """The text matching ``pattern`` after any space, consumed; else an error saying
        ``what`` was expected."""
        self.space()
        m = re.compile(pattern).match(self.text, self.pos)
        if not m:
            raise ParseError(f"expected {what}", self.text, self.pos)
        self.pos = m.end()
        return m

    def name(self) -> str:
        return self.token(r"[A-Za-z_][A-Za-z0-9_]*", "a dimension name").group(0)

    def integer(self) -> int:
        m = self.token(r"-?\d+", "an integer")
        value = int(m.group(0))
        if value < 0:
            raise ParseError("basis values are non-negative", self.text, m.start())
        return value

    def vectors(self) -> list[list[int]]:
        self.expect("[")
        out: list[list[int]] = []
        if self.peek() == "]":
            self.pos += 1
            return out
        while True:
            self.expect("[")
            vec: list[int] = []
            if self.peek() != "]":
                vec.append(self.integer())
                while self.peek() == ",":
                    self.pos += 1
                    vec.append(self.integer())
            self.expect("]")
            out.append(vec)
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect("]")
            return out
