"""The two semantics against XLA itself, NaN and infinities included: JAX functions run on
the CPU with one input element at a time set to other finite values and to NaN, +inf and
-inf (:mod:`xla_oracle`), for the module JAX lowers and the one XLA compiles.

* ``reads`` (the default): every dependence any of those values shows must be in the maps
  (0 unsound). A convolution's kernel element over padding or a base-dilation hole is one
  (``0 * inf`` is NaN); a select's unpicked branch, an element a scatter surely overwrites,
  a clamped start index are not, whatever the value.
* ``finite`` (``assume_finite=True``): every dependence the finite values show must be in
  the maps.

Programs in ``EXACT_READS`` read exactly what the maps give under ``reads`` (every map pair
is a dependence some value shows), those in ``EXACT_FINITE`` exactly under ``finite``: a
map that claims more than XLA shows there is a loose map, and a test fails. The other
programs' reads depend on values (a select on an input mask, scatters at input indices) or
keep reads a value cannot show (``max`` that picks another element), so only soundness is
asked of them. Skipped without JAX.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from xla_oracle import Pairs, dependences, map_pairs

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
lax = pytest.importorskip("jax.lax")

F32, S32, PRED = np.float32, np.int32, np.bool_

Case = tuple[Callable[..., Any], list[tuple[tuple[int, ...], Any]]]


def conv(x: Any, w: Any, **kw: Any) -> Any:
    return lax.conv_general_dilated(x, w, dimension_numbers=("NHWC", "HWIO", "NHWC"), **kw)


def conv1d(x: Any, w: Any, **kw: Any) -> Any:
    return lax.conv_general_dilated(x, w, dimension_numbers=("NWC", "WIO", "NWC"), **kw)


def causal(n: int) -> Any:
    return jnp.arange(n)[:, None] >= jnp.arange(n)[None, :]


def attention(q: Any, k: Any, v: Any, fill: float) -> Any:
    scores = jnp.where(causal(q.shape[0]), q @ k.T, fill)
    return jax.nn.softmax(scores, axis=-1) @ v


PROGRAMS: dict[str, Case] = {
    # convolutions: padding, both dilations, strides, groups, transposed
    "conv_1d_padding": (lambda x, w: conv1d(x, w, window_strides=(1,), padding=[(1, 1)]),
                        [((1, 4, 1), F32), ((3, 1, 1), F32)]),
    "conv_padding_stride": (lambda x, w: conv(x, w, window_strides=(2, 1),
                                              padding=[(1, 1), (2, 0)]),
                            [((1, 4, 3, 1), F32), ((3, 3, 1, 2), F32)]),
    "conv_negative_padding": (lambda x, w: conv(x, w, window_strides=(1, 1),
                                                padding=[(-1, 1), (1, -1)]),
                              [((1, 4, 4, 1), F32), ((2, 2, 1, 1), F32)]),
    "conv_lhs_dilation": (lambda x, w: conv(x, w, window_strides=(1, 1),
                                            padding=[(1, 1), (0, 1)], lhs_dilation=(2, 1)),
                          [((1, 3, 3, 1), F32), ((3, 2, 1, 2), F32)]),
    "conv_rhs_dilation": (lambda x, w: conv(x, w, window_strides=(1, 2),
                                            padding=[(0, 1), (1, 1)], rhs_dilation=(2, 2)),
                          [((1, 5, 4, 1), F32), ((2, 2, 1, 2), F32)]),
    "conv_both_dilations": (lambda x, w: conv1d(x, w, window_strides=(2,), padding=[(2, 1)],
                                                lhs_dilation=(2,), rhs_dilation=(2,)),
                            [((1, 4, 2), F32), ((2, 2, 1), F32)]),
    "conv_feature_groups": (lambda x, w: conv(x, w, window_strides=(1, 1),
                                              padding=[(1, 0), (0, 1)],
                                              feature_group_count=2),
                            [((1, 3, 3, 2), F32), ((2, 2, 1, 2), F32)]),
    "conv_batch_groups": (lambda x, w: conv1d(x, w, window_strides=(1,), padding=[(1, 1)],
                                              batch_group_count=2),
                          [((2, 3, 1), F32), ((2, 1, 2), F32)]),
    "conv_depthwise_same": (lambda x, w: conv(x, w, window_strides=(1, 1), padding="SAME",
                                              feature_group_count=2),
                            [((1, 3, 3, 2), F32), ((3, 3, 1, 2), F32)]),
    "conv_transpose": (lambda x, w: lax.conv_transpose(x, w, (2,), "SAME",
                                                       dimension_numbers=("NWC", "WIO", "NWC")),
                       [((1, 3, 1), F32), ((3, 1, 1), F32)]),
    "conv_transpose_kernel": (lambda x, w: lax.conv_transpose(
        x, w, (2, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"),
        transpose_kernel=True), [((1, 2, 3, 1), F32), ((2, 2, 1, 1), F32)]),
    # pads feeding products
    "pad_times_weight": (lambda x, w: lax.pad(x, 0.0, [(1, 2, 0)]) * w,
                         [((3,), F32), ((6,), F32)]),
    "pad_interior_times_weight": (lambda x, w: lax.pad(x, 0.0, [(0, 0, 1), (1, 0, 0)]) * w,
                                  [((2, 2), F32), ((3, 3), F32)]),
    "pad_into_dot": (lambda x, w: lax.pad(x, 0.0, [(0, 0, 0), (1, 1, 0)]) @ w,
                     [((2, 2), F32), ((4, 2), F32)]),
    "pad_value_input": (lambda x, v, w: lax.pad(x, v, [(1, 1, 0)]) * w,
                        [((2,), F32), ((), F32), ((4,), F32)]),
    # masked attention
    "attention_mask_neg_inf": (lambda q, k, v: attention(q, k, v, -jnp.inf),
                               [((3, 2), F32), ((3, 2), F32), ((3, 2), F32)]),
    "attention_mask_large": (lambda q, k, v: attention(q, k, v, -1e9),
                             [((3, 2), F32), ((3, 2), F32), ((3, 2), F32)]),
    # reduce-window over padding
    "max_pool_padding": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 3), (2, 1),
                                                     [(1, 0), (1, 1)]), [((4, 3), F32)]),
    "sum_pool_padding": (lambda x: lax.reduce_window(x, 0.0, lax.add, (3,), (1,), [(1, 2)]),
                         [((4,), F32)]),
    "window_sum_dilated": (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 2),
                                                       [(0, 1), (1, 0)], base_dilation=(2, 1),
                                                       window_dilation=(1, 2)),
                           [((3, 4), F32)]),
    "cumsum": (lambda x: jnp.cumsum(x, axis=1), [((2, 4), F32)]),
    # dots with constant matrices, products with a known zero
    "dot_identity": (lambda x: x @ jnp.eye(3, dtype=F32), [((2, 3), F32)]),
    "dot_one_hot": (lambda x: x @ jax.nn.one_hot(jnp.array([2, 0]), 3, dtype=F32).T,
                    [((2, 3), F32)]),
    "dot_zero_rows": (lambda x: x @ jnp.array([[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]], F32),
                      [((2, 3), F32)]),
    "times_zero": (lambda x, y: x * 0.0 + y, [((3,), F32), ((3,), F32)]),
    "dot": (lambda a, b: a @ b, [((2, 3), F32), ((3, 2), F32)]),
    # selects
    "where_causal": (lambda x: jnp.where(causal(3), x, 0.0), [((3, 3), F32)]),
    "where_band_neg_inf": (lambda x: jnp.where(jnp.abs(jnp.arange(4)[:, None]
                                                       - jnp.arange(4)) <= 1, x, -jnp.inf),
                           [((4, 4), F32)]),
    "where_input_mask": (lambda a, b, p: jnp.where(p, a, b),
                         [((2, 3), F32), ((2, 3), F32), ((2, 3), PRED)]),
    "tril_then_dot": (lambda x, y: jnp.tril(x) @ y, [((3, 3), F32), ((3, 2), F32)]),
    # scatters, slices
    "set_at_constant_indices": (lambda x, u: x.at[jnp.array([1, 3])].set(u),
                                [((4, 2), F32), ((2, 2), F32)]),
    "set_at_input_indices": (lambda x, i, u: x.at[i].set(u),
                             [((4, 2), F32), ((2,), S32), ((2, 2), F32)]),
    "add_at_input_indices": (lambda x, i, u: x.at[i].add(u),
                             [((4, 2), F32), ((2,), S32), ((2, 2), F32)]),
    "dynamic_update_slice_constant": (lambda x, u: lax.dynamic_update_slice(x, u, (1, 0)),
                                      [((4, 3), F32), ((2, 3), F32)]),
    "dynamic_update_slice_input": (lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1)),
                                   [((4, 3), F32), ((2, 2), F32), ((), S32)]),
    "dynamic_slice_clamped": (lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 3)),
                              [((4, 3), F32), ((), S32)]),
    "take_constant_indices": (lambda x: x[jnp.array([3, 0, 2, -1])], [((4, 2), F32)]),
    # loops
    "fori_loop": (lambda x: lax.fori_loop(0, 3, lambda i, c: jnp.roll(c, 1) * 2.0, x),
                  [((4,), F32)]),
    "scan_cumulative": (lambda xs: lax.scan(lambda c, r: (c + r, c * 2), jnp.zeros(2, F32),
                                            xs), [((3, 2), F32)]),
    "while_counter": (lambda x: lax.while_loop(lambda c: c[0] < 3,
                                               lambda c: (c[0] + 1, c[1] * 2.0), (0, x))[1],
                      [((4,), F32)]),
    # linear algebra whose definition ignores a triangle
    "triangular_solve": (lambda a, b: lax.linalg.triangular_solve(
        a, b, left_side=True, lower=True, transpose_a=False), [((3, 3), F32), ((3, 2), F32)]),
    "triangular_solve_unit_diagonal": (lambda a, b: lax.linalg.triangular_solve(
        a, b, left_side=False, lower=False, unit_diagonal=True),
        [((3, 3), F32), ((2, 3), F32)]),
    "cholesky": (lambda a: lax.linalg.cholesky(a + 9.0 * jnp.eye(3, dtype=F32),
                                               symmetrize_input=False), [((3, 3), F32)]),
    # ops that pick elements by value
    "max_pool_gradient": (lambda x: jax.grad(lambda x: jnp.sum(lax.reduce_window(
        x, -jnp.inf, lax.max, (2, 2), (1, 1), [(0, 1), (1, 0)]) ** 2))(x), [((3, 3), F32)]),
    "sort": (lambda x: jnp.sort(x), [((5,), F32)]),
    "top_k": (lambda x: lax.top_k(x, 2), [((5,), F32)]),
    "cond": (lambda x, p: lax.cond(p, lambda v: v[::-1], lambda v: v * 2.0, x),
             [((3,), F32), ((), PRED)]),
}

#: Programs whose maps under ``reads`` relate exactly the pairs some value shows. Not
#: ``conv_lhs_dilation`` and the transposed convolutions: StableHLO defines base-dilation
#: holes as zeros the kernel multiplies, so a kernel element over a hole is read
#: (``0 * inf`` is NaN), but XLA's CPU skips the holes of these (not of
#: ``conv_both_dilations``, which it computes another way) and shows no such dependence.
#: The maps hold for every backend that computes the definition: sound, and looser than
#: this one backend here.
EXACT_READS = frozenset({
    "conv_1d_padding", "conv_padding_stride", "conv_negative_padding",
    "conv_rhs_dilation", "conv_both_dilations", "conv_feature_groups", "conv_batch_groups",
    "conv_depthwise_same",
    "pad_times_weight", "pad_interior_times_weight", "pad_into_dot", "pad_value_input",
    "sum_pool_padding", "window_sum_dilated", "cumsum", "dot", "dot_identity", "dot_one_hot",
    "dot_zero_rows", "times_zero", "where_causal", "where_band_neg_inf", "tril_then_dot",
    "set_at_constant_indices", "dynamic_update_slice_constant", "take_constant_indices",
    "fori_loop", "scan_cumulative", "while_counter",
})

#: Programs whose maps under ``finite`` relate exactly the pairs finite values show: the
#: kernel holes, and the products with a known zero (padding, a constant zero, a
#: triangle's zeros, the identity's, a one-hot matrix's and a table's zero entries). Not the
#: masked attentions, whose queries and keys cancel out of a
#: row the mask leaves one element (its softmax is 1 whatever they hold). Their values are
#: exact under ``finite`` with a ``-inf`` mask (see the test below).
EXACT_FINITE = frozenset({
    "pad_times_weight", "pad_interior_times_weight", "pad_into_dot", "pad_value_input",
    "dot_identity", "dot_one_hot", "dot_zero_rows", "times_zero", "tril_then_dot",
    "conv_1d_padding", "conv_padding_stride", "conv_negative_padding", "conv_lhs_dilation",
    "conv_rhs_dilation", "conv_both_dilations", "conv_feature_groups", "conv_batch_groups",
    "conv_depthwise_same", "conv_transpose", "conv_transpose_kernel",
    "sum_pool_padding", "window_sum_dilated", "cumsum", "dot", "where_causal",
    "where_band_neg_inf", "set_at_constant_indices", "dynamic_update_slice_constant",
    "take_constant_indices", "fori_loop", "scan_cumulative", "while_counter",
})


def modules(fn: Callable[..., Any], shapes: list[tuple[tuple[int, ...], Any]]
            ) -> tuple[Callable[..., Any], dict[str, str]]:
    jitted = jax.jit(fn, keep_unused=True)
    lowered = jitted.lower(*(jax.ShapeDtypeStruct(s, d) for s, d in shapes))
    return jitted, {"lowered": lowered.as_text(dialect="hlo"),
                    "compiled": lowered.compile().as_text()}


def compare(stage: str, found: Pairs, text: str, assume_finite: bool, exact: bool) -> None:
    pairs, labels = map_pairs(text, assume_finite=assume_finite)
    if exact:
        assert not labels, f"{stage}: {labels}"
    for key in set(pairs) | set(found):
        ours, theirs = pairs.get(key, set()), found.get(key, set())
        assert theirs <= ours, f"{stage} {key}: unsound at {sorted(theirs - ours)[:4]}"
        if exact:
            assert ours <= theirs, f"{stage} {key}: loose at {sorted(ours - theirs)[:4]}"


def test_at_least_thirty_programs() -> None:
    assert len(PROGRAMS) >= 30
    assert set(PROGRAMS) >= EXACT_READS and set(PROGRAMS) >= EXACT_FINITE


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_reads_hold_every_ieee_dependence(name: str) -> None:
    fn, shapes = PROGRAMS[name]
    jitted, texts = modules(fn, shapes)
    found = dependences(jitted, shapes, trials=2, ieee=True)
    for stage, text in texts.items():
        compare(stage, found, text, assume_finite=False, exact=name in EXACT_READS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_finite_holds_every_finite_dependence(name: str) -> None:
    fn, shapes = PROGRAMS[name]
    jitted, texts = modules(fn, shapes)
    found = dependences(jitted, shapes, trials=2)
    for stage, text in texts.items():
        compare(stage, found, text, assume_finite=True, exact=name in EXACT_FINITE)


def test_a_kernel_over_padding_is_read_only_under_reads() -> None:
    """The issue's example: ``k[0] = inf`` makes output 0 NaN, as ``reads`` says and
    ``finite`` (every input finite) need not."""
    fn, shapes = PROGRAMS["conv_1d_padding"]
    jitted, texts = modules(fn, shapes)
    x, k = np.ones((1, 4, 1), F32), np.ones((3, 1, 1), F32)
    k[0, 0, 0] = np.inf
    assert np.isnan(np.asarray(jitted(x, k))[0, 0, 0])
    reads, _ = map_pairs(texts["compiled"])
    finite, _ = map_pairs(texts["compiled"], assume_finite=True)
    pair = (0, 0, 0, 0, 0, 0)  # output (0, 0, 0) and kernel (0, 0, 0)
    assert pair in reads[(0, 1)] and pair not in finite[(0, 1)]


@pytest.mark.parametrize("fill", ["attention_mask_neg_inf", "attention_mask_large"])
def test_masked_attention_reads_values_only_where_unmasked_when_finite(fill: str) -> None:
    """``softmax(where(causal, q k^T, -inf)) @ v``: a probability where the mask is false is
    ``exp(-inf - max)``, zero when the row's max is finite (NaN when the mask empties the
    row: it multiplies ``v`` into NaN whatever ``v`` holds), so output row ``i`` reads
    ``v[j]`` for ``j <= i`` only, under ``finite``; every ``v[j]`` under ``reads`` (a NaN or
    an infinity in ``v[j]`` makes ``0 * v[j]`` NaN). With ``-1e9`` for ``-inf`` the
    probability is a tiny positive number for the analysis (``exp`` of a finite value), and
    every ``v[j]`` stays read."""
    fn, shapes = PROGRAMS[fill]
    jitted, texts = modules(fn, shapes)
    finite = dependences(jitted, shapes, trials=2)[(0, 2)]
    ieee = dependences(jitted, shapes, trials=2, ieee=True)[(0, 2)]
    every = {(i, c, j, c2) for i in range(3) for c in range(2) for j in range(3)
             for c2 in range(2) if c == c2}
    assert ieee == every
    for text in texts.values():
        reads, _ = map_pairs(text)
        assert reads[(0, 2)] == every
        ours, _ = map_pairs(text, assume_finite=True)
        if fill == "attention_mask_neg_inf":
            assert ours[(0, 2)] == finite == {p for p in every if p[2] <= p[0]}
        else:
            assert ours[(0, 2)] == every and finite <= every
