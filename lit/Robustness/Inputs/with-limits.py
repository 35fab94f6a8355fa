"""Runs a command under resource limits and prints its exit status.

    with-limits.py [--fsize BYTES] -- COMMAND ARGS...

Used to simulate a full disk (RLIMIT_FSIZE) for the output-fault tests.
"""
import resource
import subprocess
import sys

args = sys.argv[1:]
fsize = None
if args[:1] == ["--fsize"]:
    fsize = int(args[1])
    args = args[2:]
assert args[:1] == ["--"], "expected -- COMMAND"
args = args[1:]


def limit():
    if fsize is not None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))


proc = subprocess.run(args, preexec_fn=limit)
code = proc.returncode
print("exit:", code if code >= 0 else "signal %d" % -code)
