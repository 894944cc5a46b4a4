"""**TransformerEngine fused attention** (``te_fused_attn_forward_ffi``,
``te_fused_attn_backward_ffi``; facts from TransformerEngine's ``fused_attn.h``, its JAX
FFI bindings and its tests). Forward operands ``q, k, v, bias, seed, q_cu_seqlens,
kv_cu_seqlens, ...`` (the rest unused by the ``bshd``/``sbhd`` formats), outputs ``O,
softmax_aux, rng_state, workspace``; backward operands ``q, k, v, bias, softmax_aux,
rng_state, O, dO, q_cu_seqlens, kv_cu_seqlens, ...``, outputs ``dq, dk, dv, dbias,
workspace`` (packed layouts pack their gradients as their inputs). ``qkv_layout`` (0-9:
``sb3hd`` ... ``bshd_bshd_bshd``) says where q, k and v live; head ``h`` of q uses head
``h floordiv (attn_heads / num_gqa_groups)`` of k and v. ``O[b, i, h, e]`` reads the whole
row ``q[b, i, h, :]``, ``k[b, j, g, :]`` and ``v[b, j, g, e]`` for every kv position ``j``
the mask allows; ``softmax_aux[b, h, i, 0]`` the same without ``v``. ``mask_type``: no mask,
padding (valid rows ``i < q_len[b]`` and columns ``j < kv_len[b]``, the lengths being
``cu_seqlens[b + 1] - cu_seqlens[b]``, runtime variables read from the cu_seqlens operands),
causal ``j <= i`` (top left) or ``j - i <= kv_len - q_len`` (bottom right), and the padded
forms; a sliding window ``i - left <= j <= i + right``. Padded rows of ``O`` and of the
gradients are zero (TransformerEngine's tests check it): they read only the lengths. The
backward pass recomputes the probabilities from ``softmax_aux`` (cuDNN's flash-attention
algorithm: ``P = exp(S - stats)``, ``dS = P * (dP - rowsum(dO * O))``), so ``dq`` and ``dk``
read ``q, k, v, O, dO, softmax_aux`` over the allowed pairs, and ``dv[b, j, g, e]`` reads
``q, k[b, j, g, :], softmax_aux`` and ``dO[b, i, h, e]`` only. Labelled: ``rng_state``
(derived from the seed), the workspace, ``softmax_aux`` of padded rows (unspecified: said
to read as a valid row), and input-to-output maps of padding masks (the run-time lengths
dropped). Dropout, a backward bias, and the ragged ``thd`` layouts are not modelled. A row
whose sequence has no kv element at all (``kv_len = 0``; or a kv column when ``q_len = 0``)
reads nothing; the rule says so with a range variable whose only constraint involves the
lengths, which :func:`symidx.core.simplify.remove_unused_symbols` drops (its maps then claim
that row's reads: a superset, sound, not labelled). Where the mask leaves every row some
column (and every column some row) without run-time lengths, that variable is left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sympy import Integer

from symidx._text import lazy_pattern
from symidx.core.expr import Expr, FloorDiv, dim, substitute, sym
from symidx.core.indexing_map import IndexingMap
from symidx.core.interval import Interval
from symidx.hlo import HloInstruction
from symidx.hlo.facts import require
from symidx.ops.basic import every_element
from symidx.ops.gpu_library.common import (
    Dims,
    Groups,
    LibraryCall,
    MapBuilder,
    invert,
    operand_dims,
    output_leaves,
)

ATTENTION_TARGETS = frozenset({"te_fused_attn_forward_ffi", "te_fused_attn_backward_ffi"})

_MLIR_ENTRY = lazy_pattern(r"(\w+)\s*=\s*(true|false|[-+0-9.eE]+)(?:\s*:\s*\w+)?")


def mlir_attributes(text: str) -> dict[str, int | float | bool]:
    """``{a = 1 : i64, b = true, c = 1.0e+00 : f64}`` (an MLIR dictionary, as the FFI's
    ``backend_config`` prints) as a dict; entries of other forms are skipped."""
    found: dict[str, int | float | bool] = {}
    for m in _MLIR_ENTRY.finditer(text):
        key, raw = m.group(1), m.group(2)
        if raw in ("true", "false"):
            found[key] = raw == "true"
            continue
        try:
            found[key] = int(raw)
        except ValueError:
            try:
                found[key] = float(raw)
            except ValueError:
                continue
    return found


NO_MASK, PADDING, CAUSAL, PADDING_CAUSAL, CAUSAL_BOTTOM_RIGHT, PADDING_CAUSAL_BOTTOM_RIGHT = \
    range(6)
#: A tensor's place in an operand (or output leaf): its position and, per dimension of
#: that array, the logical axis ("b", "s", "h", "d") or a packed constant index.
Template = tuple[int | str, ...]


@dataclass(frozen=True)
class _Tensor:
    position: int
    template: Template

    def place(self, b: Expr, s: Expr, h: Expr, d: Expr) -> list[Expr]:
        axes = {"b": b, "s": s, "h": h, "d": d}
        return [axes[t] if isinstance(t, str) else Integer(t) for t in self.template]

    def logical(self, builder: MapBuilder) -> dict[str, Expr]:
        """The logical (b, s, h, d) of an index of this tensor (the map's dims); a packed
        position is pinned by a constraint."""
        found: dict[str, Expr] = {}
        for k, t in enumerate(self.template):
            if isinstance(t, str):
                found[t] = dim(k)
            else:
                builder.where(dim(k), t, t)
        return found


def _layout(layout: int) -> tuple[_Tensor, _Tensor, _Tensor]:
    """Where q, k and v live for ``qkv_layout`` 0-9 (``sbhd`` 0-4, ``bshd`` 5-9)."""
    base: Template = ("s", "b", "h", "d") if layout < 5 else ("b", "s", "h", "d")
    group = layout % 5

    def packed(position: int, after: int, index: int) -> _Tensor:
        return _Tensor(position, base[:after] + (index,) + base[after:])

    if group == 0:  # 3HD
        return packed(0, 2, 0), packed(0, 2, 1), packed(0, 2, 2)
    if group == 1:  # H3D
        return packed(0, 3, 0), packed(0, 3, 1), packed(0, 3, 2)
    if group == 2:  # HD_2HD
        return _Tensor(0, base), packed(1, 2, 0), packed(1, 2, 1)
    if group == 3:  # HD_H2D
        return _Tensor(0, base), packed(1, 3, 0), packed(1, 3, 1)
    return _Tensor(0, base), _Tensor(1, base), _Tensor(2, base)


def _sizes(dims: Dims, tensor: _Tensor) -> dict[str, int]:
    """The sizes of the logical axes of ``tensor`` held in an array of ``dims``
    (:class:`ValueError` when the ranks differ or a packed index is out of range)."""
    if len(dims) != len(tensor.template) or any(
            isinstance(t, int) and not t < n for t, n in zip(tensor.template, dims, strict=True)):
        raise ValueError(f"{list(dims)} does not hold {tensor.template}")
    return {t: n for t, n in zip(tensor.template, dims, strict=True) if isinstance(t, str)}


class Attention(LibraryCall):
    def __init__(self, instr: HloInstruction, target: str) -> None:
        self.target = target
        self.instr = instr
        self.forward = target == "te_fused_attn_forward_ffi"
        cfg = mlir_attributes(instr.attributes.get("backend_config", ""))
        layout = int(cfg["qkv_layout"])
        require(0 <= layout <= 9, instr, f"qkv_layout {layout} (ragged thd) not modelled")
        require(float(cfg.get("dropout_probability", 0.0)) == 0.0, instr,
                "dropout not modelled")
        self.mask = int(cfg.get("mask_type", 0))
        require(0 <= self.mask <= 5, instr, f"mask_type {self.mask}")
        self.left = int(cfg.get("window_size_left", -1))
        self.right = int(cfg.get("window_size_right", -1))
        self.bottom_right = self.mask in (CAUSAL_BOTTOM_RIGHT, PADDING_CAUSAL_BOTTOM_RIGHT)
        require(not (self.bottom_right and (self.left >= 0 or self.right >= 0)), instr,
                "a sliding window with a bottom-right causal mask")
        self.causal = self.mask in (CAUSAL, PADDING_CAUSAL) or self.bottom_right
        self.padding = self.mask in (PADDING, PADDING_CAUSAL, PADDING_CAUSAL_BOTTOM_RIGHT)
        bias_type = int(cfg.get("bias_type", 0))
        ops = [operand_dims(instr, k) for k in range(len(instr.operands))]
        self.ops = ops
        require(len(ops) >= (7 if self.forward else 10), instr, "too few operands")
        self.q, self.k, self.v = _layout(layout)
        qs, ks, vs = (_sizes(ops[t.position], t) for t in (self.q, self.k, self.v))
        self.B, self.Sq, self.H, self.D = qs["b"], qs["s"], qs["h"], qs["d"]
        self.Skv, self.G, self.Dv = ks["s"], ks["h"], vs["d"]
        require(ks["b"] == vs["b"] == self.B and vs["s"] == self.Skv and vs["h"] == self.G
                and ks["d"] == self.D and self.G >= 1 and self.H % self.G == 0, instr,
                "q, k and v do not fit together")
        for key, value in (("attn_heads", self.H), ("num_gqa_groups", self.G),
                           ("q_max_seqlen", self.Sq), ("kv_max_seqlen", self.Skv),
                           ("input_batch", self.B)):
            require(key not in cfg or int(cfg[key]) == value, instr, f"{key} does not fit")
        bias = ops[3]
        self.bias = bias_type in (1, 2) and len(bias) == 4 and 0 not in bias
        if self.bias:
            require(bias[0] in (1, self.B) and bias[1] in (1, self.H) and
                    bias[2:] == (self.Sq, self.Skv), instr, "the bias does not fit")
            require(self.forward, instr, "a bias in the backward pass not modelled")
        cu = (5, 6) if self.forward else (8, 9)
        self.q_cu, self.kv_cu = cu
        require(ops[cu[0]] == ops[cu[1]] == (self.B + 1,), instr,
                "cu_seqlens do not have batch + 1 elements")
        outs = output_leaves(instr)
        self.outs = outs
        o_tensor = self.o = _Tensor(0, _unpacked(layout))
        o_dims = tuple(o_tensor.place(*(Integer(n) for n in (self.B, self.Sq, self.H,
                                                             self.Dv))))
        o_sizes = tuple(int(e) for e in o_dims)
        if self.forward:
            require(len(outs) == 4 and outs[0].dims == o_sizes
                    and outs[1].dims == (self.B, self.H, self.Sq, 1), instr,
                    "outputs do not fit")
            self.seed = 4
        else:
            require(ops[4] == (self.B, self.H, self.Sq, 1) and ops[6] == ops[7] == o_sizes,
                    instr, "softmax_aux, O or dO do not fit")
            require(len(outs) == 5 and all(outs[t.position].dims == ops[t.position]
                                           for t in (self.q, self.k, self.v)), instr,
                    "the gradients do not fit")

    # --- the mask ------------------------------------------------------------------------------

    def _lengths(self, b: MapBuilder, batch: Expr, which: int) -> tuple[Expr, Expr]:
        """(start, end) of a sequence: cu_seqlens[batch], cu_seqlens[batch + 1]."""
        position = self.q_cu if which == 0 else self.kv_cu
        top = self.B * (self.Sq if which == 0 else self.Skv)
        instr = self.instr.operands[position]
        lo = b.runtime(Interval(0, top), instr, batch)
        hi = b.runtime(Interval(0, top), instr, batch + 1)
        return lo, hi

    def _valid(self, b: MapBuilder, batch: Expr, index: Expr, which: int) -> None:
        """``index`` < the length of the sequence (0: q, 1: kv) of ``batch``."""
        lo, hi = self._lengths(b, batch, which)
        b.where(index + lo - hi, -self._big(), -1)

    def _big(self) -> int:
        return 2 * self.B * max(self.Sq, self.Skv) + 2 * max(self.Sq, self.Skv) + 2

    def _allowed(self, b: MapBuilder, batch: Expr, i: Expr, j: Expr, lengths: bool,
                 q_valid: bool = True) -> None:
        """The mask's constraints on query row ``i`` and kv column ``j``; ``lengths``: with
        the run-time sequence lengths of a padding mask (without them, only what holds for
        every length: a superset); ``q_valid``: row ``i`` must be a valid row."""
        padded = lengths and self.padding
        if padded:
            if q_valid:
                self._valid(b, batch, i, 0)
            self._valid(b, batch, j, 1)
        if self.bottom_right:
            if padded:
                qlo, qhi = self._lengths(b, batch, 0)
                klo, khi = self._lengths(b, batch, 1)
                b.where(j - i - khi + klo + qhi - qlo, -self._big(), 0)
            elif not self.padding:
                b.where(j - i, -self._big(), self.Skv - self.Sq)
        elif self.causal:
            b.where(j - i, -self._big(), 0)
        if self.left >= 0:
            b.where(i - j, -self._big(), self.left)
        if self.right >= 0:
            b.where(j - i, -self._big(), min(self.right, 0) if self.causal else self.right)

    @property
    def _every_row(self) -> bool:
        """Without run-time lengths, does the mask leave every query row some kv column?"""
        return all(self._span(i, row=True) for i in range(self.Sq))

    @property
    def _every_column(self) -> bool:
        """Without run-time lengths, does every kv column serve some query row?"""
        return all(self._span(j, row=False) for j in range(self.Skv))

    def _span(self, x: int, row: bool) -> bool:
        """Is some partner of row (or column) ``x`` allowed by the static mask?"""
        if self.padding:
            return False
        inf = max(self.Sq, self.Skv) + 1
        # j - i in [lo, hi]
        lo = -self.left if self.left >= 0 else -inf
        hi = min(self.right if self.right >= 0 else inf,
                 0 if self.causal and not self.bottom_right else inf,
                 self.Skv - self.Sq if self.bottom_right else inf)
        if row:  # j in [0, Skv - 1] and j - x in [lo, hi]
            return max(0, x + lo) <= min(self.Skv - 1, x + hi)
        return max(0, x - hi) <= min(self.Sq - 1, x - lo)

    # --- output-to-input -------------------------------------------------------------------------

    def reads(self, output: int) -> Groups:
        return self._reads(output, padding=True)

    def _reads(self, output: int, padding: bool) -> Groups:
        groups: Groups = [[] for _ in self.ops]
        shape = self.outs[output].dims
        if self.forward and output >= 2:
            if output == 2:
                groups[self.seed].append(every_element(shape, self.ops[self.seed]))
            else:
                groups = [[every_element(shape, dims)] for dims in self.ops]
            return groups
        if not self.forward and output >= 3:
            if output == 4:
                groups = [[every_element(shape, dims)] for dims in self.ops]
            return groups
        if self.forward:
            self._forward_reads(groups, output, shape, padding)
        else:
            self._backward_reads(groups, output, shape, padding)
        return [[m for m in g if not m.is_known_empty] for g in groups]

    def _forward_reads(self, groups: Groups, output: int, shape: Dims, padding: bool) -> None:
        per_group = self.H // self.G
        aux = output == 1  # softmax_aux[b, h, i, 0]
        pad = padding and self.padding

        def start() -> tuple[MapBuilder, dict[str, Expr]]:
            b = MapBuilder(shape)
            if aux:
                b.where(dim(3), 0, 0)
                return b, {"b": dim(0), "h": dim(1), "s": dim(2)}
            return b, self.o.logical(b)

        def add(position: int, make: Callable[[MapBuilder, dict[str, Expr], Expr], list[Expr]]
                ) -> None:
            b, axes = start()
            j = b.var(self.Skv)  # a kv column the row reads
            # the stats of a padded row are unspecified: read as a valid row's
            self._allowed(b, axes["b"], axes["s"], j, padding, q_valid=not aux)
            m = b.map(make(b, axes, j))
            # a column exists for every row: no need to say so (with run-time lengths,
            # kv_len >= 1 must hold: the range variable keeps that condition)
            groups[position].append(_without_first_range(m) if not pad and self._every_row
                                    else m)

        def g(axes: dict[str, Expr]) -> Expr:
            return FloorDiv(axes["h"], per_group) if per_group > 1 else axes["h"]

        add(self.q.position, lambda b, a, j: self.q.place(a["b"], a["s"], a["h"],
                                                         b.var(self.D)))
        add(self.k.position, lambda b, a, j: self.k.place(a["b"], j, g(a), b.var(self.D)))
        if not aux:
            add(self.v.position, lambda b, a, j: self.v.place(a["b"], j, g(a), a["d"]))
        if self.bias:
            bias = self.ops[3]
            add(3, lambda b, a, j: [a["b"] if bias[0] > 1 else Integer(0),
                                    a["h"] if bias[1] > 1 else Integer(0), a["s"], j])
        if self.padding:  # the lengths: q's decide the row, kv's matter for a valid row
            for position, guard in ((self.q_cu, False), (self.kv_cu, not aux)):
                b, axes = start()
                if guard and pad:
                    self._valid(b, axes["b"], axes["s"], 0)
                groups[position].append(b.map([axes["b"] + b.var(2)]))

    def _backward_reads(self, groups: Groups, output: int, shape: Dims, padding: bool) -> None:
        per_group = self.H // self.G
        pad = padding and self.padding
        tensor = (self.q, self.k, self.v)
        # an output leaf may pack several gradients (dkv, dqkv): one set of maps each
        for role, t in enumerate(tensor):
            if t.position != output:
                continue
            self._gradient_reads(groups, role, t, shape, pad, per_group)
        if self.padding:
            for position, which in ((self.q_cu, 0), (self.kv_cu, 1)):
                for role, t in enumerate(tensor):
                    if t.position != output:
                        continue
                    b = MapBuilder(shape)
                    axes = t.logical(b)
                    own = 0 if role == 0 else 1
                    if which != own and pad:  # the other side's lengths matter for valid rows
                        self._valid(b, axes["b"], axes["s"], own)
                    groups[position].append(b.map([axes["b"] + b.var(2)]))

    def _gradient_reads(self, groups: Groups, role: int, t: _Tensor, shape: Dims, pad: bool,
                        per_group: int) -> None:
        """The maps of gradient ``role`` (0 dq, 1 dk, 2 dv) held in output ``t``."""
        def start() -> tuple[MapBuilder, Expr, Expr, Expr, Expr, Expr]:
            """builder, batch, q row i, q head h, kv column j, kv head g."""
            b = MapBuilder(shape)
            axes = t.logical(b)
            if role == 0:
                i, h = axes["s"], axes["h"]
                j = b.var(self.Skv)
                g = FloorDiv(h, per_group) if per_group > 1 else h
            else:
                j, g = axes["s"], axes["h"]
                i = b.var(self.Sq)
                h = g * per_group + b.var(per_group) if per_group > 1 else g
            self._allowed(b, axes["b"], i, j, pad)
            return b, axes["b"], i, h, j, g

        def add(position: int, make: Callable[[MapBuilder, Expr, Expr, Expr, Expr, Expr],
                                              list[Expr]]) -> None:
            b, batch, i, h, j, g = start()
            m = b.map(make(b, batch, i, h, j, g))
            always = self._every_row if role == 0 else self._every_column
            groups[position].append(_without_first_range(m) if not pad and always else m)

        own = t.logical(MapBuilder(shape))
        e = own["d"]
        add(self.q.position, lambda b, n, i, h, j, g: self.q.place(n, i, h, b.var(self.D)))
        add(self.k.position, lambda b, n, i, h, j, g: self.k.place(n, j, g, b.var(self.D)))
        add(4, lambda b, n, i, h, j, g: [n, h, i, Integer(0)])
        if role == 2:
            add(7, lambda b, n, i, h, j, g: self.o.place(n, i, h, e))
            return
        add(self.v.position, lambda b, n, i, h, j, g: self.v.place(n, j, g, b.var(self.Dv)))
        add(6, lambda b, n, i, h, j, g: self.o.place(n, i, h, b.var(self.Dv)))
        add(7, lambda b, n, i, h, j, g: self.o.place(n, i, h, b.var(self.Dv)))

    # --- input-to-output: the output-to-input maps inverted --------------------------------------

    def reached(self, operand: int) -> Groups:
        dims = self.ops[operand]
        groups: Groups = []
        for output, shape in enumerate(self.outs):
            if 0 in dims or 0 in shape.dims:
                groups.append([])
                continue
            maps = self._reads(output, padding=False)[operand]
            groups.append([invert(m, dims) for m in maps])
        return groups

    def reason(self, output: int | None, backward: bool = True) -> str | None:
        if output is None:
            found = [r for r in (self.reason(k, backward) for k in range(len(self.outs))) if r]
            return found[0] if found else None
        if self.forward and output == 2:
            return f"custom-call {self.target} rng_state (derived from the seed)"
        if output == len(self.outs) - 1:
            return f"custom-call {self.target} workspace (scratch)"
        if self.forward and output == 1 and self.padding:
            return f"custom-call {self.target} softmax_aux of padded rows (unspecified)"
        if not backward and self.padding:
            return f"custom-call {self.target} padding mask (run-time lengths not applied)"
        return None


def _without_first_range(m: IndexingMap) -> IndexingMap:
    """``m`` without range variable ``s0`` and the constraints on it, when ``s0`` only
    says that some value of it exists (it is in no result) and one always does."""
    first = sym(0)
    if not m.num_ranges or any(first in r.free_symbols for r in m.results):
        return m
    shift = {sym(k): sym(k - 1) for k in range(1, m.num_ranges)}
    results = substitute(list(m.results), shift)
    constraints = [(substitute([e], shift)[0], iv) for e, iv in m.constraints
                   if first not in e.free_symbols]
    return IndexingMap.create(m.dims, results, m.ranges[1:], m.rts, constraints)


def _unpacked(layout: int) -> Template:
    return ("s", "b", "h", "d") if layout < 5 else ("b", "s", "h", "d")
