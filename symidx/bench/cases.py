"""The cases of the benchmark suite: the maps they build (untimed) and the rows they time.

* **compose step** -- one composition of two 3-result reshape maps;
* **reshape chain** -- N reshapes alternating [8,16,4] -> [512] -> [8,16,4], composed one at
  a time and simplified after every step (symidx ends at the identity);
* **seed simplify** -- the four simplifier examples of XLA's indexing documentation;
* **diamond ladder** -- a fusion of N diamonds ``x -> (negate, exponential) -> add``, 2^N
  paths from the root to the parameter (symidx only: one sweep over the fused computation);
* **sample fusions** -- the maps of every fusion of each compiled JAX sample bundled in
  ``symidx/examples`` (symidx only);
* **equal round trip** / **unequal round trip** -- ``[k,k,k] -> [k*k/2, 2k] -> [k,k,k]``
  reshapes composed (not simplified) against the identity, and the same with a wrong second
  reshape, at 10^3 .. 10^12 points: equality the simplifier is not asked to reduce, decided
  by ``equal`` (method auto) and by islpy's ``is_equal``, both from text (each engine reads
  the pair from its own text, timed, then decides); **equal round trip (z3)** and
  **equal enumerate** time symidx's own procedures alone;
* **layout bitcast** -- an XLA tiled layout's physical -> logical map composed with another
  layout's logical -> physical map, simplified; **cute compose** -- a CuTe layout composed
  with another, as maps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial
from importlib import resources
from typing import Any

from sympy import Integer

from symidx.analysis import instruction_maps
from symidx.bench.backends import Backend, SymidxBackend
from symidx.bench.harness import Row, measure_row, measure_symidx
from symidx.core.expr import Expr, FloorDiv, Mod, dim
from symidx.core.indexing_map import IndexingMap
from symidx.core.simplify import compose
from symidx.core.syntax import parse_map
from symidx.core.verify import has_z3
from symidx.errors import SymidxError
from symidx.fusion import Reached
from symidx.hlo import HloInstruction, fusion_instructions, parse_hlo
from symidx.layout import cute
from symidx.layout.maps import cute_map, xla_logical_index_map, xla_physical_index_map
from symidx.ops import OUTPUT_TO_INPUT

__all__ = [
    "SHAPE", "SEED_EXAMPLES", "CASES", "Case", "reshape_map", "compose_step_maps",
    "chain_maps", "ladder_hlo", "bundled_samples", "round_trip_pair", "bitcast_maps",
    "cute_maps", "compose_pair", "compose_chain", "simplify_one", "compare_equal",
    "compare_unequal", "compare_equal_text", "compare_unequal_text",
]

SHAPE = (8, 16, 4)
"""The shape the reshape chain alternates with its flattening."""

SEED_EXAMPLES = (
    "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]",
    "(d0, d1, d2) -> ((100d0 + 10d1 + d2) floorDiv 100, ((100d0 + 10d1 + d2) mod 100) "
    "floordiv 10, d2 mod 10), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
    "(d0, d1, d2) -> ((16d0 + 4d1 + d2) floordiv 8, (16d0 + 4d1 + d2) mod 8), "
    "domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
    "(d0, d1) -> (-((-11d0 - d1 + 109) floordiv 11) + 9), domain: d0 in [0, 9], d1 in [0, 10]",
)
"""The simplifier examples of XLA's *Indexing analysis* document."""



# --- the maps and modules the cases use -----------------------------------------------------


def reshape_map(out_shape: Sequence[int], in_shape: Sequence[int]) -> IndexingMap:
    """Output-to-input map of a reshape from ``in_shape`` to ``out_shape``: linearise the
    output index, delinearise it in the input shape."""
    linear: Expr = Integer(0)
    for i, n in enumerate(out_shape):
        linear = linear * n + dim(i)
    results, stride = [], 1
    for n in reversed(in_shape):
        results.append(Mod(FloorDiv(linear, stride), n))
        stride *= n
    return IndexingMap.create(out_shape, list(reversed(results)))


def compose_step_maps() -> list[IndexingMap]:
    """Two reshape maps, [10,10,10] -> [50,20] then [50,20] -> [10,10,10] (3 results into
    2, then 2 into 3): one composition step."""
    return [reshape_map([10, 10, 10], [50, 20]), reshape_map([50, 20], [10, 10, 10])]


def chain_maps(length: int, shape: Sequence[int] = SHAPE) -> list[IndexingMap]:
    """The output-to-input maps of ``length`` reshapes alternating ``shape`` and its
    flattening, from the chain's last reshape back to its first input."""
    flat = [1]
    for n in shape:
        flat[0] *= n
    maps = []
    for k in range(length):
        out_shape, in_shape = (flat, shape) if k % 2 == 0 else (shape, flat)
        maps.append(reshape_map(out_shape, in_shape))
    return maps


def ladder_hlo(diamonds: int, shape: Sequence[int] = (16, 32)) -> str:
    """A module whose entry root is a fusion of ``diamonds`` diamonds
    ``x -> (negate, exponential) -> add``: 2^diamonds paths from root to parameter."""
    array = f"f32[{','.join(map(str, shape))}]{{{','.join(map(str, range(len(shape))[::-1]))}}}"
    lines = ["HloModule ladder", "", f"%ladder (x0: {array}) -> {array} {{",
             f"  %x0 = {array} parameter(0)"]
    for k in range(1, diamonds + 1):
        root = "ROOT " if k == diamonds else ""
        lines += [f"  %neg{k} = {array} negate(%x{k - 1})",
                  f"  %exp{k} = {array} exponential(%x{k - 1})",
                  f"  {root}%x{k} = {array} add(%neg{k}, %exp{k})"]
    lines += ["}", "", f"ENTRY %main (p: {array}) -> {array} {{",
              f"  %p = {array} parameter(0)",
              f"  ROOT %fusion = {array} fusion(%p), kind=kLoop, calls=%ladder", "}"]
    return "\n".join(lines) + "\n"


def bundled_samples() -> Iterator[tuple[str, str]]:
    """(name, HLO text) of the compiled JAX samples in ``symidx/examples``."""
    for entry in sorted(resources.files("symidx.examples").iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".hlo"):
            yield entry.name[: -len(".hlo")], entry.read_text()


def bitcast_maps(rows: int, cols: int) -> list[IndexingMap]:
    """Physical index of ``f32[rows,cols]{1,0:T(8,128)}`` -> logical index, and logical
    index -> physical index of ``{0,1:T(8,128)}``: their composition is the bitcast."""
    return [xla_logical_index_map([rows, cols], [1, 0], [(8, 128)]),
            xla_physical_index_map([rows, cols], [0, 1], [(8, 128)])]


def cute_maps(n: int) -> list[IndexingMap]:
    """CuTe's ``composition(A, B)`` as maps: ``B = (4,n):(n,1)`` (a row-major 4 x n tile,
    coordinate -> index) then ``A``, the 1-D layout ``((4,n)):((n,1))`` (index, split
    colexicographically, -> offset). Their composition is a transpose of the tile."""
    tile = cute.Layout((4, n), (n, 1))
    flat = cute.Layout(((4, n),), ((n, 1),))
    return [cute_map(tile), cute_map(flat)]


def round_trip_pair(k: int, wrong: bool = False) -> list[IndexingMap]:
    """``[k,k,k] -> [k*k/2, 2k] -> [k,k,k]`` as one composed (unsimplified) map, and the
    identity on ``[k,k,k]``: equal. With ``wrong`` the way back reads rows of ``2k + 1``:
    different."""
    cube, flat = [k, k, k], [k * k // 2, 2 * k]
    there = reshape_map(cube, [k * k // 2, 2 * k + 1] if wrong else flat)
    return [compose(there, reshape_map(flat, cube)), IndexingMap.identity(cube)]


# --- the operations -----------------------------------------------------------------------------


def compose_pair(b: Backend, maps: list[Any]) -> object:
    """One composition: ``maps[1] ∘ maps[0]``."""
    return b.compose(maps[0], maps[1])


def compose_chain(b: Backend, maps: list[Any]) -> object:
    """Compose the maps in order, simplifying after every step."""
    acc = maps[0]
    for m in maps[1:]:
        acc = b.simplify(b.compose(acc, m))
    return acc


def simplify_one(b: Backend, maps: list[Any]) -> object:
    """Simplify ``maps[0]``."""
    return b.simplify(maps[0])


def compare_equal(b: Backend, maps: list[Any]) -> object:
    """Decide ``maps[0] == maps[1]`` on their domain; the pair is equal."""
    if not b.equal(maps[0], maps[1]):
        raise SymidxError(f"{b.name} finds an equal benchmark pair different")
    return True


def compare_unequal(b: Backend, maps: list[Any]) -> object:
    """Decide ``maps[0] == maps[1]`` on their domain; the pair is different."""
    if b.equal(maps[0], maps[1]):
        raise SymidxError(f"{b.name} finds a different benchmark pair equal")
    return False


def compare_equal_text(b: Backend, texts: list[str]) -> object:
    """Read the pair from the engine's own text, then decide it equal."""
    return compare_equal(b, [b.read(t) for t in texts])


def compare_unequal_text(b: Backend, texts: list[str]) -> object:
    """Read the pair from the engine's own text, then decide it different."""
    return compare_unequal(b, [b.read(t) for t in texts])


# --- the cases ------------------------------------------------------------------------------------

Case = Callable[[Sequence[Backend], bool], list[Row]]


def case_compose_step(backends: Sequence[Backend], quick: bool) -> list[Row]:
    return [measure_row("compose step", 3, "results", backends, compose_step_maps,
                        compose_pair, 30 if quick else 300, warmup=3)]


def case_reshape_chain(backends: Sequence[Backend], quick: bool) -> list[Row]:
    rows = []
    for length in (16, 64) if quick else (8, 16, 32, 64):
        def build(length: int = length) -> list[IndexingMap]:
            return [IndexingMap.identity(SHAPE), *reversed(chain_maps(length))]

        rows.append(measure_row("reshape chain", length, "reshapes", backends, build,
                                compose_chain, 3 if quick else 9))
    return rows


def case_seed_simplify(backends: Sequence[Backend], quick: bool) -> list[Row]:
    rows = []
    for k, text in enumerate(SEED_EXAMPLES, 1):
        def build(text: str = text) -> list[IndexingMap]:
            return [parse_map(text)]

        size = build()[0].domain_size()
        rows.append(measure_row(f"seed simplify {k}", size, "points", backends, build,
                                simplify_one, 10 if quick else 50, warmup=3))
    return rows


def case_diamond_ladder(backends: Sequence[Backend], quick: bool) -> list[Row]:
    rows = []
    for n in (10, 40) if quick else (10, 20, 30, 40):
        fusion = parse_hlo(ladder_hlo(n)).entry.root
        rows.append(measure_symidx("diamond ladder", n, "diamonds",
                                   partial(instruction_maps, fusion, OUTPUT_TO_INPUT),
                                   3 if quick else 7))
    return rows


def case_sample_fusions(backends: Sequence[Backend], quick: bool) -> list[Row]:
    rows = []
    for name, text in bundled_samples():
        module = parse_hlo(text)
        fusions = fusion_instructions(module)
        if not fusions:
            continue
        size = sum(len(f.called_computations["calls"][0].instructions) for f in fusions)
        rows.append(measure_symidx("sample fusions", size, "fused instrs",
                                   partial(_all_maps, fusions), 3 if quick else 7,
                                   detail=name))
    return rows


def _all_maps(fusions: Sequence[HloInstruction]) -> list[list[Reached]]:
    return [instruction_maps(f, OUTPUT_TO_INPUT) for f in fusions]


def case_equal(backends: Sequence[Backend], quick: bool) -> list[Row]:
    """Equality of reshape round trips against the identity, 10^3 .. 10^12 points."""
    others = [b for b in backends if b.name != "symidx"]
    repeats = 5 if quick else 21
    rows = []
    for k in (10, 100, 1000, 10000):
        for wrong in (False, True):
            rows.append(measure_row(
                "unequal round trip" if wrong else "equal round trip", k**3, "points",
                [SymidxBackend("auto"), *others], partial(round_trip_pair, k, wrong),
                compare_unequal_text if wrong else compare_equal_text, repeats, warmup=2,
                from_text=True))
    if has_z3():
        for k in (10, 100, 1000, 10000):
            rows.append(measure_row("equal round trip (z3)", k**3, "points",
                                    [SymidxBackend("smt")], partial(round_trip_pair, k),
                                    compare_equal, 3 if quick else 7))
    for k in (10, 40) if quick else (10, 40, 100):
        rows.append(measure_row("equal enumerate", k**3, "points",
                                [SymidxBackend("enumerate")], partial(round_trip_pair, k),
                                compare_equal, 3 if quick else 5))
    return rows


def case_layouts(backends: Sequence[Backend], quick: bool) -> list[Row]:
    rows = []
    for side in (64, 1024) if quick else (64, 256, 1024, 8192):
        def build(side: int = side) -> list[IndexingMap]:
            return bitcast_maps(side, side)

        rows.append(measure_row("layout bitcast", side * side, "elements", backends, build,
                                compose_chain, 5 if quick else 20))
    for n in (2, 64) if quick else (2, 8, 64, 512):
        def build_cute(n: int = n) -> list[IndexingMap]:
            return cute_maps(n)

        rows.append(measure_row("cute compose", 4 * n, "elements", backends, build_cute,
                                compose_chain, 5 if quick else 20))
    return rows


CASES: dict[str, Case] = {
    "compose": case_compose_step,
    "chain": case_reshape_chain,
    "seeds": case_seed_simplify,
    "ladder": case_diamond_ladder,
    "fusions": case_sample_fusions,
    "equal": case_equal,
    "layouts": case_layouts,
}
"""The cases by name, in the order the table shows them."""
