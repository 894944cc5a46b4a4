"""Launch dimensions: how many blocks of how many threads each XLA GPU emitter launches for
a kernel (``EstimateFusionLaunchDimensions``).

* **loop** (and the in-place dynamic-update-slice, scatter and concatenate emitters, over
  the update, the updates or the largest concatenated operand): one thread per ``unroll``
  elements of the first output, 128 threads a block (fewer when there are fewer elements),
  one block of one thread for a scalar. ``unroll`` is the largest of 4, 2, 1 that divides
  the element count when the kernel has at least as many elements as the device has thread
  slots (threads per SM x SMs) and nothing in it prevents vectorization (a dot, a sort, a
  concatenate of more than 10 operands, a variadic reduce); at least 8 / the narrowest
  output's bits.
* **reduction**, by the hero's ``[.., .., ..]`` view (see
  :class:`~symidx.cost.fusion_view.ReductionDims`):
  row reductions whose reduced size is a power of two that one warp covers go to the
  multi-row emitter (a vector per thread, rows packed into 256 threads, the vector halved
  while there are fewer blocks than SMs); other row reductions use
  ``min(1024, roundup(ceil(reduced / 16), 32))`` threads along the row, more rows per
  block up to 256 threads, 16 elements per thread; column reductions whose minor kept size
  divides the warp use 128 threads per block (one block per major kept index), others a
  32x32 tile per block over the minor kept dimension (vectorized by 2 for 32-bit inputs);
  one block row per reduction group.
* **transpose**: a 32x32 tile (x the vector size) per block, 128 threads; the packed
  emitter (narrow types) tiles the canonical shape by its shared-memory tile.
* anything else (sort, ...): XLA's fallback, 128 threads a block, one thread per element
  of the first output.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil, prod

from symidx.cost.constants import FALLBACK_THREADS_PER_BLOCK
from symidx.cost.devices import Device
from symidx.cost.fusion_view import (
    MIN_THREADS_X_ROW_REDUCTION,
    EmitterKind,
    FusionView,
    ReductionDims,
    is_real_reduction_hero,
    packed_transpose_tiles,
    reduction_dims,
    tiled_transpose,
    transpose_spec,
)
from symidx.cost.hlo_cost import UnsupportedByCostModel
from symidx.cost.shapes import element_bytes, elements, first_array
from symidx.hlo import HloInstruction, Shape, TupleShape
from symidx.hlo.leaves import leaves

__all__ = ["LaunchDimensions", "launch_dimensions", "calculate_launch_dimensions",
           "loop_unroll_factor", "Emitter", "emitter_for"]

#: ``CalculateLaunchDimensions``: threads per block = warp x 4 warp schedulers.
WARP_SCHEDULERS = 4
MAX_UNROLL_FACTOR = 4
TRANSPOSE_TILE = 32
TRANSPOSE_THREADS_PER_BLOCK = 128
MAX_VECTORIZED_BYTES = 16
REDUCTION_THREADS_PER_BLOCK_TARGET = 256
MIN_REDUCED_ELEMENTS_PER_THREAD = 16
COLUMN_TILE = 32


@dataclass(frozen=True)
class LaunchDimensions:
    """Blocks (x, y, z) of threads (x, y, z)."""

    blocks: tuple[int, int, int] = (1, 1, 1)
    threads: tuple[int, int, int] = (1, 1, 1)

    @property
    def num_blocks(self) -> int:
        return prod(self.blocks)

    @property
    def threads_per_block(self) -> int:
        return prod(self.threads)

    @property
    def launch_bound(self) -> int:
        return self.num_blocks * self.threads_per_block


@dataclass(frozen=True)
class Emitter:
    """The emitter XLA picks for a kernel and the launch dimensions it asks for."""

    kind: EmitterKind
    launch: LaunchDimensions
    detail: str
    #: the emitter's threads per block as it arranges them (a reduction: kept x reduced)
    thread_grid: tuple[int, ...] = ()
    vector: int = 1


def calculate_launch_dimensions(shape: Shape, device: Device, unroll: int = 1) -> LaunchDimensions:
    """``CalculateLaunchDimensions``: one thread per ``unroll`` elements of ``shape``."""
    n = elements(shape)
    if n <= 1:
        return LaunchDimensions()
    n = ceil(n / unroll)
    threads = min(device.threads_per_warp * WARP_SCHEDULERS, n)
    blocks = ceil(n / threads)
    limit_x = _block_dim_limit_x(device)
    blocks_y = ceil(blocks / limit_x)
    blocks_x = ceil(blocks / blocks_y)
    return LaunchDimensions((blocks_x, blocks_y, 1), (threads, 1, 1))


def _block_dim_limit_x(device: Device) -> int:
    return int(device.block_dim_limit[0])


def loop_unroll_factor(view: FusionView, shape: Shape, device: Device) -> int:
    """``ComputeLoopFusionConfig``'s unroll factor for ``shape``."""
    unroll = 1
    n = elements(shape)
    slots = device.threads_per_core_limit * device.core_count
    if n >= slots and not view.may_prevent_vectorization():
        unroll = next((u for u in (4, 2) if n % u == 0), 1)
    return max(unroll, ceil(8 / view.smallest_output_bits()))


def emitter_for(view: FusionView, device: Device) -> Emitter:
    """The emitter and launch dimensions of ``view`` on ``device``."""
    kind = view.emitter_kind()
    if kind == EmitterKind.LOOP:
        if view.is_dynamic_update_slice_fusion() and view.can_update_in_place():
            update = _shape(view.operand(view.dynamic_update_slices()[0], 1).shape)
            unroll = loop_unroll_factor(view, update, device)
            return Emitter(EmitterKind.DYNAMIC_UPDATE_SLICE,
                           calculate_launch_dimensions(update, device, unroll),
                           f"in place over the update {update}, unroll {unroll}")
        shape = first_array(view.roots[0].shape)
        unroll = loop_unroll_factor(view, shape, device)
        return Emitter(kind, calculate_launch_dimensions(shape, device, unroll),
                       f"{shape}, unroll {unroll}")
    if kind == EmitterKind.REDUCTION:
        return _reduction(view, device)
    if kind == EmitterKind.TRANSPOSE:
        return _transpose(view, device)
    if kind == EmitterKind.CONCATENATE:
        concat = view.heroes()[0]
        largest = max((_shape(op.shape) for op in concat.operands), key=elements)
        unroll = loop_unroll_factor(view, largest, device)
        return Emitter(kind, calculate_launch_dimensions(largest, device, unroll),
                       f"largest operand {largest}, unroll {unroll}")
    if kind == EmitterKind.SCATTER:
        scatter = view.roots[0]
        updates = _shape(scatter.operands[-1].shape)
        unroll = loop_unroll_factor(view, updates, device)
        return Emitter(kind, calculate_launch_dimensions(updates, device, unroll),
                       f"updates {updates}, unroll {unroll}")
    # sort and the rest: XLA's fallback estimate
    n = sum(elements(leaf) for leaf in _leaves(view.roots[0].shape))
    blocks = ceil(n / FALLBACK_THREADS_PER_BLOCK)
    return Emitter(kind, LaunchDimensions((blocks, 1, 1), (FALLBACK_THREADS_PER_BLOCK, 1, 1)),
                   "fallback: one thread per output element")


def launch_dimensions(view: FusionView, device: Device) -> LaunchDimensions:
    return emitter_for(view, device).launch


def _leaves(shape: Shape | TupleShape) -> list[Shape]:
    return list(leaves(shape))


def _shape(shape: object) -> Shape:
    if not isinstance(shape, Shape):
        raise UnsupportedByCostModel(f"expected an array shape, found {shape}")
    return shape


# ---------------------------------------------------------------------- reduction
def _vector_size(view: FusionView, minor_dim: int, num_threads: int) -> int:
    """``GetVectorSizeForMlir``."""
    if minor_dim % 2 or num_threads * 2 > minor_dim:
        return 1
    for hero in view.heroes():
        for op in view.operands(hero):
            if isinstance(op.shape, Shape) and op.shape.element_type in ("c64", "c128"):
                return 1
    bits = view.smallest_input_bits()
    if bits >= 64:
        return 1
    if bits >= 32:
        return 2
    if num_threads * 4 > minor_dim:
        return 2
    return 4 if minor_dim % 4 == 0 else 2


def _reduction_groups(view: FusionView) -> int:
    """How many disjoint reduction groups the roots form (``GroupDisjointReductions``):
    roots reached from a common instruction share a group (non-reduction roots all share
    one; a broadcast constant or scalar joins at most one reduction root)."""
    roots = view.roots
    if len(roots) == 1:
        return 1
    parent = list(range(len(roots)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(a: int, b: int) -> None:
        parent[find(a)] = find(b)

    reduction = [is_real_reduction_hero(r, h)
                 for r, h in zip(roots, view.heroes(), strict=True)]
    first_plain = next((i for i, r in enumerate(reduction) if not r), None)
    for i, r in enumerate(reduction):
        if not r and first_plain is not None:
            union(i, first_plain)
    # which roots each instruction reaches
    reach: dict[int, set[int]] = {}
    for i, root in enumerate(roots):
        stack = [root]
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            reach.setdefault(id(node), set()).add(i)
            if view.contains(node):  # a kernel parameter is a leaf
                stack.extend(view.operands(node))
    scalars = {id(m) for m in [*view.members, *view.parameters]
               if _broadcast_constant_or_scalar(m)}
    for key, reached in reach.items():
        ids = sorted(reached)
        picked: list[int] = []
        added_reduce = False
        for i in ids:
            if reduction[i] and key in scalars and added_reduce:
                continue
            picked.append(i)
            added_reduce = added_reduce or reduction[i]
        for i in picked[1:]:
            union(picked[0], i)
    return len({find(i) for i in range(len(roots))})


def _broadcast_constant_or_scalar(instr: HloInstruction) -> bool:
    if instr.opcode == "broadcast" and instr.operands and \
            instr.operands[0].opcode == "constant":
        return True
    return isinstance(instr.shape, Shape) and instr.shape.rank == 0


def _reduction(view: FusionView, device: Device) -> Emitter:
    hero = view.reduction_hero()
    r = reduction_dims(hero)
    groups = _reduction_groups(view)
    warp = device.threads_per_warp
    kept_major, middle, minor = r.dims
    if r.is_row:
        multi = _multi_row(view, r, device)
        if multi is not None:
            (threads_kept, threads_reduced), blocks, vector = multi
            return Emitter(EmitterKind.REDUCTION,
                           LaunchDimensions((blocks, 1, groups),
                                            (threads_kept * threads_reduced, 1, 1)),
                           f"multi-row reduction {list(r.dims)}: vector {vector}, "
                           f"threads [{threads_kept},{threads_reduced}]",
                           (threads_kept, threads_reduced), vector)
        reduced_threads = min(MIN_THREADS_X_ROW_REDUCTION,
                              _round_up(ceil(minor / MIN_REDUCED_ELEMENTS_PER_THREAD), warp))
        kept_threads = 1
        if reduced_threads * 2 <= REDUCTION_THREADS_PER_BLOCK_TARGET:
            kept_threads = min(middle, REDUCTION_THREADS_PER_BLOCK_TARGET // reduced_threads)
        vector = _vector_size(view, minor, reduced_threads)
        minor_vectors = minor // vector
        tile = min(MIN_REDUCED_ELEMENTS_PER_THREAD // vector, ceil(minor_vectors / reduced_threads))
        blocks = ceil(middle / kept_threads) * ceil(minor_vectors / (tile * reduced_threads))
        threads = kept_threads * reduced_threads
        return Emitter(EmitterKind.REDUCTION,
                       LaunchDimensions((blocks, 1, groups), (threads, 1, 1)),
                       f"row reduction {list(r.dims)}: vector {vector}, threads "
                       f"[{kept_threads},{reduced_threads}]", (kept_threads, reduced_threads),
                       vector)
    if warp % minor == 0:
        vector = _vector_size(view, middle * minor, COLUMN_TILE)
        threads = 128
        shared_rows = vector * threads // minor
        while shared_rows > COLUMN_TILE and vector > 1:
            vector //= 2
            shared_rows //= 2
        if shared_rows > COLUMN_TILE:
            threads //= shared_rows // COLUMN_TILE
        return Emitter(EmitterKind.REDUCTION,
                       LaunchDimensions((kept_major, 1, groups), (threads, 1, 1)),
                       f"small column reduction {list(r.dims)}: vector {vector}",
                       (threads,), vector)
    vector = _vector_size(view, minor, COLUMN_TILE)
    blocks = kept_major * ceil(minor / (COLUMN_TILE * vector))
    return Emitter(EmitterKind.REDUCTION,
                   LaunchDimensions((blocks, 1, groups), (COLUMN_TILE * COLUMN_TILE, 1, 1)),
                   f"column reduction {list(r.dims)}: vector {vector}",
                   (COLUMN_TILE, COLUMN_TILE), vector)


def _multi_row(view: FusionView, r: ReductionDims,
               device: Device) -> tuple[tuple[int, int], int, int] | None:
    """``MultiRowReductionFusion::TryCreate``: ((kept, reduced) threads, blocks, vector)
    or None."""
    reduced = r.dims[2]
    kept = r.dims[1]
    if reduced & (reduced - 1):
        return None
    small_in = view.smallest_input_bits()
    small_out = view.smallest_output_bits()
    smallest = min(small_in, small_out)
    largest = max(small_in, small_out)
    if largest == 1 << 62:
        largest = small_out
    vector = min(reduced, 64 // smallest)
    if largest >= 32:
        vector = min(128 // largest, vector)
    warp = device.threads_per_warp
    if reduced > warp * vector:
        return None

    def threads_for(v: int) -> tuple[int, int]:
        threads_reduced = reduced // v
        if kept * threads_reduced <= REDUCTION_THREADS_PER_BLOCK_TARGET:
            return kept, threads_reduced
        return REDUCTION_THREADS_PER_BLOCK_TARGET // threads_reduced, threads_reduced

    def blocks_for(threads: tuple[int, int]) -> int:
        return ceil(kept / threads[0])

    while vector > 1 and blocks_for(threads_for(vector)) < device.core_count:
        vector //= 2
    if reduced > warp * vector:
        return None
    threads = threads_for(vector)
    return threads, blocks_for(threads), vector


def _round_up(x: int, m: int) -> int:
    return ceil(x / m) * m


# ---------------------------------------------------------------------- transpose
def _transpose(view: FusionView, device: Device) -> Emitter:
    """``TransposeFusion`` (or ``PackedTranspose`` for narrow types): one 32x32 tile
    (times the vector size) of the transposed dimensions per block."""
    description = view.consistent_transpose()
    assert description is not None
    if description.packed:
        tiles = packed_transpose_tiles(description.instr)
        assert tiles is not None
        out, _, _ = transpose_spec(description.instr)
        blocks = prod(ceil(d / t) for d, t in zip(out, tiles, strict=True))
        return Emitter(EmitterKind.TRANSPOSE,
                       LaunchDimensions((blocks, 1, 1), (TRANSPOSE_THREADS_PER_BLOCK, 1, 1)),
                       f"packed transpose, output tile {tiles}")
    permutation = description.permutation
    input_shape = [0] * len(permutation)
    for out_dim, in_dim in enumerate(permutation):
        input_shape[in_dim] = description.dimensions[out_dim]
    minor_unchanged = permutation[-1] == len(permutation) - 1
    widest = 0
    shmem = 0
    for hero in view.heroes():
        if tiled_transpose(hero) is not None:
            size = element_bytes(first_array(hero.shape).element_type)
            if minor_unchanged:
                size *= input_shape[-1]
            widest = max(widest, size)
            shmem += TRANSPOSE_TILE * (TRANSPOSE_TILE + 1) * size

    def block_counts(vector: int) -> list[int]:
        sizes = [1] * len(input_shape)
        if minor_unchanged:
            sizes[-1] = vector
            sizes[-2] = TRANSPOSE_TILE
            sizes[permutation[-2]] = TRANSPOSE_TILE
        else:
            sizes[-1] = TRANSPOSE_TILE * vector
            sizes[permutation[-1]] = TRANSPOSE_TILE * vector
        return [ceil(d / b) for d, b in zip(input_shape, sizes, strict=True)]

    vector = input_shape[-1] if minor_unchanged else 1
    counts = block_counts(vector)
    if not minor_unchanged:
        # vectorize when there is work for every thread slot, shared memory for the bigger
        # tile, and dimensions the vector divides
        v = MAX_VECTORIZED_BYTES // max(1, widest)
        slots = device.core_count * device.threads_per_core_limit
        while v > 1:
            enough_work = prod(counts) * TRANSPOSE_THREADS_PER_BLOCK >= v * v * slots
            enough_shmem = shmem * v * v <= device.shared_memory_per_block
            aligned = input_shape[-1] % v == 0 and input_shape[permutation[-1]] % v == 0
            if enough_work and enough_shmem and aligned:
                vector = v
                counts = block_counts(v)
                break
            v //= 2
    return Emitter(EmitterKind.TRANSPOSE,
                   LaunchDimensions((prod(counts), 1, 1), (TRANSPOSE_THREADS_PER_BLOCK, 1, 1)),
                   f"tiled transpose {list(description.dimensions)} permutation "
                   f"{list(permutation)}, vector {vector}", (TRANSPOSE_THREADS_PER_BLOCK,),
                   vector)
