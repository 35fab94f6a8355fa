"""Golden tests: JAX's own shipped Pallas ops (layer_norm forward, softmax,
attention.mha forward causal and not, decode_attention.mqa, TPU matmul),
exported at small shapes, compiled for the GPU targets (and TPU where JAX's
TPU block rule allows),
run with `pallasc run` and compared with `pallas_call(..., interpret=True)`;
the same after jax.vmap of the op."""

import functools
import os
import re

import numpy as np
import unittest

from harness import (PallascCase, gpu_targets, have_rocm_libs,
                     pallas_call_inputs, plain_build_only, skip_without_jax)

try:
  import jax
  import jax.numpy as jnp
  from jax.experimental.pallas.ops.gpu import paged_attention, rms_norm
  from jax.experimental.pallas.ops.gpu import (attention, decode_attention,
                                               layer_norm, softmax)
  from jax.experimental.pallas.ops.tpu import flash_attention, matmul
  from jax.experimental.pallas.ops.tpu.random import philox, threefry
  from jax.experimental.pallas.ops.tpu.splash_attention import (
      splash_attention_kernel as splash, splash_attention_mask as splash_mask)
  S = jax.ShapeDtypeStruct
except Exception:  # pragma: no cover
  pass


@skip_without_jax
class ShippedOps(PallascCase):

  def run_op(self, fn, *args, targets=None, emulate=("cuda:sm_90a",),
             ncalls=1, **kw):
    calls = self.export(fn, *args)
    self.assertEqual(len(calls), ncalls)
    for c in calls:
      self.check_call(c, targets=gpu_targets() if targets is None else
                      targets, emulate=emulate, **kw)
    return calls

  def test_softmax(self):
    (c,) = self.run_op(lambda x: softmax.softmax(x), S((4, 200), jnp.float32))
    self.assertEqual(c.spec["grid"], [4])
    self.assertEqual(c.spec["in_specs"][0]["block_shape"], [None, 200])

  def test_softmax_vmap(self):
    # jax.vmap of the op: JAX batches the pallas_call's grid again.
    (c,) = self.run_op(jax.vmap(lambda x: softmax.softmax(x)),
                       S((2, 3, 130), jnp.float32), emulate=())
    self.assertEqual(c.spec["grid"], [2, 3])

  def test_layer_norm(self):
    (c,) = self.run_op(
        lambda x, w, b: layer_norm.layer_norm_forward(x, w, b)[0],
        S((2, 3, 200), jnp.float32), S((200,), jnp.float32),
        S((200,), jnp.float32))
    self.assertEqual(c.spec["grid"], [2, 3])

  def test_layer_norm_vmap(self):
    (c,) = self.run_op(
        jax.vmap(lambda x, w, b: layer_norm.layer_norm_forward(x, w, b)[0],
                 in_axes=(0, None, None)),
        S((2, 2, 3, 160), jnp.float32), S((160,), jnp.float32),
        S((160,), jnp.float32), emulate=())
    self.assertEqual(c.spec["grid"], [2, 2, 3])

  def mha(self, causal, batch_vmap=False, emulate=("cuda:sm_90a",)):
    bs = attention.BlockSizes(block_q=16, block_k=16)
    f = functools.partial(attention.mha, segment_ids=None, causal=causal,
                          block_sizes=bs, sm_scale=0.5)
    shape = (1, 32, 2, 64)
    if batch_vmap:
      f = jax.vmap(f)
      shape = (2,) + shape
    return self.run_op(lambda q, k, v: f(q, k, v),
                       *[S(shape, jnp.float16)] * 3, emulate=emulate)

  def test_mha(self):
    (c,) = self.mha(causal=False)
    self.assertEqual(c.spec["grid"], [2, 1, 2])

  def test_mha_causal(self):
    self.mha(causal=True)

  def test_mha_causal_ring(self):
    # The causal K/V loop runs cdiv(block_q * (pid + 1), block_k) times: the
    # grid bounds pid, so the loads are views and stream through the loop's
    # cp.async ring (pallas-to-gpu-loop-ring-grid.mlir; K on sm_90a only,
    # pallas-to-gpu-loop-ring-true-mask.mlir). With three
    # stages the guarded prologue copies ahead only the iterations that
    # exist (program 0 runs one). Numbers: interpret mode, and each chip's
    # emulator against the CPU.
    bs = attention.BlockSizes(block_q=32, block_k=32)
    f = functools.partial(attention.mha, segment_ids=None, causal=True,
                          block_sizes=bs, sm_scale=0.5, num_stages=3)
    emulate = ["cuda:sm_80", "cuda:sm_90a"]
    if have_rocm_libs():
      emulate.append("rocm:gfx942")
    (c,) = self.run_op(lambda q, k, v: f(q, k, v),
                       *[S((1, 64, 1, 64), jnp.float16)] * 3,
                       targets=["cuda:sm_80", "cuda:sm_90a"], emulate=emulate)
    self.assertEqual(c.spec["grid"], [2, 1, 1])
    out = os.path.join(os.path.dirname(c.paths[0]), "out-" + c.name)
    copies = {}
    for arch in ("sm_80", "sm_90a"):
      with open(os.path.join(out, f"{c.name}.{arch}.ptx")) as fh:
        ptx = fh.read()
      # Two groups before the loop, one per iteration; no lane-by-lane
      # 2-byte loads of K or V.
      copies[arch] = len(re.findall(r"cp\.async\.cg\.shared\.global", ptx))
      self.assertGreater(copies[arch], 0, arch)
      self.assertRegex(ptx, r"cp\.async\.wait_group\s+1;", arch)
      self.assertNotIn("ld.global.u16", ptx, arch)
      self.assertNotIn("ld.global.b16", ptx, arch)
    # sm_90a streams K (its mask, arange(64) < 64, is all true) beside V:
    # twice sm_80's copies, where K keeps its stored tile.
    self.assertEqual(copies["sm_90a"], 2 * copies["sm_80"])

  def test_mha_causal_vmap(self):
    (c,) = self.mha(causal=True, batch_vmap=True, emulate=())
    self.assertEqual(len(c.spec["grid"]), 4)

  @plain_build_only
  def test_decode_attention_mqa(self):
    # 16 query heads (block_h = 16) under the default 4 warps: the 16-row
    # dots take a warp tiling along N and keep mma.sync / MFMA
    # (pallas-to-gpu-dot-small-m.mlir); checked on the emulators of all
    # three kinds of dot (mma.sync on sm_80 and sm_90a, MFMA on gfx942).
    f = functools.partial(decode_attention.mqa, block_k=64, k_splits=1)
    emulate = ["cuda:sm_80", "cuda:sm_90a"]
    if have_rocm_libs():
      emulate.append("rocm:gfx942")
    (c,) = self.run_op(lambda q, k, v: f(q, k, v), S((1, 16, 64), jnp.float16),
                       S((1, 128, 64), jnp.float16),
                       S((1, 128, 64), jnp.float16), emulate=emulate)
    self.assertEqual(c.spec["grid"], [1, 1])
    self.assertEqual(c.spec["compiler_params"]["gpu"]["num_warps"], 4)

  def norm_backward(self, op):
    # The op's backward kernels (dx; dw and db), run on the operands the op
    # passes them (the forward's mean and rstd): jax.vjp of the op.
    x = np.random.default_rng(0).standard_normal((2, 4, 256)).astype(
        np.float32)
    w, b = [np.random.default_rng(i).standard_normal(256).astype(np.float32)
            for i in (1, 2)]
    do = np.random.default_rng(3).standard_normal((2, 4, 256)).astype(
        np.float32)
    args = (x, w, b, do)

    def fn(*a):
      *ins, g = a
      _, vjp = jax.vjp(op, *ins)
      return vjp(g)
    calls = self.export(fn, *[S(a.shape, a.dtype) for a in args])
    ins = pallas_call_inputs(fn, *args)
    self.assertEqual(len(calls), len(ins))
    emulate = ["cuda:sm_90a"] + (["rocm:gfx942"] if have_rocm_libs() else [])
    for c, i in zip(calls, ins):
      self.check_call(c, targets=gpu_targets(), inputs=i, emulate=emulate)
    return calls

  def test_layer_norm_backward(self):
    calls = self.norm_backward(lambda x, w, b: layer_norm.layer_norm(x, w, b))
    self.assertEqual(len(calls), 3)  # forward, dx, dw + db

  @plain_build_only
  def test_rms_norm_backward(self):
    calls = self.norm_backward(lambda x, w, b: rms_norm.rms_norm(x, w, b))
    self.assertEqual(len(calls), 3)

  @plain_build_only
  def test_mha_backward(self):
    # jax.vjp of attention.mha: the forward, the preprocessing and the dq /
    # dk / dv kernel, run on the operands the op passes them (the
    # forward's residuals).
    bs = attention.BlockSizes(block_q=16, block_k=16, block_q_dkv=16,
                              block_kv_dkv=16, block_q_dq=16, block_kv_dq=16)
    f = functools.partial(attention.mha, segment_ids=None, causal=True,
                          block_sizes=bs, sm_scale=0.5)

    def fn(q, k, v, do):
      _, vjp = jax.vjp(f, q, k, v)
      return vjp(do)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((1, 32, 2, 64)).astype(np.float16)
            for _ in range(4)]
    calls = self.export(fn, *[S(a.shape, a.dtype) for a in args])
    self.assertEqual(len(calls), 3)
    emulate = ["cuda:sm_90a"] + (["rocm:gfx942"] if have_rocm_libs() else [])
    for c, i in zip(calls, pallas_call_inputs(fn, *args)):
      self.check_call(c, targets=gpu_targets(), inputs=i, emulate=emulate)

  def test_paged_attention(self):
    # k_pages_ref[block_tables]: a load mixing slices with an index vector
    # (one load per page), on the block tables and lengths the op passes.
    f = functools.partial(paged_attention.paged_attention,
                          pages_per_compute_block=2, k_splits=2)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 16, 64)).astype(np.float16)
    k, v = [rng.standard_normal((1, 16, 16, 64)).astype(np.float16)
            for _ in range(2)]
    tables = rng.permutation(16)[:8].reshape(1, 8).astype(np.int32)
    lengths = np.array([100], np.int32)
    fn = lambda *a: f(*a)
    (c,) = self.export(fn, *[S(x.shape, x.dtype)
                             for x in (q, k, v, tables, lengths)])
    (ins,) = pallas_call_inputs(fn, q, k, v, tables, lengths)
    emulate = ["cuda:sm_90a"] + (["rocm:gfx942"] if have_rocm_libs() else [])
    self.check_call(c, targets=gpu_targets(), inputs=ins, emulate=emulate)
    # int8 k/v with per-token scales.
    k8, v8 = [rng.integers(-127, 128, (1, 16, 16, 64)).astype(np.int8)
              for _ in range(2)]
    ks, vs = [rng.uniform(0.001, 0.02, (1, 16, 16)).astype(np.float32)
              for _ in range(2)]
    args = (q, k8, v8, tables, lengths, ks, vs)
    (c8,) = self.export(fn, *[S(x.shape, x.dtype) for x in args],
                        sub="int8")
    (ins8,) = pallas_call_inputs(fn, *args)
    self.check_call(c8, targets=gpu_targets(), inputs=ins8, emulate=emulate)

  def test_tpu_matmul(self):
    f = lambda x, y: matmul.matmul(x, y, block_shape=(64, 128), block_k=128)
    # bf16 operands, f32 accumulator scratch (an f32 128x128 B tile alone
    # would not fit gfx942's 64 KiB of LDS).
    (c,) = self.run_op(f, S((128, 256), jnp.bfloat16),
                       S((256, 256), jnp.bfloat16),
                       targets=gpu_targets() + ["tpu"], emulate=())
    self.assertEqual(c.spec["compiler_params"]["tpu"]["dimension_semantics"],
                     ["parallel", "parallel", "arbitrary"])

  def test_tpu_matmul_vmap(self):
    f = jax.vmap(lambda x, y: matmul.matmul(x, y, block_shape=(64, 128),
                                            block_k=128))
    (c,) = self.run_op(f, S((2, 128, 256), jnp.bfloat16),
                       S((2, 256, 128), jnp.bfloat16),
                       targets=gpu_targets() + ["tpu"], emulate=())
    self.assertEqual(c.spec["compiler_params"]["tpu"]["dimension_semantics"],
                     ["parallel", "parallel", "parallel", "arbitrary"])

  def tpu_flash_attention(self, causal, bwd=False):
    # jnp.tile of the running max (lax.tile) is what kept this op out.
    shape = S((1, 2, 256, 128), jnp.float32)
    fa = functools.partial(flash_attention.flash_attention, causal=causal)
    if bwd:
      fn = jax.grad(lambda q, k, v: jnp.sum(fa(q, k, v) ** 2), argnums=(0, 1, 2))
    else:
      fn = fa
    calls = self.export(fn, shape, shape, shape)
    for c in calls:
      # The backward kernels' random l/m/di inputs make large, cancelling
      # sums: compare them within 1e-5 of each output's largest magnitude.
      self.check_call(c, targets=["tpu"], emulate=(),
                      normwise=1e-5 if bwd else None)
    return calls

  def test_tpu_flash_attention(self):
    (c,) = self.tpu_flash_attention(causal=False)
    self.assertEqual(c.name, "_flash_attention_kernel")

  def test_tpu_flash_attention_causal(self):
    self.tpu_flash_attention(causal=True)

  def test_tpu_flash_attention_backward(self):
    calls = self.tpu_flash_attention(causal=True, bwd=True)
    self.assertGreaterEqual(len(calls), 3)  # forward, dK/dV, dQ

  def test_tpu_threefry(self):
    # The threefry2x32 primitive, expanded to 32-bit adds, rotates and xors;
    # a shape that needs padding (JAX slices the padded result).
    fn = lambda key: threefry.plthreefry_random_bits(key, 32, (256, 300))
    key = np.array([0x12345678, 0x9ABCDEF0], np.uint32)
    (c,) = self.export(fn, S((2,), jnp.uint32))
    (ins,) = pallas_call_inputs(fn, key)
    self.check_call(c, targets=["tpu"], inputs=ins)

  def test_tpu_philox_on_gpus(self):
    # JAX's TPU philox kernel, ~1,300 integer ops per element on a 256 x 256
    # block, on every GPU target: pallas-chunk-elementwise stores the block a
    # chunk of rows at a time, so the unrolled code is one chunk's (the
    # compile took minutes before). Bit-exact against interpret mode.
    fn = lambda key: philox.philox_random_bits(key, 32, (256, 512))
    key = np.array([0x12345678, 0x9ABCDEF0], np.uint32)
    (c,) = self.export(fn, S((2,), jnp.uint32))
    self.assertEqual(c.spec["out_specs"][0]["block_shape"], [256, 256])
    (ins,) = pallas_call_inputs(fn, key)
    self.check_call(c, targets=gpu_targets(), inputs=ins,
                    emulate=[t for t in gpu_targets() if t != "cuda:sm_80"])
    gpu_ir = os.path.join(os.path.dirname(c.paths[0]), "ir-" + c.name)
    self.pallasc(c.paths[0], "--spec", c.paths[1], "--target", "cuda:sm_90a",
                 "--emit", "mlir", "-o", gpu_ir)
    # 4 rows of 256 per chunk: the chain's ~400 ops (after CSE) x 1,024
    # elements fit the pass's budget of 2^19 element-ops, 8 rows would not.
    with open(os.path.join(gpu_ir, c.name + ".sm_90a.gpu.mlir")) as f:
      loop = re.search(r"scf\.for %\S+ = %\S+ to %c256\S* step %c4 ",
                       f.read())
    self.assertIsNotNone(loop, "no loop over the block's 256 rows, step 4")

  def test_tpu_splash_attention(self):
    # Causal multi-head splash attention: its scalar-prefetch block tables
    # come from the mask, so the kernel runs on the operands the op computes.
    mask = splash_mask.MultiHeadMask(
        [splash_mask.CausalMask((256, 256)) for _ in range(2)])
    fn = splash.make_splash_mha(mask, head_shards=1, q_seq_shards=1,
                                block_sizes=splash.BlockSizes(*[128] * 6))
    rng = np.random.default_rng(0)
    q, k, v = [rng.uniform(-1, 1, (2, 256, 128)).astype(np.float32)
               for _ in range(3)]
    (c,) = self.export(fn, *[S(x.shape, x.dtype) for x in (q, k, v)])
    (ins,) = pallas_call_inputs(fn, q, k, v)
    self.check_call(c, targets=["tpu"], inputs=ins)

  def test_tpu_matmul_matches_jax_lowering(self):
    # The TPU module pallasc writes for the exported kernel has the kernel
    # signature, window params, dimension semantics and transform functions
    # of JAX's own Mosaic lowering of the same function
    # (jax.export(..., platforms=["tpu"]), which runs without a TPU).
    f = lambda x, y: matmul.matmul(x, y, block_shape=(64, 128), block_k=128)
    self.assert_same_tpu_call(*self.tpu_against_jax(
        f, [S((128, 256), jnp.bfloat16), S((256, 256), jnp.bfloat16)]))


if __name__ == "__main__":
  unittest.main()
