# Runs a command and then prints "exit code: N" on stdout, so that a lit test
# can FileCheck a tool's exact exit status (pallasc: 0 success, 1 bad input,
# 2 bad command line, >2 internal error); a signal prints a negative N.
#   %python %S/Inputs/exit-code.py pallasc ARGS... 2>&1 | FileCheck %s
import subprocess
import sys

sys.stdout.flush()
code = subprocess.call(sys.argv[1:])
print("exit code: %d" % code, flush=True)
