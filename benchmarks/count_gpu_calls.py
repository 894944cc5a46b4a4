"""How many GPU library custom-calls of a corpus get exact maps.

Run ``python benchmarks/count_gpu_calls.py [PATH ...]`` (default ``../shared/realhlo``;
with symidx importable, e.g. ``PYTHONPATH=.``). For every module the corpus reader finds
(files split at ``// -----``), every ``custom-call`` whose target is a known GPU library
call -- cuBLAS (``__cublas$...``), cuDNN convolutions (``__cudnn$conv...``),
TransformerEngine's fused attention (``te_fused_attn_*``), XLA's builder library
(``xla_builder.*``) -- is counted by target, and counted *exact* when the maps of its
result (output leaf 0, output-to-input) carry no over-approximation label:
``symidx.ops.opaque_reason`` says nothing for it, or, for a builder call carrying its
computation, the whole-computation sweep analyses through it. Labelled outputs of exact
calls (a workspace, an RNG state) are listed apart. Run it against another checkout (an
older ``PYTHONPATH``) to get the count before a change: with an older symidx, whose
``opaque_reason`` takes no output, the instruction's label is used.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from symidx import ops
from symidx.corpus.sources import find_files, read_file, split_sections
from symidx.errors import SymidxError
from symidx.hlo import HloInstruction, parse_hlo

PREFIXES = ("__cublas$", "__cudnn$conv", "te_fused_attn_", "xla_builder.")
DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "realhlo"


def kind(target: str) -> str | None:
    for prefix in PREFIXES:
        if target.startswith(prefix):
            return target
    return None


def reason(instr: HloInstruction, output: int | None) -> str | None:
    try:
        return ops.opaque_reason(instr, output)  # type: ignore[call-arg]
    except TypeError:  # an older symidx: one label per instruction
        return ops.opaque_reason(instr)


def through_computation(instr: HloInstruction) -> bool:
    find = getattr(ops, "library_computation", None)
    return find is not None and find(instr) is not None


def count(paths: list[str]) -> tuple[Counter[str], Counter[str], Counter[str], int]:
    """(calls by target, exact calls by target, labelled outputs of exact calls by label,
    modules that did not parse)."""
    calls: Counter[str] = Counter()
    exact: Counter[str] = Counter()
    labelled: Counter[str] = Counter()
    failed = 0
    for path in find_files(paths):
        for section in split_sections(read_file(path)):
            try:
                module = parse_hlo("\n" * (section.line - 1) + section.text, source=path,
                                   validate=False)
            except (SymidxError, RecursionError):
                failed += 1
                continue
            for comp in module.computations.values():
                for instr in comp.instructions:
                    if instr.opcode != "custom-call":
                        continue
                    name = kind(instr.attr_str("custom_call_target") or "")
                    if name is None:
                        continue
                    calls[name] += 1
                    if through_computation(instr) or reason(instr, 0) is None:
                        exact[name] += 1
                        outputs = len(instr.shape.elements) if hasattr(instr.shape,
                                                                       "elements") else 1
                        for k in range(1, outputs):
                            why = reason(instr, k)
                            if why is not None:
                                labelled[why] += 1
    return calls, exact, labelled, failed


def main(argv: list[str]) -> int:
    paths = argv or [str(DEFAULT)]
    calls, exact, labelled, failed = count(paths)
    width = max((len(t) for t in calls), default=6)
    print(f"{'target':<{width}}  calls  exact")
    for target, n in sorted(calls.items()):
        print(f"{target:<{width}}  {n:5d}  {exact[target]:5d}")
    print(f"{'total':<{width}}  {sum(calls.values()):5d}  {sum(exact.values()):5d}")
    if labelled:
        print("labelled outputs of exact calls:")
        for why, n in labelled.most_common():
            print(f"  {n:5d}  {why}")
    if failed:
        print(f"({failed} modules did not parse)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
