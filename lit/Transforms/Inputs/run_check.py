"""Numeric checks of the call-level transforms with `pallasc run`.

usage: run_check.py PALLASC EXAMPLES_DIR INPUTS_DIR WORK_DIR

- vmap equals a loop over the batch: the batched call's output at batch index
  b is the unbatched call's output on the inputs' slices at b;
- discharge-state leaves results unchanged: the discharged hist kernel's
  counter output is the input counter plus its increments.
"""
import os
import sys

import numpy as np

from pallasc_run import bf16_to_f32, pallasc_run, to_bf16

PALLASC, EXAMPLES, INPUTS, WORK = sys.argv[1:5]
os.makedirs(WORK, exist_ok=True)
rng = np.random.default_rng(0)


def run(kernel, spec, inputs, num_outputs, flags=()):
    return pallasc_run(PALLASC, WORK, kernel, spec, inputs, num_outputs, flags)


def random_array(shape, dtype):
    if dtype == "i32":
        return rng.integers(0, 16, size=shape).astype(np.int32)
    values = rng.standard_normal(shape).astype(np.float32)
    if dtype == "bf16":  # as pallasc's .npy reader wants it: <V2, the top half
        return to_bf16(values)
    return values


def as_float(a):
    if a.dtype.kind == "V":
        return bf16_to_f32(a)
    return a.astype(np.float64)


def check_vmap(example, shapes, dtypes, axes, size):
    kernel = os.path.join(EXAMPLES, example, "kernel.mlir")
    spec = os.path.join(EXAMPLES, example, "spec.json")
    inputs = []
    for shape, dtype, axis in zip(shapes, dtypes, axes):
        shape = list(shape)
        if axis is not None:
            shape.insert(axis, size)
        inputs.append(random_array(shape, dtype))
    flag = ",".join("none" if a is None else str(a) for a in axes)
    batched = run(kernel, spec, inputs, 1, ["--vmap", f"{flag}:{size}"])[0]
    assert batched.shape[0] == size, batched.shape
    for b in range(size):
        sliced = [x if a is None else np.ascontiguousarray(np.take(x, b, axis=a))
                  for x, a in zip(inputs, axes)]
        want = run(kernel, spec, sliced, 1)[0]
        err = np.abs(as_float(batched[b]) - as_float(want)).max()
        if err > 1e-6:
            sys.exit(f"vmap {example} --vmap {flag}:{size}: batch {b} differs "
                     f"from the unbatched call by {err}")
    print(f"vmap {example} {flag}:{size}: equals the loop over the batch")


check_vmap("add", [[1024, 2048]] * 2, ["f32"] * 2, [1, None], 2)
check_vmap("softmax", [[4096, 1000]], ["f32"], [0], 2)
check_vmap("scalar_prefetch", [[16], [256, 512]], ["i32", "f32"], [None, 1], 2)
check_vmap("matmul", [[1024, 512], [512, 1024]], ["bf16", "bf16"], [0, None], 2)

counts = rng.integers(0, 5, 16).astype(np.int32)
x = rng.integers(0, 16, 32).astype(np.int32)
out_counts, out_x = run(os.path.join(INPUTS, "hist.mlir"),
                        os.path.join(INPUTS, "hist.json"), [counts, x], 2,
                        ["--discharge-state"])
want = counts.copy()
for i in range(4):
    want[x[8 * i]] += 1
assert (out_counts == want).all(), (out_counts, want)
assert (out_x == x).all()
print("discharge-state hist: counter updated in place, output unchanged")
