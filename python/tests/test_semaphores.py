"""Local TPU semaphores (pl.semaphore_signal / semaphore_wait /
semaphore_read on pltpu.SemaphoreType.REGULAR scratch): exported, run with
`pallasc run` against JAX's interpret mode, compiled for the TPU and compared
with JAX's own Mosaic lowering; the GPU targets and the multi-device forms
are refused by name."""

import os
import unittest

from harness import PallascCase, line_of, skip_without_jax

try:
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import tpu as pltpu
  import pallasc_jax
  S = jax.ShapeDtypeStruct
except Exception:  # pragma: no cover
  pass


def counter_kernel(x_ref, o_ref, sem):
  # Each of the 4 programs signals sem[i % 2] by 2 and sem[1] by 1, waits
  # one off sem[0] and adds 10 * sem[0] + sem[1] to its block: the counters
  # persist across grid steps and start at 0.
  i = pl.program_id(0)
  pl.semaphore_signal(sem.at[i % 2], 2)
  pl.semaphore_signal(sem.at[1], 1)
  pl.semaphore_wait(sem.at[0], 1)
  v = pl.semaphore_read(sem.at[0]) * 10 + pl.semaphore_read(sem.at[1])
  o_ref[...] = x_ref[...] + v.astype(jnp.float32)


def counter(x):
  return pl.pallas_call(
      counter_kernel, grid=(4,),
      in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
      scratch_shapes=[pltpu.SemaphoreType.REGULAR((2,))],
      out_shape=S((32, 128), jnp.float32))(x)


@skip_without_jax
class Semaphores(PallascCase):

  def test_counter_matches_interpret_mode(self):
    (c,) = self.export(counter, S((32, 128), jnp.float32))
    self.assertIn("pallas.semaphore_signal", c.kernel_mlir)
    self.assertIn("pallas.semaphore_wait", c.kernel_mlir)
    self.assertIn("pallas.semaphore_read", c.kernel_mlir)
    self.assertEqual(c.spec["scratch_shapes"], [
        {"shape": [2], "dtype": "i32", "memory_space": "semaphore"}])
    self.check_call(c, targets=["tpu"])

  def test_scalar_semaphore(self):
    # A rank-0 semaphore (SemaphoreType.REGULAR without a shape), signalled
    # with a traced amount.
    def kernel(x_ref, o_ref, sem):
      pl.semaphore_signal(sem, pl.program_id(0) + 1)
      o_ref[...] = x_ref[...] * pl.semaphore_read(sem).astype(jnp.float32)
    fn = lambda x: pl.pallas_call(
        kernel, grid=(3,),
        in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
        scratch_shapes=[pltpu.SemaphoreType.REGULAR],
        out_shape=S((24, 128), jnp.float32))(x)
    (c,) = self.export(fn, S((24, 128), jnp.float32))
    self.check_call(c, targets=["tpu"])

  def test_tpu_module_matches_jax_lowering(self):
    # Signature, attributes, transforms and backend config as JAX's
    # jax.export(..., platforms=["tpu"]) writes them; the body has JAX's
    # semaphore ops (memref_slice + memref_squeeze + sem_signal/wait/read).
    a, b, ours_cfg, theirs_cfg = self.tpu_against_jax(
        counter, [S((32, 128), jnp.float32)])
    self.assert_same_tpu_call(a, b, ours_cfg, theirs_cfg)
    self.assertIn("memref<2x!tpu.semaphore, #tpu.memory_space<semaphore_mem>>",
                  a["kernel"]["type"])
    for op in ("tpu.sem_signal", "tpu.sem_wait", "tpu.sem_read",
               "tpu.memref_slice", "tpu.memref_squeeze"):
      self.assertEqual(a["kernel"]["ops"][op], b["kernel"]["ops"][op], op)

  def test_gpu_targets_refuse(self):
    (c,) = self.export(counter, S((32, 128), jnp.float32))
    for t in ("cuda:sm_90a", "rocm:gfx942"):
      out = os.path.join(self.dir, "gpu-" + t.replace(":", "-"))
      r = self.pallasc(c.paths[0], "--spec", c.paths[1], "--target", t, "-o",
                       out, expect=1)
      self.assertIn("'pallas.semaphore_signal' op is a TPU local semaphore "
                    f"(pltpu.SemaphoreType.REGULAR); target {t} has no "
                    "lowering for it", r.stderr)
      self.assertFalse(os.path.exists(out) and os.listdir(out))

  def test_unsatisfiable_wait_is_a_runtime_error(self):
    # Program 0 waits for 2 on a semaphore nobody signalled: on the CPU's
    # one-thread grid walk that wait never returns, so the run stops.
    def kernel(x_ref, o_ref, sem):
      pl.semaphore_signal(sem.at[0], 1)
      pl.semaphore_wait(sem.at[0], 2)  # never satisfied
      o_ref[...] = x_ref[...]
    fn = lambda x: pl.pallas_call(
        kernel, grid=(2,),
        in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
        scratch_shapes=[pltpu.SemaphoreType.REGULAR((1,))],
        out_shape=S((16, 128), jnp.float32))(x)
    (c,) = self.export(fn, S((16, 128), jnp.float32))
    import numpy as np
    from harness import save_npy
    x = os.path.join(self.dir, "x.npy")
    save_npy(x, np.zeros((16, 128), np.float32))
    o = os.path.join(self.dir, "o.npy")
    r = self.pallasc("run", c.paths[0], "--spec", c.paths[1], "--input", x,
                     "--output", o, expect=1)
    line = line_of(kernel, "never satisfied")
    self.assertRegex(r.stderr, rf"grid point \(0\) stopped: .*"
                     rf"test_semaphores.py:{line}:\d+: pl.semaphore_wait for 2 "
                     r"on a semaphore at 1")
    self.assertFalse(os.path.exists(o))

  def test_multi_device_forms_are_refused(self):
    def kernel(x_ref, o_ref, sem):
      pl.semaphore_signal(sem.at[0], 1, core_index=0)  # refused
      o_ref[...] = x_ref[...]
    fn = lambda x: pl.pallas_call(
        kernel, scratch_shapes=[pltpu.SemaphoreType.REGULAR((1,))],
        out_shape=S((8, 128), jnp.float32))(x)
    with self.assertRaises(pallasc_jax.ExportError) as cm:
      pallasc_jax.trace(fn, S((8, 128), jnp.float32))
    self.assertIn("'semaphore_signal' with core_index", cm.exception.message)
    self.assertIn(f":{line_of(kernel, 'refused')}:", cm.exception.where)


if __name__ == "__main__":
  unittest.main()
