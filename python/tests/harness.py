"""Shared machinery of the golden tests: export with pallasc_jax, compile and
run with pallasc, compare with JAX's own interpret mode of the same
pallas_call equation."""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))

try:
  import jax
  import jax.numpy as jnp  # noqa: F401
  from jax.extend import core as jax_core
  jax.config.update("jax_platforms", "cpu")
  HAVE_JAX = True
except Exception as e:  # pragma: no cover
  HAVE_JAX = False
  JAX_ERROR = str(e)


def pallasc_binary():
  p = os.environ.get("PALLASC")
  if p:
    return p
  for cand in (os.path.join(ROOT, "build", "bin", "pallasc"),):
    if os.path.exists(cand):
      return cand
  return shutil.which("pallasc")


PALLASC = pallasc_binary()
GPU_TARGETS = ["cuda:sm_90a", "cuda:sm_80", "rocm:gfx942"]


def have_rocm_libs():
  return any(os.path.exists(os.path.join(r, "amdgcn", "bitcode", "ocml.bc"))
             for r in (os.environ.get("ROCM_PATH", "/opt/rocm"),
                       "/usr/lib/x86_64-linux-gnu"))


def gpu_targets():
  """GPU_TARGETS less the ROCm ones when ROCm's device libraries are absent."""
  return GPU_TARGETS if have_rocm_libs() else [
      t for t in GPU_TARGETS if not t.startswith("rocm")]


def line_of(fn, needle):
  """The line number of the first line of `fn`'s source containing `needle`."""
  src, start = inspect.getsourcelines(fn)
  for i, l in enumerate(src):
    if needle in l:
      return start + i
  raise AssertionError(needle)


def skip_without_jax(cls):
  if not HAVE_JAX:
    return unittest.skip(f"jax is not installed ({JAX_ERROR}); "
                         "pip install jax to run the JAX golden tests")(cls)
  if PALLASC is None:
    return unittest.skip("pallasc is not built (set PALLASC)")(cls)
  return cls


# Set by the jax-export ctest of a PALLASC_ENABLE_SANITIZERS build, where every
# test runs 4-5x slower: the slowest tests, whose code paths lighter tests of the
# same module also reach, run only in the plain build's jax-export test.
SANITIZED = os.environ.get("PALLASC_SANITIZED") == "1"


def plain_build_only(test):
  """Skips `test` under the sanitizer build (see SANITIZED)."""
  return unittest.skipIf(
      SANITIZED, "one of the slowest tests: the plain build's jax-export test "
      "runs it; the sanitizer build samples the rest")(test)


def random_inputs(avals, seed=0, ints=(0, 16)):
  rng = np.random.default_rng(seed)
  out = []
  for a in avals:
    dt = np.dtype(a.dtype)
    shape = tuple(a.shape)
    if dt == np.bool_:
      out.append(rng.random(shape) < 0.5)
    elif np.issubdtype(dt, np.integer):
      out.append(rng.integers(ints[0], ints[1], shape).astype(dt))
    else:
      out.append(rng.uniform(-1, 1, shape).astype(np.float32).astype(dt))
  return out


def jax_interpret(eqn, inputs, dynamic_bounds=()):
  """JAX's interpret mode of the exact pallas_call equation."""
  params = dict(eqn.params, interpret=True)
  args = [jnp.asarray(b, jnp.int32) for b in dynamic_bounds] + [
      jnp.asarray(x) for x in inputs]
  outs = eqn.primitive.bind(*args, **params)
  return [np.asarray(o) for o in outs]


def pallas_call_inputs(fn, *args):
  """The operands each `pallas_call` of `fn(*args)` receives, in order:
  evaluates fn's jaxpr equation by equation (pallas_calls in interpret
  mode). For kernels whose operands are computed, e.g. scalar-prefetch
  tables that random inputs would make invalid."""
  captured = []

  def run(jaxpr, consts, vals):
    env = {}
    read = lambda v: v.val if isinstance(v, jax_core.Literal) else env[v]
    for v, x in zip(jaxpr.constvars, consts):
      env[v] = x
    for v, x in zip(jaxpr.invars, vals):
      env[v] = x
    for eqn in jaxpr.eqns:
      ins = [read(v) for v in eqn.invars]
      params = dict(eqn.params)
      if eqn.primitive.name == "pallas_call":
        captured.append([np.asarray(x) for x in ins])
        params["interpret"] = True
      # Calls (jit, custom_vjp/jvp primal bodies) are entered, so the
      # pallas_calls inside them are seen and run in interpret mode.
      sub = next((params[k] for k in ("jaxpr", "call_jaxpr", "fun_jaxpr")
                  if isinstance(params.get(k), jax_core.ClosedJaxpr)), None)
      if sub is not None and eqn.primitive.name != "pallas_call":
        outs = run(sub.jaxpr, sub.consts, ins[len(ins) - len(
            sub.jaxpr.invars):])
      else:
        outs = eqn.primitive.bind(*ins,
                                  **eqn.primitive.get_bind_params(params))
        outs = outs if eqn.primitive.multiple_results else [outs]
      for v, x in zip(eqn.outvars, outs):
        env[v] = x
    return [read(v) for v in jaxpr.outvars]
  closed = jax.make_jaxpr(fn)(*args)
  run(closed.jaxpr, closed.consts, args)
  return captured


def save_npy(path, arr):
  arr = np.asarray(arr)
  if arr.dtype.name == "bfloat16":
    # pallasc reads '<V2' for bf16, as np.save writes it.
    np.save(path, arr)
  else:
    np.save(path, arr)


def load_npy(path, dtype):
  a = np.load(path)
  if a.dtype.kind == "V" or np.dtype(dtype).name == "bfloat16":
    # bf16 and fp8 (ml_dtypes) come back as void dtypes of their size.
    a = a.view(np.dtype(dtype))
  return a


def tolerance(dtype):
  n = np.dtype(dtype).name
  if n in ("float16", "bfloat16"):
    return dict(rtol=2e-2, atol=2e-2)
  if n in ("float32", "float64"):
    return dict(rtol=2e-5, atol=2e-5)
  return dict(rtol=0, atol=0)


def jax_tpu_lowering():
  """test/Target/compare_with_jax_lowering.py: JAX's own Mosaic lowering of
  a function (jax.export(..., platforms=["tpu"])) and a comparable summary
  of a Mosaic module."""
  sys.path.insert(0, os.path.join(ROOT, "test", "Target"))
  import compare_with_jax_lowering
  return compare_with_jax_lowering


@contextlib.contextmanager
def tpu_v5e():
  """JAX's TPU lowering as for one TPU v5e chip, on a machine with no TPU."""
  from jax._src.pallas.mosaic import tpu_info
  info = tpu_info.get_tpu_info_for_chip(tpu_info.ChipVersion.TPU_V5E, 1)
  saved = tpu_info.get_tpu_info
  tpu_info.get_tpu_info = lambda: info
  try:
    yield
  finally:
    tpu_info.get_tpu_info = saved


class PallascCase(unittest.TestCase):
  """A test case with a scratch directory and pallasc helpers."""

  def setUp(self):
    self.dir = tempfile.mkdtemp(prefix="pallasc-jax-")

  def tearDown(self):
    shutil.rmtree(self.dir, ignore_errors=True)

  def pallasc(self, *args, expect=0):
    r = subprocess.run([PALLASC, *args], capture_output=True, text=True)
    if r.returncode != expect:
      self.fail(f"pallasc {' '.join(args)} exited {r.returncode} (expected "
                f"{expect}):\n{r.stdout}\n{r.stderr}")
    return r

  def compile_tpu(self, call, out):
    """Compiles the exported `call` for tpu into `out`; returns its Mosaic
    module's bytes and its custom-call config without the body."""
    self.pallasc(call.paths[0], "--spec", call.paths[1], "--target", "tpu",
                 "-o", out)
    with open(os.path.join(out, call.name + ".tpu.mlirbc"), "rb") as fh:
      body = fh.read()
    with open(os.path.join(out, call.name + ".tpu.json")) as fh:
      cfg = json.load(fh)
    cfg["custom_call_config"].pop("body")
    return body, cfg

  def tpu_against_jax(self, fn, args):
    """Exports fn(*args) and compiles it for tpu, and lowers it with JAX's
    own Mosaic lowering, both as for a TPU v5e. Returns the two modules'
    summaries (compare_with_jax_lowering.describe: ours, JAX's) and
    configs."""
    cmp = jax_tpu_lowering()
    with tpu_v5e():
      (c,) = self.export(fn, *args)
      ours, ours_cfg = self.compile_tpu(c, os.path.join(self.dir, "tpu"))
      theirs, theirs_cfg = cmp.jax_artifacts(fn, args)
      return cmp.describe(ours), cmp.describe(theirs), ours_cfg, theirs_cfg

  def assert_same_tpu_call(self, a, b, ours_cfg, theirs_cfg):
    """The Mosaic modules summarized as `a` and `b` have the same version,
    kernel signature, grid attributes and transforms, and their custom
    calls the same config."""
    self.assertEqual(a["version"], b["version"])
    self.assertEqual(a["kernel"]["type"], b["kernel"]["type"])
    for key in ("dimension_semantics", "iteration_bounds", "window_params",
                "scalar_prefetch", "scratch_operands"):
      self.assertEqual(a["kernel"]["attrs"].get(key),
                       b["kernel"]["attrs"].get(key), key)
    self.assertEqual(a["transforms"], b["transforms"])
    self.assertEqual(ours_cfg, theirs_cfg)

  def refused(self, fn, *args, needle, kernel=None, line_needle=None):
    """Tracing fn(*args) fails with pallasc-export's error, its message
    holding `needle`; with `kernel`, located at the line of `kernel`'s file
    that holds `line_needle`. Returns the error."""
    import pallasc_jax
    with self.assertRaises(pallasc_jax.ExportError) as cm:
      pallasc_jax.trace(fn, *args)
    e = cm.exception
    self.assertIn(needle, e.message)
    if kernel is not None:
      line = line_of(kernel, line_needle)
      here = os.path.basename(inspect.getsourcefile(kernel))
      self.assertIn(f"{here}:{line}:", e.where)
    return e

  def export(self, fn, *args, sub=None, **kw):
    import pallasc_jax
    calls = pallasc_jax.trace(fn, *args, **kw)
    d = os.path.join(self.dir, sub or "k")
    pallasc_jax.write(calls, d)
    return calls

  def check_call(self, call, targets=(), emulate=(), inputs=None, seed=0,
                 dynamic_bounds=(), tol=None, ints=(0, 16), normwise=None,
                 want=None):
    """Compiles `call` for `targets`, runs it with `pallasc run` (and on the
    GPU emulator for `emulate`) and compares the outputs with JAX's interpret
    mode of the same equation. `normwise` (a relative tolerance) compares
    each output within that fraction of its largest magnitude instead: for
    sums whose random inputs make them cancel (accumulation order then
    decides the low digits). `want` (one array per output) replaces interpret
    mode as the reference where JAX's interpret mode cannot run the
    equation."""
    mlir, spec = call.paths
    d = os.path.dirname(mlir)
    if targets:
      tflags = []
      for t in targets:
        tflags += ["--target", t]
      self.pallasc(mlir, "--spec", spec, *tflags, "-o",
                   os.path.join(d, "out-" + call.name))
    if inputs is None:
      inputs = random_inputs(call.in_avals, seed, ints)
    if want is None:
      want = jax_interpret(call.eqn, inputs, dynamic_bounds)
    flags = []
    for i, x in enumerate(inputs):
      p = os.path.join(d, f"{call.name}.in{i}.npy")
      save_npy(p, x)
      flags += ["--input", p]
    for b in dynamic_bounds:
      flags += ["--grid-bound", str(int(b))]
    outs = [os.path.join(d, f"{call.name}.out{i}.npy")
            for i in range(len(call.out_avals))]
    oflags = []
    for p in outs:
      oflags += ["--output", p]
    self.pallasc("run", mlir, "--spec", spec, *flags, *oflags)
    for i, (p, w, a) in enumerate(zip(outs, want, call.out_avals)):
      got = load_npy(p, a.dtype)
      self.assertEqual(got.shape, w.shape, f"{call.name} output {i} shape")
      t = tol or tolerance(a.dtype)
      if normwise is not None:
        t = dict(rtol=0, atol=normwise * float(np.max(np.abs(w), initial=0)))
      np.testing.assert_allclose(
          np.asarray(got, np.float64), np.asarray(w, np.float64),
          equal_nan=True, err_msg=f"{call.name} output {i} vs JAX interpret",
          **t)
    for t in emulate:
      r = self.pallasc("run", mlir, "--spec", spec, *flags, "--target", t,
                       "--emulate", "--check")
      self.assertIn("matches the CPU result", r.stdout + r.stderr)
    return want
