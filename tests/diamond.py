"""The diamond module of issue 23: ``levels`` levels, each adding the ``reverse`` of the
previous value to its rotation by one (a ``slice`` pair put back together by a
``concatenate``), so that the number of paths doubles at every level. Without a limit,
``symidx maps`` on 200 levels ran for more than ten CPU-minutes.

    python tests/diamond.py 200 > diamond.hlo
"""

from __future__ import annotations

import sys


def diamond(levels: int, size: int = 16) -> str:
    """The module's text: one entry computation, parameter ``x0`` to root ``x{levels}``."""
    t = f"f32[{size}]"
    lines = ["HloModule diamond", "", "ENTRY main {", f"  x0 = {t} parameter(0)"]
    for k in range(levels):
        x, y = f"x{k}", f"x{k + 1}"
        lines += [
            f"  r{k} = {t} reverse({x}), dimensions={{0}}",
            f"  h{k} = f32[{size - 1}] slice({x}), slice={{[1:{size}]}}",
            f"  l{k} = f32[1] slice({x}), slice={{[0:1]}}",
            f"  c{k} = {t} concatenate(h{k}, l{k}), dimensions={{0}}",
            f"  {'ROOT ' if k == levels - 1 else ''}{y} = {t} add(r{k}, c{k})",
        ]
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(diamond(int(sys.argv[1]) if len(sys.argv) > 1 else 200), end="")
