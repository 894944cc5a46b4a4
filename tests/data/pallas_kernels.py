"""Small Pallas kernels for the ``symidx pallas`` tests: one whose input block runs past the
array (jax-ml/jax#31707's test: ``lambda i: (i + 1, 0)``, 4-row blocks over 16 rows), and the
same kernel with in-bounds blocks."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def copy_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def _run(input_offset, output_offset, x):
    return pl.pallas_call(
        copy_kernel,
        out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32),
        out_specs=pl.BlockSpec((4, 128), lambda i: (i + output_offset, 0)),
        in_specs=[pl.BlockSpec((4, 128), lambda i: (i + input_offset, 0))],
        grid=(4,),
    )(x)


def shifted_input(x):
    return _run(1, 0, x)


def shifted_output(x):
    return _run(0, 2, x)


def in_bounds(x):
    return _run(0, 0, x)


def example_args():
    return (jax.ShapeDtypeStruct((16, 128), jnp.float32),)
