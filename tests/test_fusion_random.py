"""Random fused computations: their maps are what executing them says.

hypothesis builds small fusions from the ops symidx composes (elementwise, transpose,
reverse, slice, pad, broadcast, reduce, reshape, concatenate, dynamic-slice,
dynamic-update-slice, gather with iota or constant indices, a nested fusion), with shared
operands, diamonds and tuple roots. The reference interpreter runs each for every value of
its integer parameter (the one runtime start index, or beyond, where HLO clamps it). Every
run must read only what the maps give (sound); over all runs, the maps must give exactly
what is read, unless a gather reads a table of several indices (a map cannot say which
row reads which index). Input-to-output maps must be the inverse relation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_interpreter import execute, map_relation

from symidx.fusion import called_computation, output_maps, parameter_maps
from symidx.hlo import Shape, parse_hlo
from symidx.ops import num_outputs

MAX_SIZE = 48
ADD = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""


@dataclass
class Builder:
    """The fused computation being drawn: its lines and its float values' shapes."""

    lines: list[str] = field(default_factory=list)
    values: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)
    params: list[str] = field(default_factory=list)
    #: The integer parameter p0 is some start index already (it may be used only once, so
    #: that no two runtime variables hold the same value: maps cannot say they are equal).
    offset_used: bool = False
    #: A gather reads a table of several different indices: no map can be exact.
    inexact: bool = False
    #: Computations fused inside the fusion.
    computations: list[str] = field(default_factory=list)

    def fresh(self) -> str:
        return f"v{len(self.lines)}"

    def emit(self, dims: tuple[int, ...], text: str, value: bool = True,
             element: str = "f32") -> str:
        """Add ``name = element[dims] text``; ``value``: a float value later ops may use."""
        name = self.fresh()
        self.lines.append(f"  {name} = {shape(dims, element)} {text}")
        if value:
            self.values.append((name, dims))
        return name

    def parameter(self, type_text: str) -> str:
        name = f"p{len(self.params)}"
        self.lines.append(f"  {name} = {type_text} parameter({len(self.params)})")
        self.params.append(type_text)
        return name


def shape(dims: tuple[int, ...], element: str = "f32") -> str:
    return f"{element}[{','.join(map(str, dims))}]"


def size(dims: tuple[int, ...]) -> int:
    return int(np.prod(dims, dtype=np.int64)) if dims else 1


def draw_op(draw: Any, b: Builder) -> None:
    name, dims = draw(st.sampled_from(b.values))
    rank = len(dims)
    kind = draw(st.sampled_from(["unary", "binary", "transpose", "reverse", "slice", "pad",
                                 "broadcast", "reduce", "reshape", "concatenate",
                                 "dynamic-slice", "dynamic-update-slice", "gather",
                                 "nested"]))
    if kind == "unary":
        b.emit(dims, f"{draw(st.sampled_from(['negate', 'exponential']))}({name})")
    elif kind == "binary":
        same = [n for n, d in b.values if d == dims]
        b.emit(dims, f"add({name}, {draw(st.sampled_from(same))})")
    elif kind == "transpose" and rank > 1:
        perm = draw(st.permutations(range(rank)))
        b.emit(tuple(dims[p] for p in perm),
               f"transpose({name}), dimensions={{{','.join(map(str, perm))}}}")
    elif kind == "reverse" and rank:
        axes = sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1)))
        b.emit(dims, f"reverse({name}), dimensions={{{','.join(map(str, axes))}}}")
    elif kind == "slice" and rank:
        parts, out = [], []
        for n in dims:
            start = draw(st.integers(0, n - 1))
            limit = draw(st.integers(start + 1, n))
            stride = draw(st.integers(1, 2))
            parts.append(f"[{start}:{limit}:{stride}]")
            out.append(-(-(limit - start) // stride))
        b.emit(tuple(out), f"slice({name}), slice={{{', '.join(parts)}}}")
    elif kind == "pad" and rank:
        parts, out = [], []
        for n in dims:
            lo, hi, interior = (draw(st.integers(-1, 2)), draw(st.integers(-1, 2)),
                                draw(st.integers(0, 1)))
            size_out = lo + hi + n + (n - 1) * interior
            if size_out < 1:
                return
            parts.append(f"{lo}_{hi}_{interior}")
            out.append(size_out)
        if size(tuple(out)) > MAX_SIZE:
            return
        zero = b.emit((), "constant(0)", value=False)
        b.emit(tuple(out), f"pad({name}, {zero}), padding={'x'.join(parts)}")
    elif kind == "broadcast" and rank < 3:
        at, extra = draw(st.integers(0, rank)), draw(st.integers(1, 3))
        out = dims[:at] + (extra,) + dims[at:]
        if size(out) > MAX_SIZE:
            return
        kept = [i for i in range(rank + 1) if i != at]
        b.emit(out, f"broadcast({name}), dimensions={{{','.join(map(str, kept))}}}")
    elif kind == "reduce" and rank > 1:
        axis = draw(st.integers(0, rank - 1))
        zero = b.emit((), "constant(0)", value=False)
        b.emit(dims[:axis] + dims[axis + 1:],
               f"reduce({name}, {zero}), dimensions={{{axis}}}, to_apply=add")
    elif kind == "reshape" and rank:
        total = size(dims)
        factors = [f for f in range(2, total) if total % f == 0]
        if rank > 1 or not factors:
            b.emit((total,), f"reshape({name})")  # collapse
        else:
            f = draw(st.sampled_from(factors))
            b.emit((f, total // f), f"reshape({name})")  # expand
    elif kind == "concatenate" and rank:
        axis = draw(st.integers(0, rank - 1))
        out = dims[:axis] + (2 * dims[axis],) + dims[axis + 1:]
        if size(out) > MAX_SIZE:
            return
        b.emit(out, f"concatenate({name}, {name}), dimensions={{{axis}}}")
    elif kind == "dynamic-slice" and rank:
        sizes = tuple(draw(st.integers(1, n)) for n in dims)
        starts = [start_index(draw, b, n - s) for n, s in zip(dims, sizes)]
        b.emit(sizes, f"dynamic-slice({name}, {', '.join(starts)}), "
                      f"dynamic_slice_sizes={{{','.join(map(str, sizes))}}}")
    elif kind == "dynamic-update-slice" and rank:
        update = [(n, d) for n, d in b.values if len(d) == rank
                  and all(u <= v for u, v in zip(d, dims))]
        upd, udims = draw(st.sampled_from(update))
        starts = [start_index(draw, b, n - u) for n, u in zip(dims, udims)]
        b.emit(dims, f"dynamic-update-slice({name}, {upd}, {', '.join(starts)})")
    elif kind == "nested" and rank:
        nested(draw, b, name, dims)
    elif kind == "gather" and rank:
        rows = draw(st.integers(1, 6))
        if draw(st.booleans()):
            indices = b.emit((rows, 1), "iota(), iota_dimension=0", False, "s32")
        else:
            table = [draw(st.integers(-2, dims[0] + 2))] * rows if draw(st.booleans()) \
                else [draw(st.integers(-2, dims[0] + 2)) for _ in range(rows)]
            b.inexact |= len(set(table)) > 1
            literal = ",".join(f"{{{v}}}" for v in table)
            indices = b.emit((rows, 1), f"constant({{{literal}}})", False, "s32")
        out = (rows,) + dims[1:]
        if size(out) > MAX_SIZE:
            return
        offset_dims = ",".join(str(i) for i in range(1, rank))
        slice_sizes = ",".join(["1", *map(str, dims[1:])])
        b.emit(out, f"gather({name}, {indices}), offset_dims={{{offset_dims}}}, "
                    f"collapsed_slice_dims={{0}}, start_index_map={{0}}, index_vector_dim=1, "
                    f"slice_sizes={{{slice_sizes}}}")


def nested(draw: Any, b: Builder, name: str, dims: tuple[int, ...]) -> None:
    """A fusion inside the fusion: a dynamic-slice whose start (along dimension 0) is a
    parameter of the inner computation, reversed along dimension 0."""
    rows = draw(st.integers(1, dims[0]))
    out = (rows,) + dims[1:]
    inner = f"n{len(b.computations)}"
    zeros = ", ".join(["o"] + ["z"] * (len(dims) - 1))
    b.computations.append(
        f"{inner} {{\n  x = {shape(dims)} parameter(0)\n  o = s32[] parameter(1)\n"
        f"  z = s32[] constant(0)\n  ds = {shape(out)} dynamic-slice(x, {zeros}), "
        f"dynamic_slice_sizes={{{','.join(map(str, out))}}}\n"
        f"  ROOT r = {shape(out)} reverse(ds), dimensions={{0}}\n}}\n")
    start = start_index(draw, b, dims[0] - rows)
    b.emit(out, f"fusion({name}, {start}), kind=kLoop, calls={inner}")


def start_index(draw: Any, b: Builder, last: int) -> str:
    """A scalar start index: a constant (possibly out of range, HLO clamps it) or the
    integer parameter ``p0``."""
    if not b.offset_used and draw(st.booleans()):
        b.offset_used = True
        return "p0"
    return b.emit((), f"constant({draw(st.integers(-2, last + 2))})", False, "s32")


@st.composite
def fusions(draw: Any) -> tuple[str, bool]:
    """HLO text of a module whose root fuses a random computation, and whether its maps can
    be exact (see :attr:`Builder.inexact`)."""
    b = Builder()
    b.parameter("s32[]")
    for _ in range(draw(st.integers(1, 2))):
        rank = draw(st.integers(1, 3))
        dims = tuple(draw(st.integers(1, 4)) for _ in range(rank))
        name = b.parameter(shape(dims))
        b.values.append((name, dims))
    for _ in range(draw(st.integers(1, 6))):
        draw_op(draw, b)
    root, root_dims = b.values[-1]
    if draw(st.booleans()) and len(b.values) > 1:
        other, other_dims = draw(st.sampled_from(b.values[:-1]))
        out = f"({shape(root_dims)}, {shape(other_dims)})"
        b.lines.append(f"  ROOT t = {out} tuple({root}, {other})")
    else:
        out = shape(root_dims)
        b.lines.append(f"  ROOT r = {out} copy({root})")
    args = ", ".join(f"p{k}" for k in range(len(b.params)))
    entry = "\n".join(f"  p{k} = {t} parameter({k})" for k, t in enumerate(b.params))
    return (f"HloModule random\n{ADD}\n" + "".join(b.computations)
            + "f {\n" + "\n".join(b.lines) + "\n}\n"
            f"ENTRY e {{\n{entry}\n  ROOT fusion = {out} fusion({args}), kind=kLoop, "
            f"calls=f\n}}\n"), not b.inexact


@settings(max_examples=40)
@given(fusions())
def test_random_fusion_maps_match_execution(case: tuple[str, bool]) -> None:
    """For every start index p0 can hold (and some beyond, which HLO clamps), the maps
    contain what the run reads; over all of them, exactly (a map with a runtime variable
    gives what some value of it reads)."""
    text, exact = case
    fusion = parse_hlo(text).entry.root
    comp = called_computation(fusion)
    assert comp is not None
    reach = max(max(i.shape.dims, default=1) for i in comp.instructions
                if isinstance(i.shape, Shape))
    runs = [execute(comp, [np.int64(v)] + [None] * (len(comp.parameters) - 1))
            for v in range(-2, reach + 3)]
    for output in range(num_outputs(fusion)):
        out_dims = comp.root.shape.dims if num_outputs(fusion) == 1 \
            else comp.root.shape.elements[output].dims
        for k, reached in enumerate(parameter_maps(comp, output)):
            assert reached.unsupported is None
            whole = map_relation(reached.maps, out_dims, comp.parameters[k].shape.dims)
            read = np.unique(np.concatenate([run.relation(k, output) for run in runs]))
            assert np.isin(read, whole).all(), f"parameter {k}: unsound\n{text}"
            if exact:
                assert np.array_equal(read, whole), f"parameter {k}: not exact\n{text}"
            forward = output_maps(comp, k)[output]
            inverse = map_relation(forward.maps, comp.parameters[k].shape.dims, out_dims)
            assert np.array_equal(_transposed(inverse, comp.parameters[k].shape.dims, out_dims),
                                  whole), f"parameter {k}: input-to-output differs\n{text}"


def _transposed(codes: np.ndarray, source: tuple[int, ...], target: tuple[int, ...]
                ) -> np.ndarray:
    """Pair codes ``s * T + t`` as ``t * S + s``."""
    n_target, n_source = size(target), size(source)
    return np.unique((codes % n_target) * n_source + codes // n_target)
