"""Numeric checks of pallas-jvp with `pallasc run`.

usage: jvp_run_check.py PALLASC EXAMPLES_DIR WORK_DIR

For each differentiable example, `pallasc run --jvp` on (primals, tangents)
must give the primal outputs of a plain run, bit for bit, and tangent
outputs equal to the directional derivative of a float64 numpy model of the
kernel, computed by central finite differences (eps = 1e-6), within a
tolerance set by the kernel's dtypes.
"""
import os
import sys

import numpy as np

from pallasc_run import bf16_to_f32, pallasc_run, to_bf16

PALLASC, EXAMPLES, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
rng = np.random.default_rng(0)


def run(example, inputs, num_outputs, flags=()):
    return pallasc_run(PALLASC, WORK,
                       os.path.join(EXAMPLES, example, "kernel.mlir"),
                       os.path.join(EXAMPLES, example, "spec.json"), inputs,
                       num_outputs, flags)


def as_f64(a):
    if a.dtype.kind == "V":
        return bf16_to_f32(a).astype(np.float64)
    return a.astype(np.float64)


def softmax_model(x):
    x = x[:, :1000]
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layernorm_model(x, w, b):
    mean = x.mean(axis=1, keepdims=True)
    xc = x - mean
    rstd = 1 / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + 1e-5)
    return xc * rstd * w[None, :] + b[None, :]


def matmul_model(a, b):
    return a @ b


def attention_model(q, k, v):
    s = np.einsum("bqd,bkd->bqk", q, k) * 0.125
    p = np.exp(s - s.max(axis=2, keepdims=True))
    return np.einsum("bqk,bkd->bqd", p / p.sum(axis=2, keepdims=True), v)


def check(example, model, primals, tangents, tolerance):
    """Compares the JVP tangent with finite differences of `model`."""
    out, tangent = run(example, primals + tangents, 2, ["--jvp"])
    (plain,) = run(example, primals, 1)
    if not np.array_equal(out.view(np.uint8), plain.view(np.uint8)):
        sys.exit(f"jvp {example}: the primal output differs from a plain run")
    xs = [as_f64(a) for a in primals]
    ds = [as_f64(a) for a in tangents]
    eps = 1e-6
    plus = model(*[x + eps * d for x, d in zip(xs, ds)])
    minus = model(*[x - eps * d for x, d in zip(xs, ds)])
    want = (plus - minus) / (2 * eps)
    got = as_f64(tangent)
    if example == "softmax":
        got = got[:, :1000]
    err = np.abs(got - want).max() / np.abs(want).max()
    if not err <= tolerance:
        sys.exit(f"jvp {example}: tangent differs from finite differences by "
                 f"{err:.3g} (relative to its largest entry), over {tolerance}")
    print(f"jvp {example}: primal unchanged, tangent matches finite differences",
          f"(relative error {err:.1e}, tolerance {tolerance:g})", file=sys.stderr)
    print(f"jvp {example}: primal unchanged, tangent matches finite differences")


def normal(shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


check("add", lambda x, y: x + y,
      [normal([1024, 2048]), normal([1024, 2048])],
      [normal([1024, 2048]), normal([1024, 2048])], 1e-6)
check("softmax", softmax_model,
      [normal([4096, 1000])], [normal([4096, 1000])], 1e-4)
check("layernorm", layernorm_model,
      [normal([4096, 1024]), normal([1024]), normal([1024])],
      [normal([4096, 1024]), normal([1024]), normal([1024])], 1e-4)
# Small integers are exact in bf16 and in the f32 accumulator.
ints = lambda shape, n: to_bf16(rng.integers(-n, n + 1, shape).astype(np.float32))
check("matmul", matmul_model,
      [ints([1024, 512], 4), ints([512, 1024], 4)],
      [ints([1024, 512], 2), ints([512, 1024], 2)], 1e-6)
# f16 operands and output, f16 probabilities: a looser bound.
check("flash_attention", attention_model,
      [normal([8, 1024, 64], np.float16) for _ in range(3)],
      [normal([8, 1024, 64], np.float16) for _ in range(3)], 2e-2)
