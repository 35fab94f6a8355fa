"""A symbol's value inside the kernel (jax.export.symbolic_shape): JAX's
`dim_as_value` in a kernel body becomes `pallas.symbol_value` (docs/jax.md,
docs/dialect.md#pallassymbol_value). One symbolic export, one artifact per
target, run at several sizes against interpret mode at each static size."""

import os
import unittest

from harness import PallascCase, skip_without_jax

try:
  import jax
  import jax.numpy as jnp
  import numpy as np
  from jax import export, lax
  from jax.experimental import pallas as pl
  import pallasc_jax
  S = jax.ShapeDtypeStruct
except Exception:  # pragma: no cover
  pass


def masked(x):
  """Rows past n masked (`row < n`, as attention masks `col < seq_len`), a
  loop to pl.cdiv(n, 8) (attention's K/V loop), and 2*n + 3 and n % 8 as
  values."""
  n = x.shape[0]

  def kernel(x_ref, o_ref):
    i = pl.program_id(0)
    rows = i * 8 + lax.broadcasted_iota(jnp.int32, (8, 128), 0)
    v = jnp.where(rows < n, x_ref[...], 0.0)
    nb = lax.fori_loop(0, pl.cdiv(n, 8), lambda j, a: a + 1.0, 0.0)
    o_ref[...] = (v * nb + jnp.asarray(2 * n + 3, jnp.float32) +
                  jnp.asarray(n % 8, jnp.float32))
  return pl.pallas_call(kernel, grid=(pl.cdiv(n, 8),),
                        in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                        out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
                        out_shape=S(x.shape, x.dtype))(x)


@skip_without_jax
class SymbolValue(PallascCase):

  def expected(self, x):
    (s,) = pallasc_jax.trace(masked, S(x.shape, x.dtype))
    grid = s.eqn.params["grid_mapping"].num_dynamic_grid_bounds
    (want,) = jax_interpret_at(s.eqn, x, grid)
    return want

  def test_kernel_text(self):
    (n,) = export.symbolic_shape("n")
    (c,) = pallasc_jax.trace(masked, S((n, 128), jnp.float32))
    self.assertEqual(c.spec["symbols"], {"n": {}})
    self.assertIn('pallas.symbol_value "n" : i32', c.kernel_mlir)
    self.assertIn("arith.floordivsi", c.kernel_mlir)  # pl.cdiv(n, 8)

  def test_index_map_reading_a_symbol_is_refused(self):
    def rev(x):
      n = x.shape[0]
      return pl.pallas_call(
          lambda x_ref, o_ref: o_ref.__setitem__(..., x_ref[...]),
          grid=(pl.cdiv(n, 8),),
          in_specs=[pl.BlockSpec((8, 128),
                                 lambda i: (pl.cdiv(n, 8) - 1 - i, 0))],
          out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
          out_shape=S(x.shape, x.dtype))(x)
    (n,) = export.symbolic_shape("n")
    with self.assertRaises(pallasc_jax.ExportError) as cm:
      pallasc_jax.trace(rev, S((n, 128), jnp.float32))
    self.assertIn("is used as a value outside a kernel body",
                  cm.exception.message)

  def test_cpu_at_every_size(self):
    # One export, pallasc run (one CPU artifact, n from the .npy shape) at
    # each size equals interpret mode of the static call at that size.
    from harness import load_npy, save_npy
    (n,) = export.symbolic_shape("n")
    (c,) = self.export(masked, S((n, 128), jnp.float32))
    mlir, spec = c.paths
    rng = np.random.default_rng(0)
    for size in (1, 7, 8, 127, 1000):
      x = rng.uniform(-1, 1, (size, 128)).astype(np.float32)
      d = os.path.join(self.dir, f"n{size}")
      os.makedirs(d)
      xp, op = os.path.join(d, "x.npy"), os.path.join(d, "o.npy")
      save_npy(xp, x)
      self.pallasc("run", mlir, "--spec", spec, "--input", xp, "--output", op)
      np.testing.assert_allclose(load_npy(op, np.float32), self.expected(x),
                                 rtol=1e-6, atol=1e-6, err_msg=f"n = {size}")

  def test_emulated_gpus(self):
    # The same export compiled once for cuda:sm_90a and rocm:gfx942: the
    # kernel reads n from its symbol parameter (pallas-gpu-bind-symbols).
    from harness import gpu_targets, load_npy, save_npy
    targets = [t for t in ("cuda:sm_90a", "rocm:gfx942") if t in gpu_targets()]
    if not targets:
      self.skipTest("no GPU target to emulate")
    (n,) = export.symbolic_shape("n", constraints=("n <= 65536",))
    (c,) = self.export(masked, S((n, 128), jnp.float32))
    mlir, spec = c.paths
    rng = np.random.default_rng(1)
    for size in (7, 127):
      x = rng.uniform(-1, 1, (size, 128)).astype(np.float32)
      xp = os.path.join(self.dir, f"x{size}.npy")
      save_npy(xp, x)
      want = self.expected(x)
      for target in targets:
        out = os.path.join(self.dir, f"{target.replace(':', '_')}{size}.npy")
        self.pallasc("run", mlir, "--spec", spec, "--target", target,
                     "--emulate", "--input", xp, "--output", out,
                     "--cache-dir", os.path.join(self.dir, "cache"))
        np.testing.assert_allclose(load_npy(out, np.float32), want,
                                   rtol=1e-6, atol=1e-6,
                                   err_msg=f"{target}, n = {size}")

  def test_tpu_placeholder_matches_jax(self):
    # --target tpu writes the value as JAX's Mosaic lowering does under
    # pallas_export_experimental(dynamic_shapes=True) (its default export
    # cannot lower dim_as_value in a kernel): the i32 placeholder
    # 2147483647 and the module's mapping from it to operand 1 (after the
    # grid bound), dimension 0.
    import re
    (n,) = export.symbolic_shape("n")
    (c,) = self.export(masked, S((n, 128), jnp.float32))
    out = os.path.join(self.dir, "tpu")
    self.pallasc(c.paths[0], "--spec", c.paths[1], "--target", "tpu", "-o",
                 out)
    with open(os.path.join(out, c.name + ".tpu.mlirbc"), "rb") as fh:
      ours = mosaic_text(fh.read())
    # JAX 0.10.2's module for `masked` (jax.export(..., platforms=["tpu"])
    # in a fresh process under pallas_export_experimental(dynamic_shapes=
    # True); in this process JAX's own trace caches make that export fail):
    # the placeholder of n is found at operand 1 (after the grid bound),
    # dimension 0.
    theirs = ("tpu.dynamic_dimension_mapping_indices_2147483647 = "
              "[{dimension_index = 0 : i64, operand_index = 1 : i64}]")
    want = re.search(r"tpu\.dynamic_dimension_mapping_indices_2147483647 = "
                     r"(\[[^\]]*\])", theirs)
    got = re.search(r"tpu\.dynamic_dimension_mapping_indices_2147483647 = "
                    r"(\[[^\]]*\])", ours)
    self.assertIsNotNone(got, ours)
    self.assertEqual(got.group(1), want.group(1))
    self.assertIn("arith.constant 2147483647 : i32", ours)
    self.assertIn("tpu.dynamic_dimension_mapping_module_2147483647", ours)


def mosaic_text(body):
  """A serialized Mosaic module as text (JAX's parser, as
  test/Target/compare_with_jax_lowering.py reads one)."""
  from jax._src.interpreters import mlir as jax_mlir
  from jax._src.lib.mlir import ir, passmanager
  from jaxlib.mosaic.python import tpu
  ctx = jax_mlir.make_ir_context()
  tpu.register_dialect(ctx)
  ctx.allow_unregistered_dialects = True
  with ctx:
    module = ir.Module.parse(body)
    passmanager.PassManager.parse(
        "builtin.module(mosaic-serde{serialize=false})").run(module.operation)
    return str(module)


def jax_interpret_at(eqn, x, num_bounds):
  from harness import jax_interpret
  size = x.shape[0]
  return jax_interpret(eqn, [x], [-(-size // 8)] * num_bounds)


if __name__ == "__main__":
  unittest.main()
