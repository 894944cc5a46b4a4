"""GPU cost models of fusions (XLA's ``xla/service/gpu/model/``).

:mod:`symidx.cost.classic` is XLA's classic per-kernel model (``GpuPerformanceModel``):
launch dimensions from the fusion emitter, bytes and flops from the GPU HLO cost analysis,
read/write/compute times combined per kernel, and the fused-versus-unfused estimate that
priority fusion compares.
"""
