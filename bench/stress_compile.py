#!/usr/bin/env python3
"""Compile-time scaling of pallasc on generated kernels with thousands of ops.

    bench/stress_compile.py [PALLASC] [--sizes 1000,2000,4000,8000,16000]
                            [--target T] [--reps N]

Generates an elementwise kernel whose body is a chain of N arith/math ops on
8x128 f32 blocks (plus loads/stores), compiles it with `pallasc` (import,
verify, canonicalize, CSE, manifest) and with `pallasc --jvp` (which roughly
triples the body), and prints wall time per size and per op. Time per op that
stays flat as N grows means the passes are linear; the last column is the
growth of the per-op time relative to the smallest size.

With --target (e.g. `--target cpu --sizes 625,1250,2500,5000`) the compiles
include that target's lowering and LLVM code generation, where a long chain
used to be super-linear (issue 18, item 5: 4.3 / 15.6 / 69 / 291 s for
1.25k..10k ops on cpu); --reps (default 3, best of) can be lowered for the
large sizes.
"""
import os
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pallasc = os.path.join(root, "build", "bin", "pallasc")
sizes = [1000, 2000, 4000, 8000, 16000]
target = []
reps = 3
args = sys.argv[1:]
while args:
    a = args.pop(0)
    if a == "--sizes":
        sizes = [int(x) for x in args.pop(0).split(",")]
    elif a == "--target":
        target = ["--target", args.pop(0)]
    elif a == "--reps":
        reps = int(args.pop(0))
    else:
        pallasc = a

T = "tensor<8x128xf32>"
R = "!pallas.ref<8x128xf32>"


def kernel(n):
    lines = [f"pallas.kernel @stress(%x: {R}, %y: {R}, %o: {R}) {{",
             f"  %a = pallas.load %x[] : {R} -> {T}",
             f"  %b = pallas.load %y[] : {R} -> {T}"]
    prev, other = "%a", "%b"
    ops = ["arith.addf", "arith.mulf", "arith.subf", "math.tanh", "arith.maximumf"]
    for i in range(n):
        op = ops[i % len(ops)]
        if op.startswith("math."):
            lines.append(f"  %v{i} = {op} {prev} : {T}")
        else:
            lines.append(f"  %v{i} = {op} {prev}, {other} : {T}")
        other, prev = prev, f"%v{i}"
    lines.append(f"  pallas.store %o[], {prev} : {R}, {T}")
    lines.append("}")
    return "\n".join(lines) + "\n"


SPEC = """{"schema": "pallasc.gridspec/v1", "kernel": "stress", "grid": [16],
 "inputs": [{"shape": [128, 128], "dtype": "f32"}, {"shape": [128, 128], "dtype": "f32"}],
 "outputs": [{"shape": [128, 128], "dtype": "f32"}],
 "in_specs": [{"block_shape": [8, 128], "index_map": "(i) -> (i, 0)"},
              {"block_shape": [8, 128], "index_map": "(i) -> (i, 0)"}],
 "out_specs": [{"block_shape": [8, 128], "index_map": "(i) -> (i, 0)"}]}
"""


def best_of(cmd):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return min(times)


with tempfile.TemporaryDirectory() as tmp:
    spec = os.path.join(tmp, "spec.json")
    with open(spec, "w") as f:
        f.write(SPEC)
    for label, extra in [("compile", []), ("compile --jvp", ["--jvp"])]:
        extra = extra + target
        label += " " + " ".join(target) if target else ""
        print(f"== pallasc {label}")
        print(f"{'ops':>8} {'seconds':>9} {'us/op':>8} {'growth':>7}")
        base = None
        for n in sizes:
            k = os.path.join(tmp, f"k{n}.mlir")
            with open(k, "w") as f:
                f.write(kernel(n))
            t = best_of([pallasc, k, "--spec", spec, "-o", os.path.join(tmp, "out")] + extra)
            per = t / n * 1e6
            base = base or per
            print(f"{n:>8} {t:>9.3f} {per:>8.1f} {per / base:>6.2f}x")
