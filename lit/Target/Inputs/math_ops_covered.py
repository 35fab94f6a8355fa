# Checks that a kernel uses every op of MLIR's math dialect: reads the op
# mnemonics from MathOps.td (the `def Math_XOp : Math_...<"mnemonic"` lines)
# and prints each one the kernel does not use as `math.<mnemonic>`.
#   math_ops_covered.py MathOps.td kernel.mlir...
import re
import sys

td = open(sys.argv[1]).read()
mnemonics = sorted(set(re.findall(r'^def Math_\w+Op\s*:\s*Math_\w+<\s*"(\w+)"',
                                  td, re.M)))
text = "".join(open(p).read() for p in sys.argv[2:])
missing = [m for m in mnemonics if not re.search(r"math\.%s\b" % m, text)]
print("math ops: %d, missing: %s" % (len(mnemonics), " ".join(missing) or "none"))
