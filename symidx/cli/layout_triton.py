"""``symidx layout`` for Triton's layout text: the encoding converted to its linear layout as
Triton converts it, who holds each element (a distributed layout) or each element's offset
(a shared one), a picture, and for a shared layout read into registers the banks of the
access at the vector width Triton picks."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from symidx.cli.common import UsageError
from symidx.cli.layout_args import answer, highlight, parse_ints
from symidx.cli.layout_args import grid_or_note as _grid
from symidx.errors import MapError, SymidxError
from symidx.layout import banks, holders, pictures, ttgir
from symidx.layout.grid import draw_grid
from symidx.layout.holders import drawing, offsets_grid
from symidx.layout.views import LayoutView


def run_triton(args: argparse.Namespace) -> int:
    defined = _aliases(args.ttgir) if args.ttgir else {}
    found = ttgir.parse_ttgir(args.layout, defined)
    shape = found.shape
    if args.shape is not None:
        given = parse_ints(args.shape, "--shape")
        if shape is not None and tuple(given) != tuple(shape):
            raise UsageError(f"symidx layout: --shape {args.shape} differs from the type's "
                             f"shape {'x'.join(map(str, shape))}")
        shape = tuple(given)
    smallest = getattr(found.encoding, "smallest_shape", None)
    inferred = shape is None and smallest is not None
    if shape is None and smallest is not None:
        shape = smallest()
    if shape is None:
        raise UsageError("symidx layout: a Triton layout needs the tensor's shape: --shape "
                         "A,B,... or the type ('tensor<32x64xf16, #ttg...>')")
    for flag, given_flag in (("--tile", args.tile is not None),
                             ("--access", args.access != "lanes"),
                             ("--matrices", args.matrices != 4)):
        if given_flag:
            raise UsageError(f"symidx layout: {flag} is not for a Triton layout")
    encoding = found.encoding
    ll = encoding.to_linear(shape)
    bits = args.element_bits or found.element_bits or getattr(
        encoding, "element_bitwidth", None) or 32
    if args.banks or args.contiguity:
        return _question(args, ll, encoding, shape, bits, defined)
    for flag, given_flag in (("--warp", args.warp is not None),
                             ("--vector", args.vector is not None),
                             ("--machine", args.machine != "nvidia")):
        if given_flag:
            raise UsageError(f"symidx layout: {flag} is for --banks or --contiguity")
    shared = encoding.kind == "shared"
    if args.index is not None:
        index = parse_ints(args.index, "--index")
        _print_index(ll, shape, index, shared)
    else:
        print(summary(ll, shape, shared))
        if inferred:
            print("(the smallest shape the bases reach; --shape or the tensor type gives "
                  "the tensor's)")
        print()
        print(_bases_text(ll))
        print()
        print(_grid(lambda: _grid_text(ll, shape, shared)))
    if args.png:
        drawing(ll, encoding.text(), bits, highlight(args)).save(args.png)
    return 0


def _aliases(path: str) -> dict[str, str]:
    try:
        with open(path, encoding="utf-8") as f:
            return ttgir.aliases(f.read())
    except OSError as e:
        raise SymidxError(f"cannot read {path}: {e.strerror or e}") from None


def summary(ll: Any, shape: tuple[int, ...], shared: bool) -> str:
    """One line: the kind, the tensor, the input dimensions' sizes."""
    ins = " x ".join(f"{ll.in_dim_size(n)} {n}{'s' if ll.in_dim_size(n) != 1 else ''}"
                     for n in ll.in_dims)
    tensor = "x".join(str(s) for s in shape)
    elements = 1
    for s in shape:
        elements *= s
    held = ll.total_in_dim_size() // max(elements, 1)
    kind = "shared" if shared else "distributed"
    copies = "" if held <= 1 else f"; each element held {held} times"
    return f"{kind} layout of a {tensor} tensor: {ins}{copies}"


def _bases_text(ll: Any) -> str:
    """The linear layout Triton converts to, as TTGIR text."""
    body = ", ".join(f"{n} = [" + ", ".join("[" + ", ".join(map(str, b)) + "]" for b in bs)
                     + "]" for n, bs in ll.bases)
    return (f"#ttg.linear<{{{body}}}>" if "lane" in ll.in_dims else f"bases: {body}")


def _grid_text(ll: Any, shape: tuple[int, ...], shared: bool) -> str:
    if len(shape) > 2:
        raise MapError(f"a grid is drawn for rank 1 and 2; the tensor has rank {len(shape)}")
    elements = shape[0] * (shape[1] if len(shape) == 2 else 1)
    if elements > 4096:
        raise MapError(f"{elements} elements; grids draw at most 4096")
    if shared:
        grid = offsets_grid(ll)
        return draw_grid("offset of each element", grid.tolist())
    owner, _ = holders.holders(ll)
    return draw_grid("thread holding each element (lane + 32 * warp; the first of its "
                     "holders)", owner[:, :, 0].tolist())


def _print_index(ll: Any, shape: tuple[int, ...], index: tuple[int, ...], shared: bool) -> None:
    if len(index) != len(shape) or any(not 0 <= i < s for i, s in zip(index, shape)):
        raise MapError(f"index {list(index)} is outside the {'x'.join(map(str, shape))} "
                       f"tensor")
    names = list(ll.in_dims)
    sizes = [ll.in_dim_size(n) for n in names]
    found = []
    for flat in range(ll.total_in_dim_size()):
        point, rest = {}, flat
        for n, s in zip(names, sizes):
            point[n], rest = rest % s, rest // s
        if ll(**point) == tuple(index):
            found.append(point)
    if shared:
        found = [p for p in found if p.get("block", 0) == 0]
        print(", ".join(str(p["offset"]) for p in found) or "no offset")
        return
    for p in found:
        print(", ".join(f"{n} {p[n]}" for n in names))


def _question(args: argparse.Namespace, ll: Any, encoding: Any, shape: tuple[int, ...],
              bits: int, defined: dict[str, str]) -> int:
    if args.index is not None:
        raise UsageError("symidx layout: --index does not go with --contiguity or --banks")
    if encoding.kind != "shared":
        raise UsageError("symidx layout: --banks and --contiguity are for a shared layout "
                         "(give the register layout that reads it with --warp)")
    machine = banks.MACHINES[args.machine]
    if args.banks and args.warp is not None and ttgir.is_ttgir(args.warp):
        reader = ttgir.parse_ttgir(args.warp, defined).encoding
        if reader.kind != "distributed":
            raise UsageError("symidx layout: --warp is a register (distributed) layout")
        registers = reader.to_linear(shape)
        vector, report = holders.copy_banks(registers, ll, bits, machine, args.vector)
        chosen = "" if args.vector is not None else " (the vector Triton picks)"
        title = (f"banks of {encoding.text()} ({bits}-bit elements), read into "
                 f"{reader.text()}: {vector} element{'s' if vector != 1 else ''} per lane"
                 f"{chosen}, warp 0's first access, on {machine.name} ({machine.banks} banks)")
        print(f"{title}:\n{report.summary()}\n{banks.per_bank_text(report)}")
        if args.png:
            pictures.save_banks_png(title, report, args.png)
        return 0
    return answer(_view(ll, encoding, shape, bits), args)


def _view(ll: Any, encoding: Any, shape: tuple[int, ...], bits: int) -> Any:
    """The shared layout as the bank and contiguity questions see it: the tensor's dims,
    row-major linear index, each element's offset."""
    if len(shape) > 2:
        raise MapError("--banks and --contiguity of a Triton layout are for rank 1 and 2")
    table = offsets_grid(ll).reshape(-1)
    if (table < 0).any():
        raise MapError("some elements have no offset: the shared layout is not surjective")
    order = getattr(encoding, "order", None)
    if order is None:
        transposed = getattr(encoding, "transposed", False)
        order = (0, 1) if transposed else tuple(range(len(shape) - 1, -1, -1))
    dims = tuple(shape) if len(shape) == 2 else (shape[0],)
    minor = tuple(order) if len(shape) == 2 else (0,)
    return LayoutView(encoding.text(), dims, bits, minor, False,
                      lambda i: table[np.asarray(i, dtype=np.int64)])
