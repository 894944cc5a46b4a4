"""A sweep through a stack of padded, strided windows keeps its maps small (the rules of
:mod:`symidx.core.simplify.boxes`, applied after each composition), and they read what
brute force says: the reads of a stack of convolutions, and the outputs an input pixel
reaches, worked out by hand from the windows."""

from __future__ import annotations

import itertools

from symidx.fusion import Analysis
from symidx.hlo import parse_hlo


def _stack(strides: list[int], size: int) -> tuple[str, list[int]]:
    """HLO of 3x3 convolutions with padding 1 and the given strides over one
    ``size x size`` channel, summed at the end; and the size after each."""
    lines = ["HloModule stack", "", "add {", "  a = f32[] parameter(0)",
             "  b = f32[] parameter(1)", "  ROOT s = f32[] add(a, b)", "}", "",
             "ENTRY e {", f"  c0 = f32[1,{size},{size},1] parameter(0)",
             "  w = f32[3,3,1,1] parameter(1)"]
    sizes = [size]
    for i, s in enumerate(strides, 1):
        n = (sizes[-1] - 1) // s + 1
        sizes.append(n)
        lines.append(f"  c{i} = f32[1,{n},{n},1] convolution(c{i - 1}, w), "
                     f"window={{size=3x3 stride={s}x{s} pad=1_1x1_1}}, "
                     "dim_labels=b01f_01io->b01f")
    lines += ["  zero = f32[] constant(0)",
              f"  ROOT r = f32[] reduce(c{len(strides)}, zero), dimensions={{0,1,2,3}}, "
              "to_apply=add", "}"]
    return "\n".join(lines), sizes


def _rows_reached(strides: list[int], sizes: list[int], row: int) -> set[int]:
    """The last rows input row ``row`` reaches, by brute force over the taps."""
    rows = {row}
    for s, n in zip(strides, sizes[1:]):
        rows = {o for r in rows for k in range(3) for o in range(n) if o * s + k - 1 == r}
    return rows


def test_the_reads_of_a_stack_of_padded_windows_are_one_box():
    strides = [1, 2, 1, 2, 1, 1, 2, 1]
    text, sizes = _stack(strides, 32)
    comp = parse_hlo(text).entry
    reads = Analysis().parameters_of(comp, 0)[(0, 0)]
    # every pixel of the input is read (each row reaches some output row)
    assert all(_rows_reached(strides, sizes, r) for r in range(32))
    assert len(reads.maps) == 1
    (m,) = reads.maps
    assert m.num_ranges <= 4 and not m.constraints
    assert {m.evaluate((), p) for p in itertools.product(*(
        range(iv.lo, iv.hi + 1) for iv in m.ranges))} == set(itertools.product(
            [0], range(32), range(32), [0]))


def test_the_outputs_an_input_reaches_through_strided_windows():
    strides = [2, 1, 2, 2]
    text, sizes = _stack(strides, 32)
    comp = parse_hlo(text).entry
    last = comp.instruction(f"c{len(strides)}")
    reached = Analysis().forward(comp, comp.parameters[0], 0)
    (found,) = [r for (name, _), r in reached.items() if name == last.name]
    assert all(m.num_ranges <= 2 for m in found.maps)
    for row in range(32):
        want = _rows_reached(strides, sizes, row)
        got = set()
        for m in found.maps:
            got |= {t[1] for t in m.image((0, row, 5, 0))}
        assert got == want, row
