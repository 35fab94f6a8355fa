"""deep-loop-nest.py PALLASC DIR D [mix]: a kernel whose body is D nested
scf.for loops carrying an 8x128 f32 block as a tensor iter_arg through every
level (the innermost adds 1.0), run with `pallasc run` over a grid of 2; the
output is compared with numpy running the same nest in Python.

Trip counts: the innermost two loops run 2 trips, every other one 1 - program
id (1 at program 0, 0 at program 1), so that no loop folds away. With `mix`,
every level but the innermost yields (inner loop's result - its own iter_arg),
so the iter_arg must survive the inner loop, and the loops just outside and
at every 8th level (where pallas-cpu-bound-loop-nests copies the init) run
2 - program id trips."""
import os
import subprocess
import sys

import numpy as np

pallasc, out, d = sys.argv[1], sys.argv[2], int(sys.argv[3])
mix = sys.argv[4:] == ["mix"]
T, R = "tensor<8x128xf32>", "!pallas.ref<8x128xf32>"


def upper(k):
    """The upper bound of level k (0 = outermost), as SSA name and as a
    function of the program id."""
    if k >= d - 2:
        return "%c2", lambda pid: 2
    if mix and k % 8 in (7, 0) and k > 0:
        return "%ub2", lambda pid: 2 - pid
    return "%ub", lambda pid: 1 - pid


lines = [f"pallas.kernel @nest(%x: {R}, %o: {R}) {{",
         "  %c0 = arith.constant 0 : index",
         "  %c1 = arith.constant 1 : index",
         "  %c2 = arith.constant 2 : index",
         f"  %one = arith.constant dense<1.0> : {T}",
         f"  %a = pallas.load %x[] : {R} -> {T}",
         "  %p = pallas.program_id 0 : i32",
         "  %pi = arith.index_cast %p : i32 to index",
         "  %ub = arith.subi %c1, %pi : index",
         "  %ub2 = arith.subi %c2, %pi : index"]
prev = "%a"
for k in range(d):
    lines.append(f"  %r{k} = scf.for %k{k} = %c0 to {upper(k)[0]} step %c1 "
                 f"iter_args(%acc{k} = {prev}) -> ({T}) {{")
    prev = f"%acc{k}"
lines += [f"  %s = arith.addf {prev}, %one : {T}", f"  scf.yield %s : {T}"]
for k in reversed(range(d)):
    lines.append("  }")
    if k > 0 and mix:
        lines.append(f"  %m{k} = arith.subf %r{k}, %acc{k - 1} : {T}")
        lines.append(f"  scf.yield %m{k} : {T}")
    elif k > 0:
        lines.append(f"  scf.yield %r{k} : {T}")
lines += [f"  pallas.store %o[], %r0 : {R}, {T}", "}"]
with open(os.path.join(out, "nest.mlir"), "w") as f:
    f.write("\n".join(lines) + "\n")
with open(os.path.join(out, "nest.json"), "w") as f:
    f.write('{"schema": "pallasc.gridspec/v1", "kernel": "nest", "grid": [2],\n'
            ' "inputs": [{"shape": [16, 128], "dtype": "f32"}],\n'
            ' "outputs": [{"shape": [16, 128], "dtype": "f32"}],\n'
            ' "in_specs": [{"block_shape": [8, 128], "index_map": "(i) -> (i, 0)"}],\n'
            ' "out_specs": [{"block_shape": [8, 128], "index_map": "(i) -> (i, 0)"}]}\n')

x = np.random.default_rng(18).standard_normal((16, 128)).astype(np.float32)
np.save(os.path.join(out, "x.npy"), x)
subprocess.run([pallasc, "run", os.path.join(out, "nest.mlir"),
                "--spec", os.path.join(out, "nest.json"),
                "--input", os.path.join(out, "x.npy"),
                "--output", os.path.join(out, "y.npy")], check=True)
y = np.load(os.path.join(out, "y.npy"))


def level(k, acc, pid):
    """Level k of the nest on one block, as the kernel runs it."""
    if k == d:
        return acc + np.float32(1.0)
    for _ in range(upper(k)[1](pid)):
        inner = level(k + 1, acc, pid)
        acc = inner - acc if mix and k < d - 1 else inner
    return acc


sys.setrecursionlimit(max(1000, 4 * d))
for pid in range(2):
    want = level(0, x[8 * pid:8 * pid + 8], pid)
    got = y[8 * pid:8 * pid + 8]
    print(f"block {pid}: {'right' if np.array_equal(got, want) else 'WRONG'},"
          f" output - input in [{(got - x[8 * pid:8 * pid + 8]).min():g},"
          f" {(got - x[8 * pid:8 * pid + 8]).max():g}]")
