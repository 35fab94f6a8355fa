"""Symbolic shapes (jax.export.symbolic_shape) through pallasc_jax: the spec's
"symbols", symbolic array dimensions and grid expressions (docs/jax.md,
docs/gridspec.md#symbols). The symbolic spec, evaluated at a size, must equal
the spec exported at that static size."""

import re
import unittest

from harness import PallascCase, skip_without_jax

try:
  import jax
  import jax.numpy as jnp
  from jax import export, lax
  from jax.experimental import pallas as pl
  import pallasc_jax
  S = jax.ShapeDtypeStruct
except Exception:  # pragma: no cover
  pass


def rmsnorm(x, w):
  n = x.shape[0]

  def kernel(x_ref, w_ref, o_ref):
    x = x_ref[...]
    o_ref[...] = x * lax.rsqrt(jnp.mean(x * x, axis=1, keepdims=True) +
                               1e-6) * w_ref[...]
  return pl.pallas_call(
      kernel, grid=(pl.cdiv(n, 8),),
      in_specs=[pl.BlockSpec((8, 256), lambda i: (i, 0)),
                pl.BlockSpec((1, 256), lambda i: (0, 0))],
      out_specs=pl.BlockSpec((8, 256), lambda i: (i, 0)),
      out_shape=S(x.shape, x.dtype))(x, w)


def evaluate(value, env):
  """A spec dimension (int or expression text) at the symbols' values."""
  if isinstance(value, int):
    return value
  text = re.sub(r"(\d)\s*\*\s*([A-Za-z_])", r"\1*\2", value)
  return eval(text, {"cdiv": lambda a, b: -(-a // b),
                     "floordiv": lambda a, b: a // b}, dict(env))


def at(spec, env):
  """The parts of a spec that symbols change, evaluated at `env`."""
  return {
      "grid": [evaluate(g, env) for g in spec["grid"]],
      "inputs": [[evaluate(d, env) for d in a["shape"]]
                 for a in spec["inputs"]],
      "outputs": [[evaluate(d, env) for d in a["shape"]]
                  for a in spec["outputs"]],
  }


@skip_without_jax
class Symbolic(PallascCase):

  def test_rmsnorm_spec(self):
    (n,) = export.symbolic_shape("n", constraints=("n <= 4096",))
    w = S((1, 256), jnp.float32)
    (c,) = pallasc_jax.trace(rmsnorm, S((n, 256), jnp.float32), w)
    self.assertEqual(c.spec["symbols"], {"n": {"max": 4096}})
    self.assertEqual(c.spec["grid"], ["cdiv(n, 8)"])
    self.assertEqual(c.spec["inputs"][0]["shape"], ["n", 256])
    self.assertEqual(c.spec["outputs"][0]["shape"], ["n", 256])
    self.assertEqual(list(c.spec)[:4], ["schema", "kernel", "name", "symbols"])
    for size in (1, 7, 8, 127, 128, 1000, 4096):
      (s,) = pallasc_jax.trace(rmsnorm, S((size, 256), jnp.float32), w)
      self.assertNotIn("symbols", s.spec)
      self.assertEqual(at(c.spec, {"n": size}), at(s.spec, {}), size)
      self.assertEqual(c.kernel_mlir, s.kernel_mlir)

  def test_rmsnorm_runs_at_every_size(self):
    # One symbolic export, one spec, one CPU artifact: pallasc run (the CPU
    # runner, which takes each symbol from the .npy shapes and runs the
    # symbolic call itself, without compiling per size) at each size equals
    # JAX's interpret mode of the static call at that size, and the static
    # export at that size bit for bit.
    import os
    from harness import jax_interpret, load_npy, save_npy
    import numpy as np
    (n,) = export.symbolic_shape("n")
    w = S((1, 256), jnp.float32)
    (c,) = self.export(rmsnorm, S((n, 256), jnp.float32), w)
    mlir, spec = c.paths
    rng = np.random.default_rng(0)
    for size in (1, 7, 8, 127, 128, 1000, 4096):
      x = rng.uniform(-1, 1, (size, 256)).astype(np.float32)
      wv = rng.uniform(-1, 1, (1, 256)).astype(np.float32)
      (s,) = pallasc_jax.trace(rmsnorm, S(x.shape, x.dtype), w)
      grid = s.eqn.params["grid_mapping"].num_dynamic_grid_bounds
      bounds = [-(-size // 8)] * grid
      (want,) = jax_interpret(s.eqn, [x, wv], bounds)
      d = os.path.join(self.dir, f"n{size}")
      os.makedirs(d)
      paths = [os.path.join(d, f) for f in ("x.npy", "w.npy", "o.npy")]
      save_npy(paths[0], x)
      save_npy(paths[1], wv)
      self.pallasc("run", mlir, "--spec", spec, "--input", paths[0],
                   "--input", paths[1], "--output", paths[2])
      got = load_npy(paths[2], np.float32)
      np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5,
                                 err_msg=f"n = {size}")
      # The static spec at this size: the same bits.
      (st,) = self.export(rmsnorm, S(x.shape, x.dtype), w,
                          sub=f"static{size}")
      smlir, sspec = st.paths
      static_out = os.path.join(d, "os.npy")
      self.pallasc("run", smlir, "--spec", sspec, "--input", paths[0],
                   "--input", paths[1], "--output", static_out)
      self.assertEqual(load_npy(static_out, np.float32).tobytes(),
                       got.tobytes(), f"n = {size}")

  def test_rmsnorm_emulated_gpus_at_every_size(self):
    # The same symbolic export compiled once for cuda:sm_90a and rocm:gfx942:
    # `pallasc run --emulate` takes n from the .npy shapes and passes it to
    # the one kernel as a parameter; each size equals JAX's interpret mode of
    # the static call at that size.
    import os
    from harness import gpu_targets, jax_interpret, load_npy, save_npy
    import numpy as np
    targets = [t for t in ("cuda:sm_90a", "rocm:gfx942") if t in gpu_targets()]
    if not targets:
      self.skipTest("no GPU target to emulate")
    (n,) = export.symbolic_shape("n", constraints=("n <= 65536",))
    w = S((1, 256), jnp.float32)
    (c,) = self.export(rmsnorm, S((n, 256), jnp.float32), w)
    mlir, spec = c.paths
    rng = np.random.default_rng(1)
    for size in (1, 7, 127, 1000):
      x = rng.uniform(-1, 1, (size, 256)).astype(np.float32)
      wv = rng.uniform(-1, 1, (1, 256)).astype(np.float32)
      (s,) = pallasc_jax.trace(rmsnorm, S(x.shape, x.dtype), w)
      grid = s.eqn.params["grid_mapping"].num_dynamic_grid_bounds
      (want,) = jax_interpret(s.eqn, [x, wv], [-(-size // 8)] * grid)
      d = os.path.join(self.dir, f"gpu{size}")
      os.makedirs(d)
      paths = [os.path.join(d, f) for f in ("x.npy", "w.npy")]
      save_npy(paths[0], x)
      save_npy(paths[1], wv)
      for target in targets:
        out = os.path.join(d, target.replace(":", "_") + ".npy")
        self.pallasc("run", mlir, "--spec", spec, "--target", target,
                     "--emulate", "--input", paths[0], "--input", paths[1],
                     "--output", out, "--cache-dir",
                     os.path.join(self.dir, "cache"))
        np.testing.assert_allclose(load_npy(out, np.float32), want,
                                   rtol=2e-5, atol=2e-5,
                                   err_msg=f"{target}, n = {size}")

  def test_expressions_and_bounds(self):
    # A dimension that is an expression (8*m + 16), a lower bound from a
    # constraint, and a grid bound JAX folds (cdiv(8*m + 16, 8) = m + 2).
    (m,) = export.symbolic_shape("m", constraints=("m >= 3",))
    w = S((1, 256), jnp.float32)
    (c,) = pallasc_jax.trace(rmsnorm, S((8 * m + 16, 256), jnp.float32), w)
    self.assertEqual(c.spec["symbols"], {"m": {"min": 3}})
    self.assertEqual(c.spec["inputs"][0]["shape"], ["8*m + 16", 256])
    self.assertEqual(c.spec["grid"], ["m + 2"])
    (s,) = pallasc_jax.trace(rmsnorm, S((8 * 5 + 16, 256), jnp.float32), w)
    self.assertEqual(at(c.spec, {"m": 5}), at(s.spec, {}))

  def test_rmsnorm_tpu_matches_jax_lowering(self):
    # One symbolic export compiled for --target tpu: the Mosaic module has
    # the kernel signature, the dynamic iteration bound, window params and
    # transform functions of JAX's own lowering of the same pallas_call over
    # export.symbolic_shape("n") (jax.export(..., platforms=["tpu"]), which
    # runs without a TPU), the same backend config, and the manifest names
    # the custom call's extra operands JAX's call takes: the grid bound
    # cdiv(n, 8) before the inputs, the result's shape after them.
    import json
    import os
    from harness import jax_tpu_lowering, tpu_v5e
    cmp = jax_tpu_lowering()
    (n,) = export.symbolic_shape("n")
    args = [S((n, 256), jnp.float32), S((1, 256), jnp.float32)]
    (c,) = self.export(rmsnorm, *args)
    out = os.path.join(self.dir, "tpu")
    ours, ours_cfg = self.compile_tpu(c, out)
    with open(os.path.join(out, c.name + ".manifest.json")) as fh:
      manifest = json.load(fh)
    launch = manifest["targets"][0]["launch"]
    with tpu_v5e():
      theirs, theirs_cfg, operands = cmp.jax_export_call(rmsnorm, args)
      a, b = cmp.describe(ours), cmp.describe(theirs)
    self.assertEqual(b["kernel"]["attrs"]["iteration_bounds"],
                     "array<i64: ?>")
    self.assert_same_tpu_call(a, b, ours_cfg, theirs_cfg)
    self.assertEqual(cmp.manifest_operands(launch), operands)
    self.assertEqual(operands, {"dynamic_grid_bounds": 1, "shape_operands": 1})
    self.assertEqual(launch["iteration_bounds"], ["cdiv(n, 8)"])
    self.assertEqual(launch["result_shape_operands"], [["n", 256]])
    self.assertEqual(manifest["symbols"], [{"name": "n", "min": 1,
                                            "multiple_of": 1}])



@skip_without_jax
class SymbolicVmap(PallascCase):
  """A vmap with a symbolic batch size (docs/transforms.md#symbolic-axis-size):
  `jax.vmap` of a pallas_call traced with `jax.export.symbolic_shape("b, n")`
  reaches the exporter already batched (JAX applies vmap to the pallas_call
  itself), so its spec has the grid ["b", "cdiv(n, 8)"]; the unbatched
  symbolic export with the spec-level transform `{"vmap": {"axis_size": "b"}}`
  must give the same outputs, and both equal JAX's interpret mode of the
  unbatched call at each batch size, batch element by batch element."""

  def test_vmap_symbolic_batch(self):
    import json
    import os
    from harness import jax_interpret, load_npy, save_npy
    import numpy as np
    b, n = export.symbolic_shape("b, n", constraints=("b <= 64",))
    w = S((1, 256), jnp.float32)
    batched_rms = jax.vmap(rmsnorm, in_axes=(0, None))
    # JAX's own batching of the call, exported with the symbolic batch.
    (jb,) = self.export(batched_rms, S((b, n, 256), jnp.float32), w,
                        sub="jax")
    self.assertEqual(jb.spec["grid"], ["b", "cdiv(n, 8)"])
    self.assertEqual(jb.spec["inputs"][0]["shape"], ["b", "n", 256])
    self.assertEqual(jb.spec["outputs"][0]["shape"], ["b", "n", 256])
    self.assertEqual(jb.spec["symbols"], {"b": {"max": 64}, "n": {}})
    # The unbatched symbolic export with the spec-level vmap.
    (un,) = self.export(rmsnorm, S((n, 256), jnp.float32), w, sub="spec")
    umlir, uspec = un.paths
    with open(uspec) as f:
      spec = json.load(f)
    spec["symbols"] = {"b": {"max": 64}, **spec["symbols"]}
    spec["transforms"] = [{"vmap": {"in_axes": [0, None], "axis_size": "b"}}]
    vspec = os.path.join(self.dir, "spec", "vmap.json")
    with open(vspec, "w") as f:
      json.dump(spec, f)
    jmlir, jspec = jb.paths
    rng = np.random.default_rng(0)
    for bsize, nsize in ((1, 7), (3, 8), (8, 127)):
      x = rng.uniform(-1, 1, (bsize, nsize, 256)).astype(np.float32)
      wv = rng.uniform(-1, 1, (1, 256)).astype(np.float32)
      # Interpret mode of the unbatched static call, per batch element.
      (s,) = pallasc_jax.trace(rmsnorm, S(x.shape[1:], x.dtype), w)
      nb = s.eqn.params["grid_mapping"].num_dynamic_grid_bounds
      want = np.stack([
          jax_interpret(s.eqn, [x[i], wv], [-(-nsize // 8)] * nb)[0]
          for i in range(bsize)])
      d = os.path.join(self.dir, f"b{bsize}")
      os.makedirs(d)
      xp, wp = os.path.join(d, "x.npy"), os.path.join(d, "w.npy")
      save_npy(xp, x)
      save_npy(wp, wv)
      outs = []
      for mlir, sp, name in ((jmlir, jspec, "jax"), (umlir, vspec, "spec")):
        o = os.path.join(d, name + ".npy")
        self.pallasc("run", mlir, "--spec", sp, "--input", xp, "--input",
                     wp, "--output", o)
        outs.append(load_npy(o, np.float32))
      np.testing.assert_allclose(outs[0], want, rtol=2e-5, atol=2e-5,
                                 err_msg=f"b = {bsize}")
      self.assertEqual(outs[0].shape, (bsize, nsize, 256))
      self.assertEqual(outs[0].tobytes(), outs[1].tobytes(), f"b = {bsize}")

  def test_vmap_symbolic_batch_tpu_matches_jax_lowering(self):
    # The unbatched symbolic export under the spec-level vmap with axis_size
    # "b", compiled for --target tpu: the Mosaic module has the kernel
    # signature, the dynamic iteration bounds (b and cdiv(n, 8)), window
    # params and transforms of JAX's own lowering of jax.vmap of the call
    # over export.symbolic_shape("b, n") (jax.export(..., platforms=["tpu"])),
    # and the same backend config.
    import json
    import os
    from harness import jax_tpu_lowering, tpu_v5e
    cmp = jax_tpu_lowering()
    b, n = export.symbolic_shape("b, n")
    w = S((1, 256), jnp.float32)
    (un,) = self.export(rmsnorm, S((n, 256), jnp.float32), w, sub="spec")
    umlir, uspec = un.paths
    with open(uspec) as f:
      spec = json.load(f)
    spec["symbols"] = {"b": {}, **spec["symbols"]}
    spec["transforms"] = [{"vmap": {"in_axes": [0, None], "axis_size": "b"}}]
    with open(uspec, "w") as f:
      json.dump(spec, f)
    out = os.path.join(self.dir, "tpu")
    ours, ours_cfg = self.compile_tpu(un, out)
    batched_rms = jax.vmap(rmsnorm, in_axes=(0, None))
    with tpu_v5e():
      theirs, theirs_cfg, operands = cmp.jax_export_call(
          batched_rms, [S((b, n, 256), jnp.float32), w])
      x, y = cmp.describe(ours), cmp.describe(theirs)
    self.assertEqual(y["kernel"]["attrs"]["iteration_bounds"],
                     "array<i64: ?, ?>")
    self.assert_same_tpu_call(x, y, ours_cfg, theirs_cfg)


if __name__ == "__main__":
  unittest.main()
