"""Where are the op rules' maps looser than the brute-force twins? A report, not a test.

Runs the op twins (the hypothesis tests of ``test_ops_*.py`` and the single-op modules of
``test_strategies.py``) in-process with the checks of :mod:`ops_check` wrapped: for every
instruction drawn, output element and operand, it compares the image of the operand's maps
with what the reference (:mod:`reference_hlo`) says the element reads, runtime variables
taking the values the op uses, and counts the elements where the maps give a strict
superset. Every such operand should be a labelled over-approximation
(:func:`symidx.ops.opaque_reason`); any other is a rule to make exact (the twins themselves
fail on one that is not listed in a test's ``over=``).

Usage (from the project root)::

    .venv/bin/python tests/loose_maps.py [pytest arguments, e.g. -k convolution]
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import conftest  # noqa: E402,F401  (the hypothesis profiles, before ops_check's settings)
import ops_check  # noqa: E402
from ops_check import opaque_reason as reason_of  # noqa: E402
from ops_check import output_to_input  # noqa: E402
from reference_hlo import Index, collective_dependencies, dependencies  # noqa: E402
from symidx.hlo import HloInstruction  # noqa: E402
from symidx.ops.collectives import PARTICIPANT  # noqa: E402

TWINS = ["test_ops_twins.py", "test_ops_linalg.py", "test_ops_misc.py", "test_ops_scatter.py",
         "test_ops_scan.py", "test_ops_collectives.py",
         "test_strategies.py::test_single_ops_match_the_reference"]

#: (opcode, operand, why it over-approximates or None) -> output elements checked / loose
CHECKED: Counter[tuple[str, int, str | None]] = Counter()
LOOSE: Counter[tuple[str, int, str | None]] = Counter()
EXAMPLE: dict[tuple[str, int, str | None], str] = {}


def _record(instr: HloInstruction, o: object, k: int, got: set[Index], want: set[Index]
            ) -> None:
    reason = reason_of(instr)
    key = (instr.opcode, k, reason.split(":")[0] if reason else None)
    CHECKED[key] += 1
    if got > want:
        LOOSE[key] += 1
        EXAMPLE.setdefault(key, f"{instr} at {o}: also {sorted(got - want)[:3]}")


def _local(group: Sequence[Any], point: Index, data: ops_check.Data, dims: Sequence[int],
           skip: bool = False) -> set[Index]:
    return {i for i in ops_check.union_image(group, point, data, skip)
            if ops_check._in_box(i, dims)}


def _wrap_output_to_input(original: Callable[..., None]) -> Callable[..., None]:
    def check_output_to_input(instr: HloInstruction, values: Any = None, over: Any = (),
                              output: int = 0, skip: bool = False) -> None:
        data = ops_check.data_of(instr, values or {})
        groups = output_to_input(instr, output)
        for o, reads in dependencies(instr, values or {}, output).items():
            for k, group in enumerate(groups):
                dims = ops_check.operand_dims(instr, k)
                _record(instr, o, k, _local(group, o, data, dims, skip), reads[k])
        original(instr, values, over, output, skip)
    return check_output_to_input


def _wrap_collective(original: Callable[..., None]) -> Callable[..., None]:
    def check_collective(instr: HloInstruction, size: int, values: Any = None,
                         over: Any = ()) -> None:
        for output in range(ops_check.num_outputs(instr)):
            groups = output_to_input(instr, output)
            deps = collective_dependencies(instr, size, values, output)
            for (p, o), reads in deps.items():
                for k, group in enumerate(groups):
                    dims = ops_check.operand_dims(instr, k)
                    got = _local(group, o, {str(PARTICIPANT): p}, dims)
                    _record(instr, (p, o), k, got, {i for _, i in reads[k]})
        original(instr, size, values, over)
    return check_collective


def report() -> str:
    lines = [f"{'opcode':<24}{'operand':>8}  {'loose / checked':>18}  labelled"]
    for key in sorted(CHECKED, key=lambda k: (k[0], k[1], k[2] or "")):
        if LOOSE[key]:
            opcode, k, reason = key
            lines.append(f"{opcode:<24}{k:>8}  {LOOSE[key]:>8} / {CHECKED[key]:<7}  "
                         f"{reason or 'NO -- make it exact'}")
    unlabelled = [key for key in LOOSE if key[2] is None]
    lines.append(f"{len(CHECKED)} (opcode, operand, label) groups checked, "
                 f"{sum(1 for k in LOOSE if LOOSE[k])} loose somewhere, "
                 f"{len(unlabelled)} of them unlabelled")
    lines += [f"  e.g. {EXAMPLE[key]}" for key in unlabelled]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    ops_check.check_output_to_input = _wrap_output_to_input(ops_check.check_output_to_input)
    ops_check.check_collective = _wrap_collective(ops_check.check_collective)
    here = Path(__file__).parent
    code = pytest.main(["-q", "-p", "no:cacheprovider",
                        *[str(here / t) for t in TWINS], *argv])
    print(report())
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
