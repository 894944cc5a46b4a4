"""Whole-entry analysis against XLA's own CPU compile of the same module, in one run.

    python benchmarks/bench_whole_entry.py [DIR] [--modules NAME ...] [--timeout 600]
        [--all-outputs] [--densenet 6,12,24,16] [--gru 64] [--no-densenet]

For each module (default: resnet50, the gemma, llama 8B and mixtral 8x7B modules and torax
from DIR, default ``../shared/realhlo`` next to the repository) and for a DenseNet121-like
stack written here in plain jax (:func:`densenet_hlo`: dense blocks of batchnorm, relu,
1x1 and 3x3 convolutions and concatenations, transitions with average pooling; tiny shapes,
random weights, lowered by jax to HLO text in this process) and a GRU over ``--gru`` time
steps (:func:`gru_hlo`, a ``lax.scan`` loop), two figures, one after the
other in this process, both in CPU seconds of the process (:func:`time.process_time`:
every thread of XLA's compiler counts, and other processes on the machine do not):

* **symidx**: parse the text (``parse_module``) and compute the maps of the entry
  computation as ``symidx maps FILE --computation ENTRY`` does (its first output; with
  ``--all-outputs`` every output, swept together as ``--output all`` does), with
  ``--timeout`` as the analysis's limit (a module that reaches it is reported as such,
  never as a time);
* **XLA**: parse the same text (jaxlib's ``hlo_module_from_text``), convert it to StableHLO
  and compile it for the CPU (``Client.compile_and_load`` of jax's CPU client). A module
  XLA does not compile for the CPU (a GPU module's cuBLAS or cuDNN custom-calls, say) is
  reported as such, with XLA's first error line.

The table prints both and the ratio symidx / XLA (target: <= 1.0). It also prints the
analysis budgets the module hit (the labels of maps that are a bounding box or stopped at
the cap of distinct maps per carried value). Figures, never assertions. Without jax the
XLA column and the DenseNet row are left out.
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = ROOT.parent / "shared" / "realhlo"
MODULES = (
    "xla_backends_cpu_benchmarks_hlo_resnet50_keras_jax_f32",
    "xla_backends_cpu_benchmarks_hlo_gemma3_1b_flax_call",
    "xla_tools_benchmarks_hlo_hlo_llama31_8b_bf16_1x8",
    "xla_tools_benchmarks_hlo_hlo_mixtral_8x7b_bf16_1x8",
    "xla_tools_benchmarks_hlo_hlo_torax_iterhybrid_predictor_corrector_f64",
)
DENSENET121 = (6, 12, 24, 16)
#: Labels of the analysis's own budgets (the only looseness it chooses).
BUDGETS = ("distinct maps replaced by their bounding box", "distinct maps for one carried")


def densenet_hlo(blocks: tuple[int, ...] = DENSENET121, growth: int = 4, size: int = 16,
                 seed: int = 0) -> str:
    """HLO text of a DenseNet-like forward pass in plain jax: a 3x3 stem convolution, then
    per entry of ``blocks`` a dense block of that many layers (each: batchnorm with batch
    statistics, relu, 1x1 convolution to ``4*growth`` channels, batchnorm, relu, 3x3
    convolution to ``growth`` channels, concatenated to its input), a transition between
    blocks (batchnorm, relu, 1x1 convolution halving the channels, 2x2 average pooling),
    global average pooling and a dense layer to 10 logits. Image ``size``x``size``x3,
    batch 2; the weights are parameters (random values are drawn for lowering)."""
    import jax
    import jax.numpy as jnp

    key = jax.random.PRNGKey(seed)
    shapes: list[tuple[int, ...]] = []

    def conv_shape(cin: int, cout: int, k: int) -> int:
        shapes.append((k, k, cin, cout))
        return cout

    channels = conv_shape(3, 2 * growth, 3)
    for b, layers in enumerate(blocks):
        for _ in range(layers):
            conv_shape(channels, 4 * growth, 1)
            conv_shape(4 * growth, growth, 3)
            channels += growth
        if b + 1 < len(blocks):
            channels = conv_shape(channels, channels // 2, 1)
    shapes.append((channels, 10))
    weights = [jax.random.normal(k, s, jnp.float32) * 0.1
               for k, s in zip(jax.random.split(key, len(shapes)), shapes)]

    def conv(x: Any, w: Any) -> Any:
        return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def norm_relu(x: Any) -> Any:
        mean = x.mean(axis=(0, 1, 2), keepdims=True)
        var = ((x - mean) ** 2).mean(axis=(0, 1, 2), keepdims=True)
        return jax.nn.relu((x - mean) * jax.lax.rsqrt(var + 1e-5))

    def forward(image: Any, params: list[Any]) -> Any:
        it = iter(params)
        x = conv(image, next(it))
        for b, layers in enumerate(blocks):
            for _ in range(layers):
                y = conv(norm_relu(x), next(it))
                y = conv(norm_relu(y), next(it))
                x = jnp.concatenate([x, y], axis=-1)
            if b + 1 < len(blocks):
                x = conv(norm_relu(x), next(it))
                x = jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 2, 2, 1),
                                          "VALID") / 4.0
        x = norm_relu(x).mean(axis=(1, 2))
        return x @ next(it)

    image = jnp.zeros((2, size, size, 3), jnp.float32)
    lowered = jax.jit(forward).lower(image, weights)
    hlo: Any = lowered.compiler_ir("hlo")
    return str(hlo.as_hlo_text())


def gru_hlo(steps: int = 64, hidden: int = 8, features: int = 4, seed: int = 0) -> str:
    """HLO text of a GRU over ``steps`` time steps in plain jax (``lax.scan``: a while
    loop whose body reads the step's input by a dynamic slice and carries the hidden
    state), batch 2, random weights as parameters: the loop whose carried values the
    analysis follows through every iteration."""
    import jax
    import jax.numpy as jnp

    keys = jax.random.split(jax.random.PRNGKey(seed), 3)
    w = jax.random.normal(keys[0], (features, 3 * hidden), jnp.float32) * 0.1
    u = jax.random.normal(keys[1], (hidden, 3 * hidden), jnp.float32) * 0.1
    xs = jax.random.normal(keys[2], (steps, 2, features), jnp.float32)

    def forward(xs: Any, w: Any, u: Any) -> Any:
        def cell(h: Any, x: Any) -> tuple[Any, Any]:
            gx, gh = x @ w, h @ u
            z = jax.nn.sigmoid(gx[:, :hidden] + gh[:, :hidden])
            r = jax.nn.sigmoid(gx[:, hidden:2 * hidden] + gh[:, hidden:2 * hidden])
            n = jnp.tanh(gx[:, 2 * hidden:] + r * gh[:, 2 * hidden:])
            h = (1 - z) * n + z * h
            return h, h

        _, hs = jax.lax.scan(cell, jnp.zeros((2, hidden), jnp.float32), xs)
        return hs

    hlo: Any = jax.jit(forward).lower(xs, w, u).compiler_ir("hlo")
    return str(hlo.as_hlo_text())


def symidx_seconds(text: str, source: str, timeout: float, all_outputs: bool
                   ) -> tuple[float, str]:
    """CPU seconds to parse ``text`` and compute the maps of its entry computation (the
    first output, or every one), and a note: the budgets hit, or that a limit stopped it."""
    from symidx.analysis import find_computation, iter_computation_maps
    from symidx.errors import LimitReached
    from symidx.fusion import Analysis
    from symidx.hlo.inputs import parse_module

    gc.collect()
    start = time.process_time()
    hits: dict[str, int] = {}
    try:
        comp = find_computation(parse_module(text, source), "ENTRY")
        entries = iter_computation_maps(comp, "output_to_input",
                                        outputs=None if all_outputs else [0],
                                        analysis=Analysis(timeout=timeout), jointly=True)
        for entry in entries:
            _count_budgets(entry, hits)
    except LimitReached as e:
        return time.process_time() - start, f"stopped at its limit: {e}"
    seconds = time.process_time() - start
    return seconds, "; ".join(f"{n} x {label}" for label, n in sorted(hits.items()))


def _count_budgets(entry: Any, hits: dict[str, int]) -> None:
    """Count the groups of ``entry`` whose label says an analysis budget was hit."""
    for group in entry.groups:
        label = group.opaque or ""
        if any(budget in label for budget in BUDGETS):
            hits[label] = hits.get(label, 0) + 1


def xla_compiler() -> Callable[[str], float | str] | None:
    """A function giving XLA's CPU seconds to parse, convert and compile HLO text for the
    CPU (or why it could not), or None without jax."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import jax
        from jax._src.lib import _jax
        from jaxlib import _hlo  # type: ignore[attr-defined]
    except ImportError:
        return None
    client = jax.devices("cpu")[0].client
    devices = _jax.DeviceList(tuple(client.devices()[:1]))

    def compile_seconds(text: str) -> float | str:
        gc.collect()
        start = time.process_time()
        try:
            module = _hlo.hlo_module_from_text(text)
            stablehlo = _jax.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
            client.compile_and_load(stablehlo, devices, _jax.CompileOptions())
        except Exception as e:  # XLA's errors are one class per binding; keep the message
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            return f"XLA does not compile it on the CPU: {first[:160]}"
        return time.process_time() - start

    return compile_seconds


def run(rows: list[tuple[str, str]], timeout: float, all_outputs: bool) -> None:
    """Measure and print each ``(name, text)``."""
    compile_seconds = xla_compiler()
    what = "every output" if all_outputs else "first output"
    print(f"whole-entry analysis ({what}) vs XLA CPU compile, CPU seconds of this process")
    print(f"{'module':<48} {'symidx s':>9} {'XLA s':>8} {'ratio':>7}  notes")
    for name, text in rows:
        ours, note = symidx_seconds(text, name, timeout, all_outputs)
        theirs = compile_seconds(text) if compile_seconds else "jax not installed"
        if isinstance(theirs, float):
            ratio = f"{ours / theirs:7.2f}" if theirs > 0 else "    inf"
            xla = f"{theirs:8.2f}"
            if note.startswith("stopped"):  # a time up to a limit is no ratio
                ratio = "      -"
        else:
            ratio, xla, note = "      -", "       -", f"{theirs}; {note}" if note else theirs
        shown = name
        for prefix in ("xla_backends_cpu_benchmarks_hlo_", "xla_tools_benchmarks_hlo_hlo_"):
            shown = shown.removeprefix(prefix)
        print(f"{shown[:48]:<48} {ours:9.2f} {xla} {ratio}  {note}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--modules", nargs="*", default=list(MODULES),
                        help="module file names in DIR, without .hlo (none: only the stack)")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="the analysis's limit per module, seconds")
    parser.add_argument("--all-outputs", action="store_true",
                        help="every output of the entry, not only the first")
    parser.add_argument("--densenet", default=",".join(map(str, DENSENET121)),
                        help="layers per dense block (DenseNet121: 6,12,24,16)")
    parser.add_argument("--no-densenet", action="store_true",
                        help="leave out the jax-written models (the dense stack and the GRU)")
    parser.add_argument("--gru", type=int, default=64, help="time steps of the GRU scan")
    args = parser.parse_args(argv)
    os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax is imported
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    rows: list[tuple[str, str]] = []
    for name in args.modules:
        path = args.dir / f"{name}.hlo"
        if not path.is_file():
            print(f"{name}: not found in {args.dir}, left out")
            continue
        rows.append((name, path.read_text()))
    if not args.no_densenet:
        blocks = tuple(int(b) for b in args.densenet.split(","))
        try:
            rows.append((f"densenet{blocks} (jax)", densenet_hlo(blocks)))
            rows.append((f"gru{args.gru} (jax scan)", gru_hlo(args.gru)))
        except ImportError:
            print("densenet, gru: jax not installed, left out")
    run(rows, args.timeout, args.all_outputs)


if __name__ == "__main__":
    main()
