"""Tiling cost against the candidate count and the constraint count.

Rank-r tensor-network contractions in the style of openxla/xla#41173: two operands stored
merged (``f32[2^(r/2), 2^(r/2)]`` and ``f32[2^r]``) are bitcast to rank r (every dimension
2 or 4), and contracted over half their dimensions by a dot. Every bitcast gives a
disjunction per merged group; conjoined, XLA's one flat DNF has the product of their sizes.
For each rank the script reports: the analysis time, the number of DNFs and atoms kept
(factored), the size the flat DNF would have, the candidate tilings, the valid ones, and
the time to count them -- symidx (DNFs per group over a numpy grid) against its peer in
the same run doing equal work the flat way (the multiplied-out DNF evaluated at every
candidate), as a ratio.

    python benchmarks/bench_tiling.py [--ranks 4,6,8,10,12] [--extent 2|4] [--peer-limit N]
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from pathlib import Path

from symidx.core.expr import dim
from symidx.errors import TooLargeError
from symidx.hlo import parse_hlo
from symidx.tiling.analysis import analyze
from symidx.tiling.valid import candidates, count_valid


def tensor_network_hlo(rank: int, extent: int = 2) -> str:
    """A rank-``rank`` contraction: lhs ``[e^(r/2), e^(r/2)]`` and rhs ``[e^r]`` bitcast to
    ``[e]*r``; the dot contracts the last r/2 dimensions of lhs with the first r/2 of rhs
    and gives ``[e]*r``."""
    half = rank // 2
    side = extent ** half
    dims = ",".join([str(extent)] * rank)
    out = ",".join([str(extent)] * rank)
    lhs_c = ",".join(str(half + i) for i in range(half))
    rhs_c = ",".join(str(i) for i in range(half))
    return f"""HloModule tensor_network_rank{rank}

fusion {{
  p0 = f32[{side},{side}] parameter(0)
  p1 = f32[{side * side}] parameter(1)
  a = f32[{dims}] bitcast(p0)
  b = f32[{dims}] bitcast(p1)
  ROOT dot = f32[{out}] dot(a, b),
    lhs_contracting_dims={{{lhs_c}}}, rhs_contracting_dims={{{rhs_c}}}
}}

ENTRY main {{
  p0 = f32[{side},{side}] parameter(0)
  p1 = f32[{side * side}] parameter(1)
  ROOT fusion = f32[{out}] fusion(p0, p1), kind=kCustom, calls=fusion
}}
"""


def flat_count(t, limit: int) -> tuple[int | None, int]:  # type: ignore[no-untyped-def]
    """The peer: the DNF multiplied out (None when it passes ``limit`` disjuncts) and
    evaluated at every candidate tiling."""
    try:
        flat = t.constraints.flat(limit)
    except TooLargeError:
        return None, -1
    from symidx.tiling.constraints import Constraints

    ev = Constraints(((flat,),)).evaluator([dim(i) for i in range(len(t.flat_sizes))])
    count = sum(1 for c in itertools.product(*[candidates(n) for n in t.flat_sizes])
                if ev(list(c)))
    return count, len(flat)


def main(argv: list[str] | None = None) -> dict[int, dict[str, float]]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", default="4,6,8,10,12")
    ap.add_argument("--extent", type=int, default=2)
    ap.add_argument("--peer-limit", type=int, default=20_000,
                    help="most disjuncts the flat peer may build (default 20000)")
    args = ap.parse_args(argv)
    rows = {}
    print(f"{'rank':>4} {'params':>6} {'DNFs':>5} {'atoms':>6} {'flat DNF':>12} "
          f"{'candidates':>11} {'valid':>9} {'analyse s':>9} {'count s':>8} "
          f"{'flat peer s':>11} {'peer/symidx':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for rank in [int(r) for r in args.ranks.split(",")]:
            text = tensor_network_hlo(rank, args.extent)
            Path(tmp, f"r{rank}.hlo").write_text(text)
            module = parse_hlo(text)
            comp = module.computation("fusion")
            t0 = time.perf_counter()
            t = analyze(comp)
            t1 = time.perf_counter()
            n, total = count_valid(t)
            t2 = time.perf_counter()
            flat_size = 1
            for g in t.constraints.groups:
                for d in g:
                    flat_size *= max(1, len(d))
            if total <= 600_000:
                peer_n, _ = flat_count(t, args.peer_limit)
            else:
                peer_n = None
            t3 = time.perf_counter()
            peer = f"{t3 - t2:11.3f}" if peer_n is not None else f"{'(too big)':>11}"
            ratio = f"{(t3 - t2) / max(t2 - t1, 1e-9):11.1f}" if peer_n is not None \
                else f"{'-':>11}"
            if peer_n is not None:
                assert peer_n == n, (rank, peer_n, n)
            print(f"{rank:>4} {len(t.flat_sizes):>6} {t.constraints.num_dnfs():>5} "
                  f"{t.constraints.num_atoms():>6} {flat_size:>12} {total:>11} {n:>9} "
                  f"{t1 - t0:9.3f} {t2 - t1:8.3f} {peer} {ratio}")
            rows[rank] = {"analyse_s": t1 - t0, "count_s": t2 - t1, "valid": n,
                          "candidates": total}
    return rows


if __name__ == "__main__":
    main()
