"""Symbolic arrays in memory space `any` (pl.ANY) (issue 36): the kernel's
ref keeps the symbolic dimension (`!pallas.ref<?x128xf32, any>`), the kernel
reads its size as the symbol's value (`x_ref.shape[0]`), and loads and
stores of `pl.ds(start, static size)` on it follow interpret mode at every
size: a `fit` read (`x_ref[pl.ds(s, 8)]`) moves the slice inside the array
as lax.dynamic_slice does, a masked read (plgpu.load) reads unspecified
values past the edge (masked here), a masked write past the edge is
dropped. One export, one CPU artifact, `pallasc run` at each size against
JAX's interpret mode of the static call at that size (the CPU artifact, and
the sm_90a and gfx942 ones under `--emulate`, whose guard regions catch a
write past the array); for TPU, the Mosaic kernel signature and
placeholder mapping JAX's own export writes."""

import os
import re
import unittest

from harness import (PallascCase, gpu_targets, jax_interpret, load_npy,
                     save_npy, skip_without_jax)

try:
  import jax
  import jax.numpy as jnp
  import numpy as np
  from jax import export, lax
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import triton as plgpu
  from jax.experimental.pallas import tpu as pltpu
  import pallasc_jax
  S = jax.ShapeDtypeStruct
except Exception:  # pragma: no cover
  pass


def masked_rows(x):
  """Rows i*8 .. i*8+7 of an `any` input by a masked read, doubled and
  plus n, written to an `any` output by a masked write (rows past n
  dropped)."""
  n = x.shape[0]

  def kernel(x_ref, o_ref):
    rows = x_ref.shape[0]
    start = pl.program_id(0) * 8
    valid = start + lax.broadcasted_iota(jnp.int32, (8, 128), 0) < rows
    v = plgpu.load(x_ref.at[pl.ds(start, 8), :], mask=valid, other=0.0)
    plgpu.store(o_ref.at[pl.ds(start, 8), :],
                v * 2.0 + jnp.asarray(rows, jnp.float32), mask=valid)
  return pl.pallas_call(
      kernel, grid=(pl.cdiv(n, 8),),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec(memory_space=pl.ANY),
      out_shape=S(x.shape, x.dtype))(x)


def fit_rows(x):
  """`x_ref[pl.ds(i * 8, 8)]` (get's `fit` rule: the last, ragged block is
  moved inside the array) into a blocked output."""
  n = x.shape[0]

  def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[pl.ds(pl.program_id(0) * 8, 8), :] + 1.0
  return pl.pallas_call(
      kernel, grid=(pl.cdiv(n, 8),),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
      out_shape=S(x.shape, x.dtype))(x)


def dma_rows(x):
  """A TPU-style kernel: the block is copied from the `any` ref by DMA."""
  n = x.shape[0]

  def kernel(x_ref, o_ref, buf, sem):
    i = pl.program_id(0)
    pltpu.async_copy(x_ref.at[pl.ds(i * 8, 8)], buf, sem).wait()
    o_ref[...] = buf[...] * 2.0
  return pl.pallas_call(
      kernel, grid=(pl.cdiv(n, 8),),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
      scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32),
                      pltpu.SemaphoreType.DMA],
      out_shape=S(x.shape, x.dtype))(x)


@skip_without_jax
class SymbolicAny(PallascCase):

  def run_sizes(self, fn, sizes, block=8, target=None):
    (n,) = export.symbolic_shape("n", constraints=("n <= 65536",))
    (c,) = self.export(fn, S((n, 128), jnp.float32))
    mlir, spec = c.paths
    rng = np.random.default_rng(0)
    for size in sizes:
      x = rng.uniform(-1, 1, (size, 128)).astype(np.float32)
      (st,) = pallasc_jax.trace(fn, S(x.shape, x.dtype))
      nb = st.eqn.params["grid_mapping"].num_dynamic_grid_bounds
      (want,) = jax_interpret(st.eqn, [x], [-(-size // block)] * nb)
      d = os.path.join(self.dir, fn.__name__, f"n{size}",
                       (target or "cpu").replace(":", "_"))
      os.makedirs(d)
      xp, op = os.path.join(d, "x.npy"), os.path.join(d, "o.npy")
      save_npy(xp, x)
      tflags = ["--target", target, "--emulate"] if target else []
      self.pallasc("run", mlir, "--spec", spec, "--input", xp, "--output", op,
                   *tflags, "--cache-dir", os.path.join(self.dir, "cache"))
      np.testing.assert_allclose(load_npy(op, np.float32), want, rtol=1e-6,
                                 atol=1e-6,
                                 err_msg=f"{target or 'cpu'}, n = {size}")
    return c

  def test_kernel_ref_has_the_dynamic_dimension(self):
    (n,) = export.symbolic_shape("n")
    (c,) = pallasc_jax.trace(masked_rows, S((n, 128), jnp.float32))
    self.assertEqual(c.spec["in_specs"], [{"memory_space": "any"}])
    self.assertEqual(c.spec["out_specs"], [{"memory_space": "any"}])
    self.assertIn("%x_ref: !pallas.ref<?x128xf32, any>", c.kernel_mlir)
    self.assertIn('pallas.symbol_value "n" : i32', c.kernel_mlir)

  def test_masked_read_and_write_at_every_size(self):
    # Sizes below, at and past the block: the masked lanes past n read
    # nothing that shows, and the writes there are dropped.
    self.run_sizes(masked_rows, (1, 7, 8, 127, 1000))

  def test_fit_read_at_every_size(self):
    # JAX's get moves a ragged last slice inside the array (interpret mode
    # cannot slice 8 rows of a shorter array: sizes from 8).
    self.run_sizes(fit_rows, (8, 9, 127, 1000))

  def test_dma_at_every_size(self):
    self.run_sizes(dma_rows, (8, 127, 1000))

  def test_gpus_emulated_at_every_size(self):
    # The GPU lowering of the `any` refs (pallas-to-gpu: the ref's size from
    # the symbol parameter, slices at dynamic starts checked against it),
    # emulated, against interpret mode.
    for t in [t for t in ("cuda:sm_90a", "rocm:gfx942")
              if t in gpu_targets()]:
      with self.subTest(target=t):
        self.run_sizes(masked_rows, (1, 7, 8, 127, 1000), target=t)
        self.run_sizes(fit_rows, (8, 9, 127, 1000), target=t)

  def test_whole_read_of_the_dynamic_dimension_is_refused(self):
    def whole(x):
      def kernel(x_ref, o_ref):
        o_ref[...] = jnp.zeros((8, 128)) + x_ref[...].sum()
      return pl.pallas_call(
          kernel, grid=(pl.cdiv(x.shape[0], 8),),
          in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
          out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
          out_shape=S(x.shape, x.dtype))(x)
    (n,) = export.symbolic_shape("n")
    with self.assertRaises(pallasc_jax.ExportError) as cm:
      pallasc_jax.trace(whole, S((n, 128), jnp.float32))
    self.assertRegex(
        str(cm.exception),
        r"test_symbolic_any.py:\d+:\d+: error: reads the whole of dimension 0"
        r" of the pl.ANY ref 'x_ref', whose size 'n' is symbolic: a block "
        r"needs a static shape; read the ref in slices of a static size "
        r"\(pl.ds\(start, size\)\)")

  def test_tpu_matches_jax_lowering(self):
    # JAX's Mosaic lowering of the same call (jax.export(...,
    # platforms=["tpu"]) under pallas_export_experimental(dynamic_shapes=
    # True), which a pl.ANY operand over a symbolic shape needs): the `any`
    # ref's dynamic dimension is n's placeholder 2147483647, found at
    # operand 1 (after the grid bound), dimension 0.
    from harness import jax_tpu_lowering, tpu_v5e
    from jax._src.pallas import core as pallas_core
    from test_symbol_value import mosaic_text
    (n,) = export.symbolic_shape("n")
    args = [S((n, 128), jnp.float32)]
    (c,) = self.export(dma_rows, *args)
    out = os.path.join(self.dir, "tpu")
    self.pallasc(c.paths[0], "--spec", c.paths[1], "--target", "tpu", "-o",
                 out)
    with open(os.path.join(out, c.name + ".tpu.mlirbc"), "rb") as fh:
      ours_bc = fh.read()
    cmp = jax_tpu_lowering()
    with tpu_v5e(), pallas_core.pallas_export_experimental(
        dynamic_shapes=True):
      theirs_bc, _, _ = cmp.jax_export_call(dma_rows, args)
    ours, theirs = mosaic_text(ours_bc), mosaic_text(theirs_bc)
    any_ref = "memref<2147483647x128xf32, #tpu.memory_space<any>>"
    mapping = (r"tpu\.dynamic_dimension_mapping_indices_2147483647 = "
               r"(\[[^\]]*\])")
    for text in (ours, theirs):
      self.assertIn(any_ref, text)
      self.assertRegex(text, mapping)
    self.assertEqual(re.search(mapping, ours).group(1),
                     re.search(mapping, theirs).group(1))
    # The whole kernel signature and its attributes but iteration_bounds
    # (under dynamic_shapes JAX writes the grid bound as a placeholder too;
    # pallasc writes `?`, as JAX's default export of a symbolic grid does).
    a, b = cmp.describe(ours_bc), cmp.describe(theirs_bc)
    self.assertEqual(a["kernel"]["type"], b["kernel"]["type"])
    for key in ("dimension_semantics", "window_params", "scalar_prefetch",
                "scratch_operands"):
      self.assertEqual(a["kernel"]["attrs"].get(key),
                       b["kernel"]["attrs"].get(key), key)
    self.assertEqual(a["transforms"], b["transforms"])


if __name__ == "__main__":
  unittest.main()
