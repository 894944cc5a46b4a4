"""Who holds each element of a Triton linear layout, drawn; and the banks of a copy between
registers and shared memory, as Triton vectorises it.

* :func:`holders` -- a distributed layout (``register``, ``lane``, ``warp``, ``block``) of
  a rank-1 or rank-2 tensor: per element, the first thread (``lane + 32 * warp + ...``) and
  register holding it, and how many hold it (a broadcast holds it several times);
* :func:`offsets_grid` -- a shared layout (``offset``, ``block``): per element, its offset;
* :func:`drawing` -- either, drawn: the holders as CuTe's drawers draw a TV layout
  (``T`` thread, ``R`` register), the offsets as a layout's picture;
* :func:`vector_width` and :func:`copy_banks` -- a copy between a register layout and a
  shared layout: the elements one access moves (the consecutive registers landing on
  consecutive offsets, at most 128 bits: Triton's choice), and the banks the first access
  of warp 0 touches (each lane reads that many consecutive offsets).

The layouts are :class:`~symidx.layout.linear.LinearLayout` s, read by their methods.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symidx.errors import MapError, TooLargeError
from symidx.layout import banks as bank_model
from symidx.layout import pictures

__all__ = ["HOLDERS_LIMIT", "copy_banks", "drawing", "holders", "offsets_grid",
           "vector_width"]

HOLDERS_LIMIT = 1 << 16
"""Most (input) points :func:`holders` and :func:`offsets_grid` walk."""


def _grid_shape(ll: Any) -> tuple[int, int]:
    sizes = [s for _, s in ll.outs]
    if len(sizes) == 1:
        return 1, sizes[0]
    if len(sizes) == 2:
        return sizes[0], sizes[1]
    raise MapError(f"pictures of a linear layout are for rank 1 and 2; this one has rank "
                   f"{len(sizes)}")


def _points(ll: Any) -> list[dict[str, int]]:
    total = ll.total_in_dim_size()
    if total > HOLDERS_LIMIT:
        raise TooLargeError(f"{total} inputs to walk; the limit is {HOLDERS_LIMIT}")
    names = list(ll.in_dims)
    sizes = [ll.in_dim_size(n) for n in names]
    out = []
    for flat in range(total):
        point, rest = {}, flat
        for n, s in zip(names, sizes):
            point[n], rest = rest % s, rest // s
        out.append(point)
    return out


def holders(ll: Any, lanes: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """``(owner, copies)``: ``owner[r, c] = (thread, register)`` of the first holder of
    element ``(r, c)`` (``-1`` where none), ``thread = lane + lanes * (warp + warps *
    block)``; ``copies[r, c]`` how many ``(thread, register)`` pairs hold it."""
    if "register" not in ll.in_dims or "lane" not in ll.in_dims:
        raise MapError("holders are for a distributed layout (register, lane, ...)")
    rows, cols = _grid_shape(ll)
    owner = np.full((rows, cols, 2), -1, dtype=np.int64)
    copies = np.zeros((rows, cols), dtype=np.int64)
    warps = ll.in_dim_size("warp") if "warp" in ll.in_dims else 1
    lanes = ll.in_dim_size("lane")
    found = []
    for point in _points(ll):
        thread = point["lane"] + lanes * (point.get("warp", 0) + warps * point.get("block", 0))
        at = ll(**point)
        r, c = (0, at[0]) if len(at) == 1 else at
        found.append((thread, point["register"], r, c))
    for thread, reg, r, c in sorted(found):
        if copies[r, c] == 0:
            owner[r, c] = (thread, reg)
        copies[r, c] += 1
    return owner, copies


def offsets_grid(ll: Any) -> np.ndarray:
    """``grid[r, c]``: the offset element ``(r, c)`` of a shared layout is stored at (the
    first, where several offsets hold it; ``-1`` where none does), in block 0."""
    if "offset" not in ll.in_dims:
        raise MapError("an offsets grid is for a shared layout (offset, block)")
    rows, cols = _grid_shape(ll)
    grid = np.full((rows, cols), -1, dtype=np.int64)
    for point in _points(ll):
        if point.get("block", 0):
            continue
        at = ll(**point)
        r, c = (0, at[0]) if len(at) == 1 else at
        if grid[r, c] < 0:
            grid[r, c] = point["offset"]
    return grid


def drawing(ll: Any, title: str = "", element_bits: int = 32, highlight: Any = None) -> Any:
    """The layout drawn (a :class:`~symidx._display.Drawing`): a distributed layout as the
    thread and register holding each element, coloured by thread (CuTe's way); a shared
    layout as the offset of each element, coloured by bank."""
    name = title or (ll.to_text() if "lane" in ll.in_dims else "shared linear layout")
    if "offset" in ll.in_dims:
        grid = offsets_grid(ll)
        if (grid < 0).any():
            raise MapError("some elements have no offset: the layout is not surjective")
        picture = pictures.offsets_picture(name, grid, element_bits, pictures.FIGURE_LIMIT)
        return pictures.figure(picture, "bank", highlight=highlight)
    owner, copies = holders(ll)
    threads = ll.in_dim_size("lane") * ll.in_dim_size("warp") * ll.in_dim_size("block") \
        if "warp" in ll.in_dims else ll.in_dim_size("lane")
    rows, cols = owner.shape[:2]
    return pictures.owner_figure(
        name[:120] + ("..." if len(name) > 120 else ""),
        f"(register, lane, warp) -> element of the {rows}x{cols} tensor (T: thread = lane + "
        f"{ll.in_dim_size('lane')} * warp, R: register)",
        owner, threads, ll.in_dim_size("register"), labels=("T", "R"),
        highlight=highlight, copies=copies)


def vector_width(registers: Any, shared: Any, element_bits: int, max_bits: int = 128) -> int:
    """The elements one access moves in a copy between the register layout and the shared
    layout of one tensor, as Triton picks it: the consecutive registers that land on
    consecutive offsets (``num_consecutive_in_out`` of ``registers`` followed by the inverse
    of ``shared``, in one block), at most ``max_bits`` bits."""
    regs = registers.sublayout([n for n in registers.in_dims if n != "block"],
                               registers.out_dims)
    mem = shared.sublayout(["offset"], shared.out_dims)
    cvt = regs.invert_and_compose(mem)
    run: int = cvt.num_consecutive_in_out()
    return max(1, min(run, max_bits // max(element_bits, 1)))


def copy_banks(registers: Any, shared: Any, element_bits: int,
               machine: bank_model.Machine = bank_model.NVIDIA_SMEM,
               vector: int | None = None) -> tuple[int, bank_model.BankReport]:
    """``(vector, report)``: the vector width (:func:`vector_width` unless given) and the
    banks of the first access of warp 0 -- lane ``l`` reads the offsets of its registers
    ``0 .. vector-1``."""
    vec = vector_width(registers, shared, element_bits) if vector is None else vector
    regs = registers.sublayout([n for n in registers.in_dims if n != "block"],
                               registers.out_dims)
    cvt = regs.invert_and_compose(shared.sublayout(["offset"], shared.out_dims))
    if vec > cvt.in_dim_size("register"):
        raise MapError(f"a vector of {vec} elements, but a thread holds "
                       f"{cvt.in_dim_size('register')}")
    lanes = min(machine.lanes, cvt.in_dim_size("lane"))
    ins = [n for n in cvt.in_dims if n not in ("register", "lane")]
    offsets = []
    for lane in range(lanes):
        row = []
        for reg in range(vec):
            point = {"register": reg, "lane": lane, **{n: 0 for n in ins}}
            row.append(cvt(**point)[0])
        offsets.append(row)
    per_phase = machine.lanes_per_phase(max(1, vec * element_bits // 8))
    requests = [[(lane, offsets[lane]) for lane in range(p, min(p + per_phase, lanes))]
                for p in range(0, lanes, per_phase)]
    return vec, bank_model.serve(requests, element_bits, machine, "lanes")
