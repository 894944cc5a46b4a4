"""GPU cost models on tiles: devices (:mod:`~symidx.cost.devices`), XLA's constants
(:mod:`~symidx.cost.constants`); XLA's classic per-kernel model
(:mod:`~symidx.cost.classic`, with the GPU HLO cost analysis :mod:`~symidx.cost.hlo_cost`,
the kernels' emitters :mod:`~symidx.cost.fusion_view` and launch dimensions
:mod:`~symidx.cost.launch`)."""

from symidx.cost.devices import DEVICE_NAMES, Device, device

__all__ = ["DEVICE_NAMES", "Device", "device"]
