# Writes .npy test files with the standard library only (no numpy needed).
#   npy.py good PATH DESCR SHAPE        e.g. good x.npy '<f4' 32,256
#   npy.py magic PATH                   a file that is not .npy
#   npy.py truncated PATH DESCR SHAPE   the data is one byte short
#   npy.py header PATH                  a header that is not a dictionary
#   npy.py version PATH                 format version 9.0
#   npy.py headeronly PATH DESCR SHAPE  the header alone (no data)
import struct
import sys

SIZES = {"b1": 1, "i1": 1, "u1": 1, "i2": 2, "u2": 2, "f2": 2, "V2": 2,
         "i4": 4, "u4": 4, "f4": 4, "i8": 8, "u8": 8, "f8": 8}


def header(descr, shape, major=1):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    text = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, dims)
    prefix = 10 if major == 1 else 12
    text += " " * ((64 - (prefix + len(text) + 1) % 64) % 64) + "\n"
    size = struct.pack("<H" if major == 1 else "<I", len(text))
    return b"\x93NUMPY" + bytes([major, 0]) + size + text.encode()


def data(descr, shape):
    n = 1
    for d in shape:
        n *= d
    return bytes(n * SIZES.get(descr[1:], 8))


kind, path = sys.argv[1], sys.argv[2]
if kind in ("good", "truncated"):
    descr = sys.argv[3]
    shape = [int(d) for d in sys.argv[4].split(",") if d]
    body = header(descr, shape) + data(descr, shape)
    if kind == "truncated":
        body = body[:-1]
elif kind == "headeronly":
    body = header(sys.argv[3], [int(d) for d in sys.argv[4].split(",") if d])
elif kind == "magic":
    body = b"PK\x03\x04 this is a zip file"
elif kind == "header":
    body = header("<f4", [2]).replace(b"{'descr'", b"['descr'") + bytes(8)
elif kind == "version":
    body = b"\x93NUMPY\x09\x00" + header("<f4", [2])[8:] + bytes(8)
else:
    sys.exit("unknown kind " + kind)
with open(path, "wb") as f:
    f.write(body)
