"""Multi-device TPU kernels (JAX's shipped ops/tpu/all_gather under
jax.shard_map): lax.axis_index, the barrier semaphore, signals to another
device and remote copies exported, compiled for the TPU and compared with
JAX's own Mosaic lowering (jax.export(..., platforms=["tpu"])); the cpu and
GPU targets refuse them by name (they run one device)."""

import os

# Four CPU devices for the meshes (before JAX starts its CPU backend).
if "--xla_force_host_platform_device_count" not in os.environ.get(
    "XLA_FLAGS", ""):
  os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                             " --xla_force_host_platform_device_count=4")

import unittest

import numpy as np

from harness import PallascCase, line_of, save_npy, skip_without_jax

try:
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import tpu as pltpu
  from jax.experimental.pallas.ops.tpu import all_gather
  import pallasc_jax
  S = jax.ShapeDtypeStruct
except Exception:  # pragma: no cover
  pass


def mesh_of(n):
  devices = jax.devices()
  if len(devices) < n:
    raise unittest.SkipTest(f"needs {n} CPU devices (XLA_FLAGS="
                            "--xla_force_host_platform_device_count=4 before "
                            "JAX starts); this process has {len(devices)}")
  return jax.sharding.Mesh(np.array(devices[:n]), ("x",))


def gather_fn(n):
  mesh = mesh_of(n)
  return lambda x: all_gather.all_gather(x, mesh=mesh, axis_name="x")


# Mosaic ops of a multi-device kernel, counted in both modules.
COMM_OPS = ("tpu.device_id", "tpu.sem_barrier", "tpu.sem_signal",
            "tpu.sem_wait", "tpu.enqueue_dma", "tpu.wait_dma2",
            "tpu.memref_slice", "tpu.memref_squeeze")


@skip_without_jax
class MultiDevice(PallascCase):

  def test_all_gather_exports(self):
    (c,) = self.export(gather_fn(4), S((32, 128), jnp.float32))
    for op in ("pallas.device_id", "pallas.barrier_semaphore",
               "pallas.remote_semaphore_signal", "pallas.remote_dma_start",
               "pallas.remote_dma_wait send", "pallas.dma_start"):
      self.assertIn(op, c.kernel_mlir)
    self.assertEqual(c.spec["compiler_params"], {"tpu": {"collective_id": 0}})
    self.assertEqual(c.spec["outputs"], [{"shape": [4, 8, 128],
                                          "dtype": "f32"}])
    self.assertEqual(len(c.spec["scratch_shapes"]), 4)

  def test_all_gather_tpu_matches_jax_lowering(self):
    # Signature, attributes and backend config (has_communication and
    # collective_id) as jax.export(..., platforms=["tpu"]) writes them, and
    # the same number of each Mosaic op that communicates.
    for n in (2, 4):
      with self.subTest(devices=n):
        a, b, ours_cfg, theirs_cfg = self.tpu_against_jax(
            gather_fn(n), [S((8 * n, 128), jnp.float32)])
        self.assert_same_tpu_call(a, b, ours_cfg, theirs_cfg)
        self.assertTrue(ours_cfg["custom_call_config"]["has_communication"])
        self.assertEqual(ours_cfg["custom_call_config"]["collective_id"], 0)
        for op in COMM_OPS:
          self.assertEqual(a["kernel"]["ops"][op], b["kernel"]["ops"][op], op)

  def test_cpu_run_refuses(self):
    # `pallasc run` runs one device: one located line naming the op, exit 1,
    # no output file.
    (c,) = self.export(gather_fn(2), S((16, 128), jnp.float32))
    x = os.path.join(self.dir, "x.npy")
    save_npy(x, np.zeros((8, 128), np.float32))
    o = os.path.join(self.dir, "o.npy")
    r = self.pallasc("run", c.paths[0], "--spec", c.paths[1], "--input", x,
                     "--output", o, expect=1)
    # One diagnostic (its source line and caret follow it).
    lines = [l for l in r.stderr.splitlines() if "error" in l]
    self.assertEqual(len(lines), 1, r.stderr)
    self.assertRegex(lines[0], r"all_gather.py:\d+:\d+: error: "
                     r"'pallas.device_id' op communicates across devices "
                     r"\(this device's id in the mesh \(lax.axis_index\)\); "
                     r"target cpu runs one device")
    self.assertFalse(os.path.exists(o))

  def test_gpu_targets_refuse(self):
    (c,) = self.export(gather_fn(2), S((16, 128), jnp.float32))
    for t in ("cuda:sm_90a", "rocm:gfx942"):
      out = os.path.join(self.dir, "gpu-" + t.replace(":", "-"))
      r = self.pallasc(c.paths[0], "--spec", c.paths[1], "--target", t, "-o",
                       out, expect=1)
      self.assertIn("'pallas.device_id' op communicates across devices", r.stderr)
      self.assertIn(f"target {t} runs one device", r.stderr)
      self.assertFalse(os.path.exists(out) and os.listdir(out))

  def test_remote_signal_on_gpu_refused(self):
    # A signal to another device (LOGICAL id, no axis_index) is refused by
    # its own name.
    def kernel(x_ref, o_ref, sem):
      pl.semaphore_signal(sem, 1, device_id=1,  # remote
                          device_id_type=pl.DeviceIdType.LOGICAL)
      pl.semaphore_wait(sem, 1)
      o_ref[...] = x_ref[...]
    fn = lambda x: pl.pallas_call(
        kernel, scratch_shapes=[pltpu.SemaphoreType.REGULAR],
        out_shape=S((8, 128), jnp.float32))(x)
    (c,) = self.export(fn, S((8, 128), jnp.float32))
    self.assertIn("pallas.remote_semaphore_signal", c.kernel_mlir)
    out = os.path.join(self.dir, "gpu")
    r = self.pallasc(c.paths[0], "--spec", c.paths[1], "--target",
                     "cuda:sm_90a", "-o", out, expect=1)
    self.assertIn(f":{line_of(kernel, '# remote')}:", r.stderr)
    self.assertIn("'pallas.remote_semaphore_signal' op communicates across "
                  "devices (a signal to another device); target cuda:sm_90a",
                  r.stderr)

  def test_axis_index_outside_shard_map(self):
    def kernel(o_ref):
      o_ref[...] = jnp.full((8, 128), jax.lax.axis_index("x"), jnp.int32)
    fn = jax.vmap(lambda: pl.pallas_call(
        kernel, out_shape=S((8, 128), jnp.int32))(), axis_size=2,
        axis_name="x")
    with self.assertRaises(pallasc_jax.ExportError) as cm:
      pallasc_jax.trace(fn)
    self.assertIn("'axis_index' of axis 'x' needs the kernel to run under "
                  "jax.shard_map", cm.exception.message)


if __name__ == "__main__":
  unittest.main()
