"""The whole suite: the same as ``symidx bench`` (table with islpy/MLIR ratios, and a plot).

    python benchmarks/bench_all.py [--quick] [--png FILE] [--no-plot] [--case NAME ...]
"""

from __future__ import annotations

import sys

from symidx.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
