"""Small JAX programs whose CPU fusions the tile sweep (``bench_tile_sweep.py``) tiles: the
shapes of real models at toy sizes -- embedding gathers with batch, rotary embeddings,
flips, pads, variadic reductions, pooling, scatters, dynamic slices, attention pieces.

Each entry is ``(name, function, argument specs)``; a spec is ``(shape, dtype)`` with dtype
``"f32"``, ``"bf16"``, ``"i32"`` (indices: values from 0 to ``shape``-dependent bounds are
drawn by the sweep) or ``"bool"``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Spec = tuple[tuple[int, ...], str]


def programs() -> list[tuple[str, Callable[..., Any], list[Spec]]]:
    import jax
    import jax.numpy as jnp
    from jax import lax

    def rotate_half(x: Any) -> Any:
        x1, x2 = jnp.split(x, 2, axis=-1)
        return jnp.concatenate([-x2, x1], axis=-1)

    def rope_llama(x: Any, sin: Any, cos: Any) -> Any:
        return x * cos + rotate_half(x) * sin

    def rope_gemma(x: Any, pos: Any) -> Any:
        half = x.shape[-1] // 2
        freq = 1.0 / (10000 ** (jnp.arange(half, dtype=jnp.float32) / half))
        ang = pos[..., None].astype(jnp.float32) * freq
        sin, cos = jnp.sin(ang)[:, :, None, :], jnp.cos(ang)[:, :, None, :]
        x1, x2 = x[..., :half], x[..., half:]
        return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)

    def rope_interleaved(x: Any, sin: Any, cos: Any) -> Any:
        xr = x.reshape(x.shape[:-1] + (x.shape[-1] // 2, 2))
        a, b = xr[..., 0], xr[..., 1]
        out = jnp.stack([a * cos - b * sin, a * sin + b * cos], axis=-1)
        return out.reshape(x.shape)

    def rope_stacked(x: Any, sin: Any, cos: Any) -> Any:
        # rotate_half on the halves stacked as a dimension of 2 (as XLA's GPU fusions see
        # it): the second half at offset 1 of that dimension, through a reshape
        xs = x.reshape(x.shape[:-1] + (2, x.shape[-1] // 2))
        rot = jnp.concatenate([-xs[..., 1:, :], xs[..., :1, :]], axis=-2).reshape(x.shape)
        return x * cos + rot * sin

    def embed(table: Any, ids: Any) -> Any:
        return table[ids] * jnp.sqrt(jnp.float32(table.shape[-1]))

    def embed_pos(tok: Any, pos_table: Any, ids: Any) -> Any:
        s = ids.shape[1]
        return tok[ids] + pos_table[jnp.arange(s)][None]

    def embed_bf16(table: Any, ids: Any) -> Any:
        return (table[ids].astype(jnp.float32) * 2.0).astype(jnp.bfloat16)

    def take_along(x: Any, idx: Any) -> Any:
        return jnp.take_along_axis(x, idx, axis=1)

    def point_gather(x: Any, i: Any, j: Any) -> Any:
        return x[i, j] + 1.0

    def rows_gather_sum(table: Any, ids: Any) -> Any:
        return table[ids].sum(axis=1)

    def one_hot_xent(logits: Any, labels: Any) -> Any:
        oh = jax.nn.one_hot(labels, logits.shape[-1])
        return -(jax.nn.log_softmax(logits) * oh).sum(-1)

    def flip_merge(x: Any) -> Any:
        return jnp.flip(x, 1).reshape(-1) * 2.0

    def flip_split(x: Any) -> Any:
        return jnp.flip(x.reshape(2, 8), 1) + 1.0

    def flip_both(x: Any) -> Any:
        return jnp.flip(x, (0, 2)).reshape(x.shape[0], -1) * 3.0

    def flip_transpose(x: Any) -> Any:
        return jnp.flip(x, 0).T * 2.0

    def pad_edges(x: Any) -> Any:
        return jnp.pad(x * 2.0, ((1, 2), (3, 0)))

    def pad_interior(x: Any) -> Any:
        return lax.pad(x * 2.0, jnp.float32(0), ((1, 1, 1), (0, 0, 2)))

    def pad_negative(x: Any) -> Any:
        return lax.pad(x + 1.0, jnp.float32(0), ((-1, 2, 0), (1, -2, 0)))

    def pad_split(x: Any) -> Any:
        y = jnp.pad(x, ((0, 0), (0, 4))) * 2.0
        return y.reshape(x.shape[0], -1, 4)

    def pad_merge(x: Any) -> Any:
        y = jnp.pad(x, ((1, 1), (0, 0))) + 1.0
        return y.reshape(-1)

    def argmax_rows(x: Any) -> Any:
        return jnp.argmax(x, axis=-1)

    def argmin_cols(x: Any) -> Any:
        return jnp.argmin(x * 2.0, axis=0)

    def max_and_arg(x: Any) -> Any:
        return lax.reduce((x, lax.broadcasted_iota(jnp.int32, x.shape, 1)),
                          (jnp.float32(-jnp.inf), jnp.int32(0)),
                          lambda a, b: (jnp.maximum(a[0], b[0]),
                                        jnp.where(a[0] >= b[0], a[1], b[1])), (1,))

    def max_pool(x: Any) -> Any:
        return lax.reduce_window(x * 1.5, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                 "VALID")

    def avg_pool_same(x: Any) -> Any:
        return lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") / 9.0

    def cumsum(x: Any) -> Any:
        return jnp.cumsum(x * 2.0, axis=1)

    def scatter_set(x: Any, idx: Any, v: Any) -> Any:
        return x.at[idx].set(v * 2.0)

    def scatter_add(x: Any, idx: Any, v: Any) -> Any:
        return x.at[idx].add(v)

    def segment_sum(v: Any, seg: Any) -> Any:
        return jax.ops.segment_sum(v * 2.0, seg, num_segments=6)

    def dyn_slice(x: Any, i: Any) -> Any:
        return lax.dynamic_slice(x, (i, 0), (4, 8)) * 2.0

    def dyn_slice_clamp(x: Any, i: Any, j: Any) -> Any:
        return lax.dynamic_slice(x + 1.0, (i, j), (3, 5))

    def dyn_update(x: Any, u: Any, i: Any) -> Any:
        return lax.dynamic_update_slice(x, u * 2.0, (i, 0))

    def softmax(x: Any) -> Any:
        return jax.nn.softmax(x, axis=-1)

    def layernorm(x: Any, g: Any, b: Any) -> Any:
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) * lax.rsqrt(v + 1e-5) * g + b

    def rmsnorm(x: Any, g: Any) -> Any:
        return x * lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * (1 + g)

    def causal_mask(s: Any) -> Any:
        n = s.shape[-1]
        mask = jnp.arange(n)[:, None] >= jnp.arange(n)[None, :]
        return jnp.where(mask, s, -1e9)

    def heads_split(x: Any) -> Any:
        b, s, d = x.shape
        return x.reshape(b, s, 4, d // 4).transpose(0, 2, 1, 3) * 0.5

    def heads_merge(x: Any) -> Any:
        b, h, s, d = x.shape
        return (x * 2.0).transpose(0, 2, 1, 3).reshape(b, s, h * d)

    def concat_many(a: Any, b: Any, c: Any) -> Any:
        return jnp.concatenate([a * 2.0, b, c + 1.0], axis=1)

    def stack_last(a: Any, b: Any) -> Any:
        return jnp.stack([a + 1.0, b * 2.0], axis=-1)

    def roll(x: Any) -> Any:
        return jnp.roll(x * 2.0, 3, axis=1)

    def strided(x: Any) -> Any:
        return x[::2, 1::3] * 2.0

    def reverse_slice(x: Any) -> Any:
        return x[::-1][2:6] + 1.0

    def tile_repeat(x: Any) -> Any:
        return jnp.tile(x * 2.0, (2, 3))

    def repeat_interleave(x: Any) -> Any:
        return jnp.repeat(x + 1.0, 2, axis=0)

    def gpt_block_in(tok: Any, pos: Any, ids: Any, g: Any) -> Any:
        h = tok[ids] + pos[None, : ids.shape[1]]
        return rmsnorm(h, g)

    def lstm_input(emb: Any, ids: Any, w: Any) -> Any:
        x = emb[ids]
        return jnp.tanh(x @ w)

    def gather_2d_batch(x: Any, idx: Any) -> Any:
        return jax.vmap(lambda a, i: a[i])(x, idx) * 2.0

    def where_index(x: Any, t: Any) -> Any:
        return jnp.where(x > t, x, 0.0).sum(-1)

    def clip_index(table: Any, ids: Any) -> Any:
        return jnp.take(table, jnp.clip(ids - 1, 0, table.shape[0] - 1), axis=0) + 1.0

    def bf16_mix(x: Any, y: Any) -> Any:
        return (x.astype(jnp.float32) * y).astype(jnp.bfloat16)

    def iota_shift(x: Any) -> Any:
        return x + jnp.arange(x.shape[-1], dtype=x.dtype)[::-1]

    f32, i32 = "f32", "i32"
    return [
        ("rope_llama", rope_llama, [((2, 6, 4, 8), f32), ((6, 1, 8), f32), ((6, 1, 8), f32)]),
        ("rope_gemma", rope_gemma, [((2, 6, 4, 8), f32), ((2, 6), i32)]),
        ("rope_stacked", rope_stacked, [((2, 6, 4, 8), f32), ((6, 1, 8), f32),
                                        ((6, 1, 8), f32)]),
        ("rope_interleaved", rope_interleaved, [((2, 6, 8), f32), ((6, 4), f32),
                                                ((6, 4), f32)]),
        ("embed", embed, [((40, 16), f32), ((4, 6), i32)]),
        ("embed_pos", embed_pos, [((40, 16), f32), ((12, 16), f32), ((3, 5), i32)]),
        ("embed_bf16", embed_bf16, [((40, 16), "bf16"), ((4, 6), i32)]),
        ("take_along", take_along, [((4, 10), f32), ((4, 3), i32)]),
        ("point_gather", point_gather, [((8, 9), f32), ((5,), i32), ((5,), i32)]),
        ("rows_gather_sum", rows_gather_sum, [((30, 8), f32), ((4, 5), i32)]),
        ("one_hot_xent", one_hot_xent, [((6, 10), f32), ((6,), i32)]),
        ("flip_merge", flip_merge, [((2, 8), f32)]),
        ("flip_split", flip_split, [((16,), f32)]),
        ("flip_both", flip_both, [((4, 3, 5), f32)]),
        ("flip_transpose", flip_transpose, [((6, 4), f32)]),
        ("pad_edges", pad_edges, [((5, 6), f32)]),
        ("pad_interior", pad_interior, [((4, 5), f32)]),
        ("pad_negative", pad_negative, [((6, 7), f32)]),
        ("pad_split", pad_split, [((3, 8), f32)]),
        ("pad_merge", pad_merge, [((4, 6), f32)]),
        ("argmax_rows", argmax_rows, [((6, 10), f32)]),
        ("argmin_cols", argmin_cols, [((7, 5), f32)]),
        ("max_and_arg", max_and_arg, [((4, 9), f32)]),
        ("max_pool", max_pool, [((2, 8, 8, 3), f32)]),
        ("avg_pool_same", avg_pool_same, [((1, 6, 6, 2), f32)]),
        ("cumsum", cumsum, [((3, 10), f32)]),
        ("scatter_set", scatter_set, [((10, 4), f32), ((3,), i32), ((3, 4), f32)]),
        ("scatter_add", scatter_add, [((10, 4), f32), ((5,), i32), ((5, 4), f32)]),
        ("segment_sum", segment_sum, [((12, 3), f32), ((12,), i32)]),
        ("dyn_slice", dyn_slice, [((10, 8), f32), ((), i32)]),
        ("dyn_slice_clamp", dyn_slice_clamp, [((6, 9), f32), ((), i32), ((), i32)]),
        ("dyn_update", dyn_update, [((10, 8), f32), ((3, 8), f32), ((), i32)]),
        ("softmax", softmax, [((6, 20), f32)]),
        ("layernorm", layernorm, [((4, 5, 16), f32), ((16,), f32), ((16,), f32)]),
        ("rmsnorm", rmsnorm, [((4, 5, 16), f32), ((16,), f32)]),
        ("causal_mask", causal_mask, [((2, 8, 8), f32)]),
        ("heads_split", heads_split, [((2, 6, 16), f32)]),
        ("heads_merge", heads_merge, [((2, 4, 6, 4), f32)]),
        ("concat_many", concat_many, [((3, 4), f32), ((3, 5), f32), ((3, 2), f32)]),
        ("stack_last", stack_last, [((3, 4), f32), ((3, 4), f32)]),
        ("roll", roll, [((3, 10), f32)]),
        ("strided", strided, [((9, 10), f32)]),
        ("reverse_slice", reverse_slice, [((8, 3), f32)]),
        ("tile_repeat", tile_repeat, [((2, 3), f32)]),
        ("repeat_interleave", repeat_interleave, [((3, 4), f32)]),
        ("gpt_block_in", gpt_block_in, [((30, 16), f32), ((10, 16), f32), ((2, 7), i32),
                                        ((16,), f32)]),
        ("lstm_input", lstm_input, [((20, 8), f32), ((3, 4), i32), ((8, 8), f32)]),
        ("gather_2d_batch", gather_2d_batch, [((3, 10), f32), ((3, 4), i32)]),
        ("where_index", where_index, [((5, 6), f32), ((5, 1), f32)]),
        ("clip_index", clip_index, [((12, 6), f32), ((2, 5), i32)]),
        ("bf16_mix", bf16_mix, [((4, 8), "bf16"), ((4, 8), f32)]),
        ("iota_shift", iota_shift, [((3, 7), f32)]),
    ]
