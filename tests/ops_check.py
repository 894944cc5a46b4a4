"""Checks shared by the op-rule tests: evaluate a map's image with concrete runtime values,
compare output-to-input maps with the reference semantics, and check that input-to-output
is the inverse relation of output-to-input."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import numpy as np

from reference_hlo import Index, Values, box, dependencies, out_dims
from symidx.hlo import HloInstruction, Shape, TupleShape, parse_hlo
from symidx.indexing_map import IndexingMap
from symidx.ops import input_to_output, num_outputs, output_to_input
from symidx.ops._common import hlo_reference

Data = dict[str, np.ndarray]

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
"""


def build(params: Sequence[str], root: str, extra: Sequence[str] = ()) -> HloInstruction:
    """The root of a module with parameters ``p0 = <params[0]> parameter(0)``, ..., the
    ``extra`` lines, and ``ROOT r = <root>``."""
    lines = [f"  p{k} = {shape} parameter({k})" for k, shape in enumerate(params)]
    lines += [f"  {line}" for line in extra]
    text = "HloModule m\n" + CALLED + "ENTRY e {\n" + "\n".join(lines) \
        + f"\n  ROOT r = {root}\n}}\n"
    return parse_hlo(text).entry.root


def data_of(instr: HloInstruction, values: Values) -> Data:
    return {hlo_reference(instr.operands[k]): v for k, v in values.items()}


def image(m: IndexingMap, point: Index, data: Data) -> set[Index]:
    """The targets of ``point``: every range-variable value, runtime variables read from
    ``data`` through their provenance and clamped to their feasible interval."""
    if m.is_known_empty or not all(v in b for v, b in zip(point, m.dims, strict=True)):
        return set()
    found = set()
    for symbols in itertools.product(*(range(b.lo, b.hi + 1) for b in m.ranges)):
        rts = []
        for v in m.rts:
            assert v.map is not None, "runtime variable without provenance"
            element = v.map.evaluate(point, symbols[:v.map.num_ranges])
            raw = int(data[v.hlo][element])
            rts.append(max(v.bounds.lo, min(v.bounds.hi, raw)))
        if m.constraints_hold(point, symbols, rts):
            found.add(m.evaluate(point, symbols, rts))
    return found


def union_image(maps: Iterable[IndexingMap], point: Index, data: Data) -> set[Index]:
    result: set[Index] = set()
    for m in maps:
        result |= image(m, point, data)
    return result


def _in_box(index: Index, dims: Sequence[int]) -> bool:
    return len(index) == len(dims) and all(0 <= v < n for v, n in zip(index, dims, strict=True))


def operand_dims(instr: HloInstruction, k: int) -> tuple[int, ...]:
    shape = instr.operands[k].shape
    if isinstance(shape, TupleShape):  # get-tuple-element reads one element of a tuple
        shape = shape.elements[instr.tuple_index or 0]
    assert isinstance(shape, Shape)
    return shape.dims


def check_output_to_input(instr: HloInstruction, values: Values | None = None,
                          over: Sequence[int] = (), output: int = 0) -> None:
    """Every output element reads exactly the map's image (a superset for operands in
    ``over``, where the rule over-approximates)."""
    values = values or {}
    data = data_of(instr, values)
    groups = output_to_input(instr, output)
    assert len(groups) == len(instr.operands)
    deps = dependencies(instr, values, output)
    for o, reads in deps.items():
        for k, group in enumerate(groups):
            dims = operand_dims(instr, k)
            got = {i for i in union_image(group, o, data) if _in_box(i, dims)}
            if k in over:
                assert reads[k] <= got, (instr.opcode, o, k, reads[k] - got)
            else:
                assert got == reads[k], (instr.opcode, o, k, sorted(got ^ reads[k])[:6])


def relation_out_to_in(instr: HloInstruction, k: int, output: int, data: Data
                       ) -> set[tuple[Index, Index]]:
    group = output_to_input(instr, output)[k]
    dims = operand_dims(instr, k)
    return {(o, i) for o in box(out_dims(instr, output))
            for i in union_image(group, o, data) if _in_box(i, dims)}


def relation_in_to_out(instr: HloInstruction, k: int, output: int, data: Data
                       ) -> set[tuple[Index, Index]]:
    group = input_to_output(instr, k)[output]
    dims = out_dims(instr, output)
    return {(o, i) for i in box(operand_dims(instr, k))
            for o in union_image(group, i, data) if _in_box(o, dims)}


def check_inverse(instr: HloInstruction, values: Values | None = None) -> None:
    """For every operand and output: input-to-output relates exactly the pairs
    output-to-input does (with the same runtime values)."""
    data = data_of(instr, values or {})
    for k in range(len(instr.operands)):
        assert len(input_to_output(instr, k)) == num_outputs(instr)
        for output in range(num_outputs(instr)):
            forward = relation_out_to_in(instr, k, output, data)
            backward = relation_in_to_out(instr, k, output, data)
            assert forward == backward, (instr.opcode, k, output,
                                         sorted(forward ^ backward)[:6])


def check(instr: HloInstruction, values: Values | None = None, over: Sequence[int] = ()
          ) -> None:
    """Both checks, on every output."""
    for output in range(num_outputs(instr)):
        check_output_to_input(instr, values, over, output)
    check_inverse(instr, values)
