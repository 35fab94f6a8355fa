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
used to be super-linear (4.3 / 15.6 / 69 / 291 s for
1.25k..10k ops on cpu); --reps (default 3, best of) can be lowered for the
large sizes. --jvp times only the `--jvp` compiles (e.g. `--jvp --target cpu
--sizes 250,500,1000,2000`: the tangent ops' producers have several uses, which
pallas-cpu-fuse-elementwise fuses too).

    bench/stress_compile.py [PALLASC] --operands 250,500,1000 [--reps N]
    bench/stress_compile.py [PALLASC] --nest 50,100,200 [--target T] [--reps N]

--operands N times `pallasc run` (compile, JIT, grid walk, outputs not
written) on a kernel with N operands, N/2 inputs and N/2 outputs, each an 8x128
f32 block (output k = input k + 1.0), inputs from --random-inputs. --nest D
times a kernel whose body is D nested `scf.for` loops (2 trips each at the
innermost two levels, 1 - program id elsewhere, so that no loop folds away) carrying a tensor iter_arg through every
level, with `pallasc run` and with --target (default cpu). Before the
loop-nest bound (pallas-cpu-bound-loop-nests) it measured 1.1 / 3.8 / 17 s for 250 / 500 / 1000 operands and 7 / 42 / 281 s for
depth 50 / 100 / 200.
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
operands = None
nest = None
jvp_only = False
args = sys.argv[1:]
while args:
    a = args.pop(0)
    if a == "--sizes":
        sizes = [int(x) for x in args.pop(0).split(",")]
    elif a == "--target":
        target = ["--target", args.pop(0)]
    elif a == "--operands":
        operands = [int(x) for x in args.pop(0).split(",")]
    elif a == "--nest":
        nest = [int(x) for x in args.pop(0).split(",")]
    elif a == "--jvp":
        jvp_only = True
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


def operand_kernel(n):
    ins = n // 2
    refs = ", ".join([f"%i{k}: {R}" for k in range(ins)] + [f"%o{k}: {R}" for k in range(ins)])
    lines = [f"pallas.kernel @stress({refs}) {{",
             f"  %one = arith.constant dense<1.0> : {T}"]
    for k in range(ins):
        lines.append(f"  %a{k} = pallas.load %i{k}[] : {R} -> {T}")
        lines.append(f"  %b{k} = arith.addf %a{k}, %one : {T}")
        lines.append(f"  pallas.store %o{k}[], %b{k} : {R}, {T}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def operand_spec(n):
    ins = n // 2
    arr = '{"shape": [16, 128], "dtype": "f32"}'
    blk = '{"block_shape": [8, 128], "index_map": "(i) -> (i, 0)"}'
    return ('{"schema": "pallasc.gridspec/v1", "kernel": "stress", "grid": [2],\n'
            f' "inputs": [{", ".join([arr] * ins)}],\n'
            f' "outputs": [{", ".join([arr] * ins)}],\n'
            f' "in_specs": [{", ".join([blk] * ins)}],\n'
            f' "out_specs": [{", ".join([blk] * ins)}]}}\n')


def nest_kernel(d):
    lines = [f"pallas.kernel @stress(%x: {R}, %o: {R}) {{",
             "  %c0 = arith.constant 0 : index",
             "  %c1 = arith.constant 1 : index",
             "  %c2 = arith.constant 2 : index",
             f"  %one = arith.constant dense<1.0> : {T}",
             f"  %a = pallas.load %x[] : {R} -> {T}",
             "  %p = pallas.program_id 0 : i32",
             "  %pi = arith.index_cast %p : i32 to index",
             "  %ub = arith.subi %c1, %pi : index"]
    prev = "%a"
    for k in range(d):
        ub = "%c2" if k >= d - 2 else "%ub"
        lines.append("  " * (k + 1) + f"%r{k} = scf.for %k{k} = %c0 to {ub} step %c1 "
                     f"iter_args(%acc{k} = {prev}) -> ({T}) {{")
        prev = f"%acc{k}"
    lines.append("  " * (d + 1) + f"%s = arith.addf {prev}, %one : {T}")
    lines.append("  " * (d + 1) + f"scf.yield %s : {T}")
    for k in reversed(range(d)):
        lines.append("  " * (k + 1) + "}")
        if k > 0:
            lines.append("  " * (k + 1) + f"scf.yield %r{k} : {T}")
    lines.append(f"  pallas.store %o[], %r0 : {R}, {T}")
    lines.append("}")
    return "\n".join(lines) + "\n"


NEST_SPEC = """{"schema": "pallasc.gridspec/v1", "kernel": "stress", "grid": [2],
 "inputs": [{"shape": [16, 128], "dtype": "f32"}],
 "outputs": [{"shape": [16, 128], "dtype": "f32"}],
 "in_specs": [{"block_shape": [8, 128], "index_map": "(i) -> (i, 0)"}],
 "out_specs": [{"block_shape": [8, 128], "index_map": "(i) -> (i, 0)"}]}
"""


def curve(label, unit, points, tmp):
    """points: [(size, kernel text, spec text, extra args)]; prints time per size."""
    print(f"== pallasc {label}")
    print(f"{unit:>8} {'seconds':>9} {'ms/' + unit:>10} {'growth':>7}")
    base = None
    for n, ktext, stext, cmd in points:
        k = os.path.join(tmp, f"k{n}.mlir")
        s = os.path.join(tmp, f"s{n}.json")
        with open(k, "w") as f:
            f.write(ktext)
        with open(s, "w") as f:
            f.write(stext)
        t = best_of(cmd(k, s))
        per = t / n * 1e3
        base = base or per
        print(f"{n:>8} {t:>9.3f} {per:>10.2f} {per / base:>6.2f}x", flush=True)


if operands or nest:
    with tempfile.TemporaryDirectory() as tmp:
        run = lambda k, s: [pallasc, "run", k, "--spec", s, "--random-inputs", "1", "--no-cache"]
        if operands:
            curve("run (operands)", "operand",
                  [(n, operand_kernel(n), operand_spec(n), run) for n in operands], tmp)
        if nest:
            curve("run (scf.for nest)", "depth",
                  [(d, nest_kernel(d), NEST_SPEC, run) for d in nest], tmp)
            tgt = target or ["--target", "cpu"]
            comp = lambda k, s: [pallasc, k, "--spec", s, "-o", os.path.join(tmp, "out")] + tgt
            curve(" ".join(tgt) + " (scf.for nest)", "depth",
                  [(d, nest_kernel(d), NEST_SPEC, comp) for d in nest], tmp)
    sys.exit(0)


with tempfile.TemporaryDirectory() as tmp:
    spec = os.path.join(tmp, "spec.json")
    with open(spec, "w") as f:
        f.write(SPEC)
    modes = [("compile", []), ("compile --jvp", ["--jvp"])]
    for label, extra in modes[1:] if jvp_only else modes:
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
