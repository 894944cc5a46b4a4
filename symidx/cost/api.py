"""The cost model and the tile search as functions of an HLO module (what ``symidx tile
--cost / --best / --emitter`` runs).

    >>> from symidx.cost import fusion_tiles, cost, best
    >>> ft = fusion_tiles(open("tests/data/cost/softmax.hlo").read(), "triton_softmax")
    >>> cost(ft, [[1, 911]]).bytes_read
    3731456
    >>> best(ft).best[0].output_tile_sizes
    [[4, 911]]

:class:`FusionTiles` holds a fusion's tiles under one tiler (``legacy``: XLA's
``SymbolicTileAnalysis``; ``experimental``: its ``TilingSpace``). A tiling is given as the
**output tile of each root** (XLA's ``BlockLevelParameters.output_tile_sizes``; a dot root
may add its contracting tile after its output dimensions, else the dot's backend config
gives it), or, with ``flat=True``, as the tile sizes of every parameter of the tiling (the
order :attr:`FusionTiles.parameters` names).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from symidx._display import Rich, Shown, html_table
from symidx.cost.devices import DEFAULT_DEVICE, Device, device
from symidx.cost.search import Ranking, SearchResult, best_tilings, rank_tilings
from symidx.cost.tiled import TiledCost, tiling_cost
from symidx.errors import SymidxError
from symidx.tiling.block_config import BlockLevelParameters, block_level_parameters, dot_block_k
from symidx.tiling.concrete import TileSet, from_analysis, from_space, pow2_ceil

__all__ = ["FusionTiles", "fusion_tiles", "cost", "best", "rank", "tile",
           "TiledComputation", "emitter_check", "EmitterVerdict", "MULTI_OUTPUT_FLAG"]

#: The XLA debug option that lets the experimental tiler take a multi-output fusion.
MULTI_OUTPUT_FLAG = "xla_gpu_unsupported_enable_triton_multi_output_fusion"


@dataclass
class FusionTiles:
    """A fusion's tiles under one tiler, ready to cost (see the module docstring)."""

    computation: Any
    fusion: Any                                  # the fusion instruction, when named
    tiler: str
    xla_flags: Mapping[str, str] = field(default_factory=dict)
    _symbolic: Any = None                        # TileSet, or None: tile each tiling apart

    @property
    def config(self) -> BlockLevelParameters | None:
        """The fusion's ``block_level_fusion_config``, if it has one."""
        return block_level_parameters(self.fusion) if self.fusion is not None else None

    @property
    def space(self) -> Any:
        """The legacy analysis or the experimental tiling space."""
        return self.base.analysis

    @property
    def base(self) -> Any:
        """The tile set the search enumerates from (a :class:`TileSet`, or a per-tiling
        stand-in when the experimental tiles need concrete sizes)."""
        return self._symbolic

    @property
    def parameters(self) -> list[str]:
        """The parameters of a flat tiling, in order (``instruction`` and ``dim``)."""
        if self.tiler == "experimental":
            return [f"{d.hlo}:{d.type}:{d.size}" for d in self.space.dims]
        out: list[str] = []
        for p in self.space.parameters:
            out.extend(f"{p.instruction}:{'hidden' if p.hidden else 'output'}:{n}"
                       for n in p.sizes)
        return out

    def tiles_for(self, flat: Sequence[int]) -> TileSet:
        """The tile set to cost ``flat`` with (experimental: the space with the sizes
        assigned, as XLA propagates a concrete tiling)."""
        if self.tiler != "experimental":
            symbolic: TileSet = self._symbolic
            return symbolic
        return _experimental(self.computation, self.xla_flags, list(flat))

    def flat(self, roots: Sequence[Sequence[int]]) -> list[int]:
        """The flat tiling of output tiles per root (XLA's ``TilingFromAnnotatedFusion``,
        and for the experimental tiler ``GetTilingSpaceConcreteSizes`` with every size
        padded to a power of two)."""
        lists = [[int(x) for x in r] for r in roots]
        if not lists:
            raise SymidxError("no output tile given")
        if self.tiler == "experimental":
            return _space_tiling(self.space, lists)
        return _legacy_tiling(self.space, lists)


class _PerTiling:
    """An experimental tiling space whose tiles are propagated tiling by tiling."""

    variant = "experimental"

    def __init__(self, space: Any, comp: Any, flags: Mapping[str, str]):
        self.analysis = space
        self.comp = comp
        self.flags = flags
        self.extents = tuple(d.size for d in space.dims)
        self.root_dims = [tuple(x) for x in space.root_shapes]

    def make(self, flat: Sequence[int]) -> TileSet:
        return _experimental(self.comp, self.flags, list(flat))


def _experimental(comp: Any, flags: Mapping[str, str], sizes: list[int] | None) -> TileSet:
    from symidx.tiling.space import build_space

    if comp.root.opcode == "tuple" and str(flags.get(MULTI_OUTPUT_FLAG, "")).lower() != "true":
        raise SymidxError(f"the experimental tiler takes a multi-output fusion only with "
                          f"the XLA flag {MULTI_OUTPUT_FLAG}=true (as XLA)")
    return from_space(build_space(comp, sizes))


def _module(module: Any) -> Any:
    if isinstance(module, str):
        from symidx.hlo import parse_module

        return parse_module(module)
    return module


def fusion_tiles(module: Any, fusion: str | None = None, *, tiler: str = "legacy",
                 xla_flags: Mapping[str, str] | None = None) -> FusionTiles:
    """The tiles of the fusion ``fusion`` (an instruction of the module; None: the entry
    computation is the fusion) of ``module`` (an :class:`~symidx.hlo.HloModule` or HLO
    text), under ``tiler``."""
    from symidx.tiling.analysis import analyze, fusion_computation

    if tiler not in ("legacy", "experimental"):
        raise SymidxError(f"unknown tiler {tiler!r} (legacy or experimental)")
    mod = _module(module)
    comp = fusion_computation(mod, fusion)
    instr = None
    if fusion is not None:
        instr = next((i for c in [mod.entry, *mod.computations.values()]
                      for i in c.instructions if i.name == fusion), None)
    flags = dict(xla_flags or {})
    if tiler == "experimental":
        from symidx.tiling.space import SpaceRefusal, build_space

        try:
            base: Any = _experimental(comp, flags, None)
        except SpaceRefusal:
            base = _PerTiling(build_space(comp), comp, flags)
        return FusionTiles(comp, instr, tiler, flags, base)
    t = analyze(comp)
    t.fusion = instr
    return FusionTiles(comp, instr, tiler, flags, from_analysis(t))


def _dev(dev: str | Device) -> Device:
    return device(dev)


def _config(ft: FusionTiles) -> BlockLevelParameters:
    """The fusion's ``block_level_fusion_config``, or an error saying to give a tiling."""
    cfg = ft.config
    if cfg is None or not cfg.output_tile_sizes:
        raise SymidxError(f"{ft.fusion.name if ft.fusion is not None else 'the fusion'} "
                          "has no block_level_fusion_config; give the tiling")
    return cfg


def cost(ft: FusionTiles, tiling: Sequence[Any] | None = None, device: str | Device =
         DEFAULT_DEVICE, *, num_warps: int | None = None, num_stages: int | None = None,
         flat: bool = False, objective: str = "xla") -> TiledCost:
    """The tiled cost of a tiling: output tiles per root (None: the fusion's
    ``block_level_fusion_config``, with its warps, stages and TMA), or a flat tiling with
    ``flat=True``. ``num_warps`` None: the config's, else XLA's estimate; ``num_stages``
    None: the config's, else 1 (stages and TMA reach only the dot model)."""
    dev = _dev(device)
    tma = False
    if tiling is None:
        cfg = _config(ft)
        sizes = ft.flat(cfg.output_tile_sizes)
        num_warps = cfg.num_warps if num_warps is None else num_warps
        num_stages = cfg.num_stages if num_stages is None else num_stages
        tma = cfg.is_tma_allowed
    elif flat:
        sizes = [int(x) for x in tiling]
    else:
        sizes = ft.flat(tiling)
    # BlockLevelParameters' default is one stage; a config read without one has none (0)
    return tiling_cost(ft.tiles_for(sizes), sizes, dev, num_warps,
                       1 if num_stages is None else num_stages, objective=objective, tma=tma)


def best(ft: FusionTiles, device: str | Device = DEFAULT_DEVICE, *, top: int = 1,
         emitter: str = "triton", smem: int | None = None, max_tilings: int = 50_000_000,
         cpu_seconds: float = 120.0, objective: str = "xla") -> SearchResult:
    """The ``top`` cheapest valid tilings as XLA's search ranks them
    (:func:`symidx.cost.search.best_tilings`; ``objective="symidx"``: by symidx's refined
    cost, saying where the pick departs from XLA's)."""
    return best_tilings(ft.base, _dev(device), emitter=emitter, top=top, smem=smem,
                        max_tilings=max_tilings, cpu_seconds=cpu_seconds,
                        objective=objective)


def rank(ft: FusionTiles, device: str | Device = DEFAULT_DEVICE, *, limit: int = 100_000,
         objective: str = "xla", max_tilings: int = 50_000_000, cpu_seconds: float = 120.0
         ) -> Ranking:
    """Every valid tiling (the analysis' constraints; legacy tiler) with its cost on the
    device, cheapest first, ties in XLA's order, and whether Triton can emit it
    (:func:`symidx.cost.search.rank_tilings`; what ``--valid-tilings --device`` prints)."""
    if ft.tiler != "legacy":
        raise SymidxError("ranking the valid tilings takes the legacy tiler")
    return rank_tilings(ft.base, _dev(device), limit=limit, objective=objective,
                        max_tilings=max_tilings, cpu_seconds=cpu_seconds)


@dataclass
class TiledComputation(Rich):
    """A fusion tiled one way: each tiled instruction's tile (sizes, strides, and the offsets
    of the tile of each program id -- an indexing map under the legacy tiler, expressions of
    the tile ids under the experimental one), and the tiling's cost when a device was given.
    Shows as tables in a notebook."""

    fusion: str
    tiler: str
    tiling: list[int]                        # flat, in :attr:`FusionTiles.parameters` order
    output_tile_sizes: list[list[int]]
    tiles: list[dict[str, Any]]
    cost: TiledCost | None = None

    def to_json(self) -> dict[str, Any]:
        return {"fusion": self.fusion, "tiler": self.tiler, "tiling": self.tiling,
                "output_tile_sizes": self.output_tile_sizes, "tiles": self.tiles,
                "cost": None if self.cost is None else self.cost.to_json()}

    def text(self) -> str:
        lines = [f"{self.fusion} ({self.tiler}) tiled {self.tiling}: output tiles "
                 f"{self.output_tile_sizes}"]
        for t in self.tiles:
            extra = f" upper bounds {t['upper_bounds']}" if "upper_bounds" in t else ""
            where = f" ({t['path']})" if t.get("path") else ""
            lines.append(f"  {t['name']}{where}: sizes {t['sizes']} strides {t['strides']} "
                         f"offsets {t['offsets']}{extra}")
        if self.cost is not None:
            lines.append(self.cost.text())
        return "\n".join(lines)

    def _shown_(self) -> Shown:
        """The tiles as a table (the offsets in code), then the cost's tables."""
        from html import escape

        experimental = any("upper_bounds" in t for t in self.tiles)
        cols = ["instruction", "path", "sizes", "strides", "offsets"] + \
            (["upper bounds"] if experimental else [])
        rows = [[t["name"], t.get("path", ""), t["sizes"], t["strides"],
                 f"<code>{escape(str(t['offsets']))}</code>"] +
                ([t.get("upper_bounds", "")] if experimental else []) for t in self.tiles]
        out = html_table(cols, rows, f"{self.fusion} ({self.tiler}) tiled {self.tiling}: "
                                     f"output tiles {self.output_tile_sizes}", raw=(4,))
        if self.cost is not None:
            out += "\n" + (self.cost._shown_().html or "")
        return Shown(self.text(), out)


def tile(ft: FusionTiles, tiling: Sequence[Any] | None = None,
          device: str | Device | None = None, *, flat: bool = False,
          num_warps: int | None = None, num_stages: int | None = None,
          objective: str = "xla") -> TiledComputation:
    """The fusion tiled by ``tiling`` (output tiles per root; None: the fusion's
    ``block_level_fusion_config``; ``flat=True``: tile sizes of every parameter) with every
    tiled instruction's tile, and its cost on ``device`` when one is given (as
    :func:`cost`)."""
    if tiling is None:
        sizes = ft.flat(_config(ft).output_tile_sizes)
    else:
        sizes = [int(x) for x in tiling] if flat else ft.flat(tiling)
    tiles = (_space_tiles if ft.tiler == "experimental" else _legacy_tiles)(ft, sizes)
    c = None
    if device is not None:
        if tiling is None:
            c = cost(ft, None, device, num_warps=num_warps, num_stages=num_stages,
                     objective=objective)
        else:
            c = cost(ft, sizes, device, num_warps=num_warps, num_stages=num_stages,
                     flat=True, objective=objective)
    from symidx.cost.tiled import root_tiles

    ts = ft.tiles_for(sizes)
    name = ft.fusion.name if ft.fusion is not None else ft.computation.name
    return TiledComputation(name, ft.tiler, sizes, root_tiles(ts, ts.one(sizes), 0), tiles, c)


def _legacy_tiles(ft: FusionTiles, sizes: list[int]) -> list[dict[str, Any]]:
    from symidx.core.indexing_map import print_map
    from symidx.tiling.analysis import AnalysisRefusal
    from symidx.tiling.tiled import tiled_computation

    try:
        results = tiled_computation(ft.space, sizes)
    except AnalysisRefusal as e:
        raise SymidxError(f"no tiling {sizes}: {e}") from None
    return [{"name": r.name, "path": r.path, "sizes": list(r.tile_sizes),
             "strides": list(r.tile_strides),
             "offsets": print_map(r.offsets_map, "xla").split("\nruntime")[0],
             "runtime_variables": list(r.runtime_variables)} for r in results]


def _space_tiles(ft: FusionTiles, sizes: list[int]) -> list[dict[str, Any]]:
    from symidx.tiling.space import SpaceRefusal, build_space, tile_computation

    try:
        space = build_space(ft.computation, sizes)
        found = tile_computation(space)
    except SpaceRefusal as e:
        raise SymidxError(f"no tiling {sizes}: {e}") from None
    out = []
    for instr, k, t in found:
        j = t.to_json()
        out.append({"name": instr.name if k == 0 else f"{instr.name}#{k}",
                    "sizes": j["sizes"], "strides": j["strides"], "offsets": j["offsets"],
                    "upper_bounds": j["upper_bounds"]})
    return out


@dataclass(frozen=True)
class EmitterVerdict:
    valid: bool
    reason: str
    tiling: tuple[int, ...]


def emitter_check(ft: FusionTiles, tiling: Sequence[Any], device: str | Device =
                  DEFAULT_DEVICE, *, emitter: str = "triton", flat: bool = False
                  ) -> EmitterVerdict:
    """Whether the emitter can take a tiling (``emitter="none"``: the analysis' own
    constraints only); a root's flat tiling lists a dot root's contracting tile last."""
    from symidx.tiling.emitter import OK, TritonConstraints

    dev = _dev(device)
    sizes = [int(x) for x in tiling] if flat else ft.flat(tiling)
    ts = ft.tiles_for(sizes)
    if len(sizes) != len(ts.extents):
        raise SymidxError(f"{len(sizes)} tile sizes for the {len(ts.extents)} parameters of "
                          "the tiling")
    vals = ts.one(sizes)
    if emitter == "none":
        ok = bool(TritonConstraints(ts, 1 << 62).analysis_ok(vals)[0]) \
            if ts.variant == "legacy" else True
        reason = "" if ok else "the tiling does not satisfy the tiling analysis' constraints"
        return EmitterVerdict(ok, reason, tuple(sizes))
    if emitter != "triton":
        raise SymidxError(f"unknown emitter {emitter!r} (triton or none)")
    checker = TritonConstraints(ts, dev.block_dim_limit[0])
    code = int(checker.check(vals)[0])
    return EmitterVerdict(code == OK, checker.reason(code, vals, 0), tuple(sizes))


# --------------------------------------------------------------------------- tilings
def _legacy_tiling(t: Any, roots: list[list[int]]) -> list[int]:
    """XLA's ``TilingFromAnnotatedFusion``: the real root's output tile (a dot root's
    contracting tile from the sizes after its output dimensions, or from its backend
    config), and every other dot's contracting tile from its backend config."""
    from symidx.hlo.facts import array_dims
    from symidx.tiling.concrete import _all_instrs

    r = t.roots.index(t.real_root) if t.real_root in t.roots else 0
    tile = list(roots[r] if r < len(roots) else roots[0])
    real = t.real_root
    out_rank = len(array_dims(real.shape, real.name))
    by_name = {i.name: i for i in _all_instrs(t.computation)}
    flat: list[int] = []
    for p in t.parameters:
        if not p.hidden:
            nc = len(p.sizes) - out_rank
            out, k = tile[:out_rank], tile[out_rank:]
            if len(out) != out_rank or (k and not nc):
                raise SymidxError(f"{len(tile)} tile sizes for the root {real.name}, which has "
                                  f"{out_rank} dimensions")
            if nc:
                if not k:
                    bk = dot_block_k(real)
                    if bk is None:
                        raise SymidxError(f"the dot {real.name} has no contracting tile: give "
                                          f"it after its output tile, or in its "
                                          f"backend_config sizes")
                    k = [bk] * nc
                if len(k) != nc:
                    raise SymidxError(f"{len(k)} contracting tile sizes for {real.name}, "
                                      f"which contracts {nc} dimensions")
                flat.extend(k)
            flat.extend(out)
        else:
            instr = by_name.get(p.instruction)
            bk = dot_block_k(instr) if instr is not None else None
            if bk is None:
                raise SymidxError(f"the dot {p.instruction} has no contracting tile (its "
                                  f"backend_config sizes)")
            flat.extend([bk] * len(p.sizes))
    return flat


def _space_tiling(space: Any, roots: list[list[int]]) -> list[int]:
    """XLA's ``GetTilingSpaceConcreteSizes``: the roots' dimensions their tile, a
    reduction's dimension its extent, a dot's contracting dimension its backend-config
    tile; every size padded to a power of two."""
    sizes: list[int | None] = [None] * len(space.dims)
    for r, ids in enumerate(space.root_dims):
        tile = roots[r] if r < len(roots) else roots[0]
        if len(tile) != len(ids):
            raise SymidxError(f"{len(tile)} tile sizes for root {r}, which has {len(ids)} "
                              "dimensions")
        for i, s in zip(ids, tile):
            sizes[i] = s
    for (name, kind, _idx), d in space.seq.items():
        if kind == "reduce":
            sizes[d] = space.dims[d].size
        else:
            bk = dot_block_k(space.comp.instruction(name))
            if bk is None:
                raise SymidxError(f"the dot {name} has no contracting tile (its backend_config "
                                  "sizes)")
            sizes[d] = bk
    if any(s is None for s in sizes):
        raise SymidxError("the output tiles do not give every dimension of the tiling space")
    return [int(x) for x in pow2_ceil([int(s) for s in sizes if s is not None])]
