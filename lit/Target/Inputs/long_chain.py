"""A long chain of elementwise ops, its spec and inputs.

    long_chain.py gen DIR N        writes DIR/chain.mlir, chain.json, x.npy, y.npy
    long_chain.py check DIR N OUT  compares OUT.npy with numpy's chain
    long_chain.py check-jvp DIR N OUT TOUT
                                   compares the primal OUT.npy and the tangent
                                   TOUT.npy of `pallasc run --jvp` (tangent
                                   inputs DIR/tx.npy, ty.npy, written by gen)
    long_chain.py count-generics   reads printed IR on stdin; prints the number
                                   of linalg.generic ops and the ops in the
                                   largest body (its yield not counted)

Op i applies subf / mulf / maximumf / negf / addf / minimumf to the previous
value and an input block (x for sub and max, y for the others), so each op's
producer has one use and the CPU pipeline fuses the chain as far as its bound
allows. Every op is one IEEE-rounded f32 operation (no contraction on the
CPU), so numpy's float32 chain is the exact reference; with x in [-0.5, 0.5]
and y in [0.5, 1.5] the values stay finite and nonzero.

Under --jvp every primal value also feeds the tangent ops (a product's
tangent reads both factors, a max's or min's tangent compares them), so the
chain's producers have several uses. The tangent reference is forward-mode
differentiation written out here in float64 from the derivative of each op
(d(v*b) = dv*b + v*db; max/min pass the tangent of the larger/smaller
operand, the mean of both on a tie), with the branches taken on the float32
primal values; it is compared with a relative tolerance.
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


def chain_jvp_np(n, a, b, ta, tb):
    v, t = a, ta.astype(np.float64)
    ta, tb = ta.astype(np.float64), tb.astype(np.float64)
    for i in range(n):
        op = CYCLE[i % len(CYCLE)][0]
        if op == "arith.subf":
            v, t = v - a, t - ta
        elif op == "arith.mulf":
            v, t = v * b, t * b.astype(np.float64) + v.astype(np.float64) * tb
        elif op == "arith.maximumf":
            t = np.where(v > a, t, np.where(v < a, ta, 0.5 * (t + ta)))
            v = np.maximum(v, a)
        elif op == "arith.negf":
            v, t = -v, -t
        elif op == "arith.addf":
            v, t = v + b, t + tb
        else:
            t = np.where(v < b, t, np.where(v > b, tb, 0.5 * (t + tb)))
            v = np.minimum(v, b)
        v = v.astype(np.float32)
    return v, t


def tangents():
    rng = np.random.default_rng(11)
    return (rng.uniform(-1, 1, (32, 128)).astype(np.float32),
            rng.uniform(-1, 1, (32, 128)).astype(np.float32))


def inputs():
    rng = np.random.default_rng(7)
    x = rng.uniform(-0.5, 0.5, (32, 128)).astype(np.float32)
    y = rng.uniform(0.5, 1.5, (32, 128)).astype(np.float32)
    return x, y


def count_generics():
    generics, largest, body = 0, 0, None
    for line in sys.stdin:
        line = line.strip()
        if "linalg.generic" in line:
            generics += 1
        elif line.startswith("^bb"):
            body = 0
        elif line.startswith("linalg.yield"):
            largest, body = max(largest, body or 0), None
        elif body is not None and line:
            body += 1
    print("generics: %d, largest body %s 256 (%d ops)"
          % (generics, "<=" if largest <= 256 else ">", largest))


def main():
    if sys.argv[1] == "count-generics":
        return count_generics()
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
        tx, ty = tangents()
        np.save(os.path.join(d, "tx.npy"), tx)
        np.save(os.path.join(d, "ty.npy"), ty)
        return
    x, y = inputs()
    if mode == "check-jvp":
        want, twant = chain_jvp_np(n, x, y, *tangents())
        got, tgot = np.load(sys.argv[4]), np.load(sys.argv[5])
        bad = int(np.sum(got != want))
        tol = 1e-4 * np.maximum(1.0, np.abs(twant))
        tbad = int(np.sum(~(np.abs(tgot - twant) <= tol)))
        print("jvp of a chain of %d ops: primal %d, tangent %d of %d elements "
              "differ (tangent rms %.3g)"
              % (n, bad, tbad, want.size, np.sqrt(np.mean(twant ** 2))))
        return
    want = chain_np(n, x, y)
    assert np.isfinite(want).all() and (want != 0).all()
    got = np.load(sys.argv[4])
    bad = int(np.sum(got != want))
    print("chain of %d ops: %d of %d elements differ" % (n, bad, want.size))


main()
