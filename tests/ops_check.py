"""Checks shared by the op-rule tests: evaluate a map's image with concrete runtime values,
compare output-to-input maps with the reference semantics, and check that input-to-output
is the inverse relation of output-to-input.

Runtime variables take the values the op uses: an element of ``data`` read through the
variable's provenance, clamped into its interval as HLO clamps start indices -- or, with
``skip`` (scatter), a value outside the interval means the map reads nothing. A variable
with ``hlo`` ``participant`` is the participant's rank, ``data["participant"]``.
Collectives are checked per participant against the reference's relation between
(participant, index) pairs (:func:`check_collective`).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterable, Sequence

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st

from helpers import assert_same_function
from reference_hlo import (
    Index,
    Values,
    box,
    collective_dependencies,
    dependencies,
    finite_semantics,
    out_dims,
    static_dependencies,
)
from symidx import ops
from symidx.core.indexing_map import IndexingMap, RuntimeVar
from symidx.core.syntax import parse_map
from symidx.fusion import Analysis, scan_input_to_output, scan_output_to_input
from symidx.fusion.scan import over_approximation
from symidx.hlo import HloComputation, HloInstruction, Shape, TupleShape, parse_hlo
from symidx.hlo.facts import hlo_reference
from symidx.ops import num_outputs
from symidx.ops.collectives import PARTICIPANT

Data = dict[str, np.ndarray | int]


def output_to_input(instr: HloInstruction, output: int = 0, assume_finite: bool = False
                    ) -> list[list[IndexingMap]]:
    """The op's maps: its rule, or for ``scan`` (a loop over a called computation, which
    the fusion floor analyses) the scan's own maps; under ``finite`` with
    ``assume_finite``."""
    if instr.opcode == "scan":
        return scan_output_to_input(instr, output,
                                    analysis=Analysis(assume_finite=assume_finite))[0]
    return ops.output_to_input(instr, output, assume_finite=assume_finite)


def opaque_reason(instr: HloInstruction) -> str | None:
    """Why the op's maps over-approximate, or None when they are exact."""
    if instr.opcode == "scan":
        return over_approximation(instr, Analysis().parameters_of)
    return ops.opaque_reason(instr)


def input_to_output(instr: HloInstruction, operand: int, assume_finite: bool = False
                    ) -> list[list[IndexingMap]]:
    """:func:`output_to_input` the other way."""
    if instr.opcode == "scan":
        return scan_input_to_output(instr, operand,
                                    analysis=Analysis(assume_finite=assume_finite))[0]
    return ops.input_to_output(instr, operand, assume_finite=assume_finite)

EXAMPLES = settings(max_examples=100)

dim_size = st.integers(1, 4)


def shapes(min_rank: int = 0, max_rank: int = 3, sizes=dim_size) -> st.SearchStrategy:
    return st.lists(sizes, min_size=min_rank, max_size=max_rank).map(tuple)


def text(dtype: str, dims, layout=None) -> str:
    """HLO shape text: ``f32[2,3]``, with ``{1,0}`` when a layout is given."""
    body = f"{dtype}[{','.join(map(str, dims))}]"
    return body + ("{" + ",".join(map(str, layout)) + "}" if layout is not None else "")


def lst(values) -> str:
    """``{1,2}``."""
    return "{" + ",".join(map(str, values)) + "}"


def values_for(draw, dims, hi: int, lo: int = -2) -> np.ndarray:
    """Random integers in ``[lo, hi + 2]`` of shape ``dims`` (``draw`` draws from a
    strategy)."""
    count = int(np.prod(dims)) if dims else 1
    flat = draw(st.lists(st.integers(lo, hi + 2), min_size=count, max_size=count))
    return np.array(flat, dtype=np.int64).reshape(dims)

CALLED = """
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
sum2 {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  s0 = f32[] add(a0, b0)
  s1 = f32[] add(a1, b1)
  ROOT t = (f32[], f32[]) tuple(s0, s1)
}
argmax2 {
  a0 = f32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  gt = pred[] compare(b0, a0), direction=GT
  nan = pred[] compare(b0, b0), direction=NE
  pick = pred[] or(gt, nan)
  v = f32[] select(pick, b0, a0)
  eq = pred[] compare(b0, a0), direction=EQ
  lower = pred[] compare(b1, a1), direction=LT
  tie = pred[] and(eq, lower)
  pick_index = pred[] or(pick, tie)
  i = s32[] select(pick_index, b1, a1)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
set {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] copy(b)
}
set2 {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  ROOT t = (f32[], f32[]) tuple(b0, b1)
}
add_set2 {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  s0 = f32[] add(a0, b0)
  ROOT t = (f32[], f32[]) tuple(s0, b1)
}
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
lt2 {
  a0 = f32[] parameter(0)
  b0 = f32[] parameter(1)
  a1 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  ROOT c = pred[] compare(a0, b0), direction=LT
}
lt2_both {
  a0 = f32[] parameter(0)
  b0 = f32[] parameter(1)
  a1 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  first = pred[] compare(a0, b0), direction=LT
  same = pred[] compare(a0, b0), direction=EQ
  second = pred[] compare(a1, b1), direction=LT
  tie = pred[] and(same, second)
  ROOT c = pred[] or(first, tie)
}
lt2_second {
  a0 = f32[] parameter(0)
  b0 = f32[] parameter(1)
  a1 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  ROOT c = pred[] compare(a1, b1), direction=GT
}
lt3 {
  a0 = f32[] parameter(0)
  b0 = f32[] parameter(1)
  a1 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  a2 = f32[] parameter(4)
  b2 = f32[] parameter(5)
  ROOT c = pred[] compare(a0, b0), direction=LT
}
"""


def build(params: Sequence[str], root: str, extra: Sequence[str] = ()) -> HloInstruction:
    """The root of a module with parameters ``p0 = <params[0]> parameter(0)``, ..., the
    ``extra`` lines, and ``ROOT r = <root>``."""
    return build_computation(params, root, extra).root


def build_computation(params: Sequence[str], root: str, extra: Sequence[str] = ()
                      ) -> HloComputation:
    """The entry computation :func:`build` makes (to reach its other instructions)."""
    lines = [f"  p{k} = {shape} parameter({k})" for k, shape in enumerate(params)]
    lines += [f"  {line}" for line in extra]
    text = "HloModule m\n" + CALLED + "ENTRY e {\n" + "\n".join(lines) \
        + f"\n  ROOT r = {root}\n}}\n"
    return parse_hlo(text).entry


def assert_map(got: IndexingMap, text: str) -> None:
    """``got`` relates the same pairs as the map ``text`` (runtime variables as variables,
    their provenance not compared: the text format has none)."""
    plain = got.replace(rts=[RuntimeVar(v.bounds) for v in got.rts])
    assert_same_function(plain, parse_map(text))


def data_of(instr: HloInstruction, values: Values) -> Data:
    """Runtime values by the ``hlo`` name of the instruction holding them: the operands in
    ``values``, and every constant operand."""
    data: Data = {hlo_reference(op): np.array(op.literal) for op in instr.operands
                  if op.opcode == "constant" and op.literal is not None}
    data.update({hlo_reference(instr.operands[k]): v for k, v in values.items()})
    return data


def runtime_values(m: IndexingMap, point: Index, symbols: tuple[int, ...], data: Data,
                   skip: bool) -> list[int] | None:
    """The runtime variables' values at ``point`` (None: the map reads nothing there)."""
    values = []
    for v in m.rts:
        if v.source == PARTICIPANT:
            assert v.map is None
            raw = int(data[str(PARTICIPANT)])  # type: ignore[arg-type]
        else:
            assert v.map is not None, "runtime variable without provenance"
            element = v.map.evaluate(point, symbols[:v.map.num_ranges])
            raw = int(data[str(v.source)][element])  # type: ignore[index]
        if raw not in v.bounds and skip:
            return None
        values.append(max(v.bounds.lo, min(v.bounds.hi, raw)))
    return values


def image(m: IndexingMap, point: Index, data: Data, skip: bool = False) -> set[Index]:
    """The targets of ``point``: every range-variable value, runtime variables at the values
    the op uses (see the module docstring)."""
    if m.is_known_empty or not all(v in b for v, b in zip(point, m.dims, strict=True)):
        return set()
    found = set()
    for symbols in itertools.product(*(range(b.lo, b.hi + 1) for b in m.ranges)):
        rts = runtime_values(m, point, symbols, data, skip)
        if rts is not None and m.constraints_hold(point, symbols, rts):
            found.add(m.evaluate(point, symbols, rts))
    return found


def union_image(maps: Iterable[IndexingMap], point: Index, data: Data, skip: bool = False
                ) -> set[Index]:
    result: set[Index] = set()
    for m in maps:
        result |= image(m, point, data, skip)
    return result


def _in_box(index: Index, dims: Sequence[int]) -> bool:
    return len(index) == len(dims) and all(0 <= v < n for v, n in zip(index, dims, strict=True))


def inside(images: Iterable[Index], dims: Sequence[int], *where: object) -> set[Index]:
    """Every image, each asserted to be an index of the array of extent ``dims`` (a map
    never sends an index outside the array it maps into); ``where`` names the check."""
    found = set(images)
    outside = sorted(i for i in found if not _in_box(i, dims))
    assert not outside, ("images outside", list(dims), *where, outside[:6])
    return found


def operand_dims(instr: HloInstruction, k: int) -> tuple[int, ...]:
    shape = instr.operands[k].shape
    if isinstance(shape, TupleShape):  # get-tuple-element reads one element of a tuple
        shape = shape.elements[instr.tuple_index or 0]
    assert isinstance(shape, Shape)
    return shape.dims


def check_output_to_input(instr: HloInstruction, values: Values | None = None,
                          over: Sequence[int] = (), output: int = 0, skip: bool = False,
                          assume_finite: bool = False) -> None:
    """Every output element reads exactly the map's image (a superset for operands in
    ``over``, where the rule over-approximates), under the semantics ``assume_finite``
    names."""
    values = values or {}
    data = data_of(instr, values)
    groups = output_to_input(instr, output, assume_finite)
    assert len(groups) == len(instr.operands)
    with finite_semantics() if assume_finite else contextlib.nullcontext():
        deps = dependencies(instr, values, output)
    for o, reads in deps.items():
        for k, group in enumerate(groups):
            dims = operand_dims(instr, k)
            got = inside(union_image(group, o, data, skip), dims, instr.opcode, o, k)
            if k in over:
                assert reads[k] <= got, (instr.opcode, o, k, reads[k] - got)
            else:
                assert got == reads[k], (instr.opcode, o, k, sorted(got ^ reads[k])[:6])


def relation_out_to_in(instr: HloInstruction, k: int, output: int, data: Data,
                       skip: bool = False, assume_finite: bool = False
                       ) -> set[tuple[Index, Index]]:
    group = output_to_input(instr, output, assume_finite)[k]
    dims = operand_dims(instr, k)
    return {(o, i) for o in box(out_dims(instr, output))
            for i in inside(union_image(group, o, data, skip), dims, instr.opcode, o, k)}


def relation_in_to_out(instr: HloInstruction, k: int, output: int, data: Data,
                       skip: bool = False, assume_finite: bool = False
                       ) -> set[tuple[Index, Index]]:
    group = input_to_output(instr, k, assume_finite)[output]
    dims = out_dims(instr, output)
    return {(o, i) for i in box(operand_dims(instr, k))
            for o in inside(union_image(group, i, data, skip), dims, instr.opcode, k, i)}


def check_inverse(instr: HloInstruction, values: Values | None = None, skip: bool = False,
                  assume_finite: bool = False) -> None:
    """For every operand and output: input-to-output relates exactly the pairs
    output-to-input does (with the same runtime values)."""
    data = data_of(instr, values or {})
    for k in range(len(instr.operands)):
        assert len(input_to_output(instr, k)) == num_outputs(instr)
        for output in range(num_outputs(instr)):
            forward = relation_out_to_in(instr, k, output, data, skip, assume_finite)
            backward = relation_in_to_out(instr, k, output, data, skip, assume_finite)
            assert forward == backward, (instr.opcode, k, output,
                                         sorted(forward ^ backward)[:6])


def check(instr: HloInstruction, values: Values | None = None, over: Sequence[int] = (),
          skip: bool = False, assume_finite: bool = False) -> None:
    """Both checks, on every output (under the ``finite`` semantics with
    ``assume_finite``)."""
    for output in range(num_outputs(instr)):
        check_output_to_input(instr, values, over, output, skip, assume_finite)
    check_inverse(instr, values, skip, assume_finite)


def static_image(m: IndexingMap, point: Index, known: Data) -> set[Index]:
    """The targets of ``point`` with every runtime variable over its whole interval (the
    map's meaning without run-time values) -- except those held by a constant in
    ``known``, read through their provenance (a value outside the interval: no target)."""
    if m.is_known_empty or not all(v in b for v, b in zip(point, m.dims, strict=True)):
        return set()
    free = [i for i, v in enumerate(m.rts) if str(v.source) not in known]
    boxes = [range(b.lo, b.hi + 1) for b in m.ranges] + [
        range(m.rts[i].bounds.lo, m.rts[i].bounds.hi + 1) for i in free]
    found = set()
    for values in itertools.product(*boxes):
        symbols = values[:m.num_ranges]
        rts: list[int] = []
        for i, v in enumerate(m.rts):
            if i in free:
                rts.append(values[m.num_ranges + free.index(i)])
                continue
            assert v.map is not None
            rts.append(int(known[str(v.source)][v.map.evaluate(point, symbols[:v.map.num_ranges])]))
        if m.constraints_hold(point, symbols, rts):
            found.add(m.evaluate(point, symbols, rts))
    return found


def check_static(instr: HloInstruction, exact: bool = True) -> None:
    """With runtime variables over their intervals: output-to-input maps read exactly (or,
    without ``exact``, at least) what the op reads for some value of its non-constant
    integer operands, and (when ``exact``) input-to-output maps relate the same pairs."""
    known = data_of(instr, {})
    for output in range(num_outputs(instr)):
        groups = output_to_input(instr, output)
        forward: list[set[tuple[Index, Index]]] = [set() for _ in groups]
        for o, reads in static_dependencies(instr, output).items():
            for k, group in enumerate(groups):
                got = inside((i for m in group for i in static_image(m, o, known)),
                             operand_dims(instr, k), instr.opcode, o, k)
                assert got == reads[k] if exact else reads[k] <= got, (
                    instr.opcode, o, k, sorted(got ^ reads[k])[:6])
                forward[k] |= {(o, i) for i in got}
        for k in range(len(instr.operands) if exact else 0):
            backward = {(o, i) for i in box(operand_dims(instr, k))
                        for o in inside((o for m in input_to_output(instr, k)[output]
                                         for o in static_image(m, i, known)),
                                        out_dims(instr, output), instr.opcode, k, i)}
            assert backward == forward[k], (instr.opcode, k, output,
                                            sorted(backward ^ forward[k])[:6])


def check_collective(instr: HloInstruction, size: int, values: Values | None = None,
                     over: Sequence[int] = ()) -> None:
    """Per participant ``p`` of a group of ``size``: output-to-input images are the local
    operand indices the reference reads (of any participant); input-to-output images of
    ``p``'s operand indices are the local output indices (of any participant) that read
    them. Exact, or a superset for the operands in ``over``."""
    for output in range(num_outputs(instr)):
        deps = collective_dependencies(instr, size, values, output)
        groups = output_to_input(instr, output)
        for (p, o), reads in deps.items():
            for k, group in enumerate(groups):
                got = inside(union_image(group, o, {str(PARTICIPANT): p}),
                             operand_dims(instr, k), instr.opcode, p, o, k)
                want = {i for _, i in reads[k]}
                assert want <= got if k in over else want == got, (
                    instr.opcode, "output", output, "participant", p, o, k,
                    sorted(want ^ got)[:6])
        for k in range(len(instr.operands)):
            group = input_to_output(instr, k)[output]
            for j in range(size):
                for i in box(operand_dims(instr, k)):
                    got = inside(union_image(group, i, {str(PARTICIPANT): j}),
                                 out_dims(instr, output), instr.opcode, j, k, i)
                    want = {o for (p, o), reads in deps.items() if (j, i) in reads[k]}
                    assert want <= got if k in over else want == got, (
                        instr.opcode, "operand", k, "participant", j, i, output,
                        sorted(want ^ got)[:6])


def window_fields(draw, dims, reversal: bool = False, kernel=None, dilations: bool = True):
    """Random ``window={...}`` fields per dim (``draw`` draws from a strategy; ``kernel``
    fixes the sizes; without ``dilations`` both dilations are 1), and the output sizes."""
    fields: dict[str, list[str]] = {k: [] for k in ("size", "stride", "pad", "lhs_dilate",
                                                    "rhs_dilate", "rhs_reversal")}
    out = []
    for i, n in enumerate(dims):
        size = kernel[i] if kernel else draw(st.integers(1, 3))
        stride = draw(st.integers(1, 2))
        base, wdil = (draw(st.integers(1, 2)) if dilations else 1 for _ in range(2))
        low, high = draw(st.integers(-1, 2)), draw(st.integers(0, 2))
        padded = low + high + (n - 1) * base + 1
        span = (size - 1) * wdil + 1
        if padded < span:
            high += span - padded
            padded = span
        out.append((padded - span) // stride + 1)
        for key, value in (("size", size), ("stride", stride), ("pad", f"{low}_{high}"),
                           ("lhs_dilate", base), ("rhs_dilate", wdil),
                           ("rhs_reversal", int(draw(st.booleans())) if reversal else 0)):
            fields[key].append(str(value))
    return " ".join(f"{k}={'x'.join(v)}" for k, v in fields.items()), out
