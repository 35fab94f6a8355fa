"""fp8 arrays (float8_e4m3fn, float8_e5m2 and their fnuz forms): exported,
run with `pallasc run` on the CPU, byte for byte against JAX's interpret mode
(XLA's conversions, which ml_dtypes shares), and on the GPU emulators
against the CPU run."""

import os
import unittest

import numpy as np

from harness import PallascCase, have_rocm_libs, skip_without_jax

try:
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl
  S = jax.ShapeDtypeStruct
  FP8 = [jnp.float8_e4m3fn, jnp.float8_e5m2, jnp.float8_e4m3fnuz,
         jnp.float8_e5m2fnuz]
except Exception:  # pragma: no cover
  FP8 = []


def special_f32():
  """NaN, infinities, zeros, every format's largest value and the rounding
  midpoints around it, subnormals and their midpoints, and random values
  over the whole fp8 range."""
  vals = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0]
  for t in FP8:
    info = jnp.finfo(t)
    big, tiny = float(info.max), float(info.smallest_subnormal)
    vals += [big, -big, big * 1.03, big * 1.0625, big * 1.07, big * 2,
             -big * 1.0625, tiny, tiny / 2, tiny * 0.51, tiny * 1.5,
             tiny * 2.5, -tiny * 2.5, float(info.smallest_normal) * 0.99]
  rng = np.random.default_rng(0)
  vals += list(rng.standard_normal(400) * 300)
  vals += list(rng.standard_normal(400) * 1e-3)
  x = np.resize(np.array(vals, np.float32), (8, 128))
  # Ties: the f32 midpoints between consecutive e4m3fn and e5m2 values.
  for i, t in enumerate(FP8[:2]):
    codes = np.arange(0, 0x7f, dtype=np.uint8).view(t).astype(np.float32)
    codes = codes[np.isfinite(codes)]
    mids = (codes[:-1] + codes[1:]) / 2
    x[6 + i, :mids.size] = mids[:128]
  return x


@skip_without_jax
class Fp8(PallascCase):

  def check_bytes(self, c, inputs):
    """Runs the call on the CPU; each output equals interpret mode's bytes
    (NaNs may differ only in their payload)."""
    emulate = ("cuda:sm_90a",) + (("rocm:gfx942",) if have_rocm_libs() else ())
    want = self.check_call(c, inputs=inputs, tol=dict(rtol=0, atol=0),
                           emulate=emulate)
    d = os.path.dirname(c.paths[0])
    for i, (w, a) in enumerate(zip(want, c.out_avals)):
      from harness import load_npy
      got = load_npy(os.path.join(d, f"{c.name}.out{i}.npy"), a.dtype)
      g, w = np.asarray(got), np.asarray(w)
      nan = np.isnan(w.astype(np.float32))
      self.assertTrue(np.array_equal(np.isnan(g.astype(np.float32)), nan),
                      f"output {i}: NaNs differ")
      gb, wb = g.view(f"u{g.itemsize}"), w.view(f"u{w.itemsize}")
      bad = np.flatnonzero((gb != wb) & ~nan)
      self.assertEqual(bad.size, 0, f"output {i} ({a.dtype}): first "
                       f"differing element {bad[:1]}: {g.flat[bad[:1]]} "
                       f"vs {w.flat[bad[:1]]}")
    return want

  def test_from_f32_and_f16(self):
    # f32 -> each fp8 type, and f16 -> each (widened to f32 exactly first).
    x = special_f32()

    def kernel(x_ref, *o_refs):
      x = x_ref[...]
      for t, o in zip(FP8, o_refs[:4]):
        o[...] = x.astype(t)
      for t, o in zip(FP8, o_refs[4:]):
        o[...] = x.astype(jnp.float16).astype(t)
    outs = [S((8, 128), t) for t in FP8] * 2
    fn = lambda x: pl.pallas_call(kernel, out_shape=outs)(x)
    (c,) = self.export(fn, S((8, 128), jnp.float32))
    want = self.check_bytes(c, [x])
    # The reference rounds as XLA does: e4m3fn has no infinity.
    self.assertTrue(np.isnan(want[0][0, 2].astype(np.float32)))
    self.assertEqual(float(want[1][0, 2].astype(np.float32)), np.inf)

  def test_to_f32_every_code(self):
    # Every byte of each fp8 type, to f32, to bf16 and back to each type.
    codes = np.arange(256, dtype=np.uint8).reshape(2, 128)

    def kernel(*refs):
      ins, outs = refs[:4], refs[4:]
      for k, (i, t) in enumerate(zip(ins, FP8)):
        v = i[...]
        outs[3 * k][...] = v.astype(jnp.float32)
        outs[3 * k + 1][...] = v.astype(jnp.bfloat16)
        outs[3 * k + 2][...] = v.astype(FP8[(k + 1) % 4])
    outs = []
    for k in range(4):
      outs += [S((2, 128), jnp.float32), S((2, 128), jnp.bfloat16),
               S((2, 128), FP8[(k + 1) % 4])]
    fn = lambda *xs: pl.pallas_call(kernel, out_shape=outs)(*xs)
    (c,) = self.export(fn, *[S((2, 128), t) for t in FP8])
    self.check_bytes(c, [codes.view(t) for t in FP8])

  def test_arithmetic_dot_and_integers(self):
    # fp8 arithmetic rounds after each op; a dot of fp8 operands
    # accumulates in f32; fp8 <-> integer conversions saturate as XLA's.
    t8 = jnp.float8_e4m3fn

    def kernel(a_ref, b_ref, o_ref, d_ref, i_ref, f_ref):
      a, b = a_ref[...], b_ref[...]
      o_ref[...] = a * b + a
      d_ref[...] = jnp.dot(a, b, preferred_element_type=jnp.float32)
      i_ref[...] = (a * 100).astype(jnp.int8)
      f_ref[...] = (jnp.arange(32 * 32, dtype=jnp.int32).reshape(32, 32)
                    - 500).astype(jnp.float8_e5m2)
    outs = [S((32, 32), t8), S((32, 32), jnp.float32), S((32, 32), jnp.int8),
            S((32, 32), jnp.float8_e5m2)]
    fn = lambda a, b: pl.pallas_call(kernel, out_shape=outs)(a, b)
    (c,) = self.export(fn, S((32, 32), t8), S((32, 32), t8))
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((32, 32)) * 4).astype(t8)
    b = (rng.standard_normal((32, 32)) * 4).astype(t8)
    self.check_bytes(c, [a, b])


if __name__ == "__main__":
  unittest.main()
