#!/usr/bin/env python3
"""Compile time of JAX's shipped Mosaic GPU kernels for cuda:sm_90a (issue 34).

Exports `hopper_matmul_mgpu` (f16 and bf16, two tilings) and
`attention_mgpu` forward (causal and not) with `--device h100`, then times
`pallasc --target cuda:sm_90a` on each (the whole run: parse, pallas-mgpu-
to-gpu, NVVM, PTX, ptxas when installed, manifest, launcher) and, in the same
script run, on the example matmul (examples/matmul), whose time is the unit:
the printed ratio is kernel / example matmul. Median of RUNS runs each.

  python3 bench/mgpu_compile/mgpu_compile.py [--build DIR] [--runs N]

Needs jax (and absl-py, which hopper_matmul_mgpu imports); exits 77 with a
message when they are missing.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))


def median_seconds(cmd, runs):
  times = []
  for _ in range(runs):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    times.append(time.perf_counter() - t0)
    if r.returncode != 0:
      sys.exit(f"mgpu_compile.py: failed ({r.returncode}): {' '.join(cmd)}\n"
               f"{r.stderr}")
  return statistics.median(times)


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--build", default=os.path.join(ROOT, "build"))
  ap.add_argument("--runs", type=int, default=5)
  args = ap.parse_args()
  pallasc = os.path.join(args.build, "bin", "pallasc")
  if not os.path.exists(pallasc):
    sys.exit(f"mgpu_compile.py: {pallasc} not found; build first")
  try:
    import jax
    import jax.numpy as jnp
    import pallasc_jax
    from jax.experimental.pallas.ops.gpu import attention_mgpu as am
    from jax.experimental.pallas.ops.gpu import hopper_matmul_mgpu as hm
  except Exception as e:  # pragma: no cover - depends on the environment
    print(f"mgpu_compile.py: skipped: cannot import jax or the Mosaic GPU "
          f"ops ({type(e).__name__}: {e})")
    sys.exit(77)
  S = jax.ShapeDtypeStruct
  work = tempfile.mkdtemp(prefix="pallasc-mgpu-bench-")
  cases = []

  def export(name, fn, *avals):
    d = os.path.join(work, name)
    paths = pallasc_jax.export(fn, *avals, out_dir=d, device="h100")
    mlir = [p for p in paths if p.endswith(".mlir")][0]
    cases.append((name, mlir, mlir[:-5] + ".json"))

  tilings = {
      "128x128x64/4": hm.TuningConfig(tile_m=128, tile_n=128, tile_k=64,
                                      max_concurrent_steps=4),
      "64x64x64/2": hm.TuningConfig(tile_m=64, tile_n=64, tile_k=64,
                                    max_concurrent_steps=2,
                                    wg_dimension=hm.MatmulDimension.M)}
  for dtype, elem in ((jnp.float16, "f16"), (jnp.bfloat16, "bf16")):
    for tname, cfg in tilings.items():
      a = S((1024, 1024), dtype)
      export(f"hopper_matmul {elem} {tname}",
             lambda x, y, cfg=cfg: hm.matmul(x, y, None, cfg), a, a)
  q = S((1, 1024, 4, 64), jnp.float16)
  for causal in (False, True):
    cfg = am.TuningConfig(block_q=64, block_kv=64, max_concurrent_steps=2,
                          causal=causal)
    export(f"attention {'causal' if causal else 'non-causal'} f16",
           lambda a, b, c, cfg=cfg: am.attention(a, b, c, cfg), q, q, q)

  out = os.path.join(work, "out")
  unit = median_seconds([pallasc, os.path.join(ROOT, "examples", "matmul",
                                               "kernel.mlir"),
                         "--spec", os.path.join(ROOT, "examples", "matmul",
                                                "spec.json"),
                         "--target", "cuda:sm_90a", "-o", out], args.runs)
  ptxas = shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas")
  print(f"pallasc --target cuda:sm_90a, median of {args.runs} runs "
        f"(ptxas {'found: assembled and checked' if ptxas else 'not found'})")
  print(f"{'kernel':34} {'seconds':>8} {'/ example matmul':>17}")
  print(f"{'example matmul (the unit)':34} {unit:8.3f} {1.0:17.2f}")
  for name, mlir, spec in cases:
    t = median_seconds([pallasc, mlir, "--spec", spec, "--target",
                        "cuda:sm_90a", "-o", out], args.runs)
    print(f"{name:34} {t:8.3f} {t / unit:17.2f}")
  shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
  main()
