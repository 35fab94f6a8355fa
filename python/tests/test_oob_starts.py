"""Out-of-range dynamic starts inside a kernel: `pallasc run`
against JAX's interpret mode, the independent reference.

JAX has two rules (docs/dialect.md, "Dynamic starts"): `x_ref[pl.ds(s, n)]`
(get/swap) wraps a negative start once (s + dim) and clamps it to
[0, dim - n], as `lax.dynamic_slice`; with a stride it gathers/scatters lane
by lane. `plgpu.load`/`store` (masked_load/masked_swap) pad the ref by n:
a negative start wraps by dim + n, the start is clamped to [0, dim], lanes
past the end read uninitialized values (NaN) and are dropped on write."""

from __future__ import annotations

import unittest

import numpy as np

from harness import PallascCase, skip_without_jax

try:
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import triton as plgpu
  from jax.experimental.pallas import tpu as pltpu
  S = jax.ShapeDtypeStruct
except Exception:  # pragma: no cover
  pass

# Starts past the end, negative, far negative, and in range.
STARTS = np.array([-20, -9, -6, -1, 0, 3, 6, 8, 20], np.int32)
N = 8


def call(kernel, out_len):
  return lambda s, x: pl.pallas_call(
      kernel, grid=(len(STARTS),),
      in_specs=[pl.BlockSpec((1,), lambda i: (i,)),
                pl.BlockSpec((N,), lambda i: (0,))],
      out_specs=pl.BlockSpec((None, out_len), lambda i: (i, 0)),
      out_shape=S((len(STARTS), out_len), jnp.float32))(s, x)


@skip_without_jax
class OutOfRangeStarts(PallascCase):

  def check(self, kernel, out_len):
    x = np.arange(N, dtype=np.float32) + 1
    calls = self.export(call(kernel, out_len), S((len(STARTS),), jnp.int32),
                        S((N,), jnp.float32))
    for c in calls:
      self.check_call(c, inputs=[STARTS, x])

  def test_get_clamps_to_fit(self):
    def k(s_ref, x_ref, o_ref):
      o_ref[...] = x_ref[pl.ds(s_ref[0], 4)]
    self.check(k, 4)

  def test_point_get(self):
    def k(s_ref, x_ref, o_ref):
      o_ref[...] = jnp.full((1,), x_ref[s_ref[0]])
    self.check(k, 1)

  def test_swap_clamps_to_fit(self):
    def k(s_ref, x_ref, o_ref):
      tmp = x_ref[...] * 0
      o_ref[...] = tmp
      o_ref[pl.ds(s_ref[0], 3)] = x_ref[pl.ds(0, 3)] + 100
    self.check(k, N)

  def test_strided_get_and_set_per_lane(self):
    def k(s_ref, x_ref, o_ref):
      o_ref[...] = x_ref[...] * 0
      o_ref[pl.ds(0, 3)] = x_ref[pl.ds(s_ref[0], 3, stride=2)]
      o_ref[pl.ds(s_ref[0] + 1, 3, stride=2)] = x_ref[pl.ds(4, 3)] + 100
    self.check(k, N)

  def test_plgpu_load_store_pad(self):
    def k(s_ref, x_ref, o_ref):
      o_ref[pl.ds(0, N)] = x_ref[...] * 0
      s = s_ref[0]
      v = plgpu.load(x_ref.at[pl.ds(s, 4)])
      o_ref[pl.ds(N, 4)] = v
      plgpu.store(o_ref.at[pl.ds(s, 4)], v + 100)
    self.check(k, N + 4)


# Block indices from a scalar-prefetch table: before the first block, far
# before it, past the last (padded) block, far past it, and in range.
BLOCK_INDICES = np.array([-9, -5, -4, -2, -1, 0, 3, 4, 5, 9], np.int32)
B = 4


@skip_without_jax
class OutOfRangeBlockIndices(PallascCase):
  """Index maps whose block index leaves the array: interpret mode
  indexes the operand's carry (padded to whole blocks) with the start
  `index * block` (an element offset for a squeezed dim), wraps a negative
  start once by the carry's extent and clamps it so the block fits."""

  def check(self, in_spec, out_spec, x, out_shape):
    def f(idx, x):
      return pl.pallas_call(
          kernel, grid_spec=pltpu.PrefetchScalarGridSpec(
              num_scalar_prefetch=1, grid=(len(BLOCK_INDICES),),
              in_specs=[in_spec], out_specs=out_spec),
          out_shape=S(out_shape, jnp.float32))(idx, x)

    def kernel(idx_ref, x_ref, o_ref):
      o_ref[...] = x_ref[...] + 100 * pl.program_id(0).astype(jnp.float32)

    calls = self.export(f, S((len(BLOCK_INDICES),), jnp.int32),
                        S(x.shape, jnp.float32))
    for c in calls:
      self.check_call(c, inputs=[BLOCK_INDICES, x])

  def test_input_blocks(self):
    # 14 elements: 4 blocks of 4, the last padded.
    self.check(pl.BlockSpec((B,), lambda i, idx: (idx[i],)),
               pl.BlockSpec((None, B), lambda i, idx: (i, 0)),
               np.arange(14, dtype=np.float32) + 1, (len(BLOCK_INDICES), B))

  def test_output_blocks(self):
    # Several steps write one clamped or wrapped block: the last one wins;
    # blocks no step writes stay uninitialized (NaN).
    self.check(pl.BlockSpec((B,), lambda i, idx: (0,)),
               pl.BlockSpec((B,), lambda i, idx: (idx[i],)),
               np.arange(14, dtype=np.float32) + 1, (14,))

  def test_squeezed_and_blocked_dims(self):
    # The squeezed row is an element offset (wrapped by 5 rows), the columns
    # blocks of 4 of 10 (a carry of 12).
    self.check(pl.BlockSpec((None, B), lambda i, idx: (idx[i], idx[i] // 4)),
               pl.BlockSpec((None, B), lambda i, idx: (i, 0)),
               np.arange(50, dtype=np.float32).reshape(5, 10) + 1,
               (len(BLOCK_INDICES), B))


if __name__ == "__main__":
  unittest.main()
