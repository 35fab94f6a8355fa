# Runs the symbolic RMSNorm (rmsnorm.json) with `pallasc run --target T
# --emulate --check --strict-fp` at several sizes, and the same spec written
# statically at each size; the outputs must be equal bit for bit. (Without
# --strict-fp both are within --check's tolerance of the CPU, but mul + add
# contraction and the division may round one row's sum differently in the
# two kernels, whose code around them differs.) The symbolic runs share one
# cache directory per target: one emulated kernel object (and one of the
# CPU reference of --check) serves every size.
import json
import os
import subprocess
import sys

import numpy as np

pallasc, inputs = sys.argv[1], sys.argv[2]
kernel = os.path.join(inputs, "rmsnorm.mlir")
spec = json.load(open(os.path.join(inputs, "rmsnorm.json")))
rng = np.random.default_rng(0)
np.save("w.npy", rng.standard_normal(128).astype(np.float32))


def run(target, spec_path, out, cache=None):
    cmd = [pallasc, "run", kernel, "--spec", spec_path, "--target", target,
           "--emulate", "--check", "--strict-fp", "--input", "x.npy", "--input", "w.npy",
           "--output", out]
    if cache:
        cmd += ["--cache-dir", cache]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return np.load(out)


sizes = {"cuda:sm_80": [1, 127], "cuda:sm_90a": [1, 7, 8, 127, 1000],
         "rocm:gfx942": [1, 7, 8, 127, 1000]}
for target, ns in sizes.items():
    cache = "cache-" + target.replace(":", "-")
    for n in ns:
        np.save("x.npy", rng.standard_normal((n, 128)).astype(np.float32))
        y = run(target, os.path.join(inputs, "rmsnorm.json"), "y.npy", cache)
        static = dict(spec)
        static.pop("symbols")
        static["grid"] = [(n + 7) // 8]
        static["inputs"] = [{"shape": [n, 128], "dtype": "f32"},
                            {"shape": [128], "dtype": "f32"}]
        static["outputs"] = [{"shape": [n, 128], "dtype": "f32"}]
        json.dump(static, open("static.json", "w"))
        ys = run(target, "static.json", "ys.npy")
        same = y.shape == ys.shape and y.tobytes() == ys.tobytes()
        print(f"{target} n = {n}: " +
              ("equals the static spec" if same else "DIFFERS"))
    objects = sum(len(files) for _, _, files in
                  os.walk(os.path.join(cache, "entries")))
    print(f"{target}: one kernel object for {len(ns)} sizes"
          if objects == 2 else f"{target}: {objects} JIT objects")
