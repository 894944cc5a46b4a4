"""A kernel as XLA's fusion analysis sees it (``HloFusionAdaptor`` and ``HloFusionAnalysis``):
the instructions one kernel evaluates, its roots, its heroes, the emitter that generates it.

A kernel is one instruction (a fusion, or a plain instruction as a fusion of one), or a
producer fused into a consumer. Inside it, an operand that is a fusion parameter is followed
to the instruction that fills it; the producer's output, seen from the consumer, is the
producer's root (its output ``k`` when the consumer reads a get-tuple-element). What stays
outside are the kernel's *parameters*, the buffers it reads.

The emitter kind (``HloFusionAnalysis::GetEmitterFusionKind``), first match wins:

1. a Triton, cuDNN or custom fusion (by its backend config): not a kernel this model
   prices (refused);
2. **reduction**: a root whose hero is a reduce over or into contiguous dimensions that
   the reduction emitter handles (``IsRealReductionHero``), every other root either such a
   reduce of the same kind or of the reduce's input size;
3. **transpose**: the heroes that are transposes the tiled transpose emitter handles agree
   (same dimensions, permutation, element width) and every other root has the
   transpose's input shape (up to a bitcast);
4. **loop** for several roots; **scatter**, **sort** for such a root; **concatenate** for a
   concatenate hero of at most 4 operands as the one root; **loop** otherwise.

A loop kernel whose roots are dynamic-update-slices of a kernel parameter, updating it only
where it reads it, is emitted in place (``CanEmitFusedDynamicUpdateSliceInPlaceForGpu``):
its threads cover the update, not the whole output.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from math import prod

from symidx.cost.hlo_cost import UnsupportedByCostModel, is_elementwise
from symidx.cost.shapes import (
    bits,
    elements,
    minor_to_major,
    most_minor_non_trivial,
    reshape_is_bitcast,
    transpose_is_bitcast,
)
from symidx.hlo import HloComputation, HloInstruction, Shape, TupleShape
from symidx.hlo.facts import called_computation
from symidx.hlo.leaves import leaves

__all__ = ["EmitterKind", "FusionView", "ReductionDims", "TransposeDescription",
           "reduction_dims", "is_reduction_from_or_to_contiguous", "is_real_reduction_hero",
           "tiled_transpose", "transposes_minor_dimension", "is_input_fusible_reduction",
           "WARP_SIZE", "MIN_THREADS_X_ROW_REDUCTION", "BATCHED_REDUCTION_RACE_FREE_BOUND"]

WARP_SIZE = 32
#: ``MinThreadsXRowReduction``: a row reduction's threads per block, at most.
MIN_THREADS_X_ROW_REDUCTION = 1024
#: ``BatchedReductionRaceFreeBound``: how big a row reduction's batch dimension may be.
BATCHED_REDUCTION_RACE_FREE_BOUND = 8
#: The tiled transpose emitter's thresholds (``ir_emission_utils.h``).
MIN_DIMENSION_TO_TRANSPOSE_TILED = 16
MIN_DIMENSION_TO_TRANSPOSE_TILED2 = 8
MIN_TOTAL_DIMENSIONS_TO_TRANSPOSE_TILED = 64 * 128
MAX_BITS_IN_MOST_MINOR_DIMENSION = 8 * 8
NUM_SHMEM_BANKS = 32
BANK_BITWIDTH = 32
#: The concatenate emitter takes at most this many operands.
MAX_CONCAT_OPERANDS = 4

_NOT_KERNELS = {"__triton": "a Triton fusion", "__triton_gemm": "a Triton GEMM fusion",
                "__triton_nested_gemm_fusion": "a Triton GEMM fusion",
                "__triton_collective_fusion": "a Triton collective fusion",
                "__cudnn$fusion": "a cuDNN fusion", "__custom_fusion": "a custom fusion"}


class EmitterKind(str, Enum):
    LOOP = "loop"
    REDUCTION = "reduction"
    TRANSPOSE = "transpose"
    CONCATENATE = "concatenate"
    SCATTER = "scatter"
    SORT = "sort"
    DYNAMIC_UPDATE_SLICE = "in-place dynamic-update-slice"


@dataclass(frozen=True)
class ReductionDims:
    """``ReductionDimensions``: a row reduction ``[batch, kept, reduced]`` (reduces the
    first and last), or a column reduction ``[kept, reduced, kept]`` (reduces the
    middle), sizes major to minor in the input's physical order."""

    is_row: bool
    dims: tuple[int, int, int]


@dataclass(frozen=True)
class TransposeDescription:
    """A transpose the tiled transpose emitter handles: its output dimensions and
    permutation (output dimension ``i`` is operand dimension ``permutation[i]``)."""

    instr: HloInstruction
    dimensions: tuple[int, ...]
    permutation: tuple[int, ...]
    packed: bool

    def equivalent(self, other: TransposeDescription) -> bool:
        return (self.dimensions == other.dimensions and self.permutation == other.permutation
                and _bits(self.instr.shape) == _bits(other.instr.shape))


def _bits(shape: Shape | TupleShape) -> int:
    return bits(shape)


def _backend_kind(instr: HloInstruction) -> str:
    config = instr.backend_config_json()
    if isinstance(config, dict):
        fusion = config.get("fusion_backend_config")
        kind = fusion.get("kind") if isinstance(fusion, dict) else None
        if isinstance(kind, str):
            return kind
    return ""


class FusionView:
    """The instructions of one kernel: ``single(instr)`` or ``producer_consumer(p, c)``."""

    def __init__(self, members: list[HloInstruction], roots: list[HloInstruction],
                 follow: dict[HloInstruction, HloInstruction],
                 outputs_of: dict[HloInstruction, HloInstruction], label: str,
                 backend_kind: str) -> None:
        self.members = members
        self._member_ids = {id(m) for m in members}
        self.roots = roots
        self._follow = follow
        self._outputs_of = outputs_of
        self.label = label
        self.backend_kind = backend_kind
        #: the instruction errors about this kernel point at
        self.anchor: HloInstruction | None = roots[0] if roots else None
        self._users: dict[int, list[HloInstruction]] = {}
        for m in members:
            for k in range(len(m.operands)):
                op = self.operand(m, k)
                if self.contains(op):
                    bucket = self._users.setdefault(id(op), [])
                    if all(u is not m for u in bucket):
                        bucket.append(m)
        self.parameters = self._parameters()

    # -------------------------------------------------------------- building
    @classmethod
    def single(cls, instr: HloInstruction) -> FusionView:
        members, roots, follow, outputs = _expand(instr)
        view = cls(members, roots, follow, outputs, instr.name, _backend_kind(instr))
        view.anchor = instr
        return view

    @classmethod
    def producer_consumer(cls, producer: HloInstruction,
                          consumer: HloInstruction) -> FusionView:
        p_members, p_roots, p_follow, p_outputs = _expand(producer)
        c_members, c_roots, c_follow, c_outputs = _expand(consumer)
        follow = {**p_follow, **c_follow}
        outputs = {**p_outputs, **c_outputs}
        kind = _backend_kind(consumer) or _backend_kind(producer)
        view = cls(p_members + c_members, c_roots, follow, outputs,
                   f"{producer.name} fused into {consumer.name}", kind)
        view.anchor = producer if _backend_kind(producer) in _NOT_KERNELS else consumer
        return view

    # -------------------------------------------------------------- queries
    def contains(self, instr: HloInstruction) -> bool:
        return id(instr) in self._member_ids

    def operand(self, instr: HloInstruction, k: int) -> HloInstruction:
        """Operand ``k`` of ``instr`` inside the kernel: followed through fusion
        parameters to the instruction computing it (a kernel member or a parameter)."""
        return self.resolve(instr.operands[k])

    def resolve(self, x: HloInstruction) -> HloInstruction:
        for _ in range(10_000):
            if x in self._follow:
                x = self._follow[x]
                continue
            if x in self._outputs_of:
                x = self._outputs_of[x]
                continue
            if x.opcode == "get-tuple-element" and x.operands and \
                    x.operands[0] in self._outputs_of:
                root = self._outputs_of[x.operands[0]]
                if root.opcode == "tuple" and x.tuple_index is not None:
                    x = root.operands[x.tuple_index]
                    continue
            return x
        raise UnsupportedByCostModel(f"{self.label}: parameters that follow each other")

    def operands(self, instr: HloInstruction) -> list[HloInstruction]:
        return [self.operand(instr, k) for k in range(len(instr.operands))]

    def users(self, instr: HloInstruction) -> list[HloInstruction]:
        return list(self._users.get(id(instr), []))

    def _parameters(self) -> list[HloInstruction]:
        found: list[HloInstruction] = []
        seen: set[int] = set()
        for m in self.members:
            for op in self.operands(m):
                if not self.contains(op) and id(op) not in seen:
                    seen.add(id(op))
                    found.append(op)
        return found

    def instructions(self) -> Iterator[HloInstruction]:
        return iter(self.members)

    # -------------------------------------------------------------- heroes
    def hero(self, root: HloInstruction) -> HloInstruction:
        """``FindNonTrivialHero``: down a chain of one-operand elementwise ops and bitcasts,
        then a tiled transpose or a concatenate reached only through elementwise ops, or
        the reduce the chain ends at; the root itself otherwise."""
        hero = root
        while _is_intermediate(hero, 1) and self.contains(self.operand(hero, 0)):
            hero = self.operand(hero, 0)
        found = self._find_hero(hero, lambda i: tiled_transpose(i) is not None)
        if found is None:
            found = self._find_hero(hero, lambda i: i.opcode == "concatenate")
        if found is not None:
            return found
        return hero if hero.opcode == "reduce" else root

    def _find_hero(self, start: HloInstruction,
                   predicate: Callable[[HloInstruction], bool]) -> HloInstruction | None:
        hero: HloInstruction | None = None
        queue = deque([start])
        seen = {id(start)}
        while queue:
            node = queue.popleft()
            if predicate(node):
                if hero is not None:
                    return None
                hero = node
                continue
            if not _is_intermediate(node, 3):
                continue
            for op in self.operands(node):
                if self.contains(op) and id(op) not in seen:
                    seen.add(id(op))
                    queue.append(op)
        if hero is None:
            return None
        # no non-elementwise op may be reachable from the hero towards the roots
        queue = deque(self.users(hero))
        seen = {id(u) for u in queue}
        while queue:
            node = queue.popleft()
            if node.opcode not in ("tuple", "parameter") and not _is_intermediate(node, 3):
                return None
            for u in self.users(node):
                if id(u) not in seen:
                    seen.add(id(u))
                    queue.append(u)
        return hero

    def heroes(self) -> list[HloInstruction]:
        return [self.hero(r) for r in self.roots]

    # -------------------------------------------------------------- emitter
    def emitter_kind(self) -> EmitterKind:
        kind = self.backend_kind
        if kind in _NOT_KERNELS:
            raise UnsupportedByCostModel(
                f"{self.label} is {_NOT_KERNELS[kind]}: the classic model prices the "
                f"native emitters only (use the tiled model for Triton fusions)",
                self.anchor)
        roots, heroes = self.roots, self.heroes()
        first_reduce = next((h for r, h in zip(roots, heroes, strict=True)
                             if is_real_reduction_hero(r, h)), None)
        if first_reduce is not None:
            reference = reduction_dims(first_reduce)
            valid = True
            for r, h in zip(roots, heroes, strict=True):
                if r is first_reduce:
                    continue
                if not is_real_reduction_hero(r, h):
                    if _elements(r.shape) != elements(_array(first_reduce.operands[0].shape)):
                        valid = False
                        break
                elif reduction_dims(h) != reference:
                    valid = False
                    break
            if valid:
                return EmitterKind.REDUCTION
        if self.consistent_transpose() is not None:
            return EmitterKind.TRANSPOSE
        if len(roots) > 1:
            return EmitterKind.LOOP
        if roots[0].opcode == "scatter":
            return EmitterKind.SCATTER
        if roots[0].opcode == "sort":
            return EmitterKind.SORT
        if (len(heroes) == 1 and heroes[0].opcode == "concatenate"
                and not isinstance(roots[0].shape, TupleShape)
                and len(heroes[0].operands) <= MAX_CONCAT_OPERANDS):
            return EmitterKind.CONCATENATE
        return EmitterKind.LOOP

    def consistent_transpose(self) -> TransposeDescription | None:
        """``FindConsistentTransposeHero``."""
        found: TransposeDescription | None = None
        others: list[HloInstruction] = []
        for root, hero in zip(self.roots, self.heroes(), strict=True):
            description = tiled_transpose(hero)
            if description is None:
                others.append(root)
            elif found is None:
                found = description
            elif not found.equivalent(description):
                return None
        if found is None:
            return None
        transpose_input = found.instr.operands[0].shape
        for root in others:
            if not _reshape_or_transpose_bitcast(root.shape, transpose_input):
                return None
        return found

    def reduction_hero(self) -> HloInstruction:
        for root, hero in zip(self.roots, self.heroes(), strict=True):
            if is_real_reduction_hero(root, hero):
                return hero
        raise UnsupportedByCostModel(f"{self.label}: no reduction hero")

    def dynamic_update_slices(self) -> list[HloInstruction]:
        """The dynamic-update-slices defining the roots (through bitcasts)."""
        found = []
        for root in self.roots:
            node = root
            while node.opcode == "bitcast" and self.contains(self.operand(node, 0)):
                node = self.operand(node, 0)
            if node.opcode == "dynamic-update-slice":
                found.append(node)
        return found

    def is_dynamic_update_slice_fusion(self) -> bool:
        for root in self.roots:
            if root.opcode == "dynamic-update-slice":
                return True
            if root.opcode == "bitcast" and self.operand(root, 0).opcode == \
                    "dynamic-update-slice":
                return True
        return False

    def can_update_in_place(self) -> bool:
        """``CanEmitFusedDynamicUpdateSliceInPlaceForGpu`` before buffer assignment."""
        dus_list = self.dynamic_update_slices()
        if len(dus_list) != len(self.roots) or not dus_list:
            return False
        update_shape = self.operand(dus_list[0], 1).shape
        root_ids = {id(r) for r in self.roots}
        for dus in dus_list:
            node = dus
            while id(node) not in root_ids:
                users = self.users(node)
                if len(users) != 1 or users[0].opcode != "bitcast":
                    return False
                node = users[0]
            operand = self.operand(dus, 0)
            if self.contains(operand) and operand.opcode == "bitcast":
                operand = self.operand(operand, 0)
            if self.contains(operand):
                return False
            visited = {id(operand), id(dus)}
            queue = deque([operand])
            while queue:
                node = queue.popleft()
                for user in self._users_of_anything(node):
                    if not self._reads_in_place(user, dus, update_shape):
                        return False
                    if id(user) not in visited:
                        visited.add(id(user))
                        queue.append(user)
            if self.operand(dus, 1).shape != update_shape:
                return False
        return True

    def _reads_in_place(self, user: HloInstruction, dus: HloInstruction,
                        update_shape: object) -> bool:
        """Whether ``user``, reached from the updated buffer, reads it only where ``dus``
        writes it, or elementwise (so updating in place races with no read)."""
        if user.opcode == "dynamic-slice" and self.operand(user, 0) is self.operand(dus, 0) \
                and user.shape == update_shape:
            return elements(_array(update_shape)) == 1 or \
                self.operands(user)[1:] == self.operands(dus)[2:]
        if user is dus:
            return True
        if user.opcode == "dynamic-update-slice":
            return False
        return is_elementwise(user) or user.opcode in ("bitcast", "tuple")

    def _users_of_anything(self, x: HloInstruction) -> list[HloInstruction]:
        """Kernel members using ``x`` (a member or a kernel parameter)."""
        if self.contains(x):
            return self.users(x)
        return [m for m in self.members if any(op is x for op in self.operands(m))]

    def smallest_bits(self, shapes: list[object]) -> int:
        bits = [8 if s.element_type == "pred" else _bits(s) for s in shapes
                if isinstance(s, Shape) and _bits(s) > 0]
        return min(bits) if bits else 1 << 62

    def smallest_input_bits(self) -> int:
        return self.smallest_bits([p.shape for p in self.parameters])

    def smallest_output_bits(self) -> int:
        return self.smallest_bits([r.shape for r in self.roots])

    def may_prevent_vectorization(self) -> bool:
        for m in self.members:
            if m.opcode in ("dot", "sort"):
                return True
            if m.opcode == "concatenate" and len(m.operands) > 10:
                return True
            if m.opcode == "reduce" and isinstance(m.shape, TupleShape) and \
                    len(m.shape.elements) > 1:
                return True
        return False


# ---------------------------------------------------------------------- building
def _expand(instr: HloInstruction) -> tuple[list[HloInstruction], list[HloInstruction],
                                            dict[HloInstruction, HloInstruction],
                                            dict[HloInstruction, HloInstruction]]:
    """The members, roots, parameter links and output link of one instruction's kernel."""
    if instr.opcode != "fusion":
        return [instr], [instr], {}, {}
    comp = called_computation(instr)
    if comp is None:
        raise UnsupportedByCostModel(f"fusion {instr.name} calls no computation", instr)
    follow: dict[HloInstruction, HloInstruction] = {}
    for k, param in enumerate(comp.parameters):
        follow[param] = instr.operands[k]
    members = [i for i in comp.instructions if i.opcode != "parameter"]
    roots = fusion_roots(comp)
    return members, roots, follow, {instr: comp.root}


def fusion_roots(comp: HloComputation) -> list[HloInstruction]:
    """``GetFusionRoots``: the root, or the operands of a root tuple (through
    get-tuple-elements of tuples)."""
    out: list[HloInstruction] = []

    def visit(root: HloInstruction) -> None:
        if root.opcode == "get-tuple-element" and root.operands[0].opcode == "tuple" \
                and root.tuple_index is not None:
            visit(root.operands[0].operands[root.tuple_index])
        elif root.opcode == "get-tuple-element":
            out.append(root.operands[0])
        elif root.opcode == "tuple":
            for op in root.operands:
                visit(op)
        else:
            out.append(root)

    visit(comp.root)
    return out


# ---------------------------------------------------------------------- facts
def _array(shape: object) -> Shape:
    if not isinstance(shape, Shape):
        raise UnsupportedByCostModel(f"expected an array shape, found {shape}")
    return shape


def _elements(shape: Shape | TupleShape) -> int:
    return sum(elements(leaf) for leaf in leaves(shape))


def _is_intermediate(instr: HloInstruction, allowed_operand_count: int) -> bool:
    """``IsIntermediate``: an elementwise op (not a copy) of 1..``allowed`` operands, or a
    bitcast, or a reshape or transpose that is one."""
    n = len(instr.operands)
    if n == 0 or n > allowed_operand_count:
        return False
    if is_elementwise(instr):
        return instr.opcode != "copy"
    if instr.opcode == "bitcast":
        return True
    if instr.opcode == "reshape":
        return reshape_is_bitcast(instr)
    if instr.opcode == "transpose":
        return transpose_is_bitcast(instr)
    return False


def _consecutive(shape: Shape, dims: list[int]) -> bool:
    """``LayoutUtil::AreDimensionsConsecutive``: ``dims`` are adjacent in the layout."""
    positions = sorted(minor_to_major(shape).index(d) for d in dims)
    return all(b == a + 1 for a, b in zip(positions, positions[1:]))


def _partition(shape: Shape, middle: list[int]) -> tuple[int, int, int]:
    """``PartitionShapeByMiddleDimensions``: (major, middle, minor) sizes."""
    values = [1, 1, 1]
    segment = 2
    for d in minor_to_major(shape):
        if segment != 0:
            inside = d in middle
            if segment == 2 and inside:
                segment = 1
            elif segment == 1 and not inside:
                segment = 0
        values[segment] *= shape.dims[d]
    return values[0], values[1], values[2]


def reduction_dims(reduce: HloInstruction) -> ReductionDims:
    """``GetReductionKindAndContiguousComponents``."""
    shape = _array(reduce.operands[0].shape)
    reduced = list(reduce.dimensions or ())
    kept = [d for d in range(shape.rank) if d not in reduced]
    if not kept:
        return ReductionDims(True, (1, 1, elements(shape)))
    if _consecutive(shape, kept):
        major, middle, minor = _partition(shape, kept)
        if middle == 1:
            return ReductionDims(True, (1, 1, major * minor))
        if minor == 1:
            return ReductionDims(False, (1, major, middle))
        return ReductionDims(True, (major, middle, minor))
    major, middle, minor = _partition(shape, reduced)
    if minor == 1:
        return ReductionDims(True, (1, major, middle))
    return ReductionDims(False, (major, middle, minor))


def _faster_than_elemental(r: ReductionDims) -> bool:
    """``IsUnnestedReductionFasterThanElemental``."""
    if r.is_row:
        return r.dims[2] >= WARP_SIZE or WARP_SIZE % r.dims[2] == 0
    major, minor = r.dims[1], r.dims[2]
    prefer_elemental = (major < WARP_SIZE or (major < 2 * WARP_SIZE and minor < WARP_SIZE)
                        or (major < 4 * WARP_SIZE and minor < 8)
                        or (major < 8 * WARP_SIZE and minor < 3))
    return not prefer_elemental


def is_reduction_from_or_to_contiguous(instr: HloInstruction) -> bool:
    """``IsReductionFromOrToContiguousDimensions``."""
    if instr.opcode != "reduce":
        return False
    shape = instr.operands[0].shape
    if not isinstance(shape, Shape):
        return False
    reduced = list(instr.dimensions or ())
    kept = [d for d in range(shape.rank) if d not in reduced]
    if not (_consecutive(shape, kept) or _consecutive(shape, reduced)):
        return False
    return _faster_than_elemental(reduction_dims(instr))


def reduction_is_race_free(r: ReductionDims) -> bool:
    """``ReductionIsRaceFree``: one block per output element suffices."""
    if r.is_row:
        return (r.dims[2] <= MIN_THREADS_X_ROW_REDUCTION * 16
                and r.dims[0] <= BATCHED_REDUCTION_RACE_FREE_BOUND)
    return r.dims[1] <= WARP_SIZE * 128


def is_real_reduction_hero(root: HloInstruction, hero: HloInstruction) -> bool:
    if not is_reduction_from_or_to_contiguous(hero):
        return False
    return root is hero or reduction_is_race_free(reduction_dims(hero))


def _normalized_permutation(permutation: tuple[int, ...]) -> bool:
    return all(permutation[i] + 1 != permutation[i + 1] for i in range(len(permutation) - 1))


def transpose_spec(instr: HloInstruction) -> tuple[list[int], list[int], list[int]]:
    """``GetTransposeSpec``: the canonical output shape, permutation and input shape
    ``[.., T2, .., A, T1, B]``."""
    permutation = list(instr.dimensions or ())
    out = list(_array(instr.shape).dims)
    if len(permutation) < 2:
        raise UnsupportedByCostModel(f"transpose {instr.name}: fewer than two dimensions")
    if permutation[-1] != len(out) - 1:
        permutation.append(len(out))
        out.append(1)
    dim_t1 = -1
    for i in range(len(permutation) - 1, -1, -1):
        if permutation[i] != i:
            dim_t1 = i
            break
    rank = len(out)
    if rank < 3 or permutation[rank - 3] != rank - 3:
        out.insert(dim_t1, 1)
        permutation = [p + 1 if p > rank - 3 else p for p in permutation]
        permutation.insert(dim_t1, dim_t1)
    inverse = [0] * len(permutation)
    for i, p in enumerate(permutation):
        inverse[p] = i
    canonical_input = [out[inverse[i]] for i in range(len(out))]
    return out, permutation, canonical_input


def packed_transpose_tiles(instr: HloInstruction) -> list[int] | None:
    """``GetPackedTransposeTileSizes``: the output tile of the packed transpose emitter
    (narrow types), or None when it does not apply."""
    bits = _bits(instr.shape)
    if bits >= BANK_BITWIDTH:
        return None
    out, permutation, canonical_input = transpose_spec(instr)
    rank = len(canonical_input)
    inverse = [0] * rank
    for i, p in enumerate(permutation):
        inverse[p] = i
    vector = BANK_BITWIDTH // bits
    shmem_dim = NUM_SHMEM_BANKS * vector
    dim_t1 = canonical_input[rank - 2]
    dim_a = canonical_input[rank - 3]
    dim_t2 = canonical_input[permutation[rank - 2]]
    dim_b = canonical_input[rank - 1]
    tile_t1 = min(dim_t1, shmem_dim)
    tile_a = min(dim_a, shmem_dim // tile_t1)
    tile_t2 = min(dim_t2, shmem_dim)
    rows, cols = tile_t2, tile_a * tile_t1
    if cols < 10 * vector or rows < 10 * vector:
        return None
    if dim_b != 1 or rows % vector or cols % vector or dim_t2 % tile_t2 % vector:
        return None
    tiles = [1] * rank
    tiles[inverse[rank - 2]] = tile_t1
    tiles[rank - 2] = tile_t2
    tiles[rank - 3] = tile_a
    return tiles


def tiled_transpose(instr: HloInstruction) -> TransposeDescription | None:
    """``GetDescriptionForTiledTransposeEmitter``: a transpose the shared-memory transpose
    emitters take (logical dimensions: XLA normalizes layouts before fusion)."""
    if instr.opcode != "transpose" or not instr.dimensions or len(instr.dimensions) < 2:
        return None
    shape = instr.shape
    operand = instr.operands[0].shape
    if not (isinstance(shape, Shape) and isinstance(operand, Shape)):
        return None
    permutation = tuple(instr.dimensions)
    dims = shape.dims
    bits = _bits(shape)
    if _normalized_permutation(permutation) and packed_transpose_tiles(instr) is not None:
        return TransposeDescription(instr, dims, permutation, True)
    operand_minor = operand.dims[-1]
    if permutation[-1] == len(dims) - 1:
        operand_minor = operand.dims[len(dims) - 2]
        if (bits * dims[-1] <= MAX_BITS_IN_MOST_MINOR_DIMENSION
                and bits * dims[-1] * min(operand_minor, dims[-2])
                >= 8 * MIN_DIMENSION_TO_TRANSPOSE_TILED):
            return TransposeDescription(instr, dims, permutation, False)
        return None
    if ((operand_minor >= MIN_DIMENSION_TO_TRANSPOSE_TILED
         and dims[-1] >= MIN_DIMENSION_TO_TRANSPOSE_TILED)
            or (operand_minor >= MIN_DIMENSION_TO_TRANSPOSE_TILED2
                and dims[-1] >= MIN_DIMENSION_TO_TRANSPOSE_TILED2
                and operand_minor * dims[-1] >= MIN_TOTAL_DIMENSIONS_TO_TRANSPOSE_TILED)):
        if bits == 4:
            return None
        return TransposeDescription(instr, dims, permutation, False)
    return None


def _reshape_or_transpose_bitcast(a: object, b: object) -> bool:
    """``ShapeUtil::IsReshapeOrTransposeBitcast`` (element types ignored): the same
    elements in the same physical order."""
    if not (isinstance(a, Shape) and isinstance(b, Shape)):
        return False
    if elements(a) != elements(b):
        return False
    phys_a = [a.dims[d] for d in reversed(minor_to_major(a)) if a.dims[d] != 1]
    phys_b = [b.dims[d] for d in reversed(minor_to_major(b)) if b.dims[d] != 1]
    return prod(phys_a) == prod(phys_b)


def transposes_minor_dimension(instr: HloInstruction) -> bool:
    """``TransposesMinorDimension``: a copy or transpose (or a fusion holding one) after
    which the most minor non-trivial dimension is no longer the most minor."""
    if instr.opcode == "fusion":
        comp = called_computation(instr)
        return comp is not None and any(transposes_minor_dimension(i)
                                        for i in comp.instructions)
    if instr.opcode == "copy":
        a, b = instr.operands[0].shape, instr.shape
        if not (isinstance(a, Shape) and isinstance(b, Shape)):
            return False
        return most_minor_non_trivial(a)[0] != most_minor_non_trivial(b)[0]
    if instr.opcode == "transpose":
        operand, out = instr.operands[0].shape, instr.shape
        if not (isinstance(operand, Shape) and isinstance(out, Shape)):
            return False
        position = {d: i for i, d in enumerate(minor_to_major(operand))}
        first = most_minor_non_trivial(operand)[1]
        for out_dim in minor_to_major(out):
            if out.dims[out_dim] == 1:
                continue
            return position[(instr.dimensions or ())[out_dim]] > first
        return False
    return False


def is_input_fusible_reduction(instr: HloInstruction) -> bool:
    """``IsInputFusibleReduction``: a reduce the reduction emitter takes, or a fusion with
    a root whose hero is one."""
    if instr.opcode == "fusion":
        view = FusionView.single(instr)
        return any(is_real_reduction_hero(r, h) for r, h in zip(view.roots, view.heroes(),
                                                                 strict=True))
    return is_reduction_from_or_to_contiguous(instr)
