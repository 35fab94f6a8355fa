#!/usr/bin/env python3
"""Compile time of JAX's shipped TPU philox kernel for a GPU, against the
size of its block (issue 35: "the philox kernel's GPU compile is linear in
its size"). jax.experimental.pallas.ops.tpu.random.philox computes ~400
integer ops (after CSE) per element of its block; the GPU lowering unrolls
each thread's share of the block, so before `pallas-chunk-elementwise` the
code, and ptxas' time, grew with the block (8 x 128: 0.8 s, 64 x 128:
17.9 s, 256 x 256: ptxas past 120 s). The pass stores the block a chunk of
rows at a time, so the curve should be flat.

For each block (rows x 256 over a [256, 512] output, and JAX's default
philox_random_bits block of 256 x 256) it exports the kernel once, compiles
it with pallasc (ptxas included: the cubin is written), and prints the
compile time, the PTX size and each time's ratio to the smallest block's.

  python3 bench/philox_compile/philox_compile.py [--build DIR] [--target cuda:sm_90a]

Needs jax and ptxas (CUDA_HOME); exits 77 when missing.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))


def skip(why):
  print(f"philox_compile.py: skipped: {why}")
  sys.exit(77)


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--build", default=os.path.join(ROOT, "build"))
  ap.add_argument("--target", default="cuda:sm_90a")
  ap.add_argument("--timeout", type=float, default=600)
  args = ap.parse_args()
  try:
    import jax
    import jax.numpy as jnp
    import pallasc_jax
    from jax.experimental.pallas.ops.tpu.random import philox
  except ImportError as e:
    skip(f"needs jax ({e})")
  pallasc = os.path.join(args.build, "bin", "pallasc")
  if not os.path.exists(pallasc):
    skip(f"no pallasc at {pallasc}")
  emit = []
  if args.target.startswith("cuda:"):
    if not os.environ.get("CUDA_HOME") and not os.path.exists(
        "/usr/local/cuda/bin/ptxas"):
      skip("needs ptxas (CUDA_HOME)")
    emit = ["--emit", "cubin"]
  key = jax.ShapeDtypeStruct((2,), jnp.uint32)
  blocks = [(8, 256), (16, 256), (32, 256), (64, 256), (128, 256), (256, 256)]
  print(f"JAX's TPU philox kernel, output [256, 512] u32, {args.target}")
  print(f"{'block':>10} {'elements':>9} {'compile s':>10} {'PTX lines':>10} "
        f"{'time / smallest':>16}")
  first = None
  with tempfile.TemporaryDirectory() as tmp:
    for rows, cols in blocks:
      d = os.path.join(tmp, f"b{rows}x{cols}")
      fn = lambda k, b=(rows, cols): philox.philox_4x32_kernel(
          k, (256, 512), (256, 512), b)
      mlir, spec = pallasc_jax.export(fn, key, out_dir=d, name="philox")
      out = os.path.join(d, "out")
      t = time.perf_counter()
      try:
        r = subprocess.run([pallasc, mlir, "--spec", spec, "--target",
                            args.target, *emit, "-o", out],
                           capture_output=True, text=True,
                           timeout=args.timeout)
      except subprocess.TimeoutExpired:
        print(f"{rows:>4} x {cols:<3} {rows * cols:>9} {'> %d' % args.timeout:>10}")
        continue
      secs = time.perf_counter() - t
      if r.returncode != 0:
        print(f"{rows:>4} x {cols:<3} failed: {r.stderr.strip()[-400:]}")
        continue
      lines = 0
      for f in os.listdir(out):
        if f.endswith((".ptx", ".s")):
          with open(os.path.join(out, f)) as fh:
            lines += sum(1 for _ in fh)
      first = first or secs
      print(f"{rows:>4} x {cols:<3} {rows * cols:>9} {secs:>10.2f} "
            f"{lines:>10} {secs / first:>15.2f}x")


if __name__ == "__main__":
  main()
