# Prints the PTX of the (first) gpu.binary in an MLIR file, unescaped:
#   %python %S/Inputs/gpu-binary-ptx.py FILE > OUT.ptx
import re
import sys

text = open(sys.argv[1]).read()
m = re.search(r'assembly = "(.*?)"(?:, |>)', text, re.S)
if not m:
    sys.exit("no gpu.binary assembly in " + sys.argv[1])
sys.stdout.write(re.sub(r"\\([0-9A-Fa-f]{2})",
                        lambda x: chr(int(x.group(1), 16)), m.group(1)))
