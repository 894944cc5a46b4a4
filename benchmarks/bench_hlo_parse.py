"""How long parse_hlo takes: the largest JAX sample, and synthetic modules of growing size.

Run ``python benchmarks/bench_hlo_parse.py`` (with symidx installed, e.g. ``pip install -e .``,
or with ``PYTHONPATH=.``). It prints one table; the time per instruction
should stay flat as the module grows (parsing is linear in the text), and the largest sample
should parse well under 50 ms.
"""

from __future__ import annotations

import gc
import time

from symidx.bench import bundled_samples
from symidx.hlo import parse_hlo

SIZES = (1_000, 2_000, 5_000, 10_000)


def synthetic_module(n_instructions: int) -> str:
    """A module whose entry computation has ``n_instructions`` instructions in the style of a
    compiled JAX dump (layouts, metadata on every line): a chain cycling through elementwise
    ops, broadcasts, a slice and a reduce, binary ops also reading the parameter. Plus a
    3-instruction reducer computation."""
    lines = [
        "HloModule synthetic, entry_computation_layout={(f32[64,128]{1,0})->f32[64,128]{1,0}}",
        "",
        "%add (a: f32[], b: f32[]) -> f32[] {",
        "  %a = f32[] parameter(0)",
        "  %b = f32[] parameter(1)",
        "  ROOT %s = f32[] add(%a, %b)",
        "}",
        "",
        "ENTRY %main (p: f32[64,128]) -> f32[64,128] {",
        '  %v0 = f32[64,128]{1,0} parameter(0), metadata={op_name="p"}',
        "  %zero = f32[] constant(0)",
    ]
    matrix, vector = "f32[64,128]{1,0}", "f32[64]{0}"
    steps = (
        (matrix, "add({prev}, %v0)"),
        (matrix, "multiply({prev}, %v0)"),
        (matrix, "broadcast(%zero), dimensions={{}}"),
        (matrix, "slice({prev}), slice={{[0:64:1], [0:128:1]}}"),
        (vector, "reduce({prev}, %zero), dimensions={{1}}, to_apply=%add"),
        (matrix, "broadcast({prev}), dimensions={{0}}"),
        (matrix, "exponential({prev})"),
        (matrix, "subtract({prev}, %v0)"),
    )
    for i in range(1, n_instructions - 2):
        shape, op = steps[(i - 1) % len(steps)]
        meta = f'metadata={{op_name="jit(f)/op{i}" source_file="f.py" source_line={i}}}'
        lines.append(f"  %v{i} = {shape} {op.format(prev=f'%v{i - 1}')}, {meta}")
    lines.append(f"  ROOT %out = {matrix} negate(%v{n_instructions - 3})")
    lines.append("}")
    return "\n".join(lines) + "\n"


def best_time(text: str, repeats: int) -> float:
    """The fastest of ``repeats`` parses, in seconds (freeing the result is not timed)."""
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        module = parse_hlo(text)
        best = min(best, time.perf_counter() - start)
        del module
    return best


def main() -> None:
    name, text = max(bundled_samples(), key=lambda sample: len(sample[1]))
    rows = [(f"{name}.hlo", text, 20)]
    rows += [(f"synthetic {n}", synthetic_module(n), 5) for n in SIZES]
    print(f"{'input':<24} {'instructions':>12} {'KiB':>8} {'ms':>9} {'us/instr':>9}")
    print("(instructions: in all computations; synthetic N has N in its entry)")
    for label, text, repeats in rows:
        module = parse_hlo(text)
        count = sum(len(c.instructions) for c in module.computations.values())
        seconds = best_time(text, repeats)
        print(f"{label:<24} {count:>12} {len(text) / 1024:>8.1f} {seconds * 1e3:>9.2f} "
              f"{seconds * 1e6 / count:>9.2f}")


if __name__ == "__main__":
    main()
