"""GPU cost models on tiles: XLA's tiled (indexing) cost model, the best tiling, the devices,
and XLA's classic per-kernel model.

* :mod:`~symidx.cost.devices`: the GPUs (package data, every constant with its source);
* :mod:`~symidx.cost.constants`: XLA's model constants with their sources;
* :mod:`~symidx.cost.flops`, :mod:`~symidx.cost.timing`, :mod:`~symidx.cost.dot`,
  :mod:`~symidx.cost.tiled`: the model;
* :mod:`~symidx.cost.search`: the best tiling and the runners-up;
* :mod:`~symidx.cost.refined`: what ``--objective symidx`` adds (coalescing symidx proves,
  shared-memory bank conflicts of staged tiles);
* :mod:`~symidx.cost.api`: all of it on an HLO module (:func:`fusion_tiles`, :func:`tile`,
  :func:`cost`, :func:`best`, :func:`rank`, :func:`emitter_check`).
"""

from symidx.cost.api import (
    EmitterVerdict,
    FusionTiles,
    TiledComputation,
    best,
    cost,
    emitter_check,
    fusion_tiles,
    rank,
    tile,
)
from symidx.cost.devices import DEVICE_NAMES, Device, device
from symidx.cost.search import Ranking, SearchResult
from symidx.cost.tiled import TiledCost

__all__ = ["DEVICE_NAMES", "Device", "device", "FusionTiles", "fusion_tiles", "tile",
           "TiledComputation", "cost", "best", "rank", "emitter_check", "EmitterVerdict",
           "TiledCost", "SearchResult", "Ranking"]
