"""pipeline_mode=pl.Buffered(n) (issue 35): the exporter writes the block
spec's buffer_count; the TPU module's window params carry JAX's pipeline mode
(1 synchronous, 2 double_buffered), compared with jax.export(...,
platforms=["tpu"]) of the same function; the TPU target refuses 3 buffers as
JAX's Mosaic lowering does, and the CPU runner (whose results do not depend
on buffering) equals interpret mode (docs/jax.md, docs/tpu.md)."""

import os
import unittest

from harness import (PallascCase, jax_tpu_lowering, skip_without_jax,
                     tpu_v5e)

try:
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import tpu as pltpu
  import pallasc_jax
  S = jax.ShapeDtypeStruct
except Exception:  # pragma: no cover
  pass


def scaled_add(buffers_x, buffers_y=None, buffers_o=None):
  """o = 2 * x + y over 8-row blocks, with the given pl.Buffered counts (None:
  no pipeline_mode)."""
  def mode(n):
    return {} if n is None else {"pipeline_mode": pl.Buffered(n)}

  def kernel(x_ref, y_ref, o_ref):
    o_ref[...] = 2 * x_ref[...] + y_ref[...]

  def f(x, y):
    return pl.pallas_call(
        kernel, grid=(4,),
        in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0), **mode(buffers_x)),
                  pl.BlockSpec((8, 128), lambda i: (3 - i, 0),
                               **mode(buffers_y))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0), **mode(buffers_o)),
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel",)),
        out_shape=S((32, 128), jnp.float32))(x, y)
  return f


@skip_without_jax
class PipelineMode(PallascCase):

  def setUp(self):
    super().setUp()
    self.args = [S((32, 128), jnp.float32), S((32, 128), jnp.float32)]

  def export_tpu(self, f, sub):
    (c,) = self.export(f, *self.args, sub=sub)
    return (c, *self.compile_tpu(c, os.path.join(self.dir, sub, "tpu")))

  def test_spec_buffer_count(self):
    (c,) = pallasc_jax.trace(scaled_add(1, None, 2), *self.args)
    self.assertEqual(c.spec["in_specs"][0]["buffer_count"], 1)
    self.assertNotIn("buffer_count", c.spec["in_specs"][1])
    self.assertEqual(c.spec["out_specs"][0]["buffer_count"], 2)

  def test_tpu_matches_jax_lowering(self):
    cmp = jax_tpu_lowering()
    window_params = {}
    with tpu_v5e():
      for modes in ((1, None, 2), (2, 1, None), (None, None, 1)):
        f = scaled_add(*modes)
        _, ours, ours_cfg = self.export_tpu(f, "m%s%s%s" % modes)
        theirs, theirs_cfg = cmp.jax_artifacts(f, self.args)
        a, b = cmp.describe(ours), cmp.describe(theirs)
        self.assertEqual(a["kernel"]["type"], b["kernel"]["type"])
        self.assertEqual(a["kernel"]["attrs"], b["kernel"]["attrs"], modes)
        self.assertEqual(a["transforms"], b["transforms"])
        self.assertEqual(ours_cfg, theirs_cfg)
        window_params[modes] = a["kernel"]["attrs"]["window_params"]
    # Explicit modes only: x double-buffered, y synchronous, o none.
    self.assertEqual(
        window_params[(2, 1, None)],
        "[{pipeline_mode = #tpu.pipeline_mode<double_buffered>, "
        "transform_indices = @transform_0, window_bounds = array<i64: 8, 128>}"
        ", {pipeline_mode = #tpu.pipeline_mode<synchronous>, "
        "transform_indices = @transform_1, window_bounds = array<i64: 8, 128>}"
        ", {transform_indices = @transform_2, window_bounds = array<i64: 8, "
        "128>}]")

  def test_three_buffers(self):
    # JAX's Mosaic lowering refuses 3 buffers, and so does --target tpu (one
    # located line, nothing written); the CPU runner runs the call, equal to
    # interpret mode (buffering does not change the results).
    f = scaled_add(3)
    (c,) = self.export(f, *self.args)
    self.assertEqual(c.spec["in_specs"][0]["buffer_count"], 3)
    out = os.path.join(self.dir, "tpu3")
    r = self.pallasc(c.paths[0], "--spec", c.paths[1], "--target", "tpu",
                     "-o", out, expect=1)
    self.assertIn("in_specs[0]: buffer_count 3 (pipeline_mode=pl.Buffered(3)):"
                  " the TPU pipeline supports only single (1) and double (2) "
                  "buffering, as JAX's Mosaic lowering", r.stderr)
    self.assertFalse(os.path.exists(out) and os.listdir(out))
    self.check_call(c, targets=("cpu",))

  def test_bounded_slice_refused(self):
    # pl.BoundedSlice is an emit_pipeline block dimension: JAX's own
    # pallas_call lowerings and interpret mode refuse it, and so does the
    # exporter, at the pallas_call's line.
    def kernel(x_ref, o_ref):
      o_ref[...] = x_ref[pl.ds(0, 8), :] * 2

    def f(x):
      return pl.pallas_call(
          kernel, grid=(4,),
          in_specs=[pl.BlockSpec((pl.BoundedSlice(16), 128),
                                 lambda i: (pl.ds(i * 8, 8), 0))],
          out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
          out_shape=S((32, 128), jnp.float32))(x)
    with self.assertRaises(pallasc_jax.ExportError) as cm:
      pallasc_jax.trace(f, S((32, 128), jnp.float32))
    self.assertIn("block dimension BoundedSlice(16): pl.BoundedSlice is a "
                  "pltpu.emit_pipeline block dimension", cm.exception.message)
    self.assertIn("test_pipeline_mode.py", cm.exception.where)
    with self.assertRaises(Exception) as jx:
      pl.pallas_call(
          kernel, grid=(4,),
          in_specs=[pl.BlockSpec((pl.BoundedSlice(16), 128),
                                 lambda i: (pl.ds(i * 8, 8), 0))],
          out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
          out_shape=S((32, 128), jnp.float32), interpret=True)(
              jnp.zeros((32, 128), jnp.float32))
    self.assertIn("Unsupported block dim", str(jx.exception))


if __name__ == "__main__":
  unittest.main()
