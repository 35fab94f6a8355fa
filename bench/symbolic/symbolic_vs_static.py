#!/usr/bin/env python3
"""A symbolic artifact against the static one (issue 36): registers, SASS
instructions and shared memory of each kernel of
python/tests/test_symbolic_matrix.py (JAX's shipped softmax, an RMSNorm and
a layer norm), exported once with a symbolic row count `n`, compiled by
pallasc for sm_80 and sm_90a three ways: static at n = 4096, symbolic, and
symbolic with `n` declared a multiple of the kernel's row block
(`multiple_of`, which drops the edge masks). Each is assembled by `ptxas -v`
and disassembled by `cuobjdump -sass`; the ratios are symbolic / static (the
goal: within 5% with `multiple_of`).

  python3 bench/symbolic/symbolic_vs_static.py [--build DIR] [--arch sm_80,sm_90a]

Needs jax, ptxas (PTXAS or CUDA_HOME) and cuobjdump (CUOBJDUMP, or the one
in the Triton venv bench/vs_jax_triton installs); exits 77 when missing.
"""

import argparse
import glob
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
sys.path.insert(0, os.path.join(ROOT, "bench", "vs_triton"))


def skip(why):
  print(f"symbolic_vs_static.py: skipped: {why}")
  sys.exit(77)


def cuobjdump_path():
  cand = os.environ.get("CUOBJDUMP")
  if not cand:
    found = glob.glob(os.path.expanduser(
        "~/.cache/pallasc/triton-*/lib/python*/site-packages/triton/backends/"
        "nvidia/bin/cuobjdump"))
    cand = found[0] if found else None
  if not cand or not os.access(cand, os.X_OK):
    skip("cuobjdump not found (set CUOBJDUMP, or run "
         "bench/vs_jax_triton/vs_jax_triton.py once to install Triton's)")
  return cand


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--build", default=os.path.join(ROOT, "build"))
  ap.add_argument("--arch", default="sm_80,sm_90a")
  args = ap.parse_args()
  pallasc = os.path.join(args.build, "bin", "pallasc")
  if not os.path.exists(pallasc):
    sys.exit(f"symbolic_vs_static.py: {pallasc} not found; build first")
  try:
    import jax
    import jax.numpy as jnp
    from jax import export
    from jax.experimental.pallas.ops.gpu import softmax
    import pallasc_jax
    import test_symbolic_matrix as m
    import vs_triton as vt
  except Exception as e:  # pragma: no cover - depends on the environment
    skip(f"cannot import jax or the kernels ({type(e).__name__}: {e})")
  ptxas = vt.find_ptxas()
  cuobjdump = cuobjdump_path()
  S = jax.ShapeDtypeStruct
  f32 = jnp.float32
  kernels = [("softmax (shipped)", lambda x: softmax.softmax(x), 200, [], 1),
             ("rmsnorm", m.rmsnorm, 256, [(1, 256)], 8),
             ("layer norm", m.layer_norm, 128, [(1, 128), (1, 128)], 16)]
  work = tempfile.mkdtemp(prefix="pallasc-symbolic-bench-")
  (n,) = export.symbolic_shape("n", constraints=("n <= 65536",))
  rows = []
  for name, fn, row_len, extra, block in kernels:
    variants = {}
    for variant in ("static", "symbolic", "multiple_of"):
      d = os.path.join(work, f"{name.split()[0]}-{variant}")
      first = 4096 if variant == "static" else n
      avals = [S((first, row_len), f32)] + [S(s, f32) for s in extra]
      paths = pallasc_jax.export(fn, *avals, out_dir=d)
      mlir = [p for p in paths if p.endswith(".mlir")][0]
      spec = mlir[:-5] + ".json"
      if variant == "multiple_of":
        s = json.load(open(spec))
        s["symbols"]["n"]["multiple_of"] = block
        json.dump(s, open(spec, "w"))
      variants[variant] = (mlir, spec)
    for arch in args.arch.split(","):
      row = {}
      for variant, (mlir, spec) in variants.items():
        ptx, dyn, _ = vt.compile_pallasc_files(
            pallasc, ptxas, mlir, spec, f"{name.split()[0]}-{variant}", arch,
            work, 1)
        cubin = ptx[:-4] + ".cubin"
        res, _ = vt.assemble(ptxas, ptx, arch, cubin)
        counts = vt.sass_counts(cuobjdump, cubin)
        row[variant] = (res["registers"], counts["sass"],
                        res["static_smem"] + dyn)
      rows.append((name, arch, row))
  print("symbolic artifact vs static (n = 4096): registers / SASS "
        "instructions / shared memory bytes; ratio = symbolic / static")
  print(f"{'kernel':20} {'arch':7} {'static':>16} {'symbolic':>16} "
        f"{'ratio':>15} {'multiple_of':>16} {'ratio':>15}")

  def fmt(t):
    return f"{t[0]}/{t[1]}/{t[2]}"

  def ratio(a, b):
    return "/".join("-" if y == 0 else f"{x / y:.2f}" for x, y in zip(a, b))
  for name, arch, row in rows:
    st, sy, mo = row["static"], row["symbolic"], row["multiple_of"]
    print(f"{name:20} {arch:7} {fmt(st):>16} {fmt(sy):>16} "
          f"{ratio(sy, st):>15} {fmt(mo):>16} {ratio(mo, st):>15}")


if __name__ == "__main__":
  main()
