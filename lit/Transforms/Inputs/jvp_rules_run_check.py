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
import sys

import numpy as np

from pallasc_run import pallasc_run

PALLASC, INPUTS, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
rng = np.random.default_rng(0)

x = rng.uniform(-1, 1, (32, 128)).astype(np.float32)
dx = rng.uniform(-1, 1, (32, 128)).astype(np.float32)
out, tangent = pallasc_run(PALLASC, WORK,
                           os.path.join(INPUTS, "more_math.mlir"),
                           os.path.join(INPUTS, "more_math.json"), [x, dx], 2,
                           ["--jvp"])

erfc = np.vectorize(math.erfc)


def model(v):
    return erfc(np.log10(np.cbrt(np.cosh(np.sinh(v))))) ** 3


x64, dx64 = x.astype(np.float64), dx.astype(np.float64)
eps = 1e-6
fd = (model(x64 + eps * dx64) - model(x64 - eps * dx64)) / (2 * eps)
for what, got, want in [("primal", out, model(x64)), ("tangent", tangent, fd)]:
    err = np.abs(got.astype(np.float64) - want).max()
    if not err < 1e-5:
        sys.exit(f"jvp more_math: the {what} differs from numpy by {err}")
print("jvp more_math (sinh cosh cbrt log10 erfc fpowi): primal and tangent "
      "match numpy")
