"""The kernels bench/vs_jax_triton compares: JAX's shipped GPU Pallas ops
(jax.experimental.pallas.ops.gpu) as JAX 0.10.2 ships them, at the shapes
issue 38 measured. Each entry: a function of jax arrays and the abstract
arguments it is traced with (one pallas_call each, but the comparison pairs
every pallas_call the function makes with the Triton custom call JAX lowers
it to, in order)."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas.ops.gpu import (attention, decode_attention,
                                             layer_norm, rms_norm, softmax)

S = jax.ShapeDtypeStruct
F16, F32 = jnp.float16, jnp.float32


def _mha(causal):
  f = functools.partial(attention.mha, segment_ids=None, causal=causal)
  return (lambda q, k, v: f(q, k, v), [S((1, 1024, 4, 64), F16)] * 3)


KERNELS = {
    # [.., 1000] rows with JAX's 1024-wide block: the round-up-and-mask
    # idiom.
    "softmax": (lambda x: softmax.softmax(x, axis=-1), [S((1024, 1000), F32)]),
    # The norms take [batch, seq, features].
    "layer_norm": (lambda x, w, b: layer_norm.layer_norm_forward(x, w, b)[0],
                   [S((4, 256, 1024), F32), S((1024,), F32), S((1024,), F32)]),
    "rms_norm": (lambda x, w, b: rms_norm.rms_norm_forward(x, w, b)[0],
                 [S((4, 256, 1024), F32), S((1024,), F32), S((1024,), F32)]),
    "mha": _mha(False),
    "mha_causal": _mha(True),
    # 16 query heads under the default 4 warps: 16-row dots.
    "mqa": (lambda q, k, v: decode_attention.mqa(q, k, v, k_splits=1),
            [S((1, 16, 64), F16), S((1, 1024, 64), F16), S((1, 1024, 64), F16)]),
}
