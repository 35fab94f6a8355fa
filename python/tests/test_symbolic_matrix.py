"""Issue 36's kernels, each exported once with a symbolic row count
(jax.export.symbolic_shape), compiled once for cpu, cuda:sm_90a,
cuda:sm_80 and rocm:gfx942, and run from that single artifact at every
size: JAX's shipped softmax (ops/gpu), an RMSNorm with grid cdiv(n, 8) and a
layer norm, as users write them. `pallasc run` at sizes 1, 7, 8, 127, 128,
1000 and 4096 equals JAX's interpret mode of the static call at that size;
the GPU targets pass `--emulate --check` at three of them."""

import os
import unittest

import numpy as np

from harness import (PallascCase, gpu_targets, jax_interpret, load_npy,
                     save_npy, skip_without_jax)

try:
  import jax
  import jax.numpy as jnp
  from jax import export, lax
  from jax.experimental import pallas as pl
  from jax.experimental.pallas.ops.gpu import softmax
  import pallasc_jax
  S = jax.ShapeDtypeStruct
except Exception:  # pragma: no cover
  pass

SIZES = (1, 7, 8, 127, 128, 1000, 4096)
EMULATED_SIZES = (1, 127, 1000)


def rmsnorm(x, w):
  def kernel(x_ref, w_ref, o_ref):
    x = x_ref[...]
    o_ref[...] = x * lax.rsqrt(jnp.mean(x * x, axis=1, keepdims=True) +
                               1e-6) * w_ref[...]
  return pl.pallas_call(
      kernel, grid=(pl.cdiv(x.shape[0], 8),),
      in_specs=[pl.BlockSpec((8, 256), lambda i: (i, 0)),
                pl.BlockSpec((1, 256), lambda i: (0, 0))],
      out_specs=pl.BlockSpec((8, 256), lambda i: (i, 0)),
      out_shape=S(x.shape, x.dtype))(x, w)


def layer_norm(x, w, b):
  def kernel(x_ref, w_ref, b_ref, o_ref):
    x = x_ref[...]
    mean = jnp.mean(x, axis=1, keepdims=True)
    xc = x - mean
    var = jnp.mean(xc * xc, axis=1, keepdims=True)
    o_ref[...] = xc * lax.rsqrt(var + 1e-5) * w_ref[...] + b_ref[...]
  return pl.pallas_call(
      kernel, grid=(pl.cdiv(x.shape[0], 16),),
      in_specs=[pl.BlockSpec((16, 128), lambda i: (i, 0)),
                pl.BlockSpec((1, 128), lambda i: (0, 0)),
                pl.BlockSpec((1, 128), lambda i: (0, 0))],
      out_specs=pl.BlockSpec((16, 128), lambda i: (i, 0)),
      out_shape=S(x.shape, x.dtype))(x, w, b)


@skip_without_jax
class SymbolicMatrix(PallascCase):

  def run_matrix(self, fn, row_len, extra_shapes, grid_of, reference=None):
    (n,) = export.symbolic_shape("n", constraints=("n <= 65536",))
    avals = [S((n, row_len), jnp.float32)] + [
        S(s, jnp.float32) for s in extra_shapes]
    (c,) = self.export(fn, *avals)
    mlir, spec = c.paths
    targets = ["cpu"] + gpu_targets()
    tflags = [f for t in targets for f in ("--target", t)]
    out = os.path.join(self.dir, "artifacts")
    self.pallasc(mlir, "--spec", spec, *tflags, "-o", out)
    emulate = [t for t in ("cuda:sm_90a", "rocm:gfx942") if t in targets]
    cache = os.path.join(self.dir, "cache")
    rng = np.random.default_rng(0)
    for size in SIZES:
      ins = [rng.uniform(-1, 1, (size, row_len)).astype(np.float32)] + [
          rng.uniform(-1, 1, s).astype(np.float32) for s in extra_shapes]
      if reference is not None:
        want = np.asarray(reference(*ins))
      else:
        (st,) = pallasc_jax.trace(fn, *[S(a.shape, a.dtype) for a in ins])
        nb = st.eqn.params["grid_mapping"].num_dynamic_grid_bounds
        (want,) = jax_interpret(st.eqn, ins, [grid_of(size)] * nb)
      d = os.path.join(self.dir, f"n{size}")
      os.makedirs(d)
      flags = []
      for i, a in enumerate(ins):
        p = os.path.join(d, f"in{i}.npy")
        save_npy(p, a)
        flags += ["--input", p]
      got = os.path.join(d, "out.npy")
      r = self.pallasc("run", mlir, "--spec", spec, *flags, "--output", got,
                       "--cache-dir", cache)
      np.testing.assert_allclose(load_npy(got, np.float32), want, rtol=2e-5,
                                 atol=2e-5, err_msg=f"cpu, n = {size}")
      if size in EMULATED_SIZES:
        for t in emulate:
          r = self.pallasc("run", mlir, "--spec", spec, *flags, "--target",
                           t, "--emulate", "--check", "--cache-dir", cache)
          self.assertIn("matches the CPU result", r.stdout + r.stderr,
                        f"{t}, n = {size}")
    return c

  def test_shipped_softmax(self):
    # The reference is jax.nn.softmax: JAX's interpret mode of the op's
    # static call fails at one row (JAX drops the grid of size 1, then pads
    # the operand with a block of the wrong rank).
    c = self.run_matrix(lambda x: softmax.softmax(x), 200, [], lambda n: n,
                        reference=lambda x: jax.nn.softmax(x, axis=-1))
    self.assertEqual(c.spec["grid"], ["n"])

  def test_rmsnorm(self):
    c = self.run_matrix(rmsnorm, 256, [(1, 256)], lambda n: -(-n // 8))
    self.assertEqual(c.spec["grid"], ["cdiv(n, 8)"])

  def test_layer_norm(self):
    c = self.run_matrix(layer_norm, 128, [(1, 128), (1, 128)],
                        lambda n: -(-n // 16))
    self.assertEqual(c.spec["grid"], ["cdiv(n, 16)"])


if __name__ == "__main__":
  unittest.main()
