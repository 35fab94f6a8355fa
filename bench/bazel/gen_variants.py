#!/usr/bin/env python3
"""Writes a Bazel workspace of N kernel variants (default 500) for
bench/bazel/remote_cache.sh: the examples' add and matmul kernels over
several array shapes, block sizes and dtypes, each a pallasc_kernel for
cpu, cuda:sm_80, cuda:sm_90a and rocm:gfx942 (docs/bazel.md).

  bench/bazel/gen_variants.py OUT_DIR [N]

The variants are deterministic (same N, same workspace). The workspace's
@pallasc is this checkout's bazel/ (an absolute path)."""

import itertools
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
TARGETS = ["cpu", "cuda:sm_80", "cuda:sm_90a", "rocm:gfx942"]


def read(path):
  with open(os.path.join(ROOT, path)) as f:
    return f.read()


def add_variants():
  kernel, spec = read("examples/add/kernel.mlir"), json.loads(
      read("examples/add/spec.json"))
  for dtype, rows, cols, br, bc in itertools.product(
      ["f32", "f16", "bf16"], [256, 512, 1024, 2048, 4096], [512, 1024, 2048],
      [8, 16, 32, 64], [128, 256, 512]):
    name = f"add_{dtype}_{rows}x{cols}_b{br}x{bc}"
    k = kernel.replace("32x256xf32", f"{br}x{bc}x{dtype}")
    s = json.loads(json.dumps(spec))
    s["name"] = name
    s["grid"] = [rows // br, cols // bc]
    for a in s["inputs"] + s["outputs"]:
      a["shape"], a["dtype"] = [rows, cols], dtype
    for b in s["in_specs"] + s["out_specs"]:
      b["block_shape"] = [br, bc]
    size = 2 if dtype != "f32" else 4
    s["cost_estimate"] = {"flops": rows * cols,
                          "bytes_accessed": 3 * rows * cols * size,
                          "transcendentals": 0}
    yield name, f"add_{dtype}_b{br}x{bc}", k, s


def matmul_variants():
  kernel, spec = read("examples/matmul/kernel.mlir"), json.loads(
      read("examples/matmul/spec.json"))
  for b, m, n, kk in itertools.product([64, 128], [512, 1024, 2048],
                                       [512, 1024], [256, 512]):
    name = f"matmul_{m}x{n}x{kk}_b{b}"
    k = kernel.replace("128x128", f"{b}x{b}")
    s = json.loads(json.dumps(spec))
    s["name"] = name
    s["grid"] = [m // b, n // b, kk // b]
    s["inputs"][0]["shape"], s["inputs"][1]["shape"] = [m, kk], [kk, n]
    s["outputs"][0]["shape"] = [m, n]
    for bs in s["in_specs"] + s["out_specs"]:
      bs["block_shape"] = [b, b]
    s["scratch_shapes"][0]["shape"] = [b, b]
    s["cost_estimate"] = {"flops": 2 * m * n * kk,
                          "bytes_accessed": 2 * (m * kk + kk * n) + 4 * m * n,
                          "transcendentals": 0}
    yield name, f"matmul_b{b}", k, s


def variants(n):
  # Interleaved: one matmul per 12 adds while both last.
  adds, mms = list(add_variants()), list(matmul_variants())
  out = []
  while len(out) < n and (adds or mms):
    for _ in range(12):
      if adds and len(out) < n:
        out.append(adds.pop(0))
    if mms and len(out) < n:
      out.append(mms.pop(0))
  if len(out) < n:
    sys.exit(f"gen_variants: only {len(out)} variants are defined, asked {n}")
  return out


def main():
  out = os.path.abspath(sys.argv[1])
  n = int(sys.argv[2]) if len(sys.argv) > 2 else 500
  os.makedirs(os.path.join(out, "kernels"), exist_ok=True)
  with open(os.path.join(out, "WORKSPACE"), "w") as f:
    f.write(f"""# {n} generated kernel variants (bench/bazel/gen_variants.py).
workspace(name = "pallasc_variants")

local_repository(
    name = "pallasc",
    path = "{os.path.join(ROOT, 'bazel')}",
)

load("@pallasc//:deps.bzl", "pallasc_dependencies")

pallasc_dependencies()
""")
  rules = ['load("@pallasc//:defs.bzl", "pallasc_kernel")', ""]
  kernels = {}
  for name, kname, ktext, spec in variants(n):
    if kname not in kernels:
      kernels[kname] = ktext
      with open(os.path.join(out, "kernels", kname + ".mlir"), "w") as f:
        f.write(ktext)
    with open(os.path.join(out, "kernels", name + ".json"), "w") as f:
      json.dump(spec, f, indent=1)
      f.write("\n")
    rules.append(f"""pallasc_kernel(
    name = "{name}",
    kernel = "kernels/{kname}.mlir",
    spec = "kernels/{name}.json",
    targets = {json.dumps(TARGETS)},
)
""")
  with open(os.path.join(out, "BUILD.bazel"), "w") as f:
    f.write("\n".join(rules))
  print(f"{out}: {n} variants ({len(kernels)} kernels), "
        f"{n * len(TARGETS)} target compiles")


if __name__ == "__main__":
  main()
