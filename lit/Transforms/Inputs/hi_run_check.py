"""Numeric check of pallas-hi-to-lo with `pallasc run`.

usage: hi_run_check.py PALLASC INPUTS_DIR WORK_DIR

dequant.json's second input is a hi aggregate (int8 values, per-row f32
scales); with the spec's hi_to_lo transform the call takes its parts, given
as one .npy each. The output must equal a numpy model of the kernel,
x + values * scales[:, None], computed in float32 (exact: the int8 values are
small integers, the products and sums are correctly rounded either way).
"""
import os
import sys

import numpy as np

from pallasc_run import pallasc_run

PALLASC, INPUTS, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
rng = np.random.default_rng(0)

x = rng.standard_normal((256, 128)).astype(np.float32)
values = rng.integers(-128, 128, size=(256, 128)).astype(np.int8)
scales = rng.standard_normal(256).astype(np.float32)
(out,) = pallasc_run(PALLASC, WORK, os.path.join(INPUTS, "dequant.mlir"),
                     os.path.join(INPUTS, "dequant.json"), [x, values, scales],
                     1)
want = x + values.astype(np.float32) * scales[:, None]
if out.shape != want.shape or out.dtype != want.dtype:
    sys.exit(f"got {out.shape} {out.dtype}, expected {want.shape} {want.dtype}")
if not np.array_equal(out, want):
    bad = tuple(np.argwhere(out != want)[0])
    sys.exit(f"differs from numpy at {bad}: {out[bad]} != {want[bad]}")
print("hi-to-lo dequant: the parts' run equals numpy")
