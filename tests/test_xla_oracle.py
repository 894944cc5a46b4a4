"""symidx's maps against XLA itself: JAX functions run on the CPU, one input element changed
at a time to other finite values (:mod:`xla_oracle`), for the unoptimised module JAX lowers
and the optimised one XLA compiles; the maps under the ``finite`` semantics
(``assume_finite=True``), whose dependences these are. Skipped without JAX. (The default
``reads`` semantics against NaN and infinities: ``test_ieee_oracle.py``.)

* ``EXACT``: functions whose reads do not depend on the values they run on (pads, crops,
  convolutions with padding and dilation, masks built from iotas, ``jnp.diag``, rolls,
  reductions, loops with a known trip count). What a changed element changes must be
  exactly what the maps give.
* ``SOUND``: functions whose reads depend on values (a select on an input mask, sort,
  gathers and scatters at input indices, branches, ``max`` that picks one element). Every
  dependence must be in the maps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from xla_oracle import dependences, map_pairs

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
lax = pytest.importorskip("jax.lax")

F32, S32, PRED = np.float32, np.int32, np.bool_


def conv(x: Any, w: Any, **kw: Any) -> Any:
    return lax.conv_general_dilated(x, w, dimension_numbers=("NHWC", "HWIO", "NHWC"), **kw)


def causal(n: int) -> Any:
    return jnp.arange(n)[:, None] >= jnp.arange(n)[None, :]


Case = tuple[Callable[..., Any], list[tuple[tuple[int, ...], Any]]]

EXACT: dict[str, Case] = {
    "transpose_reverse": (lambda x: x.T[::-1], [((3, 4), F32)]),
    "reshape_transpose": (lambda x: x.reshape(2, 2, 3, 2).transpose(1, 3, 0, 2).reshape(4, 6),
                          [((4, 6), F32)]),
    "strided_slice": (lambda x: x[1:, ::2], [((3, 5), F32)]),
    "concatenate": (lambda a, b: jnp.concatenate([a, b, a]), [((3,), F32), ((2,), F32)]),
    "pad_interior": (lambda x: lax.pad(x, 0.0, [(1, 2, 1), (-1, 1, 0)]), [((3, 4), F32)]),
    "pad_value": (lambda x, v: lax.pad(x, v, [(1, 0, 1), (0, 2, 0)]),
                  [((3, 4), F32), ((), F32)]),
    "crop_value": (lambda x, v: lax.pad(x, v, [(-1, -2, 0), (0, -1, 0)]),
                   [((5, 4), F32), ((), F32)]),
    "dot": (lambda a, b: a @ b, [((3, 4), F32), ((4, 2), F32)]),
    "conv_padding_stride": (lambda x, w: conv(x, w, window_strides=(2, 1),
                                              padding=[(1, 1), (2, 0)]),
                            [((1, 6, 6, 2), F32), ((3, 3, 2, 3), F32)]),
    "conv_lhs_dilation": (lambda x, w: conv(x, w, window_strides=(1, 1),
                                            padding=[(1, 1), (0, 1)], lhs_dilation=(2, 1)),
                          [((1, 5, 5, 2), F32), ((3, 2, 2, 2), F32)]),
    "conv_rhs_dilation": (lambda x, w: conv(x, w, window_strides=(1, 2),
                                            padding=[(0, 1), (1, 1)], rhs_dilation=(2, 2)),
                          [((1, 7, 6, 2), F32), ((2, 2, 2, 2), F32)]),
    "conv_feature_groups": (lambda x, w: conv(x, w, window_strides=(1, 1), padding="VALID",
                                              feature_group_count=2),
                            [((1, 5, 5, 4), F32), ((2, 2, 2, 4), F32)]),
    "cumsum": (lambda x: jnp.cumsum(x[:, ::-1], axis=1), [((3, 5), F32)]),
    "window_sum_dilated": (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 2),
                                                       [(0, 1), (1, 0)], base_dilation=(2, 1),
                                                       window_dilation=(1, 2)),
                           [((6, 5), F32)]),
    "softmax": (lambda x: jax.nn.softmax(x, axis=-1), [((3, 4), F32)]),
    "tril": (lambda x: jnp.tril(x), [((4, 4), F32)]),
    "where_causal": (lambda x: jnp.where(causal(4), x, 0.0), [((4, 4), F32)]),
    "where_band": (lambda x: jnp.where(jnp.abs(jnp.arange(5)[:, None] - jnp.arange(5)) <= 1,
                                       x, -x), [((5, 5), F32)]),
    "where_padding_mask": (lambda x, y: jnp.where(jnp.arange(6) < 4, x, y),
                           [((6,), F32), ((6,), F32)]),
    "diag": (lambda x: jnp.diag(x), [((4, 4), F32)]),
    "take_constant_indices": (lambda x: x[jnp.array([4, 0, 2, 2, -1])], [((6, 2), F32)]),
    "set_at_constant_indices": (lambda x, u: x.at[jnp.array([1, 4])].set(u),
                                [((6, 2), F32), ((2, 2), F32)]),
    "gather_gradient": (lambda x: jax.grad(lambda x: jnp.sum(x[jnp.array([0, 2, 2])] ** 2))(x),
                        [((5, 3), F32)]),
    "take_along_iotas": (lambda x: jnp.take_along_axis(x, jnp.arange(3)[:, None]
                                                       + jnp.arange(2)[None, :], axis=1),
                         [((3, 6), F32)]),
    "where_block_diagonal": (lambda x: jnp.where(jnp.arange(6)[:, None] // 2 == jnp.arange(6) // 2,
                                                 x, 0.0), [((6, 6), F32)]),
    "where_even_columns": (lambda x: jnp.cumsum(jnp.where(jnp.arange(5) % 2 == 0, x, 0.0), 1),
                           [((4, 5), F32)]),
    "where_float_iotas": (lambda x: jnp.where(jnp.arange(4.0) * 2 > jnp.arange(3.0)[:, None] + 1,
                                              x, 7.0), [((3, 4), F32)]),
    "roll": (lambda x: jnp.roll(x, 2), [((6,), F32)]),
    "tile_repeat": (lambda x: jnp.repeat(jnp.tile(x, (2, 1)), 2, axis=1), [((2, 3), F32)]),
    "batched_dot": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
                    [((2, 3, 4), F32), ((2, 4, 2), F32)]),
    "integer_ops": (lambda x: (x >> 1) + (x % 3) * 2, [((6,), S32)]),
    "fori_loop": (lambda x: lax.fori_loop(0, 3, lambda i, c: jnp.roll(c, 1) * 2.0, x),
                  [((4,), F32)]),
    "nested_fori_loops": (lambda x: lax.fori_loop(0, 2, lambda i, c: lax.fori_loop(
        0, 2, lambda j, d: d + jnp.roll(d, 1, axis=0), c), x), [((4, 3), F32)]),
    "scan": (lambda xs: lax.scan(lambda c, r: (c + r, c * 2), jnp.zeros(3, F32), xs),
             [((4, 3), F32)]),
    "scan_rnn": (lambda xs: lax.scan(lambda h, x: (jnp.tanh(h + 2.0 * x),) * 2,
                                     jnp.zeros(3, F32), xs)[1], [((5, 3), F32)]),
    "while_counter": (lambda x: lax.while_loop(lambda c: c[0] < 3,
                                               lambda c: (c[0] + 1, c[1] * 2.0), (0, x))[1],
                      [((5,), F32)]),
}

SOUND: dict[str, Case] = {
    "select_on_input": (lambda a, b, p: jnp.where(p, a, b),
                        [((3, 4), F32), ((3, 4), F32), ((3, 4), PRED)]),
    "causal_attention": (lambda x: jnp.einsum(
        "bqk,bkd->bqd", jax.nn.softmax(jnp.where(causal(4), jnp.einsum(
            "bqd,bkd->bqk", x, x), -1e9), -1), x), [((2, 4, 3), F32)]),
    "sort": (lambda x: jnp.sort(x), [((6,), F32)]),
    "top_k": (lambda x: lax.top_k(x, 3), [((6,), F32)]),
    "take": (lambda x, i: jnp.take(x, i, axis=0, mode="clip"), [((5, 4), F32), ((3,), S32)]),
    "take_along_axis": (lambda x, i: jnp.take_along_axis(x, jnp.clip(i, 0, 3), axis=1),
                        [((5, 4), F32), ((5, 2), S32)]),
    "dynamic_slice": (lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 3)),
                      [((6, 4), F32), ((), S32)]),
    "dynamic_update_slice": (lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1)),
                             [((6, 4), F32), ((2, 3), F32), ((), S32)]),
    "scatter_add": (lambda x, i, u: x.at[i].add(u),
                    [((6, 3), F32), ((4,), S32), ((4, 3), F32)]),
    "scatter_set": (lambda x, i, u: x.at[i].set(u),
                    [((6, 3), F32), ((4,), S32), ((4, 3), F32)]),
    "cond": (lambda x, p: lax.cond(p, lambda v: v[::-1], lambda v: v * 2.0, x),
             [((4,), F32), ((), PRED)]),
    "max_pool": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 3), (2, 1),
                                             [(1, 0), (1, 1)]), [((6, 5), F32)]),
}


def modules(fn: Callable[..., Any], shapes: list[tuple[tuple[int, ...], Any]]
            ) -> tuple[Callable[..., Any], dict[str, str]]:
    jitted = jax.jit(fn, keep_unused=True)
    lowered = jitted.lower(*(jax.ShapeDtypeStruct(s, d) for s, d in shapes))
    return jitted, {"lowered": lowered.as_text(dialect="hlo"),
                    "compiled": lowered.compile().as_text()}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_maps_give_exactly_what_xla_depends_on(name: str) -> None:
    fn, shapes = EXACT[name]
    jitted, texts = modules(fn, shapes)
    found = dependences(jitted, shapes)
    for stage, text in texts.items():
        pairs, labels = map_pairs(text, assume_finite=True)
        assert not labels, f"{stage}: {labels}"
        for key in set(pairs) | set(found):
            ours, theirs = pairs.get(key, set()), found.get(key, set())
            assert theirs <= ours, f"{stage} {key}: unsound at {sorted(theirs - ours)[:4]}"
            assert ours <= theirs, f"{stage} {key}: loose at {sorted(ours - theirs)[:4]}"


@pytest.mark.parametrize("name", sorted(SOUND))
def test_maps_hold_every_dependence_xla_shows(name: str) -> None:
    fn, shapes = SOUND[name]
    jitted, texts = modules(fn, shapes)
    found = dependences(jitted, shapes)
    for stage, text in texts.items():
        pairs, _ = map_pairs(text, assume_finite=True)
        for key, theirs in found.items():
            ours = pairs.get(key, set())
            assert theirs <= ours, f"{stage} {key}: unsound at {sorted(theirs - ours)[:4]}"
