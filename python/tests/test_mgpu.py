"""Mosaic GPU kernels (`plgpu.kernel`): tracing without a GPU through a device
description, the export of JAX's shipped `hopper_matmul_mgpu` to the
`pallas_mgpu` dialect (verified by pallasc-opt, compiled by pallasc for
cuda:sm_90a), and the exporter's refusals by name with their Python
line."""

import os
import re
import subprocess
import sys
import unittest

import numpy as np

from harness import (PALLASC, ROOT, PallascCase, line_of, load_npy, save_npy,
                     skip_without_jax)

try:
  import jax
  import jax.numpy as jnp
  from jax.experimental import pallas as pl
  from jax.experimental.pallas import mosaic_gpu as plgpu
  import pallasc_jax
  from pallasc_jax import device as D
  S = jax.ShapeDtypeStruct
except Exception:  # pragma: no cover
  pass

HERE = os.path.abspath(__file__)


def _import_op(name):
  """A shipped Mosaic GPU op module, or the reason it cannot be imported
  (hopper_matmul_mgpu imports jax._src.test_util, which needs absl-py)."""
  try:
    import importlib
    return importlib.import_module(
        f"jax.experimental.pallas.ops.gpu.{name}"), None
  except Exception as e:  # pragma: no cover - depends on the environment
    return None, f"{type(e).__name__}: {e}"


def pallasc_opt():
  if PALLASC:
    cand = os.path.join(os.path.dirname(PALLASC), "pallasc-opt")
    if os.path.exists(cand):
      return cand
  return None


def assert_opt_parses(case, text):
  """pallasc-opt (beside $PALLASC, when built) reads `text` back."""
  opt = pallasc_opt()
  if opt:
    r = subprocess.run([opt, "-"], input=text, capture_output=True,
                       text=True)
    case.assertEqual(r.returncode, 0, r.stderr)


@skip_without_jax
class Devices(unittest.TestCase):

  def test_named_and_custom(self):
    h = D.parse("h100")
    self.assertEqual((h.sm_count, h.compute_capability), (132, (9, 0)))
    c = D.parse("h100:sms=2,cc=9.0,cuda=12090")
    self.assertEqual((c.sm_count, c.compute_capability, c.cuda_version),
                     (2, (9, 0), 12090))

  def test_bad_descriptions(self):
    with self.assertRaisesRegex(ValueError, "unknown device 'a100'"):
      D.parse("a100")
    with self.assertRaisesRegex(ValueError, "unknown field 'warps'"):
      D.parse("h100:warps=4")
    with self.assertRaisesRegex(ValueError, "'sms=0' is not sms=POSITIVE"):
      D.parse("h100:sms=0")

  def test_queries_answer_and_are_restored(self):
    from jax.extend import backend
    from jax._src import lib as jax_lib
    before = (backend.get_default_device, jax_lib.cuda_versions)
    with D.answering(D.parse("h100:sms=7,cuda=12090")):
      self.assertEqual(backend.get_default_device().core_count, 7)
      self.assertEqual(backend.get_default_device().compute_capability, "9.0")
      self.assertEqual(jax_lib.cuda_versions.cuda_runtime_get_version(),
                       12090)
    self.assertEqual((backend.get_default_device, jax_lib.cuda_versions),
                     before)

  def test_cli_rejects_a_bad_device(self):
    r = subprocess.run([sys.executable, "-m", "pallasc_jax", "x.py:f",
                        "--device", "z9", "-o", "unused"],
                       capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.path.join(
                           ROOT, "python")))
    self.assertEqual(r.returncode, 2, r.stderr)
    self.assertIn("pallasc-export: error: unknown device 'z9'", r.stderr)


class HopperMatmulCase(PallascCase):
  """JAX's shipped hopper_matmul_mgpu (self.hm) and its export."""

  def setUp(self):
    super().setUp()
    self.hm, why = _import_op("hopper_matmul_mgpu")
    if self.hm is None:
      self.skipTest(f"cannot import hopper_matmul_mgpu ({why}); "
                    "pip install absl-py")

  def export_matmul(self, dtype, config, n=256, device="h100:sms=2",
                    sub="out"):
    """Exports the [n, n] x [n, n] matmul into self.dir/sub. Returns the
    kernel's .mlir path and text."""
    hm = self.hm
    a = S((n, n), dtype)
    out = os.path.join(self.dir, sub)
    paths = pallasc_jax.export(lambda x, y: hm.matmul(x, y, None, config), a,
                               a, out_dir=out, device=device)
    mlir = [p for p in paths if p.endswith(".mlir")]
    self.assertEqual(len(mlir), 1)
    with open(mlir[0]) as f:
      return mlir[0], f.read()


@skip_without_jax
class HopperMatmul(HopperMatmulCase):

  def check_ir(self, path, text, elem):
    for op in ("pallas_mgpu.kernel", "pallas_mgpu.alloc_smem",
               "pallas_mgpu.alloc_barriers", "pallas_mgpu.alloc_acc",
               "pallas_mgpu.copy_gmem_to_smem", "pallas_mgpu.barrier_wait",
               "pallas_mgpu.barrier_arrive", "pallas_mgpu.wgmma ",
               "pallas_mgpu.wgmma_wait", "pallas_mgpu.acc_read",
               "pallas_mgpu.store", "pallas_mgpu.commit_smem",
               "pallas_mgpu.copy_smem_to_gmem",
               "pallas_mgpu.wait_smem_to_gmem", "pallas_mgpu.commit_group",
               "pallas_mgpu.set_max_registers \"decrease\" 40",
               "pallas_mgpu.axis_index \"wg\"", "memref.subview"):
      self.assertIn(op, text)
    self.assertIn(f"x{elem}, #pallas_mgpu.smem<tiling = [8, 64], "
                  "swizzle = 128>>", text)
    # Every op is located at a Python line of the op's source.
    self.assertRegex(text, r'#loc\d+ = loc\(".*hopper_matmul_mgpu.py":\d+:\d+\)')
    for line in text.splitlines():
      if re.search(r"(^|= )(pallas_mgpu\.|memref\.subview)", line.strip()):
        self.assertRegex(line, r"loc\(#loc\d+\)", line)
    opt = pallasc_opt()
    if opt:
      r = subprocess.run([opt, path], capture_output=True, text=True)
      self.assertEqual(r.returncode, 0, r.stderr)

  def test_f16_and_bf16_two_tilings(self):
    hm = self.hm
    configs = [hm.TuningConfig(tile_m=128, tile_n=128, tile_k=64,
                               max_concurrent_steps=4),
               hm.TuningConfig(tile_m=64, tile_n=64, tile_k=64,
                               max_concurrent_steps=2,
                               wg_dimension=hm.MatmulDimension.M)]
    for dtype, elem in ((jnp.float16, "f16"), (jnp.bfloat16, "bf16")):
      for cfg in configs:
        with self.subTest(dtype=elem, tile=(cfg.tile_m, cfg.tile_n)):
          path, text = self.export_matmul(dtype, cfg)
          self.check_ir(path, text, elem)
          self.assertIn("grid = array<i64: 2>", text)
          self.assertIn("num_threads = 3", text)

  def test_device_sets_the_grid(self):
    hm = self.hm
    cfg = hm.TuningConfig(tile_m=128, tile_n=128, tile_k=64,
                          max_concurrent_steps=4)
    _, text = self.export_matmul(jnp.float16, cfg, device="h100")
    self.assertIn("grid = array<i64: 132>", text)

  def test_command_line_device(self):
    mod = os.path.join(self.dir, "mm.py")
    with open(mod, "w") as f:
      f.write("from jax.experimental.pallas.ops.gpu import hopper_matmul_mgpu "
              "as hm\n"
              "def matmul(a, b):\n"
              "  return hm.matmul(a, b, None, hm.TuningConfig(128, 128, 64, "
              "4))\n")
    out = os.path.join(self.dir, "cli")
    r = subprocess.run([sys.executable, "-m", "pallasc_jax", f"{mod}:matmul",
                        "--arg", "f16[256,256]", "--arg", "f16[256,256]",
                        "--device", "h100:sms=4", "-o", out],
                       capture_output=True, text=True, cwd=self.dir,
                       env=dict(os.environ, PYTHONPATH=os.path.join(
                           ROOT, "python")))
    self.assertEqual(r.returncode, 0, r.stderr)
    self.assertEqual(sorted(os.listdir(out)), ["kernel.json", "kernel.mlir"])
    with open(os.path.join(out, "kernel.mlir")) as f:
      self.assertIn("grid = array<i64: 4>", f.read())

  def test_pallasc_compiles_for_sm_90a(self):
    # The driver routes the exported kernel through pallas-mgpu-to-gpu: PTX
    # with wgmma and TMA, the manifest's launch (384 threads, the tensor
    # maps), the launcher; other chips are refused.
    hm = self.hm
    cfg = hm.TuningConfig(tile_m=64, tile_n=64, tile_k=64,
                          max_concurrent_steps=2,
                          wg_dimension=hm.MatmulDimension.M)
    path, _ = self.export_matmul(jnp.float16, cfg, n=128)
    out = os.path.join(self.dir, "compiled")
    r = subprocess.run([PALLASC, path, "--spec", path[:-5] + ".json",
                        "--target", "cuda:sm_90a", "--emit=header,lib",
                        "-o", out], capture_output=True, text=True,
                       env=dict(os.environ, PTXAS="none"))
    self.assertEqual(r.returncode, 0, r.stderr)
    self.assertEqual(sorted(os.listdir(out)),
                     ["kernel.a", "kernel.h", "kernel.manifest.json",
                      "kernel.sm_90a.ptx"])
    import json
    with open(os.path.join(out, "kernel.manifest.json")) as f:
      m = json.load(f)
    launch = m["targets"][0]["launch"]
    self.assertEqual(launch["block"], [384, 1, 1])
    self.assertEqual(launch["grid"], [2, 1, 1])
    # The inputs' tensor maps (TMA loads), then the output's (the
    # epilogue's TMA stores).
    self.assertEqual([p["kind"] for p in launch["params"]],
                     ["pointer"] * 3 + ["tensor_map"] * 3)
    self.assertEqual([p["operand"] for p in launch["params"][3:]],
                     ["inputs[0]", "inputs[1]", "outputs[0]"])
    self.assertEqual(m["mosaic_gpu"]["num_threads"], 3)
    self.assertEqual([o["shape"] for o in m["operands"]], [[128, 128]] * 3)
    with open(os.path.join(out, "kernel.sm_90a.ptx")) as f:
      ptx = f.read()
    self.assertIn("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", ptx)
    self.assertIn("cp.async.bulk.tensor.2d", ptx)
    self.assertIn("cp.async.bulk.tensor.2d.global.shared::cta", ptx)
    r = subprocess.run([PALLASC, path, "--spec", path[:-5] + ".json",
                        "--target", "cuda:sm_80", "-o",
                        os.path.join(self.dir, "sm80")],
                       capture_output=True, text=True)
    self.assertEqual(r.returncode, 1, r.stderr)
    self.assertRegex(r.stderr.splitlines()[0],
                     r"hopper_matmul_mgpu.py:\d+:\d+: error: "
                     r"'pallas_mgpu.wgmma' needs wgmma.mma_async, which "
                     r"target 'cuda:sm_80' \(Ampere\) does not have")


# JAX's Mosaic GPU interpret mode runs the shipped matmul on the CPU with the
# SM count stubbed (few SMs: it runs a Python thread per warpgroup and block).
# A thread that raises leaves the others waiting on a barrier: it runs in a
# child process under a time-out.
_ORACLE = r"""
import sys, numpy as np, jax.numpy as jnp
from pallasc_jax import device as D
from jax._src.pallas.mosaic_gpu.interpret.params import (
    InterpretGPUParams, force_gpu_interpret_mode)
from jax.experimental.pallas.ops.gpu import hopper_matmul_mgpu as hm
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
if a.dtype.kind == "V":  # bf16, as np.save writes it
  a, b = a.view(jnp.bfloat16), b.view(jnp.bfloat16)
cfg = hm.TuningConfig(tile_m=int(sys.argv[4]), tile_n=int(sys.argv[4]),
                      tile_k=64, max_concurrent_steps=2,
                      wg_dimension=hm.MatmulDimension.M)
with D.answering(D.parse(sys.argv[5])), force_gpu_interpret_mode(
    InterpretGPUParams()):
  np.save(sys.argv[3], np.asarray(hm.matmul(jnp.asarray(a), jnp.asarray(b),
                                            None, cfg)))
"""


@skip_without_jax
class HopperMatmulRun(HopperMatmulCase):
  """`pallasc run --target cuda:sm_90a --emulate` on the exported shipped
  matmul (the emulator runs the compiled kernel's warpgroups, TMA copies,
  mbarriers, wgmma and named barriers), compared with numpy's f32 product
  and, for the 64x64 tiles in f16 and bf16, with JAX's Mosaic GPU interpret
  mode (which cannot run the cluster configuration: JAX 0.10.2 has no
  uninitialized value for a cluster barrier). Tolerances (normwise:
  the largest error over the largest magnitude) are the issue's: f16 2e-3,
  bf16 1.6e-2."""

  def run_matmul(self, dtype, config, n, seed):
    d = os.path.join(self.dir, f"mm{seed}")
    mlir, _ = self.export_matmul(dtype, config, n, sub=f"mm{seed}")
    rng = np.random.default_rng(seed)
    x, y = (rng.standard_normal((n, n)).astype(np.float32).astype(dtype)
            for _ in range(2))
    files = []
    for i, v in enumerate((x, y)):
      files.append(os.path.join(d, f"in{i}.npy"))
      save_npy(files[-1], v)
    out = os.path.join(d, "out.npy")
    # --check: the same bits on the emulator's second schedule (no race).
    self.pallasc("run", mlir, "--spec", mlir[:-5] + ".json", "--target",
                 "cuda:sm_90a", "--emulate", "--check", "--input", files[0],
                 "--input", files[1], "--output", out)
    got = load_npy(out, dtype).astype(np.float32)
    want = x.astype(np.float32) @ y.astype(np.float32)
    return files, got, want

  def assert_close(self, got, want, tol, what):
    err = float(np.abs(got - want).max() / np.abs(want).max())
    self.assertLessEqual(err, tol, f"{what}: normwise error {err}")

  def test_f16_cluster_multicast_against_numpy(self):
    """A cluster-2 configuration (cluster_dimension=M): the A tiles
    multicast to both blocks of a cluster, the slots released through a
    plgpu.ClusterBarrier; compiled for sm_90a (multicast::cluster and mapa
    in the PTX) and emulated with --check, against numpy."""
    hm = self.hm
    cfg = hm.TuningConfig(tile_m=128, tile_n=128, tile_k=64,
                          max_concurrent_steps=2,
                          cluster_dimension=hm.MatmulDimension.M)
    files, got, want = self.run_matmul(jnp.float16, cfg, 256, 3)
    self.assert_close(got, want, 2e-3, "numpy")
    d = os.path.dirname(files[0])
    mlir = [os.path.join(d, n) for n in os.listdir(d) if n.endswith(".mlir")][0]
    with open(mlir) as fh:
      text = fh.read()
    self.assertIn("cluster = array<i64: 2>", text)
    self.assertIn('{collective_axes = ["cluster"]}', text)
    self.pallasc(mlir, "--spec", mlir[:-5] + ".json", "--target",
                 "cuda:sm_90a", "-o", os.path.join(d, "ptx"))
    ptx = [n for n in os.listdir(os.path.join(d, "ptx")) if n.endswith(".ptx")][0]
    with open(os.path.join(d, "ptx", ptx)) as fh:
      text = fh.read()
    self.assertIn("multicast::cluster", text)
    self.assertIn("mapa.shared::cluster", text)
    self.assertIn("wgmma.mma_async", text)

  def test_f16_64x64_against_numpy_and_interpret_mode(self):
    self.check_64x64(jnp.float16, 1, 2e-3)

  def test_bf16_64x64_against_numpy_and_interpret_mode(self):
    self.check_64x64(jnp.bfloat16, 2, 1.6e-2)

  def check_64x64(self, dtype, seed, tol):
    """The 64x64-tile matmul (n = 128) against numpy and against JAX's Mosaic
    GPU interpret mode, both within `tol`."""
    hm = self.hm
    cfg = hm.TuningConfig(tile_m=64, tile_n=64, tile_k=64,
                          max_concurrent_steps=2,
                          wg_dimension=hm.MatmulDimension.M)
    files, got, want = self.run_matmul(dtype, cfg, 128, seed)
    self.assert_close(got, want, tol, "numpy")
    self.assert_close(got, self.interpret_mode(files, dtype), tol,
                      "interpret mode")

  def interpret_mode(self, files, dtype):
    """JAX's Mosaic GPU interpret mode of the 64x64-tile matmul on the
    inputs in `files`, as float32."""
    ref = os.path.join(self.dir, "interpret.npy")
    try:
      r = subprocess.run([sys.executable, "-c", _ORACLE, files[0], files[1],
                          ref, "64", "h100:sms=2"], capture_output=True,
                         text=True, timeout=240,
                         env=dict(os.environ, PYTHONPATH=os.path.join(
                             ROOT, "python")))
    except subprocess.TimeoutExpired:
      self.fail("JAX's Mosaic GPU interpret mode did not finish in 240 s "
                "(a thread that raised leaves the others at a barrier)")
    if r.returncode != 0 and "InterpretGPUParams" in r.stderr:
      self.skipTest("this JAX has no Mosaic GPU interpret mode")
    self.assertEqual(r.returncode, 0, r.stderr[-3000:])
    return load_npy(ref, dtype).astype(np.float32)

  def test_f16_128x128_against_numpy(self):
    # The 128x128 tile needs n divisible by 256; 4 stages.
    hm = self.hm
    cfg = hm.TuningConfig(tile_m=128, tile_n=128, tile_k=64,
                          max_concurrent_steps=4)
    _, got, want = self.run_matmul(jnp.float16, cfg, 256, 3)
    self.assert_close(got, want, 2e-3, "numpy")


@skip_without_jax
class AttentionRun(PallascCase):
  """JAX's shipped attention_mgpu forward (causal and not), exported with
  `--device h100`, compiled for cuda:sm_90a (4-D TMA copies of its
  [batch, seq, heads, head_dim] operands, wgmma with `a` in registers and a
  transposed `b`, the online softmax in registers) and run with `pallasc
  run --emulate`, compared with the op's own reference function (JAX's
  Mosaic GPU interpret mode cannot run it): f16, normwise within 2e-3."""

  def test_forward_causal_and_not_against_the_reference(self):
    am, why = _import_op("attention_mgpu")
    if am is None:
      self.skipTest(f"cannot import attention_mgpu ({why})")
    shape = (1, 128, 1, 64)
    q = S(shape, jnp.float16)
    rng = np.random.default_rng(5)
    x = [rng.standard_normal(shape).astype(np.float16) for _ in range(3)]
    files = []
    for i, v in enumerate(x):
      files.append(os.path.join(self.dir, f"in{i}.npy"))
      save_npy(files[-1], v)
    for causal in (False, True):
      with self.subTest(causal=causal):
        cfg = am.TuningConfig(block_q=64, block_kv=64,
                              max_concurrent_steps=2, causal=causal)
        d = os.path.join(self.dir, f"causal{int(causal)}")
        paths = pallasc_jax.export(
            lambda a, b, c: am.attention(a, b, c, cfg), q, q, q, out_dir=d,
            device="h100")
        mlir = [p for p in paths if p.endswith(".mlir")][0]
        spec = mlir[:-5] + ".json"
        r = subprocess.run([PALLASC, mlir, "--spec", spec, "--target",
                            "cuda:sm_90a", "-o", os.path.join(d, "out")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("spill", r.stderr)
        ptx = open(os.path.join(d, "out", os.path.basename(mlir)[:-5] +
                                ".sm_90a.ptx")).read()
        self.assertIn("cp.async.bulk.tensor.4d.shared::cluster.global", ptx)
        self.assertIn("cp.async.bulk.tensor.4d.global.shared::cta", ptx)
        self.assertIn("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",
                      ptx)
        out = os.path.join(d, "o.npy")
        self.pallasc("run", mlir, "--spec", spec, "--target", "cuda:sm_90a",
                     "--emulate", "--check", "--input", files[0], "--input",
                     files[1], "--input", files[2], "--output", out)
        got = load_npy(out, np.float16).astype(np.float32)
        want = np.asarray(am.attention_reference(
            *(jnp.asarray(v) for v in x), causal=causal)).astype(np.float32)
        err = float(np.abs(got - want).max() / np.abs(want).max())
        self.assertLessEqual(err, 2e-3, f"normwise error {err}")


def _kernel(body, scratch=()):
  def f(x):
    return plgpu.kernel(body, out_type=S((128, 128), jnp.float32), grid=(1,),
                        grid_names=("g",), num_threads=1, thread_name="wg",
                        scratch_types=scratch)(x)
  return f


@skip_without_jax
class Refusals(unittest.TestCase):
  """Each refusal names the primitive (or allocation) and its Python line."""

  def refused(self, body, scratch, needle, message):
    with self.assertRaises(pallasc_jax.ExportError) as cm:
      pallasc_jax.trace(_kernel(body, scratch), S((128, 128), jnp.float32),
                        device="h100")
    e = cm.exception
    self.assertEqual(e.where, f"{HERE}:{line_of(body, needle)}:" +
                     e.where.rsplit(":", 1)[1])
    self.assertIn(message, e.message)

  def test_tcgen05(self):
    def body(x_ref, o_ref, a, t, b):
      plgpu.tcgen05_mma(t, a, a, b, accumulate=False)
    sm = plgpu.SMEM((128, 128), jnp.float16,
                    transforms=(plgpu.TilingTransform((8, 64)),
                                plgpu.SwizzleTransform(128)))
    self.refused(body, (sm, plgpu.TMEM((128, 128), jnp.float32),
                        plgpu.Barrier(orders_tensor_core=True)),
                 "tcgen05_mma(", "primitive 'tcgen05_mma' is Blackwell-only")

  def test_tmem(self):
    def body(x_ref, o_ref, t):
      pass
    self.refused(body, (plgpu.TMEM((128, 128), jnp.float32),), "def body",
                 "TMEM (plgpu.TMEM) is Blackwell-only")

  def test_multimem(self):
    def body(x_ref, o_ref, s):
      plgpu.multimem_store(s[...], o_ref, "x")
    self.refused(body, (plgpu.SMEM((128, 128), jnp.float32),),
                 "multimem_store(", "primitive 'multimem_store' communicates "
                 "across devices")

  def test_semaphore(self):
    def body(x_ref, o_ref, s):
      pl.semaphore_signal(s, 1, device_id=0)
    self.refused(body, (plgpu.SemaphoreType.REGULAR,), "semaphore_signal(",
                 "primitive 'semaphore_signal' communicates across devices")

  def test_cluster_cancel(self):
    def body(x_ref, o_ref, r, b):
      plgpu.try_cluster_cancel(r, b)
    self.refused(body, (plgpu.SMEM((4,), jnp.uint32), plgpu.Barrier()),
                 "try_cluster_cancel(", "primitive 'try_cluster_cancel' "
                 "(cluster launch control / cluster cancel)")

  def test_inline_mgpu(self):
    def body(x_ref, o_ref):
      @plgpu.inline_mgpu(arg_types=(), return_type=None)
      def foo(ctx):
        pass
      foo()
    self.refused(body, (), "foo()", "primitive 'inline_mgpu' embeds Mosaic "
                 "GPU Python code")

  def test_not_translated(self):
    def body(x_ref, o_ref, s):
      s[...] = jax.lax.lgamma(s[...])
    self.refused(body, (plgpu.SMEM((128, 128), jnp.float32),), "lgamma",
                 "primitive 'lgamma' is not supported in a Mosaic GPU kernel")

  def test_barrier_without_index(self):
    def body(x_ref, o_ref, b):
      plgpu.barrier_wait(b)
    self.refused(body, (plgpu.Barrier(num_barriers=2),), "barrier_wait(",
                 "an array of 2 barriers used without an index")


@skip_without_jax
class SmallKernel(unittest.TestCase):
  """The primitives the shipped matmul does not use: get (a load of SMEM),
  layout_cast, optimization_barrier; and a kernel with one thread."""

  def test_smem_load_layout_cast(self):
    from jax import lax

    def body(x_ref, o_ref, smem, bar):
      i = lax.axis_index("g")
      plgpu.copy_gmem_to_smem(x_ref.at[pl.ds(i * 64, 64)], smem, bar.at[0])
      plgpu.barrier_wait(bar.at[0])
      v = smem[...]
      r = plgpu.layout_cast(jnp.max(v, axis=1), plgpu.Layout.WGMMA.reduce(1))
      v, r = lax.optimization_barrier((v, r))
      smem[...] = v - r[:, None]
      plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(smem, o_ref.at[pl.ds(i * 64, 64)])
      plgpu.wait_smem_to_gmem(0)
    f = plgpu.kernel(body, out_type=S((128, 128), jnp.float32), grid=(2,),
                     grid_names=("g",),
                     scratch_types=(plgpu.SMEM((64, 128), jnp.float32),
                                    plgpu.Barrier()))
    (c,) = pallasc_jax.trace(f, S((128, 128), jnp.float32))
    text = c.kernel_mlir
    self.assertEqual(c.spec["grid"], [2])
    self.assertEqual(c.spec["in_specs"], [{"memory_space": "any"}])
    self.assertIn("pallas_mgpu.kernel @body(", text)
    self.assertIn("grid = array<i64: 2>, grid_names = [\"g\"]", text)
    self.assertIn("pallas_mgpu.alloc_smem : memref<64x128xf32, "
                  "#pallas_mgpu.smem>", text)
    self.assertIn("!pallas_mgpu.barrier<1, arrivals = 1>", text)
    self.assertRegex(text, r"memref.subview %in0\[%\d+, 0\] \[64, 128\] "
                     r"\[1, 1\] : memref<128x128xf32> to memref<64x128xf32, "
                     r"strided<\[128, 1\], offset: \?>>")
    self.assertRegex(text, r"pallas_mgpu.load %smem\d+ : .* -> "
                     r"tensor<64x128xf32> loc\(#loc\d+\)")
    self.assertRegex(text, r"pallas_mgpu.layout_cast %\d+ : tensor<64xf32> "
                     r"to #pallas_mgpu.layout<\"wgmma\", reduced = \[1\]>")
    self.assertIn("pallas_mgpu.store ", text)
    # Each op is located at its line of this file.
    store_line = line_of(body, "smem[...] = v - r")
    self.assertRegex(text, rf'#loc\d+ = loc\(".*test_mgpu.py":{store_line}:')
    assert_opt_parses(self, text)


@skip_without_jax
class ClusterRun(PallascCase):
  """plgpu.kernel(..., cluster=(2,)): the cluster axis exported as a mesh
  axis, `lax.axis_index` over it; compiled for sm_90a in clusters of two
  blocks and run on the emulator, against numpy."""

  def emulate_cluster_copy(self, body, out_rows, smem_rows, sub, needle):
    """Exports `body` as a kernel over a [128, 64] f16 input and an
    [out_rows, 64] output, on a grid of 2 ("g") in clusters of 2 ("c"), with
    a tiled, swizzled [smem_rows, 64] buffer and a barrier; checks that its
    IR holds `needle`; runs it on the sm_90a emulator with --check. Returns
    the input and the output."""
    tiled = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))
    f = plgpu.kernel(body, out_type=S((out_rows, 64), jnp.float16),
                     grid=(2,), grid_names=("g",), cluster=(2,),
                     cluster_names=("c",),
                     scratch_types=(plgpu.SMEM((smem_rows, 64), jnp.float16,
                                               transforms=tiled),
                                    plgpu.Barrier()))
    d = os.path.join(self.dir, sub)
    mlir = self.export_with(f, d, needle)
    return self.emulate_rows(mlir, d)

  def export_with(self, f, d, needle):
    """Exports `f` over a [128, 64] f16 input into `d` for an h100; checks
    that its IR holds `needle`. Returns the kernel's .mlir path."""
    paths = pallasc_jax.export(f, S((128, 64), jnp.float16), out_dir=d,
                               device="h100")
    mlir = [p for p in paths if p.endswith(".mlir")][0]
    with open(mlir) as fh:
      self.assertIn(needle, fh.read())
    return mlir

  def emulate_rows(self, mlir, d):
    """Runs the exported kernel `mlir` on the sm_90a emulator with --check
    over a [128, 64] f16 input of distinct rows. Returns the input and the
    output."""
    x = (np.arange(128 * 64) % 1999 - 999).reshape(128, 64).astype(
        np.float16)
    xin, out = os.path.join(d, "x.npy"), os.path.join(d, "o.npy")
    save_npy(xin, x)
    self.pallasc("run", mlir, "--spec", mlir[:-5] + ".json", "--target",
                 "cuda:sm_90a", "--emulate", "--check", "--input", xin,
                 "--output", out)
    return x, load_npy(out, np.float16)

  def test_cluster_axis_index(self):
    from jax import lax

    def body(x_ref, o_ref, smem, bar):
      g = lax.axis_index("g")
      c = lax.axis_index("c")
      # Cluster g's block c copies row block 2g + c to row block 2c + g.
      plgpu.copy_gmem_to_smem(x_ref.at[pl.ds((2 * g + c) * 32, 32)], smem,
                              bar.at[0])
      plgpu.barrier_wait(bar.at[0])
      plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(smem, o_ref.at[pl.ds((2 * c + g) * 32, 32)])
      plgpu.wait_smem_to_gmem(0)
    x, got = self.emulate_cluster_copy(
        body, 128, 32, "cluster",
        'cluster = array<i64: 2>, cluster_names = ["c"]')
    want = np.concatenate([x[0:32], x[64:96], x[32:64], x[96:128]])
    np.testing.assert_array_equal(got, want)


  def test_cluster_barrier(self):
    """plgpu.ClusterBarrier over the cluster axis: exported with its
    collective axis, each block arrives on both blocks' barriers (mapa,
    barrier.cluster in the PTX) and waits for both before it stores its
    row block; emulated on both schedules (--check), against numpy."""
    from jax import lax

    def body(x_ref, o_ref, smem, bar, cbar):
      blk = 2 * lax.axis_index("g") + lax.axis_index("c")
      plgpu.copy_gmem_to_smem(x_ref.at[pl.ds(blk * 32, 32)], smem, bar.at[0])
      plgpu.barrier_wait(bar.at[0])
      plgpu.barrier_arrive(cbar.at[0])
      plgpu.barrier_wait(cbar.at[0])
      plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(smem, o_ref.at[pl.ds(blk * 32, 32)])
      plgpu.wait_smem_to_gmem(0)
    tiled = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))
    f = plgpu.kernel(body, out_type=S((128, 64), jnp.float16), grid=(2,),
                     grid_names=("g",), cluster=(2,), cluster_names=("c",),
                     scratch_types=(plgpu.SMEM((32, 64), jnp.float16,
                                               transforms=tiled),
                                    plgpu.Barrier(),
                                    plgpu.ClusterBarrier(
                                        collective_axes=("c",))))
    d = os.path.join(self.dir, "cbar")
    mlir = self.export_with(
        f, d, 'pallas_mgpu.alloc_barriers {collective_axes = ["c"]} : '
        '!pallas_mgpu.barrier<1, arrivals = 1>')
    self.pallasc(mlir, "--spec", mlir[:-5] + ".json", "--target",
                 "cuda:sm_90a", "-o", d)
    ptx = [n for n in os.listdir(d) if n.endswith(".ptx")][0]
    with open(os.path.join(d, ptx)) as fh:
      text = fh.read()
    self.assertIn("mapa.shared::cluster", text)
    self.assertIn("mbarrier.arrive.release.cluster.shared::cluster", text)
    self.assertIn("barrier.cluster.wait", text)
    x, got = self.emulate_rows(mlir, d)
    np.testing.assert_array_equal(got, x)

  def test_multicast(self):
    """copy_gmem_to_smem(..., collective_axes="c"): exported with its axis;
    both blocks of a cluster receive the cluster's 64-row tile (each loads
    32 rows for both) and store it, emulated with --check, against numpy."""
    from jax import lax

    def body(x_ref, o_ref, smem, bar):
      g, c = lax.axis_index("g"), lax.axis_index("c")
      plgpu.copy_gmem_to_smem(x_ref.at[pl.ds(g * 64, 64)], smem, bar.at[0],
                              collective_axes="c")
      plgpu.barrier_wait(bar.at[0])
      plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(smem, o_ref.at[pl.ds((2 * g + c) * 64, 64)])
      plgpu.wait_smem_to_gmem(0)
    x, got = self.emulate_cluster_copy(body, 256, 64, "mc",
                                       '{collective_axes = ["c"]}')
    want = np.concatenate([x[0:64], x[0:64], x[64:128], x[64:128]])
    np.testing.assert_array_equal(got, want)

  def test_cluster_barrier_refusals(self):
    """A cluster barrier over a grid axis or over two axes is refused with
    its Python line."""
    def make(axes, cluster, names):
      def body(x_ref, o_ref, cbar):
        plgpu.barrier_arrive(cbar.at[0])
        plgpu.barrier_wait(cbar.at[0])
      return plgpu.kernel(body, out_type=S((8,), jnp.float32), grid=(2,),
                          grid_names=("g",), cluster=cluster,
                          cluster_names=names,
                          scratch_types=(plgpu.ClusterBarrier(
                              collective_axes=axes),))
    for axes, cluster, names, msg in [
        (("g",), (2,), ("c",), "cluster barrier axis 'g' is not a cluster "
                               "axis of the kernel (c)"),
        (("c", "d"), (2, 2), ("c", "d"), "a cluster barrier over "
                                         "collective_axes=('c', 'd') is not "
                                         "supported")]:
      with self.assertRaises(pallasc_jax.ExportError) as e:
        pallasc_jax.export(make(axes, cluster, names), S((8,), jnp.float32),
                           out_dir=os.path.join(self.dir, "refused"),
                           device="h100")
      self.assertIn(msg, str(e.exception))
      self.assertIn("test_mgpu.py", str(e.exception))

  def test_multicast_refusal(self):
    """A multicast over a grid axis is refused with its Python line."""
    def body(x_ref, o_ref, smem, bar):
      plgpu.copy_gmem_to_smem(x_ref, smem, bar.at[0], collective_axes="g")
      plgpu.barrier_wait(bar.at[0])
    tiled = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))
    f = plgpu.kernel(body, out_type=S((64, 64), jnp.float16), grid=(2,),
                     grid_names=("g",), cluster=(2,), cluster_names=("c",),
                     scratch_types=(plgpu.SMEM((64, 64), jnp.float16,
                                               transforms=tiled),
                                    plgpu.Barrier()))
    with self.assertRaises(pallasc_jax.ExportError) as e:
      pallasc_jax.export(f, S((64, 64), jnp.float16),
                         out_dir=os.path.join(self.dir, "mcr"), device="h100")
    self.assertIn("copy_gmem_to_smem's collective axis 'g' is not a cluster "
                  "axis of the kernel (c)", str(e.exception))
    self.assertIn("test_mgpu.py", str(e.exception))


@skip_without_jax
class Attention(unittest.TestCase):

  def test_forward_causal_and_not(self):
    # attention_mgpu reads the CUDA runtime version while tracing (None on a
    # CPU jaxlib): the device description answers it.
    am, why = _import_op("attention_mgpu")
    if am is None:
      self.skipTest(f"cannot import attention_mgpu ({why})")
    q = S((1, 128, 1, 64), jnp.float16)
    for causal in (False, True):
      with self.subTest(causal=causal):
        cfg = am.TuningConfig(block_q=64, block_kv=64, max_concurrent_steps=2,
                              causal=causal)
        (c,) = pallasc_jax.trace(lambda a, b, d: am.attention(a, b, d, cfg),
                                 q, q, q, device="h100")
        text = c.kernel_mlir
        self.assertIn("num_threads = 3", text)
        # k_smem.T as wgmma's right operand; P from registers into an
        # accumulator that pl.run_state initializes.
        self.assertRegex(text, r"memref.transpose %v\d+ \(d0, d1\) -> "
                         r"\(d1, d0\)")
        self.assertRegex(text, r"pallas_mgpu.alloc_acc init\(%\d+ : "
                         r"tensor<64x64xf32>\)")
        self.assertRegex(text, r"pallas_mgpu.wgmma %acc\d+, %\d+, %v\d+ : "
                         r"memref<64x64xf32, #pallas_mgpu.acc>, "
                         r"tensor<64x64xf16>")
        self.assertIn('to #pallas_mgpu.layout<"wgmma", reduced = [1]>', text)
        if causal:
          self.assertIn("pallas.iota 1 : tensor<64x64xi32>", text)
        self.assertRegex(text, r'loc\(".*attention_mgpu.py":\d+:\d+\)')
        assert_opt_parses(self, text)

  def test_pipeline_emitter_variant_is_refused(self):
    # Its SMEM has no tiling/swizzle: Mosaic GPU infers them, pallasc-export
    # needs them explicit.
    am, why = _import_op("attention_mgpu")
    if am is None:
      self.skipTest(f"cannot import attention_mgpu ({why})")
    q = S((1, 128, 1, 64), jnp.float16)
    cfg = am.TuningConfig(block_q=64, block_kv=64, max_concurrent_steps=2)
    with self.assertRaises(pallasc_jax.ExportError) as cm:
      pallasc_jax.trace(
          lambda a, b, d: am.attention_with_pipeline_emitter(a, b, d, cfg),
          q, q, q, device="h100")
    self.assertRegex(str(cm.exception),
                     r"attention_mgpu.py:\d+:\d+: error: wgmma operand a is "
                     r"an SMEM ref without tiling and swizzle transforms")


if __name__ == "__main__":
  unittest.main()
