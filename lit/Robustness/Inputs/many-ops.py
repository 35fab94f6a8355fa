# Prints a kernel @stress (two 8x128 f32 inputs, one output; spec:
# many-ops.json) with N arith ops between its loads and its store, one op per
# line: the kernel has N + 5 operations (pallas.kernel, two loads, N ops, the
# store and the implicit pallas.return), and operation K (K <= N + 4, in
# textual order) is on line K.
#   %python many-ops.py N > kernel.mlir
import sys

n = int(sys.argv[1])
T = "tensor<8x128xf32>"
R = "!pallas.ref<8x128xf32>"
out = [f"pallas.kernel @stress(%x: {R}, %y: {R}, %o: {R}) {{",
       f"  %a = pallas.load %x[] : {R} -> {T}",
       f"  %b = pallas.load %y[] : {R} -> {T}"]
prev, other = "%a", "%b"
for i in range(n):
    op = "arith.addf" if i % 2 == 0 else "arith.mulf"
    out.append(f"  %v{i} = {op} {prev}, {other} : {T}")
    other, prev = prev, f"%v{i}"
out.append(f"  pallas.store %o[], {prev} : {R}, {T}")
out.append("}")
sys.stdout.write("\n".join(out) + "\n")
