# Writes small .npy files of given values with the standard library only (no
# numpy needed), for the --expect tests:
#   npy.py PATH DESCR SHAPE EXPR [FLAT=VALUE ...]
# EXPR is a Python expression of the flat index `i` giving each element
# (e.g. 'i % 7 - 3.5'); FLAT=VALUE pairs then replace single elements
# ('5=nan', '130=1e30'). DESCR is a little-endian NumPy dtype ('<f4', '<i4',
# '|u1', ...).
import math
import struct
import sys

FORMATS = {"b1": "?", "i1": "b", "u1": "B", "i2": "h", "u2": "H", "f2": "e",
           "i4": "i", "u4": "I", "f4": "f", "i8": "q", "u8": "Q", "f8": "d"}


def header(descr, shape):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    text = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, dims)
    text += " " * ((64 - (10 + len(text) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode()


path, descr = sys.argv[1], sys.argv[2]
shape = [int(d) for d in sys.argv[3].split(",") if d]
expr = sys.argv[4]
n = 1
for d in shape:
    n *= d
values = [eval(expr, {"math": math, "nan": math.nan, "inf": math.inf},
               {"i": i}) for i in range(n)]
for pair in sys.argv[5:]:
    flat, value = pair.split("=", 1)
    values[int(flat)] = float(value) if descr[1] == "f" else int(value)
fmt = FORMATS[descr[1:]]
if descr[1] != "f":
    values = [int(v) for v in values]
with open(path, "wb") as f:
    f.write(header(descr, shape) + struct.pack("<%d%s" % (n, fmt), *values))
