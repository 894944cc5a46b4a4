"""GPU cost models on tiles: XLA's tiled (indexing) cost model, the best tiling, the devices,
and XLA's classic per-kernel model.

* :mod:`~symidx.cost.devices`: the GPUs (package data, every constant with its source);
* :mod:`~symidx.cost.constants`: XLA's model constants with their sources;
* :mod:`~symidx.cost.flops`, :mod:`~symidx.cost.timing`, :mod:`~symidx.cost.dot`,
  :mod:`~symidx.cost.tiled`: the model;
* :mod:`~symidx.cost.search`: the best tiling and the runners-up;
* :mod:`~symidx.cost.api`: all of it on an HLO module (:func:`fusion_tiles`,
  :func:`cost`, :func:`best`, :func:`emitter_check`).
"""

from symidx.cost.api import (
    EmitterVerdict,
    FusionTiles,
    best,
    cost,
    emitter_check,
    fusion_tiles,
)
from symidx.cost.devices import DEVICE_NAMES, Device, device
from symidx.cost.search import SearchResult
from symidx.cost.tiled import TiledCost

__all__ = ["DEVICE_NAMES", "Device", "device", "FusionTiles", "fusion_tiles", "cost", "best",
           "emitter_check", "EmitterVerdict", "TiledCost", "SearchResult"]
