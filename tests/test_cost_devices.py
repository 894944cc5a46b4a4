"""The devices shipped with symidx's cost models: the values XLA's test devices set
(``gpu_device_info_for_tests.cc``), the defaults of ``device_description.h``, the op
profiles of ``hlo_op_profiles_data.h`` -- written out here from those files, not read from
symidx's data -- and that every constant names a source."""

from __future__ import annotations

import dataclasses

import pytest

from symidx.cost import constants
from symidx.cost.devices import DEVICE_NAMES, Device, device
from symidx.errors import SymidxError


def test_rtx_a6000_is_xlas_test_device() -> None:
    d = device("rtx-a6000")
    # TestGpuDeviceInfo::RTXA6000DeviceInfo
    assert (d.core_count, d.fpus_per_core, d.clock_rate_ghz) == (84, 128, 1.41)
    assert d.memory_bandwidth == 768_096_000_000
    assert d.l2_cache_size == 6 * 1024 * 1024
    assert (d.shared_memory_per_block, d.shared_memory_per_block_optin,
            d.shared_memory_per_core) == (48 * 1024, 99 * 1024, 100 * 1024)
    assert (d.threads_per_block_limit, d.threads_per_warp, d.threads_per_core_limit) == \
        (1024, 32, 1536)
    assert (d.registers_per_core_limit, d.registers_per_block_limit) == (65536, 65536)
    assert d.block_dim_limit == (2_147_483_647, 65535, 65535)
    assert d.compute_capability == (8, 9)
    # device_description.h defaults for CUDA
    assert (d.l1_cache_size_per_sm, d.dram_to_l2_transaction_size_bytes,
            d.memory_transactions_per_clock) == (2048, 64, 32)
    # sm_86 (XLA's default profile; there is no sm_89 entry)
    assert d.op_cycles("divide", "s8") == 370
    assert d.op_cycles("power", "f32") == 925
    assert d.op_cycles("add", "f32") is None      # not profiled: XLA's default applies


@pytest.mark.parametrize("name, cores, fpus, clock, bw, l2", [
    ("a100", 108, 64, 1.41, 2_039_040_000_000, 40 * 1024 * 1024),
    ("h100", 132, 128, 1.98, 3_352_320_000_000, 50 * 1024 * 1024),
    ("b200", 148, 128, 1.965, 8_796_093_022_208, 126 * 1024 * 1024),
    ("mi300x", 304, 128, 2.1, 5_300_000_000_000, 4 * 1024 * 1024),
])
def test_other_devices(name: str, cores: int, fpus: int, clock: float, bw: int,
                       l2: int) -> None:
    d = device(name)
    assert (d.core_count, d.fpus_per_core, d.clock_rate_ghz, d.memory_bandwidth,
            d.l2_cache_size) == (cores, fpus, clock, bw, l2)


def test_op_profiles_by_device() -> None:
    assert device("h100").op_cycles("divide", "f32") == 19        # sm_90
    assert device("a100").op_cycles("divide", "s8") == 417        # sm_80
    assert device("b200").op_cycles("divide", "s8") == 370        # no sm_100_B200: sm_86
    assert device("mi300x").op_cycles("divide", "s8") == 370      # ROCm: sm_86


def test_mi300x_rocm_constants() -> None:
    d = device("mi300x")
    assert d.platform == "rocm" and d.threads_per_warp == 64
    assert (d.l1_cache_size_per_sm, d.dram_to_l2_transaction_size_bytes,
            d.memory_transactions_per_clock) == (32 * 1024, 128, 16)


@pytest.mark.parametrize("name", DEVICE_NAMES)
def test_every_constant_has_a_source(name: str) -> None:
    d = device(name)
    fields = {f.name for f in dataclasses.fields(Device)} - {"sources", "key",
                                                             "op_profile_name"}
    missing = sorted(f for f in fields if not d.sources.get(f))
    assert not missing, f"{name}: no source for {missing}"


def test_unknown_device_names_the_known_ones() -> None:
    with pytest.raises(SymidxError, match="rtx-a6000.*h100"):
        device("v100")


def test_device_is_frozen_and_case_insensitive() -> None:
    d = device("H100")
    assert d is device("h100")
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.core_count = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        d.op_profile["x/f32"] = 1  # type: ignore[index]


def test_constants_have_sources() -> None:
    names = [n for n in constants.__all__ if n != "SOURCES"]
    assert sorted(names) == sorted(constants.SOURCES)
    assert constants.MAX_TENSOR_NUM_ELEMENTS == 1_048_576
    assert constants.NUM_WARPS_THRESHOLDS[-1] == (None, 8)
