"""Numeric check of float -> integer conversions (pallas-legalize-math) against
XLA's rule written out here: NaN gives 0, a value at or beyond the integer
type's range gives its minimum or maximum, others truncate toward zero.

usage: fptoint_check.py PALLASC KERNEL SPEC WORK_DIR [RUN FLAGS...]

Runs Inputs/fptoint.mlir with `pallasc run` (the CPU runner, or with
--target ... --emulate the GPU emulator) on NaN, infinities, zeros, every
integer limit +-1 (and +-0.5) and values far beyond, from f32, f16 and bf16,
and prints one line per destination type.
"""
import math
import os
import sys

import numpy as np

from pallasc_run import pallasc_run

PALLASC, KERNEL, SPEC, WORK = sys.argv[1:5]
FLAGS = sys.argv[5:]
os.makedirs(WORK, exist_ok=True)

values = [math.nan, math.inf, -math.inf, 0.0, -0.0, 0.5, -0.5, 0.99, -0.99,
          1.0, -1.0, 1.5, -1.5, 42.7, -42.7, 1e-30]
for bits in (8, 16, 32, 64):
  top = 2.0 ** (bits - 1)
  # Signed limits: MAX = top - 1, MIN = -top; unsigned: MAX = 2 * top - 1.
  values += [top - 1, top - 0.5, top, top + 1, -top, -top - 0.5, -top - 1,
             2 * top - 1, 2 * top, 2 * top + 1]
values += [300.0, -300.0, 3e9, -3e9, 1e30, -1e30, 65504.0, -65504.0,
           3.4e38, -3.4e38]
values = (values + [7.0] * 64)[:64]
assert len(values) == 64

with np.errstate(over="ignore"):  # beyond f32's / f16's range: infinities
  f32 = np.array(values, dtype=np.float64).astype(np.float32)
  f16 = np.array(values, dtype=np.float64).astype(np.float16)


def to_bf16_bits(x):
  """float32 -> bfloat16 bits, rounding to nearest even (NaN kept quiet)."""
  u = x.view(np.uint32).astype(np.uint64)
  rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
  rounded = np.where(np.isnan(x), (u >> 16) | 0x40, rounded)
  return rounded.astype(np.uint16)


bf16_bits = to_bf16_bits(f32)
bf16_as_f32 = (bf16_bits.astype(np.uint32) << 16).view(np.float32)

sources = [("f32", f32, f32), ("f16", f16, f16),
           ("bf16", bf16_bits.view("V2"), bf16_as_f32)]
dests = [("i8", np.int8), ("i16", np.int16), ("i32", np.int32),
         ("i64", np.int64), ("u8", np.uint8), ("u16", np.uint16),
         ("u32", np.uint32), ("u64", np.uint64)]

results = pallasc_run(PALLASC, WORK, KERNEL, SPEC,
                      [stored for _, stored, _ in sources],
                      [name for name, _ in dests], FLAGS)


def xla_convert(v, dtype):
  """XLA's float -> integer conversion of the float `v`, as a Python int."""
  info = np.iinfo(dtype)
  if math.isnan(v):
    return 0
  if math.isinf(v):
    return info.max if v > 0 else info.min
  return max(info.min, min(info.max, math.trunc(v)))


for (name, dtype), got in zip(dests, results):
  problems = []
  for row, (src, _, exact) in enumerate(sources):
    for col, v in enumerate(exact.tolist()):
      want = xla_convert(v, dtype)
      if int(got[row, col]) != want:
        problems.append("%s %r -> %d, want %d" % (src, v, int(got[row, col]),
                                                   want))
  print("%s: %s" % (name, "matches XLA's rule" if not problems else
                    "differs: " + "; ".join(problems[:8])))
