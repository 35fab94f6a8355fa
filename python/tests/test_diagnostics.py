"""Python locations in pallasc's diagnostics, the exporter's refusals (its
size limits on what it unrolls among them) and the `pallasc-export` command
line."""

import os
import subprocess
import sys
import textwrap
import unittest

from harness import ROOT, PallascCase, line_of, skip_without_jax

try:
  import jax
  import jax.numpy as jnp
  from jax import lax
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import tpu as pltpu
  from jax.experimental.pallas import triton as plgpu
  import pallasc_jax
  S = jax.ShapeDtypeStruct
except Exception:  # pragma: no cover
  pass


@skip_without_jax
class Locations(PallascCase):

  def test_every_op_is_located(self):
    def kernel(x_ref, o_ref):
      o_ref[...] = jnp.exp(x_ref[...]) * 2
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((8, 128),
                                                      jnp.float32))(x)
    (c,) = pallasc_jax.trace(fn, S((8, 128), jnp.float32), source_root=ROOT)
    body = [l for l in c.kernel_mlir.splitlines() if l.startswith("  %")]
    self.assertTrue(body)
    for l in body:
      self.assertRegex(l, r"loc\(#loc\d+\)$")
    line = line_of(kernel, "jnp.exp")
    self.assertIn(f'loc("python/tests/test_diagnostics.py":{line}:', c.kernel_mlir)

  def test_kernels_of_custom_vjp_rules_keep_their_lines(self):
    # JAX traces custom_vjp rules under the caller's traceback: without
    # care every op of these kernels would point at the `op(x)` call.
    def fwd_kernel(x_ref, o_ref):
      o_ref[...] = jnp.sin(x_ref[...])  # fwd line

    def bwd_kernel(x_ref, g_ref, o_ref):
      o_ref[...] = jnp.cos(x_ref[...]) * g_ref[...]  # bwd line
    call = lambda k, *xs: pl.pallas_call(k, out_shape=S((8, 128),
                                                        jnp.float32))(*xs)

    @jax.custom_vjp
    def op(x):
      return call(fwd_kernel, x)
    op.defvjp(lambda x: (call(fwd_kernel, x), x),
              lambda x, g: (call(bwd_kernel, x, g),))
    # Under jit, as JAX's ops are: grad then replays the jitted jaxpr.
    fn = jax.grad(jax.jit(lambda x: jnp.sum(op(x))))  # caller line
    calls = pallasc_jax.trace(fn, S((8, 128), jnp.float32))
    self.assertEqual([c.name for c in calls], ["fwd_kernel", "bwd_kernel"])
    me = "python/tests/test_diagnostics.py"
    for c, kernel, needle in ((calls[0], fwd_kernel, "fwd line"),
                              (calls[1], bwd_kernel, "bwd line")):
      mlir = pallasc_jax.trace(fn, S((8, 128), jnp.float32),
                               source_root=ROOT)[calls.index(c)].kernel_mlir
      self.assertIn(f'loc("{me}":{line_of(kernel, needle)}:', mlir)
      caller = line_of(
          self.test_kernels_of_custom_vjp_rules_keep_their_lines,
          "caller line")
      self.assertNotIn(f'loc("{me}":{caller}:', mlir)

  def test_verifier_error_points_at_python(self):
    def kernel(x_ref, o_ref):
      i = pl.program_id(0)
      o_ref[...] = x_ref[pl.ds(pl.multiple_of(i * 0, 0), 8)]  # divisor 0
    fn = lambda x: pl.pallas_call(kernel, grid=(2,),
                                  out_shape=S((8, 128), jnp.float32))(x)
    (c,) = self.export(fn, S((16, 128), jnp.float32))
    r = self.pallasc(c.paths[0], "--spec", c.paths[1], "-o", self.dir,
                     expect=1)
    line = line_of(kernel, "divisor 0")
    self.assertRegex(r.stderr, rf"test_diagnostics.py:{line}:\d+: error: "
                     r".*'pallas.multiple_of' op")
    # The Python source line is shown under the message.
    self.assertIn("pl.multiple_of(i * 0, 0)", r.stderr)

  def test_gpu_lowering_error_points_at_python(self):
    def kernel(x_ref, o_ref):
      o_ref[0:6] = x_ref[0:6] + 1  # 6 rows: not a power of two
      o_ref[6:8] = x_ref[6:8]
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((8, 128),
                                                      jnp.float32))(x)
    (c,) = self.export(fn, S((8, 128), jnp.float32))
    self.pallasc(c.paths[0], "--spec", c.paths[1], "-o", self.dir)
    r = self.pallasc(c.paths[0], "--spec", c.paths[1], "--target",
                     "cuda:sm_80", "-o", self.dir, expect=1)
    line = line_of(kernel, "not a power of two")
    self.assertRegex(r.stderr, rf"test_diagnostics.py:{line}:\d+: error: .*"
                     "power-of-two")
    self.assertFalse(os.path.exists(os.path.join(self.dir,
                                                 c.name + ".sm_80.ptx")))


@skip_without_jax
class Refusals(PallascCase):

  def test_unsupported_primitive(self):
    def kernel(x_ref, o_ref):
      o_ref[...] = jax.lax.lgamma(x_ref[...])  # refused
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((8, 128),
                                                      jnp.float32))(x)
    e = self.refused(fn, S((8, 128), jnp.float32), needle="primitive 'lgamma'",
                     line_needle="refused", kernel=kernel)
    self.assertIn("test_diagnostics.py", str(e))

  def test_unsupported_scatter(self):
    def kernel(i_ref, x_ref, o_ref):
      plgpu.atomic_add(o_ref, i_ref[...], x_ref[...])  # an arbitrary index vector
    fn = lambda i, x: pl.pallas_call(kernel, out_shape=S((16,),
                                                         jnp.float32))(i, x)
    self.refused(fn, S((8,), jnp.int32), S((8,), jnp.float32),
                 needle="a scatter, is not supported", line_needle="arbitrary",
                 kernel=kernel)

  def test_bitcast_that_changes_the_width(self):
    def kernel(x_ref, o_ref):
      o_ref[...] = lax.bitcast_convert_type(x_ref[...], jnp.int16)  # 2 x i16
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((8, 128, 2),
                                                      jnp.int16))(x)
    self.refused(fn, S((8, 128), jnp.float32),
                 needle="'bitcast_convert_type' from float32 to int16 changes "
                 "the element width", line_needle="2 x i16", kernel=kernel)

  def test_pad_negative_and_interior(self):
    def kernel(x_ref, o_ref):
      o_ref[...] = lax.pad(x_ref[...], 0.0, ((0, 0, 0), (-1, 0, 1)))  # both
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((8, 254),
                                                      jnp.float32))(x)
    self.refused(fn, S((8, 128), jnp.float32),
                 needle="'pad' with both negative edge padding and interior "
                 "padding", line_needle="# both", kernel=kernel)

  def test_long_scan_over_arrays(self):
    def kernel(x_ref, o_ref):
      o_ref[...] = lax.scan(lambda c, r: (c + r, c), x_ref[0],
                            x_ref[...])[1]  # 128 steps
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((128, 128),
                                                      jnp.float32))(x)
    self.refused(fn, S((128, 128), jnp.float32),
                 needle="'scan' over arrays of length 128: pallasc unrolls "
                 "scans with xs or stacked outputs, up to 64 iterations",
                 line_needle="lax.scan", kernel=kernel)

  def test_long_cumulative_op(self):
    def kernel(x_ref, o_ref):
      o_ref[...] = lax.cummax(x_ref[...], axis=1)  # 256 elements
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((8, 256),
                                                      jnp.float32))(x)
    self.refused(fn, S((8, 256), jnp.float32),
                 needle="'cummax' along an axis of 256 elements: pallasc "
                 "unrolls it, up to 128 elements", line_needle="cummax",
                 kernel=kernel)

  def test_unsupported_compiler_param(self):
    def kernel(x_ref, o_ref):
      o_ref[...] = x_ref[...]
    fn = lambda x: pl.pallas_call(
        kernel, out_shape=S((8, 128), jnp.float32),
        compiler_params=pltpu.CompilerParams(allow_input_fusion=[True]))(x)
    self.refused(fn, S((8, 128), jnp.float32), needle="'allow_input_fusion'")

  def test_unsupported_block_dim(self):
    def kernel(x_ref, o_ref):
      o_ref[...] = x_ref[...]
    fn = lambda x: pl.pallas_call(
        kernel, grid=(2,), out_shape=S((16, 128), jnp.float32),
        in_specs=[pl.BlockSpec((pl.BoundedSlice(8), 128),
                               lambda i: (pl.ds(i * 8, 8), 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x)
    try:
      self.refused(fn, S((16, 128), jnp.float32), needle="BoundedSlice")
    except Exception as e:  # JAX itself may reject it first
      if isinstance(e, AssertionError):
        raise

  def test_debug_print_of_a_semaphore_ref(self):
    def kernel(x_ref, o_ref, sem):
      jax.debug.print("sem = {}", sem)  # no contents to load
      o_ref[...] = x_ref[...]
    fn = lambda x: pl.pallas_call(
        kernel, out_shape=S((8, 128), jnp.float32),
        scratch_shapes=[pltpu.SemaphoreType.DMA])(x)
    self.refused(fn, S((8, 128), jnp.float32),
                 needle="jax.debug.print of a ref in memory space "
                 "'semaphore'", line_needle="no contents", kernel=kernel)

  def test_no_pallas_call(self):
    with self.assertRaises(pallasc_jax.ExportError) as cm:
      pallasc_jax.trace(lambda x: x + 1, S((4,), jnp.float32))
    self.assertIn("makes no pallas_call", str(cm.exception))


MODULE = textwrap.dedent('''
    import jax, jax.numpy as jnp
    from jax.experimental import pallas as pl

    def scale(x, *, factor=1.0):
      def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * factor
      return pl.pallas_call(kernel, grid=(2,),
          in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
          out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
          out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), name="scale")(x)

    def bad(x):
      def kernel(x_ref, o_ref):
        o_ref[...] = jax.lax.lgamma(x_ref[...])
      return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
''')


@skip_without_jax
class CommandLine(PallascCase):

  def cli(self, *args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    return subprocess.run([sys.executable, "-m", "pallasc_jax", *args],
                          capture_output=True, text=True, cwd=self.dir,
                          env=env)

  def setUp(self):
    super().setUp()
    with open(os.path.join(self.dir, "mykernels.py"), "w") as f:
      f.write(MODULE)

  def test_export_and_compile(self):
    out = os.path.join(self.dir, "out")
    r = self.cli("mykernels:scale", "--arg", "f32[16,128]", "--static",
                 "factor=3.0", "-o", out)
    self.assertEqual(r.returncode, 0, r.stderr)
    self.assertEqual(sorted(os.listdir(out)), ["scale.json", "scale.mlir"])
    self.assertIn("3.0", open(os.path.join(out, "scale.mlir")).read())
    self.assertIn('loc("mykernels.py":', open(os.path.join(
        out, "scale.mlir")).read())
    self.pallasc(os.path.join(out, "scale.mlir"), "--spec",
                 os.path.join(out, "scale.json"), "--target", "cuda:sm_80",
                 "-o", out)

  def test_symbolic_arg(self):
    import json
    out = os.path.join(self.dir, "out")
    r = self.cli("mykernels:scale", "--arg", "f32[2*n, 128]", "-o", out)
    self.assertEqual(r.returncode, 0, r.stderr)
    with open(os.path.join(out, "scale.json")) as f:
      spec = json.load(f)
    self.assertEqual(spec["symbols"], {"n": {}})
    self.assertEqual(spec["inputs"], [{"shape": ["2*n", 128], "dtype": "f32"}])
    self.assertEqual(spec["grid"], [2])

  def test_refusal_exits_1_and_writes_nothing(self):
    out = os.path.join(self.dir, "out")
    r = self.cli("mykernels.py:bad", "--arg", "f32[8,128]", "-o", out)
    self.assertEqual(r.returncode, 1)
    self.assertRegex(r.stderr, r"mykernels.py:\d+:\d+: error: primitive "
                     "'lgamma' is not supported")
    self.assertFalse(os.path.exists(out) and os.listdir(out))

  def test_bad_arg_is_usage_error(self):
    r = self.cli("mykernels:scale", "--arg", "float[8", "-o", "o")
    self.assertEqual(r.returncode, 2)
    self.assertIn("invalid --arg 'float[8'", r.stderr)
    r = self.cli("mykernels:scale", "--arg", "f32[n+,8]", "-o", "o")
    self.assertEqual(r.returncode, 2)
    self.assertIn("invalid --arg 'f32[n+,8]'", r.stderr)


@skip_without_jax
class UnrollLimits(PallascCase):
  """The exporter's size limits on what it unrolls: reduce_prod and
  cumlogsumexp along an axis (up to 128 elements) and a load that mixes slices
  with an index vector (up to 64 entries). Over the limit, the export fails
  with the message naming the size and the limit, at the kernel's Python
  line; at the limit it exports."""

  def test_reduce_prod(self):
    def kernel(x_ref, o_ref):
      o_ref[...] = jnp.prod(x_ref[...], axis=1)  # 129 elements
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((8,), jnp.float32))(x)
    self.refused(fn, S((8, 129), jnp.float32),
                 needle="'reduce_prod' along an axis of 129 elements: pallasc "
                 "unrolls it, up to 128 elements", kernel=kernel,
                 line_needle="jnp.prod")
    # At the limit it exports.
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((8,), jnp.float32))(x)
    pallasc_jax.trace(fn, S((8, 128), jnp.float32))

  def test_cumlogsumexp(self):
    def kernel(x_ref, o_ref):
      o_ref[...] = lax.cumlogsumexp(x_ref[...], axis=0)  # 200 elements
    fn = lambda x: pl.pallas_call(kernel, out_shape=S((200, 8),
                                                      jnp.float32))(x)
    self.refused(fn, S((200, 8), jnp.float32),
                 needle="'cumlogsumexp' along an axis of 200 elements: "
                 "pallasc unrolls it, up to 128 elements", kernel=kernel,
                 line_needle="cumlogsumexp")

  def test_slice_gather(self):
    # x_ref[idx, :] with a 65-entry index vector that is no iota pattern.
    def kernel(i_ref, x_ref, o_ref):
      o_ref[...] = x_ref[i_ref[...], :]  # 65 entries
    fn = lambda i, x: pl.pallas_call(kernel, out_shape=S((65, 128),
                                                         jnp.float32))(i, x)
    self.refused(fn, S((65,), jnp.int32), S((128, 128), jnp.float32),
                 needle="a load that mixes slices with an index vector of 65 "
                 "entries: pallasc unrolls it, one load per entry, up to 64",
                 kernel=kernel, line_needle="65 entries")


if __name__ == "__main__":
  unittest.main()
