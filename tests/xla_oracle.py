"""An oracle that runs XLA: which output elements of a jitted JAX function depend on which
input elements, found by executing it (on the CPU) with one input element changed at a time.

For each input element, over a few random base inputs, the element is set to other values
(a float moved by a non-zero amount, an integer by a few steps, a boolean flipped) and
every output element that changes depends on it. That is value dependence among finite
inputs: a kernel element that a convolution multiplies by padding (zero) changes nothing, and
is not a dependence -- as the maps count reads under the ``finite`` semantics. A NaN would
change such an output (``0 * NaN``); :func:`dependences` with ``ieee=True`` also sets each
element to NaN, +inf and -inf, the dependences the default ``reads`` semantics must hold.
Dependence is a lower bound of what a map must give (the reads a value does not
change, ``max`` picking another element, are not seen), so a pair the oracle finds and the
maps do not is a bug; a pair the maps give and the oracle never sees is a place to look.

:func:`dependences` runs the function; :func:`map_pairs` gives the pairs symidx's maps of
the whole entry computation relate, for the unoptimised and the optimised module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from symidx import parse_hlo
from symidx.analysis import computation_maps, find_computation
from symidx.core.verify import relation

#: {(output leaf, parameter): set of output index + parameter index}
Pairs = dict[tuple[int, int], set[tuple[int, ...]]]


def random_input(shape: tuple[int, ...], dtype: Any, rng: np.random.Generator) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if np.issubdtype(dtype, np.integer):
        return np.asarray(rng.integers(-2, 9, size=shape), dtype=dtype)
    return np.asarray(rng.uniform(-2, 2, size=shape), dtype=dtype)


#: The values other than finite ones an IEEE perturbation tries.
SPECIAL = (np.nan, np.inf, -np.inf)


def changed_copies(x: np.ndarray, index: tuple[int, ...], ieee: bool = False
                   ) -> list[np.ndarray]:
    """Copies of ``x`` with the element at ``index`` set to other values (with ``ieee``,
    a float element also to NaN, +inf and -inf)."""
    copies = []
    if x.dtype == np.bool_:
        deltas: Sequence[Any] = (None,)
    elif np.issubdtype(x.dtype, np.integer):
        deltas = (1, -5, 3)
    else:
        deltas = (1.375, -0.625)
    for delta in deltas:
        y = x.copy()
        y[index] = (not x[index]) if delta is None else x[index] + delta
        copies.append(y)
    if ieee and np.issubdtype(x.dtype, np.floating):
        for special in SPECIAL:
            y = x.copy()
            y[index] = special
            copies.append(y)
    return copies


def dependences(fn: Callable[..., Any], shapes: Sequence[tuple[tuple[int, ...], Any]],
                trials: int = 3, seed: int = 0, ieee: bool = False) -> Pairs:
    """Run ``fn`` (jitted, on the CPU) on ``trials`` random inputs of ``shapes`` and on each
    with one element changed (``ieee``: to NaN and the infinities too); the pairs that
    changed."""
    import jax

    rng = np.random.default_rng(seed)
    found: Pairs = {}

    def run(args: list[np.ndarray]) -> list[np.ndarray]:
        return [np.asarray(o) for o in jax.tree_util.tree_leaves(fn(*args))]

    for _ in range(trials):
        args = [random_input(s, d, rng) for s, d in shapes]
        base = run(args)
        for k, x in enumerate(args):
            for index in np.ndindex(*x.shape):
                for y in changed_copies(x, index, ieee):
                    outs = run(args[:k] + [y] + args[k + 1:])
                    for j, (out, ref) in enumerate(zip(outs, base, strict=True)):
                        differ = ~((out == ref) | (np.isnan(out) & np.isnan(ref))) \
                            if out.dtype.kind in "fc" else out != ref
                        hits = [tuple(int(v) for v in o) for o in np.argwhere(differ)] \
                            if differ.ndim else ([()] if bool(differ) else [])
                        found.setdefault((j, k), set()).update(o + index for o in hits)
    return found


def map_pairs(text: str, assume_finite: bool = False
              ) -> tuple[Pairs, dict[tuple[int, int], str]]:
    """The pairs symidx's maps of the entry computation of ``text`` relate (under the
    ``finite`` semantics with ``assume_finite``), and the labels of the groups that
    over-approximate (or have no rule), by (output leaf, parameter)."""
    comp = find_computation(parse_hlo(text), "ENTRY")
    pairs: Pairs = {}
    labels: dict[tuple[int, int], str] = {}
    for output in computation_maps(comp, "output_to_input", assume_finite=assume_finite):
        for group in output.groups:
            key = (output.index, group.index)
            label = group.unsupported or group.opaque
            if label:
                labels[key] = label
            pairs[key] = {tuple(int(v) for v in row) for m in group.maps
                          for row in relation(m)}
    return pairs, labels
