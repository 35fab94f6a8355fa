"""A long chain of elementwise ops (issue 18, item 5), its spec and inputs.

    long_chain.py gen DIR N        writes DIR/chain.mlir, chain.json, x.npy, y.npy
    long_chain.py check DIR N OUT  compares OUT.npy with numpy's chain

Op i applies subf / mulf / maximumf / negf / addf / minimumf to the previous
value and an input block (x for sub and max, y for the others), so each op's
producer has one use and the CPU pipeline fuses the chain as far as its bound
allows. Every op is one IEEE-rounded f32 operation (no contraction on the
CPU), so numpy's float32 chain is the exact reference; with x in [-0.5, 0.5]
and y in [0.5, 1.5] the values stay finite and nonzero.
"""
import json
import os
import sys

import numpy as np

T = "tensor<8x128xf32>"
R = "!pallas.ref<8x128xf32>"
# (op, second operand or None)
CYCLE = [("arith.subf", "%a"), ("arith.mulf", "%b"), ("arith.maximumf", "%a"),
         ("arith.negf", None), ("arith.addf", "%b"), ("arith.minimumf", "%b")]


def chain_ir(n):
    lines = [f"pallas.kernel @chain(%x: {R}, %y: {R}, %o: {R}) {{",
             f"  %a = pallas.load %x[] : {R} -> {T}",
             f"  %b = pallas.load %y[] : {R} -> {T}"]
    prev = "%a"
    for i in range(n):
        op, other = CYCLE[i % len(CYCLE)]
        args = prev if other is None else f"{prev}, {other}"
        lines.append(f"  %v{i} = {op} {args} : {T}")
        prev = f"%v{i}"
    lines.append(f"  pallas.store %o[], {prev} : {R}, {T}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def chain_np(n, a, b):
    v = a
    for i in range(n):
        op = CYCLE[i % len(CYCLE)][0]
        if op == "arith.subf":
            v = v - a
        elif op == "arith.mulf":
            v = v * b
        elif op == "arith.maximumf":
            v = np.maximum(v, a)
        elif op == "arith.negf":
            v = -v
        elif op == "arith.addf":
            v = v + b
        else:
            v = np.minimum(v, b)
        v = v.astype(np.float32)
    return v


def inputs():
    rng = np.random.default_rng(7)
    x = rng.uniform(-0.5, 0.5, (32, 128)).astype(np.float32)
    y = rng.uniform(0.5, 1.5, (32, 128)).astype(np.float32)
    return x, y


def main():
    mode, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "gen":
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "chain.mlir"), "w") as f:
            f.write(chain_ir(n))
        block = {"block_shape": [8, 128], "index_map": "(i) -> (i, 0)"}
        spec = {"schema": "pallasc.gridspec/v1", "kernel": "chain", "grid": [4],
                "inputs": [{"shape": [32, 128], "dtype": "f32"}] * 2,
                "outputs": [{"shape": [32, 128], "dtype": "f32"}],
                "in_specs": [block, block], "out_specs": [block]}
        with open(os.path.join(d, "chain.json"), "w") as f:
            json.dump(spec, f)
        x, y = inputs()
        np.save(os.path.join(d, "x.npy"), x)
        np.save(os.path.join(d, "y.npy"), y)
        return
    x, y = inputs()
    want = chain_np(n, x, y)
    assert np.isfinite(want).all() and (want != 0).all()
    got = np.load(sys.argv[4])
    bad = int(np.sum(got != want))
    print("chain of %d ops: %d of %d elements differ" % (n, bad, want.size))


main()
