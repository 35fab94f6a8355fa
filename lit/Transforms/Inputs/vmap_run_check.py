"""Numeric checks of the vmap cases that leave more than the call in @main.

usage: vmap_run_check.py PALLASC EXAMPLES_DIR INPUTS_DIR WORK_DIR

`pallasc run --vmap` executes the whole wrapper: the explicit per-batch loop
(a batched scalar-prefetch operand), the reshapes of axis_size 1, the
broadcast of an unbatched aliased input and the transpose of an aliased input
batched at a non-zero axis. Each batched result is compared with a numpy
model of the kernel applied to every batch element (exact: the kernels only
copy, add and double). Last, vmap composed with jvp in both orders on the
softmax example, against its analytic JVP.
"""
import os
import sys

import numpy as np

from pallasc_run import pallasc_run

PALLASC, EXAMPLES, INPUTS, WORK = sys.argv[1:5]
os.makedirs(WORK, exist_ok=True)
rng = np.random.default_rng(0)
runs = 0


def run(kernel, spec, inputs, num_outputs, flags):
    global runs
    runs += 1
    return pallasc_run(PALLASC, WORK, kernel, spec, inputs, num_outputs, flags,
                       prefix=f"r{runs}-")


def expect_equal(what, got, want):
    if got.shape != want.shape or got.dtype != want.dtype:
        sys.exit(f"{what}: got {got.shape} {got.dtype}, "
                 f"expected {want.shape} {want.dtype}")
    if not np.array_equal(got, want):
        bad = np.argwhere(got != want)[0]
        sys.exit(f"{what}: differs from numpy at {tuple(bad)}: "
                 f"{got[tuple(bad)]} != {want[tuple(bad)]}")


# A batched scalar-prefetch operand: vmap's explicit loop, one unbatched
# launch per batch element. out[b, i, :] = table[b, idx[b, i], :].
gather = [os.path.join(EXAMPLES, "scalar_prefetch", f)
          for f in ("kernel.mlir", "spec.json")]
idx = rng.integers(0, 256, size=(3, 16)).astype(np.int32)
table = rng.standard_normal((3, 256, 512)).astype(np.float32)
out, = run(*gather, [idx, table], 1, ["--vmap", "0,0:3"])
want = np.stack([table[b][idx[b]] for b in range(3)])
expect_equal("vmap scalar_prefetch 0,0:3", out, want)
print("vmap scalar_prefetch 0,0:3 (explicit loop): equals numpy per batch")

# The same call with the indices unbatched: no loop (a batched grid axis),
# checked against the same model.
out, = run(*gather, [idx[0], table], 1, ["--vmap", "none,0:3"])
want = np.stack([table[b][idx[0]] for b in range(3)])
expect_equal("vmap scalar_prefetch none,0:3", out, want)
print("vmap scalar_prefetch none,0:3 (batched grid): equals numpy per batch")

# The loop with a dynamic grid bound (4 of the 16 rows): each launch gets the
# bound; the rows it does not write stay uninitialized (NaN).
dynamic = [os.path.join(EXAMPLES, "scalar_prefetch", "kernel.mlir"),
           os.path.join(INPUTS, "gather-dynamic.json")]
out, = run(*dynamic, [idx, table], 1,
           ["--vmap", "0,0:3", "--grid-bound", "4"])
want = np.full((3, 16, 512), np.nan, np.float32)
for b in range(3):
    want[b, :4] = table[b][idx[b, :4]]
if not np.array_equal(out, want, equal_nan=True):
    sys.exit("vmap scalar_prefetch (dynamic bound 4) 0,0:3: differs from numpy")
print("vmap scalar_prefetch 0,0:3 with --grid-bound 4 (explicit loop): equals "
      "numpy per batch")

# axis_size 1: the batch axis is reshaped away before the call and back
# after it.
add = [os.path.join(EXAMPLES, "add", f) for f in ("kernel.mlir", "spec.json")]
x = rng.standard_normal((1, 1024, 2048)).astype(np.float32)
y = rng.standard_normal((1024, 1, 2048)).astype(np.float32)
out, = run(*add, [x, y], 1, ["--vmap", "0,1:1"])
expect_equal("vmap add 0,1:1", out, x + y[:, 0, :][None])
print("vmap add 0,1:1 (axis_size 1): equals numpy")

# An unbatched input aliased to the output: broadcast along a new batch
# axis, each batch element updated in place from the same accumulator.
axpy = [os.path.join(INPUTS, f) for f in ("axpy.mlir", "axpy.json")]
xs = rng.standard_normal((3, 32, 128)).astype(np.float32)
acc = rng.standard_normal((32, 128)).astype(np.float32)
out, = run(*axpy, [xs, acc], 1, ["--vmap", "0,none:3"])
want = np.stack([acc + 2 * xs[b] for b in range(3)])
expect_equal("vmap axpy 0,none:3", out, want)
print("vmap axpy 0,none:3 (unbatched aliased input): equals numpy per batch")

# An aliased input batched at axis 1 (and x at axis 2): moved to axis 0
# before the call.
xs = rng.standard_normal((32, 128, 3)).astype(np.float32)
accs = rng.standard_normal((32, 3, 128)).astype(np.float32)
out, = run(*axpy, [xs, accs], 1, ["--vmap", "2,1:3"])
want = np.stack([accs[:, b, :] + 2 * xs[:, :, b] for b in range(3)])
expect_equal("vmap axpy 2,1:3", out, want)
print("vmap axpy 2,1:3 (aliased input batched at axis 1): equals numpy "
      "per batch")

# The loop slicing a batch axis other than 0: the indices batched at axis 1.
idx_t = np.ascontiguousarray(idx.T)
out, = run(*gather, [idx_t, table], 1, ["--vmap", "1,0:3"])
want = np.stack([table[b][idx_t[:, b]] for b in range(3)])
expect_equal("vmap scalar_prefetch 1,0:3", out, want)
print("vmap scalar_prefetch 1,0:3 (explicit loop, indices at axis 1): equals "
      "numpy per batch")

# Composition with jvp, both orders, on the softmax example: the primal is
# softmax per batch element and the tangent its analytic JVP,
# s * (v - sum(s * v)) along each row (float64 model, f32 kernel: 1e-5).
softmax = [os.path.join(EXAMPLES, "softmax", f)
           for f in ("kernel.mlir", "spec.json")]
xs = rng.standard_normal((2, 4096, 1000)).astype(np.float32)
vs = rng.standard_normal((2, 4096, 1000)).astype(np.float32)
x64, v64 = xs.astype(np.float64), vs.astype(np.float64)
e = np.exp(x64 - x64.max(axis=-1, keepdims=True))
s = e / e.sum(axis=-1, keepdims=True)
ds = s * (v64 - (s * v64).sum(axis=-1, keepdims=True))
for flags, what in [(["--vmap", "0:2", "--jvp"], "vmap then jvp"),
                    (["--jvp", "--vmap", "0,0:2"], "jvp then vmap")]:
    out, tangent = run(*softmax, [xs, vs], 2, flags)
    for name, got, want in [("primal", out, s), ("tangent", tangent, ds)]:
        err = np.abs(got.astype(np.float64) - want).max()
        if not err < 1e-5:
            sys.exit(f"softmax {what}: the {name} differs from numpy by {err}")
    print(f"softmax {what}: primal and tangent equal numpy per batch")

# vmap of a wrapper that already holds vmap's explicit loop (a batched
# scalar-prefetch operand, twice): the outer vmap has no rule for the inner
# loop's scf.for, so it runs it once per outer batch element in a loop of
# its own. out[a, b, i, :] = table[a, b, idx[a, b, i], :].
idx2 = rng.integers(0, 256, size=(2, 3, 16)).astype(np.int32)
table2 = rng.standard_normal((2, 3, 256, 512)).astype(np.float32)
nested = [os.path.join(EXAMPLES, "scalar_prefetch", "kernel.mlir"),
          os.path.join(INPUTS, "gather-vmap.json")]
out, = run(*nested, [idx2, table2], 1, ["--vmap", "0,0:2"])
want = np.stack([np.stack([table2[a, b][idx2[a, b]] for b in range(3)])
                 for a in range(2)])
expect_equal("vmap of vmap scalar_prefetch", out, want)
print("vmap of vmap scalar_prefetch (nested explicit loops): equals numpy")
