"""A vmap with a symbolic batch size (docs/transforms.md#symbolic-axis-size):
`jax.vmap` of a pallas_call traced with `jax.export.symbolic_shape("b, n")`
reaches the exporter already batched (JAX applies vmap to the pallas_call
itself), so its spec has the grid ["b", "cdiv(n, 8)"]; the unbatched
symbolic export with the spec-level transform `{"vmap": {"axis_size": "b"}}`
must give the same outputs, and both equal JAX's interpret mode of the
unbatched call at each batch size, batch element by batch element."""

import json
import os
import unittest

from harness import PallascCase, skip_without_jax

try:
  import jax
  import jax.numpy as jnp
  from jax import export
  import pallasc_jax
  from test_symbolic import rmsnorm
  S = jax.ShapeDtypeStruct
except Exception:  # pragma: no cover
  pass


@skip_without_jax
class SymbolicVmap(PallascCase):

  def test_vmap_symbolic_batch(self):
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
