"""Every primitive of docs/jax.md's table, exported, compiled for the GPU
targets, run with `pallasc run` and compared with JAX's interpret mode.

Primitives are batched: each kernel computes many of them and writes each
result to its own slot of one output (`o_ref[k] = ...`), so one pallasc
compile and one run cover a whole family."""

import functools
import os
import unittest

import numpy as np

from harness import (PallascCase, gpu_targets, have_rocm_libs, plain_build_only,
                     skip_without_jax)

try:
  import jax
  import jax.numpy as jnp
  from jax import lax
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import tpu as pltpu
  from jax.experimental.pallas import triton as plgpu
  S = jax.ShapeDtypeStruct
except Exception:  # pragma: no cover
  pass


def stacked(fns, in_shapes, in_dtype, out_dtype=None, block=None):
  """A pallas_call whose kernel writes fns[k](*loaded inputs) to o[k]."""
  n = len(fns)
  shape = in_shapes[0]

  def kernel(*refs):
    ins, o_ref = refs[:-1], refs[-1]
    vals = [r[...] for r in ins]
    for k, f in enumerate(fns):
      o_ref[k] = f(*vals).astype(o_ref.dtype)
  return lambda *xs: pl.pallas_call(
      kernel, out_shape=S((n,) + shape, out_dtype or in_dtype))(*xs)


@skip_without_jax
class Primitives(PallascCase):

  def run_kernel(self, fn, *args, emulate=(), tgts=None, **kw):
    calls = self.export(fn, *args)
    for c in calls:
      self.check_call(c, targets=gpu_targets() if tgts is None else tgts,
                      emulate=emulate, **kw)
    return calls

  def test_float_elementwise(self):
    f32 = jnp.float32
    pos = lambda x: jnp.abs(x) + 0.5
    fns = [
        lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y,
        lambda x, y: x / pos(y), lambda x, y: lax.rem(x, pos(y)),
        lambda x, y: jnp.maximum(x, y), lambda x, y: jnp.minimum(x, y),
        lambda x, y: -x, lambda x, y: jnp.abs(x), lambda x, y: jnp.sign(x),
        lambda x, y: jnp.floor(x * 4), lambda x, y: jnp.ceil(x * 4),
        lambda x, y: jnp.round(x * 4), lambda x, y: lax.round(x * 4),
        lambda x, y: jnp.exp(x), lambda x, y: jnp.exp2(x),
        lambda x, y: jnp.log(pos(x)), lambda x, y: jnp.log1p(pos(x)),
        lambda x, y: jnp.expm1(x), lambda x, y: jnp.sqrt(pos(x)),
        lambda x, y: lax.rsqrt(pos(x)), lambda x, y: jnp.tanh(x),
        lambda x, y: jax.nn.sigmoid(x), lambda x, y: lax.erf(x),
        lambda x, y: jnp.sin(x), lambda x, y: jnp.cos(x),
        lambda x, y: lax.integer_pow(x, 3), lambda x, y: x ** -2,
        lambda x, y: jnp.square(x), lambda x, y: jnp.power(pos(x), y),
        lambda x, y: jnp.clip(x, -0.5, 0.25),
        lambda x, y: jnp.where(x > y, x, y * 2),
        lambda x, y: jnp.isfinite(x / y).astype(f32),
        lambda x, y: (x == y).astype(f32) + (x != y) + 2 * (x < y),
        lambda x, y: (x <= y) + 2.0 * (x >= y) + 4 * (x > 0),
        lambda x, y: x * 2.5 + 1,   # weak-typed Python scalars
        lambda x, y: jax.nn.relu(x),  # custom_jvp_call
        lambda x, y: jnp.logaddexp(x, y),
    ]
    self.run_kernel(stacked(fns, [(8, 128)] * 2, f32), S((8, 128), f32),
                    S((8, 128), f32), emulate=("cuda:sm_90a",))

  def test_integer_elementwise(self):
    i32, u32 = jnp.int32, jnp.uint32
    nz = lambda y: jnp.abs(y) + 1
    fns = [
        lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y,
        lambda x, y: lax.div(x - 8, nz(y)), lambda x, y: lax.rem(x - 8, nz(y)),
        lambda x, y: jnp.maximum(x, y), lambda x, y: jnp.minimum(x, y),
        lambda x, y: -x, lambda x, y: jnp.abs(x - 8), lambda x, y: jnp.sign(x - 8),
        lambda x, y: x & y, lambda x, y: x | y, lambda x, y: x ^ y,
        lambda x, y: ~x, lambda x, y: x << (y % 4),
        lambda x, y: (x - 8) >> (y % 4),
        lambda x, y: lax.shift_right_logical(x - 8, y % 4),
        lambda x, y: (x == y) + 2 * (x != y) + 4 * (x < y) + 8 * (x <= y),
        lambda x, y: (x > y) + 2 * (x >= y),
        lambda x, y: lax.integer_pow(x, 2), lambda x, y: jnp.clip(x, 3, 9),
        lambda x, y: jnp.where(x > y, x, -y),
        lambda x, y: (x.astype(u32) // (y.astype(u32) + 1)).astype(i32),
        lambda x, y: (x.astype(u32) % (y.astype(u32) + 1)).astype(i32),
        lambda x, y: ((x - 8).astype(u32) > y.astype(u32)).astype(i32),
        lambda x, y: jnp.maximum((x - 8).astype(u32), y.astype(u32)).astype(i32),
        lambda x, y: x // nz(y),  # floor_divide: select/sign/rem
        lambda x, y: lax.select_n(y % 3, x, -x, x * 2),
    ]
    self.run_kernel(stacked(fns, [(8, 128)] * 2, i32), S((8, 128), i32),
                    S((8, 128), i32))

  def test_bits_and_special_functions(self):
    # clz, population_count, bitcast_convert_type, nextafter, erf_inv,
    # add_any (jax.grad inside the kernel), pad and split, against
    # interpret mode; inputs include both signs, zeros and equal pairs.
    f32, i32, u32 = jnp.float32, jnp.int32, jnp.uint32
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (8, 128)).astype(np.float32)
    y = rng.uniform(-1, 1, (8, 128)).astype(np.float32)
    x[0, :8] = [0.0, -0.0, 0.0, 1.0, -1.0, 0.5, 0.999, -0.999]
    y[0, :8] = [1.0, -1.0, 0.0, 1.0, 2.0, 0.5, 0.0, 0.0]
    i = rng.integers(-2**31, 2**31 - 1, (8, 128), dtype=np.int64).astype(
        np.int32)
    i[0, :4] = [0, -1, 1, -2**31]
    bits = lambda v: lax.bitcast_convert_type(v, i32)

    def kernel(x_ref, y_ref, i_ref, f_ref, n_ref, p_ref):
      x, y, i = x_ref[...], y_ref[...], i_ref[...]
      f_ref[0] = lax.nextafter(x, y)
      f_ref[1] = lax.nextafter(x, x)
      f_ref[2] = lax.erf_inv(x)
      f_ref[3] = lax.erf_inv(x.astype(jnp.bfloat16)).astype(f32)
      f_ref[4] = lax.bitcast_convert_type(bits(x) ^ 1, f32)
      f_ref[5] = jax.grad(lambda v: jnp.sum(v * v + jnp.sin(v)))(x)
      n_ref[0] = lax.clz(i)
      n_ref[1] = lax.population_count(i)
      n_ref[2] = lax.clz(i.astype(u32)).astype(i32)
      n_ref[3] = bits(lax.nextafter(x.astype(jnp.float16),
                                    y.astype(jnp.float16)).astype(f32))
      n_ref[4] = lax.bitcast_convert_type(i, u32).astype(i32) >> 3
      a, b = jnp.split(x, [64], axis=1)
      p_ref[0] = jnp.concatenate([b, a], axis=1)
      p_ref[1] = jnp.pad(x[:, 32:96], ((0, 0), (16, 48)),
                         constant_values=y[0, 0])
      p_ref[2] = lax.pad(x, 0.0, ((0, 0, 0), (-64, 64, 0)))
      p_ref[3] = lax.pad(x[:, :64], -1.0, ((0, 0, 0), (0, 1, 1)))
    fn = lambda x, y, i: pl.pallas_call(kernel, out_shape=[
        S((6, 8, 128), f32), S((5, 8, 128), i32), S((4, 8, 128), f32)])(x, y, i)
    (c,) = self.export(fn, S((8, 128), f32), S((8, 128), f32),
                       S((8, 128), i32))
    self.check_call(c, targets=gpu_targets(), inputs=[x, y, i],
                    emulate=("cuda:sm_90a",))

    def tpu_kernel(x_ref, i_ref, o_ref, n_ref):
      x, i = x_ref[...], i_ref[...]
      o_ref[0] = lax.erf_inv(x)
      o_ref[1] = lax.nextafter(x, x * 2)
      n_ref[0] = lax.clz(i)
      n_ref[1] = lax.population_count(i)
    fn = lambda x, i: pl.pallas_call(tpu_kernel, out_shape=[
        S((2, 8, 128), f32), S((2, 8, 128), i32)])(x, i)
    (c,) = self.export(fn, S((8, 128), f32), S((8, 128), i32), sub="tpu")
    self.check_call(c, targets=["tpu"], inputs=[x, i])

  def test_unsigned_reductions(self):
    # max/min/argmax/argmin in unsigned order (the top half of the range
    # wins a max): u32 on the CPU runner and TPU, u8 max/min on the GPUs too.
    u32, u8, i32 = jnp.uint32, jnp.uint8, jnp.int32

    def wide(a_ref, o_ref):
      a = a_ref[...]
      o_ref[0] = jnp.max(a, axis=0)
      o_ref[1] = jnp.min(a, axis=1)[:128]

    def arg(a_ref, i_ref):
      a = a_ref[...]
      i_ref[0] = jnp.argmax(a, axis=0).astype(i32)
      i_ref[1] = jnp.argmin(a, axis=0).astype(i32)

    def narrow(b_ref, o_ref):
      b = b_ref[...]
      o_ref[0] = jnp.max(b, axis=0)
      o_ref[1] = jnp.min(b, axis=0)
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2**32, (128, 128), dtype=np.uint64).astype(np.uint32)
    a[3, :] = 2**32 - 1
    b = rng.integers(0, 256, (16, 128)).astype(np.uint8)
    (c,) = self.export(lambda a: pl.pallas_call(wide, out_shape=S(
        (2, 128), u32))(a), S((128, 128), u32), sub="w")
    self.check_call(c, targets=["tpu"], inputs=[a])
    # Index reductions: the CPU runner (no GPU lowering, TPU f32 only).
    (c,) = self.export(lambda a: pl.pallas_call(arg, out_shape=S(
        (2, 128), i32))(a), S((128, 128), u32), sub="a")
    self.check_call(c, inputs=[a])
    (c,) = self.export(lambda b: pl.pallas_call(narrow, out_shape=S(
        (2, 128), u8))(b), S((16, 128), u8), sub="n")
    self.check_call(c, targets=gpu_targets(), inputs=[b],
                    emulate=("cuda:sm_90a",))

  def test_conversions(self):
    f32 = jnp.float32
    fns = [
        lambda x: x.astype(jnp.bfloat16).astype(f32),
        lambda x: x.astype(jnp.float16).astype(f32),
        lambda x: x.astype(jnp.float16).astype(jnp.bfloat16).astype(f32),
        lambda x: (x * 100).astype(jnp.int8).astype(f32),
        lambda x: (x * 100).astype(jnp.int32).astype(f32),
        lambda x: (x * 100 + 100).astype(jnp.uint8).astype(f32),
        lambda x: x.astype(jnp.bool_).astype(f32),
        lambda x: (x > 0).astype(jnp.int32).astype(f32),
        lambda x: (x * 100).astype(jnp.int8).astype(jnp.int32).astype(f32),
        lambda x: (x * 1e5).astype(jnp.int32).astype(jnp.int8).astype(f32),
        lambda x: (x > 0).astype(jnp.bfloat16).astype(f32),
        lambda x: lax.reduce_precision(x, 8, 23),
    ]
    self.run_kernel(stacked(fns, [(8, 128)], f32), S((8, 128), f32))

  def test_float_to_int_saturates(self):
    # convert_element_type from f32, f16 and bf16 to every 8/16/32-bit
    # integer type on NaN, infinities, the limits +-1 and values far beyond:
    # XLA saturates (NaN gives 0), on the CPU runner and the GPU emulators
    # (pallas-legalize-math). 64-bit types need jax_enable_x64: the lit test
    # legalize-math-fptoint-run.test covers them against numpy.
    vals = [np.nan, np.inf, -np.inf, 0.0, -0.5, 0.5, -1.0, 1.5, -1.5]
    for top in (2.0 ** 7, 2.0 ** 15, 2.0 ** 31):
      vals += [top - 1, top - 0.5, top, top + 1, -top, -top - 1, 2 * top - 1,
               2 * top, 2 * top + 1]
    vals += [300, -300, 3e9, -3e9, 1e30, -1e30, 65504, -65504, 3.4e38]
    x = np.resize(np.array(vals, np.float32), (8, 128))
    ints = [jnp.int8, jnp.int16, jnp.int32, jnp.uint8, jnp.uint16, jnp.uint32]

    def kernel(x_ref, *o_refs):
      x = x_ref[...]
      for src, o_ref in zip((x, x.astype(jnp.float16), x.astype(jnp.bfloat16)),
                            (o_refs[0:6], o_refs[6:12], o_refs[12:18])):
        for dtype, ref in zip(ints, o_ref):
          ref[...] = src.astype(dtype)
    outs = [S((8, 128), d) for _ in range(3) for d in ints]
    fn = lambda x: pl.pallas_call(kernel, out_shape=outs)(x)
    (c,) = self.export(fn, S((8, 128), jnp.float32))
    want = self.check_call(
        c, inputs=[x], emulate=("cuda:sm_90a",) + (
            ("rocm:gfx942",) if have_rocm_libs() else ()))
    # The reference itself saturates (f32 -> i8 of 300 is 127, not 44).
    self.assertEqual(int(want[0][0, vals.index(300)]), 127)
    self.assertEqual(int(want[5][0, 4]), 0)  # u32 of -0.5

  def test_shapes_and_reductions(self):
    f32 = jnp.float32

    def kernel(x_ref, y_ref, o_ref, r_ref):
      x, y = x_ref[...], y_ref[...]                 # [8, 128], [8, 128]
      o_ref[0] = jnp.broadcast_to(x[:, :1], (8, 128)) + y
      o_ref[1] = x.reshape(16, 64).reshape(8, 128)
      o_ref[2] = jnp.concatenate([x[:, 64:], y[:, :64]], axis=1)
      o_ref[3] = jnp.transpose(x.reshape(8, 8, 16), (1, 0, 2)).reshape(8, 128)
      o_ref[4] = lax.broadcasted_iota(jnp.int32, (8, 128), 1).astype(f32) + (
          lax.broadcasted_iota(f32, (8, 128), 0))
      o_ref[5] = jnp.cumsum(x, axis=1)
      o_ref[6] = jnp.expand_dims(jnp.sum(x, axis=1), 1) * y
      o_ref[7] = lax.cumsum(y, axis=0, reverse=True)
      r_ref[0] = jnp.max(x, axis=0)
      r_ref[1] = jnp.min(x, axis=0)
      r_ref[2] = jnp.sum(x, axis=0) + jnp.sum(y)
      r_ref[3] = jnp.mean(x, axis=0) + jnp.max(y)
      r_ref[4] = jnp.any(x > 0.9, axis=0).astype(f32) + jnp.all(x > -0.9,
                                                                axis=0)
      r_ref[5] = jnp.squeeze(x[:1, :], 0)
    fn = lambda x, y: pl.pallas_call(kernel, out_shape=[
        S((8, 8, 128), f32), S((6, 128), f32)])(x, y)
    self.run_kernel(fn, S((8, 128), f32), S((8, 128), f32))

  @plain_build_only
  def test_cumulative_ops(self):
    # cumprod, cummax, cummin (forward and reverse, float, signed and
    # unsigned) and cumlogsumexp (with infinities and NaNs), unrolled along
    # the axis; reduce_prod over one and two axes.
    f32, i32, u32 = jnp.float32, jnp.int32, jnp.uint32

    def kernel(x_ref, i_ref, f_ref, n_ref):
      x, i = x_ref[...], i_ref[...]                  # [16, 128]
      f_ref[0] = lax.cumprod(1.0 + x * 0.1, axis=0)
      f_ref[1] = lax.cummax(x, axis=0)
      f_ref[2] = lax.cummin(x, axis=0, reverse=True)
      f_ref[3] = lax.cumprod(1.0 + x[:, :16] * 0.1, axis=1, reverse=True
                             ).repeat(8, axis=1)
      f_ref[4] = lax.cumlogsumexp(x * 30.0, axis=0)
      # -inf (exp 0), +inf and NaN entries.
      special = jnp.where(i < 2, -jnp.inf, jnp.where(i == 15, jnp.inf, x))
      f_ref[5] = lax.cumlogsumexp(special, axis=0, reverse=True)
      f_ref[6] = lax.cumlogsumexp(jnp.where(i == 7, jnp.nan, x), axis=0)
      f_ref[7] = jnp.broadcast_to(jnp.prod(1.0 + x * 0.1, axis=0), (16, 128))
      f_ref[8] = jnp.broadcast_to(
          jnp.prod(1.0 + x[:, :8] * 0.1, axis=1, keepdims=True), (16, 128))
      n_ref[3] = jnp.broadcast_to(jnp.prod(i[:4, :8] % 3 - 1, axis=(0, 1)),
                                  (16, 128))
      n_ref[0] = lax.cummax(i - 8, axis=0)
      n_ref[1] = lax.cummin(i.astype(u32) * 300000000, axis=0).astype(i32)
      n_ref[2] = lax.cumprod(i % 3 - 1, axis=0, reverse=True)
    fn = lambda x, i: pl.pallas_call(kernel, out_shape=[
        S((9, 16, 128), f32), S((4, 16, 128), i32)])(x, i)
    self.run_kernel(fn, S((16, 128), f32), S((16, 128), i32),
                    emulate=("cuda:sm_90a",))

  def test_argmax_argmin(self):
    # pallasc's GPU lowering has no index reductions yet: CPU run and TPU.
    def kernel(x_ref, i_ref):
      x = x_ref[...]
      i_ref[0] = jnp.argmax(x, axis=0).astype(jnp.int32)
      i_ref[1] = jnp.argmin(x, axis=1).astype(jnp.int32)
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((2, 128), jnp.int32))(x)
    self.run_kernel(fn, S((128, 128), jnp.float32), tgts=["tpu"])

  def test_dots(self):
    f32, bf16 = jnp.float32, jnp.bfloat16

    def kernel(a_ref, b_ref, c_ref, i_ref, o_ref, p_ref, q_ref):
      a, b, c = a_ref[...], b_ref[...], c_ref[...]   # [32,64] [64,32] [32,64]
      o_ref[0] = jnp.dot(a, b, preferred_element_type=f32)
      o_ref[1] = lax.dot_general(a, c, (((1,), (1,)), ((), ())),
                                 preferred_element_type=f32)
      o_ref[2] = lax.dot_general(b, c, (((0,), (1,)), ((), ())),
                                 preferred_element_type=f32)
      o_ref[3] = jnp.dot(a.astype(f32), b.astype(f32),
                         precision=lax.Precision.HIGHEST)
      o_ref[4] = pl.dot(a, c, trans_b=True).astype(f32) if hasattr(
          pl, "dot") else plgpu.dot(a, c, trans_b=True).astype(f32)
      o_ref[5] = (a @ b).astype(f32)
      i = i_ref[...]                                  # [32, 64] int8
      p_ref[...] = lax.dot_general(i, i, (((1,), (1,)), ((), ())),
                                   preferred_element_type=jnp.int32)
      q_ref[...] = jnp.einsum("bik,bkj->bij", a.reshape(2, 16, 64),
                              b.reshape(2, 64, 16),
                              preferred_element_type=f32)
    fn = lambda a, b, c, i: pl.pallas_call(kernel, out_shape=[
        S((6, 32, 32), f32), S((32, 32), jnp.int32), S((2, 16, 16), f32)])(
            a, b, c, i)
    self.run_kernel(fn, S((32, 64), bf16), S((64, 32), bf16),
                    S((32, 64), bf16), S((32, 64), jnp.int8),
                    tol=dict(rtol=2e-2, atol=5e-2), ints=(-8, 8))

  def test_control_flow(self):
    f32 = jnp.float32

    @jax.custom_vjp
    def twice(x):
      return 2 * x
    twice.defvjp(lambda x: (2 * x, None), lambda _, g: (2 * g,))

    @jax.checkpoint
    def ck(x):
      return jnp.sin(x) * 3

    def kernel(x_ref, n_ref, o_ref):
      x = x_ref[...]
      n = n_ref[0]
      # fori_loop with static bounds (scan), with traced bounds (while).
      o_ref[0] = lax.fori_loop(0, 4, lambda i, a: a + x * i, jnp.zeros_like(x))
      o_ref[1] = lax.fori_loop(1, n, lambda i, a: a * 0.5 + i, x)
      o_ref[2] = x
      # cond / switch with results; pl.when for effects.
      o_ref[3] = lax.cond(n > 3, lambda: x * 2, lambda: x - 1)
      o_ref[4] = lax.switch(n % 3, [lambda: x, lambda: -x, lambda: x * x])
      o_ref[5] = x

      @pl.when(n == 5)
      def _():
        o_ref[5] = x + 100.0
      o_ref[6] = jax.jit(lambda v: v * 3 + 1)(x)
      o_ref[7] = twice(x) + ck(x)

      @pl.loop(0, 3)
      def _(i):
        o_ref[8 + i] = x * jnp.asarray(i, f32)
    fn = lambda x, n: pl.pallas_call(kernel, out_shape=S((11, 8, 128), f32),
                                     in_specs=[pl.BlockSpec(), pl.BlockSpec(
                                         memory_space=pltpu.SMEM)])(x, n)
    c, = self.export(fn, S((8, 128), f32), S((1,), jnp.int32))
    for n in (5, 2):
      self.check_call(c, targets=gpu_targets() if n == 5 else (), inputs=[
          np.random.default_rng(n).uniform(-1, 1, (8, 128)).astype(np.float32),
          np.array([n], np.int32)])

  def test_while_loop(self):
    # A general lax.while_loop (scf.while): pallasc's GPU lowering does not
    # take scf.while with block carries yet, so this one runs on the CPU.
    f32 = jnp.float32

    def kernel(x_ref, n_ref, o_ref):
      x, n = x_ref[...], n_ref[0]
      o_ref[...] = lax.while_loop(lambda c: c[0] < n * 2,
                                  lambda c: (c[0] + 3, c[1] + x), (0, x))[1]
    fn = lambda x, n: pl.pallas_call(kernel, out_shape=S((8, 128), f32),
                                     in_specs=[pl.BlockSpec(), pl.BlockSpec(
                                         memory_space=pltpu.SMEM)])(x, n)
    (c,) = self.export(fn, S((8, 128), f32), S((1,), jnp.int32))
    self.assertIn("scf.while", c.kernel_mlir)
    self.check_call(c, inputs=[np.ones((8, 128), np.float32),
                               np.array([5], np.int32)])

  def test_scan_over_arrays(self):
    # lax.scan with xs and stacked outputs (unrolled), forward and reverse,
    # with a scalar-per-step xs too.
    f32 = jnp.float32

    def kernel(x_ref, w_ref, o_ref, c_ref):
      x, w = x_ref[...], w_ref[...]              # [8, 128], [8]

      def step(c, xw):
        row, k = xw
        c = c * 0.5 + row * k
        return c, c * 2
      last, ys = lax.scan(step, jnp.zeros((128,), f32), (x, w))
      o_ref[0] = ys
      o_ref[1] = lax.scan(lambda c, r: (c + r, c), jnp.zeros((128,), f32), x,
                          reverse=True)[1]
      c_ref[...] = jnp.broadcast_to(last, (8, 128))
    fn = lambda x, w: pl.pallas_call(kernel, out_shape=[
        S((2, 8, 128), f32), S((8, 128), f32)])(x, w)
    (c,) = self.export(fn, S((8, 128), f32), S((8,), f32))
    self.assertNotIn("scf.for", c.kernel_mlir)
    self.check_call(c, targets=gpu_targets(), emulate=("cuda:sm_90a",))

  def test_dynamic_slice_of_values(self):
    # lax.dynamic_slice / dynamic_update_slice of loaded values with traced
    # starts, clamped as JAX clamps them (start 7 of 8 rows reads rows 4-7).
    f32 = jnp.float32

    def kernel(s_ref, x_ref, o_ref, u_ref):
      x = x_ref[...]                               # [8, 128]
      i, j = s_ref[0], s_ref[1]
      o_ref[0] = lax.dynamic_slice(x, (i, j), (4, 64))
      o_ref[1] = lax.dynamic_slice(x, (i + 5, 0), (4, 64))
      u_ref[...] = lax.dynamic_update_slice(x, o_ref[0] * 2, (j // 32, i))
    fn = lambda s, x: pl.pallas_call(kernel, out_shape=[
        S((2, 4, 64), f32), S((8, 128), f32)], in_specs=[
            pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec()])(s, x)
    (c,) = self.export(fn, S((2,), jnp.int32), S((8, 128), f32))
    x = np.arange(8 * 128, dtype=np.float32).reshape(8, 128)
    for k, starts in enumerate(([1, 32], [3, 70], [-2, 200])):
      self.check_call(c, inputs=[np.array(starts, np.int32), x],
                      targets=gpu_targets() if k == 0 else (),
                      emulate=("cuda:sm_90a",))

  def test_ref_views(self):
    # Loads through reshape and same-width bitcast views, with indexers
    # before the view (.at[]) and after it (an integer, a traced start that
    # JAX clamps: 40 of 64 with size 32 reads from 32), against interpret
    # mode. (No negative
    # starts: out of bounds, where interpret mode's view path and its
    # dynamic_slice disagree.)
    f32 = jnp.float32

    def kernel(s_ref, x_ref, o_ref, b_ref):
      j = s_ref[0]
      o_ref[0] = x_ref.reshape(4, 16, 32)[2]
      o_ref[1] = x_ref.at[pl.ds(8, 32)].reshape(16, 64)[:, pl.ds(j, 32)]
      o_ref[2] = x_ref.reshape(2, 32, 32)[1, pl.ds(j // 2, 16), :]
      b_ref[...] = x_ref.bitcast(jnp.int32)[pl.ds(j, 8), :]
    fn = lambda s, x: pl.pallas_call(kernel, out_shape=[
        S((3, 16, 32), f32), S((8, 32), jnp.int32)], in_specs=[
            pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec()])(s, x)
    (c,) = self.export(fn, S((1,), jnp.int32), S((64, 32), f32))
    x = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    for k, j in enumerate((40, 3, 17)):
      self.check_call(c, inputs=[np.array([j], np.int32), x],
                      targets=gpu_targets() if k == 0 else (),
                      emulate=("cuda:sm_90a",) if k == 0 else ())

    # A transpose view: JAX's interpret mode cannot discharge it
    # (NotImplementedError), so numpy is the reference.
    def tkernel(x_ref, o_ref):
      o_ref[...] = x_ref.T[pl.ds(8, 16), :] * 2
    tfn = lambda x: pl.pallas_call(tkernel, out_shape=S((16, 64), f32))(x)
    (t,) = self.export(tfn, S((64, 32), f32), sub="transpose")
    self.check_call(t, inputs=[x], want=[x.T[8:24] * 2],
                    targets=gpu_targets(), emulate=("cuda:sm_80",))

    # Stores, += and a swap through views: the region before the view is
    # read, the value written into its view, and the region stored back.
    # JAX's interpret mode cannot discharge these either: numpy is the
    # reference.
    def skernel(s_ref, x_ref, x2_ref, y_ref, y3_ref, o1, o2, o3, o4, o5, o6):
      j = s_ref[0]
      o1.reshape(32, 64)[...] = x_ref[...]
      o2[...] = jnp.zeros((64, 32), f32)
      o2.at[pl.ds(8, 32)].reshape(16, 64)[:, pl.ds(j, 32)] = y_ref[...]
      o3[...] = jnp.zeros((64, 32), jnp.int32)
      o3.bitcast(f32)[pl.ds(j, 8), :] = y_ref[pl.ds(0, 8), :]
      o4[...] = jnp.ones((32, 64), f32)
      o4.T[pl.ds(8, 16), :] += y3_ref[...]
      o5[...] = x2_ref[...]
      old = o5.reshape(2, 32, 32).at[1].swap(y3_ref[...].reshape(32, 16)
                                             .repeat(2, axis=1))
      o6[...] = old * 2
    outs = [S((64, 32), f32), S((64, 32), f32), S((64, 32), jnp.int32),
            S((32, 64), f32), S((64, 32), f32), S((32, 32), f32)]
    sfn = lambda *a: pl.pallas_call(skernel, out_shape=outs, in_specs=[
        pl.BlockSpec(memory_space=pltpu.SMEM)] + [pl.BlockSpec()] * 4)(*a)
    (st,) = self.export(sfn, S((1,), jnp.int32), S((32, 64), f32),
                        S((64, 32), f32), S((16, 32), f32), S((16, 32), f32),
                        sub="store-views")
    # Writes through an indexer after a view store only what it selects (a
    # masked store): other programs may write the rest of the region.
    with open(st.paths[0]) as f:
      stores = [l for l in f if "pallas.store" in l]
    self.assertEqual(sum(" mask " in l for l in stores), 4, stores)
    rng = np.random.default_rng(1)
    x1, x2 = rng.standard_normal((32, 64)), rng.standard_normal((64, 32))
    y, y3 = rng.standard_normal((16, 32)), rng.standard_normal((16, 32))
    x1, x2, y, y3 = (a.astype(np.float32) for a in (x1, x2, y, y3))
    for k, j in enumerate((40, 5)):
      o2 = np.zeros((64, 32), np.float32)
      r = o2[8:40].reshape(16, 64)
      jj = min(max(j, 0), 32)
      r[:, jj:jj + 32] = y
      o2[8:40] = r.reshape(32, 32)
      o3 = np.zeros((64, 32), np.int32)
      j3 = min(max(j, 0), 56)
      o3[j3:j3 + 8] = y[:8].view(np.int32)
      o4 = np.ones((32, 64), np.float32)
      o4[:, 8:24] += y3.T
      o5 = x2.copy()
      old = o5.reshape(2, 32, 32)[1].copy()
      o5.reshape(2, 32, 32)[1] = y3.reshape(32, 16).repeat(2, axis=1)
      self.check_call(st, inputs=[np.array([j], np.int32), x1, x2, y, y3],
                      want=[x1.reshape(64, 32), o2, o3, o4, o5, old * 2],
                      targets=gpu_targets() if k == 0 else (),
                      emulate=("cuda:sm_90a",) if k == 0 else ())

    def mkernel(x_ref, o_ref):
      plgpu.store(o_ref.reshape(32, 64), x_ref[...],
                  mask=jnp.ones((32, 64), bool))
    with self.assertRaisesRegex(
        Exception, r"test_primitives.py:\d+.*a masked store \(pl.store\) "
        r"through a reshape ref view \(ReshapeTransform\) is not supported"):
      self.export(lambda x: pl.pallas_call(mkernel, out_shape=S((64, 32), f32))(
          x), S((32, 64), f32), sub="masked-store-view")

  def test_dot_general_forms(self):
    # dot_general beyond [batch] x M x K: several free, contracting or
    # batch dimensions, and batch dimensions that are not leading (merged
    # into one [B, M, K] x [B, K, N] dot and reshaped to JAX's layout).
    f32 = jnp.float32

    def kernel(a_ref, b_ref, c_ref, d_ref, e_ref, f_ref, g_ref,
               o1, o2, o3, o4, o5):
      a, b = a_ref[...], b_ref[...]
      o1[...] = lax.dot_general(a, b, (((2,), (0,)), ((), ())))
      o2[...] = lax.dot_general(c_ref[...], d_ref[...],
                                (((1, 2), (0, 1)), ((), ())))
      o3[...] = lax.dot_general(e_ref[...], f_ref[...],
                                (((2,), (0,)), ((1,), (1,))))
      g = g_ref[...]
      o4[...] = lax.dot_general(g, g, (((3,), (3,)), ((0, 1), (0, 1))))
      o5[...] = lax.dot_general(b.T, d_ref[...].reshape(4, 16, 32)[0]
                                .reshape(16, 4, 8), (((1,), (0,)), ((), ())))
    outs = [S((2, 8, 32), f32), S((8, 32), f32), S((4, 8, 32), f32),
            S((2, 4, 8, 8), f32), S((32, 4, 8), f32)]
    ins = [S((2, 8, 16), f32), S((16, 32), f32), S((8, 4, 16), f32),
           S((4, 16, 32), f32), S((8, 4, 16), f32), S((16, 4, 32), f32),
           S((2, 4, 8, 16), f32)]
    fn = lambda *xs: pl.pallas_call(kernel, out_shape=outs)(*xs)
    (c,) = self.export(fn, *ins)
    self.check_call(c, targets=gpu_targets(), emulate=("cuda:sm_90a",))

  @plain_build_only
  def test_sort_and_rev(self):
    # lax.sort (one and several operands, num_keys, along either axis),
    # argsort, rev (jnp.flip, descending sorts) and top_k against interpret
    # mode: NaNs last (first for top_k), -0 == 0 in sorts (so a stable sort
    # keeps their order; top_k puts 0 before -0), duplicates.
    f32 = jnp.float32

    def kernel(x_ref, k_ref, v_ref, u_ref, o1, o2, o3, o4, o5, o6, o7, o8,
               o9, o10, o11):
      x = x_ref[...]
      o1[...] = jnp.sort(x, axis=1)
      o2[...] = jnp.sort(x, axis=0)
      o3[...] = jnp.argsort(x, axis=1, stable=True).astype(jnp.int32)
      ks, vs = lax.sort((k_ref[...], v_ref[...]), dimension=1, num_keys=1,
                        is_stable=True)
      o4[...], o5[...] = ks, vs
      o6[...] = jnp.flip(x, axis=1)
      o7[...] = jnp.sort(u_ref[...], axis=1, descending=True)
      _, _, v2 = lax.sort((k_ref[...], x, v_ref[...]), dimension=1, num_keys=2,
                       is_stable=True)
      o8[...] = v2
      tv, ti = lax.top_k(x, 8)
      o9[...], o10[...] = tv, ti
      tv0, _ = lax.top_k(x.T, 4)
      o11[...] = tv0
    shapes = [S((8, 32), f32), S((8, 32), f32), S((8, 32), jnp.int32),
              S((8, 32), jnp.int32), S((8, 32), f32), S((8, 32), f32),
              S((8, 32), jnp.uint32), S((8, 32), f32), S((8, 8), f32),
              S((8, 8), jnp.int32), S((32, 4), f32)]
    fn = lambda *a: pl.pallas_call(kernel, out_shape=shapes)(*a)
    (c,) = self.export(fn, S((8, 32), f32), S((8, 32), jnp.int32),
                       S((8, 32), f32), S((8, 32), jnp.uint32))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 32)).astype(np.float32)
    x[0, :8] = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1.0]
    x[1, ::2] = 2.5
    k = rng.integers(-3, 3, (8, 32)).astype(np.int32)
    v = rng.standard_normal((8, 32)).astype(np.float32)
    u = rng.integers(0, 2**32, (8, 32), dtype=np.uint64).astype(np.uint32)
    self.check_call(c, inputs=[x, k, v, u], targets=gpu_targets(),
                    emulate=("cuda:sm_90a",))
    with self.assertRaisesRegex(
        Exception, r"test_primitives.py:\d+.*'sort' along an axis of 512 "
        r"elements: pallasc sorts by ranks"):
      self.export(lambda y: pl.pallas_call(
          lambda y_ref, o_ref: o_ref.__setitem__(
              Ellipsis, jnp.sort(y_ref[...])),
          out_shape=S((8, 512), f32))(y), S((8, 512), f32), sub="sort-big")

  def test_scatter_store(self):
    # Stores through index arrays that are no iota pattern: duplicates (the
    # last update wins, as XLA applies them in order), negative indices
    # (wrapped), an index out of bounds (the update dropped, the swap's old
    # value read clamped), a 2-D scatter; against interpret mode.
    f32 = jnp.float32

    def kernel(i_ref, j_ref, x_ref, y_ref, o_ref, p_ref, q_ref, r_ref):
      o_ref[...] = jnp.zeros((16,), f32)
      o_ref[i_ref[...]] = x_ref[...]
      p_ref[...] = jnp.full((8, 16), -1.0, f32)
      p_ref[j_ref[...], i_ref[...]] = y_ref[...]
      q_ref[...] = jnp.arange(16, dtype=jnp.int32)
      r_ref[...] = q_ref.at[i_ref[...]].swap(j_ref[...])
    outs = [S((16,), f32), S((8, 16), f32), S((16,), jnp.int32),
            S((8,), jnp.int32)]
    fn = lambda *a: pl.pallas_call(kernel, out_shape=outs)(*a)
    (c,) = self.export(fn, S((8,), jnp.int32), S((8,), jnp.int32),
                       S((8,), f32), S((8,), f32))
    i = np.array([3, -1, 7, 3, 0, 20, -16, 9], np.int32)  # 20: dropped
    j = np.array([1, 0, 7, 1, 2, 5, 5, 3], np.int32)
    rng = np.random.default_rng(4)
    x = rng.standard_normal(8).astype(np.float32)
    y = rng.standard_normal(8).astype(np.float32)
    want = self.check_call(c, inputs=[i, j, x, y], targets=gpu_targets(),
                           emulate=("cuda:sm_90a",))
    self.assertEqual(float(want[0][3]), float(x[3]))  # the last of two

  def test_gather_with_slices(self):
    # A load that mixes slices with one index vector (paged attention's
    # k_pages_ref[block_tables]): unrolled, one load per index; negative
    # indices wrap, out-of-bounds ones clamp, as interpret mode's gather.
    f32 = jnp.float32

    def kernel(t_ref, p_ref, q_ref, o_ref, r_ref):
      pages = t_ref[pl.ds(1, 4)]
      o_ref[...] = p_ref[pages].reshape(32, 16)
      r_ref[...] = q_ref[:, t_ref[pl.ds(0, 8)], pl.ds(0, 8)]
    outs = [S((32, 16), f32), S((4, 8, 8), f32)]
    fn = lambda *a: pl.pallas_call(kernel, out_shape=outs, in_specs=[
        pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec(),
        pl.BlockSpec()])(*a)
    (c,) = self.export(fn, S((8,), jnp.int32), S((10, 8, 16), f32),
                       S((4, 10, 16), f32))
    t = np.array([2, 7, 0, -1, 12, 3, 3, 9], np.int32)
    rng = np.random.default_rng(5)
    pg = rng.standard_normal((10, 8, 16)).astype(np.float32)
    q = rng.standard_normal((4, 10, 16)).astype(np.float32)
    self.check_call(c, inputs=[t, pg, q], targets=gpu_targets(),
                    emulate=("cuda:sm_90a",))

  def test_ref_indexing(self):
    f32 = jnp.float32

    def kernel(x_ref, o_ref, s_ref):
      i = pl.program_id(0)
      nprog = pl.num_programs(0)
      start = pl.multiple_of(i * 8, 8)
      # .at[] views and pl.ds with static and dynamic starts.
      o_ref[0] = x_ref.at[pl.ds(start, 8)][...]
      o_ref[1] = x_ref[pl.ds(8, 8), :] * jnp.asarray(nprog, f32)
      # Integer indices, slices, strides.
      o_ref[2, 0] = x_ref[3]
      o_ref[2, 4:8] = x_ref[0:4, ::1]
      o_ref[3, :, 0:64] = x_ref[pl.ds(0, 8, stride=2), pl.ds(0, 64, stride=2)]
      o_ref[3, :, 64:] = x_ref.at[1:9].at[:, 64:][...]
      # pl.ds past the end of the block, masked (a broadcasting mask).
      rows = jnp.arange(16)[:, None] + start
      m = rows < 20
      v = plgpu.load(x_ref.at[pl.ds(start, 16), :], mask=m, other=-1.0)
      o_ref[4] = v[:8] + v[8:]
      # Gather with an index vector that is start + iota.
      cols = jnp.arange(128)
      o_ref[5] = plgpu.load(x_ref.at[jnp.arange(8)[:, None] + 4,
                                     cols[None, :]])
      o_ref[6] = x_ref[jnp.arange(8)[:, None] * 2, jnp.arange(128)[None, :]]
      # swap returns the old value; += is addupdate.
      o_ref[7] = jnp.zeros((8, 128), f32)
      old = o_ref.at[7].swap(x_ref[pl.ds(0, 8)])
      o_ref[7] += old + 1.0
      plgpu.store(o_ref.at[pl.ds(8, 1)], x_ref[pl.ds(0, 8)][None] * 3,
                  mask=jnp.arange(128)[None, None, :] < 100)
      s_ref[...] = jnp.zeros_like(s_ref)
      plgpu.atomic_add(s_ref, (pl.ds(0, 8),), x_ref[pl.ds(0, 8), 0])
      plgpu.atomic_max(s_ref, (pl.ds(8, 8),), x_ref[pl.ds(8, 8), 0])
    fn = lambda x: pl.pallas_call(
        kernel, grid=(3,),
        in_specs=[pl.BlockSpec((24, 128), lambda i: (0, 0))],
        out_specs=[pl.BlockSpec((None, 9, 8, 128), lambda i: (i, 0, 0, 0)),
                   pl.BlockSpec((None, 16), lambda i: (i, 0))],
        out_shape=[S((3, 9, 8, 128), f32), S((3, 16), f32)])(x)
    self.run_kernel(fn, S((24, 128), f32), emulate=("cuda:sm_90a",))

  def test_eviction_policy(self):
    # plgpu.load's cache hints (layer_norm / rms_norm's): written on the
    # pallas.load, carried into sm_80's PTX; the numbers are unchanged.
    f32 = jnp.float32

    def kernel(x_ref, y_ref, o_ref):
      m = jnp.arange(256) < 200
      x = plgpu.load(x_ref.at[pl.ds(0, 256)], mask=m, other=0.0,
                     eviction_policy="evict_last")
      y = plgpu.load(y_ref, eviction_policy="evict_first")
      plgpu.store(o_ref.at[pl.ds(0, 256)], x * 2.0 + y[:256], mask=m)
    fn = lambda x, y: pl.pallas_call(
        kernel, out_shape=S((200,), f32))(x, y)
    (c,) = self.run_kernel(fn, S((200,), f32), S((512,), f32),
                           tgts=["cuda:sm_80"])
    with open(c.paths[0]) as f:
      text = f.read()
    self.assertIn('{eviction_policy = "evict_last"}', text)
    self.assertIn('{eviction_policy = "evict_first"}', text)
    out = os.path.join(os.path.dirname(c.paths[0]), "out-" + c.name)
    with open(os.path.join(out, c.name + ".sm_80.ptx")) as f:
      ptx = f.read()
    self.assertIn("ld.global.L1::evict_last.v4.b32", ptx)
    self.assertIn("ld.global.L1::evict_first.v4.b32", ptx)

  def test_grid_mapping(self):
    f32 = jnp.float32

    def kernel(idx_ref, x_ref, h_ref, o_ref, acc_ref):
      i = pl.program_id(0)
      acc_ref[...] = x_ref[...] + idx_ref[i].astype(f32)
      o_ref[...] = acc_ref[...] + h_ref[0, 0]
    gs = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1, grid=(4,),
        in_specs=[pl.BlockSpec((None, pl.Element(16, (0, 8)), 128),
                               lambda i, idx: (idx[i], i * 8, 0)),
                  pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=[pl.BlockSpec((None, 16, 128), lambda i, idx: (i, 0, 0))],
        scratch_shapes=[pltpu.VMEM((16, 128), f32)])
    fn = lambda idx, x, h: pl.pallas_call(
        kernel, grid_spec=gs, name="gm_call",
        cost_estimate=pl.CostEstimate(flops=10, transcendentals=0,
                                      bytes_accessed=100),
        metadata={"owner": "jax-bridge"},
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("arbitrary",), vmem_limit_bytes=1 << 25),
        out_shape=[S((4, 16, 128), f32)])(idx, x, h)
    (c,) = self.export(fn, S((4,), jnp.int32), S((3, 40, 128), f32),
                       S((2, 128), f32))
    s = c.spec
    self.assertEqual(s["name"], "gm_call")
    self.assertEqual(s["num_scalar_prefetch"], 1)
    self.assertEqual(s["in_specs"][0]["block_shape"],
                     [None, {"element": 16, "padding": [0, 8]}, 128])
    self.assertTrue(s["in_specs"][0]["index_map"].startswith("@"))
    self.assertEqual(s["in_specs"][1], {"memory_space": "any"})
    self.assertEqual(s["scratch_shapes"], [{"shape": [16, 128], "dtype": "f32",
                                            "memory_space": "vmem"}])
    self.assertEqual(s["cost_estimate"], {"flops": 10, "bytes_accessed": 100,
                                          "transcendentals": 0})
    self.assertEqual(s["metadata"], {"owner": "jax-bridge"})
    self.assertEqual(s["compiler_params"], {"tpu": {
        "dimension_semantics": ["arbitrary"], "vmem_limit_bytes": 1 << 25}})
    rng = np.random.default_rng(0)
    self.check_call(c, targets=gpu_targets(), inputs=[
        np.array([2, 0, 1, 2], np.int32),
        rng.uniform(-1, 1, (3, 40, 128)).astype(np.float32),
        rng.uniform(-1, 1, (2, 128)).astype(np.float32)])

  def test_aliases(self):
    f32 = jnp.float32

    def kernel(x_ref, a_ref, o_ref, a_out):
      o_ref[...] = x_ref[...] + 1
      a_out[...] = a_ref[...] * 2 + x_ref[...]
    spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
    fn = lambda x, a: pl.pallas_call(
        kernel, grid=(4,), in_specs=[spec, spec], out_specs=[spec, spec],
        input_output_aliases={1: 1},
        out_shape=[S((32, 128), f32), S((32, 128), f32)])(x, a)
    (c,) = self.export(fn, S((32, 128), f32), S((32, 128), f32))
    self.assertEqual(c.spec["input_output_aliases"], {"1": 1})
    self.assertEqual(c.spec["in_specs"][0]["index_map"], "(d0) -> (d0, 0)")
    self.check_call(c, targets=gpu_targets())

  def test_dynamic_grid(self):
    f32 = jnp.float32

    def kernel(x_ref, o_ref):
      o_ref[...] = x_ref[...] + jnp.asarray(pl.num_programs(0), f32)

    def fn(n, x):
      return pl.pallas_call(kernel, grid=(n,),
                            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
                            out_shape=S((32, 128), f32))(x)
    calls = self.export(lambda x: jax.jit(fn, static_argnums=())(
        jnp.int32(4), x) if False else fn(4, x), S((32, 128), f32))
    self.assertEqual(calls[0].spec["grid"], [4])
    self.check_call(calls[0], targets=gpu_targets())

  def test_dma(self):
    # pltpu.make_async_copy start/wait (TPU and the CPU runner; the GPU
    # targets have no DMAs), with a sliced `any` source and an integer
    # indexed semaphore.
    f32 = jnp.float32

    def kernel(x_hbm, o_ref, buf, sem):
      i = pl.program_id(0)
      copy = pltpu.make_async_copy(x_hbm.at[pl.ds(i * 8, 8)], buf, sem.at[1])
      copy.start()
      copy.wait()
      o_ref[...] = buf[...] * 2
    fn = lambda x: pl.pallas_call(
        kernel, grid=(4,), in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
        scratch_shapes=[pltpu.VMEM((8, 128), f32),
                        pltpu.SemaphoreType.DMA((2,))],
        out_shape=S((32, 128), f32))(x)
    (c,) = self.run_kernel(fn, S((32, 128), f32), tgts=["tpu"])
    self.assertIn("pallas.dma_start", c.kernel_mlir)
    self.assertEqual(c.spec["scratch_shapes"][1], {
        "shape": [2], "dtype": "i32", "memory_space": "semaphore"})

  def test_run_scoped(self):
    # pl.run_scoped allocations (a VMEM buffer, a DMA semaphore, nested in a
    # loop) become scratch operands after the call's own.
    f32 = jnp.float32

    def kernel(x_hbm, o_ref, acc):
      i = pl.program_id(0)
      acc[...] = jnp.zeros_like(acc)

      def body(k, c):
        def scoped(buf, sem):
          copy = pltpu.make_async_copy(x_hbm.at[pl.ds(i * 8, 8)], buf, sem)
          copy.start()
          copy.wait()
          acc[...] += buf[...] * (k + 1).astype(f32)
        pl.run_scoped(scoped, pltpu.VMEM((8, 128), f32),
                      pltpu.SemaphoreType.DMA(()))
        return c
      lax.fori_loop(0, 3, body, 0)
      o_ref[...] = pl.run_scoped(lambda t: _twice(acc, t),
                                 pltpu.VMEM((8, 128), f32))

    def _twice(acc, t):
      t[...] = acc[...] * 2
      return t[...]
    fn = lambda x: pl.pallas_call(
        kernel, grid=(4,), in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
        scratch_shapes=[pltpu.VMEM((8, 128), f32)],
        out_shape=S((32, 128), f32))(x)
    (c,) = self.run_kernel(fn, S((32, 128), f32), tgts=["tpu"])
    self.assertEqual(c.spec["scratch_shapes"], [
        {"shape": [8, 128], "dtype": "f32", "memory_space": "vmem"},
        {"shape": [8, 128], "dtype": "f32", "memory_space": "vmem"},
        {"shape": [], "dtype": "i32", "memory_space": "semaphore"},
        {"shape": [8, 128], "dtype": "f32", "memory_space": "vmem"}])

    def gpu_kernel(x_ref, o_ref):
      o_ref[...] = pl.run_scoped(lambda t: _twice(x_ref, t),
                                 pltpu.VMEM((8, 128), f32))
    fn = lambda x: pl.pallas_call(gpu_kernel, out_shape=S((8, 128), f32))(x)
    self.run_kernel(fn, S((8, 128), f32), emulate=("cuda:sm_90a",))

  def test_gather(self):
    # Index vectors that are not iota patterns: pallas.gather (an embedding
    # lookup, a masked gather with negative indices, which JAX wraps).
    f32 = jnp.float32

    def kernel(i_ref, t_ref, o_ref, p_ref):
      idx = i_ref[...]                                      # [16] int32
      rows = jnp.broadcast_to(idx[:, None], (16, 32))
      cols = jnp.broadcast_to(jnp.arange(32)[None, :], (16, 32))
      o_ref[...] = t_ref[rows, cols]
      m = idx < 20
      p_ref[...] = plgpu.load(t_ref.at[idx - 24, idx % 32], mask=m,
                              other=-1.0)
    fn = lambda i, t: pl.pallas_call(kernel, out_shape=[
        S((16, 32), f32), S((16,), f32)])(i, t)
    (c,) = self.export(fn, S((16,), jnp.int32), S((24, 32), f32))
    self.assertIn("pallas.gather", c.kernel_mlir)
    rng = np.random.default_rng(1)
    self.check_call(c, inputs=[rng.integers(0, 24, 16).astype(np.int32),
                               rng.uniform(-1, 1, (24, 32)).astype(
                                   np.float32)])

  def test_platform_dependent(self):
    # lax.platform_dependent in a kernel: pallas.platform_index, resolved
    # per target. The CPU takes the `cpu` branch (as interpret mode does),
    # cuda and rocm theirs; TPU the default (JAX's Mosaic lowering matches
    # `mosaic`, not `tpu`).
    f32 = jnp.float32

    def kernel(x_ref, o_ref):
      o_ref[...] = lax.platform_dependent(
          x_ref[...], cpu=lambda v: v + 5.0, cuda=lambda v: v * 2.0,
          rocm=lambda v: v * 3.0, tpu=lambda v: v - 7.0,
          default=lambda v: v + 1.0)
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((8, 128), f32))(x)
    (c,) = self.export(fn, S((8, 128), f32))
    self.assertIn('pallas.platform_index [["cpu"], ["cuda"], ["rocm"], '
                  '["tpu"]] default : i32', c.kernel_mlir)
    x = np.random.default_rng(3).uniform(-1, 1, (8, 128)).astype(np.float32)
    tgts = gpu_targets() + ["tpu"]
    want = self.check_call(c, targets=tgts, inputs=[x])
    np.testing.assert_array_equal(want[0], x + np.float32(5))
    # On the GPU emulator each vendor takes its own branch.
    mlir, spec = c.paths
    d = os.path.dirname(mlir)
    xin = os.path.join(d, "pd.in.npy")
    np.save(xin, x)
    for t, want in (("cuda:sm_90a", x * np.float32(2)),
                    ("rocm:gfx942", x * np.float32(3))):
      if t not in tgts:
        continue
      out = os.path.join(d, "pd.out.npy")
      self.pallasc("run", mlir, "--spec", spec, "--input", xin, "--output",
                   out, "--target", t, "--emulate")
      np.testing.assert_array_equal(np.load(out), want, err_msg=t)

  def test_debug_print(self):
    f32 = jnp.float32

    def kernel(x_ref, o_ref):
      pl.debug_print("step {}", pl.program_id(0))
      o_ref[...] = x_ref[...]
    fn = lambda x: pl.pallas_call(kernel, grid=(2,),
                                  out_shape=S((8, 128), f32))(x)
    (c,) = self.export(fn, S((8, 128), f32))
    self.assertIn('pallas.debug_print "step {}"', c.kernel_mlir)
    self.check_call(c, targets=["cuda:sm_80"])

  def test_debug_print_of_a_ref(self):
    # jax.debug.print of a ref prints its contents: the exporter loads the
    # whole ref where the print is (pallas.debug_print takes values).
    f32 = jnp.float32

    def kernel(x_ref, o_ref):
      jax.debug.print("x = {}", x_ref)
      o_ref[...] = x_ref[...] * 2
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((2, 4), f32))(x)
    (c,) = self.export(fn, S((2, 4), f32))
    self.assertRegex(c.kernel_mlir,
                     r"(%\d+) = pallas.load %x_ref\[\] : "
                     r"!pallas.ref<2x4xf32> -> tensor<2x4xf32>.*\n"
                     r"\s*pallas.debug_print \"x = \{\}\" \1 : "
                     r"tensor<2x4xf32>")
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    self.check_call(c, inputs=[x])


if __name__ == "__main__":
  unittest.main()
