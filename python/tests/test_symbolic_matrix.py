"""Issue 36's kernels, each exported once with a symbolic row count
(jax.export.symbolic_shape), compiled once for cpu, cuda:sm_90a,
cuda:sm_80 and rocm:gfx942, and run from that single artifact at every
size: JAX's shipped softmax (ops/gpu), an RMSNorm with grid cdiv(n, 8), a
layer norm and a flash-attention forward whose K/V loop runs to
cdiv(seq_len, block_k), as users write them. `pallasc run` at sizes 1, 7, 8,
127, 128, 1000 and 4096 equals JAX's interpret mode of the static call at
that size; the GPU targets pass `--emulate --check` at three of them."""

import os
import subprocess
import unittest

import numpy as np

from harness import (PALLASC, PallascCase, gpu_targets, jax_interpret,
                     load_npy, plain_build_only, save_npy, skip_without_jax)

try:
  import jax
  import jax.numpy as jnp
  from jax import export, lax
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import triton as plgpu
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


ATTN_BLOCK_Q, ATTN_BLOCK_K, ATTN_HEAD_DIM = 16, 16, 32


def attention(q, k, v):
  """A flash-attention forward over one head: a grid over query blocks
  (pl.cdiv(seq_len, block_q)), Q by BlockSpec, K and V as pl.ANY refs read
  in blocks with pl.ds by masked loads (plgpu.load) in a lax.fori_loop to
  pl.cdiv(seq_len, block_k), the columns past seq_len masked, online
  softmax."""
  bq, bk, d = ATTN_BLOCK_Q, ATTN_BLOCK_K, ATTN_HEAD_DIM

  def kernel(q_ref, k_ref, v_ref, o_ref):
    seq_len = k_ref.shape[0]
    q = q_ref[...] * (1.0 / d ** 0.5)

    def body(j, carry):
      m, l, acc = carry
      start = j * bk
      rows = start + lax.broadcasted_iota(jnp.int32, (bk, d), 0)
      kb = plgpu.load(k_ref.at[pl.ds(start, bk), :], mask=rows < seq_len,
                      other=0.0)
      vb = plgpu.load(v_ref.at[pl.ds(start, bk), :], mask=rows < seq_len,
                      other=0.0)
      s = plgpu.dot(q, kb, trans_b=True)
      col = start + lax.broadcasted_iota(jnp.int32, (bq, bk), 1)
      s = jnp.where(col < seq_len, s, -jnp.inf)
      m_new = jnp.maximum(m, s.max(axis=1))
      alpha = jnp.exp(m - m_new)
      p = jnp.exp(s - m_new[:, None])
      l_new = l * alpha + p.sum(axis=1)
      return m_new, l_new, acc * alpha[:, None] + plgpu.dot(p, vb)

    init = (jnp.full((bq,), -jnp.inf, jnp.float32),
            jnp.zeros((bq,), jnp.float32), jnp.zeros((bq, d), jnp.float32))
    _, l, acc = lax.fori_loop(0, pl.cdiv(seq_len, bk), body, init)
    o_ref[...] = acc / l[:, None]

  return pl.pallas_call(
      kernel, grid=(pl.cdiv(q.shape[0], bq),),
      in_specs=[pl.BlockSpec((bq, d), lambda i: (i, 0)),
                pl.BlockSpec(memory_space=pl.ANY),
                pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec((bq, d), lambda i: (i, 0)),
      out_shape=S(q.shape, q.dtype))(q, k, v)


@skip_without_jax
class SymbolicMatrix(PallascCase):

  def run_matrix(self, fn, row_len, extra_shapes, grid_of, reference=None,
                 row_inputs=1, gpu=True):
    (n,) = export.symbolic_shape("n", constraints=("n <= 65536",))
    avals = [S((n, row_len), jnp.float32)] * row_inputs + [
        S(s, jnp.float32) for s in extra_shapes]
    (c,) = self.export(fn, *avals)
    mlir, spec = c.paths
    targets = ["cpu"] + (gpu_targets() if gpu else [])
    tflags = [f for t in targets for f in ("--target", t)]
    out = os.path.join(self.dir, "artifacts")
    self.pallasc(mlir, "--spec", spec, *tflags, "-o", out)
    emulate = [t for t in ("cuda:sm_90a", "rocm:gfx942") if t in targets]
    cache = os.path.join(self.dir, "cache")
    rng = np.random.default_rng(0)
    for size in SIZES:
      ins = [rng.uniform(-1, 1, (size, row_len)).astype(np.float32)
             for _ in range(row_inputs)] + [
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

  def test_attention(self):
    # The CPU half: K and V reach the kernel as `any` refs with the dynamic
    # sequence length (!pallas.ref<?x32xf32, any>), read as n.
    c = self.run_matrix(attention, ATTN_HEAD_DIM, [],
                        lambda n: -(-n // ATTN_BLOCK_Q), row_inputs=3,
                        gpu=False)
    self.assertEqual(c.spec["grid"], ["cdiv(n, 16)"])
    self.assertEqual(c.spec["in_specs"][1:], [{"memory_space": "any"}] * 2)
    self.assertIn("!pallas.ref<?x32xf32, any>", c.kernel_mlir)

  @plain_build_only
  def test_attention_gpus(self):
    # The GPU half: one compile for the GPU targets (K and V reach the
    # kernel as `any` refs with a dynamic dimension, read in masked blocks
    # at dynamic starts), `--emulate --check` at three sizes.
    (n,) = export.symbolic_shape("n", constraints=("n <= 65536",))
    (c,) = self.export(attention,
                       *[S((n, ATTN_HEAD_DIM), jnp.float32)] * 3)
    mlir, spec = c.paths
    targets = gpu_targets()
    tflags = [f for t in targets for f in ("--target", t)]
    r = subprocess.run([PALLASC, mlir, "--spec", spec, *tflags, "-o",
                        os.path.join(self.dir, "gpu")], capture_output=True,
                       text=True)
    self.assertEqual(r.returncode, 0, r.stderr)
    rng = np.random.default_rng(0)
    cache = os.path.join(self.dir, "cache")
    for size in EMULATED_SIZES:
      flags = []
      for i in range(3):
        p = os.path.join(self.dir, f"n{size}_{i}.npy")
        save_npy(p, rng.uniform(-1, 1, (size, ATTN_HEAD_DIM)).astype(
            np.float32))
        flags += ["--input", p]
      for t in [t for t in ("cuda:sm_90a", "rocm:gfx942") if t in targets]:
        r = self.pallasc("run", mlir, "--spec", spec, *flags, "--target", t,
                         "--emulate", "--check", "--cache-dir", cache)
        self.assertIn("matches the CPU result", r.stdout + r.stderr,
                      f"{t}, n = {size}")


if __name__ == "__main__":
  unittest.main()
