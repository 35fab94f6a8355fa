"""many-operands.py PALLASC DIR N: a kernel with N operands (N/2 inputs, N/2
outputs, output k = input k + k, each an 8x128 f32 block of a 16x128 array over
a grid of 2), run with `pallasc run`; every output is compared with numpy."""
import os
import subprocess
import sys

import numpy as np

pallasc, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
ins = n // 2
T, R = "tensor<8x128xf32>", "!pallas.ref<8x128xf32>"
refs = [f"%i{k}: {R}" for k in range(ins)] + [f"%o{k}: {R}" for k in range(ins)]
lines = [f"pallas.kernel @many({', '.join(refs)}) {{"]
for k in range(ins):
    lines += [f"  %c{k} = arith.constant dense<{k}.0> : {T}",
              f"  %a{k} = pallas.load %i{k}[] : {R} -> {T}",
              f"  %b{k} = arith.addf %a{k}, %c{k} : {T}",
              f"  pallas.store %o{k}[], %b{k} : {R}, {T}"]
lines.append("}")
with open(os.path.join(out, "many.mlir"), "w") as f:
    f.write("\n".join(lines) + "\n")
arr = '{"shape": [16, 128], "dtype": "f32"}'
blk = '{"block_shape": [8, 128], "index_map": "(i) -> (i, 0)"}'
with open(os.path.join(out, "many.json"), "w") as f:
    f.write('{"schema": "pallasc.gridspec/v1", "kernel": "many", "grid": [2],\n'
            f' "inputs": [{", ".join([arr] * ins)}],\n'
            f' "outputs": [{", ".join([arr] * ins)}],\n'
            f' "in_specs": [{", ".join([blk] * ins)}],\n'
            f' "out_specs": [{", ".join([blk] * ins)}]}}\n')
rng = np.random.default_rng(18)
args = [pallasc, "run", os.path.join(out, "many.mlir"), "--spec", os.path.join(out, "many.json")]
xs = []
for k in range(ins):
    x = rng.standard_normal((16, 128)).astype(np.float32)
    xs.append(x)
    np.save(os.path.join(out, f"x{k}.npy"), x)
    args += ["--input", os.path.join(out, f"x{k}.npy")]
for k in range(ins):
    args += ["--output", os.path.join(out, f"y{k}.npy")]
subprocess.run(args, check=True)
bad = [k for k in range(ins)
       if not np.array_equal(np.load(os.path.join(out, f"y{k}.npy")), xs[k] + np.float32(k))]
print(f"{ins} inputs, {ins} outputs, {ins - len(bad)} right, wrong: {bad[:10]}")
