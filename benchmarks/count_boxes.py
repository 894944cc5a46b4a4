"""How many parameter groups of a training step's outputs are a bounding box.

Run ``python benchmarks/count_boxes.py FILE [OUTPUT ... | all]`` (with symidx importable,
e.g. ``PYTHONPATH=.``; default outputs: 5; several are swept together, as ``--output all``
sweeps them). For each output leaf of the entry computation's
root (swept output-to-input, as ``symidx maps FILE --computation ENTRY --output K``), it
counts the parameter groups and those whose maps were replaced by their bounding box (a
labelled over-approximation, ``symidx/fusion/sets.py``), and prints the CPU seconds the
analysis took. ``--no-existential`` leaves out the exact rewrites of the variables no
result uses (:func:`symidx.core.simplify.existential.tidy_existentials`), the count before
them. Issue 36 asks for at most 10% boxes on the llama 3.1 8B train step of
``../shared/realhlo`` (``xla_tools_benchmarks_hlo_hlo_llama31_8b_bf16_1x8.hlo``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from symidx.analysis import iter_computation_maps
from symidx.core.indexing_map.direction import OUTPUT_TO_INPUT
from symidx.hlo import parse_hlo


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    if not args:
        print(__doc__)
        return 2
    if "--no-existential" in argv:
        import symidx.fusion.sweep as sweep

        sweep.tidy_existentials = lambda m, **_: m
    module = parse_hlo(Path(args[0]).read_text())
    outputs = None if args[1:] == ["all"] else [int(a) for a in args[1:]] or [5]
    start = time.process_time()
    groups = boxed = 0
    for entry in iter_computation_maps(module.entry, OUTPUT_TO_INPUT, outputs=outputs,
                                       jointly=True):
        here = [g for g in entry.groups if g.maps]
        box = sum(1 for g in here if g.opaque and "bounding box" in g.opaque)
        if outputs is not None and len(outputs) < 10:
            print(f"output {entry.index}: {len(here)} groups with maps, {box} bounding boxes")
        groups += len(here)
        boxed += box
    seconds = time.process_time() - start
    share = 100 * boxed / groups if groups else 0.0
    print(f"total: {boxed} of {groups} groups are bounding boxes ({share:.1f}%), "
          f"{seconds:.1f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
