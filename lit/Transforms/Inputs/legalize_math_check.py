"""Numeric check of pallas-legalize-math's rewrites against numpy, on special
values (zeros, subnormals, infinities, NaN, the largest finite values).

usage: legalize_math_check.py PALLASC KERNEL SPEC WORK_DIR [RUN FLAGS...]

Runs the kernel with `pallasc run` (the CPU runner, or with --target ... the
GPU emulator) and prints one line per checked output.
"""
import os
import sys

import numpy as np

from pallasc_run import pallasc_run

PALLASC, KERNEL, SPEC, WORK = sys.argv[1:5]
FLAGS = sys.argv[5:]
os.makedirs(WORK, exist_ok=True)

f32 = np.finfo(np.float32)
x = np.array([0.0, -0.0, f32.tiny / 4, -f32.tiny, 1.0, -1.5, 0.25, np.inf,
              -np.inf, np.nan, f32.max, -f32.max, 3.0, -0.75, 1e-30, 100.0],
             dtype=np.float32)
f16 = np.finfo(np.float16)
h = np.array([0.0, -0.0, 2.0**-20, -f16.tiny, 1.0, -1.5, 0.25, np.inf, -np.inf,
              np.nan, f16.max, -f16.max, 3.0, -0.75, 2.0**-24, 100.0],
             dtype=np.float16)
b = np.array([2, 3, -2, 0, 0, 1, 1, -1, -1, 5, 2, 7, -3, 0, 10, 2],
             dtype=np.int32)
e = np.array([10, 3, 3, 0, 5, -4, 7, -3, -4, -1, 31, 11, 0, -2, 9, 30],
             dtype=np.int32)

inputs = [x, h, b, e]
cls, clamp, sin, cos, pw = pallasc_run(PALLASC, WORK, KERNEL, SPEC, inputs, 5,
                                       FLAGS)


def normal(v):
    a = np.abs(v.astype(np.float64))
    return np.isfinite(v) & (a >= np.finfo(v.dtype).tiny)


def report(name, got, want, exact=True):
    ok = (np.array_equal(got, want, equal_nan=True) if exact else
          np.allclose(got, want, rtol=1e-6, atol=1e-6, equal_nan=True))
    print("%s: %s" % (name, "matches numpy" if ok else
                      "differs: got %s want %s" % (got, want)))


with np.errstate(all="ignore"):
    for row, (name, v) in enumerate(
            [("isinf f32", np.isinf(x)), ("isnan f32", np.isnan(x)),
             ("isfinite f32", np.isfinite(x)), ("isnormal f32", normal(x)),
             ("isinf f16", np.isinf(h)), ("isnan f16", np.isnan(h)),
             ("isfinite f16", np.isfinite(h)), ("isnormal f16", normal(h))]):
        report(name, cls[row], v.astype(np.float32))
    # lax.clamp: NaN propagates.
    report("clampf", clamp, np.minimum(np.maximum(x, -1.0), 1.0))
    report("sincos sin", sin, np.sin(x), exact=False)
    report("sincos cos", cos, np.cos(x), exact=False)
    # Integer power with wrap-around; negative exponents as XLA: 1 for a base
    # of 1, (-1)^e for -1, 0 otherwise.
    want = []
    for bi, ei in zip(b.tolist(), e.tolist()):
        if ei >= 0:
            r = pow(bi, ei, 1 << 32)
            want.append(r - (1 << 32) if r >= 1 << 31 else r)
        else:
            want.append(1 if bi == 1 else (-1 if ei % 2 else 1) if bi == -1
                        else 0)
    report("ipowi", pw, np.array(want, dtype=np.int32))
