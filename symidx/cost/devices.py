"""GPU devices for the cost models, as data shipped in the package.

Each device is a frozen :class:`Device` read from ``symidx/cost/data/devices.json``, where
every constant names its source (``Device.sources``): XLA's test devices
(``xla/service/gpu/gpu_device_info_for_tests.cc``: the RTX A6000 its cost-model tests
use, A100, H100, B200), the defaults of ``xla/stream_executor/device_description.h``,
XLA's core-info tables (FPUs per core) and op profiles
(``xla/service/gpu/model/hlo_op_profiles_data.h``: clock cycles per element of an
elementwise op), and for the MI300X AMD's published specifications with the ROCm
constants XLA hard-codes.

    >>> from symidx.cost.devices import device
    >>> device("rtx-a6000").core_count
    84
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Any

from symidx.errors import SymidxError

__all__ = ["Device", "device", "DEVICE_NAMES", "DEFAULT_DEVICE"]

#: The device XLA's cost-model tests use.
DEFAULT_DEVICE = "rtx-a6000"


@dataclass(frozen=True)
class Device:
    """One GPU as XLA's ``se::DeviceDescription`` describes it (the fields the cost models
    read). Bandwidths are bytes per second, sizes bytes, the clock GHz."""

    name: str
    core_count: int
    fpus_per_core: int
    clock_rate_ghz: float
    memory_bandwidth: int
    l2_cache_size: int
    l1_cache_size_per_sm: int
    shared_memory_per_block: int
    shared_memory_per_block_optin: int
    shared_memory_per_core: int
    threads_per_block_limit: int
    threads_per_warp: int
    threads_per_core_limit: int
    registers_per_core_limit: int
    registers_per_block_limit: int
    block_dim_limit: tuple[int, int, int]
    dram_to_l2_transaction_size_bytes: int
    memory_transactions_per_clock: int
    compute_capability: tuple[int, ...]
    op_profile: Mapping[str, int]
    sources: Mapping[str, str]
    key: str = ""                    # the name symidx knows it by (``device(key)``)
    platform: str = "cuda"           # cuda | rocm
    device_memory_size: int = 0
    op_profile_name: str = ""        # the key of hlo_op_profiles_data.h it uses
    #: matrix units (tensor cores) by element kind and width (``"f16"``, ``"i8"``):
    #: (units per core, ops per clock, clock scale); empty when the device has none.
    matrix_units: Mapping[str, tuple[int, int, float]] = field(
        default_factory=lambda: MappingProxyType({}))

    def op_cycles(self, opcode: str, dtype: str) -> int | None:
        """The op profile's clock cycles per element for ``opcode`` on ``dtype``
        (``"divide"``, ``"f32"``), or None when the profile does not list it."""
        return self.op_profile.get(f"{opcode}/{dtype}")

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "name": self.name, "platform": self.platform,
                "core_count": self.core_count, "fpus_per_core": self.fpus_per_core,
                "clock_rate_ghz": self.clock_rate_ghz,
                "memory_bandwidth": self.memory_bandwidth,
                "l2_cache_size": self.l2_cache_size,
                "l1_cache_size_per_sm": self.l1_cache_size_per_sm,
                "shared_memory_per_block": self.shared_memory_per_block,
                "shared_memory_per_block_optin": self.shared_memory_per_block_optin,
                "shared_memory_per_core": self.shared_memory_per_core,
                "threads_per_block_limit": self.threads_per_block_limit,
                "threads_per_warp": self.threads_per_warp,
                "threads_per_core_limit": self.threads_per_core_limit,
                "registers_per_core_limit": self.registers_per_core_limit,
                "registers_per_block_limit": self.registers_per_block_limit,
                "block_dim_limit": list(self.block_dim_limit),
                "dram_to_l2_transaction_size_bytes": self.dram_to_l2_transaction_size_bytes,
                "memory_transactions_per_clock": self.memory_transactions_per_clock,
                "compute_capability": list(self.compute_capability),
                "device_memory_size": self.device_memory_size,
                "op_profile": self.op_profile_name,
                "matrix_units": {k: list(v) for k, v in self.matrix_units.items()},
                "sources": dict(self.sources)}


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    text = resources.files("symidx.cost").joinpath("data/devices.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def _device(key: str) -> Device:
    data = _data()
    d = data["devices"][key]
    profile = data["op_profiles"][d["op_profile"]]
    return Device(
        name=d["name"], core_count=d["core_count"], fpus_per_core=d["fpus_per_core"],
        clock_rate_ghz=d["clock_rate_ghz"], memory_bandwidth=d["memory_bandwidth"],
        l2_cache_size=d["l2_cache_size"], l1_cache_size_per_sm=d["l1_cache_size_per_sm"],
        shared_memory_per_block=d["shared_memory_per_block"],
        shared_memory_per_block_optin=d["shared_memory_per_block_optin"],
        shared_memory_per_core=d["shared_memory_per_core"],
        threads_per_block_limit=d["threads_per_block_limit"],
        threads_per_warp=d["threads_per_warp"],
        threads_per_core_limit=d["threads_per_core_limit"],
        registers_per_core_limit=d["registers_per_core_limit"],
        registers_per_block_limit=d["registers_per_block_limit"],
        block_dim_limit=(int(d["block_dim_limit"][0]), int(d["block_dim_limit"][1]),
                         int(d["block_dim_limit"][2])),
        dram_to_l2_transaction_size_bytes=d["dram_to_l2_transaction_size_bytes"],
        memory_transactions_per_clock=d["memory_transactions_per_clock"],
        compute_capability=tuple(d["compute_capability"]),
        op_profile=MappingProxyType(dict(profile)),
        sources=MappingProxyType(dict(d["sources"])),
        key=key, platform=d["platform"], device_memory_size=d["device_memory_size"],
        op_profile_name=d["op_profile"],
        matrix_units=MappingProxyType({k: (int(v[0]), int(v[1]), float(v[2]))
                                       for k, v in d.get("matrix_units", {}).items()}))


#: The devices symidx knows, by the names ``--device`` takes.
DEVICE_NAMES: tuple[str, ...] = ("rtx-a6000", "a100", "h100", "b200", "mi300x")


def device(name: str | Device) -> Device:
    """The device called ``name`` (one of :data:`DEVICE_NAMES`, case-insensitive); a
    :class:`~symidx.errors.SymidxError` naming the known devices otherwise. A
    :class:`Device` is returned as it is."""
    if isinstance(name, Device):
        return name
    key = str(name).strip().lower()
    if key not in DEVICE_NAMES:
        raise SymidxError(f"unknown device {name!r}; known devices: "
                          f"{', '.join(DEVICE_NAMES)}")
    return _device(key)
