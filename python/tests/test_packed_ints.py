"""Sub-byte integers (jnp.int4, uint4, int2, uint2): exported with their
dtypes (spec i4/u4/i2/u2, kernel i4/i2), counted packed in the manifest,
compiled for the TPU to the kernel signature JAX's own Mosaic lowering
writes, compiled and run on the CPU with packed storage against JAX's
interpret mode (every element equal), and refused by dtype and target on
the GPU targets, which have no lowering of packed storage yet
(docs/gridspec.md#arrays)."""

import json
import os
import subprocess
import sys
import unittest

import numpy as np

from harness import ROOT, PallascCase, line_of, skip_without_jax

try:
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl
  S = jax.ShapeDtypeStruct
except Exception:  # pragma: no cover
  pass


def packed_kernel(x_ref, u_ref, q_ref, f_ref, s_ref, w_ref):
  x = x_ref[...]
  f_ref[...] = x.astype(jnp.float32) + u_ref[...].astype(jnp.float32)
  s_ref[...] = x + x  # wraps around in int4
  w_ref[...] = q_ref[...].astype(jnp.int8)


def packed(x, u, q):
  spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
  return pl.pallas_call(
      packed_kernel, grid=(2,), in_specs=[spec] * 3, out_specs=[spec] * 3,
      out_shape=(S((16, 128), jnp.float32), S((16, 128), jnp.int4),
                 S((16, 128), jnp.int8)))(x, u, q)


def packed_args():
  return [S((16, 128), jnp.int4), S((16, 128), jnp.uint4),
          S((16, 128), jnp.int2)]


def dequant_kernel(w_ref, s_ref, o_ref):
  # int4 weights times a per-column f32 scale (a dequantization).
  o_ref[...] = w_ref[...].astype(jnp.float32) * s_ref[...]


def dequant(w, s):
  return pl.pallas_call(
      dequant_kernel, grid=(2, 2),
      in_specs=[pl.BlockSpec((8, 64), lambda i, j: (i, j)),
                pl.BlockSpec((1, 64), lambda i, j: (0, j))],
      out_specs=pl.BlockSpec((8, 64), lambda i, j: (i, j)),
      out_shape=S((16, 128), jnp.float32))(w, s)


def wrap_kernel(u4_ref, i2_ref, u2_ref, a_ref, b_ref, c_ref, d_ref):
  # Arithmetic that wraps around at 4 and 2 bits, as XLA's does.
  u = u4_ref[...]
  a_ref[...] = u * u + u
  i = i2_ref[...]
  b_ref[...] = i * i - i
  v = u2_ref[...]
  c_ref[...] = v * v + v + v
  # Zero and sign extension of the packed values.
  d_ref[...] = (u.astype(jnp.int32) + i.astype(jnp.int32) * 100 +
                v.astype(jnp.int32) * 10000)


def wrap(u4, i2, u2):
  spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
  return pl.pallas_call(
      wrap_kernel, grid=(2,), in_specs=[spec] * 3, out_specs=[spec] * 4,
      out_shape=(S((16, 128), jnp.uint4), S((16, 128), jnp.int2),
                 S((16, 128), jnp.uint2), S((16, 128), jnp.int32)))(u4, i2, u2)


def odd_kernel(x_ref, o_ref, n_ref):
  x = x_ref[...]
  o_ref[...] = x - jnp.int4(3)
  n_ref[...] = x.astype(jnp.int8)


def odd(x):
  # Blocks of 5 columns of rows of 10 (and of 1 row of 127): their elements
  # start mid-byte in the packed array.
  return pl.pallas_call(
      odd_kernel, grid=(3, 2),
      in_specs=[pl.BlockSpec((1, 5), lambda i, j: (i, j))],
      out_specs=[pl.BlockSpec((1, 5), lambda i, j: (i, j))] * 2,
      out_shape=(S((3, 10), jnp.int4), S((3, 10), jnp.int8)))(x)


def odd_rows(x):
  spec = pl.BlockSpec((1, 127), lambda i: (i, 0))
  return pl.pallas_call(
      odd_kernel, grid=(5,), in_specs=[spec], out_specs=[spec] * 2,
      out_shape=(S((5, 127), jnp.int4), S((5, 127), jnp.int8)))(x)


def scratch_kernel(x_ref, o_ref, t_ref):
  # int4 scratch, written then read back; two rows of it (a view of whole
  # rows at a dynamic row, 64 bytes each) doubled in place.
  t_ref[...] = x_ref[...] + jnp.int4(1)
  r = pl.program_id(0) * 2
  rows = t_ref[pl.ds(r, 2), :]
  t_ref[pl.ds(r, 2), :] = rows + rows
  o_ref[...] = t_ref[...].astype(jnp.int8)


def widen_kernel(x_ref, o_ref):
  o_ref[...] = (x_ref[...] * jnp.int4(2)).astype(jnp.int8)


def widen(x):
  return pl.pallas_call(widen_kernel, out_shape=S((8, 128), jnp.int8))(x)


def scratch(x):
  from jax.experimental.pallas import tpu as pltpu
  spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
  return pl.pallas_call(
      scratch_kernel, grid=(2,), in_specs=[spec], out_specs=spec,
      out_shape=S((16, 128), jnp.int8),
      scratch_shapes=[pltpu.VMEM((8, 128), jnp.int4)])(x)


def column_kernel(x_ref, o_ref):
  j = pl.program_id(0)
  o_ref[...] = x_ref[:, pl.ds(j, 4)].astype(jnp.int8)


def column(x):
  return pl.pallas_call(
      column_kernel, grid=(2,),
      in_specs=[pl.BlockSpec((8, 128), lambda i: (0, 0))],
      out_specs=pl.BlockSpec((8, 4), lambda i: (0, i)),
      out_shape=S((8, 8), jnp.int8))(x)


def aliased_kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...] * jnp.int4(3) + jnp.int4(1)


def aliased(x):
  spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
  return pl.pallas_call(
      aliased_kernel, grid=(2,), in_specs=[spec], out_specs=spec,
      out_shape=S((16, 128), jnp.int4), input_output_aliases={0: 0})(x)


def ints(shape, dtype, seed):
  """Every value of a sub-byte dtype, at random."""
  info = jnp.iinfo(dtype)
  rng = np.random.default_rng(seed)
  return rng.integers(int(info.min), int(info.max) + 1, shape).astype(dtype)


@skip_without_jax
class PackedInts(PallascCase):

  def test_export(self):
    (c,) = self.export(packed, *packed_args())
    with open(c.paths[1]) as fh:
      spec = json.load(fh)
    self.assertEqual([a["dtype"] for a in spec["inputs"]], ["i4", "u4", "i2"])
    self.assertEqual([a["dtype"] for a in spec["outputs"]],
                     ["f32", "i4", "i8"])
    with open(c.paths[0]) as fh:
      text = fh.read()
    # Signless i4/i2; the sign comes from the ops, as for the other ints.
    self.assertIn("%x_ref: !pallas.ref<8x128xi4>", text)
    self.assertIn("%q_ref: !pallas.ref<8x128xi2>", text)
    self.assertIn("arith.sitofp %1 : tensor<8x128xi4> to tensor<8x128xf32>",
                  text)
    self.assertIn(": tensor<8x128xi4> to tensor<8x128xf32>", text)
    self.assertIn("arith.uitofp", text)
    self.assertIn("arith.addi %1, %1 : tensor<8x128xi4>", text)
    self.assertIn("arith.extsi %7 : tensor<8x128xi2> to tensor<8x128xi8>",
                  text)
    # The manifest counts the packed bytes: 16 x 128 int4 is 1024 bytes,
    # int2 512.
    out = os.path.join(self.dir, "m")
    self.pallasc(c.paths[0], "--spec", c.paths[1], "-o", out)
    with open(os.path.join(out, c.name + ".manifest.json")) as fh:
      ops = json.load(fh)["operands"]
    self.assertEqual([(o["dtype"], o["bytes"]) for o in ops],
                     [("i4", 1024), ("i4", 1024), ("i2", 512),
                      ("f32", 8192), ("i4", 1024), ("i8", 2048)])

  def test_xla_packing_order(self):
    # What docs/gridspec.md says of the packed storage: element 0 in the
    # lowest bits (XLA's bitcast of int4[2] to int8, of uint2[4] to uint8).
    x = jnp.array([1, 2], jnp.int4)
    self.assertEqual(int(jax.lax.bitcast_convert_type(x, jnp.int8)), 0x21)
    y = jnp.array([1, 2, 3, 0], jnp.uint2)
    self.assertEqual(int(jax.lax.bitcast_convert_type(y, jnp.uint8)),
                     1 | 2 << 2 | 3 << 4)

  def test_cli_dtypes(self):
    out = os.path.join(self.dir, "cli")
    here = os.path.abspath(__file__)
    r = subprocess.run(
        [sys.executable, "-m", "pallasc_jax.cli", f"{here}:packed",
         "--arg", "i4[16,128]", "--arg", "u4[16,128]", "--arg", "i2[16,128]",
         "-o", out], capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(
            [os.path.join(ROOT, "python"), os.path.dirname(here)])))
    self.assertEqual(r.returncode, 0, r.stderr)
    with open(os.path.join(out, "packed_kernel.json")) as fh:
      self.assertEqual([a["dtype"] for a in json.load(fh)["inputs"]],
                       ["i4", "u4", "i2"])

  def test_cpu_packed_kernel(self):
    # i4, u4 and i2 inputs; f32, i4 (wrapping x + x) and i8 outputs.
    (c,) = self.export(packed, *packed_args())
    self.check_call(c, targets=("cpu",), inputs=[
        ints((16, 128), jnp.int4, 1), ints((16, 128), jnp.uint4, 2),
        ints((16, 128), jnp.int2, 3)])

  def test_cpu_int4_dequant(self):
    (c,) = self.export(dequant, S((16, 128), jnp.int4),
                       S((1, 128), jnp.float32))
    rng = np.random.default_rng(4)
    self.check_call(c, inputs=[
        ints((16, 128), jnp.int4, 5),
        rng.uniform(-1, 1, (1, 128)).astype(np.float32)])

  def test_cpu_wraparound(self):
    (c,) = self.export(wrap, S((16, 128), jnp.uint4), S((16, 128), jnp.int2),
                       S((16, 128), jnp.uint2))
    want = self.check_call(c, inputs=[
        ints((16, 128), jnp.uint4, 6), ints((16, 128), jnp.int2, 7),
        ints((16, 128), jnp.uint2, 8)])
    # The results do wrap: u4 15 * 15 + 15 = 240 is 0.
    self.assertEqual(want[0].dtype, jnp.uint4)
    self.assertLessEqual(int(np.max(want[0].astype(np.int32))), 15)

  def test_cpu_blocks_start_mid_byte(self):
    for fn, shape in ((odd, (3, 10)), (odd_rows, (5, 127))):
      (c,) = self.export(fn, S(shape, jnp.int4), sub=fn.__name__)
      self.check_call(c, inputs=[ints(shape, jnp.int4, 9)])

  def test_cpu_scratch_and_row_views(self):
    (c,) = self.export(scratch, S((16, 128), jnp.int4))
    self.check_call(c, inputs=[ints((16, 128), jnp.int4, 10)])

  def test_cpu_int4_arithmetic_wraps_before_a_conversion(self):
    # pallasc computes int4 arithmetic in 4 bits, as StableHLO defines it and
    # as jnp's op-by-op evaluation gives: 5 * 2 is -6, then int8 -6. XLA:CPU
    # (and so interpret mode under jit) fuses the product with the
    # conversion and computes it in 8 bits: 10. Values that go through an
    # int4 ref agree either way (the other tests).
    (c,) = self.export(widen, S((8, 128), jnp.int4))
    x = ints((8, 128), jnp.int4, 11)
    eager = np.asarray((jnp.asarray(x) * jnp.int4(2)).astype(jnp.int8))
    self.assertEqual(int(eager.flat[np.argmax(np.asarray(x, np.int8) == 5)]),
                     -6)
    self.check_call(c, inputs=[x], want=[eager])

  def test_cpu_wrapper_program(self):
    # vmap at axis 1 of an aliased int4 input: @main transposes the packed
    # array around the call and runs compiled (the host program path).
    (c,) = self.export(aliased, S((16, 128), jnp.int4))
    x = ints((16, 3, 128), jnp.int4, 12)
    d = os.path.dirname(c.paths[0])
    np.save(os.path.join(d, "x.npy"), x)
    out = os.path.join(d, "o.npy")
    self.pallasc("run", c.paths[0], "--spec", c.paths[1], "--vmap", "1:3",
                 "--input", os.path.join(d, "x.npy"), "--output", out)
    got = np.load(out).view(jnp.int4)
    want = (x.astype(np.int32) * 3 + 1 + 8) % 16 - 8
    np.testing.assert_array_equal(got.astype(np.int32),
                                  want.transpose(1, 0, 2))

  def test_cpu_refuses_a_view_of_columns(self):
    # A slice of the minor dimension at a dynamic start has no packed view:
    # refused at the kernel's line, nothing written.
    (c,) = self.export(column, S((8, 128), jnp.int4))
    line = line_of(column_kernel, "o_ref[...] = x_ref[:, pl.ds(j, 4)]")
    out = os.path.join(self.dir, "col")
    r = self.pallasc(c.paths[0], "--spec", c.paths[1], "--target", "cpu",
                     "-o", out, expect=1)
    self.assertIn(f"test_packed_ints.py:{line}:", r.stderr)
    self.assertIn("of the packed 'memref<8x128xi4>' (int4/uint4/int2/uint2, "
                  "stored 2 or 4 per byte) is not supported on target 'cpu': "
                  "the CPU lowering takes views of whole rows, of static "
                  "sizes, starting on a byte", r.stderr)
    self.assertFalse(os.path.exists(out) and os.listdir(out))

  def test_cpu_library_takes_packed_buffers(self):
    # --emit=header,lib: the entry point's int4 parameters are packed bytes.
    (c,) = self.export(dequant, S((16, 128), jnp.int4),
                       S((1, 128), jnp.float32))
    out = os.path.join(self.dir, "lib")
    self.pallasc(c.paths[0], "--spec", c.paths[1], "--target", "cpu",
                 "--emit=header,lib",
                 "-o", out)
    with open(os.path.join(out, c.name + ".h")) as fh:
      header = fh.read()
    self.assertIn("const uint8_t *in0", header)

  def test_gpu_targets_refuse(self):
    (c,) = self.export(packed, *packed_args())
    line = line_of(packed_kernel, "def packed_kernel")
    for t in ("cuda:sm_90a", "rocm:gfx942"):
      out = os.path.join(self.dir, "out-" + t.replace(":", "-"))
      r = self.pallasc(c.paths[0], "--spec", c.paths[1], "--target", t, "-o",
                       out, expect=1)
      self.assertIn(
          f"test_packed_ints.py:{line}:1: error: dtype int4/uint4 ('i4', "
          f"packed 2 per byte) is not supported on target '{t}' yet: "
          "'!pallas.ref<8x128xi4>' has no packed lowering there", r.stderr)
      self.assertFalse(os.path.exists(out) and os.listdir(out))

  def test_tpu_module_matches_jax_lowering(self):
    # The Mosaic kernel takes i4/i2 memrefs, as JAX's Mosaic lowering
    # writes them, and converts with the same ops.
    sys.path.insert(0, os.path.join(ROOT, "test", "Target"))
    import compare_with_jax_lowering as cmp
    from jax._src.pallas.mosaic import tpu_info
    info = tpu_info.get_tpu_info_for_chip(tpu_info.ChipVersion.TPU_V5E, 1)
    saved = tpu_info.get_tpu_info
    tpu_info.get_tpu_info = lambda: info
    try:
      (c,) = self.export(packed, *packed_args())
      out = os.path.join(self.dir, "tpu")
      self.pallasc(c.paths[0], "--spec", c.paths[1], "--target", "tpu", "-o",
                   out)
      with open(os.path.join(out, c.name + ".tpu.mlirbc"), "rb") as fh:
        ours = fh.read()
      theirs, _ = cmp.jax_artifacts(packed, packed_args())
      a, b = cmp.describe(ours), cmp.describe(theirs)
    finally:
      tpu_info.get_tpu_info = saved
    self.assertEqual(a["kernel"]["type"], b["kernel"]["type"])
    self.assertIn("memref<8x128xi4, #tpu.memory_space<vmem>>, "
                  "memref<8x128xi4, #tpu.memory_space<vmem>>, "
                  "memref<8x128xi2, #tpu.memory_space<vmem>>",
                  a["kernel"]["type"])
    for op in ("arith.sitofp", "arith.uitofp", "arith.addi", "arith.extsi",
               "tpu.vector_store"):
      self.assertEqual(a["kernel"]["ops"][op], b["kernel"]["ops"][op], op)


if __name__ == "__main__":
  unittest.main()
