"""GPU cost models on tiles: devices (:mod:`~symidx.cost.devices`), XLA's constants
(:mod:`~symidx.cost.constants`)."""

from symidx.cost.devices import DEVICE_NAMES, Device, device

__all__ = ["DEVICE_NAMES", "Device", "device"]
