# Writes the affine-expression inputs of affine-limits.test: grid specs whose
# index map, or kernels whose affine_map attribute, is long or deep. The
# kernel is lit/Driver/Inputs/mul.mlir (o = x * y on 8x128 blocks of 32x128),
# the spec lit/Driver/Inputs/mul.json with in_specs[0].index_map replaced.
#   affine.py spec-parens N OUT     (((...(i)...)), 0) nested N deep
#   affine.py spec-sum N OUT        i floordiv 2 + i floordiv 3 + ... (N terms)
#   affine.py spec-neg N OUT        - - - ... i (N unary minuses)
#   affine.py spec-map MAP OUT      the index map given
#   affine.py kernel-sum N OUT      mul.mlir plus a func whose attribute is an
#                                   affine_map with an N-term sum
import json
import os
import sys

inputs = os.path.join(os.path.dirname(__file__), "..", "..", "Driver", "Inputs")
kind, arg, out = sys.argv[1], sys.argv[2], sys.argv[3]


def spec(index_map):
    with open(os.path.join(inputs, "mul.json")) as f:
        s = json.load(f)
    s["in_specs"][0]["index_map"] = index_map
    return json.dumps(s)


if kind == "spec-parens":
    n = int(arg)
    text = spec("(i) -> (" + "(" * n + "i" + ")" * n + ", 0)")
elif kind == "spec-sum":
    n = int(arg)
    text = spec("(i) -> (" + " + ".join("i floordiv %d" % (k + 2)
                                        for k in range(n)) + ", 0)")
elif kind == "spec-neg":
    text = spec("(i) -> (" + "- " * int(arg) + "i, 0)")
elif kind == "spec-map":
    text = spec(arg)
elif kind == "kernel-sum":
    n = int(arg)
    with open(os.path.join(inputs, "mul.mlir")) as f:
        kernel = f.read()
    text = ("#map = affine_map<(d0, d1) -> (" +
            " + ".join("d%d" % (k % 2) for k in range(n)) + ")>\n"
            "func.func private @uses_map() attributes {m = #map}\n" + kernel)
else:
    sys.exit("unknown kind " + kind)
with open(out, "w") as f:
    f.write(text)
