"""The exporter's size limits on what it unrolls: reduce_prod and
cumlogsumexp along an axis (up to 128 elements) and a load that mixes slices
with an index vector (up to 64 entries). Over the limit, the export fails
with the message naming the size and the limit, at the kernel's Python
line; at the limit it exports."""

import unittest

from harness import PallascCase, skip_without_jax

try:
  import jax
  import jax.numpy as jnp
  from jax import lax
  from jax.experimental import pallas as pl
  import pallasc_jax
  S = jax.ShapeDtypeStruct
except Exception:  # pragma: no cover
  pass


@skip_without_jax
class UnrollLimits(PallascCase):

  def test_reduce_prod(self):
    def kernel(x_ref, o_ref):
      o_ref[...] = jnp.prod(x_ref[...], axis=1)  # 129 elements
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((8,), jnp.float32))(x)
    self.refused(fn, S((8, 129), jnp.float32),
                 needle="'reduce_prod' along an axis of 129 elements: pallasc "
                 "unrolls it, up to 128 elements", kernel=kernel,
                 line_needle="jnp.prod")
    # At the limit it exports.
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((8,), jnp.float32))(x)
    pallasc_jax.trace(fn, S((8, 128), jnp.float32))

  def test_cumlogsumexp(self):
    def kernel(x_ref, o_ref):
      o_ref[...] = lax.cumlogsumexp(x_ref[...], axis=0)  # 200 elements
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((200, 8),
                                                      jnp.float32))(x)
    self.refused(fn, S((200, 8), jnp.float32),
                 needle="'cumlogsumexp' along an axis of 200 elements: "
                 "pallasc unrolls it, up to 128 elements", kernel=kernel,
                 line_needle="cumlogsumexp")

  def test_slice_gather(self):
    # x_ref[idx, :] with a 65-entry index vector that is no iota pattern.
    def kernel(i_ref, x_ref, o_ref):
      o_ref[...] = x_ref[i_ref[...], :]  # 65 entries
    fn = lambda i, x: pl.pallas_call(kernel, out_shape=S((65, 128),
                                                         jnp.float32))(i, x)
    self.refused(fn, S((65,), jnp.int32), S((128, 128), jnp.float32),
                 needle="a load that mixes slices with an index vector of 65 "
                 "entries: pallasc unrolls it, one load per entry, up to 64",
                 kernel=kernel, line_needle="65 entries")


if __name__ == "__main__":
  unittest.main()
