# Writes the inputs of matmul-small.json and the expected output, computed
# here without numpy (an independent reference, exact: small integers are
# exact in bf16 and their products and sums exact in f32):
#   a[i, k] = (7 i + 3 k) % 11 - 5              [128, 256] bf16
#   b[k, j] = 1 if k == j or k == j + 128 else 0  [256, 128] bf16
# so out[i, j] = a[i, j] + a[i, j + 128], the sum over both k steps.
#   make_matmul.py DIR   writes DIR/a.npy, DIR/b.npy, DIR/expected.npy
import os
import struct
import sys


def save(path, descr, shape, payload):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    text = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, dims)
    text += " " * ((64 - (10 + len(text) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) +
                text.encode() + payload)


def bf16(values):
    # The high half of each f32 (exact for these small integers); .npy has
    # no bf16 dtype: ml_dtypes' arrays are saved as '<V2'.
    return b"".join(struct.pack("<f", v)[2:] for v in values)


M, K, N = 128, 256, 128
a = [[(7 * i + 3 * k) % 11 - 5 for k in range(K)] for i in range(M)]
b = [[1 if k == j or k == j + 128 else 0 for j in range(N)] for k in range(K)]
out = [[a[i][j] + a[i][j + 128] for j in range(N)] for i in range(M)]
d = sys.argv[1]
save(os.path.join(d, "a.npy"), "<V2", [M, K], bf16(v for r in a for v in r))
save(os.path.join(d, "b.npy"), "<V2", [K, N], bf16(v for r in b for v in r))
save(os.path.join(d, "expected.npy"), "<f4", [M, N],
     struct.pack("<%df" % (M * N), *(v for r in out for v in r)))
