"""JAX programs of the six classes of avoidable over-approximation that a value oracle
found (issue 36), each fixed as a class: their modules, lowered and compiled for the CPU,
are in ``tests/data/exact/`` (``NAME.lowered.hlo``, ``NAME.compiled.hlo``), and
:mod:`test_exact_classes` checks the maps against the reference interpreter (without JAX)
and against XLA itself (with it).

Regenerate the modules (needs the ``jax`` extra)::

    .venv/bin/python tests/exact_programs.py

Each program names its class and the (output leaf, parameter) pairs whose maps must be
exactly what executing it with NaN, infinities and finite values shows (``exact``); the
other pairs read what the values decide (a payload row a sort moves, scatter updates at
input indices), so only soundness is asked of them there.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

F32, S32 = np.float32, np.int32
DATA = Path(__file__).parent / "data" / "exact"


@dataclass(frozen=True)
class Program:
    """A JAX function, its argument shapes, the class it reproduces (1-6, the issue's
    order) and the (output leaf, parameter) pairs whose maps are exact."""

    fn: Callable[..., Any]
    shapes: tuple[tuple[tuple[int, ...], Any], ...]
    kind: int
    exact: frozenset[tuple[int, int]]


def programs() -> dict[str, Program]:
    """The programs (imports JAX)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def argmax_pairs(x: Any, payload: Any) -> Any:
        """A max over rows that carries a payload, as JAX's argmax reducer does: the max
        reads the values only, the payload both."""
        def pick(a: Any, b: Any) -> Any:
            take = (b[0] > a[0]) | jnp.isnan(b[0])
            tie = (b[0] == a[0]) & (b[1] < a[1])
            return (jnp.where(take, b[0], a[0]), jnp.where(take | tie, b[1], a[1]))
        return lax.reduce((x, payload), (jnp.array(-jnp.inf, F32), jnp.array(0, S32)),
                          pick, (1,))

    def parity(i: Any, c: Any) -> Any:
        return lax.cond(i % 2 == 0, lambda c: jnp.roll(c, 1), lambda c: c * 2.0, c)

    def early(i: Any, c: Any) -> Any:
        return lax.cond(i < 2, lambda c: jnp.roll(c, 1), lambda c: c + 1.0, c)

    def triangle(x: Any) -> Any:
        inner = lambda j, d: d.at[j].add(d[j + 1])  # noqa: E731
        return lax.fori_loop(0, 4, lambda i, c: lax.fori_loop(0, i, inner, c), x)

    return {
        # 1: an iota column of a vmapped scatter's or gather's indices
        "vmap_scatter_add": Program(
            jax.vmap(lambda x, i, u: x.at[i].add(u)),
            (((3, 5), F32), ((3, 2), S32), ((3, 2), F32)), 1, frozenset({(0, 0)})),
        "vmap_dynamic_update_slice": Program(
            jax.vmap(lambda x, u, i: lax.dynamic_update_slice(x, u, (i,))),
            (((3, 6), F32), ((3, 2), F32), ((3,), S32)), 1, frozenset()),
        "vmap_dynamic_slice": Program(
            jax.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,))),
            (((3, 6), F32), ((3,), S32)), 1, frozenset()),
        # 2: gather and scatter indices computed from constants only
        "triu_indices_gather": Program(
            lambda x: x[jnp.triu_indices(4, 1)], (((4, 4), F32),), 2, frozenset({(0, 0)})),
        "tril_indices_set": Program(
            lambda x, u: x.at[jnp.tril_indices(3)].set(u),
            (((3, 3), F32), ((6,), F32)), 2, frozenset({(0, 0), (0, 1)})),
        # 3: an inner loop whose trip count is the outer counter
        "nested_loop_triangle": Program(triangle, (((5,), F32),), 3, frozenset({(0, 0)})),
        # 4: a conditional on a loop counter's parity or range
        "scan_parity_cond": Program(
            lambda x, xs: lax.scan(lambda c, a: (lax.cond(a[0] % 2 == 0, lambda: c + a[1],
                                                           lambda: c * 2.0), c),
                                   x, (jnp.arange(4), xs))[1],
            (((2,), F32), ((4, 2), F32)), 4, frozenset({(0, 0), (0, 1)})),
        "fori_parity_cond": Program(lambda x: lax.fori_loop(0, 4, parity, x),
                                    (((3,), F32),), 4, frozenset({(0, 0)})),
        "fori_range_cond": Program(lambda x: lax.fori_loop(0, 4, early, x),
                                   (((3,), F32),), 4, frozenset({(0, 0)})),
        # 5: a sort's payloads
        "sort_payload": Program(
            lambda k, v: lax.sort((k, v), num_keys=1), (((5,), F32), ((5,), F32)), 5,
            frozenset({(0, 0), (0, 1), (1, 0)})),
        "sort_two_keys": Program(
            lambda a, b, v: lax.sort((a, b, v), num_keys=2),
            (((4,), F32), ((4,), F32), ((4,), F32)), 5,
            frozenset({(0, 2), (1, 2)})),
        # 6: the outputs of a variadic reduce
        "argmax_pairs": Program(argmax_pairs, (((3, 4), F32), ((3, 4), S32)), 6,
                                frozenset({(0, 0), (0, 1)})),
    }


def modules(program: Program) -> dict[str, str]:
    """The module JAX lowers and the one XLA compiles for the CPU, as HLO text."""
    import jax

    jitted = jax.jit(program.fn, keep_unused=True)
    lowered = jitted.lower(*(jax.ShapeDtypeStruct(s, d) for s, d in program.shapes))
    return {"lowered": lowered.as_text(dialect="hlo"),
            "compiled": lowered.compile().as_text()}


def main() -> int:
    DATA.mkdir(parents=True, exist_ok=True)
    for name, program in programs().items():
        for stage, text in modules(program).items():
            (DATA / f"{name}.{stage}.hlo").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
