"""Numeric check of the tangent rules of sinh, cosh, cbrt, log10, erfc and
fpowi with `pallasc run --jvp`.

usage: jvp_rules_run_check.py PALLASC INPUTS_DIR WORK_DIR

more_math.mlir computes erfc(log10(cbrt(cosh(sinh(x)))))^3 in f32. The
primal output must match a float64 numpy model and the tangent output the
model's central finite difference along the input tangent (eps = 1e-6), both
within 1e-5 (the values are below 1.1, the tangents below 0.6).
"""
import math
import os
import subprocess
import sys

import numpy as np

PALLASC, INPUTS, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
rng = np.random.default_rng(0)

x = rng.uniform(-1, 1, (32, 128)).astype(np.float32)
dx = rng.uniform(-1, 1, (32, 128)).astype(np.float32)
paths = [os.path.join(WORK, n) for n in ("x.npy", "dx.npy", "o.npy", "do.npy")]
np.save(paths[0], x)
np.save(paths[1], dx)
result = subprocess.run(
    [PALLASC, "run", os.path.join(INPUTS, "more_math.mlir"), "--spec",
     os.path.join(INPUTS, "more_math.json"), "--jvp", "--input", paths[0],
     "--input", paths[1], "--output", paths[2], "--output", paths[3]],
    capture_output=True, text=True)
if result.returncode:
    sys.exit(f"pallasc run --jvp failed:\n{result.stderr}")

erfc = np.vectorize(math.erfc)


def model(v):
    return erfc(np.log10(np.cbrt(np.cosh(np.sinh(v))))) ** 3


x64, dx64 = x.astype(np.float64), dx.astype(np.float64)
eps = 1e-6
fd = (model(x64 + eps * dx64) - model(x64 - eps * dx64)) / (2 * eps)
out, tangent = np.load(paths[2]), np.load(paths[3])
for what, got, want in [("primal", out, model(x64)), ("tangent", tangent, fd)]:
    err = np.abs(got.astype(np.float64) - want).max()
    if not err < 1e-5:
        sys.exit(f"jvp more_math: the {what} differs from numpy by {err}")
print("jvp more_math (sinh cosh cbrt log10 erfc fpowi): primal and tangent "
      "match numpy")
