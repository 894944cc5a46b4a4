"""``symidx layout``: a memory layout's offsets -- its indexing map and grid, one element's
offset, or a picture -- and the questions kernel authors ask of it: contiguity and vector
width (``--contiguity``), shared-memory bank conflicts of a warp's access (``--banks``).

The layout is an XLA shape with its layout (``f32[3,5]{1,0:T(2,2)}``; text with ``[``), a
nested ``shape:stride`` layout (``((4,2),(4,3)):((4,16),(1,32))``) or a composed one
(``Sw<3,4,3> o (8,64):(64,1)``, ``S<3,4,3> o 0 o (8,64):(64,1)``: a swizzle of a layout's
offsets), in any spelling :func:`symidx.layout.text.parse_layout` reads; or Triton's
layout text (``#ttg.blocked<{...}>``, ``tensor<32x64xf16, #ttg...>``,
``!ttg.memdesc<...>``: :mod:`symidx.layout.ttgir`), converted to its linear layout.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING

from symidx.cli.common import UsageError, add_style, need
from symidx.cli.layout_args import answer, highlight, parse_ints
from symidx.cli.layout_args import grid_or_note as _grid
from symidx.errors import MapError

if TYPE_CHECKING:
    from symidx.hlo.shape import Shape
    from symidx.layout import cute


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "layout", help="a layout's offsets: its indexing map and grid, an element's offset, "
                       "or a PNG picture")
    p.add_argument("layout", help="an XLA shape with layout, e.g. 'f32[3,5]{1,0:T(2,2)}'; a "
                                  "nested layout, e.g. '((4,2),(4,3)):((4,16),(1,32))', swizzled "
                                  "as CuTe prints it ('Sw<3,3,3> o _0 o (_8,_64):(_64,_1)', "
                                  "'S<3,3,3> o 0 o (8,64):(64,1)'); or Triton's layout text: "
                                  "'#ttg.blocked<{...}>' (with --shape), 'tensor<32x64xf16, "
                                  "#ttg...>', '!ttg.memdesc<...>'")
    p.add_argument("--shape", metavar="A,B,...",
                   help="the tensor shape of a Triton layout given without its type")
    p.add_argument("--ttgir", metavar="FILE",
                   help="read the alias definitions (#blocked = #ttg...) of this TTGIR module, "
                        "for a layout that names them")
    p.add_argument("--highlight", metavar="ROWS,COLS",
                   help="with --png: outline rows and columns of the grid (an index i, a range "
                        "a:b, or ':'), e.g. a tile '0:8,0:16' or a column ':,5', and the "
                        "memory they are stored in")
    p.add_argument("--index", metavar="I,J,...",
                   help="print only this element's physical offset: one integer per dim (XLA) "
                        "or per top-level mode (nested; split colexicographically inside it)")
    p.add_argument("--tile", metavar="A,B,...",
                   help="only the tile at the origin: CATLASS MakeLayoutTile for a nested "
                        "layout, the sub-array [0:A, 0:B, ...] for an XLA shape")
    p.add_argument("--png", metavar="FILE",
                   help="also draw the layout to FILE (PNG, or SVG for a .svg name): "
                        "rows and columns numbered, offsets in the cells, a legend or "
                        "colour scale (see --colour), padding hatched; with --banks, the "
                        "banks the warp touches (needs matplotlib)")
    p.add_argument("--colour", default="auto", metavar="KIND",
                   help="with --png: colour cells by 'tile', 'bank' (32 banks of 4 bytes), "
                        "'mod:K' (offset mod K) or 'auto' (bank for a swizzle or an untiled "
                        "layout, else tile; the default)")
    question = p.add_mutually_exclusive_group()
    question.add_argument("--contiguity", action="store_true",
                          help="per dimension: contiguous runs and the widest legal vector "
                               "access, in elements and bytes")
    question.add_argument("--banks", action="store_true",
                          help="shared-memory bank conflicts (32 banks of 4-byte words) of "
                               "one warp's access, see --warp")
    p.add_argument("--warp", metavar="PATTERN",
                   help="with --banks: a shape:stride layout from lane to the row-major "
                        "linear index of the logical element it reads (r * cols + c, for "
                        "every kind of layout); default 32:N for --vector N (64:N on AMD). "
                        "For a Triton shared layout, the register layout that reads it "
                        "('#ttg.blocked<...>'): each lane reads the vector Triton picks")
    p.add_argument("--access", choices=("lanes", "ldmatrix", "tma"), default="lanes",
                   help="with --banks: each lane reads --vector elements (scalar, 64/128-bit "
                        "vector, ds_read_b64/b128; default), ldmatrix rows of 16 bytes "
                        "(--matrices 1, 2 or 4), or a TMA copy of the whole box in 128-byte "
                        "lines")
    p.add_argument("--matrices", type=int, default=4, metavar="N",
                   help="with --access ldmatrix: .x1, .x2 or .x4 (default 4)")
    p.add_argument("--machine", choices=("nvidia", "cdna3", "cdna4"), default="nvidia",
                   help="with --banks: nvidia (32 banks, 32 lanes; default), cdna3 (AMD LDS, "
                        "32 banks, wave64), cdna4 (AMD LDS, 64 banks, wave64)")
    p.add_argument("--vector", type=int, default=None, metavar="N",
                   help="with --banks: elements each lane reads, along the memory-minor "
                        "dimension (default 1; for a Triton register layout, the width Triton "
                        "picks)")
    p.add_argument("--element-bits", type=int, default=None, metavar="BITS",
                   help="element size of a nested layout for --contiguity and --banks "
                        "(default 32; an XLA shape has its own)")
    add_style(p)
    p.set_defaults(run=run)


def parse_spec(text: str) -> Shape | cute.Layout | cute.ComposedLayout:
    """An XLA array shape (text with ``[``), or a nested (possibly composed) layout."""
    from symidx.layout import cute  # sympy loads when a layout is asked for

    if "[" in text:
        from symidx.lowering.layouts.shapes import array_shape

        return array_shape(text)
    return cute.parse_any_layout(text)


def run(args: argparse.Namespace) -> int:
    from symidx.layout import cute  # sympy loads when a layout is asked for

    if args.png:
        need("matplotlib", "plot", "--png")
    if args.highlight is not None and not args.png:
        raise UsageError("symidx layout: --highlight is for --png")
    if re.match(r"\s*(#|tensor\s*<|!ttg\.)", args.layout):  # Triton's text
        from symidx.cli.layout_triton import run_triton

        return run_triton(args)
    for flag in ("--shape", "--ttgir"):
        if getattr(args, flag[2:]) is not None:
            raise UsageError(f"symidx layout: {flag} is for a Triton layout")
    spec = parse_spec(args.layout)
    if args.banks or args.contiguity:
        return _question(spec, args)
    for flag, given in (("--warp", args.warp is not None), ("--vector", args.vector is not None),
                        ("--element-bits", args.element_bits is not None),
                        ("--access", args.access != "lanes"), ("--matrices", args.matrices != 4),
                        ("--machine", args.machine != "nvidia")):
        if given:
            raise UsageError(f"symidx layout: {flag} is for --banks or --contiguity")
    block = None if args.tile is None else parse_ints(args.tile, "--tile")
    if isinstance(spec, cute.ComposedLayout):
        if block is not None:
            raise UsageError("symidx layout: --tile is for an XLA shape or a shape:stride "
                             "layout")
        _run_cute(spec, args)
    elif isinstance(spec, cute.Layout):
        _run_cute(spec if block is None else cute.make_layout_tile(spec, block), args)
    else:
        _run_xla(spec, block, args)
    return 0


def _run_xla(shape: Shape, block: tuple[int, ...] | None, args: argparse.Namespace) -> None:
    from symidx.core.syntax import print_map
    from symidx.layout import pictures
    from symidx.lowering.layouts import shapes

    if args.index is not None:
        index = parse_ints(args.index, "--index")
        if block is not None and len(index) == len(block) and any(
                i >= b for i, b in zip(index, block)):
            raise MapError(f"index {list(index)} is outside the tile {list(block)}")
        print(shapes.physical_offset(shape, index))
    else:
        m = shapes.offset_map(shape) if block is None else shapes.block_offset_map(shape, block)
        print(xla_summary(shape))
        print()
        print(print_map(m, args.style))
        print()
        print(_grid(lambda: pictures.grid_text(pictures.xla_picture(shape, block))))
    if args.png:
        pictures.save_png(pictures.xla_picture(shape, block, pictures.FIGURE_LIMIT), args.png,
                          args.colour, highlight(args))


def _question(spec: Shape | cute.Layout | cute.ComposedLayout, args: argparse.Namespace
              ) -> int:
    """--contiguity or --banks."""
    from symidx.layout import (
        cute,  # sympy loads when a layout is asked for
        views,
    )

    if args.index is not None or args.tile is not None:
        raise UsageError("symidx layout: --index and --tile do not go with --contiguity or "
                         "--banks")
    is_nested = isinstance(spec, (cute.Layout, cute.ComposedLayout))
    if args.element_bits is not None and not is_nested:
        raise UsageError("symidx layout: an XLA shape has its own element size; "
                         "--element-bits is for a nested layout")
    bits = 32 if args.element_bits is None else args.element_bits
    if bits < 1:
        raise UsageError("symidx layout: --element-bits must be positive")
    return answer(views.view(spec, bits), args)


def _run_cute(layout: cute.Layout | cute.ComposedLayout, args: argparse.Namespace) -> None:

    from symidx.core.syntax import print_map
    from symidx.layout import pictures
    from symidx.layout.maps import cute_map

    if args.index is not None:
        print(cute_offset(layout, parse_ints(args.index, "--index")))
    else:
        print(cute_summary(layout))
        print()
        print(print_map(cute_map(layout), args.style))
        print()
        print(_grid(lambda: pictures.grid_text(pictures.cute_picture(layout))))
    if args.png:
        pictures.save_png(pictures.cute_picture(layout, limit=pictures.FIGURE_LIMIT), args.png,
                          args.colour, highlight(args))


def xla_summary(shape: Shape) -> str:
    """One line: elements, slots, bytes, physical shape, memory space."""
    from symidx.lowering.layouts import shapes

    space = shape.layout_or_default.memory_space
    physical = ",".join(str(n) for n in shapes.physical_shape(shape))
    return (f"{_count(shape.num_elements, 'element')} in "
            f"{_count(shapes.size_in_elements(shape), 'slot')} of "
            f"{_count(shapes.element_size_in_bits(shape), 'bit')} "
            f"({_count(shapes.size_in_bytes(shape), 'byte')}); physical shape [{physical}]; "
            f"memory space S({space}): {shapes.memory_space_name(space)}")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def cute_summary(layout: cute.Layout | cute.ComposedLayout) -> str:
    """One line: rank, depth, size, and cosize when the strides are non-negative; for a
    composed layout, what is composed."""
    from symidx.layout import cute  # sympy loads when a layout is asked for

    if isinstance(layout, cute.ComposedLayout):
        inner = layout.inner
        how = (f"swizzled by {layout.outer}" if isinstance(layout.outer, cute.Swizzle)
               else f"composed with {layout.outer}")
        offset = f" after offset {layout.offset}" if layout.offset else ""
        return f"{cute_summary(inner)}; {how}{offset}"
    parts = [f"rank {cute.rank(layout)}", f"depth {cute.depth(layout)}",
             f"size {cute.size(layout)}"]
    if all(d >= 0 for d in cute.flatten(layout.stride)):
        parts.append(f"cosize {cute.cosize(layout)}")
    return ", ".join(parts)


def cute_offset(layout: cute.Layout | cute.ComposedLayout, index: tuple[int, ...]) -> int:
    """The offset of ``index``: one integer per top-level mode, each below the mode's size."""
    from symidx.layout import cute  # sympy loads when a layout is asked for

    inner = layout.inner if isinstance(layout, cute.ComposedLayout) else layout
    modes = list(inner.modes())
    if len(index) != len(modes):
        raise MapError(f"{layout} has {len(modes)} top-level mode(s); --index gives "
                       f"{len(index)} integer(s)")
    for i, (e, mode) in enumerate(zip(index, modes)):
        if not 0 <= e < cute.size(mode):
            raise MapError(f"index {list(index)} is out of bounds: mode {i} is {e}, "
                           f"size {cute.size(mode)}")
    return layout(*index)
