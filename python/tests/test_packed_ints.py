"""Sub-byte integers (jnp.int4, uint4, int2, uint2): exported with their
dtypes (spec i4/u4/i2/u2, kernel i4/i2), counted packed in the manifest,
compiled for the TPU to the kernel signature JAX's own Mosaic lowering
writes, and refused by dtype and target on the CPU and GPU targets, which
have no lowering of packed storage yet (docs/gridspec.md#arrays)."""

import json
import os
import subprocess
import sys
import unittest

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

  def test_cpu_and_gpu_targets_refuse(self):
    (c,) = self.export(packed, *packed_args())
    line = line_of(packed_kernel, "def packed_kernel")
    for t in ("cpu", "cuda:sm_90a", "rocm:gfx942"):
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
